/* Merging caches from several machines into one file.
 *
 * Records are the same when their keys are: the device (its UUID, or its
 * name when it has no UUID, both compared case-insensitively) and the
 * problem key (name, source hash, problem size, compiler options), tuned
 * for one objective (a time record and an energy record both stay). Of the
 * same records the newer stays (its timestamp; between equal timestamps
 * the one read later), the rule lookup uses between records of one key
 * (store_lookup.c): a merge keeps what a lookup of the inputs answers, so
 * compacting a cache never undoes a `--force` re-tune. Winners are
 * written in the order they were read, each line as it was (unknown
 * fields included), so merging is idempotent and merging merged files
 * changes nothing. Lines that are not valid records of this format
 * version are left out and named in the warning.
 *
 * The output is written as every output is (fsio.h). While the merge
 * reads, it holds a shared lock on the output file (when there is one),
 * which keeps the cache's appends out until the merged file is renamed
 * into place: a merge into a file a tune appends to loses no record.
 */
#include "fsio.h"
#include "store.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct merge_item {
    char *key;
    json_t *root;
    long long timestamp;
    size_t order;
    int keep;
} merge_item;

typedef struct merge_state {
    merge_item *items;
    size_t n, cap;
    int no_memory;
} merge_state;

static void lower(char *s)
{
    for (; *s; s++)
        if (*s >= 'A' && *s <= 'Z')
            *s = (char)(*s - 'A' + 'a');
}

static char *make_key(const cutune_cache_record *r)
{
    size_t len = strlen(r->device.uuid) + strlen(r->device.name) +
                 strlen(r->problem_name) + strlen(r->source_hash) +
                 strlen(r->compiler_options) + 21 * r->n_problem_size + 24;
    char *key = malloc(len);
    if (!key)
        return NULL;
    /* \x1f cannot occur in the fields that matter for a key in practice,
     * and a collision would need one field to end where another begins in
     * just that way. */
    int n = snprintf(key, len, "%s\x1f",
                     r->device.uuid[0] ? r->device.uuid : r->device.name);
    lower(key);
    size_t used = (size_t)n;
    used += (size_t)snprintf(key + used, len - used, "%s\x1f%s\x1f",
                             r->problem_name, r->source_hash);
    for (size_t i = 0; i < r->n_problem_size; i++)
        used += (size_t)snprintf(key + used, len - used, "%lld,",
                                 r->problem_size[i]);
    snprintf(key + used, len - used, "\x1f%s\x1f%d", r->compiler_options,
             (int)r->objective);
    return key;
}

static int merge_visit(void *user, const cutune_cache_record *r, json_t *root,
                       const char *path, size_t line)
{
    (void)path;
    (void)line;
    merge_state *st = user;
    if (st->n == st->cap) {
        size_t ncap = st->cap ? st->cap * 2 : 64;
        merge_item *grown = realloc(st->items, ncap * sizeof *grown);
        if (!grown) {
            st->no_memory = 1;
            return 1;
        }
        st->items = grown;
        st->cap = ncap;
    }
    merge_item *it = &st->items[st->n];
    if (!(it->key = make_key(r))) {
        st->no_memory = 1;
        return 1;
    }
    json_incref(root);
    it->root = root;
    it->timestamp = r->timestamp;
    it->order = st->n;
    it->keep = 0;
    st->n++;
    return 0;
}

static int by_key_then_order(const void *a, const void *b)
{
    const merge_item *x = *(merge_item *const *)a;
    const merge_item *y = *(merge_item *const *)b;
    int c = strcmp(x->key, y->key);
    if (c)
        return c;
    return x->order < y->order ? -1 : x->order > y->order;
}

/* Does `a` replace `b`, which was read before it? */
static int newer(const merge_item *a, const merge_item *b)
{
    return a->timestamp >= b->timestamp;
}

cutune_status cutune_cache_merge(cutune_cache *cache,
                                 const char *const *inputs, size_t n_inputs,
                                 const char *output,
                                 cutune_cache_merge_stats *stats)
{
    if (stats)
        memset(stats, 0, sizeof *stats);
    if (!cache)
        return CUTUNE_ERR_INVALID_ARGUMENT;
    if (!inputs || n_inputs == 0 || !output || !output[0])
        return cutune__cache_fail(cache, CUTUNE_ERR_INVALID_ARGUMENT,
                                  "merge needs input files and an output "
                                  "file");

    char why[1024];
    if (cutune__output_check(output, why, sizeof why) < 0)
        return cutune__cache_fail(cache, CUTUNE_ERR_IO, "%s", why);
    merge_state st;
    memset(&st, 0, sizeof st);
    int lock = cutune__output_lock(output);
    cutune_status status =
        cutune__cache_scan(cache, inputs, n_inputs, merge_visit, &st);
    if (status == CUTUNE_OK && st.no_memory)
        status =
            cutune__cache_fail(cache, CUTUNE_ERR_NO_MEMORY, "out of memory");
    merge_item **sorted = NULL;
    char *text = NULL;
    size_t len = 0, written = 0;
    if (status == CUTUNE_OK &&
        !(sorted = malloc((st.n ? st.n : 1) * sizeof *sorted)))
        status =
            cutune__cache_fail(cache, CUTUNE_ERR_NO_MEMORY, "out of memory");
    if (status == CUTUNE_OK) {
        for (size_t i = 0; i < st.n; i++)
            sorted[i] = &st.items[i];
        qsort(sorted, st.n, sizeof *sorted, by_key_then_order);
        for (size_t i = 0; i < st.n;) {
            size_t best = i, j = i + 1;
            for (; j < st.n && strcmp(sorted[j]->key, sorted[i]->key) == 0;
                 j++)
                if (newer(sorted[j], sorted[best]))
                    best = j;
            sorted[best]->keep = 1;
            i = j;
        }
        size_t cap = 4096;
        text = malloc(cap);
        for (size_t i = 0; text && i < st.n; i++) {
            if (!st.items[i].keep)
                continue;
            char *line = json_dumps(st.items[i].root,
                                    JSON_COMPACT | JSON_PRESERVE_ORDER);
            size_t n = line ? strlen(line) : 0;
            if (line && len + n + 2 > cap) {
                while (len + n + 2 > cap)
                    cap *= 2;
                char *grown = realloc(text, cap);
                if (!grown) {
                    free(line);
                    line = NULL;
                } else {
                    text = grown;
                }
            }
            if (!line) {
                free(text);
                text = NULL;
                break;
            }
            memcpy(text + len, line, n);
            text[len + n] = '\n';
            len += n + 1;
            written++;
            free(line);
        }
        if (!text)
            status = cutune__cache_fail(cache, CUTUNE_ERR_NO_MEMORY,
                                        "out of memory");
    }
    if (status == CUTUNE_OK)
        status = cutune__cache_write_file(cache, output, text, len);
    cutune__output_unlock(lock);
    if (status == CUTUNE_OK && stats) {
        stats->records_read = st.n;
        stats->records_written = written;
        stats->duplicates = st.n - written;
    }
    free(text);
    free(sorted);
    for (size_t i = 0; i < st.n; i++) {
        free(st.items[i].key);
        json_decref(st.items[i].root);
    }
    free(st.items);
    return status;
}
