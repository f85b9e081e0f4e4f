"""Goldens for functionalization and the crossref check (dispatch/functional.h).

tests/data/functionalize.txt holds, per program, the graph and the code PyTorch 2.13 records
for make_fx(torch.func.functionalize(f)) (real and fake tracing give the same text for these
programs; the script checks it), and the crossref errors of
torch._dispatch.python.enable_crossref_functionalize for custom ops whose Meta kernel lies.
Blocks are "@@@ NAME KIND" lines followed by the text. The C twins of the programs are in
tests/dispatch/test_functionalize.c.
"""
import torch
from torch.fx.experimental.proxy_tensor import make_fx
from torch.func import functionalize
from torch._dispatch.python import enable_crossref_functionalize

import golden


def mutate(x, y):  # the built-in model `mutate`
    a = x.sin()
    y.cos()
    a.add_(y)
    x.add_(y)
    return a * y


def view_inplace(x):
    v = x.view(-1)
    v.add_(v)
    t = x.t()
    return t.relu(), v


def clone_mm(x, w):
    y = x.clone()
    y.add_(x)
    z = y.t()
    return torch.mm(z, w).sum([1])


def two_views(x):
    a = x.view(6)
    b = a.view(3, 2)
    b.add_(b)
    return x.relu()


def input_twice(x, y):
    x.add_(y)
    x.add_(y)
    return x


def t_inplace(x, y):
    v = x.t()
    v.add_(y.t())
    return v.sum([0])


def shape_views(x, y):
    v = x.transpose(0, 1)
    v.add_(y.t())
    u = x.unsqueeze(0)
    u.add_(u)
    p = x.permute(1, 0)
    p.add_(p)
    return x.relu()


def copy_into(x, y):  # copy_ becomes the functional copy, written back to x at the end
    x.copy_(y.t().t())
    return x.relu()


def t23(seed):
    return ((torch.arange(6, dtype=torch.float32) * 7 + seed * 13) % 32 - 16).div(16).reshape(2, 3)


PROGRAMS = [
    ("mutate", mutate, lambda: (t23(0), t23(5))),
    ("view_inplace", view_inplace, lambda: (t23(0),)),
    ("clone_mm", clone_mm, lambda: (t23(0), t23(1).t().contiguous().t().reshape(2, 3).clone())),
    ("two_views", two_views, lambda: (t23(0),)),
    ("input_twice", input_twice, lambda: (t23(0), t23(1))),
    ("t_inplace", t_inplace, lambda: (t23(0), t23(2))),
    ("shape_views", shape_views, lambda: (t23(0), t23(1))),
    ("copy_into", copy_into, lambda: (t23(0), t23(1))),
]

lib = torch.library.Library("cfxtest", "DEF")
lib.define("liar_strides(Tensor x) -> Tensor")
lib.define("liar_sizes(Tensor x, Tensor y, *, int k=1) -> Tensor")
lib.define("liar_dtype(Tensor x, int[] dims) -> Tensor")
lib.impl("liar_strides", lambda x: x.clone(), "CPU")
lib.impl("liar_strides", lambda x: torch.empty_strided(x.shape, (1, x.shape[0]), dtype=x.dtype, device=x.device), "Meta")
lib.impl("liar_sizes", lambda x, y, k=1: x.clone(), "CPU")
lib.impl("liar_sizes", lambda x, y, k=1: x.new_empty((x.shape[1], x.shape[0])), "Meta")
lib.impl("liar_dtype", lambda x, dims: x.clone(), "CPU")
lib.impl("liar_dtype", lambda x, dims: x.new_empty(x.shape, dtype=torch.int64), "Meta")


def liar_strides(x, y):
    return torch.ops.cfxtest.liar_strides(x + y)


def liar_sizes(x, y):
    return torch.ops.cfxtest.liar_sizes(x.t(), y, k=2)


def liar_dtype(x, y):
    return torch.ops.cfxtest.liar_dtype(x, [0, 1])


CROSSREF = [("liar_strides", liar_strides), ("liar_sizes", liar_sizes), ("liar_dtype", liar_dtype)]


def main():
    out = []
    for name, fn, args in PROGRAMS:
        real = make_fx(functionalize(fn))(*args())
        fake = make_fx(functionalize(fn), tracing_mode="fake")(*args())
        assert str(real.graph) == str(fake.graph) and real.code == fake.code, name
        out.append(f"@@@ {name} graph\n{real.graph}\n")
        out.append(f"@@@ {name} code\n{real.code}\n")
    for name, fn in CROSSREF:
        try:
            with enable_crossref_functionalize():
                make_fx(functionalize(fn))(t23(0), t23(1))
            msg = "no error"
        except AssertionError as e:
            msg = str(e)
        out.append(f"@@@ {name} error\n{msg}\n")
    golden.write_text("functionalize.txt", "".join(out))


if __name__ == "__main__":
    main()
