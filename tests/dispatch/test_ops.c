/* test_ops.c - the built-in op table: registrations, wrappers, layouts, meta dispatch.
 *
 * Goldens (tools/interop/gen_ops.py, PyTorch 2.13):
 *   tests/data/ops_keys.txt     schema, kernel keys and tags of the built-ins, compared with
 *                               cfx's registry and dumps;
 *   tests/data/ops_strides.json 4000 random layouts / dtype mixes through the elementwise ops,
 *                               clone and empty_like: output strides (or the error) on CPU and
 *                               on meta, the bulk check of the two layout rules: TensorIterator's
 *                               on CPU, prims' (the Python references') on meta.
 * The rest checks the wrapper machinery itself: call sites, NULL propagation, the boxed-only
 * kernel path, redispatch, BackendSelect, version counters and the Meta kernel choice; the
 * multi-output wrappers (max.dim, native_layer_norm) on both paths and through a mode;
 * lift_fresh's identity and ownership, lift_fresh_copy's inner dispatches, and tensor literals
 * reaching a mode as one lift_fresh call (the oracle: torch.tensor under a TorchDispatchMode). */
#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfx.h"
#include "dispatch/ops_table.h"
#include "dispatch/kernels/kernels.h"
#include "dispatch/mode.h"
#include "tests/test_util.h"

static const cfx_device CPU = {CFX_DEVICE_CPU, -1};
static const cfx_device META = {CFX_DEVICE_META, -1};

static void setup(void)
{
    cfx_error_clear();
    cr_assert_eq(cfx_builtin_ops_init(), CFX_OK, "%s", cfx_error_message());
}

TestSuite(ops, .init = setup);

/* ---- registry vs PyTorch ------------------------------------------------------------------- */

Test(ops, table_matches_registry_and_pytorch_schemas)
{
    char *text = read_golden("tests/data/ops_keys.txt");
    cr_assert_not_null(text, "missing or headerless tests/data/ops_keys.txt (make goldens)");
    size_t n_lines = 0;
    char **lines = split_lines(text, &n_lines);
    int n = 0;
    for (size_t li = 0; li < n_lines; li++) {
        char *line = lines[li];
        if (line[0] == '#' || !line[0])
            continue;
        char *id = strtok(line, "\t"), *name = strtok(NULL, "\t"), *keys = strtok(NULL, "\t"),
             *schema = strtok(NULL, "\t"), *tags = strtok(NULL, "\t");
        cr_assert(id && name && keys && schema && tags);
        int i = 0;
        while (i < CFX_OPID_COUNT && strcmp(cfx_ops_table.rows[i].id, id))
            i++;
        cr_assert_lt(i, CFX_OPID_COUNT, "%s is not a built-in", id);
        cr_expect_str_eq(cfx_ops_table.rows[i].name, name);
        cr_expect_str_eq(cfx_ops_table.rows[i].schema, schema);
        cfx_op *op = cfx_op_find(name);
        cr_assert_not_null(op, "%s not registered", name);
        cr_expect_eq(op, cfx_builtin_op((cfx_opid)i));
        char *printed = cfx_schema_to_string(cfx_op_schema(op));
        cr_expect_str_eq(printed, schema, "schema of %s re-prints differently", name);
        free(printed);
        cfx_tag_set want_tags;
        cr_assert(cfx_tags_parse(tags, &want_tags, NULL), "tags of %s: %s", name, tags);
        cr_expect_eq(op->tags, want_tags, "tags of %s (PyTorch: %s)", name, tags);

        /* the dump's kernel keys, in dump order, must be PyTorch's (restricted to our keys) */
        char *dump = cfx_op_dump_state(op);
        cfx_buf got;
        cfx_buf_init(&got);
        for (char *l = strtok(dump, "\n"); l; l = strtok(NULL, "\n")) {
            if (!strstr(l, ": registered at"))
                continue;
            if (!strncmp(l, "debug: ", 7)) {
                cr_expect(strstr(l, "dispatch/ops.def:") != NULL, "schema debug of %s: %s", name, l);
                continue;
            }
            size_t k = strcspn(l, ":[ ");
            cfx_buf_printf(&got, "%s%.*s", got.len ? " " : "", (int)k, l);
        }
        char *gs = cfx_buf_take(&got);
        cr_expect_str_eq(gs, keys, "kernel keys of %s", name);
        free(gs);
        free(dump);
        n++;
    }
    free(lines);
    free(text);
    cr_expect_eq(n, CFX_OPID_COUNT, "ops_keys.txt lists %d ops, ops.def %d", n, CFX_OPID_COUNT);
}

Test(ops, invariants_hold)
{
    for (int i = 0; i < CFX_OPID_COUNT; i++)
        cr_expect_eq(cfx_op_check_invariants(cfx_builtin_op((cfx_opid)i)), CFX_OK, "%s: %s",
                     cfx_ops_table.rows[i].name, cfx_error_message());
}

Test(ops, kernel_debug_points_at_the_table_row)
{
    char *t = cfx_op_dump_computed_table(cfx_op_find("aten::add.Tensor"));
    cr_assert_not_null(t);
    char want[64];
    snprintf(want, sizeof want, "CPU: registered at dispatch/ops.def:%d", cfx_ops_table.rows[CFX_OPID_add_Tensor].line);
    cr_expect(strstr(t, want) != NULL, "%s", t);
    cr_expect(strstr(t, "Meta: registered at dispatch/ops.def:") != NULL, "%s", t);
    /* CompositeExplicitAutogradNonFunctional fills Undefined and the other backends */
    cr_expect(strstr(t, "Undefined: registered at dispatch/ops.def:") != NULL, "%s", t);
    cr_expect(strstr(t, "[default backend kernel]") != NULL, "%s", t);
    free(t);
}

/* ---- layouts: 4000 random cases ------------------------------------------------------------ */

static cfx_opid opid_named(const char *id)
{
    for (int i = 0; i < CFX_OPID_COUNT; i++)
        if (!strcmp(cfx_ops_table.rows[i].id, id))
            return (cfx_opid)i;
    cr_assert_fail("unknown op %s", id);
    return CFX_OPID_COUNT;
}

static int ints_of(const cJSON *arr, int64_t *out)
{
    int n = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, arr) out[n++] = (int64_t)e->valuedouble;
    return n;
}

static cfx_tensor *call_layout_op(cfx_opid id, cfx_tensor *const *t)
{
    switch (id) {
    case CFX_OPID_add_Tensor: return cfx_add(t[0], t[1]);
    case CFX_OPID_sub_Tensor: return cfx_sub(t[0], t[1]);
    case CFX_OPID_mul_Tensor: return cfx_mul(t[0], t[1]);
    case CFX_OPID_div_Tensor: return cfx_div(t[0], t[1]);
    case CFX_OPID_neg: return cfx_neg(t[0]);
    case CFX_OPID_relu: return cfx_relu(t[0]);
    case CFX_OPID_sin: return cfx_sin(t[0]);
    case CFX_OPID_exp: return cfx_exp(t[0]);
    case CFX_OPID_clone: return cfx_clone(t[0]);
    case CFX_OPID_empty_like: return cfx_empty_like(t[0]);
    default: cr_assert_fail("op %d not in the layout set", id);
    }
    return NULL;
}

Test(ops, output_layouts_random)
{
    char *text = read_file("tests/data/ops_strides.json");
    cr_assert_not_null(text, "missing tests/data/ops_strides.json");
    cJSON *root = cJSON_Parse(text);
    free(text);
    cr_assert_not_null(root);
    int n = 0, bad = 0;
    const cJSON *c;
    cJSON_ArrayForEach(c, cJSON_GetObjectItem(root, "cases"))
    {
        cfx_opid id = opid_named(cJSON_GetArrayItem(c, 0)->valuestring);
        for (int run = 0; run < 2; run++) {
            cfx_error_clear();
            cfx_scope s = cfx_scope_begin();
            cfx_tensor *t[2] = {NULL, NULL};
            int k = 0;
            const cJSON *o;
            cJSON_ArrayForEach(o, cJSON_GetArrayItem(c, 1))
            {
                int64_t sizes[8], strides[8];
                int nd = ints_of(cJSON_GetArrayItem(o, 0), sizes);
                ints_of(cJSON_GetArrayItem(o, 1), strides);
                cfx_dtype dt;
                cr_assert(cfx_dtype_parse(cJSON_GetArrayItem(o, 2)->valuestring, &dt));
                t[k] = cfx_tensor_new_strided(sizes, strides, nd, dt, run ? META : CPU);
                cr_assert_not_null(t[k], "%s", cfx_error_message());
                k++;
            }
            cfx_tensor *r = call_layout_op(id, t);
            const cJSON *want = cJSON_GetArrayItem(c, 2 + run);
            bool ok;
            if (cJSON_IsString(want)) {
                ok = !r && cfx_error_message() && !strcmp(cfx_error_message(), want->valuestring);
            } else {
                int64_t ws[8];
                int nd = ints_of(want, ws);
                ok = r && r->ndim == nd && !memcmp(r->strides, ws, (size_t)nd * 8) &&
                     r->device.type == (run ? CFX_DEVICE_META : CFX_DEVICE_CPU);
            }
            if (!ok && bad++ < 20) {
                char *js = cJSON_PrintUnformatted(c);
                fprintf(stderr, "layout case %d (%s): %s\n  got: ", n, run ? "meta" : "cpu", js);
                if (r)
                    for (int i = 0; i < r->ndim; i++)
                        fprintf(stderr, "%lld ", (long long)r->strides[i]);
                else
                    fprintf(stderr, "%s", cfx_error_message() ? cfx_error_message() : "NULL");
                fputc('\n', stderr);
                free(js);
            }
            cfx_scope_end(s);
        }
        n++;
    }
    cJSON_Delete(root);
    cr_expect_eq(n, 4000);
    cr_expect_eq(bad, 0, "%d of %d layout runs differ from PyTorch", bad, 2 * n);
}

/* ---- the wrapper machinery ---------------------------------------------------------------- */

static cfx_tensor *floats(const float *v, int64_t n)
{
    return cfx_tensor_from_floats(v, &n, 1);
}

Test(ops, meta_tensors_dispatch_to_the_meta_kernel)
{
    cfx_op *op = cfx_op_find("aten::add.Tensor");
    cr_assert_eq(op->table[cfx_key_table_index(CFX_KEY_Meta)].unboxed, (cfx_fnptr)cfx_meta_add_Tensor);
    cr_assert_eq(op->table[cfx_key_table_index(CFX_KEY_CPU)].unboxed, (cfx_fnptr)cfx_cpu_add_Tensor);
    cfx_scope s = cfx_scope_begin();
    int64_t sz[2] = {1000, 1000};
    cfx_tensor *a = cfx_tensor_new(sz, 2, CFX_FLOAT32, META), *b = cfx_tensor_new(sz + 1, 1, CFX_FLOAT64, META);
    cfx_tensor *y = cfx_mm(cfx_relu(cfx_add(a, b)), cfx_t(a));
    cr_assert_not_null(y, "%s", cfx_error_message());
    cr_expect_eq(y->device.type, CFX_DEVICE_META);
    cr_expect_null(cfx_tensor_data(y), "the Meta kernel makes no data");
    cr_expect_eq(y->dtype, CFX_FLOAT64);
    cr_expect_eq(y->sizes[0], 1000);
    cr_expect_eq(y->sizes[1], 1000);
    /* 0-dim CPU scalars may join a meta computation; the result is meta */
    float one = 1;
    cfx_tensor *cpu0 = cfx_tensor_from_floats(&one, NULL, 0);
    cfx_tensor *z = cfx_add(a, cpu0);
    cr_assert_not_null(z, "%s", cfx_error_message());
    cr_expect_eq(z->device.type, CFX_DEVICE_META);
    cfx_scope_end(s);
}

Test(ops, errors_record_the_call_site_and_op)
{
    cfx_scope s = cfx_scope_begin();
    float v[5] = {1, 2, 3, 4, 5};
    cfx_tensor *a = floats(v, 2), *b = floats(v, 5);
    int line = __LINE__ + 1;
    cfx_tensor *y = cfx_add(a, b);
    cr_assert_null(y);
    cr_expect_str_eq(cfx_error_message(), "The size of tensor a (2) must match the size of tensor b (5) at non-singleton dimension 0");
    cr_expect_str_eq(cfx_error_op(), "aten::add.Tensor");
    cfx_site site = cfx_error_site();
    cr_expect_str_eq(site.file, __FILE__);
    cr_expect_eq(site.line, line);
    cr_expect_null(cfx_current_site(), "the wrapper restores the previous site");
    cfx_scope_end(s);
}

Test(ops, null_propagates_without_a_new_error)
{
    cfx_scope s = cfx_scope_begin();
    float v[2] = {1, 2};
    cfx_tensor *a = floats(v, 2);
    cr_expect_null(cfx_add(a, NULL));
    cr_expect_null(cfx_relu(NULL));
    cr_expect_null(cfx_sum(NULL, cfx_ints(NULL, 0), false));
    cr_expect_null(cfx_view(NULL, CFX_INTS(2)));
    cr_expect_not(cfx_error_occurred(), "%s", cfx_error_message());
    cfx_scope_end(s);
}

Test(ops, add_inplace_bumps_version_and_returns_self)
{
    cfx_scope s = cfx_scope_begin();
    float v[3] = {1, 2, 3};
    cfx_tensor *a = floats(v, 3), *b = floats(v, 3);
    cfx_tensor *view = cfx_view(a, CFX_INTS(3, 1));
    uint32_t v0 = cfx_tensor_version(view);
    cfx_tensor *r = cfx_add_(a, b, cfx_double(0.5));
    cr_assert_eq(r, a);
    cr_expect_eq(cfx_tensor_version(view), v0 + 1, "views share the version counter");
    cr_expect_eq(cfx_tensor_get_double(view, 2), 4.5);
    /* the meta twin bumps too */
    int64_t three = 3;
    cfx_tensor *m = cfx_tensor_new(&three, 1, CFX_FLOAT32, META);
    uint32_t mv = cfx_tensor_version(m);
    cr_expect_eq(cfx_add_(m, m), m);
    cr_expect_eq(cfx_tensor_version(m), mv + 1);
    cfx_scope_end(s);
}

Test(ops, convenience_macros)
{
    cfx_scope s = cfx_scope_begin();
    float v[6] = {1, 2, 3, 4, 5, 6};
    int64_t sz[2] = {2, 3};
    cfx_tensor *x = cfx_tensor_from_floats(v, sz, 2);
    cfx_tensor *rows = cfx_sum(x, CFX_INTS(1), false);
    cr_assert_not_null(rows, "%s", cfx_error_message());
    cr_expect_eq(cfx_tensor_get_double(rows, 0), 6);
    cr_expect_eq(cfx_tensor_get_double(rows, 1), 15);
    cfx_tensor *all = cfx_sum(x, CFX_NO_INTS);
    cr_expect_eq(all->ndim, 0);
    cr_expect_eq(cfx_tensor_get_double(all, 0), 21);
    cfx_tensor *d = cfx_sum(x, cfx_ints(NULL, 0), true, cfx_dtype_value(CFX_FLOAT64));
    cr_expect_eq(d->dtype, CFX_FLOAT64);
    cr_expect_eq(d->ndim, 2);
    cfx_tensor *v2 = cfx_view(x, CFX_INTS(3, -1));
    cr_expect_eq(v2->sizes[1], 2);
    cr_expect_eq(v2->storage, x->storage);
    cfx_tensor *e = cfx_empty(cfx_ints(sz, 2), cfx_dtype_value(CFX_INT32), cfx_none(), cfx_device_value(META));
    cr_expect_eq(e->device.type, CFX_DEVICE_META);
    cr_expect_eq(e->dtype, CFX_INT32);
    cfx_tensor *es = cfx_empty_strided(cfx_ints(sz, 2), CFX_INTS(1, 2), cfx_dtype_value(CFX_FLOAT32), cfx_none(), cfx_device_value(CPU));
    cr_expect_eq(es->strides[1], 2);
    cfx_tensor *cl = cfx_clone(cfx_t(x), cfx_memory_format_value(CFX_CONTIGUOUS_FORMAT));
    cr_expect_eq(cl->strides[0], 2);
    cr_expect_eq(cfx_tensor_get_double(cl, 1), 4);
    cfx_tensor *y = cfx_div(cfx_sub(cfx_mul(x, x), x, cfx_int(2)), cfx_exp(cfx_neg(x)));
    cr_assert_not_null(y, "%s", cfx_error_message());
    cfx_tensor *sc = cfx_cos(cfx_sin(x));
    cr_assert_not_null(sc);
    cfx_scope_end(s);
}

Test(ops, long_int_lists_box_on_the_heap)
{
    cfx_scope s = cfx_scope_begin();
    float v = 7;
    cfx_tensor *x = cfx_tensor_from_floats(&v, NULL, 0);
    int64_t ones[40];
    for (int i = 0; i < 40; i++)
        ones[i] = 1;
    cfx_tensor *y = cfx_view(x, cfx_ints(ones, 40));
    cr_assert_not_null(y, "%s", cfx_error_message());
    cr_expect_eq(y->ndim, 40);
    int64_t dims[40];
    for (int i = 0; i < 40; i++)
        dims[i] = i;
    cfx_tensor *z = cfx_sum(y, cfx_ints(dims, 40), false);
    cr_assert_not_null(z, "%s", cfx_error_message());
    cr_expect_eq(z->ndim, 0);
    cr_expect_eq(cfx_tensor_get_double(z, 0), 7);
    cfx_scope_end(s);
}

Test(ops, factories_go_through_backend_select)
{
    cfx_op *op = cfx_op_find("aten::empty.memory_format");
    cr_expect(cfx_kernel_is_valid(&op->table[cfx_key_table_index(CFX_KEY_BackendSelect)]));
    cfx_scope s = cfx_scope_begin();
    int64_t sz[4] = {2, 3, 4, 5};
    cfx_tensor *c = cfx_op_empty_memory_format(CFX_HERE, cfx_ints(sz, 4), cfx_none(), cfx_none(), cfx_none(),
                                               cfx_none(), cfx_memory_format_value(CFX_CHANNELS_LAST));
    cr_assert_not_null(c, "%s", cfx_error_message());
    cr_expect_eq(c->device.type, CFX_DEVICE_CPU, "no device: CPU");
    cr_expect_eq(c->strides[1], 1);
    cr_expect_eq(c->strides[3], 3);
    cfx_tensor *m = cfx_op_empty_strided(CFX_HERE, cfx_ints(sz, 2), CFX_INTS(1, 2), cfx_none(), cfx_none(),
                                         cfx_device_value(META), cfx_none());
    cr_assert_not_null(m, "%s", cfx_error_message());
    cr_expect_eq(m->device.type, CFX_DEVICE_META);
    /* redispatch straight to a backend key */
    cfx_tensor *r = cfx_op_empty_memory_format_redispatch(cfx_keyset_of(CFX_KEY_Meta), cfx_ints(sz, 2), cfx_none(),
                                                          cfx_none(), cfx_none(), cfx_none(), cfx_none());
    cr_assert_not_null(r);
    cr_expect_eq(r->device.type, CFX_DEVICE_META);
    cfx_scope_end(s);
}

static int boxed_neg_calls;

static int boxed_neg(void *ctx, const cfx_op *op, cfx_keyset ks, cfx_value *stack)
{
    (void)ctx;
    (void)op;
    (void)ks;
    boxed_neg_calls++;
    cfx_tensor *r = cfx_cpu_neg(stack[0].u.t);
    if (!r)
        return CFX_ERR;
    stack[0] = cfx_tensor_value(r);
    return CFX_OK;
}

static void quiet(const char *message, void *ctx)
{
    (void)message;
    (void)ctx;
}

Test(ops, boxed_only_kernels_are_called_boxed)
{
    cfx_set_warning_handler(quiet, NULL); /* "Overriding a previously registered kernel" */
    cfx_library *lib = CFX_LIBRARY_IMPL("aten", CFX_KEY_CPU);
    cr_assert_not_null(lib, "%s", cfx_error_message());
    cr_assert_eq(CFX_IMPL_BOXED(lib, "neg", CFX_KEY_Undefined, boxed_neg, NULL), CFX_OK, "%s",
                 cfx_error_message());
    cfx_scope s = cfx_scope_begin();
    float v[2] = {1, -2};
    cfx_tensor *y = cfx_neg(floats(v, 2));
    cr_assert_not_null(y, "%s", cfx_error_message());
    cr_expect_eq(boxed_neg_calls, 1);
    cr_expect_eq(cfx_tensor_get_double(y, 1), 2);
    cfx_scope_end(s);
    cfx_library_free(lib);
    s = cfx_scope_begin();
    cr_assert_not_null(cfx_neg(floats(v, 2)));
    cr_expect_eq(boxed_neg_calls, 1, "the C kernel is back after the library is freed");
    cfx_scope_end(s);
    cfx_set_warning_handler(NULL, NULL);
}

Test(ops, no_scope_means_the_caller_owns_results)
{
    float v[3] = {1, 2, 3};
    int64_t n = 3;
    cfx_tensor *a = cfx_tensor_from_floats(v, &n, 1);
    cfx_tensor *b = cfx_add(a, a);
    cfx_tensor *c = cfx_view(b, CFX_INTS(1, 3));
    cr_assert_not_null(c);
    cr_expect_eq(cfx_tensor_get_double(c, 2), 6);
    cfx_tensor_release(c);
    cfx_tensor_release(b);
    cfx_tensor_release(a);
}

/* `cfx ops --list` prints every defined operator's schema: the built-ins must all be there,
 * which needs only cfx_dispatcher_init() (it registers the built-in table). */
Test(ops, driver_lists_the_builtins)
{
    const char *bin = getenv("CFX_BIN");
    if (!bin || !*bin)
        cr_skip_test("CFX_BIN not set");
    char cmd[512];
    snprintf(cmd, sizeof cmd, "%s ops --list", bin);
    FILE *p = popen(cmd, "r");
    cr_assert_not_null(p);
    cfx_buf out;
    cfx_buf_init(&out);
    char line[1024];
    while (fgets(line, sizeof line, p))
        cfx_buf_puts(&out, line);
    cr_expect_eq(pclose(p), 0);
    char *text = cfx_buf_take(&out);
    cr_assert_not_null(text);
    for (int i = 0; i < CFX_OPID_COUNT; i++) {
        char want[400];
        snprintf(want, sizeof want, "%s\n", cfx_ops_table.rows[i].schema);
        cr_expect(strstr(text, want) != NULL,
                  "`cfx ops --list` lacks %s (does cfx_dispatcher_init call cfx_builtin_ops_init?)",
                  cfx_ops_table.rows[i].name);
    }
    free(text);
}

/* ---- multi-output ops, lift_fresh and tensor literals -------------------------------------- */

static cfx_tensor *matrix(const float *v, int64_t rows, int64_t cols)
{
    int64_t sz[2] = {rows, cols};
    return cfx_tensor_from_floats(v, sz, 2);
}

Test(ops, max_dim_returns_values_and_indices)
{
    cfx_scope s = cfx_scope_begin();
    /* torch.tensor([[1., 3., 3.], [nan, 2., nan]]).max(1) -> ([3., nan], [1, 0]) */
    float v[6] = {1, 3, 3, NAN, 2, NAN};
    cfx_tensor *x = matrix(v, 2, 3);
    cfx_max_dim_result m = cfx_max_dim(x, 1, false);
    cr_assert_not_null(m.values, "%s", cfx_error_message());
    cr_assert_not_null(m.indices);
    cr_expect_eq(m.values->dtype, CFX_FLOAT32);
    cr_expect_eq(m.indices->dtype, CFX_INT64);
    cr_expect_eq(m.values->ndim, 1);
    cr_expect_eq(cfx_tensor_get_double(m.values, 0), 3);
    cr_expect(isnan(cfx_tensor_get_double(m.values, 1)));
    cr_expect_eq(cfx_tensor_get_double(m.indices, 0), 1, "the first of equal maxima");
    cr_expect_eq(cfx_tensor_get_double(m.indices, 1), 0, "the first NaN");
    /* dim 0, keepdim: [[nan, 3., nan]], [[1, 0, 1]] */
    cfx_max_dim_result k = cfx_max_dim(x, -2, true);
    cr_assert_not_null(k.values);
    cr_expect_eq(k.values->ndim, 2);
    cr_expect_eq(k.values->sizes[0], 1);
    cr_expect_eq(cfx_tensor_get_double(k.indices, 2), 1);
    /* meta in, meta out: the Meta kernel */
    int64_t sz[3] = {2, 3, 4};
    cfx_max_dim_result mm = cfx_max_dim(cfx_tensor_new(sz, 3, CFX_INT32, META), 1, true);
    cr_assert_not_null(mm.indices, "%s", cfx_error_message());
    cr_expect_eq(mm.values->device.type, CFX_DEVICE_META);
    cr_expect_eq(mm.values->dtype, CFX_INT32);
    cr_expect_eq(mm.indices->strides[0], 4);
    cfx_scope_end(s);
}

Test(ops, multi_output_errors_and_null_propagation)
{
    cfx_scope s = cfx_scope_begin();
    cfx_max_dim_result n = cfx_max_dim(NULL, 0, false);
    cr_expect(!n.values && !n.indices);
    cfx_native_layer_norm_result l = cfx_native_layer_norm(NULL, CFX_INTS(3), NULL, NULL, 1e-5);
    cr_expect(!l.out && !l.mean && !l.rstd);
    cr_expect_not(cfx_error_occurred(), "NULL propagates without an error");
    int64_t sz[2] = {2, 0};
    cfx_tensor *e = cfx_tensor_new(sz, 2, CFX_FLOAT32, CPU);
    int line = __LINE__ + 1;
    cfx_max_dim_result m = cfx_max_dim(e, -1, false);
    cr_expect(!m.values && !m.indices);
    cr_expect_str_eq(cfx_error_message(), "max(): Expected reduction dim 1 to have non-zero size.");
    cr_expect_str_eq(cfx_error_op(), "aten::max.dim");
    cr_expect_eq(cfx_error_site().line, line);
    cfx_scope_end(s);
}

static int boxed_max_calls;

/* A boxed-only max.dim: the wrapper must take both returns from the stack. */
static int boxed_max(void *ctx, const cfx_op *op, cfx_keyset ks, cfx_value *stack)
{
    (void)op;
    (void)ks;
    boxed_max_calls++;
    cfx_max_dim_result r = cfx_cpu_max_dim(stack[0].u.t, stack[1].u.i, stack[2].u.b);
    if (!r.values)
        return CFX_ERR;
    stack[0] = cfx_tensor_value(r.values);
    stack[1] = ctx ? cfx_int(7) : cfx_tensor_value(r.indices);
    return CFX_OK;
}

Test(ops, multi_output_boxed_kernels)
{
    cfx_set_warning_handler(quiet, NULL);
    cfx_library *lib = CFX_LIBRARY_IMPL("aten", CFX_KEY_CPU);
    cr_assert_not_null(lib, "%s", cfx_error_message());
    cr_assert_eq(CFX_IMPL_BOXED(lib, "max.dim", CFX_KEY_Undefined, boxed_max, NULL), CFX_OK, "%s",
                 cfx_error_message());
    cfx_scope s = cfx_scope_begin();
    float v[4] = {1, 5, 7, 2};
    cfx_max_dim_result m = cfx_max_dim(matrix(v, 2, 2), 1, false);
    cr_assert_not_null(m.indices, "%s", cfx_error_message());
    cr_expect_eq(boxed_max_calls, 1);
    cr_expect_eq(cfx_tensor_get_double(m.values, 1), 7);
    cr_expect_eq(cfx_tensor_get_double(m.indices, 0), 1);
    cfx_scope_end(s);
    cfx_library_free(lib);

    /* a boxed kernel returning a non-tensor */
    lib = CFX_LIBRARY_IMPL("aten", CFX_KEY_CPU);
    cr_assert_eq(CFX_IMPL_BOXED(lib, "max.dim", CFX_KEY_Undefined, boxed_max, (void *)1), CFX_OK);
    s = cfx_scope_begin();
    m = cfx_max_dim(matrix(v, 2, 2), 1, false);
    cr_expect(!m.values && !m.indices);
    cr_expect_str_eq(cfx_error_message(), "aten::max.dim: kernel returned a int as return 1, expected a Tensor");
    cfx_scope_end(s);
    cfx_library_free(lib);
    cfx_error_clear();
    s = cfx_scope_begin();
    m = cfx_max_dim(matrix(v, 2, 2), 1, false);
    cr_expect_not_null(m.indices, "the C kernel is back");
    cr_expect_eq(boxed_max_calls, 2);
    cfx_scope_end(s);
    cfx_set_warning_handler(NULL, NULL);
}

Test(ops, native_layer_norm_kernels_and_values)
{
    cfx_op *op = cfx_op_find("aten::native_layer_norm");
    cr_assert_not_null(op);
    /* 2.13's Meta kernel is the Python reference, not the composite */
    cr_expect_eq(op->table[cfx_key_table_index(CFX_KEY_Meta)].unboxed, (cfx_fnptr)cfx_meta_native_layer_norm);
    cr_expect_eq(op->table[cfx_key_table_index(CFX_KEY_CPU)].unboxed, (cfx_fnptr)cfx_cpu_native_layer_norm);
    cfx_scope s = cfx_scope_begin();
    /* torch.ops.aten.native_layer_norm(torch.tensor([[1., 2., 3.]]), [3], None, None, 1e-5) */
    float v[3] = {1, 2, 3};
    cfx_native_layer_norm_result r = cfx_native_layer_norm(matrix(v, 1, 3), CFX_INTS(3), NULL, NULL, 1e-5);
    cr_assert_not_null(r.rstd, "%s", cfx_error_message());
    cr_expect_float_eq(cfx_tensor_get_double(r.out, 0), -1.2247356176376343, 1e-6);
    cr_expect_float_eq(cfx_tensor_get_double(r.out, 1), 0.0, 1e-6);
    cr_expect_float_eq(cfx_tensor_get_double(r.mean, 0), 2.0, 1e-6);
    cr_expect_float_eq(cfx_tensor_get_double(r.rstd, 0), 1.2247356176376343, 1e-6);
    cr_expect_eq(r.mean->ndim, 2);
    cr_expect_eq(r.mean->sizes[1], 1);
    /* meta, transposed: the reference makes the input contiguous first, so the output is */
    int64_t sz[2] = {4, 3}, st[2] = {1, 4};
    cfx_tensor *x = cfx_tensor_new_strided(sz, st, 2, CFX_FLOAT32, META);
    cfx_native_layer_norm_result m = cfx_native_layer_norm(x, CFX_INTS(3), NULL, NULL, 1e-5);
    cr_assert_not_null(m.out, "%s", cfx_error_message());
    cr_expect_eq(m.out->strides[0], 3);
    cr_expect_eq(m.out->strides[1], 1);
    cr_expect_eq(m.mean->device.type, CFX_DEVICE_META);
    cfx_scope_end(s);
}

typedef struct recording_mode {
    cfx_mode base;
    int n;
    char names[8][48];
    cfx_tensor *first_arg[8];
} recording_mode;

static int record(cfx_mode *m, const cfx_op *op, cfx_keyset ks, cfx_value *stack)
{
    (void)ks;
    recording_mode *r = (recording_mode *)m;
    if (r->n < 8) {
        snprintf(r->names[r->n], sizeof r->names[0], "%s", cfx_op_name(op));
        r->first_arg[r->n] = stack[0].kind == CFX_V_TENSOR ? stack[0].u.t : NULL;
        r->n++;
    }
    return cfx_mode_redispatch(op, stack);
}

static const cfx_mode_vtable recording_vt = {"RecordingMode", record, NULL};

Test(ops, tensor_literal_reaches_modes_as_lift_fresh)
{
    recording_mode rm = {0};
    cfx_mode_init(&rm.base, &recording_vt, CFX_MODE_USER);
    cfx_scope s = cfx_scope_begin();
    cr_assert_eq(cfx_mode_push(&rm.base), CFX_OK);
    double data[4] = {1.75, -2.5, 0, 3};
    cfx_tensor *t = cfx_tensor_literal(data, (int64_t[]){2, 2}, 2, CFX_INT64);
    cfx_tensor *c = cfx_lift_fresh_copy(t);
    float v[2] = {1, 4};
    cfx_max_dim_result mx = cfx_max_dim(matrix(v, 1, 2), 1, false); /* two returns through the mode */
    cfx_mode_pop();
    cr_assert_not_null(t, "%s", cfx_error_message());
    cr_assert_not_null(c, "%s", cfx_error_message());
    cr_assert_not_null(mx.indices, "%s", cfx_error_message());
    /* as with torch.tensor under a TorchDispatchMode: lift_fresh on a plain CPU tensor; the
     * copy's own lift_fresh and clone run below the mode */
    cr_assert_eq(rm.n, 3);
    cr_expect_str_eq(rm.names[0], "aten::lift_fresh");
    cr_expect_str_eq(rm.names[1], "aten::lift_fresh_copy");
    cr_expect_str_eq(rm.names[2], "aten::max.dim");
    cr_expect_eq(rm.first_arg[0], t, "lift_fresh returns its argument");
    cr_expect_eq(t->device.type, CFX_DEVICE_CPU);
    cr_expect_eq(t->dtype, CFX_INT64);
    cr_expect_eq(cfx_tensor_get_double(t, 0), 1, "torch.tensor(1.75, dtype=long) == 1");
    cr_expect_eq(cfx_tensor_get_double(t, 1), -2);
    cr_expect_neq(c->storage, t->storage);
    cr_expect_eq(cfx_tensor_get_double(c, 3), 3);
    cr_expect_eq(cfx_tensor_get_double(mx.indices, 0), 1);
    cfx_scope_end(s);
    cfx_mode_release(&rm.base);
}

Test(ops, lift_fresh_ownership)
{
    int64_t live = cfx_tensor_live_count();
    double d[3] = {1, 0, 2};
    /* no scope: the caller owns one reference of the literal */
    cfx_tensor *t = cfx_tensor_literal(d, (int64_t[]){3}, 1, CFX_BOOL);
    cr_assert_not_null(t, "%s", cfx_error_message());
    cr_expect_eq(t->refcount, 1);
    cr_expect_eq(cfx_tensor_get_double(t, 2), 1);
    /* lift_fresh returns the same tensor as a new reference */
    cfx_tensor *u = cfx_lift_fresh(t);
    cr_expect_eq(u, t);
    cr_expect_eq(t->refcount, 2);
    cfx_tensor_release(u);
    cfx_tensor *c = cfx_lift_fresh_copy(t);
    cr_assert_not_null(c);
    cr_expect_eq(t->refcount, 1, "lift_fresh_copy drops its inner lift_fresh reference");
    cfx_tensor_release(c);
    cfx_tensor_release(t);
    cr_expect_eq(cfx_tensor_live_count(), live);
    /* in a scope the extra reference is the scope's */
    cfx_scope s = cfx_scope_begin();
    t = cfx_tensor_literal(d, (int64_t[]){3}, 1, CFX_FLOAT64);
    cr_expect_eq(cfx_lift_fresh(t), t);
    cfx_scope_end(s);
    cr_expect_eq(cfx_tensor_live_count(), live);
    /* 0-dim literal; bad sizes fail at the caller's line */
    s = cfx_scope_begin();
    double seven = 7;
    cfx_tensor *z = cfx_tensor_literal(&seven, NULL, 0, CFX_FLOAT32);
    cr_assert_not_null(z);
    cr_expect_eq(z->ndim, 0);
    cr_expect_eq(cfx_tensor_get_double(z, 0), 7);
    int line = __LINE__ + 1;
    cr_expect_null(cfx_tensor_literal(d, (int64_t[]){-1}, 1, CFX_FLOAT32));
    cr_expect(cfx_error_occurred());
    cr_expect_eq(cfx_error_site().line, line);
    cfx_scope_end(s);
    cfx_error_clear();
}

static int lift_calls, clone_calls;
static cfx_value clone_format;

static int counting_lift(void *ctx, const cfx_op *op, cfx_keyset ks, cfx_value *stack)
{
    (void)ctx, (void)op, (void)ks;
    lift_calls++;
    stack[0] = cfx_tensor_value(cfx_kernel_lift_fresh(stack[0].u.t));
    return CFX_OK;
}

static int counting_clone(void *ctx, const cfx_op *op, cfx_keyset ks, cfx_value *stack)
{
    (void)ctx, (void)op, (void)ks;
    clone_calls++;
    clone_format = stack[1];
    cfx_tensor *r = cfx_kernel_clone(stack[0].u.t, stack[1]);
    if (!r)
        return CFX_ERR;
    stack[0] = cfx_tensor_value(r);
    return CFX_OK;
}

/* 2.13's lift_fresh_copy is lift_fresh then clone(memory_format=torch.contiguous_format),
 * both dispatched: kernels registered on them see the calls (checked against torch.library
 * overrides on CPU). */
Test(ops, lift_fresh_copy_dispatches_lift_fresh_and_clone)
{
    cfx_library *lib = CFX_LIBRARY_IMPL("aten", CFX_KEY_CPU);
    cr_assert_not_null(lib);
    cr_assert_eq(CFX_IMPL_BOXED(lib, "lift_fresh", CFX_KEY_Undefined, counting_lift, NULL), CFX_OK);
    cr_assert_eq(CFX_IMPL_BOXED(lib, "clone", CFX_KEY_Undefined, counting_clone, NULL), CFX_OK);
    cfx_scope s = cfx_scope_begin();
    float v[6] = {1, 2, 3, 4, 5, 6};
    cfx_tensor *x = cfx_t(matrix(v, 2, 3));
    cfx_tensor *c = cfx_lift_fresh_copy(x);
    cr_assert_not_null(c, "%s", cfx_error_message());
    cr_expect_eq(lift_calls, 1);
    cr_expect_eq(clone_calls, 1);
    cr_expect(clone_format.kind == CFX_V_MEMORY_FORMAT && clone_format.u.memory_format == CFX_CONTIGUOUS_FORMAT,
              "clone is asked for contiguous_format");
    cr_expect_eq(c->strides[0], 2, "the copy is contiguous, not the transposed layout");
    cr_expect_eq(c->strides[1], 1);
    cr_expect_eq(cfx_tensor_get_double(c, 1), 4);
    cfx_scope_end(s);
    cfx_library_free(lib);
}
