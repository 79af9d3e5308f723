/* The GPU worker's PROFILE request: the loaded kernel's static facts
 * (registers, local memory, shared memory, the occupancy API's resident
 * blocks and the device limits behind them), then its hardware counters
 * through CUPTI (cupti_profile.h) in launches of their own, never mixed
 * with the timed launches of RUN. Counters that cannot be read are a
 * state in the reply, not an error: the static facts still go back.
 */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "cupti_profile.h"
#include "protocol.h"
#include "worker_state.h"

typedef struct profile_launch {
    cutune__worker *w;
    const cutune__profile_request *q;
} profile_launch;

/* Outside the profiled range: the outputs as a tune's first launch finds
 * them, and an L2 that holds nothing of the arguments, as timed launches
 * find it. */
static int prepare_pass(void *user)
{
    profile_launch *pl = user;
    cudaError_t e =
        cutune__worker_copy_outputs(pl->w, pl->w->dev, pl->w->pristine);
    if (e == cudaSuccess)
        e = cudaMemsetAsync(pl->w->flush, 0x5a, pl->w->flush_bytes, 0);
    return (int)e;
}

static int launch_pass(void *user)
{
    profile_launch *pl = user;
    const cutune__profile_request *q = pl->q;
    dim3 grid = {q->grid[0], q->grid[1], q->grid[2]};
    dim3 block = {q->block[0], q->block[1], q->block[2]};
    return (int)cudaLaunchKernel((const void *)pl->w->kernel, grid, block,
                                 pl->w->params, q->dynamic_smem, 0);
}

/* The kernel's attributes, its resident blocks per SM and the limits of
 * the device; -1 with `r` saying why. */
static int static_facts(cutune__worker *w, const cutune__profile_request *q,
                        cutune__profile_reply *r)
{
    struct cudaFuncAttributes attr;
    cudaError_t e;
    if ((e = cudaFuncGetAttributes(&attr, (const void *)w->kernel)) !=
        cudaSuccess)
        return cutune__worker_error(&r->head, e, "cudaFuncGetAttributes");
    r->num_regs = attr.numRegs;
    r->local_bytes = (int32_t)attr.localSizeBytes;
    r->static_smem = (int32_t)attr.sharedSizeBytes;
    r->kernel_max_threads = attr.maxThreadsPerBlock;
    int threads = (int)(q->block[0] * q->block[1] * q->block[2]);
    int active = 0;
    if (threads <= attr.maxThreadsPerBlock &&
        (e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(
             &active, (const void *)w->kernel, threads, q->dynamic_smem)) !=
            cudaSuccess)
        return cutune__worker_error(
            &r->head, e, "cudaOccupancyMaxActiveBlocksPerMultiprocessor");
    r->active_blocks = active;
    int v = 0;
    if (cudaDeviceGetAttribute(&v, cudaDevAttrMaxBlocksPerMultiprocessor,
                               w->device) == cudaSuccess)
        r->max_blocks_per_sm = v;
    if (cudaDeviceGetAttribute(&v, cudaDevAttrReservedSharedMemoryPerBlock,
                               w->device) == cudaSuccess)
        r->reserved_smem_per_block = v;
    if (cudaDeviceGetAttribute(&v, cudaDevAttrMaxRegistersPerBlock,
                               w->device) == cudaSuccess)
        r->max_regs_per_block = v;
    return 0;
}

/* The NUL-terminated metric names after the request; NULL when they are
 * not what the request says. */
static const char **split_names(const cutune__profile_request *q,
                                const char *names, size_t len)
{
    if (q->n_metrics > 4096)
        return NULL;
    const char **out = calloc(q->n_metrics + 1, sizeof *out);
    const char *at = names, *end = names + len;
    for (uint32_t i = 0; out && i < q->n_metrics; i++) {
        const char *nul =
            at < end ? memchr(at, '\0', (size_t)(end - at)) : NULL;
        if (!nul) {
            free(out);
            return NULL;
        }
        out[i] = at;
        at = nul + 1;
    }
    return out;
}

static void read_counters(cutune__worker *w, const cutune__profile_request *q,
                          const char **names, cutune__profile_reply *r,
                          double *values)
{
    if (!w->cupti_tried) {
        w->cupti_tried = 1;
        w->cupti = cutune__cupti_open(w->cupti_why, sizeof w->cupti_why);
    }
    if (!w->cupti) {
        r->counters = CUTUNE__COUNTERS_NO_CUPTI;
        snprintf(r->why, sizeof r->why, "%s", w->cupti_why);
        return;
    }
    profile_launch pl = {w, q};
    cutune__profile_work work = {prepare_pass, launch_pass, &pl};
    int passes = 0, launch_error = 0, range_of_ours = 0;
    r->counters = cutune__cupti_profile(
        w->cupti, w->device, names, q->n_metrics, &work, values, &passes,
        &range_of_ours, &launch_error, r->why, sizeof r->why);
    r->range_of_ours = range_of_ours;
    r->passes = passes;
    if (launch_error)
        cutune__worker_error(&r->head, (cudaError_t)launch_error,
                             "a profiled launch of grid (%u,%u,%u) block "
                             "(%u,%u,%u)",
                             q->grid[0], q->grid[1], q->grid[2], q->block[0],
                             q->block[1], q->block[2]);
}

void cutune__worker_handle_profile(cutune__worker *w, const char *payload,
                                   size_t size)
{
    cutune__profile_reply r;
    memset(&r, 0, sizeof r);
    r.counters = CUTUNE__COUNTERS_NOT_RUN;
    const cutune__profile_request *q = (const void *)payload;
    const char **names = NULL;
    double *values = NULL;
    if (!w->loaded || !w->params || size < sizeof *q ||
        size - sizeof *q != q->names_len ||
        !(names = split_names(q, payload + sizeof *q, q->names_len))) {
        r.head.cuda_error = cudaErrorInvalidValue;
        snprintf(r.head.message, sizeof r.head.message,
                 "bad PROFILE request (no kernel or arguments loaded, or "
                 "malformed metric names)");
        goto send;
    }
    values = malloc((q->n_metrics + 1) * sizeof *values);
    if (!values) {
        r.head.cuda_error = cudaErrorMemoryAllocation;
        snprintf(r.head.message, sizeof r.head.message, "out of memory");
        goto send;
    }
    for (uint32_t i = 0; i < q->n_metrics; i++)
        values[i] = NAN;
    if (static_facts(w, q, &r) != 0)
        goto send;
    if (r.active_blocks == 0) {
        snprintf(r.why, sizeof r.why,
                 "the configuration cannot be "
                 "resident on an SM, so it was not launched");
        goto send;
    }
    read_counters(w, q, names, &r, values);
    r.n_values = q->n_metrics;
send:
    if (r.head.cuda_error)
        r.head.fatal = cutune__worker_context_broken();
    cutune__msg_send(w->fd, CUTUNE__MSG_PROFILE, &r, sizeof r, values,
                     r.n_values * sizeof *values);
    free(values);
    free(names);
}
