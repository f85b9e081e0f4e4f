"""Generates tests/data/dispatch_scenarios.txt for tests/dispatch/test_dispatch_golden.c.

Run from the repo root:  python3 tools/interop/gen_dispatch.py   (or `make goldens`)

Each scenario is a list of registration / inspection / call commands. This script runs them on
PyTorch 2.13's dispatcher through torch._C._dispatch_library (the C++ torch::Library behind
torch.library; every library is opened with file "/dev/null" and the scenario's line numbers,
so registrations read "registered at /dev/null:LINE") and records what each command printed.
The C test replays the same commands on cfx's dispatcher with the same file and lines, so
every text must match byte for byte.

Every scenario runs in a fresh Python process (this script started again with --scenario): the
dispatcher is process-wide and some of its behaviour is once per process (the override warning
is a TORCH_WARN_ONCE), and the C test runs each scenario in a fresh process too (Criterion).

Command language (one command per line, fields separated by single spaces):
  lib ID KIND NS KEY LINE      new library (KEY "-" = none); prints nothing or the error
  free ID                      destroy the library (deregisters everything it registered)
  def ID ALIAS SCHEMA...       ALIAS: "-" (FROM_SCHEMA), CONSERVATIVE, PURE_FUNCTION,
                               FROM_SCHEMA, WEIRD (bad), LEGACY (def_legacy: default kind)
  impl ID NAME KEY KIND        KEY "-" = the block's key / catch-all. KIND: boxed (a Python
                               kernel: boxed only), unboxed (impl_t_t, a C++ Tensor(Tensor)
                               function; its debug string is set to "registered at
                               /dev/null:LINE" so it reads like a cfx C kernel) or fallthrough
                               (torch.library.fallthrough_kernel: a per-op fallthrough)
  fallthrough ID KEY           fallback_fallthrough (KEY "-" = the block's key)
  dump OP / table OP           _dispatch_dump / _dispatch_dump_table
  dangling                     _dispatch_find_dangling_impls, sorted and concatenated
  invariants OP                _dispatch_check_invariants (prints nothing when they hold)
  call OP ARGS                 ARGS: none (no arguments), meta / cpu (one 2-element tensor),
                               int (the integer 3), two (two meta tensors)
  redispatch OP KEY ARGS       OpOverload.redispatch with the key set {KEY} (a call that enters
                               the dispatcher at KEY whatever the tensors carry)
Outputs: "warning: MSG" per warning, then "error: TYPE: MSG" on failure ("ok" for a
successful call). Two PyTorch decorations are dropped because they name PyTorch's own build:
the " (Triggered internally at FILE:LINE.)" suffix of warnings and the "N INTERNAL ASSERT
FAILED at "FILE":LINE, please report a bug to PyTorch. " prefix of internal asserts.

File format: "@@@@ scenario NAME" starts a scenario, "@@@ COMMAND" starts a command; the lines
up to the next "@@@" line are its output plus ONE added "\n" (so an empty output is one empty
line). The first scenario, "oracle_fallbacks", holds the table of 2.13's dispatcher-wide
fallbacks (the computed table of an op with no kernels); the C test installs the same
fallbacks with the same debug strings before replaying a scenario.

No scenario runs `invariants` after "CIA, then CEA", "CIA, then SparseCPU" or "CIA, then
NestedTensorCPU": 2.13, as 1.13 did, leaves a stale slot there (its updateDispatchTable_
refreshes only the backend's own Autograd key) and fails its own checkInvariants; cfx refreshes
the slot (operator.c, update_table) and the C test checks all invariants after every scenario.

One text is not 2.13's (marked below): a DEF library with the wildcard namespace "_" makes 2.13
read the empty namespace (ns_.value()) before its own check, so it fails with
std::bad_optional_access's "bad optional access"; the expected text is that check's message,
the one 2.13 gives for FRAGMENT, which cfx gives for both.
"""
import concurrent.futures
import gc
import os
import re
import subprocess
import sys
import tempfile
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import torch  # noqa: E402

import golden  # noqa: E402

L = torch._C._dispatch_library
FILE = "/dev/null"

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
# SparseCsr is per-backend in 2.x, and among AutogradOther's backends; registered before the
# CIA kernel, so that 2.13's own table is not stale (see the module docstring).
scenario("ambiguous_autogradother", """
lib L DEF pamb - 43
def L - a(Tensor x) -> Tensor
impl L a SparseCsrCPU boxed
impl L a CompositeImplicitAutograd boxed
dump pamb::a
table pamb::a
invariants pamb::a
redispatch pamb::a AutogradOther cpu
redispatch pamb::a SparseCsrCPU cpu
""")
# 2.13's getBackendKeySetFromAutograd has no AutogradMTIA case: an MTIA kernel does not stop
# the CIA kernel on AutogradMTIA as a CPU kernel does on AutogradCPU; MAIA does.
scenario("cia_mtia_maia", """
lib L DEF pmtia - 44
def L - a(Tensor x) -> Tensor
impl L a CompositeImplicitAutograd boxed
impl L a MTIA boxed
impl L a MAIA boxed
table pmtia::a
invariants pmtia::a
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
scenario("batched_decomposition", """
lib L DEF pbat - 45
def L - a(Tensor x) -> Tensor
impl L a FuncTorchBatchedDecomposition boxed
dump pbat::a
table pbat::a
impl L a FuncTorchBatched boxed
impl L a CompositeImplicitAutograd boxed
dump pbat::a
table pbat::a
invariants pbat::a
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
# Meta overrides never warn; the first other override does, once per process.
scenario("override_unboxed", """
lib L DEF ovu - 23
def L - a(Tensor x) -> Tensor
impl L a CPU unboxed
impl L a Meta boxed
lib I IMPL ovu - 24
impl I a Meta boxed
impl I a CPU unboxed
impl I a - boxed
impl I a - boxed
impl I a MTIA boxed
impl I a MTIA boxed
dump ovu::a
table ovu::a
call ovu::a cpu
invariants ovu::a
free I
dump ovu::a
""")
scenario("override_catch_all_first", """
lib L DEF ovc - 26
def L - a(Tensor x) -> Tensor
impl L a - boxed
impl L a - boxed
impl L a CPU boxed
impl L a CPU boxed
dump ovc::a
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
# 2.13 has fallbacks on AutogradMeta (which redispatches below autograd) and Meta (an error
# that asks for a fake impl), so a CPU-only op on a meta tensor stops at the Meta fallback; the
# keys without one (FPGA, AutogradPrivateUse2, ...) still take a user fallback.
scenario("backend_fallback", """
lib L DEF errs - 4
def L - b(Tensor x) -> Tensor
impl L b CPU boxed
call errs::b cpu
call errs::b meta
lib F IMPL _ AutogradMeta 0
fallthrough F -
lib G IMPL _ - 0
fallthrough G Meta
lib H IMPL _ FPGA 0
fallthrough H -
lib H2 IMPL _ - 0
fallthrough H2 FPGA
table errs::b
redispatch errs::b FPGA cpu
free H
table errs::b
redispatch errs::b FPGA cpu
lib K IMPL _ Autograd 5
fallthrough K -
lib P IMPL _ AutogradPrivateUse2 6
fallthrough P -
table errs::b
""")
scenario("fallback_after_def", """
lib F IMPL _ - 6
fallthrough F FPGA
lib L DEF fbk - 7
def L - a(Tensor x) -> Tensor
impl L a CompositeExplicitAutograd boxed
table fbk::a
free F
table fbk::a
""")
scenario("per_op_fallthrough", """
lib L DEF pft - 8
def L - a(Tensor x) -> Tensor
impl L a Functionalize fallthrough
impl L a CPU boxed
dump pft::a
table pft::a
redispatch pft::a Functionalize cpu
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
redispatch errs::b FPGA cpu
redispatch errs::b AutogradPrivateUse2 cpu
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

# Not 2.13's text: see the module docstring.
WILDCARD_DEF_ERR = ("RuntimeError: TORCH_LIBRARY: cannot define TORCH_LIBRARY with the wildcard namespace _ "
                    "(every TORCH_LIBRARY defines operators for a distinct namespace!) Did you mean to use "
                    "TORCH_LIBRARY_IMPL instead?  (Error occurred while processing TORCH_LIBRARY block at "
                    "/dev/null:{line})")
INTERNAL_ASSERT = re.compile(r'^\d+ INTERNAL ASSERT FAILED at "[^"]*":\d+, please report a bug to PyTorch\. ')


def args_of(kind):
    return {"none": (), "meta": (torch.ones(2, device="meta"),), "cpu": (torch.ones(2),),
            "int": (3,), "two": (torch.ones(2, device="meta"),) * 2}[kind]


def overload(qualified):
    ns, rest = qualified.split("::")
    name, _, over = rest.partition(".")
    return getattr(getattr(getattr(torch.ops, ns), name), over or "default")


class Runner:
    def __init__(self):
        self.libs = {}
        self.lines = {}

    def run(self, cmd):
        f = cmd.split(" ")
        op = f[0]
        if op == "lib" and f[2] == "DEF" and f[3] == "_":
            return "error: " + WILDCARD_DEF_ERR.format(line=f[5])
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
                        err = "error: %s: %s" % (type(e).__name__, INTERNAL_ASSERT.sub("", str(e)))
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
        # "[W<date> <file>:<line>] Warning: MSG (function operator())"
        for m in re.finditer(r"\] Warning: (.*?) \(function [\w:~<>]+(?:\(\))?\)\n", glog, re.S):
            out.append("warning: " + m.group(1))
        if err is not None:
            out.append(err)
        elif res is not None:
            out.append(res)
        return "\n".join(out)

    def do(self, op, f, cmd):
        if op == "lib":
            _, lid, kind, ns, key, line = f
            self.libs[lid] = L(kind, ns, "" if key == "-" else key, FILE, int(line))
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
            lib = self.libs[lid]
            if kind == "unboxed":  # its key is a string, "" for none
                lib.impl_t_t(name, "" if key == "-" else key, "registered at %s:%d" % (FILE, self.lines[lid]))
                return None
            # torch::dispatch(CatchAll, f) leaves the kernel without a key (the block's, or
            # catch-all); CatchAll is Undefined, the one DispatchKey without a parsable name
            key = torch._C.DispatchKey.Undefined if key == "-" else key
            if kind == "boxed":
                lib.impl(name, key, lambda *a, **k: a[0] if a else torch.zeros(2))
            else:
                lib.impl(name, key, torch.library.fallthrough_kernel)
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
            overload(f[1])(*args_of(f[2]))
            return "ok"
        if op == "redispatch":
            ks = torch._C.DispatchKeySet(torch._C._dispatch_key_parse(f[2]))
            overload(f[1]).redispatch(ks, *args_of(f[3]))
            return "ok"
        raise SystemExit("unknown command " + cmd)


def oracle_fallbacks():
    lib = L("DEF", "oraclefb", "", FILE, 1)
    lib.def_("a(Tensor x) -> Tensor")
    text = torch._C._dispatch_dump_table("oraclefb::a")
    for row in text.splitlines():
        assert row.endswith(" [backend fallback]"), row
    return text


def run_scenario(name):
    """The scenario's part of the golden file, in this (fresh) process."""
    out = ["@@@@ scenario " + name]
    r = Runner()
    for cmd in SCENARIOS[name]:
        res = r.run(cmd)
        assert not any(ln.startswith("@@@") for ln in res.splitlines()), cmd
        out.append("@@@ " + cmd)
        out.append(res)
    return "\n".join(out) + "\n"


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--scenario":
        sys.stdout.write(run_scenario(sys.argv[2]))
        return
    parts = ["@@@@ scenario oracle_fallbacks\n@@@ table oraclefb::a\n" + oracle_fallbacks() + "\n"]

    def one(name):
        return subprocess.run([sys.executable, os.path.abspath(__file__), "--scenario", name],
                              check=True, stdout=subprocess.PIPE, text=True).stdout

    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        parts += pool.map(one, SCENARIOS)  # in SCENARIOS order, whatever finishes first
    golden.write_text("dispatch_scenarios.txt", "".join(parts))
    print("wrote", golden.path("dispatch_scenarios.txt"), "with", len(SCENARIOS) + 1, "scenarios",
          file=sys.stderr)


if __name__ == "__main__":
    main()
