/* The built-in plan backends: sessions on this host's GPUs, and replay of
 * recorded T4 files (simulated devices, for tests and dry runs). */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cutune/simulate.h"
#include "plan_run.h"

void cutune_plan_backend_destroy(cutune_plan_backend *backend)
{
    if (backend && backend->destroy)
        backend->destroy(backend);
}

/* ---- sessions -------------------------------------------------------- */

#define MAX_SET 64

typedef struct session_backend {
    cutune_plan_backend base;
    cutune_session_options options;
    char *strategy, *cache_dir, *worker_path, *replay_devices;
    /* options.devices: a task on one of them is tuned on all of its
     * model (set_group[i] the model of set[i]). */
    int set[MAX_SET];
    size_t set_group[MAX_SET], n_set;
    cutune_session *session; /* of the last tune: owns its result */
    cutune_cache *cache;     /* owns the record read back */
    long long size[8];
    /* Fingerprints asked for before: each costs a worker start. */
    cutune_device known[64];
    unsigned char is_known[64];
} session_backend;

static void session_destroy(cutune_plan_backend *base)
{
    session_backend *b = (session_backend *)base;
    cutune_session_destroy(b->session);
    cutune_cache_close(b->cache);
    free(b->strategy);
    free(b->cache_dir);
    free(b->worker_path);
    free(b->replay_devices);
    free(b);
}

static cutune_status session_device(void *user, int ordinal,
                                    cutune_device *device, char *why,
                                    size_t why_size)
{
    session_backend *b = user;
    if (ordinal >= 0 && ordinal < 64 && b->is_known[ordinal]) {
        *device = b->known[ordinal];
        return CUTUNE_OK;
    }
    cutune_session_options o = b->options;
    o.device = ordinal;
    o.devices = NULL;
    o.n_devices = 0;
    cutune_session *s = NULL;
    const cutune_device *list = NULL;
    size_t n = 0;
    cutune_status st = cutune_session_create(&o, &s);
    if (st == CUTUNE_OK)
        st = cutune_session_devices(s, &list, &n);
    if (st == CUTUNE_OK && (size_t)ordinal >= n)
        st = CUTUNE_ERR_NO_DEVICE;
    if (st == CUTUNE_OK) {
        *device = list[ordinal];
        if (ordinal < 64) {
            b->known[ordinal] = *device;
            b->is_known[ordinal] = 1;
        }
    } else if (st == CUTUNE_ERR_NO_DEVICE && s && n)
        snprintf(why, why_size, "no CUDA device %d (this host has %zu)",
                 ordinal, n);
    else
        snprintf(why, why_size, "%s",
                 s ? cutune_session_errmsg(s) : cutune_status_str(st));
    cutune_session_destroy(s);
    return st;
}

/* The problem's part of a record (name, source hash, size, held in
 * `size`), the same for a tuned and a replayed task. */
static void record_problem(cutune_cache_record *rec,
                           const cutune_problem *problem, long long size[8])
{
    rec->problem_name = cutune_problem_name(problem);
    rec->source_hash = cutune_problem_source_hash(problem);
    rec->n_problem_size = cutune_problem_size_dims(problem);
    if (rec->n_problem_size > 8)
        rec->n_problem_size = 8;
    for (size_t d = 0; d < rec->n_problem_size; d++)
        size[d] = cutune_problem_size(problem, d);
    rec->problem_size = size;
    rec->compiler_options = "";
}

/* The record as the session would have written it, for a rank that must
 * not write to the cache. */
static void record_from_result(session_backend *b,
                               const cutune_problem *problem,
                               const cutune_tune_result *r,
                               cutune_cache_record *rec)
{
    memset(rec, 0, sizeof *rec);
    rec->device = r->device;
    record_problem(rec, problem, b->size);
    rec->config = r->best;
    rec->n_config = r->n_params;
    rec->time_ms = r->best_ms;
    rec->time_min_ms = r->best_min_ms;
    rec->time_stddev_ms = r->best_stddev_ms;
    rec->runs = r->best_runs;
    rec->gbs = r->best_gbs;
    rec->baseline = r->baseline;
    rec->n_baseline = r->n_params;
    rec->baseline_ms = r->baseline_ms;
    rec->strategy = r->strategy;
    rec->evaluations = r->evaluations;
    rec->tune_seconds = r->wall_s;
    rec->timestamp = (long long)time(NULL);
    rec->objective = r->objective;
    rec->energy_j = r->best_energy_j;
}

/* The session appended the winner itself: read it back whole (with the
 * compiler options the result does not carry). */
static cutune_status read_back(session_backend *b,
                               const cutune_problem *problem,
                               const cutune_device *device,
                               cutune_cache_record *rec, char *why,
                               size_t why_size)
{
    long long dims[8];
    cutune_cache_query q;
    memset(&q, 0, sizeof q);
    q.problem_name = cutune_problem_name(problem);
    q.n_problem_size = cutune_problem_size_dims(problem);
    for (size_t d = 0; d < q.n_problem_size && d < 8; d++)
        dims[d] = cutune_problem_size(problem, d);
    q.problem_size = dims;
    q.device_name = device->name;
    q.device_uuid = device->uuid;
    q.objective = b->base.objective;
    const cutune_cache_record *found = NULL;
    cutune_match match = CUTUNE_MATCH_NONE;
    cutune_cache_close(b->cache);
    cutune_status st = cutune_cache_open(b->options.cache_dir, &b->cache);
    if (st == CUTUNE_OK)
        st = cutune_cache_lookup(b->cache, &q, &found, &match);
    if (st != CUTUNE_OK || match != CUTUNE_MATCH_EXACT) {
        snprintf(why, why_size, "the tuned record is not in the cache: %s",
                 b->cache ? cutune_cache_errmsg(b->cache) : "");
        return st != CUTUNE_OK ? st : CUTUNE_ERR_NOT_FOUND;
    }
    *rec = *found;
    return CUTUNE_OK;
}

static cutune_status session_tune(void *user, const cutune_plan_task *task,
                                  const cutune_problem *problem,
                                  int write_cache, cutune_cache_record *record,
                                  int *appended, char *why, size_t why_size)
{
    session_backend *b = user;
    cutune_session_options o = b->options;
    o.device = task->device;
    o.write_cache = write_cache;
    o.objective = b->base.objective;
    /* A device of the --devices set shares the search with its model. */
    int members[MAX_SET];
    size_t n = 0;
    for (size_t i = 0; i < b->n_set && !n; i++)
        if (b->set[i] == task->device)
            for (size_t k = 0; k < b->n_set; k++)
                if (b->set_group[k] == b->set_group[i])
                    members[n++] = b->set[k];
    o.devices = n ? members : NULL;
    o.n_devices = n;
    cutune_session_destroy(b->session);
    b->session = NULL;
    const cutune_tune_result *r = NULL;
    cutune_status st = cutune_session_create(&o, &b->session);
    if (st == CUTUNE_OK)
        st = cutune_session_tune(b->session, problem, &r);
    if (st != CUTUNE_OK) {
        snprintf(why, why_size, "%s",
                 b->session ? cutune_session_errmsg(b->session)
                            : cutune_status_str(st));
        return st;
    }
    *appended = write_cache;
    if (write_cache)
        return read_back(b, problem, &r->device, record, why, why_size);
    record_from_result(b, problem, r, record);
    return CUTUNE_OK;
}

static char *dup_or_null(const char *s)
{
    return s ? strdup(s) : NULL;
}

/* The models of options->devices, listed once. */
static cutune_status group_set(session_backend *b)
{
    const cutune_session_options *o = &b->options;
    if (!o->devices || !o->n_devices)
        return CUTUNE_OK;
    if (o->n_devices > MAX_SET)
        return CUTUNE_ERR_INVALID_ARGUMENT;
    memcpy(b->set, o->devices, o->n_devices * sizeof *b->set);
    b->n_set = o->n_devices;
    b->options.devices = NULL;
    b->options.n_devices = 0;
    cutune_session_options probe = b->options;
    probe.log = NULL;
    cutune_session *s = NULL;
    size_t n_groups;
    cutune_status st = cutune_session_create(&probe, &s);
    if (st == CUTUNE_OK)
        st = cutune_session_device_groups(s, b->set, b->n_set, b->set_group,
                                          &n_groups);
    cutune_session_destroy(s);
    return st;
}

cutune_status
cutune_plan_session_backend_create(const cutune_session_options *options,
                                   cutune_plan_backend **out)
{
    if (!out || !options)
        return CUTUNE_ERR_INVALID_ARGUMENT;
    *out = NULL;
    session_backend *b = calloc(1, sizeof *b);
    if (!b)
        return CUTUNE_ERR_NO_MEMORY;
    b->options = *options;
    b->strategy = dup_or_null(options->strategy);
    b->cache_dir = dup_or_null(options->cache_dir);
    b->worker_path = dup_or_null(options->worker_path);
    b->replay_devices = dup_or_null(options->replay_devices);
    b->options.strategy = b->strategy;
    b->options.cache_dir = b->cache_dir;
    b->options.worker_path = b->worker_path;
    b->options.replay_devices = b->replay_devices;
    b->base.device = session_device;
    b->base.tune = session_tune;
    b->base.destroy = session_destroy;
    b->base.user = b;
    /* Replayed devices need no kernel: problems load for their space. */
    b->base.space_only = b->replay_devices != NULL;
    b->base.objective = options->objective;
    if ((options->strategy && !b->strategy) ||
        (options->cache_dir && !b->cache_dir) ||
        (options->worker_path && !b->worker_path) ||
        (options->replay_devices && !b->replay_devices)) {
        session_destroy(&b->base);
        return CUTUNE_ERR_NO_MEMORY;
    }
    cutune_status st = group_set(b);
    if (st != CUTUNE_OK) {
        session_destroy(&b->base);
        return st;
    }
    *out = &b->base;
    return CUTUNE_OK;
}

/* ---- replay ---------------------------------------------------------- */

typedef struct replay_backend {
    cutune_plan_backend base;
    char *pattern, *strategy;
    size_t max_evals;
    uint64_t seed;
    cutune_simulation *simulation; /* of the last tune: owns the best */
    char path[4096];
    long long size[8];
    cutune_device device;
} replay_backend;

static void replay_destroy(cutune_plan_backend *base)
{
    replay_backend *b = (replay_backend *)base;
    cutune_simulation_destroy(b->simulation);
    free(b->pattern);
    free(b->strategy);
    free(b);
}

static cutune_status replay_device(void *user, int ordinal,
                                   cutune_device *device, char *why,
                                   size_t why_size)
{
    (void)user;
    (void)why;
    (void)why_size;
    memset(device, 0, sizeof *device);
    snprintf(device->name, sizeof device->name, "replay %d", ordinal);
    snprintf(device->cutune_version, sizeof device->cutune_version, "%s",
             CUTUNE_VERSION_STRING);
    device->simulated = 1;
    return CUTUNE_OK;
}

static void expand_pattern(replay_backend *b, const char *name)
{
    const char *hole = strstr(b->pattern, "{problem}");
    if (!hole)
        snprintf(b->path, sizeof b->path, "%s", b->pattern);
    else
        snprintf(b->path, sizeof b->path, "%.*s%s%s", (int)(hole - b->pattern),
                 b->pattern, name, hole + strlen("{problem}"));
}

static cutune_status replay_tune(void *user, const cutune_plan_task *task,
                                 const cutune_problem *problem,
                                 int write_cache, cutune_cache_record *rec,
                                 int *appended, char *why, size_t why_size)
{
    replay_backend *b = user;
    (void)write_cache;
    *appended = 0;
    expand_pattern(b, cutune_problem_name(problem));
    cutune_simulate_options so;
    cutune_simulate_options_init(&so);
    so.results_path = b->path;
    so.strategy = b->strategy;
    so.max_evals = b->max_evals;
    so.seed = b->seed;
    so.objective = b->base.objective;
    cutune_simulation_destroy(b->simulation);
    b->simulation = NULL;
    cutune_status st = cutune_simulate(problem, &so, &b->simulation);
    const cutune_simulate_result *r = cutune_simulation_result(b->simulation);
    if (st != CUTUNE_OK || !r || !r->n_runs || !r->runs[0].best) {
        snprintf(why, why_size, "%s",
                 b->simulation ? cutune_simulation_errmsg(b->simulation)
                               : cutune_status_str(st));
        return st != CUTUNE_OK ? st : CUTUNE_ERR_NO_VALID_RESULT;
    }
    const cutune_simulate_run *run = &r->runs[0];
    memset(rec, 0, sizeof *rec);
    replay_device(b, task->device, &rec->device, why, why_size);
    record_problem(rec, problem, b->size);
    rec->config = run->best;
    rec->n_config = r->n_params;
    rec->time_ms = run->best_time_ms;
    rec->time_min_ms = run->best_time_ms;
    rec->objective = b->base.objective;
    rec->energy_j = run->best_energy_j;
    /* A replay has no start configuration measured: no baseline. */
    rec->baseline_ms = NAN;
    rec->runs = 1;
    rec->strategy = r->strategy;
    rec->evaluations = run->evaluations;
    rec->tune_seconds = run->seconds;
    rec->timestamp = (long long)time(NULL);
    return CUTUNE_OK;
}

cutune_status cutune_plan_replay_backend_create(const char *results_pattern,
                                                const char *strategy,
                                                size_t max_evals,
                                                uint64_t seed,
                                                cutune_plan_backend **out)
{
    if (!out || !results_pattern)
        return CUTUNE_ERR_INVALID_ARGUMENT;
    *out = NULL;
    replay_backend *b = calloc(1, sizeof *b);
    if (!b)
        return CUTUNE_ERR_NO_MEMORY;
    b->pattern = strdup(results_pattern);
    b->strategy = strategy ? strdup(strategy) : NULL;
    b->max_evals = max_evals;
    b->seed = seed;
    b->base.device = replay_device;
    b->base.tune = replay_tune;
    b->base.destroy = replay_destroy;
    b->base.user = b;
    b->base.space_only = 1;
    if (!b->pattern || (strategy && !b->strategy)) {
        replay_destroy(&b->base);
        return CUTUNE_ERR_NO_MEMORY;
    }
    *out = &b->base;
    return CUTUNE_OK;
}
