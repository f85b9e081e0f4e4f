#!/usr/bin/env python3
"""Generates the golden data of the built-in operators (tests/dispatch/test_ops*.c) from
PyTorch 2.13, for every operator of the op table (dispatch/ops.def, read here).

Run from the repo root:  python3 tools/interop/gen_ops.py   (or: make goldens)

Outputs:
  tests/data/ops_cases.json   operator calls and what PyTorch 2.13 returned for each
  tests/data/ops_keys.txt     per built-in op: its schema, the dispatch keys PyTorch
                              registers kernels on (among the keys cfx has kernels for) and
                              its tags
  tests/data/ops_strides.json random layouts through the elementwise ops (below)

In 2.13 a meta run mostly exercises Python: torch/_meta_registrations.py installs the
references of torch/_refs (and its own meta functions) over the C++ Meta kernels, so the
"meta" results below are those references' metadata and texts, and a cpu run the C++
kernels'. Every op of the table has cases; a case whose result is uninitialised memory
(factories, a CPU tensor made by a Python meta function) is generated nondeterministic.

ops_cases.json = {"cases": [case, ...]}; a case is
  {"name": str, "op": cfx op id ("add_Tensor"), "args": [arg, ...], "runs": {run: result}}
Every call is made through torch.ops.aten.<name>.<overload>, arguments in schema order
(kwarg-only ones passed by keyword). Runs: "cpu" and "meta" replay the case with every
"auto" device set to that device; "mixed" uses the devices as written.
  arg = {"k": "tensor", "dtype": "float32", "sizes": [...], "strides": [...], "offset": n,
         "storage": [values], "dev": "auto" | "cpu" | "meta", "share": j (optional: view the
         storage of argument j instead of a new one)}
      | {"k": "int"|"double"|"bool", "v": ...} | {"k": "none"} | {"k": "ints", "v": [...]}
      | {"k": "dtype", "v": code} | {"k": "device", "v": "auto"|"cpu"|"meta"}
      | {"k": "memfmt", "v": code} | {"k": "layout", "v": code}
  result = {"error": message}
         | {"scalar": {"k": "int"|"double"|"bool", "v": ...}}   (ops returning a number)
         | {"dtype", "device", "sizes", "strides", "offset",
            "values": row-major values (CPU only; null for uninitialised memory),
            "alias": index of the argument whose storage the result shares, or -1,
            "version_bumped": whether that argument's version counter moved}
         | {"returns": [one such record per return]}    (ops returning several tensors)
A Tensor? argument is a tensor arg or {"k": "none"}. A case may carry "tol": [atol, rtol] for
its float values (layer norm: PyTorch accumulates in float, cfx in double).
Float values that JSON cannot hold are the strings "nan", "inf", "-inf"; bools are 0/1.

ops_strides.json = {"cases": [[op, [[sizes, strides, dtype], ...], cpu, meta], ...]}: random
layouts (broadcast, permuted, gapped, zero-stride, size-0/1 dims) and dtype mixes through the
elementwise ops, clone and empty_like, recording only the result's strides (cpu / meta: a
strides list or the error text). This is the bulk check of the two layout rules: TensorIterator's
(CPU kernels) and prims' permutation (the references, on meta).
"""
import json
import math
import os
import random
import re
import sys

import torch

import ops_nn_cases
import golden

OUT_CASES = "tests/data/ops_cases.json"
OUT_NN_CASES = "tests/data/ops_nn_cases.json"  # ops_nn_cases.py's: matrix and nn operators
OUT_KEYS = "tests/data/ops_keys.txt"
OUT_STRIDES = "tests/data/ops_strides.json"

def table_ops():
    """(id, name, overload) of every row of dispatch/ops.def, as tools/opgen names them."""
    text = open("dispatch/ops.def").read()
    out = []
    for m in re.finditer(r'^CFX_OP\("aten::([A-Za-z0-9_]+)(?:\.([A-Za-z0-9_]+))?\(', text, re.M):
        name, overload = m.group(1), m.group(2)
        out.append((f"{name}_{overload}" if overload else name, name, overload or "default"))
    return out


OPS = table_ops()
OPMAP = {cid: getattr(getattr(torch.ops.aten, n), o) for cid, n, o in OPS}
KEYS_OF_INTEREST = ["CPU", "Meta", "BackendSelect", "CompositeExplicitAutograd",
                    "CompositeExplicitAutogradNonFunctional", "CompositeImplicitAutograd"]

DTYPES = {"float32": torch.float32, "float64": torch.float64, "int64": torch.int64,
          "int32": torch.int32, "bool": torch.bool}
# complex tensors (the FFT ops, ops_fft_cases.py) list their storage and values as real,
# imaginary pairs; kept out of DTYPES, which the older case loops iterate over
COMPLEX_DTYPES = {"complex64": (torch.complex64, torch.float32), "complex128": (torch.complex128, torch.float64)}
ALL_DTYPES = {**DTYPES, "uint8": torch.uint8, **{k: v[0] for k, v in COMPLEX_DTYPES.items()}}
DTYPE_NAME = {**{v: k for k, v in DTYPES.items()}, torch.uint8: "uint8",  # uint8: batch_norm's reserve
              **{v[0]: k for k, v in COMPLEX_DTYPES.items()}}
DTYPE_CODE = {"int32": 3, "int64": 4, "float32": 6, "float64": 7, "bool": 11, "uint8": 0, "complex64": 9,
              "complex128": 10}
MEMFMT = {0: torch.contiguous_format, 1: torch.preserve_format, 2: torch.channels_last,
          3: torch.channels_last_3d}

rng = random.Random(1313)
cases = []


# ---- argument builders -----------------------------------------------------------------------

def contiguous_strides(sizes):
    st, z = [0] * len(sizes), 1
    for d in reversed(range(len(sizes))):
        st[d] = z
        z *= max(sizes[d], 1)
    return st


def storage_len(sizes, strides, offset):
    if any(s == 0 for s in sizes):
        return offset
    return offset + 1 + sum((s - 1) * st for s, st in zip(sizes, strides))


def values_for(dtype, n, kind="default"):
    if dtype in COMPLEX_DTYPES:
        return values_for("float32", 2 * n, kind)
    if dtype == "bool":
        return [rng.randint(0, 1) for _ in range(n)]
    if dtype in ("int64", "int32"):
        return [rng.randint(-5, 5) for _ in range(n)]
    if kind == "small":
        return [rng.randint(-8, 8) / 4.0 for _ in range(n)]
    return [rng.randint(-16, 16) / 4.0 for _ in range(n)]


def T(sizes, strides=None, dtype="float32", offset=0, dev="auto", kind="default", share=None):
    sizes = list(sizes)
    strides = contiguous_strides(sizes) if strides is None else list(strides)
    a = {"k": "tensor", "dtype": dtype, "sizes": sizes, "strides": strides, "offset": offset, "dev": dev}
    if share is None:
        a["storage"] = values_for(dtype, storage_len(sizes, strides, offset), kind)
    else:
        a["share"] = share
    return a


def perm_strides(sizes, order):
    """Strides of a contiguous tensor of the permuted shape, permuted back: order lists the
    dims from outermost to innermost in memory."""
    st, z = [0] * len(sizes), 1
    for d in reversed(order):
        st[d] = z
        z *= max(sizes[d], 1)
    return st


def I(v): return {"k": "int", "v": v}
def D(v): return {"k": "double", "v": v}
def B(v): return {"k": "bool", "v": v}
def NONE(): return {"k": "none"}
def INTS(v): return {"k": "ints", "v": list(v)}
def DT(name): return {"k": "dtype", "v": DTYPE_CODE[name]}
def DEV(d="auto"): return {"k": "device", "v": d}
def MF(code): return {"k": "memfmt", "v": code}
def LAYOUT(code=0): return {"k": "layout", "v": code}
def GEN(seed): return {"k": "generator", "v": seed}  # a fresh torch.Generator().manual_seed(seed)


# ---- running a case on PyTorch ---------------------------------------------------------------

def encode_value(v):
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
    return v


def flatten(x):
    if isinstance(x, list):
        out = []
        for e in x:
            out.extend(flatten(e))
        return out
    return [x]


def build_args(args, run):
    built, bases = [], []
    for a in args:
        k = a["k"]
        base = None
        if k == "tensor":
            dev = a["dev"] if a["dev"] != "auto" else run
            dt = ALL_DTYPES[a["dtype"]]
            cplx = a["dtype"] in COMPLEX_DTYPES
            if "share" in a:
                base = bases[a["share"]]
            elif dev == "cpu":
                storage = [float(v) if isinstance(v, str) else v for v in a["storage"]]  # "nan", "inf"
                if cplx:  # real, imaginary pairs
                    base = torch.tensor(storage, dtype=COMPLEX_DTYPES[a["dtype"]][1]).view(dt)
                else:
                    base = torch.tensor(storage, dtype=dt) if storage else torch.empty(0, dtype=dt)
            else:
                base = torch.empty(len(a["storage"]) // (2 if cplx else 1), dtype=dt, device="meta")
            built.append(base.as_strided(a["sizes"], a["strides"], a["offset"]))
        elif k == "tensors":
            built.append(build_args(a["v"], run)[0])
        elif k == "double" and isinstance(a["v"], str):  # "nan", "inf", "-inf"
            built.append(float(a["v"]))
        elif k in ("int", "double", "bool", "str"):
            built.append(a["v"])
        elif k == "none":
            built.append(None)
        elif k == "ints":
            built.append(list(a["v"]))
        elif k == "bools":  # bool[N] (output_mask)
            built.append([bool(v) for v in a["v"]])
        elif k == "floats":
            built.append([float(x) for x in a["v"]])
        elif k == "dtype":
            built.append({v: ALL_DTYPES[n] for n, v in DTYPE_CODE.items()}[a["v"]])
        elif k == "device":
            built.append(torch.device(a["v"] if a["v"] != "auto" else run))
        elif k == "memfmt":
            built.append(MEMFMT[a["v"]])
        elif k == "layout":
            built.append(torch.strided)
        elif k == "generator":
            built.append(torch.Generator().manual_seed(a["v"]))
        else:
            raise ValueError(k)
        bases.append(base)
    return built, bases


def call(op_id, built):
    op = OPMAP[op_id]
    if op_id in ("add_Tensor", "sub_Tensor", "add__Tensor") and isinstance(built[2], bool):
        # torch.ops turns a Python bool Scalar into an int; the Python binding keeps it a
        # bool Scalar, which is what cfx's BOOL value is
        fn = {"add_Tensor": torch.add, "sub_Tensor": torch.sub, "add__Tensor": torch.Tensor.add_}[op_id]
        return fn(built[0], built[1], alpha=built[2])
    pos, kw = [], {}
    for arg, v in zip(op._schema.arguments, built):
        if arg.kwarg_only:
            kw[arg.name] = v
        else:
            pos.append(v)
    return op(*pos, **kw)


def run_case(op_id, args, run, nondeterministic):
    built, bases = build_args(args, run)
    versions = [b._version if isinstance(b, torch.Tensor) else None for b in built]
    try:
        r = call(op_id, built)
    except Exception as e:  # noqa: BLE001 - every error text is data here
        return {"error": str(e)}
    if isinstance(r, tuple):
        return {"returns": [describe(x, built, versions, nondeterministic) if x is not None else {"none": True}
                            for x in r]}
    if isinstance(r, list):
        return {"list": [describe(x, built, versions, nondeterministic) for x in r]}
    if isinstance(r, (bool, int, float)):
        kind = "bool" if isinstance(r, bool) else "int" if isinstance(r, int) else "double"
        return {"scalar": {"k": kind, "v": encode_value(r)}}
    return describe(r, built, versions, nondeterministic)


def describe(r, built, versions, nondeterministic):
    alias, bumped = -1, False
    for i, b in enumerate(built):
        # every tensor argument is an as_strided view of a base, so a result sharing its
        # storage is either the argument itself (in-place) or another view of that base
        # (or a result that shares the storage without being a view: _unsafe_view)
        if isinstance(b, torch.Tensor) and (r is b or (r._base is not None and r._base is b._base) or
                                            r.untyped_storage()._cdata == b.untyped_storage()._cdata):
            alias = i
            bumped = b._version != versions[i]
            break
    res = {"dtype": DTYPE_NAME[r.dtype], "device": r.device.type, "sizes": list(r.shape),
           "strides": list(r.stride()), "offset": r.storage_offset(), "alias": alias,
           "version_bumped": bumped}
    if r.device.type == "cpu" and not nondeterministic:
        vals = flatten((torch.view_as_real(r.resolve_conj()) if r.is_complex() else r).tolist())  # values, not data
        res["values"] = [encode_value(v) for v in vals]
    else:
        res["values"] = None
    return res


def add_case(name, op_id, args, runs=("cpu", "meta"), nondeterministic=False, tol=None):
    c = {"name": name, "op": op_id, "args": args,
         "runs": {run: run_case(op_id, args, run, nondeterministic) for run in runs}}
    if tol is not None:
        c["tol"] = list(tol)
    cases.append(c)


# ---- the cases -------------------------------------------------------------------------------

SHAPE_PAIRS = [
    ("same", [2, 3], None, [2, 3], None),
    ("row_bcast", [2, 3], None, [3], None),
    ("outer", [2, 1], None, [1, 3], None),
    ("col_bcast", [3, 1], None, [3], None),
    ("rank3_bcast", [2, 3, 4], None, [3, 1], None),
    ("two_way", [4, 1, 3], None, [1, 2, 1], None),
    ("scalar_right", [2, 3], None, [], None),
    ("scalar_left", [], None, [2, 3], None),
    ("scalars", [], None, [], None),
    ("one_vs_n", [1], None, [5], None),
    ("empty_rows", [0, 3], None, [3], None),
    ("empty_cols", [2, 0], None, [2, 1], None),
    ("empty_scalar", [0], None, [], None),
    ("a_transposed", [3, 4], [1, 3], [3, 4], None),
    ("b_transposed", [3, 4], None, [3, 4], [1, 3]),
    ("both_transposed", [3, 4], [1, 3], [3, 4], [1, 3]),
    ("transposed_bcast_row", [3, 4], [1, 3], [4], None),
    ("transposed_bcast_col", [3, 4], [1, 3], [3, 1], None),
    ("permuted3d", [2, 3, 4], perm_strides([2, 3, 4], [2, 0, 1]), [2, 3, 4], None),
    ("permuted3d_both", [2, 3, 4], perm_strides([2, 3, 4], [1, 2, 0]), [2, 3, 4],
     perm_strides([2, 3, 4], [1, 2, 0])),
    ("nondense_a", [3, 4], [1, 6], [3, 4], None),
    ("nondense_both_same", [3, 4], [8, 2], [3, 4], [8, 2]),
    ("expanded_a", [3, 4], [0, 1], [3, 4], None),
    ("expanded_b_col", [3, 4], None, [3, 4], [1, 0]),
    ("channels_last_both", [2, 3, 2, 2], [12, 1, 6, 3], [2, 3, 2, 2], [12, 1, 6, 3]),
    ("channels_last_a", [2, 3, 2, 2], [12, 1, 6, 3], [2, 3, 2, 2], None),
    ("nc11", [2, 3, 1, 1], [3, 1, 3, 3], [2, 3, 1, 1], [3, 1, 3, 3]),
    ("size1_perm", [2, 1, 3], [1, 6, 2], [2, 1, 3], [1, 6, 2]),
    ("offset", [2, 3], None, [2, 3], None),
    ("mismatch", [2, 3], None, [2, 5], None),
    ("mismatch_1d", [5], None, [3], None),
]

BIN_OPS = ["add_Tensor", "sub_Tensor", "mul_Tensor", "div_Tensor"]


def binary_cases():
    for op in BIN_OPS:
        for name, sa, sta, sb, stb in SHAPE_PAIRS:
            off = 2 if name == "offset" else 0
            args = [T(sa, sta, offset=off), T(sb, stb, offset=off)]
            if op in ("add_Tensor", "sub_Tensor"):
                args.append(I(1))
            add_case(f"{op}/{name}", op, args)
        for da in DTYPES:
            for db in DTYPES:
                for lname, sa, sta, sb, stb in [("flat", [5], None, [5], None),
                                                ("t_nondense", [3, 4], [1, 6], [3, 4], [4, 1]),
                                                ("zero_dim_b", [2, 3], None, [], None)]:
                    args = [T(sa, sta, da), T(sb, stb, db)]
                    if op in ("add_Tensor", "sub_Tensor"):
                        args.append(I(1))
                    add_case(f"{op}/{da}_{db}/{lname}", op, args)
    for op in ("add_Tensor", "sub_Tensor"):
        for dt in DTYPES:
            for alpha in (I(2), I(-3), D(0.5), B(True), B(False)):
                add_case(f"{op}/alpha_{alpha['k']}_{alpha['v']}/{dt}", op,
                         [T([2, 3], dtype=dt), T([2, 3], dtype=dt), alpha])
        add_case(f"{op}/alpha_none", op, [T([3]), T([3]), NONE()])
        add_case(f"{op}/alpha_mixed_int_float", op, [T([3], dtype="int64"), T([3]), D(0.5)])
        add_case(f"{op}/alpha_after_bcast_error", op, [T([2], dtype="int64"), T([3], dtype="int64"), D(0.5)])
    # devices
    for op in BIN_OPS:
        extra = [I(1)] if op in ("add_Tensor", "sub_Tensor") else []
        add_case(f"{op}/dev_cpu_meta", op, [T([3], dev="cpu"), T([3], dev="meta")] + extra, runs=("mixed",))
        add_case(f"{op}/dev_meta_cpu", op, [T([3], dev="meta"), T([3], dev="cpu")] + extra, runs=("mixed",))
        add_case(f"{op}/dev_meta_cpu0d", op, [T([2, 3], dev="meta"), T([], dev="cpu")] + extra, runs=("mixed",))
        add_case(f"{op}/dev_cpu0d_meta", op, [T([], dev="cpu", dtype="float64"), T([3], dev="meta")] + extra,
                 runs=("mixed",))
        add_case(f"{op}/dev_cpu0d_meta0d", op, [T([], dev="cpu"), T([], dev="meta")] + extra, runs=("mixed",))
    # random layouts: output strides of the TensorIterator sort
    for i in range(150):
        sizes, strides = random_layout(4)
        sb = list(sizes)
        stb = list(strides)
        mode = rng.randint(0, 3)
        if mode == 0:
            rng.shuffle(stb)
        elif mode == 1 and sizes:
            d = rng.randrange(len(sizes))
            sb[d] = 1
            stb = contiguous_strides(sb)
        elif mode == 2:
            sb, stb = random_layout_like(sizes)
        da = rng.choice(list(DTYPES))
        db = rng.choice(list(DTYPES))
        add_case(f"add_Tensor/random{i}", "add_Tensor", [T(sizes, strides, da), T(sb, stb, db), I(1)])


def random_layout(maxdim):
    nd = rng.randint(0, maxdim)
    sizes = [rng.choice([0, 1, 1, 2, 3, 4]) if rng.random() < 0.15 else rng.choice([1, 2, 3, 4]) for _ in range(nd)]
    return sizes, random_strides(sizes)


def random_strides(sizes):
    nd = len(sizes)
    order = list(range(nd))
    rng.shuffle(order)
    strides, acc = [0] * nd, 1
    for d in reversed(order):
        r = rng.random()
        strides[d] = acc if r > 0.2 else rng.choice([0, acc * 2, 1])
        acc *= max(sizes[d], 1) * rng.choice([1, 1, 2])
    return strides


def random_layout_like(sizes):
    return list(sizes), random_strides(sizes)


UNARY_LAYOUTS = [
    ("contig", [2, 3], None),
    ("transposed", [3, 4], [1, 3]),
    ("nondense", [3, 4], [1, 6]),
    ("expanded", [3, 4], [0, 1]),
    ("nc11", [2, 3, 1, 1], [3, 1, 3, 3]),
    ("size1_perm", [2, 1, 3], [1, 6, 2]),
    ("channels_last", [2, 3, 2, 2], [12, 1, 6, 3]),
    ("scalar", [], None),
    ("empty", [0, 3], None),
    ("permuted3d", [2, 3, 4], perm_strides([2, 3, 4], [2, 0, 1])),
]


def unary_cases():
    for op in ("neg", "relu", "sin", "cos", "exp"):
        for dt in DTYPES:
            for lname, s, st in UNARY_LAYOUTS:
                add_case(f"{op}/{dt}/{lname}", op, [T(s, st, dt, kind="small" if op == "exp" else "default")])
        for i in range(40 if op in ("relu", "sin") else 10):
            sizes, strides = random_layout(5)
            dt = rng.choice(["float32", "float64", "int64", "int32"])
            add_case(f"{op}/random{i}", op, [T(sizes, strides, dt, kind="small")])


def sum_cases():
    layouts = [("contig", [2, 3, 4], None), ("permuted", [2, 3, 4], perm_strides([2, 3, 4], [2, 0, 1])),
               ("nondense", [3, 4], [1, 6]), ("scalar", [], None), ("empty", [2, 0, 3], None),
               ("expanded", [3, 4], [0, 1])]
    dim_sets = [None, [], [0], [-1], [1], [0, 2], [2, 0], [0, 1, 2], [-1, 0], [0, 0], [1, -2], [3], [-4],
                [0, 0, 5]]
    for lname, s, st in layouts:
        for dims in dim_sets:
            for keep in (False, True):
                for dt in ("float32", "int32", "bool"):
                    args = [T(s, st, dt), NONE() if dims is None else INTS(dims), B(keep), NONE()]
                    add_case(f"sum/{lname}/{dims}/{keep}/{dt}", "sum_dim_IntList", args)
    for din in DTYPES:
        for dout in DTYPES:
            add_case(f"sum/dtype_{din}_{dout}", "sum_dim_IntList",
                     [T([2, 3], dtype=din), INTS([1]), B(False), DT(dout)])
        add_case(f"sum/default_dtype_{din}", "sum_dim_IntList", [T([4], dtype=din), INTS([0]), B(False), NONE()])
    add_case("sum/int32_wrap", "sum_dim_IntList",
             [{"k": "tensor", "dtype": "int32", "sizes": [2], "strides": [1], "offset": 0,
               "storage": [2 ** 31 - 1, 5], "dev": "auto"}, INTS([0]), B(False), DT("int32")])
    add_case("sum/float_to_int32", "sum_dim_IntList",
             [{"k": "tensor", "dtype": "float32", "sizes": [3], "strides": [1], "offset": 0,
               "storage": [1.75, -2.75, 3.5], "dev": "auto"}, INTS([0]), B(False), DT("int32")])


def mm_cases():
    shapes = [("basic", [2, 3], None, [3, 4], None), ("a_t", [2, 3], [1, 2], [3, 4], None),
              ("b_t", [2, 3], None, [3, 4], [1, 3]), ("both_t", [2, 3], [1, 2], [3, 4], [1, 3]),
              ("vec_like", [1, 5], None, [5, 1], None), ("empty_n", [0, 3], None, [3, 4], None),
              ("empty_k", [2, 0], None, [0, 4], None), ("empty_m", [2, 3], None, [3, 0], None),
              ("offset_nondense", [2, 3], [6, 2], [3, 2], [4, 1]),
              ("bad_inner", [2, 3], None, [4, 5], None), ("self_1d", [3], None, [3, 3], None),
              ("mat2_1d", [3, 3], None, [3], None), ("self_3d", [2, 3, 4], None, [4, 5], None),
              ("self_0d", [], None, [3, 3], None)]
    for name, sa, sta, sb, stb in shapes:
        for dt in DTYPES:
            add_case(f"mm/{name}/{dt}", "mm", [T(sa, sta, dt), T(sb, stb, dt)])
    for da in DTYPES:
        for db in DTYPES:
            if da != db:
                add_case(f"mm/mixed_{da}_{db}", "mm", [T([2, 3], dtype=da), T([3, 2], dtype=db)])
                add_case(f"mm/mixed_empty_{da}_{db}", "mm", [T([2, 0], dtype=da), T([0, 2], dtype=db)])
    # 2.13's meta_mm returns a.new_empty: a CPU tensor of uninitialised memory here
    add_case("mm/dev_cpu_meta", "mm", [T([2, 3], dev="cpu"), T([3, 2], dev="meta")], runs=("mixed",),
             nondeterministic=True)
    add_case("mm/dev_meta_cpu", "mm", [T([2, 3], dev="meta"), T([3, 2], dev="cpu")], runs=("mixed",))


def t_view_cases():
    for name, s, st, off in [("0d", [], None, 1), ("1d", [5], None, 0), ("2d", [2, 3], None, 0),
                             ("2d_t", [2, 3], [1, 2], 0), ("2d_offset", [2, 3], [4, 1], 3),
                             ("3d", [2, 3, 4], None, 0), ("empty", [0, 3], None, 0)]:
        add_case(f"t/{name}", "t", [T(s, st, offset=off)])
    views = [
        ("flatten", [2, 3], None, [6]), ("unflatten", [6], None, [2, 3]), ("infer", [2, 3, 4], None, [-1, 4]),
        ("infer_mid", [2, 3, 4], None, [2, -1, 2]), ("same", [2, 3], None, [2, 3]),
        ("add_ones", [2, 3], None, [1, 2, 1, 3, 1]), ("drop_ones", [1, 2, 1, 3], None, [2, 3]),
        ("scalar_to_11", [], None, [1, 1]), ("11_to_scalar", [1, 1], None, []),
        ("scalar_to_m1", [], None, [-1]), ("transposed_ok", [3, 4], [1, 3], [3, 4]),
        ("transposed_split_ok", [4, 6], [1, 4], [2, 2, 6]), ("transposed_bad", [3, 4], [1, 3], [12]),
        ("transposed_ones", [3, 4], [1, 3], [3, 1, 4]), ("nondense_split", [4, 3], [6, 1], [2, 2, 3]),
        ("nondense_merge_bad", [4, 3], [6, 1], [12]), ("offset", [2, 3], None, [3, 2]),
        ("empty_same", [0, 3], [5, 7], [0, 3]), ("empty_reshape", [0, 3], None, [3, 0]),
        ("empty_infer", [0], None, [-1]), ("empty_infer_bad", [0, 3], None, [0, -1]),
        ("two_infer", [6], None, [-1, -1]), ("neg_dim", [6], None, [-2, 3]), ("wrong_numel", [6], None, [2, 5]),
        ("expanded_ok", [3, 4], [0, 1], [3, 2, 2]), ("expanded_bad", [3, 4], [0, 1], [12]),
        ("channels_last", [2, 3, 2, 2], [12, 1, 6, 3], [2, 3, 4]),
    ]
    for name, s, st, new in views:
        add_case(f"view/{name}", "view", [T(s, st, offset=2 if name == "offset" else 0), INTS(new)])


LIKE_LAYOUTS = [
    ("contig", [2, 3], None), ("transposed", [3, 4], [1, 3]), ("nondense", [3, 4], [1, 6]),
    ("expanded", [3, 4], [0, 1]), ("expanded3d", [3, 4, 5], [1, 0, 3]),
    ("channels_last", [2, 3, 4, 5], [60, 1, 15, 3]), ("channels_last_nondense", [2, 3, 4, 5], [120, 1, 30, 6]),
    ("cl3d", [2, 3, 2, 2, 2], [24, 1, 12, 6, 3]), ("nc11", [2, 3, 1, 1], [3, 1, 3, 3]),
    ("n111", [2, 1, 1, 1], [1, 1, 1, 1]), ("scalar", [], None), ("empty", [2, 0, 3], None),
    ("permuted5d", [2, 4, 5, 6, 3], [360, 30, 6, 1, 120]), ("offset", [2, 3], None),
]


def clone_like_cases():
    for name, s, st in LIKE_LAYOUTS:
        off = 3 if name == "offset" else 0
        for mf in (None, 0, 1, 2, 3):
            add_case(f"clone/{name}/{mf}", "clone", [T(s, st, offset=off), NONE() if mf is None else MF(mf)])
            add_case(f"empty_like/{name}/{mf}", "empty_like",
                     [T(s, st, offset=off), NONE(), NONE(), NONE(), NONE(), NONE() if mf is None else MF(mf)],
                     nondeterministic=True)
    for dt in DTYPES:
        add_case(f"clone/dtype_{dt}", "clone", [T([3, 2], [1, 3], dt), NONE()])
        add_case(f"empty_like/dtype_{dt}", "empty_like",
                 [T([3, 4], [1, 3]), DT(dt), NONE(), NONE(), NONE(), NONE()], nondeterministic=True)
    add_case("empty_like/all_options", "empty_like",
             [T([3, 4], [1, 3], "int32"), DT("float64"), LAYOUT(0), DEV("auto"), B(False), MF(0)],
             nondeterministic=True)
    add_case("empty_like/to_meta", "empty_like",
             [T([3, 4], [1, 3], dev="cpu"), NONE(), NONE(), DEV("meta"), NONE(), NONE()],
             runs=("mixed",), nondeterministic=True)
    add_case("empty_like/to_cpu", "empty_like",
             [T([3, 4], [1, 3], dev="meta"), NONE(), NONE(), DEV("cpu"), NONE(), NONE()],
             runs=("mixed",), nondeterministic=True)


def inplace_cases():
    op = "add__Tensor"
    for da in DTYPES:
        for db in DTYPES:
            add_case(f"{op}/{da}_{db}", op, [T([2, 3], dtype=da), T([2, 3], dtype=db), I(1)])
    for name, sa, sta, sb, stb in [("bcast_row", [2, 3], None, [3], None), ("self_t", [3, 4], [1, 3], [4], None),
                                   ("other_t", [3, 4], None, [3, 4], [1, 3]), ("scalar_other", [2, 3], None, [], None),
                                   ("self_nondense", [3, 4], [1, 6], [3, 4], None),
                                   ("shape_mismatch", [3], None, [2, 3], None),
                                   ("scalar_self", [], None, [3], None), ("bcast_error", [2, 3], None, [2, 5], None)]:
        add_case(f"{op}/{name}", op, [T(sa, sta), T(sb, stb), I(1)])
    add_case(f"{op}/alpha2", op, [T([4], dtype="int32"), T([4], dtype="int64"), I(2)])
    add_case(f"{op}/alpha_float_int", op, [T([4], dtype="int64"), T([4], dtype="int64"), D(0.5)])
    add_case(f"{op}/alpha_float", op, [T([4]), T([4]), D(0.5)])
    add_case(f"{op}/alpha_none", op, [T([4]), T([4]), NONE()])
    add_case(f"{op}/self_self", op, [T([2, 2]), {"k": "tensor", "dtype": "float32", "sizes": [2, 2],
                                                "strides": [2, 1], "offset": 0, "dev": "auto", "share": 0}, I(1)])
    add_case(f"{op}/self_transposed_self", op,
             [T([3, 3]), {"k": "tensor", "dtype": "float32", "sizes": [3, 3], "strides": [1, 3], "offset": 0,
                          "dev": "auto", "share": 0}, I(1)])
    add_case(f"{op}/partial_overlap", op,
             [T([3], [1], offset=1), {"k": "tensor", "dtype": "float32", "sizes": [3], "strides": [1],
                                      "offset": 0, "dev": "auto", "share": 0}, I(1)])
    add_case(f"{op}/disjoint_same_storage", op,
             [T([2], [1], offset=2), {"k": "tensor", "dtype": "float32", "sizes": [2], "strides": [1],
                                      "offset": 0, "dev": "auto", "share": 0}, I(1)])
    add_case(f"{op}/internal_overlap", op, [T([3], [0]), T([3]), I(1)])
    add_case(f"{op}/dev_cpu_meta", op, [T([3], dev="cpu"), T([3], dev="meta"), I(1)], runs=("mixed",))
    add_case(f"{op}/dev_meta_cpu", op, [T([3], dev="meta"), T([3], dev="cpu"), I(1)], runs=("mixed",))
    add_case(f"{op}/dev_meta_cpu0d", op, [T([3], dev="meta"), T([], dev="cpu"), I(1)], runs=("mixed",))
    add_case(f"{op}/dev_cpu0d_meta", op, [T([], dev="cpu"), T([3], dev="meta"), I(1)], runs=("mixed",))


def factory_cases():
    sizes_list = [[2, 3], [], [0], [2, 0, 3], [2, 1, 3], [2, 3, 4, 5], [2, 3, 4, 5, 6], [2, 0, 4, 5],
                  [1, 1, 1, 1], [-1, 2], [2, -3, 1, 1]]
    for sizes in sizes_list:
        for mf in (None, 0, 1, 2, 3):
            for dt in (None, "float64", "int64", "bool"):
                add_case(f"empty/{sizes}/{mf}/{dt}", "empty_memory_format",
                         [INTS(sizes), NONE() if dt is None else DT(dt), NONE(), DEV(), NONE(),
                          NONE() if mf is None else MF(mf)], nondeterministic=True)
    add_case("empty/no_device", "empty_memory_format", [INTS([2, 3]), NONE(), NONE(), NONE(), NONE(), NONE()],
             runs=("mixed",), nondeterministic=True)
    add_case("empty/pin", "empty_memory_format", [INTS([2, 3]), NONE(), NONE(), DEV(), B(True), NONE()],
             nondeterministic=True)
    add_case("empty/pin_false_layout", "empty_memory_format",
             [INTS([2, 3]), DT("int32"), LAYOUT(0), DEV(), B(False), MF(0)], nondeterministic=True)
    strided = [([2, 3], [3, 1]), ([2, 3], [1, 2]), ([2, 3], [0, 0]), ([2, 0], [5, 7]), ([], []), ([4], [2]),
               ([2, 3], [1]), ([2, -3], [1, 2]), ([2, -3], [1]), ([2, 3], [1, -2]), ([2, 3], [-1, 2]),
               ([2, 3, 4], [-1, -1, -1]), ([2, 0, 4], [-1, 5, -3]), ([3, 4], [1, 6])]
    for sizes, strides in strided:
        for dt in (None, "int32"):
            add_case(f"empty_strided/{sizes}/{strides}/{dt}", "empty_strided",
                     [INTS(sizes), INTS(strides), NONE() if dt is None else DT(dt), NONE(), DEV(), NONE()],
                     nondeterministic=True)
    add_case("empty_strided/pin", "empty_strided", [INTS([2, 3]), INTS([3, 1]), NONE(), NONE(), DEV(), B(True)],
             nondeterministic=True)


def max_dim_cases():
    layouts = [("contig", [2, 3, 4], None), ("permuted", [2, 3, 4], perm_strides([2, 3, 4], [2, 0, 1])),
               ("transposed", [3, 4], [1, 3]), ("nondense", [3, 4], [1, 6]), ("expanded", [3, 4], [0, 1]),
               ("scalar", [], None), ("vector", [5], None), ("empty_rows", [0, 3], None),
               ("empty_cols", [3, 0], None), ("size1", [1, 4, 1], None),
               ("channels_last", [2, 3, 2, 2], [12, 1, 6, 3])]
    for lname, s, st in layouts:
        for dim in sorted(set([0, -1, 1, 2, len(s), -len(s) - 1])):
            for keep in (False, True):
                for dt in ("float32", "int64", "bool"):
                    add_case(f"max/{lname}/{dim}/{keep}/{dt}", "max_dim", [T(s, st, dt), I(dim), B(keep)])
    for dt in ("float64", "int32"):
        add_case(f"max/dtype_{dt}", "max_dim", [T([3, 5], dtype=dt), I(1), B(False)])
    add_case("max/offset", "max_dim", [T([2, 3], offset=4), I(0), B(True)])
    nan, inf = float("nan"), float("inf")
    rows = {"nan_middle": [1.0, nan, 3.0], "nan_first": [nan, 5.0, 2.0], "nan_last": [1.0, 2.0, nan],
            "two_nans": [nan, 1.0, nan], "ties": [2.0, 7.0, 7.0], "all_equal": [4.0, 4.0, 4.0],
            "neg_inf": [-inf, -inf, -inf], "inf": [1.0, inf, inf], "neg_zero": [-0.0, 0.0, -0.0]}
    for rname, row in rows.items():
        for dt in ("float32", "float64"):
            a = {"k": "tensor", "dtype": dt, "sizes": [2, 3], "strides": [3, 1], "offset": 0,
                 "storage": [encode_value(v) for v in row] + [0.5, -1.0, 0.25], "dev": "auto"}
            add_case(f"max/{rname}/{dt}/row", "max_dim", [a, I(1), B(False)])
            at = dict(a, sizes=[3, 2], strides=[1, 3])
            add_case(f"max/{rname}/{dt}/col", "max_dim", [at, I(0), B(True)])
    for i in range(100):
        sizes, strides = random_layout(4)
        dim = rng.randint(-len(sizes) - 1, len(sizes)) if sizes else rng.choice([0, -1, 1])
        add_case(f"max/random{i}", "max_dim",
                 [T(sizes, strides, rng.choice(list(DTYPES)), kind="small"), I(dim), B(rng.random() < 0.5)])
    add_case("max/bool_ties", "max_dim",
             [{"k": "tensor", "dtype": "bool", "sizes": [2, 3], "strides": [3, 1], "offset": 0,
               "storage": [0, 1, 1, 0, 0, 0], "dev": "auto"}, I(1), B(False)])


def layer_norm_tol(case):
    """PyTorch's float arithmetic errs by about ulp * |x| * rstd * |weight| (x * rstd and
    -rstd * mean cancel for values near the mean); cfx computes in double. The tolerance of a
    case is that bound, found from its arguments and PyTorch's own rstd."""
    def biggest(a):
        vals = [abs(float(v)) for v in a.get("storage", []) if not isinstance(v, str)]
        return max(vals, default=0.0)
    x, w, b = case["args"][0], case["args"][2], case["args"][3]
    dt = x["dtype"]
    res = case["runs"].get("cpu", {})
    rstd = 1.0
    if "returns" in res and res["returns"][2]["values"]:
        rstd = max([abs(v) for v in res["returns"][2]["values"] if not isinstance(v, str)], default=1.0)
    amp = max(biggest(x), 1.0) * max(rstd, 1.0) * max(biggest(w), 1.0) + biggest(b)
    ulp = 2.0 ** -23 if dt == "float32" else 2.0 ** -52
    return [(1e-6 if dt == "float32" else 1e-12) + 8 * ulp * amp, 8 * ulp]


def layer_norm_cases():
    def ln(name, x, ns, w=None, b=None, eps=1e-5, runs=("cpu", "meta")):
        add_case(f"layer_norm/{name}", "native_layer_norm",
                 [x, INTS(ns), NONE() if w is None else w, NONE() if b is None else b, D(eps)], runs=runs)
        cases[-1]["tol"] = layer_norm_tol(cases[-1])
    shapes = [("3d_last", [2, 3, 4], [4]), ("3d_two", [2, 3, 4], [3, 4]), ("3d_all", [2, 3, 4], [2, 3, 4]),
              ("1d", [5], [5]), ("2d", [4, 6], [6]), ("4d", [2, 3, 2, 5], [5]), ("4d_three", [2, 3, 2, 5], [3, 2, 5]),
              ("size1", [3, 1], [1]), ("row1", [1, 7], [7])]
    for name, s, ns in shapes:
        for dt in ("float32", "float64"):
            ln(f"{name}/{dt}", T(s, dtype=dt), ns)
            nsz = ns
            ln(f"{name}/{dt}/weight", T(s, dtype=dt), ns, w=T(nsz, dtype=dt))
            ln(f"{name}/{dt}/bias", T(s, dtype=dt), ns, b=T(nsz, dtype=dt))
            ln(f"{name}/{dt}/both", T(s, dtype=dt), ns, w=T(nsz, dtype=dt), b=T(nsz, dtype=dt))
    layouts = [("transposed", [4, 3], [1, 4], [3]), ("transposed_all", [4, 3], [1, 4], [4, 3]),
               ("nondense", [4, 3], [6, 2], [3]), ("nondense_inner", [4, 3], [3 * 2, 1], [3]),
               ("permuted", [2, 3, 4], perm_strides([2, 3, 4], [2, 0, 1]), [4]),
               ("permuted_two", [2, 3, 4], perm_strides([2, 3, 4], [1, 2, 0]), [3, 4]),
               ("permuted_mid", [2, 3, 4], perm_strides([2, 3, 4], [0, 2, 1]), [4]),
               ("channels_last", [2, 3, 2, 2], [12, 1, 6, 3], [2]),
               ("channels_last_all", [2, 3, 2, 2], [12, 1, 6, 3], [3, 2, 2]),
               ("expanded", [3, 4], [0, 1], [4]), ("expanded_rows", [3, 4], [1, 0], [4]),
               ("offset", [2, 3], None, [3])]
    for name, s, st, ns in layouts:
        off = 2 if name == "offset" else 0
        ln(name, T(s, st, offset=off), ns)
        ln(f"{name}/both", T(s, st, offset=off), ns, w=T(ns), b=T(ns))
        ln(f"{name}/weight", T(s, st, offset=off), ns, w=T(ns))
        ln(f"{name}/weight_t", T(s, st, offset=off), ns,
           w=T(ns, list(reversed(contiguous_strides(list(reversed(ns)))))) if len(ns) == 2 else T(ns))
    for name, s, ns in [("empty_rows", [0, 4], [4]), ("empty_norm", [2, 0], [0]), ("empty_3d", [0, 3, 4], [3, 4]),
                        ("empty_mid", [2, 0, 4], [4]), ("empty_t", [3, 0], [0])]:
        ln(name, T(s), ns)
        ln(f"{name}/both", T(s), ns, w=T(ns), b=T(ns))
        ln(f"{name}/int", T(s, dtype="int64"), ns)
    # errors, in check order
    x = lambda: T([2, 3, 4])
    ln("err/empty_shape", x(), [])
    ln("err/scalar", T([]), [])
    ln("err/too_many", x(), [1, 2, 3, 4])
    ln("err/mismatch", x(), [3])
    ln("err/mismatch2", x(), [2, 4])
    ln("err/negative", x(), [-4])
    ln("err/weight_shape", x(), [4], w=T([3]), b=T([4]))
    ln("err/bias_shape", x(), [4], w=T([4]), b=T([5]))
    ln("err/weight_2d", x(), [3, 4], w=T([12]))
    ln("err/weight_first", x(), [3], w=T([4]))
    ln("err/weight_4x1", x(), [4], w=T([4, 1]))
    for dt in ("int64", "int32", "bool"):
        ln(f"err/dtype_{dt}", T([2, 3], dtype=dt), [3])
        ln(f"err/dtype_{dt}_weight", T([2, 3], dtype=dt), [3], w=T([3], dtype="float64"))
    for wdt, bdt in [("float64", None), (None, "float64"), ("float64", "int64"), ("float32", "int64"),
                     ("int32", None), ("bool", "float32")]:
        ln(f"dtypes/w_{wdt}_b_{bdt}", T([2, 3]), [3], w=None if wdt is None else T([3], dtype=wdt),
           b=None if bdt is None else T([3], dtype=bdt))
    ln("dtypes/double_w_float", T([2, 3], dtype="float64"), [3], w=T([3]))
    ln("dtypes/empty_w_double", T([0, 3]), [3], w=T([3], dtype="float64"))
    # numerics
    nan, inf = float("nan"), float("inf")
    def raw(vals, sizes, dt="float32"):
        return {"k": "tensor", "dtype": dt, "sizes": sizes, "strides": contiguous_strides(sizes), "offset": 0,
                "storage": [encode_value(v) for v in vals], "dev": "auto"}
    for dt in ("float32", "float64"):
        ln(f"values/const_rows/{dt}", raw([1.0] * 6, [2, 3], dt), [3])
        ln(f"values/const_eps0/{dt}", raw([1.0] * 6, [2, 3], dt), [3], eps=0.0)
        ln(f"values/nan/{dt}", raw([1.0, nan, 3.0, 1.0, 2.0, 3.0], [2, 3], dt), [3])
        ln(f"values/inf_small/{dt}", raw([1.0, inf, 3.0, 1.0, 2.0, 3.0], [2, 3], dt), [3])
        ln(f"values/neg_eps/{dt}", raw([1.0, 1.0, 1.0], [1, 3], dt), [3], eps=-1.0)
        ln(f"values/big_eps/{dt}", T([3, 5], dtype=dt), [5], eps=0.5)
        ln(f"values/wide/{dt}", T([3, 40], dtype=dt), [40], w=T([40], dtype=dt), b=T([40], dtype=dt))
        ln(f"values/large_offset/{dt}", raw([1000.0 + 0.25 * i for i in range(12)], [3, 4], dt), [4])
    # devices: PyTorch picks the Meta slot (the composite) as soon as one argument is meta
    ln("dev/meta_input_cpu_weight", T([2, 3], dev="meta"), [3], w=T([3], dev="cpu"), runs=("mixed",))
    ln("dev/cpu_input_meta_weight", T([2, 3], dev="cpu"), [3], w=T([3], dev="meta"), runs=("mixed",))
    ln("dev/cpu_input_meta_both", T([2, 3], dev="cpu"), [3], w=T([3], dev="meta"), b=T([3], dev="meta"),
       runs=("mixed",))
    ln("dev/meta_input_cpu_bias", T([2, 3], dev="meta"), [3], b=T([3], dev="cpu"), runs=("mixed",))
    ln("dev/empty_cpu_input_meta_weight", T([0, 3], dev="cpu"), [3], w=T([3], dev="meta"), runs=("mixed",))
    # random layouts and parameter dtypes: the composite's strides and promotions on meta
    for i in range(200):
        sizes, strides = random_layout(4)
        if not sizes:
            sizes, strides = [3], [1]
        k = rng.randint(1, len(sizes))
        ns = sizes[len(sizes) - k:]
        fl = ["float32", "float64"]
        w = T(ns, random_strides(ns), rng.choice(fl)) if rng.random() < 0.5 else None
        b = T(ns, random_strides(ns), rng.choice(fl)) if rng.random() < 0.5 else None
        ln(f"random{i}", T(sizes, strides, rng.choice(fl)), ns, w=w, b=b, runs=("meta",))


def lift_cases():
    for op in ("lift_fresh", "lift_fresh_copy"):
        for name, s, st in LIKE_LAYOUTS:
            off = 3 if name == "offset" else 0
            add_case(f"{op}/{name}", op, [T(s, st, offset=off)])
        for dt in DTYPES:
            add_case(f"{op}/dtype_{dt}", op, [T([3, 2], [1, 3], dt)])


def data_dependent_cases():
    for dt in DTYPES:
        add_case(f"_local_scalar_dense/{dt}", "_local_scalar_dense", [T([1], dtype=dt)])
        add_case(f"_local_scalar_dense/{dt}/0d", "_local_scalar_dense", [T([], dtype=dt)])
        add_case(f"_local_scalar_dense/{dt}/strided", "_local_scalar_dense", [T([1, 1], [5, 3], dt, offset=2)])
        add_case(f"_local_scalar_dense/{dt}/empty", "_local_scalar_dense", [T([0], dtype=dt)])
        add_case(f"_local_scalar_dense/{dt}/many", "_local_scalar_dense", [T([3], dtype=dt)])
        for lname, s, st in [("contig", [2, 3], None), ("transposed", [3, 4], [1, 3]), ("0d", [], None),
                             ("empty", [0, 3], None), ("3d", [2, 2, 2], None)]:
            add_case(f"nonzero/{dt}/{lname}", "nonzero", [T(s, st, dt)], runs=("cpu", "meta"))


def R(vals, sizes, dt="float32", strides=None, offset=0):
    """A tensor argument with the given storage (values may be nan/inf floats)."""
    return {"k": "tensor", "dtype": dt, "sizes": list(sizes),
            "strides": contiguous_strides(sizes) if strides is None else list(strides), "offset": offset,
            "storage": [encode_value(v) for v in vals], "dev": "auto"}


def data_dependent_value_cases():
    """Values item() and nonzero must get exactly: NaN and infinities, signed zeros, extreme
    integers, views at an offset of a larger storage, permuted and 5-d inputs."""
    nan, inf = float("nan"), float("inf")
    for dt in ("float32", "float64"):
        for name, v in [("nan", nan), ("inf", inf), ("neg_inf", -inf), ("neg_zero", -0.0), ("tiny", 1e-30)]:
            add_case(f"_local_scalar_dense/{dt}/{name}", "_local_scalar_dense", [R([v], [], dt)])
        add_case(f"nonzero/{dt}/specials", "nonzero", [R([0.0, nan, -0.0, inf, -inf, 0.0], [2, 3], dt)])
    for dt, v in [("int64", 2 ** 62 + 3), ("int64", -(2 ** 63)), ("int32", -(2 ** 31)), ("int32", 2 ** 31 - 1)]:
        add_case(f"_local_scalar_dense/{dt}/{v}", "_local_scalar_dense", [R([v], [1, 1], dt)])
    add_case("_local_scalar_dense/offset_view", "_local_scalar_dense",
             [R([1.5, 2.5, 3.5, 4.5], [1], "float64", [1], 2)])
    add_case("_local_scalar_dense/bool_true_expanded", "_local_scalar_dense", [R([1], [3, 2], "bool", [0, 0])])
    for dt in DTYPES:
        add_case(f"nonzero/{dt}/all_zero", "nonzero", [R([0] * 6, [2, 3], dt)])
        add_case(f"nonzero/{dt}/1d_offset", "nonzero", [T([4], [2], dt, offset=1)])
        add_case(f"nonzero/{dt}/permuted", "nonzero", [T([2, 3, 4], perm_strides([2, 3, 4], [2, 0, 1]), dt)])
        add_case(f"nonzero/{dt}/5d", "nonzero", [T([2, 1, 2, 1, 3], None, dt)])
        add_case(f"nonzero/{dt}/0d_zero", "nonzero", [R([0], [], dt)])
        add_case(f"nonzero/{dt}/expanded", "nonzero", [T([3, 4], [0, 1], dt)])


def alpha_layout_cases():
    """add and sub with each kind of alpha on layouts where it matters: the references apply
    prims.mul(b, alpha) (a new, dense b) for add unless alpha is the schema's int 1, for sub
    unless alpha == 1 as a number; then the broadcast and the prim's permutation decide."""
    layouts = [("bcast_zero", [1, 2, 2], [2, 2, 1], [1, 2, 2], [2, 1, 0]),
               ("mixed_zero", [2, 2, 1, 3], [6, 0, 6, 1], [2, 2, 1, 3], [0, 4, 1, 4]),
               ("nc11_zero", [2, 3, 1, 1], [6, 1, 0, 3], [2, 3, 1, 1], [1, 1, 0, 1]),
               ("col_vs_1x1", [3, 1], [1, 3], [1, 1], [3, 1]),
               ("expanded_b", [2, 1, 1, 3], [1, 2, 1, 0], [1, 1, 1, 3], [0, 1, 0, 12]),
               ("transposed_row", [3, 4], [1, 3], [4], [1])]
    for op in ("add_Tensor", "sub_Tensor"):
        for name, sa, sta, sb, stb in layouts:
            for alpha in (I(1), I(2), D(1.0), B(True), D(0.5), NONE()):
                add_case(f"{op}/alpha_layout/{name}/{alpha['k']}_{alpha.get('v')}", op,
                         [T(sa, sta), T(sb, stb), alpha])
        for dt in ("int64", "int32", "bool"):
            for alpha in (D(1.0), B(True), I(2), B(False)):
                add_case(f"{op}/alpha_kind/{dt}/{alpha['k']}_{alpha['v']}", op,
                         [T([2, 3], dtype=dt), T([3], dtype=dt), alpha])
        # a CPU scalar b: prims.mul(b, alpha) runs torch.mul on it, with C++'s promotion (a
        # bool b times an int is int64, which prims.add then refuses); bool alphas on CPU
        for dt in ("bool", "int32", "float64"):
            for alpha in (I(-1), I(2), D(0.5), B(True), B(False)):
                add_case(f"{op}/cpu_scalar_b/{dt}/{alpha['k']}_{alpha['v']}", op,
                         [T([2, 3], dtype=dt), T([], dtype=dt, dev="cpu"), alpha])
        for i in range(40):
            sizes, strides = random_layout(4)
            sb, stb = random_layout_like(sizes)
            if sizes and rng.random() < 0.5:
                d = rng.randrange(len(sizes))
                sb[d], stb[d] = 1, rng.choice([0, 1, 5])
            alpha = rng.choice([I(1), I(2), D(1.0), B(True)])
            add_case(f"{op}/alpha_random{i}", op, [T(sizes, strides), T(sb, stb), alpha])


def error_213_cases():
    """Error paths whose text or order changed in 2.13."""
    # _broadcast_shapes reports the common shape as far as it got
    for op in BIN_OPS:
        extra = [I(1)] if op in ("add_Tensor", "sub_Tensor") else []
        add_case(f"{op}/mismatch_partial", op, [T([2, 1]), T([3, 5])] + extra)
        add_case(f"{op}/mismatch_leading", op, [T([4, 2, 3]), T([5, 1, 3])] + extra)
        add_case(f"{op}/mismatch_zero", op, [T([0, 3]), T([2, 3])] + extra)
        add_case(f"{op}/dev_meta0d_cpu", op, [T([], dev="meta"), T([3], dev="cpu")] + extra, runs=("mixed",))
    add_case("add__Tensor/mismatch_partial", "add__Tensor", [T([2, 1]), T([3, 5]), I(1)])
    add_case("add__Tensor/bcast_self_grows", "add__Tensor", [T([1, 3]), T([2, 3]), I(1)])
    add_case("add__Tensor/int_self_bool_other", "add__Tensor", [T([3], dtype="int64"), T([3], dtype="bool"), I(1)])
    add_case("add__Tensor/float_self_int_other_alpha_float", "add__Tensor", [T([3]), T([3], dtype="int32"), D(0.5)])
    add_case("add__Tensor/dev_meta_cpu_mismatch", "add__Tensor", [T([3], dev="meta"), T([2], dev="cpu"), I(1)],
             runs=("mixed",))
    for name, s, st, dims in [("scalar_dup", [], None, [0, -1]), ("scalar_oob", [], None, [1]),
                              ("dup_after_wrap", [2, 3], None, [-1, 1]), ("oob_before_dup", [2, 3], None, [0, 0, 2]),
                              ("keep_empty_mid", [2, 0, 3], None, [1]), ("keep_size1", [2, 1, 3], [3, 1, 1], [0])]:
        for keep in (False, True):
            add_case(f"sum/{name}/{keep}", "sum_dim_IntList", [T(s, st), INTS(dims), B(keep), NONE()])
    for name, s, dim in [("scalar_oob", [], 1), ("scalar_neg", [], -1), ("empty_only", [0], 0), ("oob", [2, 3], -3)]:
        for keep in (False, True):
            add_case(f"max/{name}/{keep}", "max_dim", [T(s), I(dim), B(keep)])
    add_case("mm/dev_meta_cpu_bad_inner", "mm", [T([2, 3], dev="meta"), T([4, 2], dev="cpu")], runs=("mixed",))
    add_case("mm/empty_mixed_dtype_inner", "mm", [T([2, 0]), T([0, 3], dtype="float64")])
    for name, new in [("neg_second", [2, -5]), ("neg_before_infer", [-3, -1]), ("infer_then_neg", [-1, -7])]:
        add_case(f"view/{name}", "view", [T([2, 3]), INTS(new)])
    # empty_like: the reference on meta, the composite on CPU
    add_case("empty_like/pin", "empty_like", [T([2, 3]), NONE(), NONE(), NONE(), B(True), NONE()],
             nondeterministic=True)
    add_case("empty_like/pin_to_cpu", "empty_like", [T([2, 3], dev="meta"), NONE(), NONE(), DEV("cpu"), B(True), NONE()],
             runs=("mixed",), nondeterministic=True)
    add_case("empty_like/channels_last_3d_bad", "empty_like", [T([2, 3, 4]), NONE(), NONE(), NONE(), NONE(), MF(2)],
             nondeterministic=True)
    add_case("empty_like/preserve_explicit", "empty_like",
             [T([2, 3, 1], [1, 2, 6]), NONE(), NONE(), NONE(), NONE(), MF(1)], nondeterministic=True)


def layer_norm_213_cases():
    """native_layer_norm's CPU mixed-dtype check (the first parameter decides) and the
    reference's texts on meta."""
    def ln(name, x, ns, w=None, b=None, runs=("cpu", "meta")):
        add_case(f"layer_norm/{name}", "native_layer_norm",
                 [x, INTS(ns), NONE() if w is None else w, NONE() if b is None else b, D(1e-5)], runs=runs)
        cases[-1]["tol"] = layer_norm_tol(cases[-1])
    ln("dtypes/w_f32_b_f64", T([2, 3]), [3], w=T([3]), b=T([3], dtype="float64"))
    ln("dtypes/w_f32_b_i64", T([2, 3]), [3], w=T([3]), b=T([3], dtype="int64"))
    ln("dtypes/int_w_int_b_f32", T([2, 3], dtype="int64"), [3], w=T([3], dtype="int64"), b=T([3]))
    ln("dtypes/int_w_f32", T([2, 3], dtype="int64"), [3], w=T([3]))
    ln("dtypes/empty_w_f32_b_f64", T([0, 3]), [3], w=T([3]), b=T([3], dtype="float64"))
    ln("dtypes/f64_b_f32", T([2, 3], dtype="float64"), [3], b=T([3]))
    ln("err/empty_shape_weight", T([2, 3]), [], w=T([3]))
    ln("err/weight_and_input", T([2, 3]), [4], w=T([3]))
    ln("err/bias_0d", T([2, 3]), [3], b=T([]))
    ln("dev/meta_input_cpu_weight_int", T([2, 3], dtype="int64", dev="meta"), [3], w=T([3], dev="cpu"),
       runs=("mixed",))
    ln("dev/meta_input_meta_weight_cpu_bias", T([2, 3], dev="meta"), [3], w=T([3], dev="meta"), b=T([3], dev="cpu"),
       runs=("mixed",))
    ln("layout/size1_dims", T([2, 1, 3], [3, 6, 1]), [3])
    ln("layout/size1_norm", T([2, 3, 1], [1, 2, 6]), [3, 1], w=T([3, 1]))


def cases_213():
    # cases for behaviour that changed in 2.13, with a generator of their own
    global rng
    saved, rng = rng, random.Random(213)
    data_dependent_value_cases()
    alpha_layout_cases()
    error_213_cases()
    layer_norm_213_cases()
    rng = saved


def new_op_cases():
    # a generator of their own, so that adding them leaves every older case unchanged
    global rng
    saved, rng = rng, random.Random(2113)
    max_dim_cases()
    layer_norm_cases()
    lift_cases()
    data_dependent_cases()
    rng = random.Random(2114)
    pointwise_cases()
    rng = saved


# ---- ops-pointwise: Scalar overloads, in-place forms, comparisons, activations, where --------

PW_LAYOUTS = [("same", [2, 3], None, [2, 3], None), ("bcast", [2, 3], None, [3], None),
              ("transposed", [3, 4], [1, 3], [3, 4], None), ("scalar_b", [2, 3], None, [], None),
              ("mismatch", [2, 3], None, [2, 5], None)]
PW_DTYPE_PAIRS = [("float32", "float32"), ("int64", "float32"), ("int32", "int64"), ("bool", "bool"),
                  ("float64", "int32"), ("bool", "int64")]
PW_NUMBERS = [I(2), D(1.5), B(True), I(-3)]


def pointwise_cases():
    def binary_like(op, extra=(), dtypes=PW_DTYPE_PAIRS, kind="default"):
        for name, sa, sta, sb, stb in PW_LAYOUTS:
            add_case(f"{op}/{name}", op, [T(sa, sta, kind=kind), T(sb, stb, kind=kind)] + list(extra))
        for da, db in dtypes:
            add_case(f"{op}/{da}_{db}", op, [T([2, 3], dtype=da, kind=kind), T([2, 3], dtype=db, kind=kind)]
                     + list(extra))
        for num in PW_NUMBERS[:3]:
            for dt in ("float32", "int64", "bool"):
                add_case(f"{op}/number_{num['k']}/{dt}", op, [T([2, 3], dtype=dt, kind=kind), num] + list(extra))
        add_case(f"{op}/number_meta_mixed", op, [T([3], dev="meta"), I(2)] + list(extra), runs=("mixed",))

    def scalar_like(op, extra=(), kind="default"):
        for num in PW_NUMBERS:
            for dt in ("float32", "int64", "bool"):
                add_case(f"{op}/{num['k']}_{num['v']}/{dt}", op, [T([2, 3], dtype=dt, kind=kind), num] + list(extra))
        add_case(f"{op}/transposed", op, [T([3, 4], [1, 3], kind=kind), D(0.5)] + list(extra))
        add_case(f"{op}/scalar_self", op, [T([], kind=kind), I(3)] + list(extra))

    def unary_like(op, kind="default"):
        for dt in DTYPES:
            for lname, s, st in UNARY_LAYOUTS[:4] + UNARY_LAYOUTS[7:9]:
                add_case(f"{op}/{dt}/{lname}", op, [T(s, st, dt, kind=kind)])

    for op in ("sub__Tensor", "mul__Tensor", "div__Tensor"):
        extra = [I(1)] if op == "sub__Tensor" else []
        for da, db in PW_DTYPE_PAIRS:
            add_case(f"{op}/{da}_{db}", op, [T([2, 3], dtype=da), T([2, 3], dtype=db)] + extra)
        for name, sa, sta, sb, stb in PW_LAYOUTS + [("self_bcast", [3], None, [2, 3], None)]:
            add_case(f"{op}/{name}", op, [T(sa, sta), T(sb, stb)] + extra)
        add_case(f"{op}/number", op, [T([2, 3]), D(2.5)] + extra)
    binary_like("rsub_Tensor", [I(1)])
    add_case("rsub_Tensor/alpha2", "rsub_Tensor", [T([3]), T([3]), I(2)])
    for op in ("add_Scalar", "sub_Scalar", "rsub_Scalar"):
        scalar_like(op, [I(1)])
        add_case(f"{op}/alpha2", op, [T([3]), I(4), I(2)])
        add_case(f"{op}/alpha_float_int", op, [T([3], dtype="int64"), I(4), D(0.5)])
    for op in ("mul_Scalar", "div_Scalar"):
        scalar_like(op)
    for op in ("add__Scalar", "sub__Scalar", "mul__Scalar", "div__Scalar"):
        extra = [I(1)] if op in ("add__Scalar", "sub__Scalar") else []
        for num in PW_NUMBERS:
            for dt in ("float32", "int64", "bool"):
                add_case(f"{op}/{num['k']}_{num['v']}/{dt}", op, [T([2, 3], dtype=dt), num] + extra)
        add_case(f"{op}/transposed", op, [T([3, 4], [1, 3]), D(0.5)] + extra)
    for cmp in ("eq", "ne", "lt", "le", "gt", "ge"):
        binary_like(f"{cmp}_Tensor", kind="small")
        scalar_like(f"{cmp}_Scalar", kind="small")
    binary_like("pow_Tensor_Tensor", kind="small",
                dtypes=[("float32", "float32"), ("float64", "int64"), ("int64", "float32")])
    for op, nums in (("pow_Tensor_Scalar", [I(2), D(0.5), I(3), D(-1.0)]),):
        for num in nums:
            for dt in ("float32", "int64", "float64"):
                add_case(f"{op}/{num['k']}_{num['v']}/{dt}", op,
                         [T([2, 3], dtype=dt, kind="small") if dt != "int64" else
                          {"k": "tensor", "dtype": "int64", "sizes": [2, 3], "strides": [3, 1], "offset": 0,
                           "storage": [1, 2, 3, 0, 2, 1], "dev": "auto"}, num])
        add_case(f"{op}/transposed", op, [T([3, 4], [1, 3], kind="small"), I(2)])
    for num in (I(2), D(0.5), D(2.0)):
        for dt in ("float32", "int64"):
            add_case(f"pow_Scalar/{num['k']}_{num['v']}/{dt}", "pow_Scalar",
                     [num, {"k": "tensor", "dtype": dt, "sizes": [2, 2], "strides": [1, 2], "offset": 0,
                            "storage": [0, 1, 2, 3], "dev": "auto"}])
    for op in ("tanh", "sigmoid", "sqrt", "rsqrt", "silu"):
        unary_like(op, kind="small")
    for approx in ("none", "tanh"):
        for dt in ("float32", "float64", "int64"):
            for lname, s, st in UNARY_LAYOUTS[:4]:
                add_case(f"gelu/{approx}/{dt}/{lname}", "gelu", [T(s, st, dt, kind="small"), {"k": "str", "v": approx}])
    add_case("gelu/bad_approx", "gelu", [T([3]), {"k": "str", "v": "foo"}])
    for name, sc, sa, sb in [("same", [2, 3], [2, 3], [2, 3]), ("bcast", [2, 1], [3], [2, 3]),
                             ("scalar_other", [2, 3], [2, 3], []), ("mismatch", [2, 3], [2, 3], [2, 4])]:
        for da, db in (("float32", "float32"), ("int64", "float32"), ("int32", "int64")):
            add_case(f"where_self/{name}/{da}_{db}", "where_self",
                     [T(sc, dtype="bool"), T(sa, dtype=da), T(sb, dtype=db)])
    add_case("where_self/transposed", "where_self", [T([3, 4], [1, 3], "bool"), T([3, 4], [1, 3]), T([3, 4])])
    add_case("where_self/float_cond", "where_self", [T([3]), T([3]), T([3])])
    add_case("where_self/number_other", "where_self", [T([3], dtype="bool"), T([3]), D(0.0)])
    add_case("where_self/number_self_int", "where_self", [T([3], dtype="bool"), I(1), T([3], dtype="int32")])
    pointwise_cases_2()


def pointwise_cases_2():
    def unary_like(op, kind="default"):
        for dt in DTYPES:
            for lname, s, st in UNARY_LAYOUTS[:4] + UNARY_LAYOUTS[7:9]:
                add_case(f"{op}/{dt}/{lname}", op, [T(s, st, dt, kind=kind)])

    for op in ("reciprocal", "log", "log1p", "abs", "logical_not", "bitwise_not"):
        unary_like(op, kind="small")
    for op in ("maximum", "minimum", "logical_and", "logical_or", "logical_xor", "bitwise_and_Tensor",
               "bitwise_or_Tensor", "bitwise_xor_Tensor"):
        for name, sa, sta, sb, stb in PW_LAYOUTS:
            dt = "int64" if op.startswith("bitwise") else "float32"
            add_case(f"{op}/{name}", op, [T(sa, sta, dt, kind="small"), T(sb, stb, dt, kind="small")])
        for da, db in PW_DTYPE_PAIRS:
            add_case(f"{op}/{da}_{db}", op, [T([2, 3], dtype=da, kind="small"), T([2, 3], dtype=db, kind="small")])
    def vals(dt, v):
        return {"k": "tensor", "dtype": dt, "sizes": [len(v)], "strides": [1], "offset": 0, "storage": v, "dev": "auto"}
    for dt in ("float32", "float64", "int64", "int32"):
        add_case(f"remainder_Tensor/signs/{dt}", "remainder_Tensor",
                 [vals(dt, [7, -7, 7, -7, 0, 5]), vals(dt, [3, 3, -3, -3, 2, 5])])
    add_case("remainder_Tensor/float_frac", "remainder_Tensor", [vals("float32", [5.5, -5.5, 0.25]), vals("float32", [2.0, 2.0, -0.1])])
    add_case("remainder_Tensor/bcast_mixed", "remainder_Tensor", [T([2, 3], dtype="int64", kind="small"), vals("float32", [1.5, -2.0, 3.0])])
    add_case("remainder_Tensor/int_by_zero", "remainder_Tensor", [vals("int64", [3, 4]), vals("int64", [1, 0])])
    add_case("remainder_Tensor/float_by_zero", "remainder_Tensor", [vals("float32", [3, -4]), vals("float32", [0, 0])])
    nan = float("nan")
    for op in ("maximum", "minimum"):
        a = {"k": "tensor", "dtype": "float32", "sizes": [3], "strides": [1], "offset": 0,
             "storage": [encode_value(nan), 1.0, 2.0], "dev": "auto"}
        b = {"k": "tensor", "dtype": "float32", "sizes": [3], "strides": [1], "offset": 0,
             "storage": [0.0, encode_value(nan), 3.0], "dev": "auto"}
        add_case(f"{op}/nan", op, [a, b])
    for op in ("bitwise_and_Scalar", "bitwise_or_Scalar", "bitwise_xor_Scalar"):
        for num in (I(6), B(True), D(1.5)):
            for dt in ("int64", "bool", "int32", "float32"):
                add_case(f"{op}/{num['k']}_{num['v']}/{dt}", op, [T([2, 3], dtype=dt), num])
    for op in ("relu_", "neg_", "abs_", "exp_", "sin_", "cos_", "tanh_", "sigmoid_", "sqrt_", "rsqrt_",
               "reciprocal_", "log_", "log1p_", "silu_"):
        for dt in ("float32", "float64", "int64", "bool"):
            add_case(f"{op}/{dt}", op, [T([2, 3], dtype=dt, kind="small")])
        add_case(f"{op}/transposed", op, [T([3, 4], [1, 3], kind="small")])
        add_case(f"{op}/expanded", op, [T([3, 4], [0, 1], kind="small")])
        add_case(f"{op}/scalar", op, [T([], kind="small")])
    pointwise_cases_3()


def pointwise_cases_3():
    for dt in DTYPES:
        for lname, s, st in [("contig", [2, 3], None), ("transposed", [3, 4], [1, 3]), ("nondense", [3, 4], [1, 6])]:
            add_case(f"_to_copy/{dt}/{lname}", "_to_copy", [T(s, st, "float32", kind="small"), DT(dt)])
            add_case(f"to_dtype/{dt}/{lname}", "to_dtype", [T(s, st, "int64"), DT(dt)])
    add_case("_to_copy/none", "_to_copy", [T([3, 4], [1, 3])])
    add_case("_to_copy/contiguous", "_to_copy", [T([3, 4], [1, 3]), NONE(), NONE(), NONE(), NONE(), B(False), MF(0)])
    add_case("_to_copy/to_meta", "_to_copy", [T([3], dev="cpu"), NONE(), NONE(), DEV("meta")], runs=("mixed",))
    add_case("to_dtype/same", "to_dtype", [T([3]), DT("float32")])
    add_case("to_dtype/same_copy", "to_dtype", [T([3]), DT("float32"), B(False), B(True)])
    for num in (I(2), D(1.5), B(True)):
        add_case(f"scalar_tensor/{num['k']}", "scalar_tensor", [num])
        for dt in ("int64", "float64", "bool"):
            add_case(f"scalar_tensor/{num['k']}/{dt}", "scalar_tensor", [num, DT(dt)])
    for cond_s, s in (([2, 3], [2, 3]), ([2, 1], [3])):
        for dt in ("float32", "int64"):
            for num in (I(2), D(0.5)):
                add_case(f"where_ScalarOther/{cond_s}/{dt}/{num['k']}", "where_ScalarOther",
                         [T(cond_s, dtype="bool"), T(s, dtype=dt), num])
                add_case(f"where_ScalarSelf/{cond_s}/{dt}/{num['k']}", "where_ScalarSelf",
                         [T(cond_s, dtype="bool"), num, T(s, dtype=dt)])
    for a, b in ((I(1), I(0)), (D(1.0), I(0)), (B(True), I(2))):
        add_case(f"where_Scalar/{a['k']}_{b['k']}", "where_Scalar", [T([2, 3], dtype="bool"), a, b])
    add_case("where_ScalarOther/float_cond", "where_ScalarOther", [T([3]), T([3]), I(0)])
    for dt in ("float32", "int64", "bool"):
        for num in (I(2), D(2.5), B(True)):
            add_case(f"masked_fill_Scalar/{dt}/{num['k']}", "masked_fill_Scalar",
                     [T([2, 3], dtype=dt), T([2, 3], dtype="bool"), num])
    for name, sa, sta, sm in (("bcast_mask", [2, 3], None, [3]), ("bcast_self", [3], None, [2, 3]),
                              ("transposed", [3, 4], [1, 3], [3, 4]), ("mismatch", [2, 3], None, [2, 4])):
        add_case(f"masked_fill_Scalar/{name}", "masked_fill_Scalar", [T(sa, sta), T(sm, dtype="bool"), D(-1.0)])
    add_case("masked_fill_Scalar/float_mask", "masked_fill_Scalar", [T([3]), T([3]), I(0)])
    for dt in ("float32", "int64", "bool"):
        for lo, hi in ((I(0), I(1)), (D(-0.5), D(0.5)), (NONE(), I(2)), (D(1.0), NONE()), (I(2), I(-1))):
            add_case(f"clamp/{dt}/{lo.get('v')}_{hi.get('v')}", "clamp", [T([2, 3], dtype=dt, kind="small"), lo, hi])
        add_case(f"clamp_min/{dt}", "clamp_min", [T([2, 3], dtype=dt, kind="small"), D(0.5)])
        add_case(f"clamp_max/{dt}", "clamp_max", [T([2, 3], dtype=dt, kind="small"), I(0)])
        add_case(f"hardtanh/{dt}", "hardtanh", [T([2, 3], dtype=dt, kind="small"), I(-1), I(1)])
        add_case(f"hardtanh/{dt}/frac", "hardtanh", [T([2, 3], dtype=dt, kind="small"), D(-1.5), D(2.5)])
    add_case("clamp/none", "clamp", [T([3]), NONE(), NONE()])
    add_case("clamp/transposed", "clamp", [T([3, 4], [1, 3]), D(-1.0), D(1.0)])
    add_case("hardtanh/transposed", "hardtanh", [T([3, 4], [1, 3]), D(-1.0), D(1.0)])
    add_case("clamp/nan", "clamp", [{"k": "tensor", "dtype": "float32", "sizes": [3], "strides": [1], "offset": 0,
                                     "storage": ["nan", 1.0, -2.0], "dev": "auto"}, D(-1.0), D(0.5)])


def strides_cases():
    out = []
    unary = ["neg", "relu", "sin", "exp", "clone", "empty_like"]
    binary = ["add_Tensor", "mul_Tensor", "div_Tensor", "sub_Tensor"]
    for i in range(4000):
        op = rng.choice(binary + unary)
        sizes, strides = random_layout(5)
        dts = ["float32", "float64", "int64", "int32", "bool"]
        operands = [[sizes, strides, rng.choice(dts)]]
        if op in binary:
            mode = rng.randint(0, 3)
            sb = list(sizes)
            if mode == 0:
                stb = list(strides)
                rng.shuffle(stb)
            elif mode == 1:
                sb = [s if rng.random() < 0.6 else 1 for s in sizes][rng.randint(0, len(sizes)):] if sizes else []
                stb = random_strides(sb)
            else:
                stb = random_strides(sb)
            operands.append([sb, stb, rng.choice(dts)])
            if op == "sub_Tensor":
                operands = [[o[0], o[1], o[2] if o[2] != "bool" else "int32"] for o in operands]
        rec = [op, operands]
        for dev in ("cpu", "meta"):
            ts = [torch.empty_strided(o[0], o[1], dtype=DTYPES[o[2]], device=dev) for o in operands]
            try:
                if op in binary:
                    r = OPMAP[op](*ts)
                elif op == "empty_like":
                    r = torch.empty_like(ts[0])
                else:
                    r = OPMAP[op](ts[0])
                rec.append(list(r.stride()))
            except Exception as e:  # noqa: BLE001
                rec.append(str(e))
        out.append(rec)
    golden.write_json_cases(os.path.basename(OUT_STRIDES), out)
    return len(out)


def write_keys():
    lines = []
    schemas = {}
    for s in torch._C._jit_get_all_schemas():
        schemas[s.name + ("." + s.overload_name if s.overload_name else "")] = str(s)
    for cid, n, o in OPS:
        qual = "aten::" + n + ("" if o == "default" else "." + o)
        dump = torch._C._dispatch_dump(qual)
        keys = []
        for line in dump.splitlines():
            head = line.split(":", 1)[0]
            key = head.replace("[alias]", "").strip()
            if key in KEYS_OF_INTEREST and key not in keys:
                keys.append(key)
        tags = " ".join(t.name for t in sorted(OPMAP[cid].tags, key=lambda t: t.value))
        lines.append(f"{cid}\t{qual}\t{' '.join(keys)}\t{schemas[qual]}\t{tags}")
    golden.write_text(os.path.basename(OUT_KEYS),
                      "# op-id <TAB> name <TAB> kernel keys (among CPU, Meta, BackendSelect, Composite*) "
                      "<TAB> schema <TAB> tags\n" + "\n".join(lines) + "\n")


def main():
    if not os.path.isdir("tests/data"):
        sys.exit("run from the repository root")
    torch.manual_seed(0)
    binary_cases()
    unary_cases()
    sum_cases()
    mm_cases()
    t_view_cases()
    clone_like_cases()
    inplace_cases()
    factory_cases()
    new_op_cases()
    cases_213()
    n_main = len(cases)
    import ops_shape_cases
    for name in ops_shape_cases.add_all(sys.modules[__name__]):
        golden.write_json_cases(name, cases[n_main:])
        del cases[n_main:]
    ops_nn_cases.add_all(sys.modules[__name__])
    golden.write_json_cases(os.path.basename(OUT_NN_CASES), cases[n_main:])
    del cases[n_main:]
    import ops_backward_cases
    for name in ops_backward_cases.add_all(sys.modules[__name__]):
        golden.write_json_cases(name, cases[n_main:])
        del cases[n_main:]
    import ops_pointwise_cases
    for name in ops_pointwise_cases.add_all(sys.modules[__name__]):
        golden.write_json_cases(name, cases[n_main:])
        del cases[n_main:]
    import ops_fill_cases
    for name in ops_fill_cases.add_all(sys.modules[__name__]):
        golden.write_json_cases(name, cases[n_main:])
        del cases[n_main:]
    import ops_scatter_cases
    for name in ops_scatter_cases.add_all(sys.modules[__name__]):
        golden.write_json_cases(name, cases[n_main:])
        del cases[n_main:]
    import ops_pool3d_cases
    for name in ops_pool3d_cases.add_all(sys.modules[__name__]):
        golden.write_json_cases(name, cases[n_main:])
        del cases[n_main:]
    import ops_bwd_cases
    for name in ops_bwd_cases.add_all(sys.modules[__name__]):
        golden.write_json_cases(name, cases[n_main:])
        del cases[n_main:]
    import ops_fft_cases
    for name in ops_fft_cases.add_all(sys.modules[__name__]):
        golden.write_json_cases(name, cases[n_main:])
        del cases[n_main:]
    import ops_random_cases
    for name in ops_random_cases.add_all(sys.modules[__name__]):
        golden.write_json_cases(name, cases[n_main:])
        del cases[n_main:]
    import ops_nn_extra_cases
    for name in ops_nn_extra_cases.add_all(sys.modules[__name__]):
        golden.write_json_cases(name, cases[n_main:])
        del cases[n_main:]
    import ops_breadth_cases
    for name in ops_breadth_cases.add_all(sys.modules[__name__]):
        golden.write_json_cases(name, cases[n_main:])
        del cases[n_main:]
    golden.write_json_cases(os.path.basename(OUT_CASES), cases)
    write_keys()
    n = strides_cases()
    print(f"{len(cases)} cases -> {OUT_CASES}; keys -> {OUT_KEYS}; {n} layouts -> {OUT_STRIDES}")


if __name__ == "__main__":
    main()
