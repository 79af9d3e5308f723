/* Measuring one compiled configuration on the GPU worker, and the record
 * it fills: the run request of the measurement protocol (session_internal.h),
 * a cached binary the driver refused compiled again, the summary
 * statistics of its launches. */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>

#include "session_internal.h"
#include "stats.h"
#include "util.h"

eval_record *cutune__session_add_eval(cutune_session *s, size_t config)
{
    if (s->record.n_evals == s->record.cap_evals) {
        size_t cap = s->record.cap_evals ? 2 * s->record.cap_evals : 64;
        eval_record *e = realloc(s->record.evals, cap * sizeof *e);
        if (!e)
            return NULL;
        s->record.evals = e;
        s->record.cap_evals = cap;
    }
    eval_record *e = &s->record.evals[s->record.n_evals++];
    cutune__session_init_eval(e, config);
    return e;
}

void cutune__session_init_eval(eval_record *e, size_t config)
{
    memset(e, 0, sizeof *e);
    e->pub.config_index = config;
    e->pub.time_ms = NAN;
    e->pub.sm_clock_mhz = e->pub.temperature_c = -1;
    e->energy_j = e->power_w = e->energy_rsd = NAN;
}

void cutune__session_set_message(eval_record *e, const char *msg)
{
    free((char *)e->pub.message);
    e->pub.message = strdup(msg ? msg : "");
}

/* "NAME=VALUE NAME=VALUE ..." of a configuration into buf. Returns 1 when
 * the whole text fitted, 0 when it was cut short (then it may read like
 * another configuration's, so it must not serve as a key). */
int cutune__session_describe(const cutune_problem *p, size_t config, char *buf,
                             size_t len)
{
    const uint32_t *cfg = cutune__space_config(p->space, config);
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < p->n_params; i++) {
        int n = snprintf(buf + used, len - used, "%s%s=%s", i ? " " : "",
                         p->param_names[i], p->value_texts[i][cfg[i]]);
        if (n < 0 || (size_t)n >= len - used)
            return 0;
        used += (size_t)n;
    }
    return 1;
}

/* Median, minimum, standard deviation and interval of the first n of e's
 * runtimes. Returns -1 when memory ran out. */
int cutune__session_summarize(eval_record *e, size_t n)
{
    double *d = malloc((n ? n : 1) * sizeof *d);
    if (!d)
        return -1;
    memcpy(d, e->runtimes, n * sizeof *d);
    gsl_sort(d, 1, n);
    e->pub.time_ms = gsl_stats_median_from_sorted_data(d, 1, n);
    e->min_ms = d[0];
    e->stddev_ms = n > 1 ? gsl_stats_sd(d, 1, n) : 0.0;
    cutune__median_ci(d, n, CI_LEVEL, &e->ci_lo_ms, &e->ci_hi_ms);
    free(d);
    return 0;
}

/* A binary from the cache that the driver would not load (a damaged
 * entry, or one a changed driver cannot use) is not the configuration's
 * fault: it is compiled again, which also replaces the entry, and loaded
 * once more. Returns the second load's result. */
static cutune__call_result reload_fresh(cutune_session *s, cutune__mslot *slot,
                                        const eval_record *e,
                                        cutune__compile_job *job, int *cerr,
                                        char *msg, size_t msglen)
{
    char cfg[512];
    cutune__session_describe(s->problem, e->pub.config_index, cfg, sizeof cfg);
    /* The first in full; a damaged cache usually holds many more, which
     * the end of the tune counts. */
    cutune__session_log(
        s, s->tel.recompiled++ ? CUTUNE_LOG_DEBUG : CUTUNE_LOG_WARN,
        "the cached binary of %s did not load (%s); compiling it again", cfg,
        msg);
    cutune__compile_job fresh = {.source = job->source,
                                 .source_name = job->source_name,
                                 .options = job->options,
                                 .n_options = job->n_options,
                                 .cache = job->cache,
                                 .kernel_name = job->kernel_name,
                                 .refresh = 1};
    cutune__call_result cr = CUTUNE__CALL_OK;
    int rejected;
    if (cutune__compile_with(&fresh, cutune__session_compilers(s), 0) != 0 ||
        !fresh.ok) {
        snprintf(msg, msglen,
                 "compiling again after the cached binary did "
                 "not load: %s",
                 fresh.log ? fresh.log : "failed");
        cutune__compile_job_clear(&fresh);
        return cr;
    }
    /* The job takes the fresh binary, so that the final round (which
     * loads it again) does not meet the damaged one a second time. */
    char *cubin = job->cubin, *lowered = job->lowered_name;
    job->cubin = fresh.cubin;
    job->cubin_size = fresh.cubin_size;
    job->lowered_name = fresh.lowered_name;
    job->from_cache = 0;
    fresh.cubin = cubin;
    fresh.lowered_name = lowered;
    cutune__compile_job_clear(&fresh);
    /* A worker the rejected image took down is brought back first. */
    if (slot->worker.pid == 0) {
        s->tel.restarts++;
        cutune_status st = cutune__session_bring_up(s, slot, 1);
        if (st) {
            s->fatal = 1;
            s->fatal_status = st;
            snprintf(msg, msglen, "%s", s->errmsg);
            return CUTUNE__CALL_DIED;
        }
    }
    return cutune__session_load_cubin(s, slot, job->cubin, job->cubin_size,
                                      job->lowered_name, cerr, &rejected, msg,
                                      msglen);
}

/* Conditions of the measurement, where NVML can tell them: the slot's
 * monitor opened on its first measurement. */
static void sample_conditions(cutune_session *s, cutune__mslot *slot,
                              eval_record *e)
{
    if (!slot->monitor_tried) {
        char why[128];
        slot->monitor_tried = 1;
        slot->monitor = cutune__gpu_monitor_open(slot->device.fingerprint.uuid,
                                                 why, sizeof why);
        if (!slot->monitor)
            cutune__session_log(s, CUTUNE_LOG_DEBUG,
                                "no clock or temperature records of "
                                "worker %zu: %s",
                                slot->index, why);
    }
    cutune__gpu_sample gs;
    cutune__gpu_monitor_sample(slot->monitor, slot->worker.pid, &gs);
    /* The tune's other workers on the same GPU (--devices 0,0) are not
     * strangers. */
    for (size_t k = 0; gs.other_processes > 0 && k < s->n_slots; k++)
        if (&s->slots[k] != slot && s->slots[k].worker.pid != 0 &&
            strcmp(s->slots[k].device.fingerprint.uuid,
                   slot->device.fingerprint.uuid) == 0)
            gs.other_processes--;
    e->pub.sm_clock_mhz = gs.sm_clock_mhz;
    e->pub.temperature_c = gs.temperature_c;
    if (gs.other_processes > 0 && !s->record.warned_other_processes) {
        s->record.warned_other_processes = 1;
        cutune__session_log(s, CUTUNE_LOG_WARN,
                            "%d other process%s using the GPU during "
                            "the tune; timings may be disturbed",
                            gs.other_processes,
                            gs.other_processes == 1 ? " is" : "es are");
    }
}

/* Measures one compiled configuration on the slot's worker, restarting
 * the worker first when a previous candidate killed it. In the final
 * round (`final`) nothing stops early and each finalist gets
 * FINAL_SECONDS. */
void cutune__session_measure(cutune_session *s, cutune__mslot *slot,
                             eval_record *e, cutune__compile_job *job,
                             int final)
{
    s->dev->measure(s, slot, e, job, final);
}

/* The CUDA device's measuring (device.h). */
void cutune__cuda_measure(cutune_session *s, cutune__mslot *slot,
                          eval_record *e, cutune__compile_job *job, int final)
{
    const cutune_problem *p = s->problem;
    unsigned grid[3], block[3];
    char msg[1024];
    if (cutune__problem_geometry(p, e->pub.config_index, grid, block, msg,
                                 sizeof msg) != 0) {
        e->pub.outcome = CUTUNE_OUTCOME_RUNTIME;
        cutune__session_set_message(e, msg);
        return;
    }
    if (slot->worker.pid == 0) {
        if (slot->ever_up) {
            cutune__session_log(s, CUTUNE_LOG_INFO,
                                "starting a new GPU worker");
            s->tel.restarts++;
        }
        cutune_status st = cutune__session_bring_up(s, slot, 1);
        if (st) {
            s->fatal = 1;
            s->fatal_status = st;
            e->pub.outcome = CUTUNE_OUTCOME_RUNTIME;
            cutune__session_set_message(e, s->errmsg);
            return;
        }
    }
    int cerr = 0, rejected = 0;
    double t_load = cutune__now();
    cutune__call_result cr = cutune__session_load_cubin(
        s, slot, job->cubin, job->cubin_size, job->lowered_name, &cerr,
        &rejected, msg, sizeof msg);
    if (cr == CUTUNE__CALL_OK && rejected && job->from_cache)
        cr = reload_fresh(s, slot, e, job, &cerr, msg, sizeof msg);
    t_load = cutune__now() - t_load;
    if (cr != CUTUNE__CALL_OK || cerr) {
        e->pub.outcome = cr == CUTUNE__CALL_TIMEOUT ? CUTUNE_OUTCOME_TIMEOUT
                                                    : CUTUNE_OUTCOME_RUNTIME;
        cutune__session_set_message(e, cr ? slot->worker.message : msg);
        return;
    }
    cutune__run_request rq;
    cutune__session_fill_run_request(&rq, grid, block, p->shared_memory,
                                     CUTUNE__RUN_MEASURE);
    /* Dropping early on time would drop a slower configuration that
     * takes less energy. */
    rq.best_ms = final || s->proto.objective != CUTUNE_OBJECTIVE_TIME
                     ? 0.0
                     : s->best_ms;
    rq.check = s->proto.check.mode;
    if (final) {
        rq.min_seconds = FINAL_SECONDS;
        rq.max_reps = FINAL_MAX_REPS;
    }
    if (s->opt.warm_cache)
        rq.flush_l2 = 0;
    sample_conditions(s, slot, e);
    cutune__run_reply *rr = NULL;
    double t_run = cutune__now();
    cr = cutune__session_call(s, slot, CUTUNE__MSG_RUN, &rq, sizeof rq, NULL,
                              0, (void **)&rr, sizeof *rr,
                              cutune__session_run_timeout(s));
    t_run = cutune__now() - t_run;
    if (cr == CUTUNE__CALL_OK)
        cutune__session_log(s, CUTUNE_LOG_DEBUG,
                            "load %.2f ms, run %.2f ms of which GPU "
                            "%.2f ms (kernels %.2f ms, %u timed launches)",
                            1e3 * t_load, 1e3 * t_run, rr->span_ms, rr->gpu_ms,
                            rr->n_times);
    if (cr == CUTUNE__CALL_TIMEOUT) {
        e->pub.outcome = CUTUNE_OUTCOME_TIMEOUT;
        cutune__session_set_message(e, slot->worker.message);
        return;
    }
    if (cr != CUTUNE__CALL_OK) {
        e->pub.outcome = CUTUNE_OUTCOME_RUNTIME;
        cutune__session_set_message(e, slot->worker.message);
        return;
    }
    e->pub.outcome = (cutune_outcome)rr->outcome;
    cutune__session_set_message(e, rr->head.message);
    e->gpu_ms = rr->gpu_ms;
    s->tel.span_ms += rr->span_ms;
    e->pub.stopped_early = rr->stopped_early;
    s->tel.gpu_ms += rr->gpu_ms;
    if (rr->head.fatal)
        cutune__worker_stop(&slot->worker);
    e->differs = rr->outcome == CUTUNE_OUTCOME_CORRECTNESS && rr->differs;
    if ((rr->outcome == CUTUNE_OUTCOME_CORRECT || e->differs) &&
        rr->n_times > 0) {
        const float *t = (const float *)(rr + 1);
        e->runtimes = malloc(rr->n_times * sizeof *e->runtimes);
        for (uint32_t i = 0; e->runtimes && i < rr->n_times; i++)
            e->runtimes[i] = t[i];
        e->runs = e->runtimes ? rr->n_times : 0;
        if (!e->runtimes || cutune__session_summarize(e, e->runs) != 0) {
            free(e->runtimes);
            e->runtimes = NULL;
            e->runs = 0;
            e->pub.outcome = CUTUNE_OUTCOME_RUNTIME;
            cutune__session_set_message(e, "out of memory");
        }
    } else if (rr->outcome == CUTUNE_OUTCOME_CORRECT) {
        e->pub.outcome = CUTUNE_OUTCOME_RUNTIME;
        cutune__session_set_message(e, "no timed launch completed");
    }
    free(rr);
    /* The final round and explain only time: a finalist keeps the
     * energy its search measured. */
    if (!final)
        cutune__session_measure_energy(s, slot, e, grid, block);
}
