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
        grid_sampler_3d_cases(g)
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


def grid_sampler_3d_cases(g):
    """grid_sampler_3d: bilinear (trilinear) and nearest, each padding mode, align_corners both
    ways, grid points in [-2, 2] (multiples of 1/4, so nearest's ties round alike in float and
    double) to reach the padding; permuted input and grid, float64, the grid_sampler composite
    of a 5-d input; the errors (bicubic, dtypes, ranks, sizes: C++'s texts on cpu, the meta
    function's on meta)."""
    T, I, B = g.T, g.I, g.B
    tol = [1e-5, 1e-5]
    op = "grid_sampler_3d"
    def inside(sizes):  # a grid mostly in [-1, 1] (multiples of 1/8), some points just outside
        a = T(sizes)
        a["storage"] = [g.rng.randint(-9, 9) / 8 for _ in a["storage"]]
        return a

    for mode in (0, 1):
        for pad in (0, 1, 2):
            for align in (False, True):
                g.add_case(f"{op}/m{mode}_p{pad}_a{int(align)}", op,
                           [T([2, 2, 3, 4, 5]), T([2, 2, 3, 2, 3], kind="small"), I(mode), I(pad), B(align)], tol=tol)
                g.add_case(f"{op}/inside/m{mode}_p{pad}_a{int(align)}", op,
                           [T([1, 2, 3, 4, 5]), inside([1, 3, 2, 2, 3]), I(mode), I(pad), B(align)], tol=tol)
    perm_in = g.perm_strides([2, 3, 3, 4, 2], [0, 2, 3, 4, 1])
    perm_grid = g.perm_strides([1, 2, 2, 3, 3], [0, 4, 1, 2, 3])
    g.add_case(f"{op}/permuted", op, [T([2, 3, 3, 4, 2], perm_in), T([2, 2, 2, 3, 3], kind="small"), I(0), I(2),
                                      B(False)], tol=tol)
    g.add_case(f"{op}/permuted_grid", op, [T([1, 2, 3, 4, 5]), T([1, 2, 2, 3, 3], perm_grid, kind="small"), I(1),
                                           I(1), B(True)], tol=tol)
    g.add_case(f"{op}/float64", op, [T([1, 2, 3, 3, 3], dtype="float64"),
                                     T([1, 2, 2, 2, 3], dtype="float64", kind="small"), I(0), I(0), B(True)],
               tol=[1e-12, 1e-12])
    g.add_case(f"{op}/bicubic_error", op, [T([1, 1, 2, 2, 2]), T([1, 1, 1, 1, 3], kind="small"), I(2), I(0),
                                           B(False)])
    g.add_case(f"{op}/int_error", op, [T([1, 1, 2, 2, 2], dtype="int64"), T([1, 1, 1, 1, 3], kind="small"), I(0),
                                       I(0), B(False)])
    g.add_case(f"{op}/grid_dtype_error", op, [T([1, 1, 2, 2, 2]), T([1, 1, 1, 1, 3], dtype="float64", kind="small"),
                                              I(0), I(0), B(False)])
    g.add_case(f"{op}/rank_error", op, [T([2, 3, 4, 5]), T([2, 3, 2, 3], kind="small"), I(0), I(0), B(False)])
    g.add_case(f"{op}/batch_error", op, [T([1, 1, 2, 2, 2]), T([2, 1, 1, 1, 3], kind="small"), I(0), I(0),
                                         B(False)])
    g.add_case(f"{op}/last_dim_error", op, [T([1, 1, 2, 2, 2]), T([1, 1, 1, 1, 2], kind="small"), I(0), I(0),
                                            B(False)])
    g.add_case(f"{op}/empty_spatial_error", op, [T([1, 1, 2, 0, 2]), T([1, 1, 1, 1, 3], kind="small"), I(0), I(0),
                                                 B(False)])
    g.add_case(f"{op}/empty_output", op, [T([1, 2, 2, 2, 2]), T([1, 0, 2, 2, 3], kind="small"), I(0), I(0),
                                          B(False)])
    g.add_case("grid_sampler/5d", "grid_sampler", [T([1, 2, 3, 3, 3]), T([1, 2, 2, 2, 3], kind="small"), I(0), I(1),
                                                   B(False)], tol=tol)
    g.add_case("grid_sampler/3d_input_error", "grid_sampler", [T([2, 3, 4]), T([2, 3, 1], kind="small"), I(0), I(0),
                                                               B(False)])
