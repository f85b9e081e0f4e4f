#!/bin/sh
# fuzz-campaign.sh - a long libFuzzer campaign of one target (issue 14: 10 million runs each).
#
#   make fuzz FUZZ_RUNS=1                       # builds build-fuzz/fuzz_<target>
#   scripts/fuzz-campaign.sh TARGET [RUNS [DIR]] # RUNS defaults to 10000000, DIR to build-fuzz/campaign
#
# Runs build-fuzz/fuzz_TARGET at nice 19 on DIR/corpus-TARGET (seeded from fuzz/corpus/TARGET
# on first use, grown by each run) with -timeout=1 -rss_limit_mb=2048 -max_len=8192, in
# segments until RUNS executions in total. Why segments: libFuzzer's -timeout is wall-clock
# time, so on an oversubscribed machine a starved process "times out" on a trivial input. A
# timeout whose input re-runs alone in under 200 ms is such a load artifact: it is set aside
# in DIR/load-artifacts/ and the campaign resumes from its grown corpus. Any other finding
# (crash, leak, out-of-memory, a timeout that is slow alone) stops the campaign, status 1, the
# input in DIR/TARGET-*. Progress: DIR/TARGET-total.txt (a line a segment), logs DIR/TARGET-N.log
# (the `#N` lines count the segment's runs).
set -u
t=$1
want=${2:-10000000}
root=$(cd "$(dirname "$0")/.." && pwd)
dir=${3:-$root/build-fuzz/campaign}
mkdir -p "$dir" && dir=$(cd "$dir" && pwd) # absolute: fuzz_cli works in a temporary directory
bin=$root/build-fuzz/fuzz_$t
[ -x "$bin" ] || { echo "fuzz-campaign: no $bin (run: make fuzz FUZZ_RUNS=1)" >&2; exit 2; }
mkdir -p "$dir/corpus-$t" "$dir/load-artifacts"
[ -n "$(ls "$dir/corpus-$t")" ] || cp "$root/fuzz/corpus/$t"/* "$dir/corpus-$t/"
cd "$dir" || exit 2
extra=""
[ "$t" = cli ] && extra=-close_fd_mask=2 # the driver's messages
total=0
seg=$(ls "$t"-[0-9]*.log 2>/dev/null | wc -l)
while [ "$total" -lt "$want" ]; do
    seg=$((seg + 1))
    log=$t-$seg.log
    nice -n 19 "$bin" -runs=$((want - total)) -timeout=1 -rss_limit_mb=2048 -max_len=8192 \
        -report_slow_units=1 -print_final_stats=1 $extra -artifact_prefix="$dir/$t-" "$dir/corpus-$t" >"$log" 2>&1
    n=$(awk '/number_of_executed_units/ {print $2}' "$log")
    total=$((total + ${n:-0}))
    echo "$(date -u +%FT%TZ) segment $seg: ${n:-0} runs, total $total;" \
        "$(grep -o 'exec/s: [0-9]*' "$log" | tail -n 1), corpus $(ls "corpus-$t" | wc -l) files" >>"$t-total.txt"
    grep -q '^Done' "$log" && exit 0
    a=$(ls "$t"-timeout-* 2>/dev/null | head -n 1)
    if [ -n "$a" ] && ! ls "$t"-crash-* "$t"-leak-* "$t"-oom-* >/dev/null 2>&1; then
        ms=$("$bin" "$a" 2>&1 | sed -n 's/^Executed .* in \([0-9]*\) ms$/\1/p')
        if [ -n "$ms" ] && [ "$ms" -lt 200 ]; then
            echo "  $a re-runs in $ms ms alone: a load artifact, set aside" >>"$t-total.txt"
            mv "$a" load-artifacts/
            continue
        fi
    fi
    echo "  stopped on a finding: $(ls "$t"-crash-* "$t"-leak-* "$t"-oom-* "$t"-timeout-* 2>/dev/null)" >>"$t-total.txt"
    exit 1
done
