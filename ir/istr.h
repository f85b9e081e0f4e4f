/* istr.h - the record behind every interned string of a name space, private to ir/.
 *
 * names.c owns these records; the header exists so that create_node, the tracer's hot path,
 * can take create_name's common case inline (ir_names_create_fast) instead of a call. */
#ifndef CFX_IR_ISTR_H
#define CFX_IR_ISTR_H

#include <stddef.h>
#include <stdint.h>

#include "ir/names.h"

/* A string's bytes, its hash, and the naming state FX keeps in dicts keyed by it. */
typedef struct ir_istr {
    uint32_t hash, len;
    int64_t count;       /* _base_count[this string] (0 when absent, as .get(s, 0)) */
    uint64_t *bits;      /* used suffixes: bit n set = "<s>_<n>" is used (malloc'd) */
    uint32_t nwords;
    uint32_t n_overflow; /* used suffixes of this base kept in the overflow set */
    uint8_t used_plain;  /* "<s>" itself is used */
    uint8_t reserved;    /* names.c's enum reserved_kind; 0: not reserved */
    char s[];
} ir_istr;

static inline ir_istr *ir_istr_of(const char *s) { return (ir_istr *)(void *)(s - offsetof(ir_istr, s)); }

/* Bitsets never grow past the words that hold CFX_NAME_MAX_SUFFIX (names.c puts anything
 * beyond in the overflow set), so a suffix whose word is in range is a valid suffix. */
#define IR_NAME_MAX_WORDS ((uint32_t)(CFX_NAME_MAX_SUFFIX >> 6) + 1)

/* Whether candidate c can take ir_names_next: no numeric suffix (so whole == base) and not
 * reserved. Fixed once c is prepared. */
static inline bool ir_names_fast_candidate(const cfx_name_candidate *c)
{
    return c->num < 0 && !ir_istr_of(c->base)->reserved;
}

/* create_name's common case, a tracer naming its hundredth `add`, for a candidate that
 * passes ir_names_fast_candidate. FX's loop starts at num = _base_count[base] and takes
 * `base` itself if unused, else the first unused `base_<num+1...>`; when that is the very
 * next suffix and it sits in the bitset, the answer is known without the loop. Returns
 * false (nothing changed) for everything else: a used next suffix, one beyond the bitset,
 * a base with suffixes in the overflow set, which cfx_names_create_prepared handles in full. */
static inline bool ir_names_next(const char *s, cfx_name *out)
{
    ir_istr *base = ir_istr_of(s);
    if (!base->used_plain) {
        base->used_plain = 1; /* _base_count[base] = _base_count[base] */
        *out = (cfx_name){s, CFX_NAME_NO_SUFFIX};
        return true;
    }
    uint64_t num = (uint64_t)base->count + 1;
    uint64_t w = num >> 6, bit = (uint64_t)1 << (num & 63);
    if (w >= base->nwords || base->n_overflow || (base->bits[w] & bit))
        return false;
    base->bits[w] |= bit;
    base->count = (int64_t)num;
    *out = (cfx_name){s, (int32_t)num};
    return true;
}

/* Both: create_name's common case for any prepared candidate. */
static inline bool ir_names_create_fast(const cfx_name_candidate *c, cfx_name *out)
{
    return ir_names_fast_candidate(c) && ir_names_next(c->base, out);
}

#endif
