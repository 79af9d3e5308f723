/* The report's statistics: random search's expected best against a brute
 * force over every subset and against the replay's own formula, the draw
 * counts of the curve, medians, and the scatter plot's subsample. */
#include <stdint.h>
#include <stdlib.h>

#include "check.h"
#include "replay/replay.h"
#include "report_internal.h"

/* The expected best over every subset of `draws` of m items, the failed
 * ones (INFINITY) giving nothing, among the subsets with a success. */
static double brute_force(const double *v, size_t m, size_t draws)
{
    double sum = 0;
    size_t subsets = 0;
    for (uint32_t mask = 0; mask < (1u << m); mask++) {
        if ((size_t)__builtin_popcount(mask) != draws)
            continue;
        double best = INFINITY;
        for (size_t i = 0; i < m; i++)
            if (mask & (1u << i) && v[i] < best)
                best = v[i];
        if (isfinite(best)) {
            sum += best;
            subsets++;
        }
    }
    return subsets ? sum / (double)subsets : NAN;
}

static void test_random_best(void)
{
    /* Seven recorded: five correct (unsorted here), two failures. */
    const double rec[] = {3.0, INFINITY, 1.0, 5.0, INFINITY, 2.0, 4.0};
    const size_t m = 7;
    const double sorted[] = {1.0, 2.0, 3.0, 4.0, 5.0};
    size_t k[8];
    double out[8];
    for (size_t j = 0; j < 8; j++)
        k[j] = j;
    cutune__report_random_best(sorted, 5, m, k, 8, out);
    CHECK(isnan(out[0]));
    /* One draw: the mean of the correct ones. */
    CHECK_NEAR(out[1], 3.0, 1e-12);
    for (size_t j = 1; j <= m; j++) {
        CHECK_NEAR(out[j], brute_force(rec, m, j), 1e-12);
        CHECK_NEAR(out[j], cutune__replay_random_best(rec, m, j), 1e-12);
    }
    /* All of them: the optimum. */
    CHECK_NEAR(out[7], 1.0, 1e-12);
    /* Two of three by hand: pairs {1,2} {1,3} {2,3} -> (1 + 1 + 2) / 3. */
    const double three[] = {1, 2, 3};
    size_t two = 2;
    cutune__report_random_best(three, 3, 3, &two, 1, out);
    CHECK_NEAR(out[0], 4.0 / 3.0, 1e-12);
    /* Nothing correct. */
    cutune__report_random_best(three, 0, 3, &two, 1, out);
    CHECK(isnan(out[0]));
}

static void test_random_best_large(void)
{
    /* 100,000 recorded: the curve agrees with the replay's formula. */
    const size_t m = 100000;
    double *rec = malloc(m * sizeof *rec),
           *sorted = malloc(m * sizeof *sorted);
    size_t nf = 0;
    for (size_t i = 0; i < m; i++) {
        rec[i] = i % 17 == 0 ? INFINITY : 1.0 + (double)((i * 7919) % m) / 1e3;
        if (isfinite(rec[i]))
            sorted[nf++] = rec[i];
    }
    cutune__report_median(sorted, nf);
    size_t draws[CUTUNE__REPORT_CURVE_POINTS];
    size_t n = cutune__report_draws(m, CUTUNE__REPORT_CURVE_POINTS, draws);
    double *out = malloc(n * sizeof *out);
    cutune__report_random_best(sorted, nf, m, draws, n, out);
    for (size_t j = 0; j < n; j += 37)
        CHECK_NEAR(out[j], cutune__replay_random_best(rec, m, draws[j]),
                   1e-9 * out[j]);
    for (size_t j = 1; j < n; j++)
        CHECK(out[j] <= out[j - 1] + 1e-12);
    free(rec);
    free(sorted);
    free(out);
}

static void test_draws(void)
{
    size_t out[300];
    CHECK_INT(cutune__report_draws(5, 240, out), 5);
    CHECK_INT(out[0], 1);
    CHECK_INT(out[4], 5);
    size_t n = cutune__report_draws(100000, 240, out);
    CHECK(n > 100 && n <= 240);
    CHECK_INT(out[0], 1);
    CHECK_INT(out[n - 1], 100000);
    for (size_t i = 1; i < n; i++)
        CHECK(out[i] > out[i - 1]);
    CHECK_INT(cutune__report_draws(0, 240, out), 0);
}

static void test_median_subsample(void)
{
    double v[] = {5, 1, 4, 2};
    CHECK_NEAR(cutune__report_median(v, 4), 3.0, 1e-12);
    CHECK_NEAR(cutune__report_median(v, 3), 2.0, 1e-12); /* 1 2 4 */
    CHECK(isnan(cutune__report_median(v, 0)));
    size_t *pick = malloc(100000 * sizeof *pick);
    CHECK_INT(cutune__report_subsample(10, 5000, pick), 10);
    size_t k = cutune__report_subsample(100000, 5000, pick);
    CHECK_INT(k, 5000);
    /* The fastest tenth whole, then strictly increasing positions. */
    for (size_t i = 0; i < 500; i++)
        CHECK_INT(pick[i], i);
    for (size_t i = 1; i < k; i++)
        CHECK(pick[i] > pick[i - 1]);
    CHECK(pick[k - 1] < 100000);
    free(pick);
}

/* Points whose front is known by hand: a point beaten on both, one tied
 * in y at a larger x, one tied in x at a larger y, two equal points (both
 * kept), and points with a NAN or infinite coordinate (left out). */
static void test_pareto_known(void)
{
    const double x[] = {1, 2, 2, 3, 4, 5, 4, NAN, 6, INFINITY};
    const double y[] = {10, 8, 9, 8, 3, 5, 3, 1, 1, 0.5};
    const size_t want[] = {0, 1, 4, 6, 8};
    size_t out[10], n = 99;
    CHECK_INT(cutune__report_pareto(x, y, 10, out, &n), 0);
    CHECK_INT(n, 5);
    for (size_t i = 0; i < n && i < 5; i++)
        CHECK_INT(out[i], want[i]);

    /* A single point is its own front; no point, an empty one. */
    CHECK_INT(cutune__report_pareto(x, y, 1, out, &n), 0);
    CHECK_INT(n, 1);
    CHECK_INT(out[0], 0);
    CHECK_INT(cutune__report_pareto(x, y, 0, out, &n), 0);
    CHECK_INT(n, 0);

    /* All equal: none beats another. */
    const double same[] = {2, 2, 2};
    CHECK_INT(cutune__report_pareto(same, same, 3, out, &n), 0);
    CHECK_INT(n, 3);
    /* On a line of equal x, only the lowest y; on equal y, the lowest x. */
    const double col_x[] = {1, 1, 1}, col_y[] = {3, 1, 2};
    CHECK_INT(cutune__report_pareto(col_x, col_y, 3, out, &n), 0);
    CHECK_INT(n, 1);
    CHECK_INT(out[0], 1);
    CHECK_INT(cutune__report_pareto(col_y, col_x, 3, out, &n), 0);
    CHECK_INT(n, 1);
    CHECK_INT(out[0], 1);
}

/* Against the definition, point by point, on random points with many
 * ties (small integer coordinates). */
static void test_pareto_random(void)
{
    enum { N = 300 };
    double x[N], y[N];
    size_t out[N], n = 0;
    uint64_t state = 12345;
    for (size_t i = 0; i < N; i++) {
        state = state * 6364136223846793005ULL + 1442695040888963407ULL;
        x[i] = (double)((state >> 33) % 40);
        y[i] = (double)((state >> 45) % 40);
    }
    CHECK_INT(cutune__report_pareto(x, y, N, out, &n), 0);
    char on[N] = {0};
    for (size_t i = 0; i < n; i++) {
        on[out[i]] = 1;
        if (i)
            CHECK(x[out[i]] > x[out[i - 1]] ||
                  (x[out[i]] == x[out[i - 1]] && out[i] > out[i - 1]));
    }
    size_t expected = 0;
    for (size_t i = 0; i < N; i++) {
        int beaten = 0;
        for (size_t j = 0; j < N && !beaten; j++)
            beaten =
                x[j] <= x[i] && y[j] <= y[i] && (x[j] < x[i] || y[j] < y[i]);
        CHECK_INT(on[i], !beaten);
        expected += !beaten;
    }
    CHECK_INT(n, expected);
    CHECK(n >= 1 && n < N);
}

int main(void)
{
    test_random_best();
    test_random_best_large();
    test_draws();
    test_median_subsample();
    test_pareto_known();
    test_pareto_random();
    return check_finish();
}
