/* A plan over MPI ranks (built only when CMake finds MPI): rank 0 hands
 * out tasks one at a time to whichever rank asks, answers whether the
 * cache holds a task already, and appends every record a rank sends back
 * to its own cache, so no file system is shared. A rank whose task fails
 * says so and asks for the next. Rank 0 tunes too, in a thread of its
 * own beside the dispatcher (plan_mpi_dispatch.c), so that `mpirun -n N`
 * tunes on N ranks (one per GPU) rather than N - 1.
 *
 * Before any task, every rank shows rank 0 a hash of the tasks it read;
 * ranks that read another plan would tune tasks rank 0 never counted, so
 * the run stops there. A rank tunes in a thread of its own while its main
 * thread (the only one that calls MPI) tells rank 0 it is alive, so that
 * rank 0 can tell a long tune from a stopped rank. docs/plans.md draws
 * the messages. */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "plan_mpi.h"

int cutune_plan_mpi_available(void)
{
    return 1;
}

int cutune__mpi_send_json(json_t *j, int dest, int tag)
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

int cutune__mpi_send_empty(int dest, int tag)
{
    return MPI_Send(NULL, 0, MPI_CHAR, dest, tag, MPI_COMM_WORLD);
}

static void nap(long ns)
{
    nanosleep(&(struct timespec){0, ns}, NULL);
}

int cutune__mpi_recv(int source, double deadline, int *got, int *from,
                     int *tag, json_t **json, long long *number)
{
    MPI_Status s;
    int count, flag = 0, rc;
    *got = 0;
    *json = NULL;
    /* Polled rather than MPI_Probe: Open MPI's blocking calls spin a core,
     * which on rank 0 would be taken from its own tune's compile pool. */
    while ((rc = MPI_Iprobe(source, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &s)) ==
               MPI_SUCCESS &&
           !flag) {
        if (deadline > 0 && cutune__plan_now() >= deadline)
            return MPI_SUCCESS;
        nap(1000000);
    }
    if (rc != MPI_SUCCESS)
        return rc;
    *got = 1;
    *from = s.MPI_SOURCE;
    *tag = s.MPI_TAG;
    if (s.MPI_TAG == TAG_TASK) {
        long long ignored;
        return MPI_Recv(number ? number : &ignored, 1, MPI_LONG_LONG,
                        s.MPI_SOURCE, s.MPI_TAG, MPI_COMM_WORLD,
                        MPI_STATUS_IGNORE);
    }
    MPI_Get_count(&s, MPI_CHAR, &count);
    char *text = malloc(count > 0 ? (size_t)count : 1);
    if (!text)
        return MPI_ERR_NO_MEM;
    rc = MPI_Recv(text, count, MPI_CHAR, s.MPI_SOURCE, s.MPI_TAG,
                  MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (rc == MPI_SUCCESS && count > 0)
        *json = json_loadb(text, (size_t)count - (text[count - 1] == '\0'), 0,
                           NULL);
    free(text);
    return rc;
}

/* ---- the ranks that tune --------------------------------------------- */

typedef struct tuning_rank {
    cutune_plan *plan;
    const cutune_plan_backend *backend;
    cutune_plan_report *report;
    double beat;   /* seconds between ALIVE messages; 0: none sent */
    int dismissed; /* rank 0 sent STOP while this rank worked */
} tuning_rank;

/* One step of a task, run in a thread while the main thread beats. */
typedef struct step {
    void (*fn)(struct step *);
    pthread_mutex_t lock;
    int done;
    /* what the steps work on */
    tuning_rank *rank;
    cutune_plan_task *task;
    cutune_problem *problem;
    cutune_device device;
    cutune_cache_record rec;
    cutune_status st;
    char why[1024];
} step;

static void *step_thread(void *arg)
{
    step *s = arg;
    s->fn(s);
    pthread_mutex_lock(&s->lock);
    s->done = 1;
    pthread_mutex_unlock(&s->lock);
    return NULL;
}

static int step_done(step *s)
{
    pthread_mutex_lock(&s->lock);
    int done = s->done;
    pthread_mutex_unlock(&s->lock);
    return done;
}

/* Runs s->fn; meanwhile tells rank 0 every r->beat seconds that this rank
 * lives, and notes a STOP (rank 0 timed this rank out: it was stopped
 * longer than the timeout, and its task went to another rank). */
static int run_step(tuning_rank *r, step *s, void (*fn)(step *))
{
    pthread_t thread;
    s->fn = fn;
    s->done = 0;
    if (r->beat <= 0 || pthread_create(&thread, NULL, step_thread, s)) {
        fn(s);
        return MPI_SUCCESS;
    }
    double last = cutune__plan_now();
    int rc = MPI_SUCCESS;
    while (!step_done(s)) {
        int flag = 0;
        if (rc == MPI_SUCCESS && !r->dismissed &&
            (rc = MPI_Iprobe(0, TAG_STOP, MPI_COMM_WORLD, &flag,
                             MPI_STATUS_IGNORE)) == MPI_SUCCESS &&
            flag) {
            rc = MPI_Recv(NULL, 0, MPI_CHAR, 0, TAG_STOP, MPI_COMM_WORLD,
                          MPI_STATUS_IGNORE);
            r->dismissed = 1;
        }
        /* Checked for a STOP first: a rank that wakes up from a stop
         * says nothing more to a rank 0 that is no longer listening. */
        if (rc == MPI_SUCCESS && !r->dismissed &&
            cutune__plan_now() - last >= r->beat) {
            rc = cutune__mpi_send_empty(0, TAG_ALIVE);
            last = cutune__plan_now();
        }
        nap(5000000);
    }
    pthread_join(thread, NULL);
    return rc;
}

static void prepare(step *s)
{
    const cutune_plan_backend *b = s->rank->backend;
    s->st = cutune__plan_load_problem(s->task, b, &s->problem, s->why,
                                      sizeof s->why);
    if (s->st == CUTUNE_OK)
        s->st = b->device(b->user, s->task->device, &s->device, s->why,
                          sizeof s->why);
}

static void tune(step *s)
{
    const cutune_plan_backend *b = s->rank->backend;
    int appended = 0;
    /* The rank's own cache keeps a copy (and the session's record, read
     * back, carries what its result does not); rank 0 does not write a
     * record twice where the two caches are one. */
    s->st = b->tune(b->user, s->task, s->problem, 1, &s->rec, &appended,
                    s->why, sizeof s->why);
}

static int send_fail(size_t index, cutune_status st, const char *why)
{
    return cutune__mpi_send_json(json_pack("{s:I, s:i, s:s}", "task",
                                           (json_int_t)index, "status",
                                           (int)st, "message", why),
                                 0, TAG_FAIL);
}

/* Asks rank 0 whether the task is cached: 1 yes, 0 no, -1 dismissed. */
static int ask_cached(step *s, size_t index, int *rc)
{
    *rc = cutune__mpi_send_json(
        json_pack("{s:I, s:o}", "task", (json_int_t)index, "device",
                  cutune__plan_device_encode(&s->device)),
        0, TAG_CHECK);
    int got = 0, from, tag = 0;
    json_t *reply = NULL;
    if (*rc == MPI_SUCCESS)
        *rc = cutune__mpi_recv(0, 0, &got, &from, &tag, &reply, NULL);
    json_decref(reply);
    return tag == TAG_STOP ? -1 : tag == TAG_SKIP;
}

/* One task on a tuning rank; returns an MPI error code. */
static int tune_task(tuning_rank *r, size_t index)
{
    step *s = calloc(1, sizeof *s);
    if (!s)
        return MPI_ERR_NO_MEM;
    pthread_mutex_init(&s->lock, NULL);
    s->rank = r;
    s->task = &r->plan->tasks[index];
    int rc = run_step(r, s, prepare), cached = 0;
    if (rc == MPI_SUCCESS && !r->dismissed && s->st != CUTUNE_OK) {
        r->report->failed++;
        rc = send_fail(index, s->st, s->why);
    } else if (rc == MPI_SUCCESS && !r->dismissed) {
        cached = ask_cached(s, index, &rc);
        r->dismissed |= cached < 0;
        r->report->skipped += rc == MPI_SUCCESS && cached > 0;
    }
    if (rc == MPI_SUCCESS && !r->dismissed && s->st == CUTUNE_OK && !cached &&
        (rc = run_step(r, s, tune)) == MPI_SUCCESS && !r->dismissed) {
        /* The record borrows the problem's name and hash. */
        json_t *encoded =
            s->st == CUTUNE_OK ? cutune__plan_record_encode(&s->rec) : NULL;
        if (s->st == CUTUNE_OK && encoded) {
            r->report->tuned++;
            rc = cutune__mpi_send_json(json_pack("{s:I, s:o}", "task",
                                                 (json_int_t)index, "record",
                                                 encoded),
                                       0, TAG_RESULT);
        } else {
            r->report->failed++;
            rc =
                send_fail(index, s->st != CUTUNE_OK ? s->st : CUTUNE_ERR_PARSE,
                          s->st != CUTUNE_OK
                              ? s->why
                              : "the record could not be encoded as JSON");
        }
    }
    cutune_problem_destroy(s->problem);
    pthread_mutex_destroy(&s->lock);
    free(s);
    return rc;
}

/* Shows rank 0 the plan this rank read; 1 when rank 0 says go on. */
static int hello(tuning_rank *r, int *rc)
{
    char hash[32];
    snprintf(hash, sizeof hash, "%016llx",
             (unsigned long long)cutune__plan_hash(r->plan));
    *rc = cutune__mpi_send_json(
        json_pack("{s:s, s:I, s:b}", "hash", hash, "tasks",
                  (json_int_t)r->plan->n_tasks, "beats", r->beat > 0),
        0, TAG_HELLO);
    int got = 0, from, tag = 0;
    json_t *verdict = NULL;
    if (*rc == MPI_SUCCESS)
        *rc = cutune__mpi_recv(0, 0, &got, &from, &tag, &verdict, NULL);
    int ok =
        tag == TAG_VERDICT && json_is_true(json_object_get(verdict, "ok"));
    json_decref(verdict);
    if (*rc == MPI_SUCCESS && tag == TAG_STOP)
        r->dismissed = 1;
    else if (*rc == MPI_SUCCESS && !ok)
        /* Rank 0 names the ranks; one message is enough. */
        cutune__plan_error(r->plan, NULL);
    return ok;
}

/* Returns an MPI error code; CUTUNE_ERR_INVALID_ARGUMENT in *st when the
 * ranks read different plans. */
static int tuning_rank_run(tuning_rank *r, cutune_status *st)
{
    int rc;
    if (!hello(r, &rc)) {
        if (rc == MPI_SUCCESS && !r->dismissed)
            *st = CUTUNE_ERR_INVALID_ARGUMENT;
        return rc;
    }
    while (!r->dismissed) {
        int got, from, tag;
        long long index = -1;
        json_t *j = NULL;
        rc = cutune__mpi_send_empty(0, TAG_REQUEST);
        if (rc == MPI_SUCCESS)
            rc = cutune__mpi_recv(0, 0, &got, &from, &tag, &j, &index);
        json_decref(j);
        if (rc != MPI_SUCCESS || tag == TAG_STOP)
            return rc;
        if (tag != TAG_TASK || index < 0 || (size_t)index >= r->plan->n_tasks)
            return MPI_ERR_TAG;
        r->report->tasks++;
        if ((rc = tune_task(r, (size_t)index)))
            return rc;
    }
    return MPI_SUCCESS;
}

static double rank_timeout(const cutune_plan_run_options *o)
{
    return o->rank_timeout_s > 0 ? o->rank_timeout_s
                                 : CUTUNE__RANK_TIMEOUT_DEFAULT;
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
    /* Only the main thread calls MPI (the tuning threads do not):
     * FUNNELED is all that is needed. */
    if (!initialized && MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED,
                                        &threads) != MPI_SUCCESS) {
        cutune__plan_error(plan, "MPI_Init failed");
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
    tuning_rank r = {plan, backend, report, 0, 0};
    /* Without thread support from MPI, a rank tunes in its main thread
     * and says nothing while it does: rank 0 never times it out. */
    if (threads >= MPI_THREAD_FUNNELED)
        r.beat = rank_timeout(options) / 4;
    if (ranks == 1) {
        st = cutune_plan_run(plan, backend, options, report);
    } else if (rank == 0) {
        st = cutune__plan_mpi_rank0(plan, backend, options, ranks,
                                    threads >= MPI_THREAD_FUNNELED, report);
    } else if (tuning_rank_run(&r, &st) != MPI_SUCCESS) {
        cutune__plan_error(plan, "MPI: rank %d lost touch with rank 0", rank);
        st = CUTUNE_ERR_IO;
    }
    if (rank != 0)
        report->seconds = cutune__plan_now() - start;
    report->rank = rank;
    report->ranks = ranks;
    /* MPI_Finalize waits for every rank, a stopped one too: rank 0 ends
     * without it, and mpirun then ends the job, stopped ranks included. */
    if (!initialized && report->ranks_lost == 0)
        MPI_Finalize();
    return st;
}
