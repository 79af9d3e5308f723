/* The random-forest strategy (search/strategy/forest.c) on what it is for: a
 * space of code variants (three switches) whose fastest variant is slower than
 * the others in most of its geometry and fastest only at one end of it,
 * as shared memory off was on the hub's convolution spaces. It finds that
 * optimum within 100 evaluations in more seeds than random search does,
 * batches of 8 included; asked for 32 proposals at a time it makes 4; on a
 * space too large to score whole (its sampled pool) it still gets closer than
 * random search. What every strategy must do (no repeats, budgets, seeds,
 * failures) is in test_strategies. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_errno.h>

#include "../check.h"
#include "replay/replay.h"
#include "strategy/strategy.h"

#define N_BX  8
#define N_UNR 8
#define N_BIG 48

static cutune__value bx_values[N_BX], unr_values[N_UNR], flag_values[2],
    big_values[N_BIG];

static cutune__value *fill(cutune__value *v, int n)
{
    for (int i = 0; i < n; i++) {
        v[i].type = CUTUNE__V_INT;
        v[i].u.i = i;
    }
    return v;
}

static cutune__space *make_variant_space(void)
{
    cutune__value *flag = fill(flag_values, 2);
    cutune__param params[] = {{"block_size_x", fill(bx_values, N_BX), N_BX},
                              {"unroll", fill(unr_values, N_UNR), N_UNR},
                              {"a", flag, 2},
                              {"b", flag, 2},
                              {"c", flag, 2}};
    return cutune__space_create(params, 5, NULL, 0, NULL, 0, NULL);
}

/* Any switch on: a bowl in bx around 3, 1.3 at its bottom, a little
 * faster with more unrolling. All off: faster still with more unrolling,
 * by far (0.3 a step), the optimum (1.0) at bx = 3, unroll = 7, and
 * slower than the rest below unroll 6 (a model that averages the
 * switches' effects over the geometry sees them as slower). */
static double variant_time(const uint32_t *c)
{
    double i = c[0], u = c[1];
    if (c[2] + c[3] + c[4] > 0)
        return 1.3 * (1 + 0.04 * (i - 3) * (i - 3) + 0.03 * (7 - u));
    return 1.0 + 0.05 * (i - 3) * (i - 3) + 0.3 * (7 - u);
}

static cutune__space *make_big_space(void)
{
    cutune__value *v = fill(big_values, N_BIG);
    cutune__param params[] = {
        {"p", v, N_BIG}, {"q", v, N_BIG}, {"r", v, N_BIG}};
    return cutune__space_create(params, 3, NULL, 0, NULL, 0, NULL);
}

/* A smooth bowl with its bottom away from the middle, on 48^3 = 110,592
 * configurations. */
static double big_time(const uint32_t *c)
{
    double x = c[0] - 36.0, y = c[1] - 10.0, z = c[2] - 30.0;
    return 1 + 0.002 * (x * x + y * y + z * z) + 0.001 * x * y;
}

static double *objectives(const cutune__space *s,
                          double (*f)(const uint32_t *))
{
    size_t n = cutune__space_size(s);
    double *o = malloc(n * sizeof *o);
    for (size_t i = 0; o && i < n; i++)
        o[i] = f(cutune__space_config(s, i));
    return o;
}

/* A space and its objectives, as a record would give them; NULL (and
 * nothing to free) when either could not be made. */
static double *recorded(cutune__space **s, cutune__space *(*make)(void),
                        double (*f)(const uint32_t *))
{
    *s = make();
    double *o = *s ? objectives(*s, f) : NULL;
    CHECK(o != NULL);
    if (!o) {
        cutune__space_free(*s);
        *s = NULL;
    }
    return o;
}

/* Seeds of `seeds` whose best after `budget` evaluations is within 2% of
 * the optimum; *mean_ratio: the mean optimum / best. */
static size_t runs_near(const cutune__strategy_type *t, const cutune__space *s,
                        const double *o, size_t budget, size_t batch,
                        size_t seeds, double *mean_ratio)
{
    size_t n = cutune__space_size(s), hits = 0;
    double opt = cutune__replay_optimum(o, n, NULL), sum = 0;
    for (size_t seed = 0; seed < seeds; seed++) {
        cutune__replay_options opts = {.max_evals = budget,
                                       .max_seconds = 0,
                                       .batch = batch,
                                       .seed = seed,
                                       .start = SIZE_MAX,
                                       .params = NULL,
                                       .try_cost = NULL};
        cutune__replay_result r;
        if (cutune__replay_run(t, s, o, NULL, &opts, &r, NULL, 0) != 0) {
            CHECK(!"replay failed");
            continue;
        }
        CHECK_INT(r.search.evaluations, budget);
        hits += r.search.best_objective <= 1.02 * opt;
        sum += opt / r.search.best_objective;
    }
    *mean_ratio = sum / (double)seeds;
    return hits;
}

static void test_variants(void)
{
    cutune__space *s;
    double *o = recorded(&s, make_variant_space, variant_time);
    if (!o)
        return;
    const size_t seeds = 30, budget = 100;
    double mf, mf8, mr;
    size_t forest =
        runs_near(cutune__strategy_forest, s, o, budget, 1, seeds, &mf);
    size_t forest8 =
        runs_near(cutune__strategy_forest, s, o, budget, 8, seeds, &mf8);
    size_t random =
        runs_near(cutune__strategy_random, s, o, budget, 1, seeds, &mr);
    printf("variant corner within 2%% in %zu evaluations, of %zu seeds: "
           "forest %zu (batches of 8: %zu), random %zu\n",
           budget, seeds, forest, forest8, random);
    /* 1 configuration of 512 is within 2%: random search's 100 draws
     * hold it in about 20% of runs. */
    CHECK(forest >= 2 * random);
    CHECK(forest8 >= 2 * random);
    CHECK(forest >= seeds * 3 / 4);
    free(o);
    cutune__space_free(s);
}

/* Proposals drawn from one fit are guesses: asked for 32 (as the tuner
 * asks), the strategy proposes at most 4 after its initial design, so a
 * seed's best after every evaluation is the same at batches of 4 and
 * 32. */
static void test_batch_cap(void)
{
    cutune__space *s;
    double *o = recorded(&s, make_variant_space, variant_time);
    if (!o)
        return;
    enum { BUDGET = 60 };
    size_t same = 0;
    for (size_t seed = 0; seed < 5; seed++) {
        double a[BUDGET], b[BUDGET];
        cutune__replay_options four = {.max_evals = BUDGET,
                                       .max_seconds = 0,
                                       .batch = 4,
                                       .seed = seed,
                                       .start = SIZE_MAX,
                                       .params = NULL,
                                       .try_cost = NULL};
        cutune__replay_options many = four;
        many.batch = 32;
        cutune__replay_result ra, rb;
        CHECK_INT(cutune__replay_run(cutune__strategy_forest, s, o, NULL,
                                     &four, &ra, a, BUDGET),
                  0);
        CHECK_INT(cutune__replay_run(cutune__strategy_forest, s, o, NULL,
                                     &many, &rb, b, BUDGET),
                  0);
        same +=
            memcmp(a, b, sizeof a) == 0 && ra.search.best == rb.search.best;
    }
    CHECK_INT(same, 5);
    free(o);
    cutune__space_free(s);
}

static void test_big_space(void)
{
    cutune__space *s;
    double *o = recorded(&s, make_big_space, big_time);
    if (!o)
        return;
    const size_t seeds = 5, budget = 80;
    double mf, mr;
    runs_near(cutune__strategy_forest, s, o, budget, 1, seeds, &mf);
    runs_near(cutune__strategy_random, s, o, budget, 1, seeds, &mr);
    printf("110,592 configurations, %zu evaluations: mean optimum/best "
           "forest %.3f, random %.3f\n",
           budget, mf, mr);
    CHECK(mf > mr);
    CHECK(mf > 0.97);
    free(o);
    cutune__space_free(s);
}

int main(void)
{
    gsl_set_error_handler_off();
    test_variants();
    test_batch_cap();
    test_big_space();
    return check_finish();
}
