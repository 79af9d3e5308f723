/* Whole-file reads of plain or gzip-compressed input with a size limit. */
#define _POSIX_C_SOURCE 200809L

#include "inflate.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "util.h"

#define MIB ((size_t)1 << 20)

cutune_status cutune__max_input_bytes(size_t *bytes, char *err, size_t errlen)
{
    double mb = CUTUNE__MAX_INPUT_MB_DEFAULT;
    cutune_status st =
        cutune_env_number(CUTUNE__MAX_INPUT_ENV, 1, CUTUNE__MAX_INPUT_MB_MAX,
                          1, &mb, err, errlen);
    *bytes = (size_t)mb * MIB;
    return st;
}

static cutune_status too_big(const char *path, size_t limit, char *err,
                             size_t errlen)
{
    return cutune__errf(
        err, errlen, CUTUNE_ERR_LIMIT,
        "%s: larger than %zu MiB decompressed; refused (set %s "
        "to a larger number of MiB to read it)",
        path, limit / MIB ? limit / MIB : 1, CUTUNE__MAX_INPUT_ENV);
}

static cutune_status inflate_all(gzFile gz, const char *path, size_t limit,
                                 char **data, size_t *len, char *err,
                                 size_t errlen)
{
    size_t cap = limit < MIB ? limit : MIB, n = 0;
    char *buf = malloc(cap + 1);
    if (!buf)
        return cutune__errf(err, errlen, CUTUNE_ERR_NO_MEMORY,
                            "out of memory");
    for (;;) {
        if (n == cap) {
            if (cap >= limit) {
                /* One byte more tells a file of exactly `limit` bytes
                 * from a larger one. */
                char probe;
                if (gzread(gz, &probe, 1) == 0)
                    break;
                free(buf);
                return too_big(path, limit, err, errlen);
            }
            size_t grown = cap > limit / 2 ? limit : 2 * cap;
            char *bigger = realloc(buf, grown + 1);
            if (!bigger) {
                free(buf);
                return cutune__errf(err, errlen, CUTUNE_ERR_NO_MEMORY,
                                    "out of memory");
            }
            buf = bigger;
            cap = grown;
        }
        size_t want = cap - n < (1u << 30) ? cap - n : (1u << 30);
        int got = gzread(gz, buf + n, (unsigned)want);
        if (got < 0) {
            int zerr;
            const char *why = gzerror(gz, &zerr);
            free(buf);
            return cutune__errf(err, errlen, CUTUNE_ERR_IO,
                                "%s: cannot read: %s", path,
                                zerr == Z_ERRNO ? strerror(errno) : why);
        }
        if (got == 0)
            break;
        n += (size_t)got;
    }
    int zerr;
    gzerror(gz, &zerr);
    if (zerr == Z_BUF_ERROR) {
        free(buf);
        return cutune__errf(err, errlen, CUTUNE_ERR_PARSE,
                            "%s: truncated: the gzip stream ends early (after "
                            "%zu bytes decompressed); the file was cut short",
                            path, n);
    }
    buf[n] = '\0';
    *data = buf;
    *len = n;
    return CUTUNE_OK;
}

cutune_status cutune__read_input(const char *path, size_t limit, char **data,
                                 size_t *len, char *err, size_t errlen)
{
    *data = NULL;
    *len = 0;
    cutune_status st;
    if (limit == 0 &&
        (st = cutune__max_input_bytes(&limit, err, errlen)) != CUTUNE_OK)
        return st;
    errno = 0;
    gzFile gz = gzopen(path, "rb");
    if (!gz)
        return cutune__errf(err, errlen, CUTUNE_ERR_IO, "%s: cannot open: %s",
                            path, errno ? strerror(errno) : "out of memory");
    st = inflate_all(gz, path, limit, data, len, err, errlen);
    gzclose(gz);
    return st;
}
