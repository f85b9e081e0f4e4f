/* interp_builtins.c - the builtin functions the interpreter can call.
 *
 * An FX graph calls a few Python callables that are not operators: operator.getitem picks an
 * element of a multi-return operator's tuple (make_fx's getitem nodes), torch._assert checks
 * a condition, and graphs with symbolic sizes do integer arithmetic and comparisons with the
 * operator module. cfx values are not Python objects, so these run here with Python's
 * semantics on the kinds a graph can hold (int, float, bool; tuples and lists for getitem),
 * with Python's error texts. Python's ints are unbounded; cfx's are 64-bit, so a result that
 * does not fit is an error rather than a wrong number. */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch/error.h"
#include "dispatch/tensor.h"
#include "ir/interp_internal.h"
#include "ir/interpreter.h"

const char *ir_interp_type_name(cfx_value v)
{
    switch (v.kind) {
    case CFX_V_NONE: return "NoneType";
    case CFX_V_BOOL: return "bool";
    case CFX_V_INT: return "int";
    case CFX_V_DOUBLE: return "float";
    case CFX_V_STRING: return "str";
    case CFX_V_TENSOR: return v.u.t ? "Tensor" : "NoneType";
    case CFX_V_TOKEN: return "Tensor"; /* 2.13's token is a tensor */
    case CFX_V_LIST: return "list";
    case CFX_V_TUPLE: return "tuple";
    case CFX_V_DICT: return "dict";
    case CFX_V_DTYPE: return "torch.dtype";
    case CFX_V_DEVICE: return "torch.device";
    case CFX_V_MEMORY_FORMAT: return "torch.memory_format";
    case CFX_V_LAYOUT: return "torch.layout";
    case CFX_V_OBJECT: return "ScriptObject";
    case CFX_V_GENERATOR: return "Generator";
    default: return "object";
    }
}

static int getitem(const cfx_value *a, uint32_t n, cfx_value *out)
{
    if (n != 2)
        return cfx_error_set(CFX_ERR, NULL, "getitem expected 2 arguments, got %u", n);
    cfx_value c = a[0], i = a[1];
    if (c.kind == CFX_V_TENSOR && c.u.t)
        return cfx_error_set(CFX_ERR, NULL,
                             "operator.getitem on a Tensor cannot run in cfx's interpreter (make_fx records "
                             "indexing as aten operators)");
    if (c.kind == CFX_V_DICT) { /* d[key]: a missing key is Python's KeyError, str() 'key' */
        const cfx_value *v = i.kind == CFX_V_STRING ? cfx_dict_get(c, i.u.s) : NULL;
        if (!v) {
            char *k = cfx_value_to_string(i, CFX_STYLE_PYTHON);
            int rc = cfx_error_set(CFX_ERR, NULL, "KeyError: %s", k ? k : "?");
            cfx_free(k);
            return rc;
        }
        *out = *v;
        return CFX_OK;
    }
    if (c.kind != CFX_V_TUPLE && c.kind != CFX_V_LIST)
        return cfx_error_set(CFX_ERR, NULL, "'%s' object is not subscriptable", ir_interp_type_name(c));
    const char *what = c.kind == CFX_V_TUPLE ? "tuple" : "list";
    if (i.kind != CFX_V_INT && i.kind != CFX_V_BOOL)
        return cfx_error_set(CFX_ERR, NULL, "%s indices must be integers or slices, not %s", what,
                             ir_interp_type_name(i));
    int64_t k = i.kind == CFX_V_BOOL ? i.u.b : i.u.i;
    if (k < 0)
        k += c.len;
    if (k < 0 || k >= (int64_t)c.len)
        return cfx_error_set(CFX_ERR, NULL, "%s index out of range", what);
    *out = c.u.items[k];
    return CFX_OK;
}

/* ---- numbers ------------------------------------------------------------------------------- */

typedef enum { ADD, SUB, MUL, FLOORDIV, TRUEDIV, MOD, POW, EQ, NE, LT, LE, GT, GE, NEG } arith_op;

static const struct {
    const cfx_builtin_fn *fn;
    arith_op op;
    const char *sym;
} arith[] = {
    {&cfx_fn_add, ADD, "+"},      {&cfx_fn_sub, SUB, "-"},     {&cfx_fn_mul, MUL, "*"},
    {&cfx_fn_floordiv, FLOORDIV, "//"}, {&cfx_fn_truediv, TRUEDIV, "/"}, {&cfx_fn_mod, MOD, "%"},
    {&cfx_fn_pow, POW, "** or pow()"}, {&cfx_fn_eq, EQ, "=="}, {&cfx_fn_ne, NE, "!="},
    {&cfx_fn_lt, LT, "<"},        {&cfx_fn_le, LE, "<="},      {&cfx_fn_gt, GT, ">"},
    {&cfx_fn_ge, GE, ">="},       {&cfx_fn_neg, NEG, "-"},
};

static bool is_intlike(cfx_value v) { return v.kind == CFX_V_INT || v.kind == CFX_V_BOOL; }
static int64_t as_int(cfx_value v) { return v.kind == CFX_V_BOOL ? v.u.b : v.u.i; }

static int overflow(const char *sym)
{
    return cfx_error_set(CFX_ERR, NULL, "integer overflow in '%s' (cfx's ints are 64-bit)", sym);
}

static int int_pow(int64_t a, int64_t b, int64_t *out)
{
    int64_t r = 1;
    while (b > 0) {
        if ((b & 1) && __builtin_mul_overflow(r, a, &r))
            return CFX_ERR;
        b >>= 1;
        if (b && __builtin_mul_overflow(a, a, &a))
            return CFX_ERR;
    }
    *out = r;
    return CFX_OK;
}

static int int_arith(arith_op op, const char *sym, int64_t a, int64_t b, cfx_value *out)
{
    int64_t r = 0;
    switch (op) {
    case ADD: if (__builtin_add_overflow(a, b, &r)) return overflow(sym); break;
    case SUB: if (__builtin_sub_overflow(a, b, &r)) return overflow(sym); break;
    case MUL: if (__builtin_mul_overflow(a, b, &r)) return overflow(sym); break;
    case FLOORDIV:
    case MOD:
        if (b == 0)
            return cfx_error_set(CFX_ERR, NULL, op == MOD ? "integer modulo by zero" : "integer division or modulo by zero");
        if (a == INT64_MIN && b == -1) {
            if (op == FLOORDIV)
                return overflow(sym);
            r = 0;
            break;
        }
        {
            int64_t q = a / b, m = a % b;
            if (m != 0 && ((m < 0) != (b < 0))) { /* Python floors; C truncates */
                q -= 1;
                m += b;
            }
            r = op == FLOORDIV ? q : m;
        }
        break;
    case TRUEDIV:
        if (b == 0)
            return cfx_error_set(CFX_ERR, NULL, "division by zero");
        *out = cfx_double((double)a / (double)b);
        return CFX_OK;
    case POW:
        if (b < 0) {
            if (a == 0)
                return cfx_error_set(CFX_ERR, NULL, "0.0 cannot be raised to a negative power");
            *out = cfx_double(pow((double)a, (double)b));
            return CFX_OK;
        }
        if (int_pow(a, b, &r) != CFX_OK)
            return overflow(sym);
        break;
    case EQ: *out = cfx_bool(a == b); return CFX_OK;
    case NE: *out = cfx_bool(a != b); return CFX_OK;
    case LT: *out = cfx_bool(a < b); return CFX_OK;
    case LE: *out = cfx_bool(a <= b); return CFX_OK;
    case GT: *out = cfx_bool(a > b); return CFX_OK;
    case GE: *out = cfx_bool(a >= b); return CFX_OK;
    case NEG:
        if (a == INT64_MIN)
            return overflow(sym);
        r = -a;
        break;
    }
    *out = cfx_int(r);
    return CFX_OK;
}

static int float_arith(arith_op op, double a, double b, cfx_value *out)
{
    double r = 0;
    switch (op) {
    case ADD: r = a + b; break;
    case SUB: r = a - b; break;
    case MUL: r = a * b; break;
    case TRUEDIV:
        if (b == 0)
            return cfx_error_set(CFX_ERR, NULL, "float division by zero");
        r = a / b;
        break;
    case FLOORDIV:
    case MOD:
        if (b == 0)
            return cfx_error_set(CFX_ERR, NULL, op == MOD ? "float modulo" : "float floor division by zero");
        {
            double m = fmod(a, b); /* Python's float_divmod */
            double q = (a - m) / b;
            if (m != 0 && ((b < 0) != (m < 0))) {
                m += b;
                q -= 1.0;
            }
            if (m == 0)
                m = copysign(0.0, b);
            double fq = q != 0 ? floor(q) : copysign(0.0, a / b);
            if (q != 0 && q - fq > 0.5)
                fq += 1.0;
            r = op == MOD ? m : fq;
        }
        break;
    case POW:
        if (a == 0 && b < 0)
            return cfx_error_set(CFX_ERR, NULL, "0.0 cannot be raised to a negative power");
        if (a < 0 && b != floor(b) && isfinite(b))
            return cfx_error_set(CFX_ERR, NULL, "a negative number to a fractional power is complex, which cfx values cannot hold");
        r = pow(a, b);
        break;
    case EQ: *out = cfx_bool(a == b); return CFX_OK;
    case NE: *out = cfx_bool(a != b); return CFX_OK;
    case LT: *out = cfx_bool(a < b); return CFX_OK;
    case LE: *out = cfx_bool(a <= b); return CFX_OK;
    case GT: *out = cfx_bool(a > b); return CFX_OK;
    case GE: *out = cfx_bool(a >= b); return CFX_OK;
    case NEG: r = -a; break;
    }
    *out = cfx_double(r);
    return CFX_OK;
}

static int arithmetic(const cfx_builtin_fn *fn, arith_op op, const char *sym, const cfx_value *a, uint32_t n,
                      cfx_value *out)
{
    uint32_t want = op == NEG ? 1 : 2;
    if (n != want)
        return cfx_error_set(CFX_ERR, NULL, "%s expected %u argument%s, got %u", fn->name, want, want == 1 ? "" : "s", n);
    if (op == NEG) {
        if (is_intlike(a[0]))
            return int_arith(NEG, sym, as_int(a[0]), 0, out);
        if (a[0].kind == CFX_V_DOUBLE)
            return float_arith(NEG, a[0].u.d, 0, out);
        return cfx_error_set(CFX_ERR, NULL, "bad operand type for unary -: '%s'", ir_interp_type_name(a[0]));
    }
    if (is_intlike(a[0]) && is_intlike(a[1]))
        return int_arith(op, sym, as_int(a[0]), as_int(a[1]), out);
    if (cfx_value_is_number(a[0]) && cfx_value_is_number(a[1]))
        return float_arith(op, cfx_value_to_double(a[0]), cfx_value_to_double(a[1]), out);
    if (op >= LT && op <= GE)
        return cfx_error_set(CFX_ERR, NULL, "'%s' not supported between instances of '%s' and '%s'", sym,
                             ir_interp_type_name(a[0]), ir_interp_type_name(a[1]));
    if (op == EQ || op == NE) {
        /* Python compares anything; a Tensor would give a Tensor, which needs its operator */
        if (a[0].kind == CFX_V_TENSOR || a[1].kind == CFX_V_TENSOR)
            return cfx_error_set(CFX_ERR, NULL, "'%s' on a Tensor cannot run in cfx's interpreter", sym);
        bool eq = cfx_value_equal(a[0], a[1]);
        *out = cfx_bool(op == EQ ? eq : !eq);
        return CFX_OK;
    }
    return cfx_error_set(CFX_ERR, NULL, "unsupported operand type(s) for %s: '%s' and '%s'", sym,
                         ir_interp_type_name(a[0]), ir_interp_type_name(a[1]));
}

/* torch._assert(condition, message): AssertionError(message) when the condition is false. */
static int torch_assert(const cfx_value *a, uint32_t n, cfx_value *out)
{
    if (n < 1 || n > 2)
        return cfx_error_set(CFX_ERR, NULL, "_assert() takes 2 positional arguments but %u were given", n);
    cfx_value c = a[0];
    bool ok;
    if (cfx_value_is_number(c))
        ok = cfx_value_to_double(c) != 0;
    else if (c.kind == CFX_V_TENSOR && c.u.t && cfx_tensor_numel(c.u.t) == 1 && !cfx_tensor_is_meta(c.u.t))
        ok = cfx_tensor_get_double(c.u.t, 0) != 0;
    else if (c.kind == CFX_V_TENSOR && c.u.t)
        return cfx_error_set(CFX_ERR, NULL, "Boolean value of Tensor with more than one value is ambiguous");
    else
        ok = !(c.kind == CFX_V_NONE || ((cfx_value_is_container(c) || c.kind == CFX_V_STRING) &&
                                        c.len == 0));
    if (!ok) {
        if (n == 2 && a[1].kind == CFX_V_STRING)
            return cfx_error_set_text(CFX_ERR, NULL, a[1].u.s);
        return cfx_error_set(CFX_ERR, NULL, "AssertionError");
    }
    *out = cfx_none();
    return CFX_OK;
}

/* ---- builtins of later layers ---------------------------------------------------------- */

typedef struct ext_builtin {
    const cfx_builtin_fn *fn;
    cfx_builtin_call_fn call;
    void *ctx;
} ext_builtin;

static pthread_mutex_t ext_lock = PTHREAD_MUTEX_INITIALIZER;
static ext_builtin *ext;
static size_t n_ext, cap_ext;

int cfx_interp_register_builtin(const cfx_builtin_fn *fn, cfx_builtin_call_fn call, void *ctx)
{
    if (!fn || !call)
        return cfx_error_set(CFX_ERR, NULL, "cfx_interp_register_builtin: NULL function or call");
    pthread_mutex_lock(&ext_lock);
    size_t i = 0;
    while (i < n_ext && ext[i].fn != fn)
        i++;
    if (i == n_ext) {
        if (n_ext == cap_ext) {
            size_t cap = cap_ext ? cap_ext * 2 : 16;
            ext_builtin *a = cfx_realloc(ext, cap * sizeof *a);
            if (!a) {
                pthread_mutex_unlock(&ext_lock);
                return cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
            }
            ext = a;
            cap_ext = cap;
        }
        n_ext++;
    }
    ext[i] = (ext_builtin){fn, call, ctx};
    pthread_mutex_unlock(&ext_lock);
    return CFX_OK;
}

static bool find_ext(const cfx_builtin_fn *fn, ext_builtin *out)
{
    pthread_mutex_lock(&ext_lock);
    bool found = false;
    for (size_t i = 0; i < n_ext && !found; i++)
        if (ext[i].fn == fn) {
            *out = ext[i];
            found = true;
        }
    pthread_mutex_unlock(&ext_lock);
    return found;
}

int ir_interp_builtin(const cfx_builtin_fn *fn, const cfx_value *args, uint32_t n, cfx_value *out)
{
    *out = cfx_none();
    if (fn == &cfx_fn_getitem)
        return getitem(args, n, out);
    if (fn == &cfx_fn_torch_assert)
        return torch_assert(args, n, out);
    for (size_t i = 0; i < sizeof arith / sizeof arith[0]; i++)
        if (arith[i].fn == fn)
            return arithmetic(fn, arith[i].op, arith[i].sym, args, n, out);
    ext_builtin e;
    if (find_ext(fn, &e))
        return e.call(fn, e.ctx, args, n, out);
    return cfx_error_set(CFX_ERR, NULL, "cfx's interpreter cannot call %s", fn->qualified_name);
}
