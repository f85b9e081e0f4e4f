/* safetensors_read.c - a safetensors file read and validated.
 *
 * Two passes over the header and one over the data. The header (at most 100 MB, the reference
 * implementation's limit, so a corrupt length cannot ask for terabytes) is read whole and
 * parsed with cJSON; every entry is checked on its own (members, dtype, shape, offsets against
 * its byte size), then names are sorted to find duplicates and byte ranges are sorted to check
 * that they tile the data. Only then are tensors allocated, and each one's bytes are read
 * straight into its storage in file order: one read per tensor, no staging buffer. A problem
 * is reported with the tensor and field named; nothing is allocated past a failure. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cjson/cJSON.h>

#include "dispatch/error.h"
#include "dispatch/scope.h"
#include "dispatch/value.h"
#include "ir/safetensors_internal.h"

#define MAX_HEADER ((uint64_t)100000000) /* the reference implementation's MAX_HEADER_SIZE */
#define MAX_EXACT 9007199254740991.0     /* 2^53 - 1: larger JSON numbers may have been rounded */

struct cfx_safetensors {
    int n;
    char **names;          /* header order */
    cfx_tensor **tensors;  /* one reference each */
    int *by_name;          /* indices sorted by name */
    int n_meta;
    char **meta;           /* key, value, key, value, ... */
};

/* ---- reading: errors and the source ---------------------------------------------------------- */

typedef struct reader {
    FILE *f;                    /* a file, or */
    const unsigned char *mem;   /* bytes */
    uint64_t size;
    const char *path;           /* NULL for bytes */
} reader;

static int rerr(const reader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int rerr(const reader *r, const char *fmt, ...)
{
    cfx_buf m;
    cfx_buf_init(&m);
    if (r->path)
        cfx_buf_printf(&m, "cannot read safetensors '%s': ", r->path);
    else
        cfx_buf_puts(&m, "cannot read safetensors data: ");
    va_list ap;
    va_start(ap, fmt);
    cfx_buf_vprintf(&m, fmt, ap);
    va_end(ap);
    char *s = cfx_buf_take(&m);
    int rc = cfx_error_set_text(CFX_ERR_PARSE, NULL, s ? s : "cannot read safetensors");
    cfx_free(s);
    return rc;
}

static bool src_read(reader *r, uint64_t off, void *dst, size_t n)
{
    if (r->mem) {
        memcpy(dst, r->mem + off, n);
        return true;
    }
    if (fseeko(r->f, (off_t)off, SEEK_SET) != 0)
        return false;
    return fread(dst, 1, n, r->f) == n;
}

/* ---- reading: the header ----------------------------------------------------------------------- */

typedef struct entry {
    const char *name;  /* in the cJSON tree */
    int dtype;
    int ndim;
    int64_t shape[CFX_MAX_DIMS];
    uint64_t begin, end;
} entry;

static bool json_uint(const cJSON *j, uint64_t *out)
{
    if (!cJSON_IsNumber(j) || j->valuedouble < 0 || j->valuedouble > MAX_EXACT ||
        j->valuedouble != (double)(uint64_t)j->valuedouble)
        return false;
    *out = (uint64_t)j->valuedouble;
    return true;
}

static void print_shape(cfx_buf *b, const entry *e)
{
    cfx_buf_putc(b, '[');
    for (int i = 0; i < e->ndim; i++)
        cfx_buf_printf(b, i ? ", %lld" : "%lld", (long long)e->shape[i]);
    cfx_buf_putc(b, ']');
}

static int read_entry(reader *r, const cJSON *j, uint64_t data_size, entry *e)
{
    const char *nm = j->string;
    e->name = nm;
    if (!cJSON_IsObject(j))
        return rerr(r, "tensor '%s': expected an object {\"dtype\", \"shape\", \"data_offsets\"}", nm);
    const cJSON *dt = NULL, *sh = NULL, *off = NULL;
    for (const cJSON *c = j->child; c; c = c->next) {
        const cJSON **slot = strcmp(c->string, "dtype") == 0 ? &dt : strcmp(c->string, "shape") == 0 ? &sh
                             : strcmp(c->string, "data_offsets") == 0 ? &off : NULL;
        if (!slot)
            return rerr(r, "tensor '%s': unknown field \"%s\"", nm, c->string);
        if (*slot)
            return rerr(r, "tensor '%s': field \"%s\" appears twice", nm, c->string);
        *slot = c;
    }
    if (!dt || !sh || !off)
        return rerr(r, "tensor '%s': missing field \"%s\"", nm, !dt ? "dtype" : !sh ? "shape" : "data_offsets");
    if (!cJSON_IsString(dt))
        return rerr(r, "tensor '%s': \"dtype\" must be a string", nm);
    e->dtype = st_dtype_parse(dt->valuestring);
    if (e->dtype == -2)
        return rerr(r, "tensor '%s': unknown dtype \"%s\"", nm, dt->valuestring);
    if (e->dtype == -1)
        return rerr(r, "tensor '%s': dtype %s is not one cfx has tensors of (it has F32, F64, I32, I64, BOOL)",
                    nm, dt->valuestring);
    if (!cJSON_IsArray(sh))
        return rerr(r, "tensor '%s': \"shape\" must be an array of non-negative integers", nm);
    e->ndim = 0;
    uint64_t numel = 1;
    bool overflow = false;
    for (const cJSON *c = sh->child; c; c = c->next) {
        uint64_t d;
        if (e->ndim == CFX_MAX_DIMS)
            return rerr(r, "tensor '%s': \"shape\" has more than %d dimensions", nm, CFX_MAX_DIMS);
        if (!json_uint(c, &d))
            return rerr(r, "tensor '%s': \"shape\"[%d] is not a non-negative integer below 2^53", nm, e->ndim);
        e->shape[e->ndim++] = (int64_t)d;
        if (d && numel > UINT64_MAX / d)
            overflow = true;
        numel *= d;
    }
    size_t item = cfx_dtype_size((cfx_dtype)e->dtype);
    if (!overflow && numel > UINT64_MAX / item)
        overflow = true;
    if (!cJSON_IsArray(off) || cJSON_GetArraySize(off) != 2 || !json_uint(off->child, &e->begin) ||
        !json_uint(off->child->next, &e->end))
        return rerr(r, "tensor '%s': \"data_offsets\" must be [begin, end], two non-negative integers", nm);
    if (e->begin > e->end)
        return rerr(r, "tensor '%s': data_offsets [%llu, %llu] end before they begin", nm,
                    (unsigned long long)e->begin, (unsigned long long)e->end);
    if (e->end > data_size)
        return rerr(r, "tensor '%s': data_offsets [%llu, %llu] reach past the %llu bytes of data", nm,
                    (unsigned long long)e->begin, (unsigned long long)e->end, (unsigned long long)data_size);
    if (overflow || numel * item != e->end - e->begin) {
        cfx_buf b;
        cfx_buf_init(&b);
        print_shape(&b, e);
        int rc = rerr(r, "tensor '%s': data_offsets [%llu, %llu] hold %llu bytes but dtype %s and shape %s need %s%llu",
                      nm, (unsigned long long)e->begin, (unsigned long long)e->end,
                      (unsigned long long)(e->end - e->begin), dt->valuestring, b.data ? b.data : "?",
                      overflow ? "more than " : "", overflow ? (unsigned long long)UINT64_MAX
                                                            : (unsigned long long)(numel * item));
        cfx_buf_free(&b);
        return rc;
    }
    return CFX_OK;
}

static _Thread_local const entry *sort_base;
static int by_name(const void *a, const void *b)
{
    return strcmp(sort_base[*(const int *)a].name, sort_base[*(const int *)b].name);
}
static int by_offset(const void *a, const void *b)
{
    const entry *x = &sort_base[*(const int *)a], *y = &sort_base[*(const int *)b];
    if (x->begin != y->begin)
        return x->begin < y->begin ? -1 : 1;
    if (x->end != y->end)
        return x->end < y->end ? -1 : 1;
    return *(const int *)a - *(const int *)b;
}

/* Names distinct; byte ranges tile [0, data_size). order gets the indices by offset. */
static int check_layout(reader *r, const entry *e, int n, uint64_t data_size, int *names, int *order)
{
    for (int i = 0; i < n; i++)
        names[i] = order[i] = i;
    sort_base = e; /* qsort has no context argument in C11: a thread-local */
    qsort(names, (size_t)n, sizeof *names, by_name);
    for (int i = 1; i < n; i++)
        if (strcmp(e[names[i - 1]].name, e[names[i]].name) == 0)
            return rerr(r, "tensor '%s' appears twice in the header", e[names[i]].name);
    qsort(order, (size_t)n, sizeof *order, by_offset);
    uint64_t at = 0;
    for (int i = 0; i < n; i++) {
        const entry *x = &e[order[i]];
        if (x->begin < at)
            return rerr(r, "tensor '%s': data_offsets [%llu, %llu] overlap those of tensor '%s'", x->name,
                        (unsigned long long)x->begin, (unsigned long long)x->end, e[order[i - 1]].name);
        if (x->begin > at)
            return rerr(r, "tensor '%s': data_offsets [%llu, %llu] leave bytes %llu..%llu of the data "
                        "unused", x->name, (unsigned long long)x->begin, (unsigned long long)x->end,
                        (unsigned long long)at, (unsigned long long)x->begin);
        at = x->end;
    }
    if (at != data_size)
        return rerr(r, "the tensors cover %llu bytes of data but %llu follow the header",
                    (unsigned long long)at, (unsigned long long)data_size);
    return CFX_OK;
}

static int read_metadata(reader *r, const cJSON *m, cfx_safetensors *st)
{
    if (!cJSON_IsObject(m))
        return rerr(r, "\"" ST_METADATA_KEY "\" must be an object of strings");
    int n = cJSON_GetArraySize(m);
    st->meta = cfx_calloc((size_t)(n ? n : 1) * 2, sizeof *st->meta);
    if (!st->meta)
        return cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
    for (const cJSON *c = m->child; c; c = c->next) {
        if (!cJSON_IsString(c))
            return rerr(r, "\"" ST_METADATA_KEY "\": the value of \"%s\" is not a string", c->string);
        for (int k = 0; k < st->n_meta; k++)
            if (strcmp(st->meta[2 * k], c->string) == 0)
                return rerr(r, "\"" ST_METADATA_KEY "\": key \"%s\" appears twice", c->string);
        int k = st->n_meta++;
        if (!(st->meta[2 * k] = cfx_strdup(c->string)) || !(st->meta[2 * k + 1] = cfx_strdup(c->valuestring)))
            return cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
    }
    return CFX_OK;
}

/* Tensors for the entries, their bytes read in file order. */
static int read_data(reader *r, const entry *e, int n, const int *order, uint64_t data_start, cfx_safetensors *st)
{
    bool le = st_host_is_little_endian();
    cfx_scope s = cfx_scope_begin();
    int rc = CFX_OK;
    for (int k = 0; k < n && rc == CFX_OK; k++) {
        int i = order[k];
        const entry *x = &e[i];
        cfx_tensor *t = cfx_tensor_new(x->shape, x->ndim, (cfx_dtype)x->dtype, cfx_device_make(CFX_DEVICE_CPU));
        if (!t) {
            rc = cfx_error_occurred() ? (int)cfx_error_status() : CFX_ERR_NOMEM;
            break;
        }
        st->tensors[i] = cfx_tensor_retain(t);
        size_t nbytes = (size_t)(x->end - x->begin), item = cfx_dtype_size((cfx_dtype)x->dtype);
        unsigned char *d = cfx_tensor_data(t);
        if (!nbytes)
            continue;
        if (!src_read(r, data_start + x->begin, d, nbytes)) {
            rc = rerr(r, "tensor '%s': reading its %zu bytes failed", x->name, nbytes);
            break;
        }
        if (!le)
            st_swap_bytes(d, nbytes, x->dtype == CFX_COMPLEX64 ? item / 2 : item); /* per part */
        if (x->dtype == CFX_BOOL)
            for (size_t b = 0; b < nbytes; b++)
                if (d[b] > 1) {
                    rc = rerr(r, "tensor '%s': element %zu of a BOOL tensor is %u, neither 0 nor 1", x->name, b, d[b]);
                    break;
                }
    }
    cfx_scope_end(s);
    return rc;
}

static cfx_safetensors *read_all(reader *r)
{
    cfx_safetensors *st = cfx_calloc(1, sizeof *st);
    char *hdr = NULL;
    cJSON *root = NULL;
    entry *e = NULL;
    int *order = NULL;
    int rc = CFX_ERR_PARSE;
    if (!st) {
        cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
        return NULL;
    }
    unsigned char lenbuf[8];
    if (r->size < 8) {
        rerr(r, "%llu bytes, fewer than the 8 of the header length", (unsigned long long)r->size);
        goto out;
    }
    if (!src_read(r, 0, lenbuf, 8)) {
        rerr(r, "reading the header length failed");
        goto out;
    }
    uint64_t hlen = 0;
    for (int i = 7; i >= 0; i--)
        hlen = hlen << 8 | lenbuf[i];
    if (hlen > r->size - 8) {
        rerr(r, "the header length %llu exceeds the %llu bytes that follow it", (unsigned long long)hlen,
             (unsigned long long)(r->size - 8));
        goto out;
    }
    if (hlen > MAX_HEADER) {
        rerr(r, "the header length %llu exceeds the format's limit of %llu bytes", (unsigned long long)hlen,
             (unsigned long long)MAX_HEADER);
        goto out;
    }
    uint64_t data_start = 8 + hlen, data_size = r->size - data_start;
    if (!(hdr = cfx_malloc((size_t)hlen + 1))) {
        rc = cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
        goto out;
    }
    if (!src_read(r, 8, hdr, (size_t)hlen)) {
        rerr(r, "reading the %llu-byte header failed", (unsigned long long)hlen);
        goto out;
    }
    hdr[hlen] = '\0';
    if (hlen == 0 || hdr[0] != '{') {
        rerr(r, "the header does not start with '{'");
        goto out;
    }
    if (!st_utf8_valid((const unsigned char *)hdr, (size_t)hlen)) {
        rerr(r, "the header is not valid UTF-8");
        goto out;
    }
    const char *end = NULL;
    root = cJSON_ParseWithLengthOpts(hdr, (size_t)hlen, &end, false);
    size_t at = end && end >= hdr && end <= hdr + hlen ? (size_t)(end - hdr) : 0;
    if (!root) {
        rerr(r, "malformed JSON in the header (at byte %zu of %llu)", at, (unsigned long long)hlen);
        goto out;
    }
    for (size_t k = at; k < hlen; k++)
        if (hdr[k] != ' ') {
            rerr(r, "unexpected data after the header's JSON object (at byte %zu of %llu; only spaces may "
                 "pad it)", k, (unsigned long long)hlen);
            goto out;
        }
    if (!cJSON_IsObject(root)) {
        rerr(r, "the header is not a JSON object");
        goto out;
    }
    int n = 0;
    const cJSON *meta = NULL;
    for (const cJSON *c = root->child; c; c = c->next) {
        if (strcmp(c->string, ST_METADATA_KEY) != 0) {
            n++;
        } else if (meta) {
            rerr(r, "\"" ST_METADATA_KEY "\" appears twice");
            goto out;
        } else {
            meta = c;
        }
    }
    if (meta && (rc = read_metadata(r, meta, st)) != CFX_OK)
        goto out;
    rc = CFX_ERR_PARSE;
    size_t cnt = (size_t)(n ? n : 1);
    e = cfx_malloc(cnt * sizeof *e);
    order = cfx_malloc(cnt * sizeof *order);
    st->by_name = cfx_malloc(cnt * sizeof *st->by_name);
    st->names = cfx_calloc(cnt, sizeof *st->names);
    st->tensors = cfx_calloc(cnt, sizeof *st->tensors);
    if (!e || !order || !st->by_name || !st->names || !st->tensors) {
        rc = cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
        goto out;
    }
    int i = 0;
    for (const cJSON *c = root->child; c; c = c->next)
        if (c != meta && (rc = read_entry(r, c, data_size, &e[i++])) != CFX_OK)
            goto out;
    if ((rc = check_layout(r, e, n, data_size, st->by_name, order)) != CFX_OK)
        goto out;
    st->n = n;
    for (i = 0; i < n; i++)
        if (!(st->names[i] = cfx_strdup(e[i].name))) {
            rc = cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
            goto out;
        }
    rc = read_data(r, e, n, order, data_start, st);
out:
    cfx_free(order);
    cfx_free(e);
    cJSON_Delete(root);
    cfx_free(hdr);
    if (rc != CFX_OK) {
        cfx_safetensors_free(st);
        return NULL;
    }
    return st;
}

cfx_safetensors *cfx_safetensors_read_bytes(const void *data, size_t len)
{
    if (!data && len)
        return cfx_error_set(CFX_ERR, NULL, "cannot read safetensors data: no data"), NULL;
    reader r = {.mem = data ? data : (const void *)"", .size = len};
    return read_all(&r);
}

cfx_safetensors *cfx_safetensors_read_file(const char *path)
{
    if (!path)
        return cfx_error_set(CFX_ERR, NULL, "cannot read safetensors: no path"), NULL;
    FILE *f = fopen(path, "rb");
    if (!f)
        return cfx_error_set(CFX_ERR, NULL, "cannot read safetensors '%s': cannot open it: %s", path,
                             strerror(errno)), NULL;
    struct stat sb;
    if (fstat(fileno(f), &sb) != 0 || !S_ISREG(sb.st_mode)) {
        fclose(f);
        return cfx_error_set(CFX_ERR, NULL, "cannot read safetensors '%s': not a regular file", path), NULL;
    }
    reader r = {.f = f, .size = (uint64_t)sb.st_size, .path = path};
    cfx_safetensors *st = read_all(&r);
    fclose(f);
    return st;
}

void cfx_safetensors_free(cfx_safetensors *st)
{
    if (!st)
        return;
    for (int i = 0; i < st->n; i++) {
        cfx_free(st->names[i]);
        cfx_tensor_release(st->tensors[i]);
    }
    for (int i = 0; i < 2 * st->n_meta; i++)
        cfx_free(st->meta[i]);
    cfx_free(st->meta);
    cfx_free(st->names);
    cfx_free(st->tensors);
    cfx_free(st->by_name);
    cfx_free(st);
}

int cfx_safetensors_count(const cfx_safetensors *st) { return st ? st->n : 0; }

const char *cfx_safetensors_name(const cfx_safetensors *st, int i)
{
    return st && i >= 0 && i < st->n ? st->names[i] : NULL;
}

cfx_tensor *cfx_safetensors_tensor(const cfx_safetensors *st, int i)
{
    return st && i >= 0 && i < st->n ? st->tensors[i] : NULL;
}

int cfx_safetensors_find(const cfx_safetensors *st, const char *name)
{
    if (!st || !name)
        return -1;
    int lo = 0, hi = st->n;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2, c = strcmp(st->names[st->by_name[mid]], name);
        if (c == 0)
            return st->by_name[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -1;
}

int cfx_safetensors_n_metadata(const cfx_safetensors *st) { return st ? st->n_meta : 0; }

const char *cfx_safetensors_metadata_key(const cfx_safetensors *st, int i)
{
    return st && i >= 0 && i < st->n_meta ? st->meta[2 * i] : NULL;
}

const char *cfx_safetensors_metadata_value(const cfx_safetensors *st, int i)
{
    return st && i >= 0 && i < st->n_meta ? st->meta[2 * i + 1] : NULL;
}

