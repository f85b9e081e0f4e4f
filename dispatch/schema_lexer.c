/* schema_lexer.c - the TorchScript lexer, as PyTorch's schema parser uses it, and its errors.
 *
 * PyTorch parses schemas with the full TorchScript lexer (torch/csrc/jit/frontend/lexer.h),
 * so its quirks are part of the schema language: keywords ("in", "def", "None") are not
 * identifiers, numbers are whatever strtod accepts (hex floats too) plus a 'j' suffix, a
 * newline outside brackets is an indentation token, comments and backslash continuations are
 * skipped. Tokens are lexed one step ahead, exactly when PyTorch lexes them, because a bad
 * character is reported at the moment the token before it is consumed and the first error
 * is the one the user sees.
 *
 * Errors carry PyTorch's text: "expected X but found 'Y' here:" from the lexer, "\nmsg:"
 * from ErrorReport, both followed by the source highlight of SourceRange::highlight (the lines
 * around the token, the token's line underlined with '~' and " <--- HERE"). */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch/schema_internal.h"

/* PyTorch's SourceRange::CONTEXT: lines shown before and after the highlighted ones. */
enum { CONTEXT_LINES = 3 };

typedef struct token_def {
    int kind;
    const char *name; /* kindToString */
    const char *text; /* what the lexer matches, or NULL */
} token_def;

/* TC_FORALL_TOKEN_KINDS, restricted to the kinds the lexer can produce. */
static const token_def token_defs[] = {
    {SK_EOF, "eof", NULL},
    {SK_WHITESPACE, "whitespace", NULL},
    {SK_WHITESPACE_EOF, "whitespace_eof", NULL},
    {SK_NUMBER, "number", NULL},
    {SK_NEWLINE, "newline", NULL},
    {SK_INDENT, "indent", NULL},
    {SK_DEDENT, "dedent", NULL},
    {SK_IDENT, "ident", NULL},
    {SK_STRINGLITERAL, "string_literal", NULL},
    {SK_DEF, "def", "def"},
    {SK_EQUIVALENT, "equivalent", "<=>"},
    {SK_IF, "if", "if"},
    {SK_ELSE, "else", "else"},
    {SK_ELIF, "elif", "elif"},
    {SK_WHILE, "while", "while"},
    {SK_RETURN, "return", "return"},
    {SK_IS, "is", "is"},
    {SK_ISNOT, "is not", "is not"},
    {SK_NE, "ne", "!="},
    {SK_EQ, "eq", "=="},
    {SK_LE, "le", "<="},
    {SK_GE, "ge", ">="},
    {SK_FLOOR_DIV, "floordiv", "//"},
    {SK_TRUE, "True", "True"},
    {SK_FALSE, "False", "False"},
    {SK_NONE, "None", "None"},
    {SK_AND, "and", "and"},
    {SK_OR, "or", "or"},
    {SK_NOT, "not", "not"},
    {SK_LSHIFT, "<<", "<<"},
    {SK_RSHIFT, ">>", ">>"},
    {SK_PLUS_EQ, "+=", "+="},
    {SK_MINUS_EQ, "-=", "-="},
    {SK_TIMES_EQ, "*=", "*="},
    {SK_DIV_EQ, "/=", "/="},
    {SK_MOD_EQ, "%=", "%="},
    {SK_BIT_OR_EQ, "|=", "|="},
    {SK_BIT_AND_EQ, "&=", "&="},
    {SK_BIT_XOR_EQ, "^=", "^="},
    {SK_LSHIFT_EQ, "<<=", "<<="},
    {SK_RSHIFT_EQ, ">>=", ">>="},
    {SK_POW_EQ, "**=", "**="},
    {SK_GLOBAL, "global", "global"},
    {SK_FOR, "for", "for"},
    {SK_IN, "in", "in"},
    {SK_NOTIN, "not in", "not in"},
    {SK_POW, "pow operator", "**"},
    {SK_ARROW, "arrow", "->"},
    {SK_TYPE_COMMENT, "type comment", "# type:"},
    {SK_RAISE, "raise", "raise"},
    {SK_ASSERT, "assert", "assert"},
    {SK_DOTS, "dots", "..."},
    {SK_BREAK, "break", "break"},
    {SK_CONTINUE, "continue", "continue"},
    {SK_DELETE, "del", "del"},
    {SK_PASS, "pass", "pass"},
    {SK_CLASS_DEF, "class", "class"},
    {SK_IMPORT, "import", "import"},
    {SK_WITH, "with", "with"},
    {SK_AS, "as", "as"},
    {SK_ELLIPSIS, "Ellipsis", "Ellipsis"},
    {SK_NONE_TYPE, "NoneType", "NoneType"},
};
#define N_TOKEN_DEFS (sizeof token_defs / sizeof token_defs[0])

static const char single_char_tokens[] = "+-*/%@()[]:,={}><.?!&^|~";

/* kindToString; a one-character kind is that character (possibly a raw non-ASCII byte). */
static void put_kind(cfx_buf *b, int kind)
{
    if (kind < 256) {
        cfx_buf_putc(b, (char)kind);
        return;
    }
    for (size_t i = 0; i < N_TOKEN_DEFS; i++)
        if (token_defs[i].kind == kind) {
            cfx_buf_puts(b, token_defs[i].name);
            return;
        }
    cfx_buf_puts(b, "?");
}

/* ------------------------------------------------------------------ highlight */

/* SourceRange::print_with_context(out, CONTEXT, highlight=true, ""), for a source without a
 * file name. The odd cases are PyTorch's: a range as long as the whole text prints the text
 * alone, an empty range (EOF) prints the context and no marker line. */
static void highlight(cfx_buf *b, const char *str, size_t len, size_t start, size_t end)
{
    if (end - start == len) {
        cfx_buf_putn(b, str, len);
        return;
    }
    size_t range_end = len < end ? len : end;
    size_t begin_line = start, end_line = range_end;
    if (begin_line > len)
        return;
    while (begin_line > 0 && str[begin_line - 1] != '\n')
        --begin_line;
    while (end_line < len && str[end_line] != '\n')
        ++end_line;

    size_t begin_context = begin_line;
    for (size_t i = 0; begin_context > 0; --begin_context) {
        if (str[begin_context - 1] == '\n')
            ++i;
        if (i >= CONTEXT_LINES)
            break;
    }
    size_t end_context = end_line;
    for (size_t i = 0; end_context < len; ++end_context) {
        if (str[end_context] == '\n')
            ++i;
        if (i >= CONTEXT_LINES)
            break;
    }

    cfx_buf_putn(b, str + begin_context, start - begin_context);
    size_t line_start = start, line_end = start;
    while (line_start < range_end) {
        while (line_end < len && str[line_end] != '\n')
            ++line_end;
        /* the line, with its newline if it has one (substr clamps at the end) */
        size_t n = line_end - line_start + 1;
        if (line_start + n > len)
            n = len - line_start;
        cfx_buf_putn(b, str + line_start, n);
        if (str[line_start + n - 1] != '\n')
            cfx_buf_putc(b, '\n');

        size_t hl_begin = line_start, hl_end = line_start;
        while (hl_begin > 0 && str[hl_begin - 1] != '\n')
            --hl_begin;
        while (hl_end < range_end && str[hl_end] != '\n')
            ++hl_end;
        size_t empty_space = 0;
        for (size_t i = hl_begin; i < hl_end; i++) {
            if (str[i] == ' ' || i < start)
                empty_space++;
            else
                break;
        }
        size_t highlight_space = hl_end - hl_begin - empty_space;
        if (highlight_space > 0) {
            /* str[len] is the terminating NUL, which PyTorch's std::string also reads */
            bool more_lines = false;
            for (size_t i = line_end; i <= range_end; i++)
                if (str[i] != '\n' && str[i] != ' ')
                    more_lines = true;
            for (size_t i = 0; i < empty_space; i++)
                cfx_buf_putc(b, ' ');
            for (size_t i = 0; i < highlight_space; i++)
                cfx_buf_putc(b, '~');
            cfx_buf_puts(b, more_lines && line_end != range_end ? "\n" : " <--- HERE\n");
        }
        ++line_end;
        line_start = line_end;
    }
    if (line_end <= len) {
        /* std::string::substr: the count wraps when the range ended before it began */
        size_t n = end_context - line_end;
        if (n > len - line_end)
            n = len - line_end;
        cfx_buf_putn(b, str + line_end, n);
        if (n > 0 && str[line_end + n - 1] != '\n')
            cfx_buf_putc(b, '\n');
    }
}

/* ------------------------------------------------------------------ errors */

/* What L->err points to when even the message could not be allocated: the parse must still
 * be marked as failed. */
static char oom_text[] = "std::bad_alloc";

static void set_error(schema_lexer *L, cfx_buf *b)
{
    char *msg = cfx_buf_take(b);
    if (L->err) {
        cfx_free(msg);
        return;
    }
    L->err = msg ? msg : oom_text;
}

char *schema_lexer_take_error(schema_lexer *L)
{
    char *e = L->err;
    if (e == oom_text)
        e = cfx_strdup(oom_text);
    else
        L->err = NULL;
    return e;
}

void schema_error_plain(schema_lexer *L, const char *msg)
{
    if (L->err)
        return;
    cfx_buf b;
    cfx_buf_init(&b);
    cfx_buf_puts(&b, msg);
    set_error(L, &b);
}

void schema_error_nomem(schema_lexer *L) { schema_error_plain(L, "std::bad_alloc"); }

void schema_error_report(schema_lexer *L, size_t start, size_t end, const char *msg)
{
    if (L->err)
        return;
    cfx_buf b;
    cfx_buf_init(&b);
    cfx_buf_putc(&b, '\n');
    cfx_buf_puts(&b, msg);
    cfx_buf_puts(&b, ":\n");
    highlight(&b, L->src, L->len, start, end);
    set_error(L, &b);
}

/* Lexer::expected */
static void error_expected(schema_lexer *L, const char *what, int found, size_t start, size_t end)
{
    if (L->err)
        return;
    cfx_buf b;
    cfx_buf_init(&b);
    cfx_buf_printf(&b, "expected %s but found '", what);
    put_kind(&b, found);
    cfx_buf_puts(&b, "' here:\n");
    highlight(&b, L->src, L->len, start, end);
    set_error(L, &b);
}

/* Lexer::reportError */
static void error_lexer(schema_lexer *L, const char *what, size_t start, size_t end)
{
    if (L->err)
        return;
    cfx_buf b;
    cfx_buf_init(&b);
    cfx_buf_puts(&b, what);
    cfx_buf_puts(&b, ":\n");
    highlight(&b, L->src, L->len, start, end);
    set_error(L, &b);
}

/* ------------------------------------------------------------------ raw tokens */

static bool is_blank(char c) { return isspace((unsigned char)c) && c != '\n'; }

static bool valid_ident(size_t i, char c)
{
    return isalpha((unsigned char)c) || c == '_' || (i > 0 && isdigit((unsigned char)c));
}

static bool is_char_count(const char *s, size_t len, char c, size_t start, size_t n)
{
    if (start + n > len)
        return false;
    for (size_t i = 0; i < n; i++)
        if (s[start + i] != c)
            return false;
    return true;
}

static bool is_number(const schema_lexer *L, size_t pos, size_t *n)
{
    char first = L->src[pos];
    if (first == '-' || first == '+' || isalpha((unsigned char)first))
        return false;
    char *endp;
    (void)strtod(L->src + pos, &endp);
    *n = (size_t)(endp - (L->src + pos));
    if (*endp == 'j')
        *n += 1;
    return *n > 0;
}

/* Strings in ' or " quotes, single or tripled; a backslash skips the next character. */
static bool is_string(const schema_lexer *L, size_t start, size_t *n)
{
    const char *s = L->src;
    char quote = s[start];
    if (quote != '"' && quote != '\'')
        return false;
    size_t quote_len = is_char_count(s, L->len, quote, start, 3) ? 3 : 1;
    size_t end = start + quote_len;
    while (end < L->len && !is_char_count(s, L->len, quote, end, quote_len)) {
        if (s[end] == '\n' && quote_len != 3)
            return false;
        if (s[end] == '\\')
            end++;
        end++;
    }
    *n = end - start + quote_len;
    return end < L->len;
}

static bool is_type_comment(const schema_lexer *L, size_t pos)
{
    return L->len - pos >= 7 && memcmp(L->src + pos, "# type:", 7) == 0;
}

/* Does some token (single-character or from the table) start with src[pos..pos+n)? Sets
 * *kind to the token that is exactly that text, 0 if none. */
static bool token_prefix(const schema_lexer *L, size_t pos, size_t n, int *kind)
{
    const char *s = L->src + pos;
    bool prefix = false;
    *kind = 0;
    if (n == 1 && s[0] != '\0' && strchr(single_char_tokens, s[0])) {
        prefix = true;
        *kind = (unsigned char)s[0];
    }
    for (size_t i = 0; i < N_TOKEN_DEFS; i++) {
        const char *t = token_defs[i].text;
        /* n >= 1: the first character rules out almost every entry before strlen and memcmp
         * (the lexer asks once per character of every token: this loop was 80% of parsing) */
        if (!t || t[0] != s[0] || strlen(t) < n || memcmp(t, s, n) != 0)
            continue;
        prefix = true;
        if (t[n] == '\0')
            *kind = token_defs[i].kind;
    }
    return prefix;
}

/* SharedParserData::match, with its tail calls (comments, continuations, newlines) as a loop. */
static bool match(const schema_lexer *L, size_t pos, bool continuation, bool whitespace_token,
                  int *kind, size_t *start, size_t *end)
{
    const char *s = L->src;
    size_t len = L->len;
    for (;;) {
        *start = pos;
        while (pos < len && is_blank(s[pos]))
            ++pos;
        if (pos < len) {
            if (s[pos] == '#' && !is_type_comment(L, pos)) {
                while (pos < len && s[pos] != '\n')
                    ++pos;
                continue;
            }
            if (s[pos] == '\\' && pos + 1 < len && s[pos + 1] == '\n' && !whitespace_token) {
                pos += 2;
                whitespace_token = false;
                continue;
            }
            if (s[pos] == '\n') {
                ++pos;
                whitespace_token = !continuation;
                continue;
            }
        }
        break;
    }
    if (whitespace_token) {
        *kind = pos == len ? SK_WHITESPACE_EOF : SK_WHITESPACE;
        *end = pos;
        return true;
    }
    if (pos == len) {
        *kind = SK_EOF;
        *start = *end = pos;
        return true;
    }
    *start = pos;
    size_t n;
    if (is_number(L, pos, &n)) {
        *kind = SK_NUMBER;
        *end = pos + n;
        return true;
    }
    if (is_string(L, pos, &n)) {
        *kind = SK_STRINGLITERAL;
        *end = pos + n;
        return true;
    }
    /* longest match of an identifier or a token; a token wins a tie ("in" is not an ident) */
    bool matched = false, ident = true, trie = true;
    for (size_t i = 0; pos + i < len && (ident || trie); i++) {
        ident = ident && valid_ident(i, s[pos + i]);
        if (ident) {
            matched = true;
            *end = pos + i + 1;
            *kind = SK_IDENT;
        }
        if (trie) {
            int k;
            trie = token_prefix(L, pos, i + 1, &k);
            if (trie && k != 0) {
                matched = true;
                *end = pos + i + 1;
                *kind = k;
            }
        }
    }
    return matched;
}

/* ------------------------------------------------------------------ token queue */

static void push_token(schema_lexer *L, int kind, size_t start, size_t end)
{
    if (L->head == L->n_queue)
        L->head = L->n_queue = 0;
    if (L->n_queue == L->cap_queue) {
        size_t cap = L->cap_queue ? 2 * L->cap_queue : 4;
        schema_token *q = cfx_realloc(L->queue, cap * sizeof *q);
        if (!q) {
            schema_error_nomem(L);
            return;
        }
        L->queue = q;
        L->cap_queue = cap;
    }
    L->queue[L->n_queue++] = (schema_token){kind, start, end};
}

static bool push_indent(schema_lexer *L, long depth)
{
    if (L->n_indents == L->cap_indents) {
        size_t cap = L->cap_indents ? 2 * L->cap_indents : 4;
        long *p = cfx_realloc(L->indents, cap * sizeof *p);
        if (!p) {
            schema_error_nomem(L);
            return false;
        }
        L->indents = p;
        L->cap_indents = cap;
    }
    L->indents[L->n_indents++] = depth;
    return true;
}

static bool lex_raw(schema_lexer *L, bool whitespace_token, schema_token *t)
{
    int kind = 0;
    size_t start = L->pos, end = L->pos;
    if (!match(L, L->pos, L->nesting > 0, whitespace_token, &kind, &start, &end)) {
        /* PyTorch names the character where lexing began but marks where it failed */
        error_expected(L, "a valid token", (int)L->src[L->pos], start, start + 1);
        return false;
    }
    *t = (schema_token){kind, start, end};
    L->pos = end;
    return true;
}

/* Lexer::lex: one raw token, with whitespace turned into newline/indent/dedent tokens. */
static void lex(schema_lexer *L)
{
    schema_token r;
    if (L->err || !lex_raw(L, false, &r))
        return;
    switch (r.kind) {
    case '(':
    case '[':
    case '{':
        L->nesting++;
        break;
    case ')':
    case ']':
    case '}':
        L->nesting--;
        break;
    case SK_WHITESPACE:
    case SK_WHITESPACE_EOF: {
        long depth = r.kind == SK_WHITESPACE_EOF ? L->indents[0] : (long)(r.end - r.start);
        long back = L->indents[L->n_indents - 1];
        if (depth > back) {
            if (!push_indent(L, depth))
                return;
            r.kind = SK_INDENT;
        } else if (depth == back) {
            r.kind = SK_NEWLINE;
        } else {
            push_token(L, SK_NEWLINE, r.start, r.end);
            while (L->n_indents > 0 && L->indents[L->n_indents - 1] != depth) {
                L->n_indents--;
                push_token(L, SK_DEDENT, r.start, r.end);
                if (L->n_indents == 0) {
                    char what[64];
                    snprintf(what, sizeof what, "invalid indent level %ld", depth);
                    error_lexer(L, what, r.start, r.end);
                }
            }
            return;
        }
        break;
    }
    default:
        break;
    }
    push_token(L, r.kind, r.start, r.end);
}

void schema_lexer_init(schema_lexer *L, const char *text, size_t len)
{
    memset(L, 0, sizeof *L);
    L->src = text;
    L->len = len;
    schema_token first;
    if (!lex_raw(L, true, &first) || !push_indent(L, (long)(first.end - first.start)))
        return;
    lex(L);
}

void schema_lexer_free(schema_lexer *L)
{
    cfx_free(L->indents);
    cfx_free(L->queue);
    if (L->err != oom_text)
        cfx_free(L->err);
    memset(L, 0, sizeof *L);
}

static const schema_token failed_token = {SK_FAILED, 0, 0};

schema_token schema_cur(schema_lexer *L)
{
    if (L->err || L->head == L->n_queue)
        return failed_token;
    return L->queue[L->head];
}

schema_token schema_next(schema_lexer *L)
{
    if (L->err || L->head == L->n_queue)
        return failed_token;
    schema_token r = L->queue[L->head++];
    if (L->head == L->n_queue)
        lex(L);
    return r;
}

schema_token schema_lookahead(schema_lexer *L)
{
    if (L->err)
        return failed_token;
    if (L->n_queue - L->head < 2)
        lex(L);
    if (L->err || L->n_queue - L->head < 2)
        return failed_token;
    return L->queue[L->head + 1];
}

bool schema_next_if(schema_lexer *L, int kind)
{
    if (schema_cur(L).kind != kind)
        return false;
    schema_next(L);
    return true;
}

schema_token schema_expect(schema_lexer *L, int kind)
{
    schema_token t = schema_cur(L);
    if (t.kind != kind) {
        if (t.kind != SK_FAILED) {
            cfx_buf what;
            cfx_buf_init(&what);
            put_kind(&what, kind);
            char *w = cfx_buf_take(&what);
            error_expected(L, w ? w : "?", t.kind, t.start, t.end);
            cfx_free(w);
        }
        return failed_token;
    }
    return schema_next(L);
}

bool schema_tok_is(const schema_lexer *L, schema_token t, const char *s)
{
    size_t n = strlen(s);
    return schema_text_len(t) == n && memcmp(L->src + t.start, s, n) == 0;
}
