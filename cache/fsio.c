/* Hashes, directories, atomic file replacement and outputs for cache/
 * and tuner/ (fsio.h). */
#define _GNU_SOURCE /* flock, GNU strerror_r */

#include "fsio.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
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

/* mkstemp() with O_NOFOLLOW spelled out and a mode of the caller's. The
 * names need not be unpredictable: a planted one only costs a retry. */
static int open_unique(char *tmp, mode_t mode)
{
    static const char digits[] = "abcdefghijklmnopqrstuvwxyz0123456789";
    size_t n = strlen(tmp);
    if (n < 6 || strcmp(tmp + n - 6, "XXXXXX") != 0) {
        errno = EINVAL;
        return -1;
    }
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t seed[3] = {(uint64_t)ts.tv_nsec ^ (uint64_t)ts.tv_sec,
                        (uint64_t)getpid(), (uint64_t)(uintptr_t)tmp};
    uint64_t v = cutune__fnv1a64(seed, sizeof seed);
    for (int attempt = 0; attempt < 100; attempt++) {
        v = cutune__fnv1a64_continue(v, &attempt, sizeof attempt);
        uint64_t left = v;
        for (size_t i = n - 6; i < n; i++, left /= 36)
            tmp[i] = digits[left % 36];
        int fd = open(tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                      mode);
        if (fd >= 0 || errno != EEXIST)
            return fd;
    }
    errno = EEXIST;
    return -1;
}

int cutune__atomic_file_open(cutune__atomic_file *f, char *tmp, int mode)
{
    f->tmp = tmp;
    f->err = 0;
    f->failed = NULL;
    f->fd = open_unique(tmp, mode ? (mode_t)mode : 0600);
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

/* ------------------------------------------------------------------ */
/* Outputs                                                              */

/* As many links as Linux follows in one path. */
#define LINK_HOPS 40

/* "cannot write PATH: REASON". REASON is `fmt` with `arg`, followed by
 * " (strerror(err))" when there is an `err`; without `fmt`, `arg` alone,
 * or strerror(err) when `arg` is NULL. errno ends as `err`. */
static int output_fail(char *why, size_t size, const char *path, int err,
                       const char *fmt, const char *arg)
{
    if (why && size) {
        char reason[512], buf[256];
        const char *text = err ? strerror_r(err, buf, sizeof buf) : "";
        if (!fmt)
            snprintf(reason, sizeof reason, "%s", arg ? arg : text);
        else {
            int n = snprintf(reason, sizeof reason, fmt, arg);
            if (err && n >= 0 && (size_t)n < sizeof reason)
                snprintf(reason + n, sizeof reason - (size_t)n, " (%s)", text);
        }
        snprintf(why, size, "cannot write %s: %s", path, reason);
    }
    errno = err;
    return -1;
}

/* `path` with its last component replaced by the link text `link`
 * (relative links are relative to the link's directory). */
static char *beside(const char *path, const char *link)
{
    const char *slash = strrchr(path, '/');
    size_t dlen = link[0] == '/' || !slash ? 0 : (size_t)(slash - path) + 1;
    size_t llen = strlen(link);
    char *next = malloc(dlen + llen + 1);
    if (next) {
        memcpy(next, path, dlen);
        memcpy(next + dlen, link, llen + 1);
    }
    return next;
}

/* The name a write of `path` creates or replaces: `path` itself, or the
 * end of its chain of symbolic links, followed one hop at a time so that a
 * link to nothing yet gives the name to create. Directories on the way
 * are left to the kernel: "dir/../x" walks the directory the link is in,
 * as the kernel's own walk does. malloc'ed; NULL with errno set. */
static char *final_target(const char *path)
{
    char *cur = strdup(path);
    char *link = malloc(4097);
    for (int hop = 0; cur && link; hop++) {
        struct stat st;
        if (lstat(cur, &st) != 0) {
            if (errno == ENOENT)
                break;
            goto fail;
        }
        if (!S_ISLNK(st.st_mode))
            break;
        ssize_t n = hop < LINK_HOPS ? readlink(cur, link, 4096) : -1;
        if (hop >= LINK_HOPS)
            errno = ELOOP;
        else if (n == 4096)
            errno = ENAMETOOLONG;
        if (n < 0 || n == 4096)
            goto fail;
        link[n] = '\0';
        char *next = beside(cur, link);
        free(cur);
        cur = next;
    }
    free(link);
    if (!cur)
        errno = ENOMEM;
    return cur;
fail:
    free(cur);
    free(link);
    return NULL;
}

/* The directory of `target`, which must be there and take new files. */
static int check_dir(const char *path, const char *target, char *why,
                     size_t size)
{
    const char *slash = strrchr(target, '/');
    if (slash && slash[1] == '\0')
        return output_fail(why, size, path, EISDIR, NULL, "is a directory");
    char *dir = slash ? strndup(target, (size_t)(slash - target)) : NULL;
    const char *d = !slash ? "." : dir && !dir[0] ? "/" : dir;
    if (slash && !dir)
        return output_fail(why, size, path, ENOMEM, NULL, "out of memory");
    struct stat st;
    int rc = 0;
    if (stat(d, &st) != 0 && errno == ENOENT) {
        rc = output_fail(why, size, path, 0, "no such directory %s", d);
        errno = ENOENT;
    } else if (stat(d, &st) != 0)
        rc = output_fail(why, size, path, errno, "cannot reach %s", d);
    else if (!S_ISDIR(st.st_mode))
        rc = output_fail(why, size, path, ENOTDIR, "%s is not a directory", d);
    else if (access(d, W_OK | X_OK) != 0)
        rc = output_fail(why, size, path, errno, "cannot create files in %s",
                         d);
    free(dir);
    return rc;
}

/* cutune__output_check, and the target to replace in *target. */
static int output_kind(const char *path, char **target, char *why, size_t size)
{
    *target = NULL;
    if (!path || !path[0])
        return output_fail(why, size, "\"\"", EINVAL, NULL, "no path given");
    if (strcmp(path, "-") == 0)
        return CUTUNE__OUTPUT_STDOUT;
    struct stat st;
    if (stat(path, &st) == 0) {
        if (S_ISDIR(st.st_mode))
            return output_fail(why, size, path, EISDIR, NULL,
                               "is a directory");
        if (!S_ISREG(st.st_mode) && !S_ISFIFO(st.st_mode) &&
            !S_ISCHR(st.st_mode))
            return output_fail(why, size, path, EINVAL, NULL,
                               "not a regular file, FIFO or character "
                               "device");
        if (access(path, W_OK) != 0)
            return output_fail(why, size, path, errno, NULL, NULL);
        if (!S_ISREG(st.st_mode))
            return CUTUNE__OUTPUT_STREAM;
    } else if (errno != ENOENT) {
        return output_fail(why, size, path, errno, NULL, NULL);
    }
    if (!(*target = final_target(path)))
        return output_fail(why, size, path, errno, NULL, NULL);
    if (check_dir(path, *target, why, size) != 0) {
        free(*target);
        *target = NULL;
        return -1;
    }
    return CUTUNE__OUTPUT_REPLACE;
}

int cutune__output_check(const char *path, char *why, size_t size)
{
    char *target;
    int kind = output_kind(path, &target, why, size);
    free(target);
    return kind;
}

static int write_all(int fd, const void *data, size_t len)
{
    const char *p = data;
    while (len > 0) {
        ssize_t w = write(fd, p, len);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            if (w == 0)
                errno = EIO;
            return -1;
        }
        p += w;
        len -= (size_t)w;
    }
    return 0;
}

static int stream_write(const char *path, const void *data, size_t len,
                        char *why, size_t size)
{
    int fd;
    do
        fd = open(path, O_WRONLY | O_NOCTTY | O_CLOEXEC);
    while (fd < 0 && errno == EINTR);
    if (fd < 0)
        return output_fail(why, size, path, errno, NULL, NULL);
    int rc = write_all(fd, data, len);
    int err = errno;
    if (close(fd) != 0 && rc == 0) {
        rc = -1;
        err = errno;
    }
    return rc ? output_fail(why, size, path, err, NULL, NULL) : 0;
}

static int replace_write(const char *path, const char *target,
                         const void *data, size_t len, char *why, size_t size)
{
    const char *slash = strrchr(target, '/');
    size_t dlen = slash ? (size_t)(slash - target) + 1 : 0;
    char *tmp = malloc(strlen(target) + 16);
    char *dir = slash ? strndup(target, dlen) : strdup(".");
    if (!tmp || !dir) {
        free(tmp);
        free(dir);
        return output_fail(why, size, path, ENOMEM, NULL, "out of memory");
    }
    /* A dot file: readers of cache directories skip it. */
    sprintf(tmp, "%.*s.%s.XXXXXX", (int)dlen, target, target + dlen);
    struct stat st;
    int replacing = lstat(target, &st) == 0;
    cutune__atomic_file f;
    if (cutune__atomic_file_open(&f, tmp, 0644) == 0) {
        if (replacing && fchmod(f.fd, st.st_mode & 07777) != 0)
            atomic_fail(&f, "write", errno);
        cutune__atomic_file_write(&f, data, len);
    }
    /* What stat() saw may have changed since: never rename over a FIFO or
     * device that appeared in the meantime. */
    if (!f.failed && lstat(target, &st) == 0 && !S_ISREG(st.st_mode))
        atomic_fail(&f, "rename into", EEXIST);
    int rc = cutune__atomic_file_commit(&f, target, 1);
    if (rc == 0)
        cutune__sync_dir(dir);
    else if (f.failed == create_step)
        output_fail(why, size, path, f.err, "cannot create %s", tmp);
    else if (strcmp(f.failed, "rename into") == 0)
        output_fail(why, size, path, f.err, "cannot rename %s into place",
                    tmp);
    else
        output_fail(why, size, path, f.err, "cannot %s", f.failed);
    free(tmp);
    free(dir);
    return rc;
}

int cutune__output_write(const char *path, const void *data, size_t len,
                         char *why, size_t size)
{
    char *target;
    int kind = output_kind(path, &target, why, size);
    int rc = -1;
    if (kind == CUTUNE__OUTPUT_STDOUT) {
        rc = write_all(STDOUT_FILENO, data, len);
        if (rc)
            output_fail(why, size, "standard output", errno, NULL, NULL);
    } else if (kind == CUTUNE__OUTPUT_STREAM) {
        rc = stream_write(path, data, len, why, size);
    } else if (kind == CUTUNE__OUTPUT_REPLACE) {
        rc = replace_write(path, target, data, len, why, size);
    }
    int err = errno;
    free(target);
    errno = err;
    return rc;
}

int cutune__output_lock(const char *path)
{
    if (!path || strcmp(path, "-") == 0)
        return -1;
    int fd;
    do
        fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    while (fd < 0 && errno == EINTR);
    struct stat st;
    if (fd >= 0 && (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))) {
        close(fd);
        return -1;
    }
    while (fd >= 0 && flock(fd, LOCK_SH) != 0 && errno == EINTR)
        ;
    return fd;
}

void cutune__output_unlock(int fd)
{
    if (fd >= 0)
        close(fd);
}
