/* The clock of a replay; see replay_clock.h. Compile threads are events
 * on a timeline: a thread free at t starts the next job of the shared
 * order (compile_order.h) at t. The order changes only when the tuner
 * would change it (a new batch, the GPU urging the proposal it waits
 * for), and the timeline is first brought up to that moment, so each job
 * starts where the tuner's pool would have started it. */
#include "replay_clock.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "batch_jobs.h"
#include "strategy/strategy.h"

static double at(const double *v, size_t key)
{
    return v && isfinite(v[key]) && v[key] > 0 ? v[key] : 0.0;
}

int cutune__clock_init(cutune__clock *c, size_t n, int threads,
                       const double *compile_s, const double *measure_s,
                       double start)
{
    memset(c, 0, sizeof *c);
    c->threads = threads > 0 ? threads : 1;
    c->compile_s = compile_s;
    c->measure_s = measure_s;
    c->now = start;
    c->free_at = malloc((size_t)c->threads * sizeof *c->free_at);
    c->done_at = malloc((n ? n : 1) * sizeof *c->done_at);
    c->flight = malloc((n ? n : 1) * sizeof *c->flight);
    if (!c->free_at || !c->done_at || !c->flight ||
        cutune__order_init(&c->order, n)) {
        free(c->free_at);
        free(c->done_at);
        free(c->flight);
        memset(c, 0, sizeof *c);
        return -1;
    }
    for (int t = 0; t < c->threads; t++)
        c->free_at[t] = start;
    for (size_t i = 0; i < n; i++)
        c->done_at[i] = NAN;
    return 0;
}

void cutune__clock_free(cutune__clock *c)
{
    free(c->free_at);
    free(c->done_at);
    free(c->jobs);
    free(c->job_of);
    free(c->flight);
    cutune__order_free(&c->order);
    memset(c, 0, sizeof *c);
}

static int first_free(const cutune__clock *c)
{
    int t = 0;
    for (int k = 1; k < c->threads; k++)
        if (c->free_at[k] < c->free_at[t])
            t = k;
    return t;
}

/* The thread free first starts the next job; 0 when none is queued. */
static int start_next(cutune__clock *c)
{
    size_t key = cutune__order_pop(&c->order);
    if (key == CUTUNE__NONE)
        return 0;
    int t = first_free(c);
    c->done_at[key] = c->free_at[t] + at(c->compile_s, key);
    c->compile_busy_s += at(c->compile_s, key);
    c->free_at[t] = c->done_at[key];
    return 1;
}

/* Every job a thread starts up to time t; a thread idle meanwhile is
 * idle until t, where the order may change. */
static void advance(cutune__clock *c, double t)
{
    while (c->free_at[first_free(c)] <= t)
        if (!start_next(c))
            break;
    for (int k = 0; k < c->threads; k++)
        if (c->free_at[k] < t)
            c->free_at[k] = t;
}

int cutune__clock_batch(cutune__clock *c, const size_t *indices, size_t n,
                        void *more_ctx)
{
    size_t cap = n + CUTUNE__AHEAD_PROPOSALS * CUTUNE__AHEAD_EACH;
    if (cap > c->cap) {
        size_t *j = realloc(c->jobs, cap * sizeof *j);
        if (j)
            c->jobs = j;
        size_t *o = realloc(c->job_of, (n ? n : 1) * sizeof *o);
        if (o)
            c->job_of = o;
        if (!j || !o)
            return -1;
        c->cap = cap;
    }
    advance(c, c->now);
    size_t named;
    size_t n_jobs = cutune__batch_jobs(
        indices, n, NULL, more_ctx ? cutune__ahead_proposals(c->threads) : 0,
        CUTUNE__AHEAD_EACH, cutune__search_ahead, more_ctx, c->jobs, c->job_of,
        &named);
    return cutune__order_want(&c->order, c->jobs, n_jobs);
}

/* The GPU measures `key` once its compile is done. */
static double measure_now(cutune__clock *c, size_t key)
{
    double ready = isnan(c->done_at[key]) ? c->now : c->done_at[key];
    if (ready > c->now) {
        c->gpu_wait_s += ready - c->now;
        c->now = ready;
    }
    c->now += at(c->measure_s, key);
    c->compiled_s += at(c->compile_s, key);
    c->measured_s += at(c->measure_s, key);
    c->results++;
    return c->now;
}

int cutune__clock_submit(cutune__clock *c, size_t key)
{
    if (key >= c->order.n)
        return 0;
    advance(c, c->now);
    if (cutune__order_add(&c->order, key) != 0)
        return -1;
    c->flight[c->n_flight++] = key;
    return 0;
}

/* The in-flight proposal whose compile ends first, of those started;
 * CUTUNE__NONE (position) when none has started. */
static size_t first_compiled(const cutune__clock *c)
{
    size_t at_pos = CUTUNE__NONE;
    for (size_t i = 0; i < c->n_flight; i++) {
        double t = c->done_at[c->flight[i]];
        if (!isnan(t) &&
            (at_pos == CUTUNE__NONE || t < c->done_at[c->flight[at_pos]]))
            at_pos = i;
    }
    return at_pos;
}

double cutune__clock_next(cutune__clock *c, size_t *key)
{
    *key = CUTUNE__NONE;
    if (c->n_flight == 0)
        return c->now;
    advance(c, c->now);
    /* A job not started yet may still end first: threads go on starting
     * jobs until the first compiled one ends before the next start. */
    size_t pos = first_compiled(c);
    while (pos == CUTUNE__NONE ||
           c->done_at[c->flight[pos]] > c->free_at[first_free(c)]) {
        if (!start_next(c))
            break;
        pos = first_compiled(c);
    }
    if (pos == CUTUNE__NONE)
        return c->now;
    *key = c->flight[pos];
    c->flight[pos] = c->flight[--c->n_flight];
    return measure_now(c, *key);
}

size_t cutune__clock_window_now(const cutune__clock *c)
{
    double n = c->results ? (double)c->results : 1.0;
    return cutune__clock_window(c->threads, c->compiled_s / n,
                                c->measured_s / n);
}

double cutune__clock_measure(cutune__clock *c, size_t key)
{
    advance(c, c->now);
    if (cutune__order_state(&c->order, key) != CUTUNE__JOB_RUNNING &&
        cutune__order_state(&c->order, key) != CUTUNE__JOB_DONE) {
        /* Urged to the front, it is the next job any thread starts. */
        if (cutune__order_urge(&c->order, key) == 0)
            start_next(c);
    }
    return measure_now(c, key);
}
