/* rodata.c - whether a string lives in read-only memory of a loaded object.
 *
 * A string literal (__FILE__, __func__: what CFX_HERE sites point to) sits in a segment the
 * loader maps without write permission, so its bytes cannot change while its object stays
 * loaded. meta.c's site caches use this to identify such a string by its address instead of
 * comparing it byte by byte on every traced node; a string anywhere else (heap, stack, a
 * buffer the caller may rewrite) is still compared by content. Linux with glibc answers from
 * the program headers (dl_iterate_phdr); elsewhere the answer is always "no", which is only
 * slower. Called on cache misses only. */
#if defined(__linux__) && !defined(_GNU_SOURCE)
#define _GNU_SOURCE /* dl_iterate_phdr */
#endif
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "ir/rodata.h"

#if defined(__linux__) && defined(__GLIBC__)
#include <link.h>

typedef struct ro_query {
    uintptr_t lo, hi; /* [lo, hi): the string and its NUL */
    bool found;
} ro_query;

static int in_readonly_segment(struct dl_phdr_info *info, size_t size, void *ctx)
{
    (void)size;
    ro_query *q = ctx;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || (ph->p_flags & PF_W))
            continue;
        uintptr_t lo = (uintptr_t)info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;
        if (q->lo >= lo && q->hi <= hi) {
            q->found = true;
            return 1;
        }
    }
    return 0;
}

bool ir_str_is_readonly(const char *s)
{
    if (!s)
        return false;
    ro_query q = {(uintptr_t)s, (uintptr_t)s + strlen(s) + 1, false};
    dl_iterate_phdr(in_readonly_segment, &q);
    return q.found;
}
#else
bool ir_str_is_readonly(const char *s)
{
    (void)s;
    return false;
}
#endif
