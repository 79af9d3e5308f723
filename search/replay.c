/* Replay of recorded results; see replay.h. */
#include "replay.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

const double cutune__replay_within[CUTUNE__REPLAY_N_WITHIN] = {0.01, 0.02,
                                                               0.05};

double cutune__replay_optimum(const double *objective, size_t n,
                              size_t *index)
{
    double best = INFINITY;
    size_t at = SIZE_MAX;
    for (size_t i = 0; i < n; i++) {
        if (isfinite(objective[i]) && (at == SIZE_MAX || objective[i] < best)) {
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
} replay_ctx;

static int replay_eval(void *user, const size_t *indices, size_t n,
                       double *objectives, size_t *done,
                       cutune__eval_more_fn more, void *more_ctx)
{
    replay_ctx *rc = user;
    cutune__replay_result *r = rc->result;
    size_t i;
    for (i = 0; i < n; i++) {
        /* A time budget stops before the evaluation that would start
         * after it ran out; the first one always runs. */
        if (rc->max_seconds > 0 && rc->evaluations > 0 &&
            r->seconds >= rc->max_seconds)
            break;
        size_t idx = indices[i];
        double o = rc->objective[idx];
        if (isnan(o)) {
            r->unrecorded++;
            o = INFINITY;
        }
        if (!isfinite(o))
            r->failures++;
        if (rc->cost && isfinite(rc->cost[idx]))
            r->seconds += rc->cost[idx];
        if (rc->try_cost && isfinite(rc->try_cost[idx]))
            cutune__search_cost(more_ctx, i, rc->try_cost[idx]);
        objectives[i] = o;
        rc->evaluations++;
        if (o < rc->best)
            rc->best = o;
        if (rc->best_after && rc->evaluations <= rc->best_after_len)
            rc->best_after[rc->evaluations - 1] = rc->best;
        for (size_t w = 0; w < CUTUNE__REPLAY_N_WITHIN; w++)
            if (r->evals_within[w] == SIZE_MAX && isfinite(rc->best) &&
                rc->best <= (1.0 + cutune__replay_within[w]) * rc->optimum)
                r->evals_within[w] = rc->evaluations;
        if (more && !more(more_ctx, i, o)) {
            i++;
            break;
        }
    }
    *done = i;
    return 0;
}

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
        result->evals_within[w] = SIZE_MAX;
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
    so.start = SIZE_MAX;
    if (options) {
        so.max_evals = options->max_evals;
        so.batch = options->batch;
        so.seed = options->seed;
        so.start = options->start;
        so.params = options->params;
    }
    int ret = cutune__search_run(type, space, &so, replay_eval, &rc,
                                 &result->search);
    if (best_after)
        for (size_t i = rc.evaluations; i < best_after_len; i++)
            best_after[i] = rc.best;
    return ret;
}
