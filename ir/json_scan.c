/* json_scan.c - the top level of a "cfx.graph" document, without parsing it whole.
 *
 * cJSON parses, but never the whole document at once: a million-node file would become tens
 * of millions of cJSON items (about a kilobyte per node). The top-level object is walked here
 * member by member, each member's value parsed with cJSON on its own, and the "nodes" and
 * "attributes" arrays are first skipped (a bracket matcher finds their ends) and later read one
 * record at a time, so memory stays that of one record plus the graph being built. Because
 * "format" and "version" are checked before any node is read, a file of a newer major version
 * is refused with that reason even when the rest of it is something this reader cannot parse. */
#include <stdlib.h>
#include <string.h>

#include "ir/internal.h"
#include "ir/json_internal.h"

/* The arrays a record's values were converted into are let go past this much. */
#define SCRATCH_RESET_BYTES ((size_t)4 << 20)

static void skip_ws(const jreader *r, size_t *i)
{
    while (*i < r->len) {
        char c = r->text[*i];
        if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
            break;
        (*i)++;
    }
}

/* One JSON value at text[*i] (after whitespace) parsed by cJSON; *i moves past it. */
static cJSON *parse_at(jreader *r, size_t *i, const char *what)
{
    skip_ws(r, i);
    if (*i >= r->len) {
        jr_err_at(r, *i, "unexpected end of input (expected %s)", what);
        return NULL;
    }
    /* refuse what cJSON would skip silently at the start of a parse (a byte order mark) */
    if (!strchr("{[\"-0123456789tfn", r->text[*i])) {
        jr_err_at(r, *i, "expected %s", what);
        return NULL;
    }
    const char *end = NULL;
    cJSON *v = cJSON_ParseWithLengthOpts(r->text + *i, r->len - *i, &end, false);
    if (!v) {
        size_t at = end && end >= r->text && end <= r->text + r->len ? (size_t)(end - r->text) : *i;
        /* cJSON gives no reason; the one worth naming is its nesting limit */
        size_t depth = 0, max = 0;
        bool in_str = false;
        for (size_t k = *i; k < at; k++) {
            char c = r->text[k];
            if (in_str) {
                if (c == '\\')
                    k++;
                else if (c == '"')
                    in_str = false;
            } else if (c == '"') {
                in_str = true;
            } else if (c == '[' || c == '{') {
                if (++depth > max)
                    max = depth;
            } else if ((c == ']' || c == '}') && depth) {
                depth--;
            }
        }
        if (max >= CJSON_NESTING_LIMIT)
            jr_err_at(r, at, "%s is nested deeper than %d levels (the format's limit)", what,
                      CJSON_NESTING_LIMIT);
        else
            jr_err_at(r, at, "malformed JSON in %s", what);
        return NULL;
    }
    *i = (size_t)(end - r->text);
    return v;
}

/* The bytes the bracket matcher stops at, outside strings (quote, brackets, braces) and inside
 * them (quote, backslash); every other byte is passed over by one table lookup, which is what
 * keeps skipping a 500 MB "nodes" array cheap next to parsing its records. */
static const unsigned char stop_outside[256] = {['"'] = 1, ['['] = 1, [']'] = 1, ['{'] = 1, ['}'] = 1};
static const unsigned char stop_inside[256] = {['"'] = 1, ['\\'] = 1};

/* Skips the array at text[*i] without parsing it: the span is read record by record later. */
static int skip_array(jreader *r, size_t *i, const char *what)
{
    const char *t = r->text;
    size_t depth = 0, k = *i, len = r->len;
    for (;;) {
        while (k < len && !stop_outside[(unsigned char)t[k]])
            k++;
        if (k >= len)
            break;
        char c = t[k++];
        if (c == '"') {
            for (;;) {
                while (k < len && !stop_inside[(unsigned char)t[k]])
                    k++;
                if (k >= len)
                    break;
                if (t[k++] == '"')
                    break;
                k++; /* the escaped byte */
            }
        } else if (c == '[' || c == '{') {
            depth++;
        } else if (--depth == 0) {
            *i = k;
            return CFX_OK;
        }
    }
    return jr_err_at(r, r->len, "unexpected end of input inside \"%s\"", what);
}

void jr_doc_free(jr_doc *d)
{
    cJSON_Delete(d->format);
    cJSON_Delete(d->version);
    cJSON_Delete(d->name);
    cJSON_Delete(d->schemas);
    cJSON_Delete(d->weights);
    cfx_free(d->unknown);
}

static int check_format(jreader *r, const cJSON *f, size_t at)
{
    if (!cJSON_IsString(f) || strcmp(f->valuestring, CFX_GRAPH_JSON_FORMAT) != 0)
        return jr_err_at(r, at, "not a cfx graph document: \"format\" is %s%s%s, expected \"%s\"",
                         cJSON_IsString(f) ? "\"" : "", cJSON_IsString(f) ? f->valuestring : "not a string",
                         cJSON_IsString(f) ? "\"" : "", CFX_GRAPH_JSON_FORMAT);
    return CFX_OK;
}

static int check_version(jreader *r, const cJSON *v, size_t at)
{
    const cJSON *ma = cJSON_IsObject(v) ? cJSON_GetObjectItemCaseSensitive(v, "major") : NULL;
    const cJSON *mi = cJSON_IsObject(v) ? cJSON_GetObjectItemCaseSensitive(v, "minor") : NULL;
    int64_t major, minor;
    r->rec_offset = at;
    if (!ma || !mi || jr_int(r, ma, &major, "version") != CFX_OK || jr_int(r, mi, &minor, "version") != CFX_OK ||
        major < 0 || minor < 0 || major > INT32_MAX || minor > INT32_MAX)
        return jr_err_at(r, at, "\"version\" must be {\"major\": int, \"minor\": int}");
    if (major > CFX_GRAPH_JSON_MAJOR)
        return cfx_error_set(CFX_ERR, NULL, "cannot load graph JSON: the file has format version %lld.%lld, "
                             "newer than this reader's %d.%d; a newer major version cannot be read "
                             "(upgrade cfx)", (long long)major, (long long)minor,
                             CFX_GRAPH_JSON_MAJOR, CFX_GRAPH_JSON_MINOR);
    if (major < CFX_GRAPH_JSON_MAJOR)
        return cfx_error_set(CFX_ERR, NULL, "cannot load graph JSON: format version %lld.%lld is not "
                             "supported (this reader reads major version %d)", (long long)major,
                             (long long)minor, CFX_GRAPH_JSON_MAJOR);
    r->strict = minor <= CFX_GRAPH_JSON_MINOR;
    static const char *const members[] = {"major", "minor", NULL};
    cJSON *m[2];
    int rc = jr_members(r, v, members, m, "version");
    r->rec_offset = SIZE_MAX;
    return rc;
}

/* One top-level member whose name is key and whose value starts at text[*i]. */
static int scan_member(jreader *r, jr_doc *d, const char *key, size_t key_at, size_t *i)
{
    jr_span *sp = strcmp(key, "nodes") == 0 ? &d->nodes : strcmp(key, "attributes") == 0 ? &d->attributes : NULL;
    if (sp) {
        if (sp->start)
            return jr_err_at(r, key_at, "member \"%s\" appears twice", key);
        if (*i >= r->len || r->text[*i] != '[')
            return jr_err_at(r, *i, "\"%s\" must be an array", key);
        sp->start = *i;
        if (skip_array(r, i, key) != CFX_OK)
            return CFX_ERR_PARSE;
        sp->end = *i;
        return CFX_OK;
    }
    cJSON **slot = strcmp(key, "format") == 0    ? &d->format
                   : strcmp(key, "version") == 0 ? &d->version
                   : strcmp(key, "name") == 0    ? &d->name
                   : strcmp(key, "schemas") == 0 ? &d->schemas
                   : strcmp(key, "weights") == 0 ? &d->weights : NULL;
    if (slot && *slot)
        return jr_err_at(r, key_at, "member \"%s\" appears twice", key);
    size_t val_at = *i;
    cJSON *v = parse_at(r, i, "a value");
    if (!v)
        return CFX_ERR_PARSE;
    if (!slot) {
        cJSON_Delete(v);
        if (!d->unknown) {
            if (!(d->unknown = cfx_strdup(key)))
                return jr_err(r, CFX_ERR_NOMEM, "out of memory");
            d->unknown_at = key_at;
        }
        return CFX_OK;
    }
    *slot = v;
    if (slot == &d->format)
        return check_format(r, v, val_at);
    if (slot == &d->version)
        return check_version(r, v, val_at);
    if (slot == &d->schemas)
        d->schemas_at = val_at;
    if (slot == &d->weights) {
        d->weights_at = val_at;
        if (!cJSON_IsString(v) || !v->valuestring[0])
            return jr_err_at(r, val_at, "\"weights\" must be the file name of a safetensors file");
    }
    return CFX_OK;
}

int jr_scan_doc(jreader *r, jr_doc *d)
{
    size_t i = 0;
    skip_ws(r, &i);
    if (i >= r->len || r->text[i] != '{')
        return jr_err_at(r, i, "not a cfx graph document: expected a JSON object");
    i++;
    skip_ws(r, &i);
    if (i < r->len && r->text[i] == '}') {
        i++;
    } else {
        for (;;) {
            skip_ws(r, &i);
            size_t key_at = i;
            if (i >= r->len || r->text[i] != '"')
                return jr_err_at(r, i, "expected a member name");
            cJSON *k = parse_at(r, &i, "a member name");
            if (!k)
                return CFX_ERR_PARSE;
            skip_ws(r, &i);
            int rc;
            if (i >= r->len || r->text[i] != ':') {
                rc = jr_err_at(r, i, "expected ':'");
            } else {
                i++;
                skip_ws(r, &i);
                rc = scan_member(r, d, k->valuestring, key_at, &i);
            }
            cJSON_Delete(k);
            if (rc != CFX_OK)
                return rc;
            skip_ws(r, &i);
            if (i < r->len && r->text[i] == ',') {
                i++;
                continue;
            }
            if (i < r->len && r->text[i] == '}') {
                i++;
                break;
            }
            return jr_err_at(r, i, i < r->len ? "expected ',' or '}'" : "unexpected end of input");
        }
    }
    skip_ws(r, &i);
    if (i != r->len)
        return jr_err_at(r, i, "unexpected data after the document");
    if (!d->format)
        return jr_err_at(r, 0, "not a cfx graph document: no \"format\" member");
    if (!d->version)
        return jr_err_at(r, 0, "no \"version\" member");
    if (!d->nodes.start)
        return jr_err_at(r, 0, "no \"nodes\" member");
    if (r->strict && d->unknown)
        return jr_err_at(r, d->unknown_at, "unknown member \"%s\"", d->unknown);
    if (d->name && !cJSON_IsString(d->name) && !cJSON_IsNull(d->name))
        return jr_err_at(r, 0, "\"name\" must be a string or null");
    if (d->schemas) {
        if (!cJSON_IsObject(d->schemas))
            return jr_err_at(r, d->schemas_at, "\"schemas\" must be an object");
        for (const cJSON *c = d->schemas->child; c; c = c->next)
            if (!cJSON_IsString(c))
                return jr_err_at(r, d->schemas_at, "\"schemas\": the schema of '%s' is not a string", c->string);
        static const char *const none[] = {NULL};
        bool strict = r->strict;
        r->strict = false; /* any operator name may appear; only duplicates are refused */
        r->rec_offset = d->schemas_at;
        int rc = jr_members(r, d->schemas, none, NULL, "schemas");
        r->strict = strict;
        r->rec_offset = SIZE_MAX;
        if (rc != CFX_OK)
            return rc;
    }
    return CFX_OK;
}

int jr_read_records(jreader *r, jr_span sp, const char *what, jr_record_fn fn, void *ctx)
{
    size_t i = sp.start + 1;
    skip_ws(r, &i);
    r->rec_index = 0;
    if (i < r->len && r->text[i] == ']')
        return CFX_OK;
    for (;; r->rec_index++) {
        skip_ws(r, &i);
        r->rec_offset = i;
        r->rec_kind = NULL;
        r->rec_root = NULL;
        r->at = NULL;
        if (i >= sp.end || r->text[i] != '{')
            return jr_err_at(r, i, "%s must be an object", what);
        cJSON *j = parse_at(r, &i, what);
        if (!j)
            return CFX_ERR_PARSE;
        r->rec_root = r->at = j;
        int rc = fn(r, j, ctx);
        r->rec_root = r->at = NULL;
        cJSON_Delete(j);
        if (rc != CFX_OK)
            return rc;
        if (r->scratch.total > SCRATCH_RESET_BYTES) {
            cfx_arena_free(&r->scratch);
            cfx_arena_init(&r->scratch);
        }
        r->rec_kind = NULL;
        skip_ws(r, &i);
        if (i < sp.end && r->text[i] == ',') {
            i++;
            continue;
        }
        if (i + 1 == sp.end && r->text[i] == ']')
            return CFX_OK;
        return jr_err_at(r, i, "expected ',' or ']' after %s", what);
    }
}

