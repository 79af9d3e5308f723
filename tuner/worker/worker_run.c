/* The GPU worker's measurements: a configuration's resource check, its
 * first launch (kept as the reference, or validated against it on the
 * GPU), its timed launches (RUN), the occupancy suggestion (OCCUPANCY)
 * and the memory bandwidth (BANDWIDTH). Split from worker.c so that what
 * decides a configuration's time and outcome reads on its own.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "cutune/cutune.h"
#include "dtype.h"
#include "occupancy.h"
#include "protocol.h"
#include "stats.h"
#include "worker_state.h"

void cutune__worker_handle_occupancy(cutune__worker *w, const void *payload,
                                     size_t size)
{
    cutune__occupancy_reply r;
    memset(&r, 0, sizeof r);
    const cutune__occupancy_request *q = payload;
    if (!w->loaded || size < sizeof *q) {
        r.head.cuda_error = cudaErrorInvalidValue;
        snprintf(r.head.message, sizeof r.head.message,
                 "bad OCCUPANCY request (no kernel loaded)");
    } else {
        cudaError_t e = cutune__occupancy_max_potential_block_size(
            &r.min_grid_size, &r.block_size, (const void *)w->kernel,
            q->dynamic_smem, q->block_size_limit);
        if (e != cudaSuccess)
            cutune__worker_error(&r.head, e, "occupancy calculation");
    }
    cutune__msg_send(w->fd, CUTUNE__MSG_OCCUPANCY, &r, sizeof r, NULL, 0);
}

cudaError_t cutune__worker_launch(cutune__worker *w, const uint32_t grid[3],
                                  const uint32_t block[3], uint32_t smem)
{
    dim3 g = {grid[0], grid[1], grid[2]};
    dim3 b = {block[0], block[1], block[2]};
    return cudaLaunchKernel((const void *)w->kernel, g, b, w->params, smem, 0);
}

static cudaError_t launch(cutune__worker *w, const cutune__run_request *q)
{
    return cutune__worker_launch(w, q->grid, q->block, q->dynamic_smem);
}

cudaError_t cutune__worker_copy_outputs(cutune__worker *w, void **dst,
                                        void **src)
{
    for (size_t i = 0; i < w->n_args; i++) {
        const cutune__wire_arg *a = &w->args[i];
        if (!a->is_vector || !a->is_output)
            continue;
        size_t bytes =
            (size_t)a->count * cutune__dtype_size((cutune__dtype)a->dtype);
        cudaError_t e =
            cudaMemcpy(dst[i], src[i], bytes, cudaMemcpyDeviceToDevice);
        if (e != cudaSuccess)
            return e;
    }
    return cudaSuccess;
}

/* Compares every output with the reference; fills mismatches/max_error. */
static cudaError_t validate(cutune__worker *w, const cutune__run_request *q,
                            cutune__run_reply *r, char *detail, size_t dlen,
                            unsigned long long *nonfinite)
{
    detail[0] = '\0';
    for (size_t i = 0; i < w->n_args; i++) {
        const cutune__wire_arg *a = &w->args[i];
        if (!a->is_vector || !a->is_output ||
            (w->external_reference && !w->ref_given[i]))
            continue;
        cudaError_t e =
            cudaMemset(w->compare_result, 0, 3 * sizeof(unsigned long long));
        if (e != cudaSuccess)
            return e;
        unsigned long long n = a->count;
        double atol = w->external_reference ? w->ref_atol[i] : q->atol;
        double rtol = w->external_reference ? w->ref_rtol[i] : q->rtol;
        unsigned long long *res = w->compare_result;
        void *params[] = {&w->dev[i], &w->reference[i], &n, &atol, &rtol,
                          &res};
        unsigned blocks = (unsigned)((n + 255) / 256);
        unsigned cap = (unsigned)w->props.fingerprint.sm_count * 8;
        if (blocks > cap)
            blocks = cap;
        if (blocks == 0)
            blocks = 1;
        dim3 grid = {blocks, 1, 1}, block = {256, 1, 1};
        e = cudaLaunchKernel((const void *)w->compare[a->dtype], grid, block,
                             params, 0, 0);
        unsigned long long host[3];
        if (e == cudaSuccess)
            e = cudaMemcpy(host, w->compare_result, sizeof host,
                           cudaMemcpyDeviceToHost);
        if (e != cudaSuccess)
            return e;
        *nonfinite += host[2];
        if (q->check == CUTUNE__CHECK_FINITE) {
            if (host[2] > 0 && r->mismatches == 0)
                snprintf(detail, dlen,
                         "%llu of %llu elements of output "
                         "argument %zu are NaN or infinite",
                         host[2], n, i);
            r->mismatches += host[2];
            continue;
        }
        double worst;
        memcpy(&worst, &host[1], sizeof worst);
        if (worst > r->max_error)
            r->max_error = worst;
        if (host[0] > 0 && r->mismatches == 0)
            snprintf(detail, dlen,
                     "%llu of %llu elements of output argument "
                     "%zu differ from the reference (largest error %g)",
                     host[0], n, i, worst);
        r->mismatches += host[0];
    }
    return cudaSuccess;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static int ensure_events(cutune__worker *w, size_t n)
{
    if (w->n_events >= n)
        return 0;
    cudaEvent_t *ev = realloc(w->events, n * sizeof *ev);
    if (!ev)
        return -1;
    w->events = ev;
    for (size_t i = w->n_events; i < n; i++) {
        if (cudaEventCreate(&w->events[i]) != cudaSuccess)
            return -1;
        w->n_events = i + 1;
    }
    return 0;
}

/* Warm-up, then launches timed one by one with an event pair each, the L2
 * overwritten before each outside the timed region, in batches; after
 * each batch cutune__timing_next() says whether to go on, stop (measured
 * well enough, or a cap) or drop the candidate as clearly slower than the
 * best so far. */
static cudaError_t time_launches(cutune__worker *w,
                                 const cutune__run_request *q,
                                 cutune__run_reply *r, float **times_out)
{
    const uint32_t cap = q->max_reps > 0 ? q->max_reps : 1;
    float *times = malloc(cap * sizeof *times);
    double *sorted = malloc(cap * sizeof *sorted);
    if (!times || !sorted || ensure_events(w, 2 * (size_t)cap) != 0) {
        free(times);
        free(sorted);
        return cudaErrorMemoryAllocation;
    }
    cudaError_t e = cudaSuccess;
    cudaEvent_t *warm = w->events;
    /* The warm-up launches are timed too, for the GPU-busy figure. */
    for (uint32_t i = 1; i < q->warmup && e == cudaSuccess; i++) {
        e = cudaEventRecord(warm[0], 0);
        if (e == cudaSuccess)
            e = launch(w, q);
        if (e == cudaSuccess)
            e = cudaEventRecord(warm[1], 0);
        float ms = 0.0f;
        if (e == cudaSuccess &&
            (e = cudaEventSynchronize(warm[1])) == cudaSuccess &&
            cudaEventElapsedTime(&ms, warm[0], warm[1]) == cudaSuccess)
            r->gpu_ms += ms;
    }
    const cutune__timing_rule rule = {
        .min_reps = q->min_reps,
        .min_seconds = q->min_seconds,
        .max_seconds = q->max_seconds,
        .ci_level = q->ci_level,
        .ci_rel = q->ci_rel,
        .best_ms = q->best_ms,
        .early_reps = q->early_reps,
        .early_margin = q->early_margin,
        .race_margin = q->race_margin,
    };
    uint32_t done = 0;
    double total_s = 0.0;
    while (e == cudaSuccess && done < cap) {
        /* Batches keep the GPU fed between host synchronizations. */
        uint32_t batch = done < q->early_reps ? q->early_reps - done
                         : done < q->min_reps ? q->min_reps - done
                                              : 10;
        if (batch > cap - done)
            batch = cap - done;
        for (uint32_t k = 0; k < batch && e == cudaSuccess; k++) {
            if (q->flush_l2)
                e = cudaMemsetAsync(w->flush, (int)((done + k) & 0xff),
                                    w->flush_bytes, 0);
            if (e == cudaSuccess)
                e = cudaEventRecord(w->events[2 * (done + k)], 0);
            if (e == cudaSuccess)
                e = launch(w, q);
            if (e == cudaSuccess)
                e = cudaEventRecord(w->events[2 * (done + k) + 1], 0);
        }
        if (e == cudaSuccess)
            e = cudaDeviceSynchronize();
        for (uint32_t k = 0; k < batch && e == cudaSuccess; k++) {
            float ms = 0.0f;
            e = cudaEventElapsedTime(&ms, w->events[2 * (done + k)],
                                     w->events[2 * (done + k) + 1]);
            times[done + k] = ms;
            total_s += ms * 1e-3;
            r->gpu_ms += ms;
        }
        if (e != cudaSuccess)
            break;
        done += batch;
        for (uint32_t k = 0; k < done; k++)
            sorted[k] = times[k];
        qsort(sorted, done, sizeof *sorted, cmp_double);
        cutune__timing_verdict v = cutune__timing_next(
            &rule, sorted, done, total_s, &r->ci_lo, &r->ci_hi);
        if (v == CUTUNE__TIMING_DROP)
            r->stopped_early = 1;
        if (v != CUTUNE__TIMING_MORE)
            break;
    }
    /* `sorted` holds all `done` launches here: the interval of them all,
     * also for a candidate dropped before min_reps. */
    if (e == cudaSuccess && done > 0)
        cutune__median_ci(sorted, done, q->ci_level, &r->ci_lo, &r->ci_hi);
    free(sorted);
    *times_out = times;
    r->n_times = done;
    return e;
}

/* Resource checks first: a configuration that cannot be resident is
 * rejected without a launch. 0 when it can run; else `r` says why. */
static int check_resources(cutune__worker *w, const cutune__run_request *q,
                           cutune__run_reply *r)
{
    cudaError_t e;
    struct cudaFuncAttributes attr;
    if ((e = cudaFuncGetAttributes(&attr, (const void *)w->kernel)) !=
        cudaSuccess)
        return cutune__worker_error(&r->head, e, "cudaFuncGetAttributes");
    const unsigned long long threads =
        (unsigned long long)q->block[0] * q->block[1] * q->block[2];
    if (threads > (unsigned long long)attr.maxThreadsPerBlock) {
        r->outcome = CUTUNE_OUTCOME_RESOURCES;
        snprintf(r->head.message, sizeof r->head.message,
                 "%llu threads per block exceed the kernel's limit of %d "
                 "(%d registers per thread)",
                 threads, attr.maxThreadsPerBlock, attr.numRegs);
        return -1;
    }
    int active = 0;
    if ((e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(
             &active, (const void *)w->kernel, (int)threads,
             q->dynamic_smem)) != cudaSuccess)
        return cutune__worker_error(
            &r->head, e, "cudaOccupancyMaxActiveBlocksPerMultiprocessor");
    r->active_blocks = active;
    if (active == 0) {
        r->outcome = CUTUNE_OUTCOME_RESOURCES;
        snprintf(r->head.message, sizeof r->head.message,
                 "zero occupancy: %d registers per thread, %d bytes of static "
                 "and %u of dynamic shared memory per block",
                 attr.numRegs, (int)attr.sharedSizeBytes, q->dynamic_smem);
        return -1;
    }
    return 0;
}

/* The first launch, from the outputs' initial contents: its output is
 * kept as the reference (CUTUNE__RUN_REFERENCE) or validated against it.
 * It is timed only for the GPU-busy figure. 0 when the configuration goes
 * on to be timed (a probe's differing output included, r->differs set);
 * else `r` says why not. */
static int first_launch(cutune__worker *w, const cutune__run_request *q,
                        cutune__run_reply *r)
{
    cudaError_t e;
    if ((e = cutune__worker_copy_outputs(w, w->dev, w->pristine)) !=
        cudaSuccess)
        return cutune__worker_error(&r->head, e, "resetting the outputs");
    float first_ms = 0.0f;
    if (ensure_events(w, 2) != 0) {
        r->head.cuda_error = cudaErrorMemoryAllocation;
        snprintf(r->head.message, sizeof r->head.message, "out of memory");
        return -1;
    }
    if ((e = cudaEventRecord(w->events[0], 0)) != cudaSuccess ||
        (e = launch(w, q)) != cudaSuccess ||
        (e = cudaEventRecord(w->events[1], 0)) != cudaSuccess ||
        (e = cudaDeviceSynchronize()) != cudaSuccess)
        return cutune__worker_error(
            &r->head, e, "launching grid (%u,%u,%u) block (%u,%u,%u)",
            q->grid[0], q->grid[1], q->grid[2], q->block[0], q->block[1],
            q->block[2]);
    if (cudaEventElapsedTime(&first_ms, w->events[0], w->events[1]) ==
        cudaSuccess)
        r->gpu_ms += first_ms;
    if (q->mode == CUTUNE__RUN_REFERENCE) {
        if ((e = cutune__worker_copy_outputs(w, w->reference, w->dev)) !=
            cudaSuccess)
            return cutune__worker_error(&r->head, e,
                                        "keeping the reference output");
        w->have_reference = 1;
        return 0;
    }
    char detail[512];
    unsigned long long nonfinite = 0;
    if ((e = validate(w, q, r, detail, sizeof detail, &nonfinite)) !=
        cudaSuccess)
        return cutune__worker_error(&r->head, e, "validating the output");
    if (r->mismatches > 0) {
        r->outcome = CUTUNE_OUTCOME_CORRECTNESS;
        snprintf(r->head.message, sizeof r->head.message, "%s", detail);
        if (q->check != CUTUNE__CHECK_PROBE || nonfinite > 0)
            return -1;
        r->differs = 1;
    }
    return 0;
}

void cutune__worker_handle_run(cutune__worker *w, const void *payload,
                               size_t size)
{
    cudaEvent_t span_start = NULL, span_end = NULL;
    cutune__run_reply r;
    memset(&r, 0, sizeof r);
    float *times = NULL;
    const cutune__run_request *q = payload;
    cudaError_t e;
    r.outcome = CUTUNE_OUTCOME_RUNTIME;
    if (!w->loaded || !w->params || size < sizeof *q) {
        r.head.cuda_error = cudaErrorInvalidValue;
        snprintf(r.head.message, sizeof r.head.message,
                 "bad RUN request (no kernel or arguments)");
        goto send;
    }
    if (q->mode == CUTUNE__RUN_MEASURE && !w->have_reference) {
        r.head.cuda_error = cudaErrorInvalidValue;
        snprintf(r.head.message, sizeof r.head.message,
                 "RUN before a reference was kept");
        goto send;
    }
    if (check_resources(w, q, &r) != 0)
        goto send;
    /* The span of the GPU work of this run, for the GPU-busy figure. */
    if (cudaEventCreate(&span_start) == cudaSuccess &&
        cudaEventCreate(&span_end) == cudaSuccess)
        cudaEventRecord(span_start, 0);
    if (first_launch(w, q, &r) != 0)
        goto send;
    if ((e = time_launches(w, q, &r, &times)) != cudaSuccess) {
        cutune__worker_error(&r.head, e, "timed launches");
        r.n_times = 0;
        goto send;
    }
    r.outcome =
        r.differs ? CUTUNE_OUTCOME_CORRECTNESS : CUTUNE_OUTCOME_CORRECT;
    float span = 0.0f;
    if (span_end && cudaEventRecord(span_end, 0) == cudaSuccess &&
        cudaEventSynchronize(span_end) == cudaSuccess &&
        cudaEventElapsedTime(&span, span_start, span_end) == cudaSuccess)
        r.span_ms = span;
send:
    if (span_start)
        cudaEventDestroy(span_start);
    if (span_end)
        cudaEventDestroy(span_end);
    if (r.head.cuda_error)
        r.head.fatal = cutune__worker_context_broken();
    cutune__msg_send(w->fd, CUTUNE__MSG_RUN, &r, sizeof r, times,
                     r.n_times * sizeof(float));
    free(times);
}

void cutune__worker_handle_bandwidth(cutune__worker *w, const void *payload,
                                     size_t size)
{
    cutune__bandwidth_reply r;
    memset(&r, 0, sizeof r);
    const cutune__bandwidth_request *q = payload;
    void *a = NULL, *b = NULL;
    cudaEvent_t start = NULL, stop = NULL;
    cudaError_t e;
    if (!w->initialized || size < sizeof *q || q->bytes == 0) {
        r.head.cuda_error = cudaErrorInvalidValue;
        snprintf(r.head.message, sizeof r.head.message,
                 "bad BANDWIDTH request");
        goto send;
    }
    const size_t bytes = q->bytes;
    const int reps = 20;
    float ms = 0.0f;
    if ((e = cudaMalloc(&a, bytes)) != cudaSuccess ||
        (e = cudaMalloc(&b, bytes)) != cudaSuccess ||
        (e = cudaMemset(a, 1, bytes)) != cudaSuccess ||
        (e = cudaMemcpy(b, a, bytes, cudaMemcpyDeviceToDevice)) !=
            cudaSuccess ||
        (e = cudaEventCreate(&start)) != cudaSuccess ||
        (e = cudaEventCreate(&stop)) != cudaSuccess ||
        (e = cudaEventRecord(start, 0)) != cudaSuccess) {
        cutune__worker_error(&r.head, e, "measuring cudaMemcpy bandwidth");
        goto send;
    }
    for (int i = 0; i < reps && e == cudaSuccess; i++)
        e = cudaMemcpyAsync(i % 2 ? a : b, i % 2 ? b : a, bytes,
                            cudaMemcpyDeviceToDevice, 0);
    if (e == cudaSuccess && (e = cudaEventRecord(stop, 0)) == cudaSuccess &&
        (e = cudaEventSynchronize(stop)) == cudaSuccess)
        e = cudaEventElapsedTime(&ms, start, stop);
    if (e != cudaSuccess)
        cutune__worker_error(&r.head, e, "measuring cudaMemcpy bandwidth");
    else
        r.gbs = 2.0 * (double)bytes * reps / (ms * 1e-3) / 1e9;
send:
    if (start)
        cudaEventDestroy(start);
    if (stop)
        cudaEventDestroy(stop);
    cudaFree(a);
    cudaFree(b);
    cutune__msg_send(w->fd, CUTUNE__MSG_BANDWIDTH, &r, sizeof r, NULL, 0);
}
