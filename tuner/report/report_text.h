/* A growing text buffer for the report's HTML and SVG: appends never fail
 * visibly; the first allocation failure sets `oom` and later appends do
 * nothing, so a writer checks once at the end. */
#ifndef CUTUNE_REPORT_TEXT_H
#define CUTUNE_REPORT_TEXT_H

#include <stddef.h>

typedef struct cutune__rtext {
    char *data; /* NUL-terminated when len > 0 */
    size_t len;
    size_t cap;
    int oom;
} cutune__rtext;

void cutune__rtext_free(cutune__rtext *t);
void cutune__rtext_put(cutune__rtext *t, const char *s);
void cutune__rtext_printf(cutune__rtext *t, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Appends `s` with &, <, >, " and ' written as entities. */
void cutune__rtext_escape(cutune__rtext *t, const char *s);

/* A number as a reader wants it: up to `digits` significant digits, no
 * exponent between 1e-4 and 1e6, "1e7" style outside; "-" when not
 * finite. Writes into buf (at least 32 bytes) and returns it. */
char *cutune__rtext_num(char *buf, double v, int digits);

/* A time or ratio with `sig` significant digits, trailing zeros kept
 * ("0.6250", "12.30", "1235"); "-" when not finite. */
char *cutune__rtext_fixed(char *buf, double v, int sig);

#endif
