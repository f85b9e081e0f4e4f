"""Cases of convolution_backward, native_group_norm_backward, _embedding_bag (and the
embedding_bag composite), _cdist_forward, _pdist_forward (and cdist, pdist) for
tools/interop/gen_ops.py (imported by it; see its docstring for the case format). They go to
tests/data/ops_bwd_cases.json and draw from a generator of their own (seed 1410), so adding
them leaves every older case unchanged. Tensors are small and each op has at most ~20 cases.
A backward op's saved inputs (mean, rstd) come from running the forward op in PyTorch on the
same data, as autograd would."""
import random

import torch

from ops_backward_cases import BOOLS, add, tensor_arg


def add_all(g):
    saved, g.rng = g.rng, random.Random(1410)
    try:
        group_norm_cases(g)
        conv_cases(g)
        cdist_cases(g)
        embedding_bag_cases(g)
        yield "ops_bwd_cases.json"
    finally:
        g.rng = saved


def group_norm_cases(g):
    T, I, NONE = g.T, g.I, g.NONE
    gen = torch.Generator().manual_seed(17)
    A = torch.ops.aten
    op = "native_group_norm_backward"
    cl = g.perm_strides([2, 4, 3, 3], [0, 2, 3, 1])
    # name, input shape, groups, weight?, mask, dtype, input strides, grad strides
    forms = [("basic", [2, 4, 3, 3], 2, True, [1, 1, 1], torch.float32, None, None),
             ("3d", [3, 6, 5], 3, True, [1, 1, 1], torch.float32, None, None),
             ("one_group", [2, 4, 5], 1, True, [1, 1, 1], torch.float32, None, None),
             ("no_weight", [2, 4, 5], 2, False, [1, 0, 0], torch.float32, None, None),
             ("input_only", [2, 4, 3, 3], 4, True, [1, 0, 0], torch.float32, None, None),
             ("weight_only", [2, 4, 3, 3], 2, True, [0, 1, 1], torch.float32, None, None),
             ("none", [2, 4, 5], 2, True, [0, 0, 0], torch.float32, None, None),
             ("float64", [2, 4, 3], 2, True, [1, 1, 1], torch.float64, None, None),
             ("channels_last_input", [2, 4, 3, 3], 2, True, [1, 1, 1], torch.float32, cl, None),
             ("channels_last_grad", [2, 4, 3, 3], 2, True, [1, 1, 1], torch.float32, None, cl),
             ("channels_last_both", [2, 4, 3, 3], 2, True, [1, 1, 1], torch.float32, cl, cl),
             ("empty_spatial", [2, 4, 0], 2, True, [1, 1, 1], torch.float32, None, None)]
    for name, xs, grp, has_w, mask, dt, xst, gst in forms:
        N, C = xs[0], xs[1]
        HxW = 1
        for s in xs[2:]:
            HxW *= s
        x = torch.randn(xs, generator=gen, dtype=dt)
        w = torch.randn(C, generator=gen, dtype=dt) if has_w else None
        b = torch.randn(C, generator=gen, dtype=dt) if has_w else None
        _, mean, rstd = A.native_group_norm(x, w, b, N, C, HxW, grp, 1e-5)
        dy = torch.randn(xs, generator=gen, dtype=dt)
        xa, da = tensor_arg(g, x), tensor_arg(g, dy)
        for a, st in ((xa, xst), (da, gst)):
            if st is not None:  # the same values, stored channels-last
                t = torch.tensor(a["storage"], dtype=dt).reshape(xs)
                a["strides"] = st
                a["storage"] = [g.encode_value(v) for v in
                                t.permute(0, 2, 3, 1).contiguous().flatten().tolist()]
        add(g, f"{op}/{name}", op, [da, xa, tensor_arg(g, mean), tensor_arg(g, rstd),
                                    tensor_arg(g, w) if has_w else NONE(), I(N), I(C), I(HxW), I(grp), BOOLS(mask)],
            tol=[1e-5, 1e-5] if dt == torch.float32 else None,
            # 2.13's CPU kernel reads grad_out as if laid out like the input: wrong values when
            # the two layouts differ (see backward_group_norm.c), so only their meta run
            runs=("meta",) if (xst is None) != (gst is None) else ("cpu", "meta"))
    x, m = T([2, 4, 3]), T([2, 2])
    bad = [("no_weight_grad", [T([2, 4, 3]), x, m, T([2, 2]), NONE(), I(2), I(4), I(3), I(2), BOOLS([1, 1, 1])]),
           ("bad_numel", [T([2, 4, 3]), x, m, T([2, 2]), T([4]), I(2), I(4), I(2), I(2), BOOLS([1, 1, 1])]),
           ("bad_mean", [T([2, 4, 3]), x, T([2, 3]), T([2, 3]), T([4]), I(2), I(4), I(3), I(2), BOOLS([1, 1, 1])]),
           ("bad_grad", [T([1, 4, 3]), x, m, T([2, 2]), T([4]), I(2), I(4), I(3), I(2), BOOLS([1, 1, 1])]),
           ("bad_weight", [T([2, 4, 3]), x, m, T([2, 2]), T([3]), I(2), I(4), I(3), I(2), BOOLS([1, 1, 1])]),
           ("grad_dtype", [T([2, 4, 3], dtype="float64"), x, m, T([2, 2]), T([4]), I(2), I(4), I(3), I(2),
                           BOOLS([1, 1, 1])]),
           ("mean_dtype", [T([2, 4, 3]), x, T([2, 2], dtype="float64"), T([2, 2], dtype="float64"), T([4]), I(2),
                           I(4), I(3), I(2), BOOLS([1, 1, 1])])]
    for name, args in bad:
        add(g, f"{op}/{name}", op, args)


def conv_cases(g):
    T, I, INTS, NONE, B = g.T, g.I, g.INTS, g.NONE, g.B
    gen = torch.Generator().manual_seed(23)
    A = torch.ops.aten
    op = "convolution_backward"
    # name, input, weight, stride, padding, dilation, transposed, output_padding, groups, mask
    forms = [("basic", [2, 3, 6, 6], [4, 3, 3, 3], [1, 1], [0, 0], [1, 1], False, [0, 0], 1, [1, 1, 1]),
             ("stride_pad", [1, 2, 7, 6], [3, 2, 3, 2], [2, 1], [1, 0], [1, 1], False, [0, 0], 1, [1, 1, 1]),
             ("dilation", [1, 2, 7, 7], [2, 2, 3, 3], [1, 1], [2, 2], [2, 2], False, [0, 0], 1, [1, 1, 1]),
             ("groups", [2, 4, 5, 5], [6, 2, 3, 3], [1, 1], [1, 1], [1, 1], False, [0, 0], 2, [1, 1, 1]),
             ("pointwise", [2, 3, 4, 4], [5, 3, 1, 1], [1, 1], [0, 0], [1, 1], False, [0, 0], 1, [1, 1, 1]),
             ("conv1d", [2, 3, 9], [4, 3, 3], [2], [1], [1], False, [0], 1, [1, 1, 1]),
             ("conv3d", [1, 2, 4, 4, 4], [3, 2, 2, 2, 2], [1, 1, 1], [0, 0, 0], [1, 1, 1], False, [0, 0, 0], 1,
              [1, 1, 1]),
             ("transposed", [1, 4, 4, 4], [4, 3, 3, 3], [2, 2], [1, 1], [1, 1], True, [1, 1], 1, [1, 1, 1]),
             ("transposed_groups", [2, 4, 3, 3], [4, 2, 2, 2], [1, 1], [0, 0], [1, 1], True, [0, 0], 2, [1, 1, 1]),
             ("transposed1d", [2, 4, 5], [4, 3, 3], [2], [1], [1], True, [1], 1, [1, 1, 1]),
             ("input_only", [2, 3, 6, 6], [4, 3, 3, 3], [1, 1], [0, 0], [1, 1], False, [0, 0], 1, [1, 0, 0]),
             ("weight_only", [2, 3, 6, 6], [4, 3, 3, 3], [1, 1], [0, 0], [1, 1], False, [0, 0], 1, [0, 1, 0]),
             ("none", [2, 3, 6, 6], [4, 3, 3, 3], [1, 1], [0, 0], [1, 1], False, [0, 0], 1, [0, 0, 0]),
             ("float64", [1, 2, 5, 5], [3, 2, 3, 3], [1, 1], [1, 1], [1, 1], False, [0, 0], 1, [1, 1, 1])]
    for name, xs, ws, st, pd, dl, tr, op_, grp, mask in forms:
        dt = torch.float64 if name == "float64" else torch.float32
        x = torch.randn(xs, generator=gen, dtype=dt)
        w = torch.randn(ws, generator=gen, dtype=dt)
        y = A.convolution(x, w, None, st, pd, dl, tr, op_, grp)
        dy = torch.randn(y.shape, generator=gen, dtype=dt)
        add(g, f"{op}/{name}", op, [tensor_arg(g, dy), tensor_arg(g, x), tensor_arg(g, w), INTS([y.shape[1]]),
                                    INTS(st), INTS(pd), INTS(dl), B(tr), INTS(op_), I(grp), BOOLS(mask)],
            tol=[1e-5, 1e-5] if dt == torch.float32 else None)
    # channels-last input or weight: both gradients channels-last
    x, w = torch.randn(2, 3, 5, 5, generator=gen), torch.randn(4, 3, 3, 3, generator=gen)
    dy = torch.randn(2, 4, 3, 3, generator=gen)
    for name, on in (("channels_last_input", 1), ("channels_last_weight", 2)):
        args = [tensor_arg(g, dy), tensor_arg(g, x), tensor_arg(g, w)]
        a, t = args[on], (x, w)[on - 1]
        a["strides"] = g.perm_strides(list(t.shape), [0, 2, 3, 1])
        a["storage"] = [g.encode_value(v) for v in t.permute(0, 2, 3, 1).contiguous().flatten().tolist()]
        add(g, f"{op}/{name}", op, args + [INTS([4]), INTS([1, 1]), INTS([0, 0]), INTS([1, 1]), B(False), INTS([0, 0]),
                                           I(1), BOOLS([1, 1, 1])], tol=[1e-5, 1e-5])
    # errors: convolution's shape checks (check_shape_backward), output_padding of a plain conv
    std = [INTS([1, 1]), INTS([0, 0]), INTS([1, 1]), B(False), INTS([0, 0]), I(1), BOOLS([1, 1, 1])]
    add(g, f"{op}/bad_channels", op, [T([1, 4, 3, 3]), T([1, 2, 5, 5]), T([4, 3, 3, 3]), INTS([4])] + std,
        runs=("cpu",))
    add(g, f"{op}/output_padding_plain", op, [T([1, 4, 3, 3]), T([1, 3, 5, 5]), T([4, 3, 3, 3]), INTS([4]),
                                              INTS([1, 1]), INTS([0, 0]), INTS([1, 1]), B(False), INTS([1, 1]), I(1),
                                              BOOLS([1, 1, 1])], runs=("cpu",))
    add(g, f"{op}/no_bias_sizes", op, [T([1, 4, 3, 3]), T([1, 3, 5, 5]), T([4, 3, 3, 3]), NONE()] + std,
        runs=("meta",))


def cdist_cases(g):
    T, I, D, NONE = g.T, g.I, g.D, g.NONE
    tr = g.perm_strides([3, 4], [1, 0])
    C, P = "_cdist_forward", "_pdist_forward"
    for p in (2.0, 1.0, 0.0, 3.0, 0.5, float("inf")):
        g.add_case(f"{C}/p{p}", C, [T([3, 4]), T([5, 4]), D(g.encode_value(p)), NONE()], tol=[1e-5, 1e-5])
    g.add_case(f"{C}/batch_broadcast", C, [T([2, 3, 4]), T([1, 5, 4]), D(2.0), NONE()], tol=[1e-5, 1e-5])
    g.add_case(f"{C}/batch_rank", C, [T([2, 3, 4]), T([5, 4]), D(1.0), NONE()], tol=[1e-5, 1e-5])
    g.add_case(f"{C}/mode2", C, [T([3, 4]), T([5, 4]), D(2.0), I(2)], tol=[1e-5, 1e-5])
    g.add_case(f"{C}/transposed", C, [T([3, 4], tr), T([5, 4]), D(2.0), NONE()], tol=[1e-5, 1e-5])
    g.add_case(f"{C}/float64", C, [T([3, 4], dtype="float64"), T([2, 4], dtype="float64"), D(2.0), NONE()],
               tol=[1e-12, 1e-10])
    g.add_case(f"{C}/empty_rows", C, [T([0, 4]), T([5, 4]), D(2.0), NONE()])
    g.add_case(f"{C}/no_columns", C, [T([3, 0]), T([5, 0]), D(2.0), NONE()])
    g.add_case(f"{C}/negative_p", C, [T([3, 4]), T([5, 4]), D(-1.0), NONE()])
    g.add_case(f"{C}/bad_mode", C, [T([3, 4]), T([5, 4]), D(2.0), I(3)])
    g.add_case(f"{C}/1d", C, [T([4]), T([5, 4]), D(2.0), NONE()])
    g.add_case(f"{C}/columns", C, [T([3, 4]), T([5, 3]), D(2.0), NONE()])
    g.add_case(f"{C}/int", C, [T([3, 4], dtype="int64"), T([5, 4], dtype="int64"), D(2.0), NONE()])
    g.add_case(f"{C}/bad_batch", C, [T([3, 2, 4]), T([2, 5, 4]), D(2.0), NONE()])
    for p in (2.0, 1.0, 0.0, 3.0, float("inf")):
        g.add_case(f"{P}/p{p}", P, [T([4, 3]), D(g.encode_value(p))], tol=[1e-5, 1e-5])
    g.add_case(f"{P}/float64", P, [T([5, 2], dtype="float64"), D(2.0)], tol=[1e-12, 1e-10])
    g.add_case(f"{P}/one_row", P, [T([1, 3]), D(2.0)])
    g.add_case(f"{P}/no_columns", P, [T([4, 0]), D(2.0)])
    g.add_case(f"{P}/transposed", P, [T([3, 4], tr), D(2.0)])
    g.add_case(f"{P}/int", P, [T([4, 3], dtype="int64"), D(2.0)], runs=("cpu",))
    g.add_case("cdist/basic", "cdist", [T([3, 4]), T([5, 4]), D(2.0), NONE()], tol=[1e-5, 1e-5])
    g.add_case("cdist/p1_batch", "cdist", [T([2, 3, 4]), T([2, 5, 4]), D(1.0), NONE()], tol=[1e-5, 1e-5])
    g.add_case("pdist/basic", "pdist", [T([4, 3]), D(2.0)], tol=[1e-5, 1e-5])
    g.add_case("pdist/transposed", "pdist", [T([3, 4], tr), D(2.0)], tol=[1e-5, 1e-5])
    g.add_case("pdist/3d", "pdist", [T([2, 4, 3]), D(2.0)])
    g.add_case("pdist/negative_p", "pdist", [T([4, 3]), D(-1.0)])


def embedding_bag_cases(g):
    T, I, B, NONE = g.T, g.I, g.B, g.NONE

    def IX(vals, dt="int64"):
        a = T([len(vals)], dtype=dt)
        a["storage"] = list(vals)
        return a
    idx, off = [0, 2, 4, 1, 3, 2], [0, 2, 2, 5]
    for op in ("_embedding_bag", "_embedding_bag_forward_only"):
        for mode in (0, 1, 2):
            for ilo in (False, True):
                for pidx in (-1, 2):
                    g.add_case(f"{op}/mode{mode}_ilo{int(ilo)}_pad{pidx}", op,
                               [T([5, 3]), IX(idx), IX(off), B(False), I(mode), B(False), NONE(), B(ilo), I(pidx)],
                               tol=[1e-6, 1e-5])
    # the forward-only op's bag_size (and max_indices) in sum mode with include_last_offset is
    # sized like offsets (make_bag_size without requires_grad), per-sample weights or not
    op = "_embedding_bag_forward_only"
    g.add_case(f"{op}/per_sample_weights_ilo", op, [T([5, 3]), IX(idx), IX(off), B(False), I(0), B(False), T([6]),
                                                     B(True), I(-1)], tol=[1e-6, 1e-5])
    op = "_embedding_bag"
    g.add_case(f"{op}/per_sample_weights", op, [T([5, 3]), IX(idx), IX(off), B(False), I(0), B(False), T([6]),
                                                 B(False), I(-1)], tol=[1e-6, 1e-5])
    g.add_case(f"{op}/float64", op, [T([5, 3], dtype="float64"), IX(idx), IX(off), B(False), I(0), B(False), NONE(),
                                      B(False), I(-1)])
    g.add_case(f"{op}/int32", op, [T([5, 3]), IX(idx, "int32"), IX(off, "int32"), B(False), I(1), B(False), NONE(),
                                    B(False), I(-1)], tol=[1e-6, 1e-5])
    # indices and offsets of narrower types are converted to their promoted int32/int64
    # (fuzz_op_call: narrower offsets beside int64 indices were read as int64)
    for name, idt, odt in (("bool_offsets", "int64", "bool"), ("bool_indices", "bool", "int64"),
                           ("bool_offsets_int32", "int32", "bool")):
        g.add_case(f"{op}/{name}", op, [T([5, 3]), IX(idx, idt), IX([0, 1, 1], odt), B(False), I(0), B(False),
                                        NONE(), B(False), I(-1)], tol=[1e-6, 1e-5])
    g.add_case(f"{op}/transposed_weight", op, [T([5, 3], [1, 5]), IX(idx), IX(off), B(False), I(0), B(False), NONE(),
                                                B(False), I(-1)])
    g.add_case(f"{op}/empty_offsets", op, [T([5, 3]), IX(idx), IX([]), B(False), I(0), B(False), NONE(), B(False),
                                            I(-1)])
    for name, args in [
            ("float_indices", [T([5, 3]), T([6]), IX(off)]),
            ("int_weight", [T([5, 3], dtype="int64"), IX(idx), IX(off)]),
            ("bad_first_offset", [T([5, 3]), IX(idx), IX([1, 2])]),
            ("last_offset_too_big", [T([5, 3]), IX(idx), IX([0, 7])]),
            ("index_out_of_range", [T([5, 3]), IX([0, 9]), IX([0, 1])])]:
        g.add_case(f"{op}/{name}", op, args + [B(False), I(0), B(False), NONE(), B(False), I(-1)])
    g.add_case(f"{op}/psw_mean", op, [T([5, 3]), IX(idx), IX(off), B(False), I(1), B(False), T([6]), B(False), I(-1)])
    g.add_case(f"{op}/ilo_no_offsets", op, [T([5, 3]), IX(idx), IX([]), B(False), I(0), B(False), NONE(), B(True),
                                             I(-1)])
