#!/usr/bin/env python3
"""torch_eager.py - PyTorch side of `cfx-bench eager` (tools/bench/bench_eager.c).

Times the same four eager ops as the C side on one thread and prints one line per op,
"OP MEDIAN_US", the median over REPS repetitions of a loop of K calls divided by K, so the
per-call Python overhead (~1 us) is the only Python cost left in each figure. cfx-bench runs
this script once per round, alternating with its own runs, to cancel host noise.
Usage: torch_eager.py [REPS]"""
import sys
import time

import torch
import torch.nn.functional as F

torch.set_num_threads(1)
torch.manual_seed(0)
REPS = int(sys.argv[1]) if len(sys.argv) > 1 else 5

a = torch.randn(64, 64)
b = torch.randn(64, 64)
a1 = torch.randn(1)
b1 = torch.randn(1)
m1 = torch.randn(256, 256)
m2 = torch.randn(256, 256)
s = torch.randn(64, 1024)
x = torch.randn(1, 64, 56, 56)
w = torch.randn(64, 64, 3, 3)

# (name, callable, calls per timed loop): K keeps one loop near 10-50 ms.
CASES = [
    # Not an op of the comparison: a 1-element add is all Python + dispatch + allocation, the
    # floor included in each figure below (it matters only for add 64x64).
    ("floor", lambda: torch.add(a1, b1), 2000),
    ("add", lambda: torch.add(a, b), 2000),
    ("mm", lambda: torch.mm(m1, m2), 50),
    ("softmax", lambda: torch.softmax(s, -1), 200),
    ("conv2d", lambda: F.conv2d(x, w, None, 1, 1), 5),
]

with torch.no_grad():
    for name, fn, k in CASES:
        for _ in range(3):  # warm-up: allocator caches, oneDNN/BLAS packing
            fn()
        times = []
        for _ in range(REPS):
            t0 = time.perf_counter_ns()
            for _ in range(k):
                fn()
            times.append((time.perf_counter_ns() - t0) / k / 1e3)
        times.sort()
        print(f"{name} {times[len(times) // 2]:.3f}", flush=True)
