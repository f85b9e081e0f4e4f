"""Cases of the backward operators (what autograd's formulas call) and the sym_* ops for
tools/interop/gen_ops.py (imported by it; see its docstring for the case format). They go to
tests/data/ops_backward_cases.json and draw from a generator of their own (seed 1310), so
adding them leaves every older case unchanged. Tensors are small and each op has at most ~20
cases, so the file stays small. A backward op's saved inputs (mean, rstd, indices, total
weight) come from running the forward op in PyTorch on the same data, as autograd would."""
import random

import torch


def add_all(g):
    saved, g.rng = g.rng, random.Random(1310)
    try:
        pointwise_cases(g)
        layer_norm_cases(g)
        nn_cases(g)
        pool_cases(g)
        sym_cases(g)
        yield "ops_backward_cases.json"
    finally:
        g.rng = saved


def tol_for(args):
    dt = next((a["dtype"] for a in args if a.get("k") == "tensor"), "float32")
    return [1e-12, 1e-10] if dt == "float64" else [1e-6, 1e-5]


def add(g, name, op, args, **kw):
    tol = kw.pop("tol", None)
    g.add_case(name, op, args, tol=tol or tol_for(args), **kw)


def BOOLS(v):
    return {"k": "bools", "v": [bool(x) for x in v]}


def tensor_arg(g, t, dtype=None):
    """A case argument holding exactly the values of torch tensor t (contiguous)."""
    dt = dtype or {torch.float32: "float32", torch.float64: "float64", torch.int64: "int64"}[t.dtype]
    a = g.T(list(t.shape), dtype=dt)
    a["storage"] = [g.encode_value(v) for v in g.flatten(t.contiguous().tolist())]
    return a


def pointwise_cases(g):
    T, I, D, S = g.T, g.I, g.D, lambda v: {"k": "str", "v": v}
    tr = g.perm_strides([3, 4], [1, 0])
    for dt in ("float32", "float64", "int64"):
        add(g, f"threshold_backward/basic/{dt}", "threshold_backward", [T([3, 4], dtype=dt), T([3, 4], dtype=dt), I(0)])
    add(g, "threshold_backward/double_threshold", "threshold_backward", [T([3, 4]), T([3, 4]), D(0.5)])
    add(g, "threshold_backward/transposed_grad", "threshold_backward", [T([3, 4], tr), T([3, 4]), I(0)])
    add(g, "threshold_backward/transposed_self", "threshold_backward", [T([3, 4]), T([3, 4], tr), I(0)])
    add(g, "threshold_backward/broadcast", "threshold_backward", [T([4]), T([3, 4]), I(1)])
    add(g, "threshold_backward/mixed", "threshold_backward", [T([3, 4]), T([3, 4], dtype="float64"), I(0)],
        runs=("cpu",))
    add(g, "threshold_backward/bool", "threshold_backward", [T([3], dtype="bool"), T([3], dtype="bool"), I(0)],
        runs=("cpu",))
    add(g, "threshold_backward/bad_shape", "threshold_backward", [T([3, 4]), T([2, 4]), I(0)])
    add(g, "threshold_backward/scalar", "threshold_backward", [T([]), T([]), I(0)])
    for op in ("sigmoid_backward", "tanh_backward"):
        y = lambda s, st=None, dt="float32": {**T(s, st, dtype=dt), "storage": [  # noqa: E731
            g.rng.randint(-12, 12) / 16.0 for _ in T(s, st)["storage"]]}
        for dt in ("float32", "float64"):
            add(g, f"{op}/basic/{dt}", op, [T([3, 4], dtype=dt), y([3, 4], dt=dt)])
        add(g, f"{op}/transposed_grad", op, [T([3, 4], tr), y([3, 4])])
        add(g, f"{op}/broadcast", op, [T([4]), y([3, 4])])
        add(g, f"{op}/mixed", op, [T([3, 4]), y([3, 4], dt="float64")])
        add(g, f"{op}/int", op, [T([3], dtype="int64"), T([3], dtype="int64")])
        add(g, f"{op}/bad_shape", op, [T([3, 4]), y([2, 4])])
    for approx in ("none", "tanh"):
        for dt in ("float32", "float64"):
            add(g, f"gelu_backward/{approx}/{dt}", "gelu_backward", [T([3, 4], dtype=dt), T([3, 4], dtype=dt),
                                                                     S(approx)])
        add(g, f"gelu_backward/{approx}/transposed", "gelu_backward", [T([3, 4]), T([3, 4], tr), S(approx)])
    add(g, "gelu_backward/int", "gelu_backward", [T([3], dtype="int64"), T([3], dtype="int64"), S("none")])
    add(g, "gelu_backward/bad_approximate", "gelu_backward", [T([3]), T([3]), S("erf")])


def layer_norm_cases(g):
    T, INTS, NONE = g.T, g.INTS, g.NONE
    gen = torch.Generator().manual_seed(7)
    A = torch.ops.aten
    forms = [("basic", [2, 3, 4], [4], True, True, [1, 1, 1]), ("two_dims", [2, 3, 4], [3, 4], True, True, [1, 1, 1]),
             ("no_affine", [3, 5], [5], False, False, [1, 0, 0]), ("input_only", [2, 3, 4], [4], True, True, [1, 0, 0]),
             ("weight_only", [2, 3, 4], [4], True, False, [0, 1, 0]), ("none", [2, 4], [4], True, True, [0, 0, 0]),
             ("float64", [2, 3], [3], True, True, [1, 1, 1])]
    for name, xs, ns, has_w, has_b, mask in forms:
        dt = torch.float64 if name == "float64" else torch.float32
        x = torch.randn(xs, generator=gen, dtype=dt)
        w = torch.randn(ns, generator=gen, dtype=dt) if has_w else None
        b = torch.randn(ns, generator=gen, dtype=dt) if has_b else None
        _, mean, rstd = A.native_layer_norm(x, ns, w, b, 1e-5)
        dy = torch.randn(xs, generator=gen, dtype=dt)
        add(g, f"native_layer_norm_backward/{name}", "native_layer_norm_backward",
            [tensor_arg(g, dy), tensor_arg(g, x), INTS(ns), tensor_arg(g, mean), tensor_arg(g, rstd),
             tensor_arg(g, w) if has_w else NONE(), tensor_arg(g, b) if has_b else NONE(), BOOLS(mask)],
            tol=[1e-5, 1e-5] if dt == torch.float32 else None)
    x = T([2, 3, 4])
    add(g, "native_layer_norm_backward/bad_shape", "native_layer_norm_backward",
        [T([2, 3, 4]), x, INTS([3]), T([2, 3, 1]), T([2, 3, 1]), T([4]), T([4]), BOOLS([1, 1, 1])], runs=("cpu",))


def nn_cases(g):
    T, I, INTS, NONE, DT, B = g.T, g.I, g.INTS, g.NONE, g.DT, g.B
    gen = torch.Generator().manual_seed(11)
    A = torch.ops.aten
    tr = g.perm_strides([3, 4], [1, 0])
    for op, fwd in (("_softmax_backward_data", A._softmax), ("_log_softmax_backward_data", A._log_softmax)):
        for name, xs, dim, dt in [("basic", [3, 4], 1, torch.float32), ("dim0", [3, 4], 0, torch.float32),
                                  ("3d_mid", [2, 3, 4], 1, torch.float32), ("neg_dim", [2, 3, 4], -1, torch.float64),
                                  ("scalar", [], 0, torch.float32), ("empty", [0, 3], 1, torch.float32)]:
            x = torch.randn(xs, generator=gen, dtype=dt)
            out = fwd(x, dim, False)
            dy = torch.randn(xs, generator=gen, dtype=dt)
            add(g, f"{op}/{name}", op, [tensor_arg(g, dy), tensor_arg(g, out), I(dim),
                                        DT("float64" if dt == torch.float64 else "float32")])
        out = fwd(torch.randn(3, 4, generator=gen), 1, False)
        add(g, f"{op}/transposed_grad", op, [T([3, 4], tr), tensor_arg(g, out), I(1), DT("float32")])
        add(g, f"{op}/input_dtype", op, [T([3, 4]), tensor_arg(g, out), I(1), DT("float64")], runs=("cpu",))
        add(g, f"{op}/bad_dim", op, [T([3, 4]), T([3, 4]), I(5), DT("float32")])
        add(g, f"{op}/int", op, [T([3, 4], dtype="int64"), T([3, 4], dtype="int64"), I(1), DT("int64")], runs=("cpu",))
        add(g, f"{op}/dtype_mismatch", op, [T([3, 4], dtype="float64"), T([3, 4]), I(1), DT("float32")], runs=("cpu",))
    add(g, "_softmax_backward_data/size_mismatch", "_softmax_backward_data", [T([2, 4]), T([3, 4]), I(1), DT("float32")],
        runs=("cpu",))

    def IDX(sizes, hi, vals=None):
        a = T(sizes, dtype="int64")
        a["storage"] = vals if vals is not None else [g.rng.randint(0, hi - 1) for _ in a["storage"]]
        return a
    tw4 = {**T([]), "storage": [4.0]}
    for red in (0, 1, 2):
        go = T([4]) if red == 0 else T([])
        add(g, f"nll_loss_backward/basic_{red}", "nll_loss_backward", [go, T([4, 5]), IDX([4], 5), NONE(), I(red),
                                                                        I(-100), tw4])
        add(g, f"nll_loss_backward/weight_{red}", "nll_loss_backward", [go, T([4, 5]), IDX([4], 5), T([5]), I(red),
                                                                         I(-100), {**T([]), "storage": [2.5]}])
        add(g, f"nll_loss_backward/1d_{red}", "nll_loss_backward", [T([]), T([5]), IDX([], 5), NONE(), I(red), I(-100),
                                                                     {**T([]), "storage": [1.0]}])
    add(g, "nll_loss_backward/ignore", "nll_loss_backward", [T([]), T([4, 5]), IDX([4], 5, [1, 2, 1, 4]), NONE(), I(1),
                                                              I(1), {**T([]), "storage": [2.0]}])
    add(g, "nll_loss_backward/out_of_bounds", "nll_loss_backward", [T([]), T([2, 3]), IDX([2], 3, [0, 5]), NONE(), I(1),
                                                                     I(-100), tw4], runs=("cpu",))
    add(g, "nll_loss_backward/grad_size", "nll_loss_backward", [T([3]), T([4, 5]), IDX([4], 5), NONE(), I(0), I(-100),
                                                                 tw4])
    add(g, "nll_loss_backward/grad_not_scalar", "nll_loss_backward", [T([2]), T([4, 5]), IDX([4], 5), NONE(), I(1),
                                                                       I(-100), tw4])
    add(g, "nll_loss_backward/total_weight", "nll_loss_backward", [T([]), T([4, 5]), IDX([4], 5), NONE(), I(1),
                                                                    I(-100), T([2])])
    add(g, "nll_loss_backward/weight_size", "nll_loss_backward", [T([]), T([4, 5]), IDX([4], 5), T([3]), I(1),
                                                                   I(-100), tw4])
    add(g, "nll_loss_backward/size_mismatch", "nll_loss_backward", [T([]), T([4, 5]), IDX([2], 5), NONE(), I(1),
                                                                     I(-100), tw4])
    for red in (0, 1, 2):
        go = T([3, 4]) if red == 0 else T([])
        add(g, f"mse_loss_backward/basic_{red}", "mse_loss_backward", [go, T([3, 4]), T([3, 4]), I(red)])
    add(g, "mse_loss_backward/transposed", "mse_loss_backward", [T([]), T([3, 4], tr), T([3, 4]), I(1)])
    add(g, "mse_loss_backward/broadcast_target", "mse_loss_backward", [T([]), T([3, 4]), T([4]), I(1)])
    add(g, "mse_loss_backward/float64", "mse_loss_backward", [T([], dtype="float64"), T([3], dtype="float64"),
                                                               T([3], dtype="float64"), I(2)])
    for name, gs, ix, nw, pad, freq in [("basic", [2, 3, 4], IDX([2, 3], 6, [1, 2, 3, 3, 3, 0]), 6, -1, False),
                                        ("padding", [2, 3, 4], IDX([2, 3], 6, [1, 2, 3, 3, 3, 0]), 6, 3, False),
                                        ("freq", [2, 3, 4], IDX([2, 3], 6, [1, 2, 3, 3, 3, 0]), 6, -1, True),
                                        ("1d", [4, 3], IDX([4], 6, [5, 0, 5, 1]), 6, 0, False),
                                        ("transposed", [4, 3], IDX([4], 6, [5, 0, 5, 1]), 6, -1, False)]:
        grad = T(gs, g.perm_strides(gs, [1, 0]) if name == "transposed" else None)
        add(g, f"embedding_dense_backward/{name}", "embedding_dense_backward", [grad, ix, I(nw), I(pad), B(freq)])
    add(g, "embedding_dense_backward/float_indices", "embedding_dense_backward", [T([3, 4]), T([3]), I(6), I(-1),
                                                                                   B(False)], runs=("cpu",))


def pool_cases(g):
    T, I, INTS, NONE, B = g.T, g.I, g.INTS, g.NONE, g.B
    gen = torch.Generator().manual_seed(13)
    A = torch.ops.aten
    cl = g.perm_strides([2, 3, 4, 4], [0, 2, 3, 1])
    pools = [("basic", [2, 3, 6, 6], None, [2, 2], [], [0], [1], False),
             ("stride_pad", [1, 2, 7, 7], None, [3, 3], [2, 2], [1, 1], [1, 1], False),
             ("ceil", [1, 2, 7, 7], None, [2, 2], [2, 2], [0, 0], [1, 1], True),
             ("dilation", [1, 2, 7, 7], None, [2, 2], [1, 1], [0, 0], [2, 2], False),
             ("rank3", [3, 6, 6], None, [2, 2], [], [0], [1], False),
             ("channels_last", [2, 3, 4, 4], cl, [2, 2], [], [0], [1], False)]
    for name, xs, st, k, s, p, d, ceil in pools:
        x = torch.randn(xs, generator=gen)
        if st is not None:
            x = x.contiguous(memory_format=torch.channels_last)
        out, idx = A.max_pool2d_with_indices(x, k, s, p, d, ceil)
        dy = torch.randn(out.shape, generator=gen)
        xa = tensor_arg(g, x)
        if st is not None:
            xa = {**T(xs, st), "storage": [g.encode_value(v) for v in x.permute(0, 2, 3, 1).flatten().tolist()]}
        add(g, f"max_pool2d_with_indices_backward/{name}", "max_pool2d_with_indices_backward",
            [tensor_arg(g, dy), xa, INTS(k), INTS(s), INTS(p), INTS(d), B(ceil), tensor_arg(g, idx, "int64")])
        add(g, f"avg_pool2d_backward/{name}", "avg_pool2d_backward",
            [tensor_arg(g, torch.randn(A.avg_pool2d(x, k, s, p, ceil, True, None).shape, generator=gen)), xa, INTS(k), INTS(s), INTS(p), B(ceil), B(True), NONE()])
    add(g, "max_pool2d_with_indices_backward/bad_grad", "max_pool2d_with_indices_backward",
        [T([2, 3, 2, 2]), T([2, 3, 6, 6]), INTS([2, 2]), INTS([2, 2]), INTS([0, 0]), INTS([1, 1]), B(False),
         {**T([2, 3, 2, 2], dtype="int64"), "storage": [0] * 24}])
    for name, count, div in [("exclude_pad", False, None), ("divisor", True, 3)]:
        x = torch.randn(1, 2, 5, 5, generator=gen)
        out = A.avg_pool2d(x, [3, 3], [2, 2], [1, 1], True, count, div)
        add(g, f"avg_pool2d_backward/{name}", "avg_pool2d_backward",
            [tensor_arg(g, torch.randn(out.shape, generator=gen)), tensor_arg(g, x), INTS([3, 3]), INTS([2, 2]),
             INTS([1, 1]), B(True), B(count), I(div) if div else NONE()])
    add(g, "avg_pool2d_backward/bad_grad", "avg_pool2d_backward",
        [T([1, 2, 2, 2]), T([1, 2, 6, 6]), INTS([2, 2]), INTS([]), INTS([0]), B(False), B(True), NONE()], runs=("cpu",))
    for name, xs, o in [("basic", [2, 3, 6, 6], [2, 3]), ("uneven", [1, 2, 7, 5], [3, 2]), ("rank3", [2, 5, 5], [2, 2]),
                        ("upsample", [1, 1, 2, 2], [3, 3])]:
        add(g, f"_adaptive_avg_pool2d_backward/{name}", "_adaptive_avg_pool2d_backward", [T([*xs[:-2], *o]), T(xs)])
    add(g, "_adaptive_avg_pool2d_backward/channels_last", "_adaptive_avg_pool2d_backward",
        [T([2, 3, 2, 3]), T([2, 3, 4, 4], cl)])


def sym_cases(g):
    T, I = g.T, g.I
    layouts = [("contig", [2, 3, 4], None, 0), ("sliced", [2, 2], [3, 1], 1), ("transposed", [3, 4], [1, 3], 0),
               ("scalar", [], None, 0), ("empty", [0, 3], None, 0)]
    for name, sizes, strides, off in layouts:
        x = T(sizes, strides, offset=off)
        for d in ([0, -1] if sizes else [0, -1]):
            add(g, f"sym_size_int/{name}_{d}", "sym_size_int", [x, I(d)])
            add(g, f"sym_stride_int/{name}_{d}", "sym_stride_int", [x, I(d)])
        add(g, f"sym_numel/{name}", "sym_numel", [x])
        add(g, f"sym_storage_offset/{name}", "sym_storage_offset", [x])
    add(g, "sym_size_int/bad_dim", "sym_size_int", [T([2, 3]), I(5)])
    add(g, "sym_stride_int/bad_dim", "sym_stride_int", [T([2, 3]), I(-3)])
