/* A batch of the search: which proposals the measurement log already
 * answers, compiling the rest (and what the strategy would propose next)
 * on the pool while the worker measures, logging each result and handing
 * it to the strategy, which may end the batch early. AUTO output checks
 * settle here too, once enough results are in. */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "output_check.h"
#include "replay/batch_jobs.h"
#include "session_internal.h"
#include "util.h"

/* A record of the measurement log that configuration `config` (text
 * `cfg`) may take instead of being measured: one with the same launch
 * geometry and an outcome measuring again would repeat. A failed launch or
 * a time-out may have been the machine's fault rather than the
 * configuration's, so those are measured again. */
const cutune__measured *cutune__session_earlier(const cutune_session *s,
                                                size_t config, const char *cfg)
{
    const cutune__measured *m =
        cutune__measure_log_find(s->record.measured, cfg);
    if (!m || m->outcome == CUTUNE_OUTCOME_RUNTIME ||
        m->outcome == CUTUNE_OUTCOME_TIMEOUT)
        return NULL;
    /* A tune that wants energy measures again what was logged without. */
    if (s->proto.energy_wanted && m->outcome == CUTUNE_OUTCOME_CORRECT &&
        !isfinite(m->energy_j))
        return NULL;
    unsigned grid[3], block[3];
    char err[64];
    if (cutune__problem_geometry(s->problem, config, grid, block, err,
                                 sizeof err) != 0 ||
        memcmp(grid, m->grid, sizeof grid) != 0 ||
        memcmp(block, m->block, sizeof block) != 0)
        return NULL;
    return m;
}

/* Fills `e` from an earlier measurement. -1 when memory ran out. */
int cutune__session_take_earlier(eval_record *e, const cutune__measured *m)
{
    e->pub.outcome = m->outcome;
    cutune__session_set_message(e, m->message);
    e->pub.time_ms = m->time_ms;
    e->pub.compile_ms = m->compile_ms;
    e->pub.stopped_early = m->stopped_early;
    e->pub.sm_clock_mhz = m->sm_clock_mhz;
    e->pub.temperature_c = m->temperature_c;
    e->min_ms = m->min_ms;
    e->stddev_ms = m->stddev_ms;
    e->ci_lo_ms = m->ci_lo_ms;
    e->ci_hi_ms = m->ci_hi_ms;
    e->gpu_ms = m->gpu_ms;
    e->framework_ms = m->framework_ms;
    e->timestamp = m->timestamp;
    e->reused = 1;
    e->final_runs = m->final_runs;
    e->energy_j = m->energy_j;
    e->power_w = m->power_w;
    e->energy_rsd = m->energy_rsd;
    if (m->runs > 0) {
        e->runtimes = malloc(m->runs * sizeof *e->runtimes);
        if (!e->runtimes)
            return -1;
        memcpy(e->runtimes, m->runtimes, m->runs * sizeof *e->runtimes);
        e->runs = m->runs;
    }
    /* A finalist's record sums up all its launches; the strategy is given
     * what the search measured, as the tune that logged it was, so that a
     * resumed tune takes the same path. */
    if (m->final_runs > 0 && m->final_runs < m->runs &&
        m->outcome == CUTUNE_OUTCOME_CORRECT)
        return cutune__session_summarize(e, m->runs - m->final_runs);
    return 0;
}

/* Appends a measured configuration to the log; a failure loses only its
 * line, so it is not reported. */
void cutune__session_log_measurement(cutune_session *s, const eval_record *e,
                                     char *cfg)
{
    if (!s->record.measured)
        return;
    cutune__measured m = {
        .config = cfg,
        .outcome = e->pub.outcome,
        .time_ms = e->pub.time_ms,
        .min_ms = e->min_ms,
        .stddev_ms = e->stddev_ms,
        .ci_lo_ms = e->ci_lo_ms,
        .ci_hi_ms = e->ci_hi_ms,
        .gpu_ms = e->gpu_ms,
        .compile_ms = e->pub.compile_ms,
        .framework_ms = e->framework_ms,
        .stopped_early = e->pub.stopped_early,
        .sm_clock_mhz = e->pub.sm_clock_mhz,
        .temperature_c = e->pub.temperature_c,
        .timestamp = e->timestamp,
        .message = (char *)e->pub.message,
        .runtimes = e->runtimes,
        .runs = e->runtimes ? e->runs : 0,
        .energy_j = e->energy_j,
        .power_w = e->power_w,
        .energy_rsd = e->energy_rsd,
        .final_runs = e->runtimes ? e->final_runs : 0,
    };
    char err[64];
    if (cutune__problem_geometry(s->problem, e->pub.config_index, m.grid,
                                 m.block, err, sizeof err) != 0)
        return;
    cutune__measure_log_append(s->record.measured, &m);
}

/* AUTO output checks (output_check.h): once enough configurations have a
 * result, or at the end of the search, settles on comparing with the
 * default's output or on NaN/infinity checks. Settling on the latter turns
 * the timed configurations that differed into correct ones, in the
 * batch's objectives too (batch[0] is evals[first]). */
void cutune__session_settle_check(cutune_session *s, size_t first,
                                  double *batch, size_t n_batch)
{
    if (s->proto.check.mode != CUTUNE__CHECK_PROBE)
        return;
    int vary =
        cutune__outputs_vary(s->proto.check.agreed, s->proto.check.differed);
    s->proto.check.mode =
        vary ? CUTUNE__CHECK_FINITE : CUTUNE__CHECK_REFERENCE;
    size_t *configs = malloc((s->record.n_evals + 1) * sizeof *configs);
    unsigned char *differs = malloc(s->record.n_evals + 1);
    size_t n = 0;
    for (size_t i = 0; i < s->record.n_evals; i++) {
        eval_record *e = &s->record.evals[i];
        if (e->differs && vary) {
            e->pub.outcome = CUTUNE_OUTCOME_CORRECT;
            cutune__session_set_message(e, "");
            if (i >= first && i - first < n_batch)
                batch[i - first] = cutune__session_rank(s, e, NULL, NULL);
        } else if (e->differs) {
            free(e->runtimes);
            e->runtimes = NULL;
            e->runs = 0;
            e->pub.time_ms = 0;
        }
        if (configs && differs &&
            (e->differs || e->pub.outcome == CUTUNE_OUTCOME_CORRECT)) {
            configs[n] = e->pub.config_index;
            differs[n++] = (unsigned char)e->differs;
        }
        e->differs = 0;
    }
    if (vary) {
        char names[256];
        size_t named =
            configs && differs
                ? cutune__explain_differences(
                      s->problem, cutune__problem_default_config(s->problem),
                      configs, differs, n, names, sizeof names)
                : 0;
        cutune__session_log(
            s, CUTUNE_LOG_WARN,
            "%s: %zu of the first %zu configurations "
            "give outputs that differ from the default configuration's; "
            "the output depends on %s%s by design, so from here outputs "
            "are only checked for NaN and infinity (give "
            "ReferenceArguments in the T1 file, or --check reference to "
            "insist on the default's output)",
            s->problem->origin, s->proto.check.differed,
            s->proto.check.agreed + s->proto.check.differed,
            named ? "the tunables " : "tunables",
            named ? names : " cutune could not single out");
    }
    free(configs);
    free(differs);
}

typedef cutune__batch batch;

static void batch_free(batch *b)
{
    free(b->prior);
    free(b->todo);
}

/* Configurations measured before (with reuse_measurements) are not
 * compiled; the rest are wanted from the session's compile queue, in
 * order, each of the batch's first few followed by what the strategy
 * names ahead of it (cutune__batch_jobs); what the last batch wanted and
 * did not start stays queued behind them as speculation (compile_order.h).
 * Returns 0, or -1 when memory ran out (the tune is then fatal). */
static int plan_batch(cutune_session *s, batch *b, void *more_ctx)
{
    size_t n = b->n;
    b->prior = calloc(n ? n : 1, sizeof *b->prior);
    unsigned char *skip = calloc(n ? n : 1, 1);
    b->todo = calloc(n + CUTUNE__AHEAD_PROPOSALS * CUTUNE__AHEAD_EACH,
                     sizeof *b->todo);
    size_t *job_of = malloc((n ? n : 1) * sizeof *job_of);
    int ok = b->prior && skip && b->todo && job_of;
    for (size_t i = 0; ok && i < n; i++) {
        char cfg[512];
        if (s->opt.reuse_measurements && s->record.measured &&
            cutune__session_describe(s->problem, b->indices[i], cfg,
                                     sizeof cfg))
            b->prior[i] = cutune__session_earlier(s, b->indices[i], cfg);
        skip[i] = b->prior[i] != NULL;
    }
    /* A replayed device compiles nothing. */
    if (ok && s->dev->runs_kernels) {
        size_t named, ahead = more_ctx ? cutune__ahead_proposals(
                                             cutune__session_pool_threads(s))
                                       : 0;
        b->n_todo = cutune__batch_jobs(
            b->indices, n, skip, ahead, CUTUNE__AHEAD_EACH,
            cutune__search_ahead, more_ctx, b->todo, job_of, &named);
        s->tel.compiled_ahead += named;
        if (!s->compile.cq)
            s->compile.cq = cutune__cq_create(s);
        ok = s->compile.cq &&
             cutune__cq_want(s->compile.cq, b->todo, b->n_todo) == 0;
    }
    free(skip);
    free(job_of);
    if (!ok) {
        batch_free(b);
        s->fatal = 1;
        s->fatal_status =
            cutune__session_fail(s, CUTUNE_ERR_NO_MEMORY, "out of memory");
        return -1;
    }
    return 0;
}

/* Configuration e->pub.config_index, compiled as `job` (NULL on a
 * replayed device), measured into `e` on `slot` and logged. */
void cutune__session_measure_job(cutune_session *s, cutune__mslot *slot,
                                 cutune__compile_job *job, eval_record *e)
{
    char cfg[512];
    int whole = cutune__session_describe(s->problem, e->pub.config_index, cfg,
                                         sizeof cfg);
    e->pub.worker = slot->index;
    if (job)
        e->pub.compile_ms = job->seconds * 1e3;
    if (job && !job->ok) {
        e->pub.outcome = CUTUNE_OUTCOME_COMPILE;
        cutune__session_set_message(e, job->log);
    } else {
        double t0 = cutune__now();
        cutune__session_measure(s, slot, e, job, 0);
        double kernel_ms = 0.0;
        for (size_t k = 0; e->runtimes && k < e->runs; k++)
            kernel_ms += e->runtimes[k];
        e->framework_ms = (cutune__now() - t0) * 1e3 - kernel_ms;
        if (e->framework_ms < 0)
            e->framework_ms = 0;
    }
    /* To the millisecond: a resumed search in flight hands over results
     * from the log in the order they were measured. */
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    e->timestamp = (double)now.tv_sec + (double)(now.tv_nsec / 1000000) / 1e3;
    /* A worker that could not be brought back says nothing about the
     * configuration; a cut text cannot name it. */
    if (!s->fatal && whole)
        cutune__session_log_measurement(s, e, cfg);
}

/* Proposal i of the batch, not measured before, into `e` on `slot`: its
 * compile waited for (the session let go of meanwhile), then measured and
 * logged. */
void cutune__session_measure_proposal(cutune_session *s, cutune__mslot *slot,
                                      batch *b, size_t i, eval_record *e)
{
    cutune__compile_job *job = NULL;
    if (s->dev->runs_kernels) {
        double t0 = cutune__now();
        cutune__session_unlock(s);
        job = cutune__cq_wait(s->compile.cq, b->indices[i]);
        cutune__session_lock(s);
        s->tel.wait_compile_s += cutune__now() - t0;
    }
    cutune__session_measure_job(s, slot, job, e);
}

/* The progress callback's view of the tune after `e`. */
static void report_progress(cutune_session *s, const eval_record *e)
{
    if (!s->opt.progress)
        return;
    double ms =
        e->pub.outcome == CUTUNE_OUTCOME_CORRECT ? e->pub.time_ms : NAN;
    if (e->pub.config_index == s->prog.start)
        s->prog.baseline_ms = ms;
    if (!isnan(ms) && (isnan(s->prog.best_ms) || ms < s->prog.best_ms))
        s->prog.best_ms = ms;
    const cutune_problem *p = s->problem;
    size_t space = cutune__space_size(p->space);
    size_t budget = s->budget.max_evals;
    if (budget == 0 && s->budget.max_seconds == 0)
        budget = space; /* an exhaustive strategy */
    if (budget > space)
        budget = space;
    double elapsed = cutune__now() - s->prog.started;
    double eta = NAN;
    if (budget > s->record.n_evals)
        eta = elapsed / (double)s->record.n_evals *
              (double)(budget - s->record.n_evals);
    else if (budget)
        eta = 0;
    if (s->budget.max_seconds > 0) {
        double left = s->budget.max_seconds - (cutune__now() - s->started);
        left = left > 0 ? left : 0;
        eta = isnan(eta) || left < eta ? left : eta;
    }
    cutune_param_value *values =
        calloc(p->n_params ? p->n_params : 1, sizeof *values);
    if (!values)
        return;
    cutune__problem_config_values(p, e->pub.config_index, values);
    cutune_progress pr = {s->record.n_evals,
                          budget,
                          elapsed,
                          eta,
                          s->prog.best_ms,
                          s->prog.baseline_ms,
                          ms,
                          e->pub.outcome,
                          e->reused != 0,
                          values,
                          p->n_params};
    s->opt.progress(s->opt.progress_user, &pr);
    free(values);
}

/* Result i of the batch (`e`, taken from the log when `reused`) as the
 * strategy's objective, in the output check's sample and the best so far,
 * and in the log. The batch's objectives start at evals[first_eval]. */
void cutune__session_record_result(cutune_session *s, const eval_record *e,
                                   int reused, size_t first_eval,
                                   double *objectives, size_t i)
{
    char cfg[512];
    cutune__session_describe(s->problem, e->pub.config_index, cfg, sizeof cfg);
    if (s->proto.check.mode == CUTUNE__CHECK_PROBE && !reused) {
        s->proto.check.agreed += e->pub.outcome == CUTUNE_OUTCOME_CORRECT;
        s->proto.check.differed += e->differs != 0;
    }
    objectives[i] = cutune__session_rank(s, e, NULL, NULL);
    if (s->proto.check.mode == CUTUNE__CHECK_PROBE &&
        s->proto.check.agreed + s->proto.check.differed >=
            CUTUNE__CHECK_SAMPLE)
        cutune__session_settle_check(s, first_eval, objectives, i + 1);
    /* Early stops and racing compare with what this session measured: a
     * time taken from the log was measured under other conditions
     * (clocks, temperature), and a GPU a few % slower now would drop true
     * contenders. */
    double ms =
        e->pub.outcome == CUTUNE_OUTCOME_CORRECT ? e->pub.time_ms : INFINITY;
    if (isfinite(ms) && !reused && (s->best_ms == 0 || ms < s->best_ms))
        s->best_ms = ms;
    if (isfinite(objectives[i]) && !reused &&
        (s->best_rank == 0 || objectives[i] < s->best_rank))
        s->best_rank = objectives[i];
    /* A binary can be let go once its configuration cannot be a finalist
     * (the best only gets better): a tune of a large space keeps only
     * its contenders' (the final round compiles again what it lacks). */
    if (s->compile.cq && !reused &&
        !(isfinite(objectives[i]) &&
          objectives[i] <= s->best_rank * (1.0 + FINAL_MARGIN)))
        cutune__cq_release(s->compile.cq, e->pub.config_index);
    const char *from = e->reused ? ", measured before" : "";
    cutune_log_level level =
        s->opt.progress ? CUTUNE_LOG_DEBUG : CUTUNE_LOG_INFO;
    if (e->pub.outcome == CUTUNE_OUTCOME_CORRECT)
        cutune__session_log(s, level, "[%zu] %s: %.4f ms%s%s",
                            s->record.n_evals, cfg, e->pub.time_ms,
                            e->pub.stopped_early ? " (dropped early)" : "",
                            from);
    else
        cutune__session_log(
            s, level, "[%zu] %s: %s%s: %.200s", s->record.n_evals, cfg,
            cutune_outcome_str(e->pub.outcome), from, e->pub.message);
    report_progress(s, e);
}

/* Compiles still running (the batch ended early) go on: their results
 * stay in the compile queue, where a later proposal finds them. */
static void finish_batch(cutune_session *s, batch *b)
{
    batch_free(b);
    s->batch_end = cutune__now();
}

int cutune__session_time_is_up(const cutune_session *s)
{
    return s->budget.max_seconds > 0 &&
           cutune__now() - s->started >= s->budget.max_seconds;
}

/* Result i of the batch into a new record of the session: taken from
 * the log, from the crew, or measured now on slot 0. Returns NULL when it
 * is not there (time is up, or the crew stopped), and sets *rc -1 when
 * memory ran out. */
static eval_record *next_result(cutune_session *s, batch *b, size_t i,
                                cutune__crew *crew, int *rc)
{
    eval_record got;
    if (crew && !b->prior[i] && cutune__crew_take(crew, i, &got) != 0)
        return NULL;
    eval_record *e = cutune__session_add_eval(s, b->indices[i]);
    if (!e ||
        (b->prior[i] && cutune__session_take_earlier(e, b->prior[i]) != 0)) {
        if (crew && !b->prior[i]) {
            free((char *)got.pub.message);
            free(got.runtimes);
        }
        s->fatal = 1;
        s->fatal_status =
            cutune__session_fail(s, CUTUNE_ERR_NO_MEMORY, "out of memory");
        *rc = -1;
        return NULL;
    }
    if (b->prior[i])
        s->tel.reused++;
    else if (crew)
        *e = got;
    else
        cutune__session_measure_proposal(s, s->slots, b, i, e);
    return e;
}

/* What trying a configuration costs counts the launches every candidate
 * gets before it may be dropped (cutune__search_try_seconds). */
_Static_assert(WARMUP_LAUNCHES + EARLY_REPS == CUTUNE__COST_LAUNCHES,
               "CUTUNE__COST_LAUNCHES is not the launches a candidate gets "
               "before it may be dropped");

int cutune__session_evaluate_batch(void *user, const size_t *indices, size_t n,
                                   double *objectives, size_t *done,
                                   cutune__eval_more_fn more, void *more_ctx)
{
    cutune_session *s = user;
    *done = 0;
    s->tel.batches++;
    /* The time since the previous batch was the strategy's, and so is the
     * time in `more`; it is shared among the evaluations made. */
    double search_ms = (cutune__now() - s->batch_end) * 1e3;
    size_t first_eval = s->record.n_evals;
    if (cutune__session_time_is_up(s))
        return 0;
    batch b;
    memset(&b, 0, sizeof b);
    b.indices = indices;
    b.n = n;
    if (plan_batch(s, &b, more_ctx) != 0)
        return -1;
    /* Several slots: the crew measures ahead, the results are handed on
     * here in proposal order as with one. */
    cutune__crew *crew = cutune__crew_start(s, &b);
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        if (!crew && cutune__session_time_is_up(s))
            break;
        eval_record *e = next_result(s, &b, i, crew, &rc);
        if (!e)
            break;
        cutune__session_record_result(s, e, b.prior[i] != NULL, first_eval,
                                      objectives, i);
        cutune__search_cost(
            more_ctx, i,
            cutune__search_try_seconds(e->pub.compile_ms,
                                       e->pub.outcome == CUTUNE_OUTCOME_CORRECT
                                           ? e->pub.time_ms
                                           : NAN));
        *done = i + 1;
        if (s->fatal) {
            rc = -1;
            break;
        }
        /* The strategy has what it needed of this batch: the rest is not
         * measured (compiles already running finish, into the binary
         * cache where there is one, for a later proposal to find). */
        if (more) {
            double t0 = cutune__now();
            int go_on = more(more_ctx, i, objectives[i]);
            search_ms += (cutune__now() - t0) * 1e3;
            if (!go_on)
                break;
        }
    }
    cutune__crew_stop(crew);
    /* A slot whose worker could not be brought back ends the tune. */
    if (s->fatal)
        rc = -1;
    for (size_t i = first_eval; i < s->record.n_evals; i++)
        s->record.evals[i].search_ms =
            search_ms / (double)(s->record.n_evals - first_eval);
    finish_batch(s, &b);
    return rc;
}
