#!/bin/sh
# Installs the Debian packages cfx needs, only those that are missing. Called by the Makefile
# when pkg-config cannot find a dependency; safe to run by hand.
set -e
need=""
pkg-config --exists libffi    2>/dev/null || need="$need libffi-dev"
pkg-config --exists libcjson  2>/dev/null || need="$need libcjson-dev"
pkg-config --exists criterion 2>/dev/null || need="$need libcriterion-dev"
# the single-threaded OpenBLAS: the pthread build starts a thread when loaded
pkg-config --exists openblas  2>/dev/null || need="$need libopenblas-serial-dev"
command -v pkg-config >/dev/null 2>&1 || need="$need pkg-config"
[ -n "$need" ] || exit 0
if [ "$(id -u)" != 0 ]; then
    echo "cfx: missing Debian packages:$need (run as root or: sudo apt-get install$need)" >&2
    exit 1
fi
echo "cfx: installing$need" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q --no-install-recommends $need gcc make
