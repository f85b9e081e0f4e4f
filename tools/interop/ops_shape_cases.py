"""Cases of the shape/view, joining, reduction, creation and indexing operators for
tools/interop/gen_ops.py (which imports this file and writes what it adds, group by group, to
tests/data/ops_shape_cases.json (views, joins), ops_reduce_cases.json (reductions) and
ops_creation_cases.json (factories) and ops_index_cases.json (indexing), in
ops_cases.json's format).

They live apart from gen_ops.py's own cases so that adding them leaves every older case (and
the big ops_cases.json) unchanged: they draw from a random generator of their own. Tensors
are small and each operator has at most ~40 cases, so the file stays a few hundred KB.
"""
import random

# the common layouts a view or a reduction must keep or reject: name, sizes, strides, offset
LAYOUTS = [
    ("contig", [2, 3, 4], None, 0),
    ("transposed", [3, 4], [1, 3], 0),
    ("nondense_offset", [3, 4], [1, 6], 2),
    ("expanded", [3, 4], [0, 1], 0),
    ("scalar", [], None, 0),
    ("empty", [0, 3], None, 0),
    ("channels_last", [2, 3, 2, 2], [12, 1, 6, 3], 0),
    ("size1", [2, 1, 3], None, 0),
]


def add_all(g):
    """Adds the cases group by group, yielding after each the file they go to (gen_ops.py
    writes and drops them), so that no golden file grows past a few hundred KB."""
    saved, g.rng = g.rng, random.Random(3131)
    try:
        view_cases(g)
        join_cases(g)
        yield "ops_shape_cases.json"
        reduction_cases(g)
        yield "ops_reduce_cases.json"
        creation_cases(g)
        generator_cases(g)
        yield "ops_creation_cases.json"
        index_cases(g)
        yield "ops_index_cases.json"
    finally:
        g.rng = saved


def lay(g, name, dtype="float32"):
    for n, s, st, off in LAYOUTS:
        if n == name:
            return g.T(s, st, dtype, offset=off)
    raise KeyError(name)


def each_layout(g, op, extra, names=None, dtype="float32"):
    """op on every layout of LAYOUTS (or those named) with extra(sizes) as the other args."""
    for n, s, st, off in LAYOUTS:
        if names is None or n in names:
            for tag, rest in extra(s):
                g.add_case(f"{op}/{n}/{tag}", op, [g.T(s, st, dtype, offset=off)] + rest)


def view_cases(g):
    T, I, INTS, NONE, B = g.T, g.I, g.INTS, g.NONE, g.B
    add = g.add_case
    # _unsafe_view and reshape: viewable, not viewable (reshape copies), bad shapes
    shapes = [("flat", [-1]), ("split", [2, -1]), ("same", None), ("ones", [1, -1, 1]), ("bad", [5]),
              ("two_infer", [-1, -1]), ("neg", [-3, 4])]
    for op in ("_unsafe_view", "reshape"):
        for n, s, st, off in LAYOUTS:
            for tag, shape in shapes:
                if n != "contig" and tag in ("bad", "two_infer", "neg"):
                    continue  # the shape errors do not depend on the layout
                add(f"{op}/{n}/{tag}", op, [T(s, st, offset=off), INTS(s if shape is None else shape)])
    add("reshape/empty_infer_bad", "reshape", [T([0, 3]), INTS([0, -1])])
    add("reshape/int64_permuted", "reshape",
        [T([2, 3, 4], g.perm_strides([2, 3, 4], [2, 0, 1]), "int64"), INTS([6, 4])])
    # expand
    for tag, s, st, size in [("row", [3], None, [2, 3]), ("col", [3, 1], None, [3, 4]), ("keep", [3, 1], None, [-1, 4]),
                             ("new_lead", [2, 1], None, [5, 2, 3]), ("scalar", [], None, [2, 2]),
                             ("same", [2, 3], None, [2, 3]), ("transposed", [3, 1], [1, 3], [2, 3, 5]),
                             ("zero", [1, 3], None, [0, 3]), ("bad", [2, 3], None, [4, 3]),
                             ("too_few", [2, 3], None, [3]), ("lead_m1", [3], None, [-1, 3]),
                             ("offset", [2, 1], [2, 1], [2, 4]), ("zero_to_n", [0, 1], None, [0, 2])]:
        add(f"expand/{tag}", "expand", [T(s, st, offset=1 if tag == "offset" else 0), INTS(size), B(False)])
    add("expand/implicit", "expand", [T([3]), INTS([2, 3]), B(True)])
    # unsqueeze, squeeze
    for n, s, st, off in LAYOUTS:
        nd = len(s)
        for d in sorted({0, -1, nd, -nd - 1, nd + 1}):
            add(f"unsqueeze/{n}/{d}", "unsqueeze", [T(s, st, offset=off), I(d)])
        add(f"squeeze/{n}", "squeeze", [T(s, st, offset=off)])
        for d in sorted({0, 1, -1, nd}):
            add(f"squeeze_dim/{n}/{d}", "squeeze_dim", [T(s, st, offset=off), I(d)])
    for tag, s, dims in [("two", [2, 1, 1, 3], [1, 2]), ("mixed", [2, 1, 3], [0, 1]), ("neg", [1, 3, 1], [-1, 0]),
                         ("dup", [1, 3, 1], [0, 0]), ("dup_wrap", [1, 3, 1], [2, -1]), ("oob", [1, 3], [2]),
                         ("empty_list", [1, 3], []), ("scalar", [], [0]), ("scalar_neg", [], [-1]),
                         ("scalar_oob", [], [1]), ("size1_strided", [2, 1, 3], [1])]:
        add(f"squeeze_dims/{tag}", "squeeze_dims", [T(s), INTS(dims)])
    # transpose, permute
    for n, s, st, off in LAYOUTS:
        nd = len(s)
        pairs = [(0, -1), (0, 0), (-1, 0), (nd, 0)] if nd else [(0, 0), (0, -1), (1, 0)]
        for a, b in pairs:
            add(f"transpose/{n}/{a}_{b}", "transpose_int", [T(s, st, offset=off), I(a), I(b)])
        perm = list(range(nd))[::-1]
        add(f"permute/{n}/reverse", "permute", [T(s, st, offset=off), INTS(perm)])
    for tag, s, dims in [("neg", [2, 3, 4], [-1, 0, 1]), ("dup", [2, 3, 4], [0, 0, 1]), ("short", [2, 3, 4], [1, 0]),
                         ("long", [2, 3], [0, 1, 2]), ("oob", [2, 3], [0, 2]), ("dup_wrap", [2, 3], [1, -1]),
                         ("scalar_empty", [], [])]:
        add(f"permute/{tag}", "permute", [T(s), INTS(dims)])
    # slice, select, narrow
    big = 9223372036854775807
    for tag, dim, start, end, step in [("basic", 1, 1, 3, 1), ("none", 0, None, None, 1), ("neg", 1, -2, None, 1),
                                       ("step", 2, 0, big, 2), ("step3", 2, 1, None, 3), ("clamp", 1, -10, 10, 1),
                                       ("empty", 1, 2, 1, 1), ("end_neg", -1, 0, -1, 1), ("oob_dim", 3, 0, 1, 1),
                                       ("step0", 1, 0, 2, 0), ("step_neg", 1, 0, 2, -1), ("start_past", 1, 5, 7, 1)]:
        add(f"slice/{tag}", "slice_Tensor", [T([2, 3, 4]), I(dim), NONE() if start is None else I(start),
                                             NONE() if end is None else I(end), I(step)])
    for n in ("transposed", "nondense_offset", "expanded", "empty", "channels_last"):
        add(f"slice/{n}", "slice_Tensor", [lay(g, n), I(1), I(1), I(big), I(2)])
    add("slice/scalar", "slice_Tensor", [T([]), I(0), I(0), I(1), I(1)])
    for tag, s, dim, idx in [("first", [2, 3, 4], 0, 0), ("mid", [2, 3, 4], 1, 2), ("neg", [2, 3, 4], -1, -1),
                             ("oob", [2, 3, 4], 1, 3), ("oob_neg", [2, 3, 4], 1, -4), ("bad_dim", [2, 3], 2, 0),
                             ("scalar", [], 0, 0), ("vector", [5], 0, 4), ("empty_dim", [0, 3], 0, 0)]:
        add(f"select/{tag}", "select_int", [T(s), I(dim), I(idx)])
    for n in ("transposed", "nondense_offset", "expanded", "channels_last"):
        add(f"select/{n}", "select_int", [lay(g, n), I(1), I(-1)])
    for tag, s, dim, start, length in [("basic", [2, 3, 4], 1, 1, 2), ("neg_start", [2, 3, 4], -1, -2, 2),
                                       ("neg_dim", [2, 3, 4], -1, 0, 2), ("zero_len", [2, 3], 0, 2, 0),
                                       ("too_long", [2, 3], 1, 2, 2), ("start_oob", [2, 3], 1, 4, 0),
                                       ("start_neg_oob", [2, 3], 1, -4, 1), ("len_neg", [2, 3], 1, 0, -1),
                                       ("scalar", [], 0, 0, 1), ("dim_oob", [2, 3], 2, 0, 1), ("at_end", [2, 3], 1, 3, 0)]:
        add(f"narrow/{tag}", "narrow", [T(s), I(dim), I(start), I(length)])
    # flatten, unflatten
    for tag, s, st, a, b in [("all", [2, 3, 4], None, 0, -1), ("tail", [2, 3, 4], None, 1, -1),
                             ("same", [2, 3, 4], None, 1, 1), ("bad_order", [2, 3, 4], None, 2, 0),
                             ("scalar", [], None, 0, -1), ("scalar_oob", [], None, 0, 1),
                             ("transposed", [3, 4], [1, 3], 0, 1), ("permuted_head", [2, 3, 4],
                                                                    g.perm_strides([2, 3, 4], [2, 0, 1]), 1, 2),
                             ("oob", [2, 3], None, 0, 2), ("empty", [0, 3], None, 0, 1)]:
        add(f"flatten/{tag}", "flatten_using_ints", [T(s, st), I(a), I(b)])
    for tag, s, st, dim, sizes in [("basic", [6, 4], None, 0, [2, 3]), ("infer", [6, 4], None, 0, [-1, 3]),
                                   ("last", [2, 12], None, -1, [3, 4]), ("bad", [6, 4], None, 0, [4, 2]),
                                   ("empty_sizes", [6, 4], None, 0, []), ("oob", [6, 4], None, 2, [1, 6]),
                                   ("transposed", [4, 6], [1, 4], 1, [2, 3])]:
        # (no bad -1 lists or 0-dim inputs: PyTorch reports those with a C++ backtrace)
        add(f"unflatten/{tag}", "unflatten_int", [T(s, st), I(dim), INTS(sizes)])
    # contiguous (MemoryFormat is not optional: codes 0 contiguous, 1 preserve, 2 channels_last)
    for n, s, st, off in LAYOUTS:
        add(f"contiguous/{n}", "contiguous", [T(s, st, offset=off), g.MF(0)])
    add("contiguous/to_channels_last", "contiguous", [T([2, 3, 2, 2]), g.MF(2)])
    add("contiguous/channels_last_keep", "contiguous", [lay(g, "channels_last"), g.MF(2)])
    add("contiguous/preserve", "contiguous", [lay(g, "transposed"), g.MF(1)])
    add("contiguous/preserve_contig", "contiguous", [lay(g, "contig"), g.MF(1)])
    add("contiguous/cl_bad_rank", "contiguous", [lay(g, "transposed"), g.MF(2)])
    # alias, as_strided
    for n, s, st, off in LAYOUTS:
        add(f"alias/{n}", "alias", [T(s, st, offset=off)])
    for tag, s, size, stride, off in [("basic", [12], [3, 4], [4, 1], None), ("offset", [12], [2, 2], [1, 2], 3),
                                      ("overlap", [6], [3, 3], [1, 1], 0), ("zero_stride", [4], [2, 3], [0, 1], None),
                                      ("oob", [6], [3, 3], [3, 1], 0), ("mismatch", [6], [2, 3], [1], None),
                                      ("neg_stride", [6], [2], [-1], None), ("neg_size", [6], [-2], [1], None),
                                      ("neg_offset", [6], [2], [1], -1), ("scalar", [6], [], [], 5),
                                      ("empty", [0], [0, 3], [3, 1], None), ("empty_far", [2], [0, 3], [100, 1], 50)]:
        add(f"as_strided/{tag}", "as_strided", [T(s, offset=0), INTS(size), INTS(stride),
                                                NONE() if off is None else I(off)])
    add("as_strided/view_offset", "as_strided", [T([3, 4], offset=2), INTS([2, 2]), INTS([4, 1]), NONE()])


def join_cases(g):
    T, I, INTS, B = g.T, g.I, g.INTS, g.B
    add = g.add_case

    def L(*ts):
        return {"k": "tensors", "v": list(ts)}
    # copy_
    for tag, a, b in [("same", T([2, 3]), T([2, 3])), ("bcast", T([2, 3]), T([3])), ("scalar_src", T([2, 3]), T([])),
                      ("transposed_dst", T([3, 4], [1, 3]), T([3, 4])), ("transposed_src", T([3, 4]), T([3, 4], [1, 3])),
                      ("int_to_float", T([2, 3]), T([2, 3], dtype="int64")),
                      ("float_to_int", T([4], dtype="int32"), T([4], dtype="float64")),
                      ("to_bool", T([4], dtype="bool"), T([4])), ("bad_shape", T([2, 3]), T([2, 4])),
                      ("grow", T([3]), T([2, 3])), ("empty", T([0, 3]), T([3])),
                      ("expanded_dst", T([3, 4], [0, 1]), T([3, 4])), ("offset", T([2, 2], [4, 1], offset=1), T([2, 2]))]:
        add(f"copy_/{tag}", "copy_", [a, b, B(False)])
    add("copy_/non_blocking", "copy_", [T([3]), T([3]), B(True)])
    add("copy_/cpu_from_meta", "copy_", [T([3], dev="cpu"), T([3], dev="meta"), B(False)], runs=("mixed",))
    add("copy_/meta_from_cpu", "copy_", [T([3], dev="meta"), T([3], dev="cpu"), B(False)], runs=("mixed",))
    # cat and stack
    joins = [("dim0", [T([2, 3]), T([1, 3])], 0), ("dim1", [T([2, 3]), T([2, 1])], 1), ("neg", [T([2, 3]), T([2, 2])], -1),
             ("three", [T([1, 2]), T([2, 2]), T([0, 2])], 0), ("one", [T([2, 3])], 0),
             ("promote", [T([2], dtype="int64"), T([2]), T([1], dtype="bool")], 0),
             ("promote_int", [T([2], dtype="int32"), T([1], dtype="int64")], 0),
             ("legacy_empty", [T([2, 3]), T([0]), T([1, 3])], 0), ("mismatch", [T([2, 3]), T([2, 4])], 0),
             ("rank", [T([2, 3]), T([3])], 0), ("scalar", [T([]), T([])], 0), ("oob", [T([2, 3]), T([2, 3])], 2),
             ("transposed", [T([3, 4], [1, 3]), T([3, 4], [1, 3])], 0),
             ("channels_last", [lay(g, "channels_last"), lay(g, "channels_last")], 1),
             ("cl_mixed", [lay(g, "channels_last"), T([2, 3, 2, 2])], 0),
             ("expanded", [T([3, 4], [0, 1]), T([3, 4])], 1), ("empty_list", [], 0),
             ("all_empty", [T([0]), T([0])], 0), ("offset", [T([2, 2], offset=3), T([2, 2], [1, 2])], 1)]
    for tag, ts, dim in joins:
        add(f"cat/{tag}", "cat", [L(*ts), I(dim)])
    stacks = [("dim0", [T([2, 3]), T([2, 3])], 0), ("dim_last", [T([2, 3]), T([2, 3])], 2),
              ("neg", [T([2, 3]), T([2, 3])], -1), ("neg_oob", [T([2, 3]), T([2, 3])], -4),
              ("oob", [T([2, 3]), T([2, 3])], 3), ("mismatch", [T([2, 3]), T([3, 2])], 0),
              ("scalars", [T([]), T([]), T([])], 0), ("promote", [T([2], dtype="int64"), T([2])], 1),
              ("empty_list", [], 0), ("transposed", [T([3, 4], [1, 3]), T([3, 4], [1, 3])], 1),
              ("channels_last", [lay(g, "channels_last"), lay(g, "channels_last")], 0),
              ("empties", [T([0, 3]), T([0, 3])], 1), ("one", [T([2, 3])], 1)]
    for tag, ts, dim in stacks:
        add(f"stack/{tag}", "stack", [L(*ts), I(dim)])
    # split, split_with_sizes, chunk
    for tag, s, st, size, dim in [("even", [4, 3], None, 2, 0), ("uneven", [5, 3], None, 2, 0), ("dim1", [2, 5], None, 3, 1),
                                  ("big", [2, 3], None, 10, 1), ("neg_dim", [2, 6], None, 4, -1),
                                  ("zero_size_empty", [0, 3], None, 0, 0), ("zero_size", [2, 3], None, 0, 1),
                                  ("neg_size", [2, 3], None, -1, 1), ("scalar", [], None, 1, 0),
                                  ("transposed", [3, 4], [1, 3], 2, 1), ("oob", [2, 3], None, 1, 2),
                                  ("one", [2, 3], None, 1, 0)]:
        add(f"split/{tag}", "split_Tensor", [T(s, st), I(size), I(dim)])
    for tag, s, sizes, dim in [("basic", [2, 5], [2, 3], 1), ("zeros", [2, 5], [0, 5, 0], 1), ("one", [4, 2], [4], 0),
                               ("bad_sum", [2, 5], [2, 2], 1), ("neg", [2, 5], [6, -1], 1), ("empty_list", [0, 2], [], 0),
                               ("scalar", [], [1], 0), ("neg_dim", [3, 4], [1, 3], -1), ("oob", [3, 4], [3], 2)]:
        add(f"split_with_sizes/{tag}", "split_with_sizes", [T(s), INTS(sizes), I(dim)])
    for tag, s, chunks, dim in [("even", [4, 3], 2, 0), ("uneven", [5, 3], 2, 0), ("more", [3, 2], 5, 0),
                                ("dim1", [2, 7], 3, 1), ("neg_dim", [2, 6], 4, -1), ("empty", [0, 3], 3, 0),
                                ("zero_chunks", [4], 0, 0), ("neg_chunks", [4], -1, 0), ("scalar", [], 1, 0),
                                ("one", [4, 2], 1, 1), ("oob", [4], 1, 1), ("six_by_four", [6], 4, 0)]:
        add(f"chunk/{tag}", "chunk", [T(s), I(chunks), I(dim)])


RED_LAYOUTS = [("contig", [2, 3, 4], None), ("permuted", [2, 3, 4], [1, 8, 2]), ("transposed", [3, 4], [1, 3]),
               ("scalar", [], None), ("empty", [2, 0, 3], None), ("expanded", [3, 4], [0, 1]),
               ("size1", [2, 1, 3], None)]


def reduction_cases(g):
    T, I, INTS, NONE, B, DT, D = g.T, g.I, g.INTS, g.NONE, g.B, g.DT, g.D
    add = g.add_case
    nan, inf = float("nan"), float("inf")
    special = {"k": "tensor", "dtype": "float32", "sizes": [2, 3], "strides": [3, 1], "offset": 0,
               "storage": ["nan", 1.0, 2.0, -1.0, "inf", 3.0], "dev": "auto"}
    # whole-tensor reductions: sum, mean, prod, any, all
    for op in ("sum", "mean", "prod"):
        for n, s, st in RED_LAYOUTS:
            for dt in ("float32", "int32", "bool") if op != "mean" or n == "contig" else ("float32",):
                add(f"{op}/{n}/{dt}", op, [T(s, st, dt, kind="small"), NONE()])
        for dt in ("float64", "int64", "int32", "bool"):
            add(f"{op}/dtype_{dt}", op, [T([2, 3], dtype="float32", kind="small"), DT(dt)])
        add(f"{op}/special", op, [special, NONE()])
    for op in ("any", "all"):
        for n, s, st in RED_LAYOUTS:
            for dt in ("float32", "int64", "bool"):
                add(f"{op}/{n}/{dt}", op, [T(s, st, dt)])
        add(f"{op}/zeros", op, [T([4], dtype="bool", kind="small") | {"storage": [0, 0, 0, 0]}])
        add(f"{op}/ones", op, [T([4], dtype="int32") | {"storage": [1, 2, 3, 4]}])
        add(f"{op}/special", op, [special])
    # with a dim list: mean.dim, amax, amin
    dims = [None, [], [0], [-1], [0, 2], [1, -1], [3], [0, 0]]
    for op in ("mean_dim", "amax", "amin"):
        for n, s, st in RED_LAYOUTS:
            for d in dims:
                if n not in ("contig", "permuted") and d not in (None, [0], [-1], [3]):
                    continue
                if n == "permuted" and d not in (None, [0, 2], [1, -1]):
                    continue
                if op != "mean_dim" and d is None:
                    continue
                for keep in (False, True) if n in ("contig", "empty") and d in ([0], [-1], [1, -1]) else (False,):
                    dt = "float32" if op == "mean_dim" else g.rng.choice(["float32", "int32", "bool", "int64"])
                    add(f"{op}/{n}/{d}/{keep}", op, [T(s, st, dt), NONE() if d is None else INTS(d), B(keep)]
                        + ([NONE()] if op == "mean_dim" else []))
        extra = [NONE()] if op == "mean_dim" else []
        add(f"{op}/special", op, [special, INTS([1]), B(False)] + extra)
    for dt in ("int64", "bool"):
        add(f"mean_dim/int_{dt}", "mean_dim", [T([2, 3], dtype=dt), INTS([1]), B(False), NONE()])
        add(f"mean/int_{dt}", "mean", [T([2, 3], dtype=dt), NONE()])
    add("mean_dim/dtype_f64", "mean_dim", [T([2, 3]), INTS([1]), B(True), DT("float64")])
    add("mean_dim/dtype_int", "mean_dim", [T([2, 3]), INTS([1]), B(True), DT("int64")])
    # one dim: prod.dim_int, min.dim, any.dim, all.dim, argmax, argmin
    for op in ("prod_dim_int", "min_dim", "any_dim", "all_dim", "argmax", "argmin"):
        for n, s, st in RED_LAYOUTS:
            nd = len(s)
            for d in sorted({0, -1, nd}) + (["none"] if op in ("argmax", "argmin") else []):
                for keep in (False, True) if n in ("contig", "empty") and d != nd else (False,):
                    dt = g.rng.choice(["float32", "int32", "bool", "int64"])
                    if op in ("argmax", "argmin") and dt == "bool":
                        dt = "float64"
                    args = [T(s, st, dt, kind="small"), NONE() if d == "none" else I(d), B(keep)]
                    if op == "prod_dim_int":
                        args.append(NONE())
                    add(f"{op}/{n}/{d}/{keep}/{dt}", op, args)
        extra = [NONE()] if op == "prod_dim_int" else []
        add(f"{op}/special", op, [special, I(1), B(False)] + extra)
        ties = {"k": "tensor", "dtype": "float32", "sizes": [2, 3], "strides": [3, 1], "offset": 0,
                "storage": [2.0, 2.0, 1.0, 1.0, 1.0, 1.0], "dev": "auto"}
        add(f"{op}/ties", op, [ties, I(1), B(False)] + extra)
    add("prod_dim_int/dtype_f64", "prod_dim_int", [T([2, 3], dtype="int32"), I(1), B(False), DT("float64")])
    add("argmax/empty_none", "argmax", [T([0, 3]), NONE(), B(False)])
    add("argmin/empty_dim1", "argmin", [T([0, 3]), I(1), B(False)])
    # var and std with correction
    for op in ("var_correction", "std_correction"):
        for n, s, st in RED_LAYOUTS:
            for d in (None, [0], [-1], [0, 2], [4]):
                if n not in ("contig",) and d not in (None, [-1]):
                    continue
                for corr in (NONE(), I(0), D(2.5)) if n == "contig" else (NONE(),):
                    keep = n == "contig" and d == [0]
                    add(f"{op}/{n}/{d}/{corr.get('v')}", op,
                        [T(s, st, "float32", kind="small"), NONE() if d is None else INTS(d), corr, B(keep)])
        add(f"{op}/int", op, [T([2, 3], dtype="int64"), NONE(), NONE(), B(False)])
        add(f"{op}/f64", op, [T([2, 3], dtype="float64"), INTS([1]), NONE(), B(True)])
        add(f"{op}/dof_zero", op, [T([1, 3]), INTS([0]), NONE(), B(False)])
        add(f"{op}/special", op, [special, INTS([1]), NONE(), B(False)])


def creation_cases(g):
    T, I, INTS, NONE, B, DT, D, DEV, MF, LAYOUT = g.T, g.I, g.INTS, g.NONE, g.B, g.DT, g.D, g.DEV, g.MF, g.LAYOUT
    add = g.add_case
    opts = lambda dt=None: [NONE() if dt is None else DT(dt), NONE(), DEV(), NONE()]  # noqa: E731
    for op in ("zeros", "ones", "rand", "randn"):
        nd = op in ("rand", "randn")
        for size in ([2, 3], [], [0, 4], [2, 1, 3], [-1, 2]):
            add(f"{op}/{size}", op, [INTS(size)] + opts(), nondeterministic=nd)
        for dt in ("float64",) if nd else ("float64", "int64", "int32", "bool"):
            add(f"{op}/{dt}", op, [INTS([3])] + opts(dt), nondeterministic=nd)
        add(f"{op}/pin", op, [INTS([2]), NONE(), NONE(), DEV(), B(True)], nondeterministic=nd)
        add(f"{op}/layout", op, [INTS([2]), DT("float64"), LAYOUT(0), DEV(), B(False)], nondeterministic=nd)
    for tag, fill, dt in [("float", D(1.5), None), ("int", I(7), None), ("bool", B(True), None),
                          ("int_to_float", I(3), "float32"), ("float_to_int", D(2.75), "int64"),
                          ("neg_to_bool", I(-2), "bool"), ("float64", D(0.1), "float64"), ("int32", I(-4), "int32"),
                          # checked_convert's overflow errors (a double past an int type was once a UB cast)
                          ("overflow_int32", D(1e10), "int32"), ("overflow_int", I(3000000000), "int32"),
                          ("overflow_float32", D(1e300), "float32")]:
        add(f"full/{tag}", "full", [INTS([2, 2]), fill] + opts(dt))
    add("full/empty", "full", [INTS([0, 3]), D(1.0)] + opts())
    add("full/neg_size", "full", [INTS([2, -3]), D(1.0)] + opts())
    add("full/scalar", "full", [INTS([]), I(5)] + opts())
    # arange
    for tag, end, dt in [("int", I(5), None), ("float", D(2.5), None), ("zero", I(0), None), ("neg", I(-3), None),
                         ("dtype_f64", I(4), "float64"), ("dtype_int32", D(3.5), "int32"), ("bool", B(True), None)]:
        add(f"arange/{tag}", "arange", [end] + opts(dt))
    for tag, a, b, dt in [("int", I(2), I(6), None), ("float", D(0.5), I(3), None), ("empty", I(3), I(3), None),
                          ("backwards", I(3), I(1), None), ("int32", I(-2), I(2), "int32")]:
        add(f"arange_start/{tag}", "arange_start", [a, b] + opts(dt))
    for tag, a, b, st, dt in [("int", I(0), I(10), I(3), None), ("float", I(1), D(4.0), D(0.5), None),
                              ("neg_step", I(5), I(0), I(-2), None), ("zero_step", I(0), I(5), I(0), None),
                              ("wrong_sign", I(0), I(5), I(-1), None), ("frac", D(0.0), D(1.0), D(0.3), None),
                              ("frac_f64", D(0.0), D(1.0), D(0.1), "float64"), ("int_dtype_float_step", I(0), I(5), D(1.5), "int64"),
                              ("float_int32", D(-1.5), D(2.5), D(0.5), "int32"), ("inf", I(0), D("inf"), I(1), None)]:
        add(f"arange_start_step/{tag}", "arange_start_step", [a, b, st] + opts(dt))
    # the *_like ops and new_*
    like_layouts = [("contig", [2, 3], None), ("transposed", [3, 4], [1, 3]), ("nondense", [3, 4], [1, 6]),
                    ("expanded", [3, 4], [0, 1]), ("channels_last", [2, 3, 2, 2], [12, 1, 6, 3]), ("scalar", [], None),
                    ("empty", [0, 3], None)]
    for op in ("zeros_like", "ones_like", "full_like", "rand_like", "randn_like"):
        nd = op in ("rand_like", "randn_like")
        fill = [D(2.5)] if op == "full_like" else []
        for n, s, st in like_layouts:
            add(f"{op}/{n}", op, [T(s, st)] + fill + [NONE(), NONE(), NONE(), NONE(), NONE()], nondeterministic=nd)
        for mf in (0, 2):
            add(f"{op}/mf{mf}", op, [T([2, 3, 2, 2], [12, 1, 6, 3])] + fill + [NONE(), NONE(), NONE(), NONE(), MF(mf)],
                nondeterministic=nd)
        add(f"{op}/mf_bad_rank", op, [T([2, 3])] + fill + [NONE(), NONE(), NONE(), NONE(), MF(2)], nondeterministic=nd)
        for dt in ("float64",) if nd else ("float64", "int64", "bool"):
            add(f"{op}/to_{dt}", op, [T([2, 3], [1, 2])] + fill + [DT(dt), NONE(), NONE(), NONE(), NONE()],
                nondeterministic=nd)
        add(f"{op}/int_self", op, [T([2, 3], dtype="int32")] + fill + [NONE(), NONE(), NONE(), NONE(), NONE()],
            nondeterministic=nd)
        add(f"{op}/to_meta", op, [T([2, 3], dev="cpu")] + fill + [NONE(), NONE(), DEV("meta"), NONE(), NONE()],
            runs=("mixed",), nondeterministic=nd)
    for op in ("new_zeros", "new_ones", "new_full"):
        fill = [I(3)] if op == "new_full" else []
        for tag, self_, size, dt in [("basic", T([2, 3]), [4], None), ("int_self", T([2], dtype="int64"), [2, 2], None),
                                     ("dtype", T([2]), [3], "int32"), ("bool", T([2]), [3], "bool"),
                                     ("transposed", T([3, 4], [1, 3]), [3, 4], None), ("empty", T([2]), [0, 2], None),
                                     ("neg", T([2]), [-1], None), ("scalar", T([2]), [], "float64")]:
            add(f"{op}/{tag}", op, [self_, INTS(size)] + fill + [NONE() if dt is None else DT(dt), NONE(), NONE(),
                                                                 NONE()])
        add(f"{op}/to_meta", op, [T([2], dev="cpu"), INTS([2])] + fill + [NONE(), NONE(), DEV("meta"), NONE()],
            runs=("mixed",))


def generator_cases(g):
    """The .generator overloads: with a seeded generator a case is deterministic (its values
    are compared), with None it draws from the default generator. On meta they run the C++
    kernel (2.13 registers no Meta kernel for them), whose checks differ from the Python
    references of the default overloads (randn's negative size, randperm's dtype=None)."""
    saved, g.rng = g.rng, random.Random(1013)  # its own stream: the later groups' cases stay as they were
    try:
        _generator_cases(g)
    finally:
        g.rng = saved


def _generator_cases(g):
    T, I, INTS, NONE, B, DT, DEV, MF, GEN = g.T, g.I, g.INTS, g.NONE, g.B, g.DT, g.DEV, g.MF, g.GEN
    add = g.add_case
    opts = lambda dt=None, pin=None: [NONE() if dt is None else DT(dt), NONE(), DEV(),  # noqa: E731
                                      NONE() if pin is None else B(pin)]
    for op in ("rand_generator", "randn_generator"):
        for size in ([2, 3], [], [0, 4], [5], [-1, 2]):
            add(f"{op}/{size}", op, [INTS(size), GEN(3)] + opts())
        add(f"{op}/float64", op, [INTS([7]), GEN(11)] + opts("float64"))
        add(f"{op}/int64", op, [INTS([3]), GEN(0)] + opts("int64"))
        add(f"{op}/pin", op, [INTS([2]), GEN(0)] + opts(pin=True))
        add(f"{op}/none", op, [INTS([2, 2]), NONE()] + opts(), nondeterministic=True)
    for op, lo in (("randint_generator", []), ("randint_low_generator", [I(-4)])):
        for size, dt in (([6], None), ([2, 3], "int32"), ([4], "float32"), ([3], "bool"), ([0], None)):
            add(f"{op}/{size}/{dt}", op, lo + [I(6 if dt != "bool" else 1), INTS(size), GEN(5)] + opts(dt))
        add(f"{op}/empty_range", op, lo + [I(-4), INTS([2]), GEN(5)] + opts())
        add(f"{op}/none", op, lo + [I(9), INTS([3]), NONE()] + opts(), nondeterministic=True)
    add("randint_low_generator/wide", "randint_low_generator", [I(-2**40), I(2**40), INTS([4]), GEN(9)] + opts("int64"))
    for n, dt in ((5, None), (0, None), (-1, None), (4, "float32"), (3, "int32"), (6, "bool")):
        add(f"randperm_generator/{n}/{dt}", "randperm_generator", [I(n), GEN(2)] + opts(dt))
    add("randperm_generator/none", "randperm_generator", [I(4), NONE()] + opts(), nondeterministic=True)
    add("randperm_generator/no_dtype", "randperm_generator", [I(3), GEN(2), NONE(), NONE(), DEV(), NONE()])
    for op in ("rand_like_generator", "randn_like_generator"):
        for n, s, st in (("contig", [2, 3], None), ("transposed", [3, 4], [1, 3]), ("scalar", [], None),
                         ("empty", [0, 3], None), ("channels_last", [2, 3, 2, 2], [12, 1, 6, 3])):
            add(f"{op}/{n}", op, [T(s, st), GEN(4), NONE(), NONE(), NONE(), NONE(), NONE()])
        add(f"{op}/to_float64", op, [T([2, 3]), GEN(4), DT("float64"), NONE(), NONE(), NONE(), NONE()])
        add(f"{op}/mf2", op, [T([2, 3, 2, 2]), GEN(4), NONE(), NONE(), NONE(), NONE(), MF(2)])
        add(f"{op}/int_self", op, [T([2, 3], dtype="int32"), GEN(4), NONE(), NONE(), NONE(), NONE(), NONE()])
        add(f"{op}/none", op, [T([2, 3]), NONE(), NONE(), NONE(), NONE(), NONE(), NONE()], nondeterministic=True)
    add("bernoulli__float/generator", "bernoulli__float", [T([2, 3]), g.D(0.5), GEN(8)], nondeterministic=True)


def index_cases(g):
    T, I, INTS, NONE, B, D = g.T, g.I, g.INTS, g.NONE, g.B, g.D
    add = g.add_case

    def L(*ts):
        return {"k": "tensors", "v": list(ts)}

    def IDX(vals, sizes=None, dtype="int64"):
        sizes = [len(vals)] if sizes is None else sizes
        return {"k": "tensor", "dtype": dtype, "sizes": sizes, "strides": g.contiguous_strides(sizes), "offset": 0,
                "storage": list(vals), "dev": "auto"}
    # index.Tensor
    for tag, self_, idx in [("first", T([3, 4]), [IDX([0, 2])]), ("neg", T([3, 4]), [IDX([-1, 0, -3])]),
                            ("second", T([3, 4]), [NONE(), IDX([1, 3])]), ("both", T([3, 4]), [IDX([0, 2]), IDX([1, 3])]),
                            ("bcast", T([3, 4]), [IDX([0, 2], [2, 1]), IDX([1, 3, 0])]),
                            ("2d_index", T([3, 4]), [IDX([0, 1, 2, 0], [2, 2])]),
                            ("int32", T([3, 4]), [IDX([2, 1], dtype="int32")]),
                            ("apart", T([2, 3, 4]), [IDX([0, 1]), NONE(), IDX([3, 2])]),
                            ("adjacent_mid", T([2, 3, 4]), [NONE(), IDX([0, 2]), IDX([1, 1])]),
                            ("last", T([2, 3, 4]), [NONE(), NONE(), IDX([3])]),
                            ("transposed", T([3, 4], [1, 3]), [IDX([0, 2])]),
                            ("transposed_second", T([3, 4], [1, 3]), [NONE(), IDX([0, 2])]),
                            ("permuted", T([2, 3, 4], [1, 8, 2]), [NONE(), IDX([1, 0])]),
                            ("empty_index", T([3, 4]), [IDX([])]), ("empty_self", T([0, 4]), [NONE(), IDX([1])]),
                            ("oob", T([3, 4]), [IDX([3])]), ("oob_neg", T([3, 4]), [NONE(), IDX([-5])]),
                            ("too_many", T([3]), [IDX([0]), IDX([0])]), ("float_index", T([3]), [IDX([0.0], dtype="float32")]),
                            ("bad_bcast", T([3, 4]), [IDX([0, 1]), IDX([0, 1, 2])]),
                            ("mask", T([2, 3]), [IDX([1, 0, 1, 0, 0, 1], [2, 3], "bool")]),
                            ("mask_row", T([2, 3]), [IDX([0, 1], [2], "bool")]),
                            ("mask_bad", T([2, 3]), [IDX([1, 0, 1], [3], "bool")]),
                            ("int_self", T([4], dtype="int32"), [IDX([3, 3, 0])]),
                            ("scalar_index", T([3, 4]), [IDX([1], [])]),
                            ("offset_self", T([3, 4], [4, 1], offset=2), [IDX([2])])]:
        add(f"index/{tag}", "index_Tensor", [self_, L(*idx)])
    # index_select
    for tag, self_, dim, idx in [("dim0", T([3, 4]), 0, IDX([2, 0, 2])), ("dim1", T([3, 4]), 1, IDX([3, 1])),
                                 ("neg_dim", T([2, 3, 4]), -2, IDX([1])), ("int32", T([3, 4]), 0, IDX([1], dtype="int32")),
                                 ("scalar_index", T([3, 4]), 1, IDX([2], [])), ("empty", T([3, 4]), 0, IDX([])),
                                 ("oob", T([3, 4]), 0, IDX([3])), ("neg_index", T([3, 4]), 0, IDX([-1])),
                                 ("2d_index", T([3, 4]), 0, IDX([0, 1], [2, 1])), ("float_index", T([3]), 0, IDX([0.0], dtype="float32")),
                                 ("scalar_self", T([]), 0, IDX([0])), ("transposed", T([3, 4], [1, 3]), 1, IDX([0, 2])),
                                 ("bad_dim", T([3, 4]), 2, IDX([0])), ("bool_self", T([4], dtype="bool"), 0, IDX([3, 0]))]:
        add(f"index_select/{tag}", "index_select", [self_, I(dim), idx])
    # gather
    for tag, self_, dim, idx in [("dim0", T([3, 4]), 0, IDX([0, 2, 1, 0, 2, 2, 0, 1], [2, 4])),
                                 ("dim1", T([3, 4]), 1, IDX([3, 0, 1, 1, 2, 2], [3, 2])),
                                 ("neg_dim", T([3, 4]), -1, IDX([3, 0], [1, 2])),
                                 ("smaller", T([3, 4]), 1, IDX([1], [1, 1])),
                                 ("oob", T([3, 4]), 1, IDX([4], [1, 1])), ("neg_index", T([3, 4]), 1, IDX([-1], [1, 1])),
                                 ("too_big", T([3, 4]), 1, IDX([0] * 10, [2, 5])),
                                 ("rank", T([3, 4]), 1, IDX([0, 1])), ("int32_index", T([3, 4]), 1, IDX([0], [1, 1], "int32")),
                                 ("empty", T([3, 4]), 0, IDX([], [0, 4])), ("scalar", T([]), 0, IDX([0], [])),
                                 ("transposed", T([3, 4], [1, 3]), 0, IDX([2, 1, 0, 0, 1, 2], [2, 3])),
                                 ("bad_dim", T([3, 4]), 2, IDX([0], [1, 1]))]:
        add(f"gather/{tag}", "gather", [self_, I(dim), idx, B(False)])
    # scatter
    for tag, self_, dim, idx, src in [("dim0", T([3, 4]), 0, IDX([2, 0, 1, 2], [1, 4]), T([1, 4])),
                                      ("dim1", T([3, 4]), 1, IDX([3, 0, 1, 2, 0, 1], [3, 2]), T([3, 3])),
                                      ("neg_dim", T([3, 4]), -1, IDX([1], [1, 1]), T([1, 1])),
                                      ("oob", T([3, 4]), 1, IDX([4], [1, 1]), T([1, 1])),
                                      ("src_small", T([3, 4]), 1, IDX([0, 1], [1, 2]), T([1, 1])),
                                      ("dtype", T([3, 4]), 1, IDX([0], [1, 1]), T([1, 1], dtype="float64")),
                                      ("rank", T([3, 4]), 1, IDX([0]), T([1])),
                                      ("empty", T([3, 4]), 0, IDX([], [0, 4]), T([1, 4])),
                                      ("transposed", T([3, 4], [1, 3]), 0, IDX([2, 1], [1, 2]), T([1, 2])),
                                      ("int_self", T([3, 4], dtype="int64"), 0, IDX([1, 2], [1, 2]), T([1, 2], dtype="int64")),
                                      ("int32_index", T([3, 4]), 1, IDX([2], [1, 1], "int32"), T([1, 1])),
                                      # a 1-byte index was once read as int64 (found by fuzz_op_call)
                                      ("bool_index", T([3, 4]), 1, IDX([1], [1, 1], "bool"), T([1, 1])),
                                      ("float_index", T([3, 4]), 1, IDX([1], [1, 1], "float32"), T([1, 1]))]:
        add(f"scatter/{tag}", "scatter_src", [self_, I(dim), idx, src])
    for tag, self_, dim, idx, v in [("float", T([3, 4]), 1, IDX([3, 0], [2, 1]), D(9.5)),
                                    ("int", T([3, 4], dtype="int64"), 0, IDX([2, 0, 1], [1, 3]), I(7)),
                                    ("bool_value", T([3]), 0, IDX([1]), B(True)),
                                    ("oob", T([3, 4]), 0, IDX([3], [1, 1]), D(1.0)),
                                    ("transposed", T([3, 4], [1, 3]), 1, IDX([1], [1, 1]), D(-1.0))]:
        add(f"scatter_value/{tag}", "scatter_value", [self_, I(dim), idx, v])
