/* Test helper: damages the binary cache on disk the way a bad disk or a
 * changed driver would leave it, so that tests can check that cutune
 * compiles such entries again instead of failing their configurations. */
#ifndef CUTUNE_TESTS_DAMAGE_H
#define CUTUNE_TESTS_DAMAGE_H

#include <dirent.h>
#include <stdio.h>
#include <string.h>

/* Counts the entries of `dir` that hold a cubin with its ELF magic intact
 * and, with `damage`, overwrites that magic. */
static inline int scan_cubins(const char *dir, int damage)
{
    int found = 0;
    DIR *d = opendir(dir);
    for (struct dirent *de; d && (de = readdir(d));) {
        char path[4200];
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        FILE *f = fopen(path, damage ? "r+b" : "rb");
        if (!f)
            continue;
        static char buf[1 << 20];
        size_t n = fread(buf, 1, sizeof buf, f);
        for (size_t i = 0; i + 4 <= n; i++)
            if (memcmp(buf + i,
                       "\x7f"
                       "ELF",
                       4) == 0) {
                if (damage) {
                    fseek(f, (long)i, SEEK_SET);
                    fwrite("XXXX", 1, 4, f);
                }
                found++;
                break;
            }
        fclose(f);
    }
    if (d)
        closedir(d);
    return found;
}

static inline int damage_cubins(const char *dir)
{
    return scan_cubins(dir, 1);
}

static inline int count_cubins(const char *dir)
{
    return scan_cubins(dir, 0);
}

#endif
