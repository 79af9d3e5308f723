/* A search in flight (cutune__search_run_async) on one measuring slot:
 * the strategy keeps a window of proposals compiling on the session's
 * compile queue, and the GPU measures whichever of them is compiled
 * first, so that a slow compile holds up only its own result. The window
 * follows the clock (cutune__clock_window): as many proposals as a
 * compile takes measurements, at most the compile threads. Replayed in
 * bench-strategies and `simulate --threads` by search/replay/replay_clock.c.
 */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "expr/none.h"
#include "replay/batch_jobs.h"
#include "session_internal.h"
#include "util.h"

typedef struct flight {
    cutune_session *s;
    cutune__cq *q;
    size_t *configs;                /* in flight, in the order proposed */
    const cutune__measured **prior; /* per entry: answered from the log */
    size_t n, cap;
    double compiled_s, measured_s; /* sums over the results so far */
    size_t results;
} flight;

static int async_submit(void *user, size_t config)
{
    flight *f = user;
    cutune_session *s = f->s;
    if (f->n == f->cap)
        return -1;
    const cutune__measured *prior = NULL;
    char cfg[512];
    if (s->opt.reuse_measurements && s->record.measured &&
        cutune__session_describe(s->problem, config, cfg, sizeof cfg))
        prior = cutune__session_earlier(s, config, cfg);
    if (!prior && cutune__cq_submit(f->q, config) != 0) {
        s->fatal = 1;
        s->fatal_status =
            cutune__session_fail(s, CUTUNE_ERR_NO_MEMORY, "out of memory");
        return -1;
    }
    f->configs[f->n] = config;
    f->prior[f->n++] = prior;
    return 0;
}

/* Whether log record a was measured before b: by their timestamps (to
 * the millisecond; a finalist's line is written again after the final
 * round, so the place in the log alone would put it last), then by place.
 */
static int measured_before(const cutune__measure_log *log,
                           const cutune__measured *a,
                           const cutune__measured *b)
{
    if (a->timestamp != b->timestamp)
        return a->timestamp < b->timestamp;
    return cutune__measure_log_position(log, a) <
           cutune__measure_log_position(log, b);
}

/* Which entry in flight goes next: one answered from the log, the one
 * measured first when several are (so that a resumed tune hands the
 * strategy its results in the order the tune it resumes did, and takes
 * the same path), else the first compiled (waited for, the session let
 * go of meanwhile). */
static size_t next_in_flight(flight *f)
{
    cutune_session *s = f->s;
    size_t pick = CUTUNE__NONE;
    for (size_t i = 0; i < f->n; i++)
        if (f->prior[i] &&
            (pick == CUTUNE__NONE ||
             measured_before(s->record.measured, f->prior[i], f->prior[pick])))
            pick = i;
    if (pick != CUTUNE__NONE)
        return pick;
    double t0 = cutune__now();
    cutune__session_unlock(s);
    size_t i = cutune__cq_wait_any(f->q, f->configs, f->n);
    cutune__session_lock(s);
    s->tel.wait_compile_s += cutune__now() - t0;
    return i;
}

/* Result of the entry at `i`, measured or from the log, as the search's. */
static int take_result(flight *f, size_t i, size_t *config, double *objective,
                       double *cost)
{
    cutune_session *s = f->s;
    const cutune__measured *prior = f->prior[i];
    *config = f->configs[i];
    f->n--;
    f->configs[i] = f->configs[f->n];
    f->prior[i] = f->prior[f->n];
    eval_record *e = cutune__session_add_eval(s, *config);
    if (!e || (prior && cutune__session_take_earlier(e, prior) != 0)) {
        s->fatal = 1;
        s->fatal_status =
            cutune__session_fail(s, CUTUNE_ERR_NO_MEMORY, "out of memory");
        return -1;
    }
    if (prior)
        s->tel.reused++;
    else
        cutune__session_measure_job(s, s->slots, cutune__cq_job(f->q, *config),
                                    e);
    /* What a result from the log cost when it was measured counts too, so
     * that a resumed tune keeps the window the tune it resumes kept. */
    double kernel_ms = 0;
    for (size_t k = 0; e->runtimes && k + e->final_runs < e->runs; k++)
        kernel_ms += e->runtimes[k];
    f->compiled_s += e->pub.compile_ms / 1e3;
    f->measured_s += (kernel_ms + e->framework_ms) / 1e3;
    f->results++;
    cutune__session_record_result(s, e, prior != NULL, s->record.n_evals - 1,
                                  objective, 0);
    *cost = cutune__search_try_seconds(
        e->pub.compile_ms,
        e->pub.outcome == CUTUNE_OUTCOME_CORRECT ? e->pub.time_ms : NAN);
    return s->fatal ? -1 : 0;
}

static int async_result(void *user, size_t *config, double *objective,
                        double *cost)
{
    flight *f = user;
    if (cutune__session_time_is_up(f->s))
        return 1;
    if (f->n == 0)
        return -1;
    return take_result(f, next_in_flight(f), config, objective, cost);
}

static size_t async_window(void *user)
{
    flight *f = user;
    double n = f->results ? (double)f->results : 1.0;
    return cutune__clock_window(cutune__session_pool_threads(f->s),
                                f->compiled_s / n, f->measured_s / n);
}

static const cutune__async_eval session_async = {async_submit, async_result,
                                                 async_window};

int cutune__session_search_async(cutune_session *s,
                                 const cutune__strategy_type *type,
                                 const cutune__search_options *so,
                                 cutune__search_result *sr)
{
    flight f;
    memset(&f, 0, sizeof f);
    f.s = s;
    f.cap = so->batch ? so->batch : 1;
    f.configs = malloc(f.cap * sizeof *f.configs);
    f.prior = malloc(f.cap * sizeof *f.prior);
    if (!f.configs || !f.prior) {
        free(f.configs);
        free(f.prior);
        return -1;
    }
    /* Without threads the batch path compiles instead. */
    f.q = cutune__cq_create(s);
    if (!f.q) {
        free(f.configs);
        free(f.prior);
        return -3;
    }
    s->compile.cq = f.q;
    int rc = cutune__search_run_async(type, s->problem->space, so,
                                      &session_async, &f, sr);
    free(f.configs);
    free(f.prior);
    return rc;
}
