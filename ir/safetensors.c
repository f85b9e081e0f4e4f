/* safetensors.c - what the safetensors reader (safetensors_read.c) and writer
 * (safetensors_write.c) share: the format's dtype names and their order, byte order, UTF-8.
 *
 * The dtype table is safetensors' Dtype enum in declaration order, which is also the order a
 * written file's tensors follow (widest rank first), so cfx's files are Python's byte for byte.
 * Names safetensors has and cfx lacks are listed too, so a reader can tell "not a dtype" from
 * "not one of cfx's". */
#include <string.h>

#include "ir/safetensors_internal.h"

/* ---- dtypes -------------------------------------------------------------------------------- */

/* rank: the position in safetensors' Dtype enum, which orders the tensors of a written file
 * (C64 sits between F32 and F64 there: a file of safetensors 0.8 puts I64, F64, C64, F32 in
 * that order, which tests/ir/test_safetensors.c's cfx_reads_python_files checks).
 * C64 is complex64 (two little-endian float32s); safetensors has no complex128. */
static const struct {
    const char *name;
    int dtype; /* a cfx_dtype, or -1 for one cfx does not have */
    int rank;
} dtypes[] = {
    {"BOOL", CFX_BOOL, 0},    {"F4", -1, 1},      {"F6_E2M3", -1, 2},  {"F6_E3M2", -1, 3},
    {"U8", CFX_UINT8, 4},     {"I8", CFX_INT8, 5},      {"F8_E5M2", -1, 6},  {"F8_E4M3", -1, 7},
    {"F8_E8M0", -1, 8},       {"I16", CFX_INT16, 9},     {"U16", -1, 10},     {"F16", -1, 11},
    {"BF16", -1, 12},         {"I32", CFX_INT32, 13}, {"U32", -1, 14}, {"F32", CFX_FLOAT32, 15},
    {"C64", CFX_COMPLEX64, 16}, {"F64", CFX_FLOAT64, 17}, {"I64", CFX_INT64, 18}, {"U64", -1, 19},
};

const char *cfx_safetensors_dtype_name(cfx_dtype d)
{
    for (size_t i = 0; i < sizeof dtypes / sizeof *dtypes; i++)
        if (dtypes[i].dtype == (int)d)
            return dtypes[i].name;
    return NULL;
}

int st_dtype_rank(cfx_dtype d)
{
    for (size_t i = 0; i < sizeof dtypes / sizeof *dtypes; i++)
        if (dtypes[i].dtype == (int)d)
            return dtypes[i].rank;
    return -1;
}

bool st_host_is_little_endian(void)
{
    const uint16_t one = 1;
    return *(const unsigned char *)&one == 1;
}

void st_swap_bytes(unsigned char *p, size_t nbytes, size_t item)
{
    for (size_t k = 0; item > 1 && k + item <= nbytes; k += item)
        for (size_t a = 0, b = item - 1; a < b; a++, b--) {
            unsigned char c = p[k + a];
            p[k + a] = p[k + b];
            p[k + b] = c;
        }
}

/* Well-formed UTF-8 (no overlongs, surrogates or code points past U+10FFFF). */
bool st_utf8_valid(const unsigned char *s, size_t n)
{
    for (size_t i = 0; i < n;) {
        unsigned c = s[i];
        size_t k = c < 0x80 ? 0 : (c & 0xE0) == 0xC0 ? 1 : (c & 0xF0) == 0xE0 ? 2 : (c & 0xF8) == 0xF0 ? 3 : 9;
        if (k == 9 || i + k >= n)
            return false;
        if (k == 0) {
            i++;
            continue;
        }
        uint32_t cp = c & (0x3Fu >> k);
        for (size_t j = 1; j <= k; j++) {
            if ((s[i + j] & 0xC0) != 0x80)
                return false;
            cp = cp << 6 | (s[i + j] & 0x3Fu);
        }
        static const uint32_t min[4] = {0, 0x80, 0x800, 0x10000};
        if (cp < min[k] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
            return false;
        i += k + 1;
    }
    return true;
}

int st_dtype_parse(const char *name)
{
    for (size_t i = 0; i < sizeof dtypes / sizeof *dtypes; i++)
        if (strcmp(dtypes[i].name, name) == 0)
            return dtypes[i].dtype;
    return -2;
}
