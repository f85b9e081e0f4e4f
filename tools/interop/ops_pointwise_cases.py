"""Cases of the operators added for issue 10's pointwise and indexing gaps, for
tools/interop/gen_ops.py (which imports this file and writes what it adds to
tests/data/ops_pointwise_cases.json, in ops_cases.json's format): the in-place views
(squeeze_, unsqueeze_), div with rounding_mode, the remainder overloads, masked_fill with a
tensor value, clamp with tensor bounds and the in-place clamps, hardtanh_, gelu_, index_put.

Like ops_shape_cases.py they draw from a random generator of their own, so adding them leaves
every older case unchanged; each operator has a few dozen small cases at most.
"""
import random

LAYOUTS = [
    ("contig", [2, 3], None, 0),
    ("transposed", [3, 4], [1, 3], 0),
    ("nondense_offset", [3, 4], [1, 6], 2),
    ("expanded", [3, 4], [0, 1], 0),
    ("scalar", [], None, 0),
    ("empty", [0, 3], None, 0),
]


def add_all(g):
    """Adds the cases, yielding the file they go to (gen_ops.py writes and drops them)."""
    saved, g.rng = g.rng, random.Random(1010)
    try:
        inplace_view_cases(g)
        div_mode_cases(g)
        remainder_cases(g)
        inplace_clamp_cases(g)
        clamp_tensor_cases(g)
        masked_fill_cases(g)
        index_put_cases(g)
        unary_float_cases(g)
        core_pointwise_cases(g)
        core_order_cases(g)
        core_masked_scatter_cases(g)
        yield "ops_pointwise_cases.json"
    finally:
        g.rng = saved


def inplace_view_cases(g):
    T, I, INTS = g.T, g.I, g.INTS
    shapes = [("mid1", [2, 1, 3], None, 0), ("all1", [1, 1], None, 0), ("scalar", [], None, 0),
              ("none1", [2, 3], None, 0), ("transposed", [3, 1, 4], [1, 12, 3], 0),
              ("offset", [1, 3, 1], [3, 1, 1], 2), ("empty", [0, 1, 2], None, 0),
              ("rank5", [1, 2, 1, 2, 1], None, 0)]
    for n, s, st, off in shapes:
        g.add_case(f"squeeze_/{n}", "squeeze_", [T(s, st, offset=off)])
        for dim in (0, 1, -1, 3):
            g.add_case(f"squeeze__dim/{n}/{dim}", "squeeze__dim", [T(s, st, offset=off), I(dim)])
        for dims in ([0], [0, -1], [], [1, 1], [5]):
            g.add_case(f"squeeze__dims/{n}/{dims}", "squeeze__dims", [T(s, st, offset=off), INTS(dims)])
        for dim in (0, -1, 2, 4, -5):
            g.add_case(f"unsqueeze_/{n}/{dim}", "unsqueeze_", [T(s, st, offset=off), I(dim)])
    for dt in ("int64", "bool"):
        g.add_case(f"squeeze__dim/{dt}", "squeeze__dim", [T([1, 3], dtype=dt), I(0)])
        g.add_case(f"unsqueeze_/{dt}", "unsqueeze_", [T([3], dtype=dt), I(0)])


def STR(v):
    return {"k": "str", "v": v}


def vals(dt, v, sizes=None):
    sizes = [len(v)] if sizes is None else sizes
    st, z = [0] * len(sizes), 1
    for d in reversed(range(len(sizes))):
        st[d] = z
        z *= max(sizes[d], 1)
    return {"k": "tensor", "dtype": dt, "sizes": sizes, "strides": st, "offset": 0,
            "storage": v, "dev": "auto"}


NUMS = [7, -7, 7, -7, 0, 5, 3, -1]
DENS = [2, 2, -2, -2, 3, -5, 3, -1]
FNUMS = [7.5, -7.5, 5.5, -5.25, 0.0, -0.0, 1.0, "inf"]
FDENS = [2.0, 2.0, -2.0, -0.5, 3.0, 3.0, 0.0, 3.0]


def div_mode_cases(g):
    T, I, D, B, NONE = g.T, g.I, g.D, g.B, g.NONE
    modes = [STR("trunc"), STR("floor"), NONE()]
    for m in modes:
        tag = m.get("v", "none")
        for dt in ("int64", "int32", "float32", "float64"):
            num, den = (NUMS, DENS) if dt.startswith("int") else (FNUMS, FDENS)
            g.add_case(f"div_Tensor_mode/{tag}/{dt}", "div_Tensor_mode", [vals(dt, num), vals(dt, den), m])
            g.add_case(f"div__Tensor_mode/{tag}/{dt}", "div__Tensor_mode", [vals(dt, num), vals(dt, den), m])
        for da, db in (("int64", "float32"), ("bool", "bool"), ("int32", "int64"), ("bool", "int64"),
                       ("float32", "float64")):
            g.add_case(f"div_Tensor_mode/{tag}/{da}_{db}", "div_Tensor_mode",
                       [T([2, 3], dtype=da), T([3], dtype=db), m])
        g.add_case(f"div_Tensor_mode/{tag}/int_zero", "div_Tensor_mode", [vals("int64", [1, 2]), vals("int64", [1, 0]), m])
        g.add_case(f"div_Tensor_mode/{tag}/transposed", "div_Tensor_mode", [T([3, 4], [1, 3]), T([4]), m])
        g.add_case(f"div_Tensor_mode/{tag}/mismatch", "div_Tensor_mode", [T([2, 3]), T([4]), m])
        g.add_case(f"div__Tensor_mode/{tag}/int_float", "div__Tensor_mode", [vals("int64", [7, -7]), vals("float32", [2.5, 2.0]), m])
        g.add_case(f"div__Tensor_mode/{tag}/bcast", "div__Tensor_mode", [T([2, 3]), T([3]), m])
        for num in (I(2), D(-2.5), I(-3)):
            for dt in ("int64", "float32"):
                g.add_case(f"div_Scalar_mode/{tag}/{num['v']}/{dt}", "div_Scalar_mode", [vals(dt, NUMS if dt == "int64" else FNUMS), num, m])
                g.add_case(f"div__Scalar_mode/{tag}/{num['v']}/{dt}", "div__Scalar_mode", [vals(dt, NUMS if dt == "int64" else FNUMS), num, m])
        g.add_case(f"div_Scalar_mode/{tag}/zero", "div_Scalar_mode", [vals("int64", [4, -4]), I(0), m])
        g.add_case(f"div_Scalar_mode/{tag}/bool", "div_Scalar_mode", [vals("bool", [1, 0]), B(True), m])
    for op in ("div_Tensor_mode", "div__Tensor_mode"):
        g.add_case(f"{op}/bad_mode", op, [T([3]), T([3]), STR("round")])
    for op in ("div_Scalar_mode", "div__Scalar_mode"):
        g.add_case(f"{op}/bad_mode", op, [T([3]), I(2), STR("round")])


def remainder_cases(g):
    T, I, D, B = g.T, g.I, g.D, g.B
    for dt in ("int64", "int32", "float32", "float64"):
        num, den = (NUMS, DENS) if dt.startswith("int") else (FNUMS, FDENS)
        g.add_case(f"remainder__Tensor/{dt}", "remainder__Tensor", [vals(dt, num), vals(dt, den)])
        for n in (I(3), I(-2), D(1.5), D(-0.5), B(True)):
            g.add_case(f"remainder_Scalar/{n['k']}_{n['v']}/{dt}", "remainder_Scalar", [vals(dt, num), n])
            g.add_case(f"remainder__Scalar/{n['k']}_{n['v']}/{dt}", "remainder__Scalar", [vals(dt, num), n])
            g.add_case(f"remainder_Scalar_Tensor/{n['k']}_{n['v']}/{dt}", "remainder_Scalar_Tensor", [n, vals(dt, den)])
    g.add_case("remainder__Tensor/int_float", "remainder__Tensor", [T([2, 3], dtype="int64"), T([3])])
    g.add_case("remainder__Tensor/bcast_other", "remainder__Tensor", [T([2, 3]), T([3])])
    g.add_case("remainder__Tensor/bcast_self", "remainder__Tensor", [T([3]), T([2, 3])], runs=("cpu",))
    g.add_case("remainder__Tensor/transposed", "remainder__Tensor", [T([3, 4], [1, 3]), T([3, 4])])
    g.add_case("remainder__Tensor/int_zero", "remainder__Tensor", [vals("int64", [3, 4]), vals("int64", [1, 0])])
    g.add_case("remainder_Scalar/int_zero", "remainder_Scalar", [vals("int64", [3, 4]), I(0)])
    g.add_case("remainder_Scalar/bool", "remainder_Scalar", [vals("bool", [1, 0]), B(True)])
    g.add_case("remainder__Tensor/bool", "remainder__Tensor", [vals("bool", [1, 0]), vals("bool", [1, 0])])
    g.add_case("remainder_Scalar/transposed", "remainder_Scalar", [T([3, 4], [1, 3]), D(1.5)])
    g.add_case("remainder_Scalar_Tensor/int_zero", "remainder_Scalar_Tensor", [I(3), vals("int64", [1, 0])])
    g.add_case("remainder_Scalar_Tensor/transposed", "remainder_Scalar_Tensor", [D(2.5), T([3, 4], [1, 3])])


def inplace_clamp_cases(g):
    T, I, D, NONE, STRs = g.T, g.I, g.D, g.NONE, STR
    for dt in ("float32", "int64", "bool", "float64"):
        for lo, hi in ((I(0), I(1)), (D(-0.5), D(0.5)), (NONE(), I(2)), (D(1.0), NONE()), (I(2), I(-1)), (NONE(), NONE())):
            g.add_case(f"clamp_/{dt}/{lo.get('v')}_{hi.get('v')}", "clamp_", [T([2, 3], dtype=dt, kind="small"), lo, hi])
        for n in (D(0.5), I(0)):
            g.add_case(f"clamp_min_/{dt}/{n['v']}", "clamp_min_", [T([2, 3], dtype=dt, kind="small"), n])
            g.add_case(f"clamp_max_/{dt}/{n['v']}", "clamp_max_", [T([2, 3], dtype=dt, kind="small"), n])
        g.add_case(f"hardtanh_/{dt}", "hardtanh_", [T([2, 3], dtype=dt, kind="small"), I(-1), I(1)])
        g.add_case(f"hardtanh_/{dt}/frac", "hardtanh_", [T([2, 3], dtype=dt, kind="small"), D(-1.5), D(2.5)])
        for a in ("none", "tanh"):
            g.add_case(f"gelu_/{a}/{dt}", "gelu_", [T([2, 3], dtype=dt, kind="small"), STRs(a)])
    for op, extra in (("clamp_", [D(-1.0), D(1.0)]), ("clamp_min_", [D(0.0)]), ("clamp_max_", [D(0.0)]),
                      ("hardtanh_", [D(-1.0), D(1.0)]), ("gelu_", [STRs("none")])):
        g.add_case(f"{op}/transposed", op, [T([3, 4], [1, 3], kind="small")] + extra)
        g.add_case(f"{op}/scalar", op, [T([], kind="small")] + extra)
        g.add_case(f"{op}/empty", op, [T([0, 3], kind="small")] + extra)
    g.add_case("clamp_/nan", "clamp_", [vals("float32", ["nan", 1.0, -2.0]), D(-1.0), D(0.5)])
    g.add_case("gelu_/bad_approx", "gelu_", [T([3]), STRs("foo")])


def clamp_tensor_cases(g):
    T, NONE = g.T, g.NONE
    for dt in ("float32", "int64", "bool"):
        for lo, hi in ((T([3], dtype=dt), T([2, 3], dtype=dt)), (NONE(), T([], dtype=dt)), (T([2, 3], dtype=dt), NONE()),
                       (NONE(), NONE())):
            tag = f"{'none' if lo['k'] == 'none' else lo['sizes']}_{'none' if hi['k'] == 'none' else hi['sizes']}"
            g.add_case(f"clamp_Tensor/{dt}/{tag}", "clamp_Tensor", [T([2, 3], dtype=dt, kind="small"), lo, hi])
            g.add_case(f"clamp__Tensor/{dt}/{tag}", "clamp__Tensor", [T([2, 3], dtype=dt, kind="small"), lo, hi])
        g.add_case(f"clamp_min_Tensor/{dt}", "clamp_min_Tensor", [T([2, 3], dtype=dt, kind="small"), T([3], dtype=dt)])
        g.add_case(f"clamp_max_Tensor/{dt}", "clamp_max_Tensor", [T([2, 3], dtype=dt, kind="small"), T([3], dtype=dt)])
    for da, db in (("int64", "float32"), ("float32", "float64"), ("int32", "int64")):
        g.add_case(f"clamp_Tensor/{da}_{db}", "clamp_Tensor", [T([2, 3], dtype=da), T([3], dtype=db), NONE()])
        g.add_case(f"clamp__Tensor/{da}_{db}", "clamp__Tensor", [T([2, 3], dtype=da), T([3], dtype=db), NONE()])
        g.add_case(f"clamp_min_Tensor/{da}_{db}", "clamp_min_Tensor", [T([2, 3], dtype=da), T([2, 3], dtype=db)])
        g.add_case(f"clamp_max_Tensor/{da}_{db}", "clamp_max_Tensor", [T([2, 3], dtype=da), T([], dtype=db)])
    g.add_case("clamp_Tensor/bcast_self", "clamp_Tensor", [T([3]), T([2, 1]), NONE()])
    g.add_case("clamp__Tensor/bcast_self", "clamp__Tensor", [T([3]), T([2, 1]), NONE()], runs=("cpu",))
    g.add_case("clamp_Tensor/mismatch", "clamp_Tensor", [T([2, 3]), T([4]), NONE()])
    g.add_case("clamp_Tensor/transposed", "clamp_Tensor", [T([3, 4], [1, 3]), T([3, 4], [1, 3]), T([3, 4], [1, 3])])
    g.add_case("clamp_Tensor/nan", "clamp_Tensor", [vals("float32", ["nan", 1.0, -2.0]), vals("float32", [0.0, "nan", 0.0]), NONE()])


def masked_fill_cases(g):
    T, I, D, B = g.T, g.I, g.D, g.B
    for dt in ("float32", "int64", "bool"):
        for vdt in ("float32", "int64", "bool"):
            g.add_case(f"masked_fill_Tensor/{dt}/{vdt}", "masked_fill_Tensor",
                       [T([2, 3], dtype=dt), T([2, 3], dtype="bool"), T([], dtype=vdt)])
            g.add_case(f"masked_fill__Tensor/{dt}/{vdt}", "masked_fill__Tensor",
                       [T([2, 3], dtype=dt), T([2, 3], dtype="bool"), T([], dtype=vdt)])
        for num in (I(2), D(2.5), B(True)):
            g.add_case(f"masked_fill__Scalar/{dt}/{num['k']}", "masked_fill__Scalar",
                       [T([2, 3], dtype=dt), T([2, 3], dtype="bool"), num])
    for op, val in (("masked_fill_Tensor", T([])), ("masked_fill__Tensor", T([])), ("masked_fill__Scalar", D(-1.0))):
        for name, sa, sta, sm in (("bcast_mask", [2, 3], None, [3]), ("bcast_self", [3], None, [2, 3]),
                                  ("transposed", [3, 4], [1, 3], [3, 4]), ("mismatch", [2, 3], None, [2, 4]),
                                  ("scalar_self", [], None, []), ("empty", [0, 3], None, [3])):
            runs = ("cpu",) if (name == "bcast_self" and op == "masked_fill__Tensor") else ("cpu", "meta")
            g.add_case(f"{op}/{name}", op, [T(sa, sta), T(sm, dtype="bool"), val], runs=runs)
        g.add_case(f"{op}/float_mask", op, [T([3]), T([3]), val])
    for op in ("masked_fill_Tensor", "masked_fill__Tensor"):
        g.add_case(f"{op}/value_1d", op, [T([2, 3]), T([2, 3], dtype="bool"), T([1])])
        g.add_case(f"{op}/value_2d", op, [T([2, 3]), T([2, 3], dtype="bool"), T([2, 3])])
        g.add_case(f"{op}/value_cpu_scalar", op, [T([2, 3], dev="meta"), T([2, 3], dtype="bool", dev="meta"),
                                                  T([], dev="cpu")], runs=("mixed",))


def index_put_cases(g):
    T, B, NONE = g.T, g.B, g.NONE

    def L(*ts):
        return {"k": "tensors", "v": list(ts)}

    def IDX(v, sizes=None, dtype="int64"):
        return vals(dtype, list(v), sizes)
    shapes = [("first", [4, 3], None, [IDX([0, 2])], [2, 3]), ("neg", [4, 3], None, [IDX([-1, 1])], [3]),
              ("second", [4, 3], None, [NONE(), IDX([2, 0])], [4, 1]),
              ("both", [4, 3], None, [IDX([0, 3]), IDX([1, 2])], []),
              ("bcast", [4, 3], None, [IDX([0, 2], [2, 1]), IDX([1, 0, 2])], [3]),
              ("apart", [2, 3, 4], None, [IDX([0, 1]), NONE(), IDX([3, 2])], [2, 3]),
              ("transposed", [4, 3], [1, 4], [IDX([1, 2])], [3]),
              ("mask", [2, 3], None, [IDX([1, 0, 1, 0, 0, 1], [2, 3], "bool")], []),
              ("mask_row", [2, 3], None, [IDX([0, 1], [2], "bool")], [3]),
              ("int32", [4, 3], None, [IDX([3, 1], dtype="int32")], [1, 3]),
              ("oob", [4, 3], None, [IDX([4])], []), ("bad_value", [4, 3], None, [IDX([0, 1])], [2]),
              ("float_index", [4, 3], None, [IDX([0.0], dtype="float32")], []),
              ("too_many", [3], None, [IDX([0]), IDX([0])], []),
              ("empty_index", [4, 3], None, [IDX([])], [3])]
    for name, s_, st, idx, vs in shapes:
        for op in ("index_put", "index_put_", "_index_put_impl_"):
            for acc in (False, True):
                extra = [B(acc)] + ([B(False)] if op == "_index_put_impl_" else [])
                g.add_case(f"{op}/{name}/{acc}", op, [T(s_, st), L(*idx), T(vs)] + extra)
    for op in ("index_put", "index_put_"):
        g.add_case(f"{op}/dup_accumulate", op, [T([4, 3]), L(IDX([0, 2, 0, 0])), T([4, 3]), B(True)])
        for dt in ("int64", "int32", "bool", "float64"):
            g.add_case(f"{op}/{dt}", op, [T([4, 3], dtype=dt), L(IDX([1, 3])), T([3], dtype=dt), B(True)])
        g.add_case(f"{op}/dtype_mismatch", op, [T([4, 3]), L(IDX([1])), T([3], dtype="int64"), B(False)])


def unary_float_cases(g):
    """A few cases each: the family's dtype rules are tested on sin/exp in ops_cases.json."""
    T = g.T
    for op in ("erf", "expm1", "log2", "log10", "tan", "sinh", "cosh", "asin", "acos", "atan", "asinh", "acosh",
               "atanh"):
        for dt in ("float32", "float64", "int64", "bool"):
            g.add_case(f"{op}/{dt}", op, [T([2, 3], dtype=dt, kind="small")])
        g.add_case(f"{op}/transposed", op, [T([3, 4], [1, 3], kind="small")])
        g.add_case(f"{op}/scalar", op, [T([], kind="small")])
        g.add_case(f"{op}/empty", op, [T([0, 3])])
        g.add_case(f"{op}/specials", op, [vals("float32", ["nan", "inf", "-inf", 0.5, -0.5, 1.0])])


FSPECIAL = ["nan", "inf", "-inf", -0.0, 0.0, 2.5, -2.5, 0.5, -1.5, 1.49, 7.75, -7.75]


def core_pointwise_cases(g):
    """The Core ATen pointwise ops added for issue 10: rounding, sign, fmod, atan2, isnan,
    isinf, elu, leaky_relu (each in place too where 2.13 has it). A few cases each."""
    T, I, D, B = g.T, g.I, g.D, g.B
    unary = ("floor", "ceil", "round", "trunc", "sign", "isnan", "isinf")
    for op in unary + ("floor_", "ceil_", "round_", "trunc_", "sign_"):
        for dt in ("float32", "float64", "int64", "int32", "bool"):
            g.add_case(f"{op}/{dt}", op, [T([2, 3], dtype=dt)])
        g.add_case(f"{op}/specials", op, [vals("float32", FSPECIAL)])
        g.add_case(f"{op}/transposed", op, [T([3, 4], [1, 3])])
        if not op.endswith("_"):
            g.add_case(f"{op}/nondense", op, [T([3, 4], [1, 6], offset=2)])
            g.add_case(f"{op}/expanded", op, [T([3, 4], [0, 1])])
        g.add_case(f"{op}/scalar", op, [T([])])
        g.add_case(f"{op}/empty", op, [T([0, 3])])
    for op in ("round_decimals", "round__decimals"):
        for d in (0, 1, 2, -1):
            g.add_case(f"{op}/{d}", op, [vals("float32", [x * 13.37 if isinstance(x, float) else x for x in FSPECIAL]), I(d)])
        g.add_case(f"{op}/f64", op, [T([2, 3], dtype="float64"), I(1)])
        g.add_case(f"{op}/int64", op, [T([2, 3], dtype="int64"), I(1)])
        g.add_case(f"{op}/bool", op, [T([2, 3], dtype="bool"), I(1)])
        g.add_case(f"{op}/transposed", op, [T([3, 4], [1, 3]), I(1)])
    for dt in ("int64", "int32", "float32", "float64"):
        num, den = (NUMS, DENS) if dt.startswith("int") else (FNUMS, FDENS)
        for op in ("fmod_Tensor", "fmod__Tensor", "atan2", "atan2_"):
            g.add_case(f"{op}/{dt}", op, [vals(dt, num), vals(dt, den)])
        for n in (I(3), I(-2), D(1.5), B(True)):
            g.add_case(f"fmod_Scalar/{n['k']}_{n['v']}/{dt}", "fmod_Scalar", [vals(dt, num), n])
            g.add_case(f"fmod__Scalar/{n['k']}_{n['v']}/{dt}", "fmod__Scalar", [vals(dt, num), n])
    for op in ("fmod_Tensor", "fmod__Tensor", "atan2", "atan2_"):
        g.add_case(f"{op}/int_float", op, [T([2, 3], dtype="int64"), T([3])])
        g.add_case(f"{op}/float_int", op, [T([2, 3]), T([3], dtype="int64")])
        g.add_case(f"{op}/bool", op, [T([2, 3], dtype="bool"), T([3], dtype="bool")])
        g.add_case(f"{op}/bcast_self", op, [T([3]), T([2, 3])], runs=("cpu",) if op.endswith("_") else ("cpu", "meta"))
        g.add_case(f"{op}/transposed", op, [T([3, 4], [1, 3]), T([3, 4])])
        g.add_case(f"{op}/mismatch", op, [T([2, 3]), T([4])])
    for op in ("fmod_Tensor", "fmod__Tensor"):
        g.add_case(f"{op}/int_zero", op, [vals("int64", [3, 4]), vals("int64", [1, 0])])
    g.add_case("fmod_Scalar/int_zero", "fmod_Scalar", [vals("int64", [3, 4]), I(0)])
    for op in ("elu", "elu_"):
        for dt in ("float32", "float64", "int64", "bool"):
            g.add_case(f"{op}/{dt}", op, [T([2, 3], dtype=dt)])
        for args in ([D(1.5)], [D(1.0), D(2.0), D(0.5)], [I(2), I(1), I(1)], [I(1), I(1), B(True)]):
            g.add_case(f"{op}/{[a['v'] for a in args]}", op, [T([2, 3])] + args)
        g.add_case(f"{op}/int_args", op, [T([2, 3], dtype="int64"), I(1), I(2), I(1)])
        g.add_case(f"{op}/transposed", op, [T([3, 4], [1, 3])])
        g.add_case(f"{op}/scalar", op, [T([])])
    for op in ("leaky_relu", "leaky_relu_"):
        for dt in ("float32", "float64", "int64", "bool"):
            g.add_case(f"{op}/{dt}", op, [T([2, 3], dtype=dt)])
        for sl in (D(0.2), I(0), D(-1.5), B(True)):
            g.add_case(f"{op}/{sl['k']}_{sl['v']}", op, [T([2, 3])] + [sl])
        g.add_case(f"{op}/int_int", op, [T([2, 3], dtype="int64"), I(0)])
        g.add_case(f"{op}/transposed", op, [T([3, 4], [1, 3])])
        g.add_case(f"{op}/empty", op, [T([0, 3])])


def distinct(dt, sizes, strides=None, offset=0):
    """A tensor whose elements are distinct (sort and topk order ties differently from
    PyTorch's unstable CPU sort), a random permutation of small values."""
    n = 1
    for x in sizes:
        n *= x
    st = [0] * len(sizes)
    if strides is None:
        z = 1
        for d in reversed(range(len(sizes))):
            st[d] = z
            z *= max(sizes[d], 1)
    else:
        st = list(strides)
    span = offset + (1 + sum((a - 1) * b for a, b in zip(sizes, st)) if n else 0)
    v = list(range(span))
    random.Random(span * 7 + len(sizes)).shuffle(v)
    if dt.startswith("float"):
        v = [x / 4.0 - span / 8.0 for x in v]
    return {"k": "tensor", "dtype": dt, "sizes": list(sizes), "strides": st, "offset": offset,
            "storage": v, "dev": "auto"}


def core_order_cases(g):
    """flip, repeat, diagonal, cumsum, any.dims, var.dim, sort (both overloads), topk."""
    T, I, B, NONE, INTS = g.T, g.I, g.B, g.NONE, g.INTS
    layouts = [l for l in LAYOUTS if l[0] in ("contig", "transposed", "nondense_offset", "scalar")]
    for n, s_, st, off in layouts + [("rank3", [2, 3, 4], None, 0)]:
        for dims in ([0], [0, 1], [0, 0], [2]):
            g.add_case(f"flip/{n}/{dims}", "flip", [T(s_, st, offset=off), INTS(dims)])
        for reps in ([2, 1], [1, 2, 3], [2], [0, 2]):
            g.add_case(f"repeat/{n}/{reps}", "repeat", [T(s_, st, offset=off), INTS(reps)])
        for off_, d1, d2 in ((1, 0, 1), (-1, 0, 1), (5, 0, 1), (0, 0, 0), (0, -1, 0), (0, 0, 2)):
            g.add_case(f"diagonal/{n}/{off_}_{d1}_{d2}", "diagonal", [T(s_, st, offset=off), I(off_), I(d1), I(d2)])
        for dim in (0, -1, 2):
            g.add_case(f"cumsum/{n}/{dim}", "cumsum", [T(s_, st, offset=off), I(dim), NONE()])
        for dims, kd in ((NONE(), False), (NONE(), True), (INTS([0, -1]), False), (INTS([0]), True), (INTS([]), False),
                         (INTS([1, 1]), False)):
            g.add_case(f"any_dims/{n}/{dims.get('v')}/{kd}", "any_dims", [T(s_, st, offset=off), dims, B(kd)])
        for dims in (NONE(), INTS([-1, 0])):
            g.add_case(f"var_dim/{n}/{dims.get('v')}", "var_dim", [T(s_, st, offset=off), dims, B(True), B(False)])
        for dim, desc in ((0, False), (-1, True), (3, False)):
            g.add_case(f"sort/{n}/{dim}/{desc}", "sort", [distinct("float32", s_, st, off), I(dim), B(desc)])
            g.add_case(f"sort_stable/{n}/{dim}/{desc}", "sort_stable",
                       [T(s_, st, offset=off, kind="small"), B(True), I(dim), B(desc)])
        for k, dim, largest in ((1, 0, True), (2, -1, False), (0, 0, True), (5, 0, True), (-1, 0, True), (1, 3, True)):
            g.add_case(f"topk/{n}/{k}_{dim}/{largest}", "topk",
                       [distinct("float32", s_, st, off), I(k), I(dim), B(largest), B(True)])
    for dt in ("int64", "int32", "bool", "float64"):
        g.add_case(f"flip/{dt}", "flip", [T([2, 3], dtype=dt), INTS([1])])
        g.add_case(f"repeat/{dt}", "repeat", [T([2, 3], dtype=dt), INTS([2, 2])])
        g.add_case(f"cumsum/{dt}", "cumsum", [T([2, 3], dtype=dt), I(1), NONE()])
        g.add_case(f"any_dims/{dt}", "any_dims", [T([2, 3], dtype=dt), INTS([0]), B(False)])
        g.add_case(f"any_dims/{dt}/empty_list", "any_dims", [T([3, 2], [1, 3], dtype=dt), INTS([]), B(False)])
        g.add_case(f"sort_stable/{dt}", "sort_stable", [T([2, 5], dtype=dt), NONE(), I(1), B(False)])
        g.add_case(f"sort_stable/{dt}/desc", "sort_stable", [T([2, 5], dtype=dt), B(True), I(1), B(True)])
        g.add_case(f"topk/{dt}", "topk", [distinct(dt, [2, 5]) if dt != "bool" else T([2, 5], dtype=dt),
                                          I(2), I(1), B(True), B(True)])
    for dt in ("float32", "int32", "bool", "float64"):
        g.add_case(f"cumsum/to_{dt}", "cumsum", [T([2, 3], dtype="int64"), I(1), g.DT(dt)])
    g.add_case("cumsum/precision", "cumsum", [vals("float32", [1e8, 1.0, -1e8, 0.5, 3.25, 1e-3])  , I(0), NONE()])
    g.add_case("sort_stable/nan", "sort_stable", [vals("float32", [3.0, "nan", 1.0, 3.0, -0.0, 0.0, "-inf", "inf"]), B(True), I(0), B(False)])
    g.add_case("sort_stable/nan_desc", "sort_stable", [vals("float32", [3.0, "nan", 1.0, 3.0, -0.0, 0.0, "-inf", "inf"]), B(True), I(0), B(True)])
    g.add_case("topk/nan", "topk", [vals("float32", [3.0, "nan", 1.0, 2.0, "-inf", "inf"]), I(3), I(0), B(True), B(True)])
    g.add_case("topk/nan_smallest", "topk", [vals("float32", [3.0, "nan", 1.0, 2.0, "-inf", "inf"]), I(3), I(0), B(False), B(True)])
    g.add_case("var_dim/biased_keepdim", "var_dim", [T([3, 4]), INTS([1]), B(False), B(True)])
    g.add_case("var_dim/int", "var_dim", [T([3, 4], dtype="int64"), INTS([1]), B(True), B(False)])
    # randperm's values are the seeded streams of tools/interop/gen_random.py; here its dtype,
    # size and error rules
    for n, dt in ((5, "int64"), (0, "int64"), (-1, "int64"), (4, "float32"), (3, "int32"), (6, "bool")):
        g.add_case(f"randperm/{n}/{dt}", "randperm", [I(n), g.DT(dt), NONE(), g.DEV(), NONE()], nondeterministic=True)
    g.add_case("randperm/no_dtype", "randperm", [I(3), NONE(), NONE(), g.DEV(), NONE()], nondeterministic=True)


def BOOLS(v, sizes=None):
    return vals("bool", [1 if x else 0 for x in v], sizes)


def core_masked_scatter_cases(g):
    """masked_scatter and masked_scatter_: broadcasting, layouts, dtypes and the checks."""
    T = g.T
    src = vals("float32", [10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0])
    m23 = BOOLS([1, 0, 1, 1, 0, 1], [2, 3])
    for op in ("masked_scatter", "masked_scatter_"):
        g.add_case(f"{op}/basic", op, [T([2, 3]), m23, src])
        g.add_case(f"{op}/mask_row", op, [T([2, 3]), BOOLS([1, 0, 1], [3]), src])
        g.add_case(f"{op}/transposed", op, [T([3, 2], [1, 3]), BOOLS([1, 0, 1, 1, 0, 1], [3, 2]), src])
        g.add_case(f"{op}/source_2d", op, [T([2, 3]), m23, T([2, 4])])
        g.add_case(f"{op}/short_source", op, [T([2, 3]), m23, vals("float32", [1.0, 2.0])])
        g.add_case(f"{op}/dtype_mismatch", op, [T([2, 3]), m23, T([6], dtype="int64")])
        g.add_case(f"{op}/int_mask", op, [T([2, 3]), T([2, 3], dtype="int64"), src])
        g.add_case(f"{op}/bad_mask_shape", op, [T([2, 3]), BOOLS([1, 0], [2]), src])
        g.add_case(f"{op}/scalar", op, [T([]), BOOLS([1], []), src])
        g.add_case(f"{op}/empty", op, [T([0, 3]), BOOLS([1, 0, 1], [3]), src])
        for dt in ("int64", "bool", "float64"):
            g.add_case(f"{op}/{dt}", op, [T([2, 3], dtype=dt), m23, T([6], dtype=dt)])
    g.add_case("masked_scatter/bcast_self", "masked_scatter", [T([3]), m23, src])
    g.add_case("masked_scatter/bcast_mismatch", "masked_scatter", [T([2, 3]), BOOLS([1, 0, 1], [3, 1]), src])
    g.add_case("masked_scatter_/bcast_self", "masked_scatter_", [T([3]), m23, src], runs=("cpu",))
