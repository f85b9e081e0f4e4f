#!/usr/bin/python3
"""Golden data for tests/dispatch/test_fake.c from PyTorch 2.13's FakeTensorMode.

Run from the repo root:  python3 tools/interop/gen_fake_goldens.py   (or `make goldens`)
Writes, through golden.py, tab-separated, one case per line:

  tests/data/fake_ops.txt     case \t sizes \t strides \t dtype \t device \t storage_offset \t shares_storage_with_input
      Every case runs under a FakeTensorMode on fake inputs made with from_tensor; the C test
      runs the same calls through cfx's fake mode and compares the metadata.
  tests/data/fake_errors.tsv  case \t str(exception)
      What the fake mode raises (real inputs, data-dependent ops, device mismatches,
      operators without a fake implementation) and the repr of fake tensors. Texts that hold
      object addresses ("Mixing fake modes NYI x.fake_mode=<... object at 0x...>") differ
      from run to run and are left to the C test, which checks their fixed parts.
  tests/data/fake_constants.tsv  case \t value \t repr(result)  or  case \t fake \t repr \t repr(constant)
      or  case \t error \t str(exception): FakeTensor.constant at work (literals, item()).
(tests/data/mode_keys.txt, for test_mode.c, is written by tools/interop/gen_keys.py.)
"""
import os
import sys

import torch
from torch._subclasses.fake_tensor import FakeTensorMode

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import golden  # noqa: E402

aten = torch.ops.aten


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
    mt = f(torch.empty(2, 3, device="meta"))
    c0 = f(torch.tensor(1.0))
    base = torch.randn(4, 3)
    v = f(base[1:])
    cases = []

    def add(name, fn, inp=None):
        with mode:
            out = fn()
        shares = "-"
        if inp is not None:
            shares = "1" if out.untyped_storage()._cdata == inp.untyped_storage()._cdata else "0"
        cases.append((name, tup(out.shape), tup(out.stride()), dtype_name(out.dtype), str(out.device),
                      str(out.storage_offset()), shares))

    add("add", lambda: aten.add.Tensor(x, y))
    add("add_broadcast", lambda: aten.add.Tensor(x, r3))
    add("add_promote", lambda: aten.add.Tensor(x, xi))
    add("add_alpha", lambda: aten.add.Tensor(x, y, alpha=2))
    add("mul", lambda: aten.mul.Tensor(x, y))
    add("mm", lambda: aten.mm.default(a, b))
    add("mm_t", lambda: aten.mm.default(aten.t.default(x), y24))
    add("sum", lambda: aten.sum.dim_IntList(x, None))
    add("sum_dim", lambda: aten.sum.dim_IntList(x, [1]))
    add("sum_dim_keepdim", lambda: aten.sum.dim_IntList(x, [0], True))
    add("sum_int64", lambda: aten.sum.dim_IntList(xi, None))
    add("sum_bool", lambda: aten.sum.dim_IntList(xb, None))
    add("view", lambda: aten.view.default(x, [-1]), x)
    add("view_3x2", lambda: aten.view.default(x, [3, 2]), x)
    add("t", lambda: aten.t.default(x), x)
    add("add_t_t", lambda: aten.add.Tensor(aten.t.default(x), aten.t.default(y)))
    add("empty", lambda: aten.empty.memory_format([2, 3]))
    add("from_tensor_offset_view", lambda: v)
    # device propagation: a cpu 0-dim tensor defers to the other device; add_ keeps its
    # destination's device against a meta operand (meta_rhs_mixed_device_fns)
    add("add_cpu0_meta", lambda: aten.add.Tensor(c0, mt))
    add("add_meta_cpu0", lambda: aten.add.Tensor(mt, c0))
    add("add__meta_rhs", lambda: aten.add_.Tensor(f(torch.randn(2, 3)), mt))
    add("add__meta_lhs", lambda: aten.add_.Tensor(f(torch.empty(2, 3, device="meta")), x))
    return cases


def error_cases():
    rows = []
    mode = FakeTensorMode()
    x = mode.from_tensor(torch.randn(2, 3))
    x3 = mode.from_tensor(torch.randn(3))
    one = mode.from_tensor(torch.tensor(3.5))
    mt = mode.from_tensor(torch.empty(2, 3, device="meta"))
    r = torch.randn(2, 3)
    z = torch.tensor(2.0, dtype=torch.float64)
    e = torch.empty(0, 2, dtype=torch.int64)
    c64 = torch.tensor(1.5 - 2.25j)
    c128 = torch.tensor(complex(-0.0, 2.5), dtype=torch.complex128)
    c64_1d = torch.tensor([1 + 2j, 3 - 4j, 0j])

    def record(name, thunk, under_mode=True):
        try:
            if under_mode:
                with mode:
                    thunk()
            else:
                thunk()
        except Exception as exc:  # noqa: BLE001 - the text is the golden
            rows.append(f"{name}\t{exc}")
            return
        raise AssertionError(f"{name}: no error")

    record("real_add", lambda: aten.add.Tensor(x, r))
    record("real_add_alpha", lambda: aten.add.Tensor(x, z, alpha=2))
    # complex tensors render as _scalar_str does; complex64 is the default complex dtype
    record("real_add_complex64_0d", lambda: aten.add.Tensor(x, c64))
    record("real_add_complex128_0d", lambda: aten.add.Tensor(x, c128))
    record("real_add_complex64_1d", lambda: aten.add.Tensor(x3, c64_1d))
    record("real_mm", lambda: aten.mm.default(e, x))
    record("real_sum", lambda: aten.sum.dim_IntList(r, [1]))
    # without an active mode the fake argument's mode rejects the real one the same way
    record("real_mul_nomode", lambda: aten.mul.Tensor(r, x), under_mode=False)
    record("item", lambda: aten._local_scalar_dense.default(one))
    record("nonzero", lambda: aten.nonzero.default(one))
    record("nonzero_nomode", lambda: aten.nonzero.default(one), under_mode=False)
    record("device_cpu_meta", lambda: aten.add.Tensor(x, mt))
    record("device_meta_cpu", lambda: aten.mm.default(aten.t.default(mt), x))
    record("device_mul", lambda: aten.mul.Tensor(x3, mt))

    lib = torch.library.Library("faketest", "DEF")
    lib.define("twice(Tensor x) -> Tensor")
    lib.impl("twice", lambda t: t * 2, "CPU")
    record("unsupported_namespace", lambda: torch.ops.faketest.twice.default(x))

    rows.append(f"repr_f32\t{x!r}")
    rows.append(f"repr_i64\t{mode.from_tensor(torch.ones(3, dtype=torch.int64))!r}")
    rows.append(f"repr_meta_0d\t{mode.from_tensor(torch.empty((), device='meta'))!r}")
    return rows


def constant_cases():
    """FakeTensor.constant: literals of one element, what ops compute from them, item()."""
    rows = []
    mode = FakeTensorMode()
    x1 = mode.from_tensor(torch.randn(1))
    r3, r4 = torch.tensor(3.0), torch.tensor(4.0)
    r2a, r2b = torch.ones(2), torch.ones(2)

    def record(name, thunk):
        try:
            with mode:
                out = thunk()
        except Exception as exc:  # noqa: BLE001 - the text is the golden
            rows.append(f"{name}\terror\t{exc}")
            return
        if isinstance(out, torch.Tensor):
            rows.append(f"{name}\tfake\t{out!r}\t{out.constant!r}")
        else:
            rows.append(f"{name}\tvalue\t{out!r}")

    item = aten._local_scalar_dense.default
    record("item_literal", lambda: item(torch.tensor([2.5])))
    record("item_literal_int", lambda: item(torch.tensor([7])))
    record("item_add", lambda: item(aten.add.Tensor(torch.tensor([2.5]), torch.tensor([2.5]))))
    record("item_big_literal", lambda: item(aten.sum.dim_IntList(torch.tensor([1.0, 2.0]), None)))

    def inplace_fake():
        c = torch.tensor([1.0])
        aten.add_.Tensor(c, x1)
        return item(c)

    def inplace_constant():
        c = torch.tensor([1.0])
        aten.add_.Tensor(c, torch.tensor([2.0]))
        return item(c)

    record("item_after_inplace_fake", inplace_fake)
    record("item_after_inplace_constant", inplace_constant)
    record("item_mixed", lambda: item(aten.add.Tensor(torch.tensor([2.5]), x1)))
    record("nonzero_literal", lambda: aten.nonzero.default(torch.tensor([1.0])))
    record("literal", lambda: torch.tensor([1.0]))
    record("literal_big", lambda: torch.tensor([1.0, 2.0]))
    record("add_real_0d", lambda: aten.add.Tensor(r3, r4))
    record("add_real_big", lambda: aten.add.Tensor(r2a, r2b))
    return rows


def main():
    if not os.path.isdir(golden.OUT):
        sys.exit("run from the repo root")
    torch.manual_seed(0)
    golden.write_text("fake_ops.txt", "".join("\t".join(row) + "\n" for row in fake_cases()))
    golden.write_text("fake_errors.tsv", "".join(row + "\n" for row in error_cases()))
    golden.write_text("fake_constants.tsv", "".join(row + "\n" for row in constant_cases()))


if __name__ == "__main__":
    main()
