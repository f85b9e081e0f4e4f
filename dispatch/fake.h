/* fake.h - fake tensors and the fake tensor mode (torch._subclasses.fake_tensor, 2.13).
 *
 * A fake tensor has a real tensor's metadata (sizes, strides, dtype, storage offset, a shared
 * storage with no data) and no data. Internally it IS a meta tensor (device META, a meta key
 * set), so operators run their Meta kernels and never allocate; its mode state
 * (tensor_ext.h) records the fake mode it belongs to and the device users see (cpu), and it
 * carries Python + PythonTLSSnapshot like a tensor subclass. Ask for its device with
 * cfx_tensor_fake_device(), never t->device.
 *
 * Under a fake mode every operator call goes to the mode (Python key fallback), which
 *  - lifts a real tensor made by a literal (lift_fresh / lift_fresh_copy) into its fake;
 *  - rejects real tensors (unless allow_non_fake_inputs, then converts them with
 *    cfx_fake_from_tensor) and fake tensors of another fake mode, with PyTorch's messages;
 *  - keeps constants (FakeTensor.constant): a literal of at most one element carries its
 *    value, an op whose fake arguments all carry one computes its results for real (item()
 *    of a constant is its value), and an op writing to one without that clears it;
 *  - raises DataDependentOutputException for aten._local_scalar_dense (item) and
 *    DynamicOutputShapeException for aten.nonzero: str(e) is the op, e.g.
 *    "aten.nonzero.default", which is the whole message, as PyTorch prints it;
 *  - for factory ops (no tensor arguments) replaces the device argument by meta and makes the
 *    result a fake tensor on the requested device (cpu when none);
 *  - otherwise runs the Meta kernel and turns every output into a fake tensor of this mode on
 *    the common device of the inputs (FakeTensor._find_common_device, with its cpu zero-dim
 *    rule and add_'s keeping its destination's device against meta; two devices otherwise
 *    raise FakeTensorDeviceMismatchError), or on its `device` argument if it has one. Outputs of view ops share their input's
 *    fake storage. An op with no Meta kernel runs its real kernel on zero-filled inputs when
 *    allow_fallback_kernels is set and its namespace is a built-in one (aten, prims, ...:
 *    run_fallback_kernel), else fails with UnsupportedOperatorException's text (the op).
 * With no mode set, an op on fake tensors enters the tensors' own mode for that call, as
 * FakeTensor.__torch_dispatch__ does.
 *
 * A fake mode is reference counted: every fake tensor keeps its mode alive, so a fake tensor
 * may outlive cfx_fake_mode_free (which drops the creator's reference and the from_tensor
 * memo). A mode and its fake tensors belong to one thread at a time. */
#ifndef CFX_FAKE_H
#define CFX_FAKE_H

#include <stdbool.h>

#include "dispatch/export.h"
#include "dispatch/mode.h"
#include "dispatch/tensor.h"
#include "dispatch/tensor_ext.h"

typedef struct cfx_fake_mode cfx_fake_mode;

typedef struct cfx_fake_mode_options {
    bool allow_non_fake_inputs;  /* PyTorch default False */
    bool allow_fallback_kernels; /* PyTorch default True */
} cfx_fake_mode_options;

/* NULL options = PyTorch's defaults. NULL + error on allocation failure. */
CFX_API cfx_fake_mode *cfx_fake_mode_new(const cfx_fake_mode_options *opts);
CFX_API void cfx_fake_mode_free(cfx_fake_mode *m); /* NULL-safe; must not be on a mode stack */
CFX_API cfx_mode *cfx_fake_mode_base(cfx_fake_mode *m);
/* The fake mode a cfx_mode is, or NULL if it is another kind of mode. */
CFX_API cfx_fake_mode *cfx_fake_mode_from_base(cfx_mode *m);

/* `with fake_mode:` (FakeTensorMode.__enter__/__exit__): enter sets the FAKE slot, stashing
 * a different fake mode already there (restored by the matching exit); entering the mode
 * already set is a no-op. Exits pair with enters, innermost first. */
CFX_API int cfx_fake_mode_enter(cfx_fake_mode *m);
CFX_API int cfx_fake_mode_exit(cfx_fake_mode *m);

/* FakeTensorMode.from_tensor: a fake tensor with real's sizes, strides, dtype and storage
 * offset, on real's device. Memoized per mode: the same real tensor gives the same fake
 * tensor, and tensors sharing a storage give fakes sharing a fake storage. The memo keeps a
 * reference to real (so its address cannot be reused) until the mode is freed. A fake tensor
 * of this mode is returned as is. The caller gets a reference (autoreleased into the current
 * scope if one is open). NULL if m or real is NULL; NULL + error if allocation fails. */
CFX_API cfx_tensor *cfx_fake_from_tensor(cfx_fake_mode *m, cfx_tensor *real);

/* Queries (all NULL-safe). */
static inline bool cfx_tensor_is_fake(const cfx_tensor *t) { return t && t->ext.is_fake; }
/* The device users see: the fake device for a fake tensor, else t->device (cpu for NULL). */
static inline cfx_device cfx_tensor_fake_device(const cfx_tensor *t)
{
    return t && t->ext.is_fake ? t->ext.fake_device : t ? t->device : cfx_device_make(CFX_DEVICE_CPU);
}
CFX_API cfx_fake_mode *cfx_tensor_fake_mode(const cfx_tensor *t); /* NULL if not fake */
/* FakeTensor.constant: the real value a fake tensor is known to hold (a literal of at most
 * one element, or what an op computed from such constants), or NULL. Borrowed. */
CFX_API cfx_tensor *cfx_fake_tensor_constant(const cfx_tensor *t);
/* "FakeTensor(..., size=(2, 3))", with ", dtype=torch.int64" when not float32 and
 * ", device='meta'" when the fake device is not cpu: PyTorch 2.x's repr. Plain tensors print
 * through cfx_tensor_print. */
CFX_API void cfx_fake_tensor_print(const cfx_tensor *t, cfx_buf *b);

#endif
