#!/usr/bin/env python3
"""Golden files for the graph IR (tests/ir/), from PyTorch 2.13's torch.fx.

Run from the repo root:  python3 tools/interop/gen_fx.py   (or `make goldens`)

Graphs are built by hand with torch.fx.Graph, naming operator nodes as make_fx does (after
the overload packet: `add`, `sum` -> `sum_1`), and what torch.fx makes of them is written to
tests/data/ir_* through golden.py, byte for byte: str(graph), python_code("self").src, the
names torch.fx.graph._Namespace gives, users and input orders, lint and erase messages,
TensorMetadata reprs. Nothing here rewrites PyTorch's text.
"""
import base64
import json
import math
import operator
import os
import random
import re
import sys
import warnings

import torch
from torch.fx import Graph
from torch.fx.graph import _Namespace
from torch.fx.passes.shape_prop import _extract_tensor_metadata

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import golden  # noqa: E402

aten = torch.ops.aten


def op(g, target, *args, name=None, **kwargs):
    """call_function named as make_fx names it: after the overload packet."""
    if name is None and isinstance(target, torch._ops.OpOverload):
        name = g._target_to_str(target.overloadpacket.__name__)
    return g.create_node("call_function", target, tuple(args), kwargs, name=name)


def dump_graph(case, g):
    golden.write_text(f"ir_{case}.graph.txt", str(g))
    golden.write_text(f"ir_{case}.code.txt", g.python_code("self").src)


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


def g_named_none():
    # `None` is a legal node name (create_name's obj is None), not a legal python_code local
    g = Graph()
    x = g.placeholder("x")
    n = op(g, aten.relu.default, x, name="None")
    g.output(n)
    return g


def g_placeholders_only():
    # no statement at all: the body is empty, not `pass`; FX puts `self` first regardless
    g = Graph()
    g.placeholder("x")
    g.placeholder("self")
    return g


def g_self_first():
    g = Graph()
    g.placeholder("self")
    g.placeholder("x")
    return g


def g_renamed():
    # a name assigned around the name space: python_code's own name space renames the local
    g = Graph()
    x = g.placeholder("x")
    a = op(g, aten.relu.default, x)
    b = op(g, aten.cos.default, a)
    g.output(b)
    b.name = "relu"
    return g


def g_no_output():
    g = Graph()
    x = g.placeholder("x")
    a = op(g, aten.relu.default, x)
    op(g, aten.cos.default, a)
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
    "named_none": g_named_none,
    "placeholders_only": g_placeholders_only,
    "self_first": g_self_first,
    "renamed": g_renamed,
    "no_output": g_no_output,
}


# ---- def-use bookkeeping (tests/ir/test_graph.c) -------------------------------------------------

def users_scenario():
    """Order of users / inputs after args changes, replace_all_uses_with, update_arg, erase,
    insert_arg, and lint's message for the result."""
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
    out.append("graph\n" + str(g))
    c.insert_arg(0, y)           # a new input goes last; existing uses keep their place
    show("insert_arg", y, c)
    c.insert_arg(3, a)           # already an input: nothing moves
    show("insert_arg2", a, c)
    out.append("lint " + lint_message(g))   # a now uses b, which comes later
    return "\n".join(out) + "\n"


# ---- lint and erase messages ----------------------------------------------------------------------

def lint_message(g):
    try:
        g.lint()
    except RuntimeError as e:
        return str(e)
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
        golden.write_text(f"ir_lint_{k}.txt", v)


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
    golden.write_text("ir_dce_before.graph.txt", str(g))
    changed = g.eliminate_dead_code()
    assert changed
    golden.write_text("ir_dce_after.graph.txt", str(g))
    golden.write_text("ir_dce_after.code.txt", g.python_code("self").src)


def dce_mutable_case():
    """An unused in-place op and an unused out= op stay: their schemas are mutable."""
    g = Graph()
    x = g.placeholder("x")
    z = g.placeholder("z")
    op(g, aten.add_.Tensor, x, 1)
    op(g, aten.add.out, x, x, out=z)
    op(g, aten.mul.Tensor, x, 2)                 # dead
    cos = op(g, aten.cos.default, z)
    g.output(cos)
    changed = g.eliminate_dead_code()
    assert changed
    golden.write_text("ir_dce_mutable.graph.txt", str(g))


# ---- error and warning texts (tests/ir/test_graph.c) ------------------------------------------

def error_text(fn):
    try:
        fn()
    except Exception as e:  # the exception's str, whatever its type
        return str(e)
    raise AssertionError("no error")


def errors_table():
    rows = ["# case\ttext (\\n for a newline)"]
    g = Graph()
    x = g.placeholder("x")
    rows.append(("target_str_for_call_function",
                 error_text(lambda: g.create_node("call_function", "foo", (x,), {}))))
    rows.append(("target_op_for_call_method",
                 error_text(lambda: g.create_node("call_method", aten.add.Tensor, (x,), {}, name="add_tensor"))))
    rows.append(("target_fn_for_get_attr",
                 error_text(lambda: g.create_node("get_attr", operator.getitem, (x,), {}))))
    h = Graph()
    z = h.placeholder("z")
    rows.append(("erase_from_wrong_graph", error_text(lambda: g.erase_node(z))))
    a = op(g, aten.add.Tensor, x, x)
    g.erase_node(a)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        g.erase_node(a)
    rows.append(("erase_twice_warning", str(w[0].message)))
    c = op(g, aten.cos.default, x)
    rows.append(("insert_arg_out_of_range", error_text(lambda: c.insert_arg(9, x))))
    rows.append(("prepend_from_other_graph", error_text(lambda: c.prepend(z))))
    text = "\n".join(r if isinstance(r, str) else r[0] + "\t" + r[1].replace("\n", "\\n") for r in rows)
    golden.write_text("ir_errors.tsv", text + "\n")


def side_effects_table():
    """torch.fx.node._side_effectful_functions, the registry cfx's starts from: one row per
    member, kind and cfx's key. An operator overload's key is its schema name plus the overload
    (none for `default`); a function's is its format_node spelling. Overload packets and
    higher-order operators are listed for completeness (cfx's targets are overloads; HOPs
    register themselves)."""
    rows = []
    for f in torch.fx.node._side_effectful_functions:
        if isinstance(f, torch._ops.OpOverload):
            name = f._schema.name
            rows.append(("op", name if f._overloadname == "default" else f"{name}.{f._overloadname}"))
        elif isinstance(f, torch._ops.OpOverloadPacket):
            rows.append(("packet", f._qualified_op_name))
        elif isinstance(f, torch._ops.HigherOrderOperator):
            rows.append(("hop", f.name()))
        else:
            rows.append(("fn", torch.fx.Node._pretty_print_target(f)))
    text = "".join(f"{k}\t{v}\n" for k, v in sorted(rows))
    golden.write_text("ir_side_effects.tsv", "# kind\tkey\n" + text)


# ---- the documented graph JSON example (tests/ir/test_json.c, docs/graph-json.md) -----------------

MAX_EXACT_INT = 2**53 - 1


def json_value(v):
    """A value in cfx.graph's encoding (docs/graph-json.md, Values)."""
    if isinstance(v, torch.fx.Node):
        return {"node": v.name}
    if v is None or isinstance(v, (bool, str)):
        return v
    if isinstance(v, int):
        return v if abs(v) <= MAX_EXACT_INT else {"int": str(v)}
    if isinstance(v, float):
        if math.isnan(v):
            return {"float": "NaN"}
        if math.isinf(v):
            return {"float": "Infinity" if v > 0 else "-Infinity"}
        return {"float": v}
    if isinstance(v, tuple):
        return {"tuple": [json_value(x) for x in v]}
    if isinstance(v, list):
        return [json_value(x) for x in v]
    raise TypeError(f"no cfx.graph encoding for {v!r}")


def json_tensor_fields(t):
    return {"dtype": str(t.dtype), "device": str(t.device), "shape": list(t.shape),
            "stride": list(t.stride()), "storage_offset": t.storage_offset()}


def json_target(n):
    if n.op != "call_function":
        return n.target
    if isinstance(n.target, torch._ops.OpOverload):
        return {"op": op_key(n.target)}
    return {"fn": torch.fx.Node._pretty_print_target(n.target)}


def op_key(o):
    """An overload as the dispatcher names it: aten::relu, aten::add.Tensor."""
    name = o._schema.name
    return name if o._overloadname == "default" else f"{name}.{o._overloadname}"


def json_meta(n):
    """node.meta as cfx keeps it: val, tensor_meta, stack_trace (one frame: file, line,
    function, parsed from FX's traceback text), then the other entries in order."""
    meta = {}
    if "val" in n.meta:
        meta["val"] = {"tensor": json_tensor_fields(n.meta["val"])}
    if n.stack_trace:
        m = re.search(r'File "(.*)", line (\d+), in (\w+)', n.stack_trace)
        meta["stack_trace"] = {"file": m.group(1), "line": int(m.group(2)), "func": m.group(3)}
    entries = [[k, json_value(v)] for k, v in n.meta.items() if k not in ("val", "tensor_meta", "stack_trace")]
    if entries:
        meta["entries"] = entries
    return meta


def json_node(n):
    out = {"name": n.name, "op": n.op, "target": json_target(n), "args": [json_value(a) for a in n.args],
           "kwargs": [[k, json_value(v)] for k, v in n.kwargs.items()]}
    meta = json_meta(n)
    if meta:
        out["meta"] = meta
    return out


def json_attribute(gm, name):
    t = gm.get_buffer(name)
    raw = bytes(t.contiguous().view(torch.uint8).flatten().tolist())
    return {"name": name, **json_tensor_fields(t), "data": base64.b64encode(raw).decode()}


class GraphDocumentLayout(json.JSONEncoder):
    """The layout cfx's writer gives a cfx.graph document: top-level members one per line,
    schemas, nodes and attributes one entry per line, Python's separators."""

    def iterencode(self, o, _one_shot=False):
        def dumps(v):
            return json.dumps(v, ensure_ascii=False, separators=(", ", ": "))

        def block(open_, lines, close):
            return open_ + "\n" + ",\n".join("    " + x for x in lines) + "\n  " + close if lines else open_ + close

        members = []
        for k, v in o.items():
            if k == "schemas":
                text = block("{", [f"{dumps(a)}: {dumps(b)}" for a, b in v.items()], "}")
            elif k in ("nodes", "attributes"):
                text = block("[", [dumps(x) for x in v], "]")
            else:
                text = dumps(v)
            members.append(f"  {dumps(k)}: {text}")
        yield "{\n" + ",\n".join(members) + "\n}"


def json_example():
    """make_fx-style graph of a Linear layer, a max over a dim and a tuple output, in a
    GraphModule named Net with its two tensors (cfx's documented example)."""
    g = Graph()
    x = g.placeholder("x")
    w = g.get_attr("fc.weight")
    b = g.get_attr("fc.bias")
    t = op(g, aten.t.default, w)
    mm = op(g, aten.mm.default, x, t)
    add = op(g, aten.add.Tensor, mm, b, alpha=1)
    relu = op(g, aten.relu.default, add)
    mx = op(g, aten.max.dim, relu, 1)
    vals = op(g, operator.getitem, mx, 0)
    idx = op(g, operator.getitem, mx, 1)
    g.output((vals, idx, math.nan, 2**63 - 1))
    x.meta["val"] = torch.empty(2, 3)
    relu.meta["stack_trace"] = '  File "model.c", line 12, in forward\n'
    relu.meta["nn_module_stack"] = [("fc", "Linear")]

    root = torch.nn.Module()
    root.fc = torch.nn.Module()
    root.fc.register_buffer("weight", torch.tensor([[1.5, -2.0, 0.25], [math.nan, math.inf, -0.0]]))
    root.fc.register_buffer("bias", torch.tensor([0.5, -1.0]))
    gm = torch.fx.GraphModule(root, g, "Net")
    schemas = {}
    for n in g.nodes:
        if n.op == "call_function" and isinstance(n.target, torch._ops.OpOverload):
            schemas.setdefault(op_key(n.target), str(n.target._schema))
    doc = {"format": "cfx.graph", "version": {"major": 1, "minor": 1}, "name": type(gm).__name__,
           "schemas": schemas, "nodes": [json_node(n) for n in g.nodes],
           "attributes": [json_attribute(gm, n.target) for n in g.nodes if n.op == "get_attr"]}
    golden.write_json("graph_json_example.json", doc, cls=GraphDocumentLayout)


# ---- names ----------------------------------------------------------------------------------------

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
    ["add", "add", "add_5000000", "add_5000000", "add", "add_2", "add_2"],
    ["add", "add_999999997", "add", "add", "add", "add", "add_5", "add"],
    ["add", "add_999999998", "add", "add", "add"],
    ["foo_1", "for", "add", "bar_0", "print"] * 12,
]

# A long random script (fixed seed): default candidates in bursts between explicit suffixes
# near, inside and far beyond the numbers given so far, reserved words and odd spellings.
NAME_POOL = ["add", "add", "add", "add", "mul", "mul", "relu_", "sum", "add_1", "add_2", "add_7", "add_0",
             "mul_3", "sum_1", "for", "x", "x_1", "add_40", "mul_200", "_", "add_1_1", "add_63", "add_64",
             "add_130", "add_900000", "add_07", "relu", "relu_3"]


def random_name_script():
    rng = random.Random(12345)
    seq = []
    while len(seq) < 4000:
        c = rng.choice(NAME_POOL)
        seq.extend([c] * (rng.randrange(1, 40) if c in ("add", "relu", "mul") else 1))
    return seq[:4000]


def names_table():
    rows = ["# seq\tcandidate\tname"]
    for si, seq in enumerate(NAME_SEQUENCES + [random_name_script()]):
        ns = _Namespace()
        for cand in seq:
            rows.append(f"{si}\t{cand}\t{ns.create_name(cand, None)}")
    golden.write_text("ir_names.tsv", "\n".join(rows) + "\n")

    g = Graph()
    rows = ["# string\t_target_to_str"]
    for s in ["camelCaseMethod", "__add__", "ALL_CAPS", "mod.pascalCase", "getHTTPResponse", "__", "___x___",
              "add_", "sum", "_foreach_add", "aB", "Ab", "x__y__", "__init__"]:
        rows.append(f"{s}\t{g._target_to_str(s)}")
    golden.write_text("ir_target_to_str.tsv", "\n".join(rows) + "\n")


# ---- TensorMetadata ---------------------------------------------------------------------------------

def tensor_meta_table():
    """The TensorMetadata ShapeProp (and make_fx) record for tensors of several layouts:
    torch.fx.passes.shape_prop._extract_tensor_metadata's own repr."""
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
            tt.requires_grad_(rg)
            md = _extract_tensor_metadata(tt)
            sz = ",".join(str(s) for s in tt.shape)
            st = ",".join(str(s) for s in tt.stride())
            rows.append(f"{sz}\t{st}\t{str(dtype)}\t{int(rg)}\t{md!r}")
    golden.write_text("ir_tensor_meta.tsv", "\n".join(rows) + "\n")


def main():
    if not os.path.isdir(golden.OUT):
        sys.exit("run from the repo root")
    for case, fn in GRAPHS.items():
        dump_graph(case, fn())
    golden.write_text("ir_users.txt", users_scenario())
    lint_cases()
    dce_case()
    dce_mutable_case()
    errors_table()
    side_effects_table()
    json_example()
    names_table()
    tensor_meta_table()


if __name__ == "__main__":
    main()
