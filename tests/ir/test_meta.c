/* test_meta.c - node.meta: val, tensor_meta, stack_trace and free-form entries (ir/meta.h). */
#include <criterion/criterion.h>

#include "ir/meta.h"
#include "tests/ir/ir_test_util.h"

/* A tensor header with the given geometry; no storage (meta only reads the header). */
static void fake_tensor(cfx_tensor *t, const int64_t *sizes, const int64_t *strides, int nd, cfx_dtype dt)
{
    memset(t, 0, sizeof *t);
    t->dtype = (int8_t)dt;
    t->ndim = (int8_t)nd;
    t->device = cfx_device_make(CFX_DEVICE_META);
    t->storage_offset = 3;
    t->sizes = t->dims_inline;
    t->strides = t->dims_inline + CFX_INLINE_DIMS;
    memcpy(t->sizes, sizes, nd * sizeof *sizes);
    memcpy(t->strides, strides, nd * sizeof *strides);
}

Test(ir_meta, allocated_on_first_set)
{
    cfx_graph *g = cfx_graph_new();
    cfx_node *x = cfx_graph_placeholder(g, "x");
    cr_expect_null(x->meta);
    cr_expect_null(cfx_node_val(x));
    cr_expect_null(cfx_node_tensor_meta(x));
    cr_expect_null(cfx_node_stack_trace(x));
    cr_expect_null(cfx_node_meta_get(x, "k"));
    cr_expect_eq(cfx_node_meta_count(x), 0);
    cr_expect(!cfx_node_meta_remove(x, "k"));
    cfx_graph_free(g);
}

Test(ir_meta, val_and_tensor_meta_from_tensor)
{
    cfx_graph *g = cfx_graph_new();
    cfx_node *x = cfx_graph_placeholder(g, "x");
    int64_t sizes[4] = {2, 3, 4, 5}, strides[4] = {60, 1, 15, 3}; /* channels_last */
    cfx_tensor t;
    fake_tensor(&t, sizes, strides, 4, CFX_FLOAT32);
    cr_assert_eq(cfx_node_set_val_tensor(x, &t), CFX_OK);
    cr_assert_eq(cfx_node_set_tensor_meta_from_tensor(x, &t, true), CFX_OK);
    t.sizes[0] = 99; /* meta keeps its own copy */
    const cfx_meta_val *v = cfx_node_val(x);
    cr_assert(v);
    cr_expect_eq(v->kind, CFX_MVAL_TENSOR);
    cr_expect_eq(v->dtype, CFX_FLOAT32);
    cr_expect_eq(v->n, 4);
    cr_expect_eq(v->sizes[0], 2);
    cr_expect_eq(v->strides[1], 1);
    cr_expect_eq(v->storage_offset, 3);
    cr_expect_eq(v->device.type, CFX_DEVICE_META);
    const cfx_tensor_meta *tm = cfx_node_tensor_meta(x);
    cr_assert(tm);
    cr_expect_eq(tm->memory_format, CFX_CHANNELS_LAST);
    cfx_buf b;
    cfx_buf_init(&b);
    cfx_tensor_meta_print(tm, &b);
    cr_expect_str_eq(b.data, "TensorMetadata(shape=torch.Size([2, 3, 4, 5]), dtype=torch.float32, requires_grad=True, "
                             "stride=(60, 1, 15, 3), memory_format=torch.channels_last, is_quantized=False, qparams={})");
    cfx_buf_free(&b);
    /* memory formats: the first the strides are contiguous in, else None */
    int64_t s1[2] = {3, 2}, st1[2] = {1, 3};
    cr_expect_eq(cfx_memory_format_of(s1, st1, 2), -1);
    int64_t s2[4] = {2, 1, 1, 1}, st2[4] = {1, 1, 1, 1};
    cr_expect_eq(cfx_memory_format_of(s2, st2, 4), CFX_CONTIGUOUS_FORMAT);
    int64_t s3[5] = {2, 3, 4, 5, 6}, st3[5] = {360, 1, 90, 18, 3};
    cr_expect_eq(cfx_memory_format_of(s3, st3, 5), CFX_CHANNELS_LAST_3D);
    cr_expect_eq(cfx_memory_format_of(NULL, NULL, 0), CFX_CONTIGUOUS_FORMAT);
    cfx_graph_free(g);
}

Test(ir_meta, val_tuple_scalars_object)
{
    cfx_graph *g = cfx_graph_new();
    cfx_node *n = cfx_graph_placeholder(g, "x");
    int64_t sz[1] = {7}, st[1] = {1};
    char cls[64] = "__torch__.torch.classes.ns.Cls";
    cfx_meta_val inner[2] = {{.kind = CFX_MVAL_DOUBLE, .u.d = 0.5}, {.kind = CFX_MVAL_BOOL, .u.b = true}};
    cfx_meta_val items[4] = {
        {.kind = CFX_MVAL_TENSOR, .dtype = CFX_INT64, .n = 1, .sizes = sz, .strides = st},
        {.kind = CFX_MVAL_INT, .u.i = -4},
        {.kind = CFX_MVAL_TUPLE, .n = 2, .u.items = inner},
        {.kind = CFX_MVAL_OBJECT, .u.class_name = cls},
    };
    cfx_meta_val top = {.kind = CFX_MVAL_TUPLE, .n = 4, .u.items = items};
    cr_assert_eq(cfx_node_set_val(n, &top), CFX_OK);
    inner[0].u.d = 9;
    sz[0] = 9;
    cls[0] = 'X';
    const cfx_meta_val *v = cfx_node_val(n);
    cr_expect_eq(v->kind, CFX_MVAL_TUPLE);
    cr_expect_eq(v->n, 4);
    cr_expect_eq(v->u.items[0].sizes[0], 7);
    cr_expect_eq(v->u.items[1].u.i, -4);
    cr_expect_eq(v->u.items[2].u.items[0].u.d, 0.5);
    cr_expect(v->u.items[2].u.items[1].u.b);
    cr_expect_str_eq(v->u.items[3].u.class_name, "__torch__.torch.classes.ns.Cls");
    /* a bad rank is refused */
    cfx_meta_val bad = {.kind = CFX_MVAL_TENSOR, .n = 100};
    cfx_error_clear();
    cr_expect_eq(cfx_node_set_val(n, &bad), CFX_ERR);
    cr_expect(cfx_error_occurred());
    cfx_error_clear();
    cfx_graph_free(g);
}

Test(ir_meta, stack_trace_and_entries)
{
    cfx_graph *g = cfx_graph_new();
    cfx_node *x = cfx_graph_placeholder(g, "x");
    cfx_node *a = OP(g, "aten::relu", NV(x));
    char file[32] = "model.c";
    cfx_site site = {file, 17, "forward"};
    cr_assert_eq(cfx_node_set_stack_trace(a, &site), CFX_OK);
    file[0] = 'X';
    const cfx_site *s = cfx_node_stack_trace(a);
    cr_assert(s);
    cr_expect_str_eq(s->file, "model.c");
    cr_expect_eq(s->line, 17);
    cr_expect_str_eq(s->func, "forward");

    char text[16] = "hello";
    cr_assert_eq(cfx_node_meta_set(a, "nn_module_stack", cfx_string(text)), CFX_OK);
    cr_assert_eq(cfx_node_meta_set(a, "seq_nr", cfx_int(3)), CFX_OK);
    cr_assert_eq(cfx_node_meta_set(a, "src", LIST(NV(x), cfx_int(1))), CFX_OK);
    text[0] = 'j';
    cr_expect_str_eq(cfx_node_meta_get(a, "nn_module_stack")->u.s, "hello");
    cr_assert_eq(cfx_node_meta_set(a, "seq_nr", cfx_int(4)), CFX_OK); /* replaced in place */
    cr_expect_eq(cfx_node_meta_count(a), 3);
    cr_expect_str_eq(cfx_node_meta_key(a, 1), "seq_nr");
    cr_expect_eq(cfx_node_meta_value(a, 1)->u.i, 4);
    cr_expect_eq(cfx_node_num_users(x), 1); /* meta references are not uses */
    cr_expect(cfx_node_meta_remove(a, "nn_module_stack"));
    cr_expect_eq(cfx_node_meta_count(a), 2);
    cr_expect_str_eq(cfx_node_meta_key(a, 0), "seq_nr");
    cr_expect_eq(cfx_node_meta_get(a, "src")->u.items[0].u.node, x);
    cfx_graph_free(g);
}

/* Two stack traces are equal when both are absent or their file, line and function are. */
static bool same_site(const cfx_site *a, const cfx_site *b)
{
    if (!a || !b)
        return a == b;
    bool func = (!a->func && !b->func) || (a->func && b->func && strcmp(a->func, b->func) == 0);
    return strcmp(a->file, b->file) == 0 && a->line == b->line && func;
}

/* Tracing sets the same metadata node after node: the graph keeps one record of each. */
Test(ir_meta, records_are_shared)
{
    cfx_graph *g = cfx_graph_new();
    cfx_node *x = cfx_graph_placeholder(g, "x");
    cfx_node *a = OP(g, "aten::relu", NV(x));
    cfx_node *b = OP(g, "aten::relu", NV(a));
    cfx_node *c = OP(g, "aten::relu", NV(b));
    int64_t sizes[2] = {64, 64}, strides[2] = {64, 1}, other[2] = {1, 64};
    cfx_tensor t, u;
    fake_tensor(&t, sizes, strides, 2, CFX_FLOAT32);
    fake_tensor(&u, sizes, other, 2, CFX_FLOAT32);
    cfx_site site = {"m.c", 3, "f"};
    cfx_node *same[2] = {a, b};
    for (int i = 0; i < 2; i++) {
        cr_assert_eq(cfx_node_set_stack_trace(same[i], &site), CFX_OK);
        cr_assert_eq(cfx_node_set_val_tensor(same[i], &t), CFX_OK);
        cr_assert_eq(cfx_node_set_tensor_meta_from_tensor(same[i], &t, false), CFX_OK);
    }
    cr_assert_eq(cfx_node_set_val_tensor(c, &u), CFX_OK);
    cr_assert_eq(cfx_node_set_tensor_meta_from_tensor(c, &u, false), CFX_OK);
    cr_expect_eq(cfx_node_val(a), cfx_node_val(b));
    cr_expect_eq(cfx_node_tensor_meta(a), cfx_node_tensor_meta(b));
    cr_expect_eq(cfx_node_stack_trace(a), cfx_node_stack_trace(b));
    cr_expect_eq(a->meta, b->meta, "equal meta: one record");
    /* other strides are another record */
    cr_expect_eq(cfx_node_val(a)->sizes[1], cfx_node_tensor_meta(a)->shape[1]);
    cr_expect_neq(cfx_node_val(c), cfx_node_val(a));
    cr_expect_eq(cfx_node_val(c)->strides[0], 1);
    cr_expect_eq(cfx_node_val(c)->strides[1], 64);
    cr_expect_eq(cfx_node_tensor_meta(c)->memory_format, -1);
    cr_expect_null(cfx_node_stack_trace(c));
    /* changing one node's meta leaves the other's alone */
    cr_assert_eq(cfx_node_set_val_tensor(b, &u), CFX_OK);
    cr_expect_eq(cfx_node_val(b)->strides[0], 1);
    cr_expect_eq(cfx_node_val(a)->strides[0], 64);
    cr_expect_eq(cfx_node_stack_trace(b)->line, 3);
    /* a free-form entry makes the meta private, keeping the typed slots */
    cr_assert_eq(cfx_node_meta_set(a, "k", cfx_int(1)), CFX_OK);
    cr_expect_neq(a->meta, b->meta);
    cr_expect(same_site(cfx_node_stack_trace(a), cfx_node_stack_trace(b)));
    cr_expect_eq(cfx_node_val(a)->strides[0], 64);
    cr_expect_eq(cfx_node_meta_count(b), 0);
    cr_assert_eq(cfx_node_set_stack_trace(a, &(cfx_site){"n.c", 4, NULL}), CFX_OK);
    cr_expect_eq(cfx_node_stack_trace(b)->line, 3);
    cr_expect_eq(cfx_node_stack_trace(a)->line, 4);
    cr_expect_null(cfx_node_stack_trace(a)->func);
    cr_expect_eq(cfx_node_meta_get(a, "k")->u.i, 1);
    cfx_graph_free(g);
}

/* Site records are keyed by the caller's pointers, but a reused pointer with other contents
 * must still give the new contents. */
Test(ir_meta, site_pointer_reused)
{
    cfx_graph *g = cfx_graph_new();
    cfx_node *x = cfx_graph_placeholder(g, "x");
    cfx_node *a = OP(g, "aten::relu", NV(x));
    cfx_node *b = OP(g, "aten::relu", NV(a));
    cfx_node *c = OP(g, "aten::relu", NV(b));
    char file[8] = "a.c", func[8] = "f";
    cfx_site site = {file, 1, func};
    cr_assert_eq(cfx_node_set_stack_trace(a, &site), CFX_OK);
    file[0] = 'b';
    cr_assert_eq(cfx_node_set_stack_trace(b, &site), CFX_OK);
    site.line = 2;
    func[0] = 'g';
    cr_assert_eq(cfx_node_set_stack_trace(c, &site), CFX_OK);
    cr_expect_str_eq(cfx_node_stack_trace(a)->file, "a.c");
    cr_expect_str_eq(cfx_node_stack_trace(b)->file, "b.c");
    cr_expect_eq(cfx_node_stack_trace(b)->line, 1);
    cr_expect_str_eq(cfx_node_stack_trace(b)->func, "f");
    cr_expect_eq(cfx_node_stack_trace(c)->line, 2);
    cr_expect_str_eq(cfx_node_stack_trace(c)->func, "g");
    site.func = NULL;
    cr_assert_eq(cfx_node_set_stack_trace(c, &site), CFX_OK);
    cr_expect_null(cfx_node_stack_trace(c)->func);
    cfx_graph_free(g);
}

Test(ir_meta, copy_shares_and_self_copy_keeps)
{
    cfx_graph *g = cfx_graph_new(), *h = cfx_graph_new();
    cfx_node *x = cfx_graph_placeholder(g, "x");
    cfx_node *a = OP(g, "aten::relu", NV(x));
    int64_t sizes[1] = {5}, strides[1] = {1};
    cfx_tensor t;
    fake_tensor(&t, sizes, strides, 1, CFX_INT64);
    cr_assert_eq(cfx_node_set_val_tensor(a, &t), CFX_OK);
    cr_assert_eq(cfx_node_set_stack_trace(a, &(cfx_site){"m.c", 9, "f"}), CFX_OK);
    cr_assert_eq(cfx_node_meta_copy(a, a), CFX_OK);
    cr_expect_eq(cfx_node_stack_trace(a)->line, 9);
    cr_assert_eq(cfx_node_meta_copy(x, a), CFX_OK); /* same graph: the record is shared */
    cr_expect_eq(x->meta, a->meta);
    cfx_node *p = cfx_graph_placeholder(h, "p"), *q = cfx_graph_placeholder(h, "q");
    cr_assert_eq(cfx_node_meta_copy(p, a), CFX_OK);
    cr_assert_eq(cfx_node_meta_copy(q, a), CFX_OK);
    cr_expect_eq(p->meta, q->meta, "copies into another graph share that graph's record");
    cr_expect_neq(p->meta, a->meta);
    cr_expect_eq(cfx_node_val(p)->sizes[0], 5);
    cr_expect_str_eq(cfx_node_stack_trace(q)->func, "f");
    cr_assert_eq(cfx_node_meta_set(a, "k", cfx_int(2)), CFX_OK);
    cr_assert_eq(cfx_node_meta_copy(a, a), CFX_OK); /* private self-copy */
    cr_expect_eq(cfx_node_meta_get(a, "k")->u.i, 2);
    cr_expect_eq(cfx_node_stack_trace(a)->line, 9);
    cr_expect_null(cfx_node_meta_get(x, "k"));
    cfx_graph_free(g);
    cfx_graph_free(h);
}

/* ---- cfx_node_set_result_meta --------------------------------------------------------------- */

static void tensor(cfx_tensor *t, const int64_t *sizes, const int64_t *strides, int nd, cfx_dtype dt, int64_t off)
{
    memset(t, 0, sizeof *t);
    t->dtype = (int8_t)dt;
    t->ndim = (int8_t)nd;
    t->device = cfx_device_make(CFX_DEVICE_CPU);
    t->storage_offset = off;
    t->sizes = t->dims_inline;
    t->strides = t->dims_inline + CFX_INLINE_DIMS;
    if (nd) {
        memcpy(t->sizes, sizes, nd * sizeof *sizes);
        memcpy(t->strides, strides, nd * sizeof *strides);
    }
}

static bool same_dims(const int64_t *a, const int64_t *b, int n)
{
    for (int i = 0; i < n; i++)
        if (a[i] != b[i])
            return false;
    return true;
}

/* set_result_meta(n, ...) and the three setters on m give the same meta: equal val,
 * tensor_meta and entries, and equal stack traces. */
static void expect_same_meta(cfx_node *n, cfx_node *m)
{
    const cfx_meta_val *a = cfx_node_val(n), *b = cfx_node_val(m);
    cr_expect_eq(a == NULL, b == NULL);
    if (a && b)
        cr_expect(a->dtype == b->dtype && a->n == b->n && same_dims(a->sizes, b->sizes, a->n) &&
                  same_dims(a->strides, b->strides, a->n) && a->storage_offset == b->storage_offset &&
                  cfx_device_eq(a->device, b->device));
    const cfx_tensor_meta *ta = cfx_node_tensor_meta(n), *tb = cfx_node_tensor_meta(m);
    cr_expect_eq(ta == NULL, tb == NULL);
    if (ta && tb)
        cr_expect(ta->dtype == tb->dtype && ta->ndim == tb->ndim && same_dims(ta->shape, tb->shape, ta->ndim) &&
                  same_dims(ta->stride, tb->stride, ta->ndim) && ta->requires_grad == tb->requires_grad &&
                  ta->memory_format == tb->memory_format);
    cr_expect(same_site(cfx_node_stack_trace(n), cfx_node_stack_trace(m)));
    cr_expect_eq(cfx_node_meta_count(n), cfx_node_meta_count(m));
}

static void three_setters(cfx_node *m, const cfx_site *site, const cfx_tensor *t, const cfx_device *dev, bool rg)
{
    if (site)
        cr_assert_eq(cfx_node_set_stack_trace(m, site), CFX_OK);
    if (dev) {
        cfx_meta_val v = {.kind = CFX_MVAL_TENSOR, .dtype = t->dtype, .device = *dev, .n = t->ndim,
                          .sizes = t->sizes, .strides = t->strides, .storage_offset = t->storage_offset};
        cr_assert_eq(cfx_node_set_val(m, &v), CFX_OK);
    }
    cr_assert_eq(cfx_node_set_tensor_meta_from_tensor(m, t, rg), CFX_OK);
}

/* Results at one site and at several, with and without val, rank 0 to 4. */
Test(ir_meta, result_meta_equals_three_setters)
{
    cfx_graph *g = cfx_graph_new();
    cfx_node *x = cfx_graph_placeholder(g, "x");
    int64_t s2[2] = {64, 64}, st2[2] = {64, 1}, s4[4] = {2, 3, 4, 5}, st4[4] = {60, 1, 15, 3};
    cfx_tensor t2, t4, t0;
    tensor(&t2, s2, st2, 2, CFX_FLOAT32, 0);
    tensor(&t4, s4, st4, 4, CFX_FLOAT64, 7);
    tensor(&t0, NULL, NULL, 0, CFX_INT64, 0);
    cfx_device meta_dev = cfx_device_make(CFX_DEVICE_META), cpu = cfx_device_make(CFX_DEVICE_CPU);
    static const cfx_site s1 = {"model.c", 10, "forward"}, s2b = {"model.c", 11, "forward"};
    struct {
        const cfx_site *site;
        const cfx_tensor *t;
        const cfx_device *dev;
        bool rg;
    } cases[] = {
        {&s1, &t2, &meta_dev, false}, {&s1, &t2, &meta_dev, false}, /* the second finds the first's */
        {&s1, &t4, &meta_dev, false}, {&s1, &t2, &cpu, false},      /* same site, other key */
        {&s1, &t2, &meta_dev, true},  {&s1, &t2, NULL, false},      /* requires_grad; no val */
        {&s2b, &t2, &meta_dev, false}, {NULL, &t2, &meta_dev, false}, {NULL, &t2, &meta_dev, false},
        {&s1, &t0, &meta_dev, false}, {&s1, &t0, &meta_dev, false}, /* rank 0 */
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        cfx_node *n = OP(g, "aten::relu", NV(x));
        cfx_node *m = OP(g, "aten::relu", NV(x));
        cr_assert_eq(cfx_node_set_result_meta(n, cases[i].site, cases[i].t, cases[i].dev, cases[i].rg), CFX_OK);
        three_setters(m, cases[i].site, cases[i].t, cases[i].dev, cases[i].rg);
        expect_same_meta(n, m);
        cr_expect_eq(cfx_node_val(n) != NULL, cases[i].dev != NULL);
        cr_expect_eq(cfx_node_stack_trace(n) != NULL, cases[i].site != NULL);
        cr_expect_eq(cfx_node_tensor_meta(n)->requires_grad, cases[i].rg);
    }
    /* a changed shape in the same tensor header is seen */
    cfx_node *n = OP(g, "aten::relu", NV(x));
    t2.sizes[1] = 32;
    t2.strides[0] = 32;
    cr_assert_eq(cfx_node_set_result_meta(n, &s1, &t2, &meta_dev, false), CFX_OK);
    cr_expect_eq(cfx_node_val(n)->sizes[1], 32);
    cr_expect_eq(cfx_node_tensor_meta(n)->stride[0], 32);
    t2.storage_offset = 5;
    cr_assert_eq(cfx_node_set_result_meta(n = OP(g, "aten::relu", NV(x)), &s1, &t2, &meta_dev, false), CFX_OK);
    cr_expect_eq(cfx_node_val(n)->storage_offset, 5);
    cfx_graph_free(g);
}

/* Meta already on the node: only the slots given change, in place for a private record. */
Test(ir_meta, result_meta_on_existing_meta)
{
    cfx_graph *g = cfx_graph_new();
    cfx_node *x = cfx_graph_placeholder(g, "x");
    int64_t s[2] = {2, 3}, st[2] = {3, 1};
    cfx_tensor t;
    tensor(&t, s, st, 2, CFX_FLOAT32, 0);
    cfx_device dev = cfx_device_make(CFX_DEVICE_META);
    static const cfx_site a = {"a.c", 1, "f"}, b = {"b.c", 2, "g"};
    /* shared record: the site stays when none is given */
    cfx_node *n = OP(g, "aten::relu", NV(x)), *m = OP(g, "aten::relu", NV(x));
    cr_assert_eq(cfx_node_set_stack_trace(n, &a), CFX_OK);
    cr_assert_eq(cfx_node_set_stack_trace(m, &a), CFX_OK);
    cr_assert_eq(cfx_node_set_result_meta(n, NULL, &t, &dev, false), CFX_OK);
    three_setters(m, NULL, &t, &dev, false);
    expect_same_meta(n, m);
    cr_expect_str_eq(cfx_node_stack_trace(n)->file, "a.c");
    /* private record (a free-form entry): slots set in place, the entry kept */
    cr_assert_eq(cfx_node_meta_set(n, "k", cfx_int(1)), CFX_OK);
    cr_assert_eq(cfx_node_meta_set(m, "k", cfx_int(1)), CFX_OK);
    cr_assert_eq(cfx_node_set_result_meta(n, &b, &t, NULL, true), CFX_OK);
    three_setters(m, &b, &t, NULL, true);
    expect_same_meta(n, m);
    cr_expect_str_eq(cfx_node_stack_trace(n)->file, "b.c");
    cr_expect_eq(cfx_node_meta_get(n, "k")->u.i, 1);
    cr_expect(cfx_node_tensor_meta(n)->requires_grad);
    /* errors set nothing */
    cfx_tensor bad = t;
    bad.ndim = -1;
    cfx_error_clear();
    cr_expect_eq(cfx_node_set_result_meta(n, &a, &bad, &dev, false), CFX_ERR);
    cr_expect_str_eq(cfx_error_message(), "val: bad tensor rank -1");
    cfx_error_clear();
    cr_expect_eq(cfx_node_set_result_meta(n, &a, &bad, NULL, false), CFX_ERR);
    cr_expect_str_eq(cfx_error_message(), "tensor_meta: bad rank -1");
    cfx_error_clear();
    cr_expect_str_eq(cfx_node_stack_trace(n)->file, "b.c");
    cr_expect_eq(cfx_node_set_result_meta(NULL, &a, &t, NULL, false), CFX_ERR);
    cr_expect_eq(cfx_node_set_result_meta(n, &a, NULL, NULL, false), CFX_ERR);
    cfx_graph_free(g);
}

/* A site whose strings live in a buffer the caller rewrites: same pointers, new contents. */
Test(ir_meta, result_meta_site_buffer_rewritten)
{
    cfx_graph *g = cfx_graph_new();
    cfx_node *x = cfx_graph_placeholder(g, "x");
    int64_t s[2] = {2, 3}, st[2] = {3, 1};
    cfx_tensor t;
    tensor(&t, s, st, 2, CFX_FLOAT32, 0);
    cfx_device dev = cfx_device_make(CFX_DEVICE_META);
    char file[16] = "first.c", func[16] = "f";
    cfx_site site = {file, 3, func};
    cfx_node *a = OP(g, "aten::relu", NV(x)), *b = OP(g, "aten::relu", NV(x)), *c = OP(g, "aten::relu", NV(x));
    cfx_node *d = OP(g, "aten::relu", NV(x));
    cr_assert_eq(cfx_node_set_result_meta(a, &site, &t, &dev, false), CFX_OK);
    cr_assert_eq(cfx_node_set_result_meta(b, &site, &t, &dev, false), CFX_OK);
    cr_expect_eq(cfx_node_stack_trace(b), cfx_node_stack_trace(a));
    memcpy(file, "other.c", 8);
    cr_assert_eq(cfx_node_set_result_meta(c, &site, &t, &dev, false), CFX_OK);
    cr_expect_str_eq(cfx_node_stack_trace(c)->file, "other.c");
    cr_expect_str_eq(cfx_node_stack_trace(a)->file, "first.c");
    func[0] = 'g';
    cr_assert_eq(cfx_node_set_result_meta(d, &site, &t, &dev, false), CFX_OK);
    cr_expect_str_eq(cfx_node_stack_trace(d)->func, "g");
    cr_expect_eq(cfx_node_val(d)->sizes[1], 3);
    cfx_graph_free(g);
}

/* One site, results that differ in dims, storage offset or rank (up to 6), in turn: every
 * result equals the three setters', and equal results share one record. */
Test(ir_meta, result_meta_sharing)
{
    cfx_graph *g = cfx_graph_new();
    cfx_node *x = cfx_graph_placeholder(g, "x");
    static const cfx_site s1 = {"model.c", 20, "forward"};
    cfx_device dev = cfx_device_make(CFX_DEVICE_META);
    int64_t sa[2] = {4, 8}, sta[2] = {8, 1}, sb[2] = {4, 6}, stb[2] = {6, 1};
    int64_t s5[5] = {2, 3, 4, 5, 6}, st5[5] = {360, 120, 30, 6, 1};
    int64_t s6[6] = {1, 2, 3, 4, 5, 6}, st6[6] = {720, 360, 120, 30, 6, 1};
    cfx_tensor ta, tb, t5, t6;
    tensor(&ta, sa, sta, 2, CFX_FLOAT32, 0);
    tensor(&tb, sb, stb, 2, CFX_FLOAT32, 0);
    tensor(&t5, NULL, NULL, 0, CFX_FLOAT32, 0);
    t5.ndim = 5;
    t5.sizes = s5;
    t5.strides = st5;
    tensor(&t6, NULL, NULL, 0, CFX_FLOAT32, 0);
    t6.ndim = 6;
    t6.sizes = s6;
    t6.strides = st6;
    cfx_tensor ta_off = ta;
    ta_off.storage_offset = 3;
    const cfx_tensor *seq[] = {&ta, &tb, &ta, &ta_off, &ta, &t5, &t5, &t6, &t6, &t5, &ta};
    cfx_node *made[sizeof seq / sizeof *seq];
    for (int pass = 0; pass < 2; pass++) /* with a site, then without */
        for (size_t i = 0; i < sizeof seq / sizeof *seq; i++) {
            const cfx_site *site = pass ? NULL : &s1;
            cfx_node *n = OP(g, "aten::relu", NV(x)), *m = OP(g, "aten::relu", NV(x));
            cr_assert_eq(cfx_node_set_result_meta(n, site, seq[i], &dev, false), CFX_OK);
            three_setters(m, site, seq[i], &dev, false);
            expect_same_meta(n, m);
            cr_expect_eq(n->meta->cap_entries, CFX_META_SHARED, "pass %d step %zu: a shared record", pass, i);
            if (!pass)
                made[i] = n;
        }
    cr_expect_eq(made[2]->meta, made[0]->meta);
    cr_expect_neq(made[1]->meta, made[0]->meta);
    cr_expect_neq(made[3]->meta, made[0]->meta);
    cr_expect_eq(cfx_node_val(made[3])->storage_offset, 3);
    cr_expect_eq(made[6]->meta, made[5]->meta);
    cr_expect_eq(made[9]->meta, made[5]->meta);
    cr_expect_neq(made[7]->meta, made[5]->meta);
    cr_expect_eq(cfx_node_val(made[8])->n, 6);
    cr_expect_eq(cfx_node_tensor_meta(made[8])->stride[0], 720);
    cr_expect_eq(made[10]->meta, made[0]->meta);
    /* a changed stride at rank 5 is seen by the full compare */
    st5[4] = 2;
    cfx_node *n = OP(g, "aten::relu", NV(x));
    cr_assert_eq(cfx_node_set_result_meta(n, &s1, &t5, &dev, false), CFX_OK);
    cr_expect_neq(n->meta, made[5]->meta);
    cr_expect_eq(cfx_node_val(n)->strides[4], 2);
    cfx_graph_free(g);
}

/* A result without val, of dtype 0 and rank 0, with no site, in a fresh graph: all zeros. */
Test(ir_meta, result_meta_all_zero)
{
    cfx_graph *g = cfx_graph_new();
    cfx_node *x = cfx_graph_placeholder(g, "x");
    cfx_tensor t;
    memset(&t, 0, sizeof t);
    t.dtype = 0;
    t.ndim = 0;
    t.sizes = t.strides = t.dims_inline;
    cfx_node *n = OP(g, "aten::sum", NV(x));
    cr_assert_eq(cfx_node_set_result_meta(n, NULL, &t, NULL, false), CFX_OK);
    cr_assert(cfx_node_tensor_meta(n));
    cr_expect_eq(cfx_node_tensor_meta(n)->ndim, 0);
    cr_expect_eq(cfx_node_tensor_meta(n)->dtype, 0);
    cr_expect_null(cfx_node_val(n));
    /* and the second one hits the record the first one made */
    cfx_node *m = OP(g, "aten::sum", NV(x));
    cr_assert_eq(cfx_node_set_result_meta(m, NULL, &t, NULL, false), CFX_OK);
    cr_expect_eq(cfx_node_tensor_meta(m), cfx_node_tensor_meta(n));
    cfx_graph_free(g);
}
