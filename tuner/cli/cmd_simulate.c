/* cutune simulate: replays recorded T4 results as if they were the GPU, to
 * judge a search strategy against the known optimum. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "cutune/simulate.h"

static const char usage[] =
    "usage: cutune simulate PROBLEM [--results T4.json[.gz]] [options]\n"
    "\n"
    "Runs a search strategy on PROBLEM's space against the measurements\n"
    "recorded in a T4 results file, as if they were the GPU: a recorded\n"
    "failure fails again, a configuration the file does not hold fails too.\n"
    "Only the space of PROBLEM is read, so no kernel or GPU is needed.\n"
    "Prints, per run, the best found against the true optimum and the\n"
    "evaluations it took to come within 1%, 2% and 5% of it; over several\n"
    "runs, the median and quartiles; and the score P = (B - F) / (B - O) of\n"
    "Willemsen et al., with F the best found, O the optimum and B the\n"
    "expected best of random search with as many evaluations (1: the\n"
    "optimum; 0: no better than random search).\n"
    "\n"
    "options:\n"
    "  --results FILE        T4 results or a Kernel Tuner cache, plain or\n"
    "                        gzip JSON (default: the T1's SimulationInput)\n"
    "  --strategy NAME       search strategy (default: the default one)\n"
    "  --budget-evals N      evaluations per run (default 100 when no budget\n"
    "                        is given; failures count)\n"
    "  --budget-fraction X   evaluations as a share of the space, 0 < X <= 1\n"
    "  --budget-seconds S    simulated time: the recorded compilation and\n"
    "                        run times of what was evaluated\n"
    "  --objective NAME      what the runs minimise: time (default), energy\n"
    "                        (J per launch: the recorded measurements energy\n"
    "                        or nvml_energy, or power times the time) or edp\n"
    "                        (J x s); the figures are then in J or J s\n"
    "  --seed K              seed of the first run (default 1, as `tune`'s);\n"
    "                        the runs use K, K + 1, ...\n"
    "  --repeat R            runs (default 1)\n"
    "  --batch B             proposals per round (default 1; with --threads,\n"
    "                        what a tune asks for)\n"
    "  --threads N           model the tune's wall time on a host with N\n"
    "                        compile threads and one GPU, from the recorded\n"
    "                        compile and run times: prints each run's\n"
    "                        modelled seconds and its time to 0.95, 0.98\n"
    "                        and 0.99 of the optimum\n"
    "  --occupancy-block N   threads per block the occupancy API suggested\n"
    "                        on the recorded GPU (a tune logs it): runs\n"
    "                        start where that tune started. Without it they\n"
    "                        start at the default configuration, as a tune\n"
    "                        does when the API cannot answer\n"
    "  --size N[,N...]       problem size (replaces the T1 ProblemSize)\n"
    "  --cache-dir DIR       with --device-name: append the winner to this\n"
    "                        tuning cache, marked as simulated\n"
    "  --device-name NAME    the device the results were recorded on\n"
    "  --json                print the results as JSON\n";

static void print_quartiles(const char *label, cutune_quartiles q,
                            const char *fmt)
{
    char a[32], b[32], c[32];
    snprintf(a, sizeof a, fmt, q.median);
    snprintf(b, sizeof b, fmt, q.q1);
    snprintf(c, sizeof c, fmt, q.q3);
    printf("  %-14s %s  [%s, %s]\n", label, a, b, c);
}

/* A count or a time, "-" for never (infinite or NaN). */
static void fmt_or_never(char *buf, size_t len, const char *fmt, double v)
{
    if (isinf(v) || isnan(v))
        snprintf(buf, len, "-");
    else
        snprintf(buf, len, fmt, v);
}

static void fmt_evals(char *buf, size_t len, double v)
{
    fmt_or_never(buf, len, "%.0f", v);
}

static void fmt_seconds(char *buf, size_t len, double v)
{
    fmt_or_never(buf, len, "%.1f", v);
}

/* A median and quartiles of evaluations or seconds until a fraction of
 * the optimum, with the runs that got there at all. */
static void print_reached(const char *label, cutune_quartiles q, size_t got,
                          size_t n_runs, const char *fmt)
{
    char a[16], b[16], c[16];
    fmt_or_never(a, sizeof a, fmt, q.median);
    fmt_or_never(b, sizeof b, fmt, q.q1);
    fmt_or_never(c, sizeof c, fmt, q.q3);
    printf("  %-14s %s  [%s, %s]  (%zu of %zu runs got there)\n", label, a, b,
           c, got, n_runs);
}

/* The clock of each run and over the runs (--threads). */
static void print_clock(const cutune_simulate_result *r)
{
    static const char *ratio[] = {"0.95", "0.98", "0.99"};
    printf("\non the clock, %d compile threads and one GPU (modelled):\n"
           "  run   wall s  GPU waits s  compiles  speculated  used   "
           "to 0.95  to 0.98  to 0.99\n",
           r->threads);
    for (size_t k = 0; k < r->n_runs; k++) {
        const cutune_simulate_run *run = &r->runs[k];
        char t[3][16];
        for (int i = 0; i < 3; i++)
            fmt_seconds(t[i], sizeof t[i], run->seconds_to[i]);
        printf("  %3zu %8.1f %12.1f %9zu %11zu %5zu %9s %8s %8s\n", k + 1,
               run->wall_s, run->gpu_wait_s, run->compiles, run->spec_compiles,
               run->spec_used, t[0], t[1], t[2]);
    }
    if (r->n_runs < 2)
        return;
    print_quartiles("wall s", r->wall_s, "%.1f");
    for (int i = 0; i < 3; i++) {
        char label[32];
        snprintf(label, sizeof label, "s to %s", ratio[i]);
        print_reached(label, r->seconds_to[i], r->runs_to[i], r->n_runs,
                      "%.1f");
    }
}

/* The unit of the objective's figures, and how they print: time as it
 * always has, energies (a few µJ to J per launch) with their digits. */
static const char *unit_of(cutune_objective o)
{
    return o == CUTUNE_OBJECTIVE_TIME     ? "ms"
           : o == CUTUNE_OBJECTIVE_ENERGY ? "J"
                                          : "J s";
}

static void fmt_value(char *buf, size_t len, cutune_objective o, double v)
{
    snprintf(buf, len, o == CUTUNE_OBJECTIVE_TIME ? "%.4f" : "%.4g", v);
}

static void print_text(const cutune_problem *p,
                       const cutune_simulate_result *r)
{
    static const char *within[] = {"1%", "2%", "5%"};
    const char *unit = unit_of(r->objective);
    char v[32];
    printf("%s: strategy %s, ", cutune_problem_name(p), r->strategy);
    if (r->budget)
        printf("%zu evaluations", r->budget);
    else
        printf("no evaluation limit");
    printf(", %zu run%s\n", r->n_runs, r->n_runs == 1 ? "" : "s");
    printf("space: %zu configurations, %zu recorded, %zu correct\n",
           r->space_size, r->recorded, r->correct);
    if (r->objective != CUTUNE_OBJECTIVE_TIME)
        printf("objective: %s (%s per launch)\n",
               cutune_objective_str(r->objective), unit);
    if (r->optimum) {
        fmt_value(v, sizeof v, r->objective, r->optimum_ms);
        printf("optimum: %s %s  ", v, unit);
        cli_print_config(r->optimum, r->n_params);
        printf("\n");
    }
    if (r->start) {
        printf("start: ");
        cli_print_config(r->start, r->n_params);
        printf(" (%s)\n",
               strcmp(r->start_source, "occupancy") == 0
                   ? "the default at the occupancy API's block size"
                   : "the default configuration: no occupancy answer given");
    }
    if (!isnan(r->random_best_ms)) {
        fmt_value(v, sizeof v, r->objective, r->random_best_ms);
        printf("random search with %zu evaluations expects %s %s (B)\n",
               r->budget, v, unit);
    }
    char head[16];
    snprintf(head, sizeof head, "best %s", unit);
    printf("\n  run  seed  evals  fails %10s  opt/best      P"
           "     1%%     2%%     5%%\n",
           head);
    for (size_t k = 0; k < r->n_runs; k++) {
        const cutune_simulate_run *run = &r->runs[k];
        char w[3][16], best[16], score[16], ratio[16];
        for (int i = 0; i < 3; i++)
            fmt_evals(w[i], sizeof w[i],
                      run->evals_within[i] ? (double)run->evals_within[i]
                                           : INFINITY);
        if (run->best) {
            fmt_value(best, sizeof best, r->objective, run->best_ms);
            snprintf(ratio, sizeof ratio, "%.3f", run->ratio);
        } else {
            snprintf(best, sizeof best, "-");
            snprintf(ratio, sizeof ratio, "-");
        }
        if (isnan(run->score))
            snprintf(score, sizeof score, "-");
        else
            snprintf(score, sizeof score, "%.3f", run->score);
        printf("  %3zu %5llu %6zu %6zu %10s %9s %6s %6s %6s %6s\n", k + 1,
               (unsigned long long)run->seed, run->evaluations, run->failures,
               best, ratio, score, w[0], w[1], w[2]);
    }
    for (size_t k = 0; k < r->n_runs && r->n_runs == 1; k++) {
        if (r->runs[k].best) {
            printf("\nbest: ");
            cli_print_config(r->runs[k].best, r->n_params);
            printf("\n");
        }
    }
    if (r->threads > 0)
        print_clock(r);
    if (r->n_runs < 2)
        return;
    printf("\nover %zu runs: median [first quartile, third quartile]\n",
           r->n_runs);
    print_quartiles("optimum/best", r->ratio, "%.3f");
    print_quartiles("P", r->score, "%.3f");
    for (int i = 0; i < 3; i++) {
        char label[32];
        snprintf(label, sizeof label, "evals to %s", within[i]);
        print_reached(label, r->evals_within[i], r->runs_within[i], r->n_runs,
                      "%.0f");
    }
}

static json_t *num(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

static json_t *quartiles_json(cutune_quartiles q)
{
    return json_pack("{s:o, s:o, s:o}", "q1", num(q.q1), "median",
                     num(q.median), "q3", num(q.q3));
}

static const char *const ratio_names[] = {"0.95", "0.98", "0.99"};

/* A run's clock (--threads) into its JSON object. */
static void run_clock_json(json_t *o, const cutune_simulate_run *run)
{
    json_t *to = json_object();
    for (int i = 0; i < CUTUNE_SIMULATE_N_RATIOS; i++)
        json_object_set_new(to, ratio_names[i], num(run->seconds_to[i]));
    json_object_set_new(o, "wall_s", num(run->wall_s));
    json_object_set_new(o, "gpu_wait_s", num(run->gpu_wait_s));
    json_object_set_new(o, "compile_busy_s", num(run->compile_busy_s));
    json_object_set_new(o, "compiles",
                        json_integer((json_int_t)run->compiles));
    json_object_set_new(o, "speculated",
                        json_integer((json_int_t)run->spec_compiles));
    json_object_set_new(o, "speculated_used",
                        json_integer((json_int_t)run->spec_used));
    json_object_set_new(o, "seconds_to", to);
}

/* The clock over the runs into the result's JSON object. */
static void clock_json(json_t *o, const cutune_simulate_result *r)
{
    json_t *to = json_object();
    for (int i = 0; i < CUTUNE_SIMULATE_N_RATIOS; i++)
        json_object_set_new(to, ratio_names[i],
                            json_pack("{s:o, s:I}", "quartiles",
                                      quartiles_json(r->seconds_to[i]), "runs",
                                      (json_int_t)r->runs_to[i]));
    json_object_set_new(o, "threads", json_integer(r->threads));
    json_object_set_new(o, "wall_s", num(r->wall_s.median));
    json_object_set_new(o, "wall_s_quartiles", quartiles_json(r->wall_s));
    json_object_set_new(o, "seconds_to", to);
}

static void print_json(const cutune_problem *p,
                       const cutune_simulate_result *r)
{
    static const char *within[] = {"1%", "2%", "5%"};
    json_t *runs = json_array();
    for (size_t k = 0; k < r->n_runs; k++) {
        const cutune_simulate_run *run = &r->runs[k];
        json_t *w = json_object();
        for (int i = 0; i < 3; i++)
            json_object_set_new(
                w, within[i],
                run->evals_within[i]
                    ? json_integer((json_int_t)run->evals_within[i])
                    : json_null());
        json_t *jr = json_pack(
            "{s:I, s:I, s:I, s:o, s:o, s:o, s:o, s:o, s:o, "
            "s:o}",
            "seed", (json_int_t)run->seed, "evaluations",
            (json_int_t)run->evaluations, "failures",
            (json_int_t)run->failures, "best_ms", num(run->best_ms), "config",
            run->best ? cli_config_json(run->best, r->n_params) : json_null(),
            "ratio", num(run->ratio), "score", num(run->score),
            "random_best_ms", num(run->random_best_ms), "evals_within", w,
            "simulated_seconds", num(run->seconds));
        if (jr && r->threads > 0)
            run_clock_json(jr, run);
        json_array_append_new(runs, jr);
    }
    json_t *ew = json_object();
    for (int i = 0; i < 3; i++)
        json_object_set_new(ew, within[i],
                            json_pack("{s:o, s:I}", "quartiles",
                                      quartiles_json(r->evals_within[i]),
                                      "runs", (json_int_t)r->runs_within[i]));
    json_t *out = json_pack(
        "{s:s, s:s, s:I, s:I, s:I, s:I, s:o, s:o, s:o, s:o, s:o, s:o, s:o, "
        "s:o, s:s}",
        "problem", cutune_problem_name(p), "strategy", r->strategy, "budget",
        (json_int_t)r->budget, "space_size", (json_int_t)r->space_size,
        "recorded", (json_int_t)r->recorded, "correct", (json_int_t)r->correct,
        "optimum_ms", num(r->optimum_ms), "optimum",
        r->optimum ? cli_config_json(r->optimum, r->n_params) : json_null(),
        "random_best_ms", num(r->random_best_ms), "runs", runs, "ratio",
        quartiles_json(r->ratio), "score", quartiles_json(r->score),
        "evals_within", ew, "start",
        r->start ? cli_config_json(r->start, r->n_params) : json_null(),
        "start_source", r->start_source);
    if (out && r->threads > 0)
        clock_json(out, r);
    /* The *_ms figures hold the objective's value: named where it is not
     * the time. */
    if (out && r->objective != CUTUNE_OBJECTIVE_TIME) {
        json_object_set_new(out, "objective",
                            json_string(cutune_objective_str(r->objective)));
        json_object_set_new(out, "unit", json_string(unit_of(r->objective)));
    }
    cli_print_json(out);
}

static void on_log(void *user, cutune_log_level level, const char *msg)
{
    (void)user;
    if (level <= CUTUNE_LOG_WARN)
        fprintf(stderr, "cutune: %s%s\n",
                level == CUTUNE_LOG_ERROR ? "error: " : "warning: ", msg);
}

int cli_cmd_simulate(int argc, char **argv)
{
    const char *problem = NULL, *results = NULL, *strategy = NULL;
    const char *cache_dir = NULL, *device_name = NULL, *objective = NULL;
    long long evals = 0, seed = 1, repeat = 1, batch = 0, occupancy = 0;
    long long threads = 0;
    double fraction = 0, seconds = 0;
    cli_sizes size = {{0}, 0};
    int json = 0;
    const cli_opt opts[] = {{"--results", CLI_STRING, &results},
                            {"--strategy", CLI_STRING, &strategy},
                            {"--budget-evals", CLI_COUNT, &evals},
                            {"--budget-fraction", CLI_NUMBER, &fraction},
                            {"--budget-seconds", CLI_NUMBER, &seconds},
                            {"--seed", CLI_COUNT, &seed},
                            {"--objective", CLI_STRING, &objective},
                            {"--repeat", CLI_COUNT, &repeat},
                            {"--batch", CLI_COUNT, &batch},
                            {"--threads", CLI_COUNT, &threads},
                            {"--occupancy-block", CLI_COUNT, &occupancy},
                            {"--size", CLI_SIZES, &size},
                            {"--cache-dir", CLI_STRING, &cache_dir},
                            {"--device-name", CLI_STRING, &device_name},
                            {"--json", CLI_FLAG, &json},
                            {NULL, 0, NULL}};
    int rc;
    if (!cli_parse_problem(argc, argv, opts, usage, &problem, &rc))
        return rc;
    if (fraction > 1)
        return cli_usage_error("--budget-fraction: '%g' is above 1", fraction);
    if (repeat < 1)
        return cli_usage_error("--repeat: at least 1 run");
    cutune_objective minimise;
    if ((rc = cli_parse_objective(objective, &minimise)))
        return rc;
    if (threads > 4096)
        return cli_usage_error("--threads: '%lld' is above 4096", threads);
    if (cache_dir && !device_name)
        return cli_usage_error("--cache-dir needs --device-name (the device "
                               "the results were recorded on)");

    cutune_problem_options po;
    cutune_problem_options_init(&po);
    po.problem_size = size.n ? size.v : NULL;
    po.n_problem_size = size.n;
    po.space_only = 1;
    if ((rc = cli_space_limit(&po.max_space_visits)))
        return rc;
    cutune_problem *p = NULL;
    cutune_status st = cutune_problem_load(problem, &po, &p);
    if (st) {
        cli_print_error(cutune_problem_errmsg(p), st);
        cutune_problem_destroy(p);
        return cli_exit_code(st) == CLI_EXIT_USAGE ? CLI_EXIT_USAGE
                                                   : CLI_EXIT_INPUT;
    }
    if (!results && !(results = cutune_problem_simulation_input(p))) {
        cutune_problem_destroy(p);
        return cli_usage_error("missing --results (and %s names no "
                               "SimulationInput)",
                               problem);
    }
    cutune_simulate_options so;
    cutune_simulate_options_init(&so);
    so.results_path = results;
    so.strategy = strategy;
    so.max_evals = (size_t)evals;
    so.max_fraction = fraction;
    so.max_seconds = seconds;
    so.seed = (uint64_t)seed;
    so.repeat = (size_t)repeat;
    so.batch = (size_t)batch;
    so.threads = (int)threads;
    so.occupancy_block_size =
        occupancy > 0x7fffffff ? 0x7fffffff : (int)occupancy;
    so.write_cache = device_name != NULL;
    so.cache_dir = cache_dir;
    so.device_name = device_name;
    so.log = on_log;
    so.objective = minimise;
    cutune_simulation *sim = NULL;
    st = cutune_simulate(p, &so, &sim);
    const cutune_simulate_result *r = cutune_simulation_result(sim);
    if (r) {
        if (json)
            print_json(p, r);
        else
            print_text(p, r);
    }
    if (st) {
        cli_print_error(cutune_simulation_errmsg(sim), st);
        rc = cli_exit_code(st);
    } else if (device_name && !json) {
        printf("\nappended the winner to the tuning cache as a simulated "
               "result on '%s'\n",
               device_name);
    }
    cutune_simulation_destroy(sim);
    cutune_problem_destroy(p);
    return rc;
}
