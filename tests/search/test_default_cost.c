/* The default strategy's cost_power (search/strategy/default.h): with an
 * evaluation budget it changes nothing, proposal for proposal, whether
 * the evaluator reports costs or not; against a time limit, on a space
 * with a planted cost structure (a parameter whose upper half of values
 * costs ten times as much to try and changes nothing in the runtime), it
 * spends fewer of its seconds in the dear half and so evaluates more
 * configurations within the limit. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_errno.h>

#include "../check.h"
#include "replay/replay.h"
#include "strategy/default.h"
#include "strategy/strategy.h"

#define N_W    8
#define N_H    8
#define N_TILE 8
#define SEEDS  20

static cutune__value w_values[N_W], h_values[N_H], tile_values[N_TILE],
    flag_values[2];

static cutune__value *fill_values(cutune__value *v, int n, long long base)
{
    for (int i = 0; i < n; i++) {
        v[i].type = CUTUNE__V_INT;
        v[i].u.i = base << i;
    }
    return v;
}

static cutune__space *make_space(void)
{
    cutune__param params[] = {
        {"w", fill_values(w_values, N_W, 1), N_W},
        {"h", fill_values(h_values, N_H, 1), N_H},
        {"tile", fill_values(tile_values, N_TILE, 1), N_TILE},
        {"flag", fill_values(flag_values, 2, 1), 2}};
    return cutune__space_create(params, 4, NULL, 0, NULL, 0, NULL);
}

/* A bowl in w and h with its lowest point at (5, 2), the flag 5% either
 * way; the tile does nothing to the runtime. */
static double runtime(const cutune__space *s, size_t index)
{
    const uint32_t *c = cutune__space_config(s, index);
    double w = c[0], h = c[1];
    return (1 + 0.05 * (w - 5) * (w - 5)) * (1 + 0.08 * (h - 2) * (h - 2)) *
           (c[3] ? 1.0 : 1.05);
}

/* The planted cost structure: equal runtimes, the upper half of the
 * tiles ten times as dear to try (a long compile). */
static double try_seconds(const cutune__space *s, size_t index)
{
    return cutune__space_config(s, index)[2] >= N_TILE / 2 ? 1.0 : 0.1;
}

typedef struct logged {
    const cutune__space *s;
    int report_costs;
    size_t *seen;
    size_t n_seen;
} logged;

/* Evaluates the runtime, telling each result's cost first when asked
 * to, and logs the configurations in the order evaluated. */
static int eval_logged(void *user, const size_t *indices, size_t n,
                       double *objectives, size_t *done,
                       cutune__eval_more_fn more, void *more_ctx)
{
    logged *l = user;
    size_t i;
    for (i = 0; i < n; i++) {
        if (l->report_costs)
            cutune__search_cost(more_ctx, i, try_seconds(l->s, indices[i]));
        objectives[i] = runtime(l->s, indices[i]);
        l->seen[l->n_seen++] = indices[i];
        if (more && !more(more_ctx, i, objectives[i])) {
            i++;
            break;
        }
    }
    *done = i;
    return 0;
}

/* With an evaluation budget, the standard settings blind to costs and
 * cost_power 1 with costs reported evaluate the same configurations in
 * the same order, one at a time and in batches. */
static void test_budget_unchanged(const cutune__space *s)
{
    const size_t budget = 120;
    cutune__default_params on = cutune__default_params_std;
    CHECK_INT(cutune__default_params_set(&on, "cost_power", 1), 0);
    size_t *a = malloc(budget * sizeof *a), *b = malloc(budget * sizeof *b);
    CHECK(a && b);
    size_t same = 0, runs = 0;
    for (size_t batch = 1; a && b && batch <= 8; batch *= 8)
        for (uint64_t seed = 1; seed <= 4; seed++, runs++) {
            cutune__search_options o_off = {budget, batch, seed, SIZE_MAX,
                                            NULL};
            cutune__search_options o_on = {budget, batch, seed, SIZE_MAX, &on};
            cutune__search_result r_off, r_on;
            logged l_off = {s, 0, a, 0}, l_on = {s, 1, b, 0};
            CHECK_INT(cutune__search_run(cutune__strategy_default, s, &o_off,
                                         eval_logged, &l_off, &r_off),
                      0);
            CHECK_INT(cutune__search_run(cutune__strategy_default, s, &o_on,
                                         eval_logged, &l_on, &r_on),
                      0);
            CHECK_INT(l_off.n_seen, budget);
            same += l_off.n_seen == l_on.n_seen &&
                    memcmp(a, b, budget * sizeof *a) == 0;
        }
    CHECK_INT(same, runs);
    free(a);
    free(b);
}

/* Seconds of the time limit: about a hundred evaluations when nearly
 * half of them are dear. */
#define LIMIT_S 50.0

/* Against the clock: evaluations made within LIMIT_S and the share of
 * them in the dear half, per seed, with cost_power `power`. */
static void clock_runs(const cutune__space *s, const double *obj,
                       const double *cost, double power, double *evals,
                       double *dear_share, size_t *found)
{
    cutune__default_params prm = cutune__default_params_std;
    CHECK_INT(cutune__default_params_set(&prm, "cost_power", power), 0);
    *evals = *dear_share = 0;
    *found = 0;
    double optimum = cutune__replay_optimum(obj, cutune__space_size(s), NULL);
    for (uint64_t seed = 1; seed <= SEEDS; seed++) {
        cutune__replay_options o = {.max_seconds = LIMIT_S,
                                    .batch = 1,
                                    .seed = seed,
                                    .start = SIZE_MAX,
                                    .params = &prm};
        cutune__replay_result r;
        CHECK_INT(cutune__replay_run(cutune__strategy_default, s, obj, cost,
                                     &o, &r, NULL, 0),
                  0);
        *evals += (double)r.search.evaluations / SEEDS;
        /* Seconds spent = 0.1 e + 0.9 dear. */
        double dear = (r.seconds - 0.1 * (double)r.search.evaluations) / 0.9;
        *dear_share += dear / (double)r.search.evaluations / SEEDS;
        *found += r.search.best_objective <= optimum;
    }
}

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
    for (size_t i = 0; i < n; i++) {
        obj[i] = runtime(s, i);
        cost[i] = try_seconds(s, i);
    }
    double evals_off, evals_on, dear_off, dear_on;
    size_t found_off, found_on;
    clock_runs(s, obj, cost, 0, &evals_off, &dear_off, &found_off);
    clock_runs(s, obj, cost, 1, &evals_on, &dear_on, &found_on);
    printf("in %.0f s over %d seeds: cost_power 0: %.1f evaluations, %.2f "
           "of them dear, optimum in %zu; cost_power 1: %.1f, %.2f, %zu\n",
           LIMIT_S, SEEDS, evals_off, dear_off, found_off, evals_on, dear_on,
           found_on);
    CHECK(dear_on < 0.9 * dear_off);
    CHECK(evals_on > 1.1 * evals_off);
    free(obj);
    free(cost);
}

static void test_setting(void)
{
    cutune__default_params p = cutune__default_params_std;
    CHECK_INT(cutune__default_params_set(&p, "cost_power", 0.2), 0);
    CHECK(p.cost_power == 0.2);
    CHECK_INT(cutune__default_params_set(&p, "cost_power", -0.1), -1);
    CHECK_INT(cutune__default_params_set(&p, "cost_power", 5), -1);
    CHECK(p.cost_power == 0.2);
}

int main(void)
{
    gsl_set_error_handler_off();
    test_setting();
    cutune__space *s = make_space();
    CHECK(s != NULL);
    if (s) {
        test_budget_unchanged(s);
        test_against_clock(s);
    }
    cutune__space_free(s);
    return check_finish();
}
