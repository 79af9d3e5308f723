/* Kernel sources on disk (see kernel_source.h). */
#define _XOPEN_SOURCE 700

#include "kernel_source.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util.h"

int cutune__read_regular_file(const char *path, uint64_t max_bytes,
                              char **data, size_t *len, char *err,
                              size_t errlen)
{
    /* O_NONBLOCK: a FIFO named by mistake must not hang the open. */
    int fd = open(path, O_RDONLY | O_NONBLOCK);
    if (fd < 0) {
        snprintf(err, errlen, "cannot open %s: %s", path, strerror(errno));
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        snprintf(err, errlen, "%s is not a regular file", path);
        close(fd);
        return -1;
    }
    if ((uint64_t)st.st_size > max_bytes) {
        snprintf(err, errlen,
                 "%s holds %lld bytes, more than the %llu a "
                 "file here may have",
                 path, (long long)st.st_size, (unsigned long long)max_bytes);
        close(fd);
        return -1;
    }
    size_t want = (size_t)st.st_size;
    char *buf = malloc(want + 1);
    if (!buf) {
        snprintf(err, errlen, "out of memory reading %s", path);
        close(fd);
        return -1;
    }
    size_t n = 0;
    while (n < want) {
        ssize_t got = read(fd, buf + n, want - n);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            break;
        n += (size_t)got;
    }
    close(fd);
    if (n != want) {
        snprintf(err, errlen, "cannot read %s whole (%zu of %zu bytes)", path,
                 n, want);
        free(buf);
        return -1;
    }
    buf[n] = '\0';
    *data = buf;
    *len = n;
    return 0;
}

static int ends_with(const char *s, const char *tail)
{
    size_t n = strlen(s), m = strlen(tail);
    return n >= m && strcmp(s + n - m, tail) == 0;
}

cutune__source_language cutune__source_language_of(const char *path,
                                                   const char *text,
                                                   const char **why)
{
    static const struct {
        const char *needle;
        cutune__source_language lang;
        int by_name;
        const char *why;
    } signs[] = {
        {".hip", CUTUNE__SRC_HIP, 1, "its name ends in .hip"},
        {".cl", CUTUNE__SRC_OPENCL, 1, "its name ends in .cl"},
        {".opencl", CUTUNE__SRC_OPENCL, 1, "its name ends in .opencl"},
        {"hip/hip_runtime", CUTUNE__SRC_HIP, 0,
         "it includes hip/hip_runtime.h"},
        {"hipLaunchKernelGGL", CUTUNE__SRC_HIP, 0,
         "it calls hipLaunchKernelGGL"},
        {"__kernel void", CUTUNE__SRC_OPENCL, 0,
         "it declares an OpenCL __kernel"},
        {"get_global_id(", CUTUNE__SRC_OPENCL, 0,
         "it calls OpenCL's get_global_id"},
    };
    for (size_t i = 0; i < sizeof signs / sizeof *signs; i++) {
        int hit = signs[i].by_name ? (path && ends_with(path, signs[i].needle))
                                   : (text && strstr(text, signs[i].needle));
        if (hit) {
            if (why)
                *why = signs[i].why;
            return signs[i].lang;
        }
    }
    if (why)
        *why = "";
    return CUTUNE__SRC_CUDA;
}

/* ------------------------------------------------------------------ */
/* Following quoted includes                                           */

/* Bounds that keep a cycle or a generated header forest from running
 * away; a real kernel includes a handful of files. */
#define MAX_INCLUDES 256
#define MAX_DEPTH    32

typedef struct include_walk {
    const char *const *dirs;
    size_t n_dirs;
    char *seen[MAX_INCLUDES];
    size_t n_seen;
    uint64_t hash;
} include_walk;

/* The name in a line `#  include "name"`, copied into out; 0 if the line
 * is no such include. */
static int quoted_include(const char *line, const char *end, char *out,
                          size_t outlen)
{
    const char *c = line;
    while (c < end && (*c == ' ' || *c == '\t'))
        c++;
    if (c == end || *c++ != '#')
        return 0;
    while (c < end && (*c == ' ' || *c == '\t'))
        c++;
    if ((size_t)(end - c) < 7 || strncmp(c, "include", 7) != 0)
        return 0;
    c += 7;
    while (c < end && (*c == ' ' || *c == '\t'))
        c++;
    if (c == end || *c++ != '"')
        return 0;
    const char *q = memchr(c, '"', (size_t)(end - c));
    if (!q || q == c || (size_t)(q - c) >= outlen)
        return 0;
    memcpy(out, c, (size_t)(q - c));
    out[q - c] = '\0';
    return 1;
}

static void walk(include_walk *w, const char *text, size_t len,
                 const char *own_dir, int depth);

static void visit(include_walk *w, const char *dir, const char *name,
                  int depth)
{
    char *path = name[0] == '/' ? strdup(name)
                                : cutune__strdup_printf("%s/%s", dir, name);
    if (!path)
        return;
    char *real = realpath(path, NULL);
    free(path);
    if (!real)
        return;
    for (size_t i = 0; i < w->n_seen; i++)
        if (strcmp(w->seen[i], real) == 0) {
            free(real);
            return;
        }
    if (w->n_seen == MAX_INCLUDES) {
        free(real);
        return;
    }
    w->seen[w->n_seen++] = real;
    char *data;
    size_t n;
    char err[256];
    if (cutune__read_regular_file(real, CUTUNE__MAX_SOURCE_BYTES, &data, &n,
                                  err, sizeof err) != 0)
        return;
    w->hash = cutune__fnv1a64_continue(w->hash, name, strlen(name) + 1);
    w->hash = cutune__fnv1a64_continue(w->hash, data, n);
    char *slash = strrchr(real, '/');
    char *sub = slash ? strndup(real, (size_t)(slash - real)) : strdup(".");
    if (sub)
        walk(w, data, n, sub, depth + 1);
    free(sub);
    free(data);
}

static int exists_in(const char *dir, const char *name)
{
    char *path = cutune__strdup_printf("%s/%s", dir, name);
    int ok = path && access(path, R_OK) == 0;
    free(path);
    return ok;
}

static void walk(include_walk *w, const char *text, size_t len,
                 const char *own_dir, int depth)
{
    if (depth > MAX_DEPTH)
        return;
    const char *end = text + len;
    for (const char *line = text; line < end;) {
        const char *nl = memchr(line, '\n', (size_t)(end - line));
        const char *stop = nl ? nl : end;
        char name[512];
        if (quoted_include(line, stop, name, sizeof name)) {
            /* The preprocessor's order: the includer's folder first. */
            const char *dir = NULL;
            if (name[0] == '/' || (own_dir && exists_in(own_dir, name)))
                dir = own_dir ? own_dir : ".";
            for (size_t i = 0; !dir && i < w->n_dirs; i++)
                if (exists_in(w->dirs[i], name))
                    dir = w->dirs[i];
            if (dir)
                visit(w, dir, name, depth);
        }
        line = nl ? nl + 1 : end;
    }
}

uint64_t cutune__source_hash(const char *text, size_t len,
                             const char *const *dirs, size_t n_dirs)
{
    include_walk w = {.dirs = dirs, .n_dirs = n_dirs};
    w.hash = cutune__fnv1a64(text, len);
    walk(&w, text, len, NULL, 0);
    for (size_t i = 0; i < w.n_seen; i++)
        free(w.seen[i]);
    return w.hash;
}
