/* cutune tune --plan: work through a tuning plan, on this host or, under
 * mpirun/srun, over MPI ranks (docs/plans.md). */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cutune/plan.h"

static const char usage[] =
    "usage: cutune tune --plan PLAN [options]\n"
    "\n"
    "Tunes every problem x size x device of the JSON plan PLAN (see\n"
    "docs/plans.md) and appends each winner to the tuning cache. What the\n"
    "cache holds for the same device and size is not tuned again. Under\n"
    "mpirun or srun, rank 0 hands the tasks out to the other ranks and\n"
    "keeps the one cache.\n"
    "\n"
    "options:\n"
    "  --force             tune also what the cache holds\n"
    "  --device N          device of the items that name no \"devices\"\n"
    "                      (default 0)\n"
    "  --devices all|N,... instead of --device: the items that name no\n"
    "                      \"devices\" are tuned on these, one search shared\n"
    "                      by the devices of one model, a task per model\n"
    "  --strategy NAME     search strategy (see cutune tune --help)\n"
    "  --budget-evals N    evaluate at most N configurations per task\n"
    "  --budget-fraction X at most a share X of each space\n"
    "  --budget-seconds S  at most S seconds per task\n"
    "  --seed N            seed of randomized strategies (default 1)\n"
    "  --objective NAME    time (default), energy or edp: what each task\n"
    "                      minimises; only records tuned for it count as\n"
    "                      cached (see cutune tune --help)\n"
    "  --cache-dir DIR     tuning cache\n"
    "  --threads N         NVRTC compile threads\n"
    "  --quiet             no progress line\n"
    "  --verbose           the sessions' progress lines too\n"
    "\n"
    "For tests without a GPU, CUTUNE_PLAN_BACKEND=replay replays the T4\n"
    "file CUTUNE_PLAN_REPLAY (\"{problem}\" stands for the problem's name)\n"
    "on simulated devices \"replay N\"; CUTUNE_DEVICE_BACKEND=replay:FILES\n"
    "makes the sessions measure on replayed devices (docs/devices.md).\n";

typedef struct plan_args {
    const char *plan, *strategy, *cache_dir, *devices, *objective;
    long long device, budget, seed, threads;
    double seconds, fraction;
    int force, quiet, verbose;
} plan_args;

/* The sessions' own progress would fight the plan's line: only their
 * warnings pass, unless --verbose. */
static void on_session_log(void *user, cutune_log_level level, const char *msg)
{
    cli_progress *pr = user;
    if (level <= CUTUNE_LOG_WARN || pr->verbose)
        cli_on_log(user, level, msg);
}

/* The session options every task starts from. 0, or an exit code. */
static int session_options(const plan_args *a, cli_progress *pr,
                           cutune_session_options *o)
{
    cutune_session_options_init(o);
    o->strategy = a->strategy;
    o->max_evals = (size_t)a->budget;
    o->max_seconds = a->seconds;
    o->max_fraction = a->fraction;
    o->seed = (uint64_t)a->seed;
    o->cache_dir = a->cache_dir;
    o->compile_threads = (int)a->threads;
    o->log = on_session_log;
    o->log_user = pr;
    return cli_replay_env(o);
}

/* --devices: the tasks of items without "devices" go to the first device
 * of each model (*leaders, *n_leaders), and the session backend tunes
 * each on all the devices of its model. 0, or an exit code. */
static int device_set(const plan_args *a, cutune_session_options *o,
                      cli_device_groups_t *g, int *leaders, size_t *n_leaders)
{
    *n_leaders = 0;
    if (!a->devices) {
        leaders[(*n_leaders)++] = (int)a->device;
        return 0;
    }
    cli_devices d;
    int rc = cli_parse_devices(a->devices, &d);
    if (rc || (rc = cli_device_groups(o, &d, g)))
        return rc;
    for (size_t k = 0; k < g->n_groups; k++) {
        int members[CLI_MAX_DEVICES];
        cli_group_members(g, k, members);
        leaders[(*n_leaders)++] = members[0];
    }
    o->devices = g->ordinal;
    o->n_devices = g->n;
    return 0;
}

static cutune_status make_backend(const plan_args *a,
                                  const cutune_session_options *o,
                                  cutune_plan_backend **backend)
{
    const char *kind = getenv("CUTUNE_PLAN_BACKEND");
    if (kind && strcmp(kind, "replay") == 0) {
        const char *pattern = getenv("CUTUNE_PLAN_REPLAY");
        if (!pattern || !pattern[0]) {
            fputs("cutune: CUTUNE_PLAN_BACKEND=replay needs "
                  "CUTUNE_PLAN_REPLAY (a T4 file)\n",
                  stderr);
            return CUTUNE_ERR_INVALID_ARGUMENT;
        }
        return cutune_plan_replay_backend_create(pattern, a->strategy,
                                                 (size_t)a->budget,
                                                 (uint64_t)a->seed, backend);
    }
    if (kind && kind[0] && strcmp(kind, "session") != 0) {
        fprintf(stderr,
                "cutune: CUTUNE_PLAN_BACKEND: '%s' is not session "
                "or replay\n",
                kind);
        return CUTUNE_ERR_INVALID_ARGUMENT;
    }
    return cutune_plan_session_backend_create(o, backend);
}

/* What the MPI launcher tells each process (Open MPI, PMIx, PMI). */
static int rank_zero(void)
{
    static const char *const vars[] = {"OMPI_COMM_WORLD_RANK", "PMIX_RANK",
                                       "PMI_RANK"};
    for (size_t i = 0; i < sizeof vars / sizeof *vars; i++)
        if (getenv(vars[i]))
            return strcmp(getenv(vars[i]), "0") == 0;
    return 1;
}

/* The run's log, keeping its last error: an error the run logged (over
 * MPI, before the other ranks end) is not printed again. */
typedef struct plan_log {
    cli_progress *pr;
    char said[512];
} plan_log;

static void on_plan_log(void *user, cutune_log_level level, const char *msg)
{
    plan_log *l = user;
    if (level == CUTUNE_LOG_ERROR)
        snprintf(l->said, sizeof l->said, "%s", msg);
    cli_on_log(l->pr, level, msg);
}

/* How long rank 0 waits for a silent rank (docs/plans.md). */
static int rank_timeout(cutune_plan_run_options *o)
{
    char why[256];
    if (cutune_env_number("CUTUNE_PLAN_RANK_TIMEOUT", 1, 1e7, 0,
                          &o->rank_timeout_s, why, sizeof why)) {
        fprintf(stderr, "cutune: %s\n", why);
        return CLI_EXIT_USAGE;
    }
    return 0;
}

static int finish(const cutune_plan *plan, const cutune_plan_report *r)
{
    /* Rank 0 reports every failure; another rank's exit status would
     * only make mpirun abort the job. */
    if (r->rank != 0)
        return CLI_EXIT_OK;
    printf("plan: %zu tasks: %zu tuned, %zu already cached, %zu failed "
           "(%.1f s",
           r->tasks, r->tuned, r->skipped, r->failed, r->seconds);
    if (r->ranks > 1)
        printf(", %d MPI ranks", r->ranks);
    printf(")\n");
    for (size_t t = 0; t < cutune_plan_task_count(plan); t++) {
        const cutune_plan_task *task = cutune_plan_task_at(plan, t);
        if (task->state == CUTUNE_PLAN_FAILED)
            return cli_exit_code(task->status);
    }
    return CLI_EXIT_OK;
}

/* A cache that cannot take records is said once, before any task is
 * tuned (and lost). */
static int cache_writable(const plan_args *a)
{
    cutune_cache *c = NULL;
    cutune_status st = cutune_cache_open(a->cache_dir, &c);
    if (st == CUTUNE_OK)
        st = cutune_cache_check_writable(c);
    if (st != CUTUNE_OK)
        fprintf(stderr,
                "cutune: the tuning cache cannot be written, so no "
                "task is tuned: %s\n",
                cutune_cache_errmsg(c));
    cutune_cache_close(c);
    return st == CUTUNE_OK ? 0 : CLI_EXIT_CACHE;
}

static int run_plan(const plan_args *a)
{
    cli_progress pr;
    cutune_session_options so;
    cli_device_groups_t g;
    int leaders[CLI_MAX_DEVICES];
    size_t n_leaders;
    int rc = session_options(a, &pr, &so);
    if (rc || (rc = device_set(a, &so, &g, leaders, &n_leaders)))
        return rc;
    cutune_plan *plan = NULL;
    cutune_status st = cutune_plan_load(a->plan, leaders, n_leaders, &plan);
    if (st != CUTUNE_OK) {
        cli_print_error(cutune_plan_errmsg(plan), st);
        cutune_plan_destroy(plan);
        return cli_exit_code(st) == CLI_EXIT_USAGE ? CLI_EXIT_USAGE
                                                   : CLI_EXIT_INPUT;
    }
    if ((rc = cache_writable(a))) {
        cutune_plan_destroy(plan);
        return rc;
    }
    int mpi = cutune_plan_mpi_launched();
    /* Only rank 0 sees the whole plan; the others stay quiet. */
    cli_progress_init(&pr, a->quiet || (mpi && !rank_zero()));
    pr.verbose = a->verbose;
    cutune_plan_backend *backend = NULL;
    unsigned long long limit = 0;
    if ((rc = cli_space_limit(&limit)) ||
        (st = make_backend(a, &so, &backend)) != CUTUNE_OK) {
        cutune_plan_destroy(plan);
        return rc ? rc : cli_exit_code(st);
    }
    backend->max_space_visits = limit;
    cutune_objective_parse(a->objective ? a->objective : "time",
                           &backend->objective);
    cutune_plan_run_options o;
    cutune_plan_run_options_init(&o);
    o.cache_dir = a->cache_dir;
    o.force = a->force;
    if ((rc = rank_timeout(&o))) {
        cutune_plan_backend_destroy(backend);
        cutune_plan_destroy(plan);
        return rc;
    }
    plan_log plog = {&pr, ""};
    o.log = on_plan_log;
    o.log_user = &plog;
    cutune_plan_report report;
    st = mpi ? cutune_plan_run_mpi(plan, backend, &o, &report)
             : cutune_plan_run(plan, backend, &o, &report);
    cli_progress_end(&pr);
    if (st != CUTUNE_OK) {
        /* Empty on the ranks that leave the telling to rank 0. */
        if (cutune_plan_errmsg(plan)[0] &&
            strcmp(cutune_plan_errmsg(plan), plog.said))
            cli_print_error(cutune_plan_errmsg(plan), st);
        rc = cli_exit_code(st);
    } else {
        rc = finish(plan, &report);
    }
    cutune_plan_backend_destroy(backend);
    cutune_plan_destroy(plan);
    return rc;
}

int cli_cmd_plan(int argc, char **argv)
{
    plan_args a = {NULL, NULL, NULL, NULL, NULL, -1, 0, 1, 0, 0, 0, 0, 0, 0};
    const cli_opt opts[] = {{"--plan", CLI_STRING, &a.plan},
                            {"--force", CLI_FLAG, &a.force},
                            {"--device", CLI_COUNT, &a.device},
                            {"--devices", CLI_STRING, &a.devices},
                            {"--strategy", CLI_STRING, &a.strategy},
                            {"--budget-evals", CLI_COUNT, &a.budget},
                            {"--budget-seconds", CLI_NUMBER, &a.seconds},
                            {"--budget-fraction", CLI_NUMBER, &a.fraction},
                            {"--seed", CLI_COUNT, &a.seed},
                            {"--objective", CLI_STRING, &a.objective},
                            {"--cache-dir", CLI_STRING, &a.cache_dir},
                            {"--threads", CLI_COUNT, &a.threads},
                            {"--quiet", CLI_FLAG, &a.quiet},
                            {"--verbose", CLI_FLAG, &a.verbose},
                            {NULL, 0, NULL}};
    /* Before parsing: `--plan --help` would take --help for the plan. */
    for (int i = 0; i < argc; i++)
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            fputs(usage, stdout);
            return CLI_EXIT_OK;
        }
    const char *positional[1];
    size_t n_positional = 0;
    int help = 0;
    int rc = cli_parse(argc, argv, opts, positional, 1, &n_positional, &help);
    if (rc)
        return rc;
    if (n_positional)
        return cli_usage_error("a plan names its problems: '%s' goes into "
                               "the plan file",
                               positional[0]);
    if (!a.plan)
        return cli_usage_error("--plan needs a file");
    if (a.fraction > 1)
        return cli_usage_error("--budget-fraction: '%g' is above 1",
                               a.fraction);
    if (a.device > 1024 || a.threads > 4096)
        return cli_usage_error("--device or --threads out of range");
    if (a.devices && a.device >= 0)
        return cli_usage_error("--device and --devices: give one of them");
    cutune_objective objective;
    if ((rc = cli_parse_objective(a.objective, &objective)))
        return rc;
    if (a.device < 0)
        a.device = 0;
    return run_plan(&a);
}
