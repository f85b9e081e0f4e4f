/* prefault.h - populating fresh memory on a background thread.
 *
 * A graph grows by ~150 bytes a node into memory the process has never touched, and on the
 * virtual machines cfx runs on the kernel takes ~2 microseconds to fault in each 4 KiB page:
 * ~70 ns a node, as much as building the node. The arena (arena.c) therefore asks, a window
 * ahead of its bump pointer, for the next pages to be populated (MADV_POPULATE_WRITE) by one
 * process-wide worker thread, so the page faults overlap with tracing instead of adding to it.
 * A page the worker has not reached yet simply faults in on first touch, as it would anyway:
 * populating is only ever a hint, never needed for correctness.
 *
 * The worker (thread name "cfx-prefault") is started on the first request and lives until
 * the process exits (it holds no memory of its own worth freeing). It keeps off the CPU of
 * the thread whose request it serves (its affinity excludes that CPU), and after its last
 * request polls for the next one for a few hundred microseconds before it sleeps (prefault.c
 * says why). It is off when CFX_PREFAULT=0 is in the environment or after
 * cfx_prefault_set_enabled(false), when the process may run on one CPU only (the main
 * thread's and the first caller's affinity together), when the kernel refuses the madvise
 * (before 5.14), or when the thread cannot be created; then requests are refused (and the
 * arena populates synchronously). A forked child starts with an empty queue and no worker,
 * and starts its own on its first request. */
#ifndef CFX_IR_PREFAULT_H
#define CFX_IR_PREFAULT_H

#include <stdbool.h>
#include <stddef.h>

/* Asks for [from, from + len) (page aligned, inside a private anonymous mapping) to be
 * populated soon. Returns false if nothing will be done (disabled, or the queue is full). */
bool cfx_prefault_request(void *from, size_t len);

/* Drops queued requests overlapping [from, from + len) and waits for the worker to finish
 * the one it may be running there. Call before unmapping that memory, so the worker never
 * populates pages of whatever is mapped at the same address next. */
void cfx_prefault_cancel(void *from, size_t len);

/* Turns background populating on or off for the process (default: on unless CFX_PREFAULT=0).
 * Requests already queued still run. */
void cfx_prefault_set_enabled(bool on);
bool cfx_prefault_enabled(void);

#endif
