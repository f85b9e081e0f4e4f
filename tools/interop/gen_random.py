#!/usr/bin/python3
"""Golden random streams (tests/dispatch/test_generator.c) from PyTorch 2.13's CPU generator.

Run from the repo root:  python3 tools/interop/gen_random.py

Each line of tests/data/random_streams.txt is one program: torch.manual_seed(SEED), then the
calls, then every value they returned, in order:

  SEED CALL CALL ... = V V V ...

A CALL is `rand:DTYPE:N`, `randn:DTYPE:N`, `randint:LOW:HIGH:DTYPE:N` or `randperm:DTYPE:N`; a float32 value is
its 8-hex-digit bit pattern, a float64 one its 16-hex-digit pattern, an integer in decimal.
The sizes straddle 16, where randn switches to its blockwise normal_fill, and repeat calls
check the cached second Box-Muller sample.
"""
import os
import struct
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import golden  # noqa: E402

DT = {"float32": torch.float32, "float64": torch.float64, "int64": torch.int64, "int32": torch.int32}


def bits(v, dt):
    if dt == "float32":
        return "%08x" % struct.unpack("<I", struct.pack("<f", v))[0]
    if dt == "float64":
        return "%016x" % struct.unpack("<Q", struct.pack("<d", v))[0]
    return str(int(v))


def run(seed, calls):
    torch.manual_seed(seed)
    out = []
    for c in calls:
        p = c.split(":")
        if p[0] == "randint":
            lo, hi, dt, n = int(p[1]), int(p[2]), p[3], int(p[4])
            t = torch.randint(lo, hi, (n,), dtype=DT[dt])
        elif p[0] == "randperm":
            dt, n = p[1], int(p[2])
            t = torch.randperm(n, dtype=DT[dt])
        else:
            dt, n = p[1], int(p[2])
            t = getattr(torch, p[0])(n, dtype=DT[dt])
        out += [bits(v, dt) for v in t.tolist()]
    return f"{seed} {' '.join(calls)} = {' '.join(out)}\n"


PROGRAMS = []
for seed in (0, 42, 2026):
    for n in (1, 3, 15, 16, 17, 33, 100):
        for dt in ("float32", "float64"):
            PROGRAMS.append((seed, [f"rand:{dt}:{n}"]))
            PROGRAMS.append((seed, [f"randn:{dt}:{n}"]))
for seed in (1, 5, 123456789, 2**40 + 7):  # long blocks: the float transforms over many lanes
    PROGRAMS.append((seed, ["randn:float32:1000"]))
PROGRAMS += [
    (0, ["randn:float32:1", "randn:float32:1", "randn:float32:1"]),
    (7, ["randn:float64:3", "rand:float32:2", "randn:float32:1", "randn:float32:20"]),
    (0, ["randint:0:10:int64:20", "randint:-5:5:int32:7", "randint:0:10:float32:5"]),
    (3, ["randint:0:4294967296:int64:4", "randint:-3:2:float64:6"]),
    (1, ["rand:float32:5", "randint:0:100:int64:5", "randn:float64:5"]),
    (0, ["randperm:int64:10"]),
    (42, ["randperm:int64:1", "randperm:int32:17", "randperm:float32:6", "randperm:int64:100"]),
    (2026, ["rand:float32:3", "randperm:float64:9", "randn:float32:2", "randperm:int64:2"]),
]

text = "".join(run(s, c) for s, c in PROGRAMS)
golden.write_text("random_streams.txt", text)
