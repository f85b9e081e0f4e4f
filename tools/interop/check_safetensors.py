#!/usr/bin/env python3
"""Cross-checks cfx's safetensors files (ir/safetensors.h) with Python's safetensors and PyTorch.

  python3 tools/interop/check_safetensors.py dump FILE        # read FILE, print its tensors
  python3 tools/interop/check_safetensors.py write FILE       # write the reference tensors, print them
  python3 tools/interop/check_safetensors.py roundtrip IN OUT # load IN, save_file it to OUT

`dump` and `write` print one line per tensor, sorted by name: `name dtype [shape] values`, the
values of the flattened tensor as Python prints floats (repr) and ints, bools as 0/1; then one
line `meta key value` per metadata entry, sorted by key. tests/ir/test_safetensors.c prints
the same text from cfx's tensors and compares. `write` makes a tensor of every dtype cfx has
(NaN, infinities, -0.0, int64 extremes, an empty and a 0-dim tensor, one saved from a
transposed tensor), so a file written by Python is read by cfx, and cfx, writing what it read,
must produce Python's bytes. Exit status 0, 1 on a failure, 77 when torch or safetensors
cannot be imported (the cfx test reports that as a failure).
"""
import sys

try:
    import torch
    from safetensors.torch import load_file, save_file
    from safetensors import safe_open
except Exception as e:  # pragma: no cover - environment without the packages
    print("cannot import torch and safetensors:", e)
    sys.exit(77)

NAMES = {torch.float32: "F32", torch.float64: "F64", torch.int32: "I32", torch.int64: "I64",
         torch.bool: "BOOL", torch.uint8: "U8", torch.int8: "I8", torch.int16: "I16",
         torch.complex64: "C64"}


def fmt(t):
    flat = t.reshape(-1)
    if t.dtype == torch.bool:
        vals = [str(int(v)) for v in flat.tolist()]
    elif t.dtype.is_complex:  # real and imaginary parts, each as a float
        vals = [repr(float(v)) for v in torch.view_as_real(flat).reshape(-1).double().tolist()]
    elif t.dtype.is_floating_point:
        vals = [repr(float(v)) for v in flat.double().tolist()]
    else:
        vals = [str(int(v)) for v in flat.tolist()]
    return f"{NAMES[t.dtype]} {list(t.shape)} {' '.join(vals)}".rstrip()


def dump(tensors, meta):
    for name in sorted(tensors):
        print(f"{name} {fmt(tensors[name])}")
    for k in sorted(meta or {}):
        print(f"meta {k} {meta[k]}")


def read(path):
    with safe_open(path, framework="pt") as f:
        meta = f.metadata()
    return load_file(path), meta


def reference():
    nan, inf = float("nan"), float("inf")
    w = torch.tensor([[1.5, -2.0, 0.25], [nan, inf, -0.0]], dtype=torch.float32)
    return {
        "fc.weight": w,
        "fc.bias": torch.tensor([0.5, -1.0], dtype=torch.float32),
        "fc.weight_t": w.t().contiguous(),
        "d": torch.tensor([0.1, 1e-300, -inf, 5e-324], dtype=torch.float64),
        "i32": torch.tensor([[-2147483648, 2147483647], [0, -1]], dtype=torch.int32),
        "i64": torch.tensor([-9223372036854775808, 9223372036854775807, 42], dtype=torch.int64),
        "mask": torch.tensor([True, False, True], dtype=torch.bool),
        "scalar": torch.tensor(3.0, dtype=torch.float64),
        "empty": torch.zeros((0, 4), dtype=torch.float32),
        "z.name \"quoted\" \u00e9": torch.ones(1, dtype=torch.int64),
        "u8": torch.tensor([0, 255, 7], dtype=torch.uint8),
        "i8": torch.tensor([-128, 127, 0], dtype=torch.int8),
        "i16": torch.tensor([[-32768], [32767]], dtype=torch.int16),
        "c64": torch.tensor([complex(1.5, -2.0), complex(nan, -0.0), complex(-0.0, inf)], dtype=torch.complex64),
    }


def main(argv):
    if len(argv) >= 3 and argv[1] == "dump":
        tensors, meta = read(argv[2])
        dump(tensors, meta)
    elif len(argv) >= 3 and argv[1] == "write":
        tensors, meta = reference(), {"format": "pt"}
        save_file(tensors, argv[2], metadata=meta)
        dump(tensors, meta)
    elif len(argv) >= 4 and argv[1] == "roundtrip":
        tensors, meta = read(argv[2])
        save_file(tensors, argv[3], metadata=meta)
    else:
        print(__doc__)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
