/* names.c - interned strings and FX's create_name.
 *
 * Every distinct string of a name space is one record: the bytes, their hash, and the naming
 * state FX keeps in dicts keyed by that string: `_base_count[s]`, whether `s` itself is a used
 * name, and which `s_<n>` names are used (a bitset of n, with an overflow hash for suffixes far
 * beyond the counted range, so a stray "x_900000" does not allocate a megabit). A name is the
 * pair (record, suffix) in canonical form: the suffix is split off only when it is 1-9 digits
 * without a leading zero, so every spelling has exactly one key ("add_01" is its own base).
 * So naming the millionth `add` is a counter read and two bit tests, as cheap as the first.
 *
 * The algorithm follows PyTorch 2.13's torch/fx/graph.py line by line, including its quirks:
 * the counter is the regex base's (an explicit "add_7" sets it to 7, even downwards), and the
 * reserved name check is done once (reserved names never end in _<digits>). Two deliberate
 * deviations, both on inputs no tracer produces: a candidate ending in "\n" (which Python's `$`
 * accepts) is sanitized, and non-ASCII digits are not digits. */
#include <stdlib.h>
#include <string.h>

#include "dispatch/error.h"
#include "ir/names.h"

/* An interned string and the naming state of the name that is that string. */
typedef struct istr {
    uint32_t hash, len;
    int64_t count;       /* _base_count[this string] (0 when absent, as .get(s, 0)) */
    uint64_t *bits;      /* bit n set: suffix n is used (malloc'd) */
    uint32_t nwords;
    uint32_t n_overflow; /* used suffixes of this base kept in the name space's overflow set */
    uint8_t used_plain;  /* "<s>" itself is used */
    uint8_t reserved;    /* enum reserved_kind; 0: not reserved */
    char s[];
} istr;

typedef struct ovf_entry {
    const istr *base;
    int32_t suffix;
} ovf_entry;

struct cfx_names {
    cfx_arena *arena;
    cfx_arena own_arena;
    istr **table; /* open addressing, power-of-two capacity */
    uint32_t cap, count;
    ovf_entry *ovf; /* overflow used-suffix set */
    uint32_t ovf_cap, ovf_count;
};

static istr *rec_of(const char *s) { return (istr *)(void *)(s - offsetof(istr, s)); }

uint32_t cfx_istr_len(const char *interned) { return rec_of(interned)->len; }

/* ---- reserved names ------------------------------------------------------------------- */

/* Python 3.11 keyword.kwlist + dir(builtins) + FX's _custom_builtins, sorted (strcmp). */
static const char *const reserved_names[] = {
    "ArithmeticError", "AssertionError", "AttributeError", "BaseException", "BaseExceptionGroup",
    "BlockingIOError", "BrokenPipeError", "BufferError", "BytesWarning", "ChildProcessError",
    "ConnectionAbortedError", "ConnectionError", "ConnectionRefusedError", "ConnectionResetError",
    "DeprecationWarning", "EOFError", "Ellipsis", "EncodingWarning", "EnvironmentError", "Exception",
    "ExceptionGroup", "False", "FileExistsError", "FileNotFoundError", "FloatingPointError",
    "FutureWarning", "GeneratorExit", "IOError", "ImportError", "ImportWarning", "IndentationError",
    "IndexError", "InterruptedError", "IsADirectoryError", "KeyError", "KeyboardInterrupt",
    "LookupError", "MemoryError", "ModuleNotFoundError", "NameError", "None", "NoneType",
    "NotADirectoryError", "NotImplemented", "NotImplementedError", "OSError", "OverflowError",
    "PendingDeprecationWarning", "PermissionError", "ProcessLookupError", "RecursionError",
    "ReferenceError", "ResourceWarning", "RuntimeError", "RuntimeWarning", "StopAsyncIteration",
    "StopIteration", "SyntaxError", "SyntaxWarning", "SystemError", "SystemExit", "TabError",
    "TimeoutError", "True", "TypeError", "UnboundLocalError", "UnicodeDecodeError",
    "UnicodeEncodeError", "UnicodeError", "UnicodeTranslateError", "UnicodeWarning", "UserWarning",
    "ValueError", "Warning", "ZeroDivisionError", "__build_class__", "__debug__", "__doc__",
    "__import__", "__loader__", "__name__", "__package__", "__spec__", "abs", "aiter", "all", "and",
    "anext", "any", "as", "ascii", "assert", "async", "await", "bin", "bool", "break", "breakpoint",
    "bytearray", "bytes", "callable", "chr", "class", "classmethod", "compile", "complex",
    "continue", "copyright", "credits", "def", "del", "delattr", "device", "dict", "dir", "divmod",
    "elif", "else", "enumerate", "eval", "except", "exec", "exit", "filter", "finally", "float",
    "for", "format", "from", "frozenset", "fx_pytree", "getattr", "global", "globals", "hasattr",
    "hash", "help", "hex", "id", "if", "import", "in", "inf", "input", "int", "is", "isinstance",
    "issubclass", "iter", "lambda", "len", "license", "list", "locals", "map", "max", "memoryview",
    "min", "nan", "next", "nonlocal", "not", "object", "oct", "open", "or", "ord", "pass", "pow",
    "print", "property", "pytree", "quit", "raise", "range", "repr", "return", "reversed", "round",
    "set", "setattr", "slice", "sorted", "staticmethod", "str", "sum", "super", "torch", "try",
    "tuple", "type", "vars", "while", "with", "yield", "zip",
};

/* How `_illegal_names.get(candidate, obj) is not obj` decides, given that the dict maps
 * keywords to fresh sentinels, then builtins (and custom globals) to the objects they name:
 * a keyword is never legal; a builtin is legal only for the builtin itself; and "None", whose
 * builtins entry overwrote its keyword sentinel with None itself, is legal when obj is None
 * (every graph node name: create_node passes obj=None) - so FX names a node "None". */
enum reserved_kind { NOT_RESERVED = 0, RESERVED_KEYWORD, RESERVED_BUILTIN, RESERVED_NONE };

static const char *const keywords[] = {
    "and", "as", "assert", "async", "await", "break", "class", "continue", "def", "del", "elif",
    "else", "except", "finally", "for", "from", "global", "if", "import", "in", "is", "lambda",
    "nonlocal", "not", "or", "pass", "raise", "return", "try", "while", "with", "yield",
};

static int cmp_str(const void *a, const void *b) { return strcmp(*(const char *const *)a, *(const char *const *)b); }

static bool in_table(const char *s, const char *const *table, size_t n)
{
    return bsearch(&s, table, n, sizeof *table, cmp_str) != NULL;
}

static enum reserved_kind reserved_kind(const char *s)
{
    if (!in_table(s, reserved_names, sizeof reserved_names / sizeof *reserved_names))
        return NOT_RESERVED;
    if (strcmp(s, "None") == 0)
        return RESERVED_NONE;
    if (in_table(s, keywords, sizeof keywords / sizeof *keywords))
        return RESERVED_KEYWORD;
    return RESERVED_BUILTIN;
}

bool cfx_name_is_reserved(const char *s) { return reserved_kind(s) != NOT_RESERVED; }

bool cfx_name_key_is_reserved(cfx_name n) { return n.suffix < 0 && rec_of(n.base)->reserved != NOT_RESERVED; }

static bool is_illegal(const istr *r, cfx_name_obj obj)
{
    switch (r->reserved) {
    case RESERVED_KEYWORD: return true;
    case RESERVED_BUILTIN: return obj != CFX_NAME_FOR_BUILTIN;
    case RESERVED_NONE: return obj == CFX_NAME_FOR_OBJECT;
    default: return false;
    }
}

/* ---- interning ------------------------------------------------------------------------ */

/* A string's hash, eight bytes at a step: interned strings include every call site's file
 * name, hashed each time a traced node records its site. */
static uint32_t hash_bytes(const char *s, size_t len)
{
    const uint64_t k = 0xFF51AFD7ED558CCDull;
    uint64_t h = 0x9E3779B97F4A7C15ull ^ len;
    size_t i = 0;
    for (; i + 8 <= len; i += 8) {
        uint64_t w;
        memcpy(&w, s + i, 8);
        h = (h ^ w) * k;
        h ^= h >> 29;
    }
    uint64_t w = 0;
    for (; i < len; i++)
        w = w << 8 | (uint8_t)s[i];
    h = (h ^ w) * k;
    return (uint32_t)(h ^ h >> 32);
}

cfx_names *cfx_names_new(cfx_arena *arena)
{
    cfx_names *ns = cfx_calloc(1, sizeof *ns);
    if (!ns)
        return NULL;
    cfx_arena_init(&ns->own_arena);
    ns->arena = arena ? arena : &ns->own_arena;
    ns->cap = 256;
    ns->table = cfx_calloc(ns->cap, sizeof *ns->table);
    if (!ns->table) {
        cfx_free(ns);
        return NULL;
    }
    return ns;
}

void cfx_names_free(cfx_names *ns)
{
    if (!ns)
        return;
    for (uint32_t i = 0; i < ns->cap; i++)
        if (ns->table[i])
            cfx_free(ns->table[i]->bits);
    cfx_free(ns->table);
    cfx_free(ns->ovf);
    cfx_arena_free(&ns->own_arena);
    cfx_free(ns);
}

static bool grow_table(cfx_names *ns)
{
    uint32_t cap = ns->cap * 2;
    istr **t = cfx_calloc(cap, sizeof *t);
    if (!t)
        return false;
    for (uint32_t i = 0; i < ns->cap; i++) {
        istr *r = ns->table[i];
        if (!r)
            continue;
        uint32_t j = r->hash & (cap - 1);
        while (t[j])
            j = (j + 1) & (cap - 1);
        t[j] = r;
    }
    cfx_free(ns->table);
    ns->table = t;
    ns->cap = cap;
    return true;
}

static istr *lookup(const cfx_names *ns, const char *s, size_t len, uint32_t h, uint32_t *slot)
{
    uint32_t mask = ns->cap - 1, j = h & mask;
    for (istr *r; (r = ns->table[j]); j = (j + 1) & mask)
        if (r->hash == h && r->len == len && memcmp(r->s, s, len) == 0)
            return r;
    if (slot)
        *slot = j;
    return NULL;
}

static istr *intern_rec(cfx_names *ns, const char *s, size_t len)
{
    uint32_t h = hash_bytes(s, len), slot;
    istr *r = lookup(ns, s, len, h, &slot);
    if (r)
        return r;
    if ((ns->count + 1) * 2 > ns->cap) {
        if (!grow_table(ns))
            return NULL;
        lookup(ns, s, len, h, &slot);
    }
    r = cfx_arena_alloc(ns->arena, sizeof *r + len + 1);
    if (!r)
        return NULL;
    memset(r, 0, sizeof *r);
    r->hash = h;
    r->len = (uint32_t)len;
    memcpy(r->s, s, len);
    r->s[len] = '\0';
    r->reserved = len < 32 ? (uint8_t)reserved_kind(r->s) : NOT_RESERVED;
    ns->table[slot] = r;
    ns->count++;
    return r;
}

const char *cfx_names_intern(cfx_names *ns, const char *s, size_t len)
{
    istr *r = intern_rec(ns, s, len);
    return r ? r->s : NULL;
}

const char *cfx_names_find(const cfx_names *ns, const char *s, size_t len)
{
    istr *r = lookup(ns, s, len, hash_bytes(s, len), NULL);
    return r ? r->s : NULL;
}

/* ---- used-name sets ------------------------------------------------------------------- */

static uint32_t ovf_hash(const istr *b, int32_t suffix)
{
    uint64_t x = (uint64_t)(uintptr_t)b * 0x9E3779B97F4A7C15ull ^ (uint64_t)(uint32_t)suffix * 0xC2B2AE3D27D4EB4Full;
    return (uint32_t)(x >> 32);
}

static bool ovf_contains(const cfx_names *ns, const istr *b, int32_t suffix)
{
    if (!ns->ovf_cap)
        return false;
    uint32_t mask = ns->ovf_cap - 1;
    for (uint32_t j = ovf_hash(b, suffix) & mask; ns->ovf[j].base; j = (j + 1) & mask)
        if (ns->ovf[j].base == b && ns->ovf[j].suffix == suffix)
            return true;
    return false;
}

static bool ovf_insert(cfx_names *ns, const istr *b, int32_t suffix)
{
    if ((ns->ovf_count + 1) * 2 > ns->ovf_cap) {
        uint32_t cap = ns->ovf_cap ? ns->ovf_cap * 2 : 64;
        ovf_entry *t = cfx_calloc(cap, sizeof *t);
        if (!t)
            return false;
        for (uint32_t i = 0; i < ns->ovf_cap; i++) {
            if (!ns->ovf[i].base)
                continue;
            uint32_t j = ovf_hash(ns->ovf[i].base, ns->ovf[i].suffix) & (cap - 1);
            while (t[j].base)
                j = (j + 1) & (cap - 1);
            t[j] = ns->ovf[i];
        }
        cfx_free(ns->ovf);
        ns->ovf = t;
        ns->ovf_cap = cap;
    }
    uint32_t mask = ns->ovf_cap - 1, j = ovf_hash(b, suffix) & mask;
    while (ns->ovf[j].base)
        j = (j + 1) & mask;
    ns->ovf[j] = (ovf_entry){b, suffix};
    ns->ovf_count++;
    return true;
}

static inline bool key_used(const cfx_names *ns, cfx_name k)
{
    const istr *b = rec_of(k.base);
    if (k.suffix < 0)
        return b->used_plain;
    uint32_t w = (uint32_t)k.suffix >> 6;
    if (w < b->nwords && (b->bits[w] >> (k.suffix & 63) & 1))
        return true;
    return b->n_overflow && ovf_contains(ns, b, k.suffix);
}

/* Records suffix s of b, whose bitset is too short for it: in a bitset grown geometrically
 * while s is near the suffixes counted so far (names numbered in a row, the tracer's case),
 * else in the overflow set. */
static bool mark_suffix_beyond(cfx_names *ns, istr *b, uint32_t s)
{
    uint32_t w = s >> 6;
    if (w >= (uint64_t)b->nwords * 2 + 64) {
        if (!ovf_insert(ns, b, (int32_t)s))
            return false;
        b->n_overflow++;
        return true;
    }
    uint32_t nw = b->nwords ? b->nwords : 1;
    while (nw <= w)
        nw *= 2;
    uint64_t *bits = cfx_realloc(b->bits, nw * sizeof *bits);
    if (!bits)
        return false;
    memset(bits + b->nwords, 0, (nw - b->nwords) * sizeof *bits);
    b->bits = bits;
    b->nwords = nw;
    b->bits[w] |= (uint64_t)1 << (s & 63);
    return true;
}

/* Records k (unused) as used. */
static inline bool mark_used(cfx_names *ns, cfx_name k)
{
    istr *b = rec_of(k.base);
    if (k.suffix < 0) {
        b->used_plain = 1;
        return true;
    }
    uint32_t s = (uint32_t)k.suffix, w = s >> 6;
    if (w >= b->nwords)
        return mark_suffix_beyond(ns, b, s);
    b->bits[w] |= (uint64_t)1 << (s & 63);
    return true;
}

bool cfx_names_is_used(const cfx_names *ns, cfx_name name) { return key_used(ns, name); }

/* ---- candidates ----------------------------------------------------------------------- */

static bool is_ident_char(unsigned char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
static bool is_digit(unsigned char c) { return c >= '0' && c <= '9'; }

/* Position of the `_` that starts a `_<digits>` suffix with a nonempty base, or 0 if none. */
static size_t suffix_split(const char *s, size_t len)
{
    size_t i = len;
    while (i > 0 && is_digit((unsigned char)s[i - 1]))
        i--;
    if (i == len || i < 2 || s[i - 1] != '_')
        return 0;
    return i - 1;
}

/* The canonical key of a valid identifier spelling. */
static istr *canonical(cfx_names *ns, const char *s, size_t len, int32_t *suffix)
{
    size_t u = suffix_split(s, len);
    size_t nd = u ? len - u - 1 : 0;
    if (u && nd <= 9 && (nd == 1 || s[u + 1] != '0')) {
        int32_t v = 0;
        for (size_t i = u + 1; i < len; i++)
            v = v * 10 + (s[i] - '0');
        *suffix = v;
        return intern_rec(ns, s, u);
    }
    *suffix = CFX_NAME_NO_SUFFIX;
    return intern_rec(ns, s, len);
}

static istr *canonical_find(const cfx_names *ns, const char *s, size_t len, int32_t *suffix)
{
    size_t u = suffix_split(s, len);
    size_t nd = u ? len - u - 1 : 0;
    if (u && nd <= 9 && (nd == 1 || s[u + 1] != '0')) {
        int32_t v = 0;
        for (size_t i = u + 1; i < len; i++)
            v = v * 10 + (s[i] - '0');
        *suffix = v;
        return lookup(ns, s, u, hash_bytes(s, u), NULL);
    }
    *suffix = CFX_NAME_NO_SUFFIX;
    return lookup(ns, s, len, hash_bytes(s, len), NULL);
}

int cfx_names_key(cfx_names *ns, const char *s, size_t len, cfx_name *out)
{
    int32_t suffix;
    istr *b = canonical(ns, s, len, &suffix);
    if (!b)
        return cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
    *out = (cfx_name){b->s, suffix};
    return CFX_OK;
}

bool cfx_names_is_used_str(const cfx_names *ns, const char *s)
{
    int32_t suffix;
    istr *b = canonical_find(ns, s, strlen(s), &suffix);
    return b && key_used(ns, (cfx_name){b->s, suffix});
}

static bool valid_identifier(const char *s, size_t len)
{
    if (len == 0 || is_digit((unsigned char)s[0]))
        return false;
    for (size_t i = 0; i < len; i++)
        if (!is_ident_char((unsigned char)s[i]))
            return false;
    return true;
}

int cfx_names_prepare(cfx_names *ns, const char *cand, size_t len, cfx_name_candidate *out)
{
    char small[128];
    char *tmp = NULL;
    if (!valid_identifier(cand, len)) {
        /* _illegal_char_regex.sub("_", candidate); "" -> "_unnamed"; digit -> "_" prefix */
        tmp = len + 2 <= sizeof small ? small : cfx_malloc(len + 2);
        if (!tmp)
            return cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
        size_t n = 1; /* tmp[0] reserved for the digit prefix */
        for (size_t i = 0; i < len;) {
            if (is_ident_char((unsigned char)cand[i])) {
                tmp[n++] = cand[i++];
                continue;
            }
            while (i < len && !is_ident_char((unsigned char)cand[i]))
                i++;
            tmp[n++] = '_';
        }
        char *p = tmp + 1;
        size_t m = n - 1;
        if (m == 0) {
            p = "_unnamed";
            m = 8;
        } else if (is_digit((unsigned char)p[0])) {
            tmp[0] = '_';
            p = tmp;
            m++;
        }
        cand = p;
        len = m;
    }
    size_t u = suffix_split(cand, len);
    istr *whole = intern_rec(ns, cand, len);
    istr *base = u ? intern_rec(ns, cand, u) : whole;
    int64_t num = -1;
    if (u) {
        num = 0;
        for (size_t i = u + 1; i < len && num < INT64_MAX / 20; i++)
            num = num * 10 + (cand[i] - '0');
    }
    int32_t ks;
    istr *kb = canonical(ns, cand, len, &ks);
    if (tmp && tmp != small)
        cfx_free(tmp);
    if (!whole || !base || !kb)
        return cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
    out->whole = whole->s;
    out->base = base->s;
    out->num = num;
    out->key = (cfx_name){kb->s, ks};
    out->illegal = 0;
    for (unsigned obj = CFX_NAME_FOR_NONE; obj <= CFX_NAME_FOR_BUILTIN; obj++)
        out->illegal |= (uint8_t)(is_illegal(whole, (cfx_name_obj)obj) << obj);
    return CFX_OK;
}

/* f"{base}_{num}" as a key when num is beyond what a key's suffix holds: a base of its own.
 * Its base is NULL on OOM. */
static cfx_name long_key(cfx_names *ns, istr *base, int64_t num)
{
    char buf[24];
    size_t n = cfx_fmt_i64(num, buf);
    char *s = cfx_malloc(base->len + 1 + n);
    if (!s)
        return (cfx_name){NULL, CFX_NAME_NO_SUFFIX};
    memcpy(s, base->s, base->len);
    s[base->len] = '_';
    memcpy(s + base->len + 1, buf, n);
    istr *r = intern_rec(ns, s, base->len + 1 + n);
    cfx_free(s);
    return (cfx_name){r ? r->s : NULL, CFX_NAME_NO_SUFFIX};
}

/* f"{base}_{num}" as a key (returned by value, so the candidate stays in registers); its
 * base is NULL on OOM. */
static inline cfx_name make_key(cfx_names *ns, istr *base, int64_t num)
{
    if (num >= 0 && num <= CFX_NAME_MAX_SUFFIX)
        return (cfx_name){base->s, (int32_t)num};
    return long_key(ns, base, num);
}

/* FX's create_name, step by step. */
int cfx_names_create_prepared(cfx_names *ns, const cfx_name_candidate *c, cfx_name_obj obj,
                              cfx_name *out)
{
    istr *base = rec_of(c->base);
    cfx_name cand = c->key;
    int64_t num;
    if (c->num < 0 || key_used(ns, cand)) {
        num = base->count;
        if (c->illegal >> obj & 1) {
            num += 1;
            if (!(cand = make_key(ns, base, num)).base)
                goto oom;
        }
    } else {
        num = c->num;
    }
    while (key_used(ns, cand)) {
        num += 1;
        if (!(cand = make_key(ns, base, num)).base)
            goto oom;
    }
    if (!mark_used(ns, cand))
        goto oom;
    base->count = num;
    *out = cand;
    return CFX_OK;
oom:
    return cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
}

int cfx_names_create(cfx_names *ns, const char *candidate, cfx_name_obj obj, cfx_name *out)
{
    cfx_name_candidate c;
    int rc = cfx_names_prepare(ns, candidate, strlen(candidate), &c);
    if (rc != CFX_OK)
        return rc;
    return cfx_names_create_prepared(ns, &c, obj, out);
}

/* ---- target_to_str -------------------------------------------------------------------- */

void cfx_names_target_to_str(const char *s, cfx_buf *b)
{
    size_t len = strlen(s);
    if (len >= 2 && s[0] == '_' && s[1] == '_' && s[len - 2] == '_' && s[len - 1] == '_') {
        s += 2;
        len = len >= 4 ? len - 4 : 0;
    }
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        if (c >= 'A' && c <= 'Z') {
            if (i > 0 && s[i - 1] >= 'a' && s[i - 1] <= 'z')
                cfx_buf_putc(b, '_');
            c = (char)(c - 'A' + 'a');
        }
        cfx_buf_putc(b, c);
    }
}

/* ---- rendering ------------------------------------------------------------------------ */

size_t cfx_name_length(cfx_name n)
{
    size_t len = rec_of(n.base)->len;
    if (n.suffix >= 0) {
        char tmp[20];
        len += 1 + cfx_fmt_u64((uint64_t)n.suffix, tmp);
    }
    return len;
}

char *cfx_name_write(cfx_name n, char *dst)
{
    uint32_t len = rec_of(n.base)->len;
    memcpy(dst, n.base, len);
    dst += len;
    if (n.suffix >= 0) {
        *dst++ = '_';
        dst += cfx_fmt_u64((uint64_t)n.suffix, dst);
    }
    return dst;
}

void cfx_name_print(cfx_name n, cfx_buf *b)
{
    char tmp[24];
    cfx_buf_putn(b, n.base, rec_of(n.base)->len);
    if (n.suffix >= 0) {
        tmp[0] = '_';
        cfx_buf_putn(b, tmp, 1 + cfx_fmt_u64((uint64_t)n.suffix, tmp + 1));
    }
}

char *cfx_name_to_string(cfx_name n)
{
    size_t len = cfx_name_length(n);
    char *s = cfx_malloc(len + 1);
    if (!s)
        return NULL;
    *cfx_name_write(n, s) = '\0';
    return s;
}
