/* Values of the T1 expression language (copy, truth, equality, their
 * Python text) and the error record every stage of the language fills. Apart
 * from the parser and evaluator because the space and the cache use values
 * without parsing anything. */
#include "expr_internal.h"

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

void cutune__expr_verror(cutune__expr_error *err, const char *text, size_t pos,
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
void cutune__expr_set_error(cutune__expr_error *err, const char *text,
                            size_t pos, size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    cutune__expr_verror(err, text, pos, len, fmt, ap);
    va_end(ap);
}

void cutune__expr_set_oom(cutune__expr_error *err)
{
    cutune__expr_set_error(err, NULL, 0, 0, "out of memory");
}

/* ------------------------------------------------------------------ */
/* Values                                                              */

const char *cutune__expr_type_name(const cutune__value *v)
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

int cutune__expr_is_intlike(const cutune__value *v)
{
    return v->type == CUTUNE__V_INT || v->type == CUTUNE__V_BOOL;
}

int cutune__expr_is_number(const cutune__value *v)
{
    return cutune__expr_is_intlike(v) || v->type == CUTUNE__V_FLOAT;
}

double cutune__expr_as_double(const cutune__value *v)
{
    return v->type == CUTUNE__V_FLOAT ? v->u.f : (double)v->u.i;
}

void cutune__expr_set_int(cutune__value *v, int64_t i)
{
    v->type = CUTUNE__V_INT;
    v->u.i = i;
}

void cutune__expr_set_float(cutune__value *v, double f)
{
    v->type = CUTUNE__V_FLOAT;
    v->u.f = f;
}

void cutune__expr_set_bool(cutune__value *v, int b)
{
    v->type = CUTUNE__V_BOOL;
    v->u.i = b != 0;
}

void cutune__expr_set_empty_list(cutune__value *v)
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

char *cutune__expr_dup_bytes(const char *s, size_t n)
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
        char *s = cutune__expr_dup_bytes(src->u.s, strlen(src->u.s));
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
int cutune__expr_cmp_int_float(int64_t i, double f)
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

int cutune__expr_num_cmp(const cutune__value *a, const cutune__value *b)
{
    if (cutune__expr_is_intlike(a) && cutune__expr_is_intlike(b))
        return a->u.i < b->u.i ? -1 : a->u.i > b->u.i;
    if (cutune__expr_is_intlike(a))
        return cutune__expr_cmp_int_float(a->u.i, b->u.f);
    if (cutune__expr_is_intlike(b)) {
        int r = cutune__expr_cmp_int_float(b->u.i, a->u.f);
        return r == 2 ? 2 : -r;
    }
    if (isnan(a->u.f) || isnan(b->u.f))
        return 2;
    return a->u.f < b->u.f ? -1 : a->u.f > b->u.f;
}

int cutune__value_equal(const cutune__value *a, const cutune__value *b)
{
    if (cutune__expr_is_number(a) && cutune__expr_is_number(b))
        return cutune__expr_num_cmp(a, b) == 0;
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
