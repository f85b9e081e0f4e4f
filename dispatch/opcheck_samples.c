/* opcheck_samples.c - sample inputs for opcheck (opcheck.h), like PyTorch's OpInfo
 * sample_inputs functions, but derived from the op table instead of written per op, so an
 * operator added later gets samples without anyone writing them.
 *
 * The generic generator reads the schema. The first tensor argument is the "primary" input and
 * takes each of the layouts below (float32), then the contiguous layout in every other dtype
 * cfx has (an op that rejects a dtype must reject it on fakes too: that is checked). Every
 * other argument follows from the primary one and from its name and type:
 *   - a pointwise op (tag `pointwise`) gets its other tensors in the primary's shape, then
 *     broadcast ((3,) against (2, 3)), 0-dim, and transposed;
 *   - tensors named index/indices/target get int64 indices in range of the primary's dims,
 *     mask/condition bool ones, Tensor[] two copies of the primary, Tensor?[] one index tensor,
 *     optional tensors None, other tensors the primary's shape;
 *   - dims (`int dim`, `int[1] dim`, dim0, dim1, `int[] dims`) the last dim and 0, or a
 *     permutation; sizes (`size`, `shape`, `sizes`) the primary's numel, strides its contiguous
 *     strides; numbers a value in range (Scalar 2, then 1.5; eps 1e-5; p 0.5); enum-like and
 *     optional arguments their defaults.
 * A sample outside an op's domain is harmless (both runs raise and the sample is not counted
 * as run); an op none of whose samples runs fails opcheck loudly. Ops whose arguments the
 * generic rules cannot produce (matrix shapes that must chain, nn ops needing 3-d/4-d inputs
 * with matching parameter shapes, class indices) have rows in `overrides`, each with the
 * reason. */
#include <stdio.h>
#include <string.h>

#include "dispatch/error.h"
#include "dispatch/opcheck.h"
#include "dispatch/schema.h"
#include "dispatch/scope.h"
#include "dispatch/tensor.h"

/* ---- tensors ------------------------------------------------------------------------------ */

static void fill(cfx_tensor *t)
{
    int64_t n = cfx_tensor_numel(t);
    void *p = cfx_tensor_data(t);
    for (int64_t i = 0; i < n; i++) {
        switch (cfx_tensor_dtype(t)) {
        case CFX_FLOAT32: ((float *)p)[i] = (float)((i % 7) * 0.5 - 1.25); break;
        case CFX_FLOAT64: ((double *)p)[i] = (i % 7) * 0.5 - 1.25; break;
        case CFX_INT64: ((int64_t *)p)[i] = i % 5 + 1; break;
        case CFX_INT32: ((int32_t *)p)[i] = (int32_t)(i % 5 + 1); break;
        case CFX_INT16: ((int16_t *)p)[i] = (int16_t)(i % 5 + 1); break;
        case CFX_INT8: ((int8_t *)p)[i] = (int8_t)(i % 5 + 1); break;
        case CFX_UINT8: ((uint8_t *)p)[i] = (uint8_t)(i % 5 + 1); break;
        case CFX_BOOL: ((bool *)p)[i] = i % 2; break;
        case CFX_COMPLEX64: ((float *)p)[2 * i] = (float)((i % 7) * 0.5 - 1.25), ((float *)p)[2 * i + 1] = (float)(i % 3) - 1; break;
        case CFX_COMPLEX128: ((double *)p)[2 * i] = (i % 7) * 0.5 - 1.25, ((double *)p)[2 * i + 1] = (double)(i % 3) - 1; break;
        }
    }
}

/* |x| in place (a float tensor made by make) */
static void make_nonneg(cfx_tensor *t)
{
    int64_t n = cfx_tensor_numel(t);
    void *p = cfx_tensor_data(t);
    for (int64_t i = 0; i < n; i++) {
        if (cfx_tensor_dtype(t) == CFX_FLOAT32)
            ((float *)p)[i] = ((float *)p)[i] < 0 ? -((float *)p)[i] : ((float *)p)[i];
        else if (cfx_tensor_dtype(t) == CFX_FLOAT64)
            ((double *)p)[i] = ((double *)p)[i] < 0 ? -((double *)p)[i] : ((double *)p)[i];
    }
}

static cfx_tensor *make(const int64_t *sizes, int ndim, cfx_dtype dt)
{
    cfx_tensor *t = cfx_tensor_new(sizes, ndim, dt, cfx_device_make(CFX_DEVICE_CPU));
    if (t)
        fill(t);
    return t;
}

/* (2, 3) built as a view: the transpose of a (3, 2) tensor, or every other column of (2, 6). */
static cfx_tensor *make_view(bool transposed, cfx_dtype dt)
{
    cfx_tensor *base = make(transposed ? (const int64_t[]){3, 2} : (const int64_t[]){2, 6}, 2, dt);
    if (!base)
        return NULL;
    return cfx_tensor_new_view(base, (const int64_t[]){2, 3},
                               transposed ? (const int64_t[]){1, 2} : (const int64_t[]){6, 2}, 2, 0);
}

/* embedding_bag's offsets: 0, 2, 4, ... (a bag of two indices each) */
static cfx_tensor *make_offsets(const int64_t *sizes, int ndim)
{
    cfx_tensor *t = cfx_tensor_new(sizes, ndim, CFX_INT64, cfx_device_make(CFX_DEVICE_CPU));
    for (int64_t i = 0; t && i < cfx_tensor_numel(t); i++)
        ((int64_t *)cfx_tensor_data(t))[i] = 2 * i;
    return t;
}

/* ints 0..bound-1 (cycled) */
static cfx_tensor *make_index(const int64_t *sizes, int ndim, int64_t bound)
{
    cfx_tensor *t = cfx_tensor_new(sizes, ndim, CFX_INT64, cfx_device_make(CFX_DEVICE_CPU));
    for (int64_t i = 0; t && i < cfx_tensor_numel(t); i++)
        ((int64_t *)cfx_tensor_data(t))[i] = bound > 0 ? (i * 2 + 1) % bound : 0;
    return t;
}

static cfx_value ints(const int64_t *v, int n)
{
    cfx_value *items = cfx_scope_alloc((size_t)(n ? n : 1) * sizeof *items);
    if (!items)
        return cfx_none();
    for (int i = 0; i < n; i++)
        items[i] = cfx_int(v[i]);
    return cfx_list(items, (uint32_t)n);
}

/* a bool[n] of true: a backward op's output_mask asking for every gradient */
static cfx_value all_true(int n)
{
    cfx_value *items = cfx_scope_alloc((size_t)(n ? n : 1) * sizeof *items);
    if (!items)
        return cfx_none();
    for (int i = 0; i < n; i++)
        items[i] = cfx_bool(true);
    return cfx_list(items, (uint32_t)n);
}

static cfx_value tensors(cfx_tensor *a, cfx_tensor *b)
{
    cfx_value *items = cfx_scope_alloc(2 * sizeof *items);
    if (!items)
        return cfx_none();
    items[0] = cfx_tensor_value(a);
    items[1] = cfx_tensor_value(b);
    return cfx_list(items, b ? 2 : 1);
}

/* ---- the generic generator ----------------------------------------------------------------- */

enum layout { L_CONTIG, L_ZERO_DIM, L_VECTOR, L_TRANSPOSED, L_SLICED, L_3D, L_COUNT };
static const char *const layout_names[L_COUNT] = {"(2, 3)", "0-dim", "(5,)", "transposed (2, 3)", "sliced (2, 3)",
                                                  "(2, 3, 4)"};

static cfx_tensor *primary(enum layout l, cfx_dtype dt)
{
    switch (l) {
    case L_CONTIG: return make((const int64_t[]){2, 3}, 2, dt);
    case L_ZERO_DIM: return make(NULL, 0, dt);
    case L_VECTOR: return make((const int64_t[]){5}, 1, dt);
    case L_TRANSPOSED: return make_view(true, dt);
    case L_SLICED: return make_view(false, dt);
    default: return make((const int64_t[]){2, 3, 4}, 3, dt);
    }
}

/* How a pointwise op's other tensors are shaped relative to the primary. */
enum partner { P_SAME, P_BROADCAST, P_ZERO_DIM, P_TRANSPOSED, P_COUNT };
static const char *const partner_names[P_COUNT] = {"", ", other broadcast (3,)", ", other 0-dim", ", other transposed"};

static bool named(const cfx_argument *a, const char *n) { return !strcmp(a->name, n); }

static int type_kind(const cfx_argument *a)
{
    int k = a->type->kind;
    return k == CFX_TYPE_OPTIONAL ? CFX_TYPE_OPTIONAL : k;
}

static int elem_kind(const cfx_type *t) { return t->n_elems ? t->elems[0]->kind : -1; }

static int64_t last_dim_size(const cfx_tensor *t) { return t->ndim ? t->sizes[t->ndim - 1] : 1; }

typedef struct gen {
    const cfx_schema *s;
    bool pointwise;
    cfx_tensor *p;     /* primary */
    enum partner partner;
    bool alt;          /* second variant of numbers and dims */
} gen;

static cfx_tensor *partner_tensor(const gen *g, cfx_dtype dt)
{
    const cfx_tensor *p = g->p;
    switch (g->pointwise ? g->partner : P_SAME) {
    case P_BROADCAST: return make((const int64_t[]){last_dim_size(p)}, p->ndim ? 1 : 0, dt);
    case P_ZERO_DIM: return make(NULL, 0, dt);
    case P_TRANSPOSED:
        if (p->ndim == 2 && p->sizes[0] == 2 && p->sizes[1] == 3)
            return make_view(true, dt);
        return make(p->sizes, p->ndim, dt);
    default: return make(p->sizes, p->ndim, dt);
    }
}

/* A `target` holds class indices in the ops that take an ignore_index (nll_loss and
 * cross_entropy), values like the input's elsewhere (mse_loss). */
static bool target_is_index(const cfx_schema *s)
{
    for (int i = 0; i < s->n_args; i++)
        if (!strcmp(s->args[i].name, "ignore_index"))
            return true;
    return false;
}

static cfx_value gen_tensor(const gen *g, const cfx_argument *a)
{
    const cfx_tensor *p = g->p;
    int64_t d0 = p->ndim ? p->sizes[0] : 1;
    /* index: in the primary's shape (gather, scatter), or 1-d in the second variant
     * (index_select); values in range of the dims the ops index (0 and the default -1) */
    int64_t bound = p->ndim ? (p->sizes[0] < last_dim_size(p) ? p->sizes[0] : last_dim_size(p)) : 1;
    if (named(a, "index"))
        return cfx_tensor_value(g->alt ? make_index((const int64_t[]){2}, p->ndim ? 1 : 0, bound)
                                       : make_index(p->sizes, p->ndim, bound));
    if (named(a, "indices") || (named(a, "target") && target_is_index(g->s)))
        return cfx_tensor_value(make_index(p->sizes, p->ndim ? 1 : 0, named(a, "target") ? last_dim_size(p) : d0));
    if (named(a, "mask") || named(a, "condition"))
        return cfx_tensor_value(partner_tensor(g, CFX_BOOL));
    return cfx_tensor_value(partner_tensor(g, cfx_tensor_dtype(p)));
}

static cfx_value gen_int(const gen *g, const cfx_argument *a)
{
    const cfx_tensor *p = g->p;
    if (named(a, "dim") || named(a, "dim0") || named(a, "start_dim"))
        return cfx_int(g->alt ? 0 : -1);
    if (named(a, "dim1") || named(a, "end_dim"))
        return cfx_int(g->alt ? -1 : 0);
    if (named(a, "chunks"))
        return cfx_int(2);
    if (named(a, "groups"))
        return cfx_int(1);
    if (named(a, "split_size") || named(a, "length") || named(a, "padding_idx"))
        return cfx_int(1);
    if (named(a, "index") || named(a, "start"))
        return cfx_int(0);
    if (named(a, "end"))
        return cfx_int(p && p->ndim ? p->sizes[0] : 1);
    if ((named(a, "N") || named(a, "C")) && p && p->ndim > 1) /* native_group_norm's shape ints */
        return cfx_int(p->sizes[named(a, "C")]);
    if (named(a, "HxW") && p && p->ndim > 1 && p->sizes[0] != 0 && p->sizes[1] != 0)
        return cfx_int(cfx_tensor_numel(p) / (p->sizes[0] * p->sizes[1]));
    if (named(a, "interpolation_mode") && p && p->ndim == 5) /* 3-d sampling has no bicubic (2) */
        return cfx_int(g->alt ? 1 : 0);
    if (named(a, "low"))
        return cfx_int(-3);
    if (named(a, "high"))
        return cfx_int(5);
    return cfx_int(g->alt ? 1 : 2);
}

static cfx_value gen_int_list(const gen *g, const cfx_argument *a)
{
    const cfx_tensor *p = g->p;
    int64_t v[8];
    int n = p ? p->ndim : 0;
    if (named(a, "dims")) { /* a permutation: reversed */
        for (int i = 0; i < n; i++)
            v[i] = n - 1 - i;
        return ints(v, n);
    }
    if (named(a, "dim"))
        return n ? ints((const int64_t[]){g->alt ? 0 : -1}, 1) : ints(NULL, 0);
    if (named(a, "stride")) { /* a creation op's: contiguous strides of its (2, 3) size */
        if (!p)
            return ints((const int64_t[]){3, 1}, 2);
        return ints((const int64_t[]){1}, 1); /* as_strided's, for its size [numel] */
    }
    if (named(a, "split_sizes") && n)
        return ints((const int64_t[]){1, p->sizes[n - 1] - 1}, 2);
    if (!p) /* creation: size */
        return ints((const int64_t[]){2, 3}, 2);
    if (named(a, "sizes") && n) /* unflatten: the dim split as (size, 1) */
        return ints((const int64_t[]){p->sizes[g->alt ? 0 : n - 1], 1}, 2);
    return ints((const int64_t[]){cfx_tensor_numel(p)}, 1); /* size, shape: a 1-d view */
}

/* One argument's value, or false when the generic rules have none. */
/* `training` is true in samples (the .no_stats forms need it) unless the op updates running
 * stats its schema does not mark written: native_batch_norm and batch_norm do in training, and
 * PyTorch's own SchemaCheckMode reports them for it, so their samples stay in evaluation. */
static bool unannotated_running_stats(const cfx_schema *s)
{
    for (int i = 0; i < s->n_args; i++)
        if (!strcmp(s->args[i].name, "running_mean") && !cfx_argument_is_write(&s->args[i]))
            return true;
    return false;
}

static bool gen_arg(const gen *g, int i, cfx_value *out)
{
    const cfx_argument *a = &g->s->args[i];
    int k = type_kind(a);
    if (a->has_default && k != CFX_TYPE_TENSOR && !(k == CFX_TYPE_OPTIONAL && named(a, "min"))) {
        /* alpha, keepdim, dtype, memory_format...: the default; a Scalar? pair like clamp's gets
         * a bound */
        *out = a->default_value;
        if (g->alt && k == CFX_TYPE_SCALAR && named(a, "alpha"))
            *out = cfx_int(2);
        return true;
    }
    switch (k) {
    case CFX_TYPE_TENSOR: *out = gen_tensor(g, a); return out->u.t != NULL;
    case CFX_TYPE_OPTIONAL:
        if (a->type->elems[0]->kind == CFX_TYPE_SCALAR) {
            *out = cfx_double(0.5);
            return true;
        }
        *out = cfx_none(); /* weight=None, bias=None, ... */
        return true;
    case CFX_TYPE_INT:
    case CFX_TYPE_SYMINT: *out = gen_int(g, a); return true;
    case CFX_TYPE_FLOAT:
        *out = cfx_double(named(a, "eps") ? 1e-5 : named(a, "momentum") ? 0.1 : 0.5);
        return true;
    case CFX_TYPE_BOOL: *out = cfx_bool(named(a, "training") && !unannotated_running_stats(g->s)); return true;
    case CFX_TYPE_SCALAR: *out = g->alt ? cfx_double(1.5) : cfx_int(2); return true;
    case CFX_TYPE_SCALAR_TYPE: /* a backward op's input_dtype: the forward input's, the gradient's */
        *out = cfx_dtype_value(named(a, "input_dtype") && g->p ? cfx_tensor_dtype(g->p) : CFX_FLOAT64);
        return true;
    case CFX_TYPE_LIST:
        if (elem_kind(a->type) == CFX_TYPE_INT || elem_kind(a->type) == CFX_TYPE_SYMINT) {
            *out = gen_int_list(g, a);
            return true;
        }
        if (elem_kind(a->type) == CFX_TYPE_TENSOR && g->p) { /* cat, stack */
            *out = tensors(g->p, make(g->p->sizes, g->p->ndim, cfx_tensor_dtype(g->p)));
            return true;
        }
        if (elem_kind(a->type) == CFX_TYPE_BOOL && a->size_hint > 0) { /* output_mask */
            *out = all_true(a->size_hint);
            return out->kind == CFX_V_LIST;
        }
        if (elem_kind(a->type) == CFX_TYPE_OPTIONAL && g->p && g->p->ndim) { /* index.Tensor */
            *out = tensors(make_index((const int64_t[]){2}, 1, g->p->sizes[0]), NULL);
            return true;
        }
        return false;
    case CFX_TYPE_STR: /* scatter_reduce's reduction: the counting one, and a NaN-keeping one */
        if (!named(a, "reduce"))
            return false;
        *out = cfx_string(g->alt ? "amax" : "mean");
        return true;
    default: return false;
    }
}

static int first_tensor(const cfx_schema *s)
{
    for (int i = 0; i < s->n_args; i++)
        if (s->args[i].type->kind == CFX_TYPE_TENSOR)
            return i;
    return -1;
}

/* A primary to derive from: a Tensor argument, or the items of a Tensor[] one (cat, stack). */
static bool has_tensor_input(const cfx_schema *s)
{
    for (int i = 0; i < s->n_args; i++)
        if (s->args[i].type->kind == CFX_TYPE_TENSOR ||
            (s->args[i].type->kind == CFX_TYPE_LIST && elem_kind(s->args[i].type) == CFX_TYPE_TENSOR))
            return true;
    return false;
}

#define OUT_RESIZED                                                                                 \
    "an out= overload whose out has another shape, on a transposed input: 2.13's CPU kernel "                \
    "(TensorIterator) resizes out to the result's strides (1, 2), its Meta kernel (the reference's "        \
    "out_wrapper: out.resize_) contiguously; torch's FakeTensorMode gives the same two answers"
/* Samples on which PyTorch 2.13 fails the same check, as cfx does by following it (its OpInfo
 * tests list them as expected failures): they must keep failing. */
static const struct {
    const char *name, *overload, *what, *reason; /* what: a prefix of the samples' `what` */
} xfails[] = {
    {"aten::pow", "Scalar", "transposed (2, 3) float32",
     "pow.Scalar with a transposed exponent: 2.13's CPU kernel returns strides (3, 1), its Meta kernel (the "
     "Python reference) (1, 2); torch's CrossRefFakeMode fails the same call"},
    {"aten::_log_softmax_backward_data", "", "transposed (2, 3) float32",
     "a transposed grad_output: 2.13's CPU kernel returns a contiguous gradient, its Meta kernel (the "
     "decomposition grad - exp(out) * sum(grad)) keeps grad's strides (1, 2)"},
    {"aten::uniform", "", "sliced (2, 3)",
     "uniform of a non-dense input: 2.13's CPU kernel (clone, then uniform_) returns dense strides (3, 1), its "
     "Meta kernel (the decomposition: _uniform_helper(shape, stride=x.stride())) keeps the input's (6, 2)"},
    {"aten::native_dropout", "", "sliced (2, 3)",
     "native_dropout(x, p, None) of a non-dense x: 2.13's CPU kernel trains (None is training) and returns a dense "
     "(3, 1) result, its Meta kernel (the decomposition: `if train and p != 0`) returns x itself, strides (6, 2); "
     "torch's FakeTensorMode gives the same two answers"},
    {"aten::atan2", "out", "transposed (2, 3) float32, other broadcast (3,)", OUT_RESIZED},
    {"aten::atan2", "out", "transposed (2, 3) float32, other 0-dim", OUT_RESIZED},
    {"aten::add", "out", "transposed (2, 3) float32, other broadcast (3,)", OUT_RESIZED},
    {"aten::add", "out", "transposed (2, 3) float32, other 0-dim", OUT_RESIZED},
    {"aten::mul", "out", "transposed (2, 3) float32, other broadcast (3,)", OUT_RESIZED},
    {"aten::mul", "out", "transposed (2, 3) float32, other 0-dim", OUT_RESIZED},
    {"aten::angle", "", "transposed (2, 3) torch.complex64",
     "angle of a complex tensor: 2.13's CPU kernel is angle_out into an empty result, resized contiguous (3, 1); "
     "its Meta kernel, the reference (atan2(imag, real)), follows the input's strides (1, 2)"},
};

static const char *xfail_reason(const cfx_schema *s, const char *what)
{
    for (size_t i = 0; i < sizeof xfails / sizeof xfails[0]; i++)
        if (!strcmp(xfails[i].name, s->name) && !strcmp(xfails[i].overload, s->overload) &&
            !strncmp(xfails[i].what, what, strlen(xfails[i].what)))
            return xfails[i].reason;
    return NULL;
}

typedef struct sink {
    cfx_opcheck_sample *out;
    int cap, n;
} sink;

static void emit(sink *k, const gen *g, const char *what)
{
    cfx_opcheck_sample smp;
    smp.n_args = g->s->n_args;
    for (int i = 0; i < g->s->n_args; i++)
        if (!gen_arg(g, i, &smp.args[i]))
            return;
    if (g->p && first_tensor(g->s) >= 0)
        smp.args[first_tensor(g->s)] = cfx_tensor_value(g->p);
    snprintf(smp.what, sizeof smp.what, "%s", what);
    smp.xfail = xfail_reason(g->s, what);
    if (k->n < k->cap)
        k->out[k->n] = smp;
    k->n++;
}

/* The unary ops and reductions that compute on complex tensors: their samples add complex
 * inputs (the binary ones' partners would stay real). */
static bool computes_complex(const cfx_schema *s)
{
    static const char *const names[] = {"aten::abs", "aten::angle", "aten::neg", "aten::sum", "aten::mean",
                                        "aten::prod", "aten::var", "aten::std", "aten::sgn"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (!strcmp(s->name, names[i]))
            return true;
    return false;
}

static void generic(sink *k, const cfx_op *op)
{
    const cfx_schema *s = cfx_op_schema(op);
    if (s->n_args > CFX_OPCHECK_MAX_ARGS)
        return;
    int n_tensors = 0;
    for (int i = 0; i < s->n_args; i++)
        n_tensors += s->args[i].type->kind == CFX_TYPE_TENSOR;
    /* partners only matter where there is a second tensor */
    gen g = {s, cfx_op_has_tag(op, CFX_TAG_pointwise) && n_tensors > 1, NULL, P_SAME, false};
    char what[96];
    if (!has_tensor_input(s)) { /* creation ops: no tensor to derive anything from */
        emit(k, &g, "creation");
        g.alt = true;
        emit(k, &g, "creation, other numbers");
        return;
    }
    static const cfx_dtype dtypes[] = {CFX_FLOAT32, CFX_FLOAT64, CFX_INT64, CFX_INT32, CFX_INT16, CFX_INT8, CFX_UINT8, CFX_BOOL};
    for (int l = 0; l < L_COUNT; l++)
        for (int alt = 0; alt < 2; alt++) {
            g.p = primary((enum layout)l, CFX_FLOAT32);
            g.alt = alt;
            for (int pt = 0; pt < (g.pointwise ? P_COUNT : 1); pt++) {
                g.partner = (enum partner)pt;
                snprintf(what, sizeof what, "%s float32%s%s", layout_names[l], partner_names[pt],
                         alt ? ", other numbers and dims" : "");
                emit(k, &g, what);
            }
        }
    g.alt = false;
    g.partner = P_SAME;
    for (size_t d = 1; d < sizeof dtypes / sizeof dtypes[0]; d++) {
        g.p = primary(L_CONTIG, dtypes[d]);
        snprintf(what, sizeof what, "(2, 3) %s", cfx_dtype_torch_name(dtypes[d]));
        emit(k, &g, what);
    }
    if (!computes_complex(s))
        return;
    for (int l = 0; l < L_COUNT; l++) /* complex64 in every layout, complex128 contiguous */
        for (int c = 0; c < (l == L_CONTIG ? 2 : 1); c++) {
            cfx_dtype dt = c ? CFX_COMPLEX128 : CFX_COMPLEX64;
            g.p = primary((enum layout)l, dt);
            snprintf(what, sizeof what, "%s %s", layout_names[l], cfx_dtype_torch_name(dt));
            emit(k, &g, what);
        }
}

/* ---- the override table -------------------------------------------------------------------- */

typedef struct ovr {
    const char *name;
    const char *reason;
    int64_t shapes[6][5]; /* tensor arguments in order; {-1} ends, {0} is 0-dim */
    int ndims[6];
    int64_t list[5][6];   /* the required int-list arguments in order (kernel, stride, ...) */
    int nlist[5];
    bool complex; /* the tensors are complex64 and complex128 instead of float32 and float64 */
    bool nonneg;  /* the tensors' values made non-negative (probabilities, standard deviations) */
} ovr;

#define S(...) {__VA_ARGS__}
static const ovr overrides[] = {
    {"aten::normal.float_Tensor", "std >= 0 everywhere", {S(2, 3)}, {2}, {{0}}, {0}, false, true},
    {"aten::normal.Tensor_Tensor", "std >= 0 everywhere", {S(2, 3), S(2, 3)}, {2, 2}, {{0}}, {0}, false, true},
    {"aten::multinomial", "rows of non-negative probabilities", {S(2, 5)}, {2}, {{0}}, {0}, false, true},
    {"aten::_fft_r2c", "dims within the input's rank", {S(2, 4)}, {2}, {{1}}, {1}},
    {"aten::_fft_c2c", "a complex input, dims within its rank", {S(2, 4)}, {2}, {{0, 1}}, {2}, true},
    {"aten::_fft_c2r", "a complex input whose last dim holds last_dim_size / 2 + 1 entries", {S(2, 2)}, {2}, {{1}},
     {1}, true},
    {"aten::view_as_real", "a complex input", {S(2, 3)}, {2}, {{0}}, {0}, true},
    {"aten::view_as_complex", "a last dim of size 2 and stride 1", {S(3, 2)}, {2}, {{0}}, {0}},
    {"aten::real", "a complex input (a real one is returned as is)", {S(2, 3)}, {2}, {{0}}, {0}, true},
    {"aten::imag", "a complex input", {S(2, 3)}, {2}, {{0}}, {0}, true},
    {"aten::mm", "mat2's rows must equal self's columns", {S(2, 3), S(3, 4)}, {2, 2}, {{0}}, {0}},
    {"aten::bmm", "batch sizes equal, inner dims chained", {S(2, 2, 3), S(2, 3, 4)}, {3, 3}, {{0}}, {0}},
    {"aten::addmm", "self broadcasts to mat1 @ mat2, whose inner dims chain", {S(2, 4), S(2, 3), S(3, 4)}, {2, 2, 2},
     {{0}}, {0}},
    {"aten::baddbmm", "self broadcasts to batch1 @ batch2, whose inner dims chain",
     {S(2, 2, 4), S(2, 2, 3), S(2, 3, 4)}, {3, 3, 3}, {{0}}, {0}},
    {"aten::mv", "vec's length must equal self's columns", {S(2, 3), S(3)}, {2, 1}, {{0}}, {0}},
    {"aten::matmul", "inner dims chained", {S(2, 2, 3), S(3, 4)}, {3, 2}, {{0}}, {0}},
    {"aten::linear", "weight's columns must equal input's last dim", {S(2, 3), S(4, 3), S(4)}, {2, 2, 1}, {{0}}, {0}},
    {"aten::native_layer_norm", "normalized_shape must be the input's trailing sizes, weight and bias that shape",
     {S(2, 3), S(3), S(3)}, {2, 1, 1}, {{3}}, {1}},
    {"aten::layer_norm", "normalized_shape must be the input's trailing sizes, weight and bias that shape",
     {S(2, 3), S(3), S(3)}, {2, 1, 1}, {{3}}, {1}},
    {"aten::native_batch_norm", "per-channel weight, bias and running stats of an (N, C, H, W) input",
     {S(2, 3, 4, 4), S(3), S(3), S(3), S(3)}, {4, 1, 1, 1, 1}, {{0}}, {0}},
    {"aten::_native_batch_norm_legit_no_training", "per-channel weight, bias and running stats of an (N, C, H, W) input",
     {S(2, 3, 4, 4), S(3), S(3), S(3), S(3)}, {4, 1, 1, 1, 1}, {{0}}, {0}},
    {"aten::_native_batch_norm_legit", "per-channel weight, bias and running stats of an (N, C, H, W) input",
     {S(2, 3, 4, 4), S(3), S(3), S(3), S(3)}, {4, 1, 1, 1, 1}, {{0}}, {0}},
    {"aten::_native_batch_norm_legit.no_stats", "per-channel weight and bias of an (N, C, H, W) input",
     {S(2, 3, 4, 4), S(3), S(3)}, {4, 1, 1}, {{0}}, {0}},
    {"aten::batch_norm", "per-channel weight, bias and running stats of an (N, C, H, W) input",
     {S(2, 3, 4, 4), S(3), S(3), S(3), S(3)}, {4, 1, 1, 1, 1}, {{0}}, {0}},
    {"aten::clamp.Tensor", "min and max are optional, but one of them must be given", {S(2, 3), S(2, 3), S(3)},
     {2, 2, 1}, {{0}}, {0}},
    {"aten::clamp_.Tensor", "min and max are optional, but one of them must be given", {S(2, 3), S(2, 3), S(3)},
     {2, 2, 1}, {{0}}, {0}},
    {"aten::embedding", "indices must be integers below the weight's rows", {S(5, 3), S(2, 4)}, {2, 2}, {{0}}, {0}},
    {"aten::convolution", "weight (out, in, kh, kw) matching the input's channels, 2-d stride/padding/dilation",
     {S(1, 2, 5, 5), S(3, 2, 3, 3), S(3)}, {4, 4, 1}, {{1, 1}, {0, 0}, {1, 1}, {0}}, {2, 2, 2, 2}},
    {"aten::conv2d", "weight (out, in, kh, kw) matching the input's channels", {S(1, 2, 5, 5), S(3, 2, 3, 3), S(3)},
     {4, 4, 1}, {{1, 1}, {0}}, {2, 2}},
    {"aten::conv1d", "weight (out, in, k) matching the input's channels", {S(1, 2, 6), S(3, 2, 3), S(3)}, {3, 3, 1},
     {{1}, {0}}, {1, 1}},
    {"aten::conv2d.padding", "weight (out, in, kh, kw) matching the input's channels", {S(1, 2, 5, 5), S(3, 2, 3, 3), S(3)},
     {4, 4, 1}, {{0}}, {0}},
    {"aten::conv3d", "weight (out, in, kd, kh, kw) matching the input's channels",
     {S(1, 2, 4, 5, 5), S(3, 2, 2, 3, 2), S(3)}, {5, 5, 1}, {{1, 1, 1}, {0, 1, 0}}, {3, 3}},
    {"aten::conv3d.padding", "weight (out, in, kd, kh, kw) matching the input's channels",
     {S(1, 2, 4, 5, 5), S(3, 2, 2, 3, 2), S(3)}, {5, 5, 1}, {{0}}, {0}},
    {"aten::conv_transpose1d", "weight (in, out, k) matching the input's channels", {S(1, 2, 6), S(2, 3, 3), S(3)},
     {3, 3, 1}, {{0}}, {0}},
    {"aten::conv_transpose2d.input", "weight (in, out, kh, kw) matching the input's channels",
     {S(1, 2, 5, 5), S(2, 3, 3, 3), S(3)}, {4, 4, 1}, {{0}}, {0}},
    {"aten::max_pool2d_with_indices", "a (N, C, H, W) input and a 2-d kernel that fits it", {S(1, 2, 5, 5)}, {4},
     {{2, 2}}, {2}},
    {"aten::max_pool2d", "a (N, C, H, W) input and a 2-d kernel that fits it", {S(1, 2, 5, 5)}, {4}, {{2, 2}}, {2}},
    {"aten::avg_pool2d", "a (N, C, H, W) input and a 2-d kernel that fits it", {S(1, 2, 5, 5)}, {4}, {{2, 2}}, {2}},
    {"aten::_adaptive_avg_pool2d", "a (N, C, H, W) input and a 2-d output size", {S(1, 2, 5, 5)}, {4}, {{2, 2}},
     {2}},
    {"aten::adaptive_avg_pool2d", "a (N, C, H, W) input and a 2-d output size", {S(1, 2, 5, 5)}, {4}, {{2, 2}}, {2}},
    {"aten::max_pool3d_with_indices", "a (N, C, T, H, W) input and a 3-d kernel that fits it", {S(1, 2, 4, 5, 5)},
     {5}, {{2, 2, 2}}, {3}},
    {"aten::max_pool3d", "a (N, C, T, H, W) input and a 3-d kernel that fits it", {S(1, 2, 4, 5, 5)}, {5},
     {{2, 2, 2}}, {3}},
    {"aten::avg_pool3d", "a (N, C, T, H, W) input and a 3-d kernel that fits it", {S(1, 2, 4, 5, 5)}, {5},
     {{2, 2, 2}}, {3}},
    {"aten::_adaptive_avg_pool3d", "a (N, C, T, H, W) input and a 3-d output size", {S(1, 2, 4, 5, 5)}, {5},
     {{2, 3, 2}}, {3}},
    {"aten::adaptive_avg_pool3d", "a (N, C, T, H, W) input and a 3-d output size", {S(1, 2, 4, 5, 5)}, {5},
     {{2, 3, 2}}, {3}},
    {"aten::im2col", "a (N, C, H, W) input and 2-d kernel, dilation, padding, stride that fit it", {S(1, 2, 5, 5)},
     {4}, {{2, 2}, {1, 1}, {1, 0}, {2, 1}}, {2, 2, 2, 2}},
    {"aten::col2im", "a (N, C * kh * kw, L) input whose L is the block count of the output size",
     {S(1, 8, 6)}, {3}, {{5, 4}, {2, 2}, {1, 1}, {0, 0}, {2, 1}}, {2, 2, 2, 2, 2}},
    {"aten::grid_sampler_2d", "an (N, C, H, W) input and an (N, H_out, W_out, 2) grid", {S(2, 3, 4, 5), S(2, 3, 2, 2)},
     {4, 4}, {{0}}, {0}},
    {"aten::grid_sampler", "an (N, C, H, W) input and an (N, H_out, W_out, 2) grid", {S(2, 3, 4, 5), S(2, 3, 2, 2)},
     {4, 4}, {{0}}, {0}},
    {"aten::grid_sampler_3d", "an (N, C, D, H, W) input and an (N, D_out, H_out, W_out, 3) grid",
     {S(1, 2, 3, 4, 5), S(1, 2, 2, 3, 3)}, {5, 5}, {{0}}, {0}},
    {"aten::nll_loss_forward", "target holds class indices of the input's (N, C)", {S(2, 3), S(2)}, {2, 1}, {{0}},
     {0}},
    {"aten::nll_loss", "target holds class indices of the input's (N, C)", {S(2, 3), S(2)}, {2, 1}, {{0}}, {0}},
    {"aten::native_layer_norm_backward", "the input's trailing sizes normalized, per-row mean and rstd, weight and "
     "bias of the normalized shape", {S(2, 3), S(2, 3), S(2, 1), S(2, 1), S(3), S(3)}, {2, 2, 2, 2, 1, 1}, {{3}}, {1}},
    {"aten::nll_loss_backward", "a one-element grad_output and total_weight, target holding class indices of the "
     "input's (N, C), weight per class", {S(1), S(2, 3), S(2), S(3), S(1)}, {1, 2, 1, 1, 1}, {{0}}, {0}},
    {"aten::max_pool2d_with_indices_backward", "grad_output and indices of the pooled (N, C, H, W) input's shape",
     {S(1, 2, 2, 2), S(1, 2, 5, 5), S(1, 2, 2, 2)}, {4, 4, 4}, {{2, 2}, {2, 2}, {0, 0}, {1, 1}}, {2, 2, 2, 2}},
    {"aten::avg_pool2d_backward", "grad_output of the pooled (N, C, H, W) input's shape", {S(1, 2, 2, 2), S(1, 2, 5, 5)},
     {4, 4}, {{2, 2}, {2, 2}, {0, 0}}, {2, 2, 2}},
    {"aten::_adaptive_avg_pool2d_backward", "grad_output of the (N, C) planes of the input", {S(1, 2, 2, 2), S(1, 2, 5, 5)},
     {4, 4}, {{0}}, {0}},
    {"aten::nll_loss_nd", "target holds class indices of the input's (N, C)", {S(2, 3), S(2)}, {2, 1}, {{0}}, {0}},
    {"aten::cross_entropy_loss", "target holds class indices of the input's (N, C)", {S(2, 3), S(2)}, {2, 1}, {{0}},
     {0}},
    {"aten::constant_pad_nd", "pads of the last dims, two per dim", {S(1, 2, 4, 5)}, {4}, {{1, 2, -1, 1}}, {4}},
    {"aten::reflection_pad1d", "a (N, C, W) input and 2 pads below W", {S(1, 2, 5)}, {3}, {{1, 2}}, {2}},
    {"aten::reflection_pad2d", "a (N, C, H, W) input and 4 pads below H and W", {S(1, 2, 4, 5)}, {4},
     {{1, 2, 2, 1}}, {4}},
    {"aten::reflection_pad3d", "a (N, C, D, H, W) input and 6 pads below D, H and W", {S(1, 2, 3, 4, 5)}, {5},
     {{1, 2, 2, 1, 1, 0}}, {6}},
    {"aten::replication_pad1d", "a (N, C, W) input and 2 pads", {S(1, 2, 5)}, {3}, {{1, 2}}, {2}},
    {"aten::replication_pad2d", "a (N, C, H, W) input and 4 pads", {S(1, 2, 4, 5)}, {4}, {{1, 2, 2, 1}}, {4}},
    {"aten::replication_pad3d", "a (N, C, D, H, W) input and 6 pads", {S(1, 2, 3, 4, 5)}, {5},
     {{1, 2, 2, 1, 1, 0}}, {6}},
    {"aten::_pad_circular", "a (N, C, H, W) input and 4 pads that wrap at most once", {S(1, 2, 4, 5)}, {4},
     {{1, 2, 2, 1}}, {4}},
    {"aten::_pad_enum", "a (N, C, H, W) input and 4 pads (mode: the generic int)", {S(1, 2, 4, 5)}, {4},
     {{1, 2, 2, 1}}, {4}},
    {"aten::pad", "a (N, C, H, W) input and 4 pads", {S(1, 2, 4, 5)}, {4}, {{1, 2, 2, 1}}, {4}},
    {"aten::upsample_nearest2d", "a (N, C, H, W) input and a 2-d output size", {S(1, 2, 3, 4)}, {4}, {{6, 7}}, {2}},
    {"aten::upsample_nearest2d.vec", "a (N, C, H, W) input and a 2-d output size", {S(1, 2, 3, 4)}, {4}, {{6, 7}},
     {2}},
    {"aten::upsample_bilinear2d", "a (N, C, H, W) input and a 2-d output size", {S(1, 2, 3, 4)}, {4}, {{6, 7}}, {2}},
    {"aten::upsample_bilinear2d.vec", "a (N, C, H, W) input and a 2-d output size", {S(1, 2, 3, 4)}, {4}, {{6, 7}},
     {2}},
    {"aten::group_norm", "per-channel weight and bias of an (N, C, L) input (groups: the generic int)",
     {S(2, 4, 3), S(4), S(4)}, {3, 1, 1}, {{0}}, {0}},
    {"aten::native_group_norm", "per-channel weight and bias of an (N, C, L) input, N, C, HxW its sizes",
     {S(2, 4, 3), S(4), S(4)}, {3, 1, 1}, {{0}}, {0}},
    {"aten::select_scatter", "src has the shape of one slice of self", {S(3, 3), S(3)}, {2, 1}, {{0}}, {0}},
    {"aten::convolution_backward", "grad_output of the conv output's shape, weight (out, in, kh, kw) matching the "
     "input's channels, bias_sizes (out), 2-d stride/padding/dilation/output_padding",
     {S(1, 3, 3, 3), S(1, 2, 5, 5), S(3, 2, 3, 3)}, {4, 4, 4}, {{3}, {1, 1}, {0, 0}, {1, 1}, {0, 0}}, {1, 2, 2, 2, 2}},
    {"aten::_cdist_forward", "x1 (r1, m) and x2 (r2, m) with the same columns", {S(2, 3), S(4, 3)}, {2, 2}, {{0}}, {0}},
    {"aten::cdist", "x1 (r1, m) and x2 (r2, m) with the same columns", {S(2, 3), S(4, 3)}, {2, 2}, {{0}}, {0}},
    {"aten::_pdist_forward", "a contiguous (n, m) input", {S(4, 3)}, {2}, {{0}}, {0}},
    {"aten::pdist", "an (n, m) input", {S(4, 3)}, {2}, {{0}}, {0}},
    {"aten::_embedding_bag", "indices below the weight's rows, offsets 0, 2, 4 into them, per-sample weights",
     {S(5, 3), S(6), S(3), S(6)}, {2, 1, 1, 1}, {{0}}, {0}},
    {"aten::_embedding_bag_forward_only", "indices below the weight's rows, offsets 0, 2, 4 into them",
     {S(5, 3), S(6), S(3)}, {2, 1, 1}, {{0}}, {0}},
    {"aten::embedding_bag", "indices below the weight's rows, offsets 0, 2, 4 into them",
     {S(5, 3), S(6), S(3)}, {2, 1, 1}, {{0}}, {0}},
    {"aten::embedding_bag.padding_idx", "indices below the weight's rows, offsets 0, 2, 4 into them",
     {S(5, 3), S(6), S(3)}, {2, 1, 1}, {{0}}, {0}},
    {"aten::native_group_norm_backward", "grad_out and input (N, C, L), [N, group] mean and rstd, per-channel weight "
     "(N, C, HxW from grad_out; group: the generic int)", {S(2, 4, 3), S(2, 4, 3), S(2, 2), S(2, 2), S(4)},
     {3, 3, 2, 2, 1}, {{0}}, {0}},
};

/* Ops with no samples at all, and why. */
static const struct {
    const char *name, *reason;
} skipped[] = {
    {"aten::_print", "prints a string: an effect with no tensor in or out (effects are checked by the "
                     "with_effects tests), and a sample would print into the test log"},
};

const char *cfx_opcheck_skip_reason(const cfx_op *op)
{
    for (size_t i = 0; op && i < sizeof skipped / sizeof skipped[0]; i++)
        if (!strcmp(skipped[i].name, cfx_op_name(op)))
            return skipped[i].reason;
    return NULL;
}

const char *cfx_opcheck_override_reason(const cfx_op *op)
{
    for (size_t i = 0; op && i < sizeof overrides / sizeof overrides[0]; i++)
        if (!strcmp(overrides[i].name, cfx_op_name(op)))
            return overrides[i].reason;
    return NULL;
}

/* An override row's sample: its tensors (float32, int64 for indices), its int lists, the
 * generic rules for the rest (with the row's first tensor as the primary). */
static void from_row(sink *k, const cfx_op *op, const ovr *o, cfx_dtype dt)
{
    const cfx_schema *s = cfx_op_schema(op);
    cfx_opcheck_sample smp = {.n_args = s->n_args, .xfail = NULL};
    int nt = 0, nl = 0;
    gen g = {s, false, NULL, P_SAME, false};
    for (int i = 0; i < s->n_args; i++) {
        const cfx_argument *a = &s->args[i];
        const cfx_type *t = a->type->kind == CFX_TYPE_OPTIONAL ? a->type->elems[0] : a->type;
        if (t->kind == CFX_TYPE_TENSOR && nt < 6 && o->ndims[nt]) {
            const int64_t *sz = o->shapes[nt];
            int nd = o->ndims[nt];
            bool idx = named(a, "indices") || (named(a, "target") && target_is_index(s));
            /* indices bound by the tensor before them: a target by its classes (dim 1) */
            cfx_tensor *x = idx ? make_index(sz, nd, nt ? o->shapes[nt - 1][named(a, "target") ? 1 : 0] : 1)
                            : named(a, "offsets") ? make_offsets(sz, nd)
                                                  : make(sz, nd, dt);
            if (!x)
                return;
            if (o->nonneg && !idx)
                make_nonneg(x);
            smp.args[i] = cfx_tensor_value(x);
            if (!nt)
                g.p = x;
            nt++;
        } else if (t->kind == CFX_TYPE_LIST && elem_kind(t) != CFX_TYPE_TENSOR && nl < 5 && o->nlist[nl] &&
                   !a->has_default) {
            smp.args[i] = ints(o->list[nl], o->nlist[nl]);
            nl++;
        } else if (!gen_arg(&g, i, &smp.args[i])) {
            return;
        }
    }
    snprintf(smp.what, sizeof smp.what, "override row, %s", cfx_dtype_torch_name(dt));
    if (k->n < k->cap)
        k->out[k->n] = smp;
    k->n++;
}

int cfx_opcheck_samples(const cfx_op *op, cfx_opcheck_sample *out, int cap)
{
    if (!op || !cfx_op_schema(op))
        return cfx_error_set(CFX_ERR, NULL, "opcheck: no operator to make samples for");
    sink k = {out, cap, 0};
    for (size_t i = 0; i < sizeof overrides / sizeof overrides[0]; i++)
        if (!strcmp(overrides[i].name, cfx_op_name(op))) {
            from_row(&k, op, &overrides[i], overrides[i].complex ? CFX_COMPLEX64 : CFX_FLOAT32);
            from_row(&k, op, &overrides[i], overrides[i].complex ? CFX_COMPLEX128 : CFX_FLOAT64);
            return k.n;
        }
    if (!cfx_opcheck_skip_reason(op))
        generic(&k, op);
    return k.n;
}
