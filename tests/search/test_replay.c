/* Replay on small synthetic records with answers worked out by hand: the
 * expected best of random search (B), the score, evaluations to come
 * within 1/2/5% of the optimum, failures and unrecorded configurations,
 * a time budget on recorded costs, and the costs a strategy is told. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include <gsl/gsl_errno.h>

#include "../check.h"
#include "line_space.h"
#include "replay/replay.h"

static void test_random_best(void)
{
    /* {1, 2, fail, 4}, two draws: the six pairs give best 1, 1, 1, 2, 2
     * and 4, so B = 11/6; no pair fails entirely. */
    const double a[] = {1, 2, INFINITY, 4};
    CHECK_NEAR(cutune__replay_random_best(a, 4, 2), 11.0 / 6.0, 1e-12);
    /* One draw: the mean of the successes. */
    CHECK_NEAR(cutune__replay_random_best(a, 4, 1), 7.0 / 3.0, 1e-12);
    /* All of them: the optimum; more than all reads as all. */
    CHECK_NEAR(cutune__replay_random_best(a, 4, 4), 1.0, 1e-12);
    CHECK_NEAR(cutune__replay_random_best(a, 4, 9), 1.0, 1e-12);
    /* {3, fail, fail}, two draws: {3, f}, {3, f}, {f, f}; given a success,
     * B = 3. Unrecorded (NaN) entries are not drawn at all. */
    const double b[] = {3, INFINITY, NAN, INFINITY, NAN};
    CHECK_NEAR(cutune__replay_random_best(b, 5, 2), 3.0, 1e-12);
    /* Ties: {1, 1, 5}, two draws: pairs 11, 15, 15 give 1. */
    const double c[] = {5, 1, 1};
    CHECK_NEAR(cutune__replay_random_best(c, 3, 2), 1.0, 1e-12);
    /* {1, 2, 3, 4, 5}, two draws: best k with probability
     * (5 - k) / 10: B = (4 + 6 + 6 + 4) / 10 = 2. */
    const double d[] = {4, 2, 5, 1, 3};
    CHECK_NEAR(cutune__replay_random_best(d, 5, 2), 2.0, 1e-12);
    const double none[] = {INFINITY, NAN};
    CHECK(isnan(cutune__replay_random_best(none, 2, 1)));
    CHECK(isnan(cutune__replay_random_best(d, 5, 0)));

    CHECK_NEAR(cutune__replay_score(2.0, 1.0, 1.0), 1.0, 1e-12);
    CHECK_NEAR(cutune__replay_score(2.0, 2.0, 1.0), 0.0, 1e-12);
    CHECK_NEAR(cutune__replay_score(2.0, 1.5, 1.0), 0.5, 1e-12);
    CHECK_NEAR(cutune__replay_score(2.0, 3.0, 1.0), -1.0, 1e-12);
    CHECK(isnan(cutune__replay_score(2.0, INFINITY, 1.0)));
    CHECK(isnan(cutune__replay_score(1.0, 1.0, 1.0)));

    size_t at;
    CHECK_NEAR(cutune__replay_optimum(d, 5, &at), 1.0, 0);
    CHECK_INT(at, 3);
    CHECK(isinf(cutune__replay_optimum(none, 2, &at)));
    CHECK_INT(at, SIZE_MAX);
}

static void test_run(void)
{
    cutune__value v[10];
    cutune__space *s = line_space(10, v);
    CHECK(s != NULL);
    if (!s)
        return;
    /* brute_force sweeps 0..9 after the start. */
    const double obj[10] = {2.0,   INFINITY, 1.5, NAN, 1.03,
                            1.015, 9.0,      1.0, 1.2, 1.1};
    const double cost[10] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
    cutune__replay_options o = {.max_evals = 0,
                                .max_seconds = 0,
                                .batch = 1,
                                .seed = 1,
                                .start = SIZE_MAX,
                                .params = NULL,
                                .try_cost = NULL};
    cutune__replay_result r;
    double trace[12];
    CHECK_INT(cutune__replay_run(cutune__strategy_brute_force, s, obj, cost,
                                 &o, &r, trace, 12),
              0);
    CHECK_INT(r.search.evaluations, 10);
    CHECK_INT(r.search.best, 7);
    CHECK_NEAR(r.search.best_objective, 1.0, 0);
    CHECK_INT(r.failures, 2); /* the recorded failure and the NaN */
    CHECK_INT(r.unrecorded, 1);
    CHECK_NEAR(r.seconds, 10.0, 1e-12);
    /* Within 5% after 5 (1.03), 2% after 6 (1.015), 1% after 8 (1.0). */
    CHECK_INT(r.evals_within[2], 5);
    CHECK_INT(r.evals_within[1], 6);
    CHECK_INT(r.evals_within[0], 8);
    CHECK_NEAR(trace[0], 2.0, 0);
    CHECK_NEAR(trace[1], 2.0, 0);
    CHECK_NEAR(trace[2], 1.5, 0);
    CHECK_NEAR(trace[7], 1.0, 0);
    CHECK_NEAR(trace[11], 1.0, 0);

    /* An evaluation budget, and a start. */
    o.max_evals = 3;
    o.start = 9;
    CHECK_INT(cutune__replay_run(cutune__strategy_brute_force, s, obj, cost,
                                 &o, &r, NULL, 0),
              0);
    CHECK_INT(r.search.evaluations, 3);
    CHECK_INT(r.search.best, 9);
    CHECK_INT(r.evals_within[2], SIZE_MAX);

    /* Simulated time: 3.5 s lets four evaluations start. */
    o.max_evals = 0;
    o.start = SIZE_MAX;
    o.max_seconds = 3.5;
    CHECK_INT(cutune__replay_run(cutune__strategy_brute_force, s, obj, cost,
                                 &o, &r, NULL, 0),
              0);
    CHECK_INT(r.search.evaluations, 4);
    CHECK_NEAR(r.seconds, 4.0, 1e-12);
    CHECK_INT(r.search.best, 2);

    /* Every strategy, reproducibly, with failures in the record. */
    for (size_t i = 0; cutune__strategies[i]; i++) {
        cutune__replay_result a, b;
        cutune__replay_options ro = {.max_evals = 6,
                                     .max_seconds = 0,
                                     .batch = 2,
                                     .seed = 42,
                                     .start = SIZE_MAX,
                                     .params = NULL,
                                     .try_cost = NULL};
        CHECK_INT(cutune__replay_run(cutune__strategies[i], s, obj, NULL, &ro,
                                     &a, NULL, 0),
                  0);
        CHECK_INT(cutune__replay_run(cutune__strategies[i], s, obj, NULL, &ro,
                                     &b, NULL, 0),
                  0);
        CHECK_INT(a.search.evaluations, 6);
        CHECK_INT(a.search.best, b.search.best);
        CHECK_INT(a.failures, b.failures);
    }

    /* Nothing runs: no best, nothing within reach, a clean end. */
    const double fail[10] = {INFINITY, INFINITY, INFINITY, INFINITY, INFINITY,
                             INFINITY, INFINITY, INFINITY, INFINITY, INFINITY};
    o.max_seconds = 0;
    o.max_evals = 0;
    CHECK_INT(cutune__replay_run(cutune__strategy_default, s, fail, NULL, &o,
                                 &r, NULL, 0),
              0);
    CHECK_INT(r.search.evaluations, 10);
    CHECK_INT(r.search.best, SIZE_MAX);
    CHECK_INT(r.failures, 10);
    CHECK_INT(r.evals_within[0], SIZE_MAX);
    cutune__space_free(s);
}

/* What the strategy is told each configuration cost: `try_cost` when
 * given (the clock still spends `cost`), else `cost`; a configuration
 * without a finite cost is not told. */
static double heard[4];

static int listener_init(void *state, const cutune__strategy_ctx *ctx)
{
    (void)ctx;
    *(size_t *)state = 0;
    for (size_t i = 0; i < 4; i++)
        heard[i] = NAN;
    return 0;
}

static size_t listener_next(void *state, size_t *out, size_t cap)
{
    size_t *next = state;
    (void)cap;
    if (*next >= 4)
        return 0;
    out[0] = (*next)++;
    return 1;
}

static void listener_report(void *state, size_t index, double objective)
{
    (void)state;
    (void)index;
    (void)objective;
}

static void listener_destroy(void *state)
{
    (void)state;
}

static void listener_cost(void *state, size_t index, double seconds)
{
    (void)state;
    if (index < 4)
        heard[index] = seconds;
}

static const cutune__strategy_type listener_type = {
    .name = "listener",
    .state_size = sizeof(size_t),
    .init = listener_init,
    .next = listener_next,
    .report = listener_report,
    .destroy = listener_destroy,
    .cost = listener_cost,
};

static void test_costs_told(void)
{
    cutune__value v[4];
    cutune__space *s = line_space(4, v);
    CHECK(s != NULL);
    if (!s)
        return;
    const double obj[4] = {3, 2, INFINITY, 1};
    const double cost[4] = {1.0, 2.0, 0.5, NAN};
    const double try_cost[4] = {0.25, 0.5, 0.125, 0.75};
    cutune__replay_options o = {.max_evals = 0,
                                .max_seconds = 0,
                                .batch = 1,
                                .seed = 1,
                                .start = SIZE_MAX,
                                .params = NULL,
                                .try_cost = try_cost};
    cutune__replay_result r;
    CHECK_INT(
        cutune__replay_run(&listener_type, s, obj, cost, &o, &r, NULL, 0), 0);
    CHECK_INT(r.search.evaluations, 4);
    CHECK_NEAR(r.seconds, 3.5, 1e-12);
    for (size_t i = 0; i < 4; i++)
        CHECK_NEAR(heard[i], try_cost[i], 1e-12);
    o.try_cost = NULL;
    CHECK_INT(
        cutune__replay_run(&listener_type, s, obj, cost, &o, &r, NULL, 0), 0);
    for (size_t i = 0; i < 3; i++)
        CHECK_NEAR(heard[i], cost[i], 1e-12);
    CHECK(isnan(heard[3]));
    cutune__space_free(s);
}

int main(void)
{
    gsl_set_error_handler_off();
    test_random_best();
    test_run();
    test_costs_told();
    return check_finish();
}
