/* Search strategies and the loop that drives them.
 *
 * A strategy is a const table of functions, in the shape of GSL's
 * gsl_multimin_fminimizer_type: the driver allocates `state_size` bytes,
 * calls init, then alternates next (the strategy proposes configurations)
 * and report (the driver tells it what each one measured). New strategies
 * plug in by adding a table; the tuner never changes.
 *
 * Objectives are minimised (runtimes). A failed configuration is reported
 * with objective = INFINITY.
 */
#ifndef CUTUNE_SEARCH_STRATEGY_H
#define CUTUNE_SEARCH_STRATEGY_H

#include <stddef.h>
#include <stdint.h>

#include <gsl/gsl_rng.h>

#include "history.h"
#include "space/space.h"

/* What init receives. */
typedef struct cutune__strategy_ctx {
    const cutune__space *space;
    gsl_rng *rng;  /* owned by the driver; seeded from the run */
    size_t start;  /* occupancy-seeded first configuration, or
                      CUTUNE__NONE when there is none */
    size_t budget; /* evaluations allowed (CUTUNE__UNLIMITED: unlimited) */
    /* Borrowed, NULL for the strategy's own constants: a strategy that
     * takes settings says which struct (the default strategy:
     * cutune__default_params), so that a benchmark can choose them by
     * leave-one-out instead of on one space. */
    const void *params;
} cutune__strategy_ctx;

typedef struct cutune__strategy_type {
    const char *name;
    size_t state_size;
    /* Returns 0, or -1 when memory ran out (having freed what it took:
     * destroy is called only after a successful init). */
    int (*init)(void *state, const cutune__strategy_ctx *ctx);
    /* Writes up to `cap` (>= 1) proposals to `out` and returns how many;
     * 0 means the strategy has nothing more to propose. A strategy may
     * return fewer than cap when it needs results first. */
    size_t (*next)(void *state, size_t *out, size_t cap);
    /* The result of a proposal (also of one the driver answered from an
     * earlier evaluation without re-measuring it). */
    void (*report)(void *state, size_t index, double objective);
    void (*destroy)(void *state);
    /* Optional (NULL: never). Asked after each result of a batch that the
     * evaluator delivers one at a time: nonzero when the rest of the batch
     * is no longer wanted (a climb found its move). Those proposals are
     * then not evaluated, so a batch of any size evaluates the same
     * configurations as proposals made one by one, while the compile pool
     * still works ahead on the whole batch. */
    int (*enough)(void *state);
    /* Optional: a proposal that was not evaluated (the strategy had
     * enough, or the budget ran out); the strategy may propose it again. */
    void (*withdraw)(void *state, size_t index);
    /* Nonzero when the proposals never depend on the results (brute force,
     * random, Sobol). The tuner then asks for long batches: the compile
     * pool works ahead over a whole batch, and the GPU waits for NVRTC
     * only at a batch's first job. */
    int oblivious;
    /* Optional (NULL: none). Up to `cap` configurations, not yet taken,
     * that the strategy would propose next should proposal `index` turn
     * out the fastest so far, most likely first; the state is left as it
     * was. The tuner compiles them beside the batch, so that when a
     * result ends the batch and the next one starts around it, the GPU
     * does not wait for NVRTC. */
    size_t (*ahead)(void *state, size_t index, size_t *out, size_t cap);
    /* Nonzero when the strategy proposes every configuration and then
     * stops (brute force), so that a run needs no evaluation budget to
     * end. Callers ask this flag rather than compare names, so that a new
     * exhaustive strategy is treated alike. */
    int exhaustive;
    /* Optional (NULL: not wanted). What proposing `index` cost, in
     * seconds (cutune__search_cost), told just before its report when the
     * evaluator knows it; a strategy that runs without an evaluation
     * budget, against the clock, can weigh what it proposes by what it is
     * likely to cost. */
    void (*cost)(void *state, size_t index, double seconds);
    /* Nonzero when the strategy may propose while earlier proposals have
     * no result yet, each taken as proposed, and takes results in any
     * order: a tune on the clock then keeps a window of proposals in
     * flight (cutune__search_run_async) instead of waiting for each. */
    int async;
} cutune__strategy_type;

/* What a strategy that remembers its proposals starts from; its state
 * holds one as a member named `base`. */
typedef struct cutune__strategy_base {
    cutune__history h;
    const cutune__space *space; /* borrowed from the context */
    gsl_rng *rng;               /* borrowed from the context */
    size_t start; /* the context's start when valid, else CUTUNE__NONE */
    size_t n_params;
} cutune__strategy_base;

/* Fills `b` from `ctx`, the history sized to the space. Returns 0, or -1
 * when memory ran out (nothing to free then). */
int cutune__strategy_base_init(cutune__strategy_base *b,
                               const cutune__strategy_ctx *ctx);
/* Frees what cutune__strategy_base_init took. */
void cutune__strategy_base_free(cutune__strategy_base *b);

extern const cutune__strategy_type *cutune__strategy_default;
extern const cutune__strategy_type *cutune__strategy_brute_force;
extern const cutune__strategy_type *cutune__strategy_local;
extern const cutune__strategy_type *cutune__strategy_random;
extern const cutune__strategy_type *cutune__strategy_sobol;
extern const cutune__strategy_type *cutune__strategy_annealing;
extern const cutune__strategy_type *cutune__strategy_genetic;
extern const cutune__strategy_type *cutune__strategy_diff_evo;
extern const cutune__strategy_type *cutune__strategy_bayes;
extern const cutune__strategy_type *cutune__strategy_forest;

/* The tables themselves, so that cutune__strategies[] can be a constant
 * initializer (the pointers above are objects, not constant expressions). */
extern const cutune__strategy_type cutune__strategy_default_type;
extern const cutune__strategy_type cutune__strategy_brute_force_type;
extern const cutune__strategy_type cutune__strategy_local_type;
extern const cutune__strategy_type cutune__strategy_random_type;
extern const cutune__strategy_type cutune__strategy_sobol_type;
extern const cutune__strategy_type cutune__strategy_annealing_type;
extern const cutune__strategy_type cutune__strategy_genetic_type;
extern const cutune__strategy_type cutune__strategy_diff_evo_type;
extern const cutune__strategy_type cutune__strategy_bayes_type;
extern const cutune__strategy_type cutune__strategy_forest_type;

/* All strategies, NULL-terminated; the first is the default. */
extern const cutune__strategy_type *const cutune__strategies[];
/* NULL when no strategy has that name. */
const cutune__strategy_type *cutune__strategy_find(const char *name);

/* Called by an evaluator after result i (in order, from 0) of a batch is
 * written; returns 0 when the search wants no more of the batch. */
typedef int (*cutune__eval_more_fn)(void *ctx, size_t i, double objective);

/* For an evaluator, with the `more_ctx` it was given: the strategy's
 * `ahead` for proposal `index` of the batch being evaluated (0 when the
 * strategy has none). Configurations already proposed are left out. */
size_t cutune__search_ahead(void *more_ctx, size_t index, size_t *out,
                            size_t cap);

/* Launches every measured candidate gets before the tuner may drop it as
 * clearly slower than the best (warm-up and early launches): what a
 * proposal costs to run, whatever it turns out to be. A contender is
 * measured longer, but because it is fast, not because it was dear to
 * try; a cost that counted that would make fast configurations look
 * dear. The tuner checks that its own counts add up to this. */
#define CUTUNE__COST_LAUNCHES 8

/* For an evaluator, with the `more_ctx` it was given: what result i of
 * the batch cost to try, in seconds: its compilation (none where a binary
 * cache had it) plus CUTUNE__COST_LAUNCHES launches at its runtime (none
 * when it failed), said before `more` is called for it or, without
 * `more`, before the evaluator returns. The strategy's `cost` hears it
 * with the result; an evaluator that never calls this leaves the strategy
 * without costs. */
void cutune__search_cost(void *more_ctx, size_t i, double seconds);

/* That cost, from a result's compilation milliseconds (0 where a binary
 * cache had it) and its runtime in milliseconds (NaN, or not above 0,
 * when it failed): one definition for the tuner and for recorded
 * results. */
double cutune__search_try_seconds(double compile_ms, double time_ms);

/* Evaluates a batch of distinct, never-before-seen configurations in the
 * order given and writes their objectives (INFINITY for failed ones).
 * Returns 0, or -1 to abort the search (a fatal error of the caller, e.g.
 * no device). The evaluator may evaluate fewer than n: when a time budget
 * runs out, or when `more` (which an evaluator may call after each result,
 * or never) returned 0; it returns the count evaluated through *done. */
typedef int (*cutune__eval_fn)(void *user, const size_t *indices, size_t n,
                               double *objectives, size_t *done,
                               cutune__eval_more_fn more, void *more_ctx);

typedef struct cutune__search_options {
    size_t max_evals; /* 0: unlimited */
    size_t batch;     /* proposals asked for at once; 0: 1 */
    uint64_t seed;
    size_t start;       /* CUTUNE__NONE: none */
    const void *params; /* the context's params; NULL: none */
} cutune__search_options;

typedef struct cutune__search_result {
    size_t evaluations;    /* distinct configurations evaluated */
    size_t best;           /* CUTUNE__NONE when none succeeded */
    double best_objective; /* INFINITY when none succeeded */
} cutune__search_result;

/* The batch the tuner asks `type` for with `threads` compile threads and
 * `slots` measuring devices: twice the threads, so that the pool has the
 * next jobs to start while the first are measured; a strategy that does
 * not steer by results loses nothing to long batches, and the GPU then
 * waits for NVRTC at a batch's first job only every
 * CUTUNE__OBLIVIOUS_BATCHES-th time (on a cold brute-force tune of 1 ms
 * kernels those waits were a tenth of the wall time); with several slots,
 * every slot busy and the next proposal ready when one finishes. One rule
 * for the tuner and the clock of a replay. */
#define CUTUNE__OBLIVIOUS_BATCHES 8
size_t cutune__search_batch(const cutune__strategy_type *type, int threads,
                            size_t slots);

/* Runs `type` on `space` until the strategy stops, the evaluation budget
 * is spent or every configuration was seen. A configuration proposed a
 * second time is answered from the first result and is not re-evaluated;
 * a strategy that keeps proposing only seen configurations is stopped.
 * Returns 0, -1 when memory ran out, -2 when the evaluator aborted (the
 * result holds what was found before). */
int cutune__search_run(const cutune__strategy_type *type,
                       const cutune__space *space,
                       const cutune__search_options *options,
                       cutune__eval_fn eval, void *user,
                       cutune__search_result *result);

/* An evaluator that takes proposals one at a time and gives results in
 * the order they are in, not the order proposed: on the clock a slow
 * compile then holds up only its own result. */
typedef struct cutune__async_eval {
    /* Starts on configuration `index` (new, never evaluated). 0, or -1 to
     * abort the search. */
    int (*submit)(void *user, size_t index);
    /* Waits for the next result of a submitted configuration: 0 with
     * *index, *objective (INFINITY: failed) and *cost (what trying it
     * cost, seconds, or NaN: cutune__search_cost) set; 1 when the
     * evaluator stops (its time is up); -1 to abort the search. */
    int (*result)(void *user, size_t *index, double *objective, double *cost);
    /* Proposals to keep in flight now, at least 1 (cutune__clock_window);
     * asked before each proposal. */
    size_t (*window)(void *user);
} cutune__async_eval;

/* cutune__search_run with proposals made one at a time, up to the
 * evaluator's window in flight (at most options->batch), each answered
 * whenever its result is in. Proposals in flight when the evaluator stops
 * are withdrawn. Returns as cutune__search_run does. */
int cutune__search_run_async(const cutune__strategy_type *type,
                             const cutune__space *space,
                             const cutune__search_options *options,
                             const cutune__async_eval *ev, void *user,
                             cutune__search_result *result);

#endif
