/* opgen.c - generates the operator API from an op table (dispatch/ops.def), as PyTorch's
 * torchgen generates ATen's from native_functions.yaml.
 *
 *     opgen PREFIX BASE [DOCS]
 *
 * The table is compiled in (CFX_OPGEN_TABLE names it; the Makefile builds one generator per
 * table). Each row's schema is parsed with cfx's own parser, and every C type comes from
 * the boxing rules the library itself applies (boxing_internal.h: cfx_box_arg_step), so the
 * generated code and a libffi-called kernel can never disagree. Written files:
 *
 *   BASE.h          public: the op ids, the typed entry points PREFIX_op_<id>(site, args...)
 *                   and PREFIX_op_<id>_redispatch(ks, args...), result structs for several
 *                   returns, and the convenience macros PREFIX_<c>(args...) that fill in the
 *                   schema's defaults for the trailing arguments left out
 *   BASE_kernels.h  internal: the kernel function types and the prototypes of every kernel the
 *                   table names, so a kernel that does not match its schema does not compile
 *   BASE.c          internal: the entry points, the compiled boxed entries of the kernels, the
 *                   generated kernels (pointwise families, structured ops' generic kernel) and
 *                   the table the runtime registers (dispatch/ops_table.h)
 *   DOCS            optional: a Markdown page listing every op (docs/ops.md)
 *
 * A problem in the table is reported as "TABLE:LINE: message" and exits 1. */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch/boxing_internal.h"
#include "dispatch/error.h"
#include "dispatch/schema.h"
#include "dispatch/tags.h"

#ifndef CFX_OPGEN_TABLE
#define CFX_OPGEN_TABLE "dispatch/ops.def"
#endif

/* ---- the table ---------------------------------------------------------------------------- */

typedef struct op_row {
    const char *schema;
    const char *c;       /* convenience macro name */
    const char *tags;
    const char *returns; /* names for unnamed returns */
    const char *family, *body, *check, *ref_check;
    const char *dtypes;   /* "integral": the loops compute in int32, int64 and bool only;
                           * "numeric": in every dtype but bool; "all": in every dtype */
    const char *cpu_name; /* the C++ kernel's name in "\"x_cpu\" not implemented for 'Float'" */
    int complex;          /* the loops compute in complex64 and complex128 too (..._AND_COMPLEX) */
    int composite;        /* the family's CPU kernel is registered on CompositeExplicitAutograd */
    int to_real;          /* a unary op whose complex inputs give the real dtype (abs, angle): the
                           * body's value's real part; 1: laid out as the input, 2: contiguous */
    /* kernels by dispatch key (the field names are the keys') */
    const char *CPU, *Meta, *BackendSelect, *CompositeExplicitAutograd, *CompositeExplicitAutogradNonFunctional,
        *CompositeImplicitAutograd;
    int structured;
    int backend_select; /* the BackendSelect kernel is generated: redispatch on the device argument */
    const char *out_of; /* an out= overload: the op id of its functional form ("atan2", "add_Tensor") */
    int line;
} op_row;

#define CFX_OP(schema_, ...) {.schema = schema_, .line = __LINE__, __VA_ARGS__},
static const op_row rows[] = {
#include CFX_OPGEN_TABLE
};
#undef CFX_OP
enum { N_ROWS = sizeof rows / sizeof rows[0] };

/* The dispatch keys a row can name, in registration order. */
enum { K_CPU, K_META, K_BACKEND_SELECT, K_CEA, K_CEANF, K_CIA, N_KEYS };
static const char *const key_names[N_KEYS] = {"CPU", "Meta", "BackendSelect", "CompositeExplicitAutograd",
                                              "CompositeExplicitAutogradNonFunctional",
                                              "CompositeImplicitAutograd"};

enum { FAM_NONE, FAM_UNARY, FAM_UNARY_FLOAT, FAM_BINARY, FAM_BINARY_FLOAT, FAM_COMPARE };
static const char *const family_names[] = {"", "unary", "unary_float", "binary", "binary_float", "compare"};

typedef struct op {
    const op_row *row;
    cfx_schema *s;
    char *qualname;     /* "aten::add.Tensor" */
    char *id;           /* "add_Tensor" */
    char *cname;        /* "add": the convenience macro is PREFIX_<cname> */
    cfx_tag_set tags;
    cfx_box_step steps[CFX_BOX_MAX_ARGS];
    cfx_box_ret_step rets[CFX_BOX_MAX_RETURNS];
    char *arg_names[CFX_BOX_MAX_ARGS]; /* C-safe parameter names */
    char *ret_names[CFX_BOX_MAX_RETURNS];
    int n_required;     /* arguments up to the last one without a default */
    const char *kernel[N_KEYS]; /* C function per key, NULL = none */
    bool generated[N_KEYS];     /* the kernel is emitted into BASE.c */
    int family;
    bool inplace;       /* a pointwise op writing its first argument */
    bool has_alpha;
    const struct op *functional; /* an out= overload's functional form, whose kernels compute */
} op;

static op ops[N_ROWS];
static const char *prefix;  /* "cfx" */
static char *PREFIX;        /* "CFX" */
static const char *ns;      /* the table's namespace: "aten" */

static __attribute__((noreturn, format(printf, 2, 3))) void die(const op_row *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s:%d: ", CFX_OPGEN_TABLE, r ? r->line : 0);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(1);
}

static char *xstrdup(const char *s)
{
    char *d = strdup(s);
    if (!d) {
        fprintf(stderr, "opgen: out of memory\n");
        exit(1);
    }
    return d;
}

static char *fmt(const char *f, ...) __attribute__((format(printf, 1, 2)));
static char *fmt(const char *f, ...)
{
    va_list ap;
    va_start(ap, f);
    cfx_buf b;
    cfx_buf_init(&b);
    cfx_buf_vprintf(&b, f, ap);
    va_end(ap);
    char *s = cfx_buf_take(&b);
    if (!s) {
        fprintf(stderr, "opgen: out of memory\n");
        exit(1);
    }
    return s;
}

/* A C keyword, or a name the generated entry points use for their own locals: an argument
 * spelled so is renamed with a trailing underscore. */
static bool is_c_keyword(const char *s)
{
    static const char *const kw[] = {"auto", "break", "case", "char", "const", "continue", "default", "do",
                                     "double", "else", "enum", "extern", "float", "for", "goto", "if",
                                     "inline", "int", "long", "register", "restrict", "return", "short",
                                     "signed", "sizeof", "static", "struct", "switch", "typedef", "union",
                                     "unsigned", "void", "volatile", "while", "bool", "true", "false",
                                     /* the generated entry points' own locals (topk's k) */
                                     "k", "c", "res", "stack", "ks", "site"};
    for (size_t i = 0; i < sizeof kw / sizeof *kw; i++)
        if (!strcmp(s, kw[i]))
            return true;
    return false;
}

static int family_of(const op_row *r)
{
    if (!r->family)
        return FAM_NONE;
    for (int f = 1; f < (int)(sizeof family_names / sizeof *family_names); f++)
        if (!strcmp(r->family, family_names[f]))
            return f;
    die(r, "unknown family '%s' (unary, unary_float, binary, binary_float, compare)", r->family);
}

/* ---- reading a row ------------------------------------------------------------------------ */

static void load(op *o, const op_row *r)
{
    o->row = r;
    char *err = NULL;
    o->s = cfx_schema_parse(r->schema, &err);
    if (!o->s)
        die(r, "schema does not parse:\n%s", err ? err : "?");
    const cfx_schema *s = o->s;
    const char *sep = strstr(s->name, "::");
    if (!sep)
        die(r, "schema '%s' has no namespace", s->name);
    size_t nslen = (size_t)(sep - s->name);
    if (!ns)
        ns = strndup(s->name, nslen);
    else if (strlen(ns) != nslen || strncmp(ns, s->name, nslen))
        die(r, "every op of a table is in one namespace (%s)", ns);
    bool has_overload = s->overload && *s->overload;
    o->qualname = has_overload ? fmt("%s.%s", s->name, s->overload) : xstrdup(s->name);
    o->id = has_overload ? fmt("%s_%s", sep + 2, s->overload) : xstrdup(sep + 2);
    o->cname = xstrdup(r->c ? r->c : o->id);
    size_t bad = 0;
    if (!cfx_tags_parse(r->tags ? r->tags : "", &o->tags, &bad))
        die(r, "unknown tag at '%s'", r->tags + bad);
    if (s->is_vararg || s->is_varret)
        die(r, "a schema with '...' has no C signature");
    if (cfx_box_check_schema(s, o->qualname) != CFX_OK)
        die(r, "%s", cfx_error_message());
    o->n_required = 0;
    for (int i = 0; i < s->n_args; i++) {
        o->steps[i] = cfx_box_arg_step(&s->args[i]);
        o->arg_names[i] = is_c_keyword(s->args[i].name) ? fmt("%s_", s->args[i].name) : xstrdup(s->args[i].name);
        if (!s->args[i].has_default)
            o->n_required = i + 1;
        if (!strcmp(s->args[i].name, "alpha"))
            o->has_alpha = true;
    }
    /* return names: the schema's, else .returns, else r0, r1, ... */
    char *given = xstrdup(r->returns ? r->returns : "");
    char *save = NULL, *tok = strtok_r(given, " ,", &save);
    for (int i = 0; i < s->n_returns; i++) {
        o->rets[i] = cfx_box_schema_return_step(s, i);
        const char *n = s->returns[i].name && *s->returns[i].name ? s->returns[i].name : tok;
        o->ret_names[i] = n ? (is_c_keyword(n) ? fmt("%s_", n) : xstrdup(n)) : fmt("r%d", i);
        tok = tok ? strtok_r(NULL, " ,", &save) : NULL;
    }
    if (tok)
        die(r, ".returns names more returns than the schema has");
    free(given);

    const char *given_k[N_KEYS] = {r->CPU, r->Meta, r->BackendSelect, r->CompositeExplicitAutograd,
                                   r->CompositeExplicitAutogradNonFunctional, r->CompositeImplicitAutograd};
    for (int k = 0; k < N_KEYS; k++)
        o->kernel[k] = given_k[k];
    o->family = family_of(r);
    if (o->family != FAM_NONE) {
        if (!r->body)
            die(r, "a %s op needs a .body", family_names[o->family]);
        bool binary = o->family == FAM_BINARY || o->family == FAM_BINARY_FLOAT || o->family == FAM_COMPARE;
        int n_tensors = 0;
        for (int i = 0; i < s->n_args; i++)
            n_tensors += o->steps[i].form == CFX_BOX_TENSOR;
        if (s->n_returns != 1 || o->rets[0].form != CFX_BOX_TENSOR || n_tensors != (binary ? 2 : 1) ||
            s->n_args != n_tensors + o->has_alpha)
            die(r, "a %s op takes %s%s and returns one Tensor", family_names[o->family],
                binary ? "two Tensors" : "one Tensor", binary ? " (and a Scalar alpha)" : "");
        o->inplace = cfx_argument_is_write(&s->args[0]);
        /* PyTorch's Meta kernel of an in-place binary op is meta_binop_inplace(_alpha) /
         * meta_div_inplace, not a reference; an in-place unary one is the _make_inplace
         * reference (the out-of-place one, then a safe-cast check into self) */
        if (o->inplace && o->family == FAM_COMPARE)
            die(r, "an in-place comparison is not modelled by the families");
        if (o->inplace && binary && r->ref_check)
            die(r, ".ref_check belongs to an op whose Meta kernel is its reference, not an in-place one");
        for (int k = K_CPU; k <= K_META; k++)
            if (!o->kernel[k]) {
                o->kernel[k] = fmt("cfx_%s_%s", k == K_CPU ? "cpu" : "meta", o->id);
                o->generated[k] = true;
            }
        if (r->composite) {
            /* PyTorch's CompositeExplicitAutograd kernel of such an op (abs, logical_and) is
             * the CPU computation for CPU tensors; meta ones have the Meta kernel */
            if (o->kernel[K_CEA] || !o->generated[K_CPU])
                die(r, ".composite moves the generated CPU kernel to CompositeExplicitAutograd");
            o->kernel[K_CEA] = o->kernel[K_CPU];
            o->generated[K_CEA] = true;
            o->kernel[K_CPU] = NULL;
            o->generated[K_CPU] = false;
        }
        if (r->to_real && ((!r->complex && !o->inplace) || (o->family != FAM_UNARY && o->family != FAM_UNARY_FLOAT)))
            die(r, ".to_real belongs to a unary op computed in complex (.complex = 1) or an in-place one");
    } else if (r->body || r->check || r->ref_check || r->dtypes || r->cpu_name || r->composite || r->to_real) {
        die(r, ".body, .check and .ref_check belong to a pointwise .family");
    }
    if (r->backend_select) {
        /* a factory without a tensor argument: ATen's generated BackendSelect kernel computes
         * the backend from the device (and dtype/layout) options and redispatches */
        if (o->kernel[K_BACKEND_SELECT])
            die(r, ".backend_select generates the BackendSelect kernel: name none");
        int dev = cfx_schema_find_arg(s, "device");
        if (dev < 0 || o->steps[dev].form != CFX_BOX_VALUE)
            die(r, ".backend_select needs a 'Device? device' argument");
        o->kernel[K_BACKEND_SELECT] = fmt("backend_select_%s", o->id);
        o->generated[K_BACKEND_SELECT] = true;
    }
    if (r->structured) {
        if (!o->kernel[K_CPU] || !o->kernel[K_META])
            die(r, "a structured op has CPU and Meta kernels");
        if (o->kernel[K_CEANF])
            die(r, "a structured op's CompositeExplicitAutogradNonFunctional kernel is generated");
        o->kernel[K_CEANF] = fmt("ceanf_%s", o->id);
        o->generated[K_CEANF] = true;
    }
}

/* ---- C spelling --------------------------------------------------------------------------- */

static const char *c_type(int form)
{
    switch ((cfx_box_form)form) {
    case CFX_BOX_TENSOR: return "cfx_tensor *";
    case CFX_BOX_INT: return "int64_t ";
    case CFX_BOX_DOUBLE: return "double ";
    case CFX_BOX_BOOL: return "bool ";
    case CFX_BOX_STR: return "const char *";
    case CFX_BOX_DTYPE: return "cfx_dtype ";
    case CFX_BOX_DEVICE: return "cfx_device ";
    case CFX_BOX_VALUE: return "cfx_value ";
    case CFX_BOX_INT_LIST: return "cfx_int_list ";
    case CFX_BOX_TENSOR_LIST: return "cfx_tensor_list ";
    case CFX_BOX_BOXED: return "const cfx_value *";
    }
    return "?";
}

/* The slot field a form is read from / written to. */
static const char *slot_field(int form)
{
    switch ((cfx_box_form)form) {
    case CFX_BOX_TENSOR: return "t";
    case CFX_BOX_INT: return "i";
    case CFX_BOX_DOUBLE: return "d";
    case CFX_BOX_BOOL: return "b";
    case CFX_BOX_STR: return "p";
    case CFX_BOX_DTYPE: return "i32";
    case CFX_BOX_DEVICE: return "dev";
    case CFX_BOX_VALUE: return "v";
    case CFX_BOX_INT_LIST: return "il";
    case CFX_BOX_TENSOR_LIST: return "tl";
    case CFX_BOX_BOXED: return "p";
    }
    return "?";
}

/* The C return type of an op: its one return's type, void, or its result struct. */
static char *ret_type(const op *o)
{
    if (o->s->n_returns == 0)
        return xstrdup("int ");
    if (o->s->n_returns == 1)
        return xstrdup(c_type(o->rets[0].form));
    return fmt("%s_%s_result ", prefix, o->cname);
}

/* The kernel's C return type (void for no returns). */
static char *kernel_ret_type(const op *o)
{
    return o->s->n_returns == 0 ? xstrdup("void ") : ret_type(o);
}

static void params(FILE *f, const op *o)
{
    for (int i = 0; i < o->s->n_args; i++)
        fprintf(f, "%s%s%s", i ? ", " : "", c_type(o->steps[i].form), o->arg_names[i]);
    if (o->s->n_args == 0)
        fputs("void", f);
}

static void arg_names(FILE *f, const op *o)
{
    for (int i = 0; i < o->s->n_args; i++)
        fprintf(f, "%s%s", i ? ", " : "", o->arg_names[i]);
}

/* A C string literal of s. */
static void c_string(FILE *f, const char *s, size_t n)
{
    fputc('"', f);
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (ch == '"' || ch == '\\')
            fprintf(f, "\\%c", ch);
        else if (ch >= 32 && ch < 127)
            fputc(ch, f);
        else
            fprintf(f, "\\%03o", ch);
    }
    fputc('"', f);
}

static void c_double(FILE *f, double d)
{
    if (isnan(d))
        fputs("NAN", f);
    else if (isinf(d))
        fputs(d < 0 ? "-INFINITY" : "INFINITY", f);
    else
        fprintf(f, "%.17g", d);
}

/* The C expression of argument i's default value (for the convenience macros). */
static void c_default(FILE *f, const op *o, int i)
{
    const cfx_argument *a = &o->s->args[i];
    cfx_value v = a->default_value;
    int form = o->steps[i].form;
    bool none = v.kind == CFX_V_NONE;
    switch ((cfx_box_form)form) {
    case CFX_BOX_TENSOR:
        if (none) {
            fputs("NULL", f);
            return;
        }
        break;
    case CFX_BOX_INT:
        if (v.kind == CFX_V_INT || v.kind == CFX_V_LAYOUT || v.kind == CFX_V_MEMORY_FORMAT) {
            fprintf(f, "INT64_C(%" PRId64 ")", v.u.i);
            return;
        }
        break;
    case CFX_BOX_DOUBLE:
        if (v.kind == CFX_V_DOUBLE || v.kind == CFX_V_INT) {
            c_double(f, v.kind == CFX_V_INT ? (double)v.u.i : v.u.d);
            return;
        }
        break;
    case CFX_BOX_BOOL:
        if (v.kind == CFX_V_BOOL) {
            fputs(v.u.b ? "true" : "false", f);
            return;
        }
        break;
    case CFX_BOX_STR:
        if (v.kind == CFX_V_STRING) {
            c_string(f, v.u.s, v.len);
            return;
        }
        break;
    case CFX_BOX_DTYPE:
        if (v.kind == CFX_V_INT || v.kind == CFX_V_DTYPE) {
            fprintf(f, "(cfx_dtype)%d", v.kind == CFX_V_INT ? (int)v.u.i : (int)v.u.dtype);
            return;
        }
        break;
    case CFX_BOX_VALUE:
        switch (v.kind) {
        case CFX_V_NONE: fputs("cfx_none()", f); return;
        case CFX_V_BOOL: fprintf(f, "cfx_bool(%s)", v.u.b ? "true" : "false"); return;
        case CFX_V_INT: fprintf(f, "cfx_int(INT64_C(%" PRId64 "))", v.u.i); return;
        case CFX_V_DOUBLE: fputs("cfx_double(", f); c_double(f, v.u.d); fputc(')', f); return;
        case CFX_V_STRING: fputs("cfx_string(", f); c_string(f, v.u.s, v.len); fputc(')', f); return;
        default: break;
        }
        break;
    case CFX_BOX_INT_LIST:
        if (none) {
            fputs("CFX_NO_INTS", f);
            return;
        }
        if (v.kind == CFX_V_INT) { /* int[N] given one int: the kernel repeats it */
            fprintf(f, "CFX_INTS(%" PRId64 ")", v.u.i);
            return;
        }
        if (v.kind == CFX_V_LIST || v.kind == CFX_V_TUPLE) {
            if (v.len == 0) {
                fputs("CFX_INTS_EMPTY", f);
                return;
            }
            fputs("CFX_INTS(", f);
            for (uint32_t j = 0; j < v.len; j++)
                fprintf(f, "%s%" PRId64, j ? ", " : "", v.u.items[j].u.i);
            fputc(')', f);
            return;
        }
        break;
    case CFX_BOX_TENSOR_LIST:
        if ((v.kind == CFX_V_LIST || v.kind == CFX_V_TUPLE) && v.len == 0) {
            fputs("CFX_TENSORS_EMPTY", f);
            return;
        }
        break;
    case CFX_BOX_BOXED:
        if (none) {
            fputs("NULL", f);
            return;
        }
        break;
    case CFX_BOX_DEVICE:
        break;
    }
    die(o->row, "argument '%s': no C spelling for its default", a->name);
}

/* ---- BASE.h ------------------------------------------------------------------------------- */

static void emit_header(FILE *f, const char *guard)
{
    fprintf(f, "/* Generated by tools/opgen from %s: do not edit. */\n", CFX_OPGEN_TABLE);
    fprintf(f, "#ifndef %s\n#define %s\n\n", guard, guard);
    fputs("#include <stdbool.h>\n#include <stdint.h>\n\n#include \"dispatch/op_api.h\"\n\n", f);

    fprintf(f, "typedef enum %s_opid {\n", prefix);
    for (int i = 0; i < N_ROWS; i++)
        fprintf(f, "    %s_OPID_%s,\n", PREFIX, ops[i].id);
    fprintf(f, "    %s_OPID_COUNT\n} %s_opid;\n\n", PREFIX, prefix);

    fputs("/* ---- results of the ops with several returns ---- */\n\n", f);
    for (int i = 0; i < N_ROWS; i++) {
        const op *o = &ops[i];
        int n = o->s->n_returns;
        if (n < 2)
            continue;
        bool all_tensors = true;
        for (int j = 0; j < n; j++)
            all_tensors = all_tensors && o->rets[j].form == CFX_BOX_TENSOR;
        fprintf(f, "/* %s */\n", o->qualname);
        if (all_tensors) {
            /* named fields, and the same tensors as an array */
            fprintf(f, "typedef union %s_%s_result {\n    struct {\n        cfx_tensor", prefix, o->cname);
            for (int j = 0; j < n; j++)
                fprintf(f, "%s *%s", j ? "," : "", o->ret_names[j]);
            fprintf(f, ";\n    };\n    cfx_tensor *t[%d];\n} %s_%s_result;\n\n", n, prefix, o->cname);
        } else {
            fprintf(f, "typedef struct %s_%s_result {\n", prefix, o->cname);
            for (int j = 0; j < n; j++)
                fprintf(f, "    %s%s;\n", c_type(o->rets[j].form), o->ret_names[j]);
            fprintf(f, "} %s_%s_result;\n\n", prefix, o->cname);
        }
    }

    fputs("/* ---- entry points ---- */\n\n", f);
    for (int i = 0; i < N_ROWS; i++) {
        const op *o = &ops[i];
        char *rt = ret_type(o);
        fprintf(f, "/* %s */\n", o->row->schema);
        fprintf(f, "CFX_API %s%s_op_%s(const cfx_site *site%s", rt, prefix, o->id, o->s->n_args ? ", " : "");
        for (int a = 0; a < o->s->n_args; a++)
            fprintf(f, "%s%s%s", a ? ", " : "", c_type(o->steps[a].form), o->arg_names[a]);
        fputs(");\n", f);
        fprintf(f, "CFX_API %s%s_op_%s_redispatch(cfx_keyset ks%s", rt, prefix, o->id, o->s->n_args ? ", " : "");
        for (int a = 0; a < o->s->n_args; a++)
            fprintf(f, "%s%s%s", a ? ", " : "", c_type(o->steps[a].form), o->arg_names[a]);
        fputs(");\n", f);
        free(rt);
    }

    fputs("\n/* ---- convenience macros: the trailing arguments left out take the schema's defaults ---- */\n\n",
          f);
    for (int i = 0; i < N_ROWS; i++) {
        const op *o = &ops[i];
        int n = o->s->n_args, lo = o->n_required > 0 ? o->n_required : 1;
        if (n == 0) {
            fprintf(f, "#define %s_%s() %s_op_%s(CFX_HERE)\n", prefix, o->cname, prefix, o->id);
            continue;
        }
        fprintf(f, "#define %s_%s(...) CFX_PP_CAT(%s_%s__, CFX_PP_NARG(__VA_ARGS__))(__VA_ARGS__)\n", prefix,
                o->cname, prefix, o->cname);
        for (int k = lo; k <= n; k++) {
            fprintf(f, "#define %s_%s__%d(", prefix, o->cname, k);
            for (int a = 0; a < k; a++)
                fprintf(f, "%s%s", a ? ", " : "", o->arg_names[a]);
            fprintf(f, ") %s_op_%s(CFX_HERE", prefix, o->id);
            for (int a = 0; a < n; a++) {
                fputs(", ", f);
                if (a < k)
                    fprintf(f, "(%s)", o->arg_names[a]);
                else
                    c_default(f, o, a);
            }
            fputs(")\n", f);
        }
    }
    fprintf(f, "\n#endif\n");
}

/* ---- BASE_kernels.h ----------------------------------------------------------------------- */

static void emit_kernels_header(FILE *f, const char *guard, const char *base)
{
    fprintf(f, "/* Generated by tools/opgen from %s: do not edit. */\n", CFX_OPGEN_TABLE);
    fprintf(f, "#ifndef %s\n#define %s\n\n#include \"%s.h\"\n\n", guard, guard, base);
    fprintf(f, "/* the table (ops_table.h) */\nextern const struct cfx_op_table %s_ops_table;\n\n", prefix);
    fputs("/* the C type of each op's kernels */\n", f);
    for (int i = 0; i < N_ROWS; i++) {
        const op *o = &ops[i];
        char *rt = kernel_ret_type(o);
        fprintf(f, "typedef %s(*%s_kfn_%s)(", rt, prefix, o->id);
        params(f, o);
        fputs(");\n", f);
        free(rt);
    }
    fputs("\n/* every kernel the table names */\n", f);
    /* one prototype per function name; a name used for two ops must have one signature */
    for (int i = 0; i < N_ROWS; i++) {
        const op *o = &ops[i];
        for (int k = 0; k < N_KEYS; k++) {
            const char *fn = o->kernel[k];
            if (!fn || (o->generated[k] && (k == K_CEANF || k == K_BACKEND_SELECT)))
                continue;
            bool seen = false;
            for (int j = 0; j <= i && !seen; j++)
                for (int kk = 0; kk < N_KEYS && !seen; kk++)
                    if ((j < i || kk < k) && ops[j].kernel[kk] && !strcmp(ops[j].kernel[kk], fn))
                        seen = true;
            if (seen)
                continue;
            char *rt = kernel_ret_type(o);
            fprintf(f, "%s%s(", rt, fn);
            params(f, o);
            fputs(");\n", f);
            free(rt);
        }
    }
    fputs("\n#endif\n", f);
}

/* ---- BASE.c ------------------------------------------------------------------------------- */

/* The expression boxing C parameter a onto the stack of an entry point (c: its cfx_call). */
static void box_param(FILE *f, const op *o, int i)
{
    const cfx_argument *a = &o->s->args[i];
    const char *n = o->arg_names[i];
    const cfx_type *t = a->type->kind == CFX_TYPE_OPTIONAL ? a->type->elems[0] : a->type;
    switch ((cfx_box_form)o->steps[i].form) {
    case CFX_BOX_TENSOR:
        if (o->steps[i].optional)
            fprintf(f, "%s ? cfx_tensor_value(%s) : cfx_none()", n, n);
        else
            fprintf(f, "cfx_tensor_value(%s)", n);
        return;
    case CFX_BOX_INT:
        if (t->kind == CFX_TYPE_LAYOUT)
            fprintf(f, "cfx_layout_value(%s)", n);
        else if (t->kind == CFX_TYPE_MEMORY_FORMAT)
            fprintf(f, "cfx_memory_format_value((cfx_memory_format)%s)", n);
        else
            fprintf(f, "cfx_int(%s)", n);
        return;
    case CFX_BOX_DOUBLE: fprintf(f, "cfx_double(%s)", n); return;
    case CFX_BOX_BOOL: fprintf(f, "cfx_bool(%s)", n); return;
    case CFX_BOX_STR: fprintf(f, "cfx_call_string(&c, %s)", n); return;
    case CFX_BOX_DTYPE: fprintf(f, "cfx_dtype_value(%s)", n); return;
    case CFX_BOX_DEVICE: fprintf(f, "cfx_device_value(%s)", n); return;
    case CFX_BOX_VALUE: fprintf(f, "%s", n); return;
    case CFX_BOX_INT_LIST: fprintf(f, "cfx_call_ints(&c, %s)", n); return;
    case CFX_BOX_TENSOR_LIST: fprintf(f, "cfx_call_tensors(&c, %s)", n); return;
    case CFX_BOX_BOXED: fprintf(f, "%s ? *%s : cfx_none()", n, n); return;
    }
}

static void emit_step(FILE *f, const cfx_box_step *st)
{
    fprintf(f, "{%d, %d, %d, %d, %d}", st->form, st->conv, st->optional, st->elem_optional, (int)st->size_hint);
}

/* The boxed entry of the op's kernels (c10's make_boxed_from_unboxed_functor): each argument
 * and return goes through boxing_internal.h's inline rule with its constant step, so the
 * compiler keeps only what the type needs. */
static void emit_boxed_entry(FILE *f, const op *o)
{
    int n = o->s->n_args, nr = o->s->n_returns;
    bool lists = false;
    for (int i = 0; i < n; i++)
        lists |= o->steps[i].form == CFX_BOX_INT_LIST || o->steps[i].form == CFX_BOX_TENSOR_LIST;
    fprintf(f, "static int boxed_%s(void *fn, const cfx_op *op, cfx_keyset ks, cfx_value *stack)\n{\n", o->id);
    fputs("    (void)ks;\n", f);
    fprintf(f, "    cfx_box_slot a[%d], r[%d];\n", n ? n : 1, nr ? nr : 1);
    if (lists)
        fputs("    cfx_box_scratch sc;\n    cfx_box_scratch_init(&sc);\n", f);
    fputs("    int rc;\n", f);
    if (!n)
        fputs("    (void)a;\n", f);
    for (int i = 0; i < n; i++) {
        fprintf(f, "    if ((rc = cfx_box_convert_arg(op->schema, op->qualified_name, %d, (cfx_box_step)", i);
        emit_step(f, &o->steps[i]);
        fprintf(f, ", &stack[%d], &a[%d], %s)) != CFX_OK)\n        goto done;\n", i, i, lists ? "&sc" : "NULL");
    }
    fputs("    {\n        bool had_error = cfx_error_pending();\n        ", f);
    if (nr == 1)
        fprintf(f, "r[0].%s = ", slot_field(o->rets[0].form));
    else if (nr > 1)
        fprintf(f, "%s_%s_result res = ", prefix, o->cname);
    fprintf(f, "((%s_kfn_%s)(uintptr_t)fn)(", prefix, o->id);
    for (int i = 0; i < n; i++) {
        int form = o->steps[i].form;
        fputs(i ? ", " : "", f);
        if (form == CFX_BOX_BOOL)
            fprintf(f, "a[%d].b != 0", i);
        else if (form == CFX_BOX_DTYPE)
            fprintf(f, "(cfx_dtype)a[%d].i32", i);
        else if (form == CFX_BOX_STR || form == CFX_BOX_BOXED)
            fprintf(f, "(%s)a[%d].p", c_type(form), i);
        else
            fprintf(f, "a[%d].%s", i, slot_field(form));
    }
    fputs(");\n", f);
    for (int i = 0; nr > 1 && i < nr; i++) {
        int form = o->rets[i].form;
        if (form == CFX_BOX_DTYPE)
            fprintf(f, "        r[%d].i32 = (int32_t)res.%s;\n", i, o->ret_names[i]);
        else
            fprintf(f, "        r[%d].%s = res.%s;\n", i, slot_field(form), o->ret_names[i]);
    }
    fputs("        rc = cfx_box_kernel_failed(had_error) ? CFX_ERR : CFX_OK;\n", f);
    if (nr) {
        /* all returns are boxed before any is written: the stack still holds the arguments */
        fprintf(f, "        cfx_value out[%d];\n", nr);
        for (int i = 0; i < nr; i++)
            fprintf(f, "        if (rc == CFX_OK)\n            rc = cfx_box_return(op->qualified_name, "
                       "(cfx_box_ret_step){%d, %d, %d}, &r[%d], &out[%d]);\n",
                    o->rets[i].form, o->rets[i].kind, o->rets[i].optional, i, i);
        fputs("        if (rc == CFX_OK)\n            memcpy(stack, out, sizeof out);\n", f);
    } else {
        fputs("        (void)r;\n", f);
    }
    fputs("    }\n", f);
    if (n)
        fputs("done:\n", f);
    if (lists)
        fputs("    cfx_box_scratch_free(&sc);\n", f);
    fputs("    return rc;\n}\n\n", f);
}

/* How the entry point reads return i from the stack after a boxed kernel. */
static void unbox_return(FILE *f, const op *o, int i, const char *dest)
{
    const cfx_box_ret_step *r = &o->rets[i];
    switch ((cfx_box_form)r->form) {
    case CFX_BOX_TENSOR:
        fprintf(f, "%s = cfx_call_ret_tensor(&c, stack, %d, %s);\n", dest, i, r->optional ? "true" : "false");
        return;
    case CFX_BOX_INT: fprintf(f, "%s = cfx_call_ret_int(&c, stack, %d);\n", dest, i); return;
    case CFX_BOX_DOUBLE: fprintf(f, "%s = cfx_call_ret_double(&c, stack, %d);\n", dest, i); return;
    case CFX_BOX_BOOL: fprintf(f, "%s = cfx_call_ret_bool(&c, stack, %d);\n", dest, i); return;
    case CFX_BOX_STR: fprintf(f, "%s = cfx_call_ret_string(&c, stack, %d);\n", dest, i); return;
    case CFX_BOX_DTYPE: fprintf(f, "%s = cfx_call_ret_dtype(&c, stack, %d);\n", dest, i); return;
    case CFX_BOX_DEVICE: fprintf(f, "%s = cfx_call_ret_device(&c, stack, %d);\n", dest, i); return;
    case CFX_BOX_TENSOR_LIST: fprintf(f, "%s = cfx_call_ret_tensors(&c, stack, %d);\n", dest, i); return;
    default: fprintf(f, "%s = stack[%d];\n", dest, i); return;
    }
}

static void emit_entry(FILE *f, const op *o, bool redispatch)
{
    int n = o->s->n_args, nr = o->s->n_returns;
    char *rt = ret_type(o);
    fprintf(f, "%s%s_op_%s%s(%s%s", rt, prefix, o->id, redispatch ? "_redispatch" : "",
            redispatch ? "cfx_keyset ks" : "const cfx_site *site", n ? ", " : "");
    for (int a = 0; a < n; a++)
        fprintf(f, "%s%s%s", a ? ", " : "", c_type(o->steps[a].form), o->arg_names[a]);
    fputs(")\n{\n", f);
    fprintf(f, "    cfx_value stack[%d];\n", (n > nr ? n : nr) ? (n > nr ? n : nr) : 1);
    fputs("    cfx_call c;\n    cfx_call_init(&c);\n", f);
    for (int a = 0; a < n; a++) {
        fprintf(f, "    stack[%d] = ", a);
        box_param(f, o, a);
        fputs(";\n", f);
    }
    if (nr == 0)
        fputs("    int res = CFX_ERR;\n", f);
    else
        fprintf(f, "    %sres = {0};\n", rt);
    if (redispatch)
        fprintf(f, "    const cfx_kernel *k = cfx_call_redispatch(&c, &%s_ops_table, %s_OPID_%s, ks, stack);\n", prefix,
                PREFIX, o->id);
    else
        fprintf(f, "    const cfx_kernel *k = cfx_call_select(&c, &%s_ops_table, %s_OPID_%s, site, stack);\n", prefix,
                PREFIX, o->id);
    fputs("    if (k && k->unboxed) {\n        ", f);
    if (nr == 0)
        fputs("bool had_error = cfx_error_pending();\n        ", f);
    if (nr > 0)
        fputs("res = ", f);
    fprintf(f, "((%s_kfn_%s)(uintptr_t)k->unboxed)(", prefix, o->id);
    arg_names(f, o);
    fputs(");\n", f);
    if (nr == 0)
        fputs("        res = !had_error && cfx_error_pending() ? CFX_ERR : CFX_OK;\n", f);
    fputs("    } else if (k && cfx_call_boxed(&c, k, stack) == CFX_OK) {\n", f);
    if (nr == 0) {
        fputs("        res = CFX_OK;\n", f);
    } else if (nr == 1) {
        fputs("        ", f);
        unbox_return(f, o, 0, "res");
    } else {
        for (int i = 0; i < nr; i++) {
            char *dest = fmt("res.%s", o->ret_names[i]);
            fputs("        ", f);
            unbox_return(f, o, i, dest);
            free(dest);
        }
        fprintf(f, "        if (c.failed)\n            res = (%s){0};\n", rt);
    }
    fputs("    }\n    cfx_call_end(&c);\n    return res;\n}\n\n", f);
    free(rt);
}

/* A structured op's CompositeExplicitAutogradNonFunctional kernel: the device's own kernel. */
static void emit_ceanf(FILE *f, const op *o)
{
    char *rt = kernel_ret_type(o);
    fprintf(f, "static %s%s(", rt, o->kernel[K_CEANF]);
    params(f, o);
    fputs(")\n{\n    bool meta = false", f);
    for (int i = 0; i < o->s->n_args; i++) {
        int form = o->steps[i].form;
        if (form == CFX_BOX_TENSOR)
            fprintf(f, " || cfx_tensor_is_meta_or_null(%s)", o->arg_names[i]);
        else if (form == CFX_BOX_TENSOR_LIST)
            fprintf(f, " || cfx_tensor_list_any_meta(%s)", o->arg_names[i]);
    }
    fprintf(f, ";\n    return meta ? %s(", o->kernel[K_META]);
    arg_names(f, o);
    fprintf(f, ") : %s(", o->kernel[K_CPU]);
    arg_names(f, o);
    fputs(");\n}\n\n", f);
    free(rt);
}

/* A generated BackendSelect kernel: the device argument picks the backend, then the op is
 * redispatched below BackendSelect (dispatch/kernels/factory.c's rule). */
static void emit_backend_select(FILE *f, const op *o)
{
    char *rt = kernel_ret_type(o);
    fprintf(f, "static %s%s(", rt, o->kernel[K_BACKEND_SELECT]);
    params(f, o);
    fprintf(f, ")\n{\n    return %s_op_%s_redispatch(cfx_factory_backend(%s)%s", prefix, o->id,
            o->arg_names[cfx_schema_find_arg(o->s, "device")], o->s->n_args ? ", " : "");
    arg_names(f, o);
    fputs(");\n}\n\n", f);
    free(rt);
}

/* The dtypes a pointwise family's loops are compiled for: the float ones compute only in
 * floating dtypes; unary ops have no bool loops (neg and relu refuse bool inputs). */
static bool family_has_dtype(int fam, const char *dt, const op_row *r)
{
    if (!strncmp(dt, "complex", 7))
        return r->complex;
    if (r->dtypes && !strcmp(r->dtypes, "integral"))
        return strcmp(dt, "float32") && strcmp(dt, "float64");
    if (r->dtypes && !strcmp(r->dtypes, "numeric")) /* AT_DISPATCH_ALL_TYPES: no bool */
        return strcmp(dt, "bool") != 0;
    if (r->dtypes && !strcmp(r->dtypes, "all")) /* AT_DISPATCH_ALL_TYPES_AND(kBool): sign */
        return true;
    if (r->dtypes)
        die(r, "unknown .dtypes '%s' (integral, numeric, all)", r->dtypes);
    if (!strcmp(dt, "float32") || !strcmp(dt, "float64"))
        return true;
    if (!strcmp(dt, "bool"))
        return fam == FAM_BINARY || fam == FAM_COMPARE;
    if (!strcmp(dt, "uint8")) /* unary bodies test a < 0, always false for it */
        return fam == FAM_BINARY || fam == FAM_COMPARE;
    return fam == FAM_UNARY || fam == FAM_BINARY || fam == FAM_COMPARE;
}

/* alpha's schema default as a constant initializer of a cfx_value: the pointwise descriptor
 * carries it, since a Python reference is not passed an alpha equal to it. */
static void c_alpha_default(FILE *f, const op *o)
{
    int i = cfx_schema_find_arg(o->s, "alpha");
    cfx_value v = o->s->args[i].default_value;
    if (!o->s->args[i].has_default)
        fputs("{CFX_V_NONE, 0, {.i = 0}}", f); /* every call passes it */
    else if (v.kind == CFX_V_INT)
        fprintf(f, "{CFX_V_INT, 0, {.i = INT64_C(%" PRId64 ")}}", v.u.i);
    else if (v.kind == CFX_V_BOOL)
        fprintf(f, "{CFX_V_BOOL, 0, {.b = %s}}", v.u.b ? "true" : "false");
    else if (v.kind == CFX_V_DOUBLE) {
        fputs("{CFX_V_DOUBLE, 0, {.d = ", f);
        c_double(f, v.u.d);
        fputs("}}", f);
    } else
        die(o->row, "alpha's default is not a number");
}

static void emit_pointwise(FILE *f, const op *o)
{
    static const char *const dtypes[][3] = {{"float32", "float", "CFX_FLOAT32"},
                                            {"float64", "double", "CFX_FLOAT64"},
                                            {"int32", "int32_t", "CFX_INT32"},
                                            {"int64", "int64_t", "CFX_INT64"},
                                            {"bool", "bool", "CFX_BOOL"},
                                            {"uint8", "uint8_t", "CFX_UINT8"},
                                            {"int8", "int8_t", "CFX_INT8"},
                                            {"int16", "int16_t", "CFX_INT16"},
                                            {"complex64", "cfx_complex64", "CFX_COMPLEX64"},
                                            {"complex128", "cfx_complex128", "CFX_COMPLEX128"}};
    bool binary = o->family == FAM_BINARY || o->family == FAM_BINARY_FLOAT || o->family == FAM_COMPARE;
    for (size_t d = 0; d < sizeof dtypes / sizeof *dtypes; d++) {
        if (!family_has_dtype(o->family, dtypes[d][0], o->row))
            continue;
        fprintf(f, "static void pw_%s_%s(char **p, const int64_t *s, int64_t n, const void *ctx)\n{\n", o->id,
                dtypes[d][0]);
        bool is_bool = !strcmp(dtypes[d][0], "bool");
        /* bool and the small integers compute in int, as C++ promotes them */
        bool in_int = is_bool || !strcmp(dtypes[d][0], "uint8") || !strcmp(dtypes[d][0], "int8") ||
                      !strcmp(dtypes[d][0], "int16");
        fprintf(f, "    CFX_POINTWISE_%s_LOOP(%s, %s, %s%s%s);\n}\n", binary ? "BINARY" : "UNARY", dtypes[d][1],
                in_int ? "int" : dtypes[d][1], is_bool ? "(" : "", o->row->body, is_bool ? ") != 0" : "");
    }
    fprintf(f, "static const cfx_pointwise pw_%s = {\n", o->id);
    fprintf(f, "    .name = \"%s\",\n    .kind = CFX_POINTWISE_%s,\n", o->qualname,
            o->family == FAM_UNARY ? "UNARY" : o->family == FAM_UNARY_FLOAT ? "UNARY_FLOAT"
                                   : o->family == FAM_BINARY ? "BINARY" : o->family == FAM_COMPARE ? "COMPARE"
                                   : "BINARY_FLOAT");
    fprintf(f, "    .has_alpha = %s,\n", o->has_alpha ? "true" : "false");
    if (o->has_alpha) {
        fputs("    .alpha_default = ", f);
        c_alpha_default(f, o);
        fputs(",\n", f);
    }
    if (o->row->check)
        fprintf(f, "    .check = %s,\n", o->row->check);
    if (o->row->cpu_name)
        fprintf(f, "    .cpu_name = \"%s\",\n", o->row->cpu_name);
    if (o->row->ref_check)
        fprintf(f, "    .ref_check = %s,\n", o->row->ref_check);
    if (o->row->to_real)
        fprintf(f, "    .to_real = %d,\n", o->row->to_real);
    fputs("    .loops = {", f);
    for (size_t d = 0; d < sizeof dtypes / sizeof *dtypes; d++)
        if (family_has_dtype(o->family, dtypes[d][0], o->row))
            fprintf(f, "[%s] = pw_%s_%s, ", dtypes[d][2], o->id, dtypes[d][0]);
    fputs("},\n};\n", f);
    const char *self = o->arg_names[0], *other = binary ? o->arg_names[1] : "NULL";
    const char *alpha = o->has_alpha ? o->arg_names[2] : "cfx_int(1)";
    for (int k = K_CPU; k <= K_CEA; k++) {
        if (!o->generated[k] || k == K_BACKEND_SELECT)
            continue;
        fprintf(f, "cfx_tensor *%s(", o->kernel[k]);
        params(f, o);
        fprintf(f, ")\n{\n    return cfx_pointwise_%s%s(&pw_%s, %s, %s, %s);\n}\n", k == K_META ? "meta" : "cpu",
                o->inplace ? "_inplace" : "", o->id, self, other, alpha);
    }
    fputc('\n', f);
}

/* An out= overload (.out_of): its schema is the functional form's plus a trailing keyword
 * `Tensor(a!) out` returned as Tensor(a!); its CPU and Meta kernels are generated: the
 * functional form's kernel of that key computes the result, which is written into out as
 * 2.13 does it on that key (cfx_cpu_into_out: TensorIterator's cast check and resize to the
 * result's layout; cfx_meta_into_self: the reference's out_wrapper). */
static void resolve_out_of(op *o)
{
    const op_row *r = o->row;
    const cfx_schema *s = o->s;
    for (int j = 0; j < N_ROWS && !o->functional; j++)
        if (!strcmp(ops[j].id, r->out_of))
            o->functional = &ops[j];
    if (!o->functional)
        die(r, ".out_of names no op id of the table: '%s'", r->out_of);
    const op *fn = o->functional;
    int n = s->n_args - 1;
    if (n < 0 || strcmp(s->args[n].name, "out") || !s->args[n].kwarg_only || !cfx_argument_is_write(&s->args[n]) ||
        o->steps[n].form != CFX_BOX_TENSOR || s->n_returns != 1 || o->rets[0].form != CFX_BOX_TENSOR)
        die(r, "an out= overload ends with `*, Tensor(a!) out` and returns Tensor(a!)");
    if (fn->s->n_args != n || fn->s->n_returns != 1)
        die(r, "an out= overload takes its functional form's arguments, then out");
    for (int i = 0; i < n; i++)
        if (strcmp(fn->s->args[i].name, s->args[i].name) || fn->steps[i].form != o->steps[i].form)
            die(r, "argument %d (%s) is not the functional form's", i, s->args[i].name);
    if (!fn->kernel[K_CPU] || !fn->kernel[K_META])
        die(r, "the functional form of an out= overload has CPU and Meta kernels");
    if (o->kernel[K_CPU] || o->kernel[K_META] || o->family != FAM_NONE || r->structured)
        die(r, "an out= overload's kernels are generated: name none");
    o->kernel[K_CPU] = fmt("%s_cpu_%s", prefix, o->id);
    o->kernel[K_META] = fmt("%s_meta_%s", prefix, o->id);
    o->generated[K_CPU] = o->generated[K_META] = true;
}

static void emit_out_of(FILE *f, const op *o)
{
    for (int k = K_CPU; k <= K_META; k++) {
        fprintf(f, "cfx_tensor *%s(", o->kernel[k]);
        params(f, o);
        fprintf(f, ")\n{\n    cfx_scope sc_ = cfx_scope_begin();\n    cfx_tensor *r_ = %s(\"%s\", %s, %s(",
                k == K_CPU ? "cfx_cpu_into_out" : "cfx_meta_into_self", o->qualname,
                o->arg_names[o->s->n_args - 1], o->functional->kernel[k]);
        for (int i = 0; i < o->s->n_args - 1; i++)
            fprintf(f, "%s%s", i ? ", " : "", o->arg_names[i]);
        fputs("));\n    cfx_scope_end(sc_);\n    return r_ ? cfx_autorelease(cfx_tensor_retain(r_)) : NULL;\n}\n\n", f);
    }
}

static void emit_source(FILE *f, const char *base)
{
    fprintf(f, "/* Generated by tools/opgen from %s: do not edit. */\n", CFX_OPGEN_TABLE);
    fputs("#include <math.h>\n#include <stdint.h>\n#include <tgmath.h>\n\n", f);
    fputs("#include \"dispatch/boxing_internal.h\"\n#include \"dispatch/kernels/factory.h\"\n#include \"dispatch/kernels/inplace.h\"\n#include \"dispatch/kernels/pointwise.h\"\n", f);
    fputs("#include \"dispatch/operator.h\"\n#include \"dispatch/ops_table.h\"\n", f);
    fprintf(f, "#include \"%s_kernels.h\"\n\n", base);

    fputs("/* ---- generated kernels ---- */\n\n", f);
    for (int i = 0; i < N_ROWS; i++) {
        if (ops[i].family != FAM_NONE)
            emit_pointwise(f, &ops[i]);
        if (ops[i].generated[K_CEANF])
            emit_ceanf(f, &ops[i]);
        if (ops[i].generated[K_BACKEND_SELECT])
            emit_backend_select(f, &ops[i]);
        if (ops[i].functional)
            emit_out_of(f, &ops[i]);
    }

    fputs("/* ---- boxed entries ---- */\n\n", f);
    for (int i = 0; i < N_ROWS; i++)
        emit_boxed_entry(f, &ops[i]);

    fputs("/* ---- the table ---- */\n\n", f);
    fprintf(f, "static cfx_op *handles[%d];\n", N_ROWS);
    fprintf(f, "static const cfx_op_row rows[%d] = {\n", N_ROWS);
    for (int i = 0; i < N_ROWS; i++) {
        const op *o = &ops[i];
        fprintf(f, "    {\"%s\", ", o->id);
        c_string(f, o->qualname, strlen(o->qualname));
        fputs(", ", f);
        c_string(f, o->row->schema, strlen(o->row->schema));
        fprintf(f, ", UINT64_C(0x%" PRIx64 "), %d, (cfx_fnptr)%s_op_%s, {", o->tags, o->row->line, prefix, o->id);
        for (int k = 0; k < N_KEYS; k++)
            if (o->kernel[k])
                fprintf(f, "{CFX_KEY_%s, (cfx_fnptr)%s, boxed_%s}, ", key_names[k], o->kernel[k], o->id);
        fputs("}},\n", f);
    }
    fputs("};\n", f);
    fprintf(f, "static cfx_op_table_state state = {PTHREAD_ONCE_INIT};\n");
    fprintf(f, "const cfx_op_table %s_ops_table = {\"%s\", \"%s\", rows, %d, handles, &state};\n\n", prefix, ns,
            CFX_OPGEN_TABLE, N_ROWS);

    fputs("/* ---- entry points ---- */\n\n", f);
    for (int i = 0; i < N_ROWS; i++) {
        emit_entry(f, &ops[i], false);
        emit_entry(f, &ops[i], true);
    }
}

/* ---- DOCS --------------------------------------------------------------------------------- */

static void emit_docs(FILE *f)
{
    fprintf(f, "# Operators\n\nGenerated by `tools/opgen` from `%s` (`make docs`): every built-in operator, its\n"
               "PyTorch 2.13 schema, its C entry point and convenience macro, the dispatch keys it has kernels\n"
               "on, and its tags. C types follow `dispatch/boxing.h`; a convenience macro takes the leading\n"
               "arguments and fills the trailing ones it is not given with the schema's defaults.\n\n",
            CFX_OPGEN_TABLE);
    fprintf(f, "%d operators.\n\n| operator | C | kernels | tags |\n|---|---|---|---|\n", N_ROWS);
    for (int i = 0; i < N_ROWS; i++) {
        const op *o = &ops[i];
        fprintf(f, "| `%s` | `%s_%s(", o->qualname, prefix, o->cname);
        for (int a = 0; a < o->n_required; a++)
            fprintf(f, "%s%s", a ? ", " : "", o->arg_names[a]);
        if (o->n_required < o->s->n_args) {
            fprintf(f, "%s[", o->n_required ? ", " : "");
            for (int a = o->n_required; a < o->s->n_args; a++)
                fprintf(f, "%s%s", a > o->n_required ? ", " : "", o->arg_names[a]);
            fputc(']', f);
        }
        fputs(")` | ", f);
        bool first = true;
        for (int k = 0; k < N_KEYS; k++)
            if (o->kernel[k]) {
                fprintf(f, "%s%s", first ? "" : ", ", key_names[k]);
                first = false;
            }
        fputs(" | ", f);
        first = true;
        for (int t = 0; t < CFX_TAG_COUNT; t++)
            if (o->tags & cfx_tag_bit((cfx_tag)t)) {
                fprintf(f, "%s%s", first ? "" : ", ", cfx_tag_name((cfx_tag)t));
                first = false;
            }
        fputs(" |\n", f);
    }
    fputs("\n## Schemas\n\n", f);
    for (int i = 0; i < N_ROWS; i++) {
        const op *o = &ops[i];
        char *rt = ret_type(o);
        fprintf(f, "- `%s`  \n  `%s%s_op_%s(const cfx_site *site%s", o->row->schema, rt, prefix, o->id,
                o->s->n_args ? ", " : "");
        for (int a = 0; a < o->s->n_args; a++)
            fprintf(f, "%s%s%s", a ? ", " : "", c_type(o->steps[a].form), o->arg_names[a]);
        fputs(")`", f);
        if (o->family != FAM_NONE)
            fprintf(f, "  \n  %s: `%s`", family_names[o->family], o->row->body);
        fputc('\n', f);
        free(rt);
    }
}

/* ---- main --------------------------------------------------------------------------------- */

static FILE *open_out(const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "opgen: cannot write %s: %s\n", path, strerror(errno));
        exit(1);
    }
    return f;
}

static void close_out(FILE *f, const char *path)
{
    if (ferror(f) | fclose(f)) {
        fprintf(stderr, "opgen: error writing %s\n", path);
        remove(path);
        exit(1);
    }
}

static char *guard_of(const char *base, const char *suffix)
{
    char *g = fmt("CFX_GEN_%s%s_H", base, suffix);
    for (char *p = g; *p; p++)
        *p = isalnum((unsigned char)*p) ? (char)toupper((unsigned char)*p) : '_';
    return g;
}

int main(int argc, char **argv)
{
    if (argc < 3 || argc > 4) {
        fprintf(stderr, "usage: opgen PREFIX BASE [DOCS]\n  writes BASE.h, BASE_kernels.h, BASE.c (and the Markdown "
                        "page DOCS) from %s\n",
                CFX_OPGEN_TABLE);
        return 2;
    }
    prefix = argv[1];
    PREFIX = xstrdup(prefix);
    for (char *p = PREFIX; *p; p++)
        *p = (char)toupper((unsigned char)*p);
    const char *base = argv[2];
    for (int i = 0; i < N_ROWS; i++) {
        load(&ops[i], &rows[i]);
        for (int j = 0; j < i; j++) {
            if (!strcmp(ops[j].qualname, ops[i].qualname))
                die(&rows[i], "%s is already in the table (line %d)", ops[i].qualname, rows[j].line);
            if (!strcmp(ops[j].cname, ops[i].cname))
                die(&rows[i], "the macro %s_%s is already %s's (line %d): give .c", prefix, ops[i].cname,
                    ops[j].qualname, rows[j].line);
        }
    }
    for (int i = 0; i < N_ROWS; i++)
        if (rows[i].out_of)
            resolve_out_of(&ops[i]);
    /* a kernel named like a generated macro or entry point would be rewritten by it */
    for (int i = 0; i < N_ROWS; i++)
        for (int k = 0; k < N_KEYS; k++) {
            const char *fn = ops[i].kernel[k];
            for (int j = 0; fn && !ops[i].generated[k] && j < N_ROWS; j++) {
                size_t pl = strlen(prefix);
                if (!strncmp(fn, prefix, pl) && fn[pl] == '_' &&
                    (!strcmp(fn + pl + 1, ops[j].cname) ||
                     (!strncmp(fn + pl + 1, "op_", 3) && !strcmp(fn + pl + 4, ops[j].id))))
                    die(&rows[i], "the kernel %s has the name of a generated %s", fn,
                        strncmp(fn + pl + 1, "op_", 3) ? "macro" : "entry point");
            }
        }
    /* a relative include path from the build's gen directory: the base's last component */
    const char *rel = base;
    const char *gen = strstr(base, "/gen/");
    if (gen)
        rel = gen + 5;
    char *path = fmt("%s.h", base), *guard = guard_of(rel, "");
    FILE *f = open_out(path);
    emit_header(f, guard);
    close_out(f, path);
    free(path);
    free(guard);
    path = fmt("%s_kernels.h", base);
    guard = guard_of(rel, "_kernels");
    f = open_out(path);
    emit_kernels_header(f, guard, rel);
    close_out(f, path);
    free(path);
    free(guard);
    path = fmt("%s.c", base);
    f = open_out(path);
    emit_source(f, rel);
    close_out(f, path);
    free(path);
    if (argc == 4) {
        f = open_out(argv[3]);
        emit_docs(f);
        close_out(f, argv[3]);
    }
    return 0;
}
