#include "stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>

int cutune__median_ci(const double *sorted, size_t n, double level, double *lo,
                      double *hi)
{
    if (n == 0)
        return -1;
    *lo = sorted[0];
    *hi = sorted[n - 1];
    /* Ranks are 0-based: the interval [sorted[j], sorted[n-1-j]] covers the
     * median unless at most j values fall below it or at most j above,
     * which has probability 2 * P(B <= j). Take the largest j for which
     * the coverage still reaches the level. */
    int found = -1;
    for (size_t j = 0; 2 * j + 1 < n; j++) {
        double coverage =
            1.0 - 2.0 * gsl_cdf_binomial_P((unsigned)j, 0.5, (unsigned)n);
        if (coverage < level)
            break;
        *lo = sorted[j];
        *hi = sorted[n - 1 - j];
        found = 0;
    }
    return found;
}

int cutune__ci_within(double median, double lo, double hi, double rel)
{
    return lo >= median * (1.0 - rel) && hi <= median * (1.0 + rel);
}

cutune__timing_verdict cutune__timing_next(const cutune__timing_rule *rule,
                                           const double *sorted, size_t n,
                                           double total_s, double *lo,
                                           double *hi)
{
    const double best = rule->best_ms;
    if (n == 0)
        return CUTUNE__TIMING_MORE;
    if (best > 0 && rule->early_margin > 0 && n >= rule->early_reps &&
        sorted[0] > best * (1.0 + rule->early_margin))
        return CUTUNE__TIMING_DROP;
    if (total_s >= rule->max_seconds)
        return CUTUNE__TIMING_DONE;
    if (n < rule->min_reps)
        return CUTUNE__TIMING_MORE;
    double l, h;
    int have = cutune__median_ci(sorted, n, rule->ci_level, &l, &h) == 0;
    if (have) {
        *lo = l;
        *hi = h;
    }
    /* Racing: once the median is surely slower than the best by the
     * margin, more launches would only pin down a loser's time. */
    if (have && best > 0 && rule->race_margin > 0 &&
        l > best * (1.0 + rule->race_margin))
        return CUTUNE__TIMING_DROP;
    if (total_s < rule->min_seconds)
        return CUTUNE__TIMING_MORE;
    double median =
        n % 2 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
    if (have &&
        (rule->ci_rel <= 0 || cutune__ci_within(median, l, h, rule->ci_rel)))
        return CUTUNE__TIMING_DONE;
    return CUTUNE__TIMING_MORE;
}

double cutune__median(const double *v, size_t n)
{
    if (n == 0)
        return NAN;
    double *d = malloc(n * sizeof *d);
    if (!d)
        return NAN;
    memcpy(d, v, n * sizeof *d);
    gsl_sort(d, 1, n);
    double m = gsl_stats_median_from_sorted_data(d, 1, n);
    free(d);
    return m;
}
