/* Statistics of repeated launch timings (GSL). */
#ifndef CUTUNE_TUNER_STATS_H
#define CUTUNE_TUNER_STATS_H

#include <stddef.h>

/* A distribution-free confidence interval of the median of `sorted`
 * (ascending, n values): the order statistics sorted[j] and sorted[k]
 * with the narrowest symmetric ranks such that P(j <= B < k) >= level for
 * B ~ Binomial(n, 1/2), i.e. the median lies between them with at least
 * that confidence whatever the distribution of the timings. With too few
 * values for the level, the interval is the whole sample and the return
 * value is -1; else 0. */
int cutune__median_ci(const double *sorted, size_t n, double level,
                      double *lo, double *hi);

/* Whether the interval is within `rel` of the median on both sides. */
int cutune__ci_within(double median, double lo, double hi, double rel);

#endif
