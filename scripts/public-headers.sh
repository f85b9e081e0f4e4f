#!/bin/sh
# The public headers: cfx.h and every project header it includes, transitively, one include
# name per line (e.g. dispatch/tensor.h). Generated headers are looked up in BUILD/gen.
#   scripts/public-headers.sh [BUILD]      (default build)
# `make install` installs exactly these; tests/tools/test_api_boundary.c checks them.
set -e
gen=${1:-build}/gen
seen=" "
set -- cfx.h
while [ $# -gt 0 ]; do
    h=$1
    shift
    case "$seen" in *" $h "*) continue ;; esac
    seen="$seen$h "
    if [ -f "$h" ]; then f=$h; elif [ -f "$gen/$h" ]; then f=$gen/$h; else
        echo "public-headers.sh: $h not found (build first)" >&2
        exit 1
    fi
    set -- "$@" $(sed -n 's/^#include "\([^"]*\)".*/\1/p' "$f")
done
printf '%s\n' $seen | sort
