#!/usr/bin/python3
"""Writes the schema golden data for tests/dispatch/test_schema.c from PyTorch 1.13.

Run from the repo root with Debian's PyTorch:  /usr/bin/python3 tools/interop/extract_schemas.py

  tests/data/schemas_1_13.txt   one line per schema in torch._C._jit_get_all_schemas():
                                str(schema); when parsing that text again prints something
                                else (alias sets print in hash-set order), "\t" and the reprint.
  tests/data/schema_reprint.tsv source \t str(torch._C.parse_schema(source))
  tests/data/schema_errors.tsv  source \t str(RuntimeError) raised by parse_schema(source)
  tests/data/schema_floats.tsv  float.hex(x) (or nan/-nan) \t how a schema prints the default x
                                (through a scripted function's schema, since the parser cannot
                                produce inf or nan)

In the .tsv files both columns are escaped: backslash as \\, newline as \n, tab as \t,
carriage return as \r; any other byte is written as it is (UTF-8).
"""
import importlib
import math
import os
import sys
import tempfile

import torch

OUT = "tests/data/"


def esc(s):
    return (s.replace("\\", "\\\\").replace("\n", "\\n").replace("\t", "\\t")
            .replace("\r", "\\r"))


def P(s):
    return str(torch._C.parse_schema(s))


# Source-form schemas that parse; the expected column is the oracle's reprint.
REPRINT = [
    # native_functions.yaml style
    "contiguous(Tensor(a) self, *, MemoryFormat memory_format=contiguous_format) -> Tensor(a)",
    "aten::contiguous(Tensor(a) self, *, MemoryFormat memory_format=contiguous_format) -> Tensor(a)",
    "max_pool2d(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, int[2] dilation=1, bool ceil_mode=False) -> Tensor",
    "conv2d(Tensor input, Tensor weight, Tensor? bias=None, int[2] stride=1, int[2] padding=0, int[2] dilation=1, int groups=1) -> Tensor",
    "layer_norm(Tensor input, int[] normalized_shape, Tensor? weight=None, Tensor? bias=None, float eps=1e-05, bool cudnn_enable=True) -> Tensor",
    "batch_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, Tensor? running_var, bool training, float momentum, float eps, bool cudnn_enabled) -> Tensor",
    "empty.memory_format(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor",
    "to.dtype(Tensor(a) self, ScalarType dtype, bool non_blocking=False, bool copy=False, MemoryFormat? memory_format=None) -> Tensor(a)",
    "sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
    "mse_loss(Tensor self, Tensor target, int reduction=Mean) -> Tensor",
    "randint(int high, SymInt[] size, *, ScalarType? dtype=long, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor",
    "rand(SymInt[] size, *, ScalarType? dtype=float, Layout? layout=strided) -> Tensor",
    "split.Tensor(Tensor(a -> *) self, SymInt split_size, int dim=0) -> Tensor(a)[]",
    "add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)",
    "add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)",
    "max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)",
    "max.dim_max(Tensor self, int dim, bool keepdim=False, *, Tensor(a!) max, Tensor(b!) max_values) -> (Tensor(a!) values, Tensor(b!) indices)",
    "index.Tensor(Tensor self, Tensor?[] indices) -> Tensor",
    "_foreach_add_.Scalar(Tensor(a!)[] self, Scalar scalar) -> ()",
    "unbind.int(Tensor(a -> *) self, int dim=0) -> Tensor(a)[]",
    "w2(Tensor x) -> Tensor",
    "myns::op.overload_1(Tensor x, *, Device device=\"cpu\") -> Tensor",
    # floats
    "f(float x=1, float y=1e-5, float z=-0.0, float w=1e10, float v=1e16, float u=123456789.5) -> ()",
    "f(float t=1e300, float r=0.1, float q=-2.5e-3, float p=1e9, float o=9999999999.0, float n=10000000000.0) -> ()",
    "f(float a=1e17, float b=9.2e18, float c=9223372036854775807.0, float d=-9223372036854775808.0, float e=1e19) -> ()",
    "f(float a=0.5, float b=100.25, float c=1e-300, float d=2.5e-308, float e=1e308, float f=1.7976931348623157e308) -> ()",
    "f(float a=0x1p3, float b=0x10, float c=1e-7, float d=123456.7, float e=.5, float f=5., float g=1E5, float h=1e+5) -> ()",
    "f(float x=3, float y=-3, float z=-0, int w=-0, float v=123456789012345678, float u=- 2) -> ()",
    "f(float a=0.33333333333333331, float b=0.125, float c=9.9999999999999995e-07) -> ()",
    # ints
    "f(int x=1, int y=-1, int z=1.5, int w=1e3, int v=0x10, int u=007, int t=9223372036854775807) -> ()",
    "f(int x=1E5, float y=1E5, int z=1e5, int w=-9223372036854775808) -> ()",
    # other scalars
    "f(Scalar x=1, Scalar y=1.5, Scalar z=True, Scalar w=None, Scalar v=\"str\", Scalar u=-3) -> ()",
    "f(bool x=True, bool y=False, bool z=1, bool w=0, bool v=2.5, bool u=None) -> ()",
    "f(str x=\"a\", str y='b', str z=\"it's\", str w='say \"hi\"', str v=\"\\n\\t\\\\\", str u=None, str t=1) -> ()",
    "f(str x=\"a\\a\\b\\f\\v\\t\\n\\\\\\'\\\"\", str y=\"\\101\\060\", str z=\"\") -> ()",
    "f(str x='''abc''', str y=\"\"\"a\"b\"\"\", str z=\"a\\\nb\") -> ()",
    "f(str x=\"\x01\x7f\x80\u00ff\u00e9\", str y=\"a\rb\x1f\") -> ()",
    "f(str center=\" \", str chars=\" \\n\\t\\f\\v\") -> str",
    "f(str? x=\"a\", str? y=None, Any? z=None, str? w=1) -> ()",
    "f(int? x=1, float? y=2, ScalarType? z=long, Layout l=strided, int r=Mean, MemoryFormat m=contiguous_format, ScalarType s=float, ScalarType c=complex) -> ()",
    "f(complex c=1j, complex e=-2.5j, complex h=0j, Scalar s=3j, complex k=1.5e3j, float f=2j, int i=3j, complex l=-0j) -> ()",
    "f(complex x=long, complex y=True, complex z=None, complex w=1.j, complex[] v=[1j, 2j], complex[2] u=1j) -> ()",
    "f(complex[2] d=[1j, 2.5j, -1j], complex[1] x=1.5) -> ()",
    "f(float x=long, float y=True, float z=\"s\") -> ()",
    "f(Dimname x=\"a\", Dimname? y=None, Dimname[] z, ConstQuantizerPtr q=1, SymInt s=1, MemoryFormat m=1) -> Dimname",
    "f(Layout x=1, ScalarType y=None, Quantizer z=None, Generator? g=None, Tensor t=None, Tensor? u=None) -> ()",
    # devices
    "f(Device d=\"cpu\", Device e=\"cuda:1\", Device? f=None, Device? g=\"meta\", Device h=\"meta:0\", Device i='cpu') -> ()",
    "f(Device a=\"cuda:200\", Device b=\"cuda:255\", Device c=\"cuda:128\", Device d=\"cuda:256\", Device e=\"cpu:5\", Device f=\"cpu:0\") -> ()",
    "f(Device? a=\"cuda:1\", Device? b=1, Device? c=\"x\", Device d=\"privateuseone\") -> ()",
    "f(Device a=\"cpu\", Device b=\"cuda\", Device c=\"ipu\", Device d=\"xpu\", Device e=\"mkldnn\", Device f=\"opengl\", Device g=\"opencl\") -> ()",
    "f(Device a=\"ideep\", Device b=\"hip\", Device c=\"ve\", Device d=\"fpga\", Device e=\"ort\", Device f=\"xla\", Device g=\"lazy\") -> ()",
    "f(Device a=\"vulkan\", Device b=\"mps\", Device c=\"meta\", Device d=\"hpu:3\", Device e=\"privateuseone:1\") -> ()",
    # lists
    "f(int[2] k=3, int[2] l=[3, 3], int[] m=[3, 3], int[1] n=[1], SymInt[2] q=1, SymInt[] r=[2, 2], int[3] s=[1, 2, 1]) -> ()",
    "f(int[0] t=1, int[] u=[], int[2] v=[1], bool[2] w=True, float[2] x=1, float[] y=[1, 2.5], bool[] z=[True, False]) -> ()",
    "f(int[2]? o=1, int[]? p=2, int[]? q=None, int? r=1.5, float[2]? s=1) -> ()",
    "f(SymInt[2] q=[1, 1], SymInt[2]? r=1, SymInt[3] s=[1, 2, 3], Layout[2] l=[1, 1], int[2] x=[-1, -1], int[3] y=[]) -> ()",
    "f(int[2] x=[1, 2], int[2] y=[2, 1], int[3] z=[5, 5, 5], int[] w=[7], int[] v=[-1, -1], int[1] u=[-1]) -> ()",
    "f(int[] x=[long, float, strided], ScalarType[2] y=1, Layout[] z=[1], ConstQuantizerPtr[2] w=[4, 4]) -> ()",
    "f(int[2.5] a, int[0x10] b, int[1e3] c, int[2147483648] d, int[4294967296] e, int[007] f) -> ()",
    # types
    "f(Tensor a, Tensor? b, Tensor[] c, Tensor?[] d, Tensor[]? e, Tensor[3] f, Tensor[2]? g) -> Tensor",
    "f(int a, SymInt b, float c, complex d, bool e, str f, Scalar g, ScalarType h, Layout i, MemoryFormat j) -> ()",
    "f(Device a, Generator b, Storage c, Stream d, Dimname e, QScheme f, Quantizer g, ConstQuantizerPtr h) -> ()",
    "f(Capsule a, None b, NoneType c, Any d, AnyClassType e, AnyEnumType f, t g, t[] h, t? i) -> ()",
    "f((int, int) x, Dict(str, t) d, Future(t) f, RRef(t) r, (Tensor(a), Tensor) y, () z, (int) w) -> (int, int)",
    "f(Dict(str, Tensor)(a) d, Future(Tensor(a)) f) -> Dict(str, Tensor)(a!)",
    "f(Any?? a, Scalar?? b, Scalar??? c, Scalar?[]? d, Tensor?? e, Scalar(a)?? g) -> Scalar??",
    "f(Dict(str, Scalar??) x, (Scalar??, int) y, Scalar?? z=1, Scalar?? w=None) -> ()",
    "f(int[][] x, int[]?[] y, int?[]?[] z, int?? w, int??[] v, Any? u, t?? s, None[] r, Tensor?? q) -> ()",
    "f((int, None)? x, Future(int)? y, Dict(str, int)? z, Dict(Tensor(a), int) w, Dict(str,int)(a)[] v) -> Future(int)[]",
    "f(__torch__.torch.classes.quantized.Conv2dPackedParamsBase x, __torch__.torch.classes.quantized.Conv2dPackedParamsBase[]? y) -> __torch__.torch.classes.quantized.Conv2dPackedParamsBase",
    # nested types are "fake": SymInt, ScalarType, Layout, MemoryFormat become int
    "f((ScalarType, Layout) x, Dict(str, MemoryFormat) y, Future(SymInt) z, Dimname[] w, (Dimname, ConstQuantizerPtr) v, RRef(Storage) u) -> ()",
    "f(Dict(ScalarType, int) x, Dict(SymInt, int) y, Dict(Dimname, int) z, Dict(ConstQuantizerPtr, t) w) -> ()",
    "f(Dict(bool, int) x, Dict(Any, int) y, Dict(Device, int) z, Dict(complex, t) w, Dict(Tensor, t) v, Dict(float, t) u) -> ()",
    "f((ScalarType[], Layout?) x, Dict(str, SymInt[]) y) -> (ScalarType, int)",
    # alias annotations
    "f(Tensor(a)[] x2, Tensor(a)[](b) x3, Tensor[](b) x4, Tensor(a)?[] x5, Tensor(a)[]? x6) -> ()",
    "f(Tensor(a)[2] x7, Tensor[2](a) x8, Tensor(a)[2](b) x9, Tensor(a!)[2] x10) -> ()",
    "f(Tensor(a)[][] x, Tensor(a)[](b)[](c) y) -> Tensor(a)[](b)[](c)",
    "f(t[](a!) self, t(c -> *) el) -> t[](a!)",
    "f(Tensor(a!)[] x, Tensor(a!)?[] y, Tensor(a!)? z) -> Tensor(a)?",
    "f(Tensor(a! -> b) x, Tensor(a|b! -> b|c) y, Tensor(a -> *) z, Tensor(*) w) -> ()",
    "f(Tensor(a -> b|*) u, Tensor(*|*) q, Tensor(a -> b|c|d) x) -> ()",
    "f(Tensor(a -> a) q, Tensor(a! -> a) r, Tensor(a!->a|a) s, Tensor(a|a) t, Tensor(a|b -> b|a) u) -> ()",
    "f(Tensor(a|b) x, Tensor(b|a) y, Tensor(a|b|c) z, Tensor(c|b|a) w, Tensor(self|other) v) -> Tensor(b|a)",
    "f(Tensor! x, Tensor!? y, Tensor[]! z, Tensor![] w) -> Tensor!",
    "f(Dict(str, Tensor)! x) -> Dict(str, Tensor)!",
    "f(int(a) x, float(b!) y, t(c -> *) z, Scalar(a)[] w) -> int(a)",
    "f(Dict(str, Tensor(a))(b)[] x, (Tensor, Tensor)[] y, RRef(Tensor(a))[](b) z) -> ()",
    # returns and the argument list
    "f(Tensor x) -> ((Tensor, Tensor) a)",
    "f(Tensor x) -> ((Tensor, Tensor) a, int b)",
    "f(Tensor x) -> ((int, int))",
    "f(Tensor x) -> ((int, int)[], int)",
    "f(Tensor x) -> ((int, int)[] a)",
    "f(Tensor x) -> int?[] y",
    "f(Tensor x) -> (int[2] y)",
    "f(Tensor x) -> int[2]",
    "f(Tensor x) -> (int x, int)",
    "f(Tensor x) -> ...",
    "f(Tensor x) -> (...)",
    "f(Tensor x) -> (Tensor, ...)",
    "f(...) -> (Tensor a)",
    "f(Tensor x, ...) -> Tensor a",
    "f(Tensor x, ...) -> Tensor(a) a",
    "f(*, Tensor x, int y, *, int z) -> ()",
    "f(*) -> ()",
    "f(Tensor x, *) -> ()",
    "f(Tensor x, *, ...) -> ()",
    "f(int x=1, *, int y) -> ()",
    "f(int x=1, int[] y) -> ()",
    "f() -> ()",
    "f.b() -> ()",
    "a::b.c() -> ()",
    "prim::Print(...) -> ()",
    "prim::TupleUnpack(Any tup) -> ...",
    "aten::format(str self, ...) -> str",
    # keywords as part of identifiers, whitespace, comments, newlines
    "f(int isnot, int notin, int define, int inp, int _x1, int Nonex, int Truex) -> ()",
    "f(int x) -> int\n",
    "  f(int x) -> int",
    "f(int\n x) -> int",
    "f(int x) -> int # c",
    "f(int x) \\\n-> int",
    "f(Tensor x) -> Tensor\t",
    "f(Tensor x)\t-> Tensor",
    "f(Tensor x)\x0b-> Tensor",
    "f(Tensor x)\x0c-> Tensor",
    "f(Tensor x,\n\t\tint y) -> Tensor",
    "f(\n  Tensor x, # the input\n  int y=1\n) -> (\n  Tensor a,\n  Tensor b)",
    "f(int x) -> int\n\n",
    "f(int x) -> int  \n  ",
]

# Malformed schemas; the expected column is the oracle's exception text.
ERRORS = [
    "foo::a(Tensor x, ..., int y) -> Tensor",
    "foo::b(Tensor x) Tensor",
    "foo::c(Tensr x) -> Tensor",
    "foo::d(int x=abc) -> Tensor",
    "foo::e(Tensor x=3) -> Tensor",
    "foo::f(str[] x=['a']) -> Tensor",
    "foo::g(Tensor x, int) -> Tensor",
    "foo::h",
    "foo::i(Tensor x) -> (Tensor, ..., int)",
    "foo::j(int x=\"abc) -> ()",
    "foo::k(int x='abc\") -> ()",
    "foo::l(Tensor(a -> ) x) -> ()",
    "foo::m(Tensor(!) x) -> ()",
    "foo::n(Tensor() x) -> ()",
    "foo::o(Tensor(*|a) x) -> ()",
    "foo::p(Tensor(a! x) -> ()",
    "foo::q(Tensor!(a) x) -> ()",
    "foo::r(Tensor?(a) x) -> ()",
    "foo::s(int x",
    "foo::t(int x) -> ",
    "foo::u(int x) -> int $",
    "foo::v(int x,) -> ()",
    "foo::w(int x) -> int\nfoo::x(int y) -> int",
    "foo::y(int x=1, ...) -> ()",
    "foo::z(int x) -> (Tensor,)",
    "foo::z1(Tensor x) -> (,)",
    "foo::z2(Tensor x) -> Tensor x y",
    "foo::z3(Tensor x) -> (Tensor x y)",
    "foo::z4(Tensor x) -> int x=1",
    "foo::z5(Tensor x) -> (Tensor, Tensor)[]",
    "a::b::c() -> ()",
    "a.b.c() -> ()",
    "a.default() -> ()",
    "a.__foo() -> ()",
    "a:b() -> ()",
    "",
    " ",
    "$",
    "$a() -> ()",
    " $a() -> ()",
    "f(int x) -> int   $",
    "f(int x, # c\n $ int y) -> int",
    "f(int x,\n   $ int y) -> int",
    "f(int x,$ int y) -> int",
    "f(int x, \\\n  $ int y) -> int",
    "f(int x)\n -> int",
    "f(int x) ->\n int",
    "f(int x) # comment\n -> int",
    "f(\n  int x,\n  Tensr y,\n  int z\n) -> int",
    "f(int x, int y) ->\n\n\n\n\n int z",
    "f(Tensor x)\r\n-> Tensor",
    "  f(int x) -> int\nf(int y) -> int",
    "f(\n  int x,\n  int y,\n  int z,\n  int w,\n  Tensr q,\n  int a,\n  int b,\n  int c,\n  int d,\n  int e\n) -> ()",
    "f(int x, Tensr\n y) -> ()",
    "f(str x=\"a\" \"b\") -> ()",
    # a number or string literal at the very end loses its highlight, and so does the EOF after it
    "f(int x",
    "f(int x) -> (int a",
    "f(int x=1 ",
    "f(int x=1",
    "f(int[2",
    "f(str x=\"a\"",
    "f(int x) -> 12",
    "f(int x) -> 1.5",
    "f(int x) -> 'ab'",
    "f(int x, ...",
    "f(int x=1 # c",
    "f(int x=1\n",
    "f(int x,\n int y=12",
    "f(\n int y,\n int z,\n int w,\n int v,\n int u=12",
    "f(\n int y,\n int z,\n int w,\n int v) -> 12",
    "f(int x) -> Tensor(a!0x1",
    # types
    "f(DeviceIndex x) -> ()",
    "f(SymFloat x) -> ()",
    "f(None? x) -> ()",
    "f(NoneType? x) -> ()",
    "f(__torch__.torch.classes.quantized.Conv2dPackedParamsBase(a) x) -> ()",
    "f(__torch__.foo.classes.a.b x) -> ()",
    "f(__torch__.torch.klasses.a.b x) -> ()",
    "f(__torch__ x) -> ()",
    "f(__torch__.torch.classes.a x) -> ()",
    "f((int,) x) -> ()",
    "f(Future(int, int) x) -> ()",
    "f(Future x) -> ()",
    "f(Dict(str) x) -> ()",
    "f(Dict(Scalar, int) x) -> ()",
    "f(Dict(int?, int) x) -> ()",
    "f(Dict(t, int) x) -> ()",
    "f(Dict(Layout[], int) x) -> ()",
    "f(Dict((int, int), int) x) -> ()",
    "f(Dict(Tensr, t) x) -> ()",
    "f(Dict(None, t)(a) x) -> ()",
    "f(Dict(Scalar??, t) x) -> ()",
    "f(int[-1] x) -> ()",
    "f(int[ x) -> ()",
    "f(int[2 x) -> ()",
    "f(int[99999999999999999999] x) -> ()",
    # keywords where an identifier is expected
    "f(int Ellipsis) -> ()",
    "f(int NoneType) -> ()",
    "f(int def) -> ()",
    "f(int in) -> ()",
    "f(int None) -> ()",
    "f(int True) -> ()",
    "f(int is not) -> ()",
    "f(int not in) -> ()",
    "f(int is  not) -> ()",
    "f(int lambda, int or) -> ()",
    # defaults
    "f(int x=99999999999999999999) -> ()",
    "f(float x=inf) -> ()",
    "f(float x=99999e999) -> ()",
    "f(float x=-99999e999) -> ()",
    "f(float x=1.5e-320) -> ()",
    "f(float x=5e-324) -> ()",
    "f(complex d=1) -> ()",
    "f(Scalar d=1e400j) -> ()",
    "f(Scalar d=1ej) -> ()",
    "f(Scalar d=j) -> ()",
    "f(int x=-True) -> ()",
    "f(int x=--1) -> ()",
    "f(int x=+1) -> ()",
    "f(int x=-long) -> ()",
    "f(int x=[1]) -> ()",
    "f(str x=\"\\x41\") -> ()",
    "f(str x=\"\\u0041\") -> ()",
    "f(str x=\"\\U00000041\") -> ()",
    "f(str x=\"\\r\") -> ()",
    "f(str x=\"\\q\") -> ()",
    "f(str x=\"\\101\\0\\1234\") -> ()",
    "f(str x=\"\\10\") -> ()",
    "f(str x=\"\\400\") -> ()",
    "f(int[] x=[1, 2.5, True]) -> ()",
    "f(bool[] x=[1, 0]) -> ()",
    "f(int[] x=[None]) -> ()",
    "f(int[] x=[\"a\"]) -> ()",
    "f(float[] x=[True]) -> ()",
    "f(int[] x=[1,]) -> ()",
    "f(int[] x=None) -> ()",
    "f(int[] x=foo) -> ()",
    "f(int[2] x=1.5) -> ()",
    "f(str[] x=None) -> ()",
    "f(str[] x=[]) -> ()",
    "f(Tensor[] x=[]) -> ()",
    "f(Tensor[] x=None) -> ()",
    "f(t[] x=[]) -> ()",
    "f(t x=1) -> ()",
    "f(Any x=1) -> ()",
    "f((int, int) x=1) -> ()",
    "f(Dict(str, int) x=None) -> ()",
    "f(Storage x=1) -> ()",
    "f(Dimname[] x=[\"a\"]) -> ()",
    "f(QScheme x=1) -> ()",
    "f(Stream x=None) -> ()",
    "f(Device x=None) -> ()",
    "f(Generator x=1) -> ()",
    "f(None x=None) -> ()",
    "f(Capsule x=None) -> ()",
    "f(SymInt[] x=[1, 2.5]) -> ()",
    "f(Scalar[] x=[1]) -> ()",
    "f(int?[] x=[1]) -> ()",
    "f(float?[] x=[1]) -> ()",
    "f(int[][] x=[]) -> ()",
    "f(int[2]? o=[1, 1]) -> ()",
    "f(complex[] x=[True]) -> ()",
    "f(complex[] x=[long]) -> ()",
    "f(complex[] x=[None]) -> ()",
    "f(complex[] x=[\"s\"]) -> ()",
    "f(Device x=\"xyz\") -> ()",
    "f(Device x=\"\") -> ()",
    "f(Device x=\"cuda:01\") -> ()",
    "f(Device x=\"cuda:\") -> ()",
    "f(Device x=\"cuda:99999999999\") -> ()",
    "f(Device x=\"cuda:-1\") -> ()",
    "f(Device x=\"cuda 1\") -> ()",
    "f(Device x=\"CPU\") -> ()",
    "f(Device x=\"_\") -> ()",
    "f(Device x=\"cuda:0:1\") -> ()",
    "f(Device x=\"cuda:1a\") -> ()",
    "f(Device x=\"cuda1\") -> ()",
    "f(Device x=\":\") -> ()",
    "f(Device x=\"meta:-1\") -> ()",
    "f(Device x=\"hp:3\") -> ()",
    "f(Device x=\"xyz:99999999999\") -> ()",
    "f(Device x=1) -> ()",
]


FLOATS = [0.0, -0.0, 1.0, -1.0, 0.5, 2.5, 0.1, 1e-5, 1e-7, 1e10, 1e16, 1e17, 1e19, 1e20,
          1e300, 1e308, 5e-324, 2.2250738585072014e-308, 123456789.5, 9223372036854775807.0,
          -9223372036854775808.0, 9.3e18, -9.3e18, 1.0 / 3, 100.25, 1e15 + 0.5,
          math.inf, -math.inf, math.nan, -math.nan]


def float_cases():
    """Prints each value as the default of a scripted function (IValue's double printer)."""
    src = ["import math", "inf = math.inf", "nan = math.nan"]
    def literal(x):
        if math.isnan(x):
            return "-nan" if math.copysign(1, x) < 0 else "nan"
        return repr(x)
    for i, x in enumerate(FLOATS):
        src.append("def f%d(x: float = %s) -> float:\n    return x" % (i, literal(x)))
    with tempfile.TemporaryDirectory() as d:
        with open(os.path.join(d, "cfx_float_defaults.py"), "w") as f:
            f.write("\n".join(src) + "\n")
        sys.path.insert(0, d)
        mod = importlib.import_module("cfx_float_defaults")
        out = []
        for i, x in enumerate(FLOATS):
            text = str(torch.jit.script(getattr(mod, "f%d" % i)).schema)
            prefix = "f%d(float x=" % i
            assert text.startswith(prefix) and text.endswith(") -> float"), text
            key = literal(x) if math.isnan(x) else x.hex()
            out.append((key, text[len(prefix):-len(") -> float")]))
        sys.path.pop(0)
    return out


def main():
    if not os.path.isdir(OUT):
        sys.exit("run from the repo root")
    schemas = [str(s) for s in torch._C._jit_get_all_schemas()]
    n_diff = 0
    with open(OUT + "schemas_1_13.txt", "w", encoding="utf-8") as f:
        for s in schemas:
            assert "\n" not in s and "\t" not in s, s
            r = P(s)
            if r != s:
                n_diff += 1
                f.write("%s\t%s\n" % (s, r))
            else:
                f.write(s + "\n")
    with open(OUT + "schema_reprint.tsv", "w", encoding="utf-8") as f:
        for s in REPRINT:
            f.write("%s\t%s\n" % (esc(s), esc(P(s))))
    n_err = 0
    with open(OUT + "schema_errors.tsv", "w", encoding="utf-8") as f:
        for s in ERRORS:
            try:
                r = P(s)
            except Exception as e:  # RuntimeError, and IndexError/ValueError from std::sto*
                f.write("%s\t%s\n" % (esc(s), esc(str(e))))
                n_err += 1
            else:
                sys.exit("expected an error for %r, got %r" % (s, r))
    floats = float_cases()
    with open(OUT + "schema_floats.tsv", "w", encoding="utf-8") as f:
        for k, v in floats:
            f.write("%s\t%s\n" % (k, v))
    print("schemas %d (%d reprint differently), reprint cases %d, error cases %d, floats %d"
          % (len(schemas), n_diff, len(REPRINT), n_err, len(floats)))


if __name__ == "__main__":
    main()
