/* main.c - cfx-parity: runs the parity programs (programs.def) and the model zoo, writing for
 * each what tools/interop/check_torch.py compares with PyTorch 2.13:
 *
 *   cfx-parity OUTDIR [NAME...]    -> OUTDIR/NAME.json
 *
 * {"name", "inputs": the program's input spec (null for a model), "real" and "fake": the
 * make_fx graphs as cfx graph JSON (docs/graph-json.md, without attribute data), "output": the
 * eager result {"dtype", "shape", "values"} (row-major; floats as JSON numbers or "NaN"...),
 * "error": null or the first error's text}. Exit status 0 unless the files cannot be written;
 * a program's failure is data for the checker, which reports it. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfx.h"
#include "ir/json.h"
#include "tools/models/models.h"
#include "tools/parity/parity.h"
#include "tracer/make_fx.h"

enum { MAX_ARGS = 6 };

/* One input from its spec token ("f:3,4", "d:2", "f:4,3^t", "i10:4"), seed = its position. */
static cfx_tensor *make_input(const char *tok, int seed)
{
    char kind = tok[0];
    long hi = kind == 'i' ? strtol(tok + 1, NULL, 10) : 0;
    const char *p = strchr(tok, ':');
    int64_t sizes[CFX_MAX_DIMS];
    int n = 0;
    for (p = p ? p + 1 : tok; *p && *p != '^' && *p != ' ' && n < CFX_MAX_DIMS;) {
        sizes[n++] = strtoll(p, (char **)&p, 10);
        if (*p == ',')
            p++;
    }
    bool transposed = !strncmp(p, "^t", 2) && n >= 2;
    if (transposed) { /* the example of the swapped shape, then a transposed view */
        int64_t s = sizes[n - 1];
        sizes[n - 1] = sizes[n - 2], sizes[n - 2] = s;
    }
    int64_t numel = 1;
    for (int i = 0; i < n; i++)
        numel *= sizes[i];
    cfx_tensor *t = NULL;
    if (kind == 'f')
        t = cfx_model_example_tensor(sizes, n, seed);
    else if (kind == 'i' || kind == 'd') {
        /* the same values as cfx_model_example_tensor's (float64), or (i * 7 + seed * 13) % hi */
        double *dv = malloc((size_t)(numel + 1) * sizeof *dv);
        int64_t *iv = malloc((size_t)(numel + 1) * sizeof *iv);
        for (int64_t i = 0; dv && iv && i < numel; i++) {
            iv[i] = hi > 0 ? (i * 7 + seed * 13) % hi : 0;
            dv[i] = (double)((i * 7 + seed * 13) % 32 - 16) / 16.0;
        }
        if (dv && iv)
            t = kind == 'i' ? cfx_tensor_from_int64s(iv, sizes, n) : cfx_tensor_from_doubles(dv, sizes, n);
        free(dv);
        free(iv);
    }
    return t && transposed ? cfx_transpose(t, -2, -1) : t;
}

/* The eager call, by arity (a model's module first). */
static cfx_tensor *call(cfx_fnptr fn, cfx_module *m, cfx_tensor **a, int n)
{
    typedef cfx_tensor *(*f0)(void);
    typedef cfx_tensor *(*f1)(void *);
    typedef cfx_tensor *(*f2)(void *, void *);
    typedef cfx_tensor *(*f3)(void *, void *, void *);
    typedef cfx_tensor *(*f4)(void *, void *, void *, void *);
    typedef cfx_tensor *(*f5)(void *, void *, void *, void *, void *);
    void *v[MAX_ARGS + 1];
    int k = 0;
    if (m)
        v[k++] = m;
    for (int i = 0; i < n; i++)
        v[k++] = a[i];
    switch (k) {
    case 0: return ((f0)fn)();
    case 1: return ((f1)fn)(v[0]);
    case 2: return ((f2)fn)(v[0], v[1]);
    case 3: return ((f3)fn)(v[0], v[1], v[2]);
    case 4: return ((f4)fn)(v[0], v[1], v[2], v[3]);
    case 5: return ((f5)fn)(v[0], v[1], v[2], v[3], v[4]);
    }
    return NULL;
}

static void put_error(cfx_buf *b, const char *what)
{
    const char *msg = cfx_error_message();
    cfx_buf_printf(b, "\"error\": \"%s: ", what);
    for (const char *p = msg ? msg : "(no message)"; *p; p++) {
        if (*p == '"' || *p == '\\')
            cfx_buf_putc(b, '\\'), cfx_buf_putc(b, *p);
        else if ((unsigned char)*p < 0x20)
            cfx_buf_puts(b, " ");
        else
            cfx_buf_putc(b, *p);
    }
    cfx_buf_puts(b, "\"");
    cfx_error_clear();
}

static void put_output(cfx_buf *b, const cfx_tensor *t)
{
    cfx_buf_printf(b, "\"output\": {\"dtype\": \"%s\", \"shape\": [", cfx_dtype_torch_name((cfx_dtype)t->dtype));
    for (int i = 0; i < t->ndim; i++)
        cfx_buf_printf(b, "%s%lld", i ? ", " : "", (long long)t->sizes[i]);
    cfx_buf_puts(b, "], \"values\": [");
    int64_t numel = cfx_tensor_numel(t), idx[CFX_MAX_DIMS] = {0};
    const char *base = cfx_tensor_data(t);
    for (int64_t e = 0; e < numel; e++) {
        int64_t off = 0;
        for (int d = 0; d < t->ndim; d++)
            off += idx[d] * t->strides[d];
        double v = 0;
        switch (t->dtype) {
        case CFX_FLOAT32: v = ((const float *)base)[off]; break;
        case CFX_FLOAT64: v = ((const double *)base)[off]; break;
        case CFX_INT64: v = (double)((const int64_t *)base)[off]; break;
        case CFX_INT32: v = ((const int32_t *)base)[off]; break;
        case CFX_BOOL: v = ((const bool *)base)[off]; break;
        case CFX_UINT8: v = ((const uint8_t *)base)[off]; break;
        case CFX_INT8: v = ((const int8_t *)base)[off]; break;
        case CFX_INT16: v = ((const int16_t *)base)[off]; break;
        }
        if (e)
            cfx_buf_puts(b, ", ");
        if (isnan(v))
            cfx_buf_puts(b, "\"NaN\"");
        else if (isinf(v))
            cfx_buf_puts(b, v > 0 ? "\"Infinity\"" : "\"-Infinity\"");
        else
            cfx_buf_printf(b, "%.17g", v);
        for (int d = t->ndim - 1; d >= 0 && ++idx[d] == t->sizes[d]; d--)
            idx[d] = 0;
    }
    cfx_buf_puts(b, "]}");
}

/* Traces and runs one program or model into b (a JSON object). */
static void run_one(cfx_buf *b, const char *name, const char *inputs, const char *signature, cfx_fnptr fn,
                    const cfx_model *model)
{
    cfx_scope s = cfx_scope_begin();
    cfx_module *m = NULL;
    cfx_value args[MAX_ARGS];
    cfx_tensor *targs[MAX_ARGS];
    int n = 0;
    bool ok = true;
    if (model) {
        n = model->setup(&m, args);
        ok = n >= 0 && n <= MAX_ARGS;
    } else {
        for (const char *p = inputs; ok && *p; n++) {
            targs[n] = make_input(p, n);
            ok = targs[n] != NULL && n < MAX_ARGS - 1;
            args[n] = cfx_tensor_value(targs[n]);
            p = strchr(p, ' ');
            p = p ? p + 1 : "";
        }
    }
    for (int i = 0; model && ok && i < n; i++)
        targs[i] = args[i].u.t;
    cfx_buf_printf(b, "{\"name\": \"%s\", \"inputs\": ", name);
    if (inputs)
        cfx_buf_printf(b, "\"%s\", ", inputs);
    else
        cfx_buf_puts(b, "null, ");
    const char *modes[2] = {"real", "fake"};
    for (int k = 0; ok && k < 2; k++) {
        cfx_make_fx_options opts = {k ? CFX_TRACE_FAKE : CFX_TRACE_REAL, m, NULL, false};
        cfx_graph_module *gm = cfx_make_fx(fn, signature, args, n, &opts);
        char *json = NULL;
        if (!gm || cfx_graph_module_to_json(gm, CFX_JSON_NO_DATA, &json) != CFX_OK) {
            put_error(b, modes[k]);
            ok = false;
        } else {
            cfx_buf_printf(b, "\"%s\": %s, ", modes[k], json);
        }
        free(json);
        cfx_graph_module_free(gm);
    }
    if (ok) {
        cfx_tensor *out = call(fn, m, targs, n);
        if (out)
            put_output(b, out);
        else
            put_error(b, "eager");
    } else if (n < 0 || !model) {
        if (!strstr(b->data ? b->data : "", "\"error\""))
            put_error(b, "setup");
    }
    cfx_buf_puts(b, "}\n");
    cfx_module_free(m);
    cfx_scope_end(s);
}

static bool wanted(const char *name, int argc, char **argv)
{
    if (argc <= 2)
        return true;
    for (int i = 2; i < argc; i++)
        if (!strcmp(argv[i], name))
            return true;
    return false;
}

static int write_one(const char *dir, const char *name, const cfx_buf *b)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.json", dir, name);
    FILE *f = fopen(path, "w");
    if (!f || fwrite(b->data, 1, b->len, f) != b->len) {
        fprintf(stderr, "cfx-parity: cannot write %s\n", path);
        if (f)
            fclose(f);
        return 1;
    }
    return fclose(f) ? 1 : 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: cfx-parity OUTDIR [NAME...]\n");
        return 2;
    }
    if (cfx_builtin_ops_init() != CFX_OK) {
        fprintf(stderr, "cfx-parity: %s\n", cfx_error_message());
        return 1;
    }
    int rc = 0;
    char sig[256];
    for (int i = 0; i < parity_program_count && !rc; i++) {
        const parity_program *p = &parity_programs[i];
        if (!wanted(p->name, argc, argv))
            continue;
        /* "(Tensor a, Tensor b) -> Tensor", one parameter per input token */
        size_t len = (size_t)snprintf(sig, sizeof sig, "(");
        int k = 0;
        for (const char *q = p->inputs; *q; k++) {
            len += (size_t)snprintf(sig + len, sizeof sig - len, "%sTensor %c", k ? ", " : "", 'a' + k);
            q = strchr(q, ' ');
            q = q ? q + 1 : "";
        }
        snprintf(sig + len, sizeof sig - len, ") -> Tensor");
        cfx_buf b;
        cfx_buf_init(&b);
        run_one(&b, p->name, p->inputs, sig, p->fn, NULL);
        rc = write_one(argv[1], p->name, &b);
        cfx_buf_free(&b);
    }
    for (int i = 0; i < cfx_model_count() && !rc; i++) {
        const cfx_model *m = cfx_model_at(i);
        /* a script-object model's twin needs the wheel's torchbind test library: its graphs are
         * compared with 2.13's in tests/hop (tools/interop/gen_hop.py) instead */
        if (!wanted(m->name, argc, argv) || cfx_model_has_object_input(m))
            continue;
        cfx_buf b;
        cfx_buf_init(&b);
        run_one(&b, m->name, NULL, m->signature, m->forward, m);
        rc = write_one(argv[1], m->name, &b);
        cfx_buf_free(&b);
    }
    return rc;
}
