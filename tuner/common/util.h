/* Small helpers shared by the tuner's files. */
#ifndef CUTUNE_TUNER_UTIL_H
#define CUTUNE_TUNER_UTIL_H

#include <stddef.h>
#include <stdint.h>

/* printf into a new malloc'ed string; NULL when memory ran out. */
char *cutune__strdup_printf(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));

/* 64-bit FNV-1a: a stable digest for cache keys and stale-source checks
 * (not for security). */
uint64_t cutune__fnv1a64(const void *data, size_t len);
uint64_t cutune__fnv1a64_continue(uint64_t hash, const void *data,
                                  size_t len);

/* mkdir -p: creates `path` and its missing parents. 0, or -1 with errno
 * set. */
int cutune__make_dirs(const char *path);

/* Seconds on the monotonic clock. */
double cutune__now(void);

#endif
