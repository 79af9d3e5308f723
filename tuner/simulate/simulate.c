/* cutune_simulate: replay of recorded T4 results; see cutune.h. The
 * strategies run through search/replay.c exactly as they would against a
 * GPU, on objectives read from the file. */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <gsl/gsl_errno.h>

#include "cutune/simulate.h"
#include "problem.h"
#include "replay.h"
#include "strategy.h"
#include "t4.h"

struct cutune_simulation {
    char *errmsg;
    int has_result;
    cutune_simulate_result result;
    cutune_simulate_run *runs;
    cutune_param_value *configs;  /* (n_runs + 1) * n_params: runs, then
                                     the optimum */
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
static cutune_status fail(cutune_simulation *sim, cutune_status st,
                          const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    free(sim->errmsg);
    sim->errmsg = malloc(strlen(buf) + 1);
    if (sim->errmsg)
        strcpy(sim->errmsg, buf);
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
        out[j] = f == 0 || v[lo] == v[hi] ? v[lo]
                                          : v[lo] + f * (v[hi] - v[lo]);
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

static cutune_status append_winner(cutune_simulation *sim,
                                   const cutune_problem *problem,
                                   const cutune_simulate_options *o,
                                   const cutune_simulate_run *win)
{
    cutune_cache *cache = NULL;
    cutune_cache_record rec;
    memset(&rec, 0, sizeof rec);
    snprintf(rec.device.name, sizeof rec.device.name, "%s", o->device_name);
    snprintf(rec.device.cutune_version, sizeof rec.device.cutune_version,
             "%s", CUTUNE_VERSION_STRING);
    rec.device.simulated = 1;
    rec.problem_name = problem->name ? problem->name : "";
    rec.source_hash = problem->source_hash;
    rec.problem_size = problem->problem_size;
    rec.n_problem_size = problem->n_problem_size;
    rec.compiler_options = "";
    rec.config = win->best;
    rec.n_config = sim->result.n_params;
    rec.time_ms = win->best_ms;
    rec.time_min_ms = win->best_ms;
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

cutune_status cutune_simulate(const cutune_problem *problem,
                              const cutune_simulate_options *options,
                              cutune_simulation **out)
{
    cutune_simulate_options o;
    cutune_simulation *sim;
    cutune__t4 *t4 = NULL;
    double *objective = NULL, *cost = NULL, *scratch = NULL;
    char err[512];
    cutune_status st;

    if (!out)
        return CUTUNE_ERR_INVALID_ARGUMENT;
    *out = sim = calloc(1, sizeof *sim);
    if (!sim)
        return CUTUNE_ERR_NO_MEMORY;
    /* GSL's default handler aborts; the library never does. */
    gsl_set_error_handler_off();
    if (!problem || !problem->space || !options || !options->results_path)
        return fail(sim, CUTUNE_ERR_INVALID_ARGUMENT,
                    "cutune_simulate: a problem and a results file are "
                    "needed");
    o = *options;
    if (o.write_cache && (!o.device_name || !*o.device_name))
        return fail(sim, CUTUNE_ERR_INVALID_ARGUMENT,
                    "writing a simulated result to the cache needs a device "
                    "name");
    if (o.max_fraction < 0 || o.max_fraction > 1 || o.max_seconds < 0)
        return fail(sim, CUTUNE_ERR_INVALID_ARGUMENT,
                    "budget: the fraction of the space must lie in (0, 1] "
                    "and the time must not be negative");
    const cutune__strategy_type *type =
        o.strategy ? cutune__strategy_find(o.strategy) : cutune__strategies[0];
    if (!type) {
        char names[256] = "";
        for (size_t i = 0; cutune__strategies[i]; i++) {
            size_t len = strlen(names);
            snprintf(names + len, sizeof names - len, "%s%s", i ? ", " : "",
                     cutune__strategies[i]->name);
        }
        return fail(sim, CUTUNE_ERR_INVALID_ARGUMENT,
                    "unknown strategy '%s' (known: %s)", o.strategy, names);
    }

    const cutune__space *space = problem->space;
    size_t n = cutune__space_size(space);
    if (n == 0)
        return fail(sim, CUTUNE_ERR_EMPTY_SPACE, "%s: no configuration "
                    "satisfies the conditions", problem->origin);
    st = cutune__t4_load(o.results_path, problem, &t4, err, sizeof err);
    if (st != CUTUNE_OK)
        return fail(sim, st, "%s", err);
    if (t4->n_outside > 0)
        logf_(&o, CUTUNE_LOG_WARN, "%s: %zu recorded configuration%s not "
              "in the space of %s, ignored", o.results_path, t4->n_outside,
              t4->n_outside == 1 ? " is" : "s are", problem->origin);

    size_t repeat = o.repeat ? o.repeat : 1;
    size_t np = problem->n_params;
    objective = malloc(n * sizeof *objective);
    cost = calloc(n, sizeof *cost);
    scratch = malloc((repeat ? repeat : 1) * sizeof *scratch);
    sim->runs = calloc(repeat, sizeof *sim->runs);
    sim->configs = calloc((repeat + 1) * (np ? np : 1),
                          sizeof *sim->configs);
    if (!objective || !cost || !scratch || !sim->runs || !sim->configs) {
        st = fail(sim, CUTUNE_ERR_NO_MEMORY, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < n; i++)
        objective[i] = NAN;
    cutune_simulate_result *r = &sim->result;
    for (size_t e = 0; e < t4->n_entries; e++) {
        const cutune__t4_entry *en = &t4->entries[e];
        size_t i = en->config_index;
        if (i >= n)
            continue;
        double obj = en->outcome == CUTUNE_OUTCOME_CORRECT &&
                             isfinite(en->time_ms)
                         ? en->time_ms
                         : INFINITY;
        /* A configuration recorded twice counts once, at its better. */
        if (isnan(objective[i])) {
            r->recorded++;
            objective[i] = obj;
        } else if (obj < objective[i]) {
            objective[i] = obj;
        }
        double c = en->compile_ms;
        for (size_t k = 0; k < en->n_runtimes; k++)
            if (isfinite(en->runtimes[k]))
                c += en->runtimes[k];
        cost[i] = c / 1000.0;
    }
    size_t opt_index;
    r->optimum_ms = cutune__replay_optimum(objective, n, &opt_index);
    for (size_t i = 0; i < n; i++)
        r->correct += isfinite(objective[i]) != 0;
    r->strategy = type->name;
    r->space_size = n;
    r->n_params = np;
    if (opt_index != SIZE_MAX) {
        cutune__problem_config_values(problem, opt_index,
                                      sim->configs + repeat * np);
        r->optimum = sim->configs + repeat * np;
    }

    /* The budget, as a tune would resolve it. */
    size_t budget = o.max_evals;
    if (o.max_fraction > 0) {
        size_t f = (size_t)ceil(o.max_fraction * (double)n);
        if (f < 1)
            f = 1;
        if (budget == 0 || f < budget)
            budget = f;
    }
    if (budget == 0 && o.max_seconds <= 0 &&
        strcmp(type->name, "brute_force") != 0)
        budget = CUTUNE_DEFAULT_BUDGET;
    r->budget = budget;
    r->random_best_ms = budget ? cutune__replay_random_best(objective, n,
                                                            budget)
                               : NAN;

    for (size_t k = 0; k < repeat; k++) {
        cutune_simulate_run *run = &sim->runs[k];
        cutune__replay_options ro = {budget, o.max_seconds, o.batch,
                                     o.seed + k, SIZE_MAX};
        cutune__replay_result rr;
        int rc = cutune__replay_run(type, space, objective, cost, &ro, &rr,
                                    NULL, 0);
        if (rc == -1) {
            st = fail(sim, CUTUNE_ERR_NO_MEMORY, "out of memory");
            goto out;
        }
        run->seed = o.seed + k;
        run->evaluations = rr.search.evaluations;
        run->failures = rr.failures;
        run->best_ms = rr.search.best_objective;
        run->best_index = rr.search.best;
        run->seconds = rr.seconds;
        if (rr.search.best != SIZE_MAX) {
            cutune__problem_config_values(problem, rr.search.best,
                                          sim->configs + k * np);
            run->best = sim->configs + k * np;
            run->ratio = r->optimum_ms / run->best_ms;
        }
        run->random_best_ms =
            cutune__replay_random_best(objective, n, run->evaluations);
        run->score = cutune__replay_score(run->random_best_ms, run->best_ms,
                                          r->optimum_ms);
        for (int w = 0; w < CUTUNE_SIMULATE_N_WITHIN; w++)
            run->evals_within[w] = rr.evals_within[w] == SIZE_MAX
                                       ? 0
                                       : rr.evals_within[w];
    }
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
    free(cost);
    free(objective);
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
