/* atomic_file.h - writing a file so that readers see the old contents or the new, never a part.
 *
 * Every file cfx writes (graph JSON, safetensors weights, the driver's -o outputs) goes through
 * here: the data goes to a new temporary file in the target's directory, which is renamed over
 * the target only once every write, the flush and the close have succeeded. A failed write
 * removes the temporary (which the writer created) and leaves any previous file byte for byte
 * as it was. A target that exists and is not a regular file (a device such as /dev/null or
 * /dev/full, a FIFO) is written in place instead and never removed; a symbolic link is
 * followed, so the link stays and the file it names is replaced. */
#ifndef CFX_ATOMIC_FILE_H
#define CFX_ATOMIC_FILE_H

#include <stdio.h>

#include "dispatch/export.h"

typedef struct cfx_atomic_file cfx_atomic_file;

/* Opens path for writing (binary). NULL with the error recorded (cfx_error_message) if the
 * temporary cannot be created. what names the kind of file in messages ("graph JSON"). */
CFX_API cfx_atomic_file *cfx_atomic_file_open(const char *path, const char *what);
/* Where to write. */
CFX_API FILE *cfx_atomic_file_stream(cfx_atomic_file *af);
/* Flushes, closes and renames into place; frees af. CFX_OK, or an error (recorded) naming the
 * failed step, after which the target is untouched. */
CFX_API int cfx_atomic_file_commit(cfx_atomic_file *af);
/* Drops what was written (the target is untouched) and frees af. NULL is a no-op. */
CFX_API void cfx_atomic_file_abort(cfx_atomic_file *af);

#endif
