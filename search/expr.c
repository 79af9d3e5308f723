/* The T1 expression language: a Python subset, parsed once into a tree and
 * evaluated many times.
 *
 * Evaluation hands values around as "borrowed or owned": every evaluator
 * gets a scratch value `tmp` it may fill, and returns a pointer `res` that
 * is either `tmp` (owned, the caller clears it) or storage that outlives the
 * call (a bound variable, a literal in the tree, an item of a list being
 * iterated). Reading a parameter, indexing a bound list and all scalar
 * arithmetic therefore allocate nothing, which matters because conditions
 * are evaluated once per candidate configuration.
 *
 * Hostile input is expected (files come from anywhere, and the parser is
 * fuzzed): nesting is capped so that no recursion here can exhaust the
 * stack, every list length is checked against a limit before allocating,
 * and one evaluation may only create a bounded number of list elements, so
 * nested comprehensions cannot run for hours either.
 */
#include "expr.h"

#include <math.h>
#include <stdalign.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Both the parser's recursion and the height of the tree (which bounds the
 * evaluator's recursion) stay under this. CPython's parser has a limit of
 * the same order for nested brackets. */
#define MAX_NESTING 200

/* One evaluation may create this many times max_list list elements in all,
 * counting temporaries and comprehension iterations. */
#define WORK_FACTOR 8

#if defined(__GNUC__)
#define PRINTF_LIKE(f, a) __attribute__((format(printf, f, a)))
#else
#define PRINTF_LIKE(f, a)
#endif

/* ------------------------------------------------------------------ */
/* Errors                                                              */

/* Columns count characters, not bytes, so that they match what an editor
 * shows for UTF-8 text. */
static int column_of(const char *text, size_t pos)
{
    size_t col = 1;
    for (size_t i = 0; i < pos && text[i]; i++)
        if (((unsigned char)text[i] & 0xC0) != 0x80)
            col++;
    return col > 0x7fffffff ? 0x7fffffff : (int)col;
}

static void verror(cutune__expr_error *err, const char *text, size_t pos,
                   size_t len, const char *fmt, va_list ap)
{
    if (!err)
        return;
    if (text) {
        err->column = column_of(text, pos);
        if (len > sizeof err->token - 1)
            len = sizeof err->token - 1;
        memcpy(err->token, text + pos, len);
        err->token[len] = '\0';
    } else {
        err->column = 0;
        err->token[0] = '\0';
    }
    vsnprintf(err->message, sizeof err->message, fmt, ap);
}

PRINTF_LIKE(5, 6)
static void set_error(cutune__expr_error *err, const char *text, size_t pos,
                      size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    verror(err, text, pos, len, fmt, ap);
    va_end(ap);
}

static void set_oom(cutune__expr_error *err)
{
    set_error(err, NULL, 0, 0, "out of memory");
}

/* ------------------------------------------------------------------ */
/* Values                                                              */

static const char *type_name(const cutune__value *v)
{
    switch (v->type) {
    case CUTUNE__V_INT: return "int";
    case CUTUNE__V_FLOAT: return "float";
    case CUTUNE__V_BOOL: return "bool";
    case CUTUNE__V_STR: return "str";
    case CUTUNE__V_LIST: return "list";
    case CUTUNE__V_NONE: break;
    }
    return "NoneType";
}

static int is_intlike(const cutune__value *v)
{
    return v->type == CUTUNE__V_INT || v->type == CUTUNE__V_BOOL;
}

static int is_number(const cutune__value *v)
{
    return is_intlike(v) || v->type == CUTUNE__V_FLOAT;
}

static double as_double(const cutune__value *v)
{
    return v->type == CUTUNE__V_FLOAT ? v->u.f : (double)v->u.i;
}

static void set_int(cutune__value *v, int64_t i)
{
    v->type = CUTUNE__V_INT;
    v->u.i = i;
}

static void set_float(cutune__value *v, double f)
{
    v->type = CUTUNE__V_FLOAT;
    v->u.f = f;
}

static void set_bool(cutune__value *v, int b)
{
    v->type = CUTUNE__V_BOOL;
    v->u.i = b != 0;
}

static void set_empty_list(cutune__value *v)
{
    v->type = CUTUNE__V_LIST;
    v->u.list.items = NULL;
    v->u.list.n = 0;
}

void cutune__value_clear(cutune__value *v)
{
    if (!v)
        return;
    if (v->type == CUTUNE__V_STR) {
        free(v->u.s);
    } else if (v->type == CUTUNE__V_LIST) {
        for (size_t i = 0; i < v->u.list.n; i++)
            cutune__value_clear(&v->u.list.items[i]);
        free(v->u.list.items);
    }
    v->type = CUTUNE__V_NONE;
    v->u.i = 0;
}

static char *dup_bytes(const char *s, size_t n)
{
    char *d = malloc(n + 1);
    if (d) {
        if (n)
            memcpy(d, s, n);
        d[n] = '\0';
    }
    return d;
}

int cutune__value_copy(cutune__value *dst, const cutune__value *src)
{
    if (src->type == CUTUNE__V_STR) {
        char *s = dup_bytes(src->u.s, strlen(src->u.s));
        if (!s) {
            dst->type = CUTUNE__V_NONE;
            return -1;
        }
        dst->type = CUTUNE__V_STR;
        dst->u.s = s;
        return 0;
    }
    if (src->type != CUTUNE__V_LIST) {
        *dst = *src;
        return 0;
    }
    size_t n = src->u.list.n;
    cutune__value *items = NULL;
    if (n) {
        items = malloc(n * sizeof *items);
        if (!items) {
            dst->type = CUTUNE__V_NONE;
            return -1;
        }
        for (size_t i = 0; i < n; i++) {
            if (cutune__value_copy(&items[i], &src->u.list.items[i]) != 0) {
                while (i--)
                    cutune__value_clear(&items[i]);
                free(items);
                dst->type = CUTUNE__V_NONE;
                return -1;
            }
        }
    }
    dst->type = CUTUNE__V_LIST;
    dst->u.list.items = items;
    dst->u.list.n = n;
    return 0;
}

int cutune__value_truthy(const cutune__value *v)
{
    switch (v->type) {
    case CUTUNE__V_INT:
    case CUTUNE__V_BOOL: return v->u.i != 0;
    case CUTUNE__V_FLOAT: return v->u.f != 0.0;
    case CUTUNE__V_STR: return v->u.s[0] != '\0';
    case CUTUNE__V_LIST: return v->u.list.n != 0;
    case CUTUNE__V_NONE: break;
    }
    return 0;
}

/* Python compares ints and floats exactly; converting the int to double
 * would make 2**53+1 == 2.0**53. Returns -1, 0, 1, or 2 when unordered
 * (NaN). */
static int cmp_int_float(int64_t i, double f)
{
    if (isnan(f))
        return 2;
    if (f >= 0x1p63)
        return -1;
    if (f < -0x1p63)
        return 1;
    double t = trunc(f);
    int64_t ti = (int64_t)t; /* in range: -2**63 <= t < 2**63 */
    if (i < ti)
        return -1;
    if (i > ti)
        return 1;
    double frac = f - t;
    return frac > 0 ? -1 : frac < 0 ? 1 : 0;
}

static int num_cmp(const cutune__value *a, const cutune__value *b)
{
    if (is_intlike(a) && is_intlike(b))
        return a->u.i < b->u.i ? -1 : a->u.i > b->u.i;
    if (is_intlike(a))
        return cmp_int_float(a->u.i, b->u.f);
    if (is_intlike(b)) {
        int r = cmp_int_float(b->u.i, a->u.f);
        return r == 2 ? 2 : -r;
    }
    if (isnan(a->u.f) || isnan(b->u.f))
        return 2;
    return a->u.f < b->u.f ? -1 : a->u.f > b->u.f;
}

int cutune__value_equal(const cutune__value *a, const cutune__value *b)
{
    if (is_number(a) && is_number(b))
        return num_cmp(a, b) == 0;
    if (a->type != b->type)
        return 0;
    switch (a->type) {
    case CUTUNE__V_STR: return strcmp(a->u.s, b->u.s) == 0;
    case CUTUNE__V_LIST:
        if (a->u.list.n != b->u.list.n)
            return 0;
        for (size_t i = 0; i < a->u.list.n; i++)
            if (!cutune__value_equal(&a->u.list.items[i], &b->u.list.items[i]))
                return 0;
        return 1;
    default: return 1; /* NONE; numbers handled above */
    }
}

/* ---- text ---- */

typedef struct sbuf {
    char *p;
    size_t n, cap;
    int oom;
} sbuf;

static void sb_add(sbuf *b, const char *s, size_t n)
{
    if (b->oom)
        return;
    if (b->cap - b->n <= n) {
        size_t cap = b->cap ? b->cap : 32;
        while (cap - b->n <= n) {
            if (cap > SIZE_MAX / 2) {
                b->oom = 1;
                return;
            }
            cap *= 2;
        }
        char *p = realloc(b->p, cap);
        if (!p) {
            b->oom = 1;
            return;
        }
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = '\0';
}

static void sb_str(sbuf *b, const char *s)
{
    sb_add(b, s, strlen(s));
}

/* Python's repr(float): the shortest digits that read back to the same
 * double, in fixed notation for exponents -4..15 and scientific otherwise,
 * with ".0" on integral values. */
static void format_double(double d, char out[40])
{
    if (isnan(d)) {
        strcpy(out, "nan");
        return;
    }
    if (isinf(d)) {
        strcpy(out, d < 0 ? "-inf" : "inf");
        return;
    }
    if (d == 0) {
        strcpy(out, signbit(d) ? "-0.0" : "0.0");
        return;
    }
    char sci[40];
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(sci, sizeof sci, "%.*e", prec - 1, d);
        /* snprintf and strtod share the locale, so the round trip holds
         * whatever the decimal point is. */
        if (strtod(sci, NULL) == d)
            break;
    }
    /* Pull sign, digits and exponent out of "-d.ddde+XX". */
    char digits[24];
    size_t nd = 0;
    const char *s = sci;
    int neg = 0;
    if (*s == '-') {
        neg = 1;
        s++;
    }
    for (; *s && *s != 'e'; s++)
        if (*s >= '0' && *s <= '9' && nd < sizeof digits - 1)
            digits[nd++] = *s;
    int exp10 = *s == 'e' ? atoi(s + 1) : 0;
    while (nd > 1 && digits[nd - 1] == '0')
        nd--;
    digits[nd] = '\0';

    char *o = out;
    if (neg)
        *o++ = '-';
    if (exp10 >= -4 && exp10 < 16) {
        if (exp10 < 0) {
            *o++ = '0';
            *o++ = '.';
            for (int k = 0; k < -exp10 - 1; k++)
                *o++ = '0';
            memcpy(o, digits, nd);
            o += nd;
        } else {
            size_t ip = (size_t)exp10 + 1;
            for (size_t k = 0; k < ip; k++)
                *o++ = k < nd ? digits[k] : '0';
            *o++ = '.';
            if (nd > ip) {
                memcpy(o, digits + ip, nd - ip);
                o += nd - ip;
            } else {
                *o++ = '0';
            }
        }
        *o = '\0';
    } else {
        *o++ = digits[0];
        if (nd > 1) {
            *o++ = '.';
            memcpy(o, digits + 1, nd - 1);
            o += nd - 1;
        }
        snprintf(o, 16, "e%c%02d", exp10 < 0 ? '-' : '+',
                 exp10 < 0 ? -exp10 : exp10);
    }
}

static void sb_repr_str(sbuf *b, const char *s)
{
    char q = (strchr(s, '\'') && !strchr(s, '"')) ? '"' : '\'';
    sb_add(b, &q, 1);
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        char esc[8];
        if (ch == '\\' || ch == (unsigned char)q) {
            esc[0] = '\\';
            esc[1] = (char)ch;
            sb_add(b, esc, 2);
        } else if (ch == '\n') {
            sb_add(b, "\\n", 2);
        } else if (ch == '\t') {
            sb_add(b, "\\t", 2);
        } else if (ch == '\r') {
            sb_add(b, "\\r", 2);
        } else if (ch < 0x20 || ch == 0x7f) {
            snprintf(esc, sizeof esc, "\\x%02x", ch);
            sb_str(b, esc);
        } else {
            sb_add(b, s, 1);
        }
    }
    sb_add(b, &q, 1);
}

static void sb_value(sbuf *b, const cutune__value *v, int quoted)
{
    char num[40];
    switch (v->type) {
    case CUTUNE__V_INT:
        snprintf(num, sizeof num, "%lld", (long long)v->u.i);
        sb_str(b, num);
        break;
    case CUTUNE__V_FLOAT:
        format_double(v->u.f, num);
        sb_str(b, num);
        break;
    case CUTUNE__V_BOOL: sb_str(b, v->u.i ? "True" : "False"); break;
    case CUTUNE__V_STR:
        if (quoted)
            sb_repr_str(b, v->u.s);
        else
            sb_str(b, v->u.s);
        break;
    case CUTUNE__V_LIST:
        sb_add(b, "[", 1);
        for (size_t i = 0; i < v->u.list.n; i++) {
            if (i)
                sb_add(b, ", ", 2);
            sb_value(b, &v->u.list.items[i], 1);
        }
        sb_add(b, "]", 1);
        break;
    case CUTUNE__V_NONE: sb_str(b, "None"); break;
    }
}

char *cutune__value_to_text(const cutune__value *v)
{
    sbuf b = {0};
    sb_add(&b, "", 0);
    sb_value(&b, v, 0);
    if (b.oom) {
        free(b.p);
        return NULL;
    }
    return b.p;
}

/* ------------------------------------------------------------------ */
/* Tree                                                                */

enum node_kind {
    N_LIT,
    N_NAME, /* before resolution */
    N_VAR,  /* free name: index into the caller's vars */
    N_LOCAL, /* comprehension variable: slot in the evaluation's locals */
    N_NEG,
    N_POS,
    N_NOT,
    N_ARITH, /* left-associative chain of + - * / // % (or one **) */
    N_CMP,   /* comparison chain */
    N_AND,
    N_OR,
    N_COND,
    N_LIST,
    N_COMP,
    N_INDEX,
    N_CALL
};

enum op {
    OP_NONE,
    OP_ADD,
    OP_SUB,
    OP_MUL,
    OP_DIV,
    OP_FLOORDIV,
    OP_MOD,
    OP_POW,
    OP_EQ,
    OP_NE,
    OP_LT,
    OP_LE,
    OP_GT,
    OP_GE,
    OP_IN,
    OP_NOTIN
};

static const char *const op_text[] = {
    "?", "+", "-", "*", "/", "//", "%", "**", "==", "!=",
    "<", "<=", ">", ">=", "in", "not in"};

enum builtin { B_RANGE, B_LIST, B_LEN, B_MAX, B_MIN };

static const char *const builtin_names[] = {"range", "list", "len", "max",
                                            "min"};

typedef struct node node;

/* Chains are flat so that `a+b+c+...` with thousands of terms costs no
 * depth. */
typedef struct operand {
    node *e;
    int op;          /* the operator before e; unused for the first */
    size_t pos, len; /* that operator's token */
} operand;

typedef struct clause {
    node *e; /* the iterable of a `for`, the condition of an `if` */
    int is_for;
    size_t slot;
    size_t pos, len; /* the target name of a `for` */
} clause;

struct node {
    int kind;
    int fn; /* N_CALL */
    int height;
    size_t pos, len; /* the token errors point at */
    node *next_lit;  /* every N_LIT, so their values can be cleared */
    union {
        cutune__value lit;
        size_t index;
        node *kid[3]; /* unary: [0]; index: [0][[1]]; cond: [0] if [1] else [2] */
        struct {
            node **v;
            size_t n;
        } seq;
        struct {
            operand *v;
            size_t n;
        } chain;
        struct {
            node *elem;
            clause *v;
            size_t n;
        } comp;
    } u;
};

typedef struct chunk {
    struct chunk *next;
    size_t used, cap;
    max_align_t data[];
} chunk;

struct cutune__expr {
    char *text;
    size_t max_list;
    node *root;
    chunk *arena;
    node *lits;
    size_t n_locals;
    char **names;
    size_t *name_pos;
    size_t n_names, cap_names;
};

static void *arena_alloc(chunk **arena, size_t size)
{
    const size_t align = alignof(max_align_t);
    if (size > SIZE_MAX / 4)
        return NULL;
    size = (size + align - 1) / align * align;
    chunk *c = *arena;
    if (!c || c->cap - c->used < size) {
        size_t cap = size > 4096 ? size : 4096;
        c = malloc(sizeof *c + cap);
        if (!c)
            return NULL;
        c->next = *arena;
        c->used = 0;
        c->cap = cap;
        *arena = c;
    }
    void *p = (char *)c->data + c->used;
    c->used += size;
    memset(p, 0, size);
    return p;
}

static void arena_free(chunk *c)
{
    while (c) {
        chunk *next = c->next;
        free(c);
        c = next;
    }
}

void cutune__expr_free(cutune__expr *e)
{
    if (!e)
        return;
    for (node *n = e->lits; n; n = n->next_lit)
        cutune__value_clear(&n->u.lit);
    arena_free(e->arena);
    for (size_t i = 0; i < e->n_names; i++)
        free(e->names[i]);
    free(e->names);
    free(e->name_pos);
    free(e->text);
    free(e);
}

const char *cutune__expr_text(const cutune__expr *e)
{
    return e ? e->text : NULL;
}

size_t cutune__expr_name_count(const cutune__expr *e)
{
    return e ? e->n_names : 0;
}

const char *cutune__expr_name(const cutune__expr *e, size_t i)
{
    return e && i < e->n_names ? e->names[i] : NULL;
}

/* ------------------------------------------------------------------ */
/* Lexer                                                               */

enum tok_type {
    T_EOF,
    T_INT,
    T_FLOAT,
    T_STR,
    T_NAME,
    T_LPAR,
    T_RPAR,
    T_LBR,
    T_RBR,
    T_COMMA,
    T_PLUS,
    T_MINUS,
    T_STAR,
    T_SLASH,
    T_DSLASH,
    T_PERCENT,
    T_POW,
    T_EQ,
    T_NE,
    T_LT,
    T_LE,
    T_GT,
    T_GE,
    T_AND,
    T_OR,
    T_NOT,
    T_IN,
    T_IF,
    T_ELSE,
    T_FOR,
    T_TRUE,
    T_FALSE,
    T_NONE
};

typedef struct tok {
    int type;
    size_t pos, len;
} tok;

typedef struct parser {
    const char *text;
    size_t len;
    tok cur;
    cutune__expr *e;
    cutune__expr_error *err;
    int depth;
} parser;

static int is_alpha(int ch)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || ch == '_';
}

static int is_digit(int ch)
{
    return ch >= '0' && ch <= '9';
}

static int is_alnum(int ch)
{
    return is_alpha(ch) || is_digit(ch);
}

static int perror_at(parser *p, size_t pos, size_t len, const char *fmt,
                     ...) PRINTF_LIKE(4, 5);

static int perror_at(parser *p, size_t pos, size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    verror(p->err, p->text, pos, len, fmt, ap);
    va_end(ap);
    return -1;
}

static int lex_number(parser *p, size_t pos, tok *t)
{
    const char *s = p->text;
    size_t i = pos;
    t->type = T_INT;
    if (s[i] == '0' && (s[i + 1] == 'x' || s[i + 1] == 'X' || s[i + 1] == 'o' ||
                        s[i + 1] == 'O' || s[i + 1] == 'b' || s[i + 1] == 'B')) {
        i += 2;
        while (is_alnum((unsigned char)s[i]))
            i++;
    } else {
        while (is_digit((unsigned char)s[i]))
            i++;
        if (s[i] == '.') {
            t->type = T_FLOAT;
            i++;
            while (is_digit((unsigned char)s[i]))
                i++;
        }
        if (s[i] == 'e' || s[i] == 'E') {
            size_t j = i + 1;
            if (s[j] == '+' || s[j] == '-')
                j++;
            if (is_digit((unsigned char)s[j])) {
                t->type = T_FLOAT;
                i = j;
                while (is_digit((unsigned char)s[i]))
                    i++;
            }
        }
        if (is_alnum((unsigned char)s[i])) {
            while (is_alnum((unsigned char)s[i]))
                i++;
            return perror_at(p, pos, i - pos, "invalid number");
        }
    }
    t->pos = pos;
    t->len = i - pos;
    return 0;
}

static const struct {
    const char *word;
    int type;
} keywords[] = {
    {"and", T_AND},   {"or", T_OR},     {"not", T_NOT},
    {"in", T_IN},     {"if", T_IF},     {"else", T_ELSE},
    {"for", T_FOR},   {"True", T_TRUE}, {"False", T_FALSE},
    {"None", T_NONE},
};

/* Python keywords we do not implement; as names they would silently become
 * free variables. */
static const char *const reserved[] = {
    "is", "lambda", "def", "class", "return", "yield", "import", "from",
    "as", "with", "while", "pass", "break", "continue", "del", "global",
    "nonlocal", "assert", "raise", "try", "except", "finally", "elif",
    "async", "await"};

static int word_is(const char *s, size_t n, const char *w)
{
    return strlen(w) == n && memcmp(s, w, n) == 0;
}

static int lex(parser *p, size_t pos, tok *t)
{
    const char *s = p->text;
    while (s[pos] == ' ' || s[pos] == '\t' || s[pos] == '\n' ||
           s[pos] == '\r' || s[pos] == '\f' || s[pos] == '\v')
        pos++;
    t->pos = pos;
    t->len = 1;
    unsigned char ch = (unsigned char)s[pos];
    if (ch == '\0') {
        t->type = T_EOF;
        t->len = 0;
        return 0;
    }
    if (is_alpha(ch)) {
        size_t i = pos;
        while (is_alnum((unsigned char)s[i]))
            i++;
        t->len = i - pos;
        t->type = T_NAME;
        for (size_t k = 0; k < sizeof keywords / sizeof keywords[0]; k++)
            if (word_is(s + pos, t->len, keywords[k].word))
                t->type = keywords[k].type;
        return 0;
    }
    if (is_digit(ch) || (ch == '.' && is_digit((unsigned char)s[pos + 1])))
        return lex_number(p, pos, t);
    if (ch == '\'' || ch == '"') {
        size_t i = pos + 1;
        while (s[i] && s[i] != (char)ch && s[i] != '\n')
            i += (s[i] == '\\' && s[i + 1]) ? 2 : 1;
        if (s[i] != (char)ch)
            return perror_at(p, pos, 1, "unterminated string");
        t->type = T_STR;
        t->len = i + 1 - pos;
        return 0;
    }
    static const struct {
        const char *s;
        int type;
    } ops[] = {
        {"**", T_POW}, {"//", T_DSLASH}, {"==", T_EQ},     {"!=", T_NE},
        {"<=", T_LE},  {">=", T_GE},     {"+", T_PLUS},    {"-", T_MINUS},
        {"*", T_STAR}, {"/", T_SLASH},   {"%", T_PERCENT}, {"<", T_LT},
        {">", T_GT},   {"(", T_LPAR},    {")", T_RPAR},    {"[", T_LBR},
        {"]", T_RBR},  {",", T_COMMA},
    };
    for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
        size_t n = strlen(ops[k].s);
        if (strncmp(s + pos, ops[k].s, n) == 0) {
            t->type = ops[k].type;
            t->len = n;
            return 0;
        }
    }
    size_t n = 1;
    if (ch >= 0xC0)
        while (n < 4 && ((unsigned char)s[pos + n] & 0xC0) == 0x80)
            n++;
    return perror_at(p, pos, n, "unexpected character");
}

static int advance(parser *p)
{
    return lex(p, p->cur.pos + p->cur.len, &p->cur);
}

static int unexpected(parser *p)
{
    if (p->cur.type == T_EOF)
        return perror_at(p, p->cur.pos, 0, "unexpected end of expression");
    return perror_at(p, p->cur.pos, p->cur.len, "unexpected token");
}

/* A closing bracket is due: either it is there, or the error names the
 * bracket left open when the text ran out. */
static int expect_close(parser *p, int type, const tok *open)
{
    if (p->cur.type == type)
        return advance(p);
    if (p->cur.type == T_EOF)
        return perror_at(p, open->pos, open->len, "'%c' was never closed",
                         p->text[open->pos]);
    return unexpected(p);
}

static int enter(parser *p)
{
    if (++p->depth > MAX_NESTING)
        return perror_at(p, p->cur.pos, p->cur.len,
                         "expression nested too deeply");
    return 0;
}

static node *new_node(parser *p, int kind, size_t pos, size_t len)
{
    node *n = arena_alloc(&p->e->arena, sizeof *n);
    if (!n) {
        set_oom(p->err);
        return NULL;
    }
    n->kind = kind;
    n->pos = pos;
    n->len = len;
    n->height = 1;
    if (kind == N_LIT) {
        n->next_lit = p->e->lits;
        p->e->lits = n;
    }
    return n;
}

/* Grows an arena array by doubling; the old copy stays in the arena.
 * Returns the array to use from now on, NULL when memory ran out. */
static void *grow(parser *p, void *v, size_t n, size_t *cap, size_t elsize)
{
    if (n < *cap)
        return v;
    size_t ncap = *cap ? *cap * 2 : 4;
    void *nv = arena_alloc(&p->e->arena, ncap * elsize);
    if (!nv) {
        set_oom(p->err);
        return NULL;
    }
    if (n)
        memcpy(nv, v, n * elsize);
    *cap = ncap;
    return nv;
}

static int set_height(parser *p, node *n, int kids_height)
{
    n->height = kids_height + 1;
    if (n->height > MAX_NESTING)
        return perror_at(p, n->pos, n->len, "expression nested too deeply");
    return 0;
}

static int max_int(int a, int b)
{
    return a > b ? a : b;
}

static node *parse_expr(parser *p);
static node *parse_or(parser *p);
static node *parse_factor(parser *p);

static node *parse_int_literal(parser *p)
{
    const char *s = p->text + p->cur.pos;
    size_t n = p->cur.len;
    uint64_t v = 0, base = 10;
    size_t i = 0;
    if (n > 1 && s[0] == '0' && is_alpha((unsigned char)s[1])) {
        char b = s[1];
        base = (b == 'x' || b == 'X') ? 16 : (b == 'o' || b == 'O') ? 8 : 2;
        i = 2;
        if (i == n) {
            perror_at(p, p->cur.pos, n, "invalid number");
            return NULL;
        }
    } else if (n > 1 && s[0] == '0') {
        for (size_t k = 0; k < n; k++)
            if (s[k] != '0') {
                perror_at(p, p->cur.pos, n,
                          "leading zeros in decimal integer literals are "
                          "not permitted");
                return NULL;
            }
    }
    for (; i < n; i++) {
        unsigned ch = (unsigned char)s[i];
        uint64_t d = is_digit((int)ch) ? ch - '0'
                     : (ch >= 'a' && ch <= 'f') ? ch - 'a' + 10
                     : (ch >= 'A' && ch <= 'F') ? ch - 'A' + 10
                                                : 99;
        if (d >= base) {
            perror_at(p, p->cur.pos, n, "invalid number");
            return NULL;
        }
        if (v > ((uint64_t)INT64_MAX - d) / base) {
            perror_at(p, p->cur.pos, n, "integer literal too large");
            return NULL;
        }
        v = v * base + d;
    }
    node *nd = new_node(p, N_LIT, p->cur.pos, n);
    if (nd)
        set_int(&nd->u.lit, (int64_t)v);
    return nd;
}

/* strtod reads the locale's decimal point, Python's is always '.'. */
static node *parse_float_literal(parser *p)
{
    char radix[16];
    snprintf(radix, sizeof radix, "%.1f", 0.5);
    size_t rlen = strlen(radix) - 2; /* between "0" and "5" */
    const char *s = p->text + p->cur.pos;
    size_t n = p->cur.len;
    char *buf = malloc(n + rlen + 1);
    if (!buf) {
        set_oom(p->err);
        return NULL;
    }
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '.') {
            memcpy(buf + o, radix + 1, rlen);
            o += rlen;
        } else {
            buf[o++] = s[i];
        }
    }
    buf[o] = '\0';
    double d = strtod(buf, NULL);
    free(buf);
    node *nd = new_node(p, N_LIT, p->cur.pos, n);
    if (nd)
        set_float(&nd->u.lit, d);
    return nd;
}

static node *parse_str_literal(parser *p)
{
    const char *s = p->text + p->cur.pos + 1;
    size_t n = p->cur.len - 2;
    char *out = malloc(n + 1);
    if (!out) {
        set_oom(p->err);
        return NULL;
    }
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] != '\\' || i + 1 == n) {
            out[o++] = s[i];
            continue;
        }
        char c = s[++i];
        switch (c) {
        case 'n': out[o++] = '\n'; break;
        case 't': out[o++] = '\t'; break;
        case 'r': out[o++] = '\r'; break;
        case '\\':
        case '\'':
        case '"': out[o++] = c; break;
        default: /* Python keeps unknown escapes as written */
            out[o++] = '\\';
            out[o++] = c;
        }
    }
    out[o] = '\0';
    node *nd = new_node(p, N_LIT, p->cur.pos, p->cur.len);
    if (!nd) {
        free(out);
        return NULL;
    }
    nd->u.lit.type = CUTUNE__V_STR;
    nd->u.lit.u.s = out;
    return nd;
}

/* Parses the `for`/`if` clauses after `elem`; the current token is `for`. */
static node *parse_comprehension(parser *p, node *elem, size_t pos,
                                 size_t len)
{
    node *n = new_node(p, N_COMP, pos, len);
    if (!n)
        return NULL;
    n->u.comp.elem = elem;
    size_t cap = 0;
    int h = elem->height;
    while (p->cur.type == T_FOR || (p->cur.type == T_IF && n->u.comp.n)) {
        clause *cv = grow(p, n->u.comp.v, n->u.comp.n, &cap, sizeof *cv);
        if (!cv)
            return NULL;
        n->u.comp.v = cv;
        clause *c = &cv[n->u.comp.n];
        c->is_for = p->cur.type == T_FOR;
        if (advance(p))
            return NULL;
        if (c->is_for) {
            if (p->cur.type != T_NAME) {
                unexpected(p);
                return NULL;
            }
            c->pos = p->cur.pos;
            c->len = p->cur.len;
            c->slot = p->e->n_locals++;
            if (advance(p))
                return NULL;
            if (p->cur.type != T_IN) {
                unexpected(p);
                return NULL;
            }
            if (advance(p))
                return NULL;
        }
        c->e = parse_or(p);
        if (!c->e)
            return NULL;
        h = max_int(h, c->e->height);
        n->u.comp.n++;
    }
    /* Each clause is one more level of recursion when evaluating. */
    if (set_height(p, n, h + (int)(n->u.comp.n > MAX_NESTING ? MAX_NESTING
                                                             : n->u.comp.n)))
        return NULL;
    return n;
}

static node *parse_list(parser *p)
{
    tok open = p->cur;
    if (advance(p))
        return NULL;
    node *n = new_node(p, N_LIST, open.pos, open.len);
    if (!n)
        return NULL;
    size_t cap = 0;
    int h = 0, all_lit = 1;
    while (p->cur.type != T_RBR) {
        node *item = parse_expr(p);
        if (!item)
            return NULL;
        if (n->u.seq.n == 0 && p->cur.type == T_FOR) {
            node *c = parse_comprehension(p, item, open.pos, open.len);
            if (!c || expect_close(p, T_RBR, &open))
                return NULL;
            return c;
        }
        node **v = grow(p, n->u.seq.v, n->u.seq.n, &cap, sizeof *v);
        if (!v)
            return NULL;
        n->u.seq.v = v;
        v[n->u.seq.n++] = item;
        h = max_int(h, item->height);
        all_lit &= item->kind == N_LIT;
        if (p->cur.type != T_COMMA)
            break;
        if (advance(p))
            return NULL;
    }
    if (expect_close(p, T_RBR, &open))
        return NULL;
    if (!all_lit)
        return set_height(p, n, h) ? NULL : n;

    /* A list of constants is built once here rather than per evaluation,
     * so `x in [1, 2, 4]` costs no allocation. */
    node *lit = new_node(p, N_LIT, open.pos, open.len);
    if (!lit)
        return NULL;
    set_empty_list(&lit->u.lit);
    if (n->u.seq.n) {
        cutune__value *items = malloc(n->u.seq.n * sizeof *items);
        if (!items) {
            set_oom(p->err);
            return NULL;
        }
        for (size_t i = 0; i < n->u.seq.n; i++) {
            items[i] = n->u.seq.v[i]->u.lit;
            n->u.seq.v[i]->u.lit.type = CUTUNE__V_NONE;
        }
        lit->u.lit.u.list.items = items;
        lit->u.lit.u.list.n = n->u.seq.n;
    }
    return lit;
}

static node *parse_call(parser *p)
{
    tok name = p->cur;
    int fn = -1;
    for (int k = 0; k < (int)(sizeof builtin_names / sizeof *builtin_names); k++)
        if (word_is(p->text + name.pos, name.len, builtin_names[k]))
            fn = k;
    if (fn < 0) {
        perror_at(p, name.pos, name.len, "unknown function '%.*s'",
                  (int)(name.len > 64 ? 64 : name.len), p->text + name.pos);
        return NULL;
    }
    if (advance(p))
        return NULL;
    tok open = p->cur;
    if (advance(p))
        return NULL;
    node *n = new_node(p, N_CALL, name.pos, name.len);
    if (!n)
        return NULL;
    n->fn = fn;
    size_t cap = 0;
    int h = 0;
    while (p->cur.type != T_RPAR) {
        node *arg = parse_expr(p);
        if (!arg)
            return NULL;
        /* max(x for x in ...): a generator argument, built as a list. */
        if (n->u.seq.n == 0 && p->cur.type == T_FOR) {
            arg = parse_comprehension(p, arg, arg->pos, arg->len);
            if (!arg)
                return NULL;
            if (p->cur.type != T_RPAR) {
                expect_close(p, T_RPAR, &open);
                return NULL;
            }
        }
        node **v = grow(p, n->u.seq.v, n->u.seq.n, &cap, sizeof *v);
        if (!v)
            return NULL;
        n->u.seq.v = v;
        v[n->u.seq.n++] = arg;
        h = max_int(h, arg->height);
        if (p->cur.type != T_COMMA)
            break;
        if (advance(p))
            return NULL;
    }
    if (expect_close(p, T_RPAR, &open))
        return NULL;
    size_t argc = n->u.seq.n;
    const char *fname = builtin_names[fn];
    int bad = 0;
    switch (fn) {
    case B_RANGE:
        if ((bad = argc < 1 || argc > 3))
            perror_at(p, name.pos, name.len,
                      "%s() takes 1 to 3 arguments (%zu given)", fname, argc);
        break;
    case B_LIST:
        if ((bad = argc > 1))
            perror_at(p, name.pos, name.len,
                      "%s() takes at most 1 argument (%zu given)", fname,
                      argc);
        break;
    case B_LEN:
        if ((bad = argc != 1))
            perror_at(p, name.pos, name.len,
                      "%s() takes exactly one argument (%zu given)", fname,
                      argc);
        break;
    default:
        if ((bad = argc < 1))
            perror_at(p, name.pos, name.len,
                      "%s() expects at least 1 argument (0 given)", fname);
    }
    if (bad || set_height(p, n, h))
        return NULL;
    return n;
}

static node *parse_atom(parser *p)
{
    node *n = NULL;
    switch (p->cur.type) {
    case T_INT: n = parse_int_literal(p); break;
    case T_FLOAT: n = parse_float_literal(p); break;
    case T_STR: n = parse_str_literal(p); break;
    case T_TRUE:
    case T_FALSE:
    case T_NONE:
        n = new_node(p, N_LIT, p->cur.pos, p->cur.len);
        if (n && p->cur.type != T_NONE)
            set_bool(&n->u.lit, p->cur.type == T_TRUE);
        break;
    case T_NAME: {
        for (size_t k = 0; k < sizeof reserved / sizeof *reserved; k++)
            if (word_is(p->text + p->cur.pos, p->cur.len, reserved[k])) {
                perror_at(p, p->cur.pos, p->cur.len,
                          "unsupported keyword '%s'", reserved[k]);
                return NULL;
            }
        tok next;
        if (lex(p, p->cur.pos + p->cur.len, &next))
            return NULL;
        if (next.type == T_LPAR)
            return parse_call(p);
        n = new_node(p, N_NAME, p->cur.pos, p->cur.len);
        break;
    }
    case T_LPAR: {
        tok open = p->cur;
        if (advance(p))
            return NULL;
        if (p->cur.type == T_RPAR) {
            perror_at(p, open.pos, 2, "tuples are not supported");
            return NULL;
        }
        n = parse_expr(p);
        if (!n)
            return NULL;
        if (p->cur.type == T_COMMA) {
            perror_at(p, p->cur.pos, p->cur.len, "tuples are not supported");
            return NULL;
        }
        if (expect_close(p, T_RPAR, &open))
            return NULL;
        return n;
    }
    case T_LBR: return parse_list(p);
    default: unexpected(p); return NULL;
    }
    if (n && advance(p))
        return NULL;
    return n;
}

static node *parse_postfix(parser *p)
{
    node *n = parse_atom(p);
    while (n && p->cur.type == T_LBR) {
        tok open = p->cur;
        if (advance(p))
            return NULL;
        node *idx = parse_expr(p);
        if (!idx || expect_close(p, T_RBR, &open))
            return NULL;
        node *ix = new_node(p, N_INDEX, open.pos, open.len);
        if (!ix)
            return NULL;
        ix->u.kid[0] = n;
        ix->u.kid[1] = idx;
        if (set_height(p, ix, max_int(n->height, idx->height)))
            return NULL;
        n = ix;
    }
    return n;
}

static node *make_chain(parser *p, int kind, node *first, const tok *op_tok)
{
    node *n = new_node(p, kind, op_tok->pos, op_tok->len);
    if (!n)
        return NULL;
    n->u.chain.v = arena_alloc(&p->e->arena, 4 * sizeof(operand));
    if (!n->u.chain.v) {
        set_oom(p->err);
        return NULL;
    }
    n->u.chain.v[0].e = first;
    n->u.chain.n = 1;
    n->height = first->height;
    return n;
}

static int chain_push(parser *p, node *n, size_t *cap, int op,
                      const tok *op_tok, node *e)
{
    if (*cap == 0)
        *cap = 4;
    operand *v = grow(p, n->u.chain.v, n->u.chain.n, cap, sizeof *v);
    if (!v)
        return -1;
    n->u.chain.v = v;
    operand *o = &v[n->u.chain.n++];
    o->e = e;
    o->op = op;
    o->pos = op_tok->pos;
    o->len = op_tok->len;
    if (e->height > n->height)
        n->height = e->height;
    return 0;
}

static node *parse_power(parser *p)
{
    node *base = parse_postfix(p);
    if (!base || p->cur.type != T_POW)
        return base;
    tok op = p->cur;
    size_t cap = 0;
    node *n = make_chain(p, N_ARITH, base, &op);
    if (!n || advance(p) || enter(p))
        return NULL;
    node *exp = parse_factor(p); /* right-associative, and 2**-1 is valid */
    p->depth--;
    if (!exp || chain_push(p, n, &cap, OP_POW, &op, exp) ||
        set_height(p, n, n->height))
        return NULL;
    return n;
}

static node *parse_factor(parser *p)
{
    if (p->cur.type != T_PLUS && p->cur.type != T_MINUS)
        return parse_power(p);
    tok op = p->cur;
    if (advance(p) || enter(p))
        return NULL;
    node *a = parse_factor(p);
    p->depth--;
    if (!a)
        return NULL;
    if (a->kind == N_LIT && is_number(&a->u.lit)) {
        /* Folding makes `[-1, 2]` a constant list; no literal is
         * INT64_MIN, so negating cannot overflow. */
        cutune__value *v = &a->u.lit;
        if (v->type == CUTUNE__V_FLOAT)
            v->u.f = op.type == T_MINUS ? -v->u.f : v->u.f;
        else
            set_int(v, op.type == T_MINUS ? -v->u.i : v->u.i);
        a->pos = op.pos;
        a->len = op.len;
        return a;
    }
    node *n = new_node(p, op.type == T_MINUS ? N_NEG : N_POS, op.pos, op.len);
    if (!n)
        return NULL;
    n->u.kid[0] = a;
    return set_height(p, n, a->height) ? NULL : n;
}

static int arith_op(int type, int term)
{
    if (term)
        return type == T_STAR      ? OP_MUL
               : type == T_SLASH   ? OP_DIV
               : type == T_DSLASH  ? OP_FLOORDIV
               : type == T_PERCENT ? OP_MOD
                                   : OP_NONE;
    return type == T_PLUS ? OP_ADD : type == T_MINUS ? OP_SUB : OP_NONE;
}

static node *parse_binary(parser *p, int term)
{
    node *first = term ? parse_factor(p) : parse_binary(p, 1);
    if (!first || arith_op(p->cur.type, term) == OP_NONE)
        return first;
    node *n = make_chain(p, N_ARITH, first, &p->cur);
    size_t cap = 0;
    while (n && arith_op(p->cur.type, term) != OP_NONE) {
        tok op = p->cur;
        if (advance(p))
            return NULL;
        node *e = term ? parse_factor(p) : parse_binary(p, 1);
        if (!e || chain_push(p, n, &cap, arith_op(op.type, term), &op, e))
            return NULL;
    }
    return n && !set_height(p, n, n->height) ? n : NULL;
}

/* Reads a comparison operator, consuming `not in` as one. Returns OP_NONE
 * when the current token is none. */
static int cmp_op(parser *p, tok *op)
{
    static const int map[][2] = {{T_EQ, OP_EQ}, {T_NE, OP_NE}, {T_LT, OP_LT},
                                 {T_LE, OP_LE}, {T_GT, OP_GT}, {T_GE, OP_GE},
                                 {T_IN, OP_IN}};
    *op = p->cur;
    for (size_t k = 0; k < sizeof map / sizeof map[0]; k++)
        if (p->cur.type == map[k][0])
            return map[k][1];
    if (p->cur.type == T_NOT) {
        tok next;
        if (lex(p, p->cur.pos + p->cur.len, &next) == 0 && next.type == T_IN) {
            op->len = next.pos + next.len - op->pos;
            return OP_NOTIN;
        }
    }
    return OP_NONE;
}

static node *parse_cmp(parser *p)
{
    node *first = parse_binary(p, 0);
    tok op;
    if (!first || cmp_op(p, &op) == OP_NONE)
        return first;
    node *n = make_chain(p, N_CMP, first, &op);
    size_t cap = 0;
    int code;
    while (n && (code = cmp_op(p, &op)) != OP_NONE) {
        if (advance(p) || (code == OP_NOTIN && advance(p)))
            return NULL;
        node *e = parse_binary(p, 0);
        if (!e || chain_push(p, n, &cap, code, &op, e))
            return NULL;
    }
    return n && !set_height(p, n, n->height) ? n : NULL;
}

static node *parse_not(parser *p)
{
    if (p->cur.type != T_NOT)
        return parse_cmp(p);
    tok op = p->cur;
    if (advance(p) || enter(p))
        return NULL;
    node *a = parse_not(p);
    p->depth--;
    if (!a)
        return NULL;
    node *n = new_node(p, N_NOT, op.pos, op.len);
    if (!n)
        return NULL;
    n->u.kid[0] = a;
    return set_height(p, n, a->height) ? NULL : n;
}

static node *parse_bool_chain(parser *p, int type)
{
    node *first = type == T_OR ? parse_bool_chain(p, T_AND) : parse_not(p);
    if (!first || p->cur.type != type)
        return first;
    node *n = new_node(p, type == T_OR ? N_OR : N_AND, p->cur.pos, p->cur.len);
    if (!n)
        return NULL;
    size_t cap = 0;
    int h = 0;
    node *e = first;
    for (;;) {
        node **v = grow(p, n->u.seq.v, n->u.seq.n, &cap, sizeof *v);
        if (!v)
            return NULL;
        n->u.seq.v = v;
        v[n->u.seq.n++] = e;
        h = max_int(h, e->height);
        if (p->cur.type != type)
            break;
        if (advance(p))
            return NULL;
        e = type == T_OR ? parse_bool_chain(p, T_AND) : parse_not(p);
        if (!e)
            return NULL;
    }
    return set_height(p, n, h) ? NULL : n;
}

static node *parse_or(parser *p)
{
    return parse_bool_chain(p, T_OR);
}

static node *parse_expr(parser *p)
{
    if (enter(p))
        return NULL;
    node *n = parse_or(p);
    if (n && p->cur.type == T_IF) {
        tok op = p->cur;
        node *c = NULL, *alt = NULL, *cond = NULL;
        if (advance(p) || !(c = parse_or(p)))
            return NULL;
        if (p->cur.type != T_ELSE) {
            unexpected(p);
            return NULL;
        }
        if (advance(p) || !(alt = parse_expr(p)))
            return NULL;
        if (!(cond = new_node(p, N_COND, op.pos, op.len)))
            return NULL;
        cond->u.kid[0] = n;
        cond->u.kid[1] = c;
        cond->u.kid[2] = alt;
        if (set_height(p, cond,
                       max_int(n->height, max_int(c->height, alt->height))))
            return NULL;
        n = cond;
    }
    p->depth--;
    return n;
}

/* ---- name resolution ---- */

/* Comprehension variables can only be told from free names once the whole
 * comprehension is parsed, since the element comes first; so names are
 * resolved in a second walk, in text order, so that free names are listed
 * by first appearance. */
typedef struct scope_entry {
    size_t pos, len, slot;
} scope_entry;

typedef struct resolver {
    cutune__expr *e;
    cutune__expr_error *err;
    scope_entry *stack;
    size_t n, cap;
} resolver;

static int scope_push(resolver *r, const clause *c)
{
    if (r->n == r->cap) {
        size_t cap = r->cap ? r->cap * 2 : 8;
        scope_entry *s = realloc(r->stack, cap * sizeof *s);
        if (!s) {
            set_oom(r->err);
            return -1;
        }
        r->stack = s;
        r->cap = cap;
    }
    r->stack[r->n].pos = c->pos;
    r->stack[r->n].len = c->len;
    r->stack[r->n].slot = c->slot;
    r->n++;
    return 0;
}

static int resolve_name(resolver *r, node *n)
{
    const char *text = r->e->text;
    for (size_t i = r->n; i-- > 0;) {
        const scope_entry *s = &r->stack[i];
        if (s->len == n->len && memcmp(text + s->pos, text + n->pos, n->len) == 0) {
            n->kind = N_LOCAL;
            n->u.index = s->slot;
            return 0;
        }
    }
    cutune__expr *e = r->e;
    for (size_t i = 0; i < e->n_names; i++) {
        if (word_is(text + n->pos, n->len, e->names[i])) {
            n->kind = N_VAR;
            n->u.index = i;
            return 0;
        }
    }
    if (e->n_names == e->cap_names) {
        size_t cap = e->cap_names ? e->cap_names * 2 : 8;
        char **names = realloc(e->names, cap * sizeof *names);
        if (!names) {
            set_oom(r->err);
            return -1;
        }
        e->names = names;
        size_t *pos = realloc(e->name_pos, cap * sizeof *pos);
        if (!pos) {
            set_oom(r->err);
            return -1;
        }
        e->name_pos = pos;
        e->cap_names = cap;
    }
    char *name = dup_bytes(text + n->pos, n->len);
    if (!name) {
        set_oom(r->err);
        return -1;
    }
    e->names[e->n_names] = name;
    e->name_pos[e->n_names] = n->pos;
    n->kind = N_VAR;
    n->u.index = e->n_names++;
    return 0;
}

static int resolve(resolver *r, node *n)
{
    switch (n->kind) {
    case N_NAME: return resolve_name(r, n);
    case N_NEG:
    case N_POS:
    case N_NOT: return resolve(r, n->u.kid[0]);
    case N_INDEX:
        return resolve(r, n->u.kid[0]) || resolve(r, n->u.kid[1]) ? -1 : 0;
    case N_COND:
        return resolve(r, n->u.kid[0]) || resolve(r, n->u.kid[1]) ||
                       resolve(r, n->u.kid[2])
                   ? -1
                   : 0;
    case N_ARITH:
    case N_CMP:
        for (size_t i = 0; i < n->u.chain.n; i++)
            if (resolve(r, n->u.chain.v[i].e))
                return -1;
        return 0;
    case N_AND:
    case N_OR:
    case N_LIST:
    case N_CALL:
        for (size_t i = 0; i < n->u.seq.n; i++)
            if (resolve(r, n->u.seq.v[i]))
                return -1;
        return 0;
    case N_COMP: {
        size_t base = r->n;
        int rc = 0;
        /* The element sees every target; a later one shadows an earlier. */
        for (size_t i = 0; i < n->u.comp.n && !rc; i++)
            if (n->u.comp.v[i].is_for)
                rc = scope_push(r, &n->u.comp.v[i]);
        if (!rc)
            rc = resolve(r, n->u.comp.elem);
        r->n = base;
        for (size_t i = 0; i < n->u.comp.n && !rc; i++) {
            rc = resolve(r, n->u.comp.v[i].e);
            if (!rc && n->u.comp.v[i].is_for)
                rc = scope_push(r, &n->u.comp.v[i]);
        }
        r->n = base;
        return rc;
    }
    default: return 0;
    }
}

cutune__expr *cutune__expr_parse(const char *text, size_t max_list,
                                 cutune__expr_error *err)
{
    if (!text) {
        set_error(err, NULL, 0, 0, "no expression");
        return NULL;
    }
    cutune__expr *e = calloc(1, sizeof *e);
    if (!e) {
        set_oom(err);
        return NULL;
    }
    e->max_list = max_list ? max_list : CUTUNE__EXPR_DEFAULT_MAX_LIST;
    e->text = dup_bytes(text, strlen(text));
    if (!e->text) {
        set_oom(err);
        free(e);
        return NULL;
    }
    parser p = {0};
    p.text = e->text;
    p.len = strlen(text);
    p.e = e;
    p.err = err;
    p.cur.pos = 0;
    p.cur.len = 0;
    if (lex(&p, 0, &p.cur))
        goto fail;
    if (p.cur.type == T_EOF) {
        perror_at(&p, 0, 0, "empty expression");
        goto fail;
    }
    e->root = parse_expr(&p);
    if (!e->root)
        goto fail;
    if (p.cur.type == T_RPAR || p.cur.type == T_RBR) {
        perror_at(&p, p.cur.pos, 1, "unmatched '%c'", p.text[p.cur.pos]);
        goto fail;
    }
    if (p.cur.type != T_EOF) {
        unexpected(&p);
        goto fail;
    }
    resolver r = {0};
    r.e = e;
    r.err = err;
    int rc = resolve(&r, e->root);
    free(r.stack);
    if (rc)
        goto fail;
    return e;
fail:
    cutune__expr_free(e);
    return NULL;
}

/* ------------------------------------------------------------------ */
/* Evaluation                                                          */

typedef struct ev_ctx {
    const cutune__expr *e;
    const cutune__value *vars;
    const cutune__value **locals;
    cutune__expr_error *err;
    size_t budget; /* list elements this evaluation may still create */
} ev_ctx;

static int ev_fail(ev_ctx *c, size_t pos, size_t len, const char *fmt, ...)
    PRINTF_LIKE(4, 5);

static int ev_fail(ev_ctx *c, size_t pos, size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    verror(c->err, c->e->text, pos, len, fmt, ap);
    va_end(ap);
    return -1;
}

static int ev_oom(ev_ctx *c)
{
    set_oom(c->err);
    return -1;
}

static int charge(ev_ctx *c, size_t pos, size_t len, size_t n)
{
    if (n > c->budget)
        return ev_fail(c, pos, len,
                       "evaluation builds more than %zu values in all",
                       c->e->max_list * WORK_FACTOR);
    c->budget -= n;
    return 0;
}

static size_t value_weight(const cutune__value *v)
{
    if (v->type == CUTUNE__V_STR)
        return strlen(v->u.s) / sizeof *v;
    if (v->type != CUTUNE__V_LIST)
        return 0;
    size_t w = v->u.list.n;
    for (size_t i = 0; i < v->u.list.n && w != SIZE_MAX; i++) {
        size_t k = value_weight(&v->u.list.items[i]);
        w = k > SIZE_MAX - w ? SIZE_MAX : w + k;
    }
    return w;
}

/* Deep copy that counts against the evaluation's budget. */
static int ev_copy(ev_ctx *c, size_t pos, size_t len, cutune__value *dst,
                   const cutune__value *src)
{
    dst->type = CUTUNE__V_NONE;
    if (charge(c, pos, len, value_weight(src)))
        return -1;
    return cutune__value_copy(dst, src) ? ev_oom(c) : 0;
}

/* Stores an evaluation result: moved when it was owned, copied when it
 * was borrowed. */
static int ev_take(ev_ctx *c, const node *n, cutune__value *dst,
                   cutune__value *tmp, const cutune__value *res)
{
    if (res == tmp) {
        *dst = *tmp;
        tmp->type = CUTUNE__V_NONE;
        return 0;
    }
    return ev_copy(c, n->pos, n->len, dst, res);
}

static int ev(ev_ctx *c, const node *n, cutune__value *tmp,
              const cutune__value **res);

/* Python's operators on int64 and double. The tree evaluator and compiled
 * programs (below) both call these, so they cannot disagree; each returns
 * AR_OK with the result, or why the operation fails. */
enum arith_status {
    AR_OK,
    AR_OVERFLOW,
    AR_DIV_ZERO,
    AR_MOD_ZERO,
    AR_ZERO_NEG_POW,
    AR_NEG_FRAC_POW,
    AR_FLOAT_OVERFLOW
};

static inline int py_floordiv(int64_t x, int64_t y, int64_t *r)
{
    if (y == 0)
        return AR_DIV_ZERO;
    if (x == INT64_MIN && y == -1)
        return AR_OVERFLOW;
    int64_t q = x / y;
    if (x % y != 0 && ((x < 0) != (y < 0)))
        q--;
    *r = q;
    return AR_OK;
}

static inline int py_mod(int64_t x, int64_t y, int64_t *r)
{
    if (y == 0)
        return AR_MOD_ZERO;
    if (y == -1) { /* INT64_MIN % -1 traps on x86 */
        *r = 0;
        return AR_OK;
    }
    int64_t m = x % y;
    if (m != 0 && ((m < 0) != (y < 0)))
        m += y;
    *r = m;
    return AR_OK;
}

/* x ** y for y >= 0. */
static inline int py_ipow(int64_t x, int64_t y, int64_t *out)
{
    int64_t r = 1;
    /* Squaring the base overflows only if the result would too, as long as
     * a higher exponent bit is still to come. */
    for (int64_t base = x, e = y; e;) {
        if ((e & 1) && __builtin_mul_overflow(r, base, &r))
            return AR_OVERFLOW;
        e >>= 1;
        if (e && __builtin_mul_overflow(base, base, &base))
            return AR_OVERFLOW;
    }
    *out = r;
    return AR_OK;
}

/* int ** negative int, which is a float. */
static inline int py_ipow_neg(int64_t x, int64_t y, double *r)
{
    if (x == 0)
        return AR_ZERO_NEG_POW;
    *r = pow((double)x, (double)y);
    return AR_OK;
}

static inline int py_truediv_int(int64_t x, int64_t y, double *r)
{
    if (y == 0)
        return AR_DIV_ZERO;
    *r = (double)x / (double)y;
    return AR_OK;
}

static inline int py_truediv(double x, double y, double *r)
{
    if (y == 0)
        return AR_DIV_ZERO;
    *r = x / y;
    return AR_OK;
}

/* Python's float // and %: the remainder takes the divisor's sign and the
 * quotient is floored, correcting fmod's rounding at the edges. */
static void float_divmod(double x, double y, double *q, double *r)
{
    double m = fmod(x, y);
    double d = (x - m) / y;
    if (m != 0) {
        if ((y < 0) != (m < 0)) {
            m += y;
            d -= 1.0;
        }
    } else {
        m = copysign(0.0, y);
    }
    double fd;
    if (d != 0) {
        fd = floor(d);
        if (d - fd > 0.5)
            fd += 1.0;
    } else {
        fd = copysign(0.0, x / y);
    }
    *q = fd;
    *r = m;
}

static inline int py_ffloordiv(double x, double y, double *r)
{
    double m;
    if (y == 0)
        return AR_DIV_ZERO;
    float_divmod(x, y, r, &m);
    return AR_OK;
}

static inline int py_fmod(double x, double y, double *r)
{
    double q;
    if (y == 0)
        return AR_MOD_ZERO;
    float_divmod(x, y, &q, r);
    return AR_OK;
}

static inline int py_fpow(double x, double y, double *out)
{
    if (x == 0 && y < 0)
        return AR_ZERO_NEG_POW;
    if (x < 0 && isfinite(x) && isfinite(y) && y != floor(y))
        return AR_NEG_FRAC_POW;
    double r = pow(x, y);
    if (isinf(r) && isfinite(x) && isfinite(y))
        return AR_FLOAT_OVERFLOW;
    *out = r;
    return AR_OK;
}

/* The messages of the tree evaluator; `is_float` picks the float wording
 * where Python's differs. */
static int arith_fail(ev_ctx *c, const operand *o, int status, int is_float)
{
    switch (status) {
    case AR_OVERFLOW:
        return ev_fail(c, o->pos, o->len, "integer overflow in %s",
                       op_text[o->op]);
    case AR_DIV_ZERO: return ev_fail(c, o->pos, o->len, "division by zero");
    case AR_MOD_ZERO: return ev_fail(c, o->pos, o->len, "modulo by zero");
    case AR_ZERO_NEG_POW:
        return ev_fail(c, o->pos, o->len,
                       is_float ? "0.0 cannot be raised to a negative power"
                                : "0 cannot be raised to a negative power");
    case AR_NEG_FRAC_POW:
        return ev_fail(c, o->pos, o->len,
                       "negative number cannot be raised to a "
                       "fractional power");
    case AR_FLOAT_OVERFLOW:
        return ev_fail(c, o->pos, o->len, "float overflow in **");
    default: return ev_fail(c, o->pos, o->len, "internal error");
    }
}

static int int_arith(ev_ctx *c, const operand *o, int64_t x, int64_t y,
                     cutune__value *out)
{
    int64_t r = 0;
    double f = 0;
    int st;
    switch (o->op) {
    case OP_ADD:
        st = __builtin_add_overflow(x, y, &r) ? AR_OVERFLOW : AR_OK;
        break;
    case OP_SUB:
        st = __builtin_sub_overflow(x, y, &r) ? AR_OVERFLOW : AR_OK;
        break;
    case OP_MUL:
        st = __builtin_mul_overflow(x, y, &r) ? AR_OVERFLOW : AR_OK;
        break;
    case OP_DIV:
        if ((st = py_truediv_int(x, y, &f)) != AR_OK)
            return arith_fail(c, o, st, 0);
        set_float(out, f);
        return 0;
    case OP_FLOORDIV: st = py_floordiv(x, y, &r); break;
    case OP_MOD: st = py_mod(x, y, &r); break;
    case OP_POW:
        if (y < 0) {
            if ((st = py_ipow_neg(x, y, &f)) != AR_OK)
                return arith_fail(c, o, st, 0);
            set_float(out, f);
            return 0;
        }
        st = py_ipow(x, y, &r);
        break;
    default: return ev_fail(c, o->pos, o->len, "internal error");
    }
    if (st != AR_OK)
        return arith_fail(c, o, st, 0);
    set_int(out, r);
    return 0;
}

static int float_arith(ev_ctx *c, const operand *o, double x, double y,
                       cutune__value *out)
{
    double r = 0;
    int st = AR_OK;
    switch (o->op) {
    case OP_ADD: r = x + y; break;
    case OP_SUB: r = x - y; break;
    case OP_MUL: r = x * y; break;
    case OP_DIV: st = py_truediv(x, y, &r); break;
    case OP_FLOORDIV: st = py_ffloordiv(x, y, &r); break;
    case OP_MOD: st = py_fmod(x, y, &r); break;
    case OP_POW: st = py_fpow(x, y, &r); break;
    default: return ev_fail(c, o->pos, o->len, "internal error");
    }
    if (st != AR_OK)
        return arith_fail(c, o, st, 1);
    set_float(out, r);
    return 0;
}

/* Appends src's items to dst (which has room), moving them when src is
 * owned. */
static int append_items(ev_ctx *c, const operand *o, cutune__value *dst,
                        size_t *k, const cutune__value *src,
                        cutune__value *src_own)
{
    size_t n = src->u.list.n;
    if (src_own) {
        if (n)
            memcpy(dst + *k, src->u.list.items, n * sizeof *dst);
        *k += n;
        src_own->u.list.n = 0; /* moved; clearing frees only the array */
        return 0;
    }
    for (size_t i = 0; i < n; i++) {
        if (ev_copy(c, o->pos, o->len, &dst[*k], &src->u.list.items[i]))
            return -1;
        ++*k;
    }
    return 0;
}

static int list_concat(ev_ctx *c, const operand *o, const cutune__value *a,
                       cutune__value *a_own, const cutune__value *b,
                       cutune__value *b_own, cutune__value *out)
{
    size_t na = a->u.list.n, nb = b->u.list.n, max = c->e->max_list;
    if (nb > max || na > max - nb)
        return ev_fail(c, o->pos, o->len,
                       "list concatenation produces more than %zu values",
                       max);
    if (charge(c, o->pos, o->len, na + nb))
        return -1;
    set_empty_list(out);
    if (na + nb == 0)
        return 0;
    cutune__value *items;
    size_t k = 0;
    if (a_own) {
        /* Grow the left list in place: `[1] + [2] + [3] + ...` stays
         * linear. */
        items = realloc(a_own->u.list.items, (na + nb) * sizeof *items);
        if (!items)
            return ev_oom(c);
        a_own->u.list.items = items;
        a_own->u.list.n = 0;
        a_own->type = CUTUNE__V_NONE;
        k = na;
    } else {
        items = malloc((na + nb) * sizeof *items);
        if (!items)
            return ev_oom(c);
        if (append_items(c, o, items, &k, a, NULL))
            goto fail;
    }
    if (append_items(c, o, items, &k, b, b_own))
        goto fail;
    out->u.list.items = items;
    out->u.list.n = k;
    return 0;
fail:
    while (k--)
        cutune__value_clear(&items[k]);
    free(items);
    return -1;
}

/* list * int and str * int; strings are held to max_list bytes. */
static int repeat(ev_ctx *c, const operand *o, const cutune__value *a,
                  int64_t times, cutune__value *out)
{
    size_t unit = a->type == CUTUNE__V_LIST ? a->u.list.n : strlen(a->u.s);
    /* An empty operand repeats to nothing, however many times. */
    size_t k = times > 0 && unit ? (size_t)(uint64_t)times : 0;
    if (unit && k > c->e->max_list / unit)
        return ev_fail(c, o->pos, o->len,
                       "repetition produces more than %zu values",
                       c->e->max_list);
    if (a->type == CUTUNE__V_STR) {
        if (charge(c, o->pos, o->len, unit * k / sizeof *a))
            return -1;
        char *s = malloc(unit * k + 1);
        if (!s)
            return ev_oom(c);
        for (size_t i = 0; i < k; i++)
            memcpy(s + i * unit, a->u.s, unit);
        s[unit * k] = '\0';
        out->type = CUTUNE__V_STR;
        out->u.s = s;
        return 0;
    }
    if (charge(c, o->pos, o->len, unit * k))
        return -1;
    set_empty_list(out);
    if (unit * k == 0)
        return 0;
    cutune__value *items = malloc(unit * k * sizeof *items);
    if (!items)
        return ev_oom(c);
    for (size_t i = 0; i < unit * k; i++) {
        if (ev_copy(c, o->pos, o->len, &items[i], &a->u.list.items[i % unit])) {
            while (i--)
                cutune__value_clear(&items[i]);
            free(items);
            return -1;
        }
    }
    out->u.list.items = items;
    out->u.list.n = unit * k;
    return 0;
}

static int binop(ev_ctx *c, const operand *o, const cutune__value *a,
                 cutune__value *a_own, const cutune__value *b,
                 cutune__value *b_own, cutune__value *out)
{
    if (is_intlike(a) && is_intlike(b))
        return int_arith(c, o, a->u.i, b->u.i, out);
    if (is_number(a) && is_number(b))
        return float_arith(c, o, as_double(a), as_double(b), out);
    if (o->op == OP_ADD && a->type == CUTUNE__V_LIST &&
        b->type == CUTUNE__V_LIST)
        return list_concat(c, o, a, a_own, b, b_own, out);
    if (o->op == OP_ADD && a->type == CUTUNE__V_STR &&
        b->type == CUTUNE__V_STR) {
        size_t na = strlen(a->u.s), nb = strlen(b->u.s);
        if (charge(c, o->pos, o->len, (na + nb) / sizeof *a))
            return -1;
        char *s = malloc(na + nb + 1);
        if (!s)
            return ev_oom(c);
        memcpy(s, a->u.s, na);
        memcpy(s + na, b->u.s, nb + 1);
        out->type = CUTUNE__V_STR;
        out->u.s = s;
        return 0;
    }
    if (o->op == OP_MUL && is_intlike(b) &&
        (a->type == CUTUNE__V_LIST || a->type == CUTUNE__V_STR))
        return repeat(c, o, a, b->u.i, out);
    if (o->op == OP_MUL && is_intlike(a) &&
        (b->type == CUTUNE__V_LIST || b->type == CUTUNE__V_STR))
        return repeat(c, o, b, a->u.i, out);
    return ev_fail(c, o->pos, o->len,
                   "unsupported operand types for %s: %s and %s",
                   op_text[o->op], type_name(a), type_name(b));
}

static int compare(ev_ctx *c, const operand *o, int op,
                   const cutune__value *a, const cutune__value *b, int *out)
{
    int r;
    switch (op) {
    case OP_EQ: *out = cutune__value_equal(a, b); return 0;
    case OP_NE: *out = !cutune__value_equal(a, b); return 0;
    case OP_IN:
    case OP_NOTIN:
        if (b->type == CUTUNE__V_LIST) {
            r = 0;
            for (size_t i = 0; i < b->u.list.n && !r; i++)
                r = cutune__value_equal(a, &b->u.list.items[i]);
        } else if (b->type == CUTUNE__V_STR && a->type == CUTUNE__V_STR) {
            r = strstr(b->u.s, a->u.s) != NULL;
        } else if (b->type == CUTUNE__V_STR) {
            return ev_fail(c, o->pos, o->len,
                           "'in <str>' requires str as left operand, not %s",
                           type_name(a));
        } else {
            return ev_fail(c, o->pos, o->len,
                           "argument of type %s is not iterable",
                           type_name(b));
        }
        *out = op == OP_IN ? r : !r;
        return 0;
    default: break;
    }
    if (is_number(a) && is_number(b)) {
        r = num_cmp(a, b);
        if (r == 2) {
            *out = 0;
            return 0;
        }
    } else if (a->type == CUTUNE__V_STR && b->type == CUTUNE__V_STR) {
        r = strcmp(a->u.s, b->u.s);
        r = r < 0 ? -1 : r > 0;
    } else if (a->type == CUTUNE__V_LIST && b->type == CUTUNE__V_LIST) {
        size_t na = a->u.list.n, nb = b->u.list.n;
        for (size_t i = 0; i < na && i < nb; i++)
            if (!cutune__value_equal(&a->u.list.items[i], &b->u.list.items[i]))
                return compare(c, o, op, &a->u.list.items[i],
                               &b->u.list.items[i], out);
        r = na < nb ? -1 : na > nb;
    } else {
        return ev_fail(c, o->pos, o->len,
                       "unsupported operand types for %s: %s and %s",
                       op_text[op], type_name(a), type_name(b));
    }
    switch (op) {
    case OP_LT: *out = r < 0; break;
    case OP_LE: *out = r <= 0; break;
    case OP_GT: *out = r > 0; break;
    default: *out = r >= 0; break;
    }
    return 0;
}

static int ev_arith(ev_ctx *c, const node *n, cutune__value *tmp,
                    const cutune__value **res)
{
    const operand *v = n->u.chain.v;
    cutune__value acc_tmp = {0}, rhs_tmp = {0}, out;
    const cutune__value *acc, *rhs;
    if (ev(c, v[0].e, &acc_tmp, &acc))
        goto fail;
    for (size_t i = 1; i < n->u.chain.n; i++) {
        if (ev(c, v[i].e, &rhs_tmp, &rhs))
            goto fail;
        out.type = CUTUNE__V_NONE;
        if (binop(c, &v[i], acc, acc == &acc_tmp ? &acc_tmp : NULL, rhs,
                  rhs == &rhs_tmp ? &rhs_tmp : NULL, &out))
            goto fail;
        cutune__value_clear(&acc_tmp);
        cutune__value_clear(&rhs_tmp);
        acc_tmp = out;
        acc = &acc_tmp;
    }
    *tmp = acc_tmp;
    *res = tmp;
    return 0;
fail:
    cutune__value_clear(&acc_tmp);
    cutune__value_clear(&rhs_tmp);
    return -1;
}

static int ev_cmp(ev_ctx *c, const node *n, cutune__value *tmp,
                  const cutune__value **res)
{
    const operand *v = n->u.chain.v;
    cutune__value lt = {0}, rt = {0};
    const cutune__value *l, *r;
    int truth = 1;
    if (ev(c, v[0].e, &lt, &l))
        goto fail;
    for (size_t i = 1; i < n->u.chain.n && truth; i++) {
        if (ev(c, v[i].e, &rt, &r) || compare(c, &v[i], v[i].op, l, r, &truth))
            goto fail;
        /* The right operand is the next comparison's left one: `a < b < c`
         * evaluates b once. */
        cutune__value_clear(&lt);
        lt = rt;
        rt.type = CUTUNE__V_NONE;
        l = r == &rt ? &lt : r;
    }
    cutune__value_clear(&lt);
    set_bool(tmp, truth);
    *res = tmp;
    return 0;
fail:
    cutune__value_clear(&lt);
    cutune__value_clear(&rt);
    return -1;
}

static int ev_index(ev_ctx *c, const node *n, cutune__value *tmp,
                    const cutune__value **res)
{
    cutune__value ct = {0}, it = {0};
    const cutune__value *cv, *iv;
    if (ev(c, n->u.kid[0], &ct, &cv))
        goto fail;
    if (ev(c, n->u.kid[1], &it, &iv))
        goto fail;
    size_t len;
    if (cv->type == CUTUNE__V_LIST) {
        len = cv->u.list.n;
    } else if (cv->type == CUTUNE__V_STR) {
        len = strlen(cv->u.s);
    } else {
        ev_fail(c, n->pos, n->len, "%s is not subscriptable", type_name(cv));
        goto fail;
    }
    if (!is_intlike(iv)) {
        ev_fail(c, n->pos, n->len, "%s indices must be integers, not %s",
                type_name(cv), type_name(iv));
        goto fail;
    }
    int64_t i = iv->u.i;
    /* Compare in unsigned so that no length and index overflow. */
    uint64_t k = i < 0 ? (uint64_t)0 - (uint64_t)i : (uint64_t)i;
    if ((i < 0 && k > len) || (i >= 0 && k >= len)) {
        ev_fail(c, n->pos, n->len, "index %lld out of range for %s of %zu",
                (long long)i, type_name(cv), len);
        goto fail;
    }
    size_t at = i < 0 ? len - (size_t)k : (size_t)k;
    if (cv->type == CUTUNE__V_STR) {
        char *s = dup_bytes(cv->u.s + at, 1);
        if (!s) {
            ev_oom(c);
            goto fail;
        }
        tmp->type = CUTUNE__V_STR;
        tmp->u.s = s;
        *res = tmp;
    } else if (cv == &ct) {
        /* The list dies here: keep the item by moving it out. */
        *tmp = ct.u.list.items[at];
        ct.u.list.items[at].type = CUTUNE__V_NONE;
        *res = tmp;
    } else {
        *res = &cv->u.list.items[at];
    }
    cutune__value_clear(&ct);
    cutune__value_clear(&it);
    return 0;
fail:
    cutune__value_clear(&ct);
    cutune__value_clear(&it);
    return -1;
}

/* A string iterates as its one-byte strings. */
static int str_to_list(ev_ctx *c, const node *at, const char *s,
                       cutune__value *out)
{
    size_t n = strlen(s);
    set_empty_list(out);
    if (n > c->e->max_list)
        return ev_fail(c, at->pos, at->len, "list would have more than %zu "
                       "values", c->e->max_list);
    if (charge(c, at->pos, at->len, n))
        return -1;
    if (!n)
        return 0;
    cutune__value *items = calloc(n, sizeof *items);
    if (!items)
        return ev_oom(c);
    out->u.list.items = items;
    for (size_t i = 0; i < n; i++) {
        char *ch = dup_bytes(s + i, 1);
        if (!ch) {
            cutune__value_clear(out);
            return ev_oom(c);
        }
        items[i].type = CUTUNE__V_STR;
        items[i].u.s = ch;
        out->u.list.n = i + 1;
    }
    return 0;
}

static int ev_range(ev_ctx *c, const node *n, cutune__value *tmp,
                    const cutune__value **res)
{
    int64_t arg[3] = {0, 0, 1};
    size_t argc = n->u.seq.n;
    for (size_t i = 0; i < argc; i++) {
        cutune__value t = {0};
        const cutune__value *v;
        if (ev(c, n->u.seq.v[i], &t, &v))
            return -1;
        int ok = is_intlike(v);
        int64_t x = ok ? v->u.i : 0;
        const char *tn = type_name(v);
        cutune__value_clear(&t);
        if (!ok)
            return ev_fail(c, n->pos, n->len,
                           "range() arguments must be int, not %s", tn);
        arg[argc == 1 ? 1 : i] = x;
    }
    int64_t start = arg[0], stop = arg[1], step = arg[2];
    if (step == 0)
        return ev_fail(c, n->pos, n->len, "range() step must not be zero");
    /* The length, in unsigned arithmetic where the span always fits, before
     * anything is allocated. */
    uint64_t count = 0;
    if (step > 0 && start < stop)
        count = ((uint64_t)stop - (uint64_t)start - 1) / (uint64_t)step + 1;
    else if (step < 0 && start > stop)
        count = ((uint64_t)start - (uint64_t)stop - 1) /
                    ((uint64_t)0 - (uint64_t)step) + 1;
    if (count > c->e->max_list)
        return ev_fail(c, n->pos, n->len, "range produces more than %zu values",
                       c->e->max_list);
    size_t cnt = (size_t)count;
    if (charge(c, n->pos, n->len, cnt))
        return -1;
    cutune__value *items = NULL;
    if (cnt && !(items = malloc(cnt * sizeof *items)))
        return ev_oom(c);
    int64_t x = start;
    for (size_t i = 0; i < cnt; i++) {
        set_int(&items[i], x);
        if (i + 1 < cnt)
            x += step; /* still inside [start, stop): no overflow */
    }
    tmp->type = CUTUNE__V_LIST;
    tmp->u.list.items = items;
    tmp->u.list.n = cnt;
    *res = tmp;
    return 0;
}

static int ev_minmax(ev_ctx *c, const node *n, cutune__value *tmp,
                     const cutune__value **res)
{
    const int want = n->fn == B_MAX ? OP_GT : OP_LT;
    const char *fname = builtin_names[n->fn];
    operand site = {0};
    site.pos = n->pos;
    site.len = n->len;
    if (n->u.seq.n == 1) {
        cutune__value lt = {0};
        const cutune__value *l;
        if (ev(c, n->u.seq.v[0], &lt, &l))
            return -1;
        if (l->type != CUTUNE__V_LIST) {
            ev_fail(c, n->pos, n->len, "%s is not iterable", type_name(l));
            goto fail1;
        }
        if (l->u.list.n == 0) {
            ev_fail(c, n->pos, n->len, "%s() arg is an empty list", fname);
            goto fail1;
        }
        size_t best = 0;
        for (size_t i = 1; i < l->u.list.n; i++) {
            int better;
            if (compare(c, &site, want, &l->u.list.items[i],
                        &l->u.list.items[best], &better))
                goto fail1;
            if (better)
                best = i;
        }
        if (l == &lt) {
            *tmp = lt.u.list.items[best];
            lt.u.list.items[best].type = CUTUNE__V_NONE;
            cutune__value_clear(&lt);
            *res = tmp;
        } else {
            *res = &l->u.list.items[best];
        }
        return 0;
    fail1:
        cutune__value_clear(&lt);
        return -1;
    }
    /* Several arguments: keep only the best so far and the candidate, so
     * max(a, b) on scalars allocates nothing. */
    cutune__value bt = {0}, ct = {0};
    const cutune__value *b = NULL, *cv;
    for (size_t i = 0; i < n->u.seq.n; i++) {
        if (ev(c, n->u.seq.v[i], &ct, &cv))
            goto fail;
        int better = 1;
        if (b && compare(c, &site, want, cv, b, &better))
            goto fail;
        if (better) {
            cutune__value_clear(&bt);
            bt = ct;
            ct.type = CUTUNE__V_NONE;
            b = cv == &ct ? &bt : cv;
        } else {
            cutune__value_clear(&ct);
        }
    }
    if (b == &bt) {
        *tmp = bt;
        *res = tmp;
    } else {
        cutune__value_clear(&bt);
        *res = b;
    }
    return 0;
fail:
    cutune__value_clear(&bt);
    cutune__value_clear(&ct);
    return -1;
}

static int ev_call(ev_ctx *c, const node *n, cutune__value *tmp,
                   const cutune__value **res)
{
    if (n->fn == B_RANGE)
        return ev_range(c, n, tmp, res);
    if (n->fn == B_MAX || n->fn == B_MIN)
        return ev_minmax(c, n, tmp, res);
    if (n->fn == B_LIST && n->u.seq.n == 0) {
        set_empty_list(tmp);
        *res = tmp;
        return 0;
    }
    cutune__value at = {0};
    const cutune__value *a;
    if (ev(c, n->u.seq.v[0], &at, &a))
        return -1;
    int rc = 0;
    if (n->fn == B_LEN) {
        if (a->type == CUTUNE__V_LIST)
            set_int(tmp, (int64_t)a->u.list.n);
        else if (a->type == CUTUNE__V_STR)
            set_int(tmp, (int64_t)strlen(a->u.s));
        else
            rc = ev_fail(c, n->pos, n->len, "object of type %s has no len()",
                         type_name(a));
    } else if (a->type == CUTUNE__V_LIST) { /* list() */
        rc = ev_take(c, n, tmp, &at, a);
    } else if (a->type == CUTUNE__V_STR) {
        rc = str_to_list(c, n, a->u.s, tmp);
    } else {
        rc = ev_fail(c, n->pos, n->len, "%s is not iterable", type_name(a));
    }
    cutune__value_clear(&at);
    if (rc) {
        cutune__value_clear(tmp);
        return -1;
    }
    *res = tmp;
    return 0;
}

static int ev_list(ev_ctx *c, const node *n, cutune__value *tmp,
                   const cutune__value **res)
{
    size_t cnt = n->u.seq.n;
    if (charge(c, n->pos, n->len, cnt))
        return -1;
    cutune__value *items = calloc(cnt, sizeof *items);
    if (!items)
        return ev_oom(c);
    for (size_t i = 0; i < cnt; i++) {
        cutune__value t = {0};
        const cutune__value *v;
        if (ev(c, n->u.seq.v[i], &t, &v) ||
            ev_take(c, n->u.seq.v[i], &items[i], &t, v)) {
            cutune__value_clear(&t);
            while (i--)
                cutune__value_clear(&items[i]);
            free(items);
            return -1;
        }
    }
    tmp->type = CUTUNE__V_LIST;
    tmp->u.list.items = items;
    tmp->u.list.n = cnt;
    *res = tmp;
    return 0;
}

typedef struct vec {
    cutune__value *items;
    size_t n, cap;
} vec;

static int comp_run(ev_ctx *c, const node *n, size_t k, vec *out)
{
    cutune__value t = {0};
    const cutune__value *v;
    if (k == n->u.comp.n) {
        if (out->n == c->e->max_list)
            return ev_fail(c, n->pos, n->len,
                           "list comprehension produces more than %zu values",
                           c->e->max_list);
        if (out->n == out->cap) {
            size_t cap = out->cap ? out->cap * 2 : 8;
            if (cap > c->e->max_list)
                cap = c->e->max_list;
            cutune__value *items = realloc(out->items, cap * sizeof *items);
            if (!items)
                return ev_oom(c);
            out->items = items;
            out->cap = cap;
        }
        if (ev(c, n->u.comp.elem, &t, &v) ||
            ev_take(c, n->u.comp.elem, &out->items[out->n], &t, v)) {
            cutune__value_clear(&t);
            return -1;
        }
        out->n++;
        return 0;
    }
    const clause *cl = &n->u.comp.v[k];
    if (ev(c, cl->e, &t, &v))
        return -1;
    if (!cl->is_for) {
        int truth = cutune__value_truthy(v);
        cutune__value_clear(&t);
        return truth ? comp_run(c, n, k + 1, out) : 0;
    }
    if (v->type == CUTUNE__V_STR) {
        cutune__value chars;
        int rc = str_to_list(c, cl->e, v->u.s, &chars);
        cutune__value_clear(&t);
        if (rc)
            return -1;
        t = chars;
        v = &t;
    }
    if (v->type != CUTUNE__V_LIST) {
        ev_fail(c, cl->e->pos, cl->e->len, "%s is not iterable", type_name(v));
        cutune__value_clear(&t);
        return -1;
    }
    int rc = 0;
    for (size_t i = 0; i < v->u.list.n && !rc; i++) {
        rc = charge(c, cl->pos, cl->len, 1);
        if (!rc) {
            c->locals[cl->slot] = &v->u.list.items[i];
            rc = comp_run(c, n, k + 1, out);
        }
    }
    cutune__value_clear(&t);
    return rc;
}

static int ev_comp(ev_ctx *c, const node *n, cutune__value *tmp,
                   const cutune__value **res)
{
    vec out = {0};
    if (comp_run(c, n, 0, &out)) {
        for (size_t i = 0; i < out.n; i++)
            cutune__value_clear(&out.items[i]);
        free(out.items);
        return -1;
    }
    tmp->type = CUTUNE__V_LIST;
    tmp->u.list.items = out.items;
    tmp->u.list.n = out.n;
    *res = tmp;
    return 0;
}

static int ev(ev_ctx *c, const node *n, cutune__value *tmp,
              const cutune__value **res)
{
    cutune__value t = {0};
    const cutune__value *v;
    switch (n->kind) {
    case N_LIT: *res = &n->u.lit; return 0;
    case N_VAR: *res = &c->vars[n->u.index]; return 0;
    case N_LOCAL: *res = c->locals[n->u.index]; return 0;
    case N_NEG:
    case N_POS:
        if (ev(c, n->u.kid[0], &t, &v))
            return -1;
        if (v->type == CUTUNE__V_FLOAT) {
            set_float(tmp, n->kind == N_NEG ? -v->u.f : v->u.f);
        } else if (is_intlike(v)) {
            if (n->kind == N_NEG && v->u.i == INT64_MIN)
                return ev_fail(c, n->pos, n->len, "integer overflow in -");
            set_int(tmp, n->kind == N_NEG ? -v->u.i : v->u.i);
        } else {
            ev_fail(c, n->pos, n->len, "bad operand type for unary %s: %s",
                    n->kind == N_NEG ? "-" : "+", type_name(v));
            cutune__value_clear(&t);
            return -1;
        }
        *res = tmp;
        return 0;
    case N_NOT:
        if (ev(c, n->u.kid[0], &t, &v))
            return -1;
        set_bool(tmp, !cutune__value_truthy(v));
        cutune__value_clear(&t);
        *res = tmp;
        return 0;
    case N_AND:
    case N_OR:
        /* Python returns the deciding operand itself, not a bool. */
        for (size_t i = 0; i < n->u.seq.n; i++) {
            cutune__value_clear(tmp);
            if (ev(c, n->u.seq.v[i], tmp, res))
                return -1;
            if (cutune__value_truthy(*res) == (n->kind == N_OR))
                break;
        }
        return 0;
    case N_COND: {
        if (ev(c, n->u.kid[1], &t, &v))
            return -1;
        int truth = cutune__value_truthy(v);
        cutune__value_clear(&t);
        return ev(c, n->u.kid[truth ? 0 : 2], tmp, res);
    }
    case N_ARITH: return ev_arith(c, n, tmp, res);
    case N_CMP: return ev_cmp(c, n, tmp, res);
    case N_INDEX: return ev_index(c, n, tmp, res);
    case N_CALL: return ev_call(c, n, tmp, res);
    case N_LIST: return ev_list(c, n, tmp, res);
    case N_COMP: return ev_comp(c, n, tmp, res);
    default: return ev_fail(c, n->pos, n->len, "internal error");
    }
}

int cutune__expr_eval(const cutune__expr *e, const cutune__value *vars,
                      cutune__value *out, cutune__expr_error *err)
{
    cutune__expr_error dummy;
    if (!err)
        err = &dummy;
    out->type = CUTUNE__V_NONE;
    if (e->n_names && !vars) {
        set_error(err, e->text, e->name_pos[0], strlen(e->names[0]),
                  "no value bound to name '%s'", e->names[0]);
        return -1;
    }
    /* Comprehension variables; most expressions have none or few. */
    const cutune__value *local_buf[16];
    const cutune__value **locals = local_buf;
    if (e->n_locals > sizeof local_buf / sizeof *local_buf) {
        locals = malloc(e->n_locals * sizeof *locals);
        if (!locals) {
            set_oom(err);
            return -1;
        }
    }
    ev_ctx c;
    c.e = e;
    c.vars = vars;
    c.locals = locals;
    c.err = err;
    c.budget = e->max_list > SIZE_MAX / WORK_FACTOR ? SIZE_MAX
                                                    : e->max_list * WORK_FACTOR;
    cutune__value tmp = {0};
    const cutune__value *res;
    int rc = ev(&c, e->root, &tmp, &res);
    if (rc == 0 && res == &tmp) {
        *out = tmp;
        tmp.type = CUTUNE__V_NONE;
    } else if (rc == 0 && cutune__value_copy(out, res) != 0) {
        rc = ev_oom(&c);
    }
    cutune__value_clear(&tmp);
    if (locals != local_buf)
        free(locals);
    return rc;
}

int cutune__expr_eval_const(const char *text, cutune__value *out,
                            cutune__expr_error *err)
{
    out->type = CUTUNE__V_NONE;
    cutune__expr *e = cutune__expr_parse(text, 0, err);
    if (!e)
        return -1;
    int rc;
    if (e->n_names) {
        set_error(err, e->text, e->name_pos[0], strlen(e->names[0]),
                  "name '%s' is not defined", e->names[0]);
        rc = -1;
    } else {
        rc = cutune__expr_eval(e, NULL, out, err);
    }
    cutune__expr_free(e);
    return rc;
}

/* ------------------------------------------------------------------ */
/* Compiled programs                                                   */

/* Operations of a program. Slots a and b are read, dst written; `cmp`
 * holds the comparison of F_CMP_* and whether F_IN_* is `not in`; `arg` a
 * jump target or a membership table. */
enum fop {
    F_ADD_I,
    F_SUB_I,
    F_MUL_I,
    F_TDIV_I, /* int / int: a float */
    F_FDIV_I,
    F_MOD_I,
    F_POW_I,    /* undecided for a negative exponent: the type changes */
    F_POWNEG_I, /* the exponent is a negative constant: a float */
    F_ADD_F,
    F_SUB_F,
    F_MUL_F,
    F_TDIV_F,
    F_FDIV_F,
    F_MOD_F,
    F_POW_F,
    F_NEG_I,
    F_NEG_F,
    F_I2F,
    F_MOV,
    F_NOT_I,
    F_NOT_F,
    F_TRUTH_F,
    F_EQ_II,
    F_NE_II,
    F_LT_II,
    F_LE_II,
    F_GT_II,
    F_GE_II,
    F_CMP_IF,
    F_CMP_FI,
    F_CMP_FF,
    F_IN_I,
    F_IN_F,
    F_MAX_I,
    F_MIN_I,
    F_MAX_F,
    F_MIN_F,
    F_JMP,
    F_JZ_I,
    F_JNZ_I,
    F_JZ_F,
    F_JNZ_F
};

typedef struct finsn {
    uint8_t op, cmp;
    uint16_t dst, a, b;
    uint32_t arg;
} finsn;

/* The numbers of a constant list, for `in`: equality with a number never
 * holds for an item that is not one. */
typedef struct ftable {
    int64_t *ints; /* int and bool items, ascending */
    size_t n_ints;
    double *floats;
    size_t n_floats;
} ftable;

/* Static types of slots. */
enum { TY_INT = 1, TY_BOOL, TY_FLOAT, TY_OBJ };

struct cutune__expr_prog {
    finsn *code;
    size_t n_code;
    size_t n_slots;
    size_t const_base; /* constants occupy [const_base, const_base+n) */
    cutune__slot *consts;
    size_t n_consts;
    ftable *tables;
    size_t n_tables;
    unsigned result;
    int result_type;
    int mode;
};

/* A compiled subexpression: where its value is and of what type; TY_OBJ is
 * a constant that is no number (a list for `in`), borrowed. */
typedef struct fval {
    unsigned slot;
    int type;
    const cutune__value *obj;
} fval;

/* During compilation constant k is slot CONST_TAG - k, renumbered at the
 * end to follow the temporaries. */
#define CONST_TAG 0xFFFFu
#define FPROG_MAX_SLOTS 0x8000u

typedef struct fcomp {
    const cutune__expr *e;
    const cutune__vtype *types;
    const cutune__value *const *constants;
    finsn *code;
    size_t n_code, cap_code;
    cutune__slot *consts;
    size_t n_consts, cap_consts;
    ftable *tables;
    size_t n_tables, cap_tables;
    unsigned max_temp; /* one past the highest temporary used */
    /* Folding constant subexpressions with the tree evaluator. */
    ev_ctx fold;
    cutune__value *fold_vars;
    cutune__expr_error fold_err;
    cutune__value *owned; /* folded results that are no numbers */
    size_t n_owned, cap_owned;
} fcomp;

static void *grow_array(void *v, size_t n, size_t *cap, size_t elsize)
{
    if (n < *cap)
        return v;
    size_t ncap = *cap ? *cap * 2 : 16;
    void *nv = realloc(v, ncap * elsize);
    if (nv)
        *cap = ncap;
    return nv;
}

/* Appends an instruction; returns its position, or SIZE_MAX. */
static size_t f_emit(fcomp *f, int op, unsigned dst, unsigned a, unsigned b)
{
    finsn *code = grow_array(f->code, f->n_code, &f->cap_code, sizeof *code);
    if (!code)
        return SIZE_MAX;
    f->code = code;
    finsn *in = &code[f->n_code];
    in->op = (uint8_t)op;
    in->cmp = 0;
    in->dst = (uint16_t)dst;
    in->a = (uint16_t)a;
    in->b = (uint16_t)b;
    in->arg = 0;
    if (dst >= f->max_temp && dst < CONST_TAG - FPROG_MAX_SLOTS)
        f->max_temp = dst + 1;
    return f->n_code++;
}

static int f_temp_ok(unsigned tmp)
{
    /* Leaves room above for what one node uses. */
    return tmp + 4 < FPROG_MAX_SLOTS ? 0 : -1;
}

static int f_const(fcomp *f, const cutune__value *v, fval *out)
{
    cutune__slot s;
    int type;
    if (v->type == CUTUNE__V_INT || v->type == CUTUNE__V_BOOL) {
        s.i = v->u.i;
        type = v->type == CUTUNE__V_INT ? TY_INT : TY_BOOL;
    } else if (v->type == CUTUNE__V_FLOAT) {
        s.f = v->u.f;
        type = TY_FLOAT;
    } else {
        out->slot = 0;
        out->type = TY_OBJ;
        out->obj = v;
        return 0;
    }
    if (f->n_consts >= FPROG_MAX_SLOTS)
        return -1;
    cutune__slot *c = grow_array(f->consts, f->n_consts, &f->cap_consts,
                                 sizeof *c);
    if (!c)
        return -1;
    f->consts = c;
    f->consts[f->n_consts] = s;
    out->slot = CONST_TAG - (unsigned)f->n_consts++;
    out->type = type;
    out->obj = NULL;
    return 0;
}

static int f_const_int(fcomp *f, int64_t i, fval *out)
{
    cutune__value v;
    v.type = CUTUNE__V_INT;
    v.u.i = i;
    return f_const(f, &v, out);
}

/* The value of a constant slot, or NULL for any other slot. */
static const cutune__slot *f_const_value(const fcomp *f, unsigned slot)
{
    if (slot > CONST_TAG - FPROG_MAX_SLOTS && CONST_TAG - slot < f->n_consts)
        return &f->consts[CONST_TAG - slot];
    return NULL;
}

/* 1 when n names no variable, so it can be evaluated once. */
static int f_is_const(const fcomp *f, const node *n)
{
    switch (n->kind) {
    case N_LIT:
    case N_LOCAL: return 1;
    case N_VAR: return f->constants && f->constants[n->u.index];
    case N_NEG:
    case N_POS:
    case N_NOT: return f_is_const(f, n->u.kid[0]);
    case N_INDEX:
        return f_is_const(f, n->u.kid[0]) && f_is_const(f, n->u.kid[1]);
    case N_COND:
        return f_is_const(f, n->u.kid[0]) && f_is_const(f, n->u.kid[1]) &&
               f_is_const(f, n->u.kid[2]);
    case N_ARITH:
    case N_CMP:
        for (size_t i = 0; i < n->u.chain.n; i++)
            if (!f_is_const(f, n->u.chain.v[i].e))
                return 0;
        return 1;
    case N_AND:
    case N_OR:
    case N_LIST:
    case N_CALL:
        for (size_t i = 0; i < n->u.seq.n; i++)
            if (!f_is_const(f, n->u.seq.v[i]))
                return 0;
        return 1;
    case N_COMP:
        if (!f_is_const(f, n->u.comp.elem))
            return 0;
        for (size_t i = 0; i < n->u.comp.n; i++)
            if (!f_is_const(f, n->u.comp.v[i].e))
                return 0;
        return 1;
    default: return 0;
    }
}

/* Evaluates a constant subexpression with the tree evaluator. One budget
 * covers every folded part, so that no evaluation of the whole could build
 * more than the tree evaluator allows. A failure declines the expression:
 * its error is the tree evaluator's to report, when it is reached. */
static int f_fold(fcomp *f, const node *n, fval *out)
{
    cutune__value t = {0};
    const cutune__value *res;
    if (ev(&f->fold, n, &t, &res))
        return -1;
    if (res != &t)
        return f_const(f, res, out); /* lives in the tree or the caller's */
    if (t.type == CUTUNE__V_INT || t.type == CUTUNE__V_BOOL ||
        t.type == CUTUNE__V_FLOAT)
        return f_const(f, &t, out);
    cutune__value *owned = grow_array(f->owned, f->n_owned, &f->cap_owned,
                                      sizeof *owned);
    if (!owned) {
        cutune__value_clear(&t);
        return -1;
    }
    f->owned = owned;
    owned[f->n_owned] = t;
    return f_const(f, &owned[f->n_owned++], out);
}

static int is_intlike_type(int type)
{
    return type == TY_INT || type == TY_BOOL;
}

/* Puts v's truth into slot dst as an int that is nonzero when v is truthy
 * (a copy for int and bool, 0/1 for float and constant objects). */
static int f_truth_to(fcomp *f, const fval *v, unsigned dst)
{
    if (v->type == TY_OBJ) {
        fval c;
        if (f_const_int(f, cutune__value_truthy(v->obj), &c))
            return -1;
        return f_emit(f, F_MOV, dst, c.slot, 0) == SIZE_MAX ? -1 : 0;
    }
    if (v->type == TY_FLOAT)
        return f_emit(f, F_TRUTH_F, dst, v->slot, 0) == SIZE_MAX ? -1 : 0;
    if (v->slot == dst)
        return 0;
    return f_emit(f, F_MOV, dst, v->slot, 0) == SIZE_MAX ? -1 : 0;
}

static int f_move_to(fcomp *f, const fval *v, unsigned dst)
{
    if (v->slot == dst)
        return 0;
    return f_emit(f, F_MOV, dst, v->slot, 0) == SIZE_MAX ? -1 : 0;
}

/* Sets the jump target of instruction `at` to the next instruction. */
static void f_patch(fcomp *f, size_t at)
{
    f->code[at].arg = (uint32_t)f->n_code;
}

static int f_node(fcomp *f, const node *n, int truth, unsigned tmp,
                  fval *out);

/* and / or. Value: every operand must have the same type, since Python
 * returns the deciding operand. Truth: each operand's truth is enough. */
static int f_bool_chain(fcomp *f, const node *n, int truth, unsigned tmp,
                        fval *out)
{
    size_t np = n->u.seq.n;
    size_t *exits = malloc(np * sizeof *exits);
    int type = 0, rc = -1;
    if (!exits)
        return -1;
    for (size_t i = 0; i < np; i++) {
        fval v;
        if (f_node(f, n->u.seq.v[i], truth, tmp, &v))
            goto out;
        if (truth) {
            if (f_truth_to(f, &v, tmp))
                goto out;
            type = TY_INT;
        } else {
            if (v.type == TY_OBJ || (type && v.type != type))
                goto out;
            type = v.type;
            if (f_move_to(f, &v, tmp))
                goto out;
        }
        if (i + 1 < np) {
            int op = type == TY_FLOAT ? (n->kind == N_AND ? F_JZ_F : F_JNZ_F)
                                      : (n->kind == N_AND ? F_JZ_I : F_JNZ_I);
            if ((exits[i] = f_emit(f, op, 0, tmp, 0)) == SIZE_MAX)
                goto out;
        }
    }
    for (size_t i = 0; i + 1 < np; i++)
        f_patch(f, exits[i]);
    out->slot = tmp;
    out->type = type;
    out->obj = NULL;
    rc = 0;
out:
    free(exits);
    return rc;
}

static int f_cond(fcomp *f, const node *n, int truth, unsigned tmp,
                  fval *out)
{
    fval c, a, b;
    if (f_node(f, n->u.kid[1], 1, tmp, &c))
        return -1;
    if (c.type == TY_OBJ) {
        /* A constant condition: only one branch can ever run. */
        return f_node(f, n->u.kid[cutune__value_truthy(c.obj) ? 0 : 2],
                      truth, tmp, out);
    }
    size_t to_else = f_emit(f, c.type == TY_FLOAT ? F_JZ_F : F_JZ_I, 0,
                            c.slot, 0);
    if (to_else == SIZE_MAX || f_node(f, n->u.kid[0], truth, tmp, &a))
        return -1;
    int type = a.type;
    if (truth) {
        if (f_truth_to(f, &a, tmp))
            return -1;
        type = TY_INT;
    } else if (a.type == TY_OBJ || f_move_to(f, &a, tmp)) {
        return -1;
    }
    size_t to_end = f_emit(f, F_JMP, 0, 0, 0);
    if (to_end == SIZE_MAX)
        return -1;
    f_patch(f, to_else);
    if (f_node(f, n->u.kid[2], truth, tmp, &b))
        return -1;
    if (truth) {
        if (f_truth_to(f, &b, tmp))
            return -1;
    } else if (b.type != type || f_move_to(f, &b, tmp)) {
        return -1;
    }
    f_patch(f, to_end);
    out->slot = tmp;
    out->type = type;
    out->obj = NULL;
    return 0;
}

/* Converts an int operand to float in slot `dst`. */
static int f_to_float(fcomp *f, fval *v, unsigned dst)
{
    if (v->type == TY_FLOAT)
        return 0;
    if (f_emit(f, F_I2F, dst, v->slot, 0) == SIZE_MAX)
        return -1;
    v->slot = dst;
    v->type = TY_FLOAT;
    return 0;
}

static int f_arith(fcomp *f, const node *n, unsigned tmp, fval *out)
{
    const operand *v = n->u.chain.v;
    fval l, r;
    if (f_node(f, v[0].e, 0, tmp, &l) || l.type == TY_OBJ)
        return -1;
    for (size_t i = 1; i < n->u.chain.n; i++) {
        if (f_node(f, v[i].e, 0, tmp + 1, &r) || r.type == TY_OBJ)
            return -1;
        int op, type;
        if (is_intlike_type(l.type) && is_intlike_type(r.type)) {
            type = TY_INT;
            switch (v[i].op) {
            case OP_ADD: op = F_ADD_I; break;
            case OP_SUB: op = F_SUB_I; break;
            case OP_MUL: op = F_MUL_I; break;
            case OP_DIV:
                op = F_TDIV_I;
                type = TY_FLOAT;
                break;
            case OP_FLOORDIV: op = F_FDIV_I; break;
            case OP_MOD: op = F_MOD_I; break;
            case OP_POW: {
                const cutune__slot *k = f_const_value(f, r.slot);
                op = F_POW_I;
                if (k && k->i < 0) {
                    op = F_POWNEG_I;
                    type = TY_FLOAT;
                }
                break;
            }
            default: return -1;
            }
        } else {
            if (f_to_float(f, &l, tmp) || f_to_float(f, &r, tmp + 1))
                return -1;
            type = TY_FLOAT;
            switch (v[i].op) {
            case OP_ADD: op = F_ADD_F; break;
            case OP_SUB: op = F_SUB_F; break;
            case OP_MUL: op = F_MUL_F; break;
            case OP_DIV: op = F_TDIV_F; break;
            case OP_FLOORDIV: op = F_FDIV_F; break;
            case OP_MOD: op = F_MOD_F; break;
            case OP_POW: op = F_POW_F; break;
            default: return -1;
            }
        }
        if (f_emit(f, op, tmp, l.slot, r.slot) == SIZE_MAX)
            return -1;
        l.slot = tmp;
        l.type = type;
    }
    *out = l;
    return 0;
}

/* Longer constant lists stay with the tree evaluator. */
#define FTABLE_MAX 4096

static int int64_order(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* A membership table from a constant list; returns its index, or -1. */
static long f_table(fcomp *f, const cutune__value *list)
{
    if (list->u.list.n > FTABLE_MAX)
        return -1;
    ftable *t = grow_array(f->tables, f->n_tables, &f->cap_tables,
                           sizeof *t);
    if (!t)
        return -1;
    f->tables = t;
    t = &t[f->n_tables];
    memset(t, 0, sizeof *t);
    size_t n = list->u.list.n;
    t->ints = malloc((n ? n : 1) * sizeof *t->ints);
    t->floats = malloc((n ? n : 1) * sizeof *t->floats);
    if (!t->ints || !t->floats) {
        free(t->ints);
        free(t->floats);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        const cutune__value *it = &list->u.list.items[i];
        if (is_intlike(it))
            t->ints[t->n_ints++] = it->u.i;
        else if (it->type == CUTUNE__V_FLOAT)
            t->floats[t->n_floats++] = it->u.f;
    }
    qsort(t->ints, t->n_ints, sizeof *t->ints, int64_order);
    return (long)f->n_tables++;
}

static int f_compare(fcomp *f, int op, unsigned dst, const fval *l,
                     const fval *r)
{
    size_t at;
    if (op == OP_IN || op == OP_NOTIN) {
        if (l->type == TY_OBJ || r->type != TY_OBJ ||
            r->obj->type != CUTUNE__V_LIST)
            return -1;
        long t = f_table(f, r->obj);
        if (t < 0)
            return -1;
        at = f_emit(f, l->type == TY_FLOAT ? F_IN_F : F_IN_I, dst, l->slot,
                    0);
        if (at == SIZE_MAX)
            return -1;
        f->code[at].arg = (uint32_t)t;
        f->code[at].cmp = op == OP_NOTIN;
        return 0;
    }
    if (l->type == TY_OBJ || r->type == TY_OBJ)
        return -1;
    int li = is_intlike_type(l->type), ri = is_intlike_type(r->type);
    if (li && ri) {
        static const int ii[] = {[OP_EQ] = F_EQ_II, [OP_NE] = F_NE_II,
                                 [OP_LT] = F_LT_II, [OP_LE] = F_LE_II,
                                 [OP_GT] = F_GT_II, [OP_GE] = F_GE_II};
        return f_emit(f, ii[op], dst, l->slot, r->slot) == SIZE_MAX ? -1 : 0;
    }
    at = f_emit(f, li ? F_CMP_IF : ri ? F_CMP_FI : F_CMP_FF, dst, l->slot,
                r->slot);
    if (at == SIZE_MAX)
        return -1;
    f->code[at].cmp = (uint8_t)op;
    return 0;
}

/* A comparison chain: `a < b < c` evaluates b once and c only when a < b. */
static int f_cmp(fcomp *f, const node *n, unsigned tmp, fval *out)
{
    const operand *v = n->u.chain.v;
    size_t nc = n->u.chain.n;
    size_t *exits = malloc(nc * sizeof *exits);
    size_t n_exits = 0;
    fval l, r;
    int rc = -1;
    if (!exits)
        return -1;
    if (f_node(f, v[0].e, 0, tmp + 1, &l))
        goto out;
    for (size_t i = 1; i < nc; i++) {
        if (f_node(f, v[i].e, 0, tmp + 2, &r) ||
            f_compare(f, v[i].op, tmp, &l, &r))
            goto out;
        if (i + 1 == nc)
            break;
        if ((exits[n_exits++] = f_emit(f, F_JZ_I, 0, tmp, 0)) == SIZE_MAX)
            goto out;
        if (r.type != TY_OBJ && r.slot == tmp + 2) {
            if (f_emit(f, F_MOV, tmp + 1, tmp + 2, 0) == SIZE_MAX)
                goto out;
            r.slot = tmp + 1;
        }
        l = r;
    }
    for (size_t i = 0; i < n_exits; i++)
        f_patch(f, exits[i]);
    out->slot = tmp;
    out->type = TY_BOOL;
    out->obj = NULL;
    rc = 0;
out:
    free(exits);
    return rc;
}

/* max(a, b, ...) and min(...) of numbers of one type: the first of equal
 * ones wins, and NaN never compares better. */
static int f_minmax(fcomp *f, const node *n, unsigned tmp, fval *out)
{
    fval first, v;
    if (n->u.seq.n < 2 || f_node(f, n->u.seq.v[0], 0, tmp, &first) ||
        first.type == TY_OBJ || f_move_to(f, &first, tmp))
        return -1;
    int is_max = n->fn == B_MAX, flt = first.type == TY_FLOAT;
    int op = flt ? (is_max ? F_MAX_F : F_MIN_F) : (is_max ? F_MAX_I : F_MIN_I);
    for (size_t i = 1; i < n->u.seq.n; i++) {
        if (f_node(f, n->u.seq.v[i], 0, tmp + 1, &v) || v.type != first.type ||
            f_emit(f, op, tmp, tmp, v.slot) == SIZE_MAX)
            return -1;
    }
    out->slot = tmp;
    out->type = first.type;
    out->obj = NULL;
    return 0;
}

/* Compiles n with temporaries from `tmp` up; the value ends up in
 * out->slot, which is `tmp`, a variable's or a constant's slot. `truth`:
 * only the value's truth will be used. */
static int f_node(fcomp *f, const node *n, int truth, unsigned tmp,
                  fval *out)
{
    if (f_temp_ok(tmp))
        return -1;
    switch (n->kind) {
    case N_LIT: return f_const(f, &n->u.lit, out);
    case N_VAR: {
        size_t i = n->u.index;
        if (f->constants && f->constants[i])
            return f_const(f, f->constants[i], out);
        cutune__vtype t = f->types[i];
        out->slot = (unsigned)i;
        out->obj = NULL;
        out->type = t == CUTUNE__V_INT    ? TY_INT
                    : t == CUTUNE__V_BOOL ? TY_BOOL
                    : t == CUTUNE__V_FLOAT ? TY_FLOAT
                                          : 0;
        return out->type ? 0 : -1;
    }
    case N_LOCAL: return -1; /* only inside a comprehension, folded whole */
    default: break;
    }
    if (f_is_const(f, n))
        return f_fold(f, n, out);
    fval v;
    switch (n->kind) {
    case N_NEG:
    case N_POS:
        if (f_node(f, n->u.kid[0], 0, tmp, &v) || v.type == TY_OBJ)
            return -1;
        if (n->kind == N_POS) {
            *out = v;
            if (v.type == TY_BOOL)
                out->type = TY_INT;
            return 0;
        }
        if (f_emit(f, v.type == TY_FLOAT ? F_NEG_F : F_NEG_I, tmp, v.slot,
                   0) == SIZE_MAX)
            return -1;
        out->slot = tmp;
        out->type = v.type == TY_FLOAT ? TY_FLOAT : TY_INT;
        out->obj = NULL;
        return 0;
    case N_NOT:
        if (f_node(f, n->u.kid[0], 1, tmp, &v) || v.type == TY_OBJ ||
            f_emit(f, v.type == TY_FLOAT ? F_NOT_F : F_NOT_I, tmp, v.slot,
                   0) == SIZE_MAX)
            return -1;
        out->slot = tmp;
        out->type = TY_BOOL;
        out->obj = NULL;
        return 0;
    case N_AND:
    case N_OR: return f_bool_chain(f, n, truth, tmp, out);
    case N_COND: return f_cond(f, n, truth, tmp, out);
    case N_ARITH: return f_arith(f, n, tmp, out);
    case N_CMP: return f_cmp(f, n, tmp, out);
    case N_CALL:
        if (n->fn == B_MAX || n->fn == B_MIN)
            return f_minmax(f, n, tmp, out);
        return -1;
    default: return -1;
    }
}

static void prog_free_tables(ftable *t, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(t[i].ints);
        free(t[i].floats);
    }
    free(t);
}

void cutune__expr_prog_free(cutune__expr_prog *g)
{
    if (!g)
        return;
    free(g->code);
    free(g->consts);
    prog_free_tables(g->tables, g->n_tables);
    free(g);
}

/* Renumbers constant slots to follow the temporaries. */
static unsigned f_final_slot(unsigned slot, size_t const_base)
{
    if (slot > CONST_TAG - FPROG_MAX_SLOTS)
        return (unsigned)(const_base + (CONST_TAG - slot));
    return slot;
}

cutune__expr_prog *cutune__expr_compile(const cutune__expr *e,
                                        const cutune__vtype *types,
                                        const cutune__value *const *constants,
                                        cutune__prog_mode mode)
{
    fcomp f;
    cutune__expr_prog *g = NULL;
    const cutune__value **locals = NULL;
    if (!e || (e->n_names && !types) || e->n_names >= FPROG_MAX_SLOTS / 2)
        return NULL;
    memset(&f, 0, sizeof f);
    f.e = e;
    f.types = types;
    f.constants = constants;
    f.fold_vars = calloc(e->n_names ? e->n_names : 1, sizeof *f.fold_vars);
    locals = calloc(e->n_locals ? e->n_locals : 1, sizeof *locals);
    if (!f.fold_vars || !locals)
        goto out;
    for (size_t i = 0; i < e->n_names; i++)
        if (constants && constants[i])
            f.fold_vars[i] = *constants[i]; /* shallow: read only here */
    f.fold.e = e;
    f.fold.vars = f.fold_vars;
    f.fold.locals = locals;
    f.fold.err = &f.fold_err;
    f.fold.budget = e->max_list > SIZE_MAX / WORK_FACTOR
                        ? SIZE_MAX
                        : e->max_list * WORK_FACTOR;
    f.max_temp = (unsigned)e->n_names;

    fval res;
    int truth = mode == CUTUNE__PROG_TRUTH;
    if (f_node(&f, e->root, truth, (unsigned)e->n_names, &res))
        goto out;
    if (res.type == TY_OBJ) {
        if (!truth || f_const_int(&f, cutune__value_truthy(res.obj), &res))
            goto out;
    }
    size_t const_base = f.max_temp;
    if (const_base + f.n_consts > FPROG_MAX_SLOTS)
        goto out;
    g = calloc(1, sizeof *g);
    if (!g)
        goto out;
    g->mode = mode;
    g->const_base = const_base;
    g->n_slots = const_base + f.n_consts;
    g->n_consts = f.n_consts;
    g->consts = f.consts;
    f.consts = NULL;
    g->tables = f.tables;
    g->n_tables = f.n_tables;
    f.tables = NULL;
    f.n_tables = 0;
    g->code = f.code;
    g->n_code = f.n_code;
    f.code = NULL;
    for (size_t i = 0; i < g->n_code; i++) {
        finsn *in = &g->code[i];
        in->dst = (uint16_t)f_final_slot(in->dst, const_base);
        in->a = (uint16_t)f_final_slot(in->a, const_base);
        in->b = (uint16_t)f_final_slot(in->b, const_base);
    }
    g->result = f_final_slot(res.slot, const_base);
    g->result_type = res.type;
out:
    for (size_t i = 0; i < f.n_owned; i++)
        cutune__value_clear(&f.owned[i]);
    free(f.owned);
    free(f.code);
    free(f.consts);
    prog_free_tables(f.tables, f.n_tables);
    free(f.fold_vars);
    free(locals);
    return g;
}

size_t cutune__expr_prog_slot_count(const cutune__expr_prog *g)
{
    return g ? g->n_slots : 0;
}

void cutune__expr_prog_init_slots(const cutune__expr_prog *g,
                                  cutune__slot *slots)
{
    if (g && g->n_consts)
        memcpy(slots + g->const_base, g->consts,
               g->n_consts * sizeof *slots);
}

/* Python's ==, <, ... between numbers of known types, through the same
 * comparison as the tree evaluator (exact between int and float). */
static int slot_cmp(int op, int r)
{
    if (r == 2) /* NaN */
        return op == OP_NE;
    switch (op) {
    case OP_EQ: return r == 0;
    case OP_NE: return r != 0;
    case OP_LT: return r < 0;
    case OP_LE: return r <= 0;
    case OP_GT: return r > 0;
    default: return r >= 0;
    }
}

static int float_cmp(double a, double b)
{
    if (isnan(a) || isnan(b))
        return 2;
    return a < b ? -1 : a > b;
}

static int in_table(const ftable *t, int is_float, cutune__slot x)
{
    if (is_float) {
        for (size_t k = 0; k < t->n_floats; k++)
            if (float_cmp(x.f, t->floats[k]) == 0)
                return 1;
        for (size_t k = 0; k < t->n_ints; k++)
            if (cmp_int_float(t->ints[k], x.f) == 0)
                return 1;
        return 0;
    }
    size_t lo = 0, hi = t->n_ints;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->ints[mid] < x.i)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < t->n_ints && t->ints[lo] == x.i)
        return 1;
    for (size_t k = 0; k < t->n_floats; k++)
        if (cmp_int_float(x.i, t->floats[k]) == 0)
            return 1;
    return 0;
}

/* Runs the program: 0, or -1 where the tree evaluator would fail or the
 * result's type differs from the static one. */
static int prog_run(const cutune__expr_prog *g, cutune__slot *s)
{
    const finsn *code = g->code;
    size_t n = g->n_code;
    for (size_t pc = 0; pc < n; pc++) {
        const finsn *in = &code[pc];
        cutune__slot *d = &s[in->dst];
        const cutune__slot a = s[in->a], b = s[in->b];
        switch (in->op) {
        case F_ADD_I:
            if (__builtin_add_overflow(a.i, b.i, &d->i))
                return -1;
            break;
        case F_SUB_I:
            if (__builtin_sub_overflow(a.i, b.i, &d->i))
                return -1;
            break;
        case F_MUL_I:
            if (__builtin_mul_overflow(a.i, b.i, &d->i))
                return -1;
            break;
        case F_TDIV_I:
            if (py_truediv_int(a.i, b.i, &d->f) != AR_OK)
                return -1;
            break;
        case F_FDIV_I:
            if (py_floordiv(a.i, b.i, &d->i) != AR_OK)
                return -1;
            break;
        case F_MOD_I:
            if (py_mod(a.i, b.i, &d->i) != AR_OK)
                return -1;
            break;
        case F_POW_I:
            if (b.i < 0 || py_ipow(a.i, b.i, &d->i) != AR_OK)
                return -1;
            break;
        case F_POWNEG_I:
            if (py_ipow_neg(a.i, b.i, &d->f) != AR_OK)
                return -1;
            break;
        case F_ADD_F: d->f = a.f + b.f; break;
        case F_SUB_F: d->f = a.f - b.f; break;
        case F_MUL_F: d->f = a.f * b.f; break;
        case F_TDIV_F:
            if (py_truediv(a.f, b.f, &d->f) != AR_OK)
                return -1;
            break;
        case F_FDIV_F:
            if (py_ffloordiv(a.f, b.f, &d->f) != AR_OK)
                return -1;
            break;
        case F_MOD_F:
            if (py_fmod(a.f, b.f, &d->f) != AR_OK)
                return -1;
            break;
        case F_POW_F:
            if (py_fpow(a.f, b.f, &d->f) != AR_OK)
                return -1;
            break;
        case F_NEG_I:
            if (a.i == INT64_MIN)
                return -1;
            d->i = -a.i;
            break;
        case F_NEG_F: d->f = -a.f; break;
        case F_I2F: d->f = (double)a.i; break;
        case F_MOV: *d = a; break;
        case F_NOT_I: d->i = a.i == 0; break;
        case F_NOT_F: d->i = a.f == 0.0; break;
        case F_TRUTH_F: d->i = a.f != 0.0; break;
        case F_EQ_II: d->i = a.i == b.i; break;
        case F_NE_II: d->i = a.i != b.i; break;
        case F_LT_II: d->i = a.i < b.i; break;
        case F_LE_II: d->i = a.i <= b.i; break;
        case F_GT_II: d->i = a.i > b.i; break;
        case F_GE_II: d->i = a.i >= b.i; break;
        case F_CMP_IF: d->i = slot_cmp(in->cmp, cmp_int_float(a.i, b.f)); break;
        case F_CMP_FI: {
            int r = cmp_int_float(b.i, a.f);
            d->i = slot_cmp(in->cmp, r == 2 ? 2 : -r);
            break;
        }
        case F_CMP_FF: d->i = slot_cmp(in->cmp, float_cmp(a.f, b.f)); break;
        case F_IN_I:
        case F_IN_F:
            d->i = in_table(&g->tables[in->arg], in->op == F_IN_F, a) !=
                   in->cmp;
            break;
        case F_MAX_I:
            if (b.i > a.i)
                *d = b;
            break;
        case F_MIN_I:
            if (b.i < a.i)
                *d = b;
            break;
        case F_MAX_F:
            if (b.f > a.f)
                *d = b;
            break;
        case F_MIN_F:
            if (b.f < a.f)
                *d = b;
            break;
        case F_JMP: pc = (size_t)in->arg - 1; break;
        case F_JZ_I:
            if (a.i == 0)
                pc = (size_t)in->arg - 1;
            break;
        case F_JNZ_I:
            if (a.i != 0)
                pc = (size_t)in->arg - 1;
            break;
        case F_JZ_F:
            if (a.f == 0.0)
                pc = (size_t)in->arg - 1;
            break;
        case F_JNZ_F:
            if (a.f != 0.0)
                pc = (size_t)in->arg - 1;
            break;
        default: return -1;
        }
    }
    return 0;
}

int cutune__expr_prog_truth(const cutune__expr_prog *g, cutune__slot *slots)
{
    if (prog_run(g, slots))
        return -1;
    const cutune__slot r = slots[g->result];
    return g->result_type == TY_FLOAT ? r.f != 0.0 : r.i != 0;
}

int cutune__expr_prog_eval(const cutune__expr_prog *g, cutune__slot *slots,
                           cutune__value *out)
{
    out->type = CUTUNE__V_NONE;
    if (g->mode != CUTUNE__PROG_VALUE || prog_run(g, slots))
        return -1;
    const cutune__slot r = slots[g->result];
    if (g->result_type == TY_FLOAT)
        set_float(out, r.f);
    else if (g->result_type == TY_BOOL)
        set_bool(out, r.i != 0);
    else
        set_int(out, r.i);
    return 0;
}
