"""Cases of the random sampling ops (uniform_, normal_, exponential_, log_normal_, cauchy_,
geometric_, random_ and their functional forms, bernoulli, normal's four overloads,
multinomial), for tools/interop/gen_ops.py (which imports this file and writes what it adds to
tests/data/ops_random_cases.json, in ops_cases.json's format).

A case that passes a generator (GEN(seed): a fresh torch.Generator().manual_seed(seed)) draws
a reproducible stream, so its CPU values are recorded and cfx must reproduce them bit for bit;
a case drawing from the default generator records metadata and errors only. They draw their
inputs from a random generator of their own, so adding them leaves every older case unchanged.
"""
import random

from ops_pointwise_cases import LAYOUTS  # the same six layouts

FLOATS = ("float32", "float64")
SAMPLERS = {  # in-place op -> (functional op, its float arguments)
    "uniform_": ("uniform", [-1.5, 2.25]),
    "normal_": ("normal_functional", [0.5, 2.0]),
    "exponential_": ("exponential", [1.5]),
    "log_normal_": ("log_normal", [0.25, 0.5]),
    "cauchy_": ("cauchy", [0.5, 2.0]),
    "geometric_": ("geometric", [0.3]),
}
BAD = {  # in-place op -> bad float arguments (each a separate case)
    "uniform_": [[2.0, 1.0], [-1e300, 1.0], [-3e38, 3e38]],
    "normal_": [[0.0, -1.0]],
    "exponential_": [[-1.0], [0.0]],
    "log_normal_": [[0.0, 0.0]],
    "cauchy_": [[0.0, 0.0]],
    "geometric_": [[1.0], [0.0]],
}


def add_all(g):
    """Adds the cases, yielding the file they go to (gen_ops.py writes and drops them)."""
    saved, g.rng = g.rng, random.Random(2613)
    try:
        sampler_cases(g)
        random_int_cases(g)
        bernoulli_cases(g)
        normal_cases(g)
        multinomial_cases(g)
        yield "ops_random_cases.json"
    finally:
        g.rng = saved


def probs(g, t, lo=0.0, hi=1.0):
    """t with its storage replaced by probabilities in [lo, hi] (quarters)."""
    t["storage"] = [g.rng.randint(int(lo * 4), int(hi * 4)) / 4.0 for _ in t["storage"]]
    return t


def sampler_cases(g):
    T, D, GEN, NONE = g.T, g.D, g.GEN, g.NONE
    for op, (fop, fargs) in SAMPLERS.items():
        fa = [D(v) for v in fargs]
        for dt in FLOATS:
            for size in ([2, 3], [20], [37]):  # 16 or more: normal's vectorised fill
                g.add_case(f"{op}/{dt}/{size}", op, [T(size, dtype=dt)] + fa + [GEN(7)])
                g.add_case(f"{fop}/{dt}/{size}", fop, [T(size, dtype=dt)] + fa + [GEN(7)])
        for name, s, st, off in LAYOUTS:
            g.add_case(f"{op}/{name}", op, [T(s, st, offset=off)] + fa + [GEN(3)])
            g.add_case(f"{fop}/{name}", fop, [T(s, st, offset=off)] + fa + [GEN(3)])
        g.add_case(f"{op}/default_generator", op, [T([4, 5])] + fa + [NONE()], nondeterministic=True)
        g.add_case(f"{fop}/default_generator", fop, [T([4, 5])] + fa + [NONE()], nondeterministic=True)
        g.add_case(f"{op}/transposed_20", op, [T([4, 5], [1, 4])] + fa + [GEN(1)])
        for dt in ("int64", "int32", "bool"):
            g.add_case(f"{op}/{dt}", op, [T([2, 3], dtype=dt)] + fa + [GEN(5)])
            g.add_case(f"{fop}/{dt}", fop, [T([2, 3], dtype=dt)] + fa + [GEN(5)])
        for bad in BAD[op]:
            g.add_case(f"{op}/bad/{bad}", op, [T([2, 3])] + [D(v) for v in bad] + [NONE()], nondeterministic=True)
            g.add_case(f"{fop}/bad/{bad}", fop, [T([2, 3])] + [D(v) for v in bad] + [NONE()], nondeterministic=True)
    # the schema defaults, through the C macros' defaults
    g.add_case("uniform_/defaults", "uniform_", [T([5]), D(0.0), D(1.0), GEN(2)])
    g.add_case("normal_/float64_nondense", "normal_", [T([3, 8], [1, 6], dtype="float64", offset=1), D(-1.0),
                                                      D(0.5), GEN(9)])


def random_int_cases(g):
    I, GEN, NONE = g.I, g.GEN, g.NONE

    def T(size, strides=None, dtype="float32", offset=0):
        t = g.T(size, strides, dtype=dtype, offset=offset)
        t["storage"] = [0] * len(t["storage"])  # overwritten: any value fits every dtype
        return t
    dts = ("float32", "float64", "int64", "int32", "uint8", "bool")
    for dt in dts:
        g.add_case(f"random_/{dt}", "random_", [T([2, 5], dtype=dt), GEN(4)])
        g.add_case(f"random/{dt}", "random", [T([2, 5], dtype=dt), GEN(4)])
        g.add_case(f"random__to/{dt}", "random__to", [T([2, 5], dtype=dt), I(2 if dt == "bool" else 100), GEN(4)])
        g.add_case(f"random_to/{dt}", "random_to", [T([2, 5], dtype=dt), I(2 if dt == "bool" else 100), GEN(4)])
        g.add_case(f"random__from/{dt}", "random__from",
                   [T([2, 5], dtype=dt), I(0 if dt == "bool" else -3), I(2 if dt == "bool" else 7), GEN(4)])
        g.add_case(f"random_from/{dt}", "random_from",
                   [T([2, 5], dtype=dt), I(0 if dt == "bool" else -3), I(2 if dt == "bool" else 7), GEN(4)])
        g.add_case(f"random__from/{dt}/to_none", "random__from", [T([2, 5], dtype=dt), I(0), NONE(), GEN(4)])
        g.add_case(f"random__from/{dt}/full", "random__from", [T([3], dtype=dt), I(-2**63), NONE(), GEN(4)])
        g.add_case(f"random__from/{dt}/too_big", "random__from", [T([3], dtype=dt), I(0), I(1000), GEN(4)])
    for name, s, st, off in LAYOUTS:
        g.add_case(f"random_/{name}", "random_", [T(s, st, offset=off, dtype="int64"), GEN(3)])
        g.add_case(f"random__to/{name}", "random__to", [T(s, st, offset=off), I(10), GEN(3)])
        g.add_case(f"random__from/{name}", "random__from", [T(s, st, offset=off), I(-4), I(4), GEN(3)])
        g.add_case(f"random/{name}", "random", [T(s, st, offset=off), GEN(3)])
        g.add_case(f"random_to/{name}", "random_to", [T(s, st, offset=off), I(10), GEN(3)])
        g.add_case(f"random_from/{name}", "random_from", [T(s, st, offset=off), I(-4), I(4), GEN(3)])
    wide = [T([4], dtype="int64"), I(-2**40), I(2**40), GEN(6)]
    g.add_case("random__from/wide", "random__from", wide)
    g.add_case("random__from/float_wide", "random__from", [T([4]), I(-2**30), I(2**30), GEN(6)])
    g.add_case("random__from/float_huge_from", "random__from", [T([4]), I(2**60), NONE(), GEN(6)])
    g.add_case("random__from/empty_range", "random__from", [T([4], dtype="int64"), I(5), I(2), GEN(6)])
    g.add_case("random__to/zero", "random__to", [T([4], dtype="int64"), I(0), GEN(6)])
    g.add_case("random_from/empty_range", "random_from", [T([4], dtype="int64"), I(5), I(5), GEN(6)])
    # randint draws as random_ does: 64 bits from a range of 2^28 up (2.13), for every dtype
    opts = [g.NONE(), g.DEV(), g.NONE()]
    for lo, hi in ((0, 2**28 - 1), (0, 2**28), (-2**30, 2**30)):
        for dt in ("int64", "int32"):
            g.add_case(f"randint_low_generator/{hi - lo}/{dt}", "randint_low_generator",
                       [I(lo), I(hi), g.INTS([3]), GEN(4), g.DT(dt)] + opts)
    g.add_case("random_/default_generator", "random_", [T([4], dtype="int64"), NONE()], nondeterministic=True)


def bernoulli_cases(g):
    T, D, GEN, NONE = g.T, g.D, g.GEN, g.NONE
    for dt in FLOATS:
        g.add_case(f"bernoulli/{dt}", "bernoulli", [probs(g, T([4, 5], dtype=dt)), GEN(8)])
        g.add_case(f"bernoulli_p/{dt}", "bernoulli_p", [T([4, 5], dtype=dt), D(0.3), GEN(8)])
        g.add_case(f"bernoulli__Tensor/{dt}", "bernoulli__Tensor",
                   [T([4, 5]), probs(g, T([4, 5], dtype=dt)), GEN(8)])
    for name, s, st, off in LAYOUTS:
        g.add_case(f"bernoulli/{name}", "bernoulli", [probs(g, T(s, st, offset=off)), GEN(2)])
        g.add_case(f"bernoulli_p/{name}", "bernoulli_p", [T(s, st, offset=off), D(0.5), GEN(2)])
        g.add_case(f"bernoulli__Tensor/{name}", "bernoulli__Tensor",
                   [T(s, st, offset=off), probs(g, T(s[-1:])), GEN(2)])
    g.add_case("bernoulli__Tensor/not_expandable", "bernoulli__Tensor", [T([3, 4]), probs(g, T([3])), GEN(2)])
    for dt in ("int64", "bool"):
        g.add_case(f"bernoulli_p/{dt}", "bernoulli_p", [T([2, 3], dtype=dt), D(0.5), GEN(1)])
        g.add_case(f"bernoulli__Tensor/{dt}_self", "bernoulli__Tensor",
                   [T([2, 3], dtype=dt), probs(g, T([2, 3])), GEN(1)])
    g.add_case("bernoulli/int64", "bernoulli", [T([2, 3], dtype="int64"), GEN(1)])
    g.add_case("bernoulli/out_of_range", "bernoulli", [T([2, 3]), GEN(1)])
    g.add_case("bernoulli_p/bad_p", "bernoulli_p", [T([2, 3]), D(1.5), GEN(1)])
    g.add_case("bernoulli__Tensor/int_p", "bernoulli__Tensor", [T([2, 3]), T([2, 3], dtype="int64"), GEN(1)])
    g.add_case("bernoulli__Tensor/bad_shape", "bernoulli__Tensor", [T([3]), probs(g, T([2, 3])), GEN(1)])
    g.add_case("bernoulli/default_generator", "bernoulli", [probs(g, T([2, 3])), NONE()], nondeterministic=True)
    g.add_case("bernoulli_p/default_generator", "bernoulli_p", [T([2, 3]), D(0.5), NONE()], nondeterministic=True)


def normal_cases(g):
    T, D, I, GEN, NONE, INTS, DT, DEV = g.T, g.D, g.I, g.GEN, g.NONE, g.INTS, g.DT, g.DEV
    for dt in FLOATS:
        for size in ([2, 3], [20]):
            g.add_case(f"normal_Tensor_float/{dt}/{size}", "normal_Tensor_float", [T(size, dtype=dt), D(2.0), GEN(5)])
            g.add_case(f"normal_float_Tensor/{dt}/{size}", "normal_float_Tensor",
                       [D(-1.0), probs(g, T(size, dtype=dt), 0, 2), GEN(5)])
            g.add_case(f"normal_Tensor_Tensor/{dt}/{size}", "normal_Tensor_Tensor",
                       [T(size, dtype=dt), probs(g, T(size, dtype=dt), 0, 2), GEN(5)])
            g.add_case(f"normal_float_float/{dt}/{size}", "normal_float_float",
                       [D(0.5), D(1.5), INTS(size), GEN(5), DT(dt), NONE(), DEV(), NONE()])
    for name, s, st, off in LAYOUTS:
        g.add_case(f"normal_Tensor_float/{name}", "normal_Tensor_float", [T(s, st, offset=off), D(1.0), GEN(6)])
        g.add_case(f"normal_float_Tensor/{name}", "normal_float_Tensor",
                   [D(0.5), probs(g, T(s, st, offset=off)), GEN(6)])
        g.add_case(f"normal_Tensor_Tensor/{name}", "normal_Tensor_Tensor",
                   [T(s, st, offset=off), probs(g, T(s, st, offset=off)), GEN(6)])
    g.add_case("normal_Tensor_Tensor/broadcast", "normal_Tensor_Tensor", [T([2, 1]), probs(g, T([3])), GEN(6)])
    g.add_case("normal_Tensor_Tensor/mismatch", "normal_Tensor_Tensor", [T([3]), probs(g, T([2])), GEN(6)])
    g.add_case("normal_Tensor_Tensor/int_mean", "normal_Tensor_Tensor", [T([3], dtype="int64"), probs(g, T([3])),
                                                                         GEN(6)])
    g.add_case("normal_Tensor_float/bad_std", "normal_Tensor_float", [T([3]), D(-1.0), GEN(6)])
    g.add_case("normal_Tensor_float/int_mean", "normal_Tensor_float", [T([3], dtype="int64"), D(1.0), GEN(6)])
    g.add_case("normal_float_Tensor/bad_std", "normal_float_Tensor", [D(0.0), T([3], kind="small"), GEN(6)])
    g.add_case("normal_float_float/no_dtype", "normal_float_float",
               [D(0.0), D(1.0), INTS([3]), GEN(2), NONE(), NONE(), NONE(), NONE()])
    g.add_case("normal_float_float/bad_std", "normal_float_float",
               [D(0.0), D(-1.0), INTS([3]), GEN(2), NONE(), NONE(), DEV(), NONE()])
    g.add_case("normal_float_float/int64", "normal_float_float",
               [D(0.0), D(1.0), INTS([3]), GEN(2), DT("int64"), NONE(), DEV(), NONE()])
    g.add_case("normal_float_float/default_generator", "normal_float_float",
               [D(0.0), D(1.0), INTS([2, 3]), NONE(), NONE(), NONE(), DEV(), NONE()], nondeterministic=True)


def multinomial_cases(g):
    T, I, B, GEN, NONE = g.T, g.I, g.B, g.GEN, g.NONE
    for dt in FLOATS:
        for repl in (False, True):
            g.add_case(f"multinomial/{dt}/1d/{repl}", "multinomial", [probs(g, T([6], dtype=dt), 0.25), I(4), B(repl),
                                                                       GEN(3)])
            g.add_case(f"multinomial/{dt}/2d/{repl}", "multinomial", [probs(g, T([3, 5], dtype=dt), 0.25), I(3),
                                                                       B(repl), GEN(3)])
    g.add_case("multinomial/with_zeros", "multinomial", [probs(g, T([8])), I(3), B(False), GEN(5)])
    g.add_case("multinomial/one_sample", "multinomial", [probs(g, T([2, 7]), 0.25), I(1), B(False), GEN(5)])
    g.add_case("multinomial/many_with_replacement", "multinomial", [probs(g, T([4]), 0.25), I(40), B(True), GEN(5)])
    g.add_case("multinomial/transposed", "multinomial", [probs(g, T([5, 3], [1, 5]), 0.25), I(2), B(False), GEN(5)])
    g.add_case("multinomial/too_many", "multinomial", [probs(g, T([3]), 0.25), I(4), B(False), GEN(5)])
    g.add_case("multinomial/3d", "multinomial", [probs(g, T([2, 2, 2]), 0.25), I(1), B(False), GEN(5)])
    g.add_case("multinomial/scalar", "multinomial", [probs(g, T([]), 0.25), I(1), B(False), GEN(5)])
    g.add_case("multinomial/int", "multinomial", [T([3], dtype="int64"), I(1), B(False), GEN(5)])
    g.add_case("multinomial/negative", "multinomial", [T([3], kind="small"), I(1), B(False), GEN(5)])
    g.add_case("multinomial/zero_sum", "multinomial", [probs(g, T([3]), 0, 0), I(1), B(False), GEN(5)])
    g.add_case("multinomial/zero_samples", "multinomial", [probs(g, T([3]), 0.25), I(0), B(False), GEN(5)])
    g.add_case("multinomial/default_generator", "multinomial", [probs(g, T([5]), 0.25), I(2), B(False), NONE()],
               nondeterministic=True)
