/* A batch over several measuring slots: one thread per slot takes the
 * batch's next proposal, waits for its compile and measures it on its
 * slot's worker, so that as many proposals are measured at once as there
 * are slots. The results go back to the strategy in proposal order, as
 * with one slot (evaluate.c takes them one by one).
 *
 * Locking: the session lock guards everything the threads share (the
 * session's records, telemetry, log callback and errors, the crew's own
 * state). The thread that evaluates the batch holds it from crew_start
 * to crew_stop except while waiting for a result; a measuring thread
 * holds it except while its worker or a compile works
 * (cutune__session_call, the compile wait, a replayed device's sleep). */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "session_internal.h"

enum { PENDING = 0, TAKEN, MEASURED, HANDED };

typedef struct member {
    cutune__crew *crew;
    cutune__mslot *slot;
    pthread_t thread;
    int started;
} member;

struct cutune__crew {
    cutune_session *s;
    cutune__batch *b;
    eval_record *recs;    /* per proposal, as measured */
    unsigned char *state; /* per proposal */
    size_t next;          /* the next proposal to start */
    size_t running;       /* threads not yet ended */
    int stop;
    pthread_cond_t changed; /* a result is in, or a thread ended */
    member *members;
    size_t n_members;
};

/* The next proposal a thread may start, or SIZE_MAX when none. */
static size_t next_proposal(cutune__crew *c)
{
    cutune_session *s = c->s;
    while (c->next < c->b->n && c->b->prior[c->next])
        c->next++;
    if (c->stop || s->fatal || c->next >= c->b->n ||
        cutune__session_time_is_up(s))
        return SIZE_MAX;
    return c->next++;
}

static void *measure_loop(void *arg)
{
    member *m = arg;
    cutune__crew *c = m->crew;
    cutune_session *s = c->s;
    pthread_mutex_lock(&s->lock);
    size_t i;
    while ((i = next_proposal(c)) != SIZE_MAX) {
        c->state[i] = TAKEN;
        eval_record *e = &c->recs[i];
        memset(e, 0, sizeof *e);
        e->pub.config_index = c->b->indices[i];
        e->pub.time_ms = NAN;
        e->pub.sm_clock_mhz = e->pub.temperature_c = -1;
        e->energy_j = e->power_w = e->energy_rsd = NAN;
        cutune__session_measure_proposal(s, m->slot, c->b, i, e);
        c->state[i] = MEASURED;
        pthread_cond_broadcast(&c->changed);
    }
    c->running--;
    pthread_cond_broadcast(&c->changed);
    pthread_mutex_unlock(&s->lock);
    return NULL;
}

static void crew_free(cutune__crew *c)
{
    for (size_t i = 0; i < c->b->n; i++)
        if (c->state[i] == MEASURED) {
            free((char *)c->recs[i].pub.message);
            free(c->recs[i].runtimes);
        }
    pthread_cond_destroy(&c->changed);
    free(c->members);
    free(c->recs);
    free(c->state);
    free(c);
}

cutune__crew *cutune__crew_start(cutune_session *s, cutune__batch *b)
{
    if (s->n_slots < 2 || b->n == 0)
        return NULL;
    cutune__crew *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->s = s;
    c->b = b;
    c->recs = calloc(b->n, sizeof *c->recs);
    c->state = calloc(b->n, 1);
    c->members = calloc(s->n_slots, sizeof *c->members);
    if (!c->recs || !c->state || !c->members ||
        pthread_cond_init(&c->changed, NULL) != 0) {
        free(c->recs);
        free(c->state);
        free(c->members);
        free(c);
        return NULL;
    }
    pthread_mutex_lock(&s->lock);
    s->parallel = 1;
    for (size_t k = 0; k < s->n_slots; k++) {
        member *m = &c->members[k];
        m->crew = c;
        m->slot = &s->slots[k];
        m->started = pthread_create(&m->thread, NULL, measure_loop, m) == 0;
        c->running += m->started != 0;
    }
    c->n_members = s->n_slots;
    if (c->running == 0) {
        /* No thread: measured on slot 0 alone, as with one device. */
        s->parallel = 0;
        pthread_mutex_unlock(&s->lock);
        crew_free(c);
        return NULL;
    }
    return c;
}

int cutune__crew_take(cutune__crew *c, size_t i, eval_record *e)
{
    while (c->state[i] != MEASURED) {
        /* Not started, and no thread left to start it. */
        if (c->state[i] == PENDING && c->running == 0)
            return -1;
        pthread_cond_wait(&c->changed, &c->s->lock);
    }
    *e = c->recs[i];
    c->state[i] = HANDED;
    return 0;
}

void cutune__crew_stop(cutune__crew *c)
{
    if (!c)
        return;
    cutune_session *s = c->s;
    c->stop = 1;
    pthread_mutex_unlock(&s->lock);
    for (size_t k = 0; k < c->n_members; k++)
        if (c->members[k].started)
            pthread_join(c->members[k].thread, NULL);
    s->parallel = 0;
    crew_free(c);
}
