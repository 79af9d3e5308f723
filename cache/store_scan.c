/* Walks a cache: every line of every record file of a directory (or of
 * the paths given), counting and explaining the lines it passes over. */
#include "store_internal.h"

/* The first line skipped for a reason other than its version, for the
 * warning: "PATH:LINE: why". */
void cutune__store_note_line(cutune_cache *cache, const char *path,
                             size_t line, const char *why)
{
    if (!cache->first_skip[0])
        snprintf(cache->first_skip, sizeof cache->first_skip, "%s:%zu: %s",
                 path, line, why);
}

/* A file of a cache directory that cannot be read (a symlink loop, a link
 * to nothing, no permission, not a regular file) is counted and named in
 * the warning, and the walk goes on: one bad entry does not hide the
 * rest of the cache. Returns 1 when `path` can be read. */
int cutune__store_file_readable(cutune_cache *cache, const char *path)
{
    int fd;
    do
        fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    while (fd < 0 && errno == EINTR);
    int err = fd < 0 ? errno : 0;
    struct stat st;
    if (fd >= 0) {
        int regular = fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
        close(fd);
        if (regular)
            return 1;
    } else if (err == ENOENT && lstat(path, &st) != 0) {
        return 0; /* removed since the directory was listed */
    }
    char buf[128];
    cache->unreadable++;
    if (!cache->first_unreadable[0])
        snprintf(cache->first_unreadable, sizeof cache->first_unreadable,
                 "%s: %s", path,
                 fd >= 0         ? "not a regular file"
                 : err == ENOENT ? "a symbolic link to nothing"
                 : err == ELOOP
                     ? "a loop of symbolic links"
                     : cutune__store_errno_text(err, buf, sizeof buf));
    return 0;
}

static int is_blank(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r' && s[i] != '\n')
            return 0;
    return 1;
}

/* Reads `path` from pos->offset (line pos->line + 1 on), or whole when
 * `pos` is NULL; pos is left after the last line read. */
cutune_status cutune__store_scan_file(cutune_cache *cache, const char *path,
                                      entry_visit_fn visit, void *user,
                                      int *stop, cutune__scan_pos *pos)
{
    int fd;
    do
        fd = open(path, O_RDONLY | O_CLOEXEC);
    while (fd < 0 && errno == EINTR);
    if (fd < 0) {
        if (errno == ENOENT) /* removed since the directory was listed */
            return CUTUNE_OK;
        return cutune__cache_fail_sys(cache, errno, "open", path);
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        cutune_status status =
            cutune__cache_fail_sys(cache, errno, "stat", path);
        close(fd);
        return status;
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        return CUTUNE_OK;
    }
    /* A shared lock keeps a line that is being appended out of view, so it
     * is not taken for a torn one. Where locks are unsupported, reading
     * without one is still correct. */
    while (flock(fd, LOCK_SH) != 0 && errno == EINTR)
        ;
    FILE *f = fdopen(fd, "r");
    if (!f || (pos && fseeko(f, pos->offset, SEEK_SET) != 0)) {
        cutune_status status =
            cutune__cache_fail_sys(cache, errno, "read", path);
        if (f)
            fclose(f);
        else
            close(fd);
        return status;
    }

    cutune_status status = CUTUNE_OK;
    char *line = NULL;
    size_t cap = 0, lineno = pos ? pos->line : 0;
    ssize_t got;
    while ((got = getline(&line, &cap, f)) >= 0) {
        lineno++;
        if (pos) {
            pos->offset += (off_t)got;
            pos->line = lineno;
        }
        if (is_blank(line, (size_t)got))
            continue;
        json_error_t jerr;
        json_t *root =
            json_loadb(line, (size_t)got, JSON_REJECT_DUPLICATES, &jerr);
        if (!root) {
            if (json_error_code(&jerr) == json_error_out_of_memory) {
                status = cutune__store_fail_memory(cache);
                break;
            }
            cache->skipped_lines++;
            cutune__store_note_line(cache, path, lineno, "not JSON");
            continue;
        }
        json_t *version = json_object_get(root, "cutune_cache");
        if (json_is_integer(version) &&
            (json_integer_value(version) < CUTUNE__CACHE_FORMAT_TIME ||
             json_integer_value(version) > CUTUNE__CACHE_FORMAT)) {
            long long v = (long long)json_integer_value(version);
            if (cache->version_skipped == 0 || v > cache->other_version)
                cache->other_version = v;
            cache->version_skipped++;
            cache->skipped_lines++;
            json_decref(root);
            continue;
        }
        cache_entry e;
        int rc = cutune__store_decode_entry(root, &e);
        if (rc == DECODE_NO_MEMORY) {
            status = cutune__store_fail_memory(cache);
            break;
        }
        if (rc == DECODE_INVALID) {
            cache->skipped_lines++;
            cutune__store_note_line(cache, path, lineno,
                                    "not a valid record (a field missing, "
                                    "of the wrong type or out of range)");
            continue;
        }
        int halt = visit(user, &e, path, lineno);
        cutune__store_entry_free(&e);
        if (halt) {
            *stop = 1;
            break;
        }
    }
    if (status == CUTUNE_OK && !*stop && ferror(f))
        status = cutune__cache_fail_sys(cache, errno, "read", path);
    free(line);
    fclose(f); /* also drops the lock */
    return status;
}

static int compare_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

void cutune__store_free_names(char **names, size_t count)
{
    for (size_t i = 0; i < count; i++)
        free(names[i]);
    free(names);
}

/* The *.jsonl files of `dirpath` (not the dot files, left for tools that
 * write a file aside and rename it into place), in name order so that
 * "later" means the same thing on every machine. *missing: no such
 * directory (no names, CUTUNE_OK). */
cutune_status cutune__store_list_dir(cutune_cache *cache, const char *dirpath,
                                     char ***out, size_t *n_out, int *missing)
{
    *out = NULL;
    *n_out = 0;
    *missing = 0;
    DIR *dir = opendir(dirpath);
    if (!dir) {
        if (errno == ENOENT) {
            *missing = 1;
            return CUTUNE_OK;
        }
        return cutune__cache_fail_sys(cache, errno, "read directory", dirpath);
    }
    cutune_status status = CUTUNE_OK;
    char **names = NULL;
    size_t count = 0, cap = 0;
    for (;;) {
        errno = 0;
        struct dirent *de = readdir(dir);
        if (!de) {
            if (errno != 0)
                status = cutune__cache_fail_sys(cache, errno, "read directory",
                                                dirpath);
            break;
        }
        const char *name = de->d_name;
        size_t len = strlen(name);
        if (name[0] == '.' || len <= 6 || strcmp(name + len - 6, ".jsonl"))
            continue;
        if (count == cap) {
            size_t ncap = cap ? cap * 2 : 16;
            char **grown = realloc(names, ncap * sizeof *names);
            if (!grown) {
                status = cutune__store_fail_memory(cache);
                break;
            }
            names = grown;
            cap = ncap;
        }
        if (!(names[count] = strdup(name))) {
            status = cutune__store_fail_memory(cache);
            break;
        }
        count++;
    }
    closedir(dir);
    if (status != CUTUNE_OK) {
        cutune__store_free_names(names, count);
        return status;
    }
    if (count > 1)
        qsort(names, count, sizeof *names, compare_names);
    *out = names;
    *n_out = count;
    return CUTUNE_OK;
}

/* Visits every valid record of every *.jsonl file. */
static cutune_status scan_dir_at(cutune_cache *cache, const char *dirpath,
                                 entry_visit_fn visit, void *user,
                                 int *missing, int *stop)
{
    char **names;
    size_t count;
    cutune_status status =
        cutune__store_list_dir(cache, dirpath, &names, &count, missing);
    for (size_t i = 0; status == CUTUNE_OK && !*stop && i < count; i++) {
        char *path = cutune__store_path_join(dirpath, names[i]);
        if (!path) {
            status = cutune__store_fail_memory(cache);
            break;
        }
        if (cutune__store_file_readable(cache, path))
            status =
                cutune__store_scan_file(cache, path, visit, user, stop, NULL);
        free(path);
    }
    cutune__store_free_names(names, count);
    return status;
}

static void reset_counts(cutune_cache *cache)
{
    cache->skipped_lines = 0;
    cache->version_skipped = 0;
    cache->other_version = 0;
    cache->warning[0] = '\0';
    cache->first_skip[0] = '\0';
    cache->refused = 0;
    cache->unreadable = 0;
    cache->first_unreadable[0] = '\0';
}

/* The warning about what the last scan passed over. */
static void note_skipped(cutune_cache *cache, const char *where)
{
    size_t other = cache->skipped_lines - cache->version_skipped;
    int n = 0;
    if (cache->version_skipped > 0)
        n = snprintf(cache->warning, sizeof cache->warning,
                     "%zu record%s of cache format version %lld%s in %s "
                     "refused: this cutune reads format versions %d and %d "
                     "only%s",
                     cache->version_skipped,
                     cache->version_skipped == 1 ? "" : "s",
                     cache->other_version,
                     cache->version_skipped > 1 ? " (or other versions)" : "",
                     where, CUTUNE__CACHE_FORMAT_TIME, CUTUNE__CACHE_FORMAT,
                     cache->other_version > CUTUNE__CACHE_FORMAT
                         ? "; upgrade cutune to read them"
                         : "");
    if (other > 0 && n >= 0 && (size_t)n < sizeof cache->warning)
        n += snprintf(cache->warning + n, sizeof cache->warning - (size_t)n,
                      "%s%zu line%s in %s skipped: torn (a writer was "
                      "killed) or not a valid record%s%s%s%s",
                      n > 0 ? "; " : "", other, other == 1 ? "" : "s", where,
                      cache->refused ? " for the problem" : "",
                      cache->first_skip[0] ? " (first: " : "",
                      cache->first_skip, cache->first_skip[0] ? ")" : "");
    if (cache->unreadable > 0 && n >= 0 && (size_t)n < sizeof cache->warning)
        snprintf(cache->warning + n, sizeof cache->warning - (size_t)n,
                 "%s%zu file%s in %s not read (first: %s); the rest was read",
                 n > 0 ? "; " : "", cache->unreadable,
                 cache->unreadable == 1 ? "" : "s", where,
                 cache->first_unreadable);
}

cutune_status cutune__store_scan_filtered(cutune_cache *cache,
                                          const cutune__scan_filter *filter,
                                          entry_visit_fn visit, void *user,
                                          int *missing)
{
    int stop = 0;
    reset_counts(cache);
    cutune_status status =
        cache->memo
            ? cutune__store_memo_scan(cache, filter, visit, user, missing)
            : scan_dir_at(cache, cache->dir, visit, user, missing, &stop);
    note_skipped(cache, cache->dir);
    return status;
}

cutune_status cutune__store_scan_dir(cutune_cache *cache, entry_visit_fn visit,
                                     void *user, int *missing)
{
    return cutune__store_scan_filtered(cache, NULL, visit, user, missing);
}

/* Files are read as they are, directories as caches. */
static cutune_status scan_paths(cutune_cache *cache, const char *const *paths,
                                size_t n, entry_visit_fn visit, void *user)
{
    int stop = 0, missing = 0;
    cutune_status status = CUTUNE_OK;
    reset_counts(cache);
    for (size_t i = 0; status == CUTUNE_OK && !stop && i < n; i++) {
        struct stat st;
        if (!paths[i] || stat(paths[i], &st) != 0) {
            status =
                cutune__cache_fail_sys(cache, paths[i] ? errno : EINVAL,
                                       "read", paths[i] ? paths[i] : "(null)");
            break;
        }
        if (S_ISDIR(st.st_mode))
            status =
                scan_dir_at(cache, paths[i], visit, user, &missing, &stop);
        else
            status = cutune__store_scan_file(cache, paths[i], visit, user,
                                             &stop, NULL);
    }
    note_skipped(cache, n == 1 && paths[0] ? paths[0] : "the inputs");
    return status;
}

typedef struct record_visit {
    cutune__cache_visit_fn visit;
    void *user;
} record_visit;

static int record_visit_entry(void *user, cache_entry *e, const char *path,
                              size_t line)
{
    record_visit *rv = user;
    return rv->visit(rv->user, &e->record, e->root, path, line);
}

cutune_status cutune__cache_scan(cutune_cache *cache, const char *const *paths,
                                 size_t n_paths, cutune__cache_visit_fn visit,
                                 void *user)
{
    if (!cache)
        return CUTUNE_ERR_INVALID_ARGUMENT;
    cache->errmsg[0] = '\0';
    cache->warning[0] = '\0';
    if (!visit)
        return cutune__cache_fail(cache, CUTUNE_ERR_INVALID_ARGUMENT,
                                  "no visitor given");
    record_visit rv = {visit, user};
    if (paths)
        return scan_paths(cache, paths, n_paths, record_visit_entry, &rv);
    if (!cache->dir)
        return cutune__cache_fail(cache, CUTUNE_ERR_INVALID_ARGUMENT,
                                  "the cache has no directory (open failed)");
    int missing;
    return cutune__store_scan_dir(cache, record_visit_entry, &rv, &missing);
}
