/* istr.h - the record behind every interned string of a name space, private to ir/.
 *
 * names.c owns these records; the header exists so that create_node, the tracer's hot path,
 * can take create_name's common case inline (ir_names_create_fast) instead of a call. */
#ifndef CFX_IR_ISTR_H
#define CFX_IR_ISTR_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "ir/names.h"

/* A string's bytes, its hash, and the naming state FX keeps in dicts keyed by it. The used
 * suffixes n ("<s>_<n>" is used) are those in [run_lo, run_hi), in the bitset, or in the name
 * space's overflow set: a run of suffixes taken in a row costs no bit per name. */
typedef struct ir_istr {
    uint32_t hash, len;
    int64_t count;       /* _base_count[this string] (0 when absent, as .get(s, 0)) */
    uint64_t *bits;      /* bit n set: suffix n is used (malloc'd) */
    uint32_t nwords;
    uint32_t n_overflow; /* used suffixes of this base kept in the overflow set */
    uint32_t run_lo, run_hi;
    uint32_t free_from;  /* every suffix in the bitset or the overflow set is below it */
    uint32_t fast_num;   /* the suffix ir_names_next gives next when it is in [1,
                            CFX_NAME_MAX_SUFFIX]: set (ir_istr_refresh) when used_plain and
                            run_open hold and count + 1 == run_hi; else 0. One load and one
                            compare say the whole steady state. */
    uint8_t used_plain;  /* "<s>" itself is used */
    uint8_t run_open;    /* run_lo < run_hi >= free_from: suffix run_hi is unused */
    uint8_t reserved;    /* names.c's enum reserved_kind; 0: not reserved */
    char s[];
} ir_istr;

static inline ir_istr *ir_istr_of(const char *s) { return (ir_istr *)(void *)(s - offsetof(ir_istr, s)); }

/* Whether candidate c can take ir_names_next: no numeric suffix (so whole == base) and not
 * reserved. Fixed once c is prepared. */
static inline bool ir_names_fast_candidate(const cfx_name_candidate *c)
{
    return c->num < 0 && !ir_istr_of(c->base)->reserved;
}

/* Sets fast_num from the state it summarizes: after anything that changes used_plain,
 * run_open, run_hi or count (names.c). */
static inline void ir_istr_refresh(ir_istr *b)
{
    int64_t num = b->count + 1;
    b->fast_num = b->used_plain && b->run_open && num == (int64_t)b->run_hi && num > 0 && num <= UINT32_MAX
                      ? (uint32_t)num
                      : 0;
}

/* create_name's common case, a tracer naming its hundredth `add`, for a candidate that
 * passes ir_names_fast_candidate. FX's loop starts at num = _base_count[base] and takes
 * `base` itself if unused, else the first unused `base_<num+1...>`; when `base` is used and
 * that is the very next suffix and it extends the open run of used suffixes (fast_num says
 * so), the answer is known without the loop. Returns false (nothing changed) for everything
 * else, the plain name's first use included, which cfx_names_create_prepared handles in
 * full. */
static inline bool ir_names_next(const char *s, cfx_name *out)
{
    ir_istr *base = ir_istr_of(s);
    uint32_t num = base->fast_num;
    if (num - 1u >= (uint32_t)CFX_NAME_MAX_SUFFIX) /* 0 (not the steady state) or beyond */
        return false;
    base->count = num;
    base->run_hi = num + 1;
    base->fast_num = num + 1; /* the steady state goes on */
    *out = (cfx_name){s, (int32_t)num};
    return true;
}

/* Takes back the ir_names_next(s, ...) that gave nm, nothing having named since: its state
 * before that call is known exactly (count, run_hi and fast_num one less). */
static inline void ir_names_unnext(const char *s, cfx_name nm)
{
    ir_istr *base = ir_istr_of(s);
    base->run_hi = (uint32_t)nm.suffix;
    base->count = nm.suffix - 1;
    base->fast_num = (uint32_t)nm.suffix;
}

/* Both: create_name's common case for any prepared candidate. */
static inline bool ir_names_create_fast(const cfx_name_candidate *c, cfx_name *out)
{
    return ir_names_fast_candidate(c) && ir_names_next(c->base, out);
}

#endif
