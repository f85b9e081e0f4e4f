/* buf.c - a growable text buffer.
 *
 * Every printer in cfx (values, schemas, dumps, graphs) appends to a cfx_buf. An allocation
 * failure is sticky: the buffer stops growing, sets oom, and cfx_buf_take returns NULL, so
 * printers never check after each append. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch/value.h"

void cfx_buf_init(cfx_buf *b) { memset(b, 0, sizeof *b); }

void cfx_buf_free(cfx_buf *b)
{
    cfx_free(b->data);
    memset(b, 0, sizeof *b);
}

static bool reserve(cfx_buf *b, size_t extra)
{
    if (b->oom)
        return false;
    if (b->len + extra + 1 <= b->cap)
        return true;
    size_t cap = b->cap ? b->cap : 64;
    while (cap < b->len + extra + 1)
        cap *= 2;
    char *p = cfx_realloc(b->data, cap);
    if (!p) {
        b->oom = true;
        return false;
    }
    b->data = p;
    b->cap = cap;
    return true;
}

void cfx_buf_putn(cfx_buf *b, const char *s, size_t n)
{
    if (!reserve(b, n))
        return;
    memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = '\0';
}

void cfx_buf_puts(cfx_buf *b, const char *s) { cfx_buf_putn(b, s, strlen(s)); }

void cfx_buf_putc(cfx_buf *b, char c) { cfx_buf_putn(b, &c, 1); }

void cfx_buf_vprintf(cfx_buf *b, const char *fmt, va_list ap)
{
    va_list again;
    va_copy(again, ap);
    char small[128];
    int n = vsnprintf(small, sizeof small, fmt, ap);
    if (n >= 0 && (size_t)n < sizeof small)
        cfx_buf_putn(b, small, (size_t)n);
    else if (n >= 0 && reserve(b, (size_t)n)) {
        vsnprintf(b->data + b->len, (size_t)n + 1, fmt, again);
        b->len += (size_t)n;
    }
    va_end(again);
}

void cfx_buf_printf(cfx_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    cfx_buf_vprintf(b, fmt, ap);
    va_end(ap);
}


char *cfx_buf_take(cfx_buf *b)
{
    char *s = NULL;
    if (!b->oom) {
        s = b->data ? b->data : cfx_calloc(1, 1);
        b->data = NULL;
    }
    cfx_buf_free(b);
    return s;
}
