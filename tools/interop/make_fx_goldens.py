#!/usr/bin/python3
"""Golden graphs for tests/tracer/ from Debian's PyTorch 1.13 make_fx.

Run from the repo root:  /usr/bin/python3 tools/interop/make_fx_goldens.py

Every program below is the Python twin of a C model in tests/tracer/tracer_programs.h: the
same aten operators, called through torch.ops.aten with the same argument values the C op
wrappers put on the boxed stack (so what reaches __torch_dispatch__ is identical). Each is
traced with make_fx in "real" and "fake" mode, and written as

  tests/data/tracer_<case>.graph.txt   str(gm.graph)
  tests/data/tracer_<case>.code.txt    gm.code
  tests/data/tracer_<case>.meta_<mode>.txt   one line per node: name | meta keys | val | tensor_meta

cfx prints graphs as PyTorch 2.x does, so the 1.13 text is carried to 2.x exactly as
tools/interop/dump_fx.py does it (imported from there: `[num_users=N]`, 2.x's node naming,
2.x's freeing of unused values in python_code). The graph text of a program is the same in
both modes; the script checks that wherever 1.13 can trace the program in fake mode.

Two programs 1.13 cannot trace in fake mode, because its FakeTensorMode refuses real tensors
that are not inputs ("Please convert all Tensors to FakeTensors first"): `constants` (global
tensors used by ops) and `mlp` (module parameters). cfx converts such tensors (see
tracer/make_fx.c); their goldens come from real mode only and the C test expects the same
graph text in both modes.

Module parameters: make_fx traces a function, so 1.13 would intern nn.Parameters that are not
on the (empty) tracer root as `_param_constantN`. FX's rule for parameters found in the root
is `get_attr <qualified name>`; the holder tracer below applies it with the model's parameter
holder as the root, which is what cfx's tracer does with the cfx_module passed to make_fx.
"""
import os
import sys

import torch
import torch.fx.experimental.proxy_tensor as proxy_tensor
from torch.fx.experimental.proxy_tensor import make_fx

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dump_fx  # noqa: E402  (installs 2.x naming into torch.fx)

OUT = "tests/data"
aten = torch.ops.aten


def install(root, qualname, p):
    *path, last = qualname.split(".")
    mod = root
    for atom in path:
        if not hasattr(mod, atom):
            mod.add_module(atom, torch.nn.Module())
        mod = getattr(mod, atom)
    if not hasattr(mod, last):
        mod.register_parameter(last, p)


class HolderTracer(proxy_tensor.PythonKeyTracer):
    """PythonKeyTracer whose parameters are looked up in HOLDER, FX's get_attr rule."""

    holder = None

    def create_arg(self, a):
        if isinstance(a, torch.nn.Parameter) and HolderTracer.holder is not None:
            for name, p in HolderTracer.holder.named_parameters():
                if a is p:
                    install(self.root, name, p)  # GraphModule copies it from the root
                    return self.create_node("get_attr", name, (), {})
        return super().create_arg(a)


proxy_tensor.PythonKeyTracer = HolderTracer


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


X23 = torch.randn(2, 3)
Y23 = torch.randn(2, 3)

CASES = {
    # name: (function, args, holder, fake mode traceable by 1.13)
    "basic": (basic, (X23, Y23), None, True),
    "view_inplace": (view_inplace, (X23,), None, True),
    "max_dim": (max_dim, (X23,), None, True),
    "layer_norm": (layer_norm, (X23, torch.randn(3), torch.randn(3)), None, True),
    "constants": (constants, (X23,), None, False),
    "mlp": (mlp, (X23,), MLP, False),
    "outputs": (outputs, (X23, 3, 1.5, True), None, True),
    "scalar": (scalar, (X23,), None, True),
    "nothing": (nothing, (X23,), None, True),
    "kwargs": (kwargs, (X23, Y23), None, True),
    "inplace_input": (inplace_input, (X23, Y23, torch.randn(2, 3)), None, True),
    "dup_input": (dup_input, (X23, X23), None, True),
    "passthrough": (passthrough, (X23, Y23), None, True),
    "custom": (custom, (X23,), None, True),
}

META_CASES = ["basic", "view_inplace", "max_dim", "layer_norm", "outputs", "custom"]


# ---- output ------------------------------------------------------------------------------------

def write(name, text):
    with open(os.path.join(OUT, name), "w", newline="") as f:
        f.write(text)


def fmt_tuple(xs):
    xs = list(xs)
    return "(" + ", ".join(str(int(v)) for v in xs) + ("," if len(xs) == 1 else "") + ")"


def fmt_val(v):
    if v is None:
        return "-"
    if isinstance(v, torch.Tensor):
        return (f"Tensor(size={fmt_tuple(v.shape)}, stride={fmt_tuple(v.stride())}, dtype={v.dtype}, "
                f"device={v.device}, storage_offset={v.storage_offset()})")
    return repr(v)


def meta_text(gm):
    lines = []
    for n in gm.graph.nodes:
        keys = ",".join(k for k in sorted(n.meta.keys()) if k in ("val", "tensor_meta")) or "-"
        tm = n.meta.get("tensor_meta")
        lines.append(f"{n.name}|{keys}|{fmt_val(n.meta.get('val'))}|{tm!r}" if tm is not None
                     else f"{n.name}|{keys}|{fmt_val(n.meta.get('val'))}|-")
    return "\n".join(lines) + "\n"


def trace(fn, args, holder, mode):
    HolderTracer.holder = holder
    torch.manual_seed(0)
    return make_fx(fn, tracing_mode=mode)(*args)


def main():
    if not os.path.isdir(OUT):
        sys.exit("run from the repo root")
    for case, (fn, args, holder, fake_ok) in CASES.items():
        gm = trace(fn, args, holder, "real")
        graph = dump_fx.to_2x_graph(str(gm.graph))
        code = dump_fx.to_2x_code(gm.graph, gm.code)
        write(f"tracer_{case}.graph.txt", graph)
        write(f"tracer_{case}.code.txt", code)
        if case in META_CASES:
            write(f"tracer_{case}.meta_real.txt", meta_text(gm))
        if fake_ok:
            fgm = trace(fn, args, holder, "fake")
            assert dump_fx.to_2x_graph(str(fgm.graph)) == graph, case
            assert dump_fx.to_2x_code(fgm.graph, fgm.code) == code, case
            if case in META_CASES:
                write(f"tracer_{case}.meta_fake.txt", meta_text(fgm))
        else:
            try:
                trace(fn, args, holder, "fake")
                raise AssertionError(f"{case}: 1.13 traced it in fake mode after all")
            except Exception as e:  # noqa: BLE001 - the documented 1.13 refusal
                assert "Please convert all Tensors to FakeTensors first" in str(e), e
    # Error texts (tests/tracer/test_errors.c)
    rows = []
    try:
        make_fx(basic)(X23)
    except RuntimeError as e:
        rows.append(f"too_few\t{e}")
    try:
        make_fx(basic)(X23, Y23, X23)
    except RuntimeError as e:
        rows.append(f"too_many\t{e}")

    def item(x):
        return aten._local_scalar_dense.default(aten.sum.dim_IntList(x, None))

    for mode in ("real", "fake"):
        try:
            make_fx(item, tracing_mode=mode)(X23)
        except RuntimeError as e:
            rows.append(f"item_{mode}\t{e}")
    write("tracer_errors.tsv", "\n".join(rows) + "\n")


if __name__ == "__main__":
    main()
