#!/usr/bin/python3
"""Golden graphs of Python's `x[...] = v` (tests/tracer/test_setitem.c) from PyTorch 2.13.

Run from the repo root:  python3 tools/interop/gen_setitem.py

Each program clones its input x (so the trace does not mutate a placeholder) and assigns
through the slice / int / Ellipsis / None / tensor paths of THPVariable_setitem. Traced with
make_fx in real and fake mode (identical graphs, checked), written as

  tests/data/setitem_<case>.graph.txt   str(gm.graph)
  tests/data/setitem_<case>.code.txt    gm.code
  tests/data/setitem_<case>.values.txt  "out" and the output's values on the inputs below

Inputs: x = arange(20).reshape(4, 5) * 0.5 - 3 (float32; xi: the same as int64),
v = arange(5) + 10, t = -(arange(4) + 1), s = tensor(7.0) (0-dim), i = tensor([3, 0]).
"""
import os
import sys

import torch
from torch.fx.experimental.proxy_tensor import make_fx

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import golden  # noqa: E402


def inputs():
    x = torch.arange(20, dtype=torch.float32).reshape(4, 5) * 0.5 - 3
    return {"x": x, "xi": torch.arange(20).reshape(4, 5), "v": torch.arange(5, dtype=torch.float32) + 10,
            "t": -(torch.arange(4, dtype=torch.float32) + 1), "s": torch.tensor(7.0), "i": torch.tensor([3, 0])}


def slice_fill(x):
    x = x.clone()
    x[:, 1:3] = 0
    return x


def int_copy(x, v):
    x = x.clone()
    x[0] = v
    return x


def ellipsis_int(x, t):
    x = x.clone()
    x[..., 1] = t
    return x


def none_int(x):
    x = x.clone()
    x[None, 1] = 2.5
    return x


def expand(x, v):
    x = x.clone()
    x[1:2, None] = v
    return x


def whole(x, s):
    x = x.clone()
    x[:] = 1
    x[...] = s
    x[1] = s
    return x


def single_slice(x, v):
    x = x.clone()
    x[1:3] = v
    x[::2] = -1.5
    return x


def none_only(x, v):
    x = x.clone()
    x[None] = v
    return x


def int_dtype(xi):
    xi = xi.clone()
    xi[0] = 2.5
    xi[:, -1] = 9
    return xi


def tensor_index(x, v, i):
    x = x.clone()
    x[i] = v
    x[1:, i] = 4.0
    return x


PROGRAMS = {
    "slice_fill": (["x"], slice_fill),
    "int_copy": (["x", "v"], int_copy),
    "ellipsis_int": (["x", "t"], ellipsis_int),
    "none_int": (["x"], none_int),
    "expand": (["x", "v"], expand),
    "whole": (["x", "s"], whole),
    "single_slice": (["x", "v"], single_slice),
    "none_only": (["x", "v"], none_only),
    "int_dtype": (["xi"], int_dtype),
    "tensor_index": (["x", "v", "i"], tensor_index),
}


def fmt(t):
    return " ".join(repr(float(v)) for v in t.flatten().tolist())


for name, (names, fn) in PROGRAMS.items():
    outs = []
    for mode in ("real", "fake"):
        ins = inputs()
        gm = make_fx(fn, tracing_mode=mode)(*[ins[n] for n in names])
        outs.append((str(gm.graph), gm.code))
    assert outs[0] == outs[1], name
    golden.write_text(f"setitem_{name}.graph.txt", outs[1][0])
    golden.write_text(f"setitem_{name}.code.txt", outs[1][1])
    ins = inputs()
    golden.write_text(f"setitem_{name}.values.txt", f"out {fmt(fn(*[ins[n] for n in names]))}\n")
    print(name)
