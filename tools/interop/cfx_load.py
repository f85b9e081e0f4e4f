#!/usr/bin/env python3
"""Rebuilds a torch.fx.GraphModule from a graph module cfx saved (docs/graph-json.md).

    import cfx_load
    gm = cfx_load.load("mlp.json")      # weights read from the safetensors file beside it
    print(gm.code); y = gm(x)

or from the shell, printing the rebuilt module's code:  python3 tools/interop/cfx_load.py mlp.json

Each node of the document becomes the FX node of the same name, op and arguments: operator
targets resolve in torch.ops (aten::add.Tensor -> torch.ops.aten.add.Tensor), builtin functions
by their qualified name (operator.getitem, torch._assert, torch.ops.higher_order.<hop>), values
by the format's tags (tuples stay tuples, dtypes and devices become torch objects, operator and
HOP arguments the OpOverload / HigherOrderOperator they name). Attributes
come from the weights file (safetensors) or their inline base64 data, with their recorded
strides. Only the standard library and torch are needed.
"""
import base64
import importlib
import json
import os
import struct
import sys

import torch
import torch.fx

__all__ = ["load", "load_safetensors"]

_ST_DTYPES = {"F64": torch.float64, "F32": torch.float32, "I64": torch.int64, "I32": torch.int32,
              "BOOL": torch.bool}
_TORCH_DTYPES = {"torch.float64": torch.float64, "torch.float32": torch.float32,
                 "torch.int64": torch.int64, "torch.int32": torch.int32, "torch.bool": torch.bool}


def load_safetensors(path):
    """The tensors of a safetensors file by name, contiguous CPU tensors."""
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        begin, end = info["data_offsets"]
        dtype = _ST_DTYPES[info["dtype"]]
        raw = bytearray(data[8 + n + begin:8 + n + end])
        flat = torch.frombuffer(raw, dtype=dtype) if raw else torch.empty(0, dtype=dtype)
        out[name] = flat.reshape(info["shape"])
    return out


def _torch_name(s):
    """torch.float32 from "torch.float32" (dtypes, layouts, memory formats)."""
    obj = torch
    for part in s.split(".")[1:]:
        obj = getattr(obj, part)
    return obj


def _value(v, env):
    if v is None or isinstance(v, (bool, int, str)):
        return v
    if isinstance(v, list):
        return [_value(x, env) for x in v]
    (tag, x), = v.items()
    if tag == "node":
        return env[x]
    if tag == "tuple":
        return tuple(_value(i, env) for i in x)
    if tag == "int":
        return int(x)
    if tag == "float":
        return float(x.lower().replace("infinity", "inf")) if isinstance(x, str) else float(x)
    if tag == "device":
        return torch.device(x)
    if tag == "dict":
        return {x[i]: _value(x[i + 1], env) for i in range(0, len(x), 2)}
    if tag == "op":  # an operator argument (with_effects' op): the OpOverload
        return _function({"op": x})
    if tag == "hop":  # a higher-order operator argument: torch.ops.higher_order.NAME
        return _function({"fn": x})
    if tag in ("dtype", "layout", "memory_format"):
        if isinstance(x, int):
            raise ValueError(f"{tag} code {x} has no torch name")
        return _torch_name(x)
    raise ValueError(f"unknown value tag {tag!r}")


def _function(target):
    if "op" in target:
        qual = target["op"]
        ns, rest = qual.split("::", 1)
        name, _, overload = rest.partition(".")
        return getattr(getattr(getattr(torch.ops, ns), name), overload or "default")
    path = target["fn"]
    module, _, attr = path.rpartition(".")
    if module.startswith("torch.ops."):
        obj = torch.ops
        for part in module.split(".")[2:]:
            obj = getattr(obj, part)
        return getattr(obj, attr)
    return getattr(importlib.import_module(module), attr)


def _attribute(rec, weights):
    dtype = _TORCH_DTYPES[rec["dtype"]]
    shape, stride = [int(_value(s, {})) for s in rec["shape"]], [int(_value(s, {})) for s in rec["stride"]]
    if rec.get("device", "cpu") == "meta":
        return torch.empty_strided(shape, stride, dtype=dtype, device="meta")
    if "data" in rec:
        raw = bytearray(base64.b64decode(rec["data"]))
        dense = (torch.frombuffer(raw, dtype=dtype) if raw else torch.empty(0, dtype=dtype)).reshape(shape)
    elif rec["name"] in weights:
        dense = weights[rec["name"]]
    else:
        dense = torch.zeros(shape, dtype=dtype)
    out = torch.empty_strided(shape, stride, dtype=dtype)
    out.copy_(dense)
    return out


def load(path):
    """The torch.fx.GraphModule of a cfx graph JSON file (and its weights)."""
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    if doc.get("format") != "cfx.graph" or doc.get("version", {}).get("major") != 1:
        raise ValueError(f"{path}: not a cfx.graph document of major version 1")
    weights = {}
    if doc.get("weights"):
        weights = load_safetensors(os.path.join(os.path.dirname(os.path.abspath(path)), doc["weights"]))
    root = torch.nn.Module()
    for rec in doc.get("attributes", []):
        *owner_path, leaf = rec["name"].split(".")
        owner = root
        for part in owner_path:
            if not hasattr(owner, part):
                owner.add_module(part, torch.nn.Module())
            owner = getattr(owner, part)
        owner.register_buffer(leaf, _attribute(rec, weights))
    graph = torch.fx.Graph()
    env = {}
    for rec in doc["nodes"]:
        op, target = rec["op"], rec["target"]
        if op == "call_function":
            target = _function(target)
        args = tuple(_value(a, env) for a in rec["args"])
        kwargs = {k: _value(v, env) for k, v in rec["kwargs"]}
        node = graph.create_node(op, target, args, kwargs, name=rec["name"])
        if node.name != rec["name"]:
            raise ValueError(f"node {rec['name']!r} was renamed {node.name!r} by torch.fx")
        env[rec["name"]] = node
    graph.lint()
    return torch.fx.GraphModule(root, graph, class_name=doc.get("name") or "GraphModule")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: cfx_load.py FILE.json")
    print(load(sys.argv[1]).code)
