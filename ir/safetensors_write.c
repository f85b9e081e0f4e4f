/* safetensors_write.c - named tensors written as a safetensors file.
 *
 * Tensors are ordered as Python's safetensors orders them (dtype rank descending, then name),
 * so each starts at a multiple of its element size and cfx's file is byte for byte the file
 * Python writes for the same tensors. The header is serialized by hand in serde_json's compact
 * style (its escapes included) and padded with spaces to a multiple of 8. A contiguous tensor
 * is written with one fwrite from its storage (memory-copy speed); another is gathered into
 * row-major order first, its innermost runs copied whole when they are contiguous. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/atomic_file.h"
#include "dispatch/error.h"
#include "dispatch/value.h"
#include "ir/safetensors_internal.h"

/* ---- writing ------------------------------------------------------------------------------------- */

typedef struct writer {
    FILE *f;             /* a file, or */
    unsigned char *mem;  /* a buffer of the exact size */
    size_t pos;
    const char *path;
} writer;

static int werr(const writer *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int werr(const writer *w, const char *fmt, ...)
{
    cfx_buf m;
    cfx_buf_init(&m);
    if (w->path)
        cfx_buf_printf(&m, "cannot write safetensors '%s': ", w->path);
    else
        cfx_buf_puts(&m, "cannot write safetensors: ");
    va_list ap;
    va_start(ap, fmt);
    cfx_buf_vprintf(&m, fmt, ap);
    va_end(ap);
    char *s = cfx_buf_take(&m);
    int rc = cfx_error_set_text(CFX_ERR, NULL, s ? s : "cannot write safetensors");
    cfx_free(s);
    return rc;
}

static int put(writer *w, const void *p, size_t n)
{
    if (!n)
        return CFX_OK;
    if (w->mem) {
        memcpy(w->mem + w->pos, p, n);
        w->pos += n;
        return CFX_OK;
    }
    if (fwrite(p, 1, n, w->f) != n)
        return werr(w, "writing failed: %s", strerror(errno));
    w->pos += n;
    return CFX_OK;
}

/* A JSON string as serde_json writes it. */
static void put_json_str(cfx_buf *b, const char *s)
{
    static const char hex[] = "0123456789abcdef";
    cfx_buf_putc(b, '"');
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        unsigned char c = *p;
        switch (c) {
        case '"': cfx_buf_puts(b, "\\\""); break;
        case '\\': cfx_buf_puts(b, "\\\\"); break;
        case '\b': cfx_buf_puts(b, "\\b"); break;
        case '\f': cfx_buf_puts(b, "\\f"); break;
        case '\n': cfx_buf_puts(b, "\\n"); break;
        case '\r': cfx_buf_puts(b, "\\r"); break;
        case '\t': cfx_buf_puts(b, "\\t"); break;
        default:
            if (c < 0x20) {
                char u[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
                cfx_buf_putn(b, u, sizeof u);
            } else {
                cfx_buf_putc(b, (char)c);
            }
        }
    }
    cfx_buf_putc(b, '"');
}

static _Thread_local cfx_tensor *const *sort_tensors;
static _Thread_local const char *const *sort_names;
static int by_rank_name(const void *a, const void *b)
{
    int i = *(const int *)a, j = *(const int *)b;
    int ri = st_dtype_rank((cfx_dtype)sort_tensors[i]->dtype), rj = st_dtype_rank((cfx_dtype)sort_tensors[j]->dtype);
    if (ri != rj)
        return rj - ri;
    return strcmp(sort_names[i], sort_names[j]);
}

static int by_plain_name(const void *a, const void *b)
{
    return strcmp(sort_names[*(const int *)a], sort_names[*(const int *)b]);
}

/* The elements of t in row-major order, little-endian, into dst. */
static void gather(const cfx_tensor *t, unsigned char *dst, int64_t numel, size_t item)
{
    const unsigned char *base = cfx_tensor_data(t);
    int nd = t->ndim;
    int64_t inner = nd ? t->sizes[nd - 1] : 1;
    bool run = nd == 0 || t->strides[nd - 1] == 1; /* the innermost dimension is one memcpy */
    int64_t idx[CFX_MAX_DIMS] = {0};
    int64_t off = 0, k = 0;
    while (k < numel) {
        if (run) {
            memcpy(dst + (size_t)k * item, base + (size_t)off * item, (size_t)inner * item);
            k += inner;
        } else {
            for (int64_t q = 0; q < inner; q++)
                memcpy(dst + (size_t)(k + q) * item, base + (size_t)(off + q * t->strides[nd - 1]) * item, item);
            k += inner;
        }
        for (int d = nd - 2; d >= 0; d--) {
            off += t->strides[d];
            if (++idx[d] < t->sizes[d])
                break;
            off -= t->strides[d] * t->sizes[d];
            idx[d] = 0;
        }
    }
    if (!st_host_is_little_endian())
        st_swap_bytes(dst, (size_t)numel * item, t->dtype == CFX_COMPLEX64 ? item / 2 : item); /* per part */
}

/* Checks the inputs and builds the padded header; order gets the write order. */
static int build_header(writer *w, const char *const *names, cfx_tensor *const *tensors, int n,
                        const char *const *meta, int n_meta, int *order, cfx_buf *h, uint64_t *data_size)
{
    if (n < 0 || n_meta < 0 || (n && (!names || !tensors)) || (n_meta && !meta))
        return werr(w, "bad arguments");
    for (int i = 0; i < n; i++) {
        const cfx_tensor *t = tensors[i];
        const char *nm = names[i];
        if (!nm)
            return werr(w, "tensor %d has no name", i);
        if (!st_utf8_valid((const unsigned char *)nm, strlen(nm)))
            return werr(w, "the name of tensor %d is not valid UTF-8", i);
        if (strcmp(nm, ST_METADATA_KEY) == 0)
            return werr(w, "a tensor cannot be called \"" ST_METADATA_KEY "\" (the header's metadata entry)");
        if (!t)
            return werr(w, "tensor '%s' is NULL", nm);
        if (t->dtype == CFX_COMPLEX128) /* as safetensors.torch's save refuses it */
            return werr(w, "tensor '%s' is torch.complex128, which safetensors cannot store (its only complex "
                           "dtype is C64, torch.complex64)", nm);
        if (!cfx_safetensors_dtype_name((cfx_dtype)t->dtype))
            return werr(w, "tensor '%s' has dtype code %d, which safetensors has no name for", nm, (int)t->dtype);
        if (t->device.type != CFX_DEVICE_CPU || (cfx_tensor_numel(t) && !cfx_tensor_data(t))) {
            char dev[32];
            return werr(w, "tensor '%s' is on %s: only CPU tensors have data to write", nm,
                        cfx_device_format(t->device, dev, sizeof dev));
        }
    }
    for (int k = 0; k < 2 * n_meta; k++)
        if (!meta[k] || !st_utf8_valid((const unsigned char *)meta[k], strlen(meta[k])))
            return werr(w, "metadata %s %d is %s", k % 2 ? "value" : "key", k / 2, meta[k] ? "not valid UTF-8" : "NULL");
    for (int a = 0; a < n_meta; a++)
        for (int b = 0; b < a; b++)
            if (strcmp(meta[2 * a], meta[2 * b]) == 0)
                return werr(w, "metadata key \"%s\" is given twice", meta[2 * a]);
    for (int i = 0; i < n; i++)
        order[i] = i;
    sort_tensors = tensors;
    sort_names = names;
    qsort(order, (size_t)n, sizeof *order, by_plain_name);
    for (int i = 1; i < n; i++)
        if (strcmp(names[order[i - 1]], names[order[i]]) == 0)
            return werr(w, "tensor '%s' is given twice", names[order[i]]);
    qsort(order, (size_t)n, sizeof *order, by_rank_name);

    cfx_buf_putc(h, '{');
    if (n_meta) {
        cfx_buf_puts(h, "\"" ST_METADATA_KEY "\":{");
        for (int k = 0; k < n_meta; k++) {
            if (k)
                cfx_buf_putc(h, ',');
            put_json_str(h, meta[2 * k]);
            cfx_buf_putc(h, ':');
            put_json_str(h, meta[2 * k + 1]);
        }
        cfx_buf_putc(h, '}');
    }
    uint64_t at = 0;
    for (int k = 0; k < n; k++) {
        const cfx_tensor *t = tensors[order[k]];
        if (k || n_meta)
            cfx_buf_putc(h, ',');
        put_json_str(h, names[order[k]]);
        cfx_buf_printf(h, ":{\"dtype\":\"%s\",\"shape\":[", cfx_safetensors_dtype_name((cfx_dtype)t->dtype));
        for (int d = 0; d < t->ndim; d++)
            cfx_buf_printf(h, d ? ",%lld" : "%lld", (long long)t->sizes[d]);
        uint64_t nbytes = (uint64_t)cfx_tensor_numel(t) * cfx_dtype_size((cfx_dtype)t->dtype);
        cfx_buf_printf(h, "],\"data_offsets\":[%llu,%llu]}", (unsigned long long)at,
                       (unsigned long long)(at + nbytes));
        at += nbytes;
    }
    cfx_buf_putc(h, '}');
    while (h->len % 8)
        cfx_buf_putc(h, ' ');
    if (h->oom)
        return cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
    *data_size = at;
    return CFX_OK;
}

static int write_all(writer *w, const char *const *names, cfx_tensor *const *tensors, int n, const cfx_buf *h,
                     const int *order)
{
    unsigned char len[8];
    for (int i = 0; i < 8; i++)
        len[i] = (unsigned char)((uint64_t)h->len >> (8 * i));
    int rc = put(w, len, 8);
    if (rc == CFX_OK)
        rc = put(w, h->data, h->len);
    for (int k = 0; k < n && rc == CFX_OK; k++) {
        const cfx_tensor *t = tensors[order[k]];
        int64_t numel = cfx_tensor_numel(t);
        size_t item = cfx_dtype_size((cfx_dtype)t->dtype), nbytes = (size_t)numel * item;
        if (!numel)
            continue;
        if (cfx_tensor_is_contiguous(t) && st_host_is_little_endian()) {
            rc = put(w, cfx_tensor_data(t), nbytes);
            continue;
        }
        unsigned char *tmp = w->mem ? w->mem + w->pos : cfx_malloc(nbytes);
        if (!tmp)
            return cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory writing tensor '%s'", names[order[k]]);
        gather(t, tmp, numel, item);
        if (w->mem) {
            w->pos += nbytes;
        } else {
            rc = put(w, tmp, nbytes);
            cfx_free(tmp);
        }
    }
    return rc;
}

int cfx_safetensors_write_bytes(const char *const *names, cfx_tensor *const *tensors, int n,
                                const char *const *meta, int n_meta, void **out, size_t *len)
{
    if (!out || !len)
        return cfx_error_set(CFX_ERR, NULL, "cannot write safetensors: no output");
    *out = NULL;
    *len = 0;
    writer w = {0};
    cfx_buf h;
    cfx_buf_init(&h);
    int *order = cfx_malloc((size_t)(n > 0 ? n : 1) * sizeof *order);
    uint64_t data_size = 0;
    int rc = order ? build_header(&w, names, tensors, n, meta, n_meta, order, &h, &data_size)
                   : cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
    if (rc == CFX_OK && !(w.mem = cfx_malloc(8 + h.len + (size_t)data_size)))
        rc = cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
    if (rc == CFX_OK)
        rc = write_all(&w, names, tensors, n, &h, order);
    if (rc == CFX_OK) {
        *out = w.mem;
        *len = w.pos;
    } else {
        cfx_free(w.mem);
    }
    cfx_free(order);
    cfx_buf_free(&h);
    return rc;
}

int cfx_safetensors_write_file(const char *path, const char *const *names, cfx_tensor *const *tensors, int n,
                               const char *const *meta, int n_meta)
{
    if (!path)
        return cfx_error_set(CFX_ERR, NULL, "cannot write safetensors: no path");
    writer w = {.path = path};
    cfx_buf h;
    cfx_buf_init(&h);
    int *order = cfx_malloc((size_t)(n > 0 ? n : 1) * sizeof *order);
    uint64_t data_size = 0;
    int rc = order ? build_header(&w, names, tensors, n, meta, n_meta, order, &h, &data_size)
                   : cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
    cfx_atomic_file *af = NULL;
    if (rc == CFX_OK && !(af = cfx_atomic_file_open(path, "safetensors")))
        rc = cfx_error_status();
    if (rc == CFX_OK) {
        w.f = cfx_atomic_file_stream(af);
        rc = write_all(&w, names, tensors, n, &h, order);
    }
    if (af && rc == CFX_OK)
        rc = cfx_atomic_file_commit(af);
    else
        cfx_atomic_file_abort(af);
    cfx_free(order);
    cfx_buf_free(&h);
    return rc;
}
