/* library.c - registration blocks: DEF, FRAGMENT and IMPL libraries (torch::Library).
 *
 * A library is the unit of ownership: every def, impl and fallback made through it is recorded
 * as a registration handle, and freeing the library undoes them newest first (c10's
 * RegistrationHandleRAII). That is what makes "override, then unload the override" restore the
 * old kernel, and what lets a DEF namespace be claimed again.
 *
 * The checks and their messages are library.cpp's, in its order: the wildcard namespace "_"
 * cannot define; only one DEF per namespace; IMPL blocks cannot define; an impl's key must agree
 * with its block's; fallbacks only in IMPL blocks of "_"; explicit namespaces in schemas and
 * names must match the block's. The debug text of a registration is "registered at FILE:LINE"
 * of the C call that made it (PyTorch uses the block's location; cfx records each call, which
 * is more precise, and the tests pass the block's location to read the same). */
#include <stdlib.h>
#include <string.h>

#include "dispatch/error.h"
#include "dispatch/library.h"
#include "dispatch/registry.h"

typedef enum reg_kind { REG_NAMESPACE, REG_DEF, REG_IMPL, REG_FALLBACK } reg_kind;

typedef struct reg {
    reg_kind kind;
    cfx_op *op;            /* REG_DEF */
    cfx_kernel_entry *e;   /* REG_IMPL */
    cfx_dispatch_key key;  /* REG_FALLBACK */
} reg;

struct cfx_library {
    cfx_library_kind kind;
    char *ns;              /* NULL for the wildcard "_" */
    cfx_dispatch_key key;  /* CFX_KEY_Undefined: none */
    char *file;
    int line;
    reg *regs;
    int n_regs, cap_regs;
};

static const char *kind_name(cfx_library_kind k)
{
    switch (k) {
    case CFX_LIB_DEF: return "TORCH_LIBRARY";
    case CFX_LIB_IMPL: return "TORCH_LIBRARY_IMPL";
    case CFX_LIB_FRAGMENT: return "TORCH_LIBRARY_FRAGMENT";
    }
    return "(unknown)";
}

/* Records the error with library.cpp's "(Error occurred while processing ...)" suffix. */
static int lib_error(const cfx_library *lib, const char *head)
{
    cfx_buf b;
    cfx_buf_init(&b);
    cfx_buf_printf(&b, "%s(Error occurred while processing %s block at %s:%d)", head, kind_name(lib->kind),
                   lib->file, lib->line);
    char *msg = cfx_buf_take(&b);
    int rc = cfx_error_set_text(CFX_ERR, NULL, msg ? msg : head);
    cfx_free(msg);
    return rc;
}

static char *debug_string(const char *file, int line)
{
    cfx_buf b;
    cfx_buf_init(&b);
    cfx_buf_printf(&b, "registered at %s:%d", file ? file : "(unknown)", line);
    return cfx_buf_take(&b);
}

static bool push_reg(cfx_library *lib, reg r)
{
    if (lib->n_regs == lib->cap_regs) {
        int cap = lib->cap_regs ? lib->cap_regs * 2 : 8;
        reg *p = cfx_realloc(lib->regs, (size_t)cap * sizeof *p);
        if (!p)
            return false;
        lib->regs = p;
        lib->cap_regs = cap;
    }
    lib->regs[lib->n_regs++] = r;
    return true;
}

static void undo(cfx_library *lib, reg *r)
{
    switch (r->kind) {
    case REG_NAMESPACE:
        cfx_registry_release_namespace(lib->ns);
        break;
    case REG_DEF:
        r->op->def_count--;
        r->op->def_and_impl_count--;
        if (r->op->def_count == 0)
            cfx_opentry_deregister_schema(r->op);
        cfx_registry_cleanup(r->op);
        break;
    case REG_IMPL: {
        cfx_op *op = r->e->op;
        cfx_opentry_deregister_kernel(r->e);
        op->def_and_impl_count--;
        cfx_registry_cleanup(op);
        break;
    }
    case REG_FALLBACK:
        cfx_registry_deregister_fallback(r->key);
        break;
    }
}

static bool valid_block_key(cfx_dispatch_key k)
{
    return k == CFX_KEY_Undefined || cfx_key_is_alias(k) || cfx_key_is_runtime(k);
}

static void lib_destroy(cfx_library *lib)
{
    cfx_free(lib->ns);
    cfx_free(lib->file);
    cfx_free(lib->regs);
    cfx_free(lib);
}

cfx_library *cfx_library_new(cfx_library_kind kind, const char *ns, cfx_dispatch_key key, const char *file, int line)
{
    cfx_dispatcher_init();
    if (kind != CFX_LIB_DEF && kind != CFX_LIB_IMPL && kind != CFX_LIB_FRAGMENT) {
        cfx_error_set(CFX_ERR, NULL, "could not parse library kind %d", (int)kind);
        return NULL;
    }
    if (!ns || !*ns) {
        cfx_error_set(CFX_ERR, NULL, "%s: a library needs a namespace (\"_\" for every namespace)", kind_name(kind));
        return NULL;
    }
    if ((unsigned)key >= CFX_KEY_COUNT || !valid_block_key(key)) {
        cfx_error_set(CFX_ERR, NULL, "could not parse dispatch key: %d", (int)key);
        return NULL;
    }
    cfx_library *lib = cfx_calloc(1, sizeof *lib);
    if (!lib || !(lib->file = cfx_strdup(file ? file : "(unknown)")) ||
        (strcmp(ns, "_") != 0 && !(lib->ns = cfx_strdup(ns)))) {
        if (lib)
            lib_destroy(lib);
        cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
        return NULL;
    }
    lib->kind = kind;
    lib->key = key;
    lib->line = line;
    if (kind == CFX_LIB_IMPL)
        return lib;
    /* DEF / FRAGMENT. For DEF, PyTorch claims the namespace before this check and so reads the
     * empty wildcard namespace: 1.13 crashes, 2.13 fails with std::bad_optional_access ("bad
     * optional access"). The check comes first here, with the message PyTorch meant to give
     * and gives for FRAGMENT. */
    char head[400];
    if (!lib->ns) {
        snprintf(head, sizeof head,
                 "%s: cannot define %s with the wildcard namespace _ (every %s defines operators for a distinct "
                 "namespace!) Did you mean to use TORCH_LIBRARY_IMPL instead?  ",
                 kind_name(kind), kind_name(kind), kind_name(kind));
        lib_error(lib, head);
        lib_destroy(lib);
        return NULL;
    }
    if (key != CFX_KEY_Undefined) {
        /* an internal assert in PyTorch (the C++ macros cannot pass a key); a user error here */
        snprintf(head, sizeof head, "%s: a %s block cannot have a dispatch key (%s); use TORCH_LIBRARY_IMPL.  ",
                 kind_name(kind), kind_name(kind), cfx_key_name(key));
        lib_error(lib, head);
        lib_destroy(lib);
        return NULL;
    }
    if (kind == CFX_LIB_DEF) {
        char *debug = debug_string(lib->file, line);
        cfx_registry_lock();
        int rc = debug ? cfx_registry_claim_namespace(lib->ns, debug) : cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
        if (rc == CFX_OK && !push_reg(lib, (reg){.kind = REG_NAMESPACE})) {
            cfx_registry_release_namespace(lib->ns);
            rc = cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
        }
        cfx_registry_unlock();
        cfx_free(debug);
        if (rc != CFX_OK) {
            lib_destroy(lib);
            return NULL;
        }
    }
    return lib;
}

void cfx_library_free(cfx_library *lib)
{
    if (!lib)
        return;
    cfx_registry_lock();
    for (int i = lib->n_regs - 1; i >= 0; i--)
        undo(lib, &lib->regs[i]);
    cfx_registry_unlock();
    lib_destroy(lib);
}

/* "ns::name" of a schema or operator name, or NULL when it has no namespace. */
static char *namespace_of(const char *name)
{
    const char *sep = strstr(name, "::");
    return sep ? cfx_strndup(name, (size_t)(sep - name)) : NULL;
}

int cfx_library_def_at(cfx_library *lib, const char *schema_text, int alias_analysis, const char *file, int line)
{
    return cfx_library_def_tagged_at(lib, schema_text, alias_analysis, 0, file, line);
}

int cfx_library_def_tagged_at(cfx_library *lib, const char *schema_text, int alias_analysis, cfx_tag_set tags,
                              const char *file, int line)
{
    if (!lib)
        return CFX_ERR; /* the failed cfx_library_new said why */
    if (!schema_text)
        return cfx_error_set(CFX_ERR, NULL, "def(): schema is NULL");
    if (alias_analysis < -1 || alias_analysis > CFX_ALIAS_INTERNAL_SPECIAL_CASE)
        return cfx_error_set(CFX_ERR, NULL, "could not parse alias analysis kind %d", alias_analysis);
    char *perr = NULL;
    /* as torch.library parses a definition: no type variables outside aten/prim */
    cfx_schema *s = cfx_schema_parse_ex(schema_text, CFX_SCHEMA_NO_TYPEVARS, &perr);
    if (!s) {
        int rc = cfx_error_set_text(CFX_ERR_PARSE, NULL, perr ? perr : "could not parse the schema");
        cfx_free(perr);
        return rc;
    }
    cfx_buf b;
    cfx_buf_init(&b);
    int rc = CFX_OK;
    if (lib->kind != CFX_LIB_DEF && lib->kind != CFX_LIB_FRAGMENT) {
        cfx_buf_puts(&b, "def(\"");
        cfx_schema_print_name(s, &b);
        cfx_buf_printf(&b, "\"): Cannot define an operator inside of a %s block.  All def()s should be placed in "
                           "the (unique) TORCH_LIBRARY block for their namespace.  ",
                       kind_name(lib->kind));
        char *head = cfx_buf_take(&b);
        rc = lib_error(lib, head ? head : "def(): ");
        cfx_free(head);
        cfx_schema_free(s);
        return rc;
    }
    char *ns = namespace_of(s->name);
    if (ns && strcmp(ns, lib->ns) != 0) {
        cfx_buf_printf(&b, "Explicitly provided namespace (%s) in schema string does not match namespace of "
                           "enclosing %s block (%s).  Move this definition to the (unique) TORCH_LIBRARY block "
                           "corresponding to this namespace (and consider deleting the namespace from your schema "
                           "string.)  ",
                       ns, kind_name(lib->kind), lib->ns);
        char *head = cfx_buf_take(&b);
        rc = lib_error(lib, head ? head : "def(): ");
        cfx_free(head);
        cfx_free(ns);
        cfx_schema_free(s);
        return rc;
    }
    if (!ns) {
        cfx_buf_printf(&b, "%s::%s", lib->ns, s->name);
        char *full = cfx_buf_take(&b);
        cfx_schema *named = full ? cfx_schema_with_name(s, full) : NULL;
        cfx_free(full);
        cfx_schema_free(s);
        if (!named)
            return cfx_error_occurred() ? cfx_error_status() : cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
        s = named;
    }
    cfx_free(ns);
    cfx_buf_init(&b);
    cfx_schema_print_name(s, &b);
    char *opname = cfx_buf_take(&b);
    char *debug = debug_string(file, line);
    if (!opname || !debug) {
        cfx_free(opname);
        cfx_free(debug);
        cfx_schema_free(s);
        return cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
    }
    cfx_registry_lock();
    cfx_op *op = cfx_registry_find_or_create(opname);
    if (!op) {
        rc = CFX_ERR_NOMEM;
        cfx_schema_free(s);
    } else if (op->def_count > 0) {
        cfx_buf_init(&b);
        cfx_buf_puts(&b, "Tried to register an operator (");
        cfx_schema_print(s, &b);
        cfx_buf_printf(&b, ") with the same name and overload name multiple times. Each overload's schema should "
                           "only be registered with a single call to def(). Duplicate registration: %s. Original "
                           "registration: %s",
                       debug, op->schema_debug);
        char *msg = cfx_buf_take(&b);
        rc = cfx_error_set_text(CFX_ERR, opname, msg ? msg : "duplicate def");
        cfx_free(msg);
        cfx_schema_free(s);
    } else if (!push_reg(lib, (reg){.kind = REG_DEF, .op = op})) {
        rc = cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
        cfx_schema_free(s);
        cfx_registry_cleanup(op);
    } else {
        bool dflt = alias_analysis < 0;
        rc = cfx_opentry_register_schema(op, s, debug, dflt ? CFX_ALIAS_CONSERVATIVE : alias_analysis, dflt, tags);
        if (rc == CFX_OK) {
            op->def_count++;
            op->def_and_impl_count++;
        } else {
            lib->n_regs--;
            cfx_registry_cleanup(op);
        }
    }
    cfx_registry_unlock();
    cfx_free(opname);
    cfx_free(debug);
    return rc;
}

static int impl_common(cfx_library *lib, const char *name, cfx_dispatch_key key, cfx_boxed_fn boxed, void *ctx,
                       cfx_fnptr unboxed, bool fallthrough, const char *file, int line)
{
    if (!lib)
        return CFX_ERR;
    if (!name)
        return cfx_error_set(CFX_ERR, NULL, "impl(): operator name is NULL");
    if ((unsigned)key >= CFX_KEY_COUNT || !valid_block_key(key))
        return cfx_error_set(CFX_ERR, NULL, "could not parse dispatch key: %d", (int)key);
    if (!fallthrough && !boxed && !unboxed)
        return cfx_error_set(CFX_ERR, NULL, "impl(\"%s\", ...): the kernel function is NULL", name);
    char head[600];
    char *ns = namespace_of(name);
    if (ns && lib->ns && strcmp(ns, lib->ns) != 0) {
        snprintf(head, sizeof head,
                 "impl(\"%.100s\", ...): Explicitly provided namespace (%.100s) in operator name does not match "
                 "namespace of enclosing %s block (%.100s).  Move this definition to the %s block corresponding to "
                 "this namespace (and consider deleting the namespace from your schema string.)  ",
                 name, ns, kind_name(lib->kind), lib->ns, kind_name(lib->kind));
        cfx_free(ns);
        return lib_error(lib, head);
    }
    if (!ns && !lib->ns) {
        snprintf(head, sizeof head,
                 "impl(\"%.100s\", ...): an operator name needs its namespace in a block for every namespace (_).  ",
                 name);
        return lib_error(lib, head);
    }
    cfx_free(ns);
    if (key != CFX_KEY_Undefined && lib->key != CFX_KEY_Undefined && key != lib->key) {
        snprintf(head, sizeof head,
                 "impl(\"%.100s\", ...): Explicitly provided dispatch key (%s) is inconsistent with the dispatch "
                 "key of the enclosing %s block (%s).  Please declare a separate %s block for this dispatch key "
                 "and move your impl() there.  ",
                 name, cfx_key_name(key), kind_name(lib->kind), cfx_key_name(lib->key), kind_name(lib->kind));
        return lib_error(lib, head);
    }
    cfx_dispatch_key k = key != CFX_KEY_Undefined ? key : lib->key;
    cfx_buf b;
    cfx_buf_init(&b);
    if (!strstr(name, "::"))
        cfx_buf_printf(&b, "%s::", lib->ns);
    cfx_buf_puts(&b, name);
    char *opname = cfx_buf_take(&b);
    char *debug = debug_string(file, line);
    int rc = CFX_OK;
    if (!opname || !debug) {
        rc = cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
    } else {
        cfx_registry_lock();
        cfx_op *op = cfx_registry_find_or_create(opname);
        cfx_kernel_entry *e = NULL;
        if (!op)
            rc = CFX_ERR_NOMEM;
        else if (!(e = cfx_opentry_register_kernel(op, k != CFX_KEY_Undefined, k, boxed, ctx, unboxed, fallthrough,
                                                    debug)))
            rc = cfx_error_occurred() ? cfx_error_status() : CFX_ERR;
        else if (!push_reg(lib, (reg){.kind = REG_IMPL, .e = e})) {
            cfx_opentry_deregister_kernel(e);
            rc = cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
        } else
            op->def_and_impl_count++;
        if (op && rc != CFX_OK)
            cfx_registry_cleanup(op);
        cfx_registry_unlock();
    }
    cfx_free(opname);
    cfx_free(debug);
    return rc;
}

int cfx_library_impl_at(cfx_library *lib, const char *name, cfx_dispatch_key key, cfx_fnptr fn, const char *file,
                        int line)
{
    if (lib && !fn)
        return cfx_error_set(CFX_ERR, NULL, "impl(\"%s\", ...): the kernel function is NULL", name ? name : "");
    return impl_common(lib, name, key, NULL, NULL, fn, false, file, line);
}

int cfx_library_impl_boxed_at(cfx_library *lib, const char *name, cfx_dispatch_key key, cfx_boxed_fn fn, void *ctx,
                              const char *file, int line)
{
    if (lib && !fn)
        return cfx_error_set(CFX_ERR, NULL, "impl(\"%s\", ...): the kernel function is NULL", name ? name : "");
    return impl_common(lib, name, key, fn, ctx, NULL, false, file, line);
}

int cfx_library_impl_boxed_unboxed_at(cfx_library *lib, const char *name, cfx_dispatch_key key, cfx_fnptr unboxed,
                                      cfx_boxed_fn boxed, void *ctx, const char *file, int line)
{
    if (lib && (!unboxed || !boxed))
        return cfx_error_set(CFX_ERR, NULL, "impl(\"%s\", ...): the kernel function is NULL", name ? name : "");
    return impl_common(lib, name, key, boxed, ctx, unboxed, false, file, line);
}

int cfx_library_impl_fallthrough_at(cfx_library *lib, const char *name, cfx_dispatch_key key, const char *file,
                                    int line)
{
    return impl_common(lib, name, key, NULL, NULL, NULL, true, file, line);
}

int cfx_library_fallback_at(cfx_library *lib, cfx_dispatch_key key, cfx_boxed_fn fn, void *ctx, const char *file,
                            int line)
{
    if (!lib)
        return CFX_ERR;
    char head[600];
    if (lib->kind != CFX_LIB_IMPL) {
        snprintf(head, sizeof head,
                 "fallback(...): Cannot define an operator inside of a %s block.  Did you mean to call this function "
                 "inside a TORCH_LIBRARY_IMPL block?  ",
                 kind_name(lib->kind));
        return lib_error(lib, head);
    }
    if ((unsigned)key >= CFX_KEY_COUNT || !valid_block_key(key))
        return cfx_error_set(CFX_ERR, NULL, "could not parse dispatch key: %d", (int)key);
    cfx_dispatch_key k = key != CFX_KEY_Undefined ? key : lib->key;
    if (k == CFX_KEY_Undefined)
        /* an internal assert in PyTorch; a user error here */
        return lib_error(lib, "fallback(...): no dispatch key: give one or declare the block with one.  ");
    if (lib->ns) {
        snprintf(head, sizeof head,
                 "fallback(...): Fallback functions which apply to only a single namespace (you specified %.100s) "
                 "are not supported.  If you intended to apply this fallback function globally, please define a "
                 "separate block:\n\n    TORCH_LIBRARY_IMPL(_, %s, m) { m.fallback(...); }\n\n",
                 lib->ns, cfx_key_name(k));
        return lib_error(lib, head);
    }
    char *debug = debug_string(file, line);
    if (!debug)
        return cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
    cfx_dispatch_key keys[CFX_NUM_RUNTIME_ENTRIES];
    int n = cfx_key_expand(k, keys, CFX_NUM_RUNTIME_ENTRIES);
    int rc = CFX_OK;
    cfx_registry_lock();
    /* As in library.cpp, keys before a failing one stay registered (and owned by lib). */
    for (int i = 0; i < n && rc == CFX_OK; i++) {
        if (cfx_key_table_index(keys[i]) < 0)
            continue;
        if (!push_reg(lib, (reg){.kind = REG_FALLBACK, .key = keys[i]}))
            rc = cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
        else if ((rc = cfx_registry_register_fallback(keys[i], fn, ctx, debug)) != CFX_OK)
            lib->n_regs--;
    }
    cfx_registry_unlock();
    cfx_free(debug);
    return rc;
}
