/* The session's side of the GPU worker: calling it, bringing one up
 * ready to measure (device, comparison kernels, arguments, the reference
 * output), and the requests a tune makes of it at the start (occupancy,
 * bandwidth). Used at the start of a tune and again whenever a candidate
 * killed the worker. */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "session_internal.h"
#include "util.h"

/* Calls the slot's worker; a reply shorter than `min_size` is a protocol
 * error. On DIED/TIMEOUT the worker's message says so. The session lock
 * is let go while the worker works, so that other slots measure. */
cutune__call_result
cutune__session_call(cutune_session *s, cutune__mslot *slot, uint32_t type,
                     const void *a, size_t alen, const void *b, size_t blen,
                     void **reply, size_t min_size, double timeout_s)
{
    size_t size;
    cutune__session_unlock(s);
    cutune__call_result r = cutune__worker_call(
        &slot->worker, type, a, alen, b, blen, reply, &size, timeout_s);
    cutune__session_lock(s);
    if (r == CUTUNE__CALL_OK && size < min_size) {
        free(*reply);
        *reply = NULL;
        cutune__worker_stop(&slot->worker);
        snprintf(slot->worker.message, sizeof slot->worker.message,
                 "the GPU worker sent a malformed reply (is %s from another "
                 "cutune version?)",
                 s->worker_path);
        return CUTUNE__CALL_DIED;
    }
    return r;
}

cutune_status cutune__session_start_worker(cutune_session *s,
                                           cutune__mslot *slot)
{
    if (slot->worker.pid != 0)
        return CUTUNE_OK;
    if (cutune__worker_start(&slot->worker, s->worker_path) != 0)
        return cutune__session_fail(s, CUTUNE_ERR_WORKER,
                                    "%s (set CUTUNE_WORKER to the "
                                    "path of cutune-worker)",
                                    slot->worker.message);
    return CUTUNE_OK;
}

/* How long a RUN may take before the worker is presumed hung. A launch
 * may take 100 times the best median so far (at least 1 s), never more
 * than the absolute cap; the first launches (validation, warm-up) are each
 * allowed that, plus the timed loop's own limit. */
double cutune__session_run_timeout(const cutune_session *s)
{
    double cap = s->opt.launch_timeout_s > 0 ? s->opt.launch_timeout_s
                                             : DEFAULT_LAUNCH_TIMEOUT;
    /* Until something has been measured, only the cap applies. */
    double per_launch = s->best_ms > 0 ? 100.0 * s->best_ms * 1e-3 : cap;
    if (per_launch < 1.0)
        per_launch = 1.0;
    if (per_launch > cap)
        per_launch = cap;
    return 2.0 * MAX_SECONDS + (WARMUP_LAUNCHES + 1) * per_launch;
}

void cutune__session_fill_run_request(cutune__run_request *q,
                                      const unsigned grid[3],
                                      const unsigned block[3], unsigned smem,
                                      cutune__run_mode mode)
{
    memset(q, 0, sizeof *q);
    for (int d = 0; d < 3; d++) {
        q->grid[d] = grid[d];
        q->block[d] = block[d];
    }
    q->dynamic_smem = smem;
    q->mode = mode;
    q->warmup = WARMUP_LAUNCHES;
    q->min_reps = MIN_REPS;
    q->max_reps = MAX_REPS;
    q->flush_l2 = 1;
    q->min_seconds = MIN_SECONDS;
    q->max_seconds = MAX_SECONDS;
    q->atol = ATOL;
    q->rtol = RTOL;
    q->ci_level = CI_LEVEL;
    q->ci_rel = CI_REL;
    q->early_reps = EARLY_REPS;
    q->early_margin = EARLY_MARGIN;
    q->race_margin = RACE_MARGIN;
}

/* Loads a cubin into the worker. Returns the call result; a CUDA error in
 * the reply is returned as *cuda_error with the message in `msg`, and
 * *rejected says whether the driver refused the image itself. */
cutune__call_result cutune__session_load_cubin(cutune_session *s,
                                               cutune__mslot *slot,
                                               const char *cubin, size_t size,
                                               const char *lowered,
                                               int *cuda_error, int *rejected,
                                               char *msg, size_t msglen)
{
    *rejected = 0;
    /* The kernel by its name in the cubin (mangled for C++ kernels). */
    const char *name = lowered ? lowered : s->problem->kernel_name;
    cutune__load_request q = {(uint32_t)strlen(name), size};
    /* The name and cubin are sent as one block after the request. */
    size_t blen = q.name_len + size;
    char *buf = malloc(blen);
    if (!buf)
        return CUTUNE__CALL_NOMEM;
    memcpy(buf, name, q.name_len);
    memcpy(buf + q.name_len, cubin, size);
    cutune__load_reply *r = NULL;
    cutune__call_result cr =
        cutune__session_call(s, slot, CUTUNE__MSG_LOAD, &q, sizeof q, buf,
                             blen, (void **)&r, sizeof *r, 60.0);
    free(buf);
    if (cr != CUTUNE__CALL_OK)
        return cr;
    *cuda_error = r->head.cuda_error;
    *rejected = r->head.cuda_error && r->image_rejected;
    slot->load_mismatch = r->head.cuda_error && r->args_mismatch;
    snprintf(msg, msglen, "%s", r->head.message);
    if (r->head.fatal)
        cutune__worker_stop(&slot->worker);
    free(r);
    return CUTUNE__CALL_OK;
}

static cutune_status send_references(cutune_session *s, cutune__mslot *slot)
{
    const cutune_problem *p = s->problem;
    for (size_t i = 0; i < p->n_refs; i++) {
        const cutune__reference *ref = &p->refs[i];
        cutune__reference_request q = {(uint32_t)ref->arg, (uint32_t)ref->fill,
                                       ref->seed,          ref->fill_value,
                                       ref->atol,          ref->rtol};
        cutune__reply *r = NULL;
        cutune__call_result cr = cutune__session_call(
            s, slot, CUTUNE__MSG_REFERENCE, &q, sizeof q, ref->data,
            ref->fill == CUTUNE__FILL_BINARY ? ref->data_size : 0, (void **)&r,
            sizeof *r, 120.0);
        if (cr != CUTUNE__CALL_OK)
            return cutune__session_fail(s, CUTUNE_ERR_WORKER,
                                        "setting the reference of "
                                        "'%s': %s",
                                        p->args[ref->arg].name,
                                        slot->worker.message);
        cutune_status st = CUTUNE_OK;
        if (r->cuda_error)
            st = cutune__session_fail(s, CUTUNE_ERR_CUDA,
                                      "setting the reference of '%s': %s",
                                      p->args[ref->arg].name, r->message);
        free(r);
        if (st)
            return st;
    }
    return CUTUNE_OK;
}

/* Runs the default configuration (loaded) once; its outputs become the
 * reference every other configuration is validated against. */
static cutune_status run_reference(cutune_session *s, cutune__mslot *slot)
{
    const cutune_problem *p = s->problem;
    cutune_status st;
    cutune__call_result cr;
    size_t ref = cutune__problem_default_config(p);
    unsigned grid[3], block[3];
    char gerr[256];
    if (cutune__problem_geometry(p, ref, grid, block, gerr, sizeof gerr))
        return cutune__session_fail(s, CUTUNE_ERR_PARSE,
                                    "%s: default configuration: %s", p->origin,
                                    gerr);
    cutune__run_request rq;
    cutune__session_fill_run_request(&rq, grid, block, p->shared_memory,
                                     CUTUNE__RUN_REFERENCE);
    cutune__run_reply *rr = NULL;
    cr = cutune__session_call(s, slot, CUTUNE__MSG_RUN, &rq, sizeof rq, NULL,
                              0, (void **)&rr, sizeof *rr,
                              cutune__session_run_timeout(s));
    if (cr != CUTUNE__CALL_OK)
        return cutune__session_fail(s, CUTUNE_ERR_CUDA,
                                    "running the default configuration "
                                    "for the reference output: %s",
                                    slot->worker.message);
    if (rr->outcome != CUTUNE_OUTCOME_CORRECT) {
        st = cutune__session_fail(
            s, CUTUNE_ERR_CUDA,
            "the default configuration, which "
            "gives the reference output, failed (%s): %s",
            cutune_outcome_str((cutune_outcome)rr->outcome), rr->head.message);
        free(rr);
        return st;
    }
    free(rr);
    return CUTUNE_OK;
}

/* INIT: the slot's device and the comparison kernels. A comparison
 * binary the driver rejects is compiled again (or left to the worker) and
 * the worker started afresh: *again says so. */
static cutune_status init_device(cutune_session *s, cutune__mslot *slot,
                                 int *again)
{
    *again = 0;
    cutune__session_compile_compare(s, 0);
    cutune__init_request iq = {slot->ordinal, 0, s->proto.compare.cubin_size};
    cutune__init_reply *ir = NULL;
    cutune__call_result cr = cutune__session_call(
        s, slot, CUTUNE__MSG_INIT, &iq, sizeof iq, s->proto.compare.cubin,
        s->proto.compare.cubin_size, (void **)&ir, sizeof *ir, 120.0);
    if (cr != CUTUNE__CALL_OK)
        return cutune__session_fail(s, CUTUNE_ERR_WORKER,
                                    "starting the GPU worker: %s",
                                    slot->worker.message);
    if (ir->head.cuda_error && ir->cubin_rejected) {
        /* The comparison kernels did not load. From the binary cache (a
         * damaged entry, a changed driver): compiled again, which replaces
         * the entry. Compiled just now and still rejected: the worker
         * compiles its own, for the rest of the session. */
        int refresh = !s->proto.compare.refreshed;
        cutune__session_log(s, CUTUNE_LOG_WARN,
                            "the comparison kernels did not load "
                            "(%s); %s",
                            ir->head.message,
                            refresh ? "compiling them again"
                                    : "compiling them in the worker");
        free(ir);
        cutune__worker_stop(&slot->worker);
        free(s->proto.compare.cubin);
        s->proto.compare.cubin = NULL;
        s->proto.compare.cubin_size = 0;
        if (refresh) {
            s->proto.compare.refreshed = 1;
            cutune__session_compile_compare(s, 1);
        } else {
            s->proto.compare.from_worker = 1;
        }
        *again = 1;
        return CUTUNE_OK;
    }
    if (ir->head.cuda_error) {
        cutune_status st =
            cutune__session_fail(s, CUTUNE_ERR_CUDA, "device %d: %s",
                                 slot->ordinal, ir->head.message);
        free(ir);
        cutune__worker_stop(&slot->worker);
        return st;
    }
    slot->device = ir->props;
    free(ir);
    return CUTUNE_OK;
}

/* The reference configuration loaded into the slot's worker and its
 * expected outputs set (run, or from the T1 ReferenceArguments). */
static cutune_status load_reference(cutune_session *s, cutune__mslot *slot)
{
    const cutune_problem *p = s->problem;
    int cerr = 0, rejected = 0;
    char msg[1024];
    cutune__call_result cr = cutune__session_load_cubin(
        s, slot, s->proto.ref.cubin, s->proto.ref.cubin_size,
        s->proto.ref.lowered, &cerr, &rejected, msg, sizeof msg);
    if (cr == CUTUNE__CALL_OK && rejected && s->proto.ref.from_cache &&
        slot->worker.pid != 0) {
        /* As for any configuration (reload_fresh): compiled again. */
        cutune__session_log(
            s, CUTUNE_LOG_WARN,
            "the cached binary of the default "
            "configuration did not load (%s); compiling it again",
            msg);
        cutune_status st = cutune__session_compile_reference(
            s, cutune__problem_default_config(p), 1);
        if (st)
            return st;
        cr = cutune__session_load_cubin(
            s, slot, s->proto.ref.cubin, s->proto.ref.cubin_size,
            s->proto.ref.lowered, &cerr, &rejected, msg, sizeof msg);
    }
    /* The parameter list does not change with the tunables in practice:
     * a mismatch here is the problem's, named as the T1 field to fix. */
    if (cr == CUTUNE__CALL_OK && cerr && slot->load_mismatch)
        return cutune__session_fail(s, CUTUNE_ERR_PARSE, "%s: %s", p->origin,
                                    msg);
    if (cr != CUTUNE__CALL_OK || cerr)
        return cutune__session_fail(s, CUTUNE_ERR_CUDA,
                                    "loading the reference "
                                    "configuration: %s",
                                    cr ? slot->worker.message : msg);
    /* T1 ReferenceArguments give the expected outputs; the default
     * configuration stays loaded for the occupancy query. */
    return p->n_refs > 0 ? send_references(s, slot) : run_reference(s, slot);
}

/* Starts the slot's worker ready to measure: device, arguments, reference
 * output. Used at the start of a tune and again after a worker died. */
cutune_status cutune__session_bring_up(cutune_session *s, cutune__mslot *slot,
                                       int keep_reference)
{
    return s->dev->bring_up(s, slot, keep_reference);
}

/* The CUDA device's bring-up (device.h): the worker started, its device,
 * arguments and reference output set up. */
cutune_status cutune__cuda_bring_up(cutune_session *s, cutune__mslot *slot,
                                    int keep_reference)
{
    cutune_status st;
    int again = 1;
    while (again) {
        if ((st = cutune__session_start_worker(s, slot)) ||
            (st = init_device(s, slot, &again)))
            return st;
    }
    if (slot->index == 0)
        s->proto.device = slot->device;
    double t_init = cutune__now();
    snprintf(s->proto.arch, sizeof s->proto.arch, "sm_%d%d",
             slot->device.fingerprint.cc_major,
             slot->device.fingerprint.cc_minor);

    const cutune_problem *p = s->problem;
    cutune__args_request aq = {(uint32_t)p->n_args};
    cutune__reply *ar = NULL;
    cutune__call_result cr = cutune__session_call(
        s, slot, CUTUNE__MSG_ARGS, &aq, sizeof aq, s->proto.args.payload,
        s->proto.args.payload_size, (void **)&ar, sizeof *ar, 300.0);
    if (cr != CUTUNE__CALL_OK)
        return cutune__session_fail(s, CUTUNE_ERR_WORKER,
                                    "setting up kernel arguments: %s",
                                    slot->worker.message);
    if (ar->cuda_error) {
        st = cutune__session_fail(s, CUTUNE_ERR_CUDA,
                                  "setting up kernel arguments: %s",
                                  ar->message);
        free(ar);
        return st;
    }
    free(ar);
    cutune__session_log(s, CUTUNE_LOG_DEBUG,
                        "GPU worker %zu: %.3f s to set up the arguments",
                        slot->index, cutune__now() - t_init);
    st = keep_reference ? load_reference(s, slot) : CUTUNE_OK;
    slot->ever_up |= st == CUTUNE_OK;
    return st;
}

cutune_status cutune__session_prepare_args(cutune_session *s)
{
    const cutune_problem *p = s->problem;
    s->proto.args.wire = calloc(p->n_args + 1, sizeof *s->proto.args.wire);
    if (!s->proto.args.wire)
        return cutune__session_fail(s, CUTUNE_ERR_NO_MEMORY, "out of memory");
    int any_output = 0;
    for (size_t i = 0; i < p->n_args; i++)
        any_output |= p->args[i].is_output;
    any_output |= p->n_refs > 0;
    for (size_t i = 0; i < p->n_args; i++) {
        const cutune__arg *a = &p->args[i];
        cutune__wire_arg *w = &s->proto.args.wire[i];
        w->is_vector = (uint32_t)a->is_vector;
        w->dtype = (uint32_t)a->dtype;
        w->fill = (uint32_t)a->fill;
        w->count = a->count;
        w->seed = a->seed;
        w->fill_value = a->fill_value;
        w->is_output = (uint32_t)a->is_output;
        /* An argument with a T1 reference is an output to validate. */
        for (size_t k = 0; k < p->n_refs; k++)
            if (p->refs[k].arg == i)
                w->is_output = 1;
        w->is_symbol = (uint32_t)a->is_symbol;
        snprintf(w->symbol, sizeof w->symbol, "%s", a->name);
        w->data_size = a->fill == CUTUNE__FILL_BINARY ? a->data_size : 0;
    }
    s->proto.args.payload_size = p->n_args * sizeof *s->proto.args.wire;
    for (size_t i = 0; i < p->n_args; i++)
        s->proto.args.payload_size += s->proto.args.wire[i].data_size;
    s->proto.args.payload = malloc(s->proto.args.payload_size + 1);
    if (!s->proto.args.payload)
        return cutune__session_fail(s, CUTUNE_ERR_NO_MEMORY, "out of memory");
    memcpy(s->proto.args.payload, s->proto.args.wire,
           p->n_args * sizeof *s->proto.args.wire);
    char *at = s->proto.args.payload + p->n_args * sizeof *s->proto.args.wire;
    for (size_t i = 0; i < p->n_args; i++) {
        if (!s->proto.args.wire[i].data_size)
            continue;
        memcpy(at, p->args[i].data, s->proto.args.wire[i].data_size);
        at += s->proto.args.wire[i].data_size;
    }
    if (!any_output)
        cutune__session_log(s, CUTUNE_LOG_WARN,
                            "%s: no argument is marked Output, so "
                            "results are not validated",
                            p->origin);
    return CUTUNE_OK;
}

cutune_status cutune__session_query_occupancy(cutune_session *s,
                                              int *block_size)
{
    cutune__occupancy_request q = {s->problem->shared_memory, 0};
    cutune__occupancy_reply *r = NULL;
    cutune__call_result cr =
        cutune__session_call(s, s->slots, CUTUNE__MSG_OCCUPANCY, &q, sizeof q,
                             NULL, 0, (void **)&r, sizeof *r, 60.0);
    if (cr != CUTUNE__CALL_OK)
        return cutune__session_fail(s, CUTUNE_ERR_WORKER,
                                    "occupancy query: %s",
                                    s->slots[0].worker.message);
    cutune_status st = CUTUNE_OK;
    if (r->head.cuda_error)
        st = cutune__session_fail(s, CUTUNE_ERR_CUDA, "occupancy query: %s",
                                  r->head.message);
    *block_size = r->block_size;
    free(r);
    return st;
}

cutune_status cutune__session_measure_bandwidth(cutune_session *s)
{
    long long mem = s->proto.device.fingerprint.memory_bytes;
    cutune__bandwidth_request q = {
        (uint64_t)(mem / 16 < (1LL << 30) ? mem / 16 : (1LL << 30))};
    cutune__bandwidth_reply *r = NULL;
    cutune__call_result cr =
        cutune__session_call(s, s->slots, CUTUNE__MSG_BANDWIDTH, &q, sizeof q,
                             NULL, 0, (void **)&r, sizeof *r, 60.0);
    if (cr != CUTUNE__CALL_OK)
        return cutune__session_fail(s, CUTUNE_ERR_WORKER,
                                    "bandwidth measurement: %s",
                                    s->slots[0].worker.message);
    s->out.result.memcpy_gbs = r->head.cuda_error ? 0.0 : r->gbs;
    if (r->head.cuda_error)
        cutune__session_log(s, CUTUNE_LOG_WARN, "%s", r->head.message);
    free(r);
    return CUTUNE_OK;
}
