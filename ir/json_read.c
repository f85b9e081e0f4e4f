/* json_read.c - "cfx.graph" JSON text back into a graph (module).
 *
 * The document's top level is scanned by json_scan.c, which hands the node and attribute
 * records over one at a time. Nodes are rebuilt in file order with create_node and their
 * recorded names. The name space keeps every name a graph's own creation could have produced
 * (unique, sanitized, canonical suffix), so a name that would come out differently means the
 * file was not written from a cfx graph and is refused. Node references resolve through a hash map (no linear scans), and
 * each distinct operator / builtin-function target is resolved and checked once. Meta entries
 * may name later nodes (they are not uses); those are filled in once all nodes exist. */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ir/verify.h"
#include "dispatch/dispatcher.h"
#include "dispatch/schema.h"
#include "ir/internal.h"
#include "ir/json_internal.h"

/* The writer's depth check is what makes everything it writes readable. */
_Static_assert(CFX_GRAPH_JSON_MAX_DEPTH <= CJSON_NESTING_LIMIT, "the format allows deeper nesting than cJSON");

/* ---- errors -------------------------------------------------------------------------------- */

static int line_of(const jreader *r, size_t offset)
{
    int line = 1;
    for (size_t i = 0; i < offset && i < r->len; i++)
        line += r->text[i] == '\n';
    return line;
}

/* The JSON path from the record's root to r->at ("[1].tuple[0]"), if r->at is in it: a
 * depth-first walk, without recursion, done only when an error is reported. */
static void print_path_in_record(const jreader *r, cfx_buf *m)
{
    const cJSON *stack[CJSON_NESTING_LIMIT + 2];
    int sp = 0;
    const cJSON *cur = r->rec_root;
    if (!cur || !r->at)
        return;
    stack[sp++] = cur;
    while (cur != r->at) {
        if (cur->child && sp < (int)(sizeof stack / sizeof *stack)) {
            cur = cur->child;
            stack[sp++] = cur;
            continue;
        }
        while (sp > 1 && !cur->next) {
            sp--;
            cur = stack[sp - 1];
        }
        if (sp <= 1)
            return; /* not in this record */
        cur = cur->next;
        stack[sp - 1] = cur;
    }
    for (int k = 1; k < sp; k++) {
        const cJSON *parent = stack[k - 1];
        if (cJSON_IsObject(parent) && stack[k]->string) {
            bool plain = stack[k]->string[0] != '\0';
            for (const char *p = stack[k]->string; *p && plain; p++)
                plain = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || *p == '_' ||
                        (p != stack[k]->string && *p >= '0' && *p <= '9');
            cfx_buf_printf(m, plain ? ".%s" : "[\"%s\"]", stack[k]->string);
        } else {
            int i = 0;
            for (const cJSON *c = parent->child; c && c != stack[k]; c = c->next)
                i++;
            cfx_buf_printf(m, "[%d]", i);
        }
    }
}

static void print_path(const jreader *r, cfx_buf *m)
{
    if (!r->rec_array)
        return;
    cfx_buf_printf(m, "$.%s[%u]", r->rec_array, r->rec_index);
    if (r->pending_entry >= 0)
        cfx_buf_printf(m, ".meta.entries[%d][1]", (int)r->pending_entry);
    print_path_in_record(r, m);
    cfx_buf_puts(m, ": ");
}

static int verr(jreader *r, int status, size_t offset, bool exact, const char *fmt, va_list ap)
{
    cfx_buf m;
    cfx_buf_init(&m);
    cfx_buf_puts(&m, "cannot load graph JSON: ");
    if (exact) {
        size_t col = 1;
        for (size_t i = offset; i > 0 && i <= r->len && r->text[i - 1] != '\n'; i--)
            col++;
        cfx_buf_printf(&m, "line %d, column %zu: ", line_of(r, offset), col);
    } else if (offset != SIZE_MAX) {
        cfx_buf_printf(&m, "line %d: ", line_of(r, offset));
    }
    print_path(r, &m);
    if (!exact && r->rec_kind) {
        if (r->rec_name)
            cfx_buf_printf(&m, "%s '%s'", r->rec_kind, r->rec_name);
        else
            cfx_buf_puts(&m, r->rec_kind);
        if (r->what) {
            cfx_buf_printf(&m, ", %s", r->what);
            if (r->key)
                cfx_buf_printf(&m, " '%s'", r->key);
        }
        cfx_buf_puts(&m, ": ");
    }
    cfx_buf_vprintf(&m, fmt, ap);
    char *s = cfx_buf_take(&m);
    int rc = cfx_error_set_text((cfx_status)status, NULL, s ? s : "cannot load graph JSON");
    cfx_free(s);
    return rc;
}

int jr_err(jreader *r, int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = verr(r, status, r->rec_offset, false, fmt, ap);
    va_end(ap);
    return rc;
}

int jr_err_at(jreader *r, size_t offset, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = verr(r, CFX_ERR_PARSE, offset, true, fmt, ap);
    va_end(ap);
    return rc;
}

/* ---- maps ---------------------------------------------------------------------------------- */

static uint32_t str_hash(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return (uint32_t)(h ^ (h >> 32));
}

cfx_node *jr_find_node(const jreader *r, const char *s)
{
    if (!r->nodes_cap)
        return NULL;
    uint32_t h = str_hash(s), mask = r->nodes_cap - 1;
    for (uint32_t j = h & mask; r->nodes[j].node; j = (j + 1) & mask)
        if (r->nodes[j].hash == h && cfx_node_name_is(r->nodes[j].node, s))
            return r->nodes[j].node;
    return NULL;
}

/* Both name tables are open-addressed on a leading uint32_t hash, and a slot is empty while
 * its pointer member at used_off is NULL. This doubles one (a first table: first_cap slots)
 * and re-places its entries into a new array, freeing the old; NULL, with the table unchanged,
 * when out of memory. */
_Static_assert(offsetof(jr_node_slot, hash) == 0 && offsetof(jr_target_slot, hash) == 0,
               "grow_table reads the hash at the start of a slot");

static bool slot_used(const char *slot, size_t used_off)
{
    void *p;
    memcpy(&p, slot + used_off, sizeof p);
    return p != NULL;
}

static void *grow_table(void *table, uint32_t *cap_io, uint32_t first_cap, size_t size, size_t used_off)
{
    uint32_t old_cap = *cap_io, cap = old_cap ? old_cap * 2 : first_cap, mask = cap - 1;
    const char *old = table;
    char *t = cfx_calloc(cap, size);
    if (!t)
        return NULL;
    for (uint32_t i = 0; i < old_cap; i++) {
        const char *s = old + (size_t)i * size;
        if (!slot_used(s, used_off))
            continue;
        uint32_t h;
        memcpy(&h, s, sizeof h);
        uint32_t j = h & mask;
        while (slot_used(t + (size_t)j * size, used_off))
            j = (j + 1) & mask;
        memcpy(t + (size_t)j * size, s, size);
    }
    cfx_free(table);
    *cap_io = cap;
    return t;
}

static int add_node(jreader *r, const char *name, cfx_node *n)
{
    if ((r->nodes_count + 1) * 2 > r->nodes_cap) {
        jr_node_slot *t = grow_table(r->nodes, &r->nodes_cap, 1024, sizeof *t, offsetof(jr_node_slot, node));
        if (!t)
            return jr_err(r, CFX_ERR_NOMEM, "out of memory");
        r->nodes = t;
    }
    uint32_t h = str_hash(name), j = h & (r->nodes_cap - 1);
    while (r->nodes[j].node)
        j = (j + 1) & (r->nodes_cap - 1);
    r->nodes[j] = (jr_node_slot){h, n};
    r->nodes_count++;
    return CFX_OK;
}

static jr_target_slot *target_slot(jreader *r, uint32_t kind, const char *key, bool *found)
{
    if ((r->targets_count + 1) * 2 > r->targets_cap) {
        jr_target_slot *t = grow_table(r->targets, &r->targets_cap, 64, sizeof *t, offsetof(jr_target_slot, key));
        if (!t)
            return NULL;
        r->targets = t;
    }
    uint32_t h = str_hash(key) ^ kind, mask = r->targets_cap - 1, j = h & mask;
    for (; r->targets[j].key; j = (j + 1) & mask)
        if (r->targets[j].hash == h && r->targets[j].kind == kind && strcmp(r->targets[j].key, key) == 0) {
            *found = true;
            return &r->targets[j];
        }
    *found = false;
    r->targets[j].hash = h;
    r->targets[j].kind = kind;
    return &r->targets[j];
}

/* ---- targets ------------------------------------------------------------------------------- */

static const void *resolve_op(jreader *r, const char *qn)
{
    const cJSON *sj = r->schemas ? cJSON_GetObjectItemCaseSensitive(r->schemas, qn) : NULL;
    const char *file_schema = cJSON_IsString(sj) ? sj->valuestring : NULL;
    cfx_op *op = cfx_op_lookup(qn);
    if (!op && file_schema && r->declare) {
        /* declared from the file's schema; a schema text of another operator is refused below */
        bool had_error = cfx_error_occurred();
        if (cfx_library_def(r->declare, file_schema) != CFX_OK) {
            if (had_error)
                return NULL;
            char *m = cfx_strdup(cfx_error_message() ? cfx_error_message() : "?");
            cfx_error_clear();
            jr_err(r, CFX_ERR, "unknown operator '%s' cannot be declared from the file's schema '%s': %s",
                   qn, file_schema, m ? m : "out of memory");
            cfx_free(m);
            return NULL;
        }
        if (!(op = cfx_op_lookup(qn))) {
            jr_err(r, CFX_ERR, "the file's schema for operator '%s' defines another operator: '%s'", qn,
                   file_schema);
            return NULL;
        }
    }
    if (!op) {
        const char *colons = strstr(qn, "::");
        int nslen = colons ? (int)(colons - qn) : 0;
        jr_err(r, CFX_ERR, "unknown operator '%s': nothing registered defines it; register its "
               "library (namespace '%.*s') before loading the graph%s%s%s", qn, nslen, qn,
               file_schema ? " (schema in the file: " : "", file_schema ? file_schema : "",
               file_schema ? ")" : "");
        return NULL;
    }
    if (file_schema) {
        char *mine = cfx_schema_to_string(cfx_op_schema(op));
        if (!mine) {
            jr_err(r, CFX_ERR_NOMEM, "out of memory");
            return NULL;
        }
        bool same = strcmp(mine, file_schema) == 0;
        if (!same)
            jr_err(r, CFX_ERR, "operator '%s' is registered with schema '%s' but the file was written "
                   "against '%s'", qn, mine, file_schema);
        cfx_free(mine);
        if (!same)
            return NULL;
    }
    return op;
}

const void *jr_resolve(jreader *r, uint32_t kind, const char *name)
{
    bool found;
    jr_target_slot *slot = target_slot(r, kind, name, &found);
    if (!slot) {
        jr_err(r, CFX_ERR_NOMEM, "out of memory");
        return NULL;
    }
    if (found)
        return slot->ptr;
    const void *p;
    if (kind == CFX_TARGET_OP) {
        p = resolve_op(r, name);
    } else {
        p = cfx_builtin_fn_find(name);
        if (!p)
            jr_err(r, CFX_ERR, "unknown builtin function '%s': register its descriptor "
                   "(cfx_builtin_fn_register) before loading the graph", name);
    }
    if (!p) {
        slot->hash = 0; /* the slot stays empty */
        slot->kind = 0;
        return NULL;
    }
    if (!(slot->key = cfx_strdup(name))) {
        slot->hash = 0;
        slot->kind = 0;
        jr_err(r, CFX_ERR_NOMEM, "out of memory");
        return NULL;
    }
    slot->ptr = p;
    r->targets_count++;
    return p;
}

static int read_target(jreader *r, cfx_node_op op, const cJSON *t, cfx_target *out)
{
    r->what = "target";
    if (op != CFX_NODE_CALL_FUNCTION) {
        if (!cJSON_IsString(t))
            return jr_err(r, CFX_ERR_PARSE, "a %s node's target must be a string", cfx_node_op_name(op));
        *out = cfx_target_str(t->valuestring);
        return CFX_OK;
    }
    const cJSON *m = jr_tagged(t);
    uint32_t kind = !m ? 0 : strcmp(m->string, "op") == 0 ? CFX_TARGET_OP
                         : strcmp(m->string, "fn") == 0   ? CFX_TARGET_FN : 0;
    if (!kind || !cJSON_IsString(m))
        return jr_err(r, CFX_ERR_PARSE, "a call_function target must be {\"op\": \"ns::name.overload\"} "
                      "or {\"fn\": \"module.function\"}");
    const void *p = jr_resolve(r, kind, m->valuestring);
    if (!p)
        return cfx_error_status() ? cfx_error_status() : CFX_ERR;
    *out = kind == CFX_TARGET_OP ? cfx_target_op(p) : cfx_target_fn(p);
    return CFX_OK;
}

/* ---- nodes ---------------------------------------------------------------------------------- */

static const char *const node_members[] = {"name", "op", "target", "args", "kwargs", "meta", NULL};

static int read_node(jreader *r, cJSON *j)
{
    r->rec_kind = "node";
    r->rec_name = NULL;
    r->what = NULL;
    r->key = NULL;
    r->at = j;
    if (!cJSON_IsObject(j))
        return jr_err(r, CFX_ERR_PARSE, "a node record must be an object");
    const cJSON *nm = cJSON_GetObjectItemCaseSensitive(j, "name");
    if (!cJSON_IsString(nm) || !nm->valuestring[0])
        return jr_err(r, CFX_ERR_PARSE, "a node record needs a non-empty \"name\"");
    const char *name = nm->valuestring;
    r->rec_name = name;
    cJSON *m[6];
    if (jr_members(r, j, node_members, m, "node") != CFX_OK)
        return CFX_ERR_PARSE;
    r->at = m[1] ? m[1] : j;
    int op = cJSON_IsString(m[1]) ? cfx_node_op_from_name(m[1]->valuestring) : -1;
    if (op < 0)
        return jr_err(r, CFX_ERR_PARSE, "\"op\" must be one of placeholder, get_attr, call_function, "
                      "call_method, call_module, output");
    cfx_target target;
    if (!m[2])
        return jr_err(r, CFX_ERR_PARSE, "no \"target\"");
    r->at = m[2];
    if (read_target(r, (cfx_node_op)op, m[2], &target) != CFX_OK)
        return CFX_ERR;

    const cJSON *aj = m[3], *kj = m[4];
    r->what = "args";
    r->at = aj ? aj : j;
    if (!cJSON_IsArray(aj))
        return jr_err(r, CFX_ERR_PARSE, "\"args\" must be an array");
    r->what = "kwargs";
    r->at = kj ? kj : j;
    if (!cJSON_IsArray(kj))
        return jr_err(r, CFX_ERR_PARSE, "\"kwargs\" must be an array of [name, value] pairs");
    uint32_t na = 0, nk = 0;
    for (const cJSON *c = aj->child; c; c = c->next)
        na++;
    for (const cJSON *c = kj->child; c; c = c->next)
        nk++;
    cfx_value *args = na ? cfx_arena_alloc(&r->scratch, na * sizeof *args) : NULL;
    cfx_kwarg *kwargs = nk ? cfx_arena_alloc(&r->scratch, nk * sizeof *kwargs) : NULL;
    if ((na && !args) || (nk && !kwargs))
        return jr_err(r, CFX_ERR_NOMEM, "out of memory");
    r->what = "args";
    uint32_t i = 0;
    for (const cJSON *c = aj->child; c; c = c->next)
        if (jr_value(r, c, &args[i++], JR_REF_ARGS) != CFX_OK)
            return CFX_ERR;
    r->what = "kwargs";
    i = 0;
    for (const cJSON *c = kj->child; c; c = c->next, i++) {
        r->key = NULL;
        r->at = c;
        if (!cJSON_IsArray(c) || !cJSON_IsString(c->child) || !c->child->next || c->child->next->next)
            return jr_err(r, CFX_ERR_PARSE, "\"kwargs\" must be an array of [name, value] pairs");
        const char *k = c->child->valuestring;
        r->key = k;
        for (uint32_t q = 0; q < i; q++)
            if (strcmp(kwargs[q].name, k) == 0)
                return jr_err(r, CFX_ERR_PARSE, "keyword given twice");
        kwargs[i].name = k;
        if (jr_value(r, c->child->next, &kwargs[i].value, JR_REF_ARGS) != CFX_OK)
            return CFX_ERR;
    }
    r->what = NULL;
    r->key = NULL;

    r->at = nm;
    cfx_node *n = cfx_graph_create_node(r->g, (cfx_node_op)op, target, args, na, kwargs, nk, name);
    if (!n)
        return CFX_ERR;
    if (!cfx_node_name_is(n, name)) {
        /* a name already taken comes out renamed too: say which it is */
        if (jr_find_node(r, name))
            return jr_err(r, CFX_ERR, "Node redefined name %s!", name);
        char *got = cfx_node_name_string(n);
        int rc = jr_err(r, CFX_ERR, "the graph's name space does not keep this name (it becomes '%s'); "
                        "names must be unique identifiers as FX creates them", got ? got : "?");
        cfx_free(got);
        return rc;
    }
    if (add_node(r, name, n) != CFX_OK)
        return CFX_ERR_NOMEM;
    if (m[5] && jr_meta(r, n, m[5]) != CFX_OK)
        return CFX_ERR;
    /* a call binds to its operator's schema: said here (after its
     * meta), where the record's path is known */
    if (cfx_node_verify_schema(n) != CFX_OK) {
        char *why = cfx_strdup(cfx_error_message());
        cfx_error_clear();
        r->at = j;
        r->what = NULL;
        r->key = NULL;
        int rc = jr_err(r, CFX_ERR, "%s", why ? why : "out of memory");
        cfx_free(why);
        return rc;
    }
    return CFX_OK;
}

static int node_record(jreader *r, cJSON *j, void *ctx)
{
    (void)ctx;
    return read_node(r, j);
}

static int attribute_record(jreader *r, cJSON *j, void *ctx)
{
    return jr_attribute(r, ctx, j);
}

/* Meta entries that named nodes defined after their node. */
static int read_pending(jreader *r)
{
    for (uint32_t k = 0; k < r->n_pending; k++) {
        jr_pending *p = &r->pending[k];
        char *name = cfx_node_name_string(p->node);
        r->rec_offset = p->offset;
        r->rec_array = "nodes";
        r->rec_index = p->index;
        r->rec_root = r->at = p->value; /* detached from its record: the path is rebuilt from here */
        r->pending_entry = p->entry;
        r->rec_kind = "node";
        r->rec_name = name;
        r->what = "meta";
        r->key = p->key;
        cfx_value v;
        int rc = jr_value(r, p->value, &v, JR_REF_META_FINAL);
        if (rc == CFX_OK)
            rc = cfx_node_meta_set(p->node, p->key, v);
        cfx_free(name);
        if (rc != CFX_OK)
            return rc;
    }
    r->rec_kind = NULL;
    r->rec_array = NULL;
    r->rec_root = r->at = NULL;
    r->pending_entry = -1;
    return CFX_OK;
}

static void reader_free(jreader *r)
{
    cfx_free(r->nodes);
    for (uint32_t i = 0; i < r->targets_cap; i++)
        cfx_free(r->targets[i].key);
    cfx_free(r->targets);
    for (uint32_t i = 0; i < r->n_pending; i++) {
        cfx_free(r->pending[i].key);
        cJSON_Delete(r->pending[i].value);
    }
    cfx_free(r->pending);
    cfx_free(r->stack);
    cfx_arena_free(&r->scratch);
    cfx_safetensors_free(r->weights);
    cfx_free(r->weights_used);
}

/* The "weights" file, read from the document's directory. */
static int open_weights(jreader *r, const jr_doc *d)
{
    const char *name = d->weights->valuestring;
    r->weights_name = name;
    r->rec_offset = d->weights_at;
    r->rec_kind = NULL;
    if (!r->dir)
        return jr_err(r, CFX_ERR, "$.weights: the attributes' data is in '%s', which only a loader given "
                      "the document's path can find (cfx_graph_module_load)", name);
    cfx_buf p;
    cfx_buf_init(&p);
    if (r->dir[0] && name[0] != '/')
        cfx_buf_printf(&p, "%s/", r->dir);
    cfx_buf_puts(&p, name);
    if (p.oom) {
        cfx_buf_free(&p);
        return jr_err(r, CFX_ERR_NOMEM, "out of memory");
    }
    bool had_error = cfx_error_occurred();
    r->weights = cfx_safetensors_read_file(p.data);
    cfx_buf_free(&p);
    if (!r->weights) {
        if (had_error)
            return CFX_ERR;
        /* the safetensors reader's message, said as the document's problem */
        int status = (int)cfx_error_status();
        char *m = cfx_strdup(cfx_error_message() ? cfx_error_message() : "?");
        cfx_error_clear();
        int rc = jr_err(r, status, "$.weights: %s", m ? m : "cannot read the weights file");
        cfx_free(m);
        return rc;
    }
    int n = cfx_safetensors_count(r->weights);
    if (!(r->weights_used = cfx_calloc((size_t)n + 1, 1)))
        return jr_err(r, CFX_ERR_NOMEM, "out of memory");
    r->rec_offset = SIZE_MAX;
    return CFX_OK;
}

/* Every tensor of the weights file went to an attribute. */
static int check_weights_used(jreader *r, const jr_doc *d)
{
    for (int k = 0; k < cfx_safetensors_count(r->weights); k++)
        if (!r->weights_used[k]) {
            r->rec_offset = d->weights_at;
            r->rec_kind = NULL;
            return jr_err(r, CFX_ERR_PARSE, "$.weights: the weights file '%s' has a tensor '%s' that no "
                          "attribute without inline data names", r->weights_name,
                          cfx_safetensors_name(r->weights, k));
        }
    return CFX_OK;
}

/* JSON text is UTF-8 (RFC 8259), and what the writer refuses to write must not load: a
 * loaded graph can always be saved again. */
static int check_utf8(jreader *r)
{
    const unsigned char *u = (const unsigned char *)r->text;
    for (size_t i = 0; i < r->len;) {
        if (u[i] < 0x80) {
            i++;
            continue;
        }
        size_t k = jw_utf8_seq(u + i, r->len - i);
        if (!k)
            return jr_err_at(r, i, "the document is not valid UTF-8");
        i += k;
    }
    return CFX_OK;
}

/* The graph read is one cfx_graph_verify accepts (the `verify` pass's rules). */
static int verify_loaded(cfx_graph *g)
{
    if (cfx_graph_verify(g) == CFX_OK)
        return CFX_OK;
    const char *m = cfx_error_message();
    char *copy = m ? cfx_strdup(m) : NULL;
    int rc = cfx_error_set(CFX_ERR, NULL, "cannot load graph JSON: %s", copy ? copy : "the graph is not well formed");
    cfx_free(copy);
    return rc;
}

static int load(const char *text, size_t len, bool module, const char *dir, const cfx_graph_load_options *opts,
                cfx_graph **gout, cfx_graph_module **mout)
{
    *gout = NULL;
    if (mout)
        *mout = NULL;
    if (!text)
        return cfx_error_set(CFX_ERR, NULL, "cannot load graph JSON: no text");
    cfx_dispatcher_init();
    jreader r = {.text = text, .len = len, .strict = true, .rec_offset = SIZE_MAX, .dir = dir,
                 .declare = opts ? opts->declare : NULL, .pending_entry = -1};
    cfx_arena_init(&r.scratch);
    jr_doc d = {0};
    cfx_graph_module *gm = NULL;
    int rc = check_utf8(&r);
    if (rc == CFX_OK)
        rc = jr_scan_doc(&r, &d);
    if (rc != CFX_OK)
        goto out;
    r.schemas = d.schemas;
    if (!(r.g = cfx_graph_new())) {
        rc = CFX_ERR_NOMEM;
        goto out;
    }
    r.rec_array = "nodes";
    if ((rc = jr_read_records(&r, d.nodes, "a node record", node_record, NULL)) != CFX_OK ||
        (rc = read_pending(&r)) != CFX_OK || (rc = verify_loaded(r.g)) != CFX_OK)
        goto out;
    if (module) {
        gm = cfx_graph_module_new(r.g, cJSON_IsString(d.name) ? d.name->valuestring : NULL);
        if (!gm) {
            rc = CFX_ERR_NOMEM;
            goto out;
        }
        r.g = NULL; /* the module owns it */
        if (d.weights && (rc = open_weights(&r, &d)) != CFX_OK)
            goto out;
        r.rec_array = "attributes";
        if (d.attributes.start &&
            (rc = jr_read_records(&r, d.attributes, "an attribute record", attribute_record, gm)) != CFX_OK)
            goto out;
        r.rec_array = NULL;
        if (r.weights && (rc = check_weights_used(&r, &d)) != CFX_OK)
            goto out;
        *mout = gm;
        gm = NULL;
    } else {
        *gout = r.g;
        r.g = NULL;
    }
out:
    cfx_graph_module_free(gm);
    cfx_graph_free(r.g);
    reader_free(&r);
    jr_doc_free(&d);
    return rc;
}

cfx_graph *cfx_graph_from_json(const char *text, size_t len)
{
    cfx_graph *g;
    load(text, len, false, NULL, NULL, &g, NULL);
    return g;
}

cfx_graph_module *cfx_graph_module_from_json_opts(const char *text, size_t len, const cfx_graph_load_options *opts)
{
    cfx_graph *g;
    cfx_graph_module *gm;
    load(text, len, true, NULL, opts, &g, &gm);
    return gm;
}

cfx_graph_module *cfx_graph_module_from_json(const char *text, size_t len)
{
    return cfx_graph_module_from_json_opts(text, len, NULL);
}

static char *read_whole_file(const char *path, size_t *len)
{
    if (!path) {
        cfx_error_set(CFX_ERR, NULL, "cannot load graph JSON: no path");
        return NULL;
    }
    FILE *f = fopen(path, "rb");
    if (!f) {
        cfx_error_set(CFX_ERR, NULL, "cannot load graph JSON: cannot open '%s': %s", path, strerror(errno));
        return NULL;
    }
    /* sized once from the file, grown only if the file grows while being read */
    struct stat st;
    size_t cap = fstat(fileno(f), &st) == 0 && st.st_size > 0 ? (size_t)st.st_size + 1 : (size_t)1 << 16;
    size_t n = 0;
    char *buf = cfx_malloc(cap);
    while (buf) {
        n += fread(buf + n, 1, cap - n, f);
        if (n < cap)
            break;
        char *nb = cap > SIZE_MAX / 2 ? NULL : cfx_realloc(buf, cap * 2);
        if (!nb) {
            cfx_free(buf);
            buf = NULL;
            break;
        }
        buf = nb;
        cap *= 2;
    }
    bool bad = ferror(f);
    fclose(f);
    if (!buf) {
        cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
        return NULL;
    }
    if (bad) {
        cfx_free(buf);
        cfx_error_set(CFX_ERR, NULL, "cannot load graph JSON: reading '%s' failed", path);
        return NULL;
    }
    *len = n;
    return buf;
}

cfx_graph *cfx_graph_from_json_file(const char *path)
{
    size_t len;
    char *text = read_whole_file(path, &len);
    cfx_graph *g = text ? cfx_graph_from_json(text, len) : NULL;
    cfx_free(text);
    return g;
}

cfx_graph_module *cfx_graph_module_load_opts(const char *path, const cfx_graph_load_options *opts)
{
    size_t len;
    char *text = read_whole_file(path, &len);
    if (!text)
        return NULL;
    /* the directory a "weights" file name is relative to: "" for the current one */
    const char *slash = strrchr(path, '/');
    size_t dl = slash ? (size_t)(slash - path) + (slash == path) : 0;
    char *dir = cfx_malloc(dl + 1);
    cfx_graph *g;
    cfx_graph_module *gm = NULL;
    if (dir) {
        memcpy(dir, path, dl);
        dir[dl] = '\0';
        load(text, len, true, dir, opts, &g, &gm);
    } else {
        cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
    }
    cfx_free(dir);
    cfx_free(text);
    return gm;
}

cfx_graph_module *cfx_graph_module_from_json_file(const char *path)
{
    return cfx_graph_module_load_opts(path, NULL);
}

cfx_graph_module *cfx_graph_module_load(const char *path)
{
    return cfx_graph_module_load_opts(path, NULL);
}
