/* Rank 0 of a plan over MPI: first every rank's plan is compared with its
 * own (a hash of the tasks); then its main thread hands the tasks out,
 * answers cache checks and appends the records that come back, while a
 * second thread tunes like any other rank, from the same queue.
 *
 * A rank that says nothing for the timeout (it sends a word every quarter
 * of it while it tunes) is taken for stopped: killed, hung, or its host
 * gone. Its task goes back to the queue, ahead of the rest, for the next
 * rank that asks, and it is sent STOP, so that if it wakes up it ends
 * instead of tuning on. A rank that asks when the queue is empty while
 * others still hold tasks waits for them, since one of those may yet come
 * back to the queue. */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "plan_mpi.h"

typedef enum rank_state {
    RANK_TALKING, /* expected to say something within the timeout */
    RANK_WAITING, /* asked for a task while none was free: waits for us */
    RANK_DONE,    /* sent STOP */
    RANK_LOST     /* timed out (or never showed its plan) */
} rank_state;

typedef struct rank_info {
    rank_state state;
    int beats;      /* sends ALIVE while it works: can be timed out */
    long long task; /* the task it holds; -1: none */
    double seen;    /* when it last said anything */
    char hash[32];
} rank_info;

typedef struct dispatcher {
    cutune_plan *plan;
    const cutune_plan_backend *backend;
    const cutune_plan_run_options *options;
    cutune_cache *cache;
    cutune__plan_progress progress;
    /* Shared by the dispatcher and rank 0's own tuner: the queue (next,
     * then requeued tasks first), the cache, the tasks' states and the
     * progress line. */
    pthread_mutex_t lock;
    size_t next;
    size_t *requeued, n_requeued;
    size_t held; /* tasks other ranks hold */
    rank_info *ranks;
    int n_ranks;
    int lost;
    double timeout;
} dispatcher;

static void logf_(const dispatcher *d, cutune_log_level level, const char *fmt,
                  ...) __attribute__((format(printf, 3, 4)));

static void logf_(const dispatcher *d, cutune_log_level level, const char *fmt,
                  ...)
{
    char buf[1024];
    va_list ap;
    if (!d->options->log)
        return;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    d->options->log(d->options->log_user, level, buf);
}

/* Under the lock: the next task to hand out, requeued ones first. */
static int take_task(dispatcher *d, size_t *index)
{
    if (d->n_requeued > 0) {
        *index = d->requeued[--d->n_requeued];
        return 1;
    }
    if (d->next < d->plan->n_tasks) {
        *index = d->next++;
        return 1;
    }
    return 0;
}

static cutune_plan_task *task_of(dispatcher *d, json_t *j)
{
    size_t index;
    return cutune__plan_message_task(j, d->plan->n_tasks, &index)
               ? &d->plan->tasks[index]
               : NULL;
}

static void finish(dispatcher *d, cutune_plan_task *task,
                   cutune_plan_state state)
{
    if (task->state != CUTUNE_PLAN_FAILED)
        task->state = state;
    cutune__plan_progress_task(&d->progress, task);
}

/* The rank is done with the task it held. */
static void release(dispatcher *d, int from)
{
    if (d->ranks[from].task >= 0) {
        d->ranks[from].task = -1;
        d->held--;
    }
}

static int on_check(dispatcher *d, int from, json_t *j)
{
    cutune_plan_task *task = task_of(d, j);
    cutune_device device;
    if (!task ||
        !cutune__plan_device_decode(json_object_get(j, "device"), &device))
        return MPI_ERR_OTHER;
    if (d->options->force)
        return cutune__mpi_send_empty(from, TAG_GO);
    /* Only the space is needed to judge a record; the rank loads the
     * problem whole, and a problem that cannot load fails there. */
    cutune_plan_backend space_only = *d->backend;
    space_only.space_only = 1;
    cutune_problem *problem = NULL;
    char why[512];
    int cached =
        cutune__plan_load_problem(task, &space_only, &problem, why,
                                  sizeof why) == CUTUNE_OK &&
        cutune__plan_cached(d->cache, d->backend->objective, problem, &device);
    cutune_problem_destroy(problem);
    if (cached) {
        release(d, from);
        finish(d, task, CUTUNE_PLAN_SKIPPED);
    }
    return cutune__mpi_send_empty(from, cached ? TAG_SKIP : TAG_GO);
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
    q.objective = r->objective;
    const cutune_cache_record *found = NULL;
    cutune_match match = CUTUNE_MATCH_NONE;
    return cutune_cache_lookup(cache, &q, &found, &match) == CUTUNE_OK &&
           match == CUTUNE_MATCH_EXACT && found->timestamp == r->timestamp &&
           found->time_ms == r->time_ms &&
           found->evaluations == r->evaluations;
}

static int on_result(dispatcher *d, int from, json_t *j)
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
    release(d, from);
    finish(d, task, CUTUNE_PLAN_TUNED);
    return MPI_SUCCESS;
}

static int on_fail(dispatcher *d, int from, json_t *j)
{
    cutune_plan_task *task = task_of(d, j);
    cutune_status status;
    const char *why;
    if (!task || !cutune__plan_message_fail(j, &status, &why))
        return MPI_ERR_OTHER;
    char message[1200];
    snprintf(message, sizeof message, "rank %d: %s", from, why);
    cutune__plan_fail(task, status, message);
    release(d, from);
    finish(d, task, CUTUNE_PLAN_FAILED);
    return MPI_SUCCESS;
}

/* A task for a rank that asks: one from the queue, else wait while other
 * ranks hold tasks (one may come back), else STOP. */
static int give(dispatcher *d, int to)
{
    size_t index;
    rank_info *r = &d->ranks[to];
    if (take_task(d, &index)) {
        long long i = (long long)index;
        r->state = RANK_TALKING;
        r->task = i;
        r->seen = cutune__plan_now();
        d->held++;
        return MPI_Send(&i, 1, MPI_LONG_LONG, to, TAG_TASK, MPI_COMM_WORLD);
    }
    if (d->held > 0) {
        r->state = RANK_WAITING;
        return MPI_SUCCESS;
    }
    r->state = RANK_DONE;
    return cutune__mpi_send_empty(to, TAG_STOP);
}

static void describe(const cutune_plan_task *task, char *buf, size_t size)
{
    size_t used =
        (size_t)snprintf(buf, size, "item %zu (%s", task->item, task->problem);
    for (size_t k = 0; k < task->n_size && used < size; k++)
        used += (size_t)snprintf(buf + used, size - used, "%s%lld",
                                 k ? "x" : " at size ", task->size[k]);
    if (used < size)
        snprintf(buf + used, size - used, ", device %d)", task->device);
}

/* Takes a rank that said nothing for the timeout for stopped. */
static int lose(dispatcher *d, int k, double silent)
{
    rank_info *r = &d->ranks[k];
    char what[600] = "it held no task";
    if (r->task >= 0) {
        char task[560];
        describe(&d->plan->tasks[r->task], task, sizeof task);
        snprintf(what, sizeof what, "its task, %s, goes to another rank",
                 task);
        d->requeued[d->n_requeued++] = (size_t)r->task;
        release(d, k);
    }
    r->state = RANK_LOST;
    d->lost++;
    logf_(d, CUTUNE_LOG_WARN,
          "plan: rank %d said nothing for %.0f s (the timeout is %g s, "
          "CUTUNE_PLAN_RANK_TIMEOUT): taken for stopped; %s",
          k, silent, d->timeout, what);
    /* Eager and small: sent whether or not the rank ever reads it. */
    return cutune__mpi_send_empty(k, TAG_STOP);
}

/* Times out silent ranks, then answers waiting ranks if a task came back
 * or none is held any more. */
static int watch(dispatcher *d)
{
    int rc = MPI_SUCCESS;
    double now = cutune__plan_now();
    for (int k = 1; k < d->n_ranks && rc == MPI_SUCCESS; k++)
        if (d->ranks[k].state == RANK_TALKING && d->ranks[k].beats &&
            now - d->ranks[k].seen > d->timeout)
            rc = lose(d, k, now - d->ranks[k].seen);
    for (int k = 1; k < d->n_ranks && rc == MPI_SUCCESS; k++)
        if (d->ranks[k].state == RANK_WAITING &&
            (d->n_requeued > 0 || d->held == 0))
            rc = give(d, k);
    return rc;
}

static int open_ranks(const dispatcher *d)
{
    int n = 0;
    for (int k = 1; k < d->n_ranks; k++)
        n += d->ranks[k].state == RANK_TALKING ||
             d->ranks[k].state == RANK_WAITING;
    return n;
}

static int on_message(dispatcher *d, int from, int tag, json_t *j)
{
    if (from <= 0 || from >= d->n_ranks || d->ranks[from].state == RANK_LOST)
        return MPI_SUCCESS; /* a timed-out rank woke up: it has its STOP */
    d->ranks[from].seen = cutune__plan_now();
    switch (tag) {
    case TAG_REQUEST: release(d, from); return give(d, from);
    case TAG_CHECK: return on_check(d, from, j);
    case TAG_RESULT: return on_result(d, from, j);
    case TAG_FAIL: return on_fail(d, from, j);
    case TAG_ALIVE: return MPI_SUCCESS;
    default: return MPI_ERR_TAG;
    }
}

static int dispatch(dispatcher *d)
{
    int rc = MPI_SUCCESS;
    while (rc == MPI_SUCCESS && open_ranks(d) > 0) {
        int got, from, tag;
        json_t *j = NULL;
        /* Wakes at least every 50 ms to watch the silent ranks. */
        rc = cutune__mpi_recv(MPI_ANY_SOURCE, cutune__plan_now() + 0.05, &got,
                              &from, &tag, &j, NULL);
        pthread_mutex_lock(&d->lock);
        if (rc == MPI_SUCCESS && got)
            rc = on_message(d, from, tag, j);
        if (rc == MPI_SUCCESS)
            rc = watch(d);
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
    cutune_status st =
        cutune__plan_load_problem(task, d->backend, &problem, why, sizeof why);
    if (st == CUTUNE_OK)
        st = d->backend->device(d->backend->user, task->device, &device, why,
                                sizeof why);
    pthread_mutex_lock(&d->lock);
    int cached =
        st == CUTUNE_OK && !d->options->force &&
        cutune__plan_cached(d->cache, d->backend->objective, problem, &device);
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
    finish(d, task,
           st != CUTUNE_OK ? CUTUNE_PLAN_FAILED
           : cached        ? CUTUNE_PLAN_SKIPPED
                           : CUTUNE_PLAN_TUNED);
    pthread_mutex_unlock(&d->lock);
    cutune_problem_destroy(problem);
}

static void *local_tuner(void *arg)
{
    dispatcher *d = arg;
    for (;;) {
        size_t index;
        pthread_mutex_lock(&d->lock);
        int got = take_task(d, &index);
        /* A task another rank holds may come back to the queue. */
        int wait = !got && d->held > 0;
        pthread_mutex_unlock(&d->lock);
        if (got)
            local_task(d, &d->plan->tasks[index]);
        else if (wait)
            nanosleep(&(struct timespec){0, 20000000}, NULL);
        else
            return NULL;
    }
}

static int on_hello(dispatcher *d, int from, int tag, json_t *j)
{
    /* A rank shows its plan once, before anything else. */
    if (tag != TAG_HELLO || from <= 0 || from >= d->n_ranks ||
        d->ranks[from].hash[0])
        return MPI_ERR_TAG;
    rank_info *r = &d->ranks[from];
    if (!cutune__plan_message_hello(j, r->hash, sizeof r->hash, &r->beats))
        return MPI_ERR_OTHER;
    r->state = RANK_TALKING;
    r->seen = cutune__plan_now();
    return MPI_SUCCESS;
}

/* "1, 3 and 4" into buf: the ranks whose plan is not rank 0's. */
static int differing(const dispatcher *d, const char *own, char *buf,
                     size_t size)
{
    int n = 0, total = 0;
    for (int k = 1; k < d->n_ranks; k++)
        total += d->ranks[k].state == RANK_TALKING &&
                 strcmp(d->ranks[k].hash, own) != 0;
    size_t used = 0;
    buf[0] = '\0';
    for (int k = 1; k < d->n_ranks && used < size; k++)
        if (d->ranks[k].state == RANK_TALKING &&
            strcmp(d->ranks[k].hash, own) != 0) {
            n++;
            used += (size_t)snprintf(buf + used, size - used, "%s%d",
                                     n == 1       ? ""
                                     : n == total ? " and "
                                                  : ", ",
                                     k);
        }
    return total;
}

/* Every rank shows the plan it read (within the timeout: one that does
 * not is lost); all go on only when every plan is rank 0's. */
static cutune_status agree(dispatcher *d, int *rc)
{
    *rc = MPI_SUCCESS;
    double deadline = cutune__plan_now() + d->timeout;
    int pending = d->n_ranks - 1;
    while (*rc == MPI_SUCCESS && pending > 0) {
        int got, from, tag;
        json_t *j = NULL;
        *rc = cutune__mpi_recv(MPI_ANY_SOURCE, deadline, &got, &from, &tag, &j,
                               NULL);
        if (*rc == MPI_SUCCESS && got &&
            (*rc = on_hello(d, from, tag, j)) == MPI_SUCCESS)
            pending--;
        json_decref(j);
        if (*rc == MPI_SUCCESS && !got)
            break;
    }
    for (int k = 1; k < d->n_ranks && *rc == MPI_SUCCESS; k++)
        if (d->ranks[k].state == RANK_LOST)
            *rc = lose(d, k, d->timeout);
    char own[32], which[256];
    snprintf(own, sizeof own, "%016llx",
             (unsigned long long)cutune__plan_hash(d->plan));
    int n = differing(d, own, which, sizeof which);
    if (*rc == MPI_SUCCESS && n > 0) {
        cutune__plan_error(
            d->plan,
            "MPI: rank%s %s read another plan than rank 0 (other "
            "tasks than its %zu); give every rank the same plan file, "
            "and the T1 files it names at the same paths; nothing was "
            "tuned",
            n == 1 ? "" : "s", which, d->plan->n_tasks);
        /* Said now: once told, the other ranks end, and mpirun may end
         * this rank with them before its caller prints the message. */
        logf_(d, CUTUNE_LOG_ERROR, "%s", cutune_plan_errmsg(d->plan));
    }
    for (int k = 1; k < d->n_ranks && *rc == MPI_SUCCESS; k++)
        if (d->ranks[k].state == RANK_TALKING)
            *rc = cutune__mpi_send_json(json_pack("{s:b}", "ok", n == 0), k,
                                        TAG_VERDICT);
    return *rc == MPI_SUCCESS && n > 0 ? CUTUNE_ERR_INVALID_ARGUMENT
                                       : CUTUNE_OK;
}

static void fill_report(const dispatcher *d, cutune_plan_report *report)
{
    report->tasks = d->plan->n_tasks;
    for (size_t t = 0; t < d->plan->n_tasks; t++) {
        report->tuned += d->plan->tasks[t].state == CUTUNE_PLAN_TUNED;
        report->skipped += d->plan->tasks[t].state == CUTUNE_PLAN_SKIPPED;
        report->failed += d->plan->tasks[t].state == CUTUNE_PLAN_FAILED;
    }
    report->seconds = cutune__plan_now() - d->progress.start;
    report->ranks_lost = d->lost;
}

static cutune_status open_cache(dispatcher *d)
{
    cutune_status st = cutune_cache_open(d->options->cache_dir, &d->cache);
    if (st != CUTUNE_OK) {
        cutune__plan_error(d->plan, "tuning cache: %s",
                           d->cache ? cutune_cache_errmsg(d->cache)
                                    : cutune_status_str(st));
        /* The other ranks still ask: stop them, then report. */
        d->plan->n_tasks = 0;
    } else {
        /* Every task looks the cache up: decode it once, not per task. */
        (void)cutune_cache_preload(d->cache);
    }
    return st;
}

static cutune_status run(dispatcher *d, int tune_here,
                         cutune_plan_report *report)
{
    int rc;
    cutune_status st = agree(d, &rc);
    if (st == CUTUNE_OK && rc == MPI_SUCCESS) {
        size_t n_tasks = d->plan->n_tasks;
        st = open_cache(d);
        cutune__plan_progress_start(&d->progress, d->options,
                                    d->plan->n_tasks);
        pthread_t tuner;
        int local =
            tune_here && pthread_create(&tuner, NULL, local_tuner, d) == 0;
        rc = dispatch(d);
        if (local)
            pthread_join(tuner, NULL);
        cutune_cache_close(d->cache);
        d->plan->n_tasks = n_tasks;
        fill_report(d, report);
    }
    report->ranks_lost = d->lost;
    if (st == CUTUNE_OK && rc != MPI_SUCCESS) {
        cutune__plan_error(
            d->plan, "MPI: rank 0 lost touch with the other ranks (error %d)",
            rc);
        st = CUTUNE_ERR_IO;
    }
    return st;
}

cutune_status cutune__plan_mpi_rank0(cutune_plan *plan,
                                     const cutune_plan_backend *backend,
                                     const cutune_plan_run_options *options,
                                     int ranks, int tune_here,
                                     cutune_plan_report *report)
{
    dispatcher d;
    memset(&d, 0, sizeof d);
    d.plan = plan;
    d.backend = backend;
    d.options = options;
    d.n_ranks = ranks;
    d.timeout = options->rank_timeout_s > 0 ? options->rank_timeout_s
                                            : CUTUNE__RANK_TIMEOUT_DEFAULT;
    d.ranks = calloc((size_t)ranks, sizeof *d.ranks);
    d.requeued = calloc(plan->n_tasks ? plan->n_tasks : 1, sizeof *d.requeued);
    if (!d.ranks || !d.requeued) {
        free(d.ranks);
        free(d.requeued);
        cutune__plan_error(plan, "out of memory");
        return CUTUNE_ERR_NO_MEMORY;
    }
    for (int k = 0; k < ranks; k++) {
        d.ranks[k].state = RANK_LOST;
        d.ranks[k].task = -1;
    }
    pthread_mutex_init(&d.lock, NULL);
    cutune_status st = run(&d, tune_here, report);
    pthread_mutex_destroy(&d.lock);
    free(d.ranks);
    free(d.requeued);
    return st;
}
