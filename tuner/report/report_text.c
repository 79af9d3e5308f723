/* The report's text buffer; see report_text.h. */
#include "report_text.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void cutune__rtext_free(cutune__rtext *t)
{
    free(t->data);
    t->data = NULL;
    t->len = t->cap = 0;
}

static int reserve(cutune__rtext *t, size_t more)
{
    if (t->oom)
        return 0;
    if (t->len + more + 1 <= t->cap)
        return 1;
    size_t cap = t->cap ? t->cap : 4096;
    while (cap < t->len + more + 1)
        cap *= 2;
    char *bigger = realloc(t->data, cap);
    if (!bigger) {
        t->oom = 1;
        return 0;
    }
    t->data = bigger;
    t->cap = cap;
    return 1;
}

static void put_n(cutune__rtext *t, const char *s, size_t n)
{
    if (!reserve(t, n))
        return;
    memcpy(t->data + t->len, s, n);
    t->len += n;
    t->data[t->len] = '\0';
}

void cutune__rtext_put(cutune__rtext *t, const char *s)
{
    put_n(t, s, strlen(s));
}

void cutune__rtext_printf(cutune__rtext *t, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char small[256];
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n < sizeof small) {
        put_n(t, small, (size_t)n);
        return;
    }
    if (!reserve(t, (size_t)n))
        return;
    va_start(ap, fmt);
    vsnprintf(t->data + t->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    t->len += (size_t)n;
}

void cutune__rtext_escape(cutune__rtext *t, const char *s)
{
    for (const char *p = s; p && *p;) {
        size_t run = strcspn(p, "&<>\"'");
        put_n(t, p, run);
        p += run;
        if (!*p)
            break;
        switch (*p++) {
        case '&': cutune__rtext_put(t, "&amp;"); break;
        case '<': cutune__rtext_put(t, "&lt;"); break;
        case '>': cutune__rtext_put(t, "&gt;"); break;
        case '"': cutune__rtext_put(t, "&quot;"); break;
        default: cutune__rtext_put(t, "&#39;"); break;
        }
    }
}

char *cutune__rtext_num(char *buf, double v, int digits)
{
    if (!isfinite(v)) {
        strcpy(buf, "-");
        return buf;
    }
    double a = fabs(v);
    if (a != 0 && (a < 1e-4 || a >= 1e6)) {
        /* printf splits mantissa and exponent: dividing by pow(10, e)
         * overflows for subnormals (5e-324 became "infe-324") and rounds
         * 9.9996e6 to a mantissa of 10. */
        char sci[48];
        snprintf(sci, sizeof sci, "%.*e", digits > 1 ? digits - 1 : 0, v);
        char *e = strchr(sci, 'e');
        int exp10 = e ? atoi(e + 1) : 0;
        if (e) {
            char *end = e;
            if (strchr(sci, '.')) {
                while (end[-1] == '0')
                    end--;
                if (end[-1] == '.')
                    end--;
            }
            *end = '\0';
        }
        snprintf(buf, 32, "%.20se%d", sci, exp10);
        return buf;
    }
    snprintf(buf, 32, "%.*g", digits, v);
    /* %g writes 1e+06 for 999999.5 at 6 digits */
    if (strchr(buf, 'e'))
        snprintf(buf, 32, "%.0f", v);
    return buf;
}

char *cutune__rtext_fixed(char *buf, double v, int sig)
{
    if (!isfinite(v)) {
        strcpy(buf, "-");
        return buf;
    }
    int mag = v != 0 ? (int)floor(log10(fabs(v))) : 0;
    int decimals = sig - 1 - mag;
    if (mag >= 9 || decimals > 12)
        return cutune__rtext_num(buf, v, sig);
    snprintf(buf, 32, "%.*f", decimals > 0 ? decimals : 0, v);
    return buf;
}
