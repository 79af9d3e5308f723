/* A plan over MPI ranks, run under `mpirun -np 3` (tests/plan/
 * CMakeLists.txt), with the replay backend:
 *
 * - ranks that read different plans: every rank returns an error, only
 *   rank 0's message (naming rank 2) is non-empty, nothing is tuned;
 * - a rank that stops (rank 2 stops itself with SIGSTOP in its first
 *   tune): rank 0 times it out after rank_timeout_s, its task goes to
 *   another rank and the plan ends with every task tuned; woken up
 *   afterwards, rank 2 ends quietly without sending what it tuned.
 *
 * Each rank prints its own checks; ctest reads mpirun's exit code. */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "../check.h"
#include "../tmpdir.h"
#include "cutune/plan.h"

static int rank;
static char fixtures[4096];

typedef struct wrapped {
    cutune_plan_backend *inner;
    int stop_once; /* raise SIGSTOP in the first tune */
    size_t tunes;
} wrapped;

static cutune_status wrapped_device(void *user, int ordinal,
                                    cutune_device *device, char *why,
                                    size_t why_size)
{
    wrapped *w = user;
    return w->inner->device(w->inner->user, ordinal, device, why, why_size);
}

static cutune_status wrapped_tune(void *user, const cutune_plan_task *task,
                                  const cutune_problem *problem,
                                  int write_cache, cutune_cache_record *record,
                                  int *appended, char *why, size_t why_size)
{
    wrapped *w = user;
    w->tunes++;
    if (w->stop_once) {
        w->stop_once = 0;
        raise(SIGSTOP);
    }
    /* Long enough that every rank gets a task. */
    nanosleep(&(struct timespec){0, 100000000}, NULL);
    return w->inner->tune(w->inner->user, task, problem, write_cache, record,
                          appended, why, why_size);
}

static char warnings[4096];

static void on_log(void *user, cutune_log_level level, const char *message)
{
    (void)user;
    size_t used = strlen(warnings);
    if (level <= CUTUNE_LOG_WARN && used < sizeof warnings - 1)
        snprintf(warnings + used, sizeof warnings - used, "%s\n", message);
}

static cutune_plan *plan_of(int sizes)
{
    char text[8192];
    int n = snprintf(text, sizeof text,
                     "{\"items\": [{\"problem\": \"%s/sim.json\", \"sizes\": "
                     "[",
                     fixtures);
    for (int s = 0; s < sizes; s++)
        n += snprintf(text + n, sizeof text - (size_t)n, "%s[%d]",
                      s ? ", " : "", 1024 << s);
    snprintf(text + n, sizeof text - (size_t)n, "], \"devices\": [0, 1]}]}");
    cutune_plan *plan = NULL;
    CHECK_INT(cutune_plan_parse(text, NULL, NULL, 0, &plan), CUTUNE_OK);
    return plan;
}

static cutune_status run(cutune_plan *plan, wrapped *w, const char *dir,
                         cutune_plan_report *r)
{
    cutune_plan_backend backend;
    memset(&backend, 0, sizeof backend);
    backend.device = wrapped_device;
    backend.tune = wrapped_tune;
    backend.user = w;
    backend.space_only = 1;
    cutune_plan_run_options o;
    cutune_plan_run_options_init(&o);
    o.cache_dir = dir;
    o.rank_timeout_s = 1.0;
    o.log = on_log;
    return cutune_plan_run_mpi(plan, &backend, &o, r);
}

static void test_different_plans(wrapped *w, const char *dir)
{
    cutune_plan *plan = plan_of(rank == 2 ? 4 : 3);
    cutune_plan_report r;
    CHECK_INT(run(plan, w, dir, &r), CUTUNE_ERR_INVALID_ARGUMENT);
    if (rank == 0)
        CHECK_CONTAINS(cutune_plan_errmsg(plan),
                       "rank 2 read another plan than rank 0");
    else
        CHECK_STR(cutune_plan_errmsg(plan), "");
    CHECK_INT(w->tunes, 0);
    cutune_plan_destroy(plan);
}

static void test_stopped_rank(wrapped *w, const char *dir, pid_t *pids)
{
    cutune_plan *plan = plan_of(4);
    cutune_plan_report r;
    w->stop_once = rank == 2;
    double start = MPI_Wtime();
    CHECK_INT(run(plan, w, dir, &r), CUTUNE_OK);
    if (rank == 0) {
        /* The plan ended with rank 2 still stopped. */
        CHECK(r.tasks == 8 && r.tuned == 8 && r.failed == 0);
        CHECK_INT(r.ranks_lost, 1);
        CHECK_CONTAINS(warnings, "rank 2 said nothing for");
        CHECK_CONTAINS(warnings, "goes to another rank");
        CHECK(MPI_Wtime() - start < 30);
        kill(pids[2], SIGCONT);
    }
    if (rank == 2)
        CHECK(r.tuned == 0 && w->tunes == 1);
    cutune_plan_destroy(plan);
}

int main(int argc, char **argv)
{
    int threads;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &threads);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int ranks;
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    const char *src = getenv("CUTUNE_SOURCE_DIR");
    snprintf(fixtures, sizeof fixtures, "%s/tests/cli/fixtures",
             src ? src : ".");
    if (ranks != 3 || threads < MPI_THREAD_FUNNELED) {
        printf("rank %d: needs 3 ranks and MPI_THREAD_FUNNELED\n", rank);
        MPI_Finalize();
        return 1;
    }
    char dir[64];
    snprintf(dir, sizeof dir, "/tmp/cutune-test-plan-mpi-%d-XXXXXX", rank);
    CHECK(mkdtemp(dir) != NULL);
    pid_t pid = getpid(), pids[3];
    MPI_Gather(&pid, sizeof pid, MPI_BYTE, pids, sizeof pid, MPI_BYTE, 0,
               MPI_COMM_WORLD);
    char pattern[4200];
    snprintf(pattern, sizeof pattern, "%s/{problem}_T4.json", fixtures);
    wrapped w = {NULL, 0, 0};
    CHECK_INT(cutune_plan_replay_backend_create(pattern, NULL, 4, 1, &w.inner),
              CUTUNE_OK);
    test_different_plans(&w, dir);
    MPI_Barrier(MPI_COMM_WORLD);
    test_stopped_rank(&w, dir, pids);
    MPI_Barrier(MPI_COMM_WORLD);
    cutune_plan_backend_destroy(w.inner);
    remove_tree(dir);
    int failed = check_finish();
    printf("rank %d: %s\n", rank, failed ? "FAILED" : "passed");
    MPI_Finalize();
    return failed;
}
