/* Replay of recorded results; see replay.h. */
#include "replay.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "replay_clock.h"

const double cutune__replay_within[CUTUNE__REPLAY_N_WITHIN] = {0.01, 0.02,
                                                               0.05};
const double cutune__replay_ratios[CUTUNE__REPLAY_N_RATIOS] = {0.95, 0.98,
                                                               0.99};

double cutune__replay_optimum(const double *objective, size_t n, size_t *index)
{
    double best = INFINITY;
    size_t at = CUTUNE__NONE;
    for (size_t i = 0; i < n; i++) {
        if (isfinite(objective[i]) &&
            (at == CUTUNE__NONE || objective[i] < best)) {
            best = objective[i];
            at = i;
        }
    }
    if (index)
        *index = at;
    return best;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

double cutune__replay_random_best(const double *objective, size_t n,
                                  size_t budget)
{
    size_t m = 0, k = 0;
    for (size_t i = 0; i < n; i++) {
        if (isnan(objective[i]))
            continue;
        m++;
        k += isfinite(objective[i]) != 0;
    }
    if (k == 0 || budget == 0)
        return NAN;
    if (budget > m)
        budget = m;
    double *v = malloc(k * sizeof *v);
    if (!v)
        return NAN;
    k = 0;
    for (size_t i = 0; i < n; i++)
        if (isfinite(objective[i]))
            v[k++] = objective[i];
    qsort(v, k, sizeof *v, by_value);
    double p = (double)budget / (double)m, sum_p = 0, sum_pv = 0;
    for (size_t i = 1; i <= k && p > 0; i++) {
        sum_p += p;
        sum_pv += p * v[i - 1];
        /* From P_i to P_{i+1}, which is zero once fewer than budget
         * configurations rank below v_i. */
        double num = (double)m - (double)i - (double)budget + 1.0;
        p = num > 0 ? p * num / (double)(m - i) : 0;
    }
    free(v);
    return sum_p > 0 ? sum_pv / sum_p : NAN;
}

double cutune__replay_score(double random_best, double found, double optimum)
{
    if (!isfinite(found) || !isfinite(random_best) || random_best == optimum)
        return NAN;
    return (random_best - found) / (random_best - optimum);
}

typedef struct replay_ctx {
    const double *objective;
    const double *cost;
    const double *try_cost; /* told to the strategy */
    double max_seconds;
    double optimum;
    cutune__replay_result *result;
    size_t evaluations;
    double best;
    double *best_after;
    size_t best_after_len;
    cutune__clock *clock; /* NULL: no clock */
    size_t *evaluated;    /* with the clock: in order, for the final
                             round */
} replay_ctx;

/* The moment of each result on the clock: when the best first reaches
 * each fraction of the optimum. */
static void clock_result(replay_ctx *rc, size_t idx, double t)
{
    cutune__replay_result *r = rc->result;
    rc->evaluated[rc->evaluations - 1] = idx;
    for (size_t k = 0; k < CUTUNE__REPLAY_N_RATIOS; k++)
        if (isinf(r->seconds_to[k]) && isfinite(rc->best) &&
            rc->optimum >= cutune__replay_ratios[k] * rc->best)
            r->seconds_to[k] = t;
}

/* The final round as the tuner runs it, on the clock: the fastest few
 * measured again, each pass as long as its measurement was. */
static double clock_final(const replay_ctx *rc)
{
    double fastest = rc->best, sum = 0;
    size_t taken = 0;
    if (!isfinite(fastest))
        return 0;
    double prev = -INFINITY;
    while (taken < CUTUNE__FINAL_MAX) {
        size_t pick = CUTUNE__NONE;
        for (size_t i = 0; i < rc->evaluations; i++) {
            double o = rc->objective[rc->evaluated[i]];
            if (isfinite(o) && o > prev &&
                o <= fastest * (1.0 + CUTUNE__FINAL_MARGIN) &&
                (pick == CUTUNE__NONE || o < rc->objective[pick]))
                pick = rc->evaluated[i];
        }
        if (pick == CUTUNE__NONE)
            break;
        prev = rc->objective[pick];
        const double *m = rc->clock->measure_s;
        if (m && isfinite(m[pick]))
            sum += CUTUNE__FINAL_PASSES * m[pick];
        taken++;
    }
    return sum;
}

/* Whether the run's time is up: a time budget stops before the
 * evaluation that would start after it ran out; the first one always
 * runs. On the clock it is the modelled wall time, as a tune's is. */
static int time_is_up(const replay_ctx *rc)
{
    double spent = rc->clock ? rc->clock->now : rc->result->seconds;
    return rc->max_seconds > 0 && rc->evaluations > 0 &&
           spent >= rc->max_seconds;
}

/* The recorded result of `idx`, counted; `t` is when it is in on the
 * clock (ignored without one). */
static double take(replay_ctx *rc, size_t idx, double t)
{
    cutune__replay_result *r = rc->result;
    double o = rc->objective[idx];
    if (isnan(o)) {
        r->unrecorded++;
        o = INFINITY;
    }
    if (!isfinite(o))
        r->failures++;
    if (rc->cost && isfinite(rc->cost[idx]))
        r->seconds += rc->cost[idx];
    rc->evaluations++;
    if (o < rc->best)
        rc->best = o;
    if (rc->best_after && rc->evaluations <= rc->best_after_len)
        rc->best_after[rc->evaluations - 1] = rc->best;
    if (rc->clock)
        clock_result(rc, idx, t);
    for (size_t w = 0; w < CUTUNE__REPLAY_N_WITHIN; w++)
        if (r->evals_within[w] == CUTUNE__NONE && isfinite(rc->best) &&
            rc->best <= (1.0 + cutune__replay_within[w]) * rc->optimum)
            r->evals_within[w] = rc->evaluations;
    return o;
}

static int replay_eval(void *user, const size_t *indices, size_t n,
                       double *objectives, size_t *done,
                       cutune__eval_more_fn more, void *more_ctx)
{
    replay_ctx *rc = user;
    size_t i;
    if (rc->clock && cutune__clock_batch(rc->clock, indices, n, more_ctx))
        return -1;
    for (i = 0; i < n && !time_is_up(rc); i++) {
        size_t idx = indices[i];
        if (rc->try_cost && isfinite(rc->try_cost[idx]))
            cutune__search_cost(more_ctx, i, rc->try_cost[idx]);
        double t = rc->clock ? cutune__clock_measure(rc->clock, idx) : 0;
        objectives[i] = take(rc, idx, t);
        if (more && !more(more_ctx, i, objectives[i])) {
            i++;
            break;
        }
    }
    *done = i;
    return 0;
}

/* The async evaluator on the clock (cutune__search_run_async). */
static int replay_submit(void *user, size_t index)
{
    replay_ctx *rc = user;
    return cutune__clock_submit(rc->clock, index);
}

static int replay_result(void *user, size_t *index, double *objective,
                         double *cost)
{
    replay_ctx *rc = user;
    if (time_is_up(rc))
        return 1;
    double t = cutune__clock_next(rc->clock, index);
    if (*index == CUTUNE__NONE)
        return -1;
    *cost = rc->try_cost && isfinite(rc->try_cost[*index])
                ? rc->try_cost[*index]
                : NAN;
    *objective = take(rc, *index, t);
    return 0;
}

static size_t replay_window(void *user)
{
    replay_ctx *rc = user;
    return cutune__clock_window_now(rc->clock);
}

static const cutune__async_eval replay_async = {replay_submit, replay_result,
                                                replay_window};

int cutune__replay_run(const cutune__strategy_type *type,
                       const cutune__space *space, const double *objective,
                       const double *cost,
                       const cutune__replay_options *options,
                       cutune__replay_result *result, double *best_after,
                       size_t best_after_len)
{
    cutune__replay_result local;
    replay_ctx rc;
    cutune__search_options so;
    size_t n = cutune__space_size(space);

    if (!result)
        result = &local;
    memset(result, 0, sizeof *result);
    for (size_t w = 0; w < CUTUNE__REPLAY_N_WITHIN; w++)
        result->evals_within[w] = CUTUNE__NONE;
    memset(&rc, 0, sizeof rc);
    rc.objective = objective;
    rc.cost = cost;
    rc.try_cost = options && options->try_cost ? options->try_cost : cost;
    rc.max_seconds = options ? options->max_seconds : 0;
    rc.optimum = cutune__replay_optimum(objective, n, NULL);
    rc.result = result;
    rc.best = INFINITY;
    rc.best_after = best_after;
    rc.best_after_len = best_after_len;
    memset(&so, 0, sizeof so);
    so.start = CUTUNE__NONE;
    if (options) {
        so.max_evals = options->max_evals;
        so.batch = options->batch;
        so.seed = options->seed;
        so.start = options->start;
        so.params = options->params;
    }
    cutune__clock clock;
    if (options && options->threads > 0) {
        for (size_t k = 0; k < CUTUNE__REPLAY_N_RATIOS; k++)
            result->seconds_to[k] = INFINITY;
        rc.evaluated = malloc((n ? n : 1) * sizeof *rc.evaluated);
        if (!rc.evaluated ||
            cutune__clock_init(&clock, n, options->threads, options->compile_s,
                               options->measure_s, options->setup_s) != 0) {
            free(rc.evaluated);
            return -1;
        }
        rc.clock = &clock;
    }
    int ret = rc.clock && type->async
                  ? cutune__search_run_async(type, space, &so, &replay_async,
                                             &rc, &result->search)
                  : cutune__search_run(type, space, &so, replay_eval, &rc,
                                       &result->search);
    if (best_after)
        for (size_t i = rc.evaluations; i < best_after_len; i++)
            best_after[i] = rc.best;
    if (rc.clock) {
        const cutune__order_stats *st = &clock.order.stats;
        result->final_s = clock_final(&rc);
        result->wall_s = clock.now + result->final_s;
        result->gpu_wait_s = clock.gpu_wait_s;
        result->compile_busy_s = clock.compile_busy_s;
        result->compiles = st->started;
        result->spec_compiles = st->started_spec;
        result->spec_used = st->spec_used;
        cutune__clock_free(&clock);
        free(rc.evaluated);
    }
    return ret;
}
