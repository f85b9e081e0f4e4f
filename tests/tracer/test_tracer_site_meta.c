/* test_tracer_site_meta.c - node meta when one call site is traced many times.
 *
 * The graph shares meta records between nodes built from the same call site and an equal
 * result (dtype, device, sizes, strides, storage offset). These models run the same
 * few call sites over results that differ in exactly one of those at a time: sizes ([4, 6]
 * vs [6, 4] vs [24] through one view call), strides (relu of a transposed [6, 4] vs of a
 * contiguous one: same sizes, strides (1, 6) vs (4, 1), memory_format None vs contiguous) and
 * the call site (two lines, same shapes). Every result the model gets is recorded as it comes
 * back, and each call_function node's val, tensor_meta and stack_trace must describe exactly
 * that result, in fake and in real tracing (stack traces recorded: record_stack_traces). */
#include <criterion/criterion.h>
#include <string.h>

#include "dispatch/dispatcher.h"
#include "dispatch/error.h"
#include "dispatch/ops.h"
#include "dispatch/scope.h"
#include "ir/graph.h"
#include "ir/meta.h"
#include "tracer/make_fx.h"

enum { MAX_REC = 64, ROUNDS = 6 };

typedef struct rec {
    int ndim;
    int64_t sizes[4], strides[4];
    int dtype;
    int line;
} rec;

static rec recs[MAX_REC];
static int n_recs;

static cfx_tensor *note(cfx_tensor *t, int line)
{
    if (t && n_recs < MAX_REC) {
        rec *r = &recs[n_recs++];
        r->ndim = t->ndim;
        for (int d = 0; d < t->ndim && d < 4; d++) {
            r->sizes[d] = t->sizes[d];
            r->strides[d] = t->strides[d];
        }
        r->dtype = t->dtype;
        r->line = line;
    }
    return t;
}

/* the op and the note on one line: the node's stack_trace line is __LINE__ */
#define NOTE(expr) note((expr), __LINE__)

static cfx_tensor *model(cfx_tensor *x)
{
    static const int64_t shapes[3][2] = {{4, 6}, {6, 4}, {24, 0}};
    cfx_tensor *acc = NULL;
    for (int i = 0; i < ROUNDS; i++) {
        cfx_tensor *v = NOTE(cfx_view(x, cfx_ints(shapes[i % 3], i % 3 == 2 ? 1 : 2)));
        cfx_tensor *src = i % 2 ? NOTE(cfx_t(x)) : NOTE(cfx_view(x, CFX_INTS(6, 4)));
        cfx_tensor *r = NOTE(cfx_relu(src));
        cfx_tensor *a = NOTE(cfx_add(r, r));
        cfx_tensor *b = NOTE(cfx_add(r, r));
        (void)v;
        acc = acc ? NOTE(cfx_mul(acc, b)) : a;
    }
    return acc;
}

static bool row_major(const rec *r)
{
    int64_t expected = 1;
    for (int d = r->ndim - 1; d >= 0; d--) {
        if (r->sizes[d] != 1 && r->strides[d] != expected)
            return false;
        expected *= r->sizes[d];
    }
    return true;
}

static void check(cfx_tracing_mode mode)
{
    cfx_error_clear();
    cfx_dispatcher_init();
    n_recs = 0;
    cfx_scope s = cfx_scope_begin();
    int64_t shape[2] = {4, 6};
    cfx_tensor *x = cfx_tensor_new(shape, 2, CFX_FLOAT32, cfx_device_make(CFX_DEVICE_CPU));
    cfx_value arg = cfx_tensor_value(x);
    cfx_make_fx_options opts = {mode, NULL, "model", true};
    cfx_graph_module *gm = cfx_make_fx((cfx_fnptr)model, "(Tensor x) -> Tensor", &arg, 1, &opts);
    cr_assert_not_null(gm, "%s", cfx_error_message());
    cr_assert_lt(n_recs, MAX_REC);

    int k = 0;
    for (cfx_node *n = cfx_graph_first(cfx_graph_module_graph(gm)); n; n = cfx_node_next(n)) {
        if (cfx_node_opcode(n) != CFX_NODE_CALL_FUNCTION)
            continue;
        cr_assert_lt(k, n_recs, "more call_function nodes than results");
        const rec *r = &recs[k++];
        const cfx_tensor_meta *tm = cfx_node_tensor_meta(n);
        cr_assert_not_null(tm, "node %d: no tensor_meta", k);
        cr_assert_eq(tm->ndim, r->ndim, "node %d", k);
        cr_assert_eq(tm->dtype, r->dtype, "node %d", k);
        cr_assert_eq(memcmp(tm->shape, r->sizes, (size_t)r->ndim * 8), 0, "node %d: shape", k);
        cr_assert_eq(memcmp(tm->stride, r->strides, (size_t)r->ndim * 8), 0, "node %d: stride", k);
        cr_assert_eq(tm->memory_format, row_major(r) ? CFX_CONTIGUOUS_FORMAT : -1, "node %d: memory_format", k);
        /* 2.13: real tracing sets val too (a fake tensor with the real one's metadata) */
        const cfx_meta_val *v = cfx_node_val(n);
        cr_assert_not_null(v, "node %d: no val", k);
        cr_assert_eq(v->kind, CFX_MVAL_TENSOR);
        cr_assert_eq(v->n, r->ndim, "node %d", k);
        cr_assert_eq(memcmp(v->sizes, r->sizes, (size_t)r->ndim * 8), 0, "node %d: val sizes", k);
        cr_assert_eq(memcmp(v->strides, r->strides, (size_t)r->ndim * 8), 0, "node %d: val strides", k);
        cr_assert_eq(v->device.type, CFX_DEVICE_CPU);
        const cfx_site *st = cfx_node_stack_trace(n);
        cr_assert_not_null(st, "node %d: no stack_trace", k);
        cr_assert_eq(st->line, r->line, "node %d: line %d, expected %d", k, st->line, r->line);
        cr_assert_str_eq(st->file, __FILE__);
        cr_assert_str_eq(st->func, "model");
        cr_assert_eq(cfx_node_meta_count(n), 0);
    }
    cr_assert_eq(k, n_recs, "%d call_function nodes for %d results", k, n_recs);
    cfx_graph_module_free(gm);
    cfx_scope_end(s);
}

Test(tracer_site_meta, fake) { check(CFX_TRACE_FAKE); }
Test(tracer_site_meta, real) { check(CFX_TRACE_REAL); }
