/* Hashing the kernel source of a problem loaded space_only, so that
 * `cutune simulate` records carry the hash a tune would. */
#include "source_hash.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

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
    FILE *f = path ? fopen(path, "rb") : NULL;
    free(path);
    if (!f)
        return;
    /* The same hash as of the whole file in memory, a block at a time. */
    uint64_t h = cutune__fnv1a64(NULL, 0);
    char buf[1 << 16];
    size_t got;
    while ((got = fread(buf, 1, sizeof buf, f)) > 0)
        h = cutune__fnv1a64_continue(h, buf, got);
    int bad = ferror(f);
    fclose(f);
    if (!bad)
        set_hash(p, h);
}
