/* cfx.h - the one header a cfx user includes.
 *
 * cfx records C calls to tensor operators into an FX-style graph. This header pulls in the
 * public surface, layer by layer: values, tensors and scopes; schemas; the dispatcher
 * (operators, libraries, dispatch keys); the built-in operators; the dispatch mode stack and
 * fake tensors; the FX graph IR with its passes, JSON and interpreter; make_fx. */
#ifndef CFX_H
#define CFX_H

#include "dispatch/dtype.h"
#include "dispatch/error.h"
#include "dispatch/value.h"
#include "dispatch/tensor.h"
#include "dispatch/scope.h"
#include "dispatch/keys.h"
#include "dispatch/schema.h"
#include "dispatch/kernel.h"
#include "dispatch/boxing.h"
#include "dispatch/operator.h"
#include "dispatch/dispatcher.h"
#include "dispatch/library.h"
#include "dispatch/ops.h"
#include "dispatch/getitem.h"
#include "dispatch/mode.h"
#include "dispatch/fake.h"
#include "ir/graph.h"
#include "ir/graph_module.h"
#include "ir/print_tabular.h"
#include "codegen/codegen.h"
#include "ir/json.h"
#include "ir/atomic_file.h"
#include "ir/verify.h"
#include "ir/safetensors.h"
#include "ir/interpreter.h"
#include "ir/passes/dce.h"
#include "ir/passes/fake_tensor_prop.h"
#include "ir/passes/fold.h"
#include "ir/passes/normalize_args.h"
#include "tracer/decompose.h"
#include "ir/passes/cse.h"
#include "ir/passes/topo_sort.h"
#include "ir/passes/strip_asserts.h"
#include "ir/passes/manager.h"
#include "tracer/module.h"
#include "tracer/make_fx.h"
#include "tracer/plugin.h"
#include "tracer/callable.h"
#include "tracer/collectives.h"
#include "tracer/user_kernel.h"
#include "hop/hop.h"
#include "hop/object.h"
#include "hop/class.h"
#include "hop/autograd.h"
#include "hop/torchbind.h"
#include "hop/fake_class.h"
#include "hop/trace_wrapped.h"

#endif
