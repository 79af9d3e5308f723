/* Small helpers shared by the tuner's files. Hashing, making directories
 * and atomic writes are cache/fsio.h's, which the cache shares: included
 * here, so that a file of the tuner finds all its plumbing in one place. */
#ifndef CUTUNE_TUNER_UTIL_H
#define CUTUNE_TUNER_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "cutune/cutune.h"
#include "fsio.h"

/* printf into a new malloc'ed string; NULL when memory ran out. */
char *cutune__strdup_printf(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));

/* Formats a message into err (errlen bytes, truncated; nothing when err is
 * NULL or errlen 0) and returns `st`: the failure path of functions that
 * report through a caller's buffer rather than a handle. */
cutune_status cutune__errf(char *err, size_t errlen, cutune_status st,
                           const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* The one way the tuner's handles (session, problem, simulation, report)
 * take a failure: the message formatted into a new *errmsg, which it
 * replaces (kept when memory ran out), led by "prefix: " when prefix is
 * not NULL, and the status's own text when the message would be empty;
 * returns `st`. Functions without a handle use cutune__errf above. */
cutune_status cutune__vfail(char **errmsg, cutune_status st,
                            const char *prefix, const char *fmt, va_list ap)
    __attribute__((format(printf, 4, 0)));

/* Seconds on the monotonic clock. */
double cutune__now(void);

#endif
