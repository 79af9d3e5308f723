/* Chooses the record that answers a query: the device's own, then the
 * match levels over other devices' records, then the DEFAULT level over
 * every device. */
#include "store_internal.h"

/* ------------------------------------------------------------------ */
/* Lookup                                                               */

typedef struct lookup_state {
    const cutune_cache_query *query;
    int default_only; /* every device's records, for the DEFAULT level */
    cache_entry best; /* the device's own; best.root NULL until one is */
    cutune_match level;
    double distance;
    /* Other devices' records of the problem, for the levels after the
     * device's own. */
    cache_entry *others;
    size_t n_others, cap_others;
    size_t arch; /* index in others of the best same-architecture
                    record; n_others when there is none */
    long long arch_sm;
    double arch_distance;
    int no_memory;
} lookup_state;

static int same_size(const long long *a, size_t na, const long long *b,
                     size_t nb)
{
    if (na != nb)
        return 0;
    for (size_t i = 0; i < na; i++)
        if (a[i] != b[i])
            return 0;
    return 1;
}

/* Sum over dimensions of |log(a/b)|: doubling one dimension is as far as
 * halving it. Sizes that cannot be compared that way (another dimension
 * count, a zero or negative extent) are "far": chosen only when nothing
 * nearer exists, and then the newest of them. */
static double size_distance(const long long *a, size_t na, const long long *b,
                            size_t nb)
{
    if (na != nb)
        return HUGE_VAL;
    double sum = 0;
    for (size_t i = 0; i < na; i++) {
        if (a[i] == b[i])
            continue;
        if (a[i] <= 0 || b[i] <= 0)
            return HUGE_VAL;
        /* larger over smaller, so that a doubling and a halving come out
         * bit-identical and their tie goes to the newer record */
        double hi = (double)(a[i] > b[i] ? a[i] : b[i]);
        double lo = (double)(a[i] > b[i] ? b[i] : a[i]);
        sum += log(hi / lo);
    }
    return sum;
}

static double query_distance(const cutune_cache_query *q,
                             const cutune_cache_record *r)
{
    if (!q->problem_size)
        return 0;
    return size_distance(r->problem_size, r->n_problem_size, q->problem_size,
                         q->n_problem_size);
}

static int is_query_device(const cutune_cache_query *q,
                           const cutune_cache_record *r)
{
    int by_uuid = q->device_uuid && q->device_uuid[0];
    int by_name = q->device_name && q->device_name[0];
    if (!by_uuid && !by_name)
        return 1;
    return (by_uuid && strcasecmp(r->device.uuid, q->device_uuid) == 0) ||
           (by_name && strcasecmp(r->device.name, q->device_name) == 0);
}

static int of_query_device(const void *query, const cutune_cache_record *r)
{
    return is_query_device(query, r);
}

/* Nearer first; among equals the newer, and among equal times the later
 * line (the one seen last). */
static int nearer_or_newer(double distance, long long timestamp,
                           double best_distance, long long best_timestamp)
{
    if (distance != best_distance)
        return distance < best_distance;
    return timestamp >= best_timestamp;
}

static int same_config(const cutune_param_value *a, size_t na,
                       const cutune_param_value *b, size_t nb)
{
    if (na != nb)
        return 0;
    for (size_t i = 0; i < na; i++) {
        size_t j = 0;
        while (j < nb && strcmp(a[i].name, b[j].name) != 0)
            j++;
        if (j == nb || strcmp(a[i].value, b[j].value) != 0)
            return 0;
    }
    return 1;
}

static int keep_other(lookup_state *st, cache_entry *e)
{
    if (st->n_others == st->cap_others) {
        size_t ncap = st->cap_others ? st->cap_others * 2 : 16;
        cache_entry *grown = realloc(st->others, ncap * sizeof *grown);
        if (!grown) {
            st->no_memory = 1;
            return 1;
        }
        st->others = grown;
        st->cap_others = ncap;
    }
    st->others[st->n_others++] = *e;
    memset(e, 0, sizeof *e);
    return 0;
}

static int lookup_visit(void *user, cache_entry *e, const char *path,
                        size_t line)
{
    (void)path;
    (void)line;
    lookup_state *st = user;
    const cutune_cache_query *q = st->query;
    const cutune_cache_record *r = &e->record;

    /* A record tuned for another objective answers another question. */
    if (strcmp(r->problem_name, q->problem_name) != 0 ||
        r->objective != q->objective)
        return 0;
    if (!st->default_only && is_query_device(q, r)) {
        cutune_match level = CUTUNE_MATCH_EXACT;
        double distance = 0;
        if (q->problem_size &&
            !same_size(r->problem_size, r->n_problem_size, q->problem_size,
                       q->n_problem_size)) {
            level = CUTUNE_MATCH_NEAREST_SIZE;
            distance = query_distance(q, r);
        }
        if (st->best.root) {
            if (level != st->level) {
                if (level == CUTUNE_MATCH_NEAREST_SIZE)
                    return 0;
            } else if (!nearer_or_newer(distance, r->timestamp, st->distance,
                                        st->best.record.timestamp)) {
                return 0;
            }
        }
        cutune__store_entry_free(&st->best);
        st->best = *e;
        memset(e, 0, sizeof *e);
        st->level = level;
        st->distance = distance;
        return 0;
    }
    if (!q->fallback && !st->default_only)
        return 0;
    /* Once the device has a record of its own, the other levels cannot
     * answer: stop keeping their records. */
    if (st->best.root)
        return 0;

    double distance = query_distance(q, r);
    int arch = !st->default_only && q->cc_major > 0 &&
               r->device.cc_major == q->cc_major &&
               r->device.cc_minor == q->cc_minor;
    long long sm = 0;
    if (arch && q->sm_count > 0) {
        sm = (long long)r->device.sm_count - q->sm_count;
        sm = sm < 0 ? -sm : sm;
    }
    long long timestamp = r->timestamp;
    int simulated = r->device.simulated != 0;
    if (keep_other(st, e))
        return 1;
    if (arch) {
        int best_simulated = st->arch != SIZE_MAX &&
                             st->others[st->arch].record.device.simulated != 0;
        /* A real device's record beats any simulated one. */
        if (st->arch == SIZE_MAX || simulated < best_simulated ||
            (simulated == best_simulated && sm < st->arch_sm) ||
            (simulated == best_simulated && sm == st->arch_sm &&
             nearer_or_newer(distance, timestamp, st->arch_distance,
                             st->others[st->arch].record.timestamp))) {
            st->arch = st->n_others - 1;
            st->arch_sm = sm;
            st->arch_distance = distance;
        }
    }
    return 0;
}

/* The query's accept() in front of lookup_visit: a record of the problem
 * that it refuses is skipped like an invalid line, never returned. */
typedef struct accept_visit {
    cutune_cache *cache;
    lookup_state *st;
} accept_visit;

static int accept_then_visit(void *user, cache_entry *e, const char *path,
                             size_t line)
{
    accept_visit *av = user;
    const cutune_cache_query *q = av->st->query;
    char why[256] = "";
    if (strcmp(e->record.problem_name, q->problem_name) == 0 &&
        e->record.objective == q->objective &&
        !q->accept(q->accept_user, &e->record, why, sizeof why)) {
        av->cache->skipped_lines++;
        av->cache->refused++;
        cutune__store_note_line(av->cache, path, line,
                                why[0] ? why : "refused by the lookup");
        return 0;
    }
    return lookup_visit(av->st, e, path, line);
}

static cutune_status scan_lookup(cutune_cache *cache, lookup_state *st,
                                 int *missing)
{
    /* What lookup_visit passes over need not be visited (a cache kept in
     * memory then skips it): other problems, and without fallback other
     * devices. */
    cutune__scan_filter filter = {st->query->problem_name, NULL, st->query};
    if (!st->query->fallback && !st->default_only)
        filter.keep = of_query_device;
    if (!st->query->accept)
        return cutune__store_scan_filtered(cache, &filter, lookup_visit, st,
                                           missing);
    accept_visit av = {cache, st};
    return cutune__store_scan_filtered(cache, &filter, accept_then_visit, &av,
                                       missing);
}

/* The DEFAULT level. Each device (by name) is represented by its record
 * nearest to the query's size (the newest among equals). A candidate is a
 * configuration that won on some device; its relative time on a device is
 * 1 where it won and baseline time / best time where it was that device's
 * baseline, and the devices that measured it neither way do not count.
 * The candidate with the lowest average relative time wins; ties go to
 * the one more devices measured, then to the newer record. Simulated
 * devices take part only when no real device has a record. Returns the
 * index in `others` of the record that carries it. */
static size_t pick_default(const lookup_state *st, double *avg_out,
                           size_t *devices_out)
{
    const cutune_cache_query *q = st->query;
    size_t n = st->n_others, best = SIZE_MAX, best_count = 0;
    double best_avg = HUGE_VAL;
    size_t *reps = malloc((n ? n : 1) * sizeof *reps);
    if (!reps)
        return SIZE_MAX;
    size_t n_reps = 0;
    int any_real = 0;
    for (size_t i = 0; i < n; i++)
        any_real |= !st->others[i].record.device.simulated;
    for (size_t i = 0; i < n; i++) {
        const cutune_cache_record *r = &st->others[i].record;
        if (any_real && r->device.simulated)
            continue;
        size_t k = 0;
        while (k < n_reps && strcasecmp(st->others[reps[k]].record.device.name,
                                        r->device.name) != 0)
            k++;
        if (k == n_reps) {
            reps[n_reps++] = i;
            continue;
        }
        const cutune_cache_record *old = &st->others[reps[k]].record;
        if (nearer_or_newer(query_distance(q, r), r->timestamp,
                            query_distance(q, old), old->timestamp))
            reps[k] = i;
    }
    for (size_t c = 0; c < n_reps; c++) {
        const cutune_cache_record *cand = &st->others[reps[c]].record;
        double sum = 0;
        size_t count = 0;
        for (size_t d = 0; d < n_reps; d++) {
            const cutune_cache_record *r = &st->others[reps[d]].record;
            if (same_config(cand->config, cand->n_config, r->config,
                            r->n_config)) {
                sum += 1;
                count++;
            } else if (r->time_ms > 0 && r->baseline_ms > 0 &&
                       same_config(cand->config, cand->n_config, r->baseline,
                                   r->n_baseline)) {
                sum += r->baseline_ms / r->time_ms;
                count++;
            }
        }
        double avg = sum / (double)count;
        int better;
        if (best == SIZE_MAX || avg != best_avg)
            better = best == SIZE_MAX || avg < best_avg;
        else if (count != best_count)
            better = count > best_count;
        else
            better = cand->timestamp >= st->others[best].record.timestamp;
        if (better) {
            best = reps[c];
            best_avg = avg;
            best_count = count;
        }
    }
    free(reps);
    if (avg_out)
        *avg_out = best_avg;
    if (devices_out)
        *devices_out = best_count;
    return best;
}

static void lookup_state_free(lookup_state *st)
{
    cutune__store_entry_free(&st->best);
    for (size_t i = 0; i < st->n_others; i++)
        cutune__store_entry_free(&st->others[i]);
    free(st->others);
}

const char *cutune_match_str(cutune_match match)
{
    switch (match) {
    case CUTUNE_MATCH_NONE: return "none";
    case CUTUNE_MATCH_EXACT: return "exact";
    case CUTUNE_MATCH_NEAREST_SIZE: return "nearest-size";
    case CUTUNE_MATCH_ARCHITECTURE: return "architecture";
    case CUTUNE_MATCH_DEFAULT: return "default";
    case CUTUNE_MATCH_OCCUPANCY: return "occupancy";
    }
    return "unknown";
}

cutune_status cutune_cache_lookup(cutune_cache *cache,
                                  const cutune_cache_query *query,
                                  const cutune_cache_record **record,
                                  cutune_match *match)
{
    if (record)
        *record = NULL;
    if (match)
        *match = CUTUNE_MATCH_NONE;
    if (!cache)
        return CUTUNE_ERR_INVALID_ARGUMENT;
    cache->errmsg[0] = '\0';
    cache->warning[0] = '\0';
    cutune__store_entry_free(&cache->found);
    if (!query || !query->problem_name || !record || !match)
        return cutune__cache_fail(
            cache, CUTUNE_ERR_INVALID_ARGUMENT,
            "lookup needs a query with a problem name, and places "
            "for the record and the match level");
    if (!cache->dir)
        return cutune__cache_fail(cache, CUTUNE_ERR_INVALID_ARGUMENT,
                                  "the cache has no directory (open failed)");

    lookup_state st;
    memset(&st, 0, sizeof st);
    st.query = query;
    st.arch = SIZE_MAX;
    int missing = 0;
    cutune_status status = scan_lookup(cache, &st, &missing);
    if (status == CUTUNE_OK && st.no_memory)
        status = cutune__store_fail_memory(cache);
    if (status != CUTUNE_OK) {
        lookup_state_free(&st);
        return status;
    }
    if (!st.best.root && st.n_others > 0) {
        size_t pick = st.arch;
        st.level = CUTUNE_MATCH_ARCHITECTURE;
        if (pick == SIZE_MAX) {
            st.level = CUTUNE_MATCH_DEFAULT;
            pick = pick_default(&st, NULL, NULL);
            if (pick == SIZE_MAX) {
                lookup_state_free(&st);
                return cutune__store_fail_memory(cache);
            }
        }
        st.best = st.others[pick];
        memset(&st.others[pick], 0, sizeof st.others[pick]);
    }
    if (!st.best.root) {
        lookup_state_free(&st);
        if (query->fallback)
            *match = CUTUNE_MATCH_OCCUPANCY;
        char device[320];
        if (query->device_uuid && query->device_uuid[0])
            snprintf(device, sizeof device, "device %s", query->device_uuid);
        else if (query->device_name && query->device_name[0])
            snprintf(device, sizeof device, "device \"%s\"",
                     query->device_name);
        else
            snprintf(device, sizeof device, "any device");
        char tuned[48] = "";
        if (query->objective != CUTUNE_OBJECTIVE_TIME)
            snprintf(tuned, sizeof tuned, " tuned for %s",
                     cutune_objective_str(query->objective));
        return cutune__cache_fail(
            cache, CUTUNE_ERR_NOT_FOUND,
            "no cache record%s for problem \"%s\" on %s%s in %s%s", tuned,
            query->problem_name, device,
            query->fallback ? " or any other device" : "", cache->dir,
            missing ? " (the directory does not exist)" : "");
    }
    cache->found = st.best;
    memset(&st.best, 0, sizeof st.best);
    lookup_state_free(&st);
    *record = &cache->found.record;
    *match = st.level;
    return CUTUNE_OK;
}

cutune_status cutune__cache_lookup_default(cutune_cache *cache,
                                           const cutune_cache_query *query,
                                           const cutune_cache_record **record,
                                           double *avg_relative,
                                           size_t *devices)
{
    *record = NULL;
    cache->errmsg[0] = '\0';
    cutune__store_entry_free(&cache->found);
    if (!cache->dir)
        return cutune__cache_fail(cache, CUTUNE_ERR_INVALID_ARGUMENT,
                                  "the cache has no directory (open failed)");
    lookup_state st;
    memset(&st, 0, sizeof st);
    st.query = query;
    st.default_only = 1;
    st.arch = SIZE_MAX;
    int missing = 0;
    cutune_status status = scan_lookup(cache, &st, &missing);
    if (status == CUTUNE_OK && st.no_memory)
        status = cutune__store_fail_memory(cache);
    size_t pick = SIZE_MAX;
    if (status == CUTUNE_OK && st.n_others > 0 &&
        (pick = pick_default(&st, avg_relative, devices)) == SIZE_MAX)
        status = cutune__store_fail_memory(cache);
    if (status == CUTUNE_OK && pick == SIZE_MAX)
        status = cutune__cache_fail(cache, CUTUNE_ERR_NOT_FOUND,
                                    "no cache record for problem \"%s\" in %s",
                                    query->problem_name, cache->dir);
    if (status == CUTUNE_OK) {
        cache->found = st.others[pick];
        memset(&st.others[pick], 0, sizeof st.others[pick]);
        *record = &cache->found.record;
    }
    lookup_state_free(&st);
    return status;
}
