#!/usr/bin/python3
"""Golden graphs for tests/tracer/ from PyTorch 2.13's make_fx.

Run from the repo root:  python3 tools/interop/gen_make_fx.py   (or `make goldens`)

Every program below is the Python twin of a C model in tests/tracer/tracer_programs.h (or of
a model in the tracer tests that say so): the same aten operators, called through
torch.ops.aten with the same argument values the C op wrappers put on the boxed stack, so what
reaches __torch_dispatch__ is identical. Each is traced with make_fx in "real" and in "fake"
mode and written, byte for byte as PyTorch prints it, as

  tests/data/tracer_<case>.graph.txt       str(gm.graph)
  tests/data/tracer_<case>.code.txt        gm.code
  tests/data/tracer_<case>.meta_<mode>.txt one line per node (meta_text below)

plus tracer_stack_traces.tsv (which nodes carry meta["stack_trace"] with
record_stack_traces=True) and tracer_errors.tsv (make_fx's error texts).

How cfx's make_fx maps onto 2.13's, i.e. the arguments the twins are traced with:
- fake tracing is make_fx(f, tracing_mode="fake", _allow_non_fake_inputs=True): a C model's
  parameters and constants are real tensors the caller holds, and cfx's fake mode converts
  them as 2.13 does under that flag (export uses it for the same reason);
- module parameters: make_fx traces a function, so its tracer's root is an empty nn.Module
  and PythonKeyTracer.create_arg interns every nn.Parameter the function reads as
  `_param_constantN` (a tensor that is no parameter as `_tensor_constantN`); cfx does the same
  with the tensors of the cfx_module given to make_fx, its parameters.
- cfx has no ShapeEnv. make_fx's fake mode has one, with which data-dependent operators
  (item(), nonzero) produce unbacked symbols; cfx's fake mode behaves like a FakeTensorMode
  without one, which raises DataDependentOutputException / DynamicOutputShapeException.
  The fake-mode error goldens therefore trace with such a mode (make_fx reuses the fake mode
  of fake inputs: detect_fake_mode), which is a 2.13 configuration, not a rewrite.
"""
import os
import sys

import torch
from torch._subclasses.fake_tensor import FakeTensorMode
from torch.fx.experimental.proxy_tensor import make_fx

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import golden  # noqa: E402

aten = torch.ops.aten


# ---- the programs (twins of tests/tracer/tracer_programs.h) ------------------------------------

def basic(x, y):
    z = aten.add.Tensor(x, y)
    s = aten.sum.dim_IntList(z, [1])
    return aten.mul.Tensor(s, s), aten.relu.default(s)


def view_inplace(x):
    v = aten.view.default(x, [-1])
    aten.add_.Tensor(v, v)
    t = aten.t.default(x)
    c = torch.tensor([1.0, 2.0, 3.0, 4.0, 5.0, 6.0])  # cfx_tensor_literal: lift_fresh
    return t, aten.mul.Tensor(v, c)


def max_dim(x):
    a = aten.max.dim(x, 1)
    b = aten.max.dim(x, 0, True)
    return aten.relu.default(a[0]), b[1]


def layer_norm(x, w, b):
    r = aten.native_layer_norm.default(x, [3], w, b, 1e-05)
    q = aten.native_layer_norm.default(r[0], [3], None, None, 0.5)
    return q[0], aten.relu.default(r[2])


C3 = torch.tensor([1.0, 2.0, 3.0])


def constants(x):
    m = aten.mul.Tensor(x, C3)
    a = aten.add.Tensor(m, C3)
    return a, C3


MLP = torch.nn.Module()
MLP.fc1 = torch.nn.Module()
MLP.fc2 = torch.nn.Module()
MLP.fc1.weight = torch.nn.Parameter(torch.randn(4, 3), requires_grad=False)
MLP.fc1.bias = torch.nn.Parameter(torch.randn(4), requires_grad=False)
MLP.fc2.weight = torch.nn.Parameter(torch.randn(2, 4), requires_grad=False)
MLP.fc2.bias = torch.nn.Parameter(torch.randn(2), requires_grad=False)


def mlp(x):
    m = MLP
    h = aten.relu.default(aten.add.Tensor(aten.mm.default(x, aten.t.default(m.fc1.weight)), m.fc1.bias))
    return aten.add.Tensor(aten.mm.default(h, aten.t.default(m.fc2.weight)), m.fc2.bias)


def outputs(x, n, s, b):
    return aten.neg.default(x), n, s, b, x


def scalar(x):
    return 3


def nothing(x):
    aten.add_.Tensor(x, x)


def kwargs(x, y):
    a = aten.add.Tensor(x, y, alpha=2)
    b = aten.add.Tensor(a, y, alpha=1.0)
    c = aten.sub.Tensor(b, y, alpha=1)
    s = aten.sum.dim_IntList(c, [1], True, dtype=torch.float64)
    t = aten.sum.dim_IntList(c, None)
    k = aten.clone.default(x, memory_format=torch.contiguous_format)
    e = aten.empty.memory_format([2], dtype=torch.int64, device=torch.device("cpu"))
    el = aten.empty_like.default(x)
    return s, t, k, e, el


def inplace_input(x, y, z):
    aten.add_.Tensor(x, y)
    aten.add_.Tensor(z, z)
    return aten.mul.Tensor(x, x)


def dup_input(x, y):
    return aten.add.Tensor(x, y)


def passthrough(x, y):
    return x, aten.cos.default(y), x


def literal_item(x):
    """item() of one-element literals: proxy_call's constant propagation burns the values in
    (as alpha: cfx has no wrapped numbers, so a Scalar argument is where a C model uses one)."""
    c = torch.tensor([2.0])
    d = aten.add.Tensor(c, c)
    a = aten.add.Tensor(x, x, alpha=aten._local_scalar_dense.default(c))
    b = aten.add.Tensor(x, x, alpha=aten._local_scalar_dense.default(d))
    return a, b


def literal_max(x):
    """The constants of a tuple result: each getitem of max.dim over a one-element literal has
    its own, so item() of one is known too."""
    c = torch.tensor([[3.0]])
    m = aten.max.dim(c, 1)
    return aten.add.Tensor(x, x, alpha=aten._local_scalar_dense.default(m[0]))


def literal_inplace(x):
    """An in-place op on constants updates the constant: item() after it sees the sum."""
    c = torch.tensor([1.0])
    aten.add_.Tensor(c, torch.tensor([2.0]))
    return aten.add.Tensor(x, x, alpha=aten._local_scalar_dense.default(c))


G1 = torch.tensor([5.0])


def global_item(x):
    """item() of a tensor the trace does not track (a global): proxy_call's all_constant holds
    for it, so its value is computed for real and burnt in, in both modes."""
    return aten.add.Tensor(x, x, alpha=aten._local_scalar_dense.default(G1))


def offset_input(x):
    """A view input with a storage offset: fake tracing keeps it in val, real tracing's val is
    empty_strided(shape, stride) (offset 0)."""
    return aten.neg.default(x)


def embedding_bag_last(w, i, o):
    """F.embedding_bag's front end with include_last_offset, summing then averaging: it records
    _embedding_bag_forward_only, whose bag_size is sized like offsets in sum mode (the CPU
    kernel's make_bag_size without requires_grad) and, in fake mode, in every mode (its meta);
    the fake max_indices keeps the bag count, where the CPU kernel's follows bag_size."""
    s = aten.embedding_bag.padding_idx(w, i, o, False, 0, False, None, True, None)
    m = aten.embedding_bag.padding_idx(w, i, o, False, 1, False, None, True, None)
    return s[0], s[1], s[2], s[3], m[2]


# Operators of our own (tests/tracer/test_tracer_custom.c defines the same three in cfx):
# defaults of every kind, a kwarg-only tail, an int result and a Tensor[] result.
LIB = torch.library.Library("cfxtest", "DEF")
LIB.define('scale(Tensor x, int a=1, float b=2., *, str mode="sum", int[] dims=[], '
           'ScalarType? dtype=None) -> Tensor')
LIB.define("count(Tensor x) -> int")
LIB.define("split2(Tensor x) -> Tensor[]")


def _scale(x, a=1, b=2.0, *, mode="sum", dims=(), dtype=None):
    return x.clone()


LIB.impl("scale", _scale, "CompositeExplicitAutograd")
LIB.impl("count", lambda x: x.numel(), "CompositeExplicitAutograd")
LIB.impl("split2", lambda x: [x.clone(), x.clone()], "CompositeExplicitAutograd")
# A CompositeImplicitAutograd kernel is a decomposition: make_fx records what it calls.
LIB.define("twice(Tensor x) -> Tensor")
LIB.impl("twice", lambda x: aten.add.Tensor(x, x), "CompositeImplicitAutograd")


def custom(x):
    ops = torch.ops.cfxtest
    a = ops.scale.default(x)
    b = ops.scale.default(a, 1, 3.0)
    c = ops.scale.default(b, 2)
    d = ops.scale.default(c, 1, 2.0, mode="mean")
    e = ops.scale.default(d, 1, 2.0, dims=[0])
    f = ops.scale.default(e, 1, 2.0, dtype=torch.float64)
    g = ops.scale.default(f, 5, 2.0, mode="sum", dims=[], dtype=None)
    n = ops.count.default(g)
    s = ops.split2.default(g)
    return s[1], n


def composite(x):
    return aten.relu.default(torch.ops.cfxtest.twice.default(x))


def t23(base):
    """test_tensor(2, 3, base) of tracer_programs.h (the values never reach a graph)."""
    return torch.tensor([base + i * 0.25 - 0.5 for i in range(6)]).reshape(2, 3)


X23 = t23(0.0)
Y23 = t23(1.0)
Z23 = t23(2.0)
W3 = torch.tensor([1 + i * 0.25 - 0.5 for i in range(3)])
B3 = torch.tensor([2 + i * 0.25 - 0.5 for i in range(3)])
OFF = torch.arange(12.0).reshape(4, 3)[1:3]  # sizes (2, 3), strides (3, 1), offset 3
W53 = torch.tensor([i * 0.5 - 3.0 for i in range(15)]).reshape(5, 3)
BAG_IDX = torch.tensor([0, 2, 4, 1, 3, 2])
BAG_OFF = torch.tensor([0, 2, 2, 5])

CASES = {
    # name: (function, args, has meta goldens)
    "basic": (basic, (X23, Y23), True),
    "view_inplace": (view_inplace, (X23,), True),
    "max_dim": (max_dim, (X23,), True),
    "layer_norm": (layer_norm, (X23, W3, B3), True),
    "constants": (constants, (X23,), True),
    "mlp": (mlp, (X23,), True),
    "outputs": (outputs, (X23, 3, 1.5, True), True),
    "scalar": (scalar, (X23,), False),
    "nothing": (nothing, (X23,), False),
    "kwargs": (kwargs, (X23, Y23), False),
    "inplace_input": (inplace_input, (X23, Y23, Z23), False),
    "dup_input": (dup_input, (X23, X23), False),
    "passthrough": (passthrough, (X23, Y23), False),
    "literal_item": (literal_item, (X23,), True),
    "literal_max": (literal_max, (X23,), False),
    "global_item": (global_item, (X23,), False),
    "literal_inplace": (literal_inplace, (X23,), False),
    "offset_input": (offset_input, (OFF,), True),
    "embedding_bag_last": (embedding_bag_last, (W53, BAG_IDX, BAG_OFF), True),
    "custom": (custom, (X23,), True),
    "composite": (composite, (X23,), False),
}

# Programs whose nodes' stack_trace keys are recorded (record_stack_traces=True).
STACK_CASES = ["basic", "view_inplace", "max_dim", "mlp"]


# ---- meta as text ------------------------------------------------------------------------------

def fmt_tuple(xs):
    xs = list(xs)
    return "(" + ", ".join(str(int(v)) for v in xs) + ("," if len(xs) == 1 else "") + ")"


def fmt_val(v):
    """node.meta["val"]: a tensor by its fields (sizes, strides, dtype, device, offset), so a
    FakeTensor and a real tensor print alike; containers keep their brackets."""
    if isinstance(v, torch.Tensor):
        return (f"Tensor(size={fmt_tuple(v.shape)}, stride={fmt_tuple(v.stride())}, dtype={v.dtype}, "
                f"device={v.device}, storage_offset={v.storage_offset()})")
    if isinstance(v, tuple):
        return "(" + ", ".join(fmt_val(e) for e in v) + ("," if len(v) == 1 else "") + ")"
    if isinstance(v, list):
        return "[" + ", ".join(fmt_val(e) for e in v) + "]"
    return repr(v)


def meta_text(gm):
    """One line per node: name|sorted meta keys|val|repr(tensor_meta), '-' where absent."""
    lines = []
    for n in gm.graph.nodes:
        keys = ",".join(sorted(n.meta.keys())) or "-"
        val = fmt_val(n.meta["val"]) if "val" in n.meta else "-"
        tm = repr(n.meta["tensor_meta"]) if "tensor_meta" in n.meta else "-"
        lines.append(f"{n.name}|{keys}|{val}|{tm}")
    return "\n".join(lines) + "\n"


# ---- tracing -----------------------------------------------------------------------------------

def trace(fn, args, mode, **kw):
    return make_fx(fn, tracing_mode=mode, _allow_non_fake_inputs=True, **kw)(*args)


def as_forward(fn):
    """fn under the name `forward`: with record_stack_traces, make_fx keeps only the frames of
    functions named forward (_record_forward_stack_traces_only)."""
    g = type(fn)(fn.__code__.replace(co_name="forward"), fn.__globals__, "forward", fn.__defaults__,
                 fn.__closure__)
    return g


def stack_rows():
    rows = []
    for case in STACK_CASES:
        fn, args, _ = CASES[case]
        for mode in ("real", "fake"):
            gm = trace(as_forward(fn), args, mode, record_stack_traces=True)
            for n in gm.graph.nodes:
                has = "stack_trace" in n.meta and bool(n.meta["stack_trace"])
                rows.append(f"{case}\t{mode}\t{n.name}\t{int(has)}")
    return "\n".join(rows) + "\n"


def error_rows():
    rows = []

    def record(key, thunk):
        try:
            thunk()
        except Exception as e:  # noqa: BLE001 - the text is the golden
            rows.append(f"{key}\t{e}")
            return
        raise AssertionError(f"{key}: no error")

    record("too_few", lambda: make_fx(basic)(X23))
    record("too_many", lambda: make_fx(basic)(X23, Y23, X23))
    record("bad_mode", lambda: make_fx(basic, tracing_mode="7")(X23, Y23))

    def item(x):
        return aten._local_scalar_dense.default(aten.sum.dim_IntList(x, None))

    def nonzero(x):
        return aten.nonzero.default(x)

    # real tracing: proxy_call refuses data-dependent ops on real tensors
    record("item_real", lambda: make_fx(item, tracing_mode="real")(X23))
    # fake tracing with a fake mode that has no ShapeEnv (see the module docstring)
    record("item_fake", lambda: make_fx(item, tracing_mode="fake")(FakeTensorMode().from_tensor(X23)))
    record("nonzero_fake", lambda: make_fx(nonzero, tracing_mode="fake")(FakeTensorMode().from_tensor(X23)))
    return "\n".join(rows) + "\n"


def main():
    if not os.path.isdir(golden.OUT):
        sys.exit("run from the repo root")
    torch.manual_seed(0)
    for case, (fn, args, has_meta) in CASES.items():
        texts = {}
        for mode in ("real", "fake"):
            gm = trace(fn, args, mode)
            texts[mode] = (str(gm.graph), gm.code)
            if has_meta:
                golden.write_text(f"tracer_{case}.meta_{mode}.txt", meta_text(gm))
        # the printed graph and code do not depend on the mode: one golden for both
        assert texts["real"] == texts["fake"], case
        golden.write_text(f"tracer_{case}.graph.txt", texts["real"][0])
        golden.write_text(f"tracer_{case}.code.txt", texts["real"][1])
    golden.write_text("tracer_stack_traces.tsv", stack_rows())
    golden.write_text("tracer_errors.tsv", error_rows())


if __name__ == "__main__":
    main()
