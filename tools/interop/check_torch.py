#!/usr/bin/env python3
"""`make check-torch`: cfx against PyTorch 2.13, program by program.

  python3 tools/interop/check_torch.py DIR     (DIR written by build/cfx-parity DIR)

For every program of tools/parity/programs.def (and every model of the zoo, whose twins are
tools/interop/gen_models.py's) cfx-parity wrote DIR/NAME.json: its make_fx graphs in real and
fake mode as cfx graph JSON and its eager output. Here the PyTorch twin of the same name (TWINS
below, written as a PyTorch user writes it) gets the same inputs (made from the same spec, with
the same values), is traced by make_fx in both modes (fake: _allow_non_fake_inputs=True, as
cfx's), and run. Compared, node by node: name, op kind, target overload, args and kwargs (structure
and literals), meta val (dtype, shape, stride); then the outputs: dtype, shape, values (float32
within 1e-5 relative (+1e-6 absolute), float64 1e-12, integers exactly). One line per program,
then "N passed, N failed"; exit status 1 when any failed.

Adding a program: one PROG row in programs.def and one twin here, named alike.
"""
import json
import math
import os
import sys
import warnings

import torch
import torch.nn.functional as F
from torch.fx.experimental.proxy_tensor import make_fx

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_models  # noqa: E402

warnings.filterwarnings("ignore")
aten = torch.ops.aten

# ---- the random programs' twins: each seeds first, so every run draws the same values ---------
def _random_inplace(a):
    torch.manual_seed(3)
    u = a.clone().uniform_(-1.0, 2.0)
    n = a.clone().normal_(0.5, 2.0)
    e = a.clone().exponential_(1.5)
    lg = a.clone().log_normal_(0.0, 0.25)
    c = a.clone().cauchy_(0.0, 0.5)
    g = a.clone().geometric_(0.3)
    r = a.clone().random_()
    s = a.clone().random_(5)
    un, el, cg, rs = u + n, e + lg, c + g, r + s
    left, right = un + el, cg + rs
    return left + (right + a)


def _random_tensors(a, b):
    torch.manual_seed(5)
    x = torch.bernoulli(torch.sigmoid(a))
    y = torch.bernoulli(a, 0.25)
    m = torch.normal(a, 2.0)
    sd = torch.abs(b)
    v = torch.normal(0.5, sd)
    w = torch.normal(a, sd)
    return ((x + y) + (m + v)) + w


def _random_multinomial(a):
    torch.manual_seed(7)
    p = torch.sigmoid(a)
    one = torch.multinomial(p, 1)
    three = torch.multinomial(p, 3)
    many = torch.multinomial(p, 8, replacement=True)
    return torch.cat([one, three, many], 1)


def _random_functional(a):
    torch.manual_seed(11)
    u = aten.uniform(a, -2.0, 2.0)
    e = aten.exponential(a, 3.0)
    r = aten.random.to(a, 10)
    n = torch.normal(0.0, 1.0, size=(4, 5))
    return (u + e) + (r + n)


def _neg_view_imag(a, b):
    z = torch.complex(a, b)
    im = torch.conj(z).imag
    n = torch._neg_view(a)
    r = torch.resolve_neg(im)
    return ((im * 2 + n) + r.resolve_neg()) + z.conj().real


# ---- the twins of programs.def ----------------------------------------------------------------
TWINS = {
    "add_bcast": lambda a, b: a + b,
    "sub_mul_relu": lambda a, b: torch.relu((a - b) * a),
    "div_exp": lambda a, b: torch.exp(a) / torch.exp(b),
    "sin_cos_neg": lambda a: -(torch.sin(a) + torch.cos(a)),
    "sum_dim": lambda a: torch.sum(a, [1]),
    "sum_keepdim": lambda a: torch.sum(a, [0, 2], keepdim=True),
    "max_dim": lambda a: torch.max(a, 1).values,
    "max_dim_indices": lambda a: torch.max(a, 0, keepdim=True).indices,
    "add_int64": lambda a, b: a + b,
    "mm": lambda a, b: torch.mm(a, b),
    "mm_t": lambda a, b: torch.mm(a, b.t()),
    "bmm": lambda a, b: torch.bmm(a, b),
    "addmm": lambda a, b, c: torch.addmm(a, b, c),
    "addmm_scaled": lambda a, b, c: torch.addmm(a, b, c, beta=0.5, alpha=2),
    "baddbmm": lambda a, b, c: torch.baddbmm(a, b, c),
    "dot": lambda a, b: torch.dot(a, b),
    "mv": lambda a, b: torch.mv(a, b),
    "linear_2d": lambda a, b, c: F.linear(a, b, c),
    "linear_nobias": lambda a, b: F.linear(a, b),
    "linear_3d": lambda a, b, c: F.linear(a, b, c),
    "linear_4d": lambda a, b, c: F.linear(a, b, c),
    "linear_1d": lambda a, b, c: F.linear(a, b, c),
    "linear_3d_nobias": lambda a, b: F.linear(a, b),
    "linear_transposed_input": lambda a, b, c: F.linear(a, b, c),
    "view_t": lambda a: a.view(3, 4).t(),
    "reshape_noncontig": lambda a: a.reshape(-1),
    "transpose_permute": lambda a: a.transpose(0, 1).permute(2, 0, 1),
    "expand_add": lambda a, b: a.expand(3, 4) + b,
    "unsqueeze_squeeze": lambda a: a.squeeze(1).unsqueeze(0),
    "slice_select": lambda a: a[:, 1:4].select(0, 2),
    "narrow_contiguous": lambda a: a.narrow(1, 1, 3).contiguous(),
    "cat_stack": lambda a, b: torch.stack([torch.cat([a, b], 1), torch.cat([b, a], 1)]),
    "chunk_mul": lambda a: a.chunk(2, 1)[0] * a.chunk(2, 1)[1],
    "flatten_unflatten": lambda a: a.flatten(1).unflatten(1, (4, 3)),
    "clone_relu": lambda a: torch.relu(a.clone()),
    "softmax": lambda a: F.softmax(a, -1),
    "softmax_dim0": lambda a: F.softmax(a, 0),
    "log_softmax": lambda a: F.log_softmax(a, 1),
    "remainder": lambda a, b: torch.remainder(a, b),
    "softmax_transposed": lambda a: F.softmax(a, 1),
    "softmax_to_float64": lambda a: F.softmax(a, 1, dtype=torch.float64),
    "log_softmax_to_float64": lambda a: F.log_softmax(a, 0, dtype=torch.float64),
    "layer_norm": lambda a, b, c: F.layer_norm(a, [4], b, c),
    "layer_norm_noaffine": lambda a: F.layer_norm(a, [3, 4]),
    "dropout_eval": lambda a: torch.relu(F.dropout(a, 0.1, training=False)),
    "random_inplace": lambda a: _random_inplace(a),
    "random_tensors": lambda a, b: _random_tensors(a, b),
    "random_multinomial": lambda a: _random_multinomial(a),
    "random_functional": lambda a: _random_functional(a),
    "embedding_bag_2d_max_padding": lambda a, b: F.embedding_bag(b, a, mode="max", padding_idx=1),
    "embedding": lambda a, b: F.embedding(b, a),
    "conv2d": lambda a, b, c: F.conv2d(a, b, c),
    "conv2d_stride_pad": lambda a, b, c: F.conv2d(a, b, c, stride=2, padding=1),
    "conv2d_dilation": lambda a, b: F.conv2d(a, b, dilation=2),
    "conv2d_groups": lambda a, b: F.conv2d(a, b, padding=1, groups=2),
    "conv2d_depthwise": lambda a, b, c: F.conv2d(a, b, c, padding=1, groups=3),
    "conv1d": lambda a, b: F.conv1d(a, b, stride=2, padding=1),
    "conv_transpose2d": lambda a, b, c: F.conv_transpose2d(a, b, c, stride=2, padding=1, output_padding=1),
    "conv_transpose2d_groups_dilation": lambda a, b: F.conv_transpose2d(a, b, None, (1, 2), (0, 1), (1, 0), 2, (2, 1)),
    "conv_transpose1d": lambda a, b: F.conv_transpose1d(a, b, stride=2, padding=1, output_padding=1),
    "conv2d_unbatched": lambda a, b, c: F.conv2d(a, b, c, padding=1),
    "conv1d_unbatched": lambda a, b: F.conv1d(a, b),
    "conv_transpose2d_unbatched": lambda a, b: F.conv_transpose2d(a, b, stride=2),
    "conv2d_padding_same": lambda a, b: F.conv2d(a, b, padding="same"),
    "conv2d_padding_valid": lambda a, b, c: F.conv2d(a, b, c, stride=2, padding="valid"),
    "conv2d_same_even_2x2": lambda a, b: F.conv2d(a, b, padding="same"),
    "conv2d_same_even_4x3": lambda a, b, c: F.conv2d(a, b, c, padding="same"),
    "conv2d_same_even_dilation": lambda a, b: F.conv2d(a, b, padding="same", dilation=(1, 3)),
    "conv1d_same_even_unbatched": lambda a, b: F.conv1d(a, b, padding="same"),
    "conv3d_same_even": lambda a, b: F.conv3d(a, b, padding="same"),
    "conv3d": lambda a, b, c: F.conv3d(a, b, c, stride=(1, 2, 1), padding=(1, 0, 1)),
    "scatter_add": lambda a, b, c: torch.scatter_add(a, 0, b, c),
    "scatter_reduce_mean": lambda a, b, c: torch.scatter_reduce(a, 1, b, c, "mean", include_self=False),
    "scatter_reduce_amax": lambda a, b, c: a.scatter_reduce(0, b, c, "amax"),
    "scatter_reduce_inplace": lambda a, b, c: (lambda x: x.scatter_reduce_(0, b, c, "prod") * x)(a.clone()),
    "cumsum_inplace": lambda a: (lambda x: x.cumsum_(1) + x)(a.clone()),
    "max_pool2d": lambda a: F.max_pool2d(a, 2),
    "max_pool2d_stride_pad": lambda a: F.max_pool2d(a, 3, 2, 1),
    "max_pool2d_ceil": lambda a: F.max_pool2d(a, 2, 2, ceil_mode=True),
    "avg_pool2d": lambda a: F.avg_pool2d(a, 2),
    "avg_pool2d_pad": lambda a: F.avg_pool2d(a, 3, 2, 1, ceil_mode=True, count_include_pad=False),
    "adaptive_avg_pool2d": lambda a: F.adaptive_avg_pool2d(a, (3, 2)),
    "adaptive_avg_pool2d_public": lambda a: F.adaptive_avg_pool2d(a, (3, 2)),
    "adaptive_avg_pool2d_1x1": lambda a: F.adaptive_avg_pool2d(a, 1),
    # F.batch_norm records a reserve `empty` (uint8, which cfx has not) before native_batch_norm
    "batch_norm_eval": lambda a, b, c, d: aten.native_batch_norm(a, b, c, d, torch.relu(b), False, 0.1, 1e-5)[0],
    "nll_loss": lambda a, b: F.nll_loss(a, b),
    "nll_loss_sum_weight": lambda a, b, c: F.nll_loss(a, b, c, reduction="sum"),
    "cross_entropy": lambda a, b: F.cross_entropy(a, b),
    "cross_entropy_none": lambda a, b: F.cross_entropy(a, b, reduction="none"),
    "cross_entropy_1d": lambda a, b: F.cross_entropy(a, b),
    "mse_loss": lambda a, b: F.mse_loss(a, b),
    "mse_loss_none": lambda a, b: F.mse_loss(a, b, reduction="none"),
    "mlp_functional": lambda a, b, c, d: F.log_softmax(F.linear(torch.relu(F.linear(a, b, c)), d), -1),
}
def _setitem(x, index, value):
    """x[index] = value, then x."""
    x[index] = value
    return x


def _inplace_view(f):
    """Runs f on a clone of the input (f mutates the clone, as the C twin does)."""
    return lambda a: f(a.clone())


TWINS.update({
    "linear_1d_nobias": lambda a, b: F.linear(a, b),
    "squeeze_inplace": _inplace_view(lambda c: c.squeeze_() * c),
    "squeeze_dim_inplace": _inplace_view(lambda c: (c.squeeze_(-1), c + c)[1]),
    "squeeze_dims_inplace": _inplace_view(lambda c: (c.squeeze_((0, 2)), torch.relu(c))[1]),
    "unsqueeze_inplace": _inplace_view(lambda c: (c.unsqueeze_(1), c.sum(2))[1]),
    "div_floor": lambda a, b: torch.div(a, b, rounding_mode="floor"),
    "div_trunc_int": lambda a, b: torch.div(a, b + 1, rounding_mode="trunc"),
    "div_mode_none": lambda a, b: torch.div(a, b.exp(), rounding_mode=None),
    "div_scalar_floor": lambda a: torch.ops.aten.div.Scalar_mode(a, 0.75, rounding_mode="floor"),
    "remainder_scalar": lambda a: a % 0.5,
    "remainder_scalar_tensor": lambda a: torch.remainder(2, a + 3),
    "clamp_inplace": lambda a: (lambda c: (c.clamp_(-0.5, 0.5), c * a)[1])(a.clone()),
    "clamp_min_inplace": _inplace_view(lambda c: c.clamp_min_(0)),
    "hardtanh_inplace": _inplace_view(lambda c: F.hardtanh_(c)),
    "gelu_inplace": _inplace_view(lambda c: torch.ops.aten.gelu_(c, approximate="tanh")),
    "remainder_inplace": lambda a, b: (lambda c: (c.remainder_(b), c)[1])(a.clone()),
    "masked_fill_tensor": lambda a, b: a.masked_fill(a > 0, b),
    "masked_fill_inplace": lambda a: a.clone().masked_fill_(a < 0, 0.0),
    "clamp_tensor": lambda a, b, c: torch.clamp(a, b, c + 1),
    "clamp_tensor_min": lambda a, b: torch.clamp(a, min=b),
    "setitem_index": lambda a, b, c: _setitem(a.clone(), b, c),
    "setitem_mask": lambda a, b: (lambda x: _setitem(x, x > 0, b))(a.clone()),
    "index_put_accumulate": lambda a, b, c: torch.index_put(a, (b,), c, accumulate=True),
    "floor_ceil": lambda a: torch.floor(a * 3) + torch.ceil(a),
    "round_trunc_sign": lambda a: torch.round(a * 4) * torch.sign(torch.trunc(a * 2)),
    "round_decimals": lambda a: torch.round(a, decimals=2),
    "fmod_atan2": lambda a, b: torch.atan2(torch.fmod(a, b + 3), b),
    "fmod_scalar": lambda a: torch.fmod(a, 0.5),
    "isnan_isinf": lambda a: torch.logical_or(torch.isnan(torch.log(a)), torch.isinf(a / 0.0)),
    "elu_leaky_relu": lambda a: aten.elu.default(a) + F.leaky_relu(a, 0.2),
    "cumsum_flip": lambda a: torch.cumsum(torch.flip(a, [0]), 1),
    "repeat_diagonal": lambda a: torch.diagonal(a.repeat(2, 1), 1),
    "sort_values": lambda a: torch.sort(a).values,
    "sort_stable_desc": lambda a: torch.sort(a, dim=0, descending=True, stable=True).indices,
    "topk_values": lambda a: torch.topk(a, 2).values,
    "var_dim": lambda a: torch.var(a, 1),
    "any_dims": lambda a: a.any(dim=(0, 1)),
    "masked_scatter": lambda a, b: a.masked_scatter(a > 0, b),
    "unet_block": lambda a, b, c: torch.relu(F.interpolate(F.pad(F.group_norm(a, 2, b, c), (1, 1, 1, 1), mode="reflect"),
                                                           scale_factor=2.0, mode="nearest")),
    "pad_circular_bilinear": lambda a: F.interpolate(F.pad(a, (1, 2, 2, 0), mode="circular"), size=(7, 9),
                                                     mode="bilinear", align_corners=True),
    "pad_replicate_constant": lambda a: F.pad(F.pad(a, (2, 1), mode="replicate"), (1, 0, 0, 1), value=0.5),
})
TWINS.update({  # 3-d pooling (ops-pool3d)
    "max_pool3d": lambda a: F.max_pool3d(a, 2),
    "max_pool3d_stride_pad": lambda a: F.max_pool3d(a, 3, 2, 1),
    "avg_pool3d_pad": lambda a: F.avg_pool3d(a, 3, 2, 1, ceil_mode=True, count_include_pad=False),
    "adaptive_avg_pool3d": lambda a: F.adaptive_avg_pool3d(a, (2, 3, 2)),
    "adaptive_avg_pool3d_1x1x1": lambda a: F.adaptive_avg_pool3d(a, 1),
    "unfold": lambda a: F.unfold(a, (2, 3), padding=(1, 0), stride=(2, 1)),
    "fold": lambda a: F.fold(a, (5, 5), 2),
    "grid_sample_bilinear": lambda a, b: F.grid_sample(a, b, align_corners=False),
    "grid_sample_bicubic_reflect": lambda a, b: F.grid_sample(a, b, mode="bicubic", padding_mode="reflection",
                                                              align_corners=True),
    "grid_sample_nearest_border": lambda a, b: F.grid_sample(a, b, mode="nearest", padding_mode="border",
                                                             align_corners=False),
})
TWINS.update({  # FFT: torch.fft's front-ends decompose into _fft_r2c, _fft_c2c, _fft_c2r
    "fft_rfft_irfft": lambda a: torch.fft.irfft(torch.fft.rfft(a), n=8),
    "fft_spectral_filter": lambda a, b: torch.fft.irfft(torch.fft.rfft(a, norm="ortho") * b, n=6, norm="ortho"),
    "fft_2d_mixed": lambda a: torch.fft.irfft(torch.fft.fft(torch.fft.rfft(a, dim=0), dim=1), n=4, dim=0),
    "fft_frontends": lambda a, b: (torch.fft.irfft(torch.fft.ifft(torch.fft.fft(torch.fft.irfft(
        torch.fft.rfft(a, n=10, norm="ortho"), n=8, norm="ortho"), n=6)), dim=1, norm="forward")
        + torch.fft.irfft(b)),
    "complex_spectrum_stats": lambda a: (lambda s: s.abs().mean(1) + s.var(1) + (s.mean(1) * s.sum(1)).abs())(
        torch.fft.rfft(a)),
    "complex_from_parts": lambda a, b: (torch.complex(a, b) + torch.polar(a.abs(), b)).abs(),
    "conj_ifft_real": lambda a: (lambda s: (s * s.conj()).real + torch.conj_physical(s).abs())(torch.fft.ifft(a)),
    "neg_view_imag": _neg_view_imag,
    "grid_sample_3d_reflect": lambda a, b: F.grid_sample(a, b, padding_mode="reflection", align_corners=True),
    "grid_sample_3d_nearest_zeros": lambda a, b: F.grid_sample(a, b, mode="nearest", align_corners=False),
    "cdist_routes": lambda a, b: torch.cdist(a, b) + torch.cdist(a, b, compute_mode="donot_use_mm_for_euclid_dist"),
})
for _name in ("1x1", "2x1", "2x2", "3x2", "3x1", "2x3", "1x3", "3x3", "4x3_bcast", "3x2_transposed", "4x1",
              "1x2", "1x4"):
    TWINS["matmul_" + _name] = lambda a, b: torch.matmul(a, b)


def make_input(tok, seed):
    """The tensor of one spec token, as tools/parity/main.c makes it."""
    kind, _, dims = tok.partition(":")
    transposed = dims.endswith("^t")
    dims = dims[:-2] if transposed else dims
    shape = [int(d) for d in dims.split(",") if d]
    if transposed:
        shape[-1], shape[-2] = shape[-2], shape[-1]
    n = math.prod(shape)
    if kind.startswith("i"):
        hi = int(kind[1:])
        t = torch.tensor([(i * 7 + seed * 13) % hi for i in range(n)], dtype=torch.int64).reshape(shape)
    else:
        t = gen_models.example(shape, seed)
        if kind == "d":
            t = t.double()
    return t.transpose(-2, -1) if transposed else t


# ---- graphs as comparable records ---------------------------------------------------------------
def enc(v):
    """A torch.fx argument in cfx graph JSON's value encoding (docs/graph-json.md)."""
    if isinstance(v, torch.fx.Node):
        return {"node": v.name}
    if v is None or isinstance(v, (bool, str)):
        return v
    if isinstance(v, int):
        return v
    if isinstance(v, float):
        return {"float": "NaN" if math.isnan(v) else ("Infinity" if v == math.inf else
                                                      "-Infinity" if v == -math.inf else v)}
    if isinstance(v, list):
        return [enc(x) for x in v]
    if isinstance(v, tuple):
        return {"tuple": [enc(x) for x in v]}
    if isinstance(v, torch.dtype):
        return {"dtype": str(v)}
    if isinstance(v, torch.device):
        return {"device": str(v)}
    if isinstance(v, torch.memory_format):
        return {"memory_format": str(v)}
    if isinstance(v, torch.layout):
        return {"layout": str(v)}
    return {"unknown": repr(v)}


def target_of(n):
    if n.op != "call_function":
        return n.target
    t = n.target
    if isinstance(t, torch._ops.OpOverload):
        s = t._schema
        return {"op": s.name + ("." + s.overload_name if s.overload_name else "")}
    return {"fn": f"{t.__module__}.{t.__name__}".replace("_operator.", "operator.")}


def val_of(v):
    if isinstance(v, torch.Tensor):
        return ["T", str(v.dtype), list(v.shape), list(v.stride())]
    if isinstance(v, (list, tuple)):
        return [val_of(x) for x in v]
    return v


def cfx_val(v):
    if isinstance(v, dict) and "tensor" in v:
        t = v["tensor"]
        return ["T", t["dtype"], t["shape"], t["stride"]]
    if isinstance(v, dict) and "tuple" in v:
        return [cfx_val(x) for x in v["tuple"]]
    if isinstance(v, list):
        return [cfx_val(x) for x in v]
    return v


def torch_nodes(gm):
    out = []
    for n in gm.graph.nodes:
        out.append({"name": n.name, "op": n.op, "target": target_of(n), "args": enc(list(n.args)),
                    "kwargs": [[k, enc(v)] for k, v in n.kwargs.items()],
                    "val": val_of(n.meta["val"]) if "val" in n.meta else None})
    return out


def cfx_nodes(doc):
    return [{"name": n["name"], "op": n["op"], "target": n["target"], "args": n["args"], "kwargs": n["kwargs"],
             "val": cfx_val(n["meta"]["val"]) if "val" in n.get("meta", {}) else None} for n in doc["nodes"]]


def compare_graphs(mode, want, got):
    for i, (w, g) in enumerate(zip(want, got)):
        for key in ("name", "op", "target", "args", "kwargs", "val"):
            if w[key] != g[key]:
                return f"{mode} graph, node {i} ({w['name']}): {key} is {json.dumps(g[key])}, PyTorch {json.dumps(w[key])}"
    if len(want) != len(got):
        extra = got[len(want):] or want[len(got):]
        return (f"{mode} graph: {len(got)} nodes, PyTorch {len(want)} (first unmatched: "
                f"{'cfx' if len(got) > len(want) else 'PyTorch'} {extra[0]['name']})")
    return None


def compare_output(want, got):
    if str(want.dtype) != got["dtype"] or list(want.shape) != got["shape"]:
        return f"output: {got['dtype']} {got['shape']}, PyTorch {want.dtype} {list(want.shape)}"
    flat = want.contiguous().reshape(-1).tolist()
    for i, (w, g) in enumerate(zip(flat, got["values"])):
        g = float(g) if isinstance(g, str) else g
        if want.is_floating_point():
            if math.isnan(w) and math.isnan(g):
                continue
            rtol, atol = (1e-5, 1e-6) if want.dtype == torch.float32 else (1e-12, 1e-12)
            if not abs(g - w) <= atol + rtol * abs(w):
                return f"output[{i}] = {g!r}, PyTorch {w!r}"
        elif g != w:
            return f"output[{i}] = {g!r}, PyTorch {w!r}"
    return None


def check(name, doc, fn, args):
    if doc.get("error"):
        return "cfx: " + doc["error"]
    for mode in ("real", "fake"):
        gm = make_fx(fn, tracing_mode=mode, _allow_non_fake_inputs=True)(*args)
        problem = compare_graphs(mode, torch_nodes(gm), cfx_nodes(doc[mode]))
        if problem:
            return problem
    return compare_output(fn(*args), doc["output"])


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: check_torch.py DIR")
    d = sys.argv[1]
    models = {name: (fn, mk) for name, fn, mk in gen_models.MODELS}
    files = sorted(f[:-5] for f in os.listdir(d) if f.endswith(".json"))
    passed = failed = 0
    for name in files:
        with open(os.path.join(d, name + ".json")) as f:
            doc = json.load(f)
        try:
            if name in TWINS:
                fn = TWINS[name]
                args = [make_input(tok, i) for i, tok in enumerate(doc["inputs"].split())]
            elif name in models:
                fn, mk = models[name]
                args = mk()
            else:
                raise LookupError("no PyTorch twin (add one to TWINS)")
            problem = check(name, doc, fn, args)
        except Exception as e:  # noqa: BLE001 - a twin's failure is a failed program
            problem = f"PyTorch: {type(e).__name__}: {e}"
        if problem:
            failed += 1
            print(f"FAIL {name}: {problem}")
        else:
            passed += 1
            print(f"ok   {name}")
    missing = sorted(set(TWINS) - set(files))
    for name in missing:
        failed += 1
        print(f"FAIL {name}: no cfx program (add a PROG row to tools/parity/programs.def)")
    print(f"{passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
