/* module.c - a model's named parameters (the state an nn.Module holds).
 *
 * A C model reads its weights by qualified name ("fc1.weight"), and the tracer asks the
 * reverse question the first time it meets a tensor it cannot place: "is this one of the
 * model's parameters?" (an nn.Parameter, interned as `_param_constantN`, or any other tensor,
 * `_tensor_constantN`). Both questions are asked on hot paths (once per parameter read by the
 * model, once per parameter the trace interns), so the parameters live in a
 * tensor table (dispatch/tensor_table.h) hashed both by name and by tensor address. The table
 * holds a reference on each tensor, so an address cannot be reused by another tensor while it
 * is registered.
 *
 * Names follow nn.Module's rules as far as a flat table can: every dot-separated atom is a
 * non-empty run of [A-Za-z0-9_] (ModuleList children are "0", "1", ...), and a name may be
 * registered once. A missing name is reported with nn.Module.__getattr__'s text for the first
 * atom that does not exist; cfx knows no submodule class names, so an atom missing inside a
 * submodule is reported against "Module". Asking for a submodule path is an error too. */
#include <stdlib.h>
#include <string.h>

#include "dispatch/error.h"
#include "dispatch/tensor_table.h"
#include "tracer/module.h"

struct cfx_module {
    char *class_name;
    cfx_tensor_table params;
    bool training;
};

cfx_module *cfx_module_new(const char *class_name)
{
    cfx_module *m = cfx_calloc(1, sizeof *m);
    char *cn = cfx_strdup(class_name ? class_name : "Module");
    if (!m || !cn) {
        cfx_free(m);
        cfx_free(cn);
        cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
        return NULL;
    }
    m->class_name = cn;
    return m;
}

void cfx_module_free(cfx_module *m)
{
    if (!m)
        return;
    cfx_tensor_table_clear(&m->params);
    cfx_free(m->class_name);
    cfx_free(m);
}

const char *cfx_module_class_name(const cfx_module *m) { return m ? m->class_name : NULL; }

static bool valid_name(const char *s)
{
    bool atom_empty = true;
    for (; *s; s++) {
        char c = *s;
        if (c == '.') {
            if (atom_empty)
                return false;
            atom_empty = true;
        } else if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_') {
            atom_empty = false;
        } else {
            return false;
        }
    }
    return !atom_empty;
}

int cfx_module_add(cfx_module *m, const char *qualname, cfx_tensor *t)
{
    if (!m || !qualname || !t)
        return cfx_error_set(CFX_ERR, NULL, "cfx_module_add: NULL argument");
    if (!*qualname) /* register_parameter's KeyError */
        return cfx_error_set(CFX_ERR, NULL, "parameter name can't be empty string \"\"");
    if (!valid_name(qualname))
        return cfx_error_set(CFX_ERR, NULL,
                             "parameter name \"%s\" is not a dotted path of names made of [A-Za-z0-9_]",
                             qualname);
    if (cfx_tensor_table_find(&m->params, qualname) >= 0)
        return cfx_error_set(CFX_ERR, NULL, "attribute '%s' already exists", qualname);
    return cfx_tensor_table_put(&m->params, qualname, t);
}

/* Whether some parameter lives at or under path[0..len). */
static bool has_prefix(const cfx_module *m, const char *path, size_t len)
{
    return cfx_tensor_table_has_prefix(&m->params, path, len);
}

static void missing_error(const cfx_module *m, const char *qualname)
{
    if (has_prefix(m, qualname, strlen(qualname))) {
        /* getattr would return a submodule, which is not a tensor */
        cfx_error_set(CFX_ERR, NULL, "'%s' of '%s' is a module, not a parameter", qualname, m->class_name);
        return;
    }
    /* the first atom whose path does not exist, as getattr would fail walking it */
    const char *atom = qualname;
    for (;;) {
        const char *dot = strchr(atom, '.');
        size_t end = dot ? (size_t)(dot - qualname) : strlen(qualname);
        if (!has_prefix(m, qualname, end)) {
            const char *owner = atom == qualname ? m->class_name : "Module";
            int alen = (int)(qualname + end - atom);
            cfx_error_set(CFX_ERR, NULL, "'%s' object has no attribute '%.*s'", owner, alen, atom);
            return;
        }
        atom = dot + 1;
    }
}

cfx_tensor *cfx_module_get(const cfx_module *m, const char *qualname)
{
    if (!m || !qualname) {
        cfx_error_set(CFX_ERR, NULL, "cfx_module_get: NULL argument");
        return NULL;
    }
    int i = cfx_tensor_table_find(&m->params, qualname);
    if (i < 0) {
        missing_error(m, qualname);
        return NULL;
    }
    return cfx_tensor_table_tensor_at(&m->params, i);
}

const char *cfx_module_name_of(const cfx_module *m, const cfx_tensor *t)
{
    return m ? cfx_tensor_table_name_at(&m->params, cfx_tensor_table_find_tensor(&m->params, t)) : NULL;
}

int cfx_module_count(const cfx_module *m) { return m ? cfx_tensor_table_count(&m->params) : 0; }

const char *cfx_module_name_at(const cfx_module *m, int i)
{
    return m ? cfx_tensor_table_name_at(&m->params, i) : NULL;
}

cfx_tensor *cfx_module_tensor_at(const cfx_module *m, int i)
{
    return m ? cfx_tensor_table_tensor_at(&m->params, i) : NULL;
}

void cfx_module_train(cfx_module *m, bool mode)
{
    if (m)
        m->training = mode;
}

bool cfx_module_training(const cfx_module *m) { return m && m->training; }
