"""Goldens for hop/triton_kernel_wrap.c and tracer/user_kernel.c: what PyTorch 2.13 records for
a Triton kernel launch, the twin of the C test's program

    out = empty_like(x); add_kernel[(3, 1, 1)](in_ptr0=x, out_ptr=out, n_elements=5); return out

Triton is not installed: the kernel is an object with Triton's interface (arg_names, fn.__name__,
kernel[grid](*args)), put in kernel_side_table, and the program calls the HOP
triton_kernel_wrapper_mutation directly with the keywords Dynamo's TritonHOPifier passes (every
argument is a tensor or an int, so the constant args are {}). Under functionalization 2.13
cannot analyse the kernel without Triton and clones every tensor argument, as the C side does.

    tests/data/user_kernel.<real|fake>.code.txt     make_fx(f).code
    tests/data/user_kernel.graph.txt                str(graph) (fake)
    tests/data/user_kernel.tabular.txt              graph.print_tabular() (fake)
    tests/data/user_kernel_functional.code.txt      make_fx(functionalize(f)).code (fake)
    tests/data/user_kernel_functional.graph.txt     its str(graph)
    tests/data/user_kernel.out.txt                  f(arange(5.)) as a list
    tests/data/user_kernel_functional_direct.code.txt  make_fx(functionalize(functional)).code (fake):
                                                    triton_kernel_wrapper_functional called directly
Run from the repo root: python3 tools/interop/gen_user_kernel.py
"""
import contextlib
import io
import logging
import os
import sys

import torch
from torch._higher_order_ops.triton_kernel_wrap import (kernel_side_table, triton_kernel_wrapper_functional,
                                                        triton_kernel_wrapper_mutation)
from torch.fx.experimental.proxy_tensor import make_fx

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import golden  # noqa: E402

BLOCK = 2


class AddKernel:
    """Stands in for a triton.JITFunction: out_ptr[i] = in_ptr0[i] + 10, BLOCK elements a program."""
    arg_names = ["in_ptr0", "out_ptr", "n_elements"]

    class fn:
        __name__ = "add_kernel"

    def __getitem__(self, grid):
        def run(in_ptr0, out_ptr, n_elements):
            for pid in range(grid[0]):
                for i in range(pid * BLOCK, min((pid + 1) * BLOCK, n_elements)):
                    out_ptr[i] = in_ptr0[i] + 10
        return run


K = kernel_side_table.add_kernel(AddKernel())
C = kernel_side_table.add_constant_args({})


def f(x):
    out = torch.empty_like(x)
    triton_kernel_wrapper_mutation(kernel_idx=K, constant_args_idx=C, grid=[(3, 1, 1)],
                                   tma_descriptor_metadata={},
                                   kwargs={"in_ptr0": x, "out_ptr": out, "n_elements": 5})
    return out


def functional(x):
    """The functional HOP called directly (its functionalize rule: unwrap, call below, wrap)."""
    out = torch.empty_like(x)
    r = triton_kernel_wrapper_functional(kernel_idx=K, constant_args_idx=C, grid=[(3, 1, 1)],
                                         tma_descriptor_metadata={},
                                         kwargs={"in_ptr0": x, "out_ptr": out, "n_elements": 5},
                                         tensors_to_clone=["out_ptr"])
    return r["out_ptr"]


def main():
    # identify_accessed_tensors logs a warning with a traceback when Triton is missing
    logging.disable(logging.WARNING)
    x = torch.arange(5.0)
    for mode in ("real", "fake"):
        gm = make_fx(f, tracing_mode=mode, _allow_non_fake_inputs=True)(x)
        golden.write_text(f"user_kernel.{mode}.code.txt", gm.code)
    golden.write_text("user_kernel.graph.txt", str(gm.graph))
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        gm.graph.print_tabular()
    golden.write_text("user_kernel.tabular.txt", buf.getvalue()[:-1])  # as gen_tabular.py
    gm = make_fx(torch.func.functionalize(f), tracing_mode="fake")(x)
    golden.write_text("user_kernel_functional.code.txt", gm.code)
    golden.write_text("user_kernel_functional.graph.txt", str(gm.graph))
    golden.write_text("user_kernel.out.txt", repr(f(x).tolist()) + "\n")
    gm = make_fx(torch.func.functionalize(functional), tracing_mode="fake")(x)
    golden.write_text("user_kernel_functional_direct.code.txt", gm.code)
    assert functional(x).tolist() == f(x).tolist()


if __name__ == "__main__":
    main()
