/* The lexer of the T1 expression language: tokens, keywords, and the
 * literals' values (Python's rules for ints, floats and strings). */
#include "expr_internal.h"

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

int cutune__expr_perror_at(parser *p, size_t pos, size_t len, const char *fmt,
                           ...)
{
    va_list ap;
    va_start(ap, fmt);
    cutune__expr_verror(p->err, p->text, pos, len, fmt, ap);
    va_end(ap);
    return -1;
}

static int lex_number(parser *p, size_t pos, tok *t)
{
    const char *s = p->text;
    size_t i = pos;
    t->type = T_INT;
    if (s[i] == '0' &&
        (s[i + 1] == 'x' || s[i + 1] == 'X' || s[i + 1] == 'o' ||
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
            return cutune__expr_perror_at(p, pos, i - pos, "invalid number");
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
    {"and", T_AND},     {"or", T_OR},     {"not", T_NOT}, {"in", T_IN},
    {"if", T_IF},       {"else", T_ELSE}, {"for", T_FOR}, {"True", T_TRUE},
    {"False", T_FALSE}, {"None", T_NONE},
};

int cutune__expr_word_is(const char *s, size_t n, const char *w)
{
    return strlen(w) == n && memcmp(s, w, n) == 0;
}

int cutune__expr_lex(parser *p, size_t pos, tok *t)
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
            if (cutune__expr_word_is(s + pos, t->len, keywords[k].word))
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
            return cutune__expr_perror_at(p, pos, 1, "unterminated string");
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
    return cutune__expr_perror_at(p, pos, n, "unexpected character");
}

int cutune__expr_advance(parser *p)
{
    return cutune__expr_lex(p, p->cur.pos + p->cur.len, &p->cur);
}

int cutune__expr_unexpected(parser *p)
{
    if (p->cur.type == T_EOF)
        return cutune__expr_perror_at(p, p->cur.pos, 0,
                                      "unexpected end of expression");
    return cutune__expr_perror_at(p, p->cur.pos, p->cur.len,
                                  "unexpected token");
}

/* A closing bracket is due: either it is there, or the error names the
 * bracket left open when the text ran out. */
int cutune__expr_expect_close(parser *p, int type, const tok *open)
{
    if (p->cur.type == type)
        return cutune__expr_advance(p);
    if (p->cur.type == T_EOF)
        return cutune__expr_perror_at(p, open->pos, open->len,
                                      "'%c' was never closed",
                                      p->text[open->pos]);
    return cutune__expr_unexpected(p);
}

node *cutune__expr_parse_int_literal(parser *p)
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
            cutune__expr_perror_at(p, p->cur.pos, n, "invalid number");
            return NULL;
        }
    } else if (n > 1 && s[0] == '0') {
        for (size_t k = 0; k < n; k++)
            if (s[k] != '0') {
                cutune__expr_perror_at(
                    p, p->cur.pos, n,
                    "leading zeros in decimal integer literals are "
                    "not permitted");
                return NULL;
            }
    }
    for (; i < n; i++) {
        unsigned ch = (unsigned char)s[i];
        uint64_t d = is_digit((int)ch)          ? ch - '0'
                     : (ch >= 'a' && ch <= 'f') ? ch - 'a' + 10
                     : (ch >= 'A' && ch <= 'F') ? ch - 'A' + 10
                                                : 99;
        if (d >= base) {
            cutune__expr_perror_at(p, p->cur.pos, n, "invalid number");
            return NULL;
        }
        if (v > ((uint64_t)INT64_MAX - d) / base) {
            cutune__expr_perror_at(p, p->cur.pos, n,
                                   "integer literal too large");
            return NULL;
        }
        v = v * base + d;
    }
    node *nd = cutune__expr_new_node(p, N_LIT, p->cur.pos, n);
    if (nd)
        cutune__expr_set_int(&nd->u.lit, (int64_t)v);
    return nd;
}

/* strtod reads the locale's decimal point, Python's is always '.'. */
node *cutune__expr_parse_float_literal(parser *p)
{
    char radix[16];
    snprintf(radix, sizeof radix, "%.1f", 0.5);
    size_t rlen = strlen(radix) - 2; /* between "0" and "5" */
    const char *s = p->text + p->cur.pos;
    size_t n = p->cur.len;
    char *buf = malloc(n + rlen + 1);
    if (!buf) {
        cutune__expr_set_oom(p->err);
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
    node *nd = cutune__expr_new_node(p, N_LIT, p->cur.pos, n);
    if (nd)
        cutune__expr_set_float(&nd->u.lit, d);
    return nd;
}

node *cutune__expr_parse_str_literal(parser *p)
{
    const char *s = p->text + p->cur.pos + 1;
    size_t n = p->cur.len - 2;
    char *out = malloc(n + 1);
    if (!out) {
        cutune__expr_set_oom(p->err);
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
    node *nd = cutune__expr_new_node(p, N_LIT, p->cur.pos, p->cur.len);
    if (!nd) {
        free(out);
        return NULL;
    }
    nd->u.lit.type = CUTUNE__V_STR;
    nd->u.lit.u.s = out;
    return nd;
}
