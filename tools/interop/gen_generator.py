#!/usr/bin/python3
"""Golden files for Generator arguments (tests/tracer/test_generator_args.c) from PyTorch 2.13.

Run from the repo root:  python3 tools/interop/gen_generator.py

2.13 registers torch.Generator as an opaque reference type: make_fx records a generator that is
no graph input as a get_attr of the module attribute `_opaque_obj0` (one get_attr per use),
passed to the `.generator` overload (`aten.rand.generator([3], generator=_opaque_obj0, ...)`).
Writes:
  generator_<name>.graph.txt / .code.txt   str(gm.graph) and gm.code of each program (the same
                                           in real and fake tracing, checked here)
  generator_values.json                    values drawn from seeded generators (float32 as
                                           8-hex-digit bit patterns, float64 as 16, ints in
                                           decimal), the outputs of traced graphs run after
                                           the trace, and torch.ops' error texts
"""
import os
import struct
import sys

import torch
from torch.fx.experimental.proxy_tensor import make_fx

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import golden  # noqa: E402


def bits(t):
    out = []
    for v in t.flatten().tolist():
        if t.dtype == torch.float32:
            out.append("%08x" % struct.unpack("<I", struct.pack("<f", v))[0])
        elif t.dtype == torch.float64:
            out.append("%016x" % struct.unpack("<Q", struct.pack("<d", v))[0])
        else:
            out.append(str(int(v)))
    return out


# ---- traced programs: g is no input (a global), as a C program's generator is ---------------

G = {}


def p_rand(x):
    return torch.rand(3, generator=G["g"]) + x


def p_multi(x):
    a = torch.rand(3, generator=G["g"])
    b = torch.randn(3, generator=G["g"])
    c = torch.randn(3, generator=G["g2"])
    return a + b + c + x


def p_all(x):
    a = torch.randint(10, (3,), generator=G["g"])
    b = torch.randint(2, 5, (3,), generator=G["g"])
    c = torch.randperm(4, generator=G["g"])
    d = torch.rand_like(x, generator=G["g"])
    e = torch.randn_like(x, generator=G["g"])
    f = torch.empty_like(x).bernoulli_(0.5, generator=G["g"])
    return a, b, c, d + e + f


PROGRAMS = {"rand": p_rand, "multi": p_multi, "all": p_all}


def fresh():
    G["g"] = torch.Generator().manual_seed(0)
    G["g2"] = torch.Generator().manual_seed(1)


def traces():
    runs = {}
    x = torch.zeros(3)
    for name, fn in PROGRAMS.items():
        texts = None
        for mode in ("real", "fake"):
            fresh()
            gm = make_fx(fn, tracing_mode=mode)(x)
            t = (str(gm.graph), gm.code)
            assert texts is None or texts == t, name
            texts = t
            if name == "rand":  # the graph draws from the generator it holds, after the trace's draws
                runs[mode] = bits(gm(x)) + bits(gm(x))
        golden.write_text(f"generator_{name}.graph.txt", texts[0])
        golden.write_text(f"generator_{name}.code.txt", texts[1])
    return runs


# ---- values: each call on a fresh generator seeded SEED, then the same calls in a row ------

def calls(g):
    x32 = torch.zeros(17)
    x64 = torch.zeros(2, 10, dtype=torch.float64)
    return [
        ("rand:float32:17", torch.rand(17, generator=g)),
        ("randn:float64:20", torch.randn(20, dtype=torch.float64, generator=g)),
        ("randn:float32:5", torch.randn(5, generator=g)),
        ("randint:0:10:int64:6", torch.randint(0, 10, (6,), generator=g)),
        ("randint:-3:3:int32:6", torch.randint(-3, 3, (6,), dtype=torch.int32, generator=g)),
        ("randperm:int64:10", torch.randperm(10, generator=g)),
        ("rand_like:float32:17", torch.rand_like(x32, generator=g)),
        ("randn_like:float64:20", torch.randn_like(x64, generator=g)),
        ("bernoulli:0.3:float32:17", torch.zeros(17).bernoulli_(0.3, generator=g)),
    ]


def values():
    out = []
    for seed in (0, 7, 2**40 + 3):
        g = torch.Generator().manual_seed(seed)
        seq = [(c, bits(t)) for c, t in calls(g)]
        out.append({"seed": seed, "calls": [c for c, _ in seq], "values": [v for _, v in seq]})
    return out


def errors():
    cases = []
    g = torch.Generator()
    for name, f in [
        ("rand_int_generator", lambda: torch.ops.aten.rand.generator([3], generator=5)),
        ("bernoulli_str_generator", lambda: torch.ops.aten.bernoulli_.float(torch.zeros(3), 0.5, generator="a")),
        ("randint_empty_range", lambda: torch.ops.aten.randint.low_generator(5, 5, [3], generator=g)),
        ("randn_int_dtype", lambda: torch.ops.aten.randn.generator([3], generator=g, dtype=torch.int64)),
        ("randn_meta_negative", lambda: torch.ops.aten.randn.generator([-1], generator=g, device="meta")),
    ]:
        try:
            f()
            raise AssertionError(name)
        except (RuntimeError, TypeError) as e:
            cases.append({"name": name, "message": str(e)})
    # the .generator overloads on meta run the C++ kernel: randperm's dtype=None is int64 there
    meta = torch.ops.aten.randperm.generator(5, generator=g, dtype=None, device="meta")
    return cases, str(meta.dtype)


if __name__ == "__main__":
    runs = traces()
    errs, meta_dtype = errors()
    golden.write_json("generator_values.json",
                      {"streams": values(), "runs": runs, "errors": errs, "randperm_meta_dtype": meta_dtype},
                      indent=1)
