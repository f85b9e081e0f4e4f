/* schema_internal.h - private to dispatch/schema_*.c: the TorchScript lexer as the schema
 * parser sees it (schema_lexer.c), PyTorch's error texts with the "~~~ <--- HERE" highlight,
 * and the parser state shared by the files of the parser: schema_parse.c (declarations,
 * arguments), schema_type_parse.c (types, alias annotations), schema_union.c (what optional
 * and union types become), schema_default.c (default values), schema_opaque.c (the opaque
 * type registry) and schema_print.c (type names in messages).
 *
 * Not part of the public API. */
#ifndef CFX_SCHEMA_INTERNAL_H
#define CFX_SCHEMA_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "dispatch/schema.h"

/* Token kinds: a single-character token is its own character (0..255); the rest follow. */
enum {
    SK_EOF = 256,
    SK_WHITESPACE,
    SK_WHITESPACE_EOF,
    SK_NUMBER,
    SK_NEWLINE,
    SK_INDENT,
    SK_DEDENT,
    SK_IDENT,
    SK_STRINGLITERAL,
    /* keywords and operators the lexer recognises (schemas use only a few of them, but an
     * identifier that happens to be a keyword must lex as that keyword) */
    SK_DEF, SK_EQUIVALENT, SK_IF, SK_ELSE, SK_ELIF, SK_WHILE, SK_RETURN, SK_IS, SK_ISNOT,
    SK_NE, SK_EQ, SK_LE, SK_GE, SK_FLOOR_DIV, SK_TRUE, SK_FALSE, SK_NONE, SK_AND, SK_OR,
    SK_NOT, SK_LSHIFT, SK_RSHIFT, SK_PLUS_EQ, SK_MINUS_EQ, SK_TIMES_EQ, SK_DIV_EQ, SK_MOD_EQ,
    SK_BIT_OR_EQ, SK_BIT_AND_EQ, SK_BIT_XOR_EQ, SK_LSHIFT_EQ, SK_RSHIFT_EQ, SK_POW_EQ,
    SK_GLOBAL, SK_FOR, SK_IN, SK_NOTIN, SK_POW, SK_ARROW, SK_TYPE_COMMENT, SK_RAISE,
    SK_ASSERT, SK_DOTS, SK_BREAK, SK_CONTINUE, SK_DELETE, SK_PASS, SK_CLASS_DEF, SK_IMPORT,
    SK_WITH, SK_AS, SK_ELLIPSIS, SK_NONE_TYPE,
    /* what cur() returns once an error is recorded: matches nothing, so parsing unwinds */
    SK_FAILED
};

typedef struct schema_token {
    int kind;
    size_t start, end; /* byte range in the source */
} schema_token;

typedef struct schema_lexer {
    const char *src;
    size_t len;
    size_t pos;     /* where the next raw token starts */
    size_t nesting; /* depth of ( [ {; newlines inside do not count (size_t as in PyTorch) */
    long *indents;  /* indentation stack */
    size_t n_indents, cap_indents;
    schema_token *queue; /* tokens lexed but not consumed; queue[head] is cur() */
    size_t head, n_queue, cap_queue;
    char *err;        /* first error (malloc'd), NULL while all is well */
} schema_lexer;

/* Starts lexing text[0..len); may already record an error (a bad first token). */
void schema_lexer_init(schema_lexer *L, const char *text, size_t len);
void schema_lexer_free(schema_lexer *L);
/* The recorded error as a malloc'd string owned by the caller (NULL if none, or out of
 * memory); the lexer stays failed. */
char *schema_lexer_take_error(schema_lexer *L);

static inline bool schema_failed(const schema_lexer *L) { return L->err != NULL; }

schema_token schema_cur(schema_lexer *L);
schema_token schema_next(schema_lexer *L);
schema_token schema_lookahead(schema_lexer *L);
bool schema_next_if(schema_lexer *L, int kind);
schema_token schema_expect(schema_lexer *L, int kind);
/* The token's source text (not NUL-terminated). */
static inline const char *schema_text(const schema_lexer *L, schema_token t) { return L->src + t.start; }
static inline size_t schema_text_len(schema_token t) { return t.end - t.start; }
bool schema_tok_is(const schema_lexer *L, schema_token t, const char *s);

/* Error recorders; the first error wins. */
/* torch::jit::ErrorReport: "\n<msg>:\n<highlight>" */
void schema_error_report(schema_lexer *L, size_t start, size_t end, const char *msg);
/* A c10::Error or std::exception: the message alone. */
void schema_error_plain(schema_lexer *L, const char *msg);
/* Out of memory while parsing. */
void schema_error_nomem(schema_lexer *L);

/* ------------------------------------------------------------------ schema_arena */

typedef struct schema_chunk {
    struct schema_chunk *next;
    size_t cap, used;
    max_align_t data[];
} schema_chunk;

typedef struct schema_arena {
    schema_chunk *head;
} schema_arena;

typedef struct schema_alias {
    cfx_alias_info info; /* first: a cfx_alias_info * is a schema_alias * */
    size_t cap_before, cap_after;
} schema_alias;

typedef struct schema_frame {
    int kind; /* CFX_TYPE_TUPLE, _FUTURE, _AWAIT, _RREF, _DICT or _UNION under construction */
    const cfx_type **elems;
    size_t n, cap;
} schema_frame;

/* Where in the source a name resolved to an opaque type (cfx_schema_with_name re-parses with
 * these instead of asking the registry again, so a copy means what the original meant). */
typedef struct schema_opaque_uses {
    size_t *at; /* source offsets of the names' first tokens */
    size_t n, cap;
} schema_opaque_uses;

typedef struct schema_parser {
    schema_lexer L;
    schema_arena *A;
    bool allow_typevars;
    unsigned next_id; /* fresh alias sets of "Tensor!": $0, $1, ... */
    schema_frame *frames;    /* type nesting stack (malloc'd, reused) */
    size_t n_frames, cap_frames;
    schema_opaque_uses opaque;        /* recorded in the arena */
    const schema_opaque_uses *replay; /* non-NULL when re-parsing a parsed schema */
    /* stand-ins returned when an allocation failed; the parse has failed by then */
    cfx_type dummy_type;
    schema_alias dummy_alias;
} schema_parser;

/* Arena allocation; on failure records the error and returns NULL. */
void *schema_alloc(schema_parser *p, size_t n);
/* Makes room for element n of an arena array (doubling); false if out of memory. */
bool schema_grow(schema_parser *p, void *arrayp, size_t *cap, size_t n, size_t elem);
/* A NUL-terminated arena copy of s[0..n) ("" if out of memory). */
char *schema_slice(schema_parser *p, const char *s, size_t n);
/* Records an error whose text is built in b (the buffer is consumed). */
void schema_error_buf(schema_parser *p, cfx_buf *b);

/* ------------------------------------------------------------------ schema_type_parse.c */

/* SchemaTypeParser::parseFakeAndRealType: a type with its top-level alias annotation
 * (*alias_out, NULL if none). The type is the real one; nested types are fake. */
cfx_type *schema_parse_type(schema_parser *p, schema_alias **alias_out);
/* parseAliasAnnotation: "(a|b! -> c)", "!" or nothing (NULL). */
schema_alias *schema_parse_alias(schema_parser *p);
/* The alias of a list whose element had `elem`: the container's own annotation, which is
 * parsed here, holding the element's. */
schema_alias *schema_list_alias(schema_parser *p, schema_alias *elem);
/* A new node; the dummy type if out of memory. */
cfx_type *schema_new_type(schema_parser *p, int kind);
cfx_type *schema_new_type1(schema_parser *p, int kind, const cfx_type *elem);

/* ------------------------------------------------------------------ schema_union.c */

/* OptionalType::create and UnionType::create: flattened, deduplicated by unification,
 * sorted; "None?" and single-type unions fail with c10's INTERNAL ASSERT text. */
cfx_type *schema_make_optional(schema_parser *p, const cfx_type *t);
cfx_type *schema_make_union(schema_parser *p, const cfx_type *const *types, size_t n);
/* The type PyTorch uses inside containers and for defaults: SymInt, ScalarType, Layout and
 * MemoryFormat are int (looked at through list and optional wrappers). */
const cfx_type *schema_fake_type(schema_parser *p, const cfx_type *t);

/* ------------------------------------------------------------------ schema_print.c */

/* Type::str() ("Tensor?[]", "Union(int, str)") or, with annotation, repr_str() as c10's
 * messages print types ("List[Optional[Tensor]]", "number"). */
void schema_type_write(const cfx_type *t, bool annotation, cfx_buf *b);

/* ------------------------------------------------------------------ schema_opaque.c */

bool schema_opaque_lookup(const char *name, size_t n);

/* ------------------------------------------------------------------ schema_default.c */

/* std::stod / std::stoll on s[0..n): a prefix is enough; no digits or out of range records
 * the error "stod" / "stoll" (all that PyTorch's message says). */
double schema_stod(schema_parser *p, const char *s, size_t n);
long long schema_stoll(schema_parser *p, const char *s, size_t n);
/* parseDefaultValue: the default after "=" for an argument of this (real) type. */
cfx_value schema_parse_default(schema_parser *p, const cfx_type *type, int32_t n_hint, bool has_hint);

#endif
