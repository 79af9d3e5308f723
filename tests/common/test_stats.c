/* The confidence interval of the median: exact ranks on small samples,
 * and its coverage on simulated skewed timings. When the measuring loop
 * stops: caps, the interval, early drops and racing. */
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>

#include "check.h"
#include "stats.h"

/* A rule as the session sets it, with a best so far of `best`. */
static cutune__timing_rule rule_with(double best)
{
    cutune__timing_rule r = {
        .min_reps = 10,
        .min_seconds = 0.002,
        .max_seconds = 1.0,
        .ci_level = 0.95,
        .ci_rel = 0.01,
        .best_ms = best,
        .early_reps = 5,
        .early_margin = 0.10,
        .race_margin = 0.03,
    };
    return r;
}

/* n launches of `ms` each with a spread of +-rel around it, ascending. */
static void spread(double *x, size_t n, double ms, double rel)
{
    for (size_t i = 0; i < n; i++)
        x[i] = ms * (1.0 - rel + 2.0 * rel * (double)i / (double)(n - 1));
}

static void check_timing_rule(void)
{
    double x[400], lo = -1, hi = -1;
    cutune__timing_rule r = rule_with(0);
    /* Too few launches, or too little kernel time: more. */
    spread(x, 5, 1.0, 0.001);
    CHECK_INT(cutune__timing_next(&r, x, 5, 0.005, &lo, &hi),
              CUTUNE__TIMING_MORE);
    CHECK(lo == -1 && hi == -1);
    spread(x, 10, 0.01, 0.001);
    CHECK_INT(cutune__timing_next(&r, x, 10, 0.0001, &lo, &hi),
              CUTUNE__TIMING_MORE);
    CHECK(lo > 0 && hi >= lo);
    /* Enough of both and a tight interval: done. */
    spread(x, 10, 1.0, 0.001);
    CHECK_INT(cutune__timing_next(&r, x, 10, 0.01, &lo, &hi),
              CUTUNE__TIMING_DONE);
    /* A wide interval: more, until the time cap. */
    spread(x, 10, 1.0, 0.2);
    CHECK_INT(cutune__timing_next(&r, x, 10, 0.01, &lo, &hi),
              CUTUNE__TIMING_MORE);
    CHECK_INT(cutune__timing_next(&r, x, 10, 1.0, &lo, &hi),
              CUTUNE__TIMING_DONE);

    /* Early drop: after 5 launches the fastest is more than 10% slower. */
    r = rule_with(1.0);
    spread(x, 5, 1.2, 0.05);
    CHECK_INT(cutune__timing_next(&r, x, 4, 0.004, &lo, &hi),
              CUTUNE__TIMING_MORE);
    CHECK_INT(cutune__timing_next(&r, x, 5, 0.005, &lo, &hi),
              CUTUNE__TIMING_DROP);
    /* 8% slower: not dropped at 5 launches... */
    spread(x, 10, 0.008, 0.01);
    r = rule_with(0.0074);
    CHECK_INT(cutune__timing_next(&r, x, 5, 0.00004, &lo, &hi),
              CUTUNE__TIMING_MORE);
    /* ...but raced out at 10, long before its 2 ms of kernel time: the
     * whole interval is more than 3% above the best. */
    CHECK_INT(cutune__timing_next(&r, x, 10, 0.00008, &lo, &hi),
              CUTUNE__TIMING_DROP);
    CHECK(lo > 0.0074 * 1.03);
    /* 2% slower: within the margin, so it is measured to the end. */
    spread(x, 400, 0.0074 * 1.02, 0.005);
    CHECK_INT(cutune__timing_next(&r, x, 10, 0.00008, &lo, &hi),
              CUTUNE__TIMING_MORE);
    CHECK_INT(cutune__timing_next(&r, x, 300, 0.0023, &lo, &hi),
              CUTUNE__TIMING_DONE);
    /* An interval that reaches below the margin is not raced out even
     * when its median is above it. */
    spread(x, 10, 0.0074 * 1.04, 0.05);
    CHECK_INT(cutune__timing_next(&r, x, 10, 0.00008, &lo, &hi),
              CUTUNE__TIMING_MORE);
    CHECK(lo <= 0.0074 * 1.03);
    /* Racing off (margin 0, as in the final round): never dropped. */
    r.race_margin = 0;
    r.early_margin = 0;
    spread(x, 10, 0.008, 0.01);
    CHECK_INT(cutune__timing_next(&r, x, 10, 0.00008, &lo, &hi),
              CUTUNE__TIMING_MORE);
    /* No best yet: nothing is dropped. */
    r = rule_with(0);
    spread(x, 10, 5.0, 0.01);
    CHECK_INT(cutune__timing_next(&r, x, 10, 0.05, &lo, &hi),
              CUTUNE__TIMING_DONE);
}

int main(void)
{
    check_timing_rule();
    double lo, hi;
    /* Five values cannot give 95%: P(B=0)*2 = 1/16 > 0.05. */
    double five[5] = {1, 2, 3, 4, 5};
    CHECK_INT(cutune__median_ci(five, 5, 0.95, &lo, &hi), -1);
    CHECK(lo == 1 && hi == 5);
    /* Six values: j = 0 covers 1 - 2/64 = 0.969. */
    double six[6] = {1, 2, 3, 4, 5, 6};
    CHECK_INT(cutune__median_ci(six, 6, 0.95, &lo, &hi), 0);
    CHECK(lo == 1 && hi == 6);
    /* Twenty values: the usual table gives ranks 6 and 15 (1-based), i.e.
     * sorted[5] and sorted[14]. */
    double twenty[20];
    for (int i = 0; i < 20; i++)
        twenty[i] = i;
    CHECK_INT(cutune__median_ci(twenty, 20, 0.95, &lo, &hi), 0);
    CHECK(lo == 5 && hi == 14);
    CHECK(cutune__ci_within(100, 99.5, 100.9, 0.01));
    CHECK(!cutune__ci_within(100, 98.9, 100.5, 0.01));

    /* Coverage: over many samples of a skewed distribution (a base time
     * with exponential noise), the interval holds the true median at
     * least about 95% of the time. */
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, 7);
    const double true_median = 1.0 + 0.05 * 0.69314718056; /* ln 2 */
    int covered = 0, trials = 2000, narrow = 0;
    double x[50];
    for (int t = 0; t < trials; t++) {
        for (int i = 0; i < 50; i++)
            x[i] = 1.0 + gsl_ran_exponential(rng, 0.05);
        gsl_sort(x, 1, 50);
        CHECK_INT(cutune__median_ci(x, 50, 0.95, &lo, &hi), 0);
        covered += lo <= true_median && true_median <= hi;
        double m = gsl_stats_median_from_sorted_data(x, 1, 50);
        narrow += cutune__ci_within(m, lo, hi, 0.02);
    }
    CHECK(covered >= trials * 0.94);
    /* With 5% noise and 50 launches the interval is about +-1.5%. */
    CHECK(narrow > trials / 2);
    gsl_rng_free(rng);
    return check_finish();
}
