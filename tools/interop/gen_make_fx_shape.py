#!/usr/bin/python3
"""Golden make_fx graphs of the shape operators (tests/tracer/test_make_fx_shape.c), from
PyTorch 2.13.

Run from the repo root:  python3 tools/interop/gen_make_fx_shape.py

Each program is the Python twin of a C model in tests/tracer/test_make_fx_shape.c, calling the
same aten operators with the same argument values. The CompositeImplicitAutograd ones
(reshape, flatten, unflatten, contiguous, narrow, chunk) show what make_fx records for them:
their decomposition, never the op itself. Written as gen_make_fx.py writes its programs:
tests/data/tracer_shape_<case>.graph.txt, .code.txt and .meta_<mode>.txt.
"""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_make_fx  # noqa: E402
import golden  # noqa: E402

aten = torch.ops.aten


def reshape(x):
    a = aten.reshape.default(x, [6, 4])                # viewable: view
    t = aten.transpose.int(x, 0, 1)
    b = aten.reshape.default(t, [-1])                  # not viewable: clone + _unsafe_view
    c = aten.flatten.using_ints(x, 1, -1)              # view [2, 12]
    d = aten.contiguous.default(t)                     # clone(memory_format=contiguous_format)
    e = aten.unflatten.int(x, 2, [2, -1])              # view [2, 3, 2, 2]
    f = aten.contiguous.default(x)                     # x itself: nothing recorded
    g = aten.flatten.using_ints(t, 0, 1)               # reshape of a non-viewable: clone + _unsafe_view
    return a, b, c, d, e, f, g


def split(x):
    s = aten.split.Tensor(x, 2, 1)
    c = aten.chunk.default(x, 2, 2)
    n = aten.narrow.default(x, -1, -3, 2)
    w = aten.split_with_sizes.default(x, [1, 2], 1)
    e = aten.chunk.default(aten.slice.Tensor(x, 0, 0, 0), 3, 0)  # empty dim: split_with_sizes
    return s[1], c[0], c[1], n, w[0], e[2]


def join(x, y):
    c = aten.cat.default([x, y], 1)
    s = aten.stack.default([x, y], -1)
    e = aten.expand.default(aten.unsqueeze.default(aten.select.int(x, 0, 1), 0), [5, 3, 4])
    p = aten.permute.default(x, [2, 0, 1])
    sl = aten.slice.Tensor(x, 2, 1, 9223372036854775807, 2)
    q = aten.squeeze.dims(aten.unsqueeze.default(x, 1), [1])
    z = aten.clone.default(x)
    aten.copy_.default(z, y)
    a = aten.as_strided.default(x, [3, 2], [1, 3], 1)
    return c, s, e, p, sl, q, z, aten.alias.default(a)


def getitem(x, i):
    """Python's own indexing (THPVariable_getitem), twin of cfx_getitem."""
    return (x[:, 1:3], x[0], x[..., None], x[1:, 0], x[::2], x[:, -2:], x[-1], x[:, None, 2:3], x[:, :, :],
            x[:2], x[...], x[i], x[:, i], x[i, 1:], x[None, i])


X = torch.arange(24.0).reshape(2, 3, 4)
Y = torch.arange(24.0).reshape(2, 3, 4) * 0.5

IDX = torch.tensor([0, 1])

CASES = {"reshape": (reshape, (X,)), "split": (split, (X,)), "join": (join, (X, Y)), "getitem": (getitem, (X, IDX))}


def main():
    if not os.path.isdir(golden.OUT):
        sys.exit("run from the repo root")
    for case, (fn, args) in CASES.items():
        texts = {}
        for mode in ("real", "fake"):
            gm = gen_make_fx.trace(fn, args, mode)
            texts[mode] = (str(gm.graph), gm.code)
            golden.write_text(f"tracer_shape_{case}.meta_{mode}.txt", gen_make_fx.meta_text(gm))
        assert texts["real"] == texts["fake"], case
        golden.write_text(f"tracer_shape_{case}.graph.txt", texts["real"][0])
        golden.write_text(f"tracer_shape_{case}.code.txt", texts["real"][1])


if __name__ == "__main__":
    main()
