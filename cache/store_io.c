/* The cache's files: the name a device's records go to, directories made
 * on demand, and the two ways a file is written (appending one locked line;
 * writing a whole file the way every output is written, fsio.h). The
 * plumbing under them is fsio.c's, which the tuner shares. */
#include "store_internal.h"

/* ------------------------------------------------------------------ */
/* File names                                                           */

int cutune__cache_file_name(const cutune_device *device, char *buf,
                            size_t size)
{
    char name[NAME_PART_MAX + 1];
    size_t n = 0, name_len = strnlen(device->name, sizeof device->name);
    int dash = 0;
    for (size_t i = 0; i < name_len; i++) {
        unsigned char c = (unsigned char)device->name[i];
        if (!cutune__store_is_ascii_alnum(c)) {
            dash = 1;
            continue;
        }
        if (dash && n > 0) {
            if (n + 2 > NAME_PART_MAX)
                break;
            name[n++] = '-';
        }
        dash = 0;
        if (n + 1 > NAME_PART_MAX)
            break;
        name[n++] = (char)cutune__store_ascii_lower(c);
    }
    name[n] = '\0';
    if (n == 0)
        strcpy(name, "unknown");

    char uuid[sizeof device->uuid];
    memcpy(uuid, device->uuid, sizeof uuid);
    uuid[sizeof uuid - 1] = '\0';
    char id[9];
    size_t idn = 0;
    const char *u = uuid;
    if (strncasecmp(u, "GPU-", 4) == 0)
        u += 4;
    for (; *u && idn < 8; u++)
        if (cutune__store_is_hex((unsigned char)*u))
            id[idn++] = (char)cutune__store_ascii_lower((unsigned char)*u);
    id[idn] = '\0';
    if (idn < 8) {
        char whole[sizeof device->name];
        memcpy(whole, device->name, sizeof whole);
        whole[sizeof whole - 1] = '\0';
        const char *hashed = uuid[0] ? uuid : whole;
        snprintf(id, sizeof id, "%08lx",
                 (unsigned long)cutune__fnv1a32(hashed, strlen(hashed)));
    }

    int len = snprintf(buf, size, "%s%s-%s.jsonl",
                       device->simulated ? "sim-" : "", name, id);
    if (len < 0 || (size_t)len >= size) {
        if (size > 0)
            buf[0] = '\0';
        return -1;
    }
    return 0;
}

/* mkdir -p (cutune__make_dirs), with the cache's message on failure. */
cutune_status cutune__store_make_dir(cutune_cache *cache, const char *dir)
{
    size_t failed;
    if (cutune__make_dirs(dir, &failed) == 0)
        return CUTUNE_OK;
    int err = errno;
    if (err == ENOMEM)
        return cutune__store_fail_memory(cache);
    char *part = strndup(dir, failed);
    if (!part)
        return cutune__store_fail_memory(cache);
    cutune_status status =
        cutune__cache_fail_sys(cache, err, "create directory", part);
    free(part);
    return status;
}

/* Opens `path` for appending and locks it. A merge into this file
 * replaces it while appends wait for its lock (fsio.h,
 * cutune__output_lock): a lock won on a file that is no longer at `path`
 * is dropped and the new file opened, so no line goes to a file nobody
 * will read again. */
static int open_locked(cutune_cache *cache, const char *path,
                       cutune_status *status)
{
    for (;;) {
        int fd;
        /* O_RDWR rather than O_WRONLY: the last byte is read back to
         * detect a torn line. O_APPEND makes every write land at the end
         * even if a writer that ignores the lock gets in. */
        do
            fd = open(path, O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
        while (fd < 0 && errno == EINTR);
        if (fd < 0) {
            *status = cutune__cache_fail_sys(cache, errno, "open", path);
            return -1;
        }
        while (flock(fd, LOCK_EX) != 0) {
            if (errno != EINTR) {
                *status = cutune__cache_fail_sys(cache, errno, "lock", path);
                close(fd);
                return -1;
            }
        }
        struct stat held, named;
        int gone = stat(path, &named) != 0 && errno == ENOENT;
        if (!gone &&
            (fstat(fd, &held) != 0 || stat(path, &named) != 0 ||
             (held.st_dev == named.st_dev && held.st_ino == named.st_ino)))
            return fd;
        flock(fd, LOCK_UN);
        close(fd);
    }
}

/* `line` is "\n<json>\n". */
cutune_status cutune__store_write_line(cutune_cache *cache, const char *path,
                                       const char *line, size_t len)
{
    cutune_status status = CUTUNE_OK;
    int fd = open_locked(cache, path, &status);
    if (fd < 0)
        return status;

    struct stat st;
    off_t before = 0;
    if (fstat(fd, &st) != 0) {
        status = cutune__cache_fail_sys(cache, errno, "stat", path);
        goto unlock;
    }
    before = st.st_size;

    const char *p = line + 1;
    size_t n = len - 1;
    if (before > 0) {
        char last;
        ssize_t got;
        do
            got = pread(fd, &last, 1, before - 1);
        while (got < 0 && errno == EINTR);
        if (got != 1) {
            status = cutune__cache_fail_sys(cache, got < 0 ? errno : EIO,
                                            "read", path);
            goto unlock;
        }
        /* A writer died mid-line: end its fragment so ours stays whole. */
        if (last != '\n') {
            p = line;
            n = len;
        }
    }

    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            status = cutune__cache_fail_sys(cache, w < 0 ? errno : EIO,
                                            "write", path);
            /* Take back a partial line (we still hold the lock, so the
             * tail is ours); if that fails readers skip it anyway. */
            if (ftruncate(fd, before) != 0) {
                /* see above */
            }
            goto unlock;
        }
        p += w;
        n -= (size_t)w;
    }

    while (fsync(fd) != 0) {
        if (errno != EINTR) {
            status = cutune__cache_fail_sys(cache, errno, "sync", path);
            goto unlock;
        }
    }
    if (before == 0)
        cutune__sync_dir(cache->dir);

unlock:
    flock(fd, LOCK_UN);
    if (close(fd) != 0 && status == CUTUNE_OK)
        status = cutune__cache_fail_sys(cache, errno, "close", path);
    return status;
}

cutune_status cutune__cache_write_file(cutune_cache *cache, const char *path,
                                       const char *data, size_t len)
{
    char why[1024];
    if (cutune__output_write(path, data, len, why, sizeof why) == 0)
        return CUTUNE_OK;
    if (errno == ENOMEM)
        return cutune__store_fail_memory(cache);
    return cutune__cache_fail(cache, CUTUNE_ERR_IO, "%s", why);
}
