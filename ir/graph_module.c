/* graph_module.c - a graph with the tensors its get_attr nodes name (torch.fx.GraphModule).
 *
 * FX's GraphModule copies, from the tracer's root, every attribute a get_attr node names and
 * registers tensor constants as buffers. Here the tracer registers each one as it creates the
 * node, so the module is just the graph plus an ordered table of (qualified name, tensor). A
 * model has tens or hundreds of attributes, not millions, so the table is a plain array with
 * a small open-addressing index on the name for lookups. The module holds one reference on
 * each tensor and owns the graph. */
#include <stdlib.h>
#include <string.h>

#include "ir/graph_module.h"

typedef struct attr {
    char *name;
    cfx_tensor *t;
} attr;

struct cfx_graph_module {
    cfx_graph *g;
    char *name;
    attr *attrs;
    int n, cap;
    int *index; /* open addressing: attr position + 1, 0 = empty; idx_cap a power of two */
    int idx_cap;
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

cfx_graph_module *cfx_graph_module_new(cfx_graph *g, const char *name)
{
    if (!g)
        return NULL;
    cfx_graph_module *gm = calloc(1, sizeof *gm);
    char *nm = dup_str(name ? name : "GraphModule");
    if (!gm || !nm) {
        free(gm);
        free(nm);
        cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
        return NULL;
    }
    gm->g = g;
    gm->name = nm;
    return gm;
}

void cfx_graph_module_free(cfx_graph_module *gm)
{
    if (!gm)
        return;
    for (int i = 0; i < gm->n; i++) {
        free(gm->attrs[i].name);
        cfx_tensor_release(gm->attrs[i].t);
    }
    free(gm->attrs);
    free(gm->index);
    free(gm->name);
    cfx_graph_free(gm->g);
    free(gm);
}

cfx_graph *cfx_graph_module_graph(const cfx_graph_module *gm) { return gm ? gm->g : NULL; }
const char *cfx_graph_module_name(const cfx_graph_module *gm) { return gm ? gm->name : NULL; }

/* The slot of the index where name is, or the empty slot where it would go. */
static int *index_slot(const cfx_graph_module *gm, const char *name)
{
    size_t mask = (size_t)gm->idx_cap - 1;
    for (size_t i = hash_str(name) & mask;; i = (i + 1) & mask) {
        int *s = &gm->index[i];
        if (*s == 0 || strcmp(gm->attrs[*s - 1].name, name) == 0)
            return s;
    }
}

static int find(const cfx_graph_module *gm, const char *name)
{
    if (!gm || !name || !gm->idx_cap)
        return -1;
    return *index_slot(gm, name) - 1;
}

static int grow_index(cfx_graph_module *gm)
{
    int cap = gm->idx_cap ? gm->idx_cap * 2 : 16;
    int *idx = calloc((size_t)cap, sizeof *idx);
    if (!idx)
        return cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
    free(gm->index);
    gm->index = idx;
    gm->idx_cap = cap;
    for (int i = 0; i < gm->n; i++)
        *index_slot(gm, gm->attrs[i].name) = i + 1;
    return CFX_OK;
}

int cfx_graph_module_set_attr(cfx_graph_module *gm, const char *qualname, cfx_tensor *t)
{
    if (!gm || !qualname || !t)
        return cfx_error_set(CFX_ERR, NULL, "cfx_graph_module_set_attr: NULL argument");
    int i = find(gm, qualname);
    if (i >= 0) {
        cfx_tensor_retain(t);
        cfx_tensor_release(gm->attrs[i].t);
        gm->attrs[i].t = t;
        return CFX_OK;
    }
    if (gm->n == gm->cap) {
        int cap = gm->cap ? gm->cap * 2 : 8;
        attr *a = realloc(gm->attrs, (size_t)cap * sizeof *a);
        if (!a)
            return cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
        gm->attrs = a;
        gm->cap = cap;
    }
    /* keep the index at most half full */
    if (2 * (gm->n + 1) > gm->idx_cap && grow_index(gm) != CFX_OK)
        return CFX_ERR_NOMEM;
    char *nm = dup_str(qualname);
    if (!nm)
        return cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
    gm->attrs[gm->n] = (attr){nm, cfx_tensor_retain(t)};
    *index_slot(gm, nm) = gm->n + 1;
    gm->n++;
    return CFX_OK;
}

cfx_tensor *cfx_graph_module_get_attr(const cfx_graph_module *gm, const char *qualname)
{
    int i = find(gm, qualname);
    return i >= 0 ? gm->attrs[i].t : NULL;
}

int cfx_graph_module_n_attrs(const cfx_graph_module *gm) { return gm ? gm->n : 0; }

const char *cfx_graph_module_attr_name(const cfx_graph_module *gm, int i)
{
    return gm && i >= 0 && i < gm->n ? gm->attrs[i].name : NULL;
}

cfx_tensor *cfx_graph_module_attr(const cfx_graph_module *gm, int i)
{
    return gm && i >= 0 && i < gm->n ? gm->attrs[i].t : NULL;
}

bool cfx_graph_module_has_path(const cfx_graph_module *gm, const char *path)
{
    if (!gm || !path)
        return false;
    size_t n = strlen(path);
    for (int i = 0; i < gm->n; i++) {
        const char *a = gm->attrs[i].name;
        if (strncmp(a, path, n) == 0 && (a[n] == '\0' || a[n] == '.'))
            return true;
    }
    return false;
}
