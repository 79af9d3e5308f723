/* Replay: a strategy run against recorded objectives instead of a GPU, and
 * the figures that judge it.
 *
 * The record is an array with one objective per configuration of the
 * space, by space index: a runtime, INFINITY for a configuration that was
 * recorded as failed (it fails again when proposed), or NaN for one that
 * was not recorded at all (it is answered as a failure too, and counted
 * apart). Optionally a second array gives what evaluating each
 * configuration cost (seconds: compilation plus measurement, as
 * recorded), for budgets of simulated time.
 *
 * All functions are thread-safe on distinct results; the record is only
 * read.
 */
#ifndef CUTUNE_SEARCH_REPLAY_H
#define CUTUNE_SEARCH_REPLAY_H

#include <stddef.h>
#include <stdint.h>

#include "strategy/strategy.h"

/* The tuner's final round (tuner/session/final_round.c), which the clock
 * models: the search's best few, at most CUTUNE__FINAL_MAX within
 * CUTUNE__FINAL_MARGIN of the fastest, measured again in
 * CUTUNE__FINAL_PASSES passes. */
#define CUTUNE__FINAL_MAX    5
#define CUTUNE__FINAL_MARGIN 0.03
#define CUTUNE__FINAL_PASSES 2

/* What a tune spends outside its search besides compiling and measuring
 * its reference (the default configuration): loading the problem,
 * starting the GPU worker, filling the arguments, the bandwidth and
 * occupancy queries, and at the end stopping the worker and the compile
 * processes. Measured over 48 cold tunes (an empty compute cache each) of
 * the hub convolution, hotspot and matmul on H200 hosts with 16 cores:
 * a median 0.63 s to start without the reference's compile, 0.10 s to
 * end, about 0.08 s to load (bench/results/2026-11-28-clock-s17.md;
 * session 16's 0.4 s came from tunes whose reference compiled from a warm
 * compute cache). */
#define CUTUNE__CLOCK_SETUP_S 0.8

/* The clock's setup_s for a space whose reference is configuration `ref`
 * (CUTUNE__NONE or beyond n: none): the fixed part and the reference's
 * recorded compile and measurement. */
static inline double cutune__replay_setup_s(const double *compile_s,
                                            const double *measure_s, size_t n,
                                            size_t ref)
{
    return CUTUNE__CLOCK_SETUP_S +
           (ref < n ? compile_s[ref] + measure_s[ref] : 0.0);
}

/* Fractions of the optimum (optimum / best) whose time the clock reports. */
#define CUTUNE__REPLAY_N_RATIOS 3
extern const double cutune__replay_ratios[CUTUNE__REPLAY_N_RATIOS];

/* "Within x of the optimum" means found <= (1 + x) * optimum. */
#define CUTUNE__REPLAY_N_WITHIN 3
extern const double cutune__replay_within[CUTUNE__REPLAY_N_WITHIN];

typedef struct cutune__replay_options {
    size_t max_evals;   /* 0: unlimited */
    double max_seconds; /* simulated time from `cost`; 0: unlimited */
    size_t batch;       /* 0: 1 */
    uint64_t seed;
    size_t start;       /* CUTUNE__NONE: none */
    const void *params; /* the strategy's settings; NULL: its own */
    /* What each configuration costs to try (cutune__search_cost), told to
     * the strategy; NULL: `cost`. `cost` is what the clock spends. */
    const double *try_cost;
    /* The clock (replay_clock.c): with threads > 0 the run's wall time is
     * modelled on a host with that many compile threads and one GPU, from
     * what each configuration took to compile (compile_s) and to measure
     * (measure_s, seconds by space index; NaN or absent: 0), scheduled as
     * the tuner schedules them: a batch's compiles in the shared order
     * (compile_order.h), what it names ahead, the GPU waiting for each
     * proposal's compile in turn, the final round at the end. setup_s is
     * what the tune spends before its search. */
    int threads;
    const double *compile_s;
    const double *measure_s;
    double setup_s;
} cutune__replay_options;

typedef struct cutune__replay_result {
    cutune__search_result search; /* evaluations, best, best_objective */
    size_t failures;   /* evaluations that failed (recorded or not) */
    size_t unrecorded; /* evaluations of configurations not recorded */
    double seconds;    /* simulated time spent (0 without `cost`) */
    /* Evaluations after which the best found first came within
     * cutune__replay_within[i] of the optimum; CUTUNE__NONE when it never did.
     */
    size_t evals_within[CUTUNE__REPLAY_N_WITHIN];
    /* With the clock (options.threads > 0), else 0: */
    double wall_s;         /* setup, search and final round */
    double final_s;        /* of which the final round */
    double gpu_wait_s;     /* the GPU idle, waiting for a compile */
    double compile_busy_s; /* compile seconds of the compiles started */
    size_t compiles;       /* compiles started */
    size_t spec_compiles;  /* ... as speculation (compile_order.h) */
    size_t spec_used;      /* ... of which a later batch wanted */
    /* Modelled seconds until the best first reached each fraction of
     * cutune__replay_ratios; INFINITY when it never did. */
    double seconds_to[CUTUNE__REPLAY_N_RATIOS];
} cutune__replay_result;

/* The smallest finite objective and its index (the lowest among equals);
 * INFINITY and CUTUNE__NONE when none is finite. */
double cutune__replay_optimum(const double *objective, size_t n,
                              size_t *index);

/* B of the score: the expected best objective of random search that draws
 * `budget` configurations without replacement from the recorded ones
 * (finite and failed; NaN entries are not part of the population), given
 * that at least one draw succeeds. With the finite objectives sorted,
 * v_1 <= ... <= v_K, among M recorded, the best of the draws is v_i exactly
 * when v_i is drawn and v_1..v_{i-1} are not:
 *     P_i = C(M - i, budget - 1) / C(M, budget),
 * computed by P_1 = budget / M and P_{i+1} = P_i (M - i - budget + 1) / (M -
 * i); the draws all fail with probability 1 - sum P_i. Then B = sum_i P_i v_i
 * / sum_i P_i. Returns NaN when nothing is finite or budget is 0; a budget
 * above M is read as M. */
double cutune__replay_random_best(const double *objective, size_t n,
                                  size_t budget);

/* The score P = (B - F) / (B - O) of Willemsen et al.: 1 when the optimum
 * O was found, 0 when no better than random search's expectation B, below
 * 0 when worse. NaN when F is not finite or B == O. */
double cutune__replay_score(double random_best, double found, double optimum);

/* Runs `type` on `space` against the record (`objective` and `cost` hold
 * cutune__space_size(space) entries; cost may be NULL). `best_after`, when
 * not NULL, receives the best objective after each evaluation (INFINITY
 * while none succeeded), up to `best_after_len` entries. Returns what
 * cutune__search_run returns. */
int cutune__replay_run(const cutune__strategy_type *type,
                       const cutune__space *space, const double *objective,
                       const double *cost,
                       const cutune__replay_options *options,
                       cutune__replay_result *result, double *best_after,
                       size_t best_after_len);

#endif
