#!/usr/bin/python3
"""Golden data for tests/dispatch/test_value.c and test_tensor.c from PyTorch 2.13.

Run from the repo root:  python3 tools/interop/gen_value_goldens.py   (or `make goldens`)
Writes tests/data/value_*.txt through golden.py (a header line naming PyTorch and this script,
which the C tests' read_golden strips). Every file is plain text, one case per line,
tab-separated, so the C tests need no JSON parser. Floats travel as float.hex() (exact; C's
strtod reads it back). Runs are deterministic: the random cases come from fixed seeds.

  value_float_repr.txt   hex \t repr(float)                       (Python's repr of a double)
  value_promote.txt      code_a \t code_b \t code_result          (torch.promote_types, 8x8)
  value_strides.txt      sizes \t strides \t is_contiguous         (empty() or empty_strided())
  value_strings.txt      utf8-hex \t repr(str)                    (python_code's quoting)
  value_print.txt        case \t fx \t python                     (format_node / python_code text)
  value_tensor_repr.txt  device \t dtype \t sizes \t strides \t offset \t storage \t repr
  value_schema.txt       case \t text                            (c10's printing of schema defaults)
  value_tensor_errors.txt case \t message or "-"                 (tensor creation and as_strided checks)
"""
import io
import math
import os
import random
import struct
import sys

import torch
import torch.fx as fx

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import golden  # noqa: E402

random.seed(1234)
torch.manual_seed(1234)


class Golden(io.StringIO):
    """`with Golden(name) as f:` collects the lines and writes tests/data/name through golden.py."""

    def __init__(self, name):
        super().__init__()
        self.name = name

    def __exit__(self, *exc):
        if exc[0] is None:
            golden.write_text(self.name, self.getvalue())
        return super().__exit__(*exc)


def esc(s):
    return s.replace("\\", "\\\\").replace("\n", "\\n").replace("\t", "\\t")


def dims(xs):
    return ",".join(str(int(x)) for x in xs) if len(xs) else "-"


# ---------------------------------------------------------------- repr(float)
def float_cases():
    vals = [0.0, -0.0, 1.0, -1.0, 0.5, 0.1, 0.2, 0.3, 0.1 + 0.2, 1 / 3, 2 / 3, 1.5, 2.5, 10.0,
            100.0, 1e-5, 1e-4, 1e-3, 0.0001, 0.00009999, 0.000123, 1e15, 1e16, 1e17, 1e22, 1e23,
            9999999999999998.0, 999999999999999.9, 1234567890123456.0, 12345678901234567.0,
            123456789012345678.0, 5e-324, 1e-323, 2.2250738585072014e-308,
            2.225073858507201e-308, 1.7976931348623157e308, math.pi, math.e, 1e300, 1e-300,
            float("inf"), float("-inf"), float("nan"), 3.0e-5, 4.35, 0.3e-4, 1e100, 123.456,
            -123.456e-10, 65504.0, 3.4028234663852886e38, 1.1754943508222875e-38, 1.401298464324817e-45,
            9007199254740992.0, 9007199254740993.0, 4503599627370496.5, 0.1 * 3, 1e-7, 1e21, 1e-6]
    # every power of two: near them the round-trip interval is lopsided and the shortest
    # repr is sometimes not the correctly rounded digit string (2**-1016 -> 7.120236347223045e-307)
    for e in range(-1074, 1024):
        vals.append(math.ldexp(1.0, e))
    for e in range(-1074, 1024, 53):
        vals.append(math.ldexp(1.0, e) * 3)
        vals.append(math.nextafter(math.ldexp(1.0, e), 0.0))
        vals.append(math.nextafter(math.ldexp(1.0, e), math.inf))
    for p in range(-30, 31):
        vals.append(float("1e%d" % p))
        vals.append(float("1.5e%d" % p))
    for _ in range(120):  # random bit patterns: every exponent range, full 17-digit mantissas
        bits = random.getrandbits(64)
        d = struct.unpack("<d", struct.pack("<Q", bits))[0]
        if math.isfinite(d):
            vals.append(d)
    for _ in range(60):  # float32 values widened to double, as tensors hand them to printers
        f = struct.unpack("<f", struct.pack("<f", random.uniform(-1000, 1000)))[0]
        vals.append(f)
    for _ in range(40):
        vals.append(round(random.uniform(-1e6, 1e6), random.randint(0, 6)))
    with Golden("value_float_repr.txt") as f:
        for v in vals:
            f.write("%s\t%r\n" % (v.hex() if math.isfinite(v) else repr(v), v))
    return len(vals)


# ---------------------------------------------------------------- promote_types
DTYPES = {torch.int32: 3, torch.int64: 4, torch.float32: 6, torch.float64: 7, torch.bool: 11}
DTNAME = {torch.int32: "int32", torch.int64: "int64", torch.float32: "float32",
          torch.float64: "float64", torch.bool: "bool"}


# promotion also covers the small integers (uint8 with int8 is int16, ...)
PROMOTE_DTYPES = {**DTYPES, torch.uint8: 0, torch.int8: 1, torch.int16: 2}


def promote_cases():
    with Golden("value_promote.txt") as f:
        for a, ca in PROMOTE_DTYPES.items():
            for b, cb in PROMOTE_DTYPES.items():
                f.write("%d\t%d\t%d\n" % (ca, cb, PROMOTE_DTYPES[torch.promote_types(a, b)]))


# ---------------------------------------------------------------- strides
def stride_cases():
    shapes = [[], [0], [1], [5], [1, 1], [2, 3], [2, 0, 3], [2, 3, 0], [0, 0], [3, 1, 2],
              [1, 0, 1, 5], [4, 1], [1, 4], [2, 3, 4, 5], [2, 1, 1, 3, 1], [7, 0], [1, 1, 1]]
    strided = [([2, 3], [1, 2]), ([2, 3], [3, 1]), ([2, 1], [1, 7]), ([1, 3], [9, 1]),
               ([2, 3], [4, 1]), ([3, 1, 2], [2, 1, 1]), ([2, 0], [5, 2]), ([3], [2]),
               ([1], [5]), ([2, 2], [0, 1]), ([2, 3, 4], [12, 1, 3]), ([4, 1, 1], [1, 1, 1]),
               ([2, 1, 3], [3, 100, 1]), ([1, 1], [0, 0])]
    with Golden("value_strides.txt") as f:
        for s in shapes:
            t = torch.empty(s)
            f.write("%s\t%s\t%d\n" % (dims(s), dims(t.stride()), t.is_contiguous()))
        for s, st in strided:
            t = torch.empty_strided(s, st)
            f.write("%s\t%s\t%d\n" % (dims(s), dims(st), t.is_contiguous()))
    return len(shapes) + len(strided)


# ---------------------------------------------------------------- repr(str)
def string_cases():
    strs = ["", "abc", "it's", 'a"b', "it's \"q\"", "back\\slash", "x\n\ty\r", "\x00\x01\x1f\x7f",
            "caf\u00e9", "\u00a0nbsp", "\u0080\u009f", "\u00ad", "\u2028\u2029", "\u200b\u200f",
            "\u3000", "\ufeff", "\ue000", "\U0001f600", "\u4e2d\u6587", "tab\there", "'", '"',
            "''\"\"", "\\'", "mixed 'single' and \"double\"", "\x1b[0m", "\u0394x", "\U000f0000",
            "\u180e", "\u2060", "\U000e0001"]
    with Golden("value_strings.txt") as f:
        for s in strs:
            f.write("%s\t%s\n" % (s.encode("utf-8").hex() or "-", esc(repr(s))))
    return len(strs)


# ---------------------------------------------------------------- FX / python_code printing
def print_cases():
    cases = [
        ("none", None), ("true", True), ("false", False), ("int0", 0), ("int_neg", -5),
        ("int_max", 2**63 - 1), ("int_min", -2**63), ("dbl_one", 1.0), ("dbl_small", 1e-05),
        ("dbl_inf", math.inf), ("dbl_ninf", -math.inf), ("dbl_nan", math.nan),
        ("dbl_negzero", -0.0), ("dbl_tenth", 0.1), ("dbl_1e16", 1e16), ("dbl_1_5", 1.5),
        ("list_empty", []), ("list_ints", [1, 2]), ("tuple1", (1,)), ("tuple2", (1, 2)),
        ("tuple_empty", ()), ("nested", [[1, 2], (3,)]),
        ("dt_f32", torch.float32), ("dt_f64", torch.float64), ("dt_i32", torch.int32),
        ("dt_i64", torch.int64), ("dt_bool", torch.bool),
        ("dev_cpu", torch.device("cpu")), ("dev_meta", torch.device("meta")),
        ("dev_cpu0", torch.device("cpu", 0)),
        ("mf_contig", torch.contiguous_format), ("mf_preserve", torch.preserve_format),
        ("mf_cl", torch.channels_last), ("mf_cl3d", torch.channels_last_3d),
        ("layout", torch.strided),
        ("str_abc", "abc"), ("str_quote", "it's"), ("str_dquote", 'a"b'),
        ("str_both", "it's \"x\""), ("str_esc", "x\n\ty\\z\x01\u00e9"), ("str_empty", ""),
        ("list_strs", ["a", "b"]), ("mixed", [1, 2.5, True, None, "x"]),
        ("tensor", torch.tensor([1.0, 2.5])),
    ]
    with Golden("value_print.txt") as f:
        for name, v in cases:
            g = fx.Graph()
            n = g.call_function(torch.add, (), {"v": v})
            g.output(None)
            text = str(g)  # a string value may hold newlines: cut by markers, not by lines
            start = text.index("kwargs = {v: ") + len("kwargs = {v: ")
            fx_text = text[start:text.rindex("})\n    return None")]
            code = g.python_code("self").src
            # `add = torch.add(v = <repr>);  add = None`: 2.x frees the unused value at once
            start = code.index("torch.add(v = ") + len("torch.add(v = ")
            py_text = code[start:code.index(");  add = None\n", start)]
            assert n is not None
            f.write("%s\t%s\t%s\n" % (name, esc(fx_text), esc(py_text)))
    return len(cases)


# ---------------------------------------------------------------- tensor repr
def fhex(v):
    return v.hex() if math.isfinite(v) else repr(v)


def tensor_line(t, base=None):
    """base: (storage tensor) when t is a view of it; else t is contiguous and is its own."""
    dev = t.device.type
    dt = DTNAME[t.dtype]
    if dev == "meta":
        return "meta\t%s\t%s\t%s\t0\t-\t%s\n" % (dt, dims(t.shape), dims(t.stride()), esc(repr(t)))
    st = base if base is not None else t
    flat = st.reshape(-1).tolist()
    if t.dtype.is_floating_point:
        data = " ".join(fhex(x) for x in flat)
    else:
        data = " ".join(str(int(x)) for x in flat)
    return "cpu\t%s\t%s\t%s\t%d\t%s\t%s\n" % (dt, dims(t.shape), dims(t.stride()),
                                              t.storage_offset(), data or "-", esc(repr(t)))


def tensor_cases():
    T = torch.tensor
    f32, f64, i64, i32, b = torch.float32, torch.float64, torch.int64, torch.int32, torch.bool
    ts = [
        T(1.0), T(1.5), T(-2.25), T(0.1), T(1e-5), T(1e10), T(math.inf), T(math.nan), T(0.0),
        T(-0.0), T(5), T(-7), T(3, dtype=i32), T(True), T(False), T(1.5, dtype=f64),
        T(123456789.0), T(-1e-10, dtype=f64),
        T([1.0, 2.0, 3.0]), T([1.5, 2.0, 3.0]), T([-1.5, 2.25]), T([0.1, 1000.0]),
        T([0.1, 100.0]), T([1e-5, 1.0]), T([1e8, 1.0]), T([1e9]), T([0.0, 0.0]),
        T([math.inf, -math.inf, math.nan]), T([1.0, math.inf]), T([1.5, math.nan]),
        T([-0.0, 1.0]), T([123456.789]), T([1e-4, 0.5]), T([0.00011, 0.5]), T([1e20, 1.0]),
        T([-1000.0, 1.0]), T([-1001.0, 1.0]), T([1e8]), T([100000000.5]), T([-5.0, 10.0]),
        T([0.0, 1e-5]), T([2.0, 3.0], dtype=f64), T([1e-300, 1.0], dtype=f64),
        T([1.0, 2.0, 3.0], dtype=f64), T([0.5, 1.0 / 3.0], dtype=f64),
        T([1, -2, 300]), T([1, 2], dtype=i32), T([-2147483648, 2147483647], dtype=i32),
        T([2**63 - 1, -2**63]), T([True, False, True]), T([[True], [False]]),
        T([[1.0, 2.0], [3.0, 4.0]]), T([[1, -20], [300, 4]]), T([[1.5, -2.0], [3.0, 4.25]]),
        torch.randn(20), torch.randn(100), torch.randn(3, 4), torch.randn(2, 3, 4),
        torch.randn(2, 1, 2, 2), torch.randn(2, 2, 1, 1, 2), torch.randn(3, 4, dtype=f64),
        torch.randn(30, dtype=f64), torch.randn(6, 1), torch.arange(25.0),
        torch.arange(25, dtype=f64), torch.arange(40), torch.arange(-12, 12, dtype=i32),
        torch.randn(5) * 1e-6, torch.randn(5) * 1e6, torch.randn(4) * 1e12,
        torch.arange(2000.0), torch.arange(1001), torch.randn(40, 40), torch.randn(2, 501),
        torch.randn(1001, 1), torch.randint(-100, 100, (11, 11, 11)), torch.ones(1001, dtype=b),
        torch.randn(7, 3, 50), torch.arange(1500, dtype=f64).reshape(30, 50),
        torch.empty(0), torch.empty(2, 0), torch.empty(0, dtype=i64), torch.empty(0, dtype=b),
        torch.empty(0, 3, dtype=f64), torch.empty(0, dtype=i32), torch.empty(3, 0, 2, dtype=i64),
        torch.randn(12, 12), torch.randn(1, 15),
    ]
    n = 0
    with Golden("value_tensor_repr.txt") as f:
        for t in ts:
            f.write(tensor_line(t))
            n += 1
        base = torch.randn(3, 4)
        views = [base.t(), base[1:], base[:, 1:3], base[::2, ::3], base[2, 1]]
        for v in views:
            f.write(tensor_line(v, base))
            n += 1
        ibase = torch.arange(12).reshape(3, 4)
        f.write(tensor_line(ibase.t(), ibase))
        n += 1
        for m in [torch.empty(2, 3, device="meta"), torch.empty((), device="meta", dtype=b),
                  torch.empty(2, 0, device="meta", dtype=i64), torch.empty(5, device="meta", dtype=f64),
                  torch.empty(4, 1, device="meta", dtype=i32), torch.empty(0, device="meta"),
                  torch.empty(2, 3, 4, 5, 6, device="meta")]:
            f.write(tensor_line(m))
            n += 1
    return n


# ---------------------------------------------------------------- tensor creation errors
def tensor_error_cases():
    """What PyTorch says about bad shapes, strides and views ("-": no error). The C test makes
    the same tensors with cfx_tensor_new / _new_strided / _new_view over a 6-float storage."""
    base = torch.empty(6)
    cases = [
        ("negative_dim", lambda: torch.empty(-1, 2)),
        ("storage_overflow", lambda: torch.empty(1 << 40, 1 << 30, 0, device="meta")),
        ("stride_overflow", lambda: torch.empty(0, 1 << 40, 1 << 30, device="meta")),
        ("stride_overflow_4d", lambda: torch.empty(0, 1 << 31, 1 << 31, 2, device="meta")),
        ("no_stride_overflow", lambda: torch.empty(0, 1 << 31, 1 << 30, 2, device="meta")),
        ("storage_overflow_big", lambda: torch.empty(1 << 60, 2, device="meta")),
        ("strided_negative_cpu", lambda: torch.empty_strided([2], [-1])),
        ("strided_negative_meta", lambda: torch.empty_strided([2, 3], [-1, 1], device="meta")),
        ("view_out_of_bounds", lambda: base.as_strided([10], [1], 0)),
        ("view_offset_out_of_bounds", lambda: base.as_strided([2], [1], 5)),
        ("view_negative_stride", lambda: base.as_strided([2], [-1], 0)),
        ("view_negative_offset", lambda: base.as_strided([2], [1], -1)),
        ("view_empty_anywhere", lambda: base.as_strided([2, 0], [100, 1], 7)),
    ]
    with Golden("value_tensor_errors.txt") as f:
        for name, make in cases:
            try:
                make()
                msg = "-"
            except RuntimeError as e:
                msg = str(e).split("\n")[0]
            f.write("%s\t%s\n" % (name, esc(msg)))
    return len(cases)


# ---------------------------------------------------------------- schema defaults
def schema_default(decl):
    text = str(torch._C.parse_schema("f(%s) -> ()" % decl))
    return text[text.index("=") + 1:text.rindex(") -> ()")]


def schema_cases():
    named = [("true", "bool x=True"), ("false", "bool x=False"), ("none", "int? x=None"),
             ("int_neg", "int x=-3"), ("int_big", "int x=9223372036854775807"),
             ("list_ints", "int[] x=[1, 2]"), ("list_empty", "int[] x=[]"),
             ("dev_cpu", 'Device x="cpu"'), ("dev_cpu0", 'Device x="cpu:0"'),
             ("dt_f32", "ScalarType x=6"), ("mf_contig", "MemoryFormat x=contiguous_format"),
             ("layout", "Layout x=strided")]
    strs = ["", "abc", "a'b", 'q"z', "back\\slash", "x\ny\tz\a\b\f\v\r", "\x01\x1f\x7f",
            "caf\u00e9", "\u4e2d", "~ !", "\U0001f600"]
    with Golden("value_schema.txt") as f:
        for name, decl in named:
            f.write("%s\t%s\n" % (name, esc(schema_default(decl))))
        for st in strs:
            lit = "".join({"\\": "\\\\", '"': '\\"', "\n": "\\n"}.get(c, c) for c in st)
            f.write("str:%s\t%s\n" % (st.encode("utf-8").hex(), esc(schema_default('str x="%s"' % lit))))
    return len(named) + len(strs)


if __name__ == "__main__":
    print("schema", schema_cases())
    print("floats", float_cases())
    promote_cases()
    print("strides", stride_cases())
    print("strings", string_cases())
    print("print", print_cases())
    print("tensors", tensor_cases())
    print("tensor errors", tensor_error_cases())
