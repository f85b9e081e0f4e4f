"""PyTorch twins of the built-in models (tools/models/*.c), traced with torch 1.13's make_fx.

Writes tests/data/model_<name>_<mode>.graph.txt and .code.txt, which tests/tools/test_models.c
compares with what `cfx trace` prints. Run with Debian's PyTorch: /usr/bin/python3 this_file.

The printed graph and code do not depend on the tracing mode for these programs (fake mode only
adds meta), and 1.13's make_fx cannot fake-trace a module whose parameters are real tensors, so
the goldens come from real mode and the test compares both cfx modes with them.

Two deliberate adjustments, both to print what PyTorch 2.x prints / what cfx's issue asks for:
- 1.13 writes `[#users=N]`, 2.x `[num_users=N]`, and 2.x's code frees a value nobody uses
  right after computing it: the golden files use 2.x's text (dump_fx.py's transforms).
- make_fx interns module parameters as `_param_constantN`; cfx names them by their qualified
  name (`fc1.weight`), as torch.fx's own Tracer does when the module is the root. We get that
  from make_fx by letting its tracer resolve parameters against the model first.
"""
import os
import sys

import torch
from torch.fx.experimental import proxy_tensor as pt

sys.path.insert(0, os.path.dirname(__file__))
from dump_fx import to_2x_code, to_2x_graph  # noqa: E402  (1.13 -> 2.x printing deltas)

aten = torch.ops.aten
OUT = os.path.join(os.path.dirname(__file__), "..", "..", "tests", "data")


def example(shape, seed):
    """Same values as cfx_model_example_tensor: (i*7 + seed*13) % 32 - 16, over 16."""
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


def linear(x, layer):
    return aten.add(aten.mm(x, aten.t(layer.weight)), layer.bias)


MODULE = None


def mlp(x):
    return linear(aten.relu(linear(x, MODULE.fc1)), MODULE.fc2)


def chain(x):
    y = x
    for _ in range(3):
        y = aten.relu(aten.mul(aten.add(y, x), x))
    return y


def mutate(x, y):
    a = aten.sin(x)
    aten.cos(y)
    aten.add_(a, y)
    aten.add_(x, y)
    return aten.mul(a, y)


class QualifiedParamTracer(pt.PythonKeyTracer):
    def create_arg(self, a):
        if MODULE is not None and isinstance(a, torch.nn.Parameter):
            for name, p in MODULE.named_parameters():
                if a is p:
                    return self.create_node("get_attr", name, (), {})
        return super().create_arg(a)

    def trace(self, root, concrete_args=None):
        graph = super().trace(root, concrete_args)
        if MODULE is not None:
            self.root = MODULE  # so make_fx's GraphModule finds fc1.weight
        return graph


def trace(fn, args, mode):
    pt.PythonKeyTracer = QualifiedParamTracer
    gm = pt.make_fx(fn, tracing_mode=mode)(*args)
    root = MODULE if MODULE is not None else torch.nn.Module()
    return torch.fx.GraphModule(root, gm.graph, fn.__name__)


def main():
    global MODULE
    models = [
        ("mlp", mlp, lambda: [example([4, 8], 0)], True),
        ("chain", chain, lambda: [example([64, 64], 0)], False),
        ("mutate", mutate, lambda: [example([2, 3], 0), example([2, 3], 5)], False),
    ]
    for name, fn, args, has_module in models:
        MODULE = MLP() if has_module else None
        gm = trace(fn, args(), "real")
        graph = to_2x_graph(str(gm.graph)) + "\n"
        with open(os.path.join(OUT, f"model_{name}.graph.txt"), "w") as f:
            f.write(graph)
        with open(os.path.join(OUT, f"model_{name}.code.txt"), "w") as f:
            f.write(to_2x_code(gm.graph, gm.code))
    return 0


if __name__ == "__main__":
    sys.exit(main())
