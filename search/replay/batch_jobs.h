/* Which configurations a batch compiles, and in what order: one rule for
 * the tuner (tuner/session/evaluate.c) and the clock of a replay
 * (replay_clock.c). Works without a GPU. */
#ifndef CUTUNE_SEARCH_BATCH_JOBS_H
#define CUTUNE_SEARCH_BATCH_JOBS_H

#include <stddef.h>

/* Compiling ahead: after each of a batch's first jobs, up to half the
 * compile threads and AHEAD_PROPOSALS, the AHEAD_EACH configurations the
 * strategy would propose next should that one turn out the fastest (its
 * `ahead`), so that the first compiles of a batch are half proposals,
 * half those. A batch of the default strategy mostly ends at a new best,
 * and the next one starts around it: replayed on the recorded spaces with
 * 16 threads, the batches that began by waiting for NVRTC fell from 12-15
 * to 3.5 per tune of 100 evaluations (bench-divergence --batch 32
 * --ahead 8,1; at batch 16 from 13-16 to 3.6-3.8, where 4 x 2 did less
 * for as many compiles and 6 x 2 made more proposals compile late), and
 * with 2 threads all waits from 53-54 to 49.
 * The replay takes every compile to be as long; on an H200, where they
 * are not, the tuner's waits fell by 8-10% (bench/results/
 * 2026-11-23-h200-s7.md). */
#define CUTUNE__AHEAD_PROPOSALS 8
#define CUTUNE__AHEAD_EACH      1

/* The proposals of a batch that get what comes after them compiled
 * ahead, with `threads` compile threads. */
static inline size_t cutune__ahead_proposals(int threads)
{
    size_t k = threads > 0 ? ((size_t)threads + 1) / 2 : 1;
    return k < CUTUNE__AHEAD_PROPOSALS ? k : CUTUNE__AHEAD_PROPOSALS;
}

/* What a strategy would propose next should configuration `index` turn
 * out the fastest (cutune__search_ahead); up to `cap` into `out`. */
typedef size_t (*cutune__ahead_fn)(void *ctx, size_t index, size_t *out,
                                   size_t cap);

/* How many proposals an async strategy keeps in flight
 * (cutune__search_run_async), from what a compile and what a measurement
 * have cost so far (means, seconds; 0 when none is known): where a
 * compile takes as long as measuring k results, k in flight keep the GPU
 * measuring while the next compile, and no more than the threads compile
 * at once. Every thread's worth without figures (a tune starts
 * compile-bound). */
size_t cutune__clock_window(int threads, double compile_s, double measure_s);

/* The compile jobs of a batch of n proposals, in the order the pool
 * starts them: the proposals in order, those with skip[i] set (answered
 * without compiling) left out, each of the first n_ahead compiled ones
 * followed by up to `each` configurations `ahead` names for it (none that
 * the batch proposes or the list already holds: a compile for a later
 * batch, which the binary cache keeps). `jobs` holds n + n_ahead * each;
 * job_of[i] is proposal i's place in it (unset where skipped). Returns
 * how many jobs there are; *named counts those `ahead` added. `skip` and
 * `ahead` may be NULL; `each` is at most 16. */
size_t cutune__batch_jobs(const size_t *proposals, size_t n,
                          const unsigned char *skip, size_t n_ahead,
                          size_t each, cutune__ahead_fn ahead, void *ctx,
                          size_t *jobs, size_t *job_of, size_t *named);

#endif
