#!/usr/bin/python3
"""Goldens for hop/: make_fx of the tensor_queue model (tools/models/tensor_queue.c) with
torchbind tracing, on PyTorch's own _TorchScriptTesting::_TensorQueue (libtorchbind_test.so
ships in the wheel), written to tests/data/model_tensor_queue.{graph,code}.txt; the graph after
eliminate_dead_code() (call_torchbind is side-effectful) to ..._dce.graph.txt."""
import os
import sys
import warnings

import torch
from torch._higher_order_ops.torchbind import enable_torchbind_tracing
from torch.fx.experimental.proxy_tensor import make_fx

HEADER = "# golden: PyTorch %s, tools/interop/gen_hop.py\n" % torch.__version__
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "data")


def write(name, text):
    with open(os.path.join(OUT, name), "w") as f:
        f.write(HEADER + text)


def tensor_queue(tq, x):
    tq.push(x.cos())
    tq.push(x.sin())
    a = tq.pop()
    b = tq.pop()
    tq.size()
    return a + b, x


ATTR_Q = None


def attr_f(x):
    """A script object that is no input (a module attribute or a global): get_attr nodes."""
    ATTR_Q.push(x)
    ATTR_Q.push(x.cos())
    return ATTR_Q.pop() + ATTR_Q.size()


def trace_attr_object():
    """make_fx interns the object as `_torchbind_obj0` with one get_attr node per use. 2.13
    then looks the object up in tracer.tensor_attrs, and the method call's raw_owner is a
    second Python wrapper of the same C++ object (same hash), so the dict compares them with
    ScriptObject.__eq__, which _TensorQueue does not define: give ScriptObject the identity
    equality of the C++ object for the trace (the graph is what the lookup would make)."""
    global ATTR_Q
    ATTR_Q = torch.classes._TorchScriptTesting._TensorQueue(torch.empty(0).fill_(-1))
    cls = torch._C.ScriptObject
    saved = cls.__dict__.get("__eq__")
    cls.__eq__ = lambda a, b: isinstance(b, cls) and hash(a) == hash(b)
    try:
        with warnings.catch_warnings(), enable_torchbind_tracing():
            warnings.simplefilter("ignore")
            return make_fx(attr_f, tracing_mode="real")(torch.ones(2, 3))
    finally:
        if saved is None:
            del cls.__eq__
        else:
            cls.__eq__ = saved


def wrapped_fn(g):
    return g.cos()


def trace_wrapped_f(x):
    from torch._dynamo._trace_wrapped_higher_order_op import trace_wrapped

    y = x.sin()
    z = trace_wrapped(y, fn=wrapped_fn)
    return z + x


def inlined_f(x):
    return wrapped_fn(x.sin()) + x


def module_hook_f(x):
    from torch._dynamo._trace_wrapped_higher_order_op import trace_wrapped

    return trace_wrapped(None, x, fn=wrapped_fn)


def error_cases():
    """(name, message) of PyTorch's errors that tests/hop/test_hop_golden.c reproduces."""
    import re

    from torch._C import DispatchKey
    from torch._higher_order_ops.torchbind import call_torchbind
    from torch._higher_order_ops.utils import autograd_not_implemented
    from torch._library.fake_class_registry import maybe_to_fake_obj
    from torch._ops import HigherOrderOperator
    from torch._subclasses import FakeTensorMode
    from torch.fx.experimental.proxy_tensor import ProxyTorchDispatchMode
    from torch.utils._python_dispatch import TorchDispatchMode

    out = []

    def case(name, fn):
        try:
            fn()
            out.append((name, "<no error>"))
        except Exception as e:  # the message is the golden
            out.append((name, re.sub(r" at 0x[0-9a-f]+", "", str(e))))

    class Foo(HigherOrderOperator):
        def __init__(self):
            super().__init__("foo")

        def __call__(self, *a, **k):
            return super().__call__(*a, **k)

    foo = Foo()
    case("missing_autograd_kernel", lambda: foo(torch.ones(2)))
    case("missing_kernel_undefined", lambda: foo(1))
    foo.py_impl(DispatchKey.CompositeExplicitAutograd)(lambda *a: 1)
    case("override", lambda: foo.py_impl(DispatchKey.CompositeExplicitAutograd)(lambda *a: 1))
    case("python_key", lambda: foo.py_impl(DispatchKey.Python)(lambda *a: 1))
    foo.py_impl(ProxyTorchDispatchMode)(lambda *a: 1)
    case("mode_twice", lambda: foo.py_impl(ProxyTorchDispatchMode)(lambda *a: 1))

    class Other(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args, kwargs=None):
            return func(*args, **(kwargs or {}))

    def no_rule():
        with Other():
            foo()

    case("no_rule", no_rule)

    class Strict(HigherOrderOperator):
        def __init__(self):
            super().__init__("strict_hop")

        def __call__(self, *a, **k):
            return super().__call__(*a, **k)

    strict = Strict()
    strict.py_impl(DispatchKey.CompositeExplicitAutograd)(lambda x: x)
    strict.py_impl(DispatchKey.Autograd)(autograd_not_implemented(strict, deferred_error=False))
    case("autograd_strict", lambda: strict(torch.ones(2, requires_grad=True)))

    q = torch.classes._TorchScriptTesting._TensorQueue(torch.empty(0).fill_(-1))
    for name, obj in [("int", 1), ("tensor", torch.ones(1)), ("none", None), ("str", "s")]:
        def bad(obj=obj):
            with torch._C._AutoDispatchBelowAutograd():
                call_torchbind(obj, "pop")

        case("first_arg_" + name, bad)
    case("no_such_method", lambda: call_torchbind(q, "nope"))
    case("push_wrong_type", lambda: call_torchbind(q, "push", 1))
    case("push_missing", lambda: call_torchbind(q, "push"))
    case("missing_fake_class", lambda: maybe_to_fake_obj(FakeTensorMode(), q))
    return out


def main():
    torch.ops.load_library(os.path.join(os.path.dirname(torch.__file__), "lib", "libtorchbind_test.so"))
    q = torch.classes._TorchScriptTesting._TensorQueue(torch.empty(0).fill_(-1))
    with warnings.catch_warnings(), enable_torchbind_tracing():
        gm = make_fx(tensor_queue, tracing_mode="real")(q, torch.ones(2, 3))
    write("model_tensor_queue.graph.txt", str(gm.graph))
    write("model_tensor_queue.code.txt", gm.code)
    gm.graph.eliminate_dead_code()
    write("model_tensor_queue_dce.graph.txt", str(gm.graph))
    gm = trace_attr_object()
    write("hop_torchbind_attr.graph.txt", str(gm.graph))
    write("hop_torchbind_attr.code.txt", gm.code)
    # trace_wrapped: the opaque node (2.13 inserts no _assert_meta; cfx's graph minus its
    # assertions must equal this), and the graph with fn's body in its place
    gm = make_fx(trace_wrapped_f, tracing_mode="fake")(torch.ones(2, 3))
    write("hop_trace_wrapped.graph.txt", str(gm.graph))
    write("hop_trace_wrapped.code.txt", gm.code)
    gm = make_fx(inlined_f, tracing_mode="fake")(torch.ones(2, 3))
    write("hop_trace_wrapped_inlined.graph.txt", str(gm.graph))
    gm = make_fx(module_hook_f, tracing_mode="fake")(torch.ones(2, 3))
    write("hop_trace_wrapped_none_first.graph.txt", str(gm.graph))
    # error texts, one case a line: name TAB message (newlines as \\n)
    lines = ["%s\t%s\n" % (n, m.replace("\\", "\\\\").replace("\n", "\\n")) for n, m in error_cases()]
    write("hop_errors.tsv", "".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
