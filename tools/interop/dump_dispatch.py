#!/usr/bin/python3
"""Generates tests/data/dispatch_scenarios.txt for tests/dispatch/test_dispatch_golden.c.

Run from the repo root:  /usr/bin/python3 tools/interop/dump_dispatch.py

Each scenario is a list of registration / inspection / call commands. This script runs them on
PyTorch 1.13's dispatcher through torch._C._dispatch_library (the C++ torch::Library behind
torch.library, which records every registration as "registered at /dev/null:LINE") and records
what each command printed. The C test replays the same commands on cfx's dispatcher with
file "/dev/null" and the same line numbers, so every text must match byte for byte.

Command language (one command per line, fields separated by single spaces):
  lib ID KIND NS KEY LINE      new library (KEY "-" = none); prints nothing or the error
  free ID                      destroy the library (deregisters everything it registered)
  def ID ALIAS SCHEMA...       ALIAS: "-" (FROM_SCHEMA), CONSERVATIVE, PURE_FUNCTION,
                               FROM_SCHEMA, WEIRD (bad), LEGACY (def_legacy: default kind)
  impl ID NAME KEY KIND        KEY "-" = the block's key / catch-all. KIND: boxed (a Python
                               kernel: boxed only) or unboxed (impl_t_t, a C++ Tensor(Tensor)
                               function; its debug string is set to "registered at
                               /dev/null:LINE" so it reads like a cfx C kernel)
  fallthrough ID KEY           fallback_fallthrough (KEY "-" = the block's key)
  dump OP / table OP           _dispatch_dump / _dispatch_dump_table
  dangling                     _dispatch_find_dangling_impls, concatenated
  invariants OP                _dispatch_check_invariants (prints nothing when they hold)
  call OP ARGS                 ARGS: none (no arguments), meta / cpu (one 2-element tensor),
                               int (the integer 3), two (two meta tensors)
Outputs: "warning: MSG" per warning, then "error: TYPE: MSG" on failure ("ok" for a
successful call). The Python suffix " (Triggered internally at ...)" of warnings is dropped.

File format: "@@@@ scenario NAME" starts a scenario, "@@@ COMMAND" starts a command; the lines
up to the next "@@@" line are its output plus ONE added "\n" (so an empty output is one empty
line). The first scenario, "oracle_fallbacks", holds the table of 1.13's dispatcher-wide
fallbacks (the computed table of an op with no kernels); the C test installs the same
fallbacks with the same debug strings before replaying a scenario.

No scenario runs `invariants` after "CIA, then CEA" or "CIA, then SparseCPU": 1.13 leaves a stale
slot there (its updateDispatchTable_ misses a dependency) and fails its own checkInvariants; cfx
refreshes the slot (operator.c, update_table) and the C test checks all invariants after every
scenario.

Two texts cannot come from 1.13 and are written from PyTorch's source instead (marked below):
DEF/FRAGMENT with the wildcard namespace "_" crashes 1.13 (basic_string::_M_create, it claims
the namespace before checking), so its expected error is the TORCH_CHECK text of
aten/src/ATen/core/library.cpp.
"""
import gc
import os
import re
import sys
import tempfile
import warnings

import torch

OUT = "tests/data/dispatch_scenarios.txt"

L = torch._C._dispatch_library

SCENARIOS = {}


def scenario(name, text):
    SCENARIOS[name] = [ln for ln in (l.strip() for l in text.strip().splitlines()) if ln]


# --- computed-table precedence (spec 2.2) ---------------------------------------------------
scenario("cia_only", """
lib L DEF pcia - 10
def L - a(Tensor x) -> Tensor
impl L a CompositeImplicitAutograd boxed
dump pcia::a
table pcia::a
invariants pcia::a
call pcia::a cpu
call pcia::a meta
""")
scenario("cpu_only", """
lib L DEF pcpu - 11
def L - a(Tensor x) -> Tensor
impl L a CPU boxed
dump pcpu::a
table pcpu::a
call pcpu::a cpu
""")
scenario("cpu_cea", """
lib L DEF pcea - 12
def L - a(Tensor x, *, float scale=1.0) -> Tensor
impl L a CPU boxed
impl L a CompositeExplicitAutograd boxed
dump pcea::a
table pcea::a
call pcea::a meta
""")
scenario("cia_cpu", """
lib L DEF pciacpu - 13
def L - a(Tensor x) -> Tensor
impl L a CompositeImplicitAutograd boxed
lib I IMPL pciacpu CPU 14
impl I a - boxed
dump pciacpu::a
table pciacpu::a
call pciacpu::a cpu
call pciacpu::a meta
""")
scenario("cia_sparse", """
lib L DEF pciasp - 15
def L - a(Tensor x) -> Tensor
impl L a CompositeImplicitAutograd boxed
impl L a SparseCPU boxed
dump pciasp::a
table pciasp::a
""")
scenario("cia_cea", """
lib L DEF pciacea - 41
def L - a(Tensor x) -> Tensor
impl L a CompositeImplicitAutograd boxed
impl L a CompositeExplicitAutograd boxed
dump pciacea::a
table pciacea::a
""")
scenario("cia_quantized_fpga", """
lib L DEF pciaq - 42
def L - a(Tensor x) -> Tensor
impl L a QuantizedCPU boxed
impl L a FPGA boxed
impl L a CompositeImplicitAutograd unboxed
dump pciaq::a
table pciaq::a
invariants pciaq::a
""")
scenario("autograd_alias", """
lib L DEF pag - 16
def L - a(Tensor x) -> Tensor
impl L a CompositeImplicitAutograd boxed
impl L a CPU boxed
impl L a Autograd boxed
dump pag::a
table pag::a
def L - b(Tensor x) -> Tensor
impl L b Autograd boxed
table pag::b
""")
scenario("cea_nonfunctional", """
lib L DEF pceanf - 17
def L - a(Tensor x) -> Tensor
impl L a CompositeExplicitAutogradNonFunctional boxed
dump pceanf::a
table pceanf::a
impl L a CompositeExplicitAutograd boxed
table pceanf::a
""")
scenario("cia_nested", """
lib L DEF pnest - 18
def L - a(Tensor x) -> Tensor
impl L a CompositeImplicitAutogradNestedTensor boxed
table pnest::a
impl L a CompositeImplicitAutograd boxed
dump pnest::a
table pnest::a
""")
scenario("catch_all", """
lib L DEF pcall - 19
def L - a(Tensor x) -> Tensor
impl L a - boxed
dump pcall::a
table pcall::a
call pcall::a none
""")

# --- overrides, library lifetime -------------------------------------------------------------
scenario("override", """
lib L DEF ovr - 20
def L - a(Tensor x) -> Tensor
impl L a CPU boxed
lib I IMPL ovr CPU 21
impl I a - boxed
dump ovr::a
table ovr::a
lib J IMPL ovr - 22
impl J a CPU boxed
dump ovr::a
free I
dump ovr::a
free J
dump ovr::a
table ovr::a
""")
scenario("override_unboxed", """
lib L DEF ovu - 23
def L - a(Tensor x) -> Tensor
impl L a CPU unboxed
impl L a Meta boxed
lib I IMPL ovu - 24
impl I a CPU unboxed
impl I a Meta boxed
impl I a - boxed
impl I a - boxed
dump ovu::a
table ovu::a
call ovu::a cpu
invariants ovu::a
free I
dump ovu::a
""")
scenario("dangling_override", """
lib I IMPL dov - 25
impl I nodef.ov CPU boxed
impl I nodef.ov CPU boxed
dump dov::nodef.ov
dangling
""")
scenario("impl_before_def", """
lib I IMPL dang CPU 29
impl I nothere - boxed
dangling
dump dang::nothere
table dang::nothere
invariants dang::nothere
lib L DEF dang - 30
def L - nothere(Tensor x) -> Tensor
dangling
dump dang::nothere
table dang::nothere
call dang::nothere cpu
free L
dangling
dump dang::nothere
free I
dangling
dump dang::nothere
""")
scenario("def_lifetime", """
lib L DEF life - 31
def L - a(Tensor x) -> Tensor
def L - a.out(Tensor x, *, Tensor(a!) out) -> Tensor(a!)
impl L a CPU unboxed
dump life::a
dump life::a.out
lib M DEF life - 32
free L
dump life::a
dump life::a.out
dangling
lib M DEF life - 33
def M - a(Tensor y) -> Tensor
dump life::a
""")
scenario("fragment", """
lib L DEF frag - 34
def L - a(Tensor x) -> Tensor
lib F FRAGMENT frag - 35
def F - b(Tensor x) -> Tensor
impl F b CPU boxed
lib G FRAGMENT frag - 36
def G - frag::c(Tensor x) -> Tensor
dump frag::b
dump frag::c
""")

# --- alias analysis kinds -------------------------------------------------------------------
scenario("alias_kinds", """
lib L DEF aak - 40
def L - a(Tensor x) -> Tensor
def L LEGACY b(Tensor x) -> Tensor
def L CONSERVATIVE c(Tensor(a!) x) -> Tensor(a!)
def L PURE_FUNCTION d(Tensor x) -> Tensor
def L FROM_SCHEMA e.over(Tensor x, int[2] k=1, str s="hi") -> (Tensor, Tensor)
def L WEIRD f(Tensor x) -> Tensor
dump aak::a
dump aak::b
dump aak::c
dump aak::d
dump aak::e.over
dump aak::f
""")

# --- fallthrough and backend fallbacks ------------------------------------------------------
scenario("backend_fallback", """
lib L DEF errs - 4
def L - b(Tensor x) -> Tensor
impl L b CPU boxed
call errs::b cpu
call errs::b meta
lib F IMPL _ AutogradMeta 0
fallthrough F -
table errs::b
call errs::b meta
lib G IMPL _ AutogradMeta 0
fallthrough G -
lib H IMPL _ - 0
fallthrough H AutogradMeta
free F
table errs::b
call errs::b meta
lib K IMPL _ Autograd 5
fallthrough K -
table errs::b
""")
scenario("fallback_after_def", """
lib F IMPL _ - 6
fallthrough F Meta
lib L DEF fbk - 7
def L - a(Tensor x) -> Tensor
impl L a CompositeExplicitAutograd boxed
table fbk::a
free F
table fbk::a
""")
scenario("missing_kernel", """
lib L DEF errs - 4
def L - b(Tensor x) -> Tensor
impl L b CPU boxed
def L - c(int n) -> Tensor
impl L c CPU boxed
def L - d(Tensor[] xs) -> Tensor
impl L d CompositeExplicitAutograd boxed
call errs::b meta
call errs::c int
call errs::b none
call errs::b two
call errs::c none
""")

# --- library rule violations (spec section 4) -----------------------------------------------
scenario("library_errors", """
lib A DEF errs - 4
def A - b(Tensor x) -> Tensor
lib B DEF errs - 21
lib W DEF _ - 5
lib W2 FRAGMENT _ - 6
lib C IMPL errs - 0
def C - q(Tensor x) -> Tensor
lib D IMPL errs CPU 0
impl D q CUDA boxed
impl D q CPU boxed
lib E IMPL myns AutogradMeta 0
fallthrough E -
lib F FRAGMENT errs - 3
def F - other::z(Tensor x) -> Tensor
impl F other::z CPU boxed
fallthrough F CPU
lib G IMPL errs - 3
impl G other::z CPU boxed
def A - b(Tensor x) -> Tensor
lib H FRAGMENT errs - 7
def H - errs::b(Tensor y) -> Tensor
dump errs::b
free A
lib B DEF errs - 21
def B - b(Tensor z) -> Tensor
dump errs::b
""")

WILDCARD_ERR = ("RuntimeError: {k}: cannot define {k} with the wildcard namespace _ (every {k} "
                "defines operators for a distinct namespace!) Did you mean to use TORCH_LIBRARY_IMPL "
                "instead?  (Error occurred while processing {k} block at /dev/null:{line})")


class Runner:
    def __init__(self):
        self.libs = {}
        self.lines = {}

    def run(self, cmd):
        f = cmd.split(" ")
        op = f[0]
        if op == "lib" and f[3] == "_" and f[2] in ("DEF", "FRAGMENT"):
            # 1.13 segfaults here; expected text from library.cpp (see the module docstring)
            k = {"DEF": "TORCH_LIBRARY", "FRAGMENT": "TORCH_LIBRARY_FRAGMENT"}[f[2]]
            return "error: " + WILDCARD_ERR.format(k=k, line=f[5])
        out = []
        # Bindings that do not translate C++ warnings into Python ones (impl_t_t) let them go
        # to glog on fd 2; collect both kinds.
        sys.stderr.flush()
        saved = os.dup(2)
        with tempfile.TemporaryFile(mode="w+b") as cap:
            os.dup2(cap.fileno(), 2)
            try:
                with warnings.catch_warnings(record=True) as ws:
                    warnings.simplefilter("always")
                    try:
                        res = self.do(op, f, cmd)
                    except Exception as e:  # the dispatcher's RuntimeError / NotImplementedError
                        res = None
                        err = "error: %s: %s" % (type(e).__name__, e)
                    else:
                        err = None
            finally:
                os.dup2(saved, 2)
                os.close(saved)
            cap.seek(0)
            glog = cap.read().decode()
        for w in ws:
            msg = str(w.message)
            cut = msg.find(" (Triggered internally at ")
            out.append("warning: " + (msg[:cut] if cut >= 0 else msg))
        for m in re.finditer(r"\] Warning: (.*?) \(function \w+\)\n", glog, re.S):
            out.append("warning: " + m.group(1))
        if err is not None:
            out.append(err)
        elif res is not None:
            out.append(res)
        return "\n".join(out)

    def do(self, op, f, cmd):
        if op == "lib":
            _, lid, kind, ns, key, line = f
            self.libs[lid] = L(kind, ns, "" if key == "-" else key, "", int(line))
            self.lines[lid] = int(line)
            return None
        if op == "free":
            del self.libs[f[1]]
            gc.collect()
            return None
        if op == "def":
            lib = self.libs[f[1]]
            alias, schema = f[2], " ".join(f[3:])
            if alias == "LEGACY":
                lib.def_legacy(schema)
            else:
                lib.def_(schema, "" if alias == "-" else alias)
            return None
        if op == "impl":
            _, lid, name, key, kind = f
            lib, key = self.libs[lid], ("" if key == "-" else key)
            if kind == "boxed":
                lib.impl(name, key, lambda *a, **k: a[0] if a else torch.zeros(2))
            else:
                lib.impl_t_t(name, key, "registered at /dev/null:%d" % self.lines[lid])
            return None
        if op == "fallthrough":
            self.libs[f[1]].fallback_fallthrough("" if f[2] == "-" else f[2])
            return None
        if op == "dump":
            return torch._C._dispatch_dump(f[1])
        if op == "table":
            return torch._C._dispatch_dump_table(f[1])
        if op == "dangling":
            return "".join(sorted(torch._C._dispatch_find_dangling_impls()))
        if op == "invariants":
            torch._C._dispatch_check_invariants(f[1])
            return None
        if op == "call":
            ns, rest = f[1].split("::")
            name, _, overload = rest.partition(".")
            packet = getattr(getattr(torch.ops, ns), name)
            fn = getattr(packet, overload or "default")
            args = {"none": (), "meta": (torch.ones(2, device="meta"),), "cpu": (torch.ones(2),),
                    "int": (3,), "two": (torch.ones(2, device="meta"),) * 2}[f[2]]
            try:
                fn(*args)
            finally:
                # torch.ops caches the packet; a later scenario reusing the name must not see
                # this (by then freed) operator
                delattr(getattr(torch.ops, ns), name)
            return "ok"
        raise SystemExit("unknown command " + cmd)


def oracle_fallbacks():
    lib = L("DEF", "oraclefb", "", "", 1)
    lib.def_("a(Tensor x) -> Tensor")
    text = torch._C._dispatch_dump_table("oraclefb::a")
    del lib
    for row in text.splitlines():
        assert row.endswith(" [backend fallback]"), row
    return text


def main():
    out = ["@@@@ scenario oracle_fallbacks", "@@@ table oraclefb::a", oracle_fallbacks()]
    for name, cmds in SCENARIOS.items():
        out.append("@@@@ scenario " + name)
        r = Runner()
        for cmd in cmds:
            res = r.run(cmd)
            assert not any(ln.startswith("@@@") for ln in res.splitlines()), cmd
            out.append("@@@ " + cmd)
            out.append(res)
        for lid in list(r.libs)[::-1]:  # scenarios must not leak into each other
            del r.libs[lid]
        gc.collect()
    # Evidence for the per-op fallthrough format (1.13's Python API cannot register one):
    # aten::add.Tensor's Named kernel, in dumpState and in the computed table.
    named = [ln for ln in torch._C._dispatch_dump("aten::add.Tensor").splitlines() if ln.startswith("Named")]
    named += [ln for ln in torch._C._dispatch_dump_table("aten::add.Tensor").splitlines() if ln.startswith("Named")]
    out += ["@@@@ scenario per_op_fallthrough_evidence", "@@@ grep Named aten::add.Tensor", "\n".join(named)]
    with open(OUT, "w") as fh:
        fh.write("\n".join(out) + "\n")
    print("wrote", OUT, "with", len(SCENARIOS) + 1, "scenarios", file=sys.stderr)


if __name__ == "__main__":
    main()
