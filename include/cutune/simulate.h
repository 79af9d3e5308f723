/* cutune replay: a search strategy run against recorded T4 results
 * instead of a GPU, with the figures that score it (fractions of the
 * optimum, Willemsen et al.'s score P). The conventions of cutune.h hold.
 */
#ifndef CUTUNE_SIMULATE_H
#define CUTUNE_SIMULATE_H

#include "cutune/cutune.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#pragma GCC visibility push(default)
#endif

/* ------------------------------------------------------------------ */
/* Replay: a strategy run against recorded results instead of a GPU.   */

/* Fractions of the optimum the figures of a replay use: a run is within
 * x of the optimum when its best is at most (1 + x) times the optimum. */
#define CUTUNE_SIMULATE_N_WITHIN 3
#define CUTUNE_SIMULATE_WITHIN                                                \
    {                                                                         \
        0.01, 0.02, 0.05                                                      \
    }
/* Fractions of the optimum (optimum / best) whose modelled time a replay
 * on the clock reports. */
#define CUTUNE_SIMULATE_N_RATIOS 3
#define CUTUNE_SIMULATE_RATIOS                                                \
    {                                                                         \
        0.95, 0.98, 0.99                                                      \
    }

typedef struct cutune_simulate_options {
    const char *results_path; /* T4 results file, plain or gzip */
    const char *strategy;     /* NULL: the problem's (T1 Search), else
                                 the default */
    size_t max_evals;         /* 0: no evaluation budget. With no budget
                                 at all the problem's (T1 Budget) applies,
                                 else CUTUNE_DEFAULT_BUDGET (the whole
                                 space for brute_force), as in a tune */
    double max_fraction;      /* budget as a share of the space, in (0, 1];
                                 0: none. The smaller of two budgets wins */
    double max_seconds;       /* simulated time: the recorded compilation
                                 and run times of what was evaluated;
                                 0: no limit */
    uint64_t seed;            /* repeat r (0-based) runs with seed + r */
    size_t repeat;            /* runs; 0: 1 */
    size_t batch;             /* proposals per round; 0: 1 */
    /* With write_cache, the winner over the runs is appended to the cache
     * (NULL dir: as cutune_cache_open) as a record of a device named
     * `device_name` with cutune_device.simulated = 1. */
    int write_cache;
    const char *cache_dir;
    const char *device_name;
    cutune_log_fn log;
    void *log_user;
    /* Threads per block the occupancy API suggested for the kernel on the
     * recorded GPU (cutune tune logs it); 0: unknown. Every run starts
     * where a tune would (search/strategy/seed.h): the problem's default
     * configuration at that block size, or the default itself when it is
     * unknown, as a tune does when the API cannot answer. */
    int occupancy_block_size;
    /* The clock: with threads > 0 each run's wall time is modelled for a
     * host with that many compile threads and one GPU, from the recorded
     * compile and measuring times of each configuration, scheduled as a
     * tune schedules them (batches as a tune asks for them, compiles
     * ahead, speculation, the GPU waiting for compiles, the final round;
     * docs/strategies.md#the-clock). A batch of 0 is then the tune's. */
    int threads;
    /* What the runs minimise, as a tune's objective (cutune.h): TIME
     * (default) the median runtime, ENERGY the recorded J per launch
     * (T4 measurements `energy` or `nvml_energy`, or the power times the
     * time), EDP J times s. A result recorded correct with no energy has
     * no value for ENERGY or EDP and counts as failed; a file with none
     * at all is refused. The result's *_ms figures are then in J or J s. */
    cutune_objective objective;
} cutune_simulate_options;

void cutune_simulate_options_init(cutune_simulate_options *options);

typedef struct cutune_simulate_run {
    uint64_t seed;
    size_t evaluations; /* failures included */
    size_t failures;
    double best_ms;                 /* INFINITY when nothing ran correctly */
    const cutune_param_value *best; /* n_params entries; NULL when none */
    size_t best_index;              /* in the space; SIZE_MAX when none */
    double ratio;                   /* optimum_ms / best_ms; 0 when none */
    /* Willemsen et al.'s score P = (B - F) / (B - O): F this run's best,
     * O the optimum, B random_best_ms. 1: the optimum, 0: no better than
     * random search. NaN when F or B is undefined or B == O. */
    double score;
    double random_best_ms; /* B for this run's evaluations */
    /* Evaluations after which the best first came within each fraction of
     * CUTUNE_SIMULATE_WITHIN; 0 when it never did. */
    size_t evals_within[CUTUNE_SIMULATE_N_WITHIN];
    double seconds; /* simulated */
    /* On the clock (threads > 0), else 0: the modelled wall time of the
     * tune (setup, search, final round), the GPU's wait for compiles, and
     * the seconds until the best first reached each fraction of the
     * optimum of CUTUNE_SIMULATE_RATIOS (INFINITY: never). */
    double wall_s;
    double gpu_wait_s;
    double seconds_to[CUTUNE_SIMULATE_N_RATIOS];
    /* The recorded compile seconds of every compile started: over
     * wall_s, the compiles running on average. */
    double compile_busy_s;
    size_t compiles;      /* compiles started */
    size_t spec_compiles; /* ... as speculation */
    size_t spec_used;     /* ... that a later batch wanted */
    /* The best configuration's recorded median time (ms) and energy (J
     * per launch), whatever the objective; NaN when none or not
     * recorded. */
    double best_time_ms;
    double best_energy_j;
} cutune_simulate_run;

/* Quartiles over the runs (the median of an even count is the mean of the
 * middle two). Evaluations to come within a fraction count a run that
 * never did as infinite. */
typedef struct cutune_quartiles {
    double q1, median, q3;
} cutune_quartiles;

typedef struct cutune_simulate_result {
    const char *strategy;
    size_t space_size;
    size_t recorded;   /* recorded configurations in the space */
    size_t correct;    /* of which ran correctly */
    size_t budget;     /* evaluations allowed; 0: no limit */
    double optimum_ms; /* INFINITY when nothing is correct */
    const cutune_param_value *optimum; /* NULL when nothing is correct */
    size_t n_params;
    /* B for `budget` evaluations: the expected best of random search
     * drawing that many recorded configurations without replacement,
     * failures drawn like any other but giving no result (the expectation
     * is taken over the draws with at least one success). NaN when there
     * is no budget or nothing is correct. */
    double random_best_ms;
    const cutune_simulate_run *runs;
    size_t n_runs;
    cutune_quartiles ratio;
    cutune_quartiles score;
    cutune_quartiles evals_within[CUTUNE_SIMULATE_N_WITHIN];
    size_t runs_within[CUTUNE_SIMULATE_N_WITHIN]; /* runs that got there */
    /* The configuration every run started from (NULL and SIZE_MAX: none)
     * and why: "occupancy" (the default at the occupancy API's block
     * size) or "default" (no occupancy answer: the default configuration),
     * "none". */
    const cutune_param_value *start;
    size_t start_index;
    const char *start_source;
    /* On the clock (threads > 0): quartiles over the runs of wall_s and
     * of seconds_to (a run that never got there counts as infinite), and
     * the runs that got there. */
    int threads;
    cutune_quartiles wall_s;
    cutune_quartiles seconds_to[CUTUNE_SIMULATE_N_RATIOS];
    size_t runs_to[CUTUNE_SIMULATE_N_RATIOS];
    /* The objective the runs minimised: optimum_ms, random_best_ms and
     * each run's best_ms and random_best_ms are in its unit (ms for
     * TIME, J for ENERGY, J s for EDP). */
    cutune_objective objective;
} cutune_simulate_result;

typedef struct cutune_simulation cutune_simulation;

/* Replays the recorded results of `options->results_path` as if they were
 * the GPU: each run's strategy proposes configurations of `problem`'s
 * space (load it with space_only when its kernel is not at hand), a
 * recorded failure fails again, a configuration the file does not hold
 * fails and is counted apart. Needs no GPU. Sets *out (owned by the
 * caller, freed with cutune_simulation_destroy) also on failure, for
 * cutune_simulation_errmsg. Returns CUTUNE_ERR_NO_VALID_RESULT when no run
 * found a configuration that ran correctly; the result is still there. */
cutune_status cutune_simulate(const cutune_problem *problem,
                              const cutune_simulate_options *options,
                              cutune_simulation **out);
/* Borrowed from the handle; NULL before a replay got as far as running. */
const cutune_simulate_result *
cutune_simulation_result(const cutune_simulation *simulation);
const char *cutune_simulation_errmsg(const cutune_simulation *simulation);
void cutune_simulation_destroy(cutune_simulation *simulation);

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif

#ifdef __cplusplus
}
#endif

#endif
