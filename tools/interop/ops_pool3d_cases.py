"""Cases of the 3-d pooling operators (and later col2im/im2col and grid_sampler_2d) for
tools/interop/gen_ops.py, which imports this file and writes what it adds to
tests/data/ops_pool3d_cases.json (ops_cases.json's format). A generator of its own (seed 3303)
leaves every older case unchanged; about a dozen small cases per op, errors included (each
case runs on cpu and on meta, whose 2.13 texts differ in places)."""
import random


def add_all(g):
    """Adds the cases, yielding the file they go to (gen_ops.py writes and drops them)."""
    saved, g.rng = g.rng, random.Random(3303)
    try:
        pool3d_cases(g)
        fold_cases(g)
        grid_sampler_cases(g)
        yield "ops_pool3d_cases.json"
    finally:
        g.rng = saved


def pool3d_cases(g):
    T, I, B, NONE, INTS = g.T, g.I, g.B, g.NONE, g.INTS

    def add(name, op, args):
        dt = next((a["dtype"] for a in args if a.get("k") == "tensor"), "float32")
        g.add_case(name, op, args, tol=[1e-12, 1e-10] if dt == "float64" else [1e-6, 1e-5])

    cl3 = g.perm_strides([2, 3, 4, 4, 4], [0, 2, 3, 4, 1])
    cl2 = g.perm_strides([2, 3, 4, 4], [0, 2, 3, 1])
    # (name, input, kernel, stride, padding, dilation, ceil_mode)
    pools = [("stride_pad", T([1, 2, 5, 5, 5]), [3, 3, 3], [2, 2, 2], [1, 1, 1], [1], False),
             ("ceil", T([1, 2, 5, 4, 5]), [2, 2, 2], [2, 2, 2], [0], [1], True),
             ("anisotropic", T([1, 2, 4, 6, 5]), [1, 2, 3], [1, 2, 1], [0, 1, 1], [1], False),
             ("dilation", T([1, 1, 5, 6, 5]), [2, 2, 2], [1], [0], [2, 1, 2], False),
             ("rank4", T([2, 4, 4, 4]), [2], [], [0], [1], False),
             ("channels_last", T([2, 3, 4, 4, 4], cl3), [2, 2, 2], [], [0], [1], False),
             ("batch0", T([0, 2, 4, 4, 4]), [2], [], [0], [1], False),
             ("rank3", T([4, 4, 4]), [2], [], [0], [1], False),
             ("kernel_len2", T([1, 2, 4, 4, 4]), [2, 2], [], [0], [1], False),
             ("kernel0", T([1, 2, 4, 4, 4]), [0, 2, 2], [1], [0], [1], False),
             ("stride0", T([1, 2, 4, 4, 4]), [2], [0, 1, 1], [0], [1], False),
             ("stride_neg", T([1, 2, 4, 4, 4]), [2], [-1], [0], [1], False),
             ("stride_len2", T([1, 2, 4, 4, 4]), [2], [1, 1], [0], [1], False),
             ("padding_len2", T([1, 2, 4, 4, 4]), [2], [], [1, 1], [1], False),
             ("pad_neg", T([1, 2, 4, 4, 4]), [2], [], [-1], [1], False),
             ("pad_big", T([1, 2, 4, 4, 4]), [2], [], [2, 0, 0], [1], False),
             ("too_small", T([1, 2, 1, 1, 1]), [2], [], [0], [1], False),
             ("channels0", T([1, 0, 4, 4, 4]), [2], [], [0], [1], False)]
    for name, x, k, st, pd, dl, ceil in pools:
        add(f"max_pool3d_with_indices/{name}", "max_pool3d_with_indices",
            [x, INTS(k), INTS(st), INTS(pd), INTS(dl), B(ceil)])
        add(f"avg_pool3d/{name}", "avg_pool3d", [x, INTS(k), INTS(st), INTS(pd), B(ceil), B(True), NONE()])
    for name, x, k, st, pd, dl, ceil in pools[:6]:
        add(f"max_pool3d/{name}", "max_pool3d", [x, INTS(k), INTS(st), INTS(pd), INTS(dl), B(ceil)])
    for dt in ("float64", "int64", "int32", "bool"):
        x = T([2, 2, 3, 4, 4], dtype=dt)
        add(f"max_pool3d_with_indices/{dt}", "max_pool3d_with_indices",
            [x, INTS([2]), INTS([1, 2, 2]), INTS([1, 0, 1]), INTS([1]), B(False)])
        add(f"avg_pool3d/{dt}", "avg_pool3d", [x, INTS([2]), INTS([1, 2, 2]), INTS([1, 0, 1]), B(False), B(True),
                                               NONE()])
    add("max_pool3d_with_indices/dilation_len2", "max_pool3d_with_indices",
        [T([1, 2, 4, 4, 4]), INTS([2]), INTS([]), INTS([0]), INTS([1, 1]), B(False)])
    add("max_pool3d_with_indices/dilation0", "max_pool3d_with_indices",
        [T([1, 2, 4, 4, 4]), INTS([2]), INTS([]), INTS([0]), INTS([0, 1, 1]), B(False)])
    add("max_pool3d_with_indices/dilated_pad", "max_pool3d_with_indices",
        [T([1, 2, 9, 9, 9]), INTS([2]), INTS([1]), INTS([2]), INTS([3]), B(False)])
    add("max_pool3d_with_indices/rank4_channels_last", "max_pool3d_with_indices",
        [T([2, 3, 4, 4], cl2), INTS([2]), INTS([]), INTS([0]), INTS([1]), B(False)])
    add("max_pool3d_with_indices/nan", "max_pool3d_with_indices",
        [{**T([1, 1, 2, 2, 1]), "storage": [1.0, "nan", 2.0, 0.5]}, INTS([2, 2, 1]), INTS([]), INTS([0]),
         INTS([1]), B(False)])
    for name, cip, div in [("exclude_pad", False, NONE()), ("divisor", True, I(3)), ("divisor0", True, I(0)),
                           ("int_exclude_pad", False, NONE())]:
        x = T([1, 2, 4, 5, 5], dtype="int64" if name.startswith("int") else "float32")
        add(f"avg_pool3d/{name}", "avg_pool3d", [x, INTS([3]), INTS([2]), INTS([1]), B(True), B(cip), div])

    for name, x, o in [("basic", T([2, 3, 4, 6, 6]), [2, 3, 2]), ("uneven", T([1, 2, 5, 7, 5]), [3, 2, 4]),
                       ("rank4", T([2, 5, 5, 3]), [2, 2, 1]), ("one", T([1, 2, 4, 4, 4]), [1, 1, 1]),
                       ("upsample", T([1, 1, 2, 2, 2]), [3, 3, 3]), ("channels_last", T([2, 3, 4, 4, 4], cl3), [2, 3, 2]),
                       ("float64", T([1, 2, 3, 3, 3], dtype="float64"), [2, 2, 2]),
                       ("batch0", T([0, 2, 4, 4, 4]), [2, 2, 2]), ("out0", T([1, 2, 4, 4, 4]), [0, 2, 2]),
                       ("channels0", T([1, 0, 4, 4, 4]), [2, 2, 2]), ("int64", T([1, 2, 4, 4, 4], dtype="int64"), [2, 2, 2]),
                       ("rank3", T([4, 4, 4]), [2, 2, 2]), ("output_len2", T([1, 2, 4, 4, 4]), [2, 2])]:
        add(f"_adaptive_avg_pool3d/{name}", "_adaptive_avg_pool3d", [x, INTS(o)])
    for name, x, o in [("basic", T([2, 3, 4, 6, 6]), [2, 3, 2]), ("one", T([1, 2, 4, 4, 4]), [1, 1, 1]),
                       ("one_rank4", T([2, 5, 3, 3]), [1, 1, 1]), ("negative", T([1, 2, 4, 4, 4]), [2, -1, 2]),
                       ("output_len2", T([1, 2, 4, 4, 4]), [2, 2])]:
        add(f"adaptive_avg_pool3d/{name}", "adaptive_avg_pool3d", [x, INTS(o)])


def fold_cases(g):
    T, INTS = g.T, g.INTS

    def add(name, op, args):
        dt = next((a["dtype"] for a in args if a.get("k") == "tensor"), "float32")
        g.add_case(name, op, args, tol=[1e-12, 1e-10] if dt == "float64" else [1e-6, 1e-5])

    cl = g.perm_strides([2, 3, 5, 5], [0, 2, 3, 1])
    # (name, input, kernel, dilation, padding, stride)
    for name, x, k, d, p, s in [("basic", T([2, 3, 5, 5]), [2, 2], [1, 1], [0, 0], [1, 1]),
                                ("strided_padded", T([1, 2, 6, 7]), [3, 2], [1, 2], [1, 0], [2, 1]),
                                ("unbatched", T([3, 5, 4]), [2, 3], [1, 1], [1, 1], [1, 2]),
                                ("channels_last", T([2, 3, 5, 5], cl), [2, 2], [1, 1], [0, 0], [1, 1]),
                                ("float64", T([1, 2, 4, 4], dtype="float64"), [2, 2], [1, 1], [1, 1], [2, 2]),
                                ("bool", T([1, 2, 4, 4], dtype="bool"), [2, 2], [1, 1], [1, 1], [2, 2]),
                                ("int64", T([1, 2, 4, 4], dtype="int64"), [2, 2], [1, 1], [0, 0], [1, 1]),
                                ("batch0", T([0, 3, 5, 5]), [2, 2], [1, 1], [0, 0], [1, 1]),
                                ("rank2", T([5, 5]), [2, 2], [1, 1], [0, 0], [1, 1]),
                                ("kernel_len1", T([2, 3, 5, 5]), [2], [1, 1], [0, 0], [1, 1]),
                                ("stride_len1", T([2, 3, 5, 5]), [2, 2], [1, 1], [0, 0], [1]),
                                ("kernel0", T([2, 3, 5, 5]), [0, 2], [1, 1], [0, 0], [1, 1]),
                                ("dilation0", T([2, 3, 5, 5]), [2, 2], [0, 1], [0, 0], [1, 1]),
                                ("stride0", T([2, 3, 5, 5]), [2, 2], [1, 1], [0, 0], [0, 1]),
                                ("kernel_big", T([2, 3, 5, 5]), [6, 2], [1, 1], [0, 0], [1, 1]),
                                ("channels0", T([2, 0, 5, 5]), [2, 2], [1, 1], [0, 0], [1, 1])]:
        add(f"im2col/{name}", "im2col", [x, INTS(k), INTS(d), INTS(p), INTS(s)])
    # (name, input, output_size, kernel, dilation, padding, stride)
    for name, x, o, k, d, p, s in [
            ("basic", T([2, 12, 16]), [5, 5], [2, 2], [1, 1], [0, 0], [1, 1]),
            ("strided_padded", T([1, 12, 12]), [6, 7], [3, 2], [1, 2], [1, 0], [2, 1]),
            ("unbatched", T([18, 15]), [5, 4], [2, 3], [1, 1], [1, 1], [1, 2]),
            ("transposed", T([2, 12, 16], g.perm_strides([2, 12, 16], [0, 2, 1])), [5, 5], [2, 2], [1, 1], [0, 0],
             [1, 1]),
            ("float64", T([1, 8, 9], dtype="float64"), [4, 4], [2, 2], [1, 1], [1, 1], [2, 2]),
            ("bool", T([1, 8, 9], dtype="bool"), [4, 4], [2, 2], [1, 1], [1, 1], [2, 2]),
            ("int64", T([2, 12, 16], dtype="int64"), [5, 5], [2, 2], [1, 1], [0, 0], [1, 1]),
            ("batch0", T([0, 12, 16]), [5, 5], [2, 2], [1, 1], [0, 0], [1, 1]),
            ("rank1", T([16]), [5, 5], [2, 2], [1, 1], [0, 0], [1, 1]),
            ("output_len1", T([2, 12, 16]), [5], [2, 2], [1, 1], [0, 0], [1, 1]),
            ("kernel0", T([2, 12, 16]), [5, 5], [0, 2], [1, 1], [0, 0], [1, 1]),
            ("pad_neg", T([2, 12, 16]), [5, 5], [2, 2], [1, 1], [-1, 0], [1, 1]),
            ("stride0", T([2, 12, 16]), [5, 5], [2, 2], [1, 1], [0, 0], [0, 1]),
            ("output0", T([2, 12, 16]), [0, 5], [2, 2], [1, 1], [0, 0], [1, 1]),
            ("indivisible", T([2, 10, 16]), [5, 5], [2, 2], [1, 1], [0, 0], [1, 1]),
            ("blocks_mismatch", T([2, 12, 15]), [5, 5], [2, 2], [1, 1], [0, 0], [1, 1]),
            ("channels0", T([2, 0, 16]), [5, 5], [2, 2], [1, 1], [0, 0], [1, 1])]:
        add(f"col2im/{name}", "col2im", [x, INTS(o), INTS(k), INTS(d), INTS(p), INTS(s)])


def grid_sampler_cases(g):
    T, I, B = g.T, g.I, g.B

    def add(name, op, args):
        dt = next((a["dtype"] for a in args if a.get("k") == "tensor"), "float32")
        g.add_case(name, op, args, tol=[1e-12, 1e-10] if dt == "float64" else [1e-6, 1e-5])

    # every interpolation x padding x align_corners, on a grid reaching past [-1, 1]
    for mode in (0, 1, 2):
        for pad in (0, 1, 2):
            for align in (False, True):
                add(f"grid_sampler_2d/m{mode}_p{pad}_{'align' if align else 'edges'}", "grid_sampler_2d",
                    [T([2, 2, 4, 5]), T([2, 3, 4, 2], kind="small"), I(mode), I(pad), B(align)])
    cl = g.perm_strides([2, 3, 4, 5], [0, 2, 3, 1])
    for name, x, grid in [("channels_last", T([2, 3, 4, 5], cl), T([2, 3, 2, 2], kind="small")),
                          ("grid_transposed", T([1, 2, 4, 4]), T([1, 3, 2, 2], g.perm_strides([1, 3, 2, 2], [0, 2, 1, 3]),
                                                                 kind="small")),
                          ("float64", T([1, 2, 3, 4], dtype="float64"), T([1, 2, 3, 2], dtype="float64", kind="small")),
                          ("one_pixel", T([1, 1, 1, 1]), T([1, 2, 2, 2], kind="small")),
                          ("batch0", T([0, 2, 3, 4]), T([0, 2, 3, 2])),
                          ("channels0", T([2, 0, 3, 4]), T([2, 2, 3, 2])),
                          ("empty_spatial", T([2, 3, 0, 4]), T([2, 2, 3, 2])),
                          ("grid_last3", T([2, 3, 4, 5]), T([2, 2, 3, 3])),
                          ("dtype_mismatch", T([1, 2, 3, 4]), T([1, 2, 3, 2], dtype="float64")),
                          ("int64", T([1, 2, 3, 4], dtype="int64"), T([1, 2, 3, 2], dtype="int64"))]:
        for mode in (0, 2):
            add(f"grid_sampler_2d/{name}_m{mode}", "grid_sampler_2d", [x, grid, I(mode), I(1), B(False)])
    for name, mode, pad, align in [("bilinear", 0, 0, False), ("nearest_border", 1, 1, True),
                                   ("bicubic_reflection", 2, 2, False)]:
        add(f"grid_sampler/{name}", "grid_sampler", [T([2, 2, 4, 5]), T([2, 3, 4, 2], kind="small"), I(mode), I(pad),
                                                     B(align)])
