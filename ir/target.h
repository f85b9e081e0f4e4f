/* target.h - what a node calls.
 *
 * FX targets are Python objects: an OpOverload, a builtin function such as operator.getitem,
 * or a string (method name, module path, attribute path, placeholder name). cfx has three
 * kinds to match:
 *   - an operator handle (const cfx_op *): printed `torch.ops.aten.add.Tensor` from the op's
 *     name "aten::add.Tensor" (overload "" prints as `.default`), and named after the overload
 *     PACKET (`add`, `sum`, `add_`) as make_fx names its nodes;
 *   - a builtin function descriptor: a static struct naming a Python callable that is not an
 *     operator ("operator.getitem", "torch._assert", "torch.ops.higher_order.call_torchbind").
 *     Later layers (HOPs) define their own; `side_effect` marks it impure for every pass;
 *   - a string, interned in the graph.
 * A graph keeps one record per distinct target (cfx_target_info) with its printed form and its
 * prepared name candidate, so neither is recomputed per node. */
#ifndef CFX_IR_TARGET_H
#define CFX_IR_TARGET_H

#include <stdbool.h>
#include <stdint.h>

#include "dispatch/export.h"
#include "dispatch/operator.h"
#include "ir/names.h"

typedef struct cfx_builtin_fn {
    const char *qualified_name; /* as format_node prints it: "operator.getitem", "torch._assert" */
    const char *name;           /* __name__, the naming candidate: "getitem", "_assert" */
    bool side_effect;           /* in FX's _side_effectful_functions */
    bool kwargs_dict;           /* called with keywords: the interpreter passes a node's kwargs
                                   after its args as one dict value (Python's **kwargs) */
} cfx_builtin_fn;

typedef enum cfx_target_kind {
    CFX_TARGET_NONE = 0,
    CFX_TARGET_STRING,
    CFX_TARGET_OP,
    CFX_TARGET_FN,
} cfx_target_kind;

typedef struct cfx_target {
    uint32_t kind; /* cfx_target_kind */
    union {
        const char *str;
        const cfx_op *op;
        const cfx_builtin_fn *fn;
    } u;
} cfx_target;

static inline cfx_target cfx_target_str(const char *s) { cfx_target t = {CFX_TARGET_STRING, {.str = s}}; return t; }
static inline cfx_target cfx_target_op(const cfx_op *op) { cfx_target t = {CFX_TARGET_OP, {.op = op}}; return t; }
static inline cfx_target cfx_target_fn(const cfx_builtin_fn *fn) { cfx_target t = {CFX_TARGET_FN, {.fn = fn}}; return t; }

/* A graph's record of one distinct target. Owned by the graph; read-only outside ir/. */
typedef struct cfx_target_info {
    uint32_t kind;            /* cfx_target_kind */
    const void *ptr;          /* the op / fn / interned string */
    const char *printed;      /* interned: "torch.ops.aten.add.Tensor", "operator.getitem", "x" */
    const char *effect_key;   /* side-effect registry key: "aten::add.Tensor", "torch._assert" */
    cfx_name_candidate cand;  /* default naming candidate */
    uint32_t impure_version;  /* registry version `impure_*` were computed at (0 = never) */
    bool impure;              /* side-effectful (registry, fn flag, or mutable schema) */
    bool nondeterministic;    /* registered nondeterministic_seeded */
    uint8_t magic;            /* python_code form: enum in pycode.c (infix operator, ...) */
    uint8_t op_mask;          /* bit per cfx_node_op a node with this target may have: a
                                 callable for call_function, a string for the others */
    uint32_t id;              /* index in the graph's records (cfx_node.target_id) */
} cfx_target_info;

static inline const cfx_op *cfx_target_info_op(const cfx_target_info *t)
{
    return t->kind == CFX_TARGET_OP ? (const cfx_op *)t->ptr : NULL;
}
static inline const cfx_builtin_fn *cfx_target_info_fn(const cfx_target_info *t)
{
    return t->kind == CFX_TARGET_FN ? (const cfx_builtin_fn *)t->ptr : NULL;
}
static inline cfx_target cfx_target_from_info(const cfx_target_info *t)
{
    cfx_target r = {t->kind, {.str = (const char *)t->ptr}};
    return r;
}

/* `torch.ops.<ns>.<name>.<overload|default>` for an operator name "ns::name.overload". */
CFX_API void cfx_op_print_target(const char *qualified_name, cfx_buf *b);
/* The overload packet name: "aten::add_.Tensor" -> "add_". Returns its length; *start set. */
CFX_API size_t cfx_op_packet_name(const char *qualified_name, const char **start);

/* Descriptors by qualified name, for readers of serialized graphs: the ones below are known;
 * later layers register theirs (HOPs). Registering a descriptor whose name is already known
 * is a no-op. The descriptor must outlive the process's use of it (static storage). */
CFX_API int cfx_builtin_fn_register(const cfx_builtin_fn *fn);
CFX_API const cfx_builtin_fn *cfx_builtin_fn_find(const char *qualified_name);

/* Builtin functions FX graphs commonly call. Their Python __module__ is `_operator` for the
 * operator.* ones; qualified_name uses `operator.` as format_node prints it. */
CFX_API extern const cfx_builtin_fn cfx_fn_getitem;      /* operator.getitem */
CFX_API extern const cfx_builtin_fn cfx_fn_setitem;      /* operator.setitem (side-effectful) */
CFX_API extern const cfx_builtin_fn cfx_fn_add;          /* operator.add */
CFX_API extern const cfx_builtin_fn cfx_fn_sub;          /* operator.sub */
CFX_API extern const cfx_builtin_fn cfx_fn_mul;          /* operator.mul */
CFX_API extern const cfx_builtin_fn cfx_fn_floordiv;     /* operator.floordiv */
CFX_API extern const cfx_builtin_fn cfx_fn_truediv;      /* operator.truediv */
CFX_API extern const cfx_builtin_fn cfx_fn_mod;          /* operator.mod */
CFX_API extern const cfx_builtin_fn cfx_fn_pow;          /* operator.pow */
CFX_API extern const cfx_builtin_fn cfx_fn_neg;          /* operator.neg */
CFX_API extern const cfx_builtin_fn cfx_fn_eq;           /* operator.eq */
CFX_API extern const cfx_builtin_fn cfx_fn_ne;           /* operator.ne */
CFX_API extern const cfx_builtin_fn cfx_fn_lt;           /* operator.lt */
CFX_API extern const cfx_builtin_fn cfx_fn_le;           /* operator.le */
CFX_API extern const cfx_builtin_fn cfx_fn_gt;           /* operator.gt */
CFX_API extern const cfx_builtin_fn cfx_fn_ge;           /* operator.ge */
CFX_API extern const cfx_builtin_fn cfx_fn_getattr;      /* builtins.getattr */
CFX_API extern const cfx_builtin_fn cfx_fn_torch_assert; /* torch._assert (side effect) */
CFX_API extern const cfx_builtin_fn cfx_fn_torch_assert_async; /* torch._assert_async (side effect) */

#endif
