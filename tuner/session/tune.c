/* cutune_session_tune: the stages of a tune in order (the budget and
 * strategy, arguments and devices, the reference, bring-up, bandwidth and
 * occupancy, the search, the final round, publishing), with the pieces
 * only the start needs: the occupancy-seeded first configuration and the
 * measurement log's key. */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expr/none.h"
#include "output_check.h"
#include "session_internal.h"
#include "util.h"

/* Digest of everything a measurement depends on besides the values of the
 * configuration: the device as the fingerprint describes it (this GPU, its
 * driver, NVRTC and cutune versions), the kernel, the options every
 * configuration is compiled with, the arguments as resolved for the
 * problem size, the reference data and the measuring options. The version
 * names the measurement protocol: change it with the protocol. */
static uint64_t measure_key(const cutune_session *s)
{
    const cutune_problem *p = s->problem;
    const cutune_device *d = &s->proto.device.fingerprint;
    char head[1024];
    int n = snprintf(head, sizeof head,
                     "cutune measurements v3\n%s\n%s\n%d.%d %d %lld %lld %d "
                     "%s %s\n%s\nwarm %d shared %u\n",
                     d->name, d->uuid, d->cc_major, d->cc_minor, d->sm_count,
                     d->l2_bytes, d->memory_bytes, d->driver_version,
                     d->nvrtc_version, d->cutune_version, p->kernel_name,
                     s->opt.warm_cache, p->shared_memory);
    uint64_t h = cutune__fnv1a64(head, n > 0 ? (size_t)n : 0);
    /* The source with the headers it includes. */
    h = cutune__fnv1a64_continue(h, p->source_hash, sizeof p->source_hash);
    for (size_t i = 0; i < p->n_options; i++)
        h = cutune__fnv1a64_continue(h, p->options[i],
                                     strlen(p->options[i]) + 1);
    h = cutune__fnv1a64_continue(h, s->proto.arch, strlen(s->proto.arch) + 1);
    for (size_t i = 0; i < p->n_problem_size; i++)
        h = cutune__fnv1a64_continue(h, &p->problem_size[i],
                                     sizeof p->problem_size[i]);
    /* Wire arguments are calloc'ed, so their padding is zeros. */
    h = cutune__fnv1a64_continue(h, s->proto.args.wire,
                                 p->n_args * sizeof *s->proto.args.wire);
    for (size_t i = 0; i < p->n_args; i++)
        if (p->args[i].data)
            h = cutune__fnv1a64_continue(h, p->args[i].data,
                                         p->args[i].data_size);
    for (size_t i = 0; i < p->n_refs; i++) {
        const cutune__reference *r = &p->refs[i];
        double nums[3] = {r->fill_value, r->atol, r->rtol};
        uint64_t ints[3] = {r->arg, (uint64_t)r->fill, r->seed};
        h = cutune__fnv1a64_continue(h, nums, sizeof nums);
        h = cutune__fnv1a64_continue(h, ints, sizeof ints);
        if (r->data)
            h = cutune__fnv1a64_continue(h, r->data, r->data_size);
    }
    return h;
}

/* Opens this tune's measurement log under <cache dir>/measurements. Every
 * measured configuration is appended to it; with reuse_measurements, what
 * it already holds is read so that those configurations are not measured
 * again. A log that cannot be opened is a warning, never a failure. */
static void open_measure_log(cutune_session *s)
{
    char *leaf = cutune__strdup_printf("measurements/%s-%016llx.jsonl",
                                       s->problem->name,
                                       (unsigned long long)measure_key(s));
    char *path = leaf ? cutune__session_cache_path(s, leaf) : NULL;
    free(leaf);
    if (!path)
        return;
    char err[512];
    s->record.measured = cutune__measure_log_open(
        path, s->opt.reuse_measurements, err, sizeof err);
    if (!s->record.measured)
        cutune__session_log(s, CUTUNE_LOG_WARN,
                            "measurements are not logged: %s", err);
    else if (s->opt.reuse_measurements)
        cutune__session_log(s, CUTUNE_LOG_INFO,
                            "%zu earlier measurements in %s (%zu "
                            "torn or unreadable lines skipped)",
                            cutune__measure_log_count(s->record.measured),
                            path,
                            cutune__measure_log_skipped(s->record.measured));
    free(path);
}

/* The start of the search by the rule simulate shares
 * (search/strategy/seed.h): the problem's defaults at the occupancy API's
 * block size, or the defaults alone when the API gave no answer. */
size_t cutune__session_occupancy_start(cutune_session *s, int block_size)
{
    cutune__seed_source src;
    size_t idx = cutune__problem_seed_start(s->problem, block_size, &src);
    cutune__session_log(s, CUTUNE_LOG_DEBUG, "start: configuration %zu (%s)",
                        idx, cutune__seed_source_name(src));
    return idx;
}

/* The strategy of a tune: the caller's, else the T1 file's, else the
 * default. NULL when the T1 file names one not built in. */
static const cutune__strategy_type *tune_strategy(const cutune_session *s,
                                                  const cutune_problem *p)
{
    if (s->strategy)
        return cutune__strategy_find(s->strategy);
    if (p->search_strategy)
        return cutune__strategy_find(p->search_strategy);
    return cutune__strategies[0];
}

/* The public header promises the default budget search/ applies. */
_Static_assert(CUTUNE_DEFAULT_BUDGET == CUTUNE__DEFAULT_BUDGET,
               "CUTUNE_DEFAULT_BUDGET and CUTUNE__DEFAULT_BUDGET differ");

/* The limits of a tune (budget.h): the caller's, else the T1 file's
 * Budget, else the strategy's default. */
static cutune__budget tune_budget(const cutune_session *s,
                                  const cutune_problem *p,
                                  const cutune__strategy_type *type)
{
    cutune__budget caller = {s->opt.max_evals, s->opt.max_seconds,
                             s->opt.max_fraction};
    cutune__budget t1 = {p->budget_evals, p->budget_seconds,
                         p->budget_fraction};
    return cutune__budget_resolve(&caller, &t1, cutune__space_size(p->space),
                                  type);
}

/* The devices listed and checked, and the arch known from the list
 * before any context exists. */
cutune_status cutune__session_choose_devices(cutune_session *s)
{
    cutune_status st;
    if ((st = cutune__session_list_devices(s)) ||
        (st = cutune__session_check_slots(s)))
        return st;
    const cutune_device *d = &s->props[s->slots[0].ordinal].fingerprint;
    snprintf(s->proto.arch, sizeof s->proto.arch, "sm_%d%d", d->cc_major,
             d->cc_minor);
    return CUTUNE_OK;
}

/* The arguments, the devices, the default configuration compiled for the
 * reference and the first slot's worker brought up: what a tune and
 * `explain` both need before anything is measured. */
cutune_status cutune__session_open_device(cutune_session *s, double *t_devices,
                                          double *t_ref)
{
    cutune_status st;
    if ((st = cutune__session_prepare_args(s)) ||
        (st = cutune__session_choose_devices(s)) ||
        (st = cutune__session_check_energy(s)))
        return st;
    size_t ref = cutune__problem_default_config(s->problem);
    *t_devices = cutune__now();
    if ((st = cutune__session_compile_reference(s, ref, 0)))
        return st;
    *t_ref = cutune__now();
    return cutune__session_bring_up(s, s->slots, 1);
}

/* Everything before the search, on the session's device (device.h). The
 * other slots come up as they take their first proposal. *start is the
 * configuration the search starts from. */
static cutune_status start_tune(cutune_session *s, size_t *start)
{
    const cutune_problem *problem = s->problem;
    s->proto.check.agreed = s->proto.check.differed = 0;
    s->proto.check.mode =
        s->opt.output_check == CUTUNE_CHECK_REFERENCE || problem->n_refs > 0
            ? CUTUNE__CHECK_REFERENCE
        : s->opt.output_check == CUTUNE_CHECK_FINITE ? CUTUNE__CHECK_FINITE
                                                     : CUTUNE__CHECK_PROBE;
    cutune_status st = cutune__session_energy_settings(s);
    return st ? st : s->dev->start(s, start);
}

/* The CUDA device's start (device.h): the arguments, the device, the
 * default configuration compiled and run for the reference, a worker
 * brought up, bandwidth and occupancy measured, the measurement log
 * opened. */
cutune_status cutune__cuda_start(cutune_session *s, size_t *start)
{
    const cutune_problem *problem = s->problem;
    cutune_status st;
    double t_devices, t_ref;
    if ((st = cutune__session_open_device(s, &t_devices, &t_ref)))
        return st;
    double t_up = cutune__now();
    if ((st = cutune__session_measure_bandwidth(s)))
        return st;
    double t_bw = cutune__now();
    int occ_block = 0;
    if ((st = cutune__session_query_occupancy(s, &occ_block)))
        return st;
    cutune__session_log(
        s, CUTUNE_LOG_DEBUG,
        "start: %.3f s to list devices, %.3f s to "
        "compile the default configuration, %.3f s to set up the device, "
        "arguments and reference, %.3f s measuring bandwidth, %.3f s for "
        "the occupancy query",
        t_devices - s->started, t_ref - t_devices, t_up - t_ref, t_bw - t_up,
        cutune__now() - t_bw);
    s->out.result.occupancy_block_size = occ_block;
    open_measure_log(s);
    *start = cutune__session_occupancy_start(s, occ_block);
    cutune__session_log(s, CUTUNE_LOG_INFO,
                        "%s on %s (%s): %zu configurations; the "
                        "occupancy API suggests %d threads per block",
                        problem->name, s->proto.device.fingerprint.name,
                        s->proto.arch, cutune__space_size(problem->space),
                        occ_block);
    if (s->n_slots > 1)
        cutune__session_log(s, CUTUNE_LOG_INFO,
                            "%zu GPU workers share the search; the final "
                            "round runs on device %d",
                            s->n_slots, s->slots[0].ordinal);
    return CUTUNE_OK;
}

/* The search from `start` within the tune's budget, then the final round
 * over its best. */
static cutune_status search(cutune_session *s,
                            const cutune__strategy_type *type, size_t start,
                            cutune__search_result *sr)
{
    cutune_status st;
    cutune__search_options so = {s->budget.max_evals, 0, s->opt.seed, start,
                                 NULL};
    so.batch = cutune__search_batch(type, cutune__session_pool_threads(s),
                                    s->n_slots);
    s->batch_end = cutune__now();
    double t_search = s->batch_end;
    s->prog.start = start;
    s->prog.started = t_search;
    s->prog.best_ms = s->prog.baseline_ms = NAN;
    /* A strategy that can have proposals in flight keeps a window of them
     * compiling on a GPU (evaluate_async.c). On several slots, where no
     * compile thread could start, and on replayed devices, which compile
     * nothing and have no clock to win on (they stay the deterministic
     * harness of the batch path), it goes batch by batch. */
    int rc = type->async && s->n_slots == 1 && s->dev->runs_kernels
                 ? cutune__session_search_async(s, type, &so, sr)
                 : -3;
    if (rc == -3)
        rc = cutune__search_run(type, s->problem->space, &so,
                                cutune__session_evaluate_batch, s, sr);
    double t_final = cutune__now();
    if (s->compile.cq)
        cutune__cq_stats(s->compile.cq, &s->tel.order);
    if (rc == -1)
        return cutune__session_fail(s, CUTUNE_ERR_NO_MEMORY, "out of memory");
    if (s->fatal)
        return s->fatal_status;
    /* A search shorter than the sample settles on what it measured. */
    int settled_late =
        s->proto.check.mode == CUTUNE__CHECK_PROBE &&
        cutune__outputs_vary(s->proto.check.agreed, s->proto.check.differed);
    cutune__session_settle_check(s, 0, NULL, 0);
    st = sr->best != CUTUNE__NONE || settled_late
             ? cutune__session_final_round(s)
             : CUTUNE_OK;
    cutune__cq_destroy(s->compile.cq);
    s->compile.cq = NULL;
    if (st)
        return st;
    if (s->tel.recompiled > 1)
        cutune__session_log(
            s, CUTUNE_LOG_WARN,
            "%zu cached binaries did not load and were "
            "compiled again (the binary cache was damaged, or written for "
            "another driver)",
            s->tel.recompiled);
    cutune__session_log(
        s, CUTUNE_LOG_DEBUG,
        "wall time: %.3f s to start (devices, the reference, bandwidth, "
        "occupancy), %.3f s searching (%zu batches; %zu compiles, %zu of "
        "them speculative, %zu of those wanted later; %.3f s waiting for a "
        "compile to measure; %zu configurations queued to compile ahead), "
        "%.3f s in the final round",
        t_search - s->started, t_final - t_search, s->tel.batches,
        s->tel.order.started, s->tel.order.started_spec,
        s->tel.order.spec_used, s->tel.wait_compile_s, s->tel.compiled_ahead,
        cutune__now() - t_final);
    return CUTUNE_OK;
}

/* However the tune ended: compiles still running borrow the problem's
 * source, which the caller may free once the tune returns; nobody waits
 * for them any more, so the compile queue kills them
 * (cutune__cq_destroy). The worker stops. */
static void end_tune(cutune_session *s)
{
    double t0 = cutune__now();
    cutune__cq_destroy(s->compile.cq);
    s->compile.cq = NULL;
    cutune__session_log(s, CUTUNE_LOG_DEBUG, "%.3f s to end the compiles",
                        cutune__now() - t0);
    double t_stop = cutune__now();
    cutune__session_stop_slots(s);
    cutune__session_log(s, CUTUNE_LOG_DEBUG, "%.3f s to stop the GPU worker%s",
                        cutune__now() - t_stop, s->n_slots > 1 ? "s" : "");
}

cutune_status cutune_session_tune(cutune_session *s,
                                  const cutune_problem *problem,
                                  const cutune_tune_result **result)
{
    if (!s || !problem || !result || !problem->space)
        return CUTUNE_ERR_INVALID_ARGUMENT;
    if (problem->space_only && s->dev->runs_kernels)
        return cutune__session_fail(s, CUTUNE_ERR_INVALID_ARGUMENT,
                                    "%s: loaded for its search space only; "
                                    "it cannot be tuned",
                                    problem->origin);
    *result = NULL;
    cutune__session_clear_tune(s);
    s->problem = problem;
    s->started = cutune__now();
    cutune__session_open_binaries(s);
    /* The caller's strategy and budget win; else the T1 file's. */
    const cutune__strategy_type *type = tune_strategy(s, problem);
    cutune_status st;
    size_t start = CUTUNE__NONE;
    cutune__search_result sr;
    if (!type) {
        st = cutune__session_fail(s, CUTUNE_ERR_INVALID_ARGUMENT,
                                  "%s: strategy '%s' is not built into this "
                                  "cutune",
                                  problem->origin, problem->search_strategy);
    } else {
        s->budget = tune_budget(s, problem, type);
        s->tuned_with = type;
        if (!(st = start_tune(s, &start)) &&
            !(st = search(s, type, start, &sr)) &&
            !(st = cutune__session_publish(s, &sr, start, type))) {
            /* The result stands whether or not the cache takes it: the
             * caller prints it and writes its T4, then reports the
             * cache's error. */
            *result = &s->out.result;
            if (s->opt.write_cache)
                st = cutune__session_record_winner(s);
        }
    }
    end_tune(s);
    return st;
}

const cutune__device cutune__device_cuda = {
    .kind = "CUDA",
    .runs_kernels = 1,
    .list = cutune__cuda_list,
    .start = cutune__cuda_start,
    .bring_up = cutune__cuda_bring_up,
    .measure = cutune__cuda_measure,
};
