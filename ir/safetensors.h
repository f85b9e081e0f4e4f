/* safetensors.h - named tensors in the safetensors format (Hugging Face), read and written.
 *
 * A safetensors file is an 8-byte little-endian header length N, N bytes of JSON header, then
 * the raw tensor data. The header is an object mapping each tensor name to
 * {"dtype": "F32", "shape": [2, 3], "data_offsets": [begin, end]} (offsets relative to the
 * start of the data), plus an optional "__metadata__" object of string values. Data is
 * row-major and little-endian; the tensors' byte ranges cover the data exactly, without holes
 * or overlaps.
 *
 * cfx writes what Python's `safetensors` writes for the same tensors: a compact header whose
 * tensors are ordered by dtype (widest first, so every tensor is aligned to its element size)
 * then by name, padded with spaces to a multiple of 8 bytes; non-contiguous tensors are
 * written in their logical (row-major) order. Only CPU tensors have data; cfx's dtypes map to
 * F32, F64, I32, I64 and BOOL (names safetensors has and cfx lacks, F16 for one, are refused
 * when read).
 *
 * Reading validates the whole header before any tensor is made: header length against the
 * file size, JSON syntax, member names and types, known dtypes, shapes, offsets in range and
 * consistent with dtype and shape, duplicate names, and byte ranges covering the data exactly.
 * Every problem is an error naming the tensor and the field ("cannot read safetensors 'w.st':
 * tensor 'fc.weight': data_offsets [0, 20] hold 20 bytes but dtype F32 and shape [2, 3] need
 * 24"), status CFX_ERR_PARSE, and nothing is left allocated. Data is read straight into each
 * tensor's storage (one read per tensor), so loading runs at file-read speed. */
#ifndef CFX_IR_SAFETENSORS_H
#define CFX_IR_SAFETENSORS_H

#include <stddef.h>

#include "dispatch/export.h"
#include "dispatch/tensor.h"

/* The safetensors dtype name of a cfx dtype ("F32"), NULL if it has none. */
CFX_API const char *cfx_safetensors_dtype_name(cfx_dtype d);

/* ---- writing ------------------------------------------------------------------------------ */

/* The n tensors under names[i] (distinct, UTF-8; CPU tensors of a dtype above), with
 * n_meta "__metadata__" entries given as key/value pairs meta[2k], meta[2k+1] (meta may be
 * NULL when n_meta is 0). CFX_OK, or a negative status with the error recorded; a file
 * written in part is removed. */
CFX_API int cfx_safetensors_write_file(const char *path, const char *const *names, cfx_tensor *const *tensors,
                                       int n, const char *const *meta, int n_meta);
/* The same bytes into a malloc'd buffer: *out, *len (NULL / 0 on failure). */
CFX_API int cfx_safetensors_write_bytes(const char *const *names, cfx_tensor *const *tensors, int n,
                                        const char *const *meta, int n_meta, void **out, size_t *len);

/* ---- reading ------------------------------------------------------------------------------ */

/* A loaded file: its tensors (fresh, contiguous CPU tensors owned by it) in header order, and
 * its metadata. */
typedef struct cfx_safetensors cfx_safetensors;

/* NULL + error on failure. */
CFX_API cfx_safetensors *cfx_safetensors_read_file(const char *path);
CFX_API cfx_safetensors *cfx_safetensors_read_bytes(const void *data, size_t len);
CFX_API void cfx_safetensors_free(cfx_safetensors *st); /* NULL-safe; releases its tensors */

CFX_API int cfx_safetensors_count(const cfx_safetensors *st);
CFX_API const char *cfx_safetensors_name(const cfx_safetensors *st, int i);
/* Borrowed: retain it to keep it past cfx_safetensors_free. */
CFX_API cfx_tensor *cfx_safetensors_tensor(const cfx_safetensors *st, int i);
/* The index of the tensor called name, or -1 (a binary search: names are kept sorted). */
CFX_API int cfx_safetensors_find(const cfx_safetensors *st, const char *name);
/* "__metadata__": the count, and key / value of entry i (file order). */
CFX_API int cfx_safetensors_n_metadata(const cfx_safetensors *st);
CFX_API const char *cfx_safetensors_metadata_key(const cfx_safetensors *st, int i);
CFX_API const char *cfx_safetensors_metadata_value(const cfx_safetensors *st, int i);

#endif
