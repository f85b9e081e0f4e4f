#!/usr/bin/python3
"""Golden graphs of training-mode batch norm and dropout (tests/tracer/test_train.c) from
PyTorch 2.13.

Run from the repo root:  python3 tools/interop/gen_train.py

Each program is traced with make_fx in real and fake mode (identical graphs, checked) and run
once eagerly after torch.manual_seed(0) on the inputs below (x [2, 3, 4, 4], w, b, rm, rv of
[3]). Written per program:

  tests/data/train_<case>.graph.txt   str(gm.graph)
  tests/data/train_<case>.values.txt  "out" and the output's values, then "rm" / "rv" and the
                                      running statistics after the call (when it takes them)

The dropout masks are reproducible because cfx's generator is PyTorch's CPU generator and
bernoulli_ on this CPU (AMD) takes ATen's default kernel: one 53-bit uniform per element.
"""
import os
import sys

import torch
import torch.nn.functional as F
from torch.fx.experimental.proxy_tensor import make_fx

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import golden  # noqa: E402


def inputs():
    x = ((torch.arange(96, dtype=torch.float32) % 7 - 3) * 0.5).reshape(2, 3, 4, 4)
    return {"x": x, "w": torch.tensor([1.0, 0.5, -2.0]), "b": torch.tensor([0.1, 0.2, 0.3]),
            "rm": torch.tensor([0.0, 0.5, -0.5]), "rv": torch.tensor([1.0, 2.0, 0.5])}


PROGRAMS = {
    "bn_train": (["x", "w", "b", "rm", "rv"], lambda x, w, b, rm, rv: F.batch_norm(x, rm, rv, w, b, training=True)),
    "bn_eval": (["x", "w", "b", "rm", "rv"], lambda x, w, b, rm, rv: F.batch_norm(x, rm, rv, w, b, training=False)),
    "bn_nostats": (["x", "w", "b"], lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True, momentum=0.2)),
    "dropout": (["x"], lambda x: F.dropout(x, 0.5, training=True)),
    "dropout_p1": (["x"], lambda x: F.dropout(x, 1.0, training=True)),
    "dropout_eval": (["x"], lambda x: F.dropout(x, 0.3, training=False) * 2),
    "feature_dropout": (["x"], lambda x: F.dropout2d(x, 0.2, training=True)),
    # native_dropout's own mask (bool, bernoulli_(1 - p)): output + mask shows both
    "native_dropout": (["x"], lambda x: (lambda r: r[0] + r[1])(torch.ops.aten.native_dropout(x, 0.3, True))),
}


def fmt(t):
    return " ".join(repr(float(v)) for v in t.flatten().tolist())


for name, (names, fn) in PROGRAMS.items():
    graphs = []
    for mode in ("real", "fake"):
        ins = inputs()
        gm = make_fx(fn, tracing_mode=mode)(*[ins[n] for n in names])
        graphs.append(str(gm.graph))
    assert graphs[0] == graphs[1], name
    golden.write_text(f"train_{name}.graph.txt", graphs[1])
    ins = inputs()
    torch.manual_seed(0)
    out = fn(*[ins[n] for n in names])
    text = f"out {fmt(out)}\n"
    for n in ("rm", "rv"):
        if n in names:
            text += f"{n} {fmt(ins[n])}\n"
    golden.write_text(f"train_{name}.values.txt", text)
    print(name)
