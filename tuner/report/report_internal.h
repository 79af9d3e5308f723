/* The report module's shared pieces: the summary a page is drawn from
 * and the steps that build and draw it. Files:
 *   report_api.c    the public functions (cutune.h)
 *   report_data.c   results file -> summary (order, times, seconds,
 *                   threads per block, default, occupancy suggestion)
 *   report_stats.c  statistics: random search's expected best, medians,
 *                   parameter effects, subsampling
 *   report_plots.c  the SVG plots of a results page
 *   report_html.c   the results page around them (tables, notes)
 *   report_cache.c  the page of a tuning cache
 *   report_svg.c    the plot writer; report_text.c the text buffer */
#ifndef CUTUNE_REPORT_INTERNAL_H
#define CUTUNE_REPORT_INTERNAL_H

#include <stddef.h>

#include "cutune/report.h"
#include "report_text.h"

#define CUTUNE__REPORT_MAX_POINTS 5000
#define CUTUNE__REPORT_TOP        20
/* Expected random-search curve: points along the draws, log-spaced. */
#define CUTUNE__REPORT_CURVE_POINTS 240

/* One result of the file, in the file's order. */
typedef struct cutune__report_eval {
    size_t config; /* index in the space; CUTUNE__NONE: outside it */
    cutune_outcome outcome;
    double time_ms;   /* INFINITY unless CORRECT */
    double elapsed_s; /* from the start to the end of this one */
    double threads;   /* threads per block; NAN when unknown */
    int duplicate;    /* its configuration came earlier in the file */
    /* Hardware counters, in results that `cutune explain --output` wrote:
     * % of peak (NAN when absent) and the bottleneck they point to
     * (tuner/explain/; NULL without counters). */
    double dram_pct, sm_pct;
    const char *bottleneck;
    /* J per launch and W while it ran, of a correct result whose file
     * recorded them (docs/t1-t4.md); NAN otherwise. */
    double energy_j, power_w;
} cutune__report_eval;

/* The objectives a tune can rank by (cutune_objective), in the order the
 * report names their winners. */
enum { CUTUNE__REPORT_OBJECTIVES = 3 };

/* Best and median time of the configurations with one value of a
 * tunable. */
typedef struct cutune__report_value_stat {
    size_t correct;            /* correct results with this value */
    size_t total;              /* results with this value */
    double best_ms, median_ms; /* NAN when none is correct */
} cutune__report_value_stat;

typedef struct cutune__report_param {
    size_t param;                      /* index in the problem */
    cutune__report_value_stat *values; /* one per value of the tunable */
    size_t n_values;
    double spread; /* slowest median / fastest median over values */
} cutune__report_param;

typedef struct cutune__report_cache cutune__report_cache;

struct cutune_report {
    char *errmsg;
    char **notes;
    size_t n_notes;
    char *title;
    size_t max_points, top;

    /* A results page. */
    const cutune_problem *problem;
    char *source;            /* the results file's name */
    char *device, *strategy; /* NULL: unknown */
    cutune__report_eval *evals;
    size_t n_evals;
    size_t n_correct, n_outside, n_other_invalidity, n_duplicates;
    size_t by_outcome[6]; /* results per cutune_outcome */
    size_t best_eval;     /* fastest correct result; CUTUNE__NONE: none */
    size_t winner_eval;   /* the tune's winner, else best_eval */
    double winner_ms;     /* the winner's time as reported */
    size_t default_config, default_eval;   /* CUTUNE__NONE: unknown/absent */
    size_t baseline_config, baseline_eval; /* occupancy suggestion */
    int occupancy_block_size;              /* 0: unknown */
    int seconds_from_timestamps;
    const char *threads_source; /* NULL: threads unknown */
    int has_bytes, has_flops;
    int has_counters; /* some result carries hardware counters */
    /* Correct results with energy (not counting repeats): the time-energy
     * plot's points; and the best of them by time, energy and energy x
     * time (CUTUNE__NONE when there are none). */
    size_t n_energy;
    size_t energy_winner[CUTUNE__REPORT_OBJECTIVES];
    cutune__report_param *params; /* tunables with > 1 value, */
    size_t n_params;              /* widest spread first */

    /* A cache page. */
    cutune__report_cache *cache;
};

/* Report-wide helpers (report_api.c). */
cutune_status cutune__report_fail(cutune_report *r, cutune_status st,
                                  const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Adds a note; returns 0, or -1 when memory ran out. */
int cutune__report_note(cutune_report *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* report_data.c: fills a results report from the options' T4 file. */
cutune_status cutune__report_load(cutune_report *r,
                                  const cutune_report_options *o);
/* The space index of a configuration given as name/value texts, in
 * *index_out: CUTUNE__NONE when it is not a point of the space. Returns 0,
 * or -1 when memory ran out. */
int cutune__report_find_config(const cutune_problem *p,
                               const cutune_param_value *v, size_t n,
                               size_t *index_out);
/* Speed-up of a time over a reference eval's time; NAN when unknown. */
double cutune__report_speedup(const cutune_report *r, size_t ref_eval,
                              double time_ms);

/* report_stats.c */
/* Expected best of random search drawing `k[j]` of the `m` recorded
 * configurations without replacement, given that at least one draw is
 * correct, for each j; `sorted` holds the n_finite correct times in
 * ascending order (the other m - n_finite failed). out[j] is NAN when
 * k[j] is 0 or nothing is correct. Exact (the formula of
 * cutune__replay_random_best), with terms below 1e-17 of the sum
 * dropped. */
void cutune__report_random_best(const double *sorted, size_t n_finite,
                                size_t m, const size_t *k, size_t n_k,
                                double *out);
/* Up to `max` draw counts from 1 to m: all of them when m <= max, else
 * log-spaced, distinct and ending at m. Returns how many. */
size_t cutune__report_draws(size_t m, size_t max, size_t *out);
/* Median of v[0..n) (sorts v in place); NAN when n is 0. */
double cutune__report_median(double *v, size_t n);
/* Picks at most `max` of the `n` results in `order` (sorted fastest
 * first) for a scatter plot: the fastest max/10 always, then an even
 * stride over the rest. Writes the chosen positions into `out` and
 * returns how many. */
size_t cutune__report_subsample(size_t n, size_t max, size_t *out);
/* Per tunable and value: best and median correct times. */
cutune_status cutune__report_param_stats(cutune_report *r);
/* Indices of the correct results, fastest first (ties: file order).
 * Caller frees; NULL when memory ran out or none (*n = 0). */
size_t *cutune__report_ranked(const cutune_report *r, size_t *n);

/* The Pareto front of n points (x[i], y[i]), both to be minimised: those
 * no other point beats, that is, none is at most as large in both and
 * smaller in one (equal points are all on it). Points with a NAN or
 * infinite coordinate are left out. Writes their indices into `out` (room
 * for n), x ascending, ties in index order, and their count into *n_out.
 * Returns 0, or -1 when memory ran out. */
int cutune__report_pareto(const double *x, const double *y, size_t n,
                          size_t *out, size_t *n_out);
/* Time and energy of the results with both (r->n_energy of them, in file
 * order) into x (ms) and y (J) and their indices into `evals`; each has
 * room for r->n_evals. Returns how many. */
size_t cutune__report_energy_points(const cutune_report *r, double *x,
                                    double *y, size_t *evals);

/* report_plots.c: the SVG plots; each returns the number of <svg> it
 * wrote. */
size_t cutune__report_plot_convergence(const cutune_report *r,
                                       cutune__rtext *out);
size_t cutune__report_plot_threads(const cutune_report *r, cutune__rtext *out);
size_t cutune__report_plot_params(const cutune_report *r, cutune__rtext *out);
/* Energy against time with the Pareto front and the objectives' winners;
 * the front's eval indices, time ascending, are `front[n_front]`. */
size_t cutune__report_plot_energy(const cutune_report *r, const size_t *front,
                                  size_t n_front, cutune__rtext *out);

/* report_html.c: the page's frame and the results page. */
void cutune__report_html_head(cutune__rtext *out, const char *title);
void cutune__report_html_foot(cutune__rtext *out);
void cutune__report_html_results(const cutune_report *r, cutune__rtext *out);

/* report_cache.c */
cutune_status cutune__report_cache_load(cutune_report *r, cutune_cache *cache);
void cutune__report_cache_free(cutune__report_cache *c);
void cutune__report_html_cache(const cutune_report *r, cutune__rtext *out);

#endif
