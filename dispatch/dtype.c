/* dtype.c - names, sizes and promotion of scalar types; devices; memory formats.
 *
 * Everything here is a small table indexed by PyTorch's own codes, so that a dtype read from a
 * schema default ("ScalarType dtype=6") or a JSON dump needs no translation. The promotion
 * lattice of the dtypes cfx has kernels for is a chain (bool < int32 < int64 < float32 <
 * float64 < complex64 < complex128, complex64 with float64 giving complex128) once the small integers (uint8, int8, int16) are placed: those follow c10's table
 * (uint8 with a signed integer is the smallest signed type holding both: int8 -> int16), which
 * the golden table in tests/data/value_promote.txt checks against PyTorch itself. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch/dtype.h"

typedef struct dtype_info {
    const char *name;       /* "float32" */
    const char *torch_name; /* "torch.float32" */
    int rank; /* position on the promotion chain */
    bool floating;
} dtype_info;

/* Indexed by ScalarType code; unused codes have a NULL name. */
static const dtype_info dtypes[CFX_DTYPE_CODES] = {
    [CFX_UINT8] = {"uint8", "torch.uint8", 1, false},
    [CFX_INT8] = {"int8", "torch.int8", 1, false},
    [CFX_INT16] = {"int16", "torch.int16", 1, false},
    [CFX_INT32] = {"int32", "torch.int32", 2, false},
    [CFX_INT64] = {"int64", "torch.int64", 3, false},
    [CFX_FLOAT32] = {"float32", "torch.float32", 4, true},
    [CFX_FLOAT64] = {"float64", "torch.float64", 5, true},
    [CFX_BOOL] = {"bool", "torch.bool", 0, false},
    [CFX_COMPLEX64] = {"complex64", "torch.complex64", 6, false},
    [CFX_COMPLEX128] = {"complex128", "torch.complex128", 7, false},
};


static const dtype_info *info(cfx_dtype t) { return cfx_dtype_valid(t) ? &dtypes[t] : NULL; }

bool cfx_dtype_is_floating(cfx_dtype t)
{
    const dtype_info *d = info(t);
    return d && d->floating;
}

const char *cfx_dtype_torch_name(cfx_dtype t)
{
    const dtype_info *d = info(t);
    return d ? d->torch_name : NULL;
}

const char *cfx_dtype_name(cfx_dtype t)
{
    const dtype_info *d = info(t);
    return d ? d->name : NULL;
}

/* Python's aliases (torch.float is float32, torch.long is int64, ...) as well as the names. */
static const struct {
    const char *name;
    cfx_dtype dtype;
} aliases[] = {
    {"float32", CFX_FLOAT32}, {"float", CFX_FLOAT32}, {"float64", CFX_FLOAT64},
    {"double", CFX_FLOAT64},  {"int64", CFX_INT64},   {"long", CFX_INT64},
    {"int32", CFX_INT32},     {"int", CFX_INT32},     {"bool", CFX_BOOL},
    {"uint8", CFX_UINT8},     {"int8", CFX_INT8},     {"int16", CFX_INT16},
    {"short", CFX_INT16},     {"complex64", CFX_COMPLEX64}, {"cfloat", CFX_COMPLEX64},
    {"complex128", CFX_COMPLEX128}, {"cdouble", CFX_COMPLEX128},
};

bool cfx_dtype_parse(const char *s, cfx_dtype *out)
{
    if (!s)
        return false;
    if (strncmp(s, "torch.", 6) == 0)
        s += 6;
    for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
        if (strcmp(s, aliases[i].name) == 0) {
            *out = aliases[i].dtype;
            return true;
        }
    return false;
}

cfx_dtype cfx_dtype_promote(cfx_dtype a, cfx_dtype b)
{
    const dtype_info *da = info(a), *db = info(b);
    if (!da)
        return b;
    if (!db)
        return a;
    if (a == b)
        return a;
    /* a complex operand: the complex type of the promoted value types (c10's table: float64
     * with complex64 is complex128, an integer with complex64 stays complex64) */
    if (cfx_dtype_is_complex(a) || cfx_dtype_is_complex(b)) {
        cfx_dtype r = cfx_dtype_promote(cfx_dtype_to_real(a), cfx_dtype_to_real(b));
        return r == CFX_FLOAT64 ? CFX_COMPLEX128 : CFX_COMPLEX64;
    }
    /* the small integers among themselves and against the chain's integers (bool ranks 0,
     * int32 2 and up): a wider signed type wins; uint8 with int8 is int16 */
    bool sa = a == CFX_UINT8 || a == CFX_INT8 || a == CFX_INT16, sb = b == CFX_UINT8 || b == CFX_INT8 || b == CFX_INT16;
    if (sa || sb) {
        if (a == CFX_BOOL || (!sa && da->rank > 1))
            return a == CFX_BOOL ? b : a;
        if (b == CFX_BOOL || (!sb && db->rank > 1))
            return b == CFX_BOOL ? a : b;
        /* both small */
        if ((a == CFX_UINT8 && b == CFX_INT8) || (a == CFX_INT8 && b == CFX_UINT8))
            return CFX_INT16;
        return cfx_dtype_size(a) >= cfx_dtype_size(b) ? a : b;
    }
    return da->rank >= db->rank ? a : b;
}

static const char *const device_names[CFX_DEVICE_NUM_TYPES] = {[CFX_DEVICE_CPU] = "cpu", [CFX_DEVICE_META] = "meta"};

const char *cfx_device_type_name(cfx_device_type t)
{
    if (!cfx_device_type_valid(t))
        return NULL;
    return device_names[t];
}

char *cfx_device_format(cfx_device d, char *buf, size_t n)
{
    const char *name = cfx_device_type_name((cfx_device_type)d.type);
    if (!name)
        name = "unknown";
    if (d.index >= 0)
        snprintf(buf, n, "%s:%d", name, d.index);
    else
        snprintf(buf, n, "%s", name);
    return buf;
}

/* "type" or "type:index", index a decimal without sign or leading zeros, as c10::Device. */
bool cfx_device_parse(const char *s, cfx_device *out)
{
    if (!s)
        return false;
    const char *colon = strchr(s, ':');
    size_t tlen = colon ? (size_t)(colon - s) : strlen(s);
    for (int t = 0; t < (int)(sizeof device_names / sizeof device_names[0]); t++) {
        if (strlen(device_names[t]) != tlen || strncmp(s, device_names[t], tlen) != 0)
            continue;
        cfx_device d = cfx_device_make((cfx_device_type)t);
        if (colon) {
            const char *p = colon + 1;
            if (*p < '0' || *p > '9' || (p[0] == '0' && p[1] != '\0'))
                return false;
            long idx = 0;
            for (; *p; p++) {
                if (*p < '0' || *p > '9')
                    return false;
                idx = idx * 10 + (*p - '0');
                if (idx > 127)
                    return false;
            }
            d.index = (int8_t)idx;
        }
        *out = d;
        return true;
    }
    return false;
}

const char *cfx_memory_format_torch_name(cfx_memory_format m)
{
    switch (m) {
    case CFX_CONTIGUOUS_FORMAT: return "torch.contiguous_format";
    case CFX_PRESERVE_FORMAT: return "torch.preserve_format";
    case CFX_CHANNELS_LAST: return "torch.channels_last";
    case CFX_CHANNELS_LAST_3D: return "torch.channels_last_3d";
    }
    return NULL;
}
