/* interp_internal.h - what the interpreter's files share (not installed, not exported). */
#ifndef CFX_IR_INTERP_INTERNAL_H
#define CFX_IR_INTERP_INTERNAL_H

#include "dispatch/error.h"
#include "dispatch/value.h"
#include "ir/graph.h"
#include "ir/target.h"

/* Calls builtin fn on args[0..n) (node values, borrowed; a node with kwargs is refused by the
 * caller). A number or None result lands in *out (nothing to own); getitem's result is the
 * borrowed item, which the caller owns a copy of. CFX_OK or an error recorded. */
int ir_interp_builtin(const cfx_builtin_fn *fn, const cfx_value *args, uint32_t n, cfx_value *out);

/* Python's type name of a value, as TypeError messages show it: "int", "float", "Tensor". */
const char *ir_interp_type_name(cfx_value v);

/* ---- the run program (interp_plan.c) -------------------------------------------------------- */

/* Values nest this deep at most (an operator returns at most a tuple of lists; deeper nesting
 * can only come from hand-made or loaded graphs), so the walks over a value may recurse. */
enum { IR_INTERP_MAX_DEPTH = 32 };

/* Value kinds private to the interpreter, past the public ones: a run slot without a value,
 * and, in a program's values, a node's value (u.i: the producing step's index). */
#define IR_INTERP_UNSET ((uint32_t)CFX_V_KIND_COUNT)
#define IR_INTERP_SLOT ((uint32_t)CFX_V_KIND_COUNT + 1)

typedef enum ir_step_kind {
    IR_STEP_OP,          /* call_function on an operator: the stack, bound by its schema */
    IR_STEP_BUILTIN,     /* call_function on a builtin function: args, then kwargs' values */
    IR_STEP_PLACEHOLDER, /* the next input, else its default (the one value, if any) */
    IR_STEP_GET_ATTR,
    IR_STEP_OUTPUT,      /* its argument (the one value, if any) */
    IR_STEP_FAIL,        /* the node cannot run: the error, recorded when it is reached */
} ir_step_kind;

/* One node of the run, in graph order; its value goes to the run's slot of the same index. */
typedef struct ir_step {
    cfx_node *node;
    const cfx_site *site;  /* the node's stack_trace (graph memory), current while it runs */
    const void *target;    /* OP: the cfx_op; BUILTIN: the cfx_builtin_fn */
    uint32_t val, n_val;   /* its values: program vals[val..val+n_val); FAIL: its failure's index */
    uint32_t drop, n_drop; /* the slots whose last use it is: program drops[drop..drop+n_drop) */
    uint32_t width;        /* OP: the stack the call needs */
    uint8_t kind;          /* ir_step_kind */
    bool lists;            /* a value is a list, tuple or dict: copied into scratch at the step */
} ir_step;

typedef struct ir_interp_failure {
    cfx_status status;
    char *op, *msg;
} ir_interp_failure;

/* A graph compiled for running: what FX's Interpreter works out in __init__ (each value's last
 * user) and what torch.ops' binding works out per call (kwargs to positions), done once. */
typedef struct ir_program {
    /* One block holds the run's environment (a slot per step), the steps, the drops and the
     * compile's tables by step and by node seq: one large allocation rather than six, so a
     * program made again for a graph of the same size gets back memory the allocator kept
     * (glibc returns the top of its heap only when the free space there is larger than twice
     * the largest block it gave with mmap) instead of faulting fresh pages in every time. */
    void *block;
    cfx_value *env;
    ir_step *steps;
    uint32_t n_steps;
    cfx_value *vals; /* node references as IR_INTERP_SLOT; lists copied (owned) when they hold one */
    uint32_t n_vals, cap_vals;
    uint32_t *drops;
    ir_interp_failure *fails;
    uint32_t n_fails, cap_fails;
    cfx_value **owned; /* item arrays of vals' lists, freed with the program */
    uint32_t n_owned, cap_owned;
    size_t max_width, max_scratch; /* the largest stack and list scratch any step needs */
    int n_placeholders;
    bool star_args; /* a placeholder takes *args */
} ir_program;

/* Compiles g (its live nodes, in graph order). A node that cannot run (a binding error, a
 * reference to a node without a value at that point, ...) becomes a FAIL step; only running
 * out of memory fails the compile (error recorded). */
int ir_program_build(const cfx_graph *g, ir_program *p);
void ir_program_free(ir_program *p);

#endif
