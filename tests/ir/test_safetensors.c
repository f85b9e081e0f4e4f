/* test_safetensors.c - ir/safetensors.h: round trips of every cfx dtype (views written
 * contiguous), the exact bytes Python's safetensors writes, every malformed header refused with
 * the tensor and field named, fuzzed files never crashing, and files crossing to Python's
 * safetensors + PyTorch and back (tools/interop/check_safetensors.py, default python3). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "dispatch/error.h"
#include "dispatch/scope.h"
#include "dispatch/tensor.h"
#include "dispatch/value.h"
#include "ir/safetensors.h"
#include "tests/test_util.h"

static cfx_scope scope;
static void setup(void) { scope = cfx_scope_begin(); }
static void teardown(void)
{
    cfx_scope_end(scope);
    cfx_error_clear();
}
TestSuite(ir_safetensors, .init = setup, .fini = teardown);

static cfx_tensor *typed(const void *data, const int64_t *sizes, int ndim, cfx_dtype dt)
{
    cfx_tensor *t = cfx_tensor_new(sizes, ndim, dt, cfx_device_make(CFX_DEVICE_CPU));
    cr_assert(t);
    memcpy(cfx_tensor_data(t), data, (size_t)cfx_tensor_numel(t) * cfx_dtype_size(dt));
    return t;
}

/* "name DTYPE [shape] values" per tensor, sorted by name, then "meta key value" sorted by key:
 * the text check_safetensors.py prints. */
static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static void dump_tensor(cfx_buf *b, const char *name, const cfx_tensor *t)
{
    cfx_buf_printf(b, "%s %s [", name, cfx_safetensors_dtype_name((cfx_dtype)t->dtype));
    for (int d = 0; d < t->ndim; d++)
        cfx_buf_printf(b, d ? ", %lld" : "%lld", (long long)t->sizes[d]);
    cfx_buf_putc(b, ']');
    /* logical order through the strides */
    int64_t n = cfx_tensor_numel(t), idx[CFX_MAX_DIMS] = {0};
    const unsigned char *base = cfx_tensor_data(t);
    size_t item = cfx_dtype_size((cfx_dtype)t->dtype);
    for (int64_t k = 0; k < n; k++) {
        int64_t off = 0;
        for (int d = 0; d < t->ndim; d++)
            off += idx[d] * t->strides[d];
        const unsigned char *p = base + (size_t)off * item;
        cfx_buf_putc(b, ' ');
        switch (t->dtype) {
        case CFX_FLOAT32: { float f; memcpy(&f, p, 4); cfx_format_double_python(f, b); break; }
        case CFX_FLOAT64: { double f; memcpy(&f, p, 8); cfx_format_double_python(f, b); break; }
        case CFX_INT32: { int32_t v; memcpy(&v, p, 4); cfx_buf_printf(b, "%d", v); break; }
        case CFX_INT64: { int64_t v; memcpy(&v, p, 8); cfx_buf_printf(b, "%lld", (long long)v); break; }
        case CFX_BOOL: cfx_buf_printf(b, "%d", *p); break;
        case CFX_UINT8: cfx_buf_printf(b, "%u", *p); break;
        case CFX_INT8: cfx_buf_printf(b, "%d", (int)(int8_t)*p); break;
        case CFX_INT16: { int16_t v; memcpy(&v, p, 2); cfx_buf_printf(b, "%d", v); break; }
        case CFX_COMPLEX64: { /* real and imaginary parts, as check_safetensors.py prints them */
            float f[2];
            memcpy(f, p, 8);
            cfx_format_double_python(f[0], b);
            cfx_buf_putc(b, ' ');
            cfx_format_double_python(f[1], b);
            break;
        }
        }
        for (int d = t->ndim - 1; d >= 0; d--) {
            if (++idx[d] < t->sizes[d])
                break;
            idx[d] = 0;
        }
    }
    cfx_buf_putc(b, '\n');
}

static char *dump_st(const cfx_safetensors *st)
{
    cfx_buf b;
    cfx_buf_init(&b);
    int n = cfx_safetensors_count(st);
    char **names = malloc(sizeof *names * (size_t)(n + 1));
    for (int i = 0; i < n; i++)
        names[i] = (char *)cfx_safetensors_name(st, i);
    qsort(names, (size_t)n, sizeof *names, cmp_str);
    for (int i = 0; i < n; i++)
        dump_tensor(&b, names[i], cfx_safetensors_tensor(st, cfx_safetensors_find(st, names[i])));
    int m = cfx_safetensors_n_metadata(st);
    char **keys = malloc(sizeof *keys * (size_t)(m + 1));
    for (int i = 0; i < m; i++)
        keys[i] = (char *)cfx_safetensors_metadata_key(st, i);
    qsort(keys, (size_t)m, sizeof *keys, cmp_str);
    for (int i = 0; i < m; i++)
        for (int j = 0; j < m; j++)
            if (strcmp(cfx_safetensors_metadata_key(st, j), keys[i]) == 0)
                cfx_buf_printf(&b, "meta %s %s\n", keys[i], cfx_safetensors_metadata_value(st, j));
    free(names);
    free(keys);
    if (!b.data)
        cfx_buf_puts(&b, "");
    return cfx_buf_take(&b);
}

/* Tensors of every dtype, a 0-dim and an empty one, a transposed view and an offset view. */
enum { NT = 13 };
static void sample(const char **names, cfx_tensor **ts)
{
    float w[6] = {1.5f, -2.0f, 0.25f, NAN, INFINITY, -0.0f};
    double d[4] = {0.1, 1e-300, -INFINITY, 5e-324};
    int32_t i32[4] = {INT32_MIN, INT32_MAX, 0, -1};
    int64_t i64[3] = {INT64_MIN, INT64_MAX, 42};
    uint8_t mask[3] = {1, 0, 1};
    double sc = 3.0;
    uint8_t u8[3] = {0, 255, 7};
    int8_t i8[3] = {-128, 127, 0};
    int16_t i16[2] = {INT16_MIN, INT16_MAX};
    float c64[6] = {1.5f, -2.0f, NAN, -0.0f, -0.0f, INFINITY};
    cfx_tensor *wt = typed(w, (int64_t[]){2, 3}, 2, CFX_FLOAT32);
    const char *nm[NT] = {"fc.weight", "d", "i32", "i64", "mask", "scalar", "empty", "fc.weight_t", "row1",
                          "u8", "i8", "i16", "c64"};
    cfx_tensor *t[NT] = {
        wt,
        typed(d, (int64_t[]){4}, 1, CFX_FLOAT64),
        typed(i32, (int64_t[]){2, 2}, 2, CFX_INT32),
        typed(i64, (int64_t[]){3}, 1, CFX_INT64),
        typed(mask, (int64_t[]){3}, 1, CFX_BOOL),
        typed(&sc, NULL, 0, CFX_FLOAT64),
        cfx_tensor_new((int64_t[]){0, 4}, 2, CFX_FLOAT32, cfx_device_make(CFX_DEVICE_CPU)),
        cfx_tensor_new_view(wt, (int64_t[]){3, 2}, (int64_t[]){1, 3}, 2, 0),
        cfx_tensor_new_view(wt, (int64_t[]){3}, (int64_t[]){1}, 1, 3),
        typed(u8, (int64_t[]){3}, 1, CFX_UINT8),
        typed(i8, (int64_t[]){3}, 1, CFX_INT8),
        typed(i16, (int64_t[]){2, 1}, 2, CFX_INT16),
        typed(c64, (int64_t[]){3}, 1, CFX_COMPLEX64),
    };
    for (int i = 0; i < NT; i++) {
        names[i] = nm[i];
        ts[i] = t[i];
        cr_assert(t[i]);
    }
}

static char *dump_given(const char **names, cfx_tensor **ts, int n)
{
    cfx_buf b;
    cfx_buf_init(&b);
    int order[NT];
    for (int i = 0; i < n; i++)
        order[i] = i;
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && strcmp(names[order[j - 1]], names[order[j]]) > 0; j--) {
            int x = order[j];
            order[j] = order[j - 1];
            order[j - 1] = x;
        }
    for (int i = 0; i < n; i++)
        dump_tensor(&b, names[order[i]], ts[order[i]]);
    return cfx_buf_take(&b);
}

Test(ir_safetensors, roundtrip_every_dtype)
{
    const char *names[NT];
    cfx_tensor *ts[NT];
    sample(names, ts);
    const char *meta[] = {"format", "pt", "note", "line\nbreak \"q\" \xc3\xa9"};
    void *bytes;
    size_t len;
    cr_assert_eq(cfx_safetensors_write_bytes(names, ts, NT, meta, 2, &bytes, &len), CFX_OK, "%s", cfx_error_message());
    uint64_t hlen = 0;
    memcpy(&hlen, bytes, 8);
    cr_expect_eq(hlen % 8, 0, "the data starts 8-aligned");
    cfx_safetensors *st = cfx_safetensors_read_bytes(bytes, len);
    cr_assert(st, "%s", cfx_error_message());
    cr_expect_eq(cfx_safetensors_count(st), NT);
    char *want = dump_given(names, ts, NT), *got = dump_st(st);
    cr_expect(strncmp(got, want, strlen(want)) == 0, "got:\n%s\nwant:\n%s", got, want);
    cr_expect(strstr(got, "fc.weight_t F32 [3, 2] 1.5 nan -2.0 inf 0.25 -0.0\n"), "%s", got);
    cr_expect(strstr(got, "c64 C64 [3] 1.5 -2.0 nan -0.0 -0.0 inf\n"), "%s", got);
    cr_expect(strstr(got, "i16 I16 [2, 1] -32768 32767\ni32 ") && strstr(got, "i8 I8 [3] -128 127 0\n") &&
              strstr(got, "u8 U8 [3] 0 255 7\n"), "%s", got);
    cr_expect(strstr(got, "row1 F32 [3] nan inf -0.0\n"), "%s", got);
    cr_expect(strstr(got, "scalar F64 [] 3.0\n"), "%s", got);
    cr_expect(strstr(got, "empty F32 [0, 4]\n"), "%s", got);
    cr_expect_str_eq(cfx_safetensors_metadata_key(st, 0), "format");
    cr_expect_str_eq(cfx_safetensors_metadata_value(st, 1), meta[3]);
    cr_expect_eq(cfx_safetensors_find(st, "nope"), -1);
    for (int i = 0; i < NT; i++) {
        cfx_tensor *t = cfx_safetensors_tensor(st, cfx_safetensors_find(st, names[i]));
        cr_expect(cfx_tensor_is_contiguous(t));
        cr_expect_eq(t->dtype, ts[i]->dtype);
    }
    /* writing what was read gives the same bytes */
    int n = cfx_safetensors_count(st);
    const char *n2[NT];
    cfx_tensor *t2[NT];
    for (int i = 0; i < n; i++) {
        n2[i] = cfx_safetensors_name(st, i);
        t2[i] = cfx_safetensors_tensor(st, i);
    }
    void *bytes2;
    size_t len2;
    cr_assert_eq(cfx_safetensors_write_bytes(n2, t2, n, meta, 2, &bytes2, &len2), CFX_OK);
    cr_expect(len2 == len && memcmp(bytes, bytes2, len) == 0);
    /* the file writer writes the same bytes */
    char path[] = "/tmp/cfx_test_st_XXXXXX";
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    close(fd);
    cr_assert_eq(cfx_safetensors_write_file(path, names, ts, NT, meta, 2), CFX_OK, "%s", cfx_error_message());
    char *file = NULL;
    FILE *f = fopen(path, "rb");
    file = malloc(len + 1);
    cr_expect_eq(fread(file, 1, len + 1, f), len);
    fclose(f);
    cr_expect(memcmp(file, bytes, len) == 0);
    cfx_safetensors *st2 = cfx_safetensors_read_file(path);
    cr_assert(st2, "%s", cfx_error_message());
    char *got2 = dump_st(st2);
    cr_expect_str_eq(got2, got);
    remove(path);
    free(file);
    free(got2);
    free(want);
    free(got);
    free(bytes);
    free(bytes2);
    cfx_safetensors_free(st);
    cfx_safetensors_free(st2);
}

Test(ir_safetensors, header_layout_is_pythons)
{
    float a[2] = {1, 2};
    int64_t b[1] = {7};
    uint8_t c[1] = {1};
    const char *names[] = {"a", "c", "b"};
    cfx_tensor *ts[] = {typed(a, (int64_t[]){2}, 1, CFX_FLOAT32), typed(c, (int64_t[]){1}, 1, CFX_BOOL),
                        typed(b, (int64_t[]){1}, 1, CFX_INT64)};
    void *bytes;
    size_t len;
    cr_assert_eq(cfx_safetensors_write_bytes(names, ts, 3, NULL, 0, &bytes, &len), CFX_OK);
    const char *hdr = "{\"b\":{\"dtype\":\"I64\",\"shape\":[1],\"data_offsets\":[0,8]},"
                      "\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[8,16]},"
                      "\"c\":{\"dtype\":\"BOOL\",\"shape\":[1],\"data_offsets\":[16,17]}}";
    size_t hl = strlen(hdr), padded = (hl + 7) / 8 * 8;
    uint64_t n;
    memcpy(&n, bytes, 8);
    cr_expect_eq(n, padded);
    cr_expect(memcmp((char *)bytes + 8, hdr, hl) == 0, "%.*s", (int)n, (char *)bytes + 8);
    for (size_t i = hl; i < padded; i++)
        cr_expect_eq(((char *)bytes)[8 + i], ' ');
    cr_expect_eq(len, 8 + padded + 17);
    free(bytes);
}

/* ---- malformed files ------------------------------------------------------------------------------ */

/* 8-byte length (hlen, or the header's length when hlen is -1), header, then `data` bytes. */
static void *make_file(const char *header, long long hlen, size_t data, size_t *len)
{
    size_t hl = strlen(header);
    *len = 8 + hl + data;
    unsigned char *p = calloc(1, *len + 1);
    uint64_t n = hlen < 0 ? hl : (uint64_t)hlen;
    for (int i = 0; i < 8; i++)
        p[i] = (unsigned char)(n >> (8 * i));
    memcpy(p + 8, header, hl);
    return p;
}

static void expect_error_raw(const void *bytes, size_t len, const char *want)
{
    cfx_error_clear();
    /* an exact-size copy, so reads past the end show under ASan */
    void *copy = malloc(len ? len : 1);
    memcpy(copy, bytes, len);
    cfx_safetensors *st = cfx_safetensors_read_bytes(copy, len);
    free(copy);
    cr_expect_null(st, "loaded although it should fail with \"%s\"", want);
    cfx_safetensors_free(st);
    cr_expect_eq(cfx_error_status(), CFX_ERR_PARSE);
    const char *m = cfx_error_message();
    cr_expect(m && strstr(m, want), "error \"%s\" does not contain \"%s\"", m ? m : "(none)", want);
    cfx_error_clear();
}

static void expect_error(const char *header, size_t data, const char *want)
{
    size_t len;
    void *p = make_file(header, -1, data, &len);
    expect_error_raw(p, len, want);
    free(p);
}

#define T(name, dt, shape, b, e) "\"" name "\": {\"dtype\": \"" dt "\", \"shape\": " shape ", \"data_offsets\": [" #b ", " #e "]}"

Test(ir_safetensors, malformed)
{
    const char *pre = "cannot read safetensors data: ";
    size_t len;
    void *p = make_file("{}", 100, 0, &len);
    expect_error_raw(p, 3, "3 bytes, fewer than the 8 of the header length");
    expect_error_raw(p, len, "the header length 100 exceeds the 2 bytes that follow it");
    free(p);
    expect_error("", 0, "the header does not start with '{'");
    expect_error(" {}", 0, "the header does not start with '{'");
    expect_error("{\"a\": ", 0, "malformed JSON in the header (at byte");
    expect_error("{} x", 0, "unexpected data after the header's JSON object (at byte 3 of 4; only spaces");
    expect_error("[1]", 0, "the header does not start with '{'");
    expect_error("{\"a\": 1}", 0, "tensor 'a': expected an object");
    expect_error("{\"a\xff\": 1}", 0, "the header is not valid UTF-8");
    expect_error("{" T("w", "F32", "[2]", 0, 8) ", \"x\": 3}", 8, "tensor 'x': expected an object");
    expect_error("{\"w\": {\"dtype\": \"F32\", \"shape\": [1]}}", 4, "tensor 'w': missing field \"data_offsets\"");
    expect_error("{\"w\": {\"dtype\": \"F32\", \"shape\": [1], \"data_offsets\": [0, 4], \"grad\": 1}}", 4,
                 "tensor 'w': unknown field \"grad\"");
    expect_error("{\"w\": {\"dtype\": \"F32\", \"dtype\": \"F32\", \"shape\": [1], \"data_offsets\": [0, 4]}}", 4,
                 "tensor 'w': field \"dtype\" appears twice");
    expect_error("{" T("w", "F17", "[1]", 0, 4) "}", 4, "tensor 'w': unknown dtype \"F17\"");
    expect_error("{" T("w", "F16", "[1]", 0, 2) "}", 2, "tensor 'w': dtype F16 is not one cfx has tensors of");
    expect_error("{\"w\": {\"dtype\": 6, \"shape\": [1], \"data_offsets\": [0, 4]}}", 4, "\"dtype\" must be a string");
    expect_error("{" T("w", "F32", "[-1]", 0, 4) "}", 4, "tensor 'w': \"shape\"[0] is not a non-negative integer");
    expect_error("{" T("w", "F32", "[1, 1.5]", 0, 4) "}", 4, "\"shape\"[1] is not a non-negative integer");
    expect_error("{" T("w", "F32", "[9007199254740993]", 0, 4) "}", 4, "\"shape\"[0] is not a non-negative integer below 2^53");
    expect_error("{" T("w", "F32", "{}", 0, 4) "}", 4, "\"shape\" must be an array");
    expect_error("{\"w\": {\"dtype\": \"F32\", \"shape\": [1], \"data_offsets\": [0]}}", 4,
                 "tensor 'w': \"data_offsets\" must be [begin, end]");
    expect_error("{" T("w", "F32", "[1]", 4, 0) "}", 4, "tensor 'w': data_offsets [4, 0] end before they begin");
    expect_error("{" T("w", "F32", "[1]", 0, 8) "}", 4, "tensor 'w': data_offsets [0, 8] reach past the 4 bytes of data");
    expect_error("{" T("w", "F32", "[2, 3]", 0, 20) "}", 20,
                 "tensor 'w': data_offsets [0, 20] hold 20 bytes but dtype F32 and shape [2, 3] need 24");
    expect_error("{" T("w", "I64", "[4294967296, 4294967296]", 0, 8) "}", 8, "need more than");
    expect_error("{" T("a", "F32", "[2]", 0, 8) ", " T("b", "F32", "[2]", 4, 12) "}", 12,
                 "tensor 'b': data_offsets [4, 12] overlap those of tensor 'a'");
    expect_error("{" T("a", "F32", "[1]", 0, 4) ", " T("b", "F32", "[1]", 8, 12) "}", 12,
                 "tensor 'b': data_offsets [8, 12] leave bytes 4..8 of the data unused");
    expect_error("{" T("a", "F32", "[1]", 0, 4) "}", 6, "the tensors cover 4 bytes of data but 6 follow the header");
    expect_error("{}", 1, "the tensors cover 0 bytes of data but 1 follow the header");
    expect_error("{" T("a", "F32", "[1]", 0, 4) ", " T("a", "F32", "[1]", 4, 8) "}", 8, "tensor 'a' appears twice in the header");
    expect_error("{\"__metadata__\": {\"k\": 1}}", 0, "\"__metadata__\": the value of \"k\" is not a string");
    expect_error("{\"__metadata__\": []}", 0, "\"__metadata__\" must be an object of strings");
    expect_error("{\"__metadata__\": {}, \"__metadata__\": {}}", 0, "\"__metadata__\" appears twice");
    expect_error("{\"__metadata__\": {\"k\": \"a\", \"k\": \"b\"}}", 0, "key \"k\" appears twice");
    /* a bool byte other than 0 / 1 */
    p = make_file("{" T("m", "BOOL", "[2]", 0, 2) "}", -1, 2, &len);
    ((unsigned char *)p)[len - 1] = 2;
    expect_error_raw(p, len, "tensor 'm': element 1 of a BOOL tensor is 2, neither 0 nor 1");
    free(p);
    /* the message says what was read */
    p = make_file("{", -1, 0, &len);
    cfx_safetensors *st = cfx_safetensors_read_bytes(p, len);
    cr_expect_null(st);
    cr_expect(strncmp(cfx_error_message(), pre, strlen(pre)) == 0, "%s", cfx_error_message());
    free(p);
    /* zero-sized tensors may share an offset; an empty file body is fine */
    p = make_file("{" T("e", "F32", "[0]", 0, 0) ", " T("f", "I64", "[2, 0]", 0, 0) ", " T("a", "F32", "[1]", 0, 4) "}",
                  -1, 4, &len);
    cfx_error_clear();
    st = cfx_safetensors_read_bytes(p, len);
    cr_expect(st, "%s", cfx_error_message());
    cr_expect_eq(cfx_safetensors_count(st), 3);
    cfx_safetensors_free(st);
    free(p);
}

Test(ir_safetensors, file_errors)
{
    cfx_error_clear();
    cr_expect_null(cfx_safetensors_read_file("/nonexistent/x.safetensors"));
    cr_expect(strstr(cfx_error_message(), "cannot read safetensors '/nonexistent/x.safetensors': cannot open it"),
              "%s", cfx_error_message());
    cfx_error_clear();
    cr_expect_null(cfx_safetensors_read_file("/tmp"));
    cr_expect(strstr(cfx_error_message(), "not a regular file"), "%s", cfx_error_message());
    cfx_error_clear();
    /* a truncated file names the file */
    char path[] = "/tmp/cfx_test_st_trunc_XXXXXX";
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    cr_assert_eq(write(fd, "\x40\0\0\0\0\0\0\0{}", 10), 10);
    close(fd);
    cr_expect_null(cfx_safetensors_read_file(path));
    cr_expect(strstr(cfx_error_message(), "the header length 64 exceeds the 2 bytes"), "%s", cfx_error_message());
    remove(path);
    cfx_error_clear();
    float a[1] = {1};
    cfx_tensor *t = typed(a, (int64_t[]){1}, 1, CFX_FLOAT32);
    const char *nm[] = {"a"};
    cr_expect_neq(cfx_safetensors_write_file("/nonexistent/dir/x.safetensors", nm, &t, 1, NULL, 0), CFX_OK);
    cr_expect(strstr(cfx_error_message(), "cannot write safetensors '/nonexistent/dir/x.safetensors': cannot open it"),
              "%s", cfx_error_message());
}

Test(ir_safetensors, write_errors)
{
    float a[2] = {1, 2};
    cfx_tensor *t = typed(a, (int64_t[]){2}, 1, CFX_FLOAT32);
    cfx_tensor *meta = cfx_tensor_new((int64_t[]){2}, 1, CFX_FLOAT32, cfx_device_make(CFX_DEVICE_META));
    struct {
        const char *names[2];
        cfx_tensor *ts[2];
        int n;
        const char *want;
    } cases[] = {
        {{"a", "a"}, {t, t}, 2, "tensor 'a' is given twice"},
        {{"__metadata__"}, {t}, 1, "a tensor cannot be called \"__metadata__\""},
        {{"bad\xff"}, {t}, 1, "the name of tensor 0 is not valid UTF-8"},
        {{"m"}, {meta}, 1, "tensor 'm' is on meta: only CPU tensors have data to write"},
        {{"n"}, {NULL}, 1, "tensor 'n' is NULL"},
        {{NULL}, {t}, 1, "tensor 0 has no name"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        void *out = (void *)1;
        size_t len = 1;
        cfx_error_clear();
        cr_expect_neq(cfx_safetensors_write_bytes(cases[i].names, cases[i].ts, cases[i].n, NULL, 0, &out, &len), CFX_OK);
        cr_expect_null(out);
        cr_expect(strstr(cfx_error_message(), cases[i].want), "%s", cfx_error_message());
    }
    const char *kv[] = {"k", "v", "k", "w"};
    void *out;
    size_t len;
    cfx_error_clear();
    cr_expect_neq(cfx_safetensors_write_bytes(NULL, NULL, 0, kv, 2, &out, &len), CFX_OK);
    cr_expect(strstr(cfx_error_message(), "metadata key \"k\" is given twice"), "%s", cfx_error_message());
    /* nothing at all is a valid file: {} padded */
    cfx_error_clear();
    cr_assert_eq(cfx_safetensors_write_bytes(NULL, NULL, 0, NULL, 0, &out, &len), CFX_OK);
    cr_expect_eq(len, 16);
    cr_expect(memcmp((char *)out + 8, "{}      ", 8) == 0);
    cfx_safetensors *st = cfx_safetensors_read_bytes(out, len);
    cr_expect(st && cfx_safetensors_count(st) == 0);
    cfx_safetensors_free(st);
    free(out);
}

/* ---- fuzzing -------------------------------------------------------------------------------------- */

static uint64_t rng_state = 0x2545F4914F6CDD1Dull;

static void fuzz_one(const unsigned char *bytes, size_t len)
{
    cfx_error_clear();
    void *copy = malloc(len ? len : 1);
    memcpy(copy, bytes, len);
    cfx_safetensors *st = cfx_safetensors_read_bytes(copy, len);
    free(copy);
    if (!st) {
        cr_assert(cfx_error_occurred() && cfx_error_message()[0], "refused without a message");
    }
    cfx_safetensors_free(st);
    cfx_error_clear();
}

Test(ir_safetensors, fuzz, .timeout = 120)
{
    const char *names[NT];
    cfx_tensor *ts[NT];
    sample(names, ts);
    const char *meta[] = {"format", "pt"};
    void *bytes;
    size_t len;
    cr_assert_eq(cfx_safetensors_write_bytes(names, ts, NT, meta, 1, &bytes, &len), CFX_OK);
    for (size_t n = 0; n < len; n++)
        fuzz_one(bytes, n);
    unsigned char *buf = malloc(len);
    static const char alphabet[] = "{}[]\",:0123456789-. FIBOL_\xff";
    for (int it = 0; it < 3000; it++) {
        memcpy(buf, bytes, len);
        int k = 1 + (int)(test_rand(&rng_state) % 3);
        for (int m = 0; m < k; m++) {
            /* mostly in the header, where the structure is */
            size_t at = test_rand(&rng_state) % (m == 0 ? 8 + len / 2 : len);
            buf[at] = test_rand(&rng_state) % 2 ? (unsigned char)alphabet[test_rand(&rng_state) % (sizeof alphabet - 1)]
                                                : (unsigned char)test_rand(&rng_state);
        }
        fuzz_one(buf, len);
    }
    free(buf);
    free(bytes);
}

/* ---- Python ------------------------------------------------------------------------------------------ */

/* Runs the checker (default python3: PyTorch 2.13 and safetensors); its stdout, malloc'd. */
static char *run_py(const char *args, const char *tmp)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "python3 tools/interop/check_safetensors.py %s > %s.out 2>&1", args, tmp);
    int rc = system(cmd);
    snprintf(cmd, sizeof cmd, "%s.out", tmp);
    char *out = read_file(cmd);
    remove(cmd);
    cr_assert_neq(WEXITSTATUS(rc), 77, "python3 cannot import torch and safetensors (pip install safetensors): %s",
                  out ? out : "");
    cr_assert_eq(WEXITSTATUS(rc), 0, "check_safetensors.py %s failed:\n%s", args, out ? out : "");
    return out ? out : strdup("");
}

Test(ir_safetensors, python_reads_cfx_files, .timeout = 120)
{
    const char *names[NT];
    cfx_tensor *ts[NT];
    sample(names, ts);
    const char *meta[] = {"format", "pt", "producer", "cfx"};
    char path[] = "/tmp/cfx_test_st_py_XXXXXX";
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    close(fd);
    cr_assert_eq(cfx_safetensors_write_file(path, names, ts, NT, meta, 2), CFX_OK, "%s", cfx_error_message());
    char args[256];
    snprintf(args, sizeof args, "dump %s", path);
    char *got = run_py(args, path);
    char *want = dump_given(names, ts, NT);
    cfx_buf b;
    cfx_buf_init(&b);
    cfx_buf_printf(&b, "%smeta format pt\nmeta producer cfx\n", want);
    cr_expect_str_eq(got, b.data);
    cfx_buf_free(&b);
    free(got);
    free(want);
    remove(path);
}

Test(ir_safetensors, cfx_reads_python_files, .timeout = 120)
{
    char path[] = "/tmp/cfx_test_st_pyw_XXXXXX";
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    close(fd);
    char args[256];
    snprintf(args, sizeof args, "write %s", path);
    char *want = run_py(args, path);
    cfx_error_clear();
    cfx_safetensors *st = cfx_safetensors_read_file(path);
    cr_assert(st, "%s", cfx_error_message());
    char *got = dump_st(st);
    cr_expect_str_eq(got, want);
    cr_expect(strstr(got, "fc.weight_t F32 [3, 2] 1.5 nan -2.0 inf 0.25 -0.0\n"), "%s", got);
    cr_expect(strstr(got, "c64 C64 [3] 1.5 -2.0 nan -0.0 -0.0 inf\n"), "%s", got);
    cr_expect(strstr(got, "i16 I16 [2, 1] -32768 32767\ni32 ") && strstr(got, "i8 I8 [3] -128 127 0\n") &&
              strstr(got, "u8 U8 [3] 0 255 7\n"), "%s", got);
    /* cfx writes what it read as Python's bytes */
    int n = cfx_safetensors_count(st);
    const char **nm = malloc(sizeof *nm * (size_t)n);
    cfx_tensor **t = malloc(sizeof *t * (size_t)n);
    for (int i = 0; i < n; i++) {
        nm[i] = cfx_safetensors_name(st, i);
        t[i] = cfx_safetensors_tensor(st, i);
    }
    const char *meta[] = {cfx_safetensors_metadata_key(st, 0), cfx_safetensors_metadata_value(st, 0)};
    void *bytes;
    size_t len;
    cr_assert_eq(cfx_safetensors_write_bytes(nm, t, n, meta, cfx_safetensors_n_metadata(st), &bytes, &len), CFX_OK);
    FILE *f = fopen(path, "rb");
    unsigned char *py = malloc(len + 1);
    size_t pl = fread(py, 1, len + 1, f);
    fclose(f);
    cr_expect(pl == len && memcmp(py, bytes, len) == 0, "cfx's bytes differ from Python's (%zu vs %zu bytes)", len, pl);
    free(py);
    free(bytes);
    free(nm);
    free(t);
    free(got);
    free(want);
    cfx_safetensors_free(st);
    remove(path);
}
