#!/usr/bin/python3
"""PyTorch twins of the built-in models (tools/models/*.c), traced with PyTorch 2.13's make_fx.

Run from the repo root:  python3 tools/interop/gen_models.py   (or `make goldens`)

Writes tests/data/model_<name>.graph.txt (str(gm.graph)) and model_<name>.code.txt (gm.code),
which tests/tools/test_models.c compares with what `cfx trace` prints in both tracing modes.
Each twin calls the same aten operators as its C model; the printed graph and code do not
depend on the tracing mode (the script checks it). Fake tracing is make_fx(...,
_allow_non_fake_inputs=True), as cfx's make_fx (the mlp's parameters are real tensors); the
parameters are nn.Parameters of a module the function reads, which make_fx interns as
`_param_constantN`, as cfx interns the tensors of the cfx_module a model reads.
"""
import os
import sys

import torch
from torch.fx.experimental.proxy_tensor import make_fx

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import golden  # noqa: E402

aten = torch.ops.aten


def example(shape, seed):
    """Same values as cfx_model_example_tensor: ((i*7 + seed*13) % 32 - 16) / 16."""
    n = 1
    for s in shape:
        n *= s
    data = [((i * 7 + seed * 13) % 32 - 16) / 16.0 for i in range(n)]
    return torch.tensor(data, dtype=torch.float32).reshape(shape)


class MLP(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Module()
        self.fc2 = torch.nn.Module()
        for layer, (w, b, sw, sb) in ((self.fc1, ([16, 8], [16], 1, 2)), (self.fc2, ([4, 16], [4], 3, 4))):
            layer.weight = torch.nn.Parameter(example(w, sw), requires_grad=False)
            layer.bias = torch.nn.Parameter(example(b, sb), requires_grad=False)


MODULE = MLP()


def linear(x, layer):
    return aten.add.Tensor(aten.mm.default(x, aten.t.default(layer.weight)), layer.bias)


def mlp(x):
    return linear(aten.relu.default(linear(x, MODULE.fc1)), MODULE.fc2)


def chain(x):
    y = x
    for _ in range(3):
        y = aten.relu.default(aten.mul.Tensor(aten.add.Tensor(y, x), x))
    return y


def mutate(x, y):
    a = aten.sin.default(x)
    aten.cos.default(y)
    aten.add_.Tensor(a, y)
    aten.add_.Tensor(x, y)
    return aten.mul.Tensor(a, y)


MODELS = [
    ("mlp", mlp, lambda: [example([4, 8], 0)]),
    ("chain", chain, lambda: [example([64, 64], 0)]),
    ("mutate", mutate, lambda: [example([2, 3], 0), example([2, 3], 5)]),
]


def main():
    if not os.path.isdir(golden.OUT):
        sys.exit("run from the repo root")
    for name, fn, args in MODELS:
        texts = {}
        for mode in ("real", "fake"):
            gm = make_fx(fn, tracing_mode=mode, _allow_non_fake_inputs=True)(*args())
            texts[mode] = (str(gm.graph), gm.code)
        assert texts["real"] == texts["fake"], name
        golden.write_text(f"model_{name}.graph.txt", texts["real"][0])
        golden.write_text(f"model_{name}.code.txt", texts["real"][1])


if __name__ == "__main__":
    main()
