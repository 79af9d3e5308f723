/* cutune tune: tune a problem on a GPU and cache the winner. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char usage[] =
    "usage: cutune tune PROBLEM [options]\n"
    "       cutune tune --plan PLAN [options]  (cutune tune --plan --help)\n"
    "\n"
    "Tunes PROBLEM on a CUDA device, compares the winner with the occupancy\n"
    "API's suggestion and appends it to the device's tuning cache.\n"
    "\n"
    "options:\n"
    "  --device N          CUDA device ordinal (default 0)\n"
    "  --devices all|N,... tune on several devices at once: those of one\n"
    "                      model share one search (one worker each; an\n"
    "                      ordinal may repeat), each model is tuned apart\n"
    "                      and cached under its own device; with --json, an\n"
    "                      array of results, one per model\n"
    "  --strategy NAME     search strategy: default, bayes, forest, local,\n"
    "                      annealing, genetic, diff_evo, sobol, random or\n"
    "                      brute_force\n"
    "  --budget-evals N    evaluate at most N configurations (default 100;\n"
    "                      brute_force: all)\n"
    "  --budget-fraction X evaluate at most a share X (0 < X <= 1) of the\n"
    "                      space\n"
    "  --budget-seconds S  stop starting new evaluations after S seconds\n"
    "  --seed N            seed of randomized strategies (default 1)\n"
    "  --objective NAME    what to minimise: time (default; ms per launch),\n"
    "                      energy (J per launch) or edp (J x s per launch,\n"
    "                      the energy-delay product); energy and edp need\n"
    "                      the device's power readings (docs/energy.md)\n"
    "  --measure-energy    measure energy and power with --objective time\n"
    "                      too (in the T4 output and the result)\n"
    "  --size N[,N...]     problem size (replaces the T1 ProblemSize)\n"
    "  --cache-dir DIR     tuning cache (default $CUTUNE_CACHE_DIR or\n"
    "                      ~/.cache/cutune)\n"
    "  --no-cache          do not record the winner\n"
    "  --output FILE       write every evaluation as T4 results (gzip when\n"
    "                      FILE ends in .gz)\n"
    "  --report FILE       write an HTML report of the tune (see cutune\n"
    "                      report)\n"
    "  --threads N         NVRTC compile threads (default: one per core)\n"
    "  --no-binary-cache   compile everything; skip the on-disk binaries\n"
    "  --warm-cache        keep the L2 warm between timed launches\n"
    "  --check MODE        outputs without T1 ReferenceArguments: auto (the\n"
    "                      default's output, unless most differ from it by\n"
    "                      design), reference (always the default's) or\n"
    "                      finite (NaN/infinity only)\n"
    "  --resume            take configurations an earlier tune measured "
    "(same\n"
    "                      device, kernel, arguments and options) from the\n"
    "                      measurement log instead of measuring them again\n"
    "  --json              print the result as JSON\n"
    "  --quiet             no progress lines\n"
    "  --verbose           progress lines with timing details\n";

static const char no_device_howto[] =
    "cutune: to tune, run on a machine with an NVIDIA GPU and driver (see "
    "\"Running on a GPU\" in the README)\n";

static json_t *number_or_null(double v)
{
    return isnan(v) ? json_null() : json_real(v);
}

static json_t *result_json(const cutune_problem *p,
                           const cutune_tune_result *r)
{
    json_t *evals = json_array();
    for (size_t i = 0; i < r->n_evals; i++) {
        const cutune_eval *e = &r->evals[i];
        json_array_append_new(
            evals,
            json_pack("{s:I, s:s, s:o, s:f, s:b, s:i, s:i}", "config_index",
                      (json_int_t)e->config_index, "outcome",
                      cutune_outcome_str(e->outcome), "time_ms",
                      number_or_null(e->time_ms), "compile_ms", e->compile_ms,
                      "stopped_early", e->stopped_early, "sm_clock_mhz",
                      e->sm_clock_mhz, "temperature_c", e->temperature_c));
        json_object_set_new(json_array_get(evals, i), "worker",
                            json_integer((json_int_t)e->worker));
        if (isfinite(e->energy_j)) {
            json_object_set_new(json_array_get(evals, i), "energy_j",
                                json_real(e->energy_j));
            json_object_set_new(json_array_get(evals, i), "power_w",
                                number_or_null(e->power_w));
        }
    }
    json_t *j = json_pack(
        "{s:s, s:o, s:f, s:i, s:o, s:o, s:o, s:f, s:f, s:I, s:f, s:o, "
        "s:I, s:I, s:f, s:s, s:f, s:f, s:I, s:I, s:f, s:I, s:o}",
        "problem", cutune_problem_name(p), "device",
        cli_device_json(&r->device), "memcpy_gbs", r->memcpy_gbs,
        "occupancy_block_size", r->occupancy_block_size, "baseline",
        cli_config_json(r->baseline, r->n_params), "baseline_ms",
        number_or_null(r->baseline_ms), "best",
        cli_config_json(r->best, r->n_params), "best_ms", r->best_ms,
        "best_min_ms", r->best_min_ms, "best_runs", (json_int_t)r->best_runs,
        "best_gbs", r->best_gbs, "speedup", number_or_null(r->speedup),
        "evaluations", (json_int_t)r->evaluations, "failures",
        (json_int_t)r->failures, "wall_s", r->wall_s, "strategy", r->strategy,
        "gpu_busy", r->gpu_busy, "kernel_share", r->kernel_share, "finalists",
        (json_int_t)r->finalists, "tied", (json_int_t)r->tied, "best_gflops",
        r->best_gflops, "reused", (json_int_t)r->reused, "evaluated", evals);
    json_object_set_new(j, "workers", json_integer((json_int_t)r->workers));
    json_object_set_new(j, "restarts", json_integer((json_int_t)r->restarts));
    /* Only where there is something to say, so that a time tune's JSON
     * stays as it was. */
    if (r->objective != CUTUNE_OBJECTIVE_TIME || isfinite(r->best_energy_j)) {
        json_object_set_new(j, "objective",
                            json_string(cutune_objective_str(r->objective)));
        json_object_set_new(j, "best_energy_j",
                            number_or_null(r->best_energy_j));
        json_object_set_new(j, "best_power_w",
                            number_or_null(r->best_power_w));
    }
    return j;
}

/* The winner's energy, and what it was picked by, where either is not
 * the time alone. */
static void print_energy(const cutune_tune_result *r)
{
    if (r->objective != CUTUNE_OBJECTIVE_TIME)
        printf("  objective: %s (the winner has the least %s)\n",
               cutune_objective_str(r->objective),
               r->objective == CUTUNE_OBJECTIVE_ENERGY
                   ? "energy per launch"
                   : "energy x time per launch");
    if (isfinite(r->best_energy_j))
        printf("  energy:    %.6g J per launch, %.1f W (the winner's)\n",
               r->best_energy_j, r->best_power_w);
}

static void print_result(const cutune_problem *p, const cutune_tune_result *r)
{
    printf("%s", cutune_problem_name(p));
    for (size_t d = 0; d < cutune_problem_size_dims(p); d++)
        printf("%s%lld", d ? "x" : " (size ", cutune_problem_size(p, d));
    printf(") on %s (sm_%d%d)\n", r->device.name, r->device.cc_major,
           r->device.cc_minor);
    printf("  best:      ");
    cli_print_config(r->best, r->n_params);
    printf("\n             %.4f ms (median of %zu runs, min %.4f ms)",
           r->best_ms, r->best_runs, r->best_min_ms);
    if (r->best_gbs > 0) {
        printf(", %.1f GB/s", r->best_gbs);
        if (r->memcpy_gbs > 0)
            printf(" (%.0f%% of device-to-device cudaMemcpy, %.1f GB/s)",
                   100.0 * r->best_gbs / r->memcpy_gbs, r->memcpy_gbs);
    }
    if (r->best_gflops > 0)
        printf(", %.1f GFLOP/s", r->best_gflops);
    printf("\n");
    print_energy(r);
    printf("  occupancy: ");
    cli_print_config(r->baseline, r->n_params);
    printf("\n             (the occupancy API suggests %d threads per block)",
           r->occupancy_block_size);
    if (isnan(r->baseline_ms))
        printf(" failed\n");
    else
        printf(" %.4f ms\n", r->baseline_ms);
    if (!isnan(r->speedup))
        printf("  speedup:   %.2fx over the occupancy suggestion\n",
               r->speedup);
    printf("  evaluated: %zu configurations (%zu failed", r->evaluations,
           r->failures);
    if (r->reused)
        printf(", %zu measured before", r->reused);
    printf(") with %s in %.1f s\n", r->strategy, r->wall_s);
    if (r->workers > 1 || r->restarts)
        printf("  workers:   %zu device workers shared the search, %zu "
               "restarted\n",
               r->workers, r->restarts);
    printf("  measured:  GPU busy %.0f%% of the tune (kernels alone %.0f%%)",
           100.0 * r->gpu_busy, 100.0 * r->kernel_share);
    if (r->finalists)
        printf("\n             final round: the best %zu measured again",
               r->finalists);
    if (r->tied && r->objective == CUTUNE_OBJECTIVE_TIME)
        printf("; %zu other%s tied with the winner (95%% intervals of the "
               "median overlap)",
               r->tied, r->tied == 1 ? "" : "s");
    else if (r->tied)
        printf("; %zu other%s tied with the winner (intervals of the %s "
               "overlap)",
               r->tied, r->tied == 1 ? "" : "s",
               cutune_objective_str(r->objective));
    printf("\n");
}

/* What a tune writes besides the cache. */
typedef struct tune_outputs {
    const char *output, *report;
    int json;
    json_t *all; /* --devices --json: the results, one per model */
} tune_outputs;

/* Prints or collects a finished tune's result. */
static void show_result(const cutune_problem *p, const cutune_tune_result *r,
                        tune_outputs *out)
{
    if (out->all)
        json_array_append_new(out->all, result_json(p, r));
    else if (out->json)
        cli_print_json(result_json(p, r));
    else
        print_result(p, r);
}

/* One session's tune of `p` with `o`, its result printed. A result the
 * cache did not take is printed and written all the same, and the cache's
 * error comes after it. Returns the exit code. */
static int tune_once(cutune_problem *p, const cutune_session_options *o,
                     cli_progress *pr, tune_outputs *out)
{
    int rc = 0;
    cutune_session *s;
    const cutune_tune_result *r = NULL;
    cutune_status st = cutune_session_create(o, &s);
    if (st == CUTUNE_OK)
        st = cutune_session_tune(s, p, &r);
    cli_progress_end(pr);
    /* The session's message of a failed tune, before T4 and report
     * writes replace it. */
    char *why = st ? strdup(cutune_session_errmsg(s)) : NULL;
    /* What was measured is worth keeping even when nothing ran correctly. */
    int measured = r || st == CUTUNE_ERR_NO_VALID_RESULT;
    if (r)
        show_result(p, r, out);
    if (out->output && measured) {
        cutune_status wst = cutune_session_write_t4(s, out->output);
        if (wst) {
            cli_print_error(cutune_session_errmsg(s), wst);
            rc = cli_exit_code(wst);
        }
    }
    if (out->report && measured) {
        int rrc = cli_tune_report(s, p, r, out->output, out->report);
        rc = rc ? rc : rrc;
    }
    if (st) {
        cli_print_error(why ? why : cutune_session_errmsg(s), st);
        if (st == CUTUNE_ERR_NO_DEVICE)
            fputs(no_device_howto, stderr);
        if (r)
            fputs("cutune: the result above was not cached; tune again "
                  "once the cache directory is writable, or pass "
                  "--cache-dir\n",
                  stderr);
        rc = r ? CLI_EXIT_CACHE : cli_exit_code(st);
    }
    free(why);
    cutune_session_destroy(s);
    return rc;
}

/* --devices: a session per model, one after the other (each has the
 * compile pool, the host's CPUs, to itself), each on all the devices of
 * its model. */
static int tune_models(cutune_problem *p, cutune_session_options *o,
                       const cli_devices *d, cli_progress *pr,
                       tune_outputs *out)
{
    cli_device_groups_t g;
    int rc = cli_device_groups(o, d, &g);
    if (rc == CLI_EXIT_NO_DEVICE)
        fputs(no_device_howto, stderr);
    if (rc)
        return rc;
    if (g.n_groups > 1 && (out->output || out->report))
        return cli_usage_error("--output and --report take one tune, and "
                               "--devices names %zu models",
                               g.n_groups);
    if (out->json)
        out->all = json_array();
    for (size_t k = 0; k < g.n_groups; k++) {
        int members[CLI_MAX_DEVICES];
        o->devices = members;
        o->n_devices = cli_group_members(&g, k, members);
        int grc = tune_once(p, o, pr, out);
        rc = rc ? rc : grc;
    }
    if (out->all)
        cli_print_json(out->all);
    return rc;
}

int cli_cmd_tune(int argc, char **argv)
{
    const char *problem = NULL, *strategy = NULL, *cache_dir = NULL;
    const char *check = NULL, *devices = NULL, *objective = NULL;
    tune_outputs out = {NULL, NULL, 0, NULL};
    long long device = -1, budget = 0, seed = 1, threads = 0;
    double seconds = 0, fraction = 0;
    cli_sizes size = {{0}, 0};
    int no_cache = 0, quiet = 0, no_binaries = 0, warm = 0;
    int verbose = 0, resume = 0, energy = 0;
    const cli_opt opts[] = {{"--device", CLI_COUNT, &device},
                            {"--devices", CLI_STRING, &devices},
                            {"--strategy", CLI_STRING, &strategy},
                            {"--budget-evals", CLI_COUNT, &budget},
                            {"--budget-seconds", CLI_NUMBER, &seconds},
                            {"--budget-fraction", CLI_NUMBER, &fraction},
                            {"--seed", CLI_COUNT, &seed},
                            {"--objective", CLI_STRING, &objective},
                            {"--measure-energy", CLI_FLAG, &energy},
                            {"--size", CLI_SIZES, &size},
                            {"--cache-dir", CLI_STRING, &cache_dir},
                            {"--no-cache", CLI_FLAG, &no_cache},
                            {"--output", CLI_STRING, &out.output},
                            {"--report", CLI_STRING, &out.report},
                            {"--threads", CLI_COUNT, &threads},
                            {"--no-binary-cache", CLI_FLAG, &no_binaries},
                            {"--warm-cache", CLI_FLAG, &warm},
                            {"--resume", CLI_FLAG, &resume},
                            {"--check", CLI_STRING, &check},
                            {"--json", CLI_FLAG, &out.json},
                            {"--quiet", CLI_FLAG, &quiet},
                            {"--verbose", CLI_FLAG, &verbose},
                            {NULL, 0, NULL}};
    int rc;
    for (int i = 0; i < argc; i++)
        if (strncmp(argv[i], "--plan", 6) == 0 &&
            (argv[i][6] == '\0' || argv[i][6] == '='))
            return cli_cmd_plan(argc, argv);
    if (!cli_parse_problem(argc, argv, opts, usage, &problem, &rc))
        return rc;
    if (fraction > 1)
        return cli_usage_error("--budget-fraction: '%g' is above 1", fraction);
    if ((rc = cli_check_output("--output", out.output)) ||
        (rc = cli_check_output("--report", out.report)))
        return rc;
    cutune_output_check check_mode = CUTUNE_CHECK_AUTO;
    if (check && strcmp(check, "reference") == 0)
        check_mode = CUTUNE_CHECK_REFERENCE;
    else if (check && strcmp(check, "finite") == 0)
        check_mode = CUTUNE_CHECK_FINITE;
    else if (check && strcmp(check, "auto") != 0)
        return cli_usage_error("--check: '%s' is not auto, reference or "
                               "finite",
                               check);
    if (device > 1024 || threads > 4096)
        return cli_usage_error("--device or --threads out of range");
    cutune_objective minimise;
    if ((rc = cli_parse_objective(objective, &minimise)))
        return rc;
    cli_devices dl;
    if (devices && device >= 0)
        return cli_usage_error("--device and --devices: give one of them");
    if (devices && (rc = cli_parse_devices(devices, &dl)))
        return rc;
    cutune_session_options o;
    cutune_session_options_init(&o);
    if ((rc = cli_replay_env(&o)))
        return rc;
    cutune_problem *p;
    if ((rc = cli_load_problem_as(problem, &size, o.replay_devices != NULL,
                                  &p)))
        return rc;
    cli_progress pr;
    cli_progress_init(&pr, quiet || out.json);
    pr.verbose = verbose;
    o.device = device < 0 ? 0 : (int)device;
    o.strategy = strategy;
    o.max_evals = (size_t)budget;
    o.max_seconds = seconds;
    o.max_fraction = fraction;
    o.seed = (uint64_t)seed;
    o.cache_dir = cache_dir;
    o.write_cache = !no_cache;
    o.compile_threads = (int)threads;
    o.no_binary_cache = no_binaries;
    o.warm_cache = warm;
    o.reuse_measurements = resume;
    o.output_check = check_mode;
    o.objective = minimise;
    o.measure_energy = energy;
    cli_progress_attach(&pr, p, &o);
    rc = devices ? tune_models(p, &o, &dl, &pr, &out)
                 : tune_once(p, &o, &pr, &out);
    cutune_problem_destroy(p);
    return rc;
}
