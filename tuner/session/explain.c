/* cutune_session_explain: the winner (or a given configuration), the
 * occupancy suggestion and the default configuration, each timed as a
 * tune times it (RUN) and then profiled (PROFILE) in a pass of its own
 * once every configuration is timed, so that the profiler never runs
 * while anything is timed. The figures go to tuner/explain/, which
 * classifies and formats them. */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "explain_model.h"
#include "session_internal.h"
#include "util.h"

/* The worker's states travel as the public ones. */
_Static_assert(
    (int)CUTUNE_COUNTERS_READ == (int)CUTUNE__COUNTERS_READ &&
        (int)CUTUNE_COUNTERS_NO_CUPTI == (int)CUTUNE__COUNTERS_NO_CUPTI &&
        (int)CUTUNE_COUNTERS_REFUSED == (int)CUTUNE__COUNTERS_REFUSED &&
        (int)CUTUNE_COUNTERS_UNSUPPORTED ==
            (int)CUTUNE__COUNTERS_UNSUPPORTED &&
        (int)CUTUNE_COUNTERS_FAILED == (int)CUTUNE__COUNTERS_FAILED &&
        (int)CUTUNE_COUNTERS_NOT_RUN == (int)CUTUNE__COUNTERS_NOT_RUN,
    "the public and wire counter states differ");

/* Loads configuration job `job` into the worker, restarting it first when
 * an earlier configuration killed it. 0, or -1 with `msg` saying why. */
static int load(cutune_session *s, cutune__compile_job *job, char *msg,
                size_t len)
{
    if (!job->ok) {
        snprintf(msg, len, "does not compile: %s", job->log ? job->log : "");
        return -1;
    }
    if (s->slots[0].worker.pid == 0 &&
        cutune__session_bring_up(s, s->slots, 1) != CUTUNE_OK) {
        snprintf(msg, len, "%s", s->errmsg);
        return -1;
    }
    int cerr = 0, rejected = 0;
    cutune__call_result cr = cutune__session_load_cubin(
        s, s->slots, job->cubin, job->cubin_size, job->lowered_name, &cerr,
        &rejected, msg, len);
    if (cr != CUTUNE__CALL_OK)
        snprintf(msg, len, "%s", s->slots[0].worker.message);
    return cr != CUTUNE__CALL_OK || cerr ? -1 : 0;
}

/* The timed launches of a tune's measurement; the record is the
 * configuration's result in a T4 file written after (`--output`). */
static void time_config(cutune_session *s, cutune__explained *e,
                        cutune__compile_job *job)
{
    eval_record *rec = cutune__session_add_eval(s, e->config_index);
    if (rec)
        rec->timestamp = (double)time(NULL);
    if (!rec) {
        e->outcome = CUTUNE_OUTCOME_RUNTIME;
        e->message = strdup("out of memory");
        return;
    }
    cutune__session_measure(s, s->slots, rec, job, 1);
    /* measure() leaves energy to a search's candidates; explain measures
     * it here, after the timing, as a search does, when asked to. */
    unsigned grid[3], block[3];
    char why[256];
    if (s->proto.energy.on &&
        cutune__problem_geometry(s->problem, e->config_index, grid, block, why,
                                 sizeof why) == 0)
        cutune__session_measure_energy(s, s->slots, rec, grid, block);
    e->energy_j = rec->energy_j;
    e->power_w = rec->power_w;
    e->outcome = rec->pub.outcome;
    e->time_ms = rec->pub.time_ms;
    e->message = strdup(rec->pub.message ? rec->pub.message : "");
}

static void take_static(cutune_session *s, cutune__explained *e,
                        const cutune__profile_reply *r,
                        const unsigned block[3])
{
    const cutune__device_props *d = &s->proto.device;
    cutune__static_facts *f = &e->facts;
    f->threads_per_block = (int)(block[0] * block[1] * block[2]);
    f->regs_per_thread = r->num_regs;
    f->local_bytes = r->local_bytes;
    f->static_smem = r->static_smem;
    f->dynamic_smem = (int)s->problem->shared_memory;
    f->active_blocks = r->active_blocks;
    f->warp_size = d->warp_size;
    f->max_threads_per_sm = d->max_threads_per_sm;
    f->max_blocks_per_sm = r->max_blocks_per_sm;
    f->regs_per_sm = d->regs_per_sm;
    f->smem_per_sm = d->smem_per_sm;
    f->reserved_smem_per_block = r->reserved_smem_per_block;
    e->has_static = 1;
    cutune__occupancy_compute(f, &e->occ);
}

/* The PROFILE request: the metric names after the geometry. */
static void profile_config(cutune_session *s, cutune__explained *e,
                           cutune__compile_job *job)
{
    const cutune_problem *p = s->problem;
    unsigned grid[3], block[3];
    char msg[1024];
    e->counters = CUTUNE_COUNTERS_NOT_RUN;
    if (cutune__problem_geometry(p, e->config_index, grid, block, msg,
                                 sizeof msg) != 0 ||
        load(s, job, msg, sizeof msg) != 0) {
        snprintf(e->why, sizeof e->why, "%s", msg);
        return;
    }
    char names[2048];
    size_t used = 0;
    for (int m = 0; m < CUTUNE__METRIC_COUNT; m++) {
        const char *name = cutune__metric_name((cutune__metric)m);
        memcpy(names + used, name, strlen(name) + 1);
        used += strlen(name) + 1;
    }
    cutune__profile_request q = {{grid[0], grid[1], grid[2]},
                                 {block[0], block[1], block[2]},
                                 p->shared_memory,
                                 CUTUNE__METRIC_COUNT,
                                 used};
    cutune__profile_reply *r = NULL;
    cutune__call_result cr =
        cutune__session_call(s, s->slots, CUTUNE__MSG_PROFILE, &q, sizeof q,
                             names, used, (void **)&r, sizeof *r, 300.0);
    if (cr != CUTUNE__CALL_OK) {
        snprintf(e->why, sizeof e->why, "%s", s->slots[0].worker.message);
        return;
    }
    if (r->num_regs > 0 || r->active_blocks > 0)
        take_static(s, e, r, block);
    e->counters = r->counters;
    e->passes = r->passes;
    e->range_of_ours = r->range_of_ours;
    snprintf(e->why, sizeof e->why, "%s",
             r->head.cuda_error ? r->head.message : r->why);
    const double *v = (const double *)(r + 1);
    for (uint32_t i = 0; i < r->n_values && i < CUTUNE__METRIC_COUNT; i++)
        e->values[i] = v[i];
    if (r->head.fatal)
        cutune__worker_stop(&s->slots[0].worker);
    free(r);
}

/* The columns: the winner or given configuration (when there is one), the
 * occupancy suggestion, the default. */
static cutune_status pick_configs(cutune_session *s, cutune_explain *x,
                                  const cutune_param_value *config,
                                  size_t n_config, const char *role)
{
    const cutune_problem *p = s->problem;
    size_t idx[CUTUNE__EXPLAIN_MAX];
    const char *roles[CUTUNE__EXPLAIN_MAX];
    size_t n = 0;
    if (config) {
        char why[512];
        if (cutune__problem_config_from_values(p, config, n_config, &idx[n],
                                               why, sizeof why) != 0)
            return cutune__session_fail(
                s, CUTUNE_ERR_PARSE, "%s: configuration: %s", p->origin, why);
        roles[n++] = role && *role ? role : "given";
    }
    int block = 0;
    cutune_status st = cutune__session_query_occupancy(s, &block);
    if (st)
        return st;
    idx[n] = cutune__session_occupancy_start(s, block);
    roles[n++] = "occupancy";
    idx[n] = cutune__problem_default_config(p);
    roles[n++] = "default";
    for (size_t i = 0; i < n; i++) {
        cutune__explained *e = &x->cfg[i];
        snprintf(e->role, sizeof e->role, "%s", roles[i]);
        e->config_index = idx[i];
        e->time_ms = e->energy_j = e->power_w = NAN;
        e->counters = CUTUNE_COUNTERS_NOT_RUN;
        for (int m = 0; m < CUTUNE__METRIC_COUNT; m++)
            e->values[m] = NAN;
        char text[1024];
        cutune__session_describe(p, idx[i], text, sizeof text);
        e->config_text = strdup(text);
        if (!e->config_text)
            return cutune__session_fail(s, CUTUNE_ERR_NO_MEMORY,
                                        "out of memory");
        x->n = i + 1;
    }
    return CUTUNE_OK;
}

static void describe_header(const cutune_session *s, cutune_explain *x,
                            const char *note)
{
    const cutune_problem *p = s->problem;
    snprintf(x->problem, sizeof x->problem, "%s", p->name);
    snprintf(x->device, sizeof x->device, "%s",
             s->proto.device.fingerprint.name);
    snprintf(x->arch, sizeof x->arch, "%s", s->proto.arch);
    snprintf(x->note, sizeof x->note, "%s", note ? note : "");
    size_t used = 0;
    for (size_t d = 0; d < p->n_problem_size && used < sizeof x->size; d++)
        used += (size_t)snprintf(x->size + used, sizeof x->size - used,
                                 "%s%lld", d ? "x" : "", p->problem_size[d]);
}

/* The counters as the evaluation's extra T4 measurements. */
static void keep_measurements(eval_record *rec, const cutune__explained *e)
{
    const size_t cap = CUTUNE__MEASUREMENTS_MAX;
    rec->extra_names = malloc(cap * sizeof *rec->extra_names);
    rec->extra_units = malloc(cap * sizeof *rec->extra_units);
    rec->extra_values = malloc(cap * sizeof *rec->extra_values);
    if (!rec->extra_names || !rec->extra_units || !rec->extra_values)
        return; /* the file then holds the times alone */
    rec->n_extra = cutune__explain_measurements(
        e, rec->extra_names, rec->extra_values, rec->extra_units, cap);
}

/* Compile, time every configuration, then profile every one. */
static cutune_status explain_all(cutune_session *s, cutune_explain *x)
{
    size_t idx[CUTUNE__EXPLAIN_MAX];
    for (size_t i = 0; i < x->n; i++)
        idx[i] = x->cfg[i].config_index;
    job_set js;
    if (cutune__session_job_set_init(&js, s, s->problem, idx, x->n,
                                     s->proto.arch) != 0)
        return cutune__session_fail(s, CUTUNE_ERR_NO_MEMORY, "out of memory");
    if (cutune__compile_batch(js.jobs, js.n, 0,
                              cutune__session_compilers(s)) != 0) {
        cutune__session_job_set_clear(&js);
        return cutune__session_fail(s, CUTUNE_ERR_NVRTC,
                                    "NVRTC failed to compile the "
                                    "configurations to explain");
    }
    for (size_t i = 0; i < x->n && !s->fatal; i++)
        time_config(s, &x->cfg[i], &js.jobs[i]);
    for (size_t i = 0; i < x->n && !s->fatal; i++)
        profile_config(s, &x->cfg[i], &js.jobs[i]);
    cutune__session_job_set_clear(&js);
    if (s->fatal)
        return s->fatal_status;
    for (size_t i = 0; i < x->n; i++) {
        cutune__classify(&x->cfg[i]);
        if (i < s->record.n_evals)
            keep_measurements(&s->record.evals[i], &x->cfg[i]);
    }
    cutune__explain_settle(x);
    return CUTUNE_OK;
}

cutune_status cutune_session_explain(cutune_session *s,
                                     const cutune_problem *problem,
                                     const cutune_param_value *config,
                                     size_t n_config, const char *role,
                                     const char *note, cutune_explain **out)
{
    if (!s || !problem || !out || !problem->space)
        return CUTUNE_ERR_INVALID_ARGUMENT;
    *out = NULL;
    if (problem->space_only)
        return cutune__session_fail(s, CUTUNE_ERR_INVALID_ARGUMENT,
                                    "%s: loaded for its search space only; "
                                    "it cannot be explained",
                                    problem->origin);
    cutune__session_clear_tune(s);
    s->problem = problem;
    s->started = cutune__now();
    cutune__session_open_binaries(s);
    /* Any output is timed, as a tune's first configurations are; one
     * that differs from the default's says so in its outcome. */
    s->proto.check.mode =
        problem->n_refs > 0 ? CUTUNE__CHECK_REFERENCE : CUTUNE__CHECK_PROBE;
    cutune_explain *x = calloc(1, sizeof *x);
    if (!x)
        return cutune__session_fail(s, CUTUNE_ERR_NO_MEMORY, "out of memory");
    double t_devices, t_ref;
    cutune_status st = cutune__session_energy_settings(s);
    if (!st)
        st = cutune__session_open_device(s, &t_devices, &t_ref);
    if (!st) {
        describe_header(s, x, note);
        st = pick_configs(s, x, config, n_config, role);
    }
    if (!st)
        st = explain_all(s, x);
    cutune__worker_stop(&s->slots[0].worker);
    if (st) {
        cutune__explain_free(x);
        return st;
    }
    *out = x;
    return CUTUNE_OK;
}
