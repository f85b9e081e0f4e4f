/* plugin.c - loading a model from a shared object (plugin.h).
 *
 * The loader's job is to refuse early and say why: everything make_fx would otherwise trip
 * over later (or worse, misread) is checked when the object is opened, in the order a user
 * fixes things: the file, the symbol, the ABI version (before any other field is read, since
 * a struct of another version may have another layout), the description's fields, the
 * signature, then the shapes. Only then does cfx_plugin_setup make tensors.
 *
 * The object is opened RTLD_NOW | RTLD_LOCAL: unresolved cfx symbols are reported at open
 * time (by dlerror) instead of at the first call, and two plugins exporting the same default
 * symbol name do not shadow each other. */
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch/error.h"
#include "dispatch/schema.h"
#include "tracer/plugin.h"

struct cfx_plugin {
    void *handle;
    const cfx_plugin_model *model;
    cfx_schema *schema; /* the parsed signature; defaults point into it */
    char *spec;
};

static int fail(cfx_plugin *p, const char *fmt, const char *a, const char *b)
{
    cfx_error_set(CFX_ERR, NULL, fmt, a, b);
    cfx_plugin_close(p);
    return -1;
}

static const cfx_plugin_tensor *find_input(const cfx_plugin_model *m, const char *name)
{
    for (int i = 0; i < m->n_inputs; i++)
        if (m->inputs[i].name && !strcmp(m->inputs[i].name, name))
            return &m->inputs[i];
    return NULL;
}

static bool valid_dtype(cfx_dtype d)
{
    return d == 0 || d == CFX_FLOAT32 || d == CFX_FLOAT64 || d == CFX_INT32 || d == CFX_INT64 || d == CFX_BOOL;
}

/* A tensor description's problem, or NULL. */
static const char *bad_tensor(const cfx_plugin_tensor *t)
{
    if (!t->name || !t->name[0])
        return "has no name";
    if (t->ndim < 0 || t->ndim > CFX_PLUGIN_MAX_DIMS)
        return "has a rank outside [0, 8]";
    for (int d = 0; d < t->ndim; d++)
        if (t->sizes[d] < 0)
            return "has a negative size";
    if (!valid_dtype(t->dtype))
        return "has an unknown dtype";
    return NULL;
}

/* The signature as a schema with the model's name ("(Tensor x) -> Tensor" has none). */
static cfx_schema *parse_signature(const cfx_plugin_model *m, char **err)
{
    cfx_buf b;
    cfx_buf_init(&b);
    const char *sig = m->signature + strspn(m->signature, " \t\n");
    if (*sig == '(')
        cfx_buf_puts(&b, "forward");
    cfx_buf_puts(&b, sig);
    cfx_schema *s = b.oom ? NULL : cfx_schema_parse(b.data, err);
    cfx_buf_free(&b);
    return s;
}

/* Every argument is a Tensor with an example input, or has a default cfx can pass. */
static int check_signature(cfx_plugin *p)
{
    const cfx_plugin_model *m = p->model;
    const cfx_schema *s = p->schema;
    if (s->is_vararg)
        return fail(p, "plugin '%s': bad signature '%s': a forward function takes no `...`", p->spec, m->signature);
    for (int i = 0; i < s->n_args; i++) {
        const cfx_argument *a = &s->args[i];
        if (a->type->kind == CFX_TYPE_TENSOR) {
            const cfx_plugin_tensor *in = find_input(m, a->name);
            if (!in) {
                cfx_error_set(CFX_ERR, NULL, "plugin '%s': bad signature '%s': tensor argument '%s' has no example input",
                              p->spec, m->signature, a->name);
                cfx_plugin_close(p);
                return -1;
            }
            const char *why = bad_tensor(in);
            if (why) {
                cfx_error_set(CFX_ERR, NULL, "plugin '%s': example input '%s' %s", p->spec, a->name, why);
                cfx_plugin_close(p);
                return -1;
            }
        } else if (!a->has_default) {
            cfx_error_set(CFX_ERR, NULL,
                          "plugin '%s': bad signature '%s': argument '%s' is no Tensor and has no default "
                          "(a plugin's example inputs are tensors)",
                          p->spec, m->signature, a->name);
            cfx_plugin_close(p);
            return -1;
        }
    }
    return 0;
}

static int check_description(cfx_plugin *p)
{
    const cfx_plugin_model *m = p->model;
    if (!m->name || !m->name[0])
        return fail(p, "plugin '%s': the model has no name%s", p->spec, "");
    if (!m->forward)
        return fail(p, "plugin '%s': model '%s' has no forward function", p->spec, m->name);
    if (!m->signature)
        return fail(p, "plugin '%s': model '%s' has no signature", p->spec, m->name);
    if (m->n_params < 0 || m->n_inputs < 0 || (m->n_params && !m->params) || (m->n_inputs && !m->inputs))
        return fail(p, "plugin '%s': model '%s' has a bad parameter or input count", p->spec, m->name);
    for (int i = 0; i < m->n_params; i++) {
        const char *why = bad_tensor(&m->params[i]);
        if (why) {
            cfx_error_set(CFX_ERR, NULL, "plugin '%s': parameter %d of model '%s' %s", p->spec, i, m->name, why);
            cfx_plugin_close(p);
            return -1;
        }
    }
    char *err = NULL;
    p->schema = parse_signature(m, &err);
    if (!p->schema) {
        cfx_error_set(CFX_ERR_PARSE, NULL, "plugin '%s': bad signature '%s': %s", p->spec, m->signature,
                      err ? err : "cannot parse it");
        cfx_free(err);
        cfx_plugin_close(p);
        return -1;
    }
    return check_signature(p);
}

cfx_plugin *cfx_plugin_open(const char *spec)
{
    if (!spec || !spec[0]) {
        cfx_error_set(CFX_ERR, NULL, "cfx_plugin_open: no plugin path");
        return NULL;
    }
    cfx_plugin *p = cfx_calloc(1, sizeof *p);
    char *path = cfx_strdup(spec);
    if (!p || !path) {
        cfx_free(p);
        cfx_free(path);
        cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
        return NULL;
    }
    p->spec = path;
    /* "model.so:symbol": the symbol follows the last ':' after the last '/' */
    const char *symbol = CFX_PLUGIN_SYMBOL;
    char *colon = strrchr(path, ':');
    char *slash = strrchr(path, '/');
    char *file = cfx_strdup(path);
    if (!file) {
        cfx_plugin_close(p);
        cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
        return NULL;
    }
    if (colon && (!slash || colon > slash) && colon[1]) {
        file[colon - path] = '\0';
        symbol = colon + 1;
    }
    p->handle = dlopen(file, RTLD_NOW | RTLD_LOCAL);
    if (!p->handle) {
        const char *why = dlerror();
        cfx_error_set(CFX_ERR, NULL, "cannot load plugin '%s': %s", file, why ? why : "dlopen failed");
        cfx_free(file);
        cfx_plugin_close(p);
        return NULL;
    }
    cfx_free(file);
    dlerror();
    p->model = dlsym(p->handle, symbol);
    if (!p->model) {
        fail(p, "plugin '%s' has no symbol '%s' (a plugin exports a `const cfx_plugin_model`; "
                "name another with PATH:SYMBOL)", spec, symbol);
        return NULL;
    }
    if (p->model->abi_version != CFX_PLUGIN_ABI_VERSION) {
        cfx_error_set(CFX_ERR, NULL,
                      "plugin '%s' was built for plugin ABI version %u, this cfx loads version %u (rebuild it "
                      "against this cfx's headers)",
                      spec, (unsigned)p->model->abi_version, (unsigned)CFX_PLUGIN_ABI_VERSION);
        cfx_plugin_close(p);
        return NULL;
    }
    return check_description(p) ? NULL : p;
}

void cfx_plugin_close(cfx_plugin *p)
{
    if (!p)
        return;
    cfx_schema_free(p->schema);
    if (p->handle)
        dlclose(p->handle);
    cfx_free(p->spec);
    cfx_free(p);
}

const cfx_plugin_model *cfx_plugin_model_of(const cfx_plugin *p) { return p ? p->model : NULL; }

/* The built-in zoo's example values (tools/models): exact in every dtype cfx has. */
static void fill_example(cfx_tensor *t, int seed)
{
    void *data = cfx_tensor_data(t);
    int64_t n = cfx_tensor_numel(t);
    for (int64_t i = 0; i < n; i++) {
        int64_t k = (i * 7 + seed * 13) % 32 - 16;
        switch (t->dtype) {
        case CFX_FLOAT32: ((float *)data)[i] = (float)k / 16.0f; break;
        case CFX_FLOAT64: ((double *)data)[i] = (double)k / 16.0; break;
        case CFX_INT32: ((int32_t *)data)[i] = (int32_t)k; break;
        case CFX_INT64: ((int64_t *)data)[i] = k; break;
        default: ((bool *)data)[i] = k > 0; break;
        }
    }
}

static cfx_tensor *make_tensor(const cfx_plugin *p, const cfx_plugin_tensor *d, int seed)
{
    cfx_tensor *t = cfx_tensor_new(d->sizes, d->ndim, d->dtype ? d->dtype : CFX_FLOAT32,
                                   cfx_device_make(CFX_DEVICE_CPU));
    if (!t)
        return NULL;
    if (!d->init)
        fill_example(t, seed);
    else if (d->init(t) != 0) {
        if (!cfx_error_occurred())
            cfx_error_set(CFX_ERR, NULL, "plugin '%s': the initialiser of '%s' failed", p->spec, d->name);
        return NULL;
    }
    return t;
}

int cfx_plugin_setup(const cfx_plugin *p, cfx_module **module, cfx_value *args, int max)
{
    if (!p || !module || (max > 0 && !args))
        return cfx_error_set(CFX_ERR, NULL, "cfx_plugin_setup: NULL argument");
    const cfx_plugin_model *m = p->model;
    const cfx_schema *s = p->schema;
    if (s->n_args > max)
        return cfx_error_set(CFX_ERR, NULL, "plugin '%s': %d arguments, at most %d", p->spec, s->n_args, max);
    cfx_module *mod = cfx_module_new(m->name);
    if (!mod)
        return -1;
    for (int i = 0; i < m->n_params; i++) {
        cfx_tensor *t = make_tensor(p, &m->params[i], i + 1);
        if (!t || cfx_module_add(mod, m->params[i].name, t) != CFX_OK) {
            cfx_module_free(mod);
            return -1;
        }
    }
    for (int i = 0; i < s->n_args; i++) {
        const cfx_argument *a = &s->args[i];
        if (a->type->kind != CFX_TYPE_TENSOR) {
            args[i] = a->default_value;
            continue;
        }
        cfx_tensor *t = make_tensor(p, find_input(m, a->name), i);
        if (!t) {
            cfx_module_free(mod);
            return -1;
        }
        args[i] = cfx_tensor_value(t);
    }
    *module = mod;
    return s->n_args;
}
