/* The confidence interval of the median: exact ranks on small samples,
 * and its coverage on simulated skewed timings. */
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>

#include "check.h"
#include "stats.h"

int main(void)
{
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
