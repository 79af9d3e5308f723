/* Hashing the kernel source of a problem loaded space_only, so that
 * `cutune simulate` records carry the hash a tune would. */
#define _XOPEN_SOURCE 700

#include "source_hash.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel_source.h"
#include "util.h"

static void set_hash(cutune_problem *p, uint64_t h)
{
    snprintf(p->source_hash, sizeof p->source_hash, "%016llx",
             (unsigned long long)h);
}

void cutune__problem_hash_kernel(cutune_problem *p, const char *kernel_file,
                                 const char *dir, const char *builtin,
                                 size_t builtin_len)
{
    if (builtin) {
        set_hash(p, cutune__fnv1a64(builtin, builtin_len));
        return;
    }
    if (!kernel_file || !kernel_file[0])
        return;
    char *path = kernel_file[0] == '/' || !dir
                     ? cutune__strdup_printf("%s", kernel_file)
                     : cutune__strdup_printf("%s/%s", dir, kernel_file);
    char *text = NULL, err[256];
    size_t len = 0;
    if (!path ||
        cutune__read_regular_file(path, CUTUNE__MAX_SOURCE_BYTES, &text, &len,
                                  err, sizeof err) != 0) {
        free(path);
        return;
    }
    /* The hash a full load gives: the source with the headers it includes,
     * found beside it and beside the T1 file (t1_kernel.c). */
    char *slash = strrchr(path, '/');
    char *kdir = slash ? strndup(path, (size_t)(slash - path)) : strdup(".");
    char *kreal = kdir ? realpath(kdir, NULL) : NULL;
    char *treal = realpath(dir ? dir : ".", NULL);
    if (kreal && treal) {
        const char *dirs[2] = {kreal, treal};
        set_hash(p, cutune__source_hash(text, len, dirs,
                                        strcmp(kreal, treal) == 0 ? 1 : 2));
    }
    free(kdir);
    free(kreal);
    free(treal);
    free(path);
    free(text);
}
