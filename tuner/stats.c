#include "stats.h"

#include <gsl/gsl_cdf.h>

int cutune__median_ci(const double *sorted, size_t n, double level,
                      double *lo, double *hi)
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
        double coverage = 1.0 - 2.0 * gsl_cdf_binomial_P((unsigned)j, 0.5,
                                                         (unsigned)n);
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
