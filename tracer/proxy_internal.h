/* proxy_internal.h - what proxy.c and proxy_constants.c share; not public.
 *
 * proxy.c is the mode (plans, arguments to node arguments, results to nodes and meta);
 * proxy_attrs.c interns the tensors bound to no node as attributes of the graph module;
 * proxy_constants.c keeps the constants proxy_call propagates through the trace. */
#ifndef CFX_TRACER_PROXY_INTERNAL_H
#define CFX_TRACER_PROXY_INTERNAL_H

#include "dispatch/error.h"
#include "dispatch/fake.h"
#include "tracer/proxy.h"

enum { MAX_ARGS = 64, CONSTANT_NUMEL_LIMIT = 1 };

/* What the handler needs to know about one operator, computed once from its schema. */
typedef struct op_plan {
    const cfx_op *op;         /* NULL: not computed yet */
    const cfx_op *target;     /* recorded and run: lift_fresh becomes lift_fresh_copy */
    uint8_t n_args;           /* at most MAX_ARGS */
    uint8_t kwarg_start;      /* arguments from here on are kwarg-only */
    uint8_t trim_from;        /* positional arguments [trim_from, kwarg_start) all have defaults */
    uint16_t n_returns;
    bool lift;                /* target is lift_fresh_copy: its small results are constants */
    bool data_dependent;      /* tagged data_dependent_output */
    bool seeded;              /* tagged nondeterministic_seeded: never constant */
    uint64_t lists;           /* bit i: argument i is a list that may hold tensors */
    uint64_t enums;           /* bit i: argument i is ScalarType / Layout / MemoryFormat (?) */
    uint64_t enum_dtype;      /* of those, bit i: a ScalarType (an INT there is shown as a dtype) */
    uint64_t enum_layout;     /* bit i: a Layout; the other enums are MemoryFormats */
} op_plan;

_Static_assert(MAX_ARGS <= UINT8_MAX, "argument positions fit a byte");

typedef struct const_entry {
    const cfx_tensor *t; /* NULL = free slot */
    const char *name;    /* owned by the graph module */
} const_entry;

/* get_fresh_qualname's per-prefix counters: the two prefixes the tracer interns under
 * (proxy_attrs.c's qual_prefix). */
enum { QUAL_PARAM, QUAL_TENSOR, QUAL_COUNT };

struct cfx_proxy_mode {
    cfx_mode base;
    cfx_graph_module *gm;
    cfx_graph *g;
    const cfx_module *module;
    uint64_t owner;       /* bindings: tensor -> node */
    uint64_t const_owner; /* bindings: tensor -> its real constant (a reference) */
    bool constants_made;  /* some tensor was given a constant (else no argument has one) */
    bool record_stack_traces;
    op_plan *plans;       /* by op id (operator.h), grown on demand */
    uint32_t plan_cap;
    const_entry *consts;  /* interned tensors by address */
    uint32_t const_cap, n_consts;
    uint32_t qual_next[QUAL_COUNT];
    cfx_value *scratch;   /* list arguments with tensors substituted */
    uint32_t scratch_cap;
    cfx_mode *stashed;    /* the proxy mode this one's enter unset (restored by its exit) */
};

/* The site stack_trace gets, or NULL (not recording, or a call with no site). */
static inline const cfx_site *cfx_proxy_site_to_record(const cfx_proxy_mode *pm)
{
    const cfx_site *site = pm->record_stack_traces ? cfx_current_site() : NULL;
    return site && site->file ? site : NULL;
}

/* extract_val of a tensor: a fake tensor as it is, a real one as empty_strided(shape, stride)
 * on its device in a fake mode makes it, i.e. with storage offset 0. */
static inline cfx_meta_val cfx_proxy_tensor_val(const cfx_tensor *t)
{
    bool fake = cfx_tensor_is_fake(t);
    return (cfx_meta_val){
        .kind = CFX_MVAL_TENSOR,
        .dtype = t->dtype,
        .device = fake ? cfx_tensor_fake_device(t) : t->device,
        .n = t->ndim,
        .sizes = t->sizes,
        .strides = t->strides,
        .storage_offset = fake ? t->storage_offset : 0,
    };
}

/* proxy_attrs.c */
/* Tracer.create_arg for a tensor bound to no node: a get_attr node (with its val) for the
 * `_param_constantN` / `_tensor_constantN` attribute t is interned as; NULL on error. */
cfx_node *cfx_proxy_attr_node(cfx_proxy_mode *pm, cfx_tensor *t);

/* proxy_constants.c */
/* _fetch_proxies_and_all_constant_flag over the tensor arguments: all when every tracked one
 * carries a constant (untracked tensors do not count: they are their own constant), any
 * when one does. */
typedef struct cfx_proxy_const_flags {
    bool all, any;
} cfx_proxy_const_flags;
cfx_proxy_const_flags cfx_proxy_constant_flags(const cfx_proxy_mode *pm, const op_plan *p, const cfx_value *stack);
/* Sets (c non-NULL: takes a new reference) or clears t's constant. */
int cfx_proxy_set_constant(cfx_proxy_mode *pm, cfx_tensor *t, cfx_tensor *c);
/* Runs p's op for real on args with tracked tensors replaced by their constants, the fake
 * mode unset for the call; stack receives the results. */
int cfx_proxy_run_on_constants(cfx_proxy_mode *pm, const op_plan *p, const cfx_value *args, cfx_value *stack);
/* The constants of a call's results outs, into consts (shaped as the results): false when
 * there are none; an error through *rc. */
bool cfx_proxy_result_constants(cfx_proxy_mode *pm, const op_plan *p, const cfx_value *args, const cfx_value *outs,
                                cfx_proxy_const_flags f, cfx_value *consts, int *rc);

#endif
