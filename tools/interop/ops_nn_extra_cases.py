"""Cases of the embedding_bag front ends (embedding_bag, embedding_bag.padding_idx) and of
_euclidean_dist, for tools/interop/gen_ops.py (which imports this file and writes what it adds
to tests/data/ops_nn_extra_cases.json, in ops_cases.json's format). They draw from a generator
of their own, so adding them leaves every older case unchanged.
"""
import random


def add_all(g):
    """Adds the cases, yielding the file they go to (gen_ops.py writes and drops them)."""
    saved, g.rng = g.rng, random.Random(77)
    try:
        bag_cases(g)
        euclidean_cases(g)
        yield "ops_nn_extra_cases.json"
    finally:
        g.rng = saved


def ints(g, values, strides=None):
    """An int64 tensor of these values; with strides (a step), values is its whole storage."""
    n = len(values) if strides is None else (len(values) + strides[0] - 1) // strides[0]
    t = g.T([n], strides, dtype="int64")
    t["storage"] = list(values)[:len(t["storage"])]
    return t


def bag_cases(g):
    T, I, B, NONE = g.T, g.I, g.B, g.NONE
    idx = [0, 2, 4, 1, 3, 2]
    for dt in ("float32", "float64"):
        for mode in (0, 1, 2):
            for last in (False, True):
                args = [T([5, 3], dtype=dt), ints(g, idx), ints(g, [0, 2, 4] + ([6] if last else [])), B(False),
                        I(mode), B(False), NONE(), B(last)]
                g.add_case(f"embedding_bag/{dt}/mode{mode}/last{int(last)}", "embedding_bag", args)
                g.add_case(f"embedding_bag_padding_idx/{dt}/mode{mode}/last{int(last)}", "embedding_bag_padding_idx",
                           args + [I(2)])
    psw = [T([5, 3]), ints(g, idx), ints(g, [0, 3]), B(False), I(0), B(False), T([6]), B(False)]
    g.add_case("embedding_bag/per_sample_weights", "embedding_bag", psw)
    for pad in (-2, 0, 4, -5, 5, -6, None):
        args = [T([5, 3]), ints(g, idx), ints(g, [0, 1, 5]), B(False), I(1), B(False), NONE(), B(False)]
        g.add_case(f"embedding_bag_padding_idx/pad{pad}", "embedding_bag_padding_idx",
                   args + [NONE() if pad is None else I(pad)])
    g.add_case("embedding_bag/transposed_weight", "embedding_bag",
               [T([5, 3], [1, 5]), ints(g, idx), ints(g, [0, 2]), B(False), I(0), B(False), NONE(), B(False)])
    g.add_case("embedding_bag/strided_indices", "embedding_bag",
               [T([5, 3]), ints(g, [0, 9, 2, 9, 4], [2]), ints(g, [0, 9, 1], [2]), B(False), I(0), B(False), NONE(),
                B(False)])
    g.add_case("embedding_bag/bad_mode", "embedding_bag",
               [T([5, 3]), ints(g, idx), ints(g, [0]), B(False), I(3), B(False), NONE(), B(False)])


def euclidean_cases(g):
    T, D = g.T, g.D
    op = "_euclidean_dist"
    tol = [1e-5, 1e-5]  # a matmul: BLAS sums in its own order
    for dt in ("float32", "float64"):
        g.add_case(f"{op}/{dt}", op, [T([3, 4], dtype=dt), T([5, 4], dtype=dt)], tol=tol)
    g.add_case(f"{op}/batched", op, [T([2, 3, 4]), T([2, 5, 4])], tol=tol)
    g.add_case(f"{op}/broadcast_batch", op, [T([2, 3, 4]), T([1, 5, 4])], tol=tol)
    g.add_case(f"{op}/transposed", op, [T([3, 4], g.perm_strides([3, 4], [1, 0])), T([5, 4])], tol=tol)
    g.add_case(f"{op}/one_column", op, [T([3, 1]), T([2, 1])], tol=tol)
    g.add_case(f"{op}/empty_rows", op, [T([0, 4]), T([5, 4])], tol=tol)
    g.add_case(f"{op}/mismatch", op, [T([3, 4]), T([5, 3])])
    g.add_case(f"{op}/vector", op, [T([4]), T([4])], tol=tol)
