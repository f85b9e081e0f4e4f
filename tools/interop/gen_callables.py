"""Goldens for tracer/callable*.c and tracer/collectives.c: what PyTorch 2.13 records for the
twin of each kind of user callable, and the error texts the C side reproduces.

    tests/data/callable_<case>.<real|fake>.code.txt   make_fx(f).code for the case's twin
    tests/data/callable_errors.tsv                    name <TAB> message (newlines as \\n)

The twins are the Python programs the C tests write with cfx_callable*:
  plain      g(x, y, *, alpha=1) = relu(add(x, y, alpha)), called as g(x, y, alpha=2): inlined
  partial    functools.partial(g, alpha=3) traced directly (the C side traces the closure)
  constant   a function run outside the trace (proxy and fake modes off) whose tensor result
             the traced code then adds: make_fx interns it as _tensor_constant0
  opaque     torch.library.custom_op mylib::fused (x.sin() + 1, fake rule empty_like): one node
  allreduce  _functional_collectives.all_reduce_inplace on a one-process gloo group (what
             Dynamo rewrites dist.all_reduce into): all_reduce, wait_tensor, copy_
  async      dist.all_reduce(y, op, group, True) under torch.compile(fullgraph=True): Dynamo's
             graph break, its "from user code" trailer cut and the function's address
             (`<function all_reduce at 0x7f...>`, an id() that changes every run) dropped
Run from the repo root: python3 tools/interop/gen_callables.py
"""
import functools
import os
import re
import sys

import torch
import torch.distributed as dist
import torch.distributed._functional_collectives as fc
from torch._dynamo.exc import format_graph_break_message, get_gbid_documentation_link
from torch._subclasses.fake_tensor import unset_fake_temporarily
from torch.fx.experimental.proxy_tensor import disable_proxy_modes_tracing, make_fx

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import golden  # noqa: E402


def g(x, y, *, alpha=1):
    return torch.relu(torch.add(x, y, alpha=alpha))


def plain(x, y):
    return g(x, y, alpha=2)


def table(n):
    # the constant function: four values 0, 1, 2, 3 doubled (computed for real)
    t = torch.tensor([float(i) for i in range(n)])
    return torch.add(t, t)


def constant(x):
    with disable_proxy_modes_tracing(), unset_fake_temporarily():
        c = table(4)
    return torch.add(x, c)


@torch.library.custom_op("mylib::fused", mutates_args=())
def fused(x: torch.Tensor) -> torch.Tensor:
    return torch.add(x.sin(), x)


@fused.register_fake
def _(x):
    return torch.empty_like(x)


def opaque(x):
    return torch.relu(fused(x))


def allreduce(x):
    y = torch.add(x, x)
    fc.all_reduce_inplace(y, "sum", dist.group.WORLD)
    return y


def async_none(x):
    y = torch.add(x, x)
    dist.all_reduce(y, dist.ReduceOp.SUM, None, True)
    return y


def async_group(x):
    y = torch.add(x, x)
    dist.all_reduce(y, dist.ReduceOp.SUM, "0", True)
    return y


def async_all_reduce_break(fn):
    """The graph break text of fn's dist.all_reduce(y, SUM, <literal group>, True) (the C call
    passes every argument); deterministic: the Python function object's address is removed."""
    torch._dynamo.reset()
    try:
        torch.compile(fn, backend="eager", fullgraph=True)(torch.ones(4))
    except torch._dynamo.exc.Unsupported as e:
        msg = str(e).split("\n\nfrom user code:")[0]
        return re.sub(r"<function all_reduce at 0x[0-9a-f]+>", "<function all_reduce>", msg)
    raise AssertionError("async_op=True was traced")


def code(fn, mode, *args):
    # cfx traces as make_fx does with _allow_non_fake_inputs=True (tracer/make_fx.h)
    return make_fx(fn, tracing_mode=mode, _allow_non_fake_inputs=True)(*args).code


def main():
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29541")
    dist.init_process_group("gloo", rank=0, world_size=1)
    x, y = torch.ones(4), torch.full((4,), 2.0)
    cases = {
        "plain": (plain, (x, y)),
        "partial": (functools.partial(g, alpha=3), (x, y)),
        "constant": (constant, (x,)),
        "opaque": (opaque, (x,)),
        "allreduce": (allreduce, (x,)),
    }
    for name, (fn, args) in cases.items():
        for mode in ("real", "fake"):
            golden.write_text(f"callable_{name}.{mode}.code.txt", code(fn, mode, *args))
    errors = {}

    @torch.library.custom_op("mylib::nofake", mutates_args=())
    def nofake(x: torch.Tensor) -> torch.Tensor:
        return x.cos()

    try:
        make_fx(lambda x: nofake(x), tracing_mode="fake")(x)
    except RuntimeError as e:
        errors["opaque_no_fake_rule"] = str(e)
    # Dynamo's graph break for an argument assume_constant_result cannot convert, as
    # invoke_and_store_as_constant raises it for a function named `table`
    gb = "assume_constant_result argument conversion failed"
    msg = format_graph_break_message(
        gb,
        "function table, variable type TensorVariable",
        "Cannot convert argument of type TensorVariable to a Python constant for function table "
        "marked with torch._dynamo.assume_constant_result. The variable tracker does not support "
        "constant conversion.",
        ["Remove torch._dynamo.assume_constant_result from this function",
         "Ensure all arguments passed to the function can be converted to constants"])
    assert get_gbid_documentation_link(gb) in msg  # the message carries its link
    errors["constant_fake_argument"] = msg
    # CollectiveFunctionRewriteVariable: a reduce op functional collectives do not have
    from torch.distributed._functional_collectives import REDUCE_OP_TO_STR
    assert dist.ReduceOp.PREMUL_SUM not in REDUCE_OP_TO_STR
    errors["allreduce_premul_sum"] = f"Unsupported all_reduce op: {dist.ReduceOp.PREMUL_SUM}"
    errors["allreduce_async_op"] = async_all_reduce_break(async_none)
    errors["allreduce_async_op_group"] = async_all_reduce_break(async_group)
    dist.destroy_process_group()
    golden.write_text("callable_errors.tsv",
                      "".join(f"{k}\t{v}".replace("\n", "\\n") + "\n" for k, v in errors.items()))


if __name__ == "__main__":
    main()
