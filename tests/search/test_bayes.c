/* The Bayesian strategy's settings (search/strategy/bayes.h) and what its two
 * modelling choices are for: on a space where a slow tail (a tenth of the
 * configurations 30x slower) would set the model's variance, and where
 * one parameter with many values barely matters, the strategy as shipped
 * (observations clipped at the median, a length scale per parameter)
 * gets closer to the optimum than the same search with one length scale
 * on raw log times, and than random search. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <gsl/gsl_errno.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>

#include "../check.h"
#include "replay/replay.h"
#include "strategy/bayes.h"
#include "strategy/strategy.h"

#define N_A    16
#define N_B    16
#define N_C    12
#define SEEDS  15
#define BUDGET 60

static cutune__value a_values[N_A], b_values[N_B], c_values[N_C],
    flag_values[2];

static cutune__space *make_space(void)
{
    for (int i = 0; i < N_A; i++) {
        a_values[i].type = CUTUNE__V_INT;
        a_values[i].u.i = 32LL * (i + 1);
    }
    for (int i = 0; i < N_B; i++) {
        b_values[i].type = CUTUNE__V_INT;
        b_values[i].u.i = i + 1;
    }
    for (int i = 0; i < N_C; i++) {
        c_values[i].type = CUTUNE__V_INT;
        c_values[i].u.i = i;
    }
    for (int i = 0; i < 2; i++) {
        flag_values[i].type = CUTUNE__V_INT;
        flag_values[i].u.i = i;
    }
    cutune__param params[] = {{"a", a_values, N_A},
                              {"b", b_values, N_B},
                              {"c", c_values, N_C},
                              {"flag", flag_values, 2}};
    return cutune__space_create(params, 4, NULL, 0, NULL, 0, NULL);
}

/* A smooth bowl in a and b (optimum at a = 10, b = 5) whose fast region
 * differs by a few per cent, a cliff where a + b > 24 (30x slower), c
 * costing 0.2% per step and flag 3%. */
static double objective(const cutune__space *s, size_t index)
{
    const uint32_t *c = cutune__space_config(s, index);
    double a = c[0], b = c[1];
    double t = (1 + 0.004 * (a - 10) * (a - 10)) *
               (1 + 0.006 * (b - 5) * (b - 5)) * (1 + 0.002 * c[2]) *
               (c[3] ? 1.0 : 1.03);
    return a + b > 24 ? 30 * t : t;
}

static int eval_cb(void *user, const size_t *indices, size_t n,
                   double *objectives, size_t *done, cutune__eval_more_fn more,
                   void *more_ctx)
{
    const cutune__space *s = user;
    for (size_t i = 0; i < n; i++) {
        objectives[i] = objective(s, indices[i]);
        if (more && !more(more_ctx, i, objectives[i])) {
            n = i + 1;
            break;
        }
    }
    *done = n;
    return 0;
}

/* Median over the seeds of optimum / best found. */
static double median_ratio(const cutune__strategy_type *t,
                           const cutune__space *s,
                           const cutune__bayes_params *prm, size_t budget)
{
    double opt = INFINITY, r[SEEDS];
    for (size_t i = 0; i < cutune__space_size(s); i++)
        opt = fmin(opt, objective(s, i));
    for (size_t k = 0; k < SEEDS; k++) {
        cutune__search_options o = {budget, 1, k + 1, SIZE_MAX, prm};
        cutune__search_result res;
        CHECK_INT(cutune__search_run(t, s, &o, eval_cb, (void *)s, &res), 0);
        r[k] = opt / res.best_objective;
    }
    gsl_sort(r, 1, SEEDS);
    return gsl_stats_median_from_sorted_data(r, 1, SEEDS);
}

static void test_settings(void)
{
    cutune__bayes_params p = cutune__bayes_params_std;
    CHECK_INT(cutune__bayes_params_set(&p, "clip_quantile", 0.25), 0);
    CHECK(p.clip_quantile == 0.25);
    CHECK_INT(cutune__bayes_params_set(&p, "ard_sweeps", 0), 0);
    CHECK_INT(p.ard_sweeps, 0);
    CHECK_INT(cutune__bayes_params_set(&p, "initial", 30), 0);
    CHECK_INT(p.initial, 30);
    CHECK_INT(cutune__bayes_params_set(&p, "candidates", 16), 0);
    CHECK_INT(p.candidates, 16);
    CHECK_INT(cutune__bayes_params_set(&p, "cost_power", 0.5), 0);
    CHECK(p.cost_power == 0.5);
    CHECK_INT(cutune__bayes_params_set(&p, "cost_power", 5), -1);
    /* Refused, p unchanged. */
    CHECK_INT(cutune__bayes_params_set(&p, "clip_quantile", 0), -1);
    CHECK_INT(cutune__bayes_params_set(&p, "clip_quantile", 1.5), -1);
    CHECK_INT(cutune__bayes_params_set(&p, "initial", 1), -1);
    CHECK_INT(cutune__bayes_params_set(&p, "candidates", 0), -1);
    CHECK_INT(cutune__bayes_params_set(&p, "ard_sweeps", NAN), -1);
    CHECK_INT(cutune__bayes_params_set(&p, "noise", 0.1), -1);
    CHECK(p.clip_quantile == 0.25);
    CHECK_INT(p.initial, 30);
}

static void test_models(const cutune__space *s)
{
    cutune__bayes_params plain = cutune__bayes_params_std;
    plain.clip_quantile = 1;
    plain.ard_sweeps = 0;
    double shipped = median_ratio(cutune__strategy_bayes, s, NULL, BUDGET);
    double raw = median_ratio(cutune__strategy_bayes, s, &plain, BUDGET);
    double random = median_ratio(cutune__strategy_random, s, NULL, BUDGET);
    printf("median opt/found at %d evaluations: bayes %.4f, one length "
           "scale on raw times %.4f, random search %.4f\n",
           BUDGET, shipped, raw, random);
    CHECK(shipped > raw);
    CHECK(shipped > random);
}

/* Against the clock: half the space costs 20 times as much to evaluate
 * (c >= 6: a long compile, say) and holds nothing better, the optimum
 * being at c = 0. With a time limit and no evaluation budget, expected
 * improvement per predicted second makes more evaluations in the same
 * seconds than expected improvement alone, spends fewer of them in the
 * dear half, and gets at least as close to the optimum. With an
 * evaluation budget the costs change nothing. */
#define CLOCK_SECONDS 40.0

static void test_against_clock(const cutune__space *s)
{
    size_t n = cutune__space_size(s);
    double *obj = malloc(n * sizeof *obj), *cost = malloc(n * sizeof *cost);
    CHECK(obj && cost);
    if (!obj || !cost) {
        free(obj);
        free(cost);
        return;
    }
    double opt = INFINITY;
    for (size_t i = 0; i < n; i++) {
        obj[i] = objective(s, i);
        cost[i] = cutune__space_config(s, i)[2] >= 6 ? 2.0 : 0.1;
        opt = fmin(opt, obj[i]);
    }
    cutune__bayes_params blind = cutune__bayes_params_std;
    blind.cost_power = 0;
    double evals[2] = {0, 0}, ratio[2][SEEDS], same = 0;
    for (int k = 0; k < 2; k++)
        for (size_t seed = 0; seed < SEEDS; seed++) {
            cutune__replay_options o = {.max_evals = 0,
                                        .max_seconds = CLOCK_SECONDS,
                                        .batch = 1,
                                        .seed = seed + 1,
                                        .start = SIZE_MAX,
                                        .params = k ? &blind : NULL,
                                        .try_cost = NULL};
            cutune__replay_result r;
            CHECK_INT(cutune__replay_run(cutune__strategy_bayes, s, obj, cost,
                                         &o, &r, NULL, 0),
                      0);
            evals[k] += (double)r.search.evaluations / SEEDS;
            ratio[k][seed] = opt / r.search.best_objective;
        }
    /* An evaluation budget: the same run whether costs are known or not. */
    for (size_t seed = 0; seed < 3; seed++) {
        cutune__replay_options o = {.max_evals = 40,
                                    .max_seconds = 0,
                                    .batch = 1,
                                    .seed = seed + 1,
                                    .start = SIZE_MAX,
                                    .params = NULL,
                                    .try_cost = NULL};
        cutune__replay_result with, without;
        CHECK_INT(cutune__replay_run(cutune__strategy_bayes, s, obj, cost, &o,
                                     &with, NULL, 0),
                  0);
        CHECK_INT(cutune__replay_run(cutune__strategy_bayes, s, obj, NULL, &o,
                                     &without, NULL, 0),
                  0);
        same += with.search.best == without.search.best &&
                with.search.evaluations == without.search.evaluations;
    }
    gsl_sort(ratio[0], 1, SEEDS);
    gsl_sort(ratio[1], 1, SEEDS);
    double m_cost = gsl_stats_median_from_sorted_data(ratio[0], 1, SEEDS);
    double m_blind = gsl_stats_median_from_sorted_data(ratio[1], 1, SEEDS);
    printf("in %.0f simulated seconds: per second %.1f evaluations, median "
           "%.4f; blind to costs %.1f, %.4f\n",
           CLOCK_SECONDS, evals[0], m_cost, evals[1], m_blind);
    CHECK(evals[0] > 1.3 * evals[1]);
    CHECK(m_cost >= m_blind);
    CHECK(same == 3);
    free(obj);
    free(cost);
}

int main(void)
{
    gsl_set_error_handler_off();
    test_settings();
    cutune__space *s = make_space();
    CHECK(s != NULL);
    if (s) {
        test_models(s);
        test_against_clock(s);
    }
    cutune__space_free(s);
    return check_finish();
}
