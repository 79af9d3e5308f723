#define _POSIX_C_SOURCE 200809L

#include "util.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

char *cutune__strdup_printf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0)
        return NULL;
    char *s = malloc((size_t)n + 1);
    if (!s)
        return NULL;
    va_start(ap, fmt);
    vsnprintf(s, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return s;
}

cutune_status cutune__errf(char *err, size_t errlen, cutune_status st,
                           const char *fmt, ...)
{
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return st;
}

cutune_status cutune__vfail(char **errmsg, cutune_status st,
                            const char *prefix, const char *fmt, va_list ap)
{
    va_list copy;
    va_copy(copy, ap);
    int n = vsnprintf(NULL, 0, fmt, copy);
    va_end(copy);
    char *msg = n > 0 ? malloc((size_t)n + 1) : NULL;
    if (msg)
        vsnprintf(msg, (size_t)n + 1, fmt, ap);
    /* A message built from an empty log would say nothing. */
    const char *text = msg ? msg : n == 0 ? cutune_status_str(st) : NULL;
    char *whole = !text    ? NULL
                  : prefix ? cutune__strdup_printf("%s: %s", prefix, text)
                           : cutune__strdup_printf("%s", text);
    free(msg);
    if (whole) {
        free(*errmsg);
        *errmsg = whole;
    }
    return st;
}

double cutune__now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* A whole number in digits only: strtoull would take "-1" (as 2^64 - 1),
 * leading blanks and a sign. */
static int whole_number(const char *text, double *out)
{
    for (const char *c = text; *c; c++)
        if (*c < '0' || *c > '9')
            return 0;
    errno = 0;
    unsigned long long v = strtoull(text, NULL, 10);
    *out = (double)v;
    return errno == 0;
}

cutune_status cutune_env_number(const char *name, double min, double max,
                                int integer, double *value, char *message,
                                size_t size)
{
    const char *text = name ? getenv(name) : NULL;
    if (!text || !text[0])
        return CUTUNE_OK;
    double v = NAN;
    char *end = NULL;
    int ok;
    if (integer) {
        ok = whole_number(text, &v);
    } else {
        errno = 0;
        v = strtod(text, &end);
        ok = end != text && !*end && errno == 0 && isfinite(v);
    }
    if (ok && v >= min && v <= max) {
        *value = v;
        return CUTUNE_OK;
    }
    if (integer)
        return cutune__errf(message, size, CUTUNE_ERR_INVALID_ARGUMENT,
                            "%s: '%s' is not a whole number from %.0f to "
                            "%.0f",
                            name, text, min, max);
    return cutune__errf(message, size, CUTUNE_ERR_INVALID_ARGUMENT,
                        "%s: '%s' is not a number from %g to %g", name, text,
                        min, max);
}
