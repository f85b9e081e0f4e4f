/* printbuf.h - fast appends to a cfx_buf for the graph printers (ir/ internal).
 *
 * Printing a million-node graph is a few hundred million bytes of small appends. These
 * helpers reserve once and copy, keeping cfx_buf's contract (NUL-terminated, sticky oom), and
 * write names and integers without any printf. */
#ifndef CFX_IR_PRINTBUF_H
#define CFX_IR_PRINTBUF_H

#include <stdlib.h>
#include <string.h>

#include "ir/node.h"

/* Makes room for n more bytes (+ NUL); returns where to write, or NULL (oom set). */
static inline char *pb_reserve(cfx_buf *b, size_t n)
{
    if (b->oom)
        return NULL;
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n + 1)
            cap *= 2;
        char *p = realloc(b->data, cap);
        if (!p) {
            b->oom = true;
            return NULL;
        }
        b->data = p;
        b->cap = cap;
    }
    return b->data + b->len;
}

/* Marks n reserved bytes as written. */
static inline void pb_commit(cfx_buf *b, size_t n)
{
    b->len += n;
    b->data[b->len] = '\0';
}

static inline void pb_put(cfx_buf *b, const char *s, size_t n)
{
    char *p = pb_reserve(b, n);
    if (p) {
        memcpy(p, s, n);
        pb_commit(b, n);
    }
}

/* lit must be a string literal (sizeof gives its length). */
#define PB_LIT(b, lit) pb_put((b), ("" lit), sizeof(lit) - 1)

static inline void pb_putc(cfx_buf *b, char c)
{
    char *p = pb_reserve(b, 1);
    if (p) {
        *p = c;
        pb_commit(b, 1);
    }
}

static inline void pb_u64(cfx_buf *b, uint64_t v)
{
    char *p = pb_reserve(b, 20);
    if (p)
        pb_commit(b, cfx_fmt_u64(v, p));
}

static inline void pb_i64(cfx_buf *b, int64_t v)
{
    char *p = pb_reserve(b, 21);
    if (p)
        pb_commit(b, cfx_fmt_i64(v, p));
}

static inline void pb_name(cfx_buf *b, cfx_name nm)
{
    size_t blen = cfx_istr_len(nm.base);
    char *p = pb_reserve(b, blen + 12);
    if (!p)
        return;
    memcpy(p, nm.base, blen);
    size_t n = blen;
    if (nm.suffix >= 0) {
        p[n++] = '_';
        n += cfx_fmt_u64((uint64_t)nm.suffix, p + n);
    }
    pb_commit(b, n);
}

static inline void pb_istr(cfx_buf *b, const char *interned) { pb_put(b, interned, cfx_istr_len(interned)); }

#endif
