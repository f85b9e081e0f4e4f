#!/usr/bin/env python3
"""Checks a cfx.graph JSON file (docs/graph-json.md) independently of cfx, against PyTorch.

  python3 tools/interop/check_graph_json.py FILE.json   (the default python3, with PyTorch 2.13)

- The file must parse with Python's json module in strict mode (no NaN/Infinity literals).
- Every value is decoded by the rules of the format document (tags, ints, floats, lists vs
  tuples); node references must name earlier nodes; names must be unique.
- Every embedded "aten::" schema must equal str(op._schema) of torch.ops.aten.<name>.<overload>,
  and every operator target must resolve in torch.ops under its printed name.
- Attribute data must decode to numel * element_size bytes, which torch.frombuffer reads; with
  a "weights" member (format 1.1), the attributes without data are read from that safetensors
  file (beside the document) by safetensors.torch.load_file, with the recorded dtype and shape.
Exit status 0 on success, 1 on a failed check, 77 when torch cannot be imported (which the
cfx test reports as a failure: PyTorch is the oracle). Used by tests/ir/test_json.c.
"""
import base64
import json
import math
import os
import sys

try:
    import torch
except Exception:  # pragma: no cover - environment without torch
    print("torch is not installed")
    sys.exit(77)

MAX_EXACT = 2**53 - 1
DTYPES = {
    "torch.int32": torch.int32, "torch.int64": torch.int64, "torch.float32": torch.float32,
    "torch.float64": torch.float64, "torch.bool": torch.bool,
}


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def strict_constant(name):
    fail(f"non-standard JSON constant {name}")


def decode_int(v):
    if isinstance(v, bool) or not isinstance(v, (int, dict)):
        fail(f"not an int: {v!r}")
    if isinstance(v, int):
        if abs(v) > MAX_EXACT:
            fail(f"bare int beyond 2^53-1: {v}")
        return v
    (tag, s), = v.items()
    if tag != "int" or not isinstance(s, str):
        fail(f"bad tagged int {v!r}")
    i = int(s)
    if str(i) != s or abs(i) <= MAX_EXACT or not -2**63 <= i < 2**63:
        fail(f"tagged int not canonical: {s}")
    return i


def decode_value(v, defined):
    if v is None or isinstance(v, (bool, str)):
        return v
    if isinstance(v, int):
        return decode_int(v)
    if isinstance(v, float):
        fail(f"bare float {v!r} (floats are tagged)")
    if isinstance(v, list):
        return [decode_value(x, defined) for x in v]
    if not isinstance(v, dict) or len(v) != 1:
        fail(f"bad value {v!r}")
    (tag, x), = v.items()
    if tag == "int":
        return decode_int(v)
    if tag == "float":
        if isinstance(x, str):
            return {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}[x]
        if isinstance(x, bool) or not isinstance(x, (int, float)):
            fail(f"bad float {v!r}")
        return float(x)
    if tag == "tuple":
        return tuple(decode_value(i, defined) for i in x)
    if tag == "node":
        if x not in defined:
            fail(f"node reference {x!r} before its definition")
        return ("%node", x)
    if tag == "dtype":
        return DTYPES[x] if isinstance(x, str) else x
    if tag == "device":
        return torch.device(x)
    if tag == "memory_format":
        return getattr(torch, x.split(".", 1)[1]) if isinstance(x, str) else x
    if tag == "layout":
        return torch.strided if x == "torch.strided" else x
    fail(f"unknown tag {tag!r}")


def printed_target(qn):
    ns, rest = qn.split("::", 1)
    name, _, overload = rest.partition(".")
    return ns, name, overload or "default"


def main():
    with open(sys.argv[1], encoding="utf-8") as f:
        doc = json.load(f, parse_constant=strict_constant)
    if doc.get("format") != "cfx.graph" or doc["version"] != {"major": 1, "minor": 1}:
        fail("format / version")
    schemas = doc.get("schemas", {})
    defined = set()
    n_values = 0
    for node in doc["nodes"]:
        name = node["name"]
        if name in defined:
            fail(f"name {name} twice")
        target = node["target"]
        if node["op"] == "call_function":
            (kind, qn), = target.items()
            ns, opname, overload = printed_target(qn) if kind == "op" else ("", "", "")
            if ns == "aten":  # other namespaces are cfx test libraries
                op = getattr(getattr(getattr(torch.ops, ns), opname), overload)
                if str(op._schema) != schemas.get(qn):
                    fail(f"schema of {qn}: torch {op._schema} vs file {schemas.get(qn)}")
        for a in node["args"]:
            decode_value(a, defined)
            n_values += 1
        for k, v in node["kwargs"]:
            decode_value(v, defined)
            n_values += 1
        defined.add(name)
    weights = {}
    if "weights" in doc:
        from safetensors.torch import load_file
        weights = load_file(os.path.join(os.path.dirname(sys.argv[1]), doc["weights"]))
    for a in doc.get("attributes", []):
        dtype = DTYPES[a["dtype"]]
        numel = math.prod(decode_int(s) for s in a["shape"])
        if "data" not in a and a["device"] == "cpu" and "weights" in doc:
            t = weights.pop(a["name"])
            if t.dtype != dtype or list(t.shape) != [decode_int(s) for s in a["shape"]]:
                fail(f"attribute {a['name']}: {t.dtype} {list(t.shape)} in the weights file")
            print(a["name"], t.reshape(-1).tolist())
        elif "data" in a:
            raw = base64.b64decode(a["data"], validate=True)
            if len(raw) != numel * torch.empty((), dtype=dtype).element_size():
                fail(f"attribute {a['name']}: {len(raw)} bytes")
            t = torch.frombuffer(bytearray(raw), dtype=dtype) if raw else torch.empty(0, dtype=dtype)
            print(a["name"], t.tolist())
    if weights:
        fail(f"weights not named by attributes: {sorted(weights)}")
    print(f"ok: {len(doc['nodes'])} nodes, {n_values} values, {len(schemas)} schemas")


if __name__ == "__main__":
    main()
