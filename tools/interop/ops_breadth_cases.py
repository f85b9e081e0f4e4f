"""Cases of the operators added to close 2.13's gaps (negative views: _neg_view, resolve_neg;
sgn; cdist's routes and _euclidean_dist; grid_sampler_3d) for tools/interop/gen_ops.py, which
imports this file and writes what it adds to tests/data/ops_breadth_cases.json (ops_cases.json's
format; complex storage and values as real, imaginary pairs). A generator of its own (seed
3131) leaves every older case unchanged; each op's cases are capped to a few dozen."""
import random


def add_all(g):
    """Adds the cases, yielding the file they go to (gen_ops.py writes and drops them)."""
    saved, g.rng = g.rng, random.Random(3131)
    try:
        neg_view_cases(g)
        yield "ops_breadth_cases.json"
    finally:
        g.rng = saved


LAYOUTS = [("contig", [2, 3], None, 0), ("t", [3, 2], [1, 3], 0), ("strided", [2, 2], [4, 2], 1),
           ("0dim", [], None, 0), ("empty", [0, 3], None, 0)]


def neg_view_cases(g):
    """_neg_view is alias() with the neg bit flipped: the result's values are the negated data
    (gen_ops.py records values, not data) and it aliases its input; resolve_neg of a tensor
    without the bit is the tensor itself (a golden argument cannot carry the bit: that side
    is tests/dispatch/test_neg_view.c's)."""
    T = g.T
    for name, sizes, strides, off in LAYOUTS:
        for dt in ("float32", "float64", "int64", "complex64"):
            g.add_case(f"_neg_view/{name}/{dt}", "_neg_view", [T(sizes, strides, dt, off)])
            g.add_case(f"resolve_neg/{name}/{dt}", "resolve_neg", [T(sizes, strides, dt, off)])
