/* The clock of a replay (replay.h): a discrete-event model of a tune's
 * wall time with N compile threads and one GPU. Internal to replay.c and
 * its test. */
#ifndef CUTUNE_SEARCH_REPLAY_CLOCK_H
#define CUTUNE_SEARCH_REPLAY_CLOCK_H

#include <stddef.h>

#include "compile_order.h"

typedef struct cutune__clock {
    int threads;
    double *free_at;         /* threads: when each is next free */
    double *done_at;         /* by key: when its compile ends; NaN: not
                                started */
    const double *compile_s; /* borrowed, by key; NULL: 0 */
    const double *measure_s; /* borrowed, by key; NULL: 0 */
    cutune__compile_order order;
    double now; /* the GPU's time: free from then on */
    double gpu_wait_s;
    double compiled_s, measured_s; /* sums over the results so far */
    double compile_busy_s;         /* compile seconds of every job started */
    size_t results;
    size_t *jobs, *job_of; /* a batch's compile jobs (batch_jobs.h) */
    size_t cap;
    size_t *flight; /* proposals in flight (async), unmeasured */
    size_t n_flight;
} cutune__clock;

/* A clock at `start` seconds over keys 0..n-1. Returns 0, or -1 when
 * memory ran out (nothing to free then). */
int cutune__clock_init(cutune__clock *c, size_t n, int threads,
                       const double *compile_s, const double *measure_s,
                       double start);
void cutune__clock_free(cutune__clock *c);

/* A batch handed to the tuner now: its compile jobs queued as the tuner
 * queues them, with what `more_ctx`'s strategy names ahead (NULL: none).
 * Returns 0, or -1 when memory ran out. */
int cutune__clock_batch(cutune__clock *c, const size_t *indices, size_t n,
                        void *more_ctx);

/* Proposal `key` measured next: the GPU waits for its compile, then
 * measures it; returns the time its result is in (the clock's new now). */
double cutune__clock_measure(cutune__clock *c, size_t key);

/* In flight (cutune__search_run_async): `key` proposed now, queued after
 * the others in flight. Returns 0, or -1 when memory ran out. */
int cutune__clock_submit(cutune__clock *c, size_t key);

/* The proposal in flight the GPU measures next, the first whose compile
 * is done, measured: its key into *key; returns the time its result is
 * in (the clock's new now). Nothing in flight: the clock's now, *key
 * CUTUNE__NONE. */
double cutune__clock_next(cutune__clock *c, size_t *key);

/* The window an async strategy keeps in flight now
 * (cutune__clock_window, from this run's means). */
size_t cutune__clock_window_now(const cutune__clock *c);

#endif
