/* tensor_table.c - named tensors in insertion order, retained.
 *
 * A model has tens or hundreds of parameters, not millions, so the table is a plain array in
 * registration order with two small open-addressing indexes over it: by name (a model reads
 * its weights by qualified name) and by tensor address (the tracer asks which name a tensor
 * it meets is registered under). The table holds a reference on each tensor, so an address
 * cannot be reused by another tensor while it is registered. The same tensor may stand under
 * two names; the address index then finds the first. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch/hash.h"
#include "dispatch/error.h"
#include "dispatch/tensor_table.h"

static char *dup_str(const char *s)
{
    size_t n = strlen(s);
    char *r = cfx_malloc(n + 1);
    if (r)
        memcpy(r, s, n + 1);
    return r;
}

void cfx_tensor_table_clear(cfx_tensor_table *tt)
{
    if (!tt)
        return;
    for (int i = 0; i < tt->n; i++) {
        cfx_free(tt->entries[i].name);
        cfx_tensor_release(tt->entries[i].t);
    }
    cfx_free(tt->entries);
    cfx_free(tt->by_name);
    cfx_free(tt->by_ptr);
    memset(tt, 0, sizeof *tt);
}

/* The slot of an index where the key is, or the empty slot where it would go. */
static int *name_slot(const cfx_tensor_table *tt, const char *name)
{
    size_t mask = (size_t)tt->idx_cap - 1;
    for (size_t i = cfx_hash_str(name) & mask;; i = (i + 1) & mask) {
        int *s = &tt->by_name[i];
        if (*s == 0 || strcmp(tt->entries[*s - 1].name, name) == 0)
            return s;
    }
}

static int *ptr_slot(const cfx_tensor_table *tt, const cfx_tensor *t)
{
    size_t mask = (size_t)tt->idx_cap - 1;
    for (size_t i = cfx_hash_ptr(t) & mask;; i = (i + 1) & mask) {
        int *s = &tt->by_ptr[i];
        if (*s == 0 || tt->entries[*s - 1].t == t)
            return s;
    }
}

static int grow_index(cfx_tensor_table *tt)
{
    int cap = tt->idx_cap ? tt->idx_cap * 2 : 16;
    int *bn = cfx_calloc((size_t)cap, sizeof *bn);
    int *bp = cfx_calloc((size_t)cap, sizeof *bp);
    if (!bn || !bp) {
        cfx_free(bn);
        cfx_free(bp);
        return cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
    }
    cfx_free(tt->by_name);
    cfx_free(tt->by_ptr);
    tt->by_name = bn;
    tt->by_ptr = bp;
    tt->idx_cap = cap;
    for (int i = 0; i < tt->n; i++) {
        *name_slot(tt, tt->entries[i].name) = i + 1;
        int *ps = ptr_slot(tt, tt->entries[i].t);
        if (*ps == 0) /* the same tensor under two names: the first name wins */
            *ps = i + 1;
    }
    return CFX_OK;
}

int cfx_tensor_table_find(const cfx_tensor_table *tt, const char *name)
{
    if (!tt || !name || !tt->idx_cap)
        return -1;
    return *name_slot(tt, name) - 1;
}

int cfx_tensor_table_find_tensor(const cfx_tensor_table *tt, const cfx_tensor *t)
{
    if (!tt || !t || !tt->idx_cap)
        return -1;
    return *ptr_slot(tt, t) - 1;
}

/* Replacing keeps the address index right: the old tensor's slot may still name this entry,
 * so the index is rebuilt at the same size (rare: only GraphModule attributes are replaced). */
static int replace(cfx_tensor_table *tt, int i, cfx_tensor *t)
{
    cfx_tensor *old = tt->entries[i].t;
    if (old == t)
        return CFX_OK;
    int *bp = cfx_calloc((size_t)tt->idx_cap, sizeof *bp);
    if (!bp)
        return cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
    tt->entries[i].t = cfx_tensor_retain(t);
    cfx_tensor_release(old);
    cfx_free(tt->by_ptr);
    tt->by_ptr = bp;
    for (int k = 0; k < tt->n; k++) {
        int *ps = ptr_slot(tt, tt->entries[k].t);
        if (*ps == 0)
            *ps = k + 1;
    }
    return CFX_OK;
}

int cfx_tensor_table_put(cfx_tensor_table *tt, const char *name, cfx_tensor *t)
{
    int i = cfx_tensor_table_find(tt, name);
    if (i >= 0)
        return replace(tt, i, t);
    if (tt->n == tt->cap) {
        int cap = tt->cap ? tt->cap * 2 : 8;
        cfx_tensor_table_entry *e = cfx_realloc(tt->entries, (size_t)cap * sizeof *e);
        if (!e)
            return cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
        tt->entries = e;
        tt->cap = cap;
    }
    /* keep the indexes at most half full */
    if (2 * (tt->n + 1) > tt->idx_cap && grow_index(tt) != CFX_OK)
        return CFX_ERR_NOMEM;
    char *nm = dup_str(name);
    if (!nm)
        return cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
    tt->entries[tt->n] = (cfx_tensor_table_entry){nm, cfx_tensor_retain(t)};
    *name_slot(tt, nm) = tt->n + 1;
    int *ps = ptr_slot(tt, t);
    if (*ps == 0)
        *ps = tt->n + 1;
    tt->n++;
    return CFX_OK;
}

int cfx_tensor_table_count(const cfx_tensor_table *tt) { return tt ? tt->n : 0; }

const char *cfx_tensor_table_name_at(const cfx_tensor_table *tt, int i)
{
    return tt && i >= 0 && i < tt->n ? tt->entries[i].name : NULL;
}

cfx_tensor *cfx_tensor_table_tensor_at(const cfx_tensor_table *tt, int i)
{
    return tt && i >= 0 && i < tt->n ? tt->entries[i].t : NULL;
}

bool cfx_tensor_table_has_prefix(const cfx_tensor_table *tt, const char *path, size_t len)
{
    if (!tt || !path)
        return false;
    for (int i = 0; i < tt->n; i++) {
        const char *a = tt->entries[i].name;
        if (strncmp(a, path, len) == 0 && (a[len] == '\0' || a[len] == '.'))
            return true;
    }
    return false;
}
