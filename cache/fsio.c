/* Hashes, directories and atomic file replacement for cache/ and tuner/
 * (fsio.h). */
#define _GNU_SOURCE /* mkostemp */

#include "fsio.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

uint32_t cutune__fnv1a32(const void *data, size_t len)
{
    const unsigned char *p = data;
    uint32_t hash = 2166136261u;
    for (size_t i = 0; i < len; i++) {
        hash ^= p[i];
        hash *= 16777619u;
    }
    return hash;
}

uint64_t cutune__fnv1a64_continue(uint64_t hash, const void *data, size_t len)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < len; i++) {
        hash ^= p[i];
        hash *= 0x100000001b3ULL;
    }
    return hash;
}

uint64_t cutune__fnv1a64(const void *data, size_t len)
{
    return cutune__fnv1a64_continue(0xcbf29ce484222325ULL, data, len);
}

static int make_dirs_failed(size_t *failed, size_t at, int err)
{
    if (failed)
        *failed = at;
    errno = err;
    return -1;
}

int cutune__make_dirs(const char *path, size_t *failed)
{
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
        return 0;

    size_t len = strlen(path);
    char *p = malloc(len + 1);
    if (!p)
        return make_dirs_failed(failed, len, ENOMEM);
    memcpy(p, path, len + 1);
    for (size_t i = 1; i <= len; i++) {
        if ((p[i] != '/' && p[i] != '\0') || p[i - 1] == '/')
            continue;
        char saved = p[i];
        p[i] = '\0';
        if (mkdir(p, 0755) != 0 && errno != EEXIST) {
            int err = errno;
            /* EACCES and the like for a directory that is already there
             * (a parent we may not write to) are no obstacle. */
            if (stat(p, &st) != 0 || !S_ISDIR(st.st_mode)) {
                free(p);
                return make_dirs_failed(failed, i, err);
            }
        }
        p[i] = saved;
    }
    free(p);
    if (stat(path, &st) != 0)
        return make_dirs_failed(failed, len, errno);
    if (!S_ISDIR(st.st_mode))
        return make_dirs_failed(failed, len, ENOTDIR);
    return 0;
}

void cutune__sync_dir(const char *dir)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        if (fsync(fd) != 0) {
            /* best effort (fsio.h) */
        }
        close(fd);
    }
}

/* The step that leaves no temporary file behind to remove. */
static const char create_step[] = "create";

static int atomic_fail(cutune__atomic_file *f, const char *step, int err)
{
    if (!f->failed) {
        f->failed = step;
        f->err = err;
    }
    return -1;
}

int cutune__atomic_file_open(cutune__atomic_file *f, char *tmp, int mode)
{
    f->tmp = tmp;
    f->err = 0;
    f->failed = NULL;
    if (mode == 0)
        f->fd = mkostemp(tmp, O_CLOEXEC);
    else
        f->fd =
            open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, (mode_t)mode);
    return f->fd < 0 ? atomic_fail(f, create_step, errno) : 0;
}

int cutune__atomic_file_write(cutune__atomic_file *f, const void *data,
                              size_t len)
{
    const char *p = data;
    if (f->failed)
        return -1;
    while (len > 0) {
        ssize_t w = write(f->fd, p, len);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return atomic_fail(f, "write", w < 0 ? errno : EIO);
        p += w;
        len -= (size_t)w;
    }
    return 0;
}

static void atomic_close(cutune__atomic_file *f)
{
    if (f->fd < 0)
        return;
    if (close(f->fd) != 0)
        atomic_fail(f, "close", errno);
    f->fd = -1;
}

void cutune__atomic_file_abort(cutune__atomic_file *f)
{
    int err = errno;
    atomic_close(f);
    if (f->failed != create_step)
        unlink(f->tmp);
    errno = err;
}

int cutune__atomic_file_commit(cutune__atomic_file *f, const char *path,
                               int sync)
{
    if (!f->failed && sync && fsync(f->fd) != 0)
        atomic_fail(f, "sync", errno);
    atomic_close(f);
    if (!f->failed && rename(f->tmp, path) != 0)
        atomic_fail(f, "rename into", errno);
    if (!f->failed)
        return 0;
    cutune__atomic_file_abort(f);
    errno = f->err;
    return -1;
}
