/* The order of a tune's compiles; see compile_order.h. The queue is short
 * (a few batches of at most a few hundred jobs), so the next job is found
 * by a scan rather than kept in a heap that demotions would reorder. */
#include "compile_order.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

int cutune__order_init(cutune__compile_order *o, size_t n)
{
    memset(o, 0, sizeof *o);
    o->n = n;
    o->state = calloc(n ? n : 1, 1);
    o->spec = calloc(n ? n : 1, 1);
    o->rank = calloc(n ? n : 1, sizeof *o->rank);
    o->gen = calloc(n ? n : 1, sizeof *o->gen);
    if (!o->state || !o->spec || !o->rank || !o->gen) {
        cutune__order_free(o);
        return -1;
    }
    return 0;
}

void cutune__order_free(cutune__compile_order *o)
{
    free(o->state);
    free(o->spec);
    free(o->rank);
    free(o->gen);
    free(o->queued);
    memset(o, 0, sizeof *o);
}

static int enqueue(cutune__compile_order *o, size_t key)
{
    /* Only a job never queued, or dropped, joins the queue, so the queue
     * holds each key at most once. */
    assert(key < o->n && o->state[key] == CUTUNE__JOB_NONE);
    if (o->n_queued == o->cap_queued) {
        size_t cap = o->cap_queued ? 2 * o->cap_queued : 64;
        size_t *q = realloc(o->queued, cap * sizeof *q);
        if (!q)
            return -1;
        o->queued = q;
        o->cap_queued = cap;
    }
    o->queued[o->n_queued++] = key;
    o->state[key] = CUTUNE__JOB_QUEUED;
    assert(o->n_queued <= o->n);
    return 0;
}

/* Whether queued job a starts before queued job b: urged, then wanted in
 * the batch's order, then speculation of the newest batch first. */
static int before(const cutune__compile_order *o, size_t a, size_t b)
{
    if (o->spec[a] != o->spec[b])
        return !o->spec[a];
    if (o->spec[a] && o->gen[a] != o->gen[b])
        return o->gen[a] > o->gen[b];
    return o->rank[a] < o->rank[b];
}

int cutune__order_want(cutune__compile_order *o, const size_t *keys, size_t n)
{
    o->generation++;
    /* The last batch's unstarted jobs fall behind; stale guesses go. */
    size_t kept = 0;
    for (size_t i = 0; i < o->n_queued; i++) {
        size_t key = o->queued[i];
        assert(o->state[key] == CUTUNE__JOB_QUEUED);
        o->spec[key] = 1;
        if (o->gen[key] + CUTUNE__ORDER_GENERATIONS <= o->generation) {
            o->state[key] = CUTUNE__JOB_NONE;
            o->spec[key] = 0;
            o->stats.dropped++;
            continue;
        }
        o->queued[kept++] = key;
    }
    o->n_queued = kept;
    for (size_t i = 0; i < n; i++)
        if (cutune__order_add(o, keys[i]) != 0)
            return -1;
    return 0;
}

int cutune__order_add(cutune__compile_order *o, size_t key)
{
    if (key >= o->n)
        return 0;
    cutune__job_state st = (cutune__job_state)o->state[key];
    if (st == CUTUNE__JOB_RUNNING || st == CUTUNE__JOB_DONE) {
        /* Started as a guess, now wanted: the guess paid. */
        if (o->spec[key])
            o->stats.spec_used++;
        o->spec[key] = 0;
        return 0;
    }
    if (st == CUTUNE__JOB_NONE && enqueue(o, key) != 0)
        return -1;
    o->spec[key] = 0;
    o->gen[key] = o->generation;
    o->rank[key] = ++o->seq;
    return 0;
}

int cutune__order_urge(cutune__compile_order *o, size_t key)
{
    if (key >= o->n)
        return 0;
    if (o->state[key] == CUTUNE__JOB_NONE && enqueue(o, key) != 0)
        return -1;
    if (o->state[key] != CUTUNE__JOB_QUEUED)
        return 0;
    o->spec[key] = 0;
    o->gen[key] = o->generation;
    o->rank[key] = 0;
    return 0;
}

size_t cutune__order_pop(cutune__compile_order *o)
{
    if (o->n_queued == 0)
        return CUTUNE__NONE;
    size_t at = 0;
    for (size_t i = 1; i < o->n_queued; i++)
        if (before(o, o->queued[i], o->queued[at]))
            at = i;
    size_t key = o->queued[at];
    assert(o->state[key] == CUTUNE__JOB_QUEUED);
    o->queued[at] = o->queued[--o->n_queued];
    o->state[key] = CUTUNE__JOB_RUNNING;
    o->stats.started++;
    if (o->spec[key])
        o->stats.started_spec++;
    else
        o->stats.started_wanted++;
    return key;
}

void cutune__order_done(cutune__compile_order *o, size_t key)
{
    if (key < o->n && o->state[key] == CUTUNE__JOB_RUNNING)
        o->state[key] = CUTUNE__JOB_DONE;
}
