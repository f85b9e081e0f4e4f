#!/usr/bin/python3
"""Golden data for tests/dispatch/test_fake.c from PyTorch 1.13.

Run from the repo root:  /usr/bin/python3 tools/interop/gen_fake_goldens.py
Writes, tab-separated, one case per line:

  tests/data/fake_ops.txt   case \t sizes \t strides \t dtype \t device \t storage_offset \t shares_storage_with_input
      Every case runs under FakeTensorMode on fake inputs made with from_tensor; the C test
      (test_fake.c) runs the same calls through cfx's fake mode and compares the metadata.
(tests/data/mode_keys.txt, for test_mode.c, is written by tools/interop/gen_keys.py.)
"""
import torch
from torch._subclasses.fake_tensor import FakeTensorMode

OUT = "tests/data/"


def tup(xs):
    return ",".join(str(int(v)) for v in xs) if len(xs) else "-"


def dtype_name(d):
    return str(d).replace("torch.", "")


def fake_cases():
    mode = FakeTensorMode()
    f = mode.from_tensor
    x = f(torch.randn(2, 3))
    y = f(torch.randn(2, 3))
    r3 = f(torch.randn(3))
    xi = f(torch.ones(2, 3, dtype=torch.int64))
    xb = f(torch.ones(2, 3, dtype=torch.bool))
    a = f(torch.randn(2, 3))
    b = f(torch.randn(3, 4))
    y24 = f(torch.randn(2, 4))
    base = torch.randn(4, 3)
    v = f(base[1:])
    cases = []

    def add(name, fn, inp=None):
        with mode:
            out = fn()
        shares = "-"
        if inp is not None:
            shares = "1" if out.storage()._cdata == inp.storage()._cdata else "0"
        cases.append((name, tup(out.shape), tup(out.stride()), dtype_name(out.dtype), str(out.device),
                      str(out.storage_offset()), shares))

    add("add", lambda: torch.ops.aten.add.Tensor(x, y))
    add("add_broadcast", lambda: torch.ops.aten.add.Tensor(x, r3))
    add("add_promote", lambda: torch.ops.aten.add.Tensor(x, xi))
    add("add_alpha", lambda: torch.ops.aten.add.Tensor(x, y, alpha=2))
    add("mul", lambda: torch.ops.aten.mul.Tensor(x, y))
    add("mm", lambda: torch.ops.aten.mm.default(a, b))
    add("mm_t", lambda: torch.ops.aten.mm.default(torch.ops.aten.t.default(x), y24))
    add("sum", lambda: torch.ops.aten.sum.dim_IntList(x, None))
    add("sum_dim", lambda: torch.ops.aten.sum.dim_IntList(x, [1]))
    add("sum_dim_keepdim", lambda: torch.ops.aten.sum.dim_IntList(x, [0], True))
    add("sum_int64", lambda: torch.ops.aten.sum.dim_IntList(xi, None))
    add("sum_bool", lambda: torch.ops.aten.sum.dim_IntList(xb, None))
    add("view", lambda: torch.ops.aten.view.default(x, [-1]), x)
    add("view_3x2", lambda: torch.ops.aten.view.default(x, [3, 2]), x)
    add("t", lambda: torch.ops.aten.t.default(x), x)
    add("add_t_t", lambda: torch.ops.aten.add.Tensor(torch.ops.aten.t.default(x), torch.ops.aten.t.default(y)))
    add("empty", lambda: torch.ops.aten.empty.memory_format([2, 3]))
    add("from_tensor_offset_view", lambda: v)
    return cases


def main():
    with open(OUT + "fake_ops.txt", "w") as fh:
        for row in fake_cases():
            fh.write("\t".join(row) + "\n")


if __name__ == "__main__":
    main()
