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
    double now;              /* the GPU's time: free from then on */
    double gpu_wait_s;
    double compiled_s, measured_s; /* sums over the results so far */
    size_t results;
    size_t *jobs, *job_of;   /* a batch's compile jobs (batch_jobs.h) */
    size_t cap;
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

#endif
