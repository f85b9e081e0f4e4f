#!/usr/bin/env python3
"""Golden files for Graph.print_tabular() (ir/print_tabular.c), from PyTorch 2.13 + tabulate.

Run from the repo root:  python3 tools/interop/gen_tabular.py   (or `make goldens`)

FX's print_tabular prints [n.op, n.name, n.target, n.args, n.kwargs] per node with
tabulate's default "simple" format. Written through golden.py, with print's newline dropped:
  - tests/data/ir_<case>.tabular.txt for every hand-built graph of gen_fx.py (GRAPHS), which
    tests/ir/test_print.c builds in C;
  - tests/data/model_<name>.tabular.txt for the make_fx traces of the built-in models'
    PyTorch twins (gen_models.py), which tests/tools/test_cli.c prints with `cfx print`.
One departure: str() of a Python function carries its address ("<function _assert at
0x7f...>"), which changes from run to run; for such graphs the table is FX's own node list
given to tabulate exactly as print_tabular gives it, with the address dropped from the target
("<function _assert>", as cfx prints it), so the columns are measured without it. Needs `pip install tabulate` (.ci/run does).
"""
import contextlib
import io
import os
import re
import sys

from tabulate import tabulate
from torch.fx.experimental.proxy_tensor import make_fx

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_fx  # noqa: E402
import gen_models  # noqa: E402
import golden  # noqa: E402

ADDRESS = re.compile(r"<function (\w+) at 0x[0-9a-f]+>")


def tabular(graph):
    """graph.print_tabular()'s text; for a target whose str() has an address, FX's own table
    (its node_specs, passed to tabulate as print_tabular does) with the address dropped."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        graph.print_tabular()
    text = out.getvalue()
    assert text.endswith("\n")
    if not ADDRESS.search(text):
        return text[:-1]
    specs = [[n.op, n.name, ADDRESS.sub(r"<function \1>", str(n.target)), n.args, n.kwargs] for n in graph.nodes]
    return tabulate(specs, headers=["opcode", "name", "target", "args", "kwargs"])


def main():
    if not os.path.isdir(golden.OUT):
        sys.exit("run from the repo root")
    for name, build in gen_fx.GRAPHS.items():
        golden.write_text(f"ir_{name}.tabular.txt", tabular(build()))
    for name, fn, args in gen_models.MODELS:
        gm = make_fx(fn, tracing_mode="fake", _allow_non_fake_inputs=True)(*args())
        golden.write_text(f"model_{name}.tabular.txt", tabular(gm.graph))


if __name__ == "__main__":
    main()
