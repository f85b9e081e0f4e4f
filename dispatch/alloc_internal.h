/* alloc_internal.h - what the library asks of the allocator hook beyond alloc.h. */
#ifndef CFX_DISPATCH_ALLOC_INTERNAL_H
#define CFX_DISPATCH_ALLOC_INTERNAL_H

#include <stdbool.h>

/* No hook is installed: the arena may map big chunks itself (arena.c). */
bool cfx_allocator_is_default(void);

#endif
