/* test_boxing.c - calling C functions from boxed stacks through the libffi adapter.
 *
 * Each test defines a C function with an operator's unboxed signature, builds an adapter from
 * the schema text and calls it with a cfx_value stack. The functions record what they received
 * so the tests can check the conversions; the tensors are header-only cfx_tensor objects,
 * since the adapter only passes tensor pointers through. Expected inferred schemas and error
 * texts come from PyTorch 2.13 (torch._C._dispatch_dump and torch.ops calls). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dispatch/boxing.h"
#include "dispatch/scope.h"
#include "dispatch/error.h"

static cfx_tensor T[4];
static cfx_tensor *const T0 = &T[0], *const T1 = &T[1], *const T2 = &T[2], *const T3 = &T[3];

/* What the last C function received. */
static struct {
    int calls;
    cfx_tensor *t[4];
    cfx_value v[12];
    int64_t i[4];
    double d[4];
    bool b[2];
    const char *s;
    int dtype;
    cfx_device dev;
    int64_t ints[4][8];
    int64_t n_ints[4];
    cfx_tensor *tl[8];
    int64_t n_tl;
} got;

static void reset(void)
{
    memset(&got, 0, sizeof got);
    cfx_error_clear();
}

static cfx_schema *parse(const char *text)
{
    char *err = NULL;
    cfx_schema *s = cfx_schema_parse(text, &err);
    cr_assert_not_null(s, "parse failed: %s", err ? err : "?");
    free(err);
    return s;
}

static cfx_adapter *adapter(const cfx_schema *s, cfx_fnptr fn)
{
    cfx_adapter *a = cfx_adapter_new(s, fn);
    cr_assert_not_null(a, "adapter failed: %s", cfx_error_message());
    return a;
}

static cfx_tensor *k_null(cfx_tensor *x);

static int call(cfx_adapter *a, cfx_value *stack) { return cfx_adapter_call_boxed(a, NULL, cfx_keyset_empty(), stack); }

static void record_int_list(int slot, cfx_int_list l)
{
    got.n_ints[slot] = l.len;
    for (int64_t j = 0; j < l.len && j < 8; j++)
        got.ints[slot][j] = l.data[j];
}

/* ---- (Tensor, Tensor, Scalar) -> Tensor ------------------------------------------------- */

static cfx_tensor *k_add(cfx_tensor *a, cfx_tensor *b, cfx_value alpha)
{
    got.calls++;
    got.t[0] = a;
    got.t[1] = b;
    got.v[0] = alpha;
    return T3;
}

#define ADD_SCHEMA "aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor"

Test(boxing, tensor_tensor_scalar)
{
    reset();
    cfx_schema *s = parse(ADD_SCHEMA);
    cfx_adapter *a = adapter(s, (cfx_fnptr)k_add);
    cfx_value alphas[] = {cfx_int(2), cfx_double(0.5), cfx_bool(true)};
    for (int i = 0; i < 3; i++) {
        cfx_value st[3] = {cfx_tensor_value(T0), cfx_tensor_value(T1), alphas[i]};
        cr_assert_eq(call(a, st), CFX_OK);
        cr_assert_eq(got.t[0], T0);
        cr_assert_eq(got.t[1], T1);
        cr_assert(cfx_value_equal(got.v[0], alphas[i]));
        cr_assert_eq(st[0].kind, CFX_V_TENSOR);
        cr_assert_eq(st[0].u.t, T3);
    }
    cr_assert_eq(got.calls, 3);
    cfx_adapter_free(a);
    cfx_schema_free(s);
}

Test(boxing, wrong_kind_scalar_is_an_error)
{
    reset();
    cfx_schema *s = parse(ADD_SCHEMA);
    cfx_adapter *a = adapter(s, (cfx_fnptr)k_add);
    cfx_value st[3] = {cfx_tensor_value(T0), cfx_tensor_value(T1), cfx_string("s")};
    cr_assert_eq(call(a, st), CFX_ERR);
    cr_assert_eq(got.calls, 0);
    /* torch 2.13: torch.ops.aten.add.Tensor(x, x, alpha='s') raises exactly this text */
    cr_assert_str_eq(cfx_error_message(),
                     "aten::add() Expected a value of type 'number' for argument 'alpha' but instead "
                     "found type 'str'.\nPosition: 2\nValue: 's'\nDeclaration: " ADD_SCHEMA
                     "\nCast error details: Cannot cast s to number");
    cr_assert_str_eq(cfx_error_op(), "aten::add.Tensor");
    cr_assert_eq(st[0].u.t, T0, "the stack is untouched on error");

    reset();
    cfx_value st2[3] = {cfx_tensor_value(T0), cfx_int(1), cfx_int(1)};
    cr_assert_eq(call(a, st2), CFX_ERR);
    cr_assert(strncmp(cfx_error_message(),
                      "aten::add() Expected a value of type 'Tensor' for argument 'other' but instead "
                      "found type 'int'.\nPosition: 1\nValue: 1\n",
                      118) == 0,
              "%s", cfx_error_message());
    cfx_adapter_free(a);
    cfx_schema_free(s);
}

/* ---- factories: int list + optionals + device ------------------------------------------ */

static cfx_tensor *k_make(cfx_int_list size, cfx_value dtype, cfx_device device)
{
    got.calls++;
    record_int_list(0, size);
    got.v[0] = dtype;
    got.dev = device;
    return T2;
}

Test(boxing, int_list_optional_dtype_device)
{
    reset();
    cfx_schema *s = parse("foo::make(int[] size, ScalarType? dtype, Device device) -> Tensor");
    cfx_adapter *a = adapter(s, (cfx_fnptr)k_make);
    cfx_value dims[] = {cfx_int(2), cfx_int(3), cfx_int(-1)};
    cfx_device meta = {CFX_DEVICE_META, -1};
    cfx_value st[3] = {cfx_list(dims, 3), cfx_int(6), cfx_device_value(meta)};
    cr_assert_eq(call(a, st), CFX_OK);
    cr_assert_eq(got.n_ints[0], 3);
    cr_assert(got.ints[0][0] == 2 && got.ints[0][1] == 3 && got.ints[0][2] == -1);
    cr_assert_eq(got.v[0].kind, CFX_V_DTYPE, "an int dtype arrives as DTYPE");
    cr_assert_eq(got.v[0].u.dtype, CFX_FLOAT32);
    cr_assert(cfx_device_eq(got.dev, meta));
    cr_assert_eq(st[0].u.t, T2);

    /* tuple size, None dtype */
    cfx_value st2[3] = {cfx_tuple(dims, 2), cfx_none(), cfx_device_value(cfx_device_make(CFX_DEVICE_CPU))};
    cr_assert_eq(call(a, st2), CFX_OK);
    cr_assert_eq(got.n_ints[0], 2);
    cr_assert_eq(got.v[0].kind, CFX_V_NONE);
    cr_assert_eq(got.dev.type, CFX_DEVICE_CPU);
    cr_assert_eq(got.dev.index, -1);

    /* a float in the size list */
    cfx_value bad[] = {cfx_int(2), cfx_double(0.5)};
    cfx_value st3[3] = {cfx_list(bad, 2), cfx_none(), cfx_device_value(meta)};
    cr_assert_eq(call(a, st3), CFX_ERR);
    cr_assert_str_eq(cfx_error_message(),
                     "foo::make() Expected a value of type 'List[int]' for argument 'size' but instead "
                     "found type 'list'.\nPosition: 0\nValue: [2, 0.5]\nDeclaration: "
                     "foo::make(int[] size, ScalarType? dtype, Device device) -> Tensor"
                     "\nCast error details: Unable to cast Python instance of type <class 'list'> to C++ type '?' "
                     "(#define PYBIND11_DETAILED_ERROR_MESSAGES or compile in debug mode for details)");
    cr_assert_eq(got.calls, 2);
    cfx_adapter_free(a);
    cfx_schema_free(s);
}

static cfx_tensor *k_empty(cfx_int_list size, cfx_value dtype, cfx_value layout, cfx_value device,
                           cfx_value pin, cfx_value mf)
{
    got.calls++;
    record_int_list(0, size);
    got.v[0] = dtype;
    got.v[1] = layout;
    got.v[2] = device;
    got.v[3] = pin;
    got.v[4] = mf;
    return T1;
}

#define EMPTY_SCHEMA                                                                            \
    "aten::empty.memory_format(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, " \
    "Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor"

Test(boxing, optionals_are_normalised)
{
    reset();
    cfx_schema *s = parse(EMPTY_SCHEMA);
    cfx_adapter *a = adapter(s, (cfx_fnptr)k_empty);
    cfx_value dims[] = {cfx_int(4)};
    cfx_device meta = {CFX_DEVICE_META, -1};
    cfx_value st[6] = {cfx_list(dims, 1), cfx_dtype_value(CFX_INT64), cfx_int(0),
                       cfx_device_value(meta), cfx_bool(false), cfx_int(2)};
    cr_assert_eq(call(a, st), CFX_OK);
    cr_assert_eq(got.n_ints[0], 1);
    cr_assert_eq(got.ints[0][0], 4);
    cr_assert(cfx_value_equal(got.v[0], cfx_dtype_value(CFX_INT64)));
    cr_assert(cfx_value_equal(got.v[1], cfx_layout_value(CFX_LAYOUT_STRIDED)), "int layout -> LAYOUT");
    cr_assert_eq(got.v[2].kind, CFX_V_DEVICE);
    cr_assert(cfx_device_eq(got.v[2].u.device, meta));
    cr_assert(cfx_value_equal(got.v[3], cfx_bool(false)));
    cr_assert(cfx_value_equal(got.v[4], cfx_memory_format_value(CFX_CHANNELS_LAST)));

    cfx_value st2[6] = {cfx_list(dims, 0), cfx_none(), cfx_none(), cfx_none(), cfx_none(), cfx_none()};
    cr_assert_eq(call(a, st2), CFX_OK);
    cr_assert_eq(got.n_ints[0], 0);
    for (int i = 0; i < 5; i++)
        cr_assert_eq(got.v[i].kind, CFX_V_NONE);

    /* torch 2.13: torch.ops.aten.empty.memory_format([2], device=1.5) */
    cfx_value st3[6] = {cfx_list(dims, 1), cfx_none(), cfx_none(), cfx_double(1.5), cfx_none(), cfx_none()};
    cr_assert_eq(call(a, st3), CFX_ERR);
    cr_assert(strstr(cfx_error_message(),
                     "aten::empty() Expected a value of type 'Optional[Device]' for argument 'device' "
                     "but instead found type 'float'.\nPosition: 3\nValue: 1.5\n") == cfx_error_message(),
              "%s", cfx_error_message());
    cfx_error_clear();
    /* torch 2.13: ... layout=1.5 */
    cfx_value st4[6] = {cfx_list(dims, 1), cfx_none(), cfx_double(1.5), cfx_none(), cfx_none(), cfx_none()};
    cr_assert_eq(call(a, st4), CFX_ERR);
    cr_assert(strstr(cfx_error_message(),
                     "aten::empty() Expected a value of type 'Optional[int]' for argument 'layout' "
                     "but instead found type 'float'.\nPosition: 2\n") == cfx_error_message(),
              "%s", cfx_error_message());
    cfx_adapter_free(a);
    cfx_schema_free(s);
}

/* ---- scalars of every kind, returning double --------------------------------------------- */

static double k_mix(double x, int64_t n, bool flag, const char *name, double y, cfx_dtype dt,
                    int64_t layout, int64_t mf)
{
    got.calls++;
    got.d[0] = x;
    got.i[0] = n;
    got.b[0] = flag;
    got.s = name;
    got.d[1] = y;
    got.dtype = (int)dt;
    got.i[1] = layout;
    got.i[2] = mf;
    return x * 2 + (double)n;
}

#define MIX_SCHEMA                                                                           \
    "foo::mix(float x, int n, bool flag, str name, float y, ScalarType dt, Layout layout, " \
    "MemoryFormat mf) -> float"

Test(boxing, scalar_mix_returning_double)
{
    reset();
    cfx_schema *s = parse(MIX_SCHEMA);
    cfx_adapter *a = adapter(s, (cfx_fnptr)k_mix);
    cfx_value st[8] = {cfx_double(1.25), cfx_int(-7), cfx_bool(true), cfx_string("hello"),
                       cfx_int(3), cfx_int(4), cfx_layout_value(0), cfx_memory_format_value(CFX_CHANNELS_LAST)};
    cr_assert_eq(call(a, st), CFX_OK);
    cr_assert_eq(got.d[0], 1.25);
    cr_assert_eq(got.i[0], -7);
    cr_assert_eq(got.b[0], true);
    cr_assert_str_eq(got.s, "hello");
    cr_assert_eq(got.d[1], 3.0, "an int for a float argument is converted");
    cr_assert_eq(got.dtype, CFX_INT64);
    cr_assert_eq(got.i[1], 0);
    cr_assert_eq(got.i[2], CFX_CHANNELS_LAST);
    cr_assert_eq(st[0].kind, CFX_V_DOUBLE);
    cr_assert_eq(st[0].u.d, 1.25 * 2 - 7);

    /* torch 2.13: torch.ops.aten._softmax(x, 1.5, False) -> "... for argument 'dim' but
     * instead found type 'float'." */
    cfx_value st2[8] = {cfx_double(1), cfx_double(1.5), cfx_bool(true), cfx_string("a"),
                        cfx_double(0), cfx_dtype_value(CFX_FLOAT32), cfx_int(0), cfx_int(0)};
    cr_assert_eq(call(a, st2), CFX_ERR);
    cr_assert_str_eq(cfx_error_message(),
                     "foo::mix() Expected a value of type 'int' for argument 'n' but instead found type "
                     "'float'.\nPosition: 1\nValue: 1.5\nDeclaration: " MIX_SCHEMA
                     "\nCast error details: Unable to cast Python instance of type <class 'float'> to C++ type '?' "
                     "(#define PYBIND11_DETAILED_ERROR_MESSAGES or compile in debug mode for details)");
    cfx_error_clear();
    /* an int is not a bool (IValue), torch 2.13: "... 'bool' for argument 'half_to_float' but
     * instead found type 'str'." for a str */
    cfx_value st3[8] = {cfx_double(1), cfx_int(1), cfx_int(1), cfx_string("a"),
                        cfx_double(0), cfx_dtype_value(CFX_FLOAT32), cfx_int(0), cfx_int(0)};
    cr_assert_eq(call(a, st3), CFX_ERR);
    cr_assert(strstr(cfx_error_message(), "Expected a value of type 'bool' for argument 'flag' but "
                                          "instead found type 'int'.") != NULL);
    cfx_error_clear();
    /* ScalarType takes an int code but not a string; torch 2.13: to.dtype(x, 'a') -> 'int' */
    cfx_value st4[8] = {cfx_double(1), cfx_int(1), cfx_bool(false), cfx_string("a"),
                        cfx_double(0), cfx_string("float32"), cfx_int(0), cfx_int(0)};
    cr_assert_eq(call(a, st4), CFX_ERR);
    cr_assert(strstr(cfx_error_message(), "Expected a value of type 'int' for argument 'dt' but "
                                          "instead found type 'str'.") != NULL);
    cr_assert_eq(got.calls, 1);
    cfx_adapter_free(a);
    cfx_schema_free(s);
}

/* ---- returns ---------------------------------------------------------------------------- */

static cfx_tensor2 k_max_dim(cfx_tensor *self, int64_t dim, bool keepdim)
{
    got.calls++;
    got.t[0] = self;
    got.i[0] = dim;
    got.b[0] = keepdim;
    return (cfx_tensor2){T1, T2};
}

Test(boxing, two_tensor_return)
{
    reset();
    cfx_schema *s = parse("aten::max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)");
    cfx_adapter *a = adapter(s, (cfx_fnptr)k_max_dim);
    cfx_value st[3] = {cfx_tensor_value(T0), cfx_int(-1), cfx_bool(true)};
    cr_assert_eq(call(a, st), CFX_OK);
    cr_assert(got.t[0] == T0 && got.i[0] == -1 && got.b[0]);
    cr_assert(st[0].kind == CFX_V_TENSOR && st[0].u.t == T1);
    cr_assert(st[1].kind == CFX_V_TENSOR && st[1].u.t == T2);
    cr_assert_eq(st[2].kind, CFX_V_BOOL, "slots past the returns are left alone");
    cfx_adapter_free(a);
    cfx_schema_free(s);
}

/* 40 bytes: returned through memory on x86-64. */
typedef struct bn_ret {
    cfx_tensor *a, *b, *c, *d;
    int64_t n;
} bn_ret;

static bn_ret k_bn_index(cfx_tensor *x, cfx_tensor *w, cfx_tensor *b, cfx_tensor *rm, cfx_tensor *rv,
                         bool training, double momentum, double eps, bool cudnn)
{
    got.calls++;
    got.t[0] = x;
    got.t[1] = w;
    got.t[2] = b;
    got.t[3] = rv;
    got.b[0] = training && !cudnn;
    got.d[0] = momentum;
    got.d[1] = eps;
    return (bn_ret){T3, T2, T1, rm ? rm : T0, 42};
}

Test(boxing, large_mixed_return_struct)
{
    reset();
    cfx_schema *s = parse(
        "aten::_batch_norm_impl_index(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, "
        "Tensor? running_var, bool training, float momentum, float eps, bool cudnn_enabled) -> "
        "(Tensor, Tensor, Tensor, Tensor, int)");
    cfx_adapter *a = adapter(s, (cfx_fnptr)k_bn_index);
    cfx_value st[9] = {cfx_tensor_value(T0), cfx_none(), cfx_tensor_value(T1), cfx_none(),
                       cfx_tensor_value(T2), cfx_bool(true), cfx_double(0.1), cfx_double(1e-5),
                       cfx_bool(false)};
    cr_assert_eq(call(a, st), CFX_OK);
    cr_assert(got.t[0] == T0 && got.t[1] == NULL && got.t[2] == T1 && got.t[3] == T2);
    cr_assert(got.b[0] && got.d[0] == 0.1 && got.d[1] == 1e-5);
    cr_assert(st[0].u.t == T3 && st[1].u.t == T2 && st[2].u.t == T1 && st[3].u.t == T0);
    cr_assert(cfx_value_equal(st[4], cfx_int(42)));
    cfx_adapter_free(a);
    cfx_schema_free(s);
}

typedef struct mixed_ret {
    bool flag;
    cfx_dtype dt;
    double d;
    cfx_value v;
    cfx_device dev;
    int64_t mf;
} mixed_ret;

static mixed_ret k_mixed_ret(void)
{
    got.calls++;
    return (mixed_ret){true, CFX_BOOL, -2.5, cfx_int(9), {CFX_DEVICE_META, 3}, CFX_CHANNELS_LAST};
}

Test(boxing, mixed_return_struct_offsets)
{
    reset();
    cfx_schema *s = parse("foo::r() -> (bool, ScalarType, float, Scalar, Device, MemoryFormat)");
    cfx_adapter *a = adapter(s, (cfx_fnptr)k_mixed_ret);
    cfx_value st[6];
    cr_assert_eq(call(a, st), CFX_OK);
    cr_assert(cfx_value_equal(st[0], cfx_bool(true)));
    cr_assert(cfx_value_equal(st[1], cfx_dtype_value(CFX_BOOL)));
    cr_assert(cfx_value_equal(st[2], cfx_double(-2.5)));
    cr_assert(cfx_value_equal(st[3], cfx_int(9)));
    cr_assert(st[4].kind == CFX_V_DEVICE && st[4].u.device.type == CFX_DEVICE_META && st[4].u.device.index == 3);
    cr_assert(cfx_value_equal(st[5], cfx_memory_format_value(CFX_CHANNELS_LAST)));
    cfx_adapter_free(a);
    cfx_schema_free(s);
}

static int64_t k_nnz(cfx_tensor *t) { got.t[0] = t; return 1234567890123LL; }
static bool k_is_nonzero(cfx_tensor *t) { got.t[0] = t; return true; }
static bool k_is_zero(cfx_tensor *t) { got.t[0] = t; return false; }
static cfx_dtype k_result_type(cfx_tensor *a, cfx_tensor *b) { (void)a; (void)b; return CFX_FLOAT64; }
static cfx_value k_item(cfx_tensor *t) { (void)t; return cfx_double(0.75); }
static const char *k_name(cfx_tensor *t) { (void)t; return "strided"; }
static cfx_device k_device(cfx_tensor *t) { (void)t; return (cfx_device){CFX_DEVICE_META, 2}; }
static cfx_tensor *k_maybe(cfx_tensor *t) { return t; }

Test(boxing, scalar_returns_are_boxed)
{
    reset();
    struct {
        const char *schema;
        cfx_fnptr fn;
        cfx_value want;
    } cases[] = {
        {"aten::_nnz(Tensor self) -> int", (cfx_fnptr)k_nnz, cfx_int(1234567890123LL)},
        {"aten::is_nonzero(Tensor self) -> bool", (cfx_fnptr)k_is_nonzero, cfx_bool(true)},
        {"aten::is_nonzero(Tensor self) -> bool", (cfx_fnptr)k_is_zero, cfx_bool(false)},
        {"aten::result_type.Tensor(Tensor tensor, Tensor other) -> ScalarType", (cfx_fnptr)k_result_type,
         cfx_dtype_value(CFX_FLOAT64)},
        {"aten::_local_scalar_dense(Tensor self) -> Scalar", (cfx_fnptr)k_item, cfx_double(0.75)},
        {"foo::name(Tensor self) -> str", (cfx_fnptr)k_name, cfx_string("strided")},
        {"foo::dev(Tensor self) -> Device", (cfx_fnptr)k_device, cfx_device_value((cfx_device){CFX_DEVICE_META, 2})},
        {"foo::maybe(Tensor? self) -> Tensor?", (cfx_fnptr)k_maybe, cfx_none()},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        cfx_schema *s = parse(cases[i].schema);
        cfx_adapter *a = adapter(s, cases[i].fn);
        cfx_value st[2] = {s->args[0].type->kind == CFX_TYPE_OPTIONAL ? cfx_none() : cfx_tensor_value(T0),
                           cfx_tensor_value(T1)};
        cr_assert_eq(call(a, st), CFX_OK, "%s: %s", cases[i].schema, cfx_error_message());
        cr_assert(cfx_value_equal(st[0], cases[i].want), "%s", cases[i].schema);
        cfx_adapter_free(a);
        cfx_schema_free(s);
    }
}

/* A Tensor[] return is a cfx_tensor_list whose array is scope-owned (cfx_scope_alloc); it is
 * boxed into a list value whose items are scope-owned too. */
static cfx_tensor_list k_split(cfx_tensor *self, int64_t size, int64_t dim)
{
    got.i[0] = size;
    got.i[1] = dim;
    cfx_tensor **parts = cfx_scope_alloc(3 * sizeof *parts);
    for (int i = 0; i < 3; i++)
        parts[i] = &T[i + 1];
    (void)self;
    return (cfx_tensor_list){parts, 3};
}

Test(boxing, tensor_list_return_is_boxed)
{
    reset();
    cfx_scope scope = cfx_scope_begin();
    cfx_schema *s = parse("aten::split.Tensor(Tensor(a -> *) self, int split_size, int dim=0) -> Tensor(a)[]");
    cfx_adapter *a = adapter(s, (cfx_fnptr)k_split);
    cfx_value st[3] = {cfx_tensor_value(T0), cfx_int(2), cfx_int(0)};
    cr_assert_eq(call(a, st), CFX_OK, "%s", cfx_error_message());
    cr_assert(got.i[0] == 2 && got.i[1] == 0);
    cr_assert(st[0].kind == CFX_V_LIST && st[0].len == 3);
    cr_assert(st[0].u.items[2].u.t == T3);
    cfx_scope_end(scope); /* frees both arrays (LeakSanitizer checks) */
    cfx_adapter_free(a);
    cfx_schema_free(s);
}

Test(boxing, too_many_arguments)
{
    reset();
    char text[2048] = "foo::many(";
    for (int i = 0; i < 65; i++)
        sprintf(text + strlen(text), "%sint a%d", i ? ", " : "", i);
    strcat(text, ") -> ()");
    cfx_schema *s = parse(text);
    cr_assert_null(cfx_adapter_new(s, (cfx_fnptr)k_null));
    cr_assert_str_eq(cfx_error_message(), "cannot call a C function as foo::many: it has 65 arguments "
                                          "and 0 returns; at most 64 and 16 are supported");
    cfx_schema_free(s);
    cfx_error_clear();
}

/* ---- void, errors from kernels --------------------------------------------------------- */

static void k_sink(cfx_tensor *x, int64_t v)
{
    got.calls++;
    got.t[0] = x;
    got.i[0] = v;
    if (v < 0)
        cfx_error_set(CFX_ERR, "foo::sink", "negative value %lld", (long long)v);
}

Test(boxing, void_return)
{
    reset();
    cfx_schema *s = parse("foo::sink(Tensor(a!) x, int v) -> ()");
    cfx_adapter *a = adapter(s, (cfx_fnptr)k_sink);
    cfx_value st[2] = {cfx_tensor_value(T2), cfx_int(5)};
    cr_assert_eq(call(a, st), CFX_OK);
    cr_assert(got.calls == 1 && got.t[0] == T2 && got.i[0] == 5);
    cr_assert(st[0].u.t == T2 && st[1].u.i == 5, "nothing is written back");

    /* a void kernel fails by recording an error */
    st[1] = cfx_int(-1);
    cr_assert_eq(call(a, st), CFX_ERR);
    cr_assert_str_eq(cfx_error_message(), "negative value -1");
    cfx_adapter_free(a);
    cfx_schema_free(s);
}

static cfx_tensor *k_null(cfx_tensor *x) { got.calls++; (void)x; return NULL; }
static cfx_tensor *k_null_err(cfx_tensor *x)
{
    (void)x;
    cfx_error_set(CFX_ERR, "foo::bad", "the kernel's own message");
    return NULL;
}
static cfx_tensor2 k_half_null(cfx_tensor *x) { return (cfx_tensor2){x, NULL}; }

Test(boxing, null_tensor_return)
{
    reset();
    cfx_schema *s = parse("foo::bad(Tensor x) -> Tensor");
    cfx_adapter *a = adapter(s, (cfx_fnptr)k_null);
    cfx_value st[1] = {cfx_tensor_value(T0)};
    cr_assert_eq(call(a, st), CFX_ERR);
    cr_assert_str_eq(cfx_error_message(), "the kernel of foo::bad returned NULL without an error");
    cr_assert_str_eq(cfx_error_op(), "foo::bad");
    cr_assert_eq(st[0].u.t, T0);
    cfx_adapter_free(a);

    reset();
    a = adapter(s, (cfx_fnptr)k_null_err);
    cr_assert_eq(call(a, st), CFX_ERR);
    cr_assert_str_eq(cfx_error_message(), "the kernel's own message");
    cfx_adapter_free(a);

    /* an earlier error does not hide the failure */
    reset();
    cfx_error_set(CFX_ERR, NULL, "earlier");
    a = adapter(s, (cfx_fnptr)k_null);
    cr_assert_eq(call(a, st), CFX_ERR);
    cr_assert_str_eq(cfx_error_message(), "earlier");
    cfx_adapter_free(a);
    cfx_schema_free(s);

    reset();
    s = parse("foo::bad2(Tensor x) -> (Tensor, Tensor)");
    a = adapter(s, (cfx_fnptr)k_half_null);
    cfx_value st2[2] = {cfx_tensor_value(T0), cfx_int(0)};
    cr_assert_eq(call(a, st2), CFX_ERR);
    cr_assert_str_eq(cfx_error_message(), "the kernel of foo::bad2 returned NULL without an error");
    cr_assert(st2[0].u.t == T0 && st2[1].kind == CFX_V_INT, "no partial write-back");
    cfx_adapter_free(a);
    cfx_schema_free(s);
}

/* ---- Tensor?, Tensor[], Tensor?[] ------------------------------------------------------- */

static cfx_tensor *k_linear(cfx_tensor *x, cfx_tensor *w, cfx_tensor *b)
{
    got.calls++;
    got.t[0] = x;
    got.t[1] = w;
    got.t[2] = b;
    return T3;
}

Test(boxing, optional_tensor)
{
    reset();
    cfx_schema *s = parse("aten::linear(Tensor input, Tensor weight, Tensor? bias=None) -> Tensor");
    cfx_adapter *a = adapter(s, (cfx_fnptr)k_linear);
    cfx_value st[3] = {cfx_tensor_value(T0), cfx_tensor_value(T1), cfx_none()};
    cr_assert_eq(call(a, st), CFX_OK);
    cr_assert(got.t[0] == T0 && got.t[1] == T1 && got.t[2] == NULL);
    cfx_value st2[3] = {cfx_tensor_value(T0), cfx_tensor_value(T1), cfx_tensor_value(T2)};
    cr_assert_eq(call(a, st2), CFX_OK);
    cr_assert_eq(got.t[2], T2);
    /* torch 2.13: torch.ops.aten.linear(x, x, 1) */
    cfx_value st3[3] = {cfx_tensor_value(T0), cfx_tensor_value(T1), cfx_int(1)};
    cr_assert_eq(call(a, st3), CFX_ERR);
    cr_assert(strstr(cfx_error_message(),
                     "aten::linear() Expected a value of type 'Optional[Tensor]' for argument 'bias' "
                     "but instead found type 'int'.\nPosition: 2\nValue: 1\n") == cfx_error_message());
    cfx_error_clear();
    /* a None for a non-optional tensor */
    cfx_value st4[3] = {cfx_none(), cfx_tensor_value(T1), cfx_none()};
    cr_assert_eq(call(a, st4), CFX_ERR);
    cr_assert(strstr(cfx_error_message(), "'Tensor' for argument 'input' but instead found type 'NoneType'.\n"
                                          "Position: 0\nValue: None\n") != NULL);
    cr_assert_eq(got.calls, 2);
    cfx_adapter_free(a);
    cfx_schema_free(s);
}

static cfx_tensor *k_cat(cfx_tensor_list ts, int64_t dim)
{
    got.calls++;
    got.n_tl = ts.len;
    for (int64_t i = 0; i < ts.len && i < 8; i++)
        got.tl[i] = ts.data[i];
    if (ts.len > 8)
        got.tl[7] = ts.data[ts.len - 1];
    got.i[0] = dim;
    return T0;
}

Test(boxing, tensor_list)
{
    reset();
    cfx_schema *s = parse("aten::cat(Tensor[] tensors, int dim=0) -> Tensor");
    cfx_adapter *a = adapter(s, (cfx_fnptr)k_cat);
    cfx_value items[] = {cfx_tensor_value(T1), cfx_tensor_value(T2), cfx_tensor_value(T3)};
    cfx_value st[2] = {cfx_list(items, 3), cfx_int(1)};
    cr_assert_eq(call(a, st), CFX_OK);
    cr_assert(got.n_tl == 3 && got.tl[0] == T1 && got.tl[1] == T2 && got.tl[2] == T3 && got.i[0] == 1);
    cr_assert_eq(st[0].u.t, T0);

    cfx_value st2[2] = {cfx_tuple(items, 2), cfx_int(0)};
    cr_assert_eq(call(a, st2), CFX_OK);
    cr_assert(got.n_tl == 2 && got.tl[1] == T2);

    cfx_value st3[2] = {cfx_list(items, 0), cfx_int(0)};
    cr_assert_eq(call(a, st3), CFX_OK);
    cr_assert_eq(got.n_tl, 0);

    /* more tensors than the on-stack scratch holds: the heap path (ASan checks the free) */
    enum { N = 300 };
    cfx_value *many = malloc(N * sizeof *many);
    for (int i = 0; i < N; i++)
        many[i] = cfx_tensor_value(&T[i % 4]);
    cfx_value st4[2] = {cfx_list(many, N), cfx_int(0)};
    cr_assert_eq(call(a, st4), CFX_OK);
    cr_assert(got.n_tl == N && got.tl[1] == T1 && got.tl[7] == &T[(N - 1) % 4]);
    free(many);

    /* torch 2.13: torch.ops.aten.cat([x, 1]) -> "... 'List[Tensor]' for argument 'tensors' but
     * instead found type 'list'." */
    cfx_value bad[] = {cfx_tensor_value(T1), cfx_int(1)};
    cfx_value st5[2] = {cfx_list(bad, 2), cfx_int(0)};
    cr_assert_eq(call(a, st5), CFX_ERR);
    cr_assert(strstr(cfx_error_message(), "aten::cat() Expected a value of type 'List[Tensor]' for "
                                          "argument 'tensors' but instead found type 'list'.\n"
                                          "Position: 0\n") == cfx_error_message());
    cfx_adapter_free(a);
    cfx_schema_free(s);
}

static cfx_tensor *k_index(cfx_tensor *self, cfx_tensor_list idx)
{
    got.calls++;
    got.t[0] = self;
    got.n_tl = idx.len;
    for (int64_t i = 0; i < idx.len && i < 8; i++)
        got.tl[i] = idx.data[i];
    return T3;
}

/* Two list arguments of one call share the scratch buffer without overlapping. */
static cfx_tensor *k_two_lists(cfx_tensor_list a, cfx_int_list x, cfx_tensor_list b, cfx_int_list y)
{
    got.calls++;
    got.n_tl = a.len + b.len;
    for (int64_t i = 0; i < a.len; i++)
        got.tl[i] = a.data[i];
    for (int64_t i = 0; i < b.len; i++)
        got.tl[a.len + i] = b.data[i];
    record_int_list(0, x);
    record_int_list(1, y);
    return T0;
}

Test(boxing, optional_tensor_list_and_shared_scratch)
{
    reset();
    cfx_schema *s = parse("aten::index.Tensor(Tensor self, Tensor?[] indices) -> Tensor");
    cfx_adapter *a = adapter(s, (cfx_fnptr)k_index);
    cfx_value items[] = {cfx_none(), cfx_tensor_value(T2), cfx_none()};
    cfx_value st[2] = {cfx_tensor_value(T0), cfx_list(items, 3)};
    cr_assert_eq(call(a, st), CFX_OK);
    cr_assert(got.n_tl == 3 && got.tl[0] == NULL && got.tl[1] == T2 && got.tl[2] == NULL);
    /* torch 2.13: torch.ops.aten.index.Tensor(x, 1); a Tensor?[] is read by iterating it */
    cfx_value st2[2] = {cfx_tensor_value(T0), cfx_int(1)};
    cr_assert_eq(call(a, st2), CFX_ERR);
    cr_assert_str_eq(cfx_error_message(),
                     "aten::index() Expected a value of type 'List[Optional[Tensor]]' for argument "
                     "'indices' but instead found type 'int'.\nPosition: 1\nValue: 1\nDeclaration: "
                     "aten::index.Tensor(Tensor self, Tensor?[] indices) -> Tensor\n"
                     " Python error details: TypeError: 'int' object is not iterable");
    cfx_error_clear();
    /* torch 2.13: index.Tensor(x, (None, 2.5)) names the first item that is no tensor */
    cfx_value not_tensors[] = {cfx_none(), cfx_double(2.5)};
    cfx_value st_tuple[2] = {cfx_tensor_value(T0), cfx_tuple(not_tensors, 2)};
    cr_assert_eq(call(a, st_tuple), CFX_ERR);
    cr_assert(strstr(cfx_error_message(), "found type 'tuple'.\nPosition: 1\nValue: (None, 2.5)\n") != NULL,
              "%s", cfx_error_message());
    cr_assert(strstr(cfx_error_message(), "-> Tensor\nCast error details: Unable to cast 2.5 to Tensor") != NULL,
              "%s", cfx_error_message());
    cfx_error_clear();
    cfx_adapter_free(a);
    cfx_schema_free(s);

    reset();
    s = parse("foo::two(Tensor[] a, int[] x, Tensor[] b, int[] y) -> Tensor");
    a = adapter(s, (cfx_fnptr)k_two_lists);
    cfx_value ta[] = {cfx_tensor_value(T0), cfx_tensor_value(T1)};
    cfx_value tb[] = {cfx_tensor_value(T2), cfx_tensor_value(T3)};
    cfx_value ix[] = {cfx_int(1), cfx_int(2), cfx_int(3)};
    cfx_value iy[] = {cfx_int(7), cfx_int(8)};
    cfx_value st3[4] = {cfx_list(ta, 2), cfx_list(ix, 3), cfx_list(tb, 2), cfx_list(iy, 2)};
    cr_assert_eq(call(a, st3), CFX_OK);
    cr_assert(got.n_tl == 4 && got.tl[0] == T0 && got.tl[1] == T1 && got.tl[2] == T2 && got.tl[3] == T3);
    cr_assert(got.n_ints[0] == 3 && got.ints[0][0] == 1 && got.ints[0][2] == 3);
    cr_assert(got.n_ints[1] == 2 && got.ints[1][0] == 7 && got.ints[1][1] == 8);
    cfx_adapter_free(a);
    cfx_schema_free(s);
}

/* ---- int[N] broadcast, int[1]?, long lists ------------------------------------------------ */

static cfx_tensor2 k_pool(cfx_tensor *self, cfx_int_list k, cfx_int_list st, cfx_int_list pad,
                          cfx_int_list dil, bool ceil)
{
    got.calls++;
    got.t[0] = self;
    record_int_list(0, k);
    record_int_list(1, st);
    record_int_list(2, pad);
    record_int_list(3, dil);
    got.b[0] = ceil;
    return (cfx_tensor2){T1, T2};
}

Test(boxing, int_n_broadcast)
{
    reset();
    cfx_schema *s = parse("aten::max_pool2d_with_indices(Tensor self, int[2] kernel_size, int[2] stride=[], "
                          "int[2] padding=0, int[2] dilation=1, bool ceil_mode=False) -> (Tensor, Tensor)");
    cfx_adapter *a = adapter(s, (cfx_fnptr)k_pool);
    cfx_value dil[] = {cfx_int(2), cfx_int(1)};
    cfx_value st[6] = {cfx_tensor_value(T0), cfx_int(3), cfx_list(NULL, 0), cfx_int(0),
                       cfx_tuple(dil, 2), cfx_bool(false)};
    cr_assert_eq(call(a, st), CFX_OK);
    cr_assert(got.n_ints[0] == 2 && got.ints[0][0] == 3 && got.ints[0][1] == 3, "3 -> [3, 3]");
    cr_assert_eq(got.n_ints[1], 0, "[] stays empty");
    cr_assert(got.n_ints[2] == 2 && got.ints[2][0] == 0 && got.ints[2][1] == 0);
    cr_assert(got.n_ints[3] == 2 && got.ints[3][0] == 2 && got.ints[3][1] == 1);
    cr_assert(st[0].u.t == T1 && st[1].u.t == T2);
    cfx_adapter_free(a);
    cfx_schema_free(s);
}

static cfx_tensor *k_sum(cfx_tensor *self, cfx_int_list dim, bool keepdim, cfx_value dtype)
{
    got.calls++;
    got.t[0] = self;
    record_int_list(0, dim);
    got.b[0] = keepdim;
    got.v[0] = dtype;
    return T1;
}

Test(boxing, optional_int_list)
{
    reset();
    cfx_schema *s = parse("aten::sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, "
                          "ScalarType? dtype=None) -> Tensor");
    cfx_adapter *a = adapter(s, (cfx_fnptr)k_sum);
    cfx_value st[4] = {cfx_tensor_value(T0), cfx_int(-1), cfx_bool(true), cfx_none()};
    cr_assert_eq(call(a, st), CFX_OK);
    cr_assert(got.n_ints[0] == 1 && got.ints[0][0] == -1);
    cr_assert(got.b[0] && got.v[0].kind == CFX_V_NONE);
    cfx_value st2[4] = {cfx_tensor_value(T0), cfx_none(), cfx_bool(false), cfx_int(7)};
    cr_assert_eq(call(a, st2), CFX_OK);
    cr_assert_eq(got.n_ints[0], -1, "None -> len < 0");
    cr_assert(cfx_value_equal(got.v[0], cfx_dtype_value(CFX_FLOAT64)));
    /* torch 2.13: torch.ops.aten.sum.dim_IntList(x, [0.5]) */
    cfx_value bad[] = {cfx_double(0.5)};
    cfx_value st3[4] = {cfx_tensor_value(T0), cfx_list(bad, 1), cfx_bool(false), cfx_none()};
    cr_assert_eq(call(a, st3), CFX_ERR);
    cr_assert_str_eq(cfx_error_message(),
                     "aten::sum() Expected a value of type 'Optional[List[int]]' for argument 'dim' but "
                     "instead found type 'list'.\nPosition: 1\nValue: [0.5]\nDeclaration: "
                     "aten::sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, "
                     "ScalarType? dtype=None) -> Tensor"
                     "\nCast error details: Unable to cast Python instance of type <class 'list'> to C++ type '?' "
                     "(#define PYBIND11_DETAILED_ERROR_MESSAGES or compile in debug mode for details)");
    cfx_adapter_free(a);
    cfx_schema_free(s);
}

static int64_t k_long_list(cfx_int_list a, cfx_int_list b)
{
    int64_t sum = 0;
    for (int64_t i = 0; i < a.len; i++)
        sum += a.data[i];
    for (int64_t i = 0; i < b.len; i++)
        sum += b.data[i] * 1000000;
    return sum;
}

Test(boxing, long_int_lists_use_the_heap)
{
    reset();
    cfx_schema *s = parse("foo::long(int[] a, SymInt[] b) -> int");
    cfx_adapter *a = adapter(s, (cfx_fnptr)k_long_list);
    enum { N = 1000 };
    cfx_value *items = malloc(N * sizeof *items);
    for (int i = 0; i < N; i++)
        items[i] = cfx_int(i);
    cfx_value st[2] = {cfx_list(items, N), cfx_list(items, 10)};
    cr_assert_eq(call(a, st), CFX_OK);
    cr_assert(cfx_value_equal(st[0], cfx_int((int64_t)N * (N - 1) / 2 + 45 * 1000000LL)));
    /* both lists past the scratch */
    cfx_value st2[2] = {cfx_list(items, N), cfx_list(items, N)};
    cr_assert_eq(call(a, st2), CFX_OK);
    cr_assert(cfx_value_equal(st2[0], cfx_int((int64_t)N * (N - 1) / 2 * 1000001LL)));
    free(items);
    cfx_adapter_free(a);
    cfx_schema_free(s);
}

/* ---- other types pass as boxed pointers ------------------------------------------------- */

static const cfx_value *boxed_seen[3];
static cfx_tensor *k_boxed(cfx_tensor *x, const cfx_value *scales, cfx_value gen, const cfx_value *mask)
{
    (void)x;
    boxed_seen[0] = scales;
    got.v[0] = gen;
    boxed_seen[2] = mask;
    return T1;
}

Test(boxing, other_types_are_boxed_pointers)
{
    reset();
    cfx_schema *s = parse("foo::b(Tensor x, float[] scales, Generator? gen, bool[3] mask) -> Tensor");
    cfx_adapter *a = adapter(s, (cfx_fnptr)k_boxed);
    cfx_value f[] = {cfx_double(1.5), cfx_int(2)};
    cfx_value m[] = {cfx_bool(true), cfx_bool(false), cfx_bool(true)};
    cfx_value st[4] = {cfx_tensor_value(T0), cfx_list(f, 2), cfx_none(), cfx_list(m, 3)};
    cr_assert_eq(call(a, st), CFX_OK);
    cr_assert_eq(boxed_seen[0], &st[1], "a pointer to the stack slot");
    cr_assert_eq(boxed_seen[2], &st[3]);
    cr_assert_eq(got.v[0].kind, CFX_V_NONE);
    /* a list type still needs a list: torch 2.13, upsample_nearest2d.vec(x, None, 1) ->
     * "'Optional[List[float]]' ... found type 'int'" */
    cfx_value st2[4] = {cfx_tensor_value(T0), cfx_int(1), cfx_none(), cfx_list(m, 3)};
    cr_assert_eq(call(a, st2), CFX_ERR);
    cr_assert(strstr(cfx_error_message(), "Expected a value of type 'List[float]' for argument 'scales' "
                                          "but instead found type 'int'.") != NULL);
    cfx_adapter_free(a);
    cfx_schema_free(s);
}

/* ---- the ABI of cfx_value by value ------------------------------------------------------ */

/* 11 struct arguments plus doubles: the register file runs out and the rest go on the stack.
 * Doubles ride in the union, so a wrong classification would show up as garbage here. */
static cfx_value k_abi(cfx_value a, double x, cfx_value b, cfx_value c, cfx_value d, cfx_value e,
                       cfx_value f, cfx_value g, cfx_value h, cfx_device dev, cfx_value i, double y,
                       cfx_value j)
{
    got.calls++;
    cfx_value in[] = {a, b, c, d, e, f, g, h, i, j};
    memcpy(got.v, in, sizeof in);
    got.d[0] = x;
    got.d[1] = y;
    got.dev = dev;
    return cfx_double(a.u.d + j.u.d);
}

Test(boxing, cfx_value_passes_by_value)
{
    reset();
    cfx_schema *s = parse("foo::abi(Scalar a, float x, Scalar b, int? c, Scalar d, ScalarType? e, Scalar f, "
                          "float? g, Scalar h, Device dev, Scalar i, float y, Scalar j) -> Scalar");
    cfx_adapter *a = adapter(s, (cfx_fnptr)k_abi);
    cfx_value want[10] = {cfx_double(0.1),       cfx_int(-2),      cfx_int(INT64_MIN), cfx_bool(true),
                          cfx_dtype_value(CFX_BOOL), cfx_double(-1e300), cfx_double(3.25), cfx_int(INT64_MAX),
                          cfx_double(1.0 / 3),   cfx_double(2.5)};
    cfx_value st[13] = {want[0], cfx_double(7.5),  want[1], want[2], want[3], want[4], want[5],
                        want[6], want[7], cfx_device_value((cfx_device){CFX_DEVICE_META, 5}),
                        want[8], cfx_int(-3), want[9]};
    cr_assert_eq(call(a, st), CFX_OK);
    for (int i = 0; i < 10; i++)
        cr_assert(cfx_value_equal(got.v[i], want[i]), "value %d", i);
    cr_assert_eq(got.d[0], 7.5);
    cr_assert_eq(got.d[1], -3.0);
    cr_assert(got.dev.type == CFX_DEVICE_META && got.dev.index == 5);
    cr_assert(cfx_value_equal(st[0], cfx_double(0.1 + 2.5)));
    cfx_adapter_free(a);
    cfx_schema_free(s);
}

/* ---- schemas with no C mapping ---------------------------------------------------------- */

Test(boxing, unsupported_types)
{
    struct {
        const char *schema;
        const char *message;
    } cases[] = {
        {"foo::d(Tensor x, Dict(str, Tensor) d) -> Tensor",
         "cannot call a C function as foo::d: argument 'd' has type 'Dict(str, Tensor)', which has no C "
         "mapping (see dispatch/boxing.h)\nDeclaration: foo::d(Tensor x, Dict(str, Tensor) d) -> Tensor"},
        {"foo::f.ov(Tensor x) -> Future(Tensor)",
         "cannot call a C function as foo::f.ov: return 0 has type 'Future(Tensor)', which has no C "
         "mapping (see dispatch/boxing.h)\nDeclaration: foo::f.ov(Tensor x) -> Future(Tensor)"},
        {"foo::l(Dict(str, int)[] x) -> Tensor",
         "cannot call a C function as foo::l: argument 'x' has type 'Dict(str, int)[]', which has no C "
         "mapping (see dispatch/boxing.h)\nDeclaration: foo::l(Dict(str, int)[] x) -> Tensor"},
        {"foo::v(...) -> Tensor",
         "cannot call a C function as foo::v: a schema with '...' has no C signature"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        reset();
        cfx_schema *s = parse(cases[i].schema);
        cr_assert_null(cfx_adapter_new(s, (cfx_fnptr)k_null));
        cr_assert_str_eq(cfx_error_message(), cases[i].message);
        cfx_error_clear();
        cr_assert_null(cfx_adapter_inferred_schema(s));
        cr_assert_str_eq(cfx_error_message(), cases[i].message);
        cfx_schema_free(s);
    }
    cfx_error_clear();
}

/* ---- c10's inferred schema -------------------------------------------------------------- */

/* From torch 2.13's torch._C._dispatch_dump(op): "schema: ..." and the inferred schema of the
 * comment's kernel line (CPU where the op has one). Generated with a loop over the ops; the
 * kernel line printed is "<Key>: registered at ... :: <inferred> [ boxed unboxed ]". */
static const char *const inferred_cases[][2] = {
    {"aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
     "(Tensor _0, Tensor _1, Scalar _2) -> Tensor _0"}, /* CPU */
    {"aten::add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)",
     "(Tensor _0, Tensor _1, Scalar _2) -> Tensor _0"}, /* CPU */
    {"aten::sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
     "(Tensor _0, int[]? _1, bool _2, ScalarType? _3) -> Tensor _0"}, /* CPU */
    {"aten::empty.memory_format(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor",
     "(SymInt[] _0, ScalarType? _1, Layout? _2, Device? _3, bool? _4, MemoryFormat? _5) -> Tensor _0"}, /* CPU */
    {"aten::view(Tensor(a) self, SymInt[] size) -> Tensor(a)",
     "(Tensor _0, SymInt[] _1) -> Tensor _0"}, /* CPU */
    {"aten::max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)",
     "(Tensor _0, int _1, bool _2) -> (Tensor _0, Tensor _1)"}, /* CPU */
    {"aten::cat(Tensor[] tensors, int dim=0) -> Tensor",
     "(Tensor[] _0, int _1) -> Tensor _0"}, /* CPU */
    {"aten::index.Tensor(Tensor self, Tensor?[] indices) -> Tensor",
     "(Tensor _0, Tensor?[] _1) -> Tensor _0"}, /* CPU */
    {"aten::convolution(Tensor input, Tensor weight, Tensor? bias, int[] stride, int[] padding, int[] dilation, bool transposed, int[] output_padding, int groups) -> Tensor",
     "(Tensor _0, Tensor _1, Tensor? _2, int[] _3, int[] _4, int[] _5, bool _6, int[] _7, int _8) -> Tensor _0"}, /* CompositeExplicitAutograd[alias] */
    {"aten::max_pool2d_with_indices(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, int[2] dilation=1, bool ceil_mode=False) -> (Tensor, Tensor)",
     "(Tensor _0, int[] _1, int[] _2, int[] _3, int[] _4, bool _5) -> (Tensor _0, Tensor _1)"}, /* CPU */
    {"aten::native_layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight, Tensor? bias, float eps) -> (Tensor, Tensor, Tensor)",
     "(Tensor _0, SymInt[] _1, Tensor? _2, Tensor? _3, float _4) -> (Tensor _0, Tensor _1, Tensor _2)"}, /* CPU */
    {"aten::_softmax(Tensor self, int dim, bool half_to_float) -> Tensor",
     "(Tensor _0, int _1, bool _2) -> Tensor _0"}, /* CPU */
    {"aten::to.dtype(Tensor(a) self, ScalarType dtype, bool non_blocking=False, bool copy=False, MemoryFormat? memory_format=None) -> Tensor(a)",
     "(Tensor _0, ScalarType _1, bool _2, bool _3, MemoryFormat? _4) -> Tensor _0"}, /* CompositeImplicitAutograd[alias] */
    {"aten::split.Tensor(Tensor(a -> *) self, int split_size, int dim=0) -> Tensor(a)[]",
     "(Tensor _0, int _1, int _2) -> Tensor[] _0"}, /* CompositeExplicitAutograd[alias] */
    {"aten::mean.dim(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
     "(Tensor _0, int[]? _1, bool _2, ScalarType? _3) -> Tensor _0"}, /* CPU */
    {"aten::arange.start(Scalar start, Scalar end, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor",
     "(Scalar _0, Scalar _1, ScalarType? _2, Layout? _3, Device? _4, bool? _5) -> Tensor _0"}, /* CompositeExplicitAutograd[alias] */
    {"aten::div.Tensor_mode(Tensor self, Tensor other, *, str? rounding_mode) -> Tensor",
     "(Tensor _0, Tensor _1, str? _2) -> Tensor _0"}, /* CPU */
    {"aten::_to_copy(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, bool non_blocking=False, MemoryFormat? memory_format=None) -> Tensor",
     "(Tensor _0, ScalarType? _1, Layout? _2, Device? _3, bool? _4, bool _5, MemoryFormat? _6) -> Tensor _0"}, /* CompositeExplicitAutograd[alias] */
    {"aten::addmm(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1) -> Tensor",
     "(Tensor _0, Tensor _1, Tensor _2, Scalar _3, Scalar _4) -> Tensor _0"}, /* CPU */
    {"aten::native_batch_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, Tensor? running_var, bool training, float momentum, float eps) -> (Tensor, Tensor, Tensor)",
     "(Tensor _0, Tensor? _1, Tensor? _2, Tensor? _3, Tensor? _4, bool _5, float _6, float _7) -> (Tensor _0, Tensor _1, Tensor _2)"}, /* CPU */
    {"aten::clone(Tensor self, *, MemoryFormat? memory_format=None) -> Tensor",
     "(Tensor _0, MemoryFormat? _1) -> Tensor _0"}, /* CompositeExplicitAutograd[alias] */
    {"aten::as_strided(Tensor(a) self, SymInt[] size, SymInt[] stride, SymInt? storage_offset=None) -> Tensor(a)",
     "(Tensor _0, SymInt[] _1, SymInt[] _2, SymInt? _3) -> Tensor _0"}, /* CPU */
    {"aten::avg_pool2d(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, bool ceil_mode=False, bool count_include_pad=True, int? divisor_override=None) -> Tensor",
     "(Tensor _0, int[] _1, int[] _2, int[] _3, bool _4, bool _5, int? _6) -> Tensor _0"}, /* CPU */
    {"aten::upsample_nearest2d.vec(Tensor input, SymInt[]? output_size, float[]? scale_factors) -> Tensor",
     "(Tensor _0, SymInt[]? _1, float[]? _2) -> Tensor _0"}, /* CompositeExplicitAutograd[alias] */
    {"aten::var_mean.correction(Tensor self, int[1]? dim, *, int? correction, bool keepdim=False) -> (Tensor, Tensor)",
     "(Tensor _0, int[]? _1, int? _2, bool _3) -> (Tensor _0, Tensor _1)"}, /* CPU */
    {"aten::nll_loss_forward(Tensor self, Tensor target, Tensor? weight, int reduction, int ignore_index) -> (Tensor output, Tensor total_weight)",
     "(Tensor _0, Tensor _1, Tensor? _2, int _3, int _4) -> (Tensor _0, Tensor _1)"}, /* CPU */
    {"aten::native_dropout(Tensor input, float p, bool? train) -> (Tensor, Tensor)",
     "(Tensor _0, float _1, bool? _2) -> (Tensor _0, Tensor _1)"}, /* CPU */
    {"aten::bernoulli.p(Tensor self, float p, *, Generator? generator=None) -> Tensor",
     "(Tensor _0, float _1, Generator? _2) -> Tensor _0"}, /* CompositeImplicitAutograd[alias] */
    {"aten::empty_strided(SymInt[] size, SymInt[] stride, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor",
     "(SymInt[] _0, SymInt[] _1, ScalarType? _2, Layout? _3, Device? _4, bool? _5) -> Tensor _0"}, /* CPU */
    {"aten::clamp(Tensor self, Scalar? min=None, Scalar? max=None) -> Tensor",
     "(Tensor _0, Scalar? _1, Scalar? _2) -> Tensor _0"}, /* CPU */
    {"aten::_local_scalar_dense(Tensor self) -> Scalar",
     "(Tensor _0) -> Scalar _0"}, /* CPU */
    {"aten::equal(Tensor self, Tensor other) -> bool",
     "(Tensor _0, Tensor _1) -> bool _0"}, /* CPU */
    {"aten::allclose(Tensor self, Tensor other, float rtol=1.0000000000000001e-05, float atol=1e-08, bool equal_nan=False) -> bool",
     "(Tensor _0, Tensor _1, float _2, float _3, bool _4) -> bool _0"}, /* CompositeExplicitAutograd[alias] */
    {"aten::_foreach_add_.Scalar(Tensor(a!)[] self, Scalar scalar) -> ()",
     "(Tensor[] _0, Scalar _1) -> ()"}, /* CPU */
    {"aten::_foreach_add.ScalarList(Tensor[] self, Scalar[] scalars) -> Tensor[]",
     "(Tensor[] _0, Scalar[] _1) -> Tensor[] _0"}, /* CPU */
    {"aten::_batch_norm_impl_index(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, Tensor? running_var, bool training, float momentum, float eps, bool cudnn_enabled) -> (Tensor, Tensor, Tensor, Tensor, int)",
     "(Tensor _0, Tensor? _1, Tensor? _2, Tensor? _3, Tensor? _4, bool _5, float _6, float _7, bool _8) -> (Tensor _0, Tensor _1, Tensor _2, Tensor _3, int _4)"}, /* CompositeImplicitAutograd[alias] */
    {"aten::q_scale(Tensor self) -> float",
     "(Tensor _0) -> float _0"}, /* Tracer */
    {"aten::_nnz(Tensor self) -> int",
     "(Tensor _0) -> int _0"}, /* Tracer */
    {"aten::result_type.Tensor(Tensor tensor, Tensor other) -> ScalarType",
     "(Tensor _0, Tensor _1) -> ScalarType _0"}, /* CompositeImplicitAutograd[alias] */
    {"aten::sum.dim_DimnameList(Tensor self, str[1] dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
     "(Tensor _0, str[] _1, bool _2, ScalarType? _3) -> Tensor _0"}, /* CompositeImplicitAutograd[alias] */
    {"aten::_assert_async(Tensor self) -> ()",
     "(Tensor _0) -> ()"}, /* CPU */
    {"aten::set_.source_Storage(Tensor(a!) self, Storage source) -> Tensor(a!)",
     "(Tensor _0, Storage _1) -> Tensor _0"}, /* CPU */
    {"aten::record_stream(Tensor(a!) self, Stream s) -> ()",
     "(Tensor _0, Stream _1) -> ()"}, /* Tracer */
    {"aten::index_put_(Tensor(a!) self, Tensor?[] indices, Tensor values, bool accumulate=False) -> Tensor(a!)",
     "(Tensor _0, Tensor?[] _1, Tensor _2, bool _3) -> Tensor _0"}, /* CompositeExplicitAutograd[alias] */
    {"aten::histogramdd(Tensor self, int[] bins, float[]? range=None, Tensor? weight=None, bool density=False) -> (Tensor hist, Tensor[] bin_edges)",
     "(Tensor _0, int[] _1, float[]? _2, Tensor? _3, bool _4) -> (Tensor _0, Tensor[] _1)"}, /* CompositeImplicitAutograd[alias] */
    {"aten::_cudnn_rnn(Tensor input, Tensor[] weight, int weight_stride0, Tensor? weight_buf, Tensor hx, Tensor? cx, int mode, SymInt hidden_size, SymInt proj_size, int num_layers, bool batch_first, float dropout, bool train, bool bidirectional, SymInt[] batch_sizes, Tensor? dropout_state) -> (Tensor, Tensor, Tensor, Tensor, Tensor)",
     "(Tensor _0, Tensor[] _1, int _2, Tensor? _3, Tensor _4, Tensor? _5, int _6, SymInt _7, SymInt _8, int _9, bool _10, float _11, bool _12, bool _13, SymInt[] _14, Tensor? _15) -> (Tensor _0, Tensor _1, Tensor _2, Tensor _3, Tensor _4)"}, /* Tracer */
    {"aten::native_layer_norm_backward(Tensor grad_out, Tensor input, SymInt[] normalized_shape, Tensor mean, Tensor rstd, Tensor? weight, Tensor? bias, bool[3] output_mask) -> (Tensor, Tensor, Tensor)",
     "(Tensor _0, Tensor _1, SymInt[] _2, Tensor _3, Tensor _4, Tensor? _5, Tensor? _6, bool[] _7) -> (Tensor _0, Tensor _1, Tensor _2)"}, /* CPU */
    {"aten::_test_optional_filled_intlist(Tensor values, int[2]? addends) -> Tensor",
     "(Tensor _0, int[]? _1) -> Tensor _0"}, /* CPU */
    {"aten::resize_(Tensor(a!) self, SymInt[] size, *, MemoryFormat? memory_format=None) -> Tensor(a!)",
     "(Tensor _0, SymInt[] _1, MemoryFormat? _2) -> Tensor _0"}, /* CPU */
    {"aten::gelu(Tensor self, *, str approximate=\"none\") -> Tensor",
     "(Tensor _0, str _1) -> Tensor _0"}, /* CPU */
    {"aten::qscheme(Tensor self) -> QScheme",
     "(Tensor _0) -> QScheme _0"}, /* Tracer */
    {"aten::slice.Tensor(Tensor(a) self, int dim=0, SymInt? start=None, SymInt? end=None, SymInt step=1) -> Tensor(a)",
     "(Tensor _0, int _1, SymInt? _2, SymInt? _3, SymInt _4) -> Tensor _0"}, /* CompositeExplicitAutograd[alias] */
    {"aten::normal.float_float(float mean, float std, int[] size, *, Generator? generator=None, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor",
     "(float _0, float _1, int[] _2, Generator? _3, ScalarType? _4, Layout? _5, Device? _6, bool? _7) -> Tensor _0"}, /* CompositeExplicitAutograd[alias] */
    {"aten::is_nonzero(Tensor self) -> bool",
     "(Tensor _0) -> bool _0"}, /* CompositeImplicitAutograd[alias] */
    {"aten::linalg_vector_norm(Tensor self, Scalar ord=2, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
     "(Tensor _0, Scalar _1, int[]? _2, bool _3, ScalarType? _4) -> Tensor _0"}, /* CPU */
    {"aten::_embedding_bag(Tensor weight, Tensor indices, Tensor offsets, bool scale_grad_by_freq=False, int mode=0, bool sparse=False, Tensor? per_sample_weights=None, bool include_last_offset=False, int padding_idx=-1) -> (Tensor, Tensor, Tensor, Tensor)",
     "(Tensor _0, Tensor _1, Tensor _2, bool _3, int _4, bool _5, Tensor? _6, bool _7, int _8) -> (Tensor _0, Tensor _1, Tensor _2, Tensor _3)"}, /* CPU */
    {"aten::split_with_sizes(Tensor(a -> *) self, int[] split_sizes, int dim=0) -> Tensor(a)[]",
     "(Tensor _0, int[] _1, int _2) -> Tensor[] _0"}, /* CompositeExplicitAutograd[alias] */
    {"aten::dequantize.tensors(Tensor[] tensors) -> Tensor[]",
     "(Tensor[] _0) -> Tensor[] _0"}, /* Tracer */
    {"aten::einsum(str equation, Tensor[] tensors, *, int[]? path=None) -> Tensor",
     "(str _0, Tensor[] _1, int[]? _2) -> Tensor _0"}, /* CompositeImplicitAutograd[alias] */
};

Test(boxing, inferred_schema_matches_torch)
{
    size_t n = sizeof inferred_cases / sizeof *inferred_cases;
    cr_assert_geq(n, 55);
    for (size_t i = 0; i < n; i++) {
        cfx_schema *s = parse(inferred_cases[i][0]);
        char *text = cfx_adapter_inferred_schema(s);
        cr_assert_not_null(text, "%s: %s", inferred_cases[i][0], cfx_error_message());
        cr_assert_str_eq(text, inferred_cases[i][1], "%s", inferred_cases[i][0]);
        free(text);
        /* and every one of them can be adapted */
        cfx_adapter *a = cfx_adapter_new(s, (cfx_fnptr)k_null);
        cr_assert_not_null(a, "%s: %s", inferred_cases[i][0], cfx_error_message());
        cfx_adapter_free(a);
        cfx_schema_free(s);
    }
}

/* ---- cfx_value_to_int_list ------------------------------------------------------------- */

Test(boxing, value_to_int_list)
{
    reset();
    int64_t buf[4];
    cfx_int_list l;
    cfx_value items[] = {cfx_int(5), cfx_int(-6), cfx_int(7)};
    cr_assert_eq(cfx_value_to_int_list(cfx_list(items, 3), buf, 4, &l), CFX_OK);
    cr_assert(l.len == 3 && l.data == buf && buf[0] == 5 && buf[1] == -6 && buf[2] == 7);
    cr_assert_eq(cfx_value_to_int_list(cfx_tuple(items, 2), buf, 4, &l), CFX_OK);
    cr_assert_eq(l.len, 2);
    cr_assert_eq(cfx_value_to_int_list(cfx_none(), buf, 4, &l), CFX_OK);
    cr_assert(l.len < 0 && l.data == NULL);
    cr_assert_eq(cfx_value_to_int_list(cfx_list(items, 3), buf, 2, &l), CFX_ERR);
    cr_assert_str_eq(cfx_error_message(), "a list of 3 ints does not fit in a buffer of 2");
    cfx_error_clear();
    cfx_value mixed[] = {cfx_int(1), cfx_bool(true)};
    cr_assert_eq(cfx_value_to_int_list(cfx_list(mixed, 2), buf, 4, &l), CFX_ERR);
    cr_assert_eq(cfx_value_to_int_list(cfx_double(1), buf, 4, &l), CFX_ERR);
    cfx_error_clear();
}

/* ---- cost of a call -------------------------------------------------------------------- */

static cfx_tensor *k_add_fast(cfx_tensor *a, cfx_tensor *b, cfx_value alpha)
{
    (void)b;
    (void)alpha;
    return a;
}

/* Set CFX_BOXING_BENCH=1 to time 10M boxed calls of (Tensor, Tensor, Scalar) -> Tensor. */
Test(boxing, call_cost)
{
    const char *env = getenv("CFX_BOXING_BENCH");
    long n = env && *env == '1' ? 10000000L : 1000L;
    cfx_schema *s = parse(ADD_SCHEMA);
    cfx_adapter *a = adapter(s, (cfx_fnptr)k_add_fast);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    long ok = 0;
    for (long i = 0; i < n; i++) {
        cfx_value st[3] = {cfx_tensor_value(T0), cfx_tensor_value(T1), cfx_int(1)};
        ok += cfx_adapter_call_boxed(a, NULL, cfx_keyset_empty(), st) == CFX_OK && st[0].u.t == T0;
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double ns = ((double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec)) / (double)n;
    cr_assert_eq(ok, n);
    if (n > 1000)
        fprintf(stderr, "boxed adapter call: %.1f ns/call over %ld calls\n", ns, n);
    cfx_adapter_free(a);
    cfx_schema_free(s);
}
