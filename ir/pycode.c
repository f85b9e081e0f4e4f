/* pycode.c - Graph.python_code(root_module).src, as FX's CodeGen emits it.
 *
 * Followed: PyTorch 2.13's torch/fx/graph.py, _gen_python_code with its defaults (verbose off, no
 * colors, no record_func): free variables from placeholders, one statement per node, then
 * either "\n" or ";  a = b = None\n" for the values whose last use this node is (and the node
 * itself when nothing uses it); `return ...` for the output node; the body
 * indented by 4 with every line, the last empty one included, prefixed; the source opening
 * with "\n" + wrap statements (none) + "\n\n". An empty graph's body is `pass`.
 *
 * Names: python_code uses a fresh name space for locals and globals together, filled in FX's
 * order (the custom builtins first, then each node's name as it is first printed, a global as
 * its statement is written), so a local differs from its node's name exactly when FX's would:
 * a node named `None`, names assigned by hand that collide, a global that took the name. */
#include <stdlib.h>
#include <string.h>

#include "ir/internal.h"
#include "ir/printbuf.h"

/* ---- builtin function forms ------------------------------------------------------------------ */

enum {
    FORM_TORCH = 1,   /* referenced by qualified name */
    FORM_BUILTIN = 2, /* a Python builtin: referenced by its bare name */
    FORM_GENERAL = 3, /* a global named through the name space */
    FORM_MAGIC = 16,  /* + index into magic[] */
    FORM_INPLACE = 64 /* + index into inplace[] */
};

typedef struct tmpl {
    const char *name, *fmt;
} tmpl;

static const tmpl magic[] = {
    {"eq", "{} == {}"}, {"ne", "{} != {}"}, {"lt", "{} < {}"}, {"gt", "{} > {}"},
    {"le", "{} <= {}"}, {"ge", "{} >= {}"}, {"pos", "+{}"}, {"neg", "-{}"}, {"invert", "~{}"},
    {"add", "{} + {}"}, {"sub", "{} - {}"}, {"mul", "{} * {}"}, {"floordiv", "{} // {}"},
    {"truediv", "{} / {}"}, {"div", "{} / {}"}, {"mod", "{} % {}"}, {"pow", "{} ** {}"},
    {"lshift", "{} << {}"}, {"rshift", "{} >> {}"}, {"and_", "{} & {}"}, {"or_", "{} | {}"},
    {"xor", "{} ^ {}"}, {"getitem", "{}[{}]"}, {"matmul", "{} @ {}"},
};

static const tmpl inplace[] = {
    {"iadd", "{} += {}"}, {"iand", "{} &= {}"}, {"ifloordiv", "{} //= {}"}, {"ilshift", "{} <<= {}"},
    {"imod", "{} %= {}"}, {"imul", "{} *= {}"}, {"imatmul", "{} @= {}"}, {"ior", "{} |= {}"},
    {"ipow", "{} **= {}"}, {"irshift", "{} >>= {}"}, {"isub", "{} -= {}"}, {"itruediv", "{} /= {}"},
    {"ixor", "{} ^= {}"}, {"setitem", "{}[{}] = {}"},
};

/* _is_from_torch on a module name: ^torch(?:\.(?!_dynamo\.|_inductor\.)[^.]+)*$ */
static bool module_is_torch(const char *m, size_t len)
{
    if (len < 5 || strncmp(m, "torch", 5) != 0)
        return false;
    size_t i = 5;
    while (i < len) {
        if (m[i] != '.')
            return false;
        size_t s = ++i;
        while (i < len && m[i] != '.')
            i++;
        size_t clen = i - s;
        if (clen == 0)
            return false;
        bool more = i < len;
        if (more && ((clen == 7 && strncmp(m + s, "_dynamo", 7) == 0) ||
                     (clen == 9 && strncmp(m + s, "_inductor", 9) == 0)))
            return false;
    }
    return true;
}

uint8_t ir_pycode_form(const cfx_builtin_fn *fn)
{
    const char *q = fn->qualified_name;
    const char *dot = strrchr(q, '.');
    if (!dot)
        return FORM_GENERAL;
    size_t mlen = (size_t)(dot - q);
    const char *name = dot + 1;
    if (mlen == 8 && strncmp(q, "operator", 8) == 0) {
        for (size_t i = 0; i < sizeof magic / sizeof *magic; i++)
            if (strcmp(name, magic[i].name) == 0)
                return (uint8_t)(FORM_MAGIC + i);
        for (size_t i = 0; i < sizeof inplace / sizeof *inplace; i++)
            if (strcmp(name, inplace[i].name) == 0)
                return (uint8_t)(FORM_INPLACE + i);
        return FORM_GENERAL;
    }
    if (mlen == 8 && strncmp(q, "builtins", 8) == 0)
        return cfx_name_is_reserved(name) ? FORM_BUILTIN : FORM_GENERAL;
    return module_is_torch(q, mlen) ? FORM_TORCH : FORM_GENERAL;
}

/* ---- the generator ---------------------------------------------------------------------------- */

typedef struct gen {
    const cfx_graph *g;
    cfx_buf *body;
    cfx_buf fv;            /* free variables */
    uint32_t n_free;
    uint32_t *last_user;   /* by seq: seq of the last user, UINT32_MAX if none */
    cfx_names *ns;         /* locals and globals */
    cfx_name *local;       /* by seq: local name (base NULL = not named yet) */
    const cfx_builtin_fn **gfn; /* globals named so far, and their names */
    cfx_name *gname;
    uint32_t n_globals, cap_globals;
    int err;
    ir_name_printer np;
} gen;

static cfx_name local_name(gen *s, const cfx_node *n)
{
    cfx_name *slot = &s->local[n->seq];
    if (!slot->base) {
        char small[128];
        cfx_name nm = cfx_node_name(n);
        size_t len = cfx_name_length(nm);
        char *tmp = len < sizeof small ? small : cfx_malloc(len + 1);
        if (!tmp) {
            s->err = CFX_ERR_NOMEM;
            return nm;
        }
        *cfx_name_write(nm, tmp) = '\0';
        if (cfx_names_create(s->ns, tmp, CFX_NAME_FOR_OBJECT, slot) != CFX_OK) {
            s->err = CFX_ERR_NOMEM;
            *slot = nm;
        }
        if (tmp != small)
            cfx_free(tmp);
    }
    return *slot;
}

static void print_local(const cfx_node *n, cfx_buf *b, void *ctx) { cfx_name_print(local_name(ctx, n), b); }

static void put_repr(gen *s, const cfx_value *v) { ir_print_value(v, CFX_ARG_REPR, &s->np, s->body); }

/* The name a non-torch builtin function is referenced by (add_global). */
static void put_global(gen *s, const cfx_builtin_fn *fn, uint8_t form)
{
    const char *q = fn->qualified_name;
    if (form == FORM_TORCH) {
        cfx_buf_putn(s->body, q, strlen(q));
        return;
    }
    if (form == FORM_BUILTIN) {
        cfx_buf_putn(s->body, fn->name, strlen(fn->name));
        return;
    }
    for (uint32_t i = 0; i < s->n_globals; i++)
        if (s->gfn[i] == fn) {
            cfx_name_print(s->gname[i], s->body);
            return;
        }
    /* create_name(_get_qualified_name(fn)): `_operator.x` for the operator module */
    cfx_buf qn;
    cfx_buf_init(&qn);
    if (strncmp(q, "operator.", 9) == 0)
        cfx_buf_putc(&qn, '_');
    cfx_buf_puts(&qn, q);
    cfx_name nm = {NULL, 0};
    if (s->n_globals == s->cap_globals) {
        uint32_t cap = s->cap_globals ? s->cap_globals * 2 : 8;
        const cfx_builtin_fn **f = cfx_realloc(s->gfn, cap * sizeof *f);
        if (f)
            s->gfn = f;
        cfx_name *n = cfx_realloc(s->gname, cap * sizeof *n);
        if (n)
            s->gname = n;
        if (!f || !n) {
            s->err = CFX_ERR_NOMEM;
            cfx_buf_free(&qn);
            return;
        }
        s->cap_globals = cap;
    }
    if (qn.oom || cfx_names_create(s->ns, qn.data, CFX_NAME_FOR_OBJECT, &nm) != CFX_OK) {
        s->err = CFX_ERR_NOMEM;
        cfx_buf_free(&qn);
        return;
    }
    cfx_buf_free(&qn);
    s->gfn[s->n_globals] = fn;
    s->gname[s->n_globals++] = nm;
    cfx_name_print(nm, s->body);
}

static bool is_identifier(const char *p, size_t n)
{
    if (n == 0 || (p[0] >= '0' && p[0] <= '9'))
        return false;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)p[i];
        if (!(c >= 0x80 || c == '_' || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')))
            return false;
    }
    return true;
}

/* _format_target(base, target): base.a.b, with getattr(base, "0") for non-identifier atoms.
 * The base is written by the caller between the opening getattr( prefixes and the atoms. */
static void target_prefix(cfx_buf *b, const char *t)
{
    for (const char *p = t;;) {
        const char *e = strchr(p, '.');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        if (!is_identifier(p, n))
            PB_LIT(b, "getattr(");
        if (!e)
            break;
        p = e + 1;
    }
}

static void target_atoms(cfx_buf *b, const char *t)
{
    for (const char *p = t;;) {
        const char *e = strchr(p, '.');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        if (is_identifier(p, n)) {
            cfx_buf_putc(b, '.');
            cfx_buf_putn(b, p, n);
        } else {
            PB_LIT(b, ", \"");
            cfx_buf_putn(b, p, n);
            PB_LIT(b, "\")");
        }
        if (!e)
            break;
        p = e + 1;
    }
}

static void format_args(gen *s, const cfx_value *args, uint32_t n, const cfx_node *node)
{
    bool first = true;
    for (uint32_t i = 0; i < n; i++) {
        if (!first)
            PB_LIT(s->body, ", ");
        first = false;
        put_repr(s, &args[i]);
    }
    const cfx_kwarg *kw = cfx_node_kwargs(node);
    for (uint32_t i = 0, nk = cfx_node_num_kwargs(node); i < nk; i++) {
        if (!first)
            PB_LIT(s->body, ", ");
        first = false;
        pb_istr(s->body, kw[i].name);
        PB_LIT(s->body, " = ");
        put_repr(s, &kw[i].value);
    }
}

static void put_template(gen *s, const char *fmt, const cfx_node *n)
{
    uint32_t k = 0;
    for (const char *p = fmt; *p; p++) {
        if (p[0] == '{' && p[1] == '}') {
            if (k >= n->n_args) {
                if (!s->err)
                    s->err = cfx_error_set(CFX_ERR, NULL, "Replacement index %u out of range for positional args tuple", k);
                return;
            }
            put_repr(s, &n->args[k++]);
            p++;
        } else {
            cfx_buf_putc(s->body, *p);
        }
    }
}

static void emit_node(gen *s, const cfx_node *n, const char *root)
{
    cfx_buf *b = s->body;
    switch (n->op) {
    case CFX_NODE_PLACEHOLDER: {
        const char *t = ir_target_of(n)->printed;
        if (s->n_free++)
            PB_LIT(&s->fv, ", ");
        pb_istr(&s->fv, t);
        if (n->n_args) {
            PB_LIT(&s->fv, " = ");
            cfx_buf *saved = s->body;
            s->body = &s->fv;
            put_repr(s, &n->args[0]);
            s->body = saved;
        }
        /* raw_name = target.replace("*", "") */
        cfx_name local = local_name(s, n);
        size_t tl = cfx_istr_len(t), rl = 0;
        for (size_t i = 0; i < tl; i++)
            rl += t[i] != '*';
        size_t ll = cfx_name_length(local);
        bool same = rl == ll;
        if (same) {
            char small[128];
            char *tmp = ll < sizeof small ? small : cfx_malloc(ll + 1);
            if (tmp) {
                cfx_name_write(local, tmp);
                for (size_t i = 0, j = 0; i < tl && same; i++)
                    if (t[i] != '*')
                        same = t[i] == tmp[j++];
                if (tmp != small)
                    cfx_free(tmp);
            }
        }
        if (!same) {
            cfx_name_print(local, b);
            PB_LIT(b, " = ");
            for (size_t i = 0; i < tl; i++)
                if (t[i] != '*')
                    cfx_buf_putc(b, t[i]);
            PB_LIT(b, "\n    ");
        }
        return;
    }
    case CFX_NODE_CALL_METHOD:
        cfx_name_print(local_name(s, n), b);
        PB_LIT(b, " = ");
        if (!n->n_args) {
            if (!s->err)
                s->err = cfx_error_set(CFX_ERR, NULL, "tuple index out of range");
            return;
        }
        target_prefix(b, ir_target_of(n)->printed);
        put_repr(s, &n->args[0]);
        target_atoms(b, ir_target_of(n)->printed);
        cfx_buf_putc(b, '(');
        format_args(s, n->args + 1, n->n_args - 1, n);
        cfx_buf_putc(b, ')');
        return;
    case CFX_NODE_CALL_FUNCTION: {
        const cfx_target_info *t = ir_target_of(n);
        if (t->kind == CFX_TARGET_FN && t->magic >= FORM_INPLACE) {
            put_template(s, inplace[t->magic - FORM_INPLACE].fmt, n);
            PB_LIT(b, ";  ");
            cfx_name_print(local_name(s, n), b);
            PB_LIT(b, " = ");
            if (n->n_args)
                put_repr(s, &n->args[0]);
            return;
        }
        if (t->kind == CFX_TARGET_FN && t->magic >= FORM_MAGIC) {
            cfx_name_print(local_name(s, n), b);
            PB_LIT(b, " = ");
            put_template(s, magic[t->magic - FORM_MAGIC].fmt, n);
            return;
        }
        const cfx_builtin_fn *fn = cfx_target_info_fn(t);
        if (fn && t->magic == FORM_BUILTIN && strcmp(fn->name, "getattr") == 0 && n->n_args == 2 &&
            n->args[1].kind == CFX_V_STRING && n->args[1].u.s && is_identifier(n->args[1].u.s, n->args[1].len)) {
            cfx_name_print(local_name(s, n), b);
            PB_LIT(b, " = ");
            put_repr(s, &n->args[0]);
            cfx_buf_putc(b, '.');
            cfx_buf_putn(b, n->args[1].u.s, n->args[1].len);
            return;
        }
        /* add_global runs before repr(node): the global is named first */
        size_t mark = b->len;
        if (fn)
            put_global(s, fn, t->magic);
        else
            pb_istr(b, t->printed);
        size_t glen = b->len - mark;
        char small[256];
        char *g = glen < sizeof small ? small : cfx_malloc(glen);
        if (!g) {
            s->err = CFX_ERR_NOMEM;
            return;
        }
        if (!b->oom)
            memcpy(g, b->data + mark, glen);
        b->len = mark;
        cfx_name_print(local_name(s, n), b);
        PB_LIT(b, " = ");
        cfx_buf_putn(b, g, glen);
        if (g != small)
            cfx_free(g);
        cfx_buf_putc(b, '(');
        format_args(s, n->args, n->n_args, n);
        cfx_buf_putc(b, ')');
        return;
    }
    case CFX_NODE_CALL_MODULE:
        cfx_name_print(local_name(s, n), b);
        PB_LIT(b, " = ");
        target_prefix(b, ir_target_of(n)->printed);
        cfx_buf_putn(b, root, strlen(root));
        target_atoms(b, ir_target_of(n)->printed);
        cfx_buf_putc(b, '(');
        format_args(s, n->args, n->n_args, n);
        cfx_buf_putc(b, ')');
        return;
    case CFX_NODE_GET_ATTR:
        cfx_name_print(local_name(s, n), b);
        PB_LIT(b, " = ");
        target_prefix(b, ir_target_of(n)->printed);
        cfx_buf_putn(b, root, strlen(root));
        target_atoms(b, ir_target_of(n)->printed);
        return;
    case CFX_NODE_OUTPUT:
        PB_LIT(b, "return ");
        if (n->n_args)
            put_repr(s, &n->args[0]);
        else
            PB_LIT(b, "None");
        return;
    default:
        if (!s->err)
            s->err = cfx_error_set(CFX_ERR, NULL, "node: %d %s", n->op, ir_target_of(n)->printed);
        return;
    }
}

/* delete_unused_values(user) */
static void end_statement(gen *s, const cfx_node *n)
{
    if (n->op == CFX_NODE_PLACEHOLDER)
        return;
    cfx_buf *b = s->body;
    if (n->op == CFX_NODE_OUTPUT) {
        PB_LIT(b, "\n    ");
        return;
    }
    uint32_t k = 0;
    for (uint32_t i = 0; i < n->n_inputs; i++) {
        const cfx_node *p = ir_input(n, i);
        if (cfx_node_graph(p) == s->g && s->last_user[p->seq] == n->seq) {
            if (k++)
                PB_LIT(b, " = ");
            else
                PB_LIT(b, ";  ");
            cfx_name_print(local_name(s, p), b);
        }
    }
    if (n->n_users == 0) {
        if (k++)
            PB_LIT(b, " = ");
        else
            PB_LIT(b, ";  ");
        cfx_name_print(local_name(s, n), b);
    }
    if (k)
        PB_LIT(b, " = None");
    PB_LIT(b, "\n    ");
}

static const char *const custom_builtins[] = {"inf", "nan", "NoneType", "torch", "device", "fx_pytree", "pytree"};

int cfx_graph_python_code(const cfx_graph *g, const char *root_module, cfx_buf *out)
{
    if (!g || !out)
        return CFX_ERR;
    if (!root_module)
        root_module = "self";
    int rc = CFX_OK;
    gen s;
    memset(&s, 0, sizeof s);
    s.g = g;
    s.np.fn = print_local;
    s.np.ctx = &s;
    cfx_buf body;
    cfx_buf_init(&body);
    cfx_buf_init(&s.fv);
    s.body = &body;
    uint32_t nseq = g->n_created ? g->n_created : 1;
    s.last_user = cfx_malloc(nseq * sizeof *s.last_user);
    if (!s.last_user)
        goto oom;
    memset(s.last_user, 0xFF, nseq * sizeof *s.last_user);
    s.ns = cfx_names_new(NULL);
    s.local = cfx_calloc(nseq, sizeof *s.local);
    if (!s.ns || !s.local)
        goto oom;
    for (size_t i = 0; i < sizeof custom_builtins / sizeof *custom_builtins; i++) {
        cfx_name nm;
        if (cfx_names_create(s.ns, custom_builtins[i], CFX_NAME_FOR_BUILTIN, &nm) != CFX_OK)
            goto oom;
    }
    /* last uses: walking backwards, the first user seen of each node is its last */
    for (cfx_node *n = cfx_graph_last(g); n; n = cfx_node_prev(n))
        for (uint32_t i = 0; i < n->n_inputs; i++) {
            const cfx_node *p = ir_input(n, i);
            if (cfx_node_graph(p) == g && s.last_user[p->seq] == UINT32_MAX)
                s.last_user[p->seq] = n->seq;
        }
    PB_LIT(&body, "    ");
    bool any = false;
    for (cfx_node *n = cfx_graph_first(g); n && !s.err; n = cfx_node_next(n)) {
        any = true;
        emit_node(&s, n, root_module);
        end_statement(&s, n);
    }
    if (!any)
        PB_LIT(&body, "pass\n    ");
    if (s.err)
        goto fail;
    if (body.oom || s.fv.oom)
        goto oom;
    /* "\n" + wrap_stmts + "\n\n" + prologue + "\n" + code */
    PB_LIT(out, "\n\n\ndef forward(");
    bool self_first = s.n_free && s.fv.len >= 4 && strncmp(s.fv.data, "self", 4) == 0 &&
                      (s.fv.len == 4 || s.fv.data[4] == ',');
    if (!self_first)
        cfx_buf_putn(out, "self, ", s.n_free ? 6 : 4);
    cfx_buf_putn(out, s.fv.data ? s.fv.data : "", s.fv.len);
    PB_LIT(out, "):\n");
    cfx_buf_putn(out, body.data, body.len);
    if (out->oom)
        goto oom;
    goto done;
oom:
    rc = cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
    goto done;
fail:
    rc = s.err;
done:
    cfx_buf_free(&body);
    cfx_buf_free(&s.fv);
    cfx_free(s.last_user);
    cfx_free(s.local);
    cfx_free(s.gfn);
    cfx_free(s.gname);
    cfx_names_free(s.ns);
    return rc;
}

char *cfx_graph_python_code_string(const cfx_graph *g, const char *root_module)
{
    cfx_buf b;
    cfx_buf_init(&b);
    if (cfx_graph_python_code(g, root_module, &b) != CFX_OK) {
        cfx_buf_free(&b);
        return NULL;
    }
    return cfx_buf_take(&b);
}
