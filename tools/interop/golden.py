"""Writing golden files: every file in tests/data/ says which PyTorch and script made it.

Text goldens start with one header line,

    # golden: PyTorch 2.13.0+cpu, tools/interop/gen_fx.py

which the C tests skip (tests/test_util.h, read_golden); JSON goldens carry the same text
under the top-level key "golden". Scripts run from the repo root with the default python3
(`make goldens` runs them all; `make goldens && git diff --exit-code tests/data` checks that
the committed files are current).
"""
import json
import os
import sys

import torch

OUT = "tests/data"


def header():
    script = os.path.relpath(os.path.abspath(sys.argv[0]), os.getcwd())
    return f"PyTorch {torch.__version__}, {script}"


def path(name):
    return os.path.join(OUT, name)


def write_text(name, text):
    """tests/data/NAME = header line + text, byte for byte (no newline translation)."""
    with open(path(name), "w", encoding="utf-8", newline="\n") as f:
        f.write(f"# golden: {header()}\n")
        f.write(text)


def write_json(name, obj, **kw):
    """tests/data/NAME = obj (a dict) with "golden" first, as JSON."""
    with open(path(name), "w", encoding="utf-8", newline="\n") as f:
        json.dump({"golden": header(), **obj}, f, **kw)
        f.write("\n")


def write_json_cases(name, cases):
    """tests/data/NAME = {"golden": ..., "cases": cases}, one compact case a line: a big case
    file changes by the lines of the cases that changed, not as one rewritten line."""
    with open(path(name), "w", encoding="utf-8", newline="\n") as f:
        f.write('{"golden":' + json.dumps(header()) + ',"cases":[\n')
        f.write(",\n".join(json.dumps(c, separators=(",", ":")) for c in cases))
        f.write("\n]}\n")
