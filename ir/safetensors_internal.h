/* safetensors_internal.h - what ir/safetensors*.c share (safetensors.c defines it). */
#ifndef CFX_IR_SAFETENSORS_INTERNAL_H
#define CFX_IR_SAFETENSORS_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "ir/safetensors.h"

#define ST_METADATA_KEY "__metadata__"

/* The cfx dtype of a safetensors dtype name; -1 for a name safetensors has and cfx lacks,
 * -2 for a name safetensors does not have. */
int st_dtype_parse(const char *name);
/* The position of d's safetensors dtype in safetensors' Dtype enum (-1 if it has none). */
int st_dtype_rank(cfx_dtype d);
bool st_host_is_little_endian(void);
/* Reverses each item-byte element of p[0..nbytes). */
void st_swap_bytes(unsigned char *p, size_t nbytes, size_t item);
/* Well-formed UTF-8 (no overlongs, surrogates or code points past U+10FFFF). */
bool st_utf8_valid(const unsigned char *s, size_t n);

#endif
