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
    /* val and tensor_meta share their dims; other strides are another record */
    cr_expect_eq(cfx_node_val(a)->sizes, cfx_node_tensor_meta(a)->shape);
    cr_expect_neq(cfx_node_val(c), cfx_node_val(a));
    cr_expect_eq(cfx_node_val(c)->strides[0], 1);
    cr_expect_eq(cfx_node_val(c)->strides[1], 64);
    cr_expect_eq(cfx_node_tensor_meta(c)->memory_format, -1);
    cr_expect_null(cfx_node_stack_trace(c));
    /* changing one node's meta leaves the other's alone */
    cr_assert_eq(cfx_node_set_val_tensor(b, &u), CFX_OK);
    cr_expect_eq(cfx_node_val(b), cfx_node_val(c));
    cr_expect_eq(cfx_node_val(a)->strides[0], 64);
    cr_expect_eq(cfx_node_stack_trace(b)->line, 3);
    /* a free-form entry makes the meta private, keeping the typed slots */
    cr_assert_eq(cfx_node_meta_set(a, "k", cfx_int(1)), CFX_OK);
    cr_expect_neq(a->meta, b->meta);
    cr_expect_eq(cfx_node_stack_trace(a), cfx_node_stack_trace(b));
    cr_expect_eq(cfx_node_val(a)->strides[0], 64);
    cr_expect_eq(cfx_node_meta_count(b), 0);
    cr_assert_eq(cfx_node_set_stack_trace(a, &(cfx_site){"n.c", 4, NULL}), CFX_OK);
    cr_expect_eq(cfx_node_stack_trace(b)->line, 3);
    cr_expect_eq(cfx_node_stack_trace(a)->line, 4);
    cr_expect_null(cfx_node_stack_trace(a)->func);
    cr_expect_eq(cfx_node_meta_get(a, "k")->u.i, 1);
    cfx_graph_free(g);
}

/* The site cache is keyed by the caller's pointer, but a reused pointer with other contents
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
