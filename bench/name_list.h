/* Comma-separated name lists on the benchmarks' command lines
 * (`--strategies default,random`). A header alone: the two programs that
 * take such a list share nothing else worth a library. */
#ifndef CUTUNE_BENCH_NAME_LIST_H
#define CUTUNE_BENCH_NAME_LIST_H

#include <string.h>

/* 1 when `name` is one of the comma-separated names in `list`. */
static inline int bench_listed(const char *list, const char *name)
{
    size_t len = strlen(name);
    for (const char *p = list; *p;) {
        const char *end = strchr(p, ',');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        if (n == len && strncmp(p, name, n) == 0)
            return 1;
        p += n + (end != NULL);
    }
    return 0;
}

#endif
