/* The rules for a cache record's fields that writing and reading share:
 * ASCII and UTF-8 checks, timestamps in the one form the format allows,
 * compute capabilities. */
#include "store_internal.h"

/* ------------------------------------------------------------------ */
/* Small helpers                                                        */

int cutune__store_is_ascii_alnum(unsigned char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
           (c >= 'A' && c <= 'Z');
}

int cutune__store_is_hex(unsigned char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') ||
           (c >= 'A' && c <= 'F');
}

unsigned char cutune__store_ascii_lower(unsigned char c)
{
    return c >= 'A' && c <= 'Z' ? (unsigned char)(c - 'A' + 'a') : c;
}

/* jansson refuses strings that are not UTF-8; checking first lets the error
 * name the field instead of looking like an allocation failure. */
int cutune__store_utf8_valid(const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        unsigned c = *p, cp;
        size_t more;
        if (c < 0x80) {
            p++;
            continue;
        }
        if ((c & 0xE0) == 0xC0) {
            more = 1;
            cp = c & 0x1F;
        } else if ((c & 0xF0) == 0xE0) {
            more = 2;
            cp = c & 0x0F;
        } else if ((c & 0xF8) == 0xF0) {
            more = 3;
            cp = c & 0x07;
        } else {
            return 0;
        }
        for (size_t i = 1; i <= more; i++) {
            if ((p[i] & 0xC0) != 0x80)
                return 0;
            cp = (cp << 6) | (p[i] & 0x3F);
        }
        if ((more == 1 && cp < 0x80) || (more == 2 && cp < 0x800) ||
            (more == 3 && cp < 0x10000) || cp > 0x10FFFF ||
            (cp >= 0xD800 && cp <= 0xDFFF))
            return 0;
        p += more + 1;
    }
    return 1;
}

/* A fixed-size char array of cutune_device holds a C string. */
int cutune__store_fits(const char *field, size_t size)
{
    return memchr(field, '\0', size) != NULL;
}

char *cutune__store_path_join(const char *dir, const char *name)
{
    size_t dlen = strlen(dir), nlen = strlen(name);
    int slash = dlen > 0 && dir[dlen - 1] != '/';
    char *path = malloc(dlen + (size_t)slash + nlen + 1);
    if (!path)
        return NULL;
    memcpy(path, dir, dlen);
    if (slash)
        path[dlen] = '/';
    memcpy(path + dlen + (size_t)slash, name, nlen + 1);
    return path;
}

/* ------------------------------------------------------------------ */
/* Timestamps: civil-date arithmetic on the proleptic Gregorian calendar,
 * done here rather than with gmtime()/timegm() because time_t may be 32
 * bits and timegm() is not standard. */

static long long days_from_civil(long long y, unsigned m, unsigned d)
{
    y -= m <= 2;
    long long era = (y >= 0 ? y : y - 399) / 400;
    unsigned yoe = (unsigned)(y - era * 400);
    unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
    unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + (long long)doe - 719468;
}

static void civil_from_days(long long z, long long *y, unsigned *m,
                            unsigned *d)
{
    z += 719468;
    long long era = (z >= 0 ? z : z - 146096) / 146097;
    unsigned doe = (unsigned)(z - era * 146097);
    unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    unsigned mp = (5 * doy + 2) / 153;
    *d = doy - (153 * mp + 2) / 5 + 1;
    *m = mp < 10 ? mp + 3 : mp - 9;
    *y = (long long)yoe + era * 400 + (*m <= 2);
}

static int is_leap(long long y)
{
    return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

/* `ts` must lie in [TIMESTAMP_MIN, TIMESTAMP_MAX]. */
void cutune__store_format_timestamp(long long ts, char *buf, size_t size)
{
    long long days = ts / 86400, secs = ts % 86400;
    if (secs < 0) {
        secs += 86400;
        days--;
    }
    long long y;
    unsigned m, d;
    civil_from_days(days, &y, &m, &d);
    snprintf(buf, size, "%04lld-%02u-%02uT%02lld:%02lld:%02lldZ", y, m, d,
             secs / 3600, secs / 60 % 60, secs % 60);
}

static int parse_digits(const char *s, size_t n, unsigned *out)
{
    unsigned v = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return 0;
        v = v * 10 + (unsigned)(s[i] - '0');
    }
    *out = v;
    return 1;
}

/* Only the exact form we write, so that nothing is read approximately. */
int cutune__store_parse_timestamp(const char *s, long long *out)
{
    static const unsigned month_days[12] = {31, 28, 31, 30, 31, 30,
                                            31, 31, 30, 31, 30, 31};
    unsigned y, mo, d, h, mi, se;
    if (strlen(s) != 20 || s[4] != '-' || s[7] != '-' || s[10] != 'T' ||
        s[13] != ':' || s[16] != ':' || s[19] != 'Z')
        return 0;
    if (!parse_digits(s, 4, &y) || !parse_digits(s + 5, 2, &mo) ||
        !parse_digits(s + 8, 2, &d) || !parse_digits(s + 11, 2, &h) ||
        !parse_digits(s + 14, 2, &mi) || !parse_digits(s + 17, 2, &se))
        return 0;
    if (mo < 1 || mo > 12 || d < 1 || h > 23 || mi > 59 || se > 59)
        return 0;
    if (d > month_days[mo - 1] + (mo == 2 && is_leap(y)))
        return 0;
    *out = days_from_civil(y, mo, d) * 86400 + h * 3600LL + mi * 60LL + se;
    return 1;
}

/* "<major>.<minor>", digits only. */
int cutune__store_parse_cc(const char *s, int *major, int *minor)
{
    long long v[2];
    for (int part = 0; part < 2; part++) {
        size_t n = 0;
        v[part] = 0;
        while (s[n] >= '0' && s[n] <= '9') {
            if (n == 9)
                return 0;
            v[part] = v[part] * 10 + (s[n] - '0');
            n++;
        }
        if (n == 0)
            return 0;
        s += n;
        if (part == 0 && *s++ != '.')
            return 0;
    }
    if (*s != '\0')
        return 0;
    *major = (int)v[0];
    *minor = (int)v[1];
    return 1;
}
