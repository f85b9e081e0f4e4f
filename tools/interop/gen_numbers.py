#!/usr/bin/python3
"""Golden graphs of numbers as operands (tests/tracer/test_numbers.c) from PyTorch 2.13.

Run from the repo root:  python3 tools/interop/gen_numbers.py

Each program is the Python twin of a C model in tests/tracer/test_numbers.c, which writes the
numbers as cfx_num(2), cfx_num(1.5) where Python writes `x * 2`, and the Scalar overloads
(rsub.Scalar, pow.Tensor_Scalar, gt.Scalar) where Python's operators pick them. Traced with
make_fx in real and fake mode (identical graphs, checked), written as

  tests/data/numbers_<case>.graph.txt   str(gm.graph)
  tests/data/numbers_<case>.code.txt    gm.code
  tests/data/numbers_<case>.meta.txt    one line per node: name dtype sizes strides (fake mode)
  tests/data/numbers_<case>.values.txt  the outputs' values on the inputs below, one per line
"""
import os
import sys

import torch
import torch.nn.functional as F
from torch.fx.experimental.proxy_tensor import make_fx

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import golden  # noqa: E402


def relu_mul(x):
    return x.relu() * 2


def arith(x, i):
    return (x - 1.5, x / 8.0, i * 2.0, i + 1, x.add(3, alpha=2), 1 - x, x ** 2, i / 2)


def compare(x, y):
    return (x > 0, x <= y, torch.where(x > y, x, y), x.eq(0.5), x != y, x >= 2, x < y)


def activations(x):
    return (F.gelu(x), F.gelu(x, approximate="tanh"), torch.tanh(x), torch.sigmoid(x), F.silu(x),
            torch.sqrt(x.relu()), torch.rsqrt(x.relu() + 1), torch.pow(x, x.relu()))


def where_scalar(x, i):
    return (torch.where(x > 0, i, 0.5), torch.where(x > 0, 1.0, 0), torch.where(x > 0, 2, i),
            x.masked_fill(x > 0, 2), x.to(torch.int32), i.to(torch.int64))


def inplace_scope(x):  # C: the in-place calls inside nested scopes
    y = x.clone()
    y.mul_(2)
    y.add_(1.5)
    y.div_(4)
    return y.sub(1)


def inputs():
    x = torch.tensor([[-1.5, -0.25, 0.0], [0.5, 1.25, 2.0]])
    y = torch.tensor([[0.5, -1.0, 0.0], [2.0, 1.25, -3.0]])
    i = torch.tensor([[-3, 0, 1], [2, 5, 7]])
    return x, y, i


X, Y, I = inputs()
CASES = {
    "relu_mul": (relu_mul, (X,)),
    "arith": (arith, (X, I)),
    "compare": (compare, (X, Y)),
    "activations": (activations, (X,)),
    "where_scalar": (where_scalar, (X, I)),
    "inplace_scope": (inplace_scope, (X,)),
}


def meta_text(gm):
    lines = []
    for n in gm.graph.nodes:
        v = n.meta.get("val")
        if isinstance(v, torch.Tensor):
            lines.append(f"{n.name} {str(v.dtype)[6:]} {list(v.shape)} {list(v.stride())}")
    return "\n".join(lines) + "\n"


def values_text(out):
    outs = out if isinstance(out, tuple) else (out,)
    lines = []
    for t in outs:
        vals = t.flatten().tolist()
        lines.append(str(t.dtype)[6:] + " " + " ".join(repr(float(v)) for v in vals))
    return "\n".join(lines) + "\n"


def main():
    if not os.path.isdir(golden.OUT):
        sys.exit("run from the repo root")
    for case, (fn, args) in CASES.items():
        real = make_fx(fn, tracing_mode="real")(*args)
        fake = make_fx(fn, tracing_mode="fake")(*args)
        assert str(real.graph) == str(fake.graph), case
        golden.write_text(f"numbers_{case}.graph.txt", str(real.graph))
        golden.write_text(f"numbers_{case}.code.txt", real.code)
        golden.write_text(f"numbers_{case}.meta.txt", meta_text(fake))
        golden.write_text(f"numbers_{case}.values.txt", values_text(fn(*args)))


if __name__ == "__main__":
    main()
