"""Goldens for dict values in graphs (cfx_dict, CFX_V_DICT): an FX graph built by hand whose
call_function args hold dicts with str keys, nested containers and node references, as the
kwargs of a triton_kernel_wrapper HOP do. tests/ir/test_dict_values.c builds the same graph.

    tests/data/ir_dict.graph.txt     str(graph)
    tests/data/ir_dict.code.txt      graph.python_code("self").src
    tests/data/ir_dict.tabular.txt   graph.print_tabular() (without its last newline, as gen_tabular.py)
    tests/data/ir_dict.out.txt       the GraphModule run on x = [1., -2., 3.]
Run from the repo root: python3 tools/interop/gen_dict_values.py
"""
import contextlib
import io
import operator
import os
import sys

import torch
import torch.fx

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import golden  # noqa: E402


def build():
    g = torch.fx.Graph()
    x = g.placeholder("x")
    y = g.placeholder("y")
    d = {"a": x, "b": [y, 2], "c": {"d": "it's", "e": (1.5, None)}, "f": {}}
    a = g.call_function(operator.getitem, (d, "a"))
    r = g.call_function(torch.ops.aten.relu.default, (a,))
    b = g.call_function(operator.getitem, ({"k": r, "z": y}, "k"))
    s = g.call_function(torch.ops.aten.add.Tensor, (b,), {"other": y})
    g.output(s)
    return g


def main():
    g = build()
    golden.write_text("ir_dict.graph.txt", str(g))
    golden.write_text("ir_dict.code.txt", g.python_code("self").src)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        g.print_tabular()
    golden.write_text("ir_dict.tabular.txt", out.getvalue()[:-1])
    gm = torch.fx.GraphModule(torch.nn.Module(), g)
    r = gm(torch.tensor([1.0, -2.0, 3.0]), torch.tensor([10.0, 20.0, 30.0]))
    golden.write_text("ir_dict.out.txt", repr(r.tolist()) + "\n")


if __name__ == "__main__":
    main()
