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


TRAINING = False  # nn.Module.training of every model (main() traces both)


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


class CNN(torch.nn.Module):
    def __init__(self):
        super().__init__()
        p = lambda t: torch.nn.Parameter(t, requires_grad=False)  # noqa: E731
        self.conv, self.bn, self.fc = torch.nn.Module(), torch.nn.Module(), torch.nn.Module()
        self.conv.weight, self.conv.bias = p(example([8, 3, 3, 3], 1)), p(example([8], 2))
        self.bn.weight, self.bn.bias = p(example([8], 3)), p(example([8], 4))
        self.bn.running_mean = p(example([8], 5))
        self.bn.running_var = p(torch.tensor([0.5 + 0.25 * i for i in range(8)]))
        self.fc.weight, self.fc.bias = p(example([10, 128], 6)), p(example([10], 7))


CNN_MODULE = CNN()


def cnn(x):
    m = CNN_MODULE
    h = aten.conv2d.default(x, m.conv.weight, m.conv.bias, [1, 1], [1, 1])
    h = aten.native_batch_norm.default(h, m.bn.weight, m.bn.bias, m.bn.running_mean, m.bn.running_var, TRAINING,
                                       0.1, 1e-5)[0]
    h = aten.max_pool2d.default(aten.relu.default(h), [2, 2])
    return aten.linear.default(aten.flatten.using_ints(h, 1), m.fc.weight, m.fc.bias)


class Classifier(torch.nn.Module):
    def __init__(self):
        super().__init__()
        p = lambda t: torch.nn.Parameter(t, requires_grad=False)  # noqa: E731
        self.emb, self.fc = torch.nn.Module(), torch.nn.Module()
        self.emb.weight = p(example([20, 8], 1))
        self.fc.weight, self.fc.bias = p(example([10, 8], 2)), p(example([10], 3))


CLASSIFIER_MODULE = Classifier()


def classifier(tokens, targets):
    m = CLASSIFIER_MODULE
    e = aten.embedding.default(m.emb.weight, tokens)
    logits = aten.linear.default(aten.sum.dim_IntList(e, [1]), m.fc.weight, m.fc.bias)
    return aten.cross_entropy_loss.default(logits, targets)


def classifier_inputs():
    return [torch.tensor([(i * 7 + 3) % 20 for i in range(10)]).reshape(2, 5), torch.tensor([3, 7])]


TRANSFORMER_PARAMS = [("ln1.weight", [8]), ("ln1.bias", [8]), ("attn.q.weight", [8, 8]), ("attn.q.bias", [8]),
                      ("attn.k.weight", [8, 8]), ("attn.k.bias", [8]), ("attn.v.weight", [8, 8]),
                      ("attn.v.bias", [8]), ("attn.out.weight", [8, 8]), ("attn.out.bias", [8]),
                      ("ln2.weight", [8]), ("ln2.bias", [8]), ("mlp.fc1.weight", [16, 8]), ("mlp.fc1.bias", [16]),
                      ("mlp.fc2.weight", [8, 16]), ("mlp.fc2.bias", [8])]


def _module_tree(params):
    """An nn.Module holding example parameters under dotted names (seed = position + 1)."""
    root = torch.nn.Module()
    for i, (name, shape) in enumerate(params):
        *path, leaf = name.split(".")
        mod = root
        for part in path:
            if not hasattr(mod, part):
                setattr(mod, part, torch.nn.Module())
            mod = getattr(mod, part)
        setattr(mod, leaf, torch.nn.Parameter(example(shape, i + 1), requires_grad=False))
    return root


TRANSFORMER_MODULE = _module_tree(TRANSFORMER_PARAMS)


def transformer(x):
    m = TRANSFORMER_MODULE
    h = aten.layer_norm.default(x, [8], m.ln1.weight, m.ln1.bias)
    q = aten.linear.default(h, m.attn.q.weight, m.attn.q.bias)
    k = aten.linear.default(h, m.attn.k.weight, m.attn.k.bias)
    v = aten.linear.default(h, m.attn.v.weight, m.attn.v.bias)
    s = aten.div.Tensor(aten.matmul.default(q, aten.transpose.int(k, -2, -1)), 2.8284271247461903)
    a = aten.dropout.default(aten.softmax.int(s, -1), 0.1, TRAINING)
    o = aten.linear.default(aten.matmul.default(a, v), m.attn.out.weight, m.attn.out.bias)
    x = aten.add.Tensor(x, aten.dropout.default(o, 0.1, TRAINING))
    h = aten.layer_norm.default(x, [8], m.ln2.weight, m.ln2.bias)
    f = aten.gelu.default(aten.linear.default(h, m.mlp.fc1.weight, m.mlp.fc1.bias))
    f = aten.linear.default(f, m.mlp.fc2.weight, m.mlp.fc2.bias)
    return aten.add.Tensor(x, aten.dropout.default(f, 0.1, TRAINING))


MODELS = [
    ("mlp", mlp, lambda: [example([4, 8], 0)]),
    ("chain", chain, lambda: [example([64, 64], 0)]),
    ("mutate", mutate, lambda: [example([2, 3], 0), example([2, 3], 5)]),
    ("cnn", cnn, lambda: [example([2, 3, 8, 8], 0)]),
    ("classifier", classifier, classifier_inputs),
    ("transformer", transformer, lambda: [example([2, 4, 8], 0)]),
]


# `cfx trace MODEL --train`: the models whose graph depends on the mode (batch norm, dropout)
# traced again in training mode, written as model_<name>_train.{graph,code}.txt
TRAIN_MODELS = ("cnn", "transformer")


def main():
    global TRAINING
    if not os.path.isdir(golden.OUT):
        sys.exit("run from the repo root")
    for name, fn, args in MODELS:
        TRAINING = False
        trace_model(name, fn, args, "")
        if name in TRAIN_MODELS:
            TRAINING = True
            trace_model(name, fn, args, "_train")


def trace_model(name, fn, args, suffix):
    if True:
        texts = {}
        for mode in ("real", "fake"):
            gm = make_fx(fn, tracing_mode=mode, _allow_non_fake_inputs=True)(*args())
            texts[mode] = (str(gm.graph), gm.code)
        assert texts["real"] == texts["fake"], name
        golden.write_text(f"model_{name}{suffix}.graph.txt", texts["real"][0])
        golden.write_text(f"model_{name}{suffix}.code.txt", texts["real"][1])


if __name__ == "__main__":
    main()
