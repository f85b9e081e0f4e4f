/* test_ops_golden.c - every built-in operator against PyTorch 2.13, case by case.
 *
 * tests/data/ops_cases.json (tools/interop/gen_ops.py) holds ~3000 calls of the built-in ops
 * with what PyTorch returned: result dtype, device, sizes, strides, storage offset, aliasing
 * and version-counter bumps, values for CPU results, or the exact error text; for the
 * multi-output ops (max.dim, native_layer_norm) one such record per return, for the ops
 * returning a number (_local_scalar_dense) the number. Each case runs on CPU and on meta
 * tensors (and "mixed" device cases as written), twice: through the typed entry point
 * cfx_op_<id> and through cfx_op_call (boxed, via the libffi adapter). Float values compare
 * within a per-case tolerance when the case gives one (layer norm: PyTorch accumulates in
 * float, cfx in double). One Criterion test per operator, and every operator of the table
 * must have cases. */
#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfx.h"
#include "dispatch/ops_table.h"
#include "dispatch/ops_gen_kernels.h"
#include "dispatch/wrapped_internal.h"
#include "tests/test_util.h"

/* gen_ops.py writes the cases of the shape, reduction, creation and indexing ops to files of
 * their own (tools/interop/ops_shape_cases.py), one per group, and those of the matrix and nn
 * ops to another (tools/interop/ops_nn_cases.py) */
static const char *const golden_paths[] = {"tests/data/ops_cases.json", "tests/data/ops_shape_cases.json",
                                           "tests/data/ops_reduce_cases.json", "tests/data/ops_creation_cases.json",
                                           "tests/data/ops_index_cases.json", "tests/data/ops_nn_cases.json",
                                           "tests/data/ops_pointwise_cases.json", "tests/data/ops_backward_cases.json",
                                           "tests/data/ops_fill_cases.json", "tests/data/ops_scatter_cases.json",
                                           "tests/data/ops_pool3d_cases.json", "tests/data/ops_bwd_cases.json",
                                           "tests/data/ops_fft_cases.json",
                                           "tests/data/ops_breadth_cases.json",
                                           "tests/data/ops_random_cases.json",
                                           "tests/data/ops_nn_extra_cases.json"};
static const char *golden_path = "tests/data/ops_*cases.json";

static cJSON *load_cases(const char *path)
{
    char *text = read_file(path);
    cr_assert_not_null(text, "missing %s (run tools/interop/gen_ops.py)", path);
    cJSON *root = cJSON_Parse(text);
    free(text);
    cr_assert_not_null(root, "bad JSON in %s", path);
    return root;
}

/* ---- arguments ---------------------------------------------------------------------------- */

enum { MAXA = 12, MAXL = 64 };

typedef struct args {
    int n;
    cfx_value v[MAXA];
    cfx_value tensors[MAXA][MAXL]; /* the items of a Tensor[] argument */
    cfx_tensor *base[MAXA];
    int64_t ints[MAXA][MAXL];
    cfx_value items[MAXA][MAXL];
    cfx_int_list lists[MAXA];
    cfx_generator *gens[MAXA];
} args;

static bool parse_dtype(const char *s, cfx_dtype *out) { return cfx_dtype_parse(s, out); }

/* A JSON integer as int64 (cJSON holds numbers as doubles: INT64_MAX, slice's "to the end",
 * arrives as 2^63). */
static int64_t int_of(const cJSON *e)
{
    double d = e->valuedouble;
    return d >= 9223372036854775807.0 ? INT64_MAX : d <= -9223372036854775808.0 ? INT64_MIN : (int64_t)d;
}

static int ints_of(const cJSON *arr, int64_t *out, int cap)
{
    int n = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, arr)
    {
        cr_assert(n < cap);
        out[n++] = int_of(e);
    }
    return n;
}

static double number_of(const cJSON *e)
{
    if (cJSON_IsString(e)) {
        if (!strcmp(e->valuestring, "nan"))
            return NAN;
        return e->valuestring[0] == '-' ? -INFINITY : INFINITY;
    }
    return e->valuedouble;
}

static cfx_device device_named(const char *name, const char *run)
{
    if (!strcmp(name, "auto"))
        name = run;
    return cfx_device_make(!strcmp(name, "meta") ? CFX_DEVICE_META : CFX_DEVICE_CPU);
}

static void fill(cfx_tensor *t, const cJSON *values)
{
    void *p = cfx_tensor_data(t);
    int i = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, values)
    {
        double v = number_of(e);
        switch ((cfx_dtype)t->dtype) {
        case CFX_FLOAT32: ((float *)p)[i] = (float)v; break;
        case CFX_FLOAT64: ((double *)p)[i] = v; break;
        case CFX_INT64: ((int64_t *)p)[i] = (int64_t)v; break;
        case CFX_INT32: ((int32_t *)p)[i] = (int32_t)v; break;
        case CFX_BOOL: ((bool *)p)[i] = v != 0; break;
        case CFX_UINT8: ((uint8_t *)p)[i] = (uint8_t)v; break;
        case CFX_INT8: ((int8_t *)p)[i] = (int8_t)v; break;
        case CFX_INT16: ((int16_t *)p)[i] = (int16_t)v; break;
        case CFX_COMPLEX64: ((float *)p)[i] = (float)v; break; /* interleaved real, imaginary */
        case CFX_COMPLEX128: ((double *)p)[i] = v; break;
        }
        i++;
    }
}

/* One tensor argument: a view of a new base (or of argument "share"'s base). *base_out gets
 * the base. */
static cfx_tensor *build_tensor(const cJSON *ja, const char *run, cfx_tensor *const *bases, cfx_tensor **base_out)
{
    cfx_dtype dt;
    cr_assert(parse_dtype(cJSON_GetObjectItem(ja, "dtype")->valuestring, &dt));
    int64_t sizes[MAXL], strides[MAXL];
    int nd = ints_of(cJSON_GetObjectItem(ja, "sizes"), sizes, MAXL);
    ints_of(cJSON_GetObjectItem(ja, "strides"), strides, MAXL);
    int64_t off = (int64_t)cJSON_GetObjectItem(ja, "offset")->valuedouble;
    const cJSON *share = cJSON_GetObjectItem(ja, "share");
    cfx_tensor *base;
    if (share) {
        base = bases[share->valueint];
    } else {
        const cJSON *storage = cJSON_GetObjectItem(ja, "storage");
        int64_t len = cJSON_GetArraySize(storage);
        if (cfx_dtype_is_complex(dt))
            len /= 2; /* a complex storage lists real and imaginary parts */
        cfx_device dev = device_named(cJSON_GetObjectItem(ja, "dev")->valuestring, run);
        base = cfx_tensor_new(&len, 1, dt, dev);
        cr_assert_not_null(base, "%s", cfx_error_message());
        if (dev.type == CFX_DEVICE_CPU)
            fill(base, storage);
    }
    *base_out = base;
    cfx_tensor *t = cfx_tensor_new_view(base, sizes, strides, nd, off);
    cr_assert_not_null(t, "%s", cfx_error_message());
    return t;
}

/* Builds the case's arguments for a run; tensors are autoreleased into the caller's scope. */
static void build(const cJSON *jargs, const char *run, args *a)
{
    memset(a, 0, sizeof *a);
    const cJSON *ja;
    cJSON_ArrayForEach(ja, jargs)
    {
        int i = a->n++;
        cr_assert(i < MAXA);
        const char *k = cJSON_GetObjectItem(ja, "k")->valuestring;
        const cJSON *v = cJSON_GetObjectItem(ja, "v");
        if (!strcmp(k, "tensor")) {
            a->v[i] = cfx_tensor_value(build_tensor(ja, run, a->base, &a->base[i]));
        } else if (!strcmp(k, "tensors")) {
            int n = 0;
            const cJSON *jt;
            cJSON_ArrayForEach(jt, v)
            {
                cr_assert(n < MAXL);
                cfx_tensor *unused;
                bool none = !strcmp(cJSON_GetObjectItem(jt, "k")->valuestring, "none"); /* Tensor?[] */
                a->tensors[i][n++] = none ? cfx_none() : cfx_tensor_value(build_tensor(jt, run, a->base, &unused));
            }
            a->v[i] = cfx_list(a->tensors[i], (uint32_t)n);
        } else if (!strcmp(k, "int")) {
            a->v[i] = cfx_int(int_of(v));
        } else if (!strcmp(k, "double")) {
            a->v[i] = cfx_double(number_of(v));
        } else if (!strcmp(k, "bool")) {
            a->v[i] = cfx_bool(cJSON_IsTrue(v));
        } else if (!strcmp(k, "str")) {
            a->v[i] = cfx_string(v->valuestring);
        } else if (!strcmp(k, "none")) {
            a->v[i] = cfx_none();
        } else if (!strcmp(k, "ints")) {
            int n = ints_of(v, a->ints[i], MAXL);
            for (int j = 0; j < n; j++)
                a->items[i][j] = cfx_int(a->ints[i][j]);
            a->v[i] = cfx_list(a->items[i], (uint32_t)n);
            a->lists[i] = cfx_ints(a->ints[i], n);
        } else if (!strcmp(k, "bools")) { /* bool[N]: the backward ops' output_mask */
            int n = 0;
            const cJSON *e;
            cJSON_ArrayForEach(e, v)
            {
                cr_assert(n < MAXL);
                a->items[i][n++] = cfx_bool(cJSON_IsTrue(e) || (cJSON_IsNumber(e) && e->valueint));
            }
            a->v[i] = cfx_list(a->items[i], (uint32_t)n);
        } else if (!strcmp(k, "floats")) { /* float[] (upsample's scale_factors) */
            int n = 0;
            const cJSON *jf;
            cJSON_ArrayForEach(jf, v)
            {
                cr_assert(n < MAXL);
                a->items[i][n++] = cfx_double(number_of(jf));
            }
            a->v[i] = cfx_list(a->items[i], (uint32_t)n);
        } else if (!strcmp(k, "dtype")) {
            a->v[i] = cfx_dtype_value((cfx_dtype)v->valueint);
        } else if (!strcmp(k, "device")) {
            a->v[i] = cfx_device_value(device_named(v->valuestring, run));
        } else if (!strcmp(k, "memfmt")) {
            a->v[i] = cfx_memory_format_value((cfx_memory_format)v->valueint);
        } else if (!strcmp(k, "layout")) {
            a->v[i] = cfx_layout_value(v->valueint);
        } else if (!strcmp(k, "generator")) { /* torch.Generator().manual_seed(v), fresh per run */
            a->gens[i] = cfx_generator_new();
            cr_assert_not_null(a->gens[i]);
            cfx_generator_manual_seed(a->gens[i], (uint64_t)int_of(v));
            a->v[i] = cfx_generator_value(a->gens[i]);
        } else {
            cr_assert_fail("unknown argument kind %s", k);
        }
        if (a->v[i].kind != CFX_V_LIST)
            a->lists[i] = (cfx_int_list){NULL, -1};
    }
}

/* ---- calling ---------------------------------------------------------------------------------- */

enum { MAXR = 4 }; /* _embedding_bag returns four tensors */

static int n_returns(cfx_opid id) { return cfx_op_schema(cfx_builtin_op(id))->n_returns; }

/* stack -> out[0..n_returns); all None on error */
static void take_returns(cfx_opid id, const cfx_value *stack, cfx_value *out)
{
    for (int i = 0; i < n_returns(id); i++)
        out[i] = stack[i];
}

/* Through the typed entry point cfx_op_<id>: the op's row knows it, and an adapter built from
 * the schema calls it from boxed values (the site is its leading argument). */
static void call_typed(cfx_opid id, args *a, cfx_value *out)
{
    cfx_op *op = cfx_builtin_op(id);
    cfx_value stack[MAXA];
    memcpy(stack, a->v, sizeof stack);
    const cfx_schema *s = cfx_op_schema(op);
    for (int i = a->n; i < s->n_args; i++)
        stack[i] = s->args[i].default_value;
    /* a number for a Tensor, where torch.ops takes one, is what a C user passes as cfx_num() */
    for (int i = 0; i < a->n && cfx_allows_numbers_as_tensors(s); i++)
        if (cfx_value_is_number(stack[i]) && s->args[i].type->kind == CFX_TYPE_TENSOR)
            stack[i] = cfx_tensor_value(cfx_num_value(stack[i]));
    cfx_adapter *ad = cfx_adapter_new_lead(s, cfx_ops_table.rows[id].entry);
    cr_assert_not_null(ad, "%s", cfx_error_message());
    int rc = cfx_adapter_call_lead(ad, (void *)CFX_HERE, stack);
    cfx_adapter_free(ad);
    if (rc == CFX_OK)
        take_returns(id, stack, out);
}

static void call_boxed(cfx_opid id, args *a, cfx_value *out)
{
    cfx_value stack[MAXA];
    memcpy(stack, a->v, sizeof stack);
    if (cfx_op_call(cfx_builtin_op(id), stack, a->n, COUNT_OF(stack)) == CFX_OK)
        take_returns(id, stack, out);
}

/* ---- checking --------------------------------------------------------------------------------- */

static int failures;

#define FAIL(...)                                              \
    do {                                                       \
        if (failures++ < 40) {                                 \
            fprintf(stderr, "  %s [%s, %s]: ", name, run, how); \
            fprintf(stderr, __VA_ARGS__);                      \
            fputc('\n', stderr);                               \
        }                                                      \
        return;                                                \
    } while (0)

/* Part part (0 real, 1 imaginary) of element linear_index (row-major) of a complex tensor. */
static double complex_part(const cfx_tensor *t, int64_t linear_index, int part)
{
    int64_t off = t->storage_offset;
    for (int d = t->ndim - 1; d >= 0; d--) {
        off += linear_index % t->sizes[d] * t->strides[d];
        linear_index /= t->sizes[d];
    }
    const char *p = t->storage->data;
    double sign = (part == 1 && cfx_is_conj(t) ? -1 : 1) * (cfx_is_neg(t) ? -1 : 1); /* a conj/neg view's values */
    return sign * (t->dtype == CFX_COMPLEX64 ? ((const float *)p)[2 * off + part] : ((const double *)p)[2 * off + part]);
}

/* A case's own tolerance for float values: atol + rtol * |want| (atol < 0: none given). */
static double case_atol = -1, case_rtol;

static bool close_enough(double got, double want, cfx_dtype dt)
{
    if (isnan(want))
        return isnan(got);
    if (isinf(want))
        return got == want;
    if (case_atol >= 0 && cfx_dtype_is_floating(dt))
        return fabs(got - want) <= case_atol + case_rtol * fabs(want);
    if (dt == CFX_FLOAT32)
        return fabs(got - want) <= 1e-6 + 2e-6 * fabs(want);
    if (dt == CFX_FLOAT64)
        return fabs(got - want) <= 1e-12 + 1e-12 * fabs(want);
    return got == want;
}

/* A number result (an op returning a Scalar) against its record {"k": kind, "v": value}. */
static void check_scalar(const char *name, const char *run, const char *how, const cJSON *want, cfx_value r)
{
    const char *k = cJSON_GetObjectItem(want, "k")->valuestring;
    double w = number_of(cJSON_GetObjectItem(want, "v"));
    cfx_value_kind kind = !strcmp(k, "int") ? CFX_V_INT : !strcmp(k, "bool") ? CFX_V_BOOL : CFX_V_DOUBLE;
    if (r.kind != kind)
        FAIL("a %s result, want a %s", cfx_value_kind_name((cfx_value_kind)r.kind), k);
    double got = cfx_value_to_double(r);
    if (!(got == w || (isnan(got) && isnan(w))))
        FAIL("value %.17g, want %.17g", got, w);
}

/* One result r against its record want (which is not an error). */
static void check_result(const char *name, const char *run, const char *how, const cJSON *want, cfx_value rv,
                         const args *a, const uint32_t *versions)
{
    const cJSON *scalar = cJSON_GetObjectItem(want, "scalar");
    if (scalar) {
        check_scalar(name, run, how, scalar, rv);
        return;
    }
    if (cJSON_GetObjectItem(want, "none")) { /* an undefined Tensor return (output_mask False) */
        if (rv.kind != CFX_V_NONE)
            FAIL("expected None, got a %s", cfx_value_kind_name((cfx_value_kind)rv.kind));
        return;
    }
    if (rv.kind != CFX_V_TENSOR || !rv.u.t)
        FAIL("unexpected error: %s", cfx_error_message() ? cfx_error_message() : "(no result without error)");
    cfx_tensor *r = rv.u.t;
    cfx_dtype dt;
    parse_dtype(cJSON_GetObjectItem(want, "dtype")->valuestring, &dt);
    if ((cfx_dtype)r->dtype != dt)
        FAIL("dtype %s, want %s", cfx_dtype_name((cfx_dtype)r->dtype), cfx_dtype_name(dt));
    const char *dev = cJSON_GetObjectItem(want, "device")->valuestring;
    if (strcmp(cfx_device_type_name((cfx_device_type)r->device.type), dev))
        FAIL("device %s, want %s", cfx_device_type_name((cfx_device_type)r->device.type), dev);
    int64_t sizes[MAXL], strides[MAXL];
    int nd = ints_of(cJSON_GetObjectItem(want, "sizes"), sizes, MAXL);
    ints_of(cJSON_GetObjectItem(want, "strides"), strides, MAXL);
    if (r->ndim != nd || memcmp(r->sizes, sizes, (size_t)nd * 8))
        FAIL("sizes differ (ndim %d, want %d)", r->ndim, nd);
    if (memcmp(r->strides, strides, (size_t)nd * 8)) {
        cfx_buf b;
        cfx_buf_init(&b);
        for (int i = 0; i < nd; i++)
            cfx_buf_printf(&b, "%lld/%lld ", (long long)r->strides[i], (long long)strides[i]);
        char *s = cfx_buf_take(&b);
        fprintf(stderr, "  %s [%s, %s]: strides got/want: %s\n", name, run, how, s);
        free(s);
        failures++;
        return;
    }
    int64_t off = (int64_t)cJSON_GetObjectItem(want, "offset")->valuedouble;
    if (r->storage_offset != off)
        FAIL("storage offset %lld, want %lld", (long long)r->storage_offset, (long long)off);
    int alias = cJSON_GetObjectItem(want, "alias")->valueint;
    for (int i = 0; i < a->n; i++) {
        if (a->v[i].kind != CFX_V_TENSOR)
            continue;
        bool shares = a->v[i].u.t->storage == r->storage;
        if (alias >= 0 && i == alias && !shares)
            FAIL("result should share argument %d's storage", i);
        if (alias < 0 && shares)
            FAIL("result shares argument %d's storage", i);
    }
    if (alias >= 0) {
        bool bumped = cJSON_IsTrue(cJSON_GetObjectItem(want, "version_bumped"));
        if ((cfx_tensor_version(a->v[alias].u.t) != versions[alias]) != bumped)
            FAIL("version counter %s", bumped ? "not bumped" : "bumped");
    }
    if (r->device.type == CFX_DEVICE_META && cfx_tensor_data(r))
        FAIL("a meta result has data");
    const cJSON *values = cJSON_GetObjectItem(want, "values");
    if (!cJSON_IsArray(values))
        return;
    int64_t i = 0;
    const cJSON *e;
    bool cplx = cfx_dtype_is_complex(dt);
    cJSON_ArrayForEach(e, values)
    {
        /* complex values are listed as real, imaginary pairs: compared as two reals */
        double got = cplx ? complex_part(r, i / 2, (int)(i % 2)) : (cfx_is_neg(r) ? -1 : 1) * cfx_tensor_get_double(r, i), w = number_of(e);
        if (!close_enough(got, w, cplx ? cfx_dtype_to_real(dt) : dt))
            FAIL("value[%lld] = %.17g, want %.17g", (long long)i, got, w);
        i++;
    }
    if (cplx)
        i /= 2;
    if (i != cfx_tensor_numel(r))
        FAIL("numel %lld, want %lld", (long long)cfx_tensor_numel(r), (long long)i);
}

static void check(const char *name, const char *run, const char *how, const cJSON *want, const cfx_value *r,
                  int nret, const args *a, const uint32_t *versions)
{
    const cJSON *err = cJSON_GetObjectItem(want, "error");
    if (err) {
        for (int i = 0; i < nret; i++)
            if (r[i].kind != CFX_V_NONE)
                FAIL("expected error '%s', got a result", err->valuestring);
        const char *msg = cfx_error_message();
        const char *want_msg = err->valuestring;
        if (!msg || strcmp(msg, want_msg))
            FAIL("error\n    want: %s\n    got:  %s", want_msg, msg ? msg : "(none)");
        return;
    }
    const cJSON *items = cJSON_GetObjectItem(want, "list");
    if (items) { /* a Tensor[] return */
        if (r[0].kind != CFX_V_LIST)
            FAIL("expected a list, got a %s (%s)", cfx_value_kind_name((cfx_value_kind)r[0].kind),
                 cfx_error_message() ? cfx_error_message() : "no error");
        if ((int)r[0].len != cJSON_GetArraySize(items))
            FAIL("a list of %u tensors, want %d", r[0].len, cJSON_GetArraySize(items));
        int i = 0;
        const cJSON *w;
        cJSON_ArrayForEach(w, items)
        {
            int before = failures;
            check_result(name, run, how, w, r[0].u.items[i], a, versions);
            if (failures != before) {
                fprintf(stderr, "    (in list item %d)\n", i);
                return;
            }
            i++;
        }
        return;
    }
    const cJSON *rets = cJSON_GetObjectItem(want, "returns");
    if (!rets) {
        if (nret != 1)
            FAIL("the golden has one result, the op %d", nret);
        check_result(name, run, how, want, r[0], a, versions);
        return;
    }
    if (cJSON_GetArraySize(rets) != nret)
        FAIL("the golden has %d results, the op %d", cJSON_GetArraySize(rets), nret);
    int i = 0;
    const cJSON *w;
    cJSON_ArrayForEach(w, rets)
    {
        int before = failures;
        check_result(name, run, how, w, r[i], a, versions);
        if (failures != before) {
            fprintf(stderr, "    (in return %d)\n", i);
            return;
        }
        i++;
    }
}

static void run_once(const char *name, cfx_opid id, const cJSON *jargs, const char *run, const cJSON *want,
                     bool boxed)
{
    cfx_error_clear();
    cfx_scope s = cfx_scope_begin();
    args a;
    build(jargs, run, &a);
    uint32_t versions[MAXA] = {0};
    for (int i = 0; i < a.n; i++)
        if (a.v[i].kind == CFX_V_TENSOR)
            versions[i] = cfx_tensor_version(a.v[i].u.t);
    cfx_value r[MAXR] = {cfx_none(), cfx_none(), cfx_none(), cfx_none()};
    if (boxed)
        call_boxed(id, &a, r);
    else
        call_typed(id, &a, r);
    check(name, run, boxed ? "boxed" : "typed", want, r, n_returns(id), &a, versions);
    for (int i = 0; i < a.n; i++)
        cfx_generator_free(a.gens[i]);
    cfx_scope_end(s);
    cfx_error_clear();
}

static void run_op(cfx_opid id)
{
    cr_assert_eq(cfx_builtin_ops_init(), CFX_OK, "%s", cfx_error_message());
    const char *opname = cfx_ops_table.rows[id].id;
    int ncases = 0, nruns = 0;
    failures = 0;
    for (size_t f = 0; f < COUNT_OF(golden_paths); f++) {
    cJSON *root = load_cases(golden_paths[f]);
    const cJSON *c;
    cJSON_ArrayForEach(c, cJSON_GetObjectItem(root, "cases"))
    {
        if (strcmp(cJSON_GetObjectItem(c, "op")->valuestring, opname))
            continue;
        ncases++;
        const char *name = cJSON_GetObjectItem(c, "name")->valuestring;
        const cJSON *jargs = cJSON_GetObjectItem(c, "args");
        const cJSON *tol = cJSON_GetObjectItem(c, "tol");
        case_atol = tol ? cJSON_GetArrayItem(tol, 0)->valuedouble : -1;
        case_rtol = tol ? cJSON_GetArrayItem(tol, 1)->valuedouble : 0;
        const cJSON *run;
        cJSON_ArrayForEach(run, cJSON_GetObjectItem(c, "runs"))
        {
            run_once(name, id, jargs, run->string, run, false);
            run_once(name, id, jargs, run->string, run, true);
            nruns++;
        }
    }
    cJSON_Delete(root);
    }
    cr_assert_gt(ncases, 0, "no golden cases for %s in %s (add them to tools/interop/gen_ops.py)", opname,
                 golden_path);
    cr_log_info("%s: %d cases, %d runs, %d failures", opname, ncases, nruns, failures);
    cr_expect_eq(failures, 0, "%s: %d of %d runs differ from PyTorch (details on stderr)", opname, failures,
                 2 * nruns);
}

/* One run per built-in operator. */
ParameterizedTestParameters(ops_golden, op)
{
    static int ids[CFX_OPID_COUNT];
    for (int i = 0; i < CFX_OPID_COUNT; i++)
        ids[i] = i;
    return cr_make_param_array(int, ids, CFX_OPID_COUNT);
}

ParameterizedTest(int *id, ops_golden, op) { run_op((cfx_opid)*id); }
