/* A plan over MPI ranks (built only when CMake finds MPI): rank 0 hands
 * out tasks one at a time to whichever rank asks, answers whether the
 * cache holds a task already, and appends every record a rank sends back
 * to its own cache, so no file system is shared. A rank whose task fails
 * says so and asks for the next. Rank 0 tunes too, in a thread of its
 * own beside the dispatcher, so that `mpirun -n N` tunes on N ranks (one
 * per GPU) rather than N - 1. docs/plans.md draws the messages. */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "plan_run.h"

enum {
    TAG_REQUEST = 1, /* rank -> 0: give me a task */
    TAG_TASK,        /* 0 -> rank: task index (long long) */
    TAG_STOP,        /* 0 -> rank: nothing left */
    TAG_CHECK,       /* rank -> 0: {"task", "device"}: is it cached? */
    TAG_GO,          /* 0 -> rank: tune it */
    TAG_SKIP,        /* 0 -> rank: cached, take the next */
    TAG_RESULT,      /* rank -> 0: {"task", "record"} */
    TAG_FAIL         /* rank -> 0: {"task", "status", "message"} */
};

int cutune_plan_mpi_available(void)
{
    return 1;
}

static int send_json(json_t *j, int dest, int tag)
{
    char *text = j ? json_dumps(j, JSON_COMPACT) : NULL;
    json_decref(j);
    if (!text)
        return MPI_ERR_OTHER;
    int rc = MPI_Send(text, (int)strlen(text) + 1, MPI_CHAR, dest, tag,
                      MPI_COMM_WORLD);
    free(text);
    return rc;
}

static int send_empty(int dest, int tag)
{
    return MPI_Send(NULL, 0, MPI_CHAR, dest, tag, MPI_COMM_WORLD);
}

/* Receives the next message from `source` (MPI_ANY_SOURCE) whatever its
 * tag; a text message is parsed into *json (NULL for an empty one). */
static int recv_any(int source, int *from, int *tag, json_t **json,
                    long long *number)
{
    MPI_Status s;
    int count, flag = 0, rc;
    /* Polled rather than MPI_Probe: Open MPI's blocking calls spin a core,
     * which on rank 0 would be taken from its own tune's compile pool. */
    while ((rc = MPI_Iprobe(source, MPI_ANY_TAG, MPI_COMM_WORLD, &flag,
                            &s)) == MPI_SUCCESS &&
           !flag)
        nanosleep(&(struct timespec){0, 1000000}, NULL);
    if (rc != MPI_SUCCESS)
        return rc;
    *from = s.MPI_SOURCE;
    *tag = s.MPI_TAG;
    *json = NULL;
    if (s.MPI_TAG == TAG_TASK)
        return MPI_Recv(number, 1, MPI_LONG_LONG, s.MPI_SOURCE, s.MPI_TAG,
                        MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Get_count(&s, MPI_CHAR, &count);
    char *text = malloc(count > 0 ? (size_t)count : 1);
    if (!text)
        return MPI_ERR_NO_MEM;
    rc = MPI_Recv(text, count, MPI_CHAR, s.MPI_SOURCE, s.MPI_TAG,
                  MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (rc == MPI_SUCCESS && count > 0)
        *json = json_loads(text, 0, NULL);
    free(text);
    return rc;
}

/* ---- the ranks that tune --------------------------------------------- */

static int send_fail(size_t index, cutune_status st, const char *why)
{
    return send_json(json_pack("{s:I, s:i, s:s}", "task", (json_int_t)index,
                               "status", (int)st, "message", why), 0,
                     TAG_FAIL);
}

/* One task on a tuning rank; returns an MPI error code. */
static int tune_task(cutune_plan *plan, size_t index,
                     const cutune_plan_backend *backend,
                     cutune_plan_report *report)
{
    cutune_plan_task *task = &plan->tasks[index];
    char why[1024] = "";
    cutune_problem *problem = NULL;
    cutune_device device;
    cutune_status st = cutune__plan_load_problem(task, backend, &problem,
                                                 why, sizeof why);
    if (st == CUTUNE_OK)
        st = backend->device(backend->user, task->device, &device, why,
                             sizeof why);
    if (st != CUTUNE_OK) {
        report->failed++;
        cutune_problem_destroy(problem);
        return send_fail(index, st, why);
    }
    int from, tag, rc = send_json(
        json_pack("{s:I, s:o}", "task", (json_int_t)index, "device",
                  cutune__plan_device_encode(&device)), 0, TAG_CHECK);
    json_t *reply = NULL;
    if (rc == MPI_SUCCESS)
        rc = recv_any(0, &from, &tag, &reply, NULL);
    json_decref(reply);
    if (rc != MPI_SUCCESS || tag == TAG_SKIP) {
        report->skipped += rc == MPI_SUCCESS;
        cutune_problem_destroy(problem);
        return rc;
    }
    cutune_cache_record rec;
    int appended = 0;
    /* The rank's own cache keeps a copy (and the session's record, read
     * back, carries what its result does not); rank 0 does not write a
     * record twice where the two caches are one. */
    st = backend->tune(backend->user, task, problem, 1, &rec, &appended,
                       why, sizeof why);
    /* The record borrows the problem's name and hash. */
    json_t *encoded = st == CUTUNE_OK ? cutune__plan_record_encode(&rec)
                                      : NULL;
    cutune_problem_destroy(problem);
    if (st != CUTUNE_OK) {
        report->failed++;
        return send_fail(index, st, why);
    }
    if (!encoded) {
        report->failed++;
        return send_fail(index, CUTUNE_ERR_PARSE,
                         "the record could not be encoded as JSON");
    }
    report->tuned++;
    return send_json(json_pack("{s:I, s:o}", "task", (json_int_t)index,
                               "record", encoded), 0, TAG_RESULT);
}

static int tuning_rank(cutune_plan *plan, const cutune_plan_backend *backend,
                       cutune_plan_report *report)
{
    for (;;) {
        int from, tag, rc = send_empty(0, TAG_REQUEST);
        long long index = -1;
        json_t *j = NULL;
        if (rc == MPI_SUCCESS)
            rc = recv_any(0, &from, &tag, &j, &index);
        json_decref(j);
        if (rc != MPI_SUCCESS || tag == TAG_STOP)
            return rc;
        if (tag != TAG_TASK || index < 0 || (size_t)index >= plan->n_tasks)
            return MPI_ERR_TAG;
        report->tasks++;
        if ((rc = tune_task(plan, (size_t)index, backend, report)))
            return rc;
    }
}

/* ---- rank 0 ---------------------------------------------------------- */

typedef struct dispatcher {
    cutune_plan *plan;
    const cutune_plan_backend *backend;
    const cutune_plan_run_options *options;
    cutune_cache *cache;
    cutune__plan_progress progress;
    /* Shared by the dispatcher and rank 0's own tuner: the next task to
     * hand out, the cache, the tasks' states and the progress line. */
    pthread_mutex_t lock;
    size_t next;
} dispatcher;

static cutune_plan_task *task_of(dispatcher *d, json_t *j)
{
    json_int_t index = json_integer_value(json_object_get(j, "task"));
    if (!json_is_integer(json_object_get(j, "task")) || index < 0 ||
        (size_t)index >= d->plan->n_tasks)
        return NULL;
    return &d->plan->tasks[index];
}

static void finish(dispatcher *d, cutune_plan_task *task,
                   cutune_plan_state state)
{
    if (task->state != CUTUNE_PLAN_FAILED)
        task->state = state;
    cutune__plan_progress_task(&d->progress, task);
}

static int on_check(dispatcher *d, int from, json_t *j)
{
    cutune_plan_task *task = task_of(d, j);
    cutune_device device;
    if (!task || !cutune__plan_device_decode(json_object_get(j, "device"),
                                             &device))
        return MPI_ERR_OTHER;
    if (d->options->force)
        return send_empty(from, TAG_GO);
    /* Only the space is needed to judge a record; the rank loads the
     * problem whole, and a problem that cannot load fails there. */
    cutune_plan_backend space_only = *d->backend;
    space_only.space_only = 1;
    cutune_problem *problem = NULL;
    char why[512];
    int cached = cutune__plan_load_problem(task, &space_only, &problem, why,
                                           sizeof why) == CUTUNE_OK &&
                 cutune__plan_cached(d->cache, task, problem, &device);
    cutune_problem_destroy(problem);
    if (cached)
        finish(d, task, CUTUNE_PLAN_SKIPPED);
    return send_empty(from, cached ? TAG_SKIP : TAG_GO);
}

/* Whether the newest exact record of `r`'s key is `r` itself: a rank
 * sharing rank 0's cache directory (the same host, a shared file system)
 * may have written it already. */
static int already_there(cutune_cache *cache, const cutune_cache_record *r)
{
    cutune_cache_query q;
    memset(&q, 0, sizeof q);
    q.problem_name = r->problem_name;
    q.device_name = r->device.name;
    q.device_uuid = r->device.uuid;
    q.problem_size = r->problem_size;
    q.n_problem_size = r->n_problem_size;
    const cutune_cache_record *found = NULL;
    cutune_match match = CUTUNE_MATCH_NONE;
    return cutune_cache_lookup(cache, &q, &found, &match) == CUTUNE_OK &&
           match == CUTUNE_MATCH_EXACT && found->timestamp == r->timestamp &&
           found->time_ms == r->time_ms &&
           found->evaluations == r->evaluations;
}

static int on_result(dispatcher *d, json_t *j)
{
    cutune_plan_task *task = task_of(d, j);
    cutune_cache_record rec;
    cutune_param_value *config, *baseline;
    long long *size;
    int ok = cutune__plan_record_decode(json_object_get(j, "record"), &rec,
                                        &config, &baseline, &size);
    if (task && ok && !already_there(d->cache, &rec) &&
        cutune_cache_append(d->cache, &rec) != CUTUNE_OK)
        cutune__plan_fail(task, CUTUNE_ERR_IO, cutune_cache_errmsg(d->cache));
    else if (task && !ok)
        cutune__plan_fail(task, CUTUNE_ERR_PARSE, "a malformed record came");
    free(config);
    free(baseline);
    free(size);
    if (!task)
        return MPI_ERR_OTHER;
    finish(d, task, CUTUNE_PLAN_TUNED);
    return MPI_SUCCESS;
}

static int on_fail(dispatcher *d, int from, json_t *j)
{
    cutune_plan_task *task = task_of(d, j);
    if (!task)
        return MPI_ERR_OTHER;
    char message[1200];
    snprintf(message, sizeof message, "rank %d: %s", from,
             json_string_value(json_object_get(j, "message")) ?
             json_string_value(json_object_get(j, "message")) : "");
    cutune__plan_fail(task, (cutune_status)json_integer_value(
                                json_object_get(j, "status")), message);
    finish(d, task, CUTUNE_PLAN_FAILED);
    return MPI_SUCCESS;
}

static int dispatch(dispatcher *d, int ranks)
{
    int active = ranks - 1, rc = MPI_SUCCESS;
    while (active > 0 && rc == MPI_SUCCESS) {
        int from, tag;
        json_t *j = NULL;
        if ((rc = recv_any(MPI_ANY_SOURCE, &from, &tag, &j, NULL)))
            break;
        pthread_mutex_lock(&d->lock);
        if (tag == TAG_REQUEST && d->next < d->plan->n_tasks) {
            long long index = (long long)d->next++;
            rc = MPI_Send(&index, 1, MPI_LONG_LONG, from, TAG_TASK,
                          MPI_COMM_WORLD);
        } else if (tag == TAG_REQUEST) {
            rc = send_empty(from, TAG_STOP);
            active--;
        } else if (tag == TAG_CHECK) {
            rc = on_check(d, from, j);
        } else if (tag == TAG_RESULT) {
            rc = on_result(d, j);
        } else if (tag == TAG_FAIL) {
            rc = on_fail(d, from, j);
        } else {
            rc = MPI_ERR_TAG;
        }
        pthread_mutex_unlock(&d->lock);
        json_decref(j);
    }
    return rc;
}

/* One task tuned on rank 0 itself: as on the other ranks, but the cache
 * is at hand (under the lock) instead of a message away. */
static void local_task(dispatcher *d, cutune_plan_task *task)
{
    char why[1024] = "";
    cutune_problem *problem = NULL;
    cutune_device device;
    memset(&device, 0, sizeof device);
    cutune_status st = cutune__plan_load_problem(task, d->backend, &problem,
                                                 why, sizeof why);
    if (st == CUTUNE_OK)
        st = d->backend->device(d->backend->user, task->device, &device,
                                why, sizeof why);
    pthread_mutex_lock(&d->lock);
    int cached = st == CUTUNE_OK && !d->options->force &&
                 cutune__plan_cached(d->cache, task, problem, &device);
    pthread_mutex_unlock(&d->lock);
    cutune_cache_record rec;
    int appended = 0;
    if (st == CUTUNE_OK && !cached)
        st = d->backend->tune(d->backend->user, task, problem, 1, &rec,
                              &appended, why, sizeof why);
    pthread_mutex_lock(&d->lock);
    if (st == CUTUNE_OK && !cached && !appended &&
        (st = cutune_cache_append(d->cache, &rec)) != CUTUNE_OK)
        snprintf(why, sizeof why, "tuning cache: %s",
                 cutune_cache_errmsg(d->cache));
    if (st != CUTUNE_OK) {
        char message[1100];
        snprintf(message, sizeof message, "rank 0: %s", why);
        cutune__plan_fail(task, st, message);
    }
    finish(d, task, st != CUTUNE_OK ? CUTUNE_PLAN_FAILED
                    : cached        ? CUTUNE_PLAN_SKIPPED
                                    : CUTUNE_PLAN_TUNED);
    pthread_mutex_unlock(&d->lock);
    cutune_problem_destroy(problem);
}

static void *local_tuner(void *arg)
{
    dispatcher *d = arg;
    for (;;) {
        pthread_mutex_lock(&d->lock);
        size_t index = d->next < d->plan->n_tasks ? d->next++ : SIZE_MAX;
        pthread_mutex_unlock(&d->lock);
        if (index == SIZE_MAX)
            return NULL;
        local_task(d, &d->plan->tasks[index]);
    }
}

static void fill_report(const cutune_plan *plan, double start,
                        cutune_plan_report *report)
{
    report->tasks = plan->n_tasks;
    for (size_t t = 0; t < plan->n_tasks; t++) {
        report->tuned += plan->tasks[t].state == CUTUNE_PLAN_TUNED;
        report->skipped += plan->tasks[t].state == CUTUNE_PLAN_SKIPPED;
        report->failed += plan->tasks[t].state == CUTUNE_PLAN_FAILED;
    }
    report->seconds = cutune__plan_now() - start;
}

static cutune_status run_rank0(dispatcher *d, int ranks, int tune_here,
                               cutune_plan_report *report)
{
    cutune_status st = cutune_cache_open(d->options->cache_dir, &d->cache);
    if (st != CUTUNE_OK) {
        snprintf(d->plan->errmsg, sizeof d->plan->errmsg,
                 "tuning cache: %s", d->cache ?
                 cutune_cache_errmsg(d->cache) : cutune_status_str(st));
        /* The other ranks still ask: stop them, then report. */
        d->plan->n_tasks = 0;
    } else {
        /* Every task looks the cache up: decode it once, not per task. */
        (void)cutune_cache_preload(d->cache);
    }
    cutune__plan_progress_start(&d->progress, d->options, d->plan->n_tasks);
    /* Without thread support from MPI, rank 0 only dispatches. */
    pthread_t tuner;
    pthread_mutex_init(&d->lock, NULL);
    int local = tune_here && pthread_create(&tuner, NULL, local_tuner, d) == 0;
    int rc = dispatch(d, ranks);
    if (local)
        pthread_join(tuner, NULL);
    pthread_mutex_destroy(&d->lock);
    cutune_cache_close(d->cache);
    fill_report(d->plan, d->progress.start, report);
    if (st == CUTUNE_OK && rc != MPI_SUCCESS) {
        snprintf(d->plan->errmsg, sizeof d->plan->errmsg,
                 "MPI: rank 0 lost touch with the other ranks (error %d)",
                 rc);
        st = CUTUNE_ERR_IO;
    }
    return st;
}

cutune_status cutune_plan_run_mpi(cutune_plan *plan,
                                  const cutune_plan_backend *backend,
                                  const cutune_plan_run_options *options,
                                  cutune_plan_report *report)
{
    cutune_plan_run_options defaults;
    cutune_plan_report ignored;
    if (!plan || !backend || !backend->device || !backend->tune)
        return CUTUNE_ERR_INVALID_ARGUMENT;
    if (!options) {
        cutune_plan_run_options_init(&defaults);
        options = &defaults;
    }
    if (!report)
        report = &ignored;
    memset(report, 0, sizeof *report);
    int initialized = 0, rank = 0, ranks = 1, threads = MPI_THREAD_SINGLE;
    MPI_Initialized(&initialized);
    /* Only the main thread calls MPI (rank 0's tuner thread does not):
     * FUNNELED is all that is needed. */
    if (!initialized && MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED,
                                        &threads) != MPI_SUCCESS) {
        snprintf(plan->errmsg, sizeof plan->errmsg, "MPI_Init failed");
        return CUTUNE_ERR_IO;
    }
    if (initialized)
        MPI_Query_thread(&threads);
    /* The library never aborts: MPI errors come back as codes. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    cutune_status st = CUTUNE_OK;
    double start = cutune__plan_now();
    if (ranks == 1) {
        st = cutune_plan_run(plan, backend, options, report);
    } else if (rank == 0) {
        dispatcher d;
        memset(&d, 0, sizeof d);
        d.plan = plan;
        d.backend = backend;
        d.options = options;
        st = run_rank0(&d, ranks, threads >= MPI_THREAD_FUNNELED, report);
    } else if (tuning_rank(plan, backend, report) != MPI_SUCCESS) {
        snprintf(plan->errmsg, sizeof plan->errmsg,
                 "MPI: rank %d lost touch with rank 0", rank);
        st = CUTUNE_ERR_IO;
    }
    if (rank != 0)
        report->seconds = cutune__plan_now() - start;
    report->rank = rank;
    report->ranks = ranks;
    if (!initialized)
        MPI_Finalize();
    return st;
}
