#!/bin/sh
# Instructions per traced node, from two callgrind runs of the trace benchmark's child
# (10k and 30k nodes; the difference cancels fixed costs). Deterministic, unlike wall time
# on a shared machine, so it is the figure to compare before and after a hot-path change.
#   scripts/instr-per-node.sh [BENCH_BINARY]      (default build-bench/cfx-bench)
# Prints the total, the share of each source directory (by the file an instruction's line is
# in, so code inlined from ir/*.h counts as ir/), then the 40 file:function pairs with the
# most exclusive instructions per node (TOP=n for more).
set -e
bin=${1:-build-bench/cfx-bench}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
for n in 10000 30000; do
    valgrind --tool=callgrind --callgrind-out-file="$dir/cg.$n" "$bin" --trace-child $n >/dev/null 2>&1
done
python3 - "$dir/cg.10000" "$dir/cg.30000" ${TOP:-40} <<'PY'
import re, subprocess, sys
def load(path):
    out = subprocess.run(["callgrind_annotate", "--inclusive=no", "--threshold=100", "--auto=no", path],
                         capture_output=True, text=True).stdout
    costs = {}
    for line in out.splitlines():
        m = re.match(r"\s*([\d,]+) \([^)]*\)\s+(\S+:\S+)", line)
        if m:
            name = re.sub(r"^.*?/(dispatch|ir|tracer|tools|hop|codegen)/", r"\1/", m.group(2))
            costs[name] = costs.get(name, 0) + int(m.group(1).replace(",", ""))
    return costs
a, b = load(sys.argv[1]), load(sys.argv[2])
per = {k: (b.get(k, 0) - a.get(k, 0)) / 20000 for k in b}
total = sum(v for v in per.values())
print(f"{total:8.0f}  instructions/node (total)")
layers = {}
for k, v in per.items():
    top = k.split("/", 1)[0] if "/" in k.split(":", 1)[0] else "other"
    layers[top] = layers.get(top, 0) + v
print("          " + "  ".join(f"{d}/ {v:.0f}" for d, v in sorted(layers.items(), key=lambda kv: -kv[1]) if v >= 1))
for k, v in sorted(per.items(), key=lambda kv: -kv[1])[:int(sys.argv[3]) if len(sys.argv) > 3 else 40]:
    if v >= 1:
        print(f"{v:8.1f}  {k}")
PY
