/* Working through a plan on this host: each task skipped when the cache
 * holds it exactly, else tuned by the backend and its record appended;
 * one progress line for the whole plan. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "plan_run.h"

void cutune_plan_run_options_init(cutune_plan_run_options *options)
{
    if (options)
        memset(options, 0, sizeof *options);
}

double cutune__plan_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void logf_(const cutune_plan_run_options *o, cutune_log_level level,
                  const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void logf_(const cutune_plan_run_options *o, cutune_log_level level,
                  const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    if (!o || !o->log)
        return;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    o->log(o->log_user, level, buf);
}

void cutune__plan_progress_start(cutune__plan_progress *pr,
                                 const cutune_plan_run_options *options,
                                 size_t total)
{
    memset(pr, 0, sizeof *pr);
    pr->options = options;
    pr->total = total;
    pr->start = cutune__plan_now();
}

static void format_duration(double s, char *buf, size_t size)
{
    if (s < 60)
        snprintf(buf, size, "%.0f s", s);
    else if (s < 3600)
        snprintf(buf, size, "%.0f min %02.0f s", floor(s / 60), fmod(s, 60));
    else
        snprintf(buf, size, "%.0f h %02.0f min", floor(s / 3600),
                 fmod(floor(s / 60), 60));
}

void cutune__plan_progress_task(cutune__plan_progress *pr,
                                const cutune_plan_task *task)
{
    pr->done++;
    if (task->state == CUTUNE_PLAN_FAILED) {
        pr->failed++;
        char size[96] = "";
        for (size_t d = 0, used = 0; d < task->n_size && used < 80; d++)
            used += (size_t)snprintf(size + used, sizeof size - used, "%s%lld",
                                     d ? "x" : " at size ", task->size[d]);
        logf_(pr->options, CUTUNE_LOG_WARN,
              "plan: item %zu (%s%s, device %d) failed: %s", task->item,
              task->problem, size, task->device, task->message);
    }
    char eta[48] = "";
    double spent = cutune__plan_now() - pr->start;
    if (pr->done < pr->total) {
        char d[32];
        format_duration(spent / (double)pr->done *
                            (double)(pr->total - pr->done),
                        d, sizeof d);
        snprintf(eta, sizeof eta, ", ETA %s", d);
    }
    logf_(pr->options, CUTUNE_LOG_INFO, "plan: %zu/%zu tasks, %zu failed%s",
          pr->done, pr->total, pr->failed, eta);
}

cutune_status cutune__plan_load_problem(const cutune_plan_task *task,
                                        const cutune_plan_backend *backend,
                                        cutune_problem **problem, char *why,
                                        size_t why_size)
{
    cutune_problem_options po;
    cutune_problem_options_init(&po);
    po.problem_size = task->size;
    po.n_problem_size = task->n_size;
    po.space_only = backend->space_only;
    po.max_space_visits = backend->max_space_visits;
    cutune_status st = cutune_problem_load(task->problem, &po, problem);
    if (st != CUTUNE_OK) {
        snprintf(why, why_size, "%s", cutune_problem_errmsg(*problem));
        cutune_problem_destroy(*problem);
        *problem = NULL;
    }
    return st;
}

int cutune__plan_cached(cutune_cache *cache, cutune_objective objective,
                        const cutune_problem *problem,
                        const cutune_device *device)
{
    long long dims[8];
    cutune_cache_query q;
    memset(&q, 0, sizeof q);
    q.problem_name = cutune_problem_name(problem);
    q.n_problem_size = cutune_problem_size_dims(problem);
    if (q.n_problem_size > 8)
        return 0;
    for (size_t d = 0; d < q.n_problem_size; d++)
        dims[d] = cutune_problem_size(problem, d);
    q.problem_size = dims;
    q.device_name = device->name;
    q.device_uuid = device->uuid;
    q.objective = objective;
    /* A record that no longer fits the problem (its space changed) is
     * not an answer: tune again. */
    q.accept = cutune_problem_accepts_record;
    q.accept_user = (void *)problem;
    const cutune_cache_record *rec = NULL;
    cutune_match match = CUTUNE_MATCH_NONE;
    if (cutune_cache_lookup(cache, &q, &rec, &match) != CUTUNE_OK ||
        match != CUTUNE_MATCH_EXACT)
        return 0;
    /* Stale or not comparable, as `cutune check` says: the kernel's source
     * changed, or the record was simulated without it. A problem loaded
     * for its space alone (the replay backend) has no source to tell. */
    const char *hash = cutune_problem_source_hash(problem);
    return !hash[0] || strcmp(rec->source_hash, hash) == 0;
}

/* One task on this host: check, tune, append. */
static void run_task(cutune_plan_task *task,
                     const cutune_plan_backend *backend,
                     const cutune_plan_run_options *o, cutune_cache *cache)
{
    char why[1024] = "";
    cutune_problem *problem = NULL;
    cutune_device device;
    memset(&device, 0, sizeof device);
    cutune_status st =
        cutune__plan_load_problem(task, backend, &problem, why, sizeof why);
    if (st == CUTUNE_OK)
        st = backend->device(backend->user, task->device, &device, why,
                             sizeof why);
    if (st == CUTUNE_OK && !o->force &&
        cutune__plan_cached(cache, backend->objective, problem, &device)) {
        task->state = CUTUNE_PLAN_SKIPPED;
        cutune_problem_destroy(problem);
        return;
    }
    cutune_cache_record rec;
    int appended = 0;
    if (st == CUTUNE_OK)
        st = backend->tune(backend->user, task, problem, 1, &rec, &appended,
                           why, sizeof why);
    if (st == CUTUNE_OK && !appended &&
        (st = cutune_cache_append(cache, &rec)) != CUTUNE_OK)
        snprintf(why, sizeof why, "tuning cache: %s",
                 cutune_cache_errmsg(cache));
    if (st == CUTUNE_OK)
        task->state = CUTUNE_PLAN_TUNED;
    else
        cutune__plan_fail(task, st, why);
    cutune_problem_destroy(problem);
}

cutune_status cutune_plan_run(cutune_plan *plan,
                              const cutune_plan_backend *backend,
                              const cutune_plan_run_options *options,
                              cutune_plan_report *report)
{
    cutune_plan_run_options defaults;
    if (!plan || !backend || !backend->device || !backend->tune)
        return CUTUNE_ERR_INVALID_ARGUMENT;
    if (!options) {
        cutune_plan_run_options_init(&defaults);
        options = &defaults;
    }
    cutune_cache *cache = NULL;
    cutune_status st = cutune_cache_open(options->cache_dir, &cache);
    /* Every task would be tuned and then lost. */
    if (st == CUTUNE_OK)
        st = cutune_cache_check_writable(cache);
    if (st != CUTUNE_OK) {
        cutune__plan_error(plan, "tuning cache: %s",
                           cache ? cutune_cache_errmsg(cache)
                                 : cutune_status_str(st));
        cutune_cache_close(cache);
        return st;
    }
    /* Every task looks the cache up: decode it once, not once a task. A
     * cache that cannot be read whole is read again at each lookup. */
    (void)cutune_cache_preload(cache);
    cutune__plan_progress pr;
    cutune__plan_progress_start(&pr, options, plan->n_tasks);
    for (size_t t = 0; t < plan->n_tasks; t++) {
        run_task(&plan->tasks[t], backend, options, cache);
        cutune__plan_progress_task(&pr, &plan->tasks[t]);
    }
    cutune_cache_close(cache);
    if (report) {
        memset(report, 0, sizeof *report);
        report->tasks = plan->n_tasks;
        for (size_t t = 0; t < plan->n_tasks; t++) {
            report->tuned += plan->tasks[t].state == CUTUNE_PLAN_TUNED;
            report->skipped += plan->tasks[t].state == CUTUNE_PLAN_SKIPPED;
            report->failed += plan->tasks[t].state == CUTUNE_PLAN_FAILED;
        }
        report->seconds = cutune__plan_now() - pr.start;
        report->ranks = 1;
    }
    return CUTUNE_OK;
}

int cutune_plan_mpi_launched(void)
{
    static const char *const vars[] = {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK",
                                       "PMI_RANK", "PMI_SIZE",
                                       "MPI_LOCALNRANKS"};
    for (size_t i = 0; i < sizeof vars / sizeof *vars; i++)
        if (getenv(vars[i]))
            return 1;
    return 0;
}

#ifndef CUTUNE_HAVE_MPI
int cutune_plan_mpi_available(void)
{
    return 0;
}

cutune_status cutune_plan_run_mpi(cutune_plan *plan,
                                  const cutune_plan_backend *backend,
                                  const cutune_plan_run_options *options,
                                  cutune_plan_report *report)
{
    (void)backend;
    (void)options;
    (void)report;
    if (plan)
        cutune__plan_error(
            plan, "this cutune was built without MPI (CMake found none, or "
                  "CUTUNE_MPI=OFF)");
    return CUTUNE_ERR_UNSUPPORTED;
}
#endif
