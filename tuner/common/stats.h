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
int cutune__median_ci(const double *sorted, size_t n, double level, double *lo,
                      double *hi);

/* The median of n values in any order (of an even count, the mean of
 * the middle two), as a tune ranks a configuration by: every reader of
 * recorded runtimes (T4 files, replays) takes it from here. NaN when n is
 * 0 or memory ran out. */
double cutune__median(const double *v, size_t n);

/* Whether the interval is within `rel` of the median on both sides. */
int cutune__ci_within(double median, double lo, double hi, double rel);

/* When a candidate's timed launches stop (the worker's measuring loop;
 * here so that it can be tested without a GPU). best_ms 0: no best yet;
 * a margin of 0 turns its check off. */
typedef struct cutune__timing_rule {
    size_t min_reps;    /* launches before any interval is looked at */
    double min_seconds; /* kernel time before the interval can end it */
    double max_seconds; /* kernel time that ends it whatever else */
    double ci_level;
    double ci_rel;       /* done once the interval is within this */
    double best_ms;      /* best median so far */
    size_t early_reps;   /* after this many launches, dropped when */
    double early_margin; /* even the fastest is slower than best_ms by
                            more than this fraction */
    double race_margin;  /* after min_reps, dropped when the interval's
                            lower end is slower than best_ms by more
                            than this fraction */
} cutune__timing_rule;

typedef enum cutune__timing_verdict {
    CUTUNE__TIMING_MORE = 0, /* time more launches */
    CUTUNE__TIMING_DONE,     /* measured well enough, or a cap was hit */
    CUTUNE__TIMING_DROP      /* clearly slower than the best: stop early */
} cutune__timing_verdict;

/* The verdict after n launches, `sorted` ascending, total_s seconds of
 * kernel time together. Sets *lo and *hi to the interval of the median
 * when it was computed (left alone otherwise). The caller stops at its
 * own cap on count. */
cutune__timing_verdict cutune__timing_next(const cutune__timing_rule *rule,
                                           const double *sorted, size_t n,
                                           double total_s, double *lo,
                                           double *hi);

#endif
