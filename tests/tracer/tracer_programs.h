/* tracer_programs.h - C models traced by the tracer tests, twins of the Python programs in
 * tools/interop/gen_make_fx.py (same aten operators, same argument values on the boxed
 * stack), whose PyTorch 2.13 make_fx graphs are the goldens in tests/data/tracer_<case>.*.
 *
 * Lines marked `@name` are found by the stack_trace test, which expects the node of that call
 * to point at this file and line. */
#ifndef CFX_TESTS_TRACER_PROGRAMS_H
#define CFX_TESTS_TRACER_PROGRAMS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch/boxing.h"
#include "dispatch/error.h"
#include "dispatch/ops.h"
#include "dispatch/scope.h"
#include "ir/graph.h"
#include "tracer/make_fx.h"
#include "tests/test_util.h"

#define PROGRAMS_FILE "tests/tracer/tracer_programs.h"

static cfx_tensor2 prog_basic(cfx_tensor *x, cfx_tensor *y)
{
    cfx_tensor *z = cfx_add(x, y); /* @basic_add */
    cfx_tensor *s = cfx_sum(z, CFX_INTS(1), false);
    return (cfx_tensor2){cfx_mul(s, s), cfx_relu(s)}; /* @basic_mul_relu */
}

static cfx_tensor2 prog_view_inplace(cfx_tensor *x)
{
    cfx_tensor *v = cfx_view(x, CFX_INTS(-1));
    cfx_add_(v, v);
    cfx_tensor *t = cfx_t(x);
    static const double data[6] = {1, 2, 3, 4, 5, 6};
    static const int64_t six[1] = {6};
    cfx_tensor *c = cfx_tensor_literal(data, six, 1, CFX_FLOAT32); /* @literal */
    return (cfx_tensor2){t, cfx_mul(v, c)};
}

static cfx_tensor2 prog_max_dim(cfx_tensor *x)
{
    cfx_max_dim_result a = cfx_max_dim(x, 1, false); /* @max_dim */
    cfx_max_dim_result b = cfx_max_dim(x, 0, true);
    return (cfx_tensor2){cfx_relu(a.values), b.indices};
}

static cfx_tensor2 prog_layer_norm(cfx_tensor *x, cfx_tensor *w, cfx_tensor *b)
{
    cfx_native_layer_norm_result r = cfx_native_layer_norm(x, CFX_INTS(3), w, b, 1e-05);
    cfx_native_layer_norm_result q = cfx_native_layer_norm(r.out, CFX_INTS(3), NULL, NULL, 0.5);
    return (cfx_tensor2){q.out, cfx_relu(r.rstd)};
}

/* C3: a tensor made outside the trace (test setup), as a Python global. */
static cfx_tensor *C3;

static cfx_tensor2 prog_constants(cfx_tensor *x)
{
    cfx_tensor *m = cfx_mul(x, C3);
    cfx_tensor *a = cfx_add(m, C3);
    return (cfx_tensor2){a, C3};
}

static cfx_tensor *prog_mlp(cfx_module *m, cfx_tensor *x)
{
    cfx_tensor *h = cfx_relu(cfx_add(cfx_mm(x, cfx_t(cfx_module_get(m, "fc1.weight"))), cfx_module_get(m, "fc1.bias")));
    return cfx_add(cfx_mm(h, cfx_t(cfx_module_get(m, "fc2.weight"))), cfx_module_get(m, "fc2.bias"));
}

typedef struct outputs_ret {
    cfx_tensor *neg;
    int64_t n;
    double s;
    bool b;
    cfx_tensor *x;
} outputs_ret;

static outputs_ret prog_outputs(cfx_tensor *x, int64_t n, double s, bool b)
{
    return (outputs_ret){cfx_neg(x), n, s, b, x};
}

static int64_t prog_scalar(cfx_tensor *x)
{
    (void)x;
    return 3;
}

static void prog_nothing(cfx_tensor *x) { cfx_add_(x, x); }

typedef struct tensor5 {
    cfx_tensor *a, *b, *c, *d, *e;
} tensor5;

static tensor5 prog_kwargs(cfx_tensor *x, cfx_tensor *y)
{
    cfx_tensor *a = cfx_add(x, y, cfx_int(2));
    cfx_tensor *b = cfx_add(a, y, cfx_double(1.0));
    cfx_tensor *c = cfx_sub(b, y);
    cfx_tensor *s = cfx_sum(c, CFX_INTS(1), true, cfx_dtype_value(CFX_FLOAT64));
    cfx_tensor *t = cfx_sum(c, CFX_NO_INTS);
    cfx_tensor *k = cfx_clone(x, cfx_memory_format_value(CFX_CONTIGUOUS_FORMAT));
    cfx_tensor *e = cfx_empty(CFX_INTS(2), cfx_dtype_value(CFX_INT64), cfx_none(), cfx_device_value(cfx_device_make(CFX_DEVICE_CPU)));
    cfx_tensor *el = cfx_empty_like(x);
    return (tensor5){s, t, k, e, el};
}

static cfx_tensor *prog_inplace_input(cfx_tensor *x, cfx_tensor *y, cfx_tensor *z)
{
    cfx_add_(x, y);
    cfx_add_(z, z);
    return cfx_mul(x, x);
}

static cfx_tensor *prog_dup_input(cfx_tensor *x, cfx_tensor *y) { return cfx_add(x, y); }

static cfx_tensor3 prog_passthrough(cfx_tensor *x, cfx_tensor *y) { return (cfx_tensor3){x, cfx_cos(y), x}; }

/* item() of one-element literals: their values are known (constant propagation), so they
 * reach the graph as numbers (alpha=2.0, alpha=4.0) and nothing records the item() calls. */
static cfx_tensor2 prog_literal_item(cfx_tensor *x)
{
    static const double two[1] = {2};
    cfx_tensor *c = cfx_tensor_literal(two, (const int64_t[]){1}, 1, CFX_FLOAT32);
    cfx_tensor *d = cfx_add(c, c);
    cfx_tensor *a = cfx_add(x, x, cfx__local_scalar_dense(c)); /* @literal_item */
    cfx_tensor *b = cfx_add(x, x, cfx__local_scalar_dense(d));
    return (cfx_tensor2){a, b};
}

/* The constants of a tuple result: each getitem of max.dim over a one-element literal has its
 * own, so item() of one is known too (alpha=3.0). */
static cfx_tensor *prog_literal_max(cfx_tensor *x)
{
    static const double three[1] = {3};
    cfx_tensor *c = cfx_tensor_literal(three, (const int64_t[]){1, 1}, 2, CFX_FLOAT32);
    cfx_max_dim_result m = cfx_max_dim(c, 1, false);
    return cfx_add(x, x, cfx__local_scalar_dense(m.values));
}

/* An in-place op on constants updates the constant: item() after it sees the sum (3.0). */
static cfx_tensor *prog_literal_inplace(cfx_tensor *x)
{
    static const double one[1] = {1}, two[1] = {2};
    cfx_tensor *c = cfx_tensor_literal(one, (const int64_t[]){1}, 1, CFX_FLOAT32);
    cfx_add_(c, cfx_tensor_literal(two, (const int64_t[]){1}, 1, CFX_FLOAT32));
    return cfx_add(x, x, cfx__local_scalar_dense(c));
}

/* G1: a one-element tensor made outside the trace (test setup), as a Python global; item() of
 * it is computed for real in both modes (the trace does not track it). */
static cfx_tensor *G1;

static cfx_tensor *prog_global_item(cfx_tensor *x) { return cfx_add(x, x, cfx__local_scalar_dense(G1)); }

/* An input that is a view with a storage offset (A_OFF). */
static cfx_tensor *prog_offset_input(cfx_tensor *x) { return cfx_neg(x); }

/* F.embedding_bag's front end with include_last_offset, summing then averaging: it records
 * _embedding_bag_forward_only, whose bag_size is sized like offsets in sum mode (the CPU
 * kernel's make_bag_size without requires_grad) and, in fake mode, in every mode (its meta);
 * the fake max_indices keeps the bag count, where the CPU kernel's follows bag_size. */
static tensor5 prog_embedding_bag_last(cfx_tensor *w, cfx_tensor *i, cfx_tensor *o)
{
    cfx_embedding_bag_padding_idx_result s = cfx_embedding_bag_padding_idx(w, i, o, false, 0, false, NULL, true,
                                                                            cfx_none());
    cfx_embedding_bag_padding_idx_result m = cfx_embedding_bag_padding_idx(w, i, o, false, 1, false, NULL, true,
                                                                            cfx_none());
    return (tensor5){s.r0, s.r1, s.r2, s.r3, m.r2};
}

/* ---- the table the tests walk ------------------------------------------------------------------ */

enum { MAXA = 4 };

typedef enum arg_kind { A_NONE = 0, A_T23, A_T3, A_INT3, A_F15, A_TRUE, A_SAME, A_OFF, A_W53, A_BAG_IDX, A_BAG_OFF } arg_kind;

typedef struct program {
    const char *name;
    cfx_fnptr fn;
    const char *signature;
    arg_kind args[MAXA];
    bool module; /* pass the MLP module */
    bool meta;   /* has meta goldens */
} program;

static const program programs[] = {
    {"basic", (cfx_fnptr)prog_basic, "(Tensor x, Tensor y) -> (Tensor, Tensor)", {A_T23, A_T23}, false, true},
    {"view_inplace", (cfx_fnptr)prog_view_inplace, "(Tensor x) -> (Tensor, Tensor)", {A_T23}, false, true},
    {"max_dim", (cfx_fnptr)prog_max_dim, "(Tensor x) -> (Tensor, Tensor)", {A_T23}, false, true},
    {"layer_norm", (cfx_fnptr)prog_layer_norm, "(Tensor x, Tensor w, Tensor b) -> (Tensor, Tensor)",
     {A_T23, A_T3, A_T3}, false, true},
    {"constants", (cfx_fnptr)prog_constants, "(Tensor x) -> (Tensor, Tensor)", {A_T23}, false, true},
    {"mlp", (cfx_fnptr)prog_mlp, "(Tensor x) -> Tensor", {A_T23}, true, true},
    {"outputs", (cfx_fnptr)prog_outputs, "(Tensor x, int n, float s, bool b) -> (Tensor, int, float, bool, Tensor)",
     {A_T23, A_INT3, A_F15, A_TRUE}, false, true},
    {"scalar", (cfx_fnptr)prog_scalar, "(Tensor x) -> int", {A_T23}, false, false},
    {"nothing", (cfx_fnptr)prog_nothing, "(Tensor x) -> ()", {A_T23}, false, false},
    {"kwargs", (cfx_fnptr)prog_kwargs, "(Tensor x, Tensor y) -> (Tensor, Tensor, Tensor, Tensor, Tensor)",
     {A_T23, A_T23}, false, false},
    {"inplace_input", (cfx_fnptr)prog_inplace_input, "(Tensor x, Tensor y, Tensor z) -> Tensor",
     {A_T23, A_T23, A_T23}, false, false},
    {"dup_input", (cfx_fnptr)prog_dup_input, "(Tensor x, Tensor y) -> Tensor", {A_T23, A_SAME}, false, false},
    {"passthrough", (cfx_fnptr)prog_passthrough, "(Tensor x, Tensor y) -> (Tensor, Tensor, Tensor)", {A_T23, A_T23},
     false, false},
    {"literal_item", (cfx_fnptr)prog_literal_item, "(Tensor x) -> (Tensor, Tensor)", {A_T23}, false, true},
    {"literal_max", (cfx_fnptr)prog_literal_max, "(Tensor x) -> Tensor", {A_T23}, false, false},
    {"global_item", (cfx_fnptr)prog_global_item, "(Tensor x) -> Tensor", {A_T23}, false, false},
    {"literal_inplace", (cfx_fnptr)prog_literal_inplace, "(Tensor x) -> Tensor", {A_T23}, false, false},
    {"offset_input", (cfx_fnptr)prog_offset_input, "(Tensor x) -> Tensor", {A_OFF}, false, true},
    {"embedding_bag_last", (cfx_fnptr)prog_embedding_bag_last,
     "(Tensor w, Tensor i, Tensor o) -> (Tensor, Tensor, Tensor, Tensor, Tensor)", {A_W53, A_BAG_IDX, A_BAG_OFF},
     false, true},
};

#define N_PROGRAMS ((int)(sizeof programs / sizeof programs[0]))

static inline const program *find_program(const char *name)
{
    for (int i = 0; i < N_PROGRAMS; i++)
        if (strcmp(programs[i].name, name) == 0)
            return &programs[i];
    return NULL;
}

/* A [2, 3] / [3] float tensor with distinct values (the values do not reach the graph). */
static inline cfx_tensor *test_tensor(int64_t rows, int64_t cols, float base)
{
    float data[6];
    for (int i = 0; i < 6; i++)
        data[i] = base + (float)i * 0.25f - 0.5f;
    int64_t sizes[2] = {rows, cols};
    return rows ? cfx_tensor_from_floats(data, sizes, 2) : cfx_tensor_from_floats(data, sizes + 1, 1);
}

/* torch.arange(12.).reshape(4, 3)[1:3]: sizes (2, 3), strides (3, 1), storage offset 3. */
static inline cfx_tensor *offset_view(void)
{
    float data[12];
    for (int i = 0; i < 12; i++)
        data[i] = (float)i;
    cfx_tensor *base = cfx_tensor_from_floats(data, (const int64_t[]){4, 3}, 2);
    cfx_tensor *v = cfx_tensor_new_view(base, (const int64_t[]){2, 3}, (const int64_t[]){3, 1}, 2, 3);
    cfx_tensor_release(base); /* the view holds the storage */
    return v;
}

/* The embedding_bag program's weight (i * 0.5 - 3, [5, 3]) and its int64 indices and offsets. */
static inline cfx_tensor *bag_arg(arg_kind k)
{
    static const int64_t idx[6] = {0, 2, 4, 1, 3, 2}, off[4] = {0, 2, 2, 5};
    if (k == A_W53) {
        float w[15];
        for (int i = 0; i < 15; i++)
            w[i] = (float)i * 0.5f - 3.0f;
        return cfx_tensor_from_floats(w, (const int64_t[]){5, 3}, 2);
    }
    int64_t n = k == A_BAG_IDX ? 6 : 4;
    cfx_tensor *t = cfx_tensor_new(&n, 1, CFX_INT64, cfx_device_make(CFX_DEVICE_CPU));
    if (t)
        memcpy(cfx_tensor_data(t), k == A_BAG_IDX ? idx : off, (size_t)n * sizeof(int64_t));
    return t;
}

/* The MLP's parameters, as the Python twin's module: fc1 4x3, fc2 2x4. */
static inline cfx_module *make_mlp(void)
{
    cfx_module *m = cfx_module_new("MLP");
    const char *names[4] = {"fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"};
    int64_t shapes[4][2] = {{4, 3}, {4, 0}, {2, 4}, {2, 0}};
    for (int i = 0; i < 4; i++) {
        int nd = shapes[i][1] ? 2 : 1;
        cfx_tensor *t = cfx_tensor_new(shapes[i], nd, CFX_FLOAT32, cfx_device_make(CFX_DEVICE_CPU));
        cfx_module_add(m, names[i], t);
        cfx_tensor_release(t);
    }
    return m;
}

/* Arguments for p: tensors made here (released by free_args). */
static inline int make_args(const program *p, cfx_value *args)
{
    int n = 0;
    for (int i = 0; i < MAXA && p->args[i]; i++, n++) {
        switch (p->args[i]) {
        case A_T23: args[i] = cfx_tensor_value(test_tensor(2, 3, (float)i)); break;
        case A_T3: args[i] = cfx_tensor_value(test_tensor(0, 3, (float)i)); break;
        case A_INT3: args[i] = cfx_int(3); break;
        case A_F15: args[i] = cfx_double(1.5); break;
        case A_TRUE: args[i] = cfx_bool(true); break;
        case A_SAME: args[i] = cfx_tensor_value(cfx_tensor_retain(args[i - 1].u.t)); break;
        case A_OFF: args[i] = cfx_tensor_value(offset_view()); break;
        case A_W53:
        case A_BAG_IDX:
        case A_BAG_OFF: args[i] = cfx_tensor_value(bag_arg(p->args[i])); break;
        default: break;
        }
    }
    return n;
}

static inline void free_args(cfx_value *args, int n)
{
    for (int i = 0; i < n; i++)
        if (args[i].kind == CFX_V_TENSOR)
            cfx_tensor_release(args[i].u.t);
}

static inline char *read_text(const char *path) { return read_file(path); }

/* tests/data/tracer_<name>.<suffix>.txt without its golden header (NULL if missing). */
static inline char *golden(const char *name, const char *suffix)
{
    char path[256];
    snprintf(path, sizeof path, "tests/data/tracer_%s.%s.txt", name, suffix);
    return read_golden(path);
}

/* Traces program p in the given mode with fresh arguments (and module, if it takes one). */
static inline cfx_graph_module *trace_program_with(const program *p, cfx_tracing_mode mode, cfx_module *module,
                                                   bool record_stack_traces)
{
    cfx_value args[MAXA];
    int n = make_args(p, args);
    cfx_make_fx_options o = {mode, p->module ? module : NULL, NULL, record_stack_traces};
    cfx_graph_module *gm = cfx_make_fx(p->fn, p->signature, args, n, &o);
    free_args(args, n);
    return gm;
}

static inline cfx_graph_module *trace_program(const program *p, cfx_tracing_mode mode, cfx_module *module)
{
    return trace_program_with(p, mode, module, false);
}

/* ---- meta as gen_make_fx.py's meta_text writes it ------------------------------------------------ */

static inline void put_dims(cfx_buf *b, const int64_t *d, int n)
{
    cfx_buf_putc(b, '(');
    for (int i = 0; i < n; i++)
        cfx_buf_printf(b, i ? ", %lld" : "%lld", (long long)d[i]);
    cfx_buf_puts(b, n == 1 ? ",)" : ")");
}

static inline void put_val(const cfx_meta_val *v, cfx_buf *b)
{
    char dev[16];
    switch (v->kind) {
    case CFX_MVAL_TENSOR:
        cfx_buf_puts(b, "Tensor(size=");
        put_dims(b, v->sizes, v->n);
        cfx_buf_puts(b, ", stride=");
        put_dims(b, v->strides, v->n);
        cfx_buf_printf(b, ", dtype=%s, device=%s, storage_offset=%lld)", cfx_dtype_torch_name((cfx_dtype)v->dtype),
                       cfx_device_format(v->device, dev, sizeof dev), (long long)v->storage_offset);
        break;
    case CFX_MVAL_INT: cfx_buf_printf(b, "%lld", (long long)v->u.i); break;
    case CFX_MVAL_DOUBLE: cfx_format_double_python(v->u.d, b); break;
    case CFX_MVAL_BOOL: cfx_buf_puts(b, v->u.b ? "True" : "False"); break;
    case CFX_MVAL_NONE: cfx_buf_puts(b, "None"); break;
    case CFX_MVAL_TUPLE:
    case CFX_MVAL_LIST:
        cfx_buf_putc(b, v->kind == CFX_MVAL_TUPLE ? '(' : '[');
        for (int32_t i = 0; i < v->n; i++) {
            if (i)
                cfx_buf_puts(b, ", ");
            put_val(&v->u.items[i], b);
        }
        cfx_buf_puts(b, v->kind == CFX_MVAL_LIST ? "]" : v->n == 1 ? ",)" : ")");
        break;
    default: cfx_buf_puts(b, "?"); break;
    }
}

/* The line gen_make_fx.py's meta_text writes for a node: name|sorted meta keys|val|tensor_meta. */
static inline void meta_line(const cfx_node *n, cfx_buf *b)
{
    cfx_node_print_name(n, b);
    const cfx_meta_val *v = cfx_node_val(n);
    const cfx_tensor_meta *tm = cfx_node_tensor_meta(n);
    const char *keys[3];
    int nk = 0;
    if (cfx_node_stack_trace(n))
        keys[nk++] = "stack_trace";
    if (tm)
        keys[nk++] = "tensor_meta";
    if (v)
        keys[nk++] = "val";
    cfx_buf_putc(b, '|');
    for (int i = 0; i < nk; i++)
        cfx_buf_printf(b, i ? ",%s" : "%s", keys[i]);
    cfx_buf_puts(b, nk ? "|" : "-|");
    if (v)
        put_val(v, b);
    else
        cfx_buf_putc(b, '-');
    cfx_buf_putc(b, '|');
    if (tm)
        cfx_tensor_meta_print(tm, b);
    else
        cfx_buf_putc(b, '-');
    cfx_buf_putc(b, '\n');
}

static inline char *meta_text(const cfx_graph *g)
{
    cfx_buf b;
    cfx_buf_init(&b);
    for (cfx_node *n = cfx_graph_first(g); n; n = cfx_node_next(n))
        meta_line(n, &b);
    return cfx_buf_take(&b);
}

#endif
