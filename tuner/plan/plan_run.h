/* Internals the plan files share: the plan handle, one task's steps and
 * the record's JSON form that travels between MPI ranks. */
#ifndef CUTUNE_PLAN_RUN_H
#define CUTUNE_PLAN_RUN_H

#include <jansson.h>

#include "cutune/plan.h"

struct cutune_plan {
    char *errmsg; /* NULL: none (cutune__plan_error) */
    cutune_plan_task *tasks;
    size_t n_tasks;
    size_t n_items;
    char **items;     /* the resolved problem of each item */
    long long *sizes; /* every task's size, back to back */
};

/* The plan's message, set as every tuner handle's is (cutune__vfail);
 * with a NULL fmt, cleared. */
void cutune__plan_error(cutune_plan *plan, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Sets task->state FAILED with `status` and a copy of `message`. */
void cutune__plan_fail(cutune_plan_task *task, cutune_status status,
                       const char *message);

/* Whether `cache` holds a record of the task's problem at its size
 * (the problem's own when the task names none) on `device` at the EXACT
 * level, tuned for `objective`: 1 yes, 0 no. */
int cutune__plan_cached(cutune_cache *cache, cutune_objective objective,
                        const cutune_problem *problem,
                        const cutune_device *device);

/* Loads the task's problem for `backend`. On failure returns the status
 * with the reason in `why`; *problem is NULL then. */
cutune_status cutune__plan_load_problem(const cutune_plan_task *task,
                                        const cutune_plan_backend *backend,
                                        cutune_problem **problem, char *why,
                                        size_t why_size);

/* The progress line and failure warnings of a run. */
typedef struct cutune__plan_progress {
    const cutune_plan_run_options *options;
    size_t total, done, failed;
    double start;
} cutune__plan_progress;

void cutune__plan_progress_start(cutune__plan_progress *pr,
                                 const cutune_plan_run_options *options,
                                 size_t total);
/* Counts one finished task (and a failed one), logs the failure, then the
 * progress line. */
void cutune__plan_progress_task(cutune__plan_progress *pr,
                                const cutune_plan_task *task);
double cutune__plan_now(void);

/* A cutune_cache_record as a JSON object and back. The decoded record's
 * strings live in `holder` (a JSON value the caller releases after using
 * the record); its arrays are malloc'ed in *config, *baseline, *size,
 * which the caller frees. */
json_t *cutune__plan_record_encode(const cutune_cache_record *record);
int cutune__plan_record_decode(json_t *object, cutune_cache_record *record,
                               cutune_param_value **config,
                               cutune_param_value **baseline,
                               long long **size);
json_t *cutune__plan_device_encode(const cutune_device *device);
int cutune__plan_device_decode(json_t *object, cutune_device *device);

/* The fields of the other messages between MPI ranks, checked: each
 * returns 1 when `object` has them whole and in range, else 0. "task":
 * an index below n_tasks. HELLO's "hash" (a string that fits hash_size)
 * and "beats" (a boolean). FAIL's "status" (a failure: 1 to 255) and
 * "message" (a string, borrowed from `object`). */
int cutune__plan_message_task(json_t *object, size_t n_tasks, size_t *task);
int cutune__plan_message_hello(json_t *object, char *hash, size_t hash_size,
                               int *beats);
int cutune__plan_message_fail(json_t *object, cutune_status *status,
                              const char **message);

/* The plan a rank read, as its tasks (problem, size, device, item): equal
 * on two ranks when they will tune the same tasks. */
uint64_t cutune__plan_hash(const cutune_plan *plan);

#endif
