/* cutune_simulate: replay of recorded T4 results; see cutune.h. The
 * strategies run through search/replay/replay.c exactly as they would against
 * a GPU, on objectives read from the file. */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <gsl/gsl_errno.h>

#include "cutune/simulate.h"
#include "expr/none.h"
#include "problem.h"
#include "replay/replay.h"
#include "strategy/budget.h"
#include "strategy/strategy.h"
#include "t4.h"
#include "util.h"

struct cutune_simulation {
    char *errmsg;
    int has_result;
    cutune_simulate_result result;
    cutune_simulate_run *runs;
    cutune_param_value *configs; /* (n_runs + 2) * n_params: runs, the
                                    optimum, the start */
};

void cutune_simulate_options_init(cutune_simulate_options *o)
{
    if (!o)
        return;
    memset(o, 0, sizeof *o);
}

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static cutune_status
fail(cutune_simulation *sim, cutune_status st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    st = cutune__vfail(&sim->errmsg, st, NULL, fmt, ap);
    va_end(ap);
    return st;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    if (x < y)
        return -1;
    return x > y;
}

/* Quartiles by linear interpolation between order statistics, so that
 * the median of an even count is the mean of the middle two. Sorts v. */
static cutune_quartiles quartiles(double *v, size_t n)
{
    cutune_quartiles q = {NAN, NAN, NAN};
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (!isnan(v[i]))
            v[k++] = v[i];
    if (k == 0)
        return q;
    qsort(v, k, sizeof *v, by_value);
    double at[3] = {0.25, 0.5, 0.75}, out[3];
    for (int j = 0; j < 3; j++) {
        double pos = at[j] * (double)(k - 1);
        size_t lo = (size_t)floor(pos);
        size_t hi = lo + 1 < k ? lo + 1 : lo;
        double f = pos - (double)lo;
        /* inf - inf would give NaN where both neighbours never got there. */
        out[j] =
            f == 0 || v[lo] == v[hi] ? v[lo] : v[lo] + f * (v[hi] - v[lo]);
    }
    q.q1 = out[0];
    q.median = out[1];
    q.q3 = out[2];
    return q;
}

static void logf_(const cutune_simulate_options *o, cutune_log_level level,
                  const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

static void logf_(const cutune_simulate_options *o, cutune_log_level level,
                  const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    if (!o->log)
        return;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    o->log(o->log_user, level, buf);
}

/* The record of a T4 file by space index, NaN where nothing was
 * recorded: objectives, the seconds the budget of simulated time spends
 * on each (cost), what trying it costs the strategy (try_cost,
 * cutune__search_cost), and for the clock its compilation and its
 * measurement (every launch and the framework's time around them). */
typedef struct record {
    double *objective, *cost, *try_cost, *compile_s, *measure_s;
    double *time_ms, *energy_j; /* of the objective's value, for the cache
                                   record of the winner */
} record;

static cutune_status append_winner(cutune_simulation *sim,
                                   const cutune_problem *problem,
                                   const cutune_simulate_options *o,
                                   const cutune_simulate_run *win)
{
    cutune_cache *cache = NULL;
    cutune_cache_record rec;
    memset(&rec, 0, sizeof rec);
    snprintf(rec.device.name, sizeof rec.device.name, "%s", o->device_name);
    snprintf(rec.device.cutune_version, sizeof rec.device.cutune_version, "%s",
             CUTUNE_VERSION_STRING);
    rec.device.simulated = 1;
    rec.problem_name = problem->name ? problem->name : "";
    rec.source_hash = problem->source_hash;
    rec.problem_size = problem->problem_size;
    rec.n_problem_size = problem->n_problem_size;
    rec.compiler_options = "";
    rec.config = win->best;
    rec.n_config = sim->result.n_params;
    rec.time_ms = win->best_time_ms;
    rec.time_min_ms = rec.time_ms;
    rec.objective = o->objective;
    rec.energy_j = win->best_energy_j;
    rec.runs = 1;
    rec.strategy = sim->result.strategy;
    rec.evaluations = win->evaluations;
    rec.tune_seconds = win->seconds;
    rec.timestamp = (long long)time(NULL);
    cutune_status st = cutune_cache_open(o->cache_dir, &cache);
    if (st == CUTUNE_OK)
        st = cutune_cache_append(cache, &rec);
    if (st != CUTUNE_OK)
        fail(sim, st, "tuning cache: %s",
             cache ? cutune_cache_errmsg(cache) : cutune_status_str(st));
    cutune_cache_close(cache);
    return st;
}

/* The strategy a simulation runs: the caller's, else the T1 file's
 * Search, else the default, as a tune chooses it. NULL (with the
 * simulation's message set) when there is no such strategy. */
static const cutune__strategy_type *
simulated_strategy(cutune_simulation *sim, const cutune_problem *problem,
                   const cutune_simulate_options *o)
{
    const cutune__strategy_type *type;
    if (o->strategy) {
        type = cutune__strategy_find(o->strategy);
    } else if (problem->search_strategy) {
        type = cutune__strategy_find(problem->search_strategy);
        if (!type)
            fail(sim, CUTUNE_ERR_INVALID_ARGUMENT,
                 "%s: strategy '%s' is "
                 "not built into this cutune",
                 problem->origin, problem->search_strategy);
        return type;
    } else {
        type = cutune__strategies[0];
    }
    if (!type) {
        char names[256] = "";
        for (size_t i = 0; cutune__strategies[i]; i++) {
            size_t len = strlen(names);
            snprintf(names + len, sizeof names - len, "%s%s", i ? ", " : "",
                     cutune__strategies[i]->name);
        }
        fail(sim, CUTUNE_ERR_INVALID_ARGUMENT,
             "unknown strategy '%s' (known: %s)", o->strategy, names);
    }
    return type;
}

/* The limits of a simulation, resolved as a tune resolves them
 * (budget.h): the caller's, else the T1 file's Budget, else the
 * strategy's default. */
static cutune__budget simulated_budget(const cutune_problem *problem,
                                       const cutune_simulate_options *o,
                                       const cutune__strategy_type *type)
{
    cutune__budget caller = {o->max_evals, o->max_seconds, o->max_fraction};
    cutune__budget t1 = {problem->budget_evals, problem->budget_seconds,
                         problem->budget_fraction};
    return cutune__budget_resolve(&caller, &t1,
                                  cutune__space_size(problem->space), type);
}

static int record_alloc(record *rec, size_t n)
{
    double **v[] = {&rec->objective, &rec->cost,      &rec->try_cost,
                    &rec->compile_s, &rec->measure_s, &rec->time_ms,
                    &rec->energy_j};
    int ok = 1;
    for (size_t k = 0; k < sizeof v / sizeof v[0]; k++) {
        *v[k] = malloc((n ? n : 1) * sizeof **v[k]);
        ok = ok && *v[k];
        for (size_t i = 0; *v[k] && i < n; i++)
            (*v[k])[i] = k == 0 ? NAN : 0.0;
    }
    return ok ? 0 : -1;
}

static void record_free(record *rec)
{
    free(rec->objective);
    free(rec->cost);
    free(rec->try_cost);
    free(rec->compile_s);
    free(rec->measure_s);
    free(rec->time_ms);
    free(rec->energy_j);
}

/* An entry's value of the objective: INFINITY when it failed, or has no
 * energy where the objective needs it. */
static double entry_objective(const cutune__t4_entry *en, cutune_objective o)
{
    if (en->outcome != CUTUNE_OUTCOME_CORRECT || !isfinite(en->time_ms))
        return INFINITY;
    if (o == CUTUNE_OBJECTIVE_TIME)
        return en->time_ms;
    if (!(en->energy_j > 0) || !isfinite(en->energy_j))
        return INFINITY;
    return o == CUTUNE_OBJECTIVE_ENERGY ? en->energy_j
                                        : en->energy_j * en->time_ms * 1e-3;
}

/* Fills `rec` from the T4 file, and the optimum. */
static void read_record(cutune_simulation *sim, const cutune_problem *problem,
                        const cutune__t4 *t4, record *rec, size_t repeat,
                        cutune_objective minimised)
{
    double *objective = rec->objective;
    size_t n = cutune__space_size(problem->space);
    size_t np = problem->n_params;
    cutune_simulate_result *r = &sim->result;
    for (size_t i = 0; i < n; i++)
        objective[i] = NAN;
    for (size_t e = 0; e < t4->n_entries; e++) {
        const cutune__t4_entry *en = &t4->entries[e];
        size_t i = en->config_index;
        if (i >= n)
            continue;
        double obj = entry_objective(en, minimised);
        /* A configuration recorded twice counts once, at its better. */
        if (isnan(objective[i]) || obj < objective[i]) {
            r->recorded += isnan(objective[i]) != 0;
            objective[i] = obj;
            rec->time_ms[i] = en->time_ms;
            rec->energy_j[i] = en->energy_j;
        }
        rec->cost[i] = cutune__t4_entry_seconds(en);
        rec->try_cost[i] = cutune__t4_entry_try_seconds(en);
        rec->compile_s[i] = en->compile_ms / 1000.0;
        rec->measure_s[i] = cutune__t4_entry_measure_seconds(en);
    }
    size_t opt_index;
    r->optimum_ms = cutune__replay_optimum(objective, n, &opt_index);
    for (size_t i = 0; i < n; i++)
        r->correct += isfinite(objective[i]) != 0;
    r->space_size = n;
    r->n_params = np;
    if (opt_index != CUTUNE__NONE) {
        cutune__problem_config_values(problem, opt_index,
                                      sim->configs + repeat * np);
        r->optimum = sim->configs + repeat * np;
    }
}

/* Where every run starts: where a tune would (search/strategy/seed.h). Its
 * values go after the runs' and the optimum's in sim->configs. */
static void set_start(cutune_simulation *sim, const cutune_problem *problem,
                      const cutune_simulate_options *o, size_t repeat)
{
    cutune_simulate_result *r = &sim->result;
    cutune__seed_source src;
    r->start_index =
        cutune__problem_seed_start(problem, o->occupancy_block_size, &src);
    r->start_source = cutune__seed_source_name(src);
    if (r->start_index != CUTUNE__NONE) {
        cutune_param_value *v =
            sim->configs + (repeat + 1) * problem->n_params;
        cutune__problem_config_values(problem, r->start_index, v);
        r->start = v;
    }
}

/* Run k of the simulation, within `budget`. -1 when memory ran out. */
static int replay_one(cutune_simulation *sim, const cutune_problem *problem,
                      const cutune__strategy_type *type,
                      const cutune_simulate_options *o,
                      const cutune__budget *budget, const record *rec,
                      size_t k)
{
    size_t n = cutune__space_size(problem->space);
    size_t np = problem->n_params;
    const double *objective = rec->objective;
    const cutune_simulate_result *r = &sim->result;
    cutune_simulate_run *run = &sim->runs[k];
    cutune__replay_options ro = {.max_evals = budget->max_evals,
                                 .max_seconds = budget->max_seconds,
                                 .batch = o->batch,
                                 .seed = o->seed + k,
                                 .start = r->start_index,
                                 .try_cost = rec->try_cost};
    if (o->threads > 0) {
        /* As a tune: its batches, its reference compiled and measured
         * before the search. */
        if (!ro.batch)
            ro.batch = cutune__search_batch(type, o->threads, 1);
        size_t ref = cutune__problem_default_config(problem);
        ro.threads = o->threads;
        ro.compile_s = rec->compile_s;
        ro.measure_s = rec->measure_s;
        ro.setup_s =
            cutune__replay_setup_s(rec->compile_s, rec->measure_s, n, ref);
    }
    cutune__replay_result rr;
    if (cutune__replay_run(type, problem->space, objective, rec->cost, &ro,
                           &rr, NULL, 0) == -1)
        return -1;
    run->wall_s = rr.wall_s;
    run->gpu_wait_s = rr.gpu_wait_s;
    run->compile_busy_s = rr.compile_busy_s;
    run->compiles = rr.compiles;
    run->spec_compiles = rr.spec_compiles;
    run->spec_used = rr.spec_used;
    for (int q = 0; q < CUTUNE_SIMULATE_N_RATIOS; q++)
        run->seconds_to[q] = rr.seconds_to[q];
    run->seed = o->seed + k;
    run->evaluations = rr.search.evaluations;
    run->failures = rr.failures;
    run->best_ms = rr.search.best_objective;
    run->best_index = rr.search.best;
    run->seconds = rr.seconds;
    run->best_time_ms = run->best_energy_j = NAN;
    if (rr.search.best != CUTUNE__NONE) {
        run->best_time_ms = rec->time_ms[rr.search.best];
        run->best_energy_j = rec->energy_j[rr.search.best];
        cutune__problem_config_values(problem, rr.search.best,
                                      sim->configs + k * np);
        run->best = sim->configs + k * np;
        run->ratio = r->optimum_ms / run->best_ms;
    }
    run->random_best_ms =
        cutune__replay_random_best(objective, n, run->evaluations);
    run->score =
        cutune__replay_score(run->random_best_ms, run->best_ms, r->optimum_ms);
    for (int w = 0; w < CUTUNE_SIMULATE_N_WITHIN; w++)
        run->evals_within[w] =
            rr.evals_within[w] == CUTUNE__NONE ? 0 : rr.evals_within[w];
    return 0;
}

/* The quartiles over the runs; `scratch` holds `repeat` doubles. */
static void summarize_runs(cutune_simulation *sim, double *scratch,
                           size_t repeat)
{
    cutune_simulate_result *r = &sim->result;
    r->runs = sim->runs;
    r->n_runs = repeat;
    for (size_t k = 0; k < repeat; k++)
        scratch[k] = sim->runs[k].ratio;
    r->ratio = quartiles(scratch, repeat);
    for (size_t k = 0; k < repeat; k++)
        scratch[k] = sim->runs[k].score;
    r->score = quartiles(scratch, repeat);
    for (int w = 0; w < CUTUNE_SIMULATE_N_WITHIN; w++) {
        for (size_t k = 0; k < repeat; k++) {
            size_t e = sim->runs[k].evals_within[w];
            scratch[k] = e ? (double)e : INFINITY;
            r->runs_within[w] += e != 0;
        }
        r->evals_within[w] = quartiles(scratch, repeat);
    }
    if (r->threads <= 0)
        return;
    for (size_t k = 0; k < repeat; k++)
        scratch[k] = sim->runs[k].wall_s;
    r->wall_s = quartiles(scratch, repeat);
    for (int q = 0; q < CUTUNE_SIMULATE_N_RATIOS; q++) {
        for (size_t k = 0; k < repeat; k++) {
            scratch[k] = sim->runs[k].seconds_to[q];
            r->runs_to[q] += isfinite(scratch[k]) != 0;
        }
        r->seconds_to[q] = quartiles(scratch, repeat);
    }
}

/* Checks the options of a simulation and chooses its strategy: NULL,
 * with the simulation's message set, when they do not hold together. */
static const cutune__strategy_type *
check_options(cutune_simulation *sim, const cutune_problem *problem,
              const cutune_simulate_options *o, cutune_status *st)
{
    *st = CUTUNE_ERR_INVALID_ARGUMENT;
    if (!problem || !problem->space || !o || !o->results_path) {
        fail(sim, *st,
             "cutune_simulate: a problem and a results file are "
             "needed");
        return NULL;
    }
    if (o->write_cache && (!o->device_name || !*o->device_name)) {
        fail(sim, *st,
             "writing a simulated result to the cache needs a "
             "device name");
        return NULL;
    }
    if (strcmp(cutune_objective_str(o->objective), "unknown") == 0) {
        fail(sim, *st, "objective %d is none of CUTUNE_OBJECTIVE_* (%s)",
             (int)o->objective, CUTUNE_OBJECTIVE_NAMES);
        return NULL;
    }
    if (o->max_fraction < 0 || o->max_fraction > 1 || o->max_seconds < 0) {
        fail(sim, *st,
             "budget: the fraction of the space must lie in (0, "
             "1] and the time must not be negative");
        return NULL;
    }
    const cutune__strategy_type *type = simulated_strategy(sim, problem, o);
    if (type && cutune__space_size(problem->space) == 0) {
        *st = CUTUNE_ERR_EMPTY_SPACE;
        fail(sim, *st, "%s: no configuration satisfies the conditions",
             problem->origin);
        return NULL;
    }
    return type;
}

cutune_status cutune_simulate(const cutune_problem *problem,
                              const cutune_simulate_options *options,
                              cutune_simulation **out)
{
    cutune_simulation *sim;
    cutune__t4 *t4 = NULL;
    record rec = {NULL, NULL, NULL, NULL, NULL, NULL, NULL};
    double *scratch = NULL;
    char err[512];
    cutune_status st;

    if (!out)
        return CUTUNE_ERR_INVALID_ARGUMENT;
    *out = sim = calloc(1, sizeof *sim);
    if (!sim)
        return CUTUNE_ERR_NO_MEMORY;
    /* GSL's default handler aborts; the library never does. */
    gsl_set_error_handler_off();
    const cutune__strategy_type *type =
        check_options(sim, problem, options, &st);
    if (!type)
        return st;
    const cutune_simulate_options o = *options;
    st = cutune__t4_load(o.results_path, problem, &t4, err, sizeof err);
    if (st != CUTUNE_OK)
        return fail(sim, st, "%s", err);
    char differs[1024];
    if (cutune__t4_mismatch(t4, o.results_path, problem, differs,
                            sizeof differs))
        logf_(&o, CUTUNE_LOG_WARN, "%s", differs);
    if (t4->n_outside > 0)
        logf_(&o, CUTUNE_LOG_WARN,
              "%s: %zu recorded configuration%s not "
              "in the space of %s, ignored",
              o.results_path, t4->n_outside,
              t4->n_outside == 1 ? " is" : "s are", problem->origin);

    size_t n = cutune__space_size(problem->space);
    size_t repeat = o.repeat ? o.repeat : 1;
    size_t np = problem->n_params;
    int allocated = record_alloc(&rec, n) == 0;
    scratch = malloc((repeat ? repeat : 1) * sizeof *scratch);
    sim->runs = calloc(repeat, sizeof *sim->runs);
    sim->configs = calloc((repeat + 2) * (np ? np : 1), sizeof *sim->configs);
    if (!allocated || !scratch || !sim->runs || !sim->configs) {
        st = fail(sim, CUTUNE_ERR_NO_MEMORY, "out of memory");
        goto out;
    }
    cutune_simulate_result *r = &sim->result;
    read_record(sim, problem, t4, &rec, repeat, o.objective);
    r->objective = o.objective;
    char why[1024];
    if (cutune__t4_lacks_energy(t4, o.results_path, o.objective, why,
                                sizeof why)) {
        st = fail(sim, CUTUNE_ERR_INVALID_ARGUMENT, "%s", why);
        goto out;
    }
    r->strategy = type->name;
    r->threads = o.threads;
    set_start(sim, problem, &o, repeat);
    cutune__budget budget = simulated_budget(problem, &o, type);
    r->budget = budget.max_evals;
    r->random_best_ms =
        budget.max_evals
            ? cutune__replay_random_best(rec.objective, n, budget.max_evals)
            : NAN;
    for (size_t k = 0; k < repeat; k++) {
        if (replay_one(sim, problem, type, &o, &budget, &rec, k) != 0) {
            st = fail(sim, CUTUNE_ERR_NO_MEMORY, "out of memory");
            goto out;
        }
    }
    summarize_runs(sim, scratch, repeat);
    sim->has_result = 1;

    const cutune_simulate_run *win = NULL;
    for (size_t k = 0; k < repeat; k++)
        if (sim->runs[k].best && (!win || sim->runs[k].best_ms < win->best_ms))
            win = &sim->runs[k];
    if (!win) {
        st = fail(sim, CUTUNE_ERR_NO_VALID_RESULT,
                  "no valid configuration: every evaluated configuration "
                  "failed");
        goto out;
    }
    st = o.write_cache ? append_winner(sim, problem, &o, win) : CUTUNE_OK;
out:
    free(scratch);
    record_free(&rec);
    cutune__t4_free(t4);
    return st;
}

const cutune_simulate_result *
cutune_simulation_result(const cutune_simulation *sim)
{
    return sim && sim->has_result ? &sim->result : NULL;
}

const char *cutune_simulation_errmsg(const cutune_simulation *sim)
{
    if (!sim)
        return "out of memory";
    return sim->errmsg ? sim->errmsg : "";
}

void cutune_simulation_destroy(cutune_simulation *sim)
{
    if (!sim)
        return;
    free(sim->configs);
    free(sim->runs);
    free(sim->errmsg);
    free(sim);
}
