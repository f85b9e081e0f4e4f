#!/usr/bin/python3
"""Generates the golden data for tests/dispatch/test_keys.c from PyTorch 1.13.

Run from the repo root:  /usr/bin/python3 tools/interop/dump_keys.py
Every file is plain text, one case per line, tab-separated. Dispatch keys travel as their 1.13
integer values ("v13"); the test maps them to cfx's enum, which is 1.13's plus PreDispatch
directly below PythonDispatcher (v13 <= 39 unchanged, v13 >= 40 shifted up by one).

  keys_names.txt   v13 \t c10::toString(DispatchKey(v13))        (0..124, incl. block markers)
  keys_parse.txt   name \t v13 of c10::parseDispatchKey(name), or -1 when it throws
  keys_sets.txt    kind \t args... \t expected, kinds:
     tensor      device \t printed key set of a dense tensor      (torch._C._dispatch_keys)
     tls         which \t printed set                            (default / inference / autocast)
     single      v13 \t printed DispatchKeySet(k) \t v13 of highestPriorityTypeId()
     full_after  v13 \t printed DispatchKeySet(FULL_AFTER, k)
     from_ag     v13 \t printed getBackendKeySetFromAutograd(k)
     in_alias    alias_v13 \t v13 \t 0|1                          (isIncludedInAlias(k, alias))
     alias_rows  alias_v13 \t rows filled by a kernel registered only to that alias
     agother     - \t printed autogradother_backends
     combo       v13,v13,.. \t printed union \t v13 of highestPriorityTypeId()
     minus       v13,..;v13,.. \t printed a - b
     and         v13,..;v13,.. \t printed a & b
     has         v13,.. \t v13 \t 0|1
"""
import random

import torch

C = torch._C
D = C.DispatchKey
OUT = "tests/data/"
random.seed(1913)

ALIASES = list(range(117, 122))  # Autograd .. CompositeExplicitAutogradNonFunctional
RUNTIME_MAX = 116                 # EndOfRuntimeBackendKeys in 1.13


def name(v):
    return C._dispatch_key_name(D(v))


def ks_of(vals):
    s = C.DispatchKeySet(D(0))
    for v in vals:
        s = s | C.DispatchKeySet(D(v))
    return s


def vlist(vals):
    return ",".join(str(v) for v in vals) if vals else "-"


def dump_names():
    with open(OUT + "keys_names.txt", "w") as f:
        for v in range(125):
            f.write("%d\t%s\n" % (v, name(v)))
    names = [name(v) for v in range(122)]
    names += ["CatchAll", "DefaultBackend", "Autocast", "CPUTensorId", "CUDATensorId",
              "PrivateUse1_PreAutograd", "EndOfFunctionalityKeys", "StartOfDenseBackends",
              "PreDispatch", "cpu", "CPU ", "autograd", "MTIA", "SparseCsr", "AutocastXLA"]
    seen = set()
    with open(OUT + "keys_parse.txt", "w") as f:
        for n in names:
            if n in seen or n == "":
                continue
            seen.add(n)
            try:
                v = int(C._dispatch_key_parse(n))
            except RuntimeError as e:
                assert str(e).startswith("could not parse dispatch key: "), e
                v = -1
            f.write("%s\t%d\n" % (n, v))


def alias_rows(alias_v):
    lib = torch.library.Library("cfxkeys%d" % alias_v, "DEF")
    lib.define("f(Tensor x) -> Tensor")
    lib.impl("f", lambda x: x, name(alias_v))
    rows = []
    for line in C._dispatch_dump_table("cfxkeys%d::f" % alias_v).splitlines():
        if "/dev/null" in line:  # our kernel; the others are backend fallbacks
            rows.append(line.split(":")[0])
    return rows


def dump_sets():
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

    for v in range(122):
        s = C.DispatchKeySet(D(v))
        L.append(("single", str(v), str(s), str(int(s.highestPriorityTypeId()))))
    for v in range(122):
        L.append(("full_after", str(v), str(C._dispatch_keyset_full_after(D(v)))))
    for v in range(122):
        L.append(("from_ag", str(v), str(C._dispatch_get_backend_keyset_from_autograd(D(v)))))
    for a in ALIASES:
        for v in range(1, 122):
            inc = C._dispatch_is_included_in_alias(D(v), D(a))
            L.append(("in_alias", str(a), str(v), "1" if inc else "0"))
    for a in ALIASES:
        L.append(("alias_rows", str(a), ",".join(alias_rows(a))))
    L.append(("agother", "-", str(C._dispatch_autogradother_backends)))

    # Random unions / differences / intersections over the runtime keys (not the block markers,
    # whose sets are degenerate) and the per-backend functionality bits themselves.
    pool = [v for v in range(1, RUNTIME_MAX + 1) if v not in (41, 42, 57, 72, 87, 102)]
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

    with open(OUT + "keys_sets.txt", "w") as f:
        for row in L:
            f.write("\t".join(row) + "\n")


if __name__ == "__main__":
    dump_names()
    dump_sets()
