#!/usr/bin/python3
"""Golden files for the graph IR (tests/ir/), from Debian's PyTorch 1.13 torch.fx.

Run from the repo root:  /usr/bin/python3 tools/interop/dump_fx.py

Graphs are built by hand with torch.fx.Graph, naming operator nodes as make_fx does (after
the overload packet: `add`, `sum` -> `sum_1`), and their str(graph) and python_code('self').src
are written to tests/data/ir_<case>.graph.txt / .code.txt, byte for byte. cfx follows
PyTorch 2.x, so the 1.13 text is transformed by the two deltas found between 1.13 and 2.x
(torch/fx/node.py and torch/fx/graph.py @0031cb7b):

  1. format_node writes `[num_users=N]` where 1.13 wrote `[#users=N]`;
  2. python_code's delete_unused_values also frees a value nobody uses right after the
     statement that computes it (`getitem_2 = x[2];  getitem_2 = None`).

Names follow 2.x's _Namespace.create_name, which differs from 1.13's (a per-base high-water
counter; `None` is a legal node name): a verbatim port of the 2.x class (below) replaces
torch.fx.graph._Namespace while the graphs are built and printed, so node names and
python_code's local/global names are 2.x's. ir_names.tsv holds both columns, the 2.x one from
the port, the 1.13 one from torch's own class.
"""
import builtins
import keyword
import math
import operator
import os
import re
import sys

import torch
import torch.fx._pytree as fx_pytree
import torch.utils._pytree as pytree
from torch.fx import Graph
from torch.fx.passes.shape_prop import TensorMetadata

OUT = "tests/data"
aten = torch.ops.aten


def write(name, text):
    with open(os.path.join(OUT, name), "w", newline="") as f:
        f.write(text)


def to_2x_graph(s):
    return s.replace("[#users=", "[num_users=")


def to_2x_code(g, src):
    lines = src.split("\n")
    for n in g.nodes:
        if n.op in ("placeholder", "output") or len(n.users):
            continue
        prefix = "    " + n.name + " = "
        hits = [i for i, l in enumerate(lines) if l.startswith(prefix)]
        assert len(hits) == 1, (n.name, hits)
        i = hits[0]
        if ";  " in lines[i] and lines[i].endswith(" = None"):
            lines[i] = lines[i][: -len(" = None")] + " = " + n.name + " = None"
        else:
            lines[i] = lines[i] + ";  " + n.name + " = None"
    return "\n".join(lines)


def op(g, target, *args, name=None, **kwargs):
    """call_function named as make_fx names it: after the overload packet."""
    if name is None and isinstance(target, torch._ops.OpOverload):
        name = g._target_to_str(target.overloadpacket.__name__)
    return g.create_node("call_function", target, tuple(args), kwargs, name=name)


def dump_graph(case, g):
    write(f"ir_{case}.graph.txt", to_2x_graph(str(g)))
    write(f"ir_{case}.code.txt", to_2x_code(g, g.python_code("self").src))


# ---- graphs (mirrored in tests/ir/test_print.c) ------------------------------------------------

def g_basic():
    # make_fx(f1) of spec 2.5 P1: z = x + y; s = z.sum(dim=1); return s * 2, relu(s)
    g = Graph()
    x = g.placeholder("x_1")
    y = g.placeholder("y_1")
    add = op(g, aten.add.Tensor, x, y)
    s = op(g, aten.sum.dim_IntList, add, [1])
    mul = op(g, aten.mul.Tensor, s, 2)
    relu = op(g, aten.relu.default, s)
    g.output((mul, relu))
    return g


def g_kwargs():
    g = Graph()
    x = g.placeholder("x")
    add = op(g, aten.add.Tensor, x, x, alpha=2)
    div = op(g, aten.div.Tensor_mode, add, x, rounding_mode="floor")
    nz = op(g, aten.new_zeros.default, div, [2, 3], dtype=torch.float32, layout=torch.strided,
            device=torch.device("cpu"), pin_memory=False)
    full = op(g, aten.full.default, [2], 1e-05, dtype=torch.float64)
    g.output([div, nz, full])
    return g


def g_layer_norm():
    g = Graph()
    x = g.placeholder("x")
    ln = op(g, aten.native_layer_norm.default, x, [3], None, None, 1e-05)
    g0 = op(g, operator.getitem, ln, 0)
    op(g, operator.getitem, ln, 1)
    op(g, operator.getitem, ln, 2)
    g.output(g0)
    return g


def g_literals():
    g = Graph()
    x = g.placeholder("x")
    a = op(g, aten.cat.default, [x, x], 0, name="cat")
    b = op(g, aten.add.Tensor, a,
           [(1, 2), [3, [4.5, -6]]], None, True, False, [], (), (7,), ((),), [[]],
           name="lit")
    c = op(g, aten.add.Tensor, b,
           "it's", 'say "hi"', "both ' and \"", "back\\slash", "new\nline\ttab", "h\u00e9llo", "",
           name="strs")
    d = op(g, aten.add.Tensor, c,
           0.1, 1e-05, 1e20, 1e16, 1e-4, 123456789.0, -0.0, math.inf, -math.inf, math.nan, 3.0, 0.30000000000000004,
           -9223372036854775807, 0,
           name="nums")
    e = op(g, aten.add.Tensor, d,
           [torch.float32, torch.int64, torch.bool, torch.float64, torch.int32],
           torch.device("cpu"), torch.device("cpu", 0), torch.device("meta"),
           torch.contiguous_format, torch.channels_last, torch.preserve_format, torch.strided,
           name="types")
    g.output((e, [torch.device("cpu"), "s", 1.5, None, (x,)]))
    return g


def g_modules():
    g = Graph()
    x = g.placeholder("x")
    c0 = g.get_attr("_tensor_constant0")
    lf = op(g, aten.lift_fresh_copy.default, c0)
    w = g.get_attr("layers.0.weight")
    m = g.call_module("layer1.conv", (x,))
    s = g.call_module("seq.0", (m, w), {"flag": True})
    r = g.call_method("relu", (s,))
    v = g.call_method("view", (r, -1), {"size": [2, 3]})
    a = g.call_method("__add__", (v, lf))
    cc = g.call_method("camelCaseMethod", (a,))
    g.output(cc)
    return g


def g_operators():
    g = Graph()
    x = g.placeholder("x")
    ss = op(g, aten.sym_size.int, x, 0, name="sym_size")
    ss1 = op(g, aten.sym_size.int, x, 1, name="sym_size")
    mul = op(g, operator.mul, ss, ss1)
    fd = op(g, operator.floordiv, mul, 2)
    neg = op(g, operator.neg, fd)
    lt = op(g, operator.lt, neg, 3)
    gi = op(g, operator.getitem, x, (0, 1))
    op(g, torch._assert, lt, "msg 'quoted'")
    ga = op(g, getattr, x, "shape")
    view = op(g, aten.view.default, gi, [mul, -1])
    g.output((view, ga))
    return g


def g_outputs_list():
    g = Graph()
    x = g.placeholder("x")
    lst = g.placeholder("lst")
    cos = op(g, aten.cos.default, x)
    nz = op(g, aten.new_zeros.default, x, [4], dtype=torch.float32, layout=torch.strided,
            device=torch.device("cpu"), pin_memory=False)
    g.output([cos, 1, nz, 7])
    return g


def g_output_single():
    g = Graph()
    x = g.placeholder("x")
    t = op(g, aten.t.default, x)
    g.output(t)
    return g


def g_output_none():
    g = Graph()
    x = g.placeholder("x")
    op(g, aten.add_.Tensor, x, 1)
    g.output(None)
    return g


def g_placeholders():
    g = Graph()
    a = g.placeholder("*args")
    c = g.placeholder("camelCase")
    m = g.placeholder("__magic__")
    d = g.placeholder("x", default_value=1.5)
    e = g.placeholder("y", default_value=None)
    s = g.placeholder("z", default_value="str")
    t = g.placeholder("w", default_value=(1, [2]))
    k = g.placeholder("**kwargs")
    g.output((a, c, m, d, e, s, t, k))
    return g


def g_empty():
    return Graph()


def g_names():
    g = Graph()
    x = g.placeholder("x")
    nodes = [x]
    for cand in ["if", "print", "torch", "sum", "sum", "add", "add_1", "add_5", "add", "1abc", "foo.bar",
                 "x_0", "x_0", "x__3", "Tensor"]:
        nodes.append(op(g, aten.relu.default, nodes[-1], name=cand))
    g.output(nodes[-1])
    return g


def g_inserting():
    g = Graph()
    x = g.placeholder("x")
    a = op(g, aten.add.Tensor, x, x)
    with g.inserting_after(x):
        b = op(g, aten.mul.Tensor, x, x)
        c = op(g, aten.sub.Tensor, x, x)
    with g.inserting_before(None):
        g.placeholder("first")
        g.placeholder("second")
    with g.inserting_before(a):
        d = op(g, aten.cos.default, b)
    g.output((a, b, c, d))
    return g


def g_view_inplace():
    # spec 2.5 P2: v = x.view(-1); v.add_(1); t = x.t(); c = tensor([1,2,3]); return t, v * c
    g = Graph()
    x = g.placeholder("x_1")
    v = op(g, aten.view.default, x, [-1])
    a = op(g, aten.add_.Tensor, v, 1)
    t = op(g, aten.t.default, x)
    c = g.get_attr("_tensor_constant0")
    lf = op(g, aten.lift_fresh_copy.default, c)
    mul = op(g, aten.mul.Tensor, a, lf)
    g.output((t, mul))
    return g


def g_globals():
    # globals named through python_code's name space: a node already holds `math_sqrt`
    g = Graph()
    x = g.placeholder("x")
    a = op(g, aten.relu.default, x, name="math_sqrt")
    b = op(g, math.sqrt, a)
    c = op(g, operator.truth, b)
    d = op(g, len, c)
    e = op(g, math.sqrt, d)
    g.output((d, e))
    return g


GRAPHS = {
    "basic": g_basic,
    "kwargs": g_kwargs,
    "layer_norm": g_layer_norm,
    "literals": g_literals,
    "modules": g_modules,
    "operators": g_operators,
    "outputs_list": g_outputs_list,
    "output_single": g_output_single,
    "output_none": g_output_none,
    "placeholders": g_placeholders,
    "empty": g_empty,
    "names": g_names,
    "inserting": g_inserting,
    "view_inplace": g_view_inplace,
    "globals": g_globals,
}


# ---- def-use bookkeeping (tests/ir/test_graph.c) -------------------------------------------------

def users_scenario():
    """Order of users / inputs after args changes, replace_all_uses_with, erase. (insert_arg
    is 2.x only and is tested against 2.x's source in the C test.)"""
    out = []

    def show(tag, *nodes):
        for n in nodes:
            out.append(f"{tag} {n.name} users=[{', '.join(u.name for u in n.users)}] "
                       f"inputs=[{', '.join(i.name for i in n.all_input_nodes)}]")

    g = Graph()
    x = g.placeholder("x")
    y = g.placeholder("y")
    a = op(g, aten.add.Tensor, x, y)
    b = op(g, aten.mul.Tensor, x, x)
    c = op(g, aten.sub.Tensor, y, x, alpha=a)
    g.output((a, b, c))
    show("built", x, y, a, b, c)
    a.args = (y, b)              # a leaves x's users, re-joins y's at the end
    show("set_args", x, y, a, b)
    c.kwargs = {}                # c drops a
    show("set_kwargs", a, c)
    res = x.replace_all_uses_with(y, lambda u: u.name != "sub")
    out.append("rauw " + ", ".join(n.name for n in res))
    show("rauw", x, y, b, c)
    res = y.replace_all_uses_with(x)
    out.append("rauw2 " + ", ".join(n.name for n in res))
    show("rauw2", x, y)
    c.update_arg(0, [b, (a, b)])
    show("update_arg", a, b, c)
    try:
        g.erase_node(x)
    except RuntimeError as e:
        out.append("erase_refused " + str(e))
    out.append("graph\n" + to_2x_graph(str(g)))
    return "\n".join(out) + "\n"


# ---- lint and erase messages ----------------------------------------------------------------------

def lint_message(g):
    try:
        g.lint()
    except RuntimeError as e:
        return to_2x_graph(str(e))
    return "OK"


def lint_cases():
    cases = {}
    # used before defined: move a consumer before its producer
    g = Graph()
    x = g.placeholder("x")
    a = op(g, aten.relu.default, x)
    b = op(g, aten.cos.default, a)
    g.output(b)
    a.prepend(b)
    cases["before_defined"] = lint_message(g)
    # an argument from another graph
    g2 = Graph()
    z = g2.placeholder("z")
    g = Graph()
    x = g.placeholder("x")
    a = op(g, aten.add.Tensor, x, z)
    g.output(a)
    cases["other_graph"] = lint_message(g)
    # a name assigned around the name space
    g = Graph()
    x = g.placeholder("x")
    a = op(g, aten.relu.default, x)
    b = op(g, aten.cos.default, a)
    g.output(b)
    b.name = "relu"
    cases["redefined"] = lint_message(g)
    # a node of another graph in this graph's list
    g = Graph()
    x = g.placeholder("x")
    a = op(g, aten.relu.default, x)
    g.output(a)
    other = Graph()
    a.graph = other
    cases["foreign_node"] = lint_message(g)
    # erase refused
    g = Graph()
    x = g.placeholder("x")
    a = op(g, aten.add.Tensor, x, x)
    b = op(g, aten.mul.Tensor, x, a)
    g.output(b)
    try:
        g.erase_node(x)
    except RuntimeError as e:
        cases["erase_refused"] = str(e)
    for k, v in cases.items():
        write(f"ir_lint_{k}.txt", v)


# ---- dead code ------------------------------------------------------------------------------------

def dce_case():
    g = Graph()
    x = g.placeholder("x")
    a = op(g, aten.add.Tensor, x, x)
    b = op(g, aten.mul.Tensor, a, a)
    op(g, aten.relu.default, b)                  # dead chain: relu <- mul <- add
    op(g, torch._assert, True, "msg")           # side effect: stays
    op(g, operator.getitem, x, 0)                # dead
    cos = op(g, aten.cos.default, x)
    g.output(cos)
    write("ir_dce_before.graph.txt", to_2x_graph(str(g)))
    changed = g.eliminate_dead_code()
    assert changed
    write("ir_dce_after.graph.txt", to_2x_graph(str(g)))
    write("ir_dce_after.code.txt", to_2x_code(g, g.python_code("self").src))


# ---- names ----------------------------------------------------------------------------------------

# torch/fx/graph.py @0031cb7b, verbatim (the dicts built as that file builds them).
_illegal_names = {k: object() for k in keyword.kwlist}
_illegal_names.update(builtins.__dict__)
for _n, _o in [("inf", math.inf), ("nan", math.nan), ("NoneType", type(None)), ("torch", torch),
               ("device", torch.device), ("fx_pytree", fx_pytree), ("pytree", pytree)]:
    _illegal_names[_n] = _o
_illegal_char_regex = re.compile("[^0-9a-zA-Z_]+")
_name_regex = re.compile(r"^([a-zA-Z_][0-9a-zA-Z_]*?)(?:_(\d+))?$")


class Namespace2x:
    def __init__(self):
        self._obj_to_name = {}
        self._used_names = set()
        self._base_count = {}

    def create_name(self, candidate, obj):
        if obj is not None and obj in self._obj_to_name:
            return self._obj_to_name[obj]
        match = _name_regex.match(candidate)
        if match is None:
            candidate = _illegal_char_regex.sub("_", candidate)
            if not candidate:
                candidate = "_unnamed"
            if candidate[0].isdigit():
                candidate = f"_{candidate}"
            match = _name_regex.match(candidate)
            assert match is not None
        base, num = match.group(1, 2)
        if num is None or candidate in self._used_names:
            num = self._base_count.get(candidate, 0)
            if _illegal_names.get(candidate, obj) is not obj:
                num += 1
                candidate = f"{base}_{num}"
        else:
            num = int(num)
        while candidate in self._used_names:
            num += 1
            candidate = f"{base}_{num}"
        self._used_names.add(candidate)
        self._base_count[base] = num
        if obj is not None:
            self._obj_to_name[obj] = candidate
        return candidate

    def associate_name_with_obj(self, name, obj):
        maybe_existing = self._obj_to_name.setdefault(obj, name)
        assert maybe_existing is name, "obj is already associated"


Namespace113 = torch.fx.graph._Namespace
torch.fx.graph._Namespace = Namespace2x


NAME_SEQUENCES = [
    ["add", "add", "add_1", "add_5", "add"],
    ["sum", "sum"],
    ["1abc", "foo.bar", "if", "print", "torch"],
    ["x_0", "x_0", "x__3", "Tensor", "relu"],
    ["None", "None", "True", "False", "class", "getattr", "inf", "nan", "NoneType", "device",
     "pytree", "fx_pytree", "__name__", "copyright", "ExceptionGroup", "match", "_"],
    ["", "", "...", "a b  c", "h\u00e9", "_", "__", "_1", "__1", "1", "123abc", "a-b", "a--b_2", "9_9"],
    ["camelCase", "a_3", "a", "a", "a_1", "a_2", "a"],
    ["add_01", "add_01", "add_1", "add", "add_007"],
    ["x_1234567890", "x_1234567890", "x", "x_999999999", "x_999999999"],
    ["conv2d", "conv2d", "conv2d_1", "layer_1_2", "layer_1_2", "layer_1", "layer_1"],
    ["sum", "sum_1", "sum_1", "sum"],
    ["relu", "relu", "relu", "relu", "relu", "relu_2", "relu"],
    ["getitem", "getitem", "getitem_1", "getitem"],
    ["x_5000", "x", "x", "x_100000", "x"],
]


def names_table():
    rows = ["# seq\tcandidate\tpytorch_2x\tpytorch_1_13"]
    for si, seq in enumerate(NAME_SEQUENCES):
        ns2 = Namespace2x()
        ns1 = Namespace113()
        for cand in seq:
            r2 = ns2.create_name(cand, None)
            try:
                r1 = ns1.create_name(cand, None)
            except Exception as e:  # 1.13 indexes candidate[0] on ""
                r1 = "<" + type(e).__name__ + ">"
            rows.append(f"{si}\t{cand}\t{r2}\t{r1}")
    write("ir_names.tsv", "\n".join(rows) + "\n")

    g = Graph()
    rows = ["# string\t_target_to_str"]
    for s in ["camelCaseMethod", "__add__", "ALL_CAPS", "mod.pascalCase", "getHTTPResponse", "__", "___x___",
              "add_", "sum", "_foreach_add", "aB", "Ab", "x__y__", "__init__"]:
        rows.append(f"{s}\t{g._target_to_str(s)}")
    write("ir_target_to_str.tsv", "\n".join(rows) + "\n")


# ---- TensorMetadata ---------------------------------------------------------------------------------

MEMORY_FORMATS = [torch.contiguous_format, torch.channels_last, torch.channels_last_3d]


def tensor_meta_table():
    """TensorMetadata reprs. memory_format is the first of MEMORY_FORMATS the tensor is
    contiguous in (1.13 iterates a set, whose order is not fixed; cfx fixes this order)."""
    base = torch.zeros(2 * 3 * 4 * 5 * 6)
    cases = [
        ([2, 3], None),
        ([3, 2], "t"),
        ([2, 3, 4, 5], "cl"),
        ([2, 3, 4, 5, 6], "cl3d"),
        ([2, 1, 1, 1], None),
        ([2, 1, 1, 1], "cl"),
        ([3], None),
        ([], None),
        ([0, 3], None),
        ([3, 4], "expand"),
        ([2, 3, 4, 5], "permute"),
        ([4, 3], "slice"),
    ]
    rows = ["# sizes\tstrides\tdtype\trequires_grad\trepr"]
    for sizes, how in cases:
        n = 1
        for s in sizes:
            n *= s
        t = base[:n].reshape(sizes) if sizes else torch.tensor(1.0)
        if how == "t":
            t = base[:6].reshape(2, 3).t()
        elif how == "cl":
            t = t.contiguous(memory_format=torch.channels_last)
        elif how == "cl3d":
            t = t.contiguous(memory_format=torch.channels_last_3d)
        elif how == "expand":
            t = base[:4].reshape(1, 4).expand(3, 4)
        elif how == "permute":
            t = base[:120].reshape(2, 3, 4, 5).permute(0, 2, 1, 3)
        elif how == "slice":
            t = base[:24].reshape(4, 6)[:, ::2]
        for dtype, rg in [(torch.float32, False), (torch.float64, True), (torch.int64, False)]:
            tt = t.to(dtype)
            if tt.dtype != t.dtype:
                tt = torch.empty_strided(t.size(), t.stride(), dtype=dtype)
            mf = None
            for f in MEMORY_FORMATS:
                if tt.is_contiguous(memory_format=f):
                    mf = f
                    break
            md = TensorMetadata(tt.shape, tt.dtype, rg, tt.stride(), mf, False, {})
            sz = ",".join(str(s) for s in tt.shape)
            st = ",".join(str(s) for s in tt.stride())
            rows.append(f"{sz}\t{st}\t{str(dtype)}\t{int(rg)}\t{md!r}")
    write("ir_tensor_meta.tsv", "\n".join(rows) + "\n")


def main():
    if not os.path.isdir(OUT):
        sys.exit("run from the repo root")
    for case, fn in GRAPHS.items():
        dump_graph(case, fn())
    write("ir_users.txt", users_scenario())
    lint_cases()
    dce_case()
    names_table()
    tensor_meta_table()


if __name__ == "__main__":
    main()
