#!/usr/bin/env python3
"""Runs cfx's generated Python (or its loader's GraphModule) in PyTorch and compares the outputs
with cfx's interpreter's. Used by tests/codegen/test_python.c.

  python3 tools/interop/check_codegen.py module FILE.py  INPUTS.safetensors WANT.safetensors [...]
  python3 tools/interop/check_codegen.py loader FILE.json INPUTS.safetensors WANT.safetensors [...]

(any number of such groups of four, so one PyTorch start-up serves every case)
INPUTS holds the forward's arguments under "0", "1", ...; WANT the interpreter's outputs
(flattened) under "0", "1", .... Prints "PATH max_abs_diff D" per case and exits 0 when every
output of every case has the wanted dtype and shape and D <= 1e-5, 1 otherwise.
"""
import importlib.util
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch  # noqa: E402

import cfx_load  # noqa: E402


def flatten(out):
    if isinstance(out, torch.Tensor):
        return [out]
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in flatten(o)]
    raise TypeError(f"unexpected output {type(out).__name__}")


def check(mode, path, inputs, want):
    args = cfx_load.load_safetensors(inputs)
    args = [args[str(i)] for i in range(len(args))]
    if mode == "module":
        spec = importlib.util.spec_from_file_location("cfx_generated", path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        classes = [v for v in vars(mod).values()
                   if isinstance(v, type) and issubclass(v, torch.nn.Module) and v.__module__ == mod.__name__]
        if len(classes) != 1:
            print(f"FAIL: {path}: {len(classes)} module classes")
            return 1
        model = classes[0]()
    else:
        model = cfx_load.load(path)
    with torch.no_grad():
        got = flatten(model(*args))
    wanted = cfx_load.load_safetensors(want)
    wanted = [wanted[str(i)] for i in range(len(wanted))]
    if len(got) != len(wanted):
        print(f"FAIL: {path}: {len(got)} outputs, want {len(wanted)}")
        return 1
    worst = 0.0
    for i, (g, w) in enumerate(zip(got, wanted)):
        if g.dtype != w.dtype or g.shape != w.shape:
            print(f"FAIL: {path}: output {i} is {g.dtype}{list(g.shape)}, want {w.dtype}{list(w.shape)}")
            return 1
        if g.numel():
            worst = max(worst, (g.double() - w.double()).abs().max().item())
    print(f"{path} max_abs_diff {worst:.3g}")
    return 0 if worst <= 1e-5 else 1


def main():
    argv = sys.argv[1:]
    if not argv or len(argv) % 4:
        print(__doc__)
        return 2
    rc = 0
    for i in range(0, len(argv), 4):
        rc |= check(*argv[i:i + 4])
    return rc


if __name__ == "__main__":
    sys.exit(main())
