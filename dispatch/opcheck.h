/* opcheck.h - torch.library.opcheck for cfx: check an operator's registration against what its
 * kernels really do, on sample inputs.
 *
 * cfx_opcheck(op, args) runs one call of op (built-in or registered through library.h) and
 * checks, as PyTorch 2.13's opcheck does with its test utilities:
 *   CFX_OPCHECK_SCHEMA    (test_schema, SchemaCheckMode) on the real CPU kernels: only (a!)
 *       arguments change (data, strides or storage, compared with copies made before the
 *       call); an output shares memory with an argument only where the schema's alias
 *       annotations allow it; two outputs share memory only where the schema allows it; an op
 *       below autograd never returns an input object unless the input is mutable; and (cfx's
 *       own, PyTorch's SchemaCheckMode does not check it) an output annotated to alias an
 *       argument (`Tensor(a)` returns) really shares its storage.
 *   CFX_OPCHECK_FAKE      (test_faketensor, CrossRefFakeMode) the op run on fake copies under a
 *       fresh fake mode (its Meta kernels) and for real: both raise or both succeed, and each
 *       output's sizes, dtype and significant strides (check_significant_strides: dims of
 *       size > 1) agree.
 *   CFX_OPCHECK_DISPATCH  the dispatcher's invariants of op (cfx_op_check_invariants), and for
 *       a built-in op the typed entry point cfx_op_<id> and the boxed cfx_op_call give the same
 *       outputs (metadata, and values unless the op is nondeterministic_seeded) and the same
 *       mutations.
 * The caller's arguments are never changed (each run works on copies). A failure records an
 * error naming the call as the crossref check of torch/_dispatch/python.py prints it,
 *     aten::add.Tensor(torch.empty_strided((2, 3), (3, 1), dtype=torch.float32), 1) output 0:
 *     strides (1, 2) != (3, 1) (mismatch at index 0)
 *     cfxtest::mutator(torch.empty_strided((2, 3), (3, 1), dtype=torch.float32)): Argument x
 *     is not defined as mutable but was mutated
 * and returns CFX_ERR. A call the real kernel rejects checks nothing and passes with *ran
 * false and no error left recorded (OpInfo's loops skip such a sample: outside the op's dtypes
 * or domain); a call the fake run rejects while the real one takes it fails.
 *
 * cfx_opcheck_op runs the checks on the op's generated samples (opcheck_samples.c: OpInfo-like
 * generators driven by the op's schema and tags, docs/opcheck.md) and fails when a check fails
 * (except on a sample listed as an expected failure, which must then fail), when the op has no
 * samples and is not listed as skipped, or when none of its samples ran for real.
 *
 * cfx_crossref_fake_mode_new is CrossRefFakeMode: a dispatch mode under which every operator
 * call is run on fakes first and then for real, and the first mismatch fails the call with the
 * CFX_OPCHECK_FAKE text (`cfx trace MODEL --crossref` runs a traced graph under it). */
#ifndef CFX_OPCHECK_H
#define CFX_OPCHECK_H

#include <stdbool.h>

#include "dispatch/export.h"
#include "dispatch/mode.h"
#include "dispatch/operator.h"
#include "dispatch/value.h"

enum {
    CFX_OPCHECK_SCHEMA = 1u << 0,
    CFX_OPCHECK_FAKE = 1u << 1,
    CFX_OPCHECK_DISPATCH = 1u << 2,
    CFX_OPCHECK_ALL = (1u << 3) - 1,
};

/* One call of op with args[0..n_args) (positional, in schema order; missing trailing ones take
 * their defaults). CFX_OK when every check in `tests` passed; ran (may be NULL) says whether the
 * real call succeeded. */
CFX_API int cfx_opcheck(const cfx_op *op, const cfx_value *args, int n_args, unsigned tests, bool *ran);

/* Sample inputs: at most CFX_OPCHECK_MAX_ARGS arguments each; tensors and list items belong to
 * the caller's innermost scope (which must be open). `what` says what the sample exercises
 * ("broadcast (2, 3) and (3,)", "float64", ...). */
enum { CFX_OPCHECK_MAX_ARGS = 16 };
typedef struct cfx_opcheck_sample {
    cfx_value args[CFX_OPCHECK_MAX_ARGS];
    int n_args;
    char what[96];
    const char *xfail; /* non-NULL: an expected failure, and why (PyTorch 2.13 fails it too) */
} cfx_opcheck_sample;

/* Writes up to cap samples for op and returns how many it has (may exceed cap); 0 when none can
 * be generated (no error recorded), negative on error. */
CFX_API int cfx_opcheck_samples(const cfx_op *op, cfx_opcheck_sample *out, int cap);
/* Why op's samples come from the explicit table rather than the generic generators, or NULL. */
CFX_API const char *cfx_opcheck_override_reason(const cfx_op *op);
/* Why op has no samples at all (listed in the table of skipped ops), or NULL. */
CFX_API const char *cfx_opcheck_skip_reason(const cfx_op *op);

typedef struct cfx_opcheck_report {
    int n_samples; /* checked */
    int n_ran;     /* of which the real call succeeded */
    int n_xfail;   /* of which expected failures (that failed) */
} cfx_opcheck_report;
/* cfx_opcheck on every generated sample of op (each in its own scope). report may be NULL. */
CFX_API int cfx_opcheck_op(const cfx_op *op, unsigned tests, cfx_opcheck_report *report);

/* CrossRefFakeMode (a user mode: push with cfx_mode_push, pop, then cfx_mode_release). */
CFX_API cfx_mode *cfx_crossref_fake_mode_new(void);
/* How many calls the mode checked (ops skipped as CrossRefFakeMode skips them not counted). */
CFX_API long cfx_crossref_fake_mode_checked(const cfx_mode *m);

#endif
