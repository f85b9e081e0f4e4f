/* dtype.h - scalar types, devices, layouts and memory formats.
 *
 * The numeric values of cfx_dtype are PyTorch's ScalarType codes (Float = 6, Long = 4, ...),
 * because schemas carry them as integer defaults ("ScalarType dtype=6") and graphs printed or
 * dumped by cfx must mean the same numbers PyTorch means. Only the dtypes cfx has kernels for
 * are listed; the others can be added without renumbering. */
#ifndef CFX_DTYPE_H
#define CFX_DTYPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "dispatch/export.h"

typedef enum cfx_dtype {
    CFX_UINT8 = 0,   /* torch.uint8  (ScalarType::Byte)   */
    CFX_INT8 = 1,    /* torch.int8   (ScalarType::Char)   */
    CFX_INT16 = 2,   /* torch.int16  (ScalarType::Short)  */
    CFX_INT32 = 3,   /* torch.int32  (ScalarType::Int)    */
    CFX_INT64 = 4,   /* torch.int64  (ScalarType::Long)   */
    CFX_FLOAT32 = 6, /* torch.float32 (ScalarType::Float) */
    CFX_FLOAT64 = 7, /* torch.float64 (ScalarType::Double)*/
    CFX_COMPLEX64 = 9,   /* torch.complex64  (ScalarType::ComplexFloat): two float32 */
    CFX_COMPLEX128 = 10, /* torch.complex128 (ScalarType::ComplexDouble): two float64 */
    CFX_BOOL = 11,   /* torch.bool   (ScalarType::Bool)   */
} cfx_dtype;

typedef enum cfx_device_type {
    CFX_DEVICE_CPU = 0,
    CFX_DEVICE_META = 1,
    CFX_DEVICE_NUM_TYPES /* not a device: the number of them */
} cfx_device_type;

typedef struct cfx_device {
    int8_t type;  /* cfx_device_type */
    int8_t index; /* -1 = no index, as torch.device("cpu") */
} cfx_device;

/* torch.strided is the only layout cfx has; its code is 0 as in PyTorch. */
enum { CFX_LAYOUT_STRIDED = 0 };

/* PyTorch's MemoryFormat codes. */
typedef enum cfx_memory_format {
    CFX_CONTIGUOUS_FORMAT = 0,
    CFX_PRESERVE_FORMAT = 1,
    CFX_CHANNELS_LAST = 2,
    CFX_CHANNELS_LAST_3D = 3,
} cfx_memory_format;

/* ScalarType codes are below this. */
#define CFX_DTYPE_CODES 12
/* Element size, 0 for a code cfx has no dtype for (every tensor creation asks: inline). */
static inline size_t cfx_dtype_size(cfx_dtype t)
{
    switch (t) {
    case CFX_BOOL: case CFX_UINT8: case CFX_INT8: return 1;
    case CFX_INT16: return 2;
    case CFX_INT32: case CFX_FLOAT32: return 4;
    case CFX_INT64: case CFX_FLOAT64: case CFX_COMPLEX64: return 8;
    case CFX_COMPLEX128: return 16;
    }
    return 0;
}
/* Whether code is a ScalarType cfx has. */
static inline bool cfx_dtype_valid(int64_t code)
{
    return code >= 0 && code < CFX_DTYPE_CODES && cfx_dtype_size((cfx_dtype)code) != 0;
}
/* torch.is_floating_point: float32 and float64 (not the complex dtypes, as in PyTorch). */
CFX_API bool cfx_dtype_is_floating(cfx_dtype t);
/* torch.is_complex */
static inline bool cfx_dtype_is_complex(cfx_dtype t) { return t == CFX_COMPLEX64 || t == CFX_COMPLEX128; }
/* c10::toRealValueType (complex64 -> float32; others unchanged) and c10::toComplexType
 * (float32 -> complex64, float64 -> complex128; complex unchanged; -1 for any other). */
static inline cfx_dtype cfx_dtype_to_real(cfx_dtype t)
{
    return t == CFX_COMPLEX64 ? CFX_FLOAT32 : t == CFX_COMPLEX128 ? CFX_FLOAT64 : t;
}
static inline int cfx_dtype_to_complex(cfx_dtype t)
{
    return t == CFX_FLOAT32 || t == CFX_COMPLEX64 ? CFX_COMPLEX64 : t == CFX_FLOAT64 || t == CFX_COMPLEX128 ? CFX_COMPLEX128 : -1;
}
/* "torch.float32" */
CFX_API const char *cfx_dtype_torch_name(cfx_dtype t);
/* "float32"; NULL for an invalid code */
CFX_API const char *cfx_dtype_name(cfx_dtype t);
/* Parses "float32"/"torch.float32"/"float"/"int64"/"long"...; returns false if unknown. */
CFX_API bool cfx_dtype_parse(const char *s, cfx_dtype *out);
/* torch.promote_types */
CFX_API cfx_dtype cfx_dtype_promote(cfx_dtype a, cfx_dtype b);

static inline cfx_device cfx_device_make(cfx_device_type t) { return (cfx_device){(int8_t)t, -1}; }
CFX_API const char *cfx_device_type_name(cfx_device_type t); /* "cpu", "meta"; NULL if invalid */
static inline bool cfx_device_type_valid(int t) { return (unsigned)t < CFX_DEVICE_NUM_TYPES; }
/* Formats "cpu" / "meta" / "cpu:0" into buf (>= 16 bytes); returns buf. */
CFX_API char *cfx_device_format(cfx_device d, char *buf, size_t n);
CFX_API bool cfx_device_parse(const char *s, cfx_device *out);
/* One 16-bit compare rather than two byte compares: devices are compared on every call. */
static inline bool cfx_device_eq(cfx_device a, cfx_device b)
{
    uint16_t x, y;
    memcpy(&x, &a, sizeof x);
    memcpy(&y, &b, sizeof y);
    return x == y;
}
_Static_assert(sizeof(cfx_device) == sizeof(uint16_t), "a device is two bytes");

CFX_API const char *cfx_memory_format_torch_name(cfx_memory_format m); /* "torch.contiguous_format" */

#endif
