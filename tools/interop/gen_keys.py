"""Generates the golden data for tests/dispatch/test_keys.c and test_mode.c from PyTorch 2.13.

Run from the repo root:  python3 tools/interop/gen_keys.py   (or `make goldens`)

Every file is plain text after its golden header (tools/interop/golden.py), one case per line,
tab-separated. Dispatch keys travel as their integer values (int(torch._C.DispatchKey.X)),
which cfx's enum equals.

  keys_names.txt   v \t c10::toString(DispatchKey(v))        (0..159: every key, block markers,
                                                              and a few values past the last)
  keys_parse.txt   name \t v of c10::parseDispatchKey(name), or -1 when it throws
  keys_sets.txt    kind \t args... \t expected, kinds:
     tensor      device \t printed key set of a dense tensor      (torch._C._dispatch_keys)
     tls         which \t printed set                            (default / inference / autocast)
     single      v \t printed DispatchKeySet(k) \t v of highestPriorityTypeId()
     full_after  v \t printed DispatchKeySet(FULL_AFTER, k)
     from_ag     v \t printed getBackendKeySetFromAutograd(k)
     in_alias    alias_v \t v \t 0|1                              (isIncludedInAlias(k, alias))
     alias_rows  alias_v \t rows filled by a kernel registered only to that alias
     agother     - \t printed autogradother_backends
     combo       v,v,.. \t printed union \t v of highestPriorityTypeId()
     minus       v,..;v,.. \t printed a - b
     and         v,..;v,.. \t printed a & b
     has         v,.. \t v \t 0|1
  mode_keys.txt    name \t text
      Thread-local key sets printed by torch._C._dispatch_tls_local_{include,exclude}_set()
      outside any mode, inside `with Mode():`, after it, and inside __torch_dispatch__ (where
      the Python fallback's exclusion shows); plus the stack lengths nested handlers observe.

The random cases come from a fixed seed, so running the script twice writes the same files.
"""
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import torch  # noqa: E402
from torch.utils._python_dispatch import TorchDispatchMode, _len_torch_dispatch_stack  # noqa: E402

import golden  # noqa: E402

C = torch._C
D = C.DispatchKey
random.seed(2013)


def value(member):
    return int(getattr(D, member))


END_OF_FUNCTIONALITY = value("PythonDispatcher") + 1
ALIASES = list(range(value("Autograd"), value("CompositeExplicitAutogradNonFunctional") + 1))
LAST_KEY = ALIASES[-1]
RUNTIME_MAX = value("AutogradMeta")  # EndOfRuntimeBackendKeys
# StartOf<F>Backends markers and EndOfFunctionalityKeys: not keys (their sets are degenerate)
MARKERS = {END_OF_FUNCTIONALITY} | {value(m) for m in D.__members__ if m.startswith("StartOf")}


def name(v):
    return C._dispatch_key_name(D(v))


def ks_of(vals):
    s = C.DispatchKeySet(D(0))
    for v in vals:
        s = s | C.DispatchKeySet(D(v))
    return s


def vlist(vals):
    return ",".join(str(v) for v in vals) if vals else "-"


def tsv(rows):
    return "".join("\t".join(row) + "\n" for row in rows)


def names_and_parse():
    golden.write_text("keys_names.txt", tsv((str(v), name(v)) for v in range(LAST_KEY + 5)))
    names = [name(v) for v in range(LAST_KEY + 1)]
    names += ["CatchAll", "DefaultBackend", "Autocast", "CPUTensorId", "CUDATensorId",
              "PrivateUse1_PreAutograd", "EndOfFunctionalityKeys", "StartOfDenseBackends",
              "cpu", "CPU ", "autograd", "ORT", "Named", "AutocastCUDA ", "Unknown"]
    rows, seen = [], set()
    for n in names:
        if n in seen or n == "":
            continue
        seen.add(n)
        try:
            v = int(C._dispatch_key_parse(n))
        except RuntimeError as e:
            assert str(e).startswith("could not parse dispatch key: "), e
            v = -1
        rows.append((n, str(v)))
    golden.write_text("keys_parse.txt", tsv(rows))


def alias_rows(alias_v):
    lib = C._dispatch_library("DEF", "cfxkeys%d" % alias_v, "", "/dev/null", 1)
    lib.def_("f(Tensor x) -> Tensor")
    lib.impl("f", name(alias_v), lambda x: x)
    rows = []
    for line in C._dispatch_dump_table("cfxkeys%d::f" % alias_v).splitlines():
        if "/dev/null" in line:  # our kernel; the others are backend fallbacks
            rows.append(line.split(":")[0])
    return rows


def sets():
    L = []
    L.append(("tensor", "cpu", str(C._dispatch_keys(torch.ones(1)))))
    L.append(("tensor", "meta", str(C._dispatch_keys(torch.ones(1, device="meta")))))
    L.append(("tls", "include", str(C._dispatch_tls_local_include_set())))
    L.append(("tls", "exclude", str(C._dispatch_tls_local_exclude_set())))
    with torch.inference_mode():
        L.append(("tls", "inference_include", str(C._dispatch_tls_local_include_set())))
        L.append(("tls", "inference_exclude", str(C._dispatch_tls_local_exclude_set())))
    with torch.autocast("cpu"):
        L.append(("tls", "autocast_cpu_exclude", str(C._dispatch_tls_local_exclude_set())))

    for v in range(LAST_KEY + 1):
        s = C.DispatchKeySet(D(v))
        L.append(("single", str(v), str(s), str(int(s.highestPriorityTypeId()))))
    for v in range(LAST_KEY + 1):
        L.append(("full_after", str(v), str(C._dispatch_keyset_full_after(D(v)))))
    for v in range(LAST_KEY + 1):
        L.append(("from_ag", str(v), str(C._dispatch_get_backend_keyset_from_autograd(D(v)))))
    for a in ALIASES:
        for v in range(1, LAST_KEY + 1):
            inc = C._dispatch_is_included_in_alias(D(v), D(a))
            L.append(("in_alias", str(a), str(v), "1" if inc else "0"))
    for a in ALIASES:
        L.append(("alias_rows", str(a), ",".join(alias_rows(a))))
    L.append(("agother", "-", str(C._dispatch_autogradother_backends)))

    # Random unions / differences / intersections over the runtime keys and the per-backend
    # functionality bits themselves.
    pool = [v for v in range(1, RUNTIME_MAX + 1) if v not in MARKERS]
    for _ in range(300):
        a = sorted(random.sample(pool, random.randint(1, 6)))
        s = ks_of(a)
        L.append(("combo", vlist(a), str(s), str(int(s.highestPriorityTypeId()))))
    for _ in range(200):
        a = sorted(random.sample(pool, random.randint(1, 5)))
        b = sorted(random.sample(pool, random.randint(1, 4)))
        L.append(("minus", vlist(a) + ";" + vlist(b), str(ks_of(a) - ks_of(b))))
        L.append(("and", vlist(a) + ";" + vlist(b), str(ks_of(a) & ks_of(b))))
    for _ in range(300):
        a = sorted(random.sample(pool, random.randint(1, 5)))
        k = random.choice(pool + a)
        L.append(("has", vlist(a), str(k), "1" if ks_of(a).has(D(k)) else "0"))
    golden.write_text("keys_sets.txt", tsv(L))


def mode_keys():
    rows = []
    inc = C._dispatch_tls_local_include_set
    exc = C._dispatch_tls_local_exclude_set
    rows.append(("include_no_mode", str(inc())))
    rows.append(("exclude_no_mode", str(exc())))
    seen = {}

    class M(TorchDispatchMode):
        def __init__(self, tag):
            super().__init__()
            self.tag = tag

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            seen.setdefault(self.tag + "_stack_len", str(_len_torch_dispatch_stack()))
            seen.setdefault(self.tag + "_handler_include", str(inc()))
            seen.setdefault(self.tag + "_handler_exclude", str(exc()))
            return func(*args, **(kwargs or {}))

    with M("outer"):
        rows.append(("include_in_mode", str(inc())))
        with M("inner"):
            torch.ones(2) + torch.ones(2)
    rows.append(("include_after_mode", str(inc())))
    for k in ("inner_handler_include", "inner_handler_exclude", "inner_stack_len",
              "outer_handler_include", "outer_handler_exclude", "outer_stack_len"):
        rows.append((k, seen[k]))
    golden.write_text("mode_keys.txt", tsv(rows))


if __name__ == "__main__":
    names_and_parse()
    sets()
    mode_keys()
