/* The cache's files: the name a device's records go to, directories made
 * on demand, and the two ways a file is written (appending one locked line;
 * replacing a whole file atomically). */
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
        snprintf(id, sizeof id, "%08lx",
                 (unsigned long)cutune__store_fnv1a(uuid[0] ? uuid : whole));
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

/* mkdir -p with mode 0755 (less the umask). */
cutune_status cutune__store_make_dir(cutune_cache *cache, const char *dir)
{
    struct stat st;
    if (stat(dir, &st) == 0 && S_ISDIR(st.st_mode))
        return CUTUNE_OK;

    size_t len = strlen(dir);
    char *p = malloc(len + 1);
    if (!p)
        return cutune__store_fail_memory(cache);
    memcpy(p, dir, len + 1);
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
                cutune_status status =
                    cutune__cache_fail_sys(cache, err, "create directory", p);
                free(p);
                return status;
            }
        }
        p[i] = saved;
    }
    free(p);
    if (stat(dir, &st) != 0)
        return cutune__cache_fail_sys(cache, errno, "create directory", dir);
    if (!S_ISDIR(st.st_mode))
        return cutune__cache_fail_sys(cache, ENOTDIR, "create directory", dir);
    return CUTUNE_OK;
}

/* A new file's directory entry is only durable once the directory itself
 * is synced. Best effort: the record is already on disk, and some file
 * systems refuse fsync on directories. */
static void sync_dir(const char *dir)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        if (fsync(fd) != 0) {
            /* see above */
        }
        close(fd);
    }
}

/* `line` is "\n<json>\n". */
cutune_status cutune__store_write_line(cutune_cache *cache, const char *path,
                                       const char *line, size_t len)
{
    cutune_status status = CUTUNE_OK;
    int fd;
    /* O_RDWR rather than O_WRONLY: the last byte is read back to detect a
     * torn line. O_APPEND makes every write land at the end even if a
     * writer that ignores the lock gets in. */
    do
        fd = open(path, O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    while (fd < 0 && errno == EINTR);
    if (fd < 0)
        return cutune__cache_fail_sys(cache, errno, "open", path);

    while (flock(fd, LOCK_EX) != 0) {
        if (errno != EINTR) {
            status = cutune__cache_fail_sys(cache, errno, "lock", path);
            close(fd);
            return status;
        }
    }

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
        sync_dir(cache->dir);

unlock:
    flock(fd, LOCK_UN);
    if (close(fd) != 0 && status == CUTUNE_OK)
        status = cutune__cache_fail_sys(cache, errno, "close", path);
    return status;
}

cutune_status cutune__cache_write_file(cutune_cache *cache, const char *path,
                                       const char *data, size_t len)
{
    size_t plen = strlen(path);
    const char *slash = strrchr(path, '/');
    size_t dlen = slash ? (size_t)(slash - path) : 0;
    char *tmp = malloc(plen + 64);
    char *dir = malloc(dlen + 2);
    if (!tmp || !dir) {
        free(tmp);
        free(dir);
        return cutune__store_fail_memory(cache);
    }
    if (slash) {
        memcpy(dir, path, dlen);
        dir[dlen] = '\0';
        if (dlen == 0)
            memcpy(dir, "/", 2);
    } else {
        memcpy(dir, ".", 2);
    }
    /* A dot file beside the target: readers of cache directories skip it,
     * and rename() within one directory is atomic. */
    snprintf(tmp, plen + 64, "%.*s.%s.tmp-%ld", (int)(slash ? dlen + 1 : 0),
             path, slash ? slash + 1 : path, (long)getpid());
    cutune_status status = cutune__store_make_dir(cache, dir);
    if (status != CUTUNE_OK)
        goto out;
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        status = cutune__cache_fail_sys(cache, errno, "create", tmp);
        goto out;
    }
    for (size_t off = 0; off < len;) {
        ssize_t w = write(fd, data + off, len - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            status = cutune__cache_fail_sys(cache, w < 0 ? errno : EIO,
                                            "write", tmp);
            break;
        }
        off += (size_t)w;
    }
    if (status == CUTUNE_OK && fsync(fd) != 0)
        status = cutune__cache_fail_sys(cache, errno, "sync", tmp);
    if (close(fd) != 0 && status == CUTUNE_OK)
        status = cutune__cache_fail_sys(cache, errno, "close", tmp);
    if (status == CUTUNE_OK && rename(tmp, path) != 0)
        status = cutune__cache_fail_sys(cache, errno, "rename into", path);
    if (status != CUTUNE_OK)
        unlink(tmp);
    else
        sync_dir(dir);
out:
    free(tmp);
    free(dir);
    return status;
}
