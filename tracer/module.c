/* module.c - a model's named parameters (the state an nn.Module holds).
 *
 * A C model reads its weights by qualified name ("fc1.weight"), and the tracer asks the
 * reverse question for every tensor it cannot place: "is this one of the model's
 * parameters, and under which name?" Both questions are asked on hot paths (once per
 * parameter read by the model, once per parameter use by an op), so the module keeps two
 * open-addressing indexes over one registration-ordered array: by name and by tensor
 * address. The module holds a reference on each tensor, so an address cannot be reused by
 * another tensor while it is registered.
 *
 * Names follow nn.Module's rules as far as a flat table can: every dot-separated atom is a
 * non-empty run of [A-Za-z0-9_] (ModuleList children are "0", "1", ...), and a name may be
 * registered once. A missing name is reported with nn.Module.__getattr__'s text for the first
 * atom that does not exist; cfx knows no submodule class names, so an atom missing inside a
 * submodule is reported against "Module". Asking for a submodule path is an error too. */
#include <stdlib.h>
#include <string.h>

#include "dispatch/error.h"
#include "tracer/module.h"

typedef struct param {
    char *name;
    cfx_tensor *t;
} param;

struct cfx_module {
    char *class_name;
    param *params;
    int n, cap;
    int *by_name; /* param position + 1, 0 = empty */
    int *by_ptr;
    int idx_cap;  /* power of two, shared by both indexes */
};

static char *dup_str(const char *s)
{
    size_t n = strlen(s);
    char *r = malloc(n + 1);
    if (r)
        memcpy(r, s, n + 1);
    return r;
}

static uint64_t hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static uint64_t hash_ptr(const void *p)
{
    uint64_t h = (uint64_t)(uintptr_t)p;
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    return h;
}

cfx_module *cfx_module_new(const char *class_name)
{
    cfx_module *m = calloc(1, sizeof *m);
    char *cn = dup_str(class_name ? class_name : "Module");
    if (!m || !cn) {
        free(m);
        free(cn);
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
    for (int i = 0; i < m->n; i++) {
        free(m->params[i].name);
        cfx_tensor_release(m->params[i].t);
    }
    free(m->params);
    free(m->by_name);
    free(m->by_ptr);
    free(m->class_name);
    free(m);
}

const char *cfx_module_class_name(const cfx_module *m) { return m ? m->class_name : NULL; }

static int *name_slot(const cfx_module *m, const char *name)
{
    size_t mask = (size_t)m->idx_cap - 1;
    for (size_t i = hash_str(name) & mask;; i = (i + 1) & mask) {
        int *s = &m->by_name[i];
        if (*s == 0 || strcmp(m->params[*s - 1].name, name) == 0)
            return s;
    }
}

static int *ptr_slot(const cfx_module *m, const cfx_tensor *t)
{
    size_t mask = (size_t)m->idx_cap - 1;
    for (size_t i = hash_ptr(t) & mask;; i = (i + 1) & mask) {
        int *s = &m->by_ptr[i];
        if (*s == 0 || m->params[*s - 1].t == t)
            return s;
    }
}

static int grow_index(cfx_module *m)
{
    int cap = m->idx_cap ? m->idx_cap * 2 : 16;
    int *bn = calloc((size_t)cap, sizeof *bn);
    int *bp = calloc((size_t)cap, sizeof *bp);
    if (!bn || !bp) {
        free(bn);
        free(bp);
        return cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
    }
    free(m->by_name);
    free(m->by_ptr);
    m->by_name = bn;
    m->by_ptr = bp;
    m->idx_cap = cap;
    for (int i = 0; i < m->n; i++) {
        *name_slot(m, m->params[i].name) = i + 1;
        int *ps = ptr_slot(m, m->params[i].t);
        if (*ps == 0) /* the same tensor under two names: the first name wins */
            *ps = i + 1;
    }
    return CFX_OK;
}

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
    if (m->idx_cap && *name_slot(m, qualname))
        return cfx_error_set(CFX_ERR, NULL, "attribute '%s' already exists", qualname);
    if (m->n == m->cap) {
        int cap = m->cap ? m->cap * 2 : 8;
        param *p = realloc(m->params, (size_t)cap * sizeof *p);
        if (!p)
            return cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
        m->params = p;
        m->cap = cap;
    }
    if (2 * (m->n + 1) > m->idx_cap && grow_index(m) != CFX_OK)
        return CFX_ERR_NOMEM;
    char *nm = dup_str(qualname);
    if (!nm)
        return cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
    m->params[m->n] = (param){nm, cfx_tensor_retain(t)};
    *name_slot(m, nm) = m->n + 1;
    int *ps = ptr_slot(m, t);
    if (*ps == 0)
        *ps = m->n + 1;
    m->n++;
    return CFX_OK;
}

/* Whether some parameter lives at or under path[0..len). */
static bool has_prefix(const cfx_module *m, const char *path, size_t len)
{
    for (int i = 0; i < m->n; i++) {
        const char *a = m->params[i].name;
        if (strncmp(a, path, len) == 0 && (a[len] == '\0' || a[len] == '.'))
            return true;
    }
    return false;
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
    int i = m->idx_cap ? *name_slot(m, qualname) - 1 : -1;
    if (i < 0) {
        missing_error(m, qualname);
        return NULL;
    }
    return m->params[i].t;
}

const char *cfx_module_name_of(const cfx_module *m, const cfx_tensor *t)
{
    if (!m || !t || !m->idx_cap)
        return NULL;
    int i = *ptr_slot(m, t) - 1;
    return i >= 0 ? m->params[i].name : NULL;
}

int cfx_module_count(const cfx_module *m) { return m ? m->n : 0; }

const char *cfx_module_name_at(const cfx_module *m, int i)
{
    return m && i >= 0 && i < m->n ? m->params[i].name : NULL;
}

cfx_tensor *cfx_module_tensor_at(const cfx_module *m, int i)
{
    return m && i >= 0 && i < m->n ? m->params[i].t : NULL;
}
