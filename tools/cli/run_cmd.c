/* run_cmd.c - `cfx run FILE.json`: execute a dumped graph with the interpreter.
 *
 *   cfx run FILE.json|- [--inputs random|zeros|FILE.safetensors|-] [--seed N] [--time]
 *           [-o OUT.safetensors|-]
 *
 * Inputs, one per placeholder in graph order, come from the placeholder's meta `val`, which
 * make_fx records: a tensor val gives a fresh contiguous CPU tensor of its shape and dtype,
 * filled with zeros or with seeded random numbers (floating dtypes standard normal, integer
 * dtypes uniform in [0, 10), bool uniform; the generator is splitmix64 seeded with --seed,
 * default 0, so one seed gives the same inputs on every machine); a scalar val (int, float,
 * bool) is passed as itself. With --inputs FILE.safetensors each input is the file's tensor
 * named after the placeholder node (`x_1` in a make_fx graph: see `cfx print FILE
 * --format tabular`); its dtype and shape must agree with the val, and every tensor of the
 * file must name a placeholder. A placeholder without val takes its default, if it has one.
 *
 * Outputs are printed one per leaf of the output value, `output` for a single value and
 * `output[0]`, `output[1][0]`, ... inside tuples and lists: a header line with shape and
 * dtype, then the tensor as PyTorch prints it. With -o they are written to a safetensors file
 * instead, tensors named `output`, `output.0`, `output.1.0`, ...; non-tensor leaves (None,
 * ints) go to its __metadata__ under the same names, as their Python repr. `--inputs -` reads
 * the safetensors inputs from stdin (then FILE cannot be `-` too) and `-o -` writes the
 * safetensors bytes to stdout, so runs chain through pipes. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfx.h"
#include "tools/cli/cli.h"

static const char run_help[] =
    "usage: cfx run FILE.json|- [--inputs random|zeros|FILE.safetensors|-] [--seed N] [--time]\n"
    "               [-o OUT.safetensors|-]\n"
    "\n"
    "Runs a graph written by `cfx trace --format json` (or cfx_graph_module_save) with the\n"
    "interpreter and prints its outputs with their shapes and dtypes. FILE `-` reads the\n"
    "document from stdin (its tensors must then be inline).\n"
    "\n"
    "  --inputs random     inputs shaped after each placeholder's meta val, seeded random\n"
    "                      (floating: standard normal; integer: [0, 10); bool) (the default)\n"
    "  --inputs zeros      the same, zero-filled\n"
    "  --inputs F.safetensors  the tensors of F, each named after its placeholder node\n"
    "                      (`--inputs -`: a safetensors file on stdin)\n"
    "  --seed N            the random generator's seed (default 0)\n"
    "  --time              print the time taken on stderr\n"
    "  -o OUT.safetensors  write the outputs there (`output`, `output.0`, ...) instead\n"
    "                      (`-o -`: the safetensors bytes to stdout)\n"
    "\n"
    "examples:\n"
    "  cfx trace mlp --format json -o mlp.json && cfx run mlp.json --seed 7\n"
    "  cfx run mlp.json --inputs zeros -o out.safetensors\n"
    "  cfx run mlp.json --inputs x.safetensors   # x.safetensors holds a tensor named x_1\n"
    "  cfx trace mlp --format json | cfx run - --time\n"
    "  cfx run mlp.json -o - | cfx run head.json --inputs -\n";

static int usage(FILE *f)
{
    fputs(run_help, f);
    return f == stdout ? 0 : 2;
}

/* ---- inputs ------------------------------------------------------------------------------ */

typedef struct rng {
    uint64_t s;
} rng;

static uint64_t next_u64(rng *r)
{
    uint64_t z = (r->s += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

/* Uniform in (0, 1]. */
static double next_unit(rng *r) { return ((double)(next_u64(r) >> 11) + 1.0) * 0x1.0p-53; }

/* Box-Muller: one normal sample per call (the second of each pair is dropped, which keeps the
 * stream position a function of the element index alone). */
static double next_normal(rng *r)
{
    double u = next_unit(r), v = next_unit(r);
    return sqrt(-2.0 * log(u)) * cos(6.283185307179586 * v);
}

static void fill(cfx_tensor *t, bool random, rng *r)
{
    int64_t n = cfx_tensor_numel(t);
    void *data = cfx_tensor_data(t);
    cfx_dtype d = cfx_tensor_dtype(t);
    if (!random || n == 0) {
        memset(data, 0, (size_t)n * cfx_dtype_size(d));
        return;
    }
    for (int64_t i = 0; i < n; i++) {
        switch (d) {
        case CFX_FLOAT32: ((float *)data)[i] = (float)next_normal(r); break;
        case CFX_FLOAT64: ((double *)data)[i] = next_normal(r); break;
        case CFX_INT32: ((int32_t *)data)[i] = (int32_t)(next_u64(r) % 10); break;
        case CFX_INT64: ((int64_t *)data)[i] = (int64_t)(next_u64(r) % 10); break;
        case CFX_BOOL: ((bool *)data)[i] = next_u64(r) >> 63; break;
        default: memset((char *)data + (size_t)i * cfx_dtype_size(d), 0, cfx_dtype_size(d)); break;
        }
    }
}

static void put_shape(cfx_buf *b, const int64_t *sizes, int n)
{
    cfx_buf_putc(b, '[');
    for (int i = 0; i < n; i++)
        cfx_buf_printf(b, "%s%lld", i ? ", " : "", (long long)sizes[i]);
    cfx_buf_putc(b, ']');
}

static bool same_shape(const cfx_tensor *t, const cfx_meta_val *v)
{
    if (t->ndim != v->n || t->dtype != v->dtype)
        return false;
    for (int i = 0; i < v->n; i++)
        if (t->sizes[i] != v->sizes[i])
            return false;
    return true;
}

static int mismatch(const char *name, const cfx_tensor *t, const cfx_meta_val *v)
{
    cfx_buf a, b;
    cfx_buf_init(&a);
    cfx_buf_init(&b);
    put_shape(&a, t->sizes, t->ndim);
    put_shape(&b, v->sizes, v->n);
    const char *da = cfx_dtype_torch_name(cfx_tensor_dtype(t)), *db = cfx_dtype_torch_name((cfx_dtype)v->dtype);
    cfx_error_set(CFX_ERR, NULL, "input '%s' is %s %s but the placeholder's val is %s %s", name, da ? da : "?",
                  a.data ? a.data : "?", db ? db : "?", b.data ? b.data : "?");
    cfx_buf_free(&a);
    cfx_buf_free(&b);
    return CFX_ERR;
}

typedef struct inputs {
    const char *mode; /* "random", "zeros" or a path */
    uint64_t seed;
    cfx_safetensors *file;
} inputs;

/* The input of placeholder n into *out. */
static int make_input(const cfx_node *n, const inputs *in, rng *r, cfx_value *out)
{
    cfx_buf nb;
    cfx_buf_init(&nb);
    cfx_name_print(cfx_node_name(n), &nb);
    const char *name = nb.data ? nb.data : "?";
    const cfx_meta_val *v = cfx_node_val(n);
    int rc = CFX_OK;
    if (v && v->kind == CFX_MVAL_TOKEN) {
        /* an effect token input: a fresh token, as 2.13's ep.module() makes one per call */
        cfx_tensor *t = cfx_token_new();
        if (t)
            *out = cfx_token_value(t);
        else
            rc = CFX_ERR;
    } else if (in->file && cfx_safetensors_find(in->file, name) >= 0) {
        cfx_tensor *t = cfx_safetensors_tensor(in->file, cfx_safetensors_find(in->file, name));
        if (v && v->kind == CFX_MVAL_TENSOR && !same_shape(t, v))
            rc = mismatch(name, t, v);
        else
            *out = cfx_tensor_value(t);
    } else if (v && v->kind == CFX_MVAL_TENSOR && !in->file) {
        cfx_device cpu = cfx_device_make(CFX_DEVICE_CPU);
        cfx_tensor *t = cfx_tensor_new(v->sizes, v->n, (cfx_dtype)v->dtype, cpu);
        if (t) {
            fill(t, !strcmp(in->mode, "random"), r);
            *out = cfx_tensor_value(t);
        } else {
            rc = CFX_ERR;
        }
    } else if (v && v->kind == CFX_MVAL_INT) {
        *out = cfx_int(v->u.i);
    } else if (v && v->kind == CFX_MVAL_DOUBLE) {
        *out = cfx_double(v->u.d);
    } else if (v && v->kind == CFX_MVAL_BOOL) {
        *out = cfx_bool(v->u.b);
    } else if (cfx_node_num_args(n)) {
        *out = cfx_node_args(n)[0];
    } else if (in->file) {
        rc = cfx_error_set(CFX_ERR, NULL, "'%s' has no tensor named '%s' for placeholder %s", in->mode, name, name);
    } else {
        rc = cfx_error_set(CFX_ERR, NULL,
                           "placeholder %s has no meta val to make an input from (give --inputs FILE.safetensors)",
                           name);
    }
    cfx_buf_free(&nb);
    return rc;
}

/* Every tensor of the inputs file must be some placeholder's. */
static int check_file_used(const cfx_graph *g, const inputs *in)
{
    for (int i = 0; i < cfx_safetensors_count(in->file); i++) {
        const char *name = cfx_safetensors_name(in->file, i);
        bool found = false;
        for (cfx_node *n = cfx_graph_first(g); n && !found; n = cfx_node_next(n)) {
            if (n->op != CFX_NODE_PLACEHOLDER)
                continue;
            cfx_buf nb;
            cfx_buf_init(&nb);
            cfx_name_print(cfx_node_name(n), &nb);
            found = nb.data && !strcmp(nb.data, name);
            cfx_buf_free(&nb);
        }
        if (!found)
            return cfx_error_set(CFX_ERR, NULL, "tensor '%s' of '%s' names no placeholder of the graph", name,
                                 in->mode);
    }
    return CFX_OK;
}

/* ---- outputs ----------------------------------------------------------------------------- */

typedef struct outputs {
    const char **names; /* malloc'd */
    cfx_tensor **tensors;
    const char **meta; /* key/value pairs, malloc'd */
    int n, n_meta, cap, cap_meta;
    bool oom;
} outputs;

static bool push(const char ***v, int *n, int *cap, const char *s)
{
    if (*n == *cap) {
        int nc = *cap ? 2 * *cap : 8;
        const char **g = cfx_realloc(*v, (size_t)nc * sizeof *g);
        if (!g)
            return false;
        *v = g;
        *cap = nc;
    }
    (*v)[(*n)++] = s;
    return true;
}

/* Walks the output value: prints each leaf, or collects it for the safetensors file. */
static void walk(cfx_value v, cfx_buf *path, cfx_buf *dotted, outputs *o, FILE *f)
{
    if (v.kind == CFX_V_TUPLE || v.kind == CFX_V_LIST) {
        size_t pl = path->len, dl = dotted->len;
        for (uint32_t i = 0; i < v.len; i++) {
            cfx_buf_printf(path, "[%u]", i);
            cfx_buf_printf(dotted, ".%u", i);
            walk(v.u.items[i], path, dotted, o, f);
            path->len = pl;
            dotted->len = dl;
        }
        return;
    }
    if (path->oom || dotted->oom) {
        o->oom = true;
        return;
    }
    if (!o) {
        cfx_buf b;
        cfx_buf_init(&b);
        cfx_buf_putn(&b, path->data, path->len);
        if (v.kind == CFX_V_TENSOR && v.u.t) {
            const cfx_tensor *t = v.u.t;
            const char *dn = cfx_dtype_torch_name(cfx_tensor_dtype(t));
            cfx_buf_puts(&b, ": shape ");
            put_shape(&b, t->sizes, t->ndim);
            cfx_buf_printf(&b, ", dtype %s\n", dn ? dn : "?");
            cfx_tensor_print(t, &b);
        } else {
            cfx_buf_puts(&b, ": ");
            cfx_value_print(v, CFX_STYLE_PYTHON, &b);
        }
        cfx_buf_putc(&b, '\n');
        if (b.data)
            fputs(b.data, f);
        cfx_buf_free(&b);
        return;
    }
    char *name = cfx_strndup(dotted->data, dotted->len);
    if (!name) {
        o->oom = true;
        return;
    }
    if (v.kind == CFX_V_TENSOR && v.u.t) {
        if (!push(&o->names, &o->n, &o->cap, name)) {
            cfx_free(name);
            o->oom = true;
            return;
        }
        o->tensors = cfx_realloc(o->tensors, (size_t)o->cap * sizeof *o->tensors);
        if (!o->tensors) {
            o->oom = true;
            return;
        }
        o->tensors[o->n - 1] = v.u.t;
        return;
    }
    char *text = cfx_value_to_string(v, CFX_STYLE_PYTHON);
    if (!text || !push(&o->meta, &o->n_meta, &o->cap_meta, name)) {
        cfx_free(name);
        cfx_free(text);
        o->oom = true;
        return;
    }
    if (!push(&o->meta, &o->n_meta, &o->cap_meta, text)) {
        cfx_free(text);
        o->oom = true;
    }
}

static void outputs_free(outputs *o)
{
    for (int i = 0; i < o->n; i++)
        cfx_free((char *)o->names[i]);
    for (int i = 0; i < o->n_meta; i++)
        cfx_free((char *)o->meta[i]);
    cfx_free(o->names);
    cfx_free(o->tensors);
    cfx_free(o->meta);
}

static int write_stdout_bytes(const outputs *o)
{
    void *bytes = NULL;
    size_t len = 0;
    int rc = cfx_safetensors_write_bytes(o->names, o->tensors, o->n, o->meta, o->n_meta / 2, &bytes, &len);
    if (rc == CFX_OK && (fwrite(bytes, 1, len, stdout) != len || fflush(stdout) != 0))
        rc = cfx_error_set(CFX_ERR, NULL, "error writing stdout");
    cfx_free(bytes);
    return rc;
}

/* --inputs: a safetensors file, or stdin for `-`. */
static cfx_safetensors *read_inputs(const char *path)
{
    if (strcmp(path, "-"))
        return cfx_safetensors_read_file(path);
    size_t len;
    char *bytes = cli_read_stdin(&len, "the inputs");
    cfx_safetensors *st = bytes ? cfx_safetensors_read_bytes(bytes, len) : NULL;
    cfx_free(bytes);
    return st;
}

static int write_outputs(cfx_value result, const char *out)
{
    cfx_buf path, dotted;
    cfx_buf_init(&path);
    cfx_buf_init(&dotted);
    cfx_buf_puts(&path, "output");
    cfx_buf_puts(&dotted, "output");
    int rc = CFX_OK;
    if (!out) {
        walk(result, &path, &dotted, NULL, stdout);
        if (fflush(stdout) != 0)
            rc = cfx_error_set(CFX_ERR, NULL, "error writing stdout");
    } else {
        outputs o = {0};
        walk(result, &path, &dotted, &o, NULL);
        if (o.oom)
            rc = cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory collecting the outputs");
        else if (strcmp(out, "-"))
            rc = cfx_safetensors_write_file(out, o.names, o.tensors, o.n, o.meta, o.n_meta / 2);
        else
            rc = write_stdout_bytes(&o);
        outputs_free(&o);
    }
    cfx_buf_free(&path);
    cfx_buf_free(&dotted);
    return rc;
}

/* ---- the command ------------------------------------------------------------------------- */

static int parse_seed(const char *s, uint64_t *seed)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (!*s || *end || errno || s[0] == '-') {
        fprintf(stderr, "cfx: --seed wants a non-negative integer, not '%s'\n", s);
        return 2;
    }
    *seed = v;
    return 0;
}

static int run_graph(cfx_graph_module *gm, inputs *in, const char *out)
{
    const cfx_graph *g = cfx_graph_module_graph(gm);
    int n_args = 0;
    for (cfx_node *n = cfx_graph_first(g); n; n = cfx_node_next(n))
        n_args += n->op == CFX_NODE_PLACEHOLDER;
    cfx_value *args = cfx_calloc(n_args ? (size_t)n_args : 1, sizeof *args);
    if (!args)
        return cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
    rng r = {in->seed};
    int rc = in->file ? check_file_used(g, in) : CFX_OK, i = 0;
    for (cfx_node *n = cfx_graph_first(g); n && rc == CFX_OK; n = cfx_node_next(n))
        if (n->op == CFX_NODE_PLACEHOLDER)
            rc = make_input(n, in, &r, &args[i++]);
    cfx_value result = cfx_none();
    if (rc == CFX_OK)
        rc = cfx_graph_module_run(gm, args, n_args, &result);
    if (rc == CFX_OK)
        rc = write_outputs(result, out);
    cfx_free(args);
    return rc;
}

int cfx_cmd_run(int argc, char **argv)
{
    const char *file = NULL, *out = NULL;
    bool time = false;
    double start = cli_now();
    inputs in = {"random", 0, NULL};
    for (int i = 0; i < argc; i++) {
        const char *arg = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(arg, "-h") || !strcmp(arg, "--help"))
            return usage(stdout);
        if (!strcmp(arg, "--inputs") && val) {
            in.mode = val;
            i++;
        } else if (!strcmp(arg, "--seed") && val) {
            int rc = parse_seed(val, &in.seed);
            if (rc)
                return rc;
            i++;
        } else if (!strcmp(arg, "-o") && val) {
            out = val;
            i++;
        } else if (!strcmp(arg, "--time")) {
            time = true;
        } else if ((arg[0] != '-' || !strcmp(arg, "-")) && !file) {
            file = arg;
        } else {
            return usage(stderr);
        }
    }
    if (!file)
        return usage(stderr);
    if (!strcmp(file, "-") && !strcmp(in.mode, "-")) {
        fprintf(stderr, "cfx: run: the graph and --inputs cannot both be read from stdin\n");
        return 2;
    }
    cfx_dispatcher_init();
    cfx_scope scope = cfx_scope_begin();
    cfx_graph_module *gm = cli_load_module(file);
    int rc = gm ? CFX_OK : CFX_ERR;
    if (gm && strcmp(in.mode, "random") && strcmp(in.mode, "zeros")) {
        in.file = read_inputs(in.mode);
        rc = in.file ? CFX_OK : CFX_ERR;
    }
    if (rc == CFX_OK)
        rc = run_graph(gm, &in, out);
    if (rc != CFX_OK)
        cli_report_error("cannot run the graph");
    cfx_safetensors_free(in.file);
    cfx_graph_module_free(gm);
    cfx_scope_end(scope);
    if (time)
        cli_report_time("run", start);
    return rc == CFX_OK ? 0 : 1;
}
