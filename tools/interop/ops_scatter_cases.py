"""Cases of conv3d, the padding='same' convolutions with an even kernel, scatter_add,
scatter_reduce.two, cumsum_ and the out= overloads (atan2.out, add.out, mul.out), for tools/interop/gen_ops.py (which
imports this file and writes what it adds to tests/data/ops_scatter_cases.json, in
ops_cases.json's format).

They draw from a random generator of their own, so adding them leaves every older case
unchanged; each operator has a few dozen small cases at most.
"""
import random


def add_all(g):
    """Adds the cases, yielding the file they go to (gen_ops.py writes and drops them)."""
    saved, g.rng = g.rng, random.Random(2031)
    try:
        conv_cases(g)
        scatter_cases(g)
        cumsum__cases(g)
        out_cases(g)
        yield "ops_scatter_cases.json"
    finally:
        g.rng = saved


def S(v):
    return {"k": "str", "v": v}


def conv_cases(g):
    """conv3d, and conv{1,2,3}d.padding 'same' with an even kernel or an even dilated extent:
    2.13 pads the high side with constant_pad_nd, then convolves with the symmetric part."""
    T, I, INTS, NONE = g.T, g.I, g.INTS, g.NONE
    tol32, tol64 = [1e-6, 1e-5], [1e-12, 1e-10]

    def add(name, op, args):
        dt = next((a["dtype"] for a in args if a.get("k") == "tensor"), "float32")
        g.add_case(name, op, args, tol=tol64 if dt == "float64" else tol32)

    for dt in ("float32", "float64"):
        add(f"conv3d/basic/{dt}", "conv3d", [T([2, 2, 4, 5, 5], dtype=dt, kind="small"),
                                             T([3, 2, 2, 3, 2], dtype=dt, kind="small"), T([3], dtype=dt),
                                             INTS([1, 2, 1]), INTS([1, 0, 1]), INTS([1, 1, 1]), I(1)])
    add("conv3d/unbatched_groups", "conv3d", [T([4, 3, 4, 4], kind="small"), T([2, 2, 2, 2, 2], kind="small"), NONE(),
                                              INTS([1, 1, 1]), INTS([0, 0, 0]), INTS([1, 2, 1]), I(2)])
    add("conv3d/rank3", "conv3d", [T([4, 4, 4]), T([2, 2, 2, 2, 2]), NONE(), INTS([1, 1, 1]), INTS([0, 0, 0]),
                                   INTS([1, 1, 1]), I(1)])
    add("conv3d/bias_dtype", "conv3d", [T([1, 2, 3, 3, 3]), T([2, 2, 2, 2, 2]), T([2], dtype="float64"),
                                        INTS([1, 1, 1]), INTS([0, 0, 0]), INTS([1, 1, 1]), I(1)])
    for name, xs, ws, dl in [("even_2x2", [1, 3, 6, 6], [4, 3, 2, 2], [1, 1]),
                             ("even_4x3", [1, 3, 6, 7], [4, 3, 4, 3], [1, 1]),
                             ("even_dilation", [1, 3, 6, 7], [4, 3, 4, 2], [1, 3]),
                             ("even_dilation_2", [2, 3, 6, 7], [4, 3, 2, 2], [2, 1]),
                             ("even_unbatched", [3, 5, 5], [2, 3, 2, 3], [1, 1]),
                             ("even_float64", [1, 2, 5, 5], [2, 2, 2, 4], [1, 1])]:
        dt = "float64" if name.endswith("float64") else "float32"
        add(f"conv2d_padding/same_{name}", "conv2d_padding",
            [T(xs, dtype=dt, kind="small"), T(ws, dtype=dt, kind="small"), T([ws[0]], dtype=dt), INTS([1, 1]),
             S("same"), INTS(dl), I(1)])
    add("conv2d_padding/same_even_groups", "conv2d_padding",
        [T([1, 4, 5, 5], kind="small"), T([4, 2, 2, 2], kind="small"), NONE(), INTS([1, 1]), S("same"),
         INTS([1, 1]), I(2)])
    add("conv2d_padding/same_even_channels_last", "conv2d_padding",
        [T([1, 3, 5, 5], g.perm_strides([1, 3, 5, 5], [0, 2, 3, 1]), kind="small"), T([2, 3, 2, 2], kind="small"),
         NONE(), INTS([1, 1]), S("same"), INTS([1, 1]), I(1)])
    add("conv2d_padding/same_even_strided", "conv2d_padding",
        [T([1, 3, 6, 6]), T([4, 3, 2, 2]), NONE(), INTS([2, 2]), S("same"), INTS([1, 1]), I(1)])
    add("conv1d_padding/same_even", "conv1d_padding", [T([2, 3, 8], kind="small"), T([4, 3, 4], kind="small"),
                                                       T([4]), INTS([1]), S("same"), INTS([1]), I(1)])
    add("conv1d_padding/same_even_unbatched", "conv1d_padding", [T([3, 6], kind="small"), T([4, 3, 2], kind="small"),
                                                                 NONE(), INTS([1]), S("same"), INTS([1]), I(1)])
    add("conv1d_padding/same_odd_dilation", "conv1d_padding", [T([1, 2, 7], kind="small"), T([3, 2, 2], kind="small"),
                                                               NONE(), INTS([1]), S("same"), INTS([3]), I(1)])
    for name, xs, ws, pad, dl in [("same_even", [1, 2, 4, 5, 6], [3, 2, 2, 3, 4], "same", [1, 1, 1]),
                                  ("same_odd", [1, 2, 4, 5, 5], [3, 2, 3, 3, 3], "same", [1, 1, 1]),
                                  ("same_even_unbatched", [2, 3, 4, 4], [2, 2, 2, 2, 3], "same", [1, 2, 1]),
                                  ("valid", [1, 2, 4, 5, 6], [3, 2, 2, 3, 4], "valid", [1, 1, 1]),
                                  ("bad_string", [1, 2, 4, 4, 4], [3, 2, 2, 2, 2], "full", [1, 1, 1])]:
        add(f"conv3d_padding/{name}", "conv3d_padding", [T(xs, kind="small"), T(ws, kind="small"), NONE(),
                                                         INTS([1, 1, 1]), S(pad), INTS(dl), I(1)])


def IDX(g, vals, sizes=None, dtype="int64", strides=None):
    sizes = [len(vals)] if sizes is None else sizes
    return {"k": "tensor", "dtype": dtype, "sizes": sizes,
            "strides": g.contiguous_strides(sizes) if strides is None else strides, "offset": 0,
            "storage": list(vals), "dev": "auto"}


def R(g, vals, sizes, dtype="float32"):
    """A contiguous tensor of the given values."""
    strides = g.contiguous_strides(sizes)
    return {"k": "tensor", "dtype": dtype, "sizes": list(sizes), "strides": list(strides), "offset": 0,
            "storage": list(vals), "dev": "auto"}


def scatter_cases(g):
    """scatter_add(_) and scatter_reduce(_).two: every reduction with and without self, each
    dtype, duplicate indices (the reductions' point), layouts, NaN, and the checks' texts."""
    T, I, B = g.T, g.I, g.B
    ops = [("scatter_add", ()), ("scatter_add_", ())]
    for r in ("sum", "prod", "mean", "amax", "amin"):
        for inc in (True, False):
            ops.append(("scatter_reduce_two", (S(r), B(inc))))
            ops.append(("scatter_reduce__two", (S(r), B(inc))))
    dup = IDX(g, [0, 1, 0, 1, 1, 0, 2, 2], [2, 4])  # rows 0 and 1 both reach rows 0, 1 and 2
    for op, extra in ops:
        tag = op + "/" + "/".join(str(e["v"]) for e in extra)
        for dt in ("float32", "float64", "int64", "int32", "bool"):
            g.add_case(f"{tag}/dup/{dt}", op, [T([3, 4], dtype=dt), I(0), dup, T([2, 4], dtype=dt)] + list(extra))
        g.add_case(f"{tag}/dim1", op, [T([3, 5]), I(1), IDX(g, [4, 0, 4, 1, 1, 1], [3, 2]), T([3, 3])] + list(extra))
        g.add_case(f"{tag}/neg_dim", op, [T([2, 3]), I(-1), IDX(g, [2, 2], [1, 2]), T([2, 2])] + list(extra))
        g.add_case(f"{tag}/transposed_self", op, [T([3, 4], [1, 3]), I(0), dup, T([2, 4])] + list(extra))
        g.add_case(f"{tag}/strided_src_index", op, [T([3, 4]), I(1), IDX(g, [3, 0, 3, 1, 2, 0], [2, 3], strides=[1, 2]),
                                                    T([3, 3], [1, 3])] + list(extra))
        g.add_case(f"{tag}/scalar", op, [T([]), I(0), IDX(g, [0], []), T([])] + list(extra))
        g.add_case(f"{tag}/empty_index", op, [T([2, 3]), I(0), IDX(g, [], [0, 3]), T([2, 3])] + list(extra))
        g.add_case(f"{tag}/oob", op, [T([2, 3]), I(0), IDX(g, [0, 2], [1, 2]), T([2, 3])] + list(extra))
        g.add_case(f"{tag}/negative_index", op, [T([2, 3]), I(0), IDX(g, [-1], [1, 1]), T([2, 3])] + list(extra))
        g.add_case(f"{tag}/int32_index", op, [T([2, 3]), I(1), IDX(g, [2, 2], [1, 2], "int32"), T([2, 3])] + list(extra))
    # the checks, once per op (the reductions share them)
    for op, extra in (("scatter_add", ()), ("scatter_add_", ()), ("scatter_reduce_two", (S("amax"), B(True))),
                      ("scatter_reduce__two", (S("mean"), B(False)))):
        for tag, args in [("bad_dim", [T([2, 3]), I(2), IDX(g, [0], [1, 1]), T([1, 1])]),
                          ("dtype", [T([2, 3]), I(0), IDX(g, [0], [1, 1]), T([1, 1], dtype="float64")]),
                          ("float_index", [T([2, 3]), I(0), IDX(g, [0], [1, 1], "float32"), T([1, 1])]),
                          ("rank", [T([2, 3]), I(0), IDX(g, [0]), T([1])]),
                          ("index_bigger_than_self", [T([2, 3]), I(0), IDX(g, [0] * 8, [2, 4]), T([2, 4])]),
                          ("index_bigger_than_src", [T([2, 3]), I(0), IDX(g, [0] * 6, [2, 3]), T([2, 2])]),
                          ("expanded_self", [T([2, 3], [0, 1]), I(0), IDX(g, [0, 1], [1, 2]), T([1, 2])])]:
            g.add_case(f"{op}/check/{tag}", op, args + list(extra))
    # src of another rank than index (fuzz_op_call: a [3, 0] src of a 0-dim index was read
    # past its storage): the CPU check reads src's sizes up to self's rank first (IndexError
    # past src's own), the meta compares the ranks first
    for op, extra in (("scatter_add", ()), ("scatter_reduce_two", (S("sum"), B(True))), ("scatter_src", ())):
        for tag, args in [("src_fewer_dims", [T([2, 2]), I(0), IDX(g, [0], [1, 1]), T([2])]),
                          ("src_more_dims", [T([2, 2]), I(0), IDX(g, [0], [1, 1]), T([2, 2, 2])]),
                          ("src_zero_dim", [T([2, 2]), I(0), IDX(g, [0], [1, 1]), T([])]),
                          ("src_empty_other_rank", [T([]), I(-1), IDX(g, [0], []), T([3, 0])]),
                          ("index_bigger_than_self_and_rank", [T([2, 2]), I(0), IDX(g, [0] * 9, [3, 3]), T([2])]),
                          ("index_bigger_than_src_and_rank", [T([2, 2]), I(0), IDX(g, [0] * 3, [3, 1]), T([2])])]:
            g.add_case(f"{op}/check_rank/{tag}", op, args + list(extra))
    for op in ("scatter_reduce_two", "scatter_reduce__two"):
        for r in ("max", "min", "foo", "add", ""):
            g.add_case(f"{op}/reduce_name/{r or 'empty'}", op,
                       [T([3, 4]), I(0), dup, T([2, 4]), S(r), B(True)])
        g.add_case(f"{op}/reduce_name/foo_oob", op, [T([2, 3]), I(0), IDX(g, [5], [1, 1]), T([2, 3]), S("foo"), B(True)])
        g.add_case(f"{op}/bool_mean_oob/self", op, [T([2, 3], dtype="bool"), I(0), IDX(g, [5], [1, 1]),
                                                    T([2, 3], dtype="bool"), S("mean"), B(True)])
        g.add_case(f"{op}/bool_mean_oob/no_self", op, [T([2, 3], dtype="bool"), I(0), IDX(g, [5], [1, 1]),
                                                       T([2, 3], dtype="bool"), S("mean"), B(False)])
        # NaN in self and src: amax/amin keep a NaN from either side; integer mean floors
        nan_self = R(g, [1.0, "nan", 2.0, 0.0, 5.0, "nan"], [2, 3])
        nan_src = R(g, ["nan", 1.0, 3.0, 7.0, 2.0, 1.0], [2, 3])
        for r in ("amax", "amin", "sum", "mean"):
            g.add_case(f"{op}/nan/{r}", op, [nan_self, I(0), IDX(g, [0, 1, 0, 1, 1, 0], [2, 3]), nan_src, S(r), B(True)])
        g.add_case(f"{op}/int_mean_floor", op, [R(g, [-7, 3, 2], [3], "int64"), I(0), IDX(g, [0, 0, 1]),
                                                R(g, [-4, 2, 0], [3], "int64"), S("mean"), B(True)])


def cumsum__cases(g):
    """cumsum_: self's dtype kept (a dtype argument must name it), layouts, the checks."""
    T, I, NONE, DT = g.T, g.I, g.NONE, g.DT
    for dt in ("float32", "float64", "int64", "int32", "bool"):
        g.add_case(f"cumsum_/{dt}", "cumsum_", [T([2, 3], dtype=dt), I(1), NONE()])
    for name, sizes, strides, dim in [("dim0", [3, 4], None, 0), ("neg_dim", [3, 4], None, -1),
                                      ("transposed", [3, 4], [1, 3], 1), ("gapped", [2, 3], [6, 2], 1),
                                      ("scalar", [], None, 0), ("empty", [0, 3], None, 0), ("3d", [2, 3, 2], None, 1)]:
        g.add_case(f"cumsum_/{name}", "cumsum_", [T(sizes, strides), I(dim), NONE()])
    g.add_case("cumsum_/same_dtype", "cumsum_", [T([2, 3]), I(1), DT("float32")])
    g.add_case("cumsum_/other_dtype", "cumsum_", [T([2, 3]), I(1), DT("float64")])
    g.add_case("cumsum_/int_to_float", "cumsum_", [T([2, 3], dtype="int64"), I(1), DT("float32")])
    g.add_case("cumsum_/bad_dim", "cumsum_", [T([2, 3]), I(2), NONE()])
    g.add_case("cumsum_/bad_dim_and_dtype", "cumsum_", [T([2, 3]), I(5), DT("float64")])
    g.add_case("cumsum_/expanded", "cumsum_", [T([2, 3], [0, 1]), I(1), NONE()])
    g.add_case("cumsum_/expanded_dtype", "cumsum_", [T([2, 3], [0, 1]), I(1), DT("float64")])
    g.add_case("cumsum_/int32_overflow", "cumsum_", [R(g, [2147483647, 1, 5], [3], "int32"), I(0), NONE()])


def out_cases(g):
    """The out= overloads (atan2.out, add.out, mul.out): out resized when empty or of another
    shape (to the functional result's layout on CPU, contiguously on meta), kept with its own
    strides when its shape matches, cast into its dtype, refused when the result cannot be cast."""
    T, I, D, perm = g.T, g.I, g.D, g.perm_strides
    for op, extra in (("atan2_out", []), ("mul_out", []), ("add_out", [I(1)]), ("add_out", [D(-0.5)])):
        tag = op + ("/alpha" if extra and extra[0]["k"] == "double" else "")

        def add(name, a, b, out):
            g.add_case(f"{tag}/{name}", op, [a, b] + extra + [out])
        add("empty_out", T([2, 3]), T([3]), T([0]))
        add("same_shape_out", T([2, 3]), T([2, 3]), T([2, 3]))
        add("transposed_out", T([2, 3]), T([3]), T([2, 3], [1, 2]))
        add("gapped_out", T([2, 3]), T([2, 3]), T([2, 3], [6, 2]))
        add("offset_out", T([2, 3]), T([2, 3]), T([2, 3], offset=3))
        add("wrong_shape_out", T([2, 3]), T([3]), T([4, 5]))
        add("bigger_out", T([2, 3]), T([3]), T([7]))
        add("permuted_inputs_empty_out", T([3, 2], [1, 3]), T([3, 2], [1, 3]), T([0]))
        add("permuted_inputs_offset_out", T([3, 2], [1, 3]), T([3, 2], [1, 3]), T([0], offset=2))
        add("scalar", T([]), T([]), T([0]))
        add("long_out", T([2, 3]), T([3]), T([0], dtype="int64"))
        add("double_out", T([2, 3]), T([3]), T([2, 3], dtype="float64"))
        add("int_inputs_float_out", T([2, 3], dtype="int64"), T([3], dtype="int64"), T([0]))
        add("int_inputs_int32_out", T([2, 3], dtype="int64"), T([3], dtype="int64"), T([0], dtype="int32"))
        add("bool_out", T([2, 3], dtype="bool"), T([3], dtype="bool"), T([0], dtype="bool"))
        add("mismatch", T([2, 3]), T([4]), T([0]))
        add("out_is_self", T([2, 3]), T([3]), {**T([2, 3]), "share": 0})
