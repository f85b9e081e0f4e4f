#!/usr/bin/python3
"""Writes the schema golden data for tests/dispatch/test_schema.c from PyTorch 2.13.

Run from the repo root with the default python3 (`make goldens` runs every gen_*.py):

    python3 tools/interop/gen_schemas.py

  tests/data/schemas_2_13.txt   every schema PyTorch has registered, one per line: str(schema);
                                when parsing that text again prints something else (alias sets
                                print in hash-set order), "\t" and the reprint.
  tests/data/schema_reprint.tsv source \t str(torch._C.parse_schema(source)) [\t no_typevars]
  tests/data/schema_errors.tsv  source \t the exception parse_schema(source) raises [\t no_typevars]
  tests/data/schema_floats.tsv  float.hex(x) (or nan/-nan) \t how a schema prints the default x
                                (through a scripted function's schema, since the parser cannot
                                produce inf or nan)

Every file starts with the golden header line (tools/interop/golden.py). In the .tsv files both
columns are escaped: backslash as \\, newline as \n, tab as \t, carriage return as \r; any
other byte is written as it is (UTF-8). A third column "no_typevars" marks a case parsed with
parse_schema(source, allow_typevars=False), as operator definitions (torch.library) parse.

The registered schemas are torch._C._jit_get_all_schemas() (operators and TorchScript builtins),
the _schema of every dispatcher operator not among them, and the methods of the registered
torchbind classes, after importing the modules that register operators from Python
(OP_MODULES). A registered schema whose printed text PyTorch itself cannot parse back (an
opaque type prints as "PyObject", which is no type name) is an error case instead.

Opaque types: PyTorch registers a few at import (enum.Enum, ...), cfx none. Before the
hand-written cases the generator unregisters PyTorch's and registers OPAQUE_TYPES, which the C
test registers too. Running the script twice writes identical files.
"""
import importlib
import itertools
import math
import os
import random
import sys
import tempfile

import torch
from torch._library import opaque_object

from golden import write_text

# Modules that register operators when imported (namespaces c10d_functional, _dtensor,
# quantized_decomposed, prims, symm_mem, ...).
OP_MODULES = [
    "torch.distributed._functional_collectives",
    "torch.distributed.tensor",
    "torch.ao.quantization.fx._decomposed",
    "torch._dynamo",
    "torch._inductor.fx_passes.post_grad",
]

# Registered as opaque types for the hand-written cases; tests/dispatch/test_schema.c
# registers the same names.
OPAQUE_TYPES = ["cfx_test.Opaque", "cfx_test.sub.Handle", "Handle", "lower_handle"]


def esc(s):
    return (s.replace("\\", "\\\\").replace("\n", "\\n").replace("\t", "\\t")
            .replace("\r", "\\r"))


def P(s, typevars=True):
    return str(torch._C.parse_schema(s, typevars))


def registered_schemas():
    for m in OP_MODULES:
        importlib.import_module(m)
    texts = {str(s) for s in torch._C._jit_get_all_schemas()}
    for op in torch._C._dispatch_get_all_op_names():
        name, _, overload = op.partition(".")
        try:
            texts.add(str(torch._C._get_schema(name, overload)))
        except RuntimeError:  # an operator with kernels but no schema
            pass
    texts.update(str(s) for s in torch._C._jit_get_custom_class_schemas())
    return sorted(texts)


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
    "f(str x=\"a\", str? y=None, str[] z, ConstQuantizerPtr q=1, SymInt s=1, MemoryFormat m=1, DeviceIndex d=0) -> DeviceIndex",
    "f(Layout x=1, ScalarType y=None, Quantizer z=None, Generator? g=None, Tensor t=None, Tensor? u=None) -> ()",
    # devices
    "f(Device d=\"cpu\", Device e=\"cuda:1\", Device? f=None, Device? g=\"meta\", Device h=\"meta:0\", Device i='cpu') -> ()",
    "f(Device a=\"cuda:200\", Device b=\"cuda:255\", Device c=\"cuda:128\", Device d=\"cuda:256\", Device e=\"cpu:5\", Device f=\"cpu:0\") -> ()",
    "f(Device? a=\"cuda:1\", Device? b=1, Device? c=\"x\", Device d=\"privateuseone\") -> ()",
    "f(Device a=\"cpu\", Device b=\"cuda\", Device c=\"ipu\", Device d=\"xpu\", Device e=\"mkldnn\", Device f=\"opengl\", Device g=\"opencl\") -> ()",
    "f(Device a=\"ideep\", Device b=\"hip\", Device c=\"ve\", Device d=\"fpga\", Device e=\"maia\", Device f=\"xla\", Device g=\"lazy\") -> ()",
    "f(Device a=\"vulkan\", Device b=\"mps\", Device c=\"meta\", Device d=\"hpu:3\", Device e=\"privateuseone:1\", Device f=\"mtia:2\") -> ()",
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
    "f(Device a, Generator b, Storage c, Stream d, SymBool e, QScheme f, Quantizer g, ConstQuantizerPtr h) -> ()",
    "f(Capsule a, None b, NoneType c, Any d, AnyClassType e, AnyEnumType f, t g, t[] h, t? i) -> ()",
    "f((int, int) x, Dict(str, t) d, Future(t) f, RRef(t) r, (Tensor(a), Tensor) y, () z, (int) w) -> (int, int)",
    "f(Dict(str, Tensor)(a) d, Future(Tensor(a)) f) -> Dict(str, Tensor)(a!)",
    "f(Any?? a, Scalar?? b, Scalar??? c, Scalar?[]? d, Tensor?? e, Scalar(a)?? g) -> Scalar??",
    "f(Dict(str, Scalar??) x, (Scalar??, int) y, Scalar?? z=1, Scalar?? w=None) -> ()",
    "f(int[][] x, int[]?[] y, int?[]?[] z, int?? w, int??[] v, Any? u, t?? s, None[] r, Tensor?? q) -> ()",
    "f((int, None)? x, Future(int)? y, Dict(str, int)? z, Dict(Tensor(a), int) w, Dict(str,int)(a)[] v) -> Future(int)[]",
    "f(__torch__.torch.classes.quantized.Conv2dPackedParamsBase x, __torch__.torch.classes.quantized.Conv2dPackedParamsBase[]? y) -> __torch__.torch.classes.quantized.Conv2dPackedParamsBase",
    # nested types are "fake": SymInt, ScalarType, Layout, MemoryFormat become int
    "f((ScalarType, Layout) x, Dict(str, MemoryFormat) y, Future(SymInt) z, SymBool[] w, (SymBool, ConstQuantizerPtr, DeviceIndex) v, RRef(Storage) u) -> ()",
    "f(Dict(ScalarType, int) x, Dict(SymInt, int) y, Dict(DeviceIndex, int) z, Dict(ConstQuantizerPtr, t) w) -> ()",
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
    # 2.13: SymInt and SymBool, DeviceIndex, dtype names as ScalarType defaults, Await
    "f(SymInt a, SymInt? b=None, SymInt[] c=[1, 2], SymInt[2] d=1, SymInt[1] e=-1, SymInt f=long, SymInt g=1.5, SymInt[]? h=None) -> SymInt[]",
    "f(SymBool a, SymBool(a!) e, SymBool[] c, SymBool? b=None, SymBool[]? d=None) -> (SymBool, SymBool[])",
    "f(DeviceIndex a=0, DeviceIndex? b=None, DeviceIndex[] c=[0, 1], DeviceIndex[2] d=1) -> DeviceIndex",
    "f(DeviceIndex x) -> ()",
    "f(ScalarType a=float32, ScalarType? b=bfloat16, ScalarType c=int64, ScalarType? d=None, ScalarType[] e=[half, cfloat]) -> ()",
    "f(Layout a=strided, Layout? b=None, MemoryFormat? c=contiguous_format, ScalarType? d=complex, Layout[] e=[strided], Layout[2] f=1) -> Layout",
    "f(Storage a, Stream c, Generator[] f, Storage[] g, Storage? b=None, Stream? d=None, Generator? e=None) -> Storage",
    "f(str? a=\"x\", str? b=None, str[]? c=None, str?[] d, str e=\"\") -> str?",
    "f(complex a=1.5, complex b=-1.5e3j, complex[] c=[1.5, 2j], Scalar d=1j, float e=1j, int f=2j, complex g=0.5e1) -> complex",
    "f(Await(int) a, Await(Tensor(a)) b, Await(t)[] c, Await(SymInt) d, Await(Await(str)) e, Await(int)? f=None) -> Await(int)",
    "f(Any a, Any[] c, Any(a) d, Any?[] e, Any? b=None) -> Any",
    # out= and in-place list forms, empty and variadic returns
    "f(Tensor(a!)[] self, *, Tensor(a!) out) -> ()",
    "f(Tensor(a!)[] self, Tensor(b!)[] other, *, Scalar alpha=1) -> Tensor(a!)[]",
    "_foreach_add.List_out(Tensor[] self, Tensor[] other, *, Scalar alpha=1, Tensor(a!)[] out) -> ()",
    "f(Tensor self, *, Tensor(a!) out0, Tensor(b!) out1) -> (Tensor(a!), Tensor(b!))",
    "f(int[2]? a=None, int[2]? b=1, SymInt[2]? d=None, SymInt[]? e=None, int[3] f=[1, 2, 3]) -> int[2]?",
    "f(...) -> ...",
    "f(int x, ...) -> (int, ...)",
    "f(Tensor x) -> ()",
    # qualified names: type variables, or opaque types when registered (OPAQUE_TYPES)
    "f(my.T a, my.sub.T b, int.b c, t.u d, cfx_test.Other e) -> my.T",
    "f(my . T a, my.t(a) b) -> ()",
    "f(cfx_test.Opaque a, cfx_test.Opaque[] c, cfx_test.Opaque(a!) d, Handle e, lower_handle f, cfx_test.Opaque? b=None, Handle? g=1) -> cfx_test.Opaque",
    "f(cfx_test . Opaque a, cfx_test.sub.Handle b, cfx_test.sub.Handle.x c, cfx_test.Opaque.x d) -> ()",
    "f((cfx_test.Opaque, int) a, Dict(str, cfx_test.Opaque) b, Future(Handle) c, Union(Handle, int) d) -> Handle[]",
    # Union (members are fake types; built, flattened and printed as c10 does)
    "f(Union(int, str) a, Union(int, str)[] c, Union(int, str)(a!) d, Union(int, str)? b=None) -> Union(int, str)",
    "f(Union(int, float, complex) d, Union(int, None) a=None, Union(Tensor, None) b=None, Union(Scalar, None) c=1, Union(int, float, complex, None) e=None) -> ()",
    "f(Union(str, Scalar) a, Union(Tensor, Scalar) b, Union(Tensor, Scalar, str) c, Union(Scalar?, str) d, Union(int?, str?) e) -> ()",
    "f(Union(Union(int, str), bool) a, Union(int, str)?? b, Union(SymInt, str) c, Union(Layout, ScalarType?, str) d) -> ()",
    "f(Union(int, str)?[] a, Union(Tensor(a), int) b, Union(int, str)[](a!) c, Union(str, None, int) d) -> ()",
    "f(Union(int, Union(float, Union(str, bool))) a, Union(int, float) b, Union(float, int) c) -> Union(float, int)",
    "f(Union(Storage, Stream, Generator, Device, Capsule, QScheme, Quantizer) a, Union(AnyEnumType, int) b) -> ()",
    "f((Union(int, str), int) a, Union(int, str)[2] b, Dict(str, Union(int, str)) c) -> ()",
    "f(Scalar(a)?? a, Union(int, str)(a)?? b, Tensor(a)[]? c) -> Scalar??",
    # a bare "!" after a list type: a fresh "$N" write set, printed as "($0! -> )" (fuzz_schema)
    "f(Tensor(a!)[] !x) -> ()",
    "f(int[]! x, Tensor?[] ! y) -> Tensor[] !",
]

# Malformed schemas; the expected column is the oracle's exception text.
ERRORS = [
    # the printed form of a bare "!" alias set does not parse again, in PyTorch either
    "f(Tensor(a!)[]($0! -> ) x) -> ()",
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
    # 2.13: types that no longer (or never) parse
    "f(Dimname x) -> ()",
    "f(Dimname[] x=[\"a\"]) -> ()",
    "f(PyObject x) -> ()",
    "f(GenericList x) -> ()",
    "f(Number x) -> ()",
    "f(SymBool x=True) -> ()",
    "f(SymBool[] x=[True]) -> ()",
    "f(Await(int) x=None) -> ()",
    "f(Await x) -> ()",
    "f(Await(int, int) x) -> ()",
    "f(Await(int)(a) x) -> ()",
    "f(Device x=\"ort\") -> ()",
    "f(Device x=\"maia:1a\") -> ()",
    # dtype names are ScalarType defaults only
    "f(ScalarType x=Float) -> ()",
    "f(ScalarType x=float128) -> ()",
    "f(int x=float32) -> ()",
    "f(Scalar x=float32) -> ()",
    "f(int? x=bfloat16) -> ()",
    "f(ScalarType?[] x=[float32]) -> ()",
    "f(ScalarType[1] x=float32) -> ()",
    # FunctionSchema's own checks
    "f(int x=1, int y) -> ()",
    "f(Tensor a, int x=1, Tensor b, *, int y, int z=2) -> ()",
    "f(int[1]? c=[3]) -> ()",
    "f(SymInt[]? e=[1, 2]) -> ()",
    "foo::z6(int[] x=[], int y=1, Tensor z) -> ()",
    # qualified names
    "f(my.None x) -> ()",
    "f(my.in x) -> ()",
    "f(my. x) -> ()",
    "f(my.$ x) -> ()",
    "f(None.x y) -> ()",
    "f(NoneType.x y) -> ()",
    "f(A.b x) -> ()",
    "f(Tensor.b x) -> ()",
    "f(cfx_test.Opaque x=None) -> ()",
    "f(Handle x=None) -> ()",
    "f(Dict(cfx_test.Opaque, int) x) -> ()",
    "f(Dict(SymBool, int) x) -> ()",
    "f(Dict(Storage, int) x) -> ()",
    "f(Dict(Union(int, str), int) x) -> ()",
    "f(Dict(str?, int) x) -> ()",
    "f(Dict(Await(int), int) x) -> ()",
    # Union
    "f(Union(int, str) x=None) -> ()",
    "f(Union(int, str) x=1) -> ()",
    "f(Union(int) x) -> ()",
    "f(Union(int, int) x) -> ()",
    "f(Union(int, ConstQuantizerPtr, DeviceIndex) x) -> ()",
    "f(Union() x) -> ()",
    "f(Union x) -> ()",
    "f(Union(int str) x) -> ()",
    "f(Union(int, str x) -> ()",
    "f(Union(int,) x) -> ()",
    "f(Union(int, Any) x) -> ()",
    "f(Union(int, Any, str) x) -> ()",
    "f(Union(t, u) x) -> ()",
    "f(Union(SymInt, ScalarType) x) -> ()",
    "f(Union(None) x) -> ()",
    "f(Union(NoneType, None) x) -> ()",
    "f(Union(int[], int[]) x) -> ()",
    "f(Union((int, None), (int, int)) x) -> ()",
    "f(Union(Future(int), Future(Scalar)) x) -> ()",
    "f(Union(AnyClassType, __torch__.torch.classes.quantized.Conv2dPackedParamsBase) x) -> ()",
    "f(Union(int, str)(a) y, Union(int, None)(b) z) -> Union(Tensor(a), int)??(a!)",
    # repeated defaults of a sized list
    "f(int[4294967295] x=1) -> ()",
]

# Parsed as operator definitions parse them (allow_typevars=False): the third column.
NO_TYPEVARS_REPRINT = [
    "aten::f(t x, t[] y) -> t",
    "prim::f(t x) -> t",
    "f(int x, Tensor? y, SymInt[] z, Union(int, str) w, cfx_test.Opaque o) -> Tensor",
]

NO_TYPEVARS_ERRORS = [
    "f(t x) -> t",
    "foo::f(t x) -> ()",
    " aten::f(t x) -> t",
    "aten2::f(t x) -> t",
    "f(double x) -> ()",
    "f(int x) -> double",
    "f(int64_t x) -> ()",
    "f(float64 x) -> ()",
    "f(my.T x) -> ()",
    "f(my.None x) -> ()",
    "f(Tensr x) -> ()",
    "f(Union(t, int) x) -> ()",
    "f(Dict(str, t) x) -> ()",
]

# Union members for the generated cases: every ordered pair, each one optional and twice
# optional, and seeded random triples. They exercise c10's subtyping and unification.
UNION_MEMBERS = [
    "int", "float", "complex", "bool", "str", "Scalar", "Tensor", "None", "Any", "t", "SymInt",
    "SymBool", "Device", "Storage", "Capsule", "AnyClassType", "cfx_test.Opaque",
    "__torch__.torch.classes.quantized.Conv2dPackedParamsBase", "int[]", "Scalar[]", "int?",
    "Scalar?", "Tensor?", "(int, int)", "(int, float)", "(int, None)", "(Scalar, int)", "()",
    "Future(int)", "Future(Scalar)", "Await(Scalar)", "RRef(int)", "Dict(str, int)",
    "Union(int, str)", "Union(float, str)?", "Union(int, float, complex)",
]


def union_cases():
    cases = ["f(Union(%s, %s) x) -> ()" % ab for ab in itertools.product(UNION_MEMBERS, repeat=2)]
    cases += ["f(%s? x, %s?? y) -> ()" % (m, m) for m in UNION_MEMBERS]
    rng = random.Random(213)
    for _ in range(200):
        cases.append("f(Union(%s) x) -> ()" % ", ".join(rng.choice(UNION_MEMBERS) for _ in range(3)))
    return cases


def dtype_names():
    """Every dtype name torch knows (torch.float32, torch.half, ...): ScalarType defaults."""
    names = set()
    for attr in dir(torch):
        v = getattr(torch, attr)
        if isinstance(v, torch.dtype):
            names.update((attr, str(v).split(".")[1]))
    return sorted(names)


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
    if not os.path.isdir("tests/data"):
        sys.exit("run from the repo root")
    lines, unparsable, n_diff = [], [], 0
    for s in registered_schemas():
        assert "\n" not in s and "\t" not in s, s
        try:
            r = P(s)
        except RuntimeError:
            unparsable.append(s)
            continue
        n_diff += r != s
        lines.append(s if r == s else "%s\t%s" % (s, r))
    write_text("schemas_2_13.txt", "".join(l + "\n" for l in lines))

    # the oracle's opaque types are ours for the hand-written cases
    for name in sorted(opaque_object._OPAQUE_TYPES_BY_NAME):
        torch._C._unregister_opaque_type(name)
    for name in OPAQUE_TYPES:
        torch._C._register_opaque_type(name)

    reprint = REPRINT + ["f(%s) -> ()" % ", ".join("ScalarType a%d=%s" % (i, n) for i, n in enumerate(dtype_names()))]
    # (source, allow_typevars, must parse: True / False / None for either)
    cases = ([(s, True, True) for s in reprint] + [(s, False, True) for s in NO_TYPEVARS_REPRINT] +
             [(s, True, False) for s in ERRORS + unparsable] + [(s, False, False) for s in NO_TYPEVARS_ERRORS] +
             [(s, True, None) for s in union_cases()])
    seen, ok, bad = set(), [], []
    for s, typevars, must_parse in cases:
        if (s, typevars) in seen:  # a generated union case may repeat a hand-written one
            continue
        seen.add((s, typevars))
        mark = "" if typevars else "\tno_typevars"
        try:
            r = P(s, typevars)
        except Exception as e:  # RuntimeError, and IndexError/ValueError from std::sto*
            if must_parse:
                sys.exit("expected %r to parse, got %r" % (s, str(e)))
            bad.append("%s\t%s%s\n" % (esc(s), esc(str(e)), mark))
        else:
            if must_parse is False:
                sys.exit("expected an error for %r, got %r" % (s, r))
            ok.append("%s\t%s%s\n" % (esc(s), esc(r), mark))
    write_text("schema_reprint.tsv", "".join(ok))
    write_text("schema_errors.tsv", "".join(bad))

    floats = float_cases()
    write_text("schema_floats.tsv", "".join("%s\t%s\n" % kv for kv in floats))
    print("schemas %d (%d reprint differently, %d do not parse in PyTorch either), reprint cases %d, "
          "error cases %d, floats %d" % (len(lines), n_diff, len(unparsable), len(ok), len(bad), len(floats)))


if __name__ == "__main__":
    main()
