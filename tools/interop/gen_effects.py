"""Goldens for effect tokens and with_effects (dispatch/effects.h, hop/effects.c).

tests/data/effects.txt holds the graph and code PyTorch 2.13 records with make_fx for
f(token, *args) running the program under a FunctionalTensorMode whose ORDERED token is the
`token` argument: each aten::_print becomes with_effects(token, aten._print.default, s), the
tokens chain, and the final token is the leading output. That is what cfx's
make_fx(..., functionalize, effect_tokens) traces (the token is its leading placeholder
token_1). Also the texts of with_effects' own checks and of a missing token.
Block torchbind: call_torchbind on PyTorch's _TorchScriptTesting::_TensorQueue (an object
argument, libtorchbind_test.so) under the same tokens: handle_effects makes each method call
with_effects(token, call_torchbind, q, method, *args).
Blocks prints_export: torch.export's graph of the same program, the reference the issue names
(its token placeholder is `token`, make_fx's `token_1`).
Blocks are "@@@ NAME KIND" lines followed by the text.
"""
import os

import torch
from torch._higher_order_ops.torchbind import enable_torchbind_tracing
from torch.fx.experimental.proxy_tensor import make_fx
from torch._subclasses.functional_tensor import FunctionalTensorMode, FunctionalTensor
from torch._higher_order_ops.effects import _EffectType, with_effects

import gen_hop
import golden


def prints(x, y):
    torch.ops.aten._print("moo")
    a = x + y
    torch.ops.aten._print("moo2")
    return a.relu()


def mutate_print(x, y):
    x.add_(y)
    torch.ops.aten._print("after add_")
    return x.sin()


def no_effects(x, y):
    return (x * y).cos()


def with_tokens(fn):
    def f(token, x, y):
        args = (x, y)
        mode = FunctionalTensorMode()
        with mode:
            ft = FunctionalTensor.to_functional(token)
            fargs = [FunctionalTensor.to_functional(a) for a in args]
            mode._tokens[_EffectType.ORDERED] = ft
            out = fn(*fargs)
        final = mode._tokens[_EffectType.ORDERED]
        torch._sync(final.elem)
        torch._sync(out.elem)
        for a, fa in zip(args, fargs):
            torch._sync(fa.elem)
            v = torch._from_functional_tensor(fa.elem)
            if v is not a:
                a.copy_(v)
        return (torch._from_functional_tensor(final.elem), torch._from_functional_tensor(out.elem))
    return f


def torchbind(q, x, y):
    q.push(x)
    q.push(y.cos())
    return q.pop() + q.size()


def with_tokens_obj(fn):
    """with_tokens for fn(q, x, y): the script object q passes through unwrapped."""
    def f(token, q, x, y):
        return with_tokens(lambda fx, fy: fn(q, fx, fy))(token, x, y)
    return f


def with_tokens_model(fn):
    """make_fx of fn(tq, x) -> tuple under FunctionalTensorMode tokens: f(token, tq, x)."""
    def f(token, tq, x):
        mode = FunctionalTensorMode()
        with mode:
            ft = FunctionalTensor.to_functional(token)
            fx = FunctionalTensor.to_functional(x)
            mode._tokens[_EffectType.ORDERED] = ft
            outs = fn(tq, fx)
        final = mode._tokens[_EffectType.ORDERED]
        res = [torch._from_functional_tensor(final.elem)]
        for o in outs:
            torch._sync(o.elem)
            res.append(torch._from_functional_tensor(o.elem))
        return tuple(res)
    return f


def t23(seed):
    return ((torch.arange(6, dtype=torch.float32) * 7 + seed * 13) % 32 - 16).div(16).reshape(2, 3)


PROGRAMS = [("prints", prints), ("mutate_print", mutate_print), ("no_effects", no_effects)]


def error(thunk):
    try:
        thunk()
        return "no error"
    except AssertionError as e:
        return str(e)


def main():
    out = []
    for name, fn in PROGRAMS:
        real = make_fx(with_tokens(fn))(torch.tensor([]), t23(0), t23(1))
        fake = make_fx(with_tokens(fn), tracing_mode="fake")(torch.tensor([]), t23(0), t23(1))
        assert str(real.graph) == str(fake.graph) and real.code == fake.code, name
        out.append(f"@@@ {name} graph\n{real.graph}\n")
        out.append(f"@@@ {name} code\n{real.code}\n")
    torch.ops.load_library(os.path.join(os.path.dirname(torch.__file__), "lib", "libtorchbind_test.so"))
    q = torch.classes._TorchScriptTesting._TensorQueue(torch.empty(0).fill_(-1))
    with enable_torchbind_tracing():
        tb = make_fx(with_tokens_obj(torchbind))(torch.tensor([]), q, t23(0), t23(1))
        # the tensor_queue model (tools/models/tensor_queue.c, gen_hop.py's twin) with tokens:
        # what `cfx trace tensor_queue --effect-tokens` prints
        tq = make_fx(with_tokens_model(gen_hop.tensor_queue))(torch.tensor([]), q, torch.ones(2, 3))
    out.append(f"@@@ tensor_queue_tokens graph\n{tq.graph}\n")
    out.append(f"@@@ torchbind graph\n{tb.graph}\n")
    out.append(f"@@@ torchbind code\n{tb.code}\n")
    tb.graph.eliminate_dead_code()
    out.append(f"@@@ torchbind_dce graph\n{tb.graph}\n")
    # eliminate_dead_code: the unused getitems of None go, with_effects stays (its token is used)
    dced = make_fx(with_tokens(prints))(torch.tensor([]), t23(0), t23(1))
    dced.graph.eliminate_dead_code()
    out.append(f"@@@ prints_dce graph\n{dced.graph}\n")
    # without functionalization _print is an ordinary node (make_fx; the fake trace prints nothing)
    traced = make_fx(prints)(t23(0), t23(1))
    out.append(f"@@@ prints_plain graph\n{traced.graph}\n")
    # is_impure: an op with an effect (aten::_print is ORDERED) is impure, so dce keeps it
    traced.graph.eliminate_dead_code()
    out.append(f"@@@ prints_plain_dce graph\n{traced.graph}\n")
    # torch.export of the same program: export threads the token itself (placeholder `token`,
    # the final token the leading output) and drops the None getitems
    class Prints(torch.nn.Module):
        def forward(self, x, y):
            return prints(x, y)
    ep = torch.export.export(Prints(), (t23(0), t23(1))).run_decompositions({})
    out.append(f"@@@ prints_export graph\n{ep.graph}\n")
    out.append(f"@@@ prints_export signature\n{ep.graph_signature}\n")
    out.append("@@@ aliasing error\n" + error(lambda: with_effects(torch.tensor([]), torch.ops.aten.add_.Tensor,
                                                                   t23(0), t23(1))) + "\n")

    def missing():
        with FunctionalTensorMode():
            torch.ops.aten._print("x")
    out.append("@@@ missing_token error\n" + error(missing) + "\n")
    dense = with_effects(torch.tensor([]), torch.ops.aten._print.default, "hi")
    out.append(f"@@@ dense result\n{len(dense)} {tuple(dense[0].shape)} {dense[0].dtype} {dense[1]}\n")
    golden.write_text("effects.txt", "".join(out))


if __name__ == "__main__":
    main()
