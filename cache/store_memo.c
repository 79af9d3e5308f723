/* A cache kept in memory (cutune_cache_preload): every record of the
 * directory decoded once, so that a program that looks up many times (a
 * plan of hundreds of tasks over tens of thousands of records) does not
 * read and decode every line again for each lookup.
 *
 * The files stay the source of truth. Each scan lists the directory and
 * compares every file with what was read of it: lines appended since (the
 * same file, grown) are read from where the last read stopped; a file
 * replaced (another inode, as a rename into place leaves it) or shorter
 * than what was read is read again whole; a file gone is forgotten. A
 * file rewritten in place to the same or a greater length would be
 * misread; cutune's writers only append or rename.
 *
 * Visitors may take the entry they are given (store_internal.h), so each
 * visit gets a copy that shares the line's JSON (reference counted) and
 * owns its arrays. The lines that a plain scan passes over are counted
 * per file when read and added up on every scan, so the warning is the
 * same as a plain scan's. */
#include "store_internal.h"

typedef struct memo_file {
    char *name;
    dev_t dev;
    ino_t ino;
    cutune__scan_pos pos; /* where the next read starts */
    cache_entry *entries;
    size_t *lines;    /* each entry's line number */
    uint64_t *hashes; /* each entry's problem name, hashed */
    size_t n, cap;
    size_t skipped, version_skipped;
    long long other_version;
    char first_skip[512];
} memo_file;

struct store_memo {
    memo_file *files;
    size_t n;
};

static uint64_t name_hash(const char *name)
{
    return cutune__fnv1a64(name, strlen(name));
}

static void file_free(memo_file *f)
{
    for (size_t i = 0; i < f->n; i++)
        cutune__store_entry_free(&f->entries[i]);
    free(f->entries);
    free(f->lines);
    free(f->hashes);
    free(f->name);
    memset(f, 0, sizeof *f);
}

void cutune__store_memo_free(struct store_memo *memo)
{
    if (!memo)
        return;
    for (size_t i = 0; i < memo->n; i++)
        file_free(&memo->files[i]);
    free(memo->files);
    free(memo);
}

static int grow(memo_file *f)
{
    size_t cap = f->cap ? 2 * f->cap : 64;
    cache_entry *entries = realloc(f->entries, cap * sizeof *entries);
    if (entries)
        f->entries = entries;
    size_t *lines = realloc(f->lines, cap * sizeof *lines);
    if (lines)
        f->lines = lines;
    uint64_t *hashes = realloc(f->hashes, cap * sizeof *hashes);
    if (hashes)
        f->hashes = hashes;
    if (!entries || !lines || !hashes)
        return 0;
    f->cap = cap;
    return 1;
}

/* The visitor of a read: keeps the entry. */
static int take(void *user, cache_entry *e, const char *path, size_t line)
{
    (void)path;
    memo_file *f = user;
    if (f->n == f->cap && !grow(f))
        return 1; /* the caller sees n < what was read: out of memory */
    f->hashes[f->n] = name_hash(e->record.problem_name);
    f->lines[f->n] = line;
    f->entries[f->n++] = *e;
    memset(e, 0, sizeof *e);
    return 0;
}

/* Reads what `f` lacks of `path`, counting the lines passed over into the
 * file's own counts (the handle's serve as scratch here). */
static cutune_status read_more(cutune_cache *cache, memo_file *f,
                               const char *path)
{
    cache->skipped_lines = cache->version_skipped = 0;
    cache->other_version = 0;
    cache->first_skip[0] = '\0';
    int stop = 0;
    cutune_status status =
        cutune__store_scan_file(cache, path, take, f, &stop, &f->pos);
    if (status == CUTUNE_OK && stop)
        status = cutune__store_fail_memory(cache);
    if (cache->version_skipped &&
        (f->version_skipped == 0 || cache->other_version > f->other_version))
        f->other_version = cache->other_version;
    f->skipped += cache->skipped_lines;
    f->version_skipped += cache->version_skipped;
    if (!f->first_skip[0])
        snprintf(f->first_skip, sizeof f->first_skip, "%s", cache->first_skip);
    return status;
}

/* Brings `f` (the old copy of `name`, or a fresh one) up to the file on
 * disk. */
static cutune_status refresh_file(cutune_cache *cache, memo_file *f,
                                  const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return errno == ENOENT
                   ? CUTUNE_OK
                   : cutune__cache_fail_sys(cache, errno, "stat", path);
    if (f->name && (st.st_dev != f->dev || st.st_ino != f->ino ||
                    st.st_size < f->pos.offset)) {
        char *name = f->name;
        f->name = NULL;
        file_free(f);
        f->name = name;
    }
    f->dev = st.st_dev;
    f->ino = st.st_ino;
    if (st.st_size == f->pos.offset)
        return CUTUNE_OK;
    return read_more(cache, f, path);
}

/* Into *out, the old copy of `name` (moved out of `old`, whose files
 * are in name order as the listing is), else a fresh one; takes `name`. */
static void adopt(struct store_memo *old, size_t *next_old, char *name,
                  memo_file *out)
{
    memset(out, 0, sizeof *out);
    while (*next_old < old->n && strcmp(old->files[*next_old].name, name) < 0)
        file_free(&old->files[(*next_old)++]);
    if (*next_old < old->n && strcmp(old->files[*next_old].name, name) == 0) {
        *out = old->files[*next_old];
        memset(&old->files[(*next_old)++], 0, sizeof *out);
        free(name);
        return;
    }
    out->name = name;
}

/* Lists the directory and brings every file's copy up to date; files
 * gone are dropped. On failure the memo is emptied (the next scan reads
 * everything again). */
static cutune_status refresh(cutune_cache *cache, int *missing)
{
    struct store_memo *memo = cache->memo;
    char **names;
    size_t count;
    cutune_status status =
        cutune__store_list_dir(cache, cache->dir, &names, &count, missing);
    memo_file *files = calloc(count ? count : 1, sizeof *files);
    if (status == CUTUNE_OK && !files)
        status = cutune__store_fail_memory(cache);
    size_t n = 0, next_old = 0;
    for (size_t i = 0; status == CUTUNE_OK && i < count; i++) {
        char *path = cutune__store_path_join(cache->dir, names[i]);
        if (!path) {
            status = cutune__store_fail_memory(cache);
            break;
        }
        if (cutune__store_file_readable(cache, path)) {
            adopt(memo, &next_old, names[i], &files[n]);
            names[i] = NULL;
            status = refresh_file(cache, &files[n++], path);
        }
        free(path);
    }
    cutune__store_free_names(names, count);
    for (size_t i = 0; i < memo->n; i++)
        file_free(&memo->files[i]);
    free(memo->files);
    memo->files = files;
    memo->n = n;
    if (status != CUTUNE_OK) {
        for (size_t i = 0; i < memo->n; i++)
            file_free(&memo->files[i]);
        memo->n = 0;
    }
    return status;
}

/* The counts of a plain scan, from the files' own. */
static void sum_counts(cutune_cache *cache)
{
    struct store_memo *memo = cache->memo;
    cache->skipped_lines = cache->version_skipped = 0;
    cache->other_version = 0;
    cache->first_skip[0] = '\0';
    for (size_t i = 0; i < memo->n; i++) {
        const memo_file *f = &memo->files[i];
        if (f->version_skipped && (cache->version_skipped == 0 ||
                                   f->other_version > cache->other_version))
            cache->other_version = f->other_version;
        cache->skipped_lines += f->skipped;
        cache->version_skipped += f->version_skipped;
        if (!cache->first_skip[0])
            snprintf(cache->first_skip, sizeof cache->first_skip, "%s",
                     f->first_skip);
    }
}

/* A copy of `e` that owns its arrays and shares its JSON. */
static int copy_entry(const cache_entry *e, cache_entry *out)
{
    const cutune_cache_record *r = &e->record;
    memset(out, 0, sizeof *out);
    out->problem_size = malloc((r->n_problem_size ? r->n_problem_size : 1) *
                               sizeof *out->problem_size);
    out->config =
        malloc((r->n_config ? r->n_config : 1) * sizeof *out->config);
    out->baseline =
        malloc((r->n_baseline ? r->n_baseline : 1) * sizeof *out->baseline);
    if (!out->problem_size || !out->config || !out->baseline) {
        cutune__store_entry_free(out);
        return 0;
    }
    /* A record may have no baseline (a failed start): memcpy's source
     * must not be NULL even for zero bytes. */
    if (r->n_problem_size)
        memcpy(out->problem_size, r->problem_size,
               r->n_problem_size * sizeof *out->problem_size);
    if (r->n_config)
        memcpy(out->config, r->config, r->n_config * sizeof *out->config);
    if (r->n_baseline)
        memcpy(out->baseline, r->baseline,
               r->n_baseline * sizeof *out->baseline);
    out->record = *r;
    out->record.problem_size = out->problem_size;
    out->record.config = out->config;
    out->record.baseline = out->baseline;
    out->root = json_incref(e->root);
    return 1;
}

static cutune_status visit_file(cutune_cache *cache, const memo_file *f,
                                const cutune__scan_filter *filter,
                                uint64_t hash, entry_visit_fn visit,
                                void *user, int *stop)
{
    const char *problem = filter ? filter->problem : NULL;
    char *path = cutune__store_path_join(cache->dir, f->name);
    if (!path)
        return cutune__store_fail_memory(cache);
    cutune_status status = CUTUNE_OK;
    for (size_t i = 0; i < f->n && !*stop; i++) {
        const cutune_cache_record *r = &f->entries[i].record;
        if ((problem &&
             (f->hashes[i] != hash || strcmp(r->problem_name, problem))) ||
            (filter && filter->keep && !filter->keep(filter->keep_user, r)))
            continue;
        cache_entry copy;
        if (!copy_entry(&f->entries[i], &copy)) {
            status = cutune__store_fail_memory(cache);
            break;
        }
        *stop = visit(user, &copy, path, f->lines[i]);
        cutune__store_entry_free(&copy);
    }
    free(path);
    return status;
}

cutune_status cutune__store_memo_scan(cutune_cache *cache,
                                      const cutune__scan_filter *filter,
                                      entry_visit_fn visit, void *user,
                                      int *missing)
{
    cutune_status status = refresh(cache, missing);
    sum_counts(cache);
    uint64_t hash = filter && filter->problem ? name_hash(filter->problem) : 0;
    int stop = 0;
    for (size_t i = 0; status == CUTUNE_OK && !stop && i < cache->memo->n; i++)
        status = visit_file(cache, &cache->memo->files[i], filter, hash, visit,
                            user, &stop);
    return status;
}

cutune_status cutune_cache_preload(cutune_cache *cache)
{
    cutune_status started = cutune__cache_start(cache);
    if (started != CUTUNE_OK)
        return started;
    if (!cache->memo && !(cache->memo = calloc(1, sizeof *cache->memo)))
        return cutune__store_fail_memory(cache);
    int missing;
    cutune_status status = refresh(cache, &missing);
    sum_counts(cache);
    return status;
}
