/* The final round: the search's best few (at most FINAL_MAX, within
 * FINAL_MARGIN of the best value of the tune's objective) measured again,
 * FINAL_PASSES passes in opposite orders, so that the winner is named on more
 * than the short measurement that steered the search (see the protocol in
 * session_internal.h). */
#define _POSIX_C_SOURCE 200809L

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "session_internal.h"
#include "util.h"

/* The median of v[0..n) (n at most 1 + FINAL_PASSES), and into *rsd the
 * relative standard deviation (NaN for fewer than two). */
static double median_of_few(const double *v, size_t n, double *rsd)
{
    double d[1 + FINAL_PASSES] = {0};
    double mean = 0.0, ss = 0.0;
    assert(n > 0 && n <= 1 + FINAL_PASSES);
    for (size_t i = 0; i < n; i++) {
        size_t k = i;
        for (; k > 0 && d[k - 1] > v[i]; k--)
            d[k] = d[k - 1];
        d[k] = v[i];
        mean += v[i] / (double)n;
    }
    for (size_t i = 0; i < n; i++)
        ss += (v[i] - mean) * (v[i] - mean);
    *rsd = n > 1 && mean > 0 ? sqrt(ss / (double)(n - 1)) / mean : NAN;
    return n % 2 ? d[n / 2] : 0.5 * (d[n / 2 - 1] + d[n / 2]);
}

/* A final-round energy reading of e's configuration, `t`'s, joins the
 * search's: e's energy and power become the medians over those readings
 * (one per measurement, each already the device's summary of its own
 * repeated readings), its spread theirs. */
static void merge_energy(eval_record *e, const eval_record *t)
{
    if (!isfinite(t->energy_j))
        return;
    if (e->n_energy_seen == 0 && isfinite(e->energy_j)) {
        e->energy_seen[0] = e->energy_j;
        e->power_seen[0] = e->power_w;
        e->n_energy_seen = 1;
    }
    if (e->n_energy_seen == 1 + FINAL_PASSES)
        return;
    e->energy_seen[e->n_energy_seen] = t->energy_j;
    e->power_seen[e->n_energy_seen++] = t->power_w;
    double spread;
    e->energy_j = median_of_few(e->energy_seen, e->n_energy_seen, &spread);
    e->energy_rsd = e->n_energy_seen > 1 ? spread : t->energy_rsd;
    e->power_w = median_of_few(e->power_seen, e->n_energy_seen, &spread);
}

/* Adds `t`, a final-round measurement of e's configuration, to `e`, and
 * frees t's parts. A finalist that fails now (a race that gives a wrong
 * answer now and then, a launch that breaks) takes that outcome: it is not
 * reliably right. Returns -1 when memory ran out. */
static int merge_final(eval_record *e, eval_record *t)
{
    int rc = 0;
    e->gpu_ms += t->gpu_ms;
    if (t->pub.outcome != CUTUNE_OUTCOME_CORRECT) {
        char *msg = cutune__strdup_printf(
            "in the final round: %s", t->pub.message ? t->pub.message : "");
        e->pub.outcome = t->pub.outcome;
        cutune__session_set_message(e, msg ? msg : t->pub.message);
        free(msg);
        e->pub.time_ms = NAN;
    } else {
        double *rt = realloc(e->runtimes, (e->runs + t->runs) * sizeof *rt);
        if (rt) {
            memcpy(rt + e->runs, t->runtimes, t->runs * sizeof *rt);
            e->runtimes = rt;
            e->runs += t->runs;
            e->final_runs += t->runs;
        }
        rc = rt ? cutune__session_summarize(e, e->runs) : -1;
        merge_energy(e, t);
    }
    free((char *)t->pub.message);
    free(t->runtimes);
    return rc;
}

/* Whether a result may take part in the final round or win. */
int cutune__session_contender(const eval_record *e)
{
    return e->pub.outcome == CUTUNE_OUTCOME_CORRECT && !e->pub.stopped_early;
}

/* Energy's interval: two relative standard deviations of its readings
 * either side of the median, about 95% of the readings for a normal
 * spread; with fewer than two readings, the value alone. */
static void energy_interval(const eval_record *e, double *lo, double *hi)
{
    double r = isfinite(e->energy_rsd) ? 2.0 * e->energy_rsd : 0.0;
    *lo = e->energy_j * (1.0 - r);
    *hi = e->energy_j * (1.0 + r);
}

double cutune__session_rank(const cutune_session *s, const eval_record *e,
                            double *lo, double *hi)
{
    double v = INFINITY, l = INFINITY, h = INFINITY;
    int correct = e->pub.outcome == CUTUNE_OUTCOME_CORRECT;
    switch (s->proto.objective) {
    case CUTUNE_OBJECTIVE_ENERGY:
        if (correct && e->energy_j > 0 && isfinite(e->energy_j)) {
            v = e->energy_j;
            energy_interval(e, &l, &h);
        }
        break;
    case CUTUNE_OBJECTIVE_EDP:
        if (correct && e->energy_j > 0 && isfinite(e->energy_j) &&
            isfinite(e->pub.time_ms)) {
            v = e->energy_j * e->pub.time_ms * 1e-3;
            energy_interval(e, &l, &h);
            l *= e->ci_lo_ms * 1e-3;
            h *= e->ci_hi_ms * 1e-3;
        }
        break;
    default:
        if (correct) {
            v = e->pub.time_ms;
            l = e->ci_lo_ms;
            h = e->ci_hi_ms;
        }
        break;
    }
    if (lo)
        *lo = l;
    if (hi)
        *hi = h;
    return v;
}

int cutune__session_better_first(const void *a, const void *b)
{
    const eval_record *x = *(eval_record *const *)a;
    const eval_record *y = *(eval_record *const *)b;
    if (x->rank != y->rank)
        return x->rank < y->rank ? -1 : 1;
    return x->pub.config_index < y->pub.config_index
               ? -1
               : x->pub.config_index > y->pub.config_index;
}

/* The finalists: the contenders within FINAL_MARGIN of the best value of
 * the objective, at most FINAL_MAX, best first, marked as finalists;
 * those without final-round launches yet (to measure) moved to
 * fin[0..*n_todo). Returns the array (malloc'ed; *n_fin 0 and NULL when
 * nothing is correct, NULL with *n_fin 1 when memory ran out). */
static eval_record **choose_finalists(cutune_session *s, size_t *n_fin,
                                      size_t *n_todo)
{
    *n_fin = *n_todo = 0;
    double fastest = INFINITY;
    for (size_t i = 0; i < s->record.n_evals; i++) {
        eval_record *e = &s->record.evals[i];
        e->rank = cutune__session_rank(s, e, NULL, NULL);
        if (cutune__session_contender(e) && e->rank < fastest)
            fastest = e->rank;
    }
    if (!isfinite(fastest))
        return NULL;
    eval_record **fin = malloc(s->record.n_evals * sizeof *fin);
    if (!fin) {
        *n_fin = 1;
        return NULL;
    }
    for (size_t i = 0; i < s->record.n_evals; i++)
        if (cutune__session_contender(&s->record.evals[i]) &&
            s->record.evals[i].rank <= fastest * (1.0 + FINAL_MARGIN))
            fin[(*n_fin)++] = &s->record.evals[i];
    qsort(fin, *n_fin, sizeof *fin, cutune__session_better_first);
    if (*n_fin > FINAL_MAX)
        *n_fin = FINAL_MAX;
    for (size_t k = 0; k < *n_fin; k++) {
        fin[k]->finalist = 1;
        if (fin[k]->final_runs == 0) {
            eval_record *x = fin[*n_todo];
            fin[(*n_todo)++] = fin[k];
            fin[k] = x;
        }
    }
    return fin;
}

/* FINAL_PASSES passes over fin[0..n_todo), whose jobs `js` holds, in
 * alternating order. *passes_done counts the passes that measured every
 * finalist; a round that lost its worker is cut short. */
static cutune_status measure_finalists(cutune_session *s, eval_record **fin,
                                       size_t n_todo, job_set *js,
                                       int *passes_done)
{
    cutune_status st = CUTUNE_OK;
    int cut = 0;
    for (int pass = 0; pass < FINAL_PASSES && !st && !cut; pass++) {
        for (size_t j = 0; j < n_todo && !st && !cut; j++) {
            size_t k = pass % 2 ? n_todo - 1 - j : j;
            eval_record *e = fin[k];
            cutune__compile_job *job = js->jobs ? &js->jobs[k] : NULL;
            if (!cutune__session_contender(e))
                continue; /* failed in an earlier pass */
            if (job && !job->ok) {
                /* NVRTC disagrees with itself: keep what the search
                 * measured. */
                e->finalist = 0;
                continue;
            }
            eval_record t;
            cutune__session_init_eval(&t, e->pub.config_index);
            cutune__session_measure(s, s->slots, &t, job, 1);
            if (s->fatal) {
                /* No worker could be brought back: that says nothing of
                 * the finalist, and the search's results still stand. */
                cutune__session_log(s, CUTUNE_LOG_WARN,
                                    "final round cut "
                                    "short, the winner is chosen on what "
                                    "was measured: %s",
                                    t.pub.message ? t.pub.message : "");
                free((char *)t.pub.message);
                free(t.runtimes);
                cut = 1;
                break;
            } else if (merge_final(e, &t) != 0) {
                st = cutune__session_fail(s, CUTUNE_ERR_NO_MEMORY,
                                          "out of memory");
            }
        }
        if (!st && !cut)
            (*passes_done)++;
    }
    return st;
}

/* What a whole final round measured goes to the log (the last line of a
 * configuration wins there). A round cut short is not logged: a resumed
 * tune measures it again. */
static void log_finalists(cutune_session *s, eval_record **fin, size_t n_todo,
                          int passes_done)
{
    for (size_t k = 0; k < n_todo; k++) {
        char cfg[512];
        int whole = cutune__session_describe(
            s->problem, fin[k]->pub.config_index, cfg, sizeof cfg);
        /* A finalist that failed now keeps the search's line in the log,
         * so that a resumed tune steers as this one did (and measures it
         * again in its final round). */
        if (whole && fin[k]->final_runs > 0 &&
            cutune__session_contender(fin[k]) && passes_done == FINAL_PASSES)
            cutune__session_log_measurement(s, fin[k], cfg);
        if (cutune__session_contender(fin[k]) &&
            s->proto.objective != CUTUNE_OBJECTIVE_TIME)
            cutune__session_log(s, CUTUNE_LOG_INFO,
                                "[final] %s: %.4f ms, %.6g J (median of "
                                "%zu launches, %zu in the final round)",
                                cfg, fin[k]->pub.time_ms, fin[k]->energy_j,
                                fin[k]->runs, fin[k]->final_runs);
        else if (cutune__session_contender(fin[k]))
            cutune__session_log(s, CUTUNE_LOG_INFO,
                                "[final] %s: %.4f ms (median of %zu "
                                "launches, %zu in the final round)",
                                cfg, fin[k]->pub.time_ms, fin[k]->runs,
                                fin[k]->final_runs);
        else
            cutune__session_log(s, CUTUNE_LOG_INFO, "[final] %s: %s: %.200s",
                                cfg, cutune_outcome_str(fin[k]->pub.outcome),
                                fin[k]->pub.message);
    }
}

/* Measures the search's best few again (see the protocol in
 * session_internal.h). A finalist that already has final-round launches
 * (from the measurement log, with reuse_measurements) is not measured
 * again, so a resumed tune that had finished costs no GPU time. The
 * binaries come from the search in flight's compile queue, else the
 * binary cache, or are compiled again. */
cutune_status cutune__session_final_round(cutune_session *s)
{
    size_t n_fin, n_todo;
    eval_record **fin = choose_finalists(s, &n_fin, &n_todo);
    if (!fin)
        return n_fin ? cutune__session_fail(s, CUTUNE_ERR_NO_MEMORY,
                                            "out of memory")
                     : CUTUNE_OK;
    size_t *configs = malloc((n_todo ? n_todo : 1) * sizeof *configs);
    job_set js;
    memset(&js, 0, sizeof js);
    if (!configs) {
        free(fin);
        return cutune__session_fail(s, CUTUNE_ERR_NO_MEMORY, "out of memory");
    }
    for (size_t k = 0; k < n_todo; k++)
        configs[k] = fin[k]->pub.config_index;
    /* A replayed device compiles nothing. */
    if (n_todo && s->dev->runs_kernels &&
        cutune__session_job_set_init(&js, s, s->problem, configs, n_todo,
                                     s->proto.arch) != 0) {
        free(configs);
        free(fin);
        return cutune__session_fail(s, CUTUNE_ERR_NO_MEMORY, "out of memory");
    }
    cutune__session_log(s, CUTUNE_LOG_INFO,
                        "final round: %zu finalist%s "
                        "within %.0f%% of the fastest, %zu to measure",
                        n_fin, n_fin == 1 ? "" : "s", 100.0 * FINAL_MARGIN,
                        n_todo);
    /* A search in flight kept its binaries: only what it lacks (a
     * finalist from the log) is compiled. */
    for (size_t k = 0; s->compile.cq && k < n_todo && s->dev->runs_kernels;
         k++)
        if (cutune__cq_take(s->compile.cq, configs[k], &js.jobs[k]) != 0)
            cutune__compile_with(&js.jobs[k], cutune__session_compilers(s), 0);
    if (!s->compile.cq && n_todo && s->dev->runs_kernels)
        cutune__compile_batch(js.jobs, n_todo, s->opt.compile_threads,
                              cutune__session_compilers(s));
    cutune_status st = CUTUNE_OK;
    /* Finalists taken from the log with their final round. */
    for (size_t k = n_todo; k < n_fin && !st; k++)
        if (cutune__session_summarize(fin[k], fin[k]->runs) != 0)
            st =
                cutune__session_fail(s, CUTUNE_ERR_NO_MEMORY, "out of memory");
    int passes_done = 0;
    if (!st)
        st = measure_finalists(s, fin, n_todo, &js, &passes_done);
    log_finalists(s, fin, n_todo, passes_done);
    cutune__session_job_set_clear(&js);
    free(configs);
    free(fin);
    return st;
}
