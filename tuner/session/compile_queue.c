/* The tune's compile queue for a search in flight (evaluate_async.c):
 * pool threads that live as long as the search, each taking the next job
 * of the shared order (search/replay/compile_order.h, the order the replay's
 * clock models) and compiling it through the session's compile
 * processes. Results stay here, by configuration, until the tune ends,
 * so that a configuration compiled once is never compiled again, with or
 * without a binary cache (the final round finds its finalists here). */
#define _POSIX_C_SOURCE 200809L

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "expr/none.h"
#include "session_internal.h"
#include "util.h"

struct cutune__cq {
    cutune_session *s;
    pthread_mutex_t mu;
    pthread_cond_t work, done;
    cutune__compile_order order;
    job_set **sets;       /* by configuration: NULL until submitted */
    unsigned char *ready; /* by configuration: compiled */
    pthread_t *threads;
    int n_threads;
    int stop;
    const cutune__compiler *remote;
};

struct cq_thread {
    cutune__cq *q;
    int slot;
};

static void *cq_thread_main(void *arg)
{
    struct cq_thread *me = arg;
    cutune__cq *q = me->q;
    pthread_mutex_lock(&q->mu);
    for (;;) {
        size_t key = CUTUNE__NONE;
        while (!q->stop &&
               (key = cutune__order_pop(&q->order)) == CUTUNE__NONE)
            pthread_cond_wait(&q->work, &q->mu);
        if (q->stop && key == CUTUNE__NONE)
            break;
        assert(q->sets[key]); /* make_job ran before the key was queued */
        cutune__compile_job *job = &q->sets[key]->jobs[0];
        pthread_mutex_unlock(&q->mu);
        /* A compile error is the configuration's result; NVRTC failing
         * is recorded on the job the same way, with its reason. */
        cutune__compile_with(job, q->remote, me->slot);
        pthread_mutex_lock(&q->mu);
        cutune__order_done(&q->order, key);
        q->ready[key] = 1;
        pthread_cond_broadcast(&q->done);
    }
    pthread_mutex_unlock(&q->mu);
    free(me);
    return NULL;
}

cutune__cq *cutune__cq_create(cutune_session *s)
{
    size_t n = cutune__space_size(s->problem->space);
    cutune__cq *q = calloc(1, sizeof *q);
    if (!q)
        return NULL;
    q->s = s;
    q->sets = calloc(n ? n : 1, sizeof *q->sets);
    q->ready = calloc(n ? n : 1, 1);
    int threads = cutune__session_pool_threads(s);
    q->threads = calloc((size_t)threads, sizeof *q->threads);
    if (!q->sets || !q->ready || !q->threads ||
        cutune__order_init(&q->order, n) != 0) {
        free(q->sets);
        free(q->ready);
        free(q->threads);
        free(q);
        return NULL;
    }
    pthread_mutex_init(&q->mu, NULL);
    pthread_cond_init(&q->work, NULL);
    pthread_cond_init(&q->done, NULL);
    q->remote = cutune__session_compilers(s);
    for (int i = 0; i < threads; i++) {
        struct cq_thread *t = malloc(sizeof *t);
        if (!t)
            break;
        t->q = q;
        t->slot = i;
        if (pthread_create(&q->threads[q->n_threads], NULL, cq_thread_main,
                           t) != 0) {
            free(t);
            break;
        }
        q->n_threads++;
    }
    if (q->n_threads == 0) {
        cutune__cq_destroy(q);
        return NULL;
    }
    return q;
}

/* The compile job of `config`, made once, on the calling (tuning)
 * thread: the problem is not read from pool threads. A pool thread reads
 * q->sets[config] only once the order hands it the key, which happens
 * after this. -1 when memory ran out. */
static int make_job(cutune__cq *q, size_t config)
{
    if (config >= q->order.n)
        return -1;
    if (q->sets[config])
        return 0;
    job_set *js = calloc(1, sizeof *js);
    if (!js || cutune__session_job_set_init(js, q->s, q->s->problem, &config,
                                            1, q->s->proto.arch) != 0) {
        free(js);
        return -1;
    }
    pthread_mutex_lock(&q->mu);
    q->sets[config] = js;
    pthread_mutex_unlock(&q->mu);
    return 0;
}

int cutune__cq_submit(cutune__cq *q, size_t config)
{
    if (make_job(q, config) != 0)
        return -1;
    pthread_mutex_lock(&q->mu);
    int rc = cutune__order_add(&q->order, config);
    pthread_cond_signal(&q->work);
    pthread_mutex_unlock(&q->mu);
    return rc;
}

int cutune__cq_want(cutune__cq *q, const size_t *configs, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (make_job(q, configs[i]) != 0)
            return -1;
    pthread_mutex_lock(&q->mu);
    int rc = cutune__order_want(&q->order, configs, n);
    pthread_cond_broadcast(&q->work);
    pthread_mutex_unlock(&q->mu);
    return rc;
}

cutune__compile_job *cutune__cq_wait(cutune__cq *q, size_t config)
{
    if (make_job(q, config) != 0)
        return NULL;
    pthread_mutex_lock(&q->mu);
    while (!q->ready[config]) {
        /* Still queued (or dropped as stale speculation): it goes next. */
        if (cutune__order_state(&q->order, config) == CUTUNE__JOB_QUEUED ||
            cutune__order_state(&q->order, config) == CUTUNE__JOB_NONE) {
            if (cutune__order_urge(&q->order, config) != 0) {
                pthread_mutex_unlock(&q->mu);
                return NULL;
            }
            pthread_cond_signal(&q->work);
        }
        pthread_cond_wait(&q->done, &q->mu);
    }
    cutune__compile_job *job = &q->sets[config]->jobs[0];
    pthread_mutex_unlock(&q->mu);
    return job;
}

size_t cutune__cq_wait_any(cutune__cq *q, const size_t *configs, size_t n)
{
    assert(n > 0); /* nothing to wait for would wait for ever */
    pthread_mutex_lock(&q->mu);
    for (;;) {
        for (size_t i = 0; i < n; i++)
            if (configs[i] < q->order.n && q->ready[configs[i]]) {
                pthread_mutex_unlock(&q->mu);
                return i;
            }
        /* Nothing compiled yet: the first in flight goes to the front
         * should it still be queued behind others. */
        if (n > 0 &&
            cutune__order_state(&q->order, configs[0]) == CUTUNE__JOB_QUEUED) {
            cutune__order_urge(&q->order, configs[0]);
            pthread_cond_signal(&q->work);
        }
        pthread_cond_wait(&q->done, &q->mu);
    }
}

cutune__compile_job *cutune__cq_job(cutune__cq *q, size_t config)
{
    if (!q || config >= q->order.n || !q->sets[config])
        return NULL;
    pthread_mutex_lock(&q->mu);
    cutune__compile_job *job =
        q->ready[config] ? &q->sets[config]->jobs[0] : NULL;
    pthread_mutex_unlock(&q->mu);
    return job;
}

int cutune__cq_take(cutune__cq *q, size_t config, cutune__compile_job *job)
{
    cutune__compile_job *from = cutune__cq_job(q, config);
    if (!from || !from->ok)
        return -1;
    job->ok = 1;
    job->cubin = from->cubin;
    job->cubin_size = from->cubin_size;
    job->lowered_name = from->lowered_name;
    job->seconds = from->seconds;
    from->cubin = NULL;
    from->lowered_name = NULL;
    from->ok = 0;
    return 0;
}

void cutune__cq_release(cutune__cq *q, size_t config)
{
    if (!q || config >= q->order.n)
        return;
    pthread_mutex_lock(&q->mu);
    if (q->ready[config] && q->sets[config]) {
        cutune__compile_job *job = &q->sets[config]->jobs[0];
        free(job->cubin);
        free(job->lowered_name);
        job->cubin = NULL;
        job->lowered_name = NULL;
        job->cubin_size = 0;
        job->ok = 0;
    }
    pthread_mutex_unlock(&q->mu);
}

void cutune__cq_stats(cutune__cq *q, cutune__order_stats *st)
{
    pthread_mutex_lock(&q->mu);
    *st = q->order.stats;
    pthread_mutex_unlock(&q->mu);
}

void cutune__cq_destroy(cutune__cq *q)
{
    if (!q)
        return;
    pthread_mutex_lock(&q->mu);
    q->stop = 1;
    /* Jobs not started are not wanted any more, nor those running (the
     * last batch's speculation): their processes are killed rather than
     * waited for (an interrupted compile is an NVRTC failure nobody
     * reads), then started again on next use. */
    while (cutune__order_pop(&q->order) != CUTUNE__NONE)
        ;
    pthread_cond_broadcast(&q->work);
    pthread_mutex_unlock(&q->mu);
    cutune__compile_procs_cancel(q->s->compile.compilers);
    for (int i = 0; i < q->n_threads; i++)
        pthread_join(q->threads[i], NULL);
    cutune__compile_procs_resume(q->s->compile.compilers);
    for (size_t i = 0; i < q->order.n; i++)
        if (q->sets[i]) {
            cutune__session_job_set_clear(q->sets[i]);
            free(q->sets[i]);
        }
    pthread_cond_destroy(&q->work);
    pthread_cond_destroy(&q->done);
    pthread_mutex_destroy(&q->mu);
    cutune__order_free(&q->order);
    free(q->sets);
    free(q->ready);
    free(q->threads);
    free(q);
}
