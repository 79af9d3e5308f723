/* bench-strategies (strategies.c): the types its files share. The loading
 * of spaces is in strategies_load.c, the tables in strategies_print.c. */
#ifndef CUTUNE_BENCH_STRATEGIES_H
#define CUTUNE_BENCH_STRATEGIES_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cutune/cutune.h"
#include "problem.h"
#include "strategy/bayes.h"
#include "strategy/default.h"
#include "strategy/strategy.h"

/* Budgets 0..N_EVAL_BUDGETS-1 are evaluations; the last is time: the
 * recorded seconds that TIME_BUDGET_EVALS evaluations of the space cost
 * on average (compilation and runs), so that a strategy drawn to
 * configurations that compile slowly gets fewer evaluations. */
#define N_EVAL_BUDGETS    4
#define N_BUDGETS         (N_EVAL_BUDGETS + 1)
#define TIME_BUDGET       N_EVAL_BUDGETS
#define TIME_BUDGET_EVALS 100
extern const size_t bench_budgets[N_EVAL_BUDGETS];

#define MAX_FILES    128
#define MAX_VARIANTS 32

/* The clock (search/replay/replay.h): each strategy's tune at clock_evals
 * evaluations modelled on a host with N compile threads for each N of
 * --clock-threads; of cutune__replay_ratios, the first CLOCK_RATIOS
 * (0.95, 0.98) are reported. */
#define MAX_CLOCK_THREADS 4
#define CLOCK_RATIOS      2

/* opt/found thresholds of --shares. */
#define N_LEVELS 3
extern const double bench_share_levels[N_LEVELS];

typedef struct figures {
    double ratio, ratio_q1, ratio_q3, ratio_min, score, within5;
    double share[N_LEVELS]; /* of seeds with opt/found >= levels */
    double evals;           /* median evaluations made (of interest: time) */
    double seconds;         /* CPU time of the strategy, per run */
} figures;

/* Medians over the seeds of a tune on the clock: modelled seconds until
 * the best reached each ratio (INFINITY when the median seed never did),
 * with the count of seeds that did, and the modelled wall of the tune. */
typedef struct clock_figures {
    double to[CLOCK_RATIOS];
    size_t reached[CLOCK_RATIOS];
    double wall;
} clock_figures;

typedef struct dataset {
    char name[256];
    char group[256]; /* the problem: spaces of one kernel, any device or
                        size, are held out together */
    cutune_problem *problem; /* owned unless `derived` */
    int derived;             /* a planted copy: the problem is borrowed */
    double *objective;
    double *cost;       /* seconds per configuration, as recorded */
    double *try_cost;   /* what trying each costs (cutune__search_cost) */
    double time_budget; /* seconds; 0 when the record has no times */
    double *compile_s;  /* the clock's seconds: compiling, as recorded */
    double *measure_s;  /* measuring (cutune__t4_entry_measure_seconds) */
    double setup_s;     /* before the search (as cutune simulate sets it) */
    size_t n;
    size_t start; /* where a tune starts (search/strategy/seed.h: the
                     default configuration, no occupancy answer
                     being recorded); SIZE_MAX with --no-start */
    double optimum;
    double random_best[N_BUDGETS];
    cutune_objective minimise; /* what `objective` holds (--objective):
                                  ms, J or J s per configuration */
} dataset;

/* A strategy with its settings: the default or bayes with settings of
 * --variant, or a strategy as it is (params NULL). */
typedef struct variant {
    const cutune__strategy_type *type;
    char label[160];
    int has_params;
    cutune__default_params params;     /* type: the default */
    cutune__bayes_params bayes_params; /* type: bayes */
} variant;

typedef struct job {
    const dataset *data;
    const variant *var;
    figures fig[N_BUDGETS];
    clock_figures clock[MAX_CLOCK_THREADS]; /* by --clock-threads */
} job;

typedef struct pool {
    job *jobs;
    size_t n_jobs;
    size_t next;
    size_t seeds;
    uint64_t first_seed;
    size_t batch;
    const int *clock_threads;
    size_t n_clock, clock_evals;
    pthread_mutex_t lock;
} pool;

typedef struct bench_args {
    size_t seeds, threads, n_data, batch, n_variants;
    uint64_t first_seed; /* runs use seeds first_seed .. + seeds - 1 */
    const char *out_path, *only;
    int shares, plant, loo, no_start;
    int clock_threads[MAX_CLOCK_THREADS]; /* none: no clock */
    cutune_objective objective;           /* --objective, of every space */
    size_t n_clock, clock_evals;
    dataset data[MAX_FILES];
    variant variants[MAX_VARIANTS + 16];
} bench_args;

/* strategies.c: the median of v[0..n) (sorts v; INFINITY counts). */
double bench_median(double *v, size_t n);

/* strategies_load.c */
int bench_load(dataset *d, const char *spec, const char *dir);
long bench_load_list(dataset *data, size_t n_data, const char *path);
/* Adds the planted copies (edge, basin) of the first n spaces; returns
 * the new count. */
size_t bench_plant(dataset *data, size_t n);
void bench_dataset_free(dataset *d);

/* strategies_print.c */
void bench_print_intro(FILE *out, const bench_args *a, double wall);
void bench_print_worst(FILE *out, const pool *p, const bench_args *a);
/* Leave one kernel out among the variants of `type` (the default: by
 * worst median; bayes: by worst margin over random search). */
void bench_print_loo(FILE *out, const pool *p, const bench_args *a,
                     const cutune__strategy_type *type);
void bench_print_space(FILE *out, const pool *p, const dataset *d, int shares);
/* The clock: per strategy and thread count, the worst and the median over
 * the spaces; per space, each strategy's figures. Nothing without it. */
void bench_print_clock(FILE *out, const pool *p, const bench_args *a);
void bench_print_space_clock(FILE *out, const pool *p, const dataset *d);
/* The strategies' settings tables (search/strategy/settings.h), as
 * Markdown: what docs/strategies.md shows. */
void bench_print_settings(FILE *out);

#endif
