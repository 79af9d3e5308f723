#define _GNU_SOURCE

#include "binary_cache.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util.h"

/* Entry file: magic, key length, key, ok flag, data length, data. */
static const char magic[8] = {'C', 'U', 'T', 'B', 'I', 'N', '0', '1'};

/* Evicting scans the directory, so it runs every this many puts. */
#define EVICT_EVERY 32

struct cutune__binary_cache {
    char *dir;
    uint64_t max_bytes;
    pthread_mutex_t lock;
    unsigned puts;
};

cutune__binary_cache *cutune__binary_cache_open(const char *dir,
                                                uint64_t max_bytes)
{
    cutune__binary_cache *c = calloc(1, sizeof *c);
    if (!c || !(c->dir = strdup(dir))) {
        free(c);
        return NULL;
    }
    c->max_bytes = max_bytes ? max_bytes : CUTUNE__BINARY_CACHE_DEFAULT_MAX;
    pthread_mutex_init(&c->lock, NULL);
    /* A directory that cannot be made only means every lookup misses. */
    cutune__make_dirs(c->dir, NULL);
    return c;
}

void cutune__binary_cache_close(cutune__binary_cache *c)
{
    if (!c)
        return;
    pthread_mutex_destroy(&c->lock);
    free(c->dir);
    free(c);
}

char *cutune__binary_cache_key(const char *source, char *const *options,
                               size_t n_options, const char *nvrtc_version)
{
    /* Fields are separated by NUL-free markers so that no two different
     * inputs give the same key text. */
    size_t len = strlen(source) + strlen(nvrtc_version) + 64;
    for (size_t i = 0; i < n_options; i++)
        len += strlen(options[i]) + 16;
    char *key = malloc(len);
    if (!key)
        return NULL;
    int n = snprintf(key, len, "nvrtc %s\noptions %zu\n", nvrtc_version,
                     n_options);
    for (size_t i = 0; i < n_options; i++)
        n += snprintf(key + n, len - (size_t)n, "%zu %s\n", strlen(options[i]),
                      options[i]);
    snprintf(key + n, len - (size_t)n, "source\n%s", source);
    return key;
}

static char *entry_path(const cutune__binary_cache *c, const char *key)
{
    return cutune__strdup_printf(
        "%s/%016llx.bin", c->dir,
        (unsigned long long)cutune__fnv1a64(key, strlen(key)));
}

static int read_all(int fd, void *buf, size_t len)
{
    char *p = buf;
    while (len > 0) {
        ssize_t n = read(fd, p, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

int cutune__binary_cache_get(cutune__binary_cache *c, const char *key, int *ok,
                             char **data, size_t *size)
{
    *data = NULL;
    *size = 0;
    if (!c)
        return 0;
    char *path = entry_path(c, key);
    if (!path)
        return 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    int hit = 0;
    char *stored_key = NULL, *buf = NULL;
    if (fd < 0)
        goto out;
    char m[8];
    uint64_t key_len, data_len;
    unsigned char flag;
    const size_t want_key = strlen(key);
    if (read_all(fd, m, sizeof m) || memcmp(m, magic, sizeof m) ||
        read_all(fd, &key_len, sizeof key_len) || key_len != want_key)
        goto out;
    if (!(stored_key = malloc(key_len + 1)) ||
        read_all(fd, stored_key, key_len) ||
        memcmp(stored_key, key, key_len) != 0)
        goto out;
    if (read_all(fd, &flag, 1) || read_all(fd, &data_len, sizeof data_len) ||
        data_len > ((uint64_t)1 << 31) || !(buf = malloc(data_len + 1)) ||
        read_all(fd, buf, data_len))
        goto out;
    buf[data_len] = '\0';
    *ok = flag != 0;
    *data = buf;
    *size = data_len;
    buf = NULL;
    hit = 1;
    /* Recently used: the eviction order is by modification time. */
    futimens(fd, NULL);
out:
    if (fd >= 0)
        close(fd);
    free(stored_key);
    free(buf);
    free(path);
    return hit;
}

void cutune__binary_cache_put(cutune__binary_cache *c, const char *key, int ok,
                              const void *data, size_t size)
{
    if (!c)
        return;
    char *path = entry_path(c, key);
    char *tmp = cutune__strdup_printf("%s/tmp-XXXXXX", c->dir);
    if (!path || !tmp)
        goto out;
    uint64_t key_len = strlen(key), data_len = size;
    unsigned char flag = ok ? 1 : 0;
    /* The rename replaces atomically: concurrent readers see the old entry
     * or the new one, and concurrent writers of the same key agree. No
     * fsync: an entry a crash tears reads as a miss, compiled again. */
    cutune__atomic_file f;
    if (cutune__atomic_file_open(&f, tmp, 0) != 0)
        goto out;
    cutune__atomic_file_write(&f, magic, sizeof magic);
    cutune__atomic_file_write(&f, &key_len, sizeof key_len);
    cutune__atomic_file_write(&f, key, key_len);
    cutune__atomic_file_write(&f, &flag, 1);
    cutune__atomic_file_write(&f, &data_len, sizeof data_len);
    cutune__atomic_file_write(&f, data, size);
    cutune__atomic_file_commit(&f, path, 0);
    pthread_mutex_lock(&c->lock);
    int evict = ++c->puts % EVICT_EVERY == 0;
    pthread_mutex_unlock(&c->lock);
    if (evict)
        cutune__binary_cache_evict(c);
out:
    free(path);
    free(tmp);
}

typedef struct entry {
    char *path;
    off_t size;
    struct timespec mtime;
} entry;

static int older_first(const void *a, const void *b)
{
    const entry *x = a, *y = b;
    if (x->mtime.tv_sec != y->mtime.tv_sec)
        return x->mtime.tv_sec < y->mtime.tv_sec ? -1 : 1;
    if (x->mtime.tv_nsec != y->mtime.tv_nsec)
        return x->mtime.tv_nsec < y->mtime.tv_nsec ? -1 : 1;
    return strcmp(x->path, y->path);
}

void cutune__binary_cache_evict(cutune__binary_cache *c)
{
    if (!c)
        return;
    DIR *d = opendir(c->dir);
    if (!d)
        return;
    entry *list = NULL;
    size_t n = 0, cap = 0;
    uint64_t total = 0;
    time_t now = time(NULL);
    struct dirent *de;
    while ((de = readdir(d))) {
        const char *name = de->d_name;
        size_t len = strlen(name);
        int is_entry = len > 4 && strcmp(name + len - 4, ".bin") == 0;
        int is_tmp = strncmp(name, "tmp-", 4) == 0;
        if (!is_entry && !is_tmp)
            continue;
        char *path = cutune__strdup_printf("%s/%s", c->dir, name);
        struct stat st;
        if (!path || stat(path, &st) != 0) {
            free(path);
            continue;
        }
        /* A temporary file an hour old was left by a killed writer. */
        if (is_tmp) {
            if (now - st.st_mtime > 3600)
                unlink(path);
            free(path);
            continue;
        }
        if (n == cap) {
            size_t ncap = cap ? 2 * cap : 256;
            entry *bigger = realloc(list, ncap * sizeof *bigger);
            if (!bigger) {
                free(path);
                break;
            }
            list = bigger;
            cap = ncap;
        }
        list[n].path = path;
        list[n].size = st.st_size;
        list[n].mtime = st.st_mtim;
        total += (uint64_t)st.st_size;
        n++;
    }
    closedir(d);
    if (total > c->max_bytes) {
        /* Down to 90% of the bound, so the next puts do not evict at
         * once again. */
        uint64_t target = c->max_bytes / 10 * 9;
        qsort(list, n, sizeof *list, older_first);
        for (size_t i = 0; i < n && total > target; i++)
            if (unlink(list[i].path) == 0)
                total -= (uint64_t)list[i].size;
    }
    for (size_t i = 0; i < n; i++)
        free(list[i].path);
    free(list);
}
