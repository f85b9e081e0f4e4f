/* printbuf.h - the graph printers' appends to a cfx_buf (ir/ internal).
 *
 * Printing a million-node graph is a few hundred million bytes of small appends: string
 * literals (whose length the compiler knows), integers and interned strings (whose length the
 * name space knows), all without printf. Everything goes through cfx_buf's own appends. */
#ifndef CFX_IR_PRINTBUF_H
#define CFX_IR_PRINTBUF_H

#include "ir/names.h"

/* lit must be a string literal (sizeof gives its length). */
#define PB_LIT(b, lit) cfx_buf_putn((b), ("" lit), sizeof(lit) - 1)

static inline void pb_u64(cfx_buf *b, uint64_t v)
{
    char tmp[20];
    cfx_buf_putn(b, tmp, cfx_fmt_u64(v, tmp));
}

static inline void pb_i64(cfx_buf *b, int64_t v)
{
    char tmp[21];
    cfx_buf_putn(b, tmp, cfx_fmt_i64(v, tmp));
}

static inline void pb_istr(cfx_buf *b, const char *interned) { cfx_buf_putn(b, interned, cfx_istr_len(interned)); }

#endif
