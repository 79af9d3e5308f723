/* Test helper: removes a test's scratch folder under /tmp and everything
 * in it (links are removed, never followed), so that a test run leaves
 * nothing behind. POSIX only (opendir, lstat), so it builds under
 * _POSIX_C_SOURCE 200809L as under _GNU_SOURCE. */
#ifndef CUTUNE_TESTS_TMPDIR_H
#define CUTUNE_TESTS_TMPDIR_H

#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Removes `path` and, when it is a folder, its contents; a NULL or empty
 * `path` is a no-op. */
static inline void remove_tree(const char *path)
{
    struct stat st;
    if (!path || !*path || lstat(path, &st) != 0)
        return;
    if (S_ISDIR(st.st_mode)) {
        DIR *d = opendir(path);
        for (struct dirent *de; d && (de = readdir(d));) {
            if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
                continue;
            char child[4096];
            if ((size_t)snprintf(child, sizeof child, "%s/%s", path,
                                 de->d_name) < sizeof child)
                remove_tree(child);
        }
        if (d)
            closedir(d);
        if (rmdir(path) != 0)
            perror(path);
    } else if (unlink(path) != 0) {
        perror(path);
    }
}

#endif
