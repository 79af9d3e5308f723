/* cutune plans: a JSON list of problems x problem sizes x devices worked
 * through in one call, resumable (what the cache holds exactly is not
 * tuned again unless forced), on this host or over MPI ranks. The
 * conventions of cutune.h hold. The format is in docs/plans.md.
 */
#ifndef CUTUNE_PLAN_H
#define CUTUNE_PLAN_H

#include "cutune/cutune.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#pragma GCC visibility push(default)
#endif

typedef struct cutune_plan cutune_plan;

/* What became of one task of a plan run. Stable values. */
typedef enum cutune_plan_state {
    CUTUNE_PLAN_PENDING = 0,
    CUTUNE_PLAN_TUNED = 1,   /* tuned now; its record is in the cache */
    CUTUNE_PLAN_SKIPPED = 2, /* the cache held an exact record already */
    CUTUNE_PLAN_FAILED = 3   /* see status and message */
} cutune_plan_state;

/* One problem at one size on one device: an item of the plan file times
 * its sizes times its devices. Strings are borrowed from the plan. */
typedef struct cutune_plan_task {
    size_t item;           /* index of the item in the plan file */
    const char *problem;   /* template name, or the T1 path resolved
                              against the plan file's folder */
    const long long *size; /* NULL: the problem's own size */
    size_t n_size;
    int device;              /* device ordinal */
    cutune_plan_state state; /* set by a run */
    cutune_status status;    /* of a FAILED task */
    const char *message;     /* why it failed; "" otherwise */
} cutune_plan_task;

/* Reads the plan at `path`. Items that name no "devices" get
 * `default_devices` (NULL or n_default 0: device 0). The caller owns *out
 * (set also on failure, for cutune_plan_errmsg, unless memory ran out);
 * errors name the item and the field. */
cutune_status cutune_plan_load(const char *path, const int *default_devices,
                               size_t n_default, cutune_plan **out);
/* The same from JSON text; relative T1 paths resolve against `base_dir`
 * (NULL: the current directory). */
cutune_status cutune_plan_parse(const char *json_text, const char *base_dir,
                                const int *default_devices, size_t n_default,
                                cutune_plan **out);
void cutune_plan_destroy(cutune_plan *plan);
const char *cutune_plan_errmsg(const cutune_plan *plan);
size_t cutune_plan_item_count(const cutune_plan *plan);
size_t cutune_plan_task_count(const cutune_plan *plan);
/* Borrowed from the plan; NULL past the end. */
const cutune_plan_task *cutune_plan_task_at(const cutune_plan *plan,
                                            size_t index);

/* ------------------------------------------------------------------ */
/* Backends: what tunes one task. The built-in ones drive a GPU through
 * a session or replay recorded T4 files; a program or a test may bring
 * its own by filling the function pointers. */

typedef struct cutune_plan_backend cutune_plan_backend;
struct cutune_plan_backend {
    /* Fills *device with the fingerprint of device `ordinal`, the one
     * its records are cached under. Returns a status, the reason in
     * `why`. */
    cutune_status (*device)(void *user, int ordinal, cutune_device *device,
                            char *why, size_t why_size);
    /* Tunes `problem` (the task's problem at the task's size) on
     * task->device. On success fills *record, its pointers borrowed from
     * the backend until its next call; sets *appended when the backend
     * has written the record to the cache directory itself (else the
     * caller appends it). `write_cache` 0: the backend must not write to
     * the cache, only return the record. */
    cutune_status (*tune)(void *user, const cutune_plan_task *task,
                          const cutune_problem *problem, int write_cache,
                          cutune_cache_record *record, int *appended,
                          char *why, size_t why_size);
    /* Frees a backend made by a _create function below; NULL for one a
     * caller filled in itself. */
    void (*destroy)(cutune_plan_backend *backend);
    void *user;
    /* Load problems with cutune_problem_options.space_only. */
    int space_only;
    /* cutune_problem_options.max_space_visits of every problem the plan
     * loads (CUTUNE_SPACE_LIMIT in the command); 0: the default bound. */
    unsigned long long max_space_visits;
    /* What every task is tuned for, and which cached records count as
     * tuned already (those of this objective). The session backend takes
     * it from its options; set it after creating a backend to change it.
     * A backend filled in by hand: 0, TIME, when zeroed. */
    cutune_objective objective;
};

/* Tunes on the GPUs through sessions made from `options` (copied; its
 * device is the task's, write_cache the run's). With options->devices, a
 * task whose device is one of them is tuned on all of them of its model,
 * one search shared (cutune_session_device_groups decides the models
 * when the backend is made). The caller owns *out. */
cutune_status
cutune_plan_session_backend_create(const cutune_session_options *options,
                                   cutune_plan_backend **out);

/* For tests and for judging plans without a GPU: each device ordinal N is
 * a simulated device named "replay N" that answers a task by replaying
 * the T4 file `results_pattern` (with "{problem}" replaced by the
 * problem's name) through cutune_simulate() with `strategy`, `max_evals`
 * and `seed`, and returns the best configuration found (device.simulated
 * set). The caller owns *out. */
cutune_status cutune_plan_replay_backend_create(const char *results_pattern,
                                                const char *strategy,
                                                size_t max_evals,
                                                uint64_t seed,
                                                cutune_plan_backend **out);
/* Calls backend->destroy when there is one; NULL is a no-op. */
void cutune_plan_backend_destroy(cutune_plan_backend *backend);

/* ------------------------------------------------------------------ */
/* Running a plan. */

typedef struct cutune_plan_run_options {
    const char *cache_dir; /* NULL: as cutune_cache_open */
    int force;             /* tune also what the cache holds */
    /* One progress line for the whole plan at INFO ("plan: 3/12 tasks,
     * 1 failed, ETA 40 s"); each failed task at WARN. */
    cutune_log_fn log;
    void *log_user;
    /* Over MPI: seconds a rank may go without a word to rank 0 (it sends
     * one every quarter of this while it tunes) before rank 0 takes it
     * for stopped and hands its task to another rank; also how long rank
     * 0 waits for every rank to show its plan. 0: 600. */
    double rank_timeout_s;
} cutune_plan_run_options;

void cutune_plan_run_options_init(cutune_plan_run_options *options);

typedef struct cutune_plan_report {
    size_t tasks;
    size_t tuned;
    size_t skipped;
    size_t failed;
    double seconds;
    int rank;       /* this process's MPI rank; 0 without MPI */
    int ranks;      /* 1 without MPI */
    int ranks_lost; /* rank 0: ranks timed out (rank_timeout_s) */
} cutune_plan_report;

/* Works through the plan's tasks in order with `backend`: a task whose
 * (problem, size, device) the cache holds a fresh record of at the EXACT
 * level is skipped unless options->force; any other is tuned and its
 * record appended. A record whose source hash differs from the kernel's
 * on disk is stale, as `cutune check` says, and tuned again. A task that
 * fails is marked FAILED (status, message) and the run goes on. Returns
 * CUTUNE_OK when it got through the plan, failed tasks or not (count them
 * in *report); an error, before any task, only when the cache cannot be
 * opened or written (cutune_cache_check_writable). */
cutune_status cutune_plan_run(cutune_plan *plan,
                              const cutune_plan_backend *backend,
                              const cutune_plan_run_options *options,
                              cutune_plan_report *report);

/* Nonzero when this library was built with MPI. */
int cutune_plan_mpi_available(void);
/* Nonzero when the environment shows an MPI launcher (mpirun, mpiexec,
 * srun with PMI or PMIx) started this process. */
int cutune_plan_mpi_launched(void);

/* cutune_plan_run over the ranks of MPI_COMM_WORLD: rank 0 hands the
 * tasks out one at a time to whichever rank asks, checks the cache for
 * them and appends every record a rank sends back to its cache (unless
 * that very record is there already: a rank writing to the same cache
 * directory); the other ranks tune, keeping a copy in their own cache
 * directory where the backend writes one. Initializes MPI when the caller has
 * not, and then finalizes it. With one rank, it is cutune_plan_run. Task
 * states are complete on rank 0 only. CUTUNE_ERR_UNSUPPORTED when built
 * without MPI.
 */
cutune_status cutune_plan_run_mpi(cutune_plan *plan,
                                  const cutune_plan_backend *backend,
                                  const cutune_plan_run_options *options,
                                  cutune_plan_report *report);

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif

#ifdef __cplusplus
}
#endif

#endif
