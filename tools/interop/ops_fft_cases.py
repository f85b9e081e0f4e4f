"""Cases of the FFT operators (_fft_r2c, _fft_c2r, _fft_c2c, the fft_fft/ifft/rfft/irfft
front-ends) and of the complex dtypes
(view_as_real, view_as_complex, real, imag, complex arithmetic and conversions) for
tools/interop/gen_ops.py,
which imports this file and writes what it adds to tests/data/ops_fft_cases.json
(ops_cases.json's format; complex storage and values are listed as real, imaginary pairs).
A generator of its own (seed 2222) leaves every older case unchanged. The cases cover
power-of-two and other lengths (the radix-2 and Bluestein paths), every normalization,
onesided and two-sided r2c, several dims, permuted and strided inputs (the output strides
follow _exec_fft's rule) and the dtype errors, whose texts differ between the C++ kernel
(cpu) and the Python meta function (meta)."""
import random


def add_all(g):
    """Adds the cases, yielding the file they go to (gen_ops.py writes and drops them)."""
    saved, g.rng = g.rng, random.Random(2222)
    try:
        fft_cases(g)
        complex_cases(g)
        frontend_cases(g)
        complex_math_cases(g)
        yield "ops_fft_cases.json"
    finally:
        g.rng = saved


def fft_cases(g):
    T, I, B, INTS = g.T, g.I, g.B, g.INTS

    def add(name, op, args):
        dt = next((a["dtype"] for a in args if a.get("k") == "tensor"), "float32")
        wide = dt in ("float64", "complex128")
        g.add_case(name, op, args, tol=[1e-9, 1e-9] if wide else [2e-5, 1e-5])

    perm = g.perm_strides([3, 4, 5], [2, 0, 1])
    # (name, sizes, strides, offset, dims)
    layouts = [("n8", [8], None, 0, [0]), ("n5", [5], None, 0, [0]), ("n12", [12], None, 0, [0]),
               ("n1", [1], None, 0, [0]), ("n64", [64], None, 0, [0]), ("n100", [100], None, 0, [0]),
               ("rows", [3, 4], None, 0, [1]), ("cols", [3, 4], None, 0, [0]), ("both", [3, 4], None, 0, [0, 1]),
               ("both_rev", [3, 4], None, 0, [1, 0]), ("permuted", [3, 4, 5], perm, 0, [0, 2]),
               ("permuted_mid", [3, 4, 5], perm, 0, [1]), ("strided", [3, 4], [10, 2], 1, [1]),
               ("rank3_all", [2, 3, 4], None, 0, [0, 1, 2])]
    for name, sizes, strides, off, dims in layouts:
        for dt in ("float32", "float64"):
            add(f"_fft_r2c/{name}/{dt}", "_fft_r2c", [T(sizes, strides, dt, off), INTS(dims), I(0), B(True)])
        add(f"_fft_r2c/{name}/twosided", "_fft_r2c", [T(sizes, strides, "float32", off), INTS(dims), I(0), B(False)])
        cdt = "complex64" if name not in ("n100", "both") else "complex128"
        add(f"_fft_c2c/{name}/{cdt}/fwd", "_fft_c2c", [T(sizes, strides, cdt, off), INTS(dims), I(0), B(True)])
        add(f"_fft_c2c/{name}/{cdt}/bwd", "_fft_c2c", [T(sizes, strides, cdt, off), INTS(dims), I(2), B(False)])
    for norm in (0, 1, 2):
        add(f"_fft_r2c/norm{norm}", "_fft_r2c", [T([3, 6]), INTS([0, 1]), I(norm), B(True)])
        add(f"_fft_c2c/norm{norm}", "_fft_c2c", [T([3, 6], dtype="complex64"), INTS([1]), I(norm), B(True)])
        add(f"_fft_c2r/norm{norm}", "_fft_c2r", [T([3, 4], dtype="complex64"), INTS([0, 1]), I(norm), I(6)])
    add("_fft_c2c/no_dims", "_fft_c2c", [T([3, 4], [1, 3], "complex64"), INTS([]), I(0), B(True)])
    # c2r: last_dim_size even and odd, several dims, layouts
    for name, sizes, strides, dims, last in [("even", [5], None, [0], 8), ("odd", [5], None, [0], 9),
                                             ("rows", [3, 5], None, [1], 8), ("cols", [5, 3], None, [0], 9),
                                             ("both", [4, 5], None, [0, 1], 8), ("both_rev", [4, 5], None, [1, 0], 7),
                                             ("permuted", [3, 4, 5], perm, [0, 2], 8), ("n1", [1], None, [0], 1),
                                             ("full", [6], None, [0], 6), ("n51", [26], None, [0], 51),
                                             ("rank3", [2, 3, 4], None, [0, 1, 2], 6)]:
        for dt in ("complex64", "complex128"):
            add(f"_fft_c2r/{name}/{dt}", "_fft_c2r", [T(sizes, strides, dt), INTS(dims), I(0), I(last)])
    # errors: the dtype (texts differ between the C++ kernel and the meta function), empty signals
    add("_fft_r2c/int64_error", "_fft_r2c", [T([4], dtype="int64"), INTS([0]), I(0), B(True)])
    add("_fft_r2c/complex_error", "_fft_r2c", [T([4], dtype="complex64"), INTS([0]), I(0), B(True)])
    add("_fft_c2c/real_error", "_fft_c2c", [T([4]), INTS([0]), I(0), B(True)])
    add("_fft_c2r/real_error", "_fft_c2r", [T([4]), INTS([0]), I(0), I(6)])
    add("_fft_r2c/empty_signal", "_fft_r2c", [T([3, 0]), INTS([1]), I(0), B(True)])
    add("_fft_c2r/negative_size", "_fft_c2r", [T([3, 4], dtype="complex64"), INTS([1]), I(0), I(-2)])


def complex_cases(g):
    T, I, B, D, NONE, DT = g.T, g.I, g.B, g.D, g.NONE, g.DT

    def add(name, op, args):
        g.add_case(name, op, args, tol=[1e-6, 1e-6])

    for dt in ("complex64", "complex128"):
        add(f"view_as_real/{dt}", "view_as_real", [T([2, 3], dtype=dt)])
        add(f"view_as_real/sliced/{dt}", "view_as_real", [T([2, 2], [3, 1], dt, offset=1)])
        add(f"view_as_real/0dim/{dt}", "view_as_real", [T([], dtype=dt)])
        add(f"real/{dt}", "real", [T([2, 3], [1, 2], dt)])
        add(f"imag/{dt}", "imag", [T([3], dtype=dt)])
        add(f"neg/{dt}", "neg", [T([2, 3], dtype=dt)])
        for other in ("float32", "float64", "int64", "bool", dt):
            for op in ("add_Tensor", "sub_Tensor", "mul_Tensor", "div_Tensor"):
                extra = [I(2)] if op in ("add_Tensor", "sub_Tensor") else []
                add(f"{op}/{dt}_{other}", op, [T([2, 3], dtype=dt), T([3], dtype=other)] + extra)
        add(f"add_Tensor/{dt}_alpha_float", "add_Tensor", [T([3], dtype=dt), T([3], dtype=dt), D(0.5)])
        add(f"mul_Tensor/{dt}_0dim_float64", "mul_Tensor", [T([3], dtype=dt), T([], dtype="float64")])
        add(f"mul_Tensor/float32_0dim_{dt}", "mul_Tensor", [T([3]), T([], dtype=dt)])
        add(f"add__Tensor/float32_{dt}_error", "add__Tensor", [T([3]), T([3], dtype=dt), I(1)])
        add(f"_to_copy/{dt}_to_float32", "_to_copy", [T([3], dtype=dt), DT("float32"), NONE(), NONE(), NONE(),
                                                        B(False), NONE()])
        add(f"_to_copy/float64_to_{dt}", "_to_copy", [T([2, 2], [1, 2], "float64"), DT(dt), NONE(), NONE(), NONE(),
                                                        B(False), NONE()])
        add(f"_to_copy/int64_to_{dt}", "_to_copy", [T([3], dtype="int64"), DT(dt), NONE(), NONE(), NONE(), B(False),
                                                      NONE()])
        add(f"relu/{dt}_error", "relu", [T([3], dtype=dt)])
    add("view_as_complex/float32", "view_as_complex", [T([3, 2])])
    add("view_as_complex/float64_sliced", "view_as_complex", [T([2, 2], [4, 1], "float64", offset=2)])
    add("view_as_complex/rank1", "view_as_complex", [T([2])])
    add("view_as_complex/int64_error", "view_as_complex", [T([3, 2], dtype="int64")])
    add("view_as_complex/size3_error", "view_as_complex", [T([3])])
    add("view_as_complex/stride_error", "view_as_complex", [T([2, 2], [1, 2])])
    add("view_as_complex/odd_stride_error", "view_as_complex", [T([2, 2], [3, 1])])
    add("view_as_complex/odd_offset_error", "view_as_complex", [T([2], offset=1)])
    add("view_as_complex/0dim_error", "view_as_complex", [T([])])
    add("view_as_real/float32_error", "view_as_real", [T([3])])
    add("real/float32_self", "real", [T([3])])
    add("imag/float32_error", "imag", [T([3])])


def frontend_cases(g):
    T, I, NONE = g.T, g.I, g.NONE

    def S(v): return {"k": "str", "v": v}

    def add(name, op, args):
        dt = next((a["dtype"] for a in args if a.get("k") == "tensor"), "float32")
        g.add_case(name, op, args, tol=[1e-9, 1e-9] if dt in ("float64", "complex128") else [2e-5, 1e-5])

    for n, tag in ((NONE(), "default"), (I(6), "n6_slice"), (I(11), "n11_pad"), (I(0), "n0_error")):
        add(f"fft_rfft/{tag}", "fft_rfft", [T([3, 8]), n, I(-1), NONE()])
        add(f"fft_irfft/{tag}", "fft_irfft", [T([3, 5], dtype="complex64"), n, I(-1), NONE()])
        add(f"fft_fft/{tag}", "fft_fft", [T([2, 8], dtype="complex64"), n, I(1), NONE()])
        add(f"fft_ifft/{tag}", "fft_ifft", [T([2, 8], dtype="complex128"), n, I(-1), NONE()])
    for norm in ("backward", "forward", "ortho", "bogus"):
        add(f"fft_rfft/norm_{norm}", "fft_rfft", [T([6]), NONE(), I(0), S(norm)])
        add(f"fft_irfft/norm_{norm}", "fft_irfft", [T([4], dtype="complex64"), I(6), I(0), S(norm)])
        add(f"fft_fft/norm_{norm}", "fft_fft", [T([5], dtype="complex64"), NONE(), I(0), S(norm)])
        add(f"fft_ifft/norm_{norm}", "fft_ifft", [T([5], dtype="complex64"), NONE(), I(0), S(norm)])
    add("fft_rfft/dim0_pad", "fft_rfft", [T([5, 3], dtype="float64"), I(7), I(0), NONE()])
    add("fft_rfft/int64_promoted", "fft_rfft", [T([6], dtype="int64"), NONE(), I(-1), NONE()])
    add("fft_rfft/complex_error", "fft_rfft", [T([6], dtype="complex64"), NONE(), I(-1), NONE()])
    add("fft_rfft/0dim_error", "fft_rfft", [T([]), NONE(), I(-1), NONE()])
    add("fft_rfft/dim_error", "fft_rfft", [T([4]), NONE(), I(1), NONE()])
    add("fft_irfft/real_promoted", "fft_irfft", [T([3, 4]), NONE(), I(0), NONE()])
    add("fft_irfft/size1_error", "fft_irfft", [T([1], dtype="complex64"), NONE(), I(0), NONE()])
    add("fft_fft/real_twosided", "fft_fft", [T([2, 5]), NONE(), I(-1), NONE()])
    add("fft_fft/int64_twosided", "fft_fft", [T([4], dtype="int64"), I(6), I(0), NONE()])


def complex_math_cases(g):
    """abs and angle (complex in, real out: the CPU kernel's layout, empty_like for abs and
    contiguous for angle, against the reference's, which follows the input), and the
    reductions sum/mean/prod (complex results, dtype=) and var/std (real results)."""
    T, I, B, D, NONE, DT, INTS = g.T, g.I, g.B, g.D, g.NONE, g.DT, g.INTS

    def add(name, op, args):
        dt = next((a["dtype"] for a in args if a.get("k") == "tensor"), "float32")
        g.add_case(name, op, args, tol=[1e-9, 1e-9] if dt in ("float64", "complex128") else [2e-5, 1e-5])

    layouts = [("contig", [2, 3], None, 0), ("t", [3, 2], [1, 3], 0), ("strided", [2, 2], [4, 2], 1),
               ("0dim", [], None, 0), ("empty", [0, 3], None, 0)]
    for op in ("abs", "angle"):
        for name, sizes, strides, off in layouts:
            for dt in ("complex64", "complex128"):
                add(f"{op}/{name}/{dt}", op, [T(sizes, strides, dt, off)])
        for dt in ("float32", "float64", "int64", "int32", "bool"):
            add(f"{op}/real_{dt}", op, [T([5], dtype=dt)])
    add("abs_/complex64_error", "abs_", [T([3], dtype="complex64")])
    for dt in ("complex64", "complex128"):
        for name, sizes, strides, off in layouts[:3]:
            for dims, keep in (([0], False), ([1], True), ([0, 1], False), ([], False)):
                add(f"sum_dim_IntList/{name}/{dims}/{keep}/{dt}", "sum_dim_IntList",
                    [T(sizes, strides, dt, off), INTS(dims), B(keep), NONE()])
            add(f"mean_dim/{name}/{dt}", "mean_dim", [T(sizes, strides, dt, off), INTS([1]), B(False), NONE()])
            add(f"prod_dim_int/{name}/{dt}", "prod_dim_int", [T(sizes, strides, dt, off), I(0), B(True), NONE()])
            add(f"var_correction/{name}/{dt}", "var_correction", [T(sizes, strides, dt, off), INTS([1]), NONE(),
                                                                   B(False)])
            add(f"std_correction/{name}/{dt}", "std_correction", [T(sizes, strides, dt, off), NONE(), I(0),
                                                                   B(True)])
        add(f"sum/{dt}", "sum", [T([2, 3], dtype=dt), NONE()])
        add(f"mean/{dt}", "mean", [T([4], dtype=dt), NONE()])
        add(f"prod/{dt}", "prod", [T([3], dtype=dt), NONE()])
        add(f"sum/empty/{dt}", "sum", [T([0], dtype=dt), NONE()])
        add(f"prod/empty/{dt}", "prod", [T([0], dtype=dt), NONE()])
        add(f"mean_dim/empty/{dt}", "mean_dim", [T([0, 2], dtype=dt), INTS([0]), B(False), NONE()])
        add(f"var_correction/one/{dt}", "var_correction", [T([1], dtype=dt), NONE(), NONE(), B(False)])
        add(f"var_dim/{dt}", "var_dim", [T([3, 4], dtype=dt), INTS([0]), B(False), B(True)])
    add("sum_dim_IntList/to_complex128", "sum_dim_IntList", [T([2, 3], dtype="complex64"), INTS([0]), B(False),
                                                             DT("complex128")])
    add("sum_dim_IntList/float_to_complex64", "sum_dim_IntList", [T([2, 3]), INTS([1]), B(False), DT("complex64")])
    add("sum/int64_to_complex128", "sum", [T([4], dtype="int64"), DT("complex128")])
    add("mean_dim/float_to_complex64", "mean_dim", [T([2, 3]), INTS([1]), B(True), DT("complex64")])
    add("mean/int64_to_complex64", "mean", [T([3], dtype="int64"), DT("complex64")])
    add("prod_dim_int/float_to_complex128", "prod_dim_int", [T([2, 3]), I(1), B(False), DT("complex128")])
    add("prod/complex128_to_complex64", "prod", [T([3], dtype="complex128"), DT("complex64")])
    # complex and polar: CPU checks (complex_check_dtype) and iterator layout, Meta's meta_complex
    for op in ("complex", "polar"):
        for dt in ("float32", "float64"):
            add(f"{op}/{dt}", op, [T([2, 3], dtype=dt), T([2, 3], dtype=dt)])
        add(f"{op}/bcast", op, [T([2, 3]), T([3])])
        add(f"{op}/0dim", op, [T([]), T([2])])
        add(f"{op}/transposed", op, [T([3, 2], [1, 3]), T([3, 2], [1, 3])])
        add(f"{op}/t_vs_contig", op, [T([3, 2], [1, 3]), T([3, 2])])
        add(f"{op}/empty", op, [T([0, 2]), T([0, 2])])
        add(f"{op}/mixed_error", op, [T([3]), T([3], dtype="float64")])
        add(f"{op}/int_error", op, [T([3], dtype="int64"), T([3], dtype="int64")])
        add(f"{op}/complex_error", op, [T([3], dtype="complex64"), T([3], dtype="complex64")])
        add(f"{op}/shape_error", op, [T([2, 3]), T([4])])
    # conjugate views: _conj / conj (views with the conj bit), resolve_conj (a clone),
    # _conj_physical / conj_physical (new tensors); real inputs are returned as they are
    for op in ("_conj", "conj", "resolve_conj", "_conj_physical", "conj_physical"):
        for dt in ("complex64", "complex128"):
            add(f"{op}/{dt}", op, [T([2, 3], dtype=dt)])
        add(f"{op}/transposed", op, [T([3, 2], [1, 3], "complex64")])
        if op != "_conj":
            add(f"{op}/float32", op, [T([3])])
    add("fft_ifft/real_input", "fft_ifft", [T([2, 6]), NONE(), I(-1), NONE()])
    add("fft_ifft/real_input_n8_ortho", "fft_ifft", [T([5]), I(8), I(0), {"k": "str", "v": "ortho"}])
