"""Cases of fill.Scalar, fill.Tensor, fill_.Scalar, fill_.Tensor and the functional copy, for
tools/interop/gen_ops.py (which imports this file and writes what it adds to
tests/data/ops_fill_cases.json, in ops_cases.json's format).

They draw from a random generator of their own, so adding them leaves every older case
unchanged; each operator has a few dozen small cases at most.
"""
import random

from ops_pointwise_cases import LAYOUTS  # the same six layouts


def add_all(g):
    """Adds the cases, yielding the file they go to (gen_ops.py writes and drops them)."""
    saved, g.rng = g.rng, random.Random(2020)
    try:
        fill_cases(g)
        copy_cases(g)
        yield "ops_fill_cases.json"
    finally:
        g.rng = saved


def fill_cases(g):
    T, I, D, B = g.T, g.I, g.D, g.B
    for dt in ("float32", "float64", "int64", "int32", "bool"):
        for num in (I(3), D(-2.5), B(True)):
            g.add_case(f"fill_Scalar/{dt}/{num['k']}", "fill_Scalar", [T([2, 3], dtype=dt), num])
            g.add_case(f"fill__Scalar/{dt}/{num['k']}", "fill__Scalar", [T([2, 3], dtype=dt), num])
        if dt in ("float32", "int32"):  # checked_convert's overflow error
            g.add_case(f"fill__Scalar/{dt}/overflow", "fill__Scalar", [T([2, 3], dtype=dt), D(1e300)])
        for vdt in ("float32", "int64", "bool"):
            g.add_case(f"fill_Tensor/{dt}/{vdt}", "fill_Tensor", [T([2, 3], dtype=dt), T([], dtype=vdt)])
            g.add_case(f"fill__Tensor/{dt}/{vdt}", "fill__Tensor", [T([2, 3], dtype=dt), T([], dtype=vdt)])
    for name, s, st, off in LAYOUTS:
        g.add_case(f"fill_Scalar/{name}", "fill_Scalar", [T(s, st, offset=off), D(1.5)])
        g.add_case(f"fill__Scalar/{name}", "fill__Scalar", [T(s, st, offset=off), D(1.5)])
        g.add_case(f"fill_Tensor/{name}", "fill_Tensor", [T(s, st, offset=off), T([])])
        g.add_case(f"fill__Tensor/{name}", "fill__Tensor", [T(s, st, offset=off), T([])])
    for op in ("fill_Tensor", "fill__Tensor"):
        g.add_case(f"{op}/value_1d", op, [T([2, 3]), T([1])])
        g.add_case(f"{op}/value_2d", op, [T([2, 3]), T([2, 3])])
        g.add_case(f"{op}/value_cpu_scalar", op, [T([2, 3], dev="meta"), T([], dev="cpu")], runs=("mixed",))


def copy_cases(g):
    T, B = g.T, g.B
    for name, s, st, off in LAYOUTS:
        g.add_case(f"copy/{name}", "copy", [T(s, st, offset=off), T(s)])
    for dt in ("float32", "int64", "bool"):
        for sdt in ("float32", "float64", "int64", "bool"):
            g.add_case(f"copy/{dt}/{sdt}", "copy", [T([2, 3], dtype=dt), T([2, 3], dtype=sdt)])
    g.add_case("copy/broadcast_src", "copy", [T([2, 3]), T([3])])
    g.add_case("copy/broadcast_scalar_src", "copy", [T([2, 3]), T([])])
    g.add_case("copy/non_blocking", "copy", [T([2, 3]), T([2, 3]), B(True)])
    g.add_case("copy/mismatch", "copy", [T([2, 3]), T([4])])
    g.add_case("copy/src_bigger", "copy", [T([3]), T([2, 3])])
