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
        sgn_cases(g)
        inplace_complex_cases(g)
        cdist_route_cases(g)
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


def sgn_cases(g):
    """sgn: sign for the real dtypes (bool and uint8 included, NaN and -0.0 give 0), z / |z| for
    complex (0 at 0); the specials (inf, NaN parts) sit in tensors shorter than one vectorized
    chunk, since 2.13's vectorized loop (a / |a| per part) and its scalar tail (c10::complex's
    division by |a| + 0j) disagree there (NaN + 0j against NaN + NaNj)."""
    T = g.T
    for name, sizes, strides, off in LAYOUTS:
        for dt in ("float32", "float64", "int64", "int32", "bool", "complex64", "complex128"):
            tol = [1e-9, 1e-9] if dt in ("float64", "complex128") else [2e-6, 2e-6]
            g.add_case(f"sgn/{name}/{dt}", "sgn", [T(sizes, strides, dt, off)], tol=tol)
        for dt in ("float32", "int64", "bool", "complex64"):
            g.add_case(f"sgn_/{name}/{dt}", "sgn_", [T(sizes, strides, dt, off)], tol=[2e-6, 2e-6])
    specials = [0.0, "-inf", 3.0, 4.0, "nan", 1.0, -0.0, 0.0]  # -infj, 3+4j, nan+1j, -0+0j
    for dt in ("complex64", "complex128"):
        g.add_case(f"sgn/specials/{dt}", "sgn",
                   [{"k": "tensor", "dtype": dt, "sizes": [4], "strides": [1], "offset": 0, "dev": "auto",
                     "storage": specials}])
        g.add_case(f"sgn/inf_real/{dt}", "sgn",
                   [{"k": "tensor", "dtype": dt, "sizes": [1], "strides": [1], "offset": 0, "dev": "auto",
                     "storage": ["inf", 0.0]}])
    g.add_case("sgn/specials/float32", "sgn",
               [{"k": "tensor", "dtype": "float32", "sizes": [6], "strides": [1], "offset": 0, "dev": "auto",
                 "storage": ["nan", -0.0, "inf", "-inf", 0.0, -2.5]}])
    g.add_case("sgn/uint8", "sgn", [{"k": "tensor", "dtype": "uint8", "sizes": [3], "strides": [1], "offset": 0,
                                     "dev": "auto", "storage": [0, 1, 200]}])
    g.add_case("sgn/big/complex64", "sgn", [T([5, 7], None, "complex64")], tol=[2e-6, 2e-6])


def inplace_complex_cases(g):
    """The in-place arithmetic on complex tensors (2.13 computes mul_, sub_, div_ and neg_ in
    complex64 and complex128 as their out-of-place forms do): layouts, a broadcast or real
    other, alpha, the Scalar overloads, and the cast error of a real self with a complex
    other."""
    T, I, D = g.T, g.I, g.D
    for dt in ("complex64", "complex128"):
        tol = [1e-9, 1e-9] if dt == "complex128" else [2e-6, 2e-6]
        for name, sizes, strides, off in LAYOUTS[:3]:
            for op in ("mul__Tensor", "div__Tensor", "sub__Tensor"):
                extra = [I(2)] if op == "sub__Tensor" else []
                g.add_case(f"{op}/{name}/{dt}", op, [T(sizes, strides, dt, off), T(sizes, None, dt)] + extra, tol=tol)
            g.add_case(f"neg_/{name}/{dt}", "neg_", [T(sizes, strides, dt, off)], tol=tol)
        for op in ("mul__Tensor", "div__Tensor", "sub__Tensor"):
            extra = [D(0.5)] if op == "sub__Tensor" else []
            g.add_case(f"{op}/bcast/{dt}", op, [T([2, 3], None, dt), T([3], None, dt)] + extra, tol=tol)
            g.add_case(f"{op}/real_other/{dt}", op, [T([2, 3], None, dt), T([2, 3], None, "float32")] + extra,
                       tol=tol)
            g.add_case(f"{op}/real_self_error/{dt}", op, [T([2, 3], None, "float32"), T([2, 3], None, dt)] + extra)
        for op in ("mul__Scalar", "div__Scalar", "sub__Scalar"):
            extra = [I(1)] if op == "sub__Scalar" else []
            g.add_case(f"{op}/{dt}", op, [T([2, 3], None, dt), D(-1.5)] + extra, tol=tol)


def cdist_route_cases(g):
    """cdist's routes as 2.13's CompositeImplicitAutograd cdist takes them: _cdist_forward for
    an empty input or p != 2 or compute_mode 2, else _euclidean_dist on the matrix-product route
    (compute_mode 1, or None/0 with more than 25 rows), broadcast batches included; and the
    route's own checks (integer inputs)."""
    T, I, D, NONE = g.T, g.I, g.D, g.NONE
    tol = [1e-4, 1e-4]  # the matrix-product route against cfx's direct sums
    shapes = [("small", [3, 4], [5, 4]), ("rows26_x1", [26, 3], [4, 3]), ("rows26_x2", [3, 3], [27, 3]),
              ("batch", [2, 30, 3], [2, 5, 3]), ("bcast_batch", [2, 1, 30, 3], [3, 5, 3]),
              ("x2_unbatched", [2, 30, 3], [5, 3]), ("t_input", [4, 28], [6, 28]),
              ("empty_cols", [30, 0], [5, 0]), ("empty_rows", [0, 4], [30, 4])]
    for name, a, b in shapes:
        for mode in (NONE(), I(0), I(1), I(2)):
            tag = "None" if mode["k"] == "none" else mode["v"]
            strides = [1, 4] if name == "t_input" else None
            g.add_case(f"cdist/{name}/p2/mode{tag}", "cdist", [T(a, strides), T(b), D(2.0), mode], tol=tol)
        g.add_case(f"cdist/{name}/p1", "cdist", [T(a), T(b), D(1.0), NONE()], tol=tol)
    g.add_case("cdist/float64_mm", "cdist", [T([30, 3], dtype="float64"), T([4, 3], dtype="float64"), D(2.0), I(1)],
               tol=[1e-9, 1e-9])
    g.add_case("cdist/int_x1_mm_error", "cdist", [T([30, 3], dtype="int64"), T([4, 3]), D(2.0), NONE()])
    g.add_case("cdist/int_x2_mm_error", "cdist", [T([30, 3]), T([4, 3], dtype="int64"), D(2.0), I(1)])
    g.add_case("cdist/batch_mismatch_mm_error", "cdist", [T([2, 30, 3]), T([3, 4, 3]), D(2.0), NONE()])
