/* json_read_values.c - values, node meta and module attributes from parsed JSON records.
 *
 * The reader parses one record (a node, an attribute) at a time with cJSON and turns it into
 * cfx values here. Decoding is strict: every tag, dtype, device and integer must be spelled as
 * the writer spells it (or as the format document allows), since a lenient reader would make
 * "loads" and "round-trips" different promises. Nested lists and tuples are converted with an
 * explicit stack (cJSON bounds their depth at CJSON_NESTING_LIMIT while parsing). Argument
 * arrays live in the reader's scratch arena until the graph copies them; strings are borrowed
 * from the cJSON tree, which lives as long. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch/scope.h"
#include "dispatch/tensor.h"
#include "ir/internal.h"
#include "ir/json_internal.h"

/* ---- small pieces ------------------------------------------------------------------------- */

int jr_members(jreader *r, const cJSON *obj, const char *const *allowed, cJSON **out, const char *what)
{
    size_t n = 0;
    while (allowed[n])
        n++;
    if (n)
        memset(out, 0, n * sizeof *out);
    /* Writers put members in the order of `allowed`, so the search starts after the last match
     * and wraps around: one comparison per member for a file cfx wrote, n at worst. */
    size_t next = 0;
    for (cJSON *c = obj->child; c; c = c->next) {
        r->at = c;
        if (!c->string)
            return jr_err(r, CFX_ERR_PARSE, "%s: a member without a name", what);
        size_t k = n, tried = 0;
        for (size_t j = next; tried < n; tried++, j = j + 1 == n ? 0 : j + 1)
            if (strcmp(allowed[j], c->string) == 0) {
                k = j;
                break;
            }
        if (k < n) {
            next = k + 1 == n ? 0 : k + 1;
            if (out[k])
                return jr_err(r, CFX_ERR_PARSE, "%s: member \"%s\" appears twice", what, c->string);
            out[k] = c;
            continue;
        }
        if (r->strict)
            return jr_err(r, CFX_ERR_PARSE, "%s: unknown member \"%s\"", what, c->string);
        for (const cJSON *d = obj->child; d != c; d = d->next)
            if (strcmp(d->string, c->string) == 0)
                return jr_err(r, CFX_ERR_PARSE, "%s: member \"%s\" appears twice", what, c->string);
    }
    r->at = obj;
    return CFX_OK;
}

const cJSON *jr_tagged(const cJSON *j)
{
    if (!cJSON_IsObject(j) || !j->child || j->child->next || !j->child->string)
        return NULL;
    return j->child;
}

/* Strict decimal int64: -?(0|[1-9][0-9]*). */
static bool parse_decimal(const char *s, int64_t *out)
{
    bool neg = *s == '-';
    if (neg)
        s++;
    if (*s < '0' || *s > '9' || (s[0] == '0' && s[1] != '\0') || (neg && s[0] == '0'))
        return false;
    uint64_t v = 0, limit = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
    for (; *s; s++) {
        if (*s < '0' || *s > '9')
            return false;
        unsigned d = (unsigned)(*s - '0');
        if (v > (limit - d) / 10)
            return false;
        v = v * 10 + d;
    }
    *out = neg ? (int64_t)(0 - v) : (int64_t)v;
    return true;
}

int jr_int(jreader *r, const cJSON *j, int64_t *out, const char *what)
{
    r->at = j;
    if (cJSON_IsNumber(j)) {
        double d = j->valuedouble;
        if (d >= -JR_MAX_EXACT_INT && d <= JR_MAX_EXACT_INT && d == floor(d)) {
            *out = (int64_t)d;
            return CFX_OK;
        }
        return jr_err(r, CFX_ERR_PARSE, "%s: expected an integer (a JSON number is an int only "
                      "when integral and below 2^53 in magnitude; larger ints are {\"int\": "
                      "\"<decimal>\"})", what);
    }
    const cJSON *t = jr_tagged(j);
    if (t && strcmp(t->string, "int") == 0) {
        if (cJSON_IsString(t) && parse_decimal(t->valuestring, out))
            return CFX_OK;
        return jr_err(r, CFX_ERR_PARSE, "%s: {\"int\": ...} needs a decimal string within int64", what);
    }
    return jr_err(r, CFX_ERR_PARSE, "%s: expected an integer", what);
}

static int int_in(jreader *r, const cJSON *j, int64_t lo, int64_t hi, int64_t *out, const char *what)
{
    if (jr_int(r, j, out, what) != CFX_OK)
        return CFX_ERR_PARSE;
    if (*out < lo || *out > hi)
        return jr_err(r, CFX_ERR_PARSE, "%s: %lld is out of range", what, (long long)*out);
    return CFX_OK;
}

/* A dtype: its torch name, or (within lo..hi) the code of a dtype cfx has no name for. */
static int read_dtype(jreader *r, const cJSON *j, int64_t lo, int64_t hi, int *out, const char *what)
{
    r->at = j;
    if (cJSON_IsString(j)) {
        cfx_dtype d;
        const char *name;
        if (cfx_dtype_parse(j->valuestring, &d) && (name = cfx_dtype_torch_name(d)) &&
            strcmp(name, j->valuestring) == 0) {
            *out = (int)d;
            return CFX_OK;
        }
        return jr_err(r, CFX_ERR_PARSE, "%s: unknown dtype \"%s\"", what, j->valuestring);
    }
    int64_t code;
    if (int_in(r, j, lo, hi, &code, what) != CFX_OK)
        return CFX_ERR_PARSE;
    *out = (int)code;
    return CFX_OK;
}

static int read_device(jreader *r, const cJSON *j, cfx_device *out, const char *what)
{
    r->at = j;
    char tmp[32];
    if (cJSON_IsString(j) && cfx_device_parse(j->valuestring, out) &&
        strcmp(cfx_device_format(*out, tmp, sizeof tmp), j->valuestring) == 0)
        return CFX_OK;
    return jr_err(r, CFX_ERR_PARSE, "%s: expected a device (\"cpu\", \"cpu:0\", \"meta\")", what);
}

/* A memory format: its torch name or a code within lo..hi; null (-1) only where allow_null. */
static int read_memory_format(jreader *r, const cJSON *j, bool allow_null, int64_t lo, int64_t hi,
                              int64_t *out, const char *what)
{
    r->at = j;
    if (allow_null && cJSON_IsNull(j)) {
        *out = -1;
        return CFX_OK;
    }
    if (cJSON_IsString(j)) {
        for (int m = 0; m < 8; m++) {
            const char *s = cfx_memory_format_torch_name((cfx_memory_format)m);
            if (s && strcmp(s, j->valuestring) == 0) {
                *out = m;
                return CFX_OK;
            }
        }
        return jr_err(r, CFX_ERR_PARSE, "%s: unknown memory format \"%s\"", what, j->valuestring);
    }
    return int_in(r, j, lo, hi, out, what);
}

static int read_float(jreader *r, const cJSON *j, double *out, const char *what)
{
    r->at = j;
    if (cJSON_IsNumber(j)) {
        *out = j->valuedouble;
        return CFX_OK;
    }
    if (cJSON_IsString(j)) {
        if (strcmp(j->valuestring, "NaN") == 0)
            *out = NAN;
        else if (strcmp(j->valuestring, "Infinity") == 0)
            *out = INFINITY;
        else if (strcmp(j->valuestring, "-Infinity") == 0)
            *out = -INFINITY;
        else
            return jr_err(r, CFX_ERR_PARSE, "%s: float string \"%s\" is not NaN, Infinity or -Infinity",
                          what, j->valuestring);
        return CFX_OK;
    }
    return jr_err(r, CFX_ERR_PARSE, "%s: {\"float\": ...} needs a number or \"NaN\"/\"Infinity\"/\"-Infinity\"", what);
}

static uint32_t array_len(const cJSON *a)
{
    uint32_t n = 0;
    for (const cJSON *c = a->child; c; c = c->next)
        n++;
    return n;
}

static void *scratch(jreader *r, size_t bytes)
{
    void *p = cfx_arena_alloc(&r->scratch, bytes ? bytes : 1);
    if (!p)
        jr_err(r, CFX_ERR_NOMEM, "out of memory");
    return p;
}

static bool push(jreader *r, uint32_t *sp, const cJSON *first, void *out)
{
    if (*sp == r->stack_cap) {
        uint32_t cap = r->stack_cap ? r->stack_cap * 2 : 32;
        jr_frame *s = cfx_realloc(r->stack, cap * sizeof *s);
        if (!s)
            return false;
        r->stack = s;
        r->stack_cap = cap;
    }
    r->stack[(*sp)++] = (jr_frame){first, out};
    return true;
}

/* Converts one JSON value into the slot o; a container also sets *first to its first JSON
 * item (NULL if none) and *items to the array its items go into. */
typedef int (*read_one_fn)(jreader *r, const cJSON *j, void *o, int ref_mode, const cJSON **first, void **items);

/* A value tree of `size`-byte slots, without recursion: r->stack holds, for each open
 * container, its next JSON item and the slot that item goes into. */
static int read_tree(jreader *r, const cJSON *j, void *out, size_t size, int ref_mode, read_one_fn one)
{
    uint32_t sp = 0;
    char *o = out;
    while (j) {
        const cJSON *first;
        void *items;
        r->at = j;
        int rc = one(r, j, o, ref_mode, &first, &items);
        if (rc != CFX_OK)
            return rc;
        if (first && !push(r, &sp, first, items))
            return jr_err(r, CFX_ERR_NOMEM, "out of memory");
        j = NULL;
        while (sp && !j) {
            jr_frame *f = &r->stack[sp - 1];
            if (f->next) {
                j = f->next;
                f->next = j->next;
                o = f->out;
                f->out = o + size;
            } else {
                sp--;
            }
        }
    }
    return CFX_OK;
}

/* ---- values --------------------------------------------------------------------------------- */

static int resolve_ref(jreader *r, const cJSON *t, cfx_value *o, int ref_mode)
{
    if (!cJSON_IsString(t))
        return jr_err(r, CFX_ERR_PARSE, "{\"node\": ...} needs a node name");
    cfx_node *n = jr_find_node(r, t->valuestring);
    if (n) {
        *o = cfx_node_value(n);
        return CFX_OK;
    }
    if (ref_mode == JR_REF_META_FIRST)
        return JR_DEFER;
    if (ref_mode == JR_REF_ARGS)
        return jr_err(r, CFX_ERR_PARSE, "argument '%s' is used before it has been defined (no "
                      "earlier node has that name)", t->valuestring);
    return jr_err(r, CFX_ERR_PARSE, "refers to node '%s', which is not in the graph", t->valuestring);
}

static int cmp_keys(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* A dict's array a (n items): key, value, key, value, ...; every key a string, none twice
 * (a Python dict has each key once). Sorted copies of the keys find duplicates in n log n. */
static int check_dict_keys(jreader *r, const cJSON *a, uint32_t n)
{
    r->at = a;
    if (n % 2)
        return jr_err(r, CFX_ERR_PARSE, "{\"dict\": ...} needs key, value pairs (got %u items)", n);
    const char **keys = n ? scratch(r, (size_t)(n / 2) * sizeof *keys) : NULL;
    if (n && !keys)
        return CFX_ERR_NOMEM;
    uint32_t k = 0;
    for (const cJSON *c = a->child; c; c = c->next ? c->next->next : NULL) {
        if (!cJSON_IsString(c)) {
            r->at = c;
            return jr_err(r, CFX_ERR_PARSE, "a dict key must be a string");
        }
        keys[k++] = c->valuestring;
    }
    if (k > 1) /* qsort(NULL, 0, ...) is undefined */
        qsort(keys, k, sizeof *keys, cmp_keys);
    for (uint32_t i = 1; i < k; i++)
        if (strcmp(keys[i - 1], keys[i]) == 0)
            return jr_err(r, CFX_ERR_PARSE, "dict key '%s' appears twice", keys[i]);
    return CFX_OK;
}

/* An operator value, {"op": "aten::_print"}, or a higher-order operator value,
 * {"hop": "torch.ops.higher_order.call_torchbind"}, resolved in the registries as targets are. */
static int read_operator(jreader *r, const cJSON *t, cfx_value *o)
{
    bool hop = strcmp(t->string, "hop") == 0;
    r->at = t;
    if (!cJSON_IsString(t))
        return jr_err(r, CFX_ERR_PARSE, hop ? "{\"hop\": ...} needs a string, \"" JW_HOP_PREFIX "NAME\""
                                            : "{\"op\": ...} needs a string, \"ns::name.overload\"");
    const char *name = t->valuestring;
    if (!hop) {
        const cfx_op *op = jr_resolve(r, CFX_TARGET_OP, name);
        if (!op)
            return cfx_error_status() ? cfx_error_status() : CFX_ERR;
        *o = cfx_op_value(op);
        return CFX_OK;
    }
    size_t plen = sizeof JW_HOP_PREFIX - 1;
    if (strncmp(name, JW_HOP_PREFIX, plen) != 0 || !name[plen])
        return jr_err(r, CFX_ERR_PARSE, "a higher-order operator value must be named \"" JW_HOP_PREFIX
                      "NAME\" (got \"%s\")", name);
    /* a HOP registers its target under its qualified name; its __name__ is the value's text */
    const cfx_builtin_fn *fn = cfx_builtin_fn_find(name);
    if (!fn || !fn->name || strcmp(fn->name, name + plen) != 0)
        return jr_err(r, CFX_ERR, "unknown higher-order operator '%s': nothing defines it; define it "
                      "(cfx_hop_new, or cfx_hop_init for the built-in ones) before loading the graph", name);
    *o = (cfx_value){CFX_V_HOP, (uint32_t)strlen(fn->name), {.s = fn->name}};
    return CFX_OK;
}

/* One value; a container gets its item array and *first / *items for the caller to fill. */
static int value_one(jreader *r, const cJSON *j, cfx_value *o, int ref_mode, const cJSON **first)
{
    *first = NULL;
    if (cJSON_IsNull(j)) {
        *o = cfx_none();
    } else if (cJSON_IsBool(j)) {
        *o = cfx_bool(cJSON_IsTrue(j));
    } else if (cJSON_IsNumber(j)) {
        int64_t i;
        if (jr_int(r, j, &i, "value") != CFX_OK)
            return CFX_ERR_PARSE;
        *o = cfx_int(i);
    } else if (cJSON_IsString(j)) {
        *o = cfx_string(j->valuestring);
    } else if (cJSON_IsArray(j) || (jr_tagged(j) && (strcmp(j->child->string, "tuple") == 0 ||
                                                      strcmp(j->child->string, "dict") == 0))) {
        const cJSON *a = cJSON_IsArray(j) ? j : j->child;
        bool dict = a != j && strcmp(a->string, "dict") == 0;
        if (!cJSON_IsArray(a))
            return jr_err(r, CFX_ERR_PARSE, "{\"%s\": ...} needs an array", dict ? "dict" : "tuple");
        uint32_t n = array_len(a);
        if (dict && check_dict_keys(r, a, n) != CFX_OK)
            return CFX_ERR_PARSE;
        cfx_value *items = NULL;
        if (n && !(items = scratch(r, (size_t)n * sizeof *items)))
            return CFX_ERR_NOMEM;
        *o = a == j ? cfx_list(items, n) : dict ? cfx_dict(items, n / 2) : cfx_tuple(items, n);
        *first = a->child;
    } else {
        const cJSON *t = jr_tagged(j);
        if (!t)
            return jr_err(r, CFX_ERR_PARSE, "a value object must have exactly one member (its tag)");
        const char *tag = t->string;
        if (strcmp(tag, "node") == 0)
            return resolve_ref(r, t, o, ref_mode);
        if (strcmp(tag, "int") == 0) {
            int64_t i;
            if (jr_int(r, j, &i, "value") != CFX_OK)
                return CFX_ERR_PARSE;
            *o = cfx_int(i);
        } else if (strcmp(tag, "float") == 0) {
            double d;
            if (read_float(r, t, &d, "value") != CFX_OK)
                return CFX_ERR_PARSE;
            *o = cfx_double(d);
        } else if (strcmp(tag, "dtype") == 0) {
            int d;
            if (read_dtype(r, t, INT32_MIN, INT32_MAX, &d, "value") != CFX_OK)
                return CFX_ERR_PARSE;
            *o = cfx_dtype_value((cfx_dtype)d);
        } else if (strcmp(tag, "device") == 0) {
            cfx_device d;
            if (read_device(r, t, &d, "value") != CFX_OK)
                return CFX_ERR_PARSE;
            *o = cfx_device_value(d);
        } else if (strcmp(tag, "memory_format") == 0) {
            int64_t m;
            if (read_memory_format(r, t, false, INT64_MIN, INT64_MAX, &m, "value") != CFX_OK)
                return CFX_ERR_PARSE;
            *o = cfx_memory_format_value((cfx_memory_format)m);
        } else if (strcmp(tag, "layout") == 0) {
            int64_t l;
            if (cJSON_IsString(t) && strcmp(t->valuestring, "torch.strided") == 0)
                l = CFX_LAYOUT_STRIDED;
            else if (cJSON_IsString(t))
                return jr_err(r, CFX_ERR_PARSE, "{\"layout\": ...} needs \"torch.strided\" or a layout code");
            else if (jr_int(r, t, &l, "layout") != CFX_OK)
                return CFX_ERR_PARSE;
            *o = cfx_layout_value(l);
        } else if (strcmp(tag, "op") == 0 || strcmp(tag, "hop") == 0) {
            return read_operator(r, t, o);
        } else {
            return jr_err(r, CFX_ERR_PARSE, "unknown value tag \"%s\"", tag);
        }
    }
    return CFX_OK;
}

static int value_slot(jreader *r, const cJSON *j, void *o, int ref_mode, const cJSON **first, void **items)
{
    cfx_value *v = o;
    int rc = value_one(r, j, v, ref_mode, first);
    *items = *first ? (void *)v->u.items : NULL;
    return rc;
}

int jr_value(jreader *r, const cJSON *j, cfx_value *out, int ref_mode)
{
    return read_tree(r, j, out, sizeof *out, ref_mode, value_slot);
}

/* ---- meta ------------------------------------------------------------------------------------ */

static int read_dims(jreader *r, const cJSON *a, int64_t **out, int *n, const char *what)
{
    r->at = a;
    if (!cJSON_IsArray(a))
        return jr_err(r, CFX_ERR_PARSE, "%s: expected an array of integers", what);
    uint32_t len = array_len(a);
    if (len > CFX_MAX_DIMS)
        return jr_err(r, CFX_ERR_PARSE, "%s: %u dimensions (at most %d)", what, len, CFX_MAX_DIMS);
    int64_t *d = scratch(r, (len ? len : 1) * sizeof *d);
    if (!d)
        return CFX_ERR_NOMEM;
    uint32_t i = 0;
    for (const cJSON *c = a->child; c; c = c->next)
        if (jr_int(r, c, &d[i++], what) != CFX_OK)
            return CFX_ERR_PARSE;
    *out = d;
    *n = (int)len;
    return CFX_OK;
}

/* The metadata members shared by a val tensor and an attribute, in this order. */
#define TENSOR_MEMBERS "dtype", "device", "shape", "stride", "storage_offset"

static int read_tensor_fields(jreader *r, cJSON *const *m, int *dtype, cfx_device *dev, int64_t **sizes,
                              int64_t **strides, int *ndim, int64_t *offset)
{
    if (!m[0] || !m[1] || !m[2] || !m[3] || !m[4])
        return jr_err(r, CFX_ERR_PARSE, "a tensor needs dtype, device, shape, stride and storage_offset");
    int n2;
    if (read_dtype(r, m[0], INT8_MIN, INT8_MAX, dtype, "dtype") != CFX_OK || read_device(r, m[1], dev, "device") != CFX_OK ||
        read_dims(r, m[2], sizes, ndim, "shape") != CFX_OK || read_dims(r, m[3], strides, &n2, "stride") != CFX_OK ||
        jr_int(r, m[4], offset, "storage_offset") != CFX_OK)
        return CFX_ERR_PARSE;
    r->at = m[3];
    if (n2 != *ndim)
        return jr_err(r, CFX_ERR_PARSE, "shape has %d dimensions but stride has %d", *ndim, n2);
    return CFX_OK;
}

static int val_one(jreader *r, const cJSON *j, cfx_meta_val *v, const cJSON **first)
{
    *first = NULL;
    memset(v, 0, sizeof *v);
    if (cJSON_IsNull(j)) {
        v->kind = CFX_MVAL_NONE;
        return CFX_OK;
    }
    if (cJSON_IsBool(j)) {
        v->kind = CFX_MVAL_BOOL;
        v->u.b = cJSON_IsTrue(j);
        return CFX_OK;
    }
    if (cJSON_IsArray(j)) {
        uint32_t n = array_len(j);
        if (n > INT32_MAX)
            return jr_err(r, CFX_ERR_PARSE, "val: list too long");
        cfx_meta_val *items = NULL;
        if (n && !(items = scratch(r, (size_t)n * sizeof *items)))
            return CFX_ERR_NOMEM;
        v->kind = CFX_MVAL_LIST;
        v->n = (int32_t)n;
        v->u.items = items;
        *first = j->child;
        return CFX_OK;
    }
    if (cJSON_IsNumber(j)) {
        v->kind = CFX_MVAL_INT;
        return jr_int(r, j, &v->u.i, "val");
    }
    const cJSON *t = jr_tagged(j);
    if (!t)
        return jr_err(r, CFX_ERR_PARSE, "val: expected null, a bool, an int, a list or a tagged object");
    if (strcmp(t->string, "int") == 0) {
        v->kind = CFX_MVAL_INT;
        return jr_int(r, j, &v->u.i, "val");
    }
    if (strcmp(t->string, "float") == 0) {
        v->kind = CFX_MVAL_DOUBLE;
        return read_float(r, t, &v->u.d, "val");
    }
    if (strcmp(t->string, "script_object") == 0) {
        v->kind = CFX_MVAL_OBJECT;
        if (cJSON_IsString(t))
            v->u.class_name = t->valuestring;
        else if (!cJSON_IsNull(t))
            return jr_err(r, CFX_ERR_PARSE, "val: {\"script_object\": ...} needs a class name or null");
        return CFX_OK;
    }
    if (strcmp(t->string, "tuple") == 0) {
        if (!cJSON_IsArray(t))
            return jr_err(r, CFX_ERR_PARSE, "val: {\"tuple\": ...} needs an array");
        uint32_t n = array_len(t);
        if (n > INT32_MAX)
            return jr_err(r, CFX_ERR_PARSE, "val: tuple too long");
        cfx_meta_val *items = NULL;
        if (n && !(items = scratch(r, (size_t)n * sizeof *items)))
            return CFX_ERR_NOMEM;
        v->kind = CFX_MVAL_TUPLE;
        v->n = (int32_t)n;
        v->u.items = items;
        *first = t->child;
        return CFX_OK;
    }
    bool token = strcmp(t->string, "token") == 0; /* an effect token: a tensor's fields */
    if (token || strcmp(t->string, "tensor") == 0) {
        static const char *const members[] = {TENSOR_MEMBERS, NULL};
        cJSON *m[5];
        if (!cJSON_IsObject(t))
            return jr_err(r, CFX_ERR_PARSE, "val: {\"%s\": ...} needs an object", t->string);
        if (jr_members(r, t, members, m, token ? "val token" : "val tensor") != CFX_OK)
            return CFX_ERR_PARSE;
        int dtype, n;
        int64_t *sizes, *strides;
        v->kind = token ? CFX_MVAL_TOKEN : CFX_MVAL_TENSOR;
        if (read_tensor_fields(r, m, &dtype, &v->device, &sizes, &strides, &n, &v->storage_offset) != CFX_OK)
            return CFX_ERR_PARSE;
        v->dtype = (int8_t)dtype;
        v->n = n;
        v->sizes = sizes;
        v->strides = strides;
        return CFX_OK;
    }
    return jr_err(r, CFX_ERR_PARSE, "val: unknown tag \"%s\"", t->string);
}

static int val_slot(jreader *r, const cJSON *j, void *o, int ref_mode, const cJSON **first, void **items)
{
    (void)ref_mode; /* a val holds no node references */
    cfx_meta_val *v = o;
    int rc = val_one(r, j, v, first);
    *items = *first ? (void *)v->u.items : NULL;
    return rc;
}

static int read_val(jreader *r, const cJSON *j, cfx_meta_val *out)
{
    return read_tree(r, j, out, sizeof *out, 0, val_slot);
}

static int read_tensor_meta(jreader *r, const cJSON *o, cfx_tensor_meta *tm)
{
    static const char *const members[] = {"shape", "dtype", "requires_grad", "stride", "memory_format",
                                          "is_quantized", NULL};
    r->at = o;
    if (!cJSON_IsObject(o))
        return jr_err(r, CFX_ERR_PARSE, "expected an object");
    cJSON *mb[6];
    if (jr_members(r, o, members, mb, "tensor_meta") != CFX_OK)
        return CFX_ERR_PARSE;
    const cJSON *sh = mb[0], *dt = mb[1], *rg = mb[2], *st = mb[3], *mf = mb[4], *q = mb[5];
    if (!sh || !dt || !cJSON_IsBool(rg) || !st || !mf || !cJSON_IsBool(q))
        return jr_err(r, CFX_ERR_PARSE, "needs shape, dtype, requires_grad (bool), stride, memory_format "
                      "and is_quantized (bool)");
    int64_t *shape, *stride, m;
    int n, n2, dtype;
    if (read_dims(r, sh, &shape, &n, "shape") != CFX_OK || read_dims(r, st, &stride, &n2, "stride") != CFX_OK ||
        read_dtype(r, dt, INT8_MIN, INT8_MAX, &dtype, "dtype") != CFX_OK ||
        read_memory_format(r, mf, true, INT8_MIN, INT8_MAX, &m, "memory_format") != CFX_OK)
        return CFX_ERR_PARSE;
    r->at = st;
    if (n != n2)
        return jr_err(r, CFX_ERR_PARSE, "shape has %d dimensions but stride has %d", n, n2);
    *tm = (cfx_tensor_meta){.ndim = n, .dtype = (int8_t)dtype, .memory_format = (int8_t)m,
                            .requires_grad = cJSON_IsTrue(rg), .is_quantized = cJSON_IsTrue(q),
                            .shape = shape, .stride = stride};
    return CFX_OK;
}

static int read_stack_trace(jreader *r, const cJSON *o, cfx_site *site)
{
    static const char *const members[] = {"file", "line", "func", NULL};
    r->at = o;
    if (!cJSON_IsObject(o))
        return jr_err(r, CFX_ERR_PARSE, "expected an object");
    cJSON *m[3];
    if (jr_members(r, o, members, m, "stack_trace") != CFX_OK)
        return CFX_ERR_PARSE;
    const cJSON *f = m[0], *l = m[1], *fn = m[2];
    int64_t line;
    if (!cJSON_IsString(f) || !l || !(cJSON_IsString(fn) || cJSON_IsNull(fn)))
        return jr_err(r, CFX_ERR_PARSE, "needs file (string), line and func (string or null)");
    if (int_in(r, l, INT32_MIN, INT32_MAX, &line, "line") != CFX_OK)
        return CFX_ERR_PARSE;
    *site = (cfx_site){f->valuestring, (int)line, cJSON_IsString(fn) ? fn->valuestring : NULL};
    return CFX_OK;
}

static int defer(jreader *r, cfx_node *n, const char *key, cJSON *pair, cJSON *value, int32_t entry)
{
    if (r->n_pending == r->pending_cap) {
        uint32_t cap = r->pending_cap ? r->pending_cap * 2 : 8;
        jr_pending *p = cfx_realloc(r->pending, cap * sizeof *p);
        if (!p)
            return jr_err(r, CFX_ERR_NOMEM, "out of memory");
        r->pending = p;
        r->pending_cap = cap;
    }
    char *k = cfx_strdup(key);
    if (!k)
        return jr_err(r, CFX_ERR_NOMEM, "out of memory");
    /* a placeholder keeps the entry's position; the real value replaces it in place later */
    if (cfx_node_meta_set(n, key, cfx_none()) != CFX_OK) {
        cfx_free(k);
        return CFX_ERR;
    }
    r->pending[r->n_pending++] = (jr_pending){n, k, cJSON_DetachItemViaPointer(pair, value), r->rec_offset,
                                             r->rec_index, entry};
    return CFX_OK;
}

static int read_entries(jreader *r, cfx_node *n, cJSON *a)
{
    r->at = a;
    if (!cJSON_IsArray(a))
        return jr_err(r, CFX_ERR_PARSE, "expected an array of [key, value] pairs");
    int32_t entry = 0;
    for (cJSON *p = a->child; p; p = p->next, entry++) {
        r->key = NULL;
        r->at = p;
        if (!cJSON_IsArray(p) || array_len(p) != 2 || !cJSON_IsString(p->child))
            return jr_err(r, CFX_ERR_PARSE, "expected an array of [key, value] pairs");
        const char *key = p->child->valuestring;
        for (const cJSON *q = a->child; q != p; q = q->next)
            if (strcmp(q->child->valuestring, key) == 0)
                return jr_err(r, CFX_ERR_PARSE, "key \"%s\" appears twice", key);
        r->key = key;
        cfx_value v;
        int rc = jr_value(r, p->child->next, &v, JR_REF_META_FIRST);
        if (rc == JR_DEFER)
            rc = defer(r, n, key, p, p->child->next, entry);
        else if (rc == CFX_OK)
            rc = cfx_node_meta_set(n, key, v);
        if (rc != CFX_OK)
            return rc;
    }
    r->key = NULL;
    return CFX_OK;
}

int jr_meta(jreader *r, cfx_node *n, cJSON *m)
{
    static const char *const members[] = {"val", "tensor_meta", "stack_trace", "entries", NULL};
    r->what = "meta";
    r->key = NULL;
    r->at = m;
    if (!cJSON_IsObject(m))
        return jr_err(r, CFX_ERR_PARSE, "expected an object");
    cJSON *mm[4];
    if (jr_members(r, m, members, mm, "meta") != CFX_OK)
        return CFX_ERR_PARSE;
    const cJSON *j;
    if ((j = mm[0])) {
        r->key = "val";
        r->at = j;
        cfx_meta_val v;
        if (read_val(r, j, &v) != CFX_OK || cfx_node_set_val(n, &v) != CFX_OK)
            return CFX_ERR;
    }
    if ((j = mm[1])) {
        r->key = "tensor_meta";
        cfx_tensor_meta tm;
        if (read_tensor_meta(r, j, &tm) != CFX_OK || cfx_node_set_tensor_meta(n, &tm) != CFX_OK)
            return CFX_ERR;
    }
    if ((j = mm[2])) {
        r->key = "stack_trace";
        r->at = j;
        cfx_site site;
        if (read_stack_trace(r, j, &site) != CFX_OK || cfx_node_set_stack_trace(n, &site) != CFX_OK)
            return CFX_ERR;
    }
    if (mm[3] && read_entries(r, n, mm[3]) != CFX_OK)
        return CFX_ERR;
    r->key = NULL;
    return CFX_OK;
}

/* ---- attributes -------------------------------------------------------------------------------- */

static int b64_val(unsigned char c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    if (c == '+')
        return 62;
    if (c == '/')
        return 63;
    return -1;
}

/* Strict RFC 4648 base64 (padded, canonical, no whitespace) of exactly want bytes into out. */
static bool b64_decode(const char *s, size_t n, unsigned char *out, size_t want)
{
    if (n % 4)
        return false;
    size_t o = 0;
    for (size_t i = 0; i < n; i += 4) {
        const unsigned char *q = (const unsigned char *)s + i;
        int pad = i + 4 == n && q[3] == '=' ? (q[2] == '=' ? 2 : 1) : 0;
        int a = b64_val(q[0]), b = b64_val(q[1]);
        int c = pad < 2 ? b64_val(q[2]) : 0, d = pad < 1 ? b64_val(q[3]) : 0;
        if (a < 0 || b < 0 || c < 0 || d < 0)
            return false;
        uint32_t v = (uint32_t)a << 18 | (uint32_t)b << 12 | (uint32_t)c << 6 | (uint32_t)d;
        /* stray bits under the padding would make a second spelling of the same bytes */
        if ((pad == 1 && (v & 0xFF)) || (pad == 2 && (v & 0xFFFF)))
            return false;
        size_t k = (size_t)(3 - pad);
        if (o + k > want)
            return false;
        unsigned char bytes[3] = {(unsigned char)(v >> 16), (unsigned char)(v >> 8), (unsigned char)v};
        memcpy(out + o, bytes, k);
        o += k;
    }
    return o == want;
}

static bool host_is_little_endian(void)
{
    const uint16_t one = 1;
    return *(const unsigned char *)&one == 1;
}

/* Scatters row-major elements into t through its strides: little-endian ones (base64 data)
 * when from_le, else in the host's order (a tensor of the weights file). */
static void fill_tensor(cfx_tensor *t, const unsigned char *src, int64_t numel, size_t item, bool from_le)
{
    unsigned char *base = cfx_tensor_data(t);
    bool le = !from_le || host_is_little_endian();
    int64_t idx[CFX_MAX_DIMS] = {0};
    int64_t off = 0;
    for (int64_t k = 0; k < numel; k++) {
        unsigned char *dst = base + (size_t)off * item;
        const unsigned char *s = src + (size_t)k * item;
        for (size_t j = 0; j < item; j++)
            dst[le ? j : item - 1 - j] = s[j];
        for (int d = t->ndim - 1; d >= 0; d--) {
            off += t->strides[d];
            if (++idx[d] < t->sizes[d])
                break;
            off -= t->strides[d] * t->sizes[d];
            idx[d] = 0;
        }
    }
}

static cfx_tensor *make_tensor(jreader *r, int dtype, cfx_device dev, const int64_t *sizes,
                               const int64_t *strides, int ndim, int64_t offset)
{
    for (int i = 0; i < ndim; i++)
        if (sizes[i] < 0 || strides[i] < 0) {
            jr_err(r, CFX_ERR_PARSE, "negative size or stride");
            return NULL;
        }
    if (offset < 0) {
        jr_err(r, CFX_ERR_PARSE, "negative storage_offset");
        return NULL;
    }
    if (offset == 0)
        return cfx_tensor_new_strided(sizes, strides, ndim, (cfx_dtype)dtype, dev);
    /* a storage reaching past the offset, viewed at the offset */
    uint64_t extent = 1;
    bool empty = false;
    for (int i = 0; i < ndim; i++) {
        empty |= sizes[i] == 0;
        if (sizes[i] > 1) {
            uint64_t span = (uint64_t)(sizes[i] - 1) * (uint64_t)strides[i];
            if (strides[i] && span / (uint64_t)strides[i] != (uint64_t)(sizes[i] - 1)) {
                jr_err(r, CFX_ERR_PARSE, "tensor extent overflows");
                return NULL;
            }
            extent += span;
            if (extent < span) {
                jr_err(r, CFX_ERR_PARSE, "tensor extent overflows");
                return NULL;
            }
        }
    }
    uint64_t total = (empty ? 0 : extent) + (uint64_t)offset;
    if (total > (uint64_t)INT64_MAX / 16) {
        jr_err(r, CFX_ERR_PARSE, "tensor extent overflows");
        return NULL;
    }
    int64_t n = (int64_t)total;
    cfx_tensor *base = cfx_tensor_new(&n, 1, (cfx_dtype)dtype, dev);
    return base ? cfx_tensor_new_view(base, sizes, strides, ndim, offset) : NULL;
}

int jr_attribute(jreader *r, cfx_graph_module *gm, const cJSON *a)
{
    r->rec_kind = "attribute";
    r->rec_name = NULL;
    r->what = NULL;
    r->key = NULL;
    r->at = a;
    static const char *const members[] = {TENSOR_MEMBERS, "data", "name", NULL};
    cJSON *m[7];
    if (!cJSON_IsObject(a))
        return jr_err(r, CFX_ERR_PARSE, "an attribute record must be an object");
    const cJSON *nm = cJSON_GetObjectItemCaseSensitive(a, "name");
    if (!cJSON_IsString(nm) || !nm->valuestring[0])
        return jr_err(r, CFX_ERR_PARSE, "an attribute record needs a non-empty \"name\"");
    r->rec_name = nm->valuestring;
    if (jr_members(r, a, members, m, "attribute") != CFX_OK)
        return CFX_ERR_PARSE;
    if (cfx_graph_module_get_attr(gm, nm->valuestring))
        return jr_err(r, CFX_ERR_PARSE, "the attribute appears twice");
    int dtype, ndim;
    cfx_device dev;
    int64_t *sizes, *strides, offset;
    if (read_tensor_fields(r, m, &dtype, &dev, &sizes, &strides, &ndim, &offset) != CFX_OK)
        return CFX_ERR_PARSE;
    r->at = m[0];
    if (!cfx_dtype_valid(dtype))
        return jr_err(r, CFX_ERR_PARSE, "dtype code %d is not one cfx has tensors of", dtype);
    r->at = m[2];
    const cJSON *data = m[5];
    size_t item = cfx_dtype_size((cfx_dtype)dtype);
    int64_t numel = 1;
    for (int i = 0; i < ndim; i++) {
        if (sizes[i] < 0)
            return jr_err(r, CFX_ERR_PARSE, "negative size");
        if (sizes[i] && numel > INT64_MAX / 16 / sizes[i])
            return jr_err(r, CFX_ERR_PARSE, "tensor too large");
        numel *= sizes[i];
    }
    unsigned char *bytes = NULL;
    cfx_tensor *given = NULL; /* the attribute's tensor in the weights file */
    if (!data && r->weights && dev.type == CFX_DEVICE_CPU) {
        r->at = nm;
        int k = cfx_safetensors_find(r->weights, nm->valuestring);
        if (k < 0)
            return jr_err(r, CFX_ERR_PARSE, "the weights file '%s' has no tensor of this name (and the "
                          "record has no \"data\")", r->weights_name);
        given = cfx_safetensors_tensor(r->weights, k);
        bool same = given->dtype == dtype && given->ndim == ndim;
        for (int i = 0; same && i < ndim; i++)
            same = given->sizes[i] == sizes[i];
        if (!same) {
            cfx_buf b;
            cfx_buf_init(&b);
            cfx_tensor_print_sizes(given, &b);
            int rc = jr_err(r, CFX_ERR_PARSE, "the weights file '%s' has it as %s of shape %s, which is not "
                            "the attribute's dtype and shape", r->weights_name,
                            cfx_safetensors_dtype_name((cfx_dtype)given->dtype), b.data ? b.data : "?");
            cfx_buf_free(&b);
            return rc;
        }
        r->weights_used[k] = 1;
        int64_t contig[CFX_MAX_DIMS];
        cfx_contiguous_strides(sizes, ndim, contig);
        if (offset == 0 && (ndim == 0 || memcmp(contig, strides, (size_t)ndim * sizeof *strides) == 0))
            return cfx_graph_module_set_attr(gm, nm->valuestring, given); /* the loaded tensor itself */
    }
    if (data) {
        r->at = data;
        if (!cJSON_IsString(data))
            return jr_err(r, CFX_ERR_PARSE, "\"data\" must be a base64 string");
        if (dev.type != CFX_DEVICE_CPU)
            return jr_err(r, CFX_ERR_PARSE, "\"data\" given for a tensor not on the CPU");
        size_t want = (size_t)numel * item, n = strlen(data->valuestring);
        /* the length is checked before the buffer is allocated: a short string cannot make the
         * loader allocate (and the system zero) the bytes of a huge declared shape */
        bool decoded = n == (want + 2) / 3 * 4;
        if (decoded) {
            bytes = cfx_malloc(want ? want : 1);
            if (!bytes)
                return jr_err(r, CFX_ERR_NOMEM, "out of memory");
            decoded = b64_decode(data->valuestring, n, bytes, want);
        }
        if (!decoded) {
            cfx_free(bytes);
            return jr_err(r, CFX_ERR_PARSE, "\"data\" is not the base64 of %zu bytes (%lld elements "
                          "of %zu bytes)", want, (long long)numel, item);
        }
        if (dtype == CFX_BOOL)
            for (size_t i = 0; i < want; i++)
                if (bytes[i] > 1) {
                    cfx_free(bytes);
                    return jr_err(r, CFX_ERR_PARSE, "\"data\": a bool element is neither 0 nor 1");
                }
    }
    cfx_scope s = cfx_scope_begin();
    cfx_tensor *t = make_tensor(r, dtype, dev, sizes, strides, ndim, offset);
    int rc = t ? CFX_OK : CFX_ERR;
    if (t && bytes)
        fill_tensor(t, bytes, numel, item, true);
    else if (t && given && numel)
        fill_tensor(t, cfx_tensor_data(given), numel, item, false);
    if (t)
        rc = cfx_graph_module_set_attr(gm, nm->valuestring, t);
    cfx_scope_end(s); /* drops our references; the module holds its own */
    cfx_free(bytes);
    return rc;
}
