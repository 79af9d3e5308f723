/* The additive model of what a try costs (search/strategy/cost_model.h):
 * what it predicts before and after results, the shrinking of a value
 * seen once, that it recovers the order of an additive cost, that a
 * parameter with one value plays no part, and the tell / settle hand-over
 * from the driver's `cost` callback to the result. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>

#include "../check.h"
#include "strategy/cost_model.h"

#define N_A 4
#define N_B 3

static cutune__value a_values[N_A], b_values[N_B], fixed_value[1];

static cutune__space *make_space(void)
{
    for (int i = 0; i < N_A; i++) {
        a_values[i].type = CUTUNE__V_INT;
        a_values[i].u.i = 1LL << i;
    }
    for (int i = 0; i < N_B; i++) {
        b_values[i].type = CUTUNE__V_INT;
        b_values[i].u.i = i;
    }
    fixed_value[0].type = CUTUNE__V_INT;
    fixed_value[0].u.i = 7;
    cutune__param params[] = {
        {"a", a_values, N_A}, {"fixed", fixed_value, 1}, {"b", b_values, N_B}};
    return cutune__space_create(params, 3, NULL, 0, NULL, 0, NULL);
}

static size_t index_of(const cutune__space *s, uint32_t a, uint32_t b)
{
    uint32_t c[3] = {a, 0, b};
    size_t idx = CUTUNE__NONE;
    CHECK(cutune__space_index_of(s, c, &idx));
    return idx;
}

/* The true log seconds of the additive cost the model is shown: a
 * compile that doubles with a, plus a little per b. */
static double true_log_cost(const cutune__space *s, size_t idx)
{
    const uint32_t *c = cutune__space_config(s, idx);
    return 0.7 * c[0] + 0.2 * c[2];
}

static void test_nothing_learnt(const cutune__space *s)
{
    cutune__cost_model m;
    CHECK_INT(cutune__cost_model_init(&m, s), 0);
    CHECK_INT(m.d, 2); /* "fixed" has one value: not part of the model */
    CHECK_INT(m.n, 0);
    CHECK(cutune__cost_model_relative(&m, 0) == 0);
    CHECK(isnan(cutune__cost_model_predict(&m, 0)));
    cutune__cost_model_free(&m);
    cutune__cost_model_free(&m); /* freed twice: a no-op */
}

/* Two results, (a0, b0) at log 1 and (a1, b0) at log 3: the mean is 2,
 * b0 is at the mean, and a0 and a1, each seen once, deviate by 1 shrunk
 * by CUTUNE__COST_PRIOR results' worth to a third. */
static void test_shrinking(const cutune__space *s)
{
    cutune__cost_model m;
    CHECK_INT(cutune__cost_model_init(&m, s), 0);
    cutune__cost_model_learn(&m, index_of(s, 0, 0), 1.0);
    cutune__cost_model_learn(&m, index_of(s, 1, 0), 3.0);
    CHECK_INT(m.n, 2);
    double third = 1.0 / (1.0 + CUTUNE__COST_PRIOR);
    CHECK(fabs(cutune__cost_model_relative(&m, index_of(s, 0, 0)) + third) <
          1e-12);
    CHECK(fabs(cutune__cost_model_relative(&m, index_of(s, 1, 2)) - third) <
          1e-12);
    /* Neither a value seen: the mean. */
    CHECK(fabs(cutune__cost_model_relative(&m, index_of(s, 3, 1))) < 1e-12);
    CHECK(fabs(cutune__cost_model_predict(&m, index_of(s, 3, 1)) - 2.0) <
          1e-12);
    CHECK(fabs(cutune__cost_model_predict(&m, index_of(s, 1, 0)) -
               (2.0 + third)) < 1e-12);
    cutune__cost_model_free(&m);
}

/* Every configuration once, at an additive cost: each value seen equally
 * often, so the shrinking is the same for all and the predictions are in
 * the true order, each deviation k / (k + prior) of the true one. */
static void test_additive_order(const cutune__space *s)
{
    size_t n = cutune__space_size(s);
    cutune__cost_model m;
    CHECK_INT(cutune__cost_model_init(&m, s), 0);
    double mean = 0;
    for (size_t i = 0; i < n; i++) {
        cutune__cost_model_learn(&m, i, true_log_cost(s, i));
        mean += true_log_cost(s, i) / (double)n;
    }
    size_t out_of_order = 0;
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++)
            out_of_order += true_log_cost(s, i) < true_log_cost(s, j) &&
                            !(cutune__cost_model_predict(&m, i) <
                              cutune__cost_model_predict(&m, j));
    CHECK_INT(out_of_order, 0);
    /* a0 is seen N_B times, b0 N_A times. */
    size_t corner = index_of(s, 0, 0);
    double dev_a = -0.7 * 1.5, dev_b = -0.2;
    double want = dev_a * N_B / (N_B + CUTUNE__COST_PRIOR) +
                  dev_b * N_A / (N_A + CUTUNE__COST_PRIOR);
    CHECK(fabs(cutune__cost_model_relative(&m, corner) - want) < 1e-9);
    CHECK(fabs(cutune__cost_model_predict(&m, corner) - (mean + want)) < 1e-9);
    cutune__cost_model_free(&m);
}

/* The cost told before a result is learnt with it only when it is that
 * configuration's and its first result. */
static void test_tell_settle(const cutune__space *s)
{
    cutune__cost_model m;
    CHECK_INT(cutune__cost_model_init(&m, s), 0);
    size_t x = index_of(s, 2, 1), y = index_of(s, 0, 2);
    cutune__cost_model_tell(&m, x, 4.0);
    cutune__cost_model_settle(&m, y, 1); /* another configuration's result */
    CHECK_INT(m.n, 0);
    cutune__cost_model_settle(&m, x, 1); /* forgotten by the settle above */
    CHECK_INT(m.n, 0);
    cutune__cost_model_tell(&m, x, 4.0);
    cutune__cost_model_settle(&m, x, 0); /* a repeat: nothing new */
    CHECK_INT(m.n, 0);
    cutune__cost_model_tell(&m, x, 4.0);
    cutune__cost_model_settle(&m, x, 1);
    CHECK_INT(m.n, 1);
    CHECK(fabs(m.total - log(4.0)) < 1e-12);
    /* A free try weighs a microsecond's. */
    cutune__cost_model_tell(&m, y, 0.0);
    cutune__cost_model_settle(&m, y, 1);
    CHECK_INT(m.n, 2);
    CHECK(fabs(m.total - (log(4.0) + log(1e-6))) < 1e-9);
    cutune__cost_model_free(&m);
}

int main(void)
{
    cutune__space *s = make_space();
    CHECK(s != NULL);
    if (s) {
        CHECK_INT(cutune__space_size(s), N_A * N_B);
        test_nothing_learnt(s);
        test_shrinking(s);
        test_additive_order(s);
        test_tell_settle(s);
    }
    cutune__space_free(s);
    return check_finish();
}
