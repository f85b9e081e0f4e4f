"""Goldens for opcheck (dispatch/opcheck.h): the messages of custom ops that break their
registration on purpose, as PyTorch 2.13 words them.

Each op of tests/dispatch/test_opcheck.c is defined here too, in Python, and run through
torch.library.opcheck on a (2, 3) float32 input. cfx's message is the call's description in
the crossref check's format (torch._dispatch.python._fmt of the arguments, the op by its
qualified name) followed by PyTorch's own text: SchemaCheckMode's RuntimeError for the schema
checks (as opcheck reports it inside "test_schema failed with ..."), and
torch._dispatch.python.check_metadata_matches' assertion for a Meta kernel that lies (the
seed's format; opcheck's test_faketensor words the same finding through CrossRefFakeMode).
Blocks are "@@@ NAME error" lines followed by the text.
"""
import re

import torch
from torch._dispatch.python import _fmt, check_metadata_matches
from torch._subclasses.fake_tensor import FakeTensorMode
from torch.library import Library, opcheck

import golden

lib = Library("opcheck_test", "DEF")
NS = "opcheck_test"


def define(schema, cpu, meta):
    name = schema.split("(")[0]
    lib.define(schema)
    lib.impl(name, cpu, "CPU")
    lib.impl(name, meta, "Meta")
    return getattr(getattr(torch.ops, NS), name).default


def transposed_like(x):
    return torch.empty_strided(x.shape, (1, x.shape[0]), dtype=x.dtype, device="meta")


OPS = {
    # a Meta kernel lying about strides
    "liar": define("liar(Tensor x) -> Tensor", lambda x: x.clone(), transposed_like),
    # a kernel mutating an argument that is not (a!)
    "mutator": define("mutator(Tensor x) -> Tensor", lambda x: x.add_(1).clone(), torch.empty_like),
    # a kernel returning a view of an argument its schema does not alias
    "sneaky_alias": define("sneaky_alias(Tensor x) -> Tensor", lambda x: x.view(x.shape), torch.empty_like),
    # a view op returning its input object itself
    "returns_input": define("returns_input(Tensor(a) x) -> Tensor(a)", lambda x: x, lambda x: x),
}


def describe(op, args):
    return f"{op._schema.name}({', '.join(repr(_fmt(a)) for a in args)})"


def schema_text(op, args):
    try:
        opcheck(op, args, test_utils="test_schema")
    except Exception as e:  # OpCheckError
        m = re.fullmatch(r"opcheck\(op, \.\.\.\): test_schema failed with (.*) \(scroll up for stack trace\)",
                         str(e), re.S)
        return m.group(1)
    raise AssertionError(f"{op} passed test_schema")


def fake_text(op, args):
    with FakeTensorMode() as m:
        f = op(*[m.from_tensor(a) for a in args])
    r = op(*args)
    try:
        check_metadata_matches(f, r, lambda: describe(op, args))
    except AssertionError as e:
        return str(e)
    raise AssertionError(f"{op} passed the crossref check")


def main():
    x = torch.arange(6, dtype=torch.float32).reshape(2, 3)
    out = []
    out.append(("liar", fake_text(OPS["liar"], (x.clone(),))))
    for name in ("mutator", "sneaky_alias", "returns_input"):
        op = OPS[name]
        out.append((name, f"{describe(op, (x,))}: {schema_text(op, (x.clone(),))}"))
    text = "".join(f"@@@ {n} error\n{t}\n" for n, t in out)
    golden.write_text("opcheck.txt", text)


if __name__ == "__main__":
    main()
