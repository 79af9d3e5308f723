/* The order in which a tune compiles configurations: one queue for the
 * whole search, shared by the tuner's compile pool (tuner/compile/
 * compile_queue.c) and by the clock of a replay (replay_clock.c), so that
 * the model schedules exactly as the tuner does.
 *
 * Two classes of job. The current batch's jobs are *wanted*: they start in
 * the order the batch gave them, before anything else. When the next batch
 * comes, what the last one wanted and did not start is not thrown away
 * but becomes *speculation*: a steering strategy cuts its batches short
 * and mostly proposes the same frontier again, so those compiles are
 * likely still wanted, only later. Speculation starts only when nothing
 * wanted waits, the newest batches' first; speculation older than
 * CUTUNE__ORDER_GENERATIONS batches is dropped unstarted, so that a
 * wanted compile never waits behind many stale guesses. A job the GPU is
 * waiting for can be moved to the very front (urge).
 *
 * A key is a configuration's index in the space. Not thread-safe: the
 * caller locks.
 */
#ifndef CUTUNE_SEARCH_COMPILE_ORDER_H
#define CUTUNE_SEARCH_COMPILE_ORDER_H

#include <stddef.h>
#include <stdint.h>

#include "expr/none.h"

/* Batches a speculative job stays queued for before it is dropped. */
#define CUTUNE__ORDER_GENERATIONS 4

typedef enum cutune__job_state {
    CUTUNE__JOB_NONE = 0, /* never queued, or dropped unstarted */
    CUTUNE__JOB_QUEUED,
    CUTUNE__JOB_RUNNING,
    CUTUNE__JOB_DONE
} cutune__job_state;

/* Counts for the tune's report. */
typedef struct cutune__order_stats {
    size_t started;        /* jobs started */
    size_t started_wanted; /* ... while wanted by the current batch */
    size_t started_spec;   /* ... as speculation */
    size_t spec_used;      /* started as speculation, then wanted by a
                              later batch: a hit */
    size_t dropped;        /* speculation dropped unstarted */
} cutune__order_stats;

typedef struct cutune__compile_order {
    size_t n;             /* keys 0..n-1 */
    unsigned char *state; /* n: cutune__job_state */
    unsigned char *spec;  /* n: queued or started as speculation */
    uint64_t *rank;       /* n: place in its batch's order; 0: urged */
    uint64_t *gen;        /* n: the batch that queued it last */
    size_t *queued;       /* the queued keys, in no order */
    size_t n_queued;
    size_t cap_queued;
    uint64_t generation; /* batches so far */
    uint64_t seq;        /* jobs queued so far */
    cutune__order_stats stats;
} cutune__compile_order;

/* Returns 0, or -1 when memory ran out (nothing to free then). */
int cutune__order_init(cutune__compile_order *o, size_t n);
void cutune__order_free(cutune__compile_order *o);

/* A new batch: keys[0..n) are wanted in that order, before everything
 * else (those already running or done stay as they are). Jobs of the
 * last batch still queued become speculation; speculation that has
 * waited CUTUNE__ORDER_GENERATIONS batches is dropped. Returns 0, or -1
 * when memory ran out (the queue then holds what fitted). */
int cutune__order_want(cutune__compile_order *o, const size_t *keys, size_t n);

/* One more wanted job, after those wanted already, in the same batch
 * (a strategy in flight proposes one at a time); running or done keys
 * are left alone. Returns 0, or -1 when memory ran out. */
int cutune__order_add(cutune__compile_order *o, size_t key);

/* Moves a queued key to the very front (the GPU waits for it); queues it
 * first when it was not queued. A running or done key is left alone.
 * Returns 0, or -1 when memory ran out. */
int cutune__order_urge(cutune__compile_order *o, size_t key);

/* The key to compile next, now RUNNING; CUTUNE__NONE when none is queued. */
size_t cutune__order_pop(cutune__compile_order *o);

/* A running key has finished compiling. */
void cutune__order_done(cutune__compile_order *o, size_t key);

static inline cutune__job_state
cutune__order_state(const cutune__compile_order *o, size_t key)
{
    return key < o->n ? (cutune__job_state)o->state[key] : CUTUNE__JOB_NONE;
}

#endif
