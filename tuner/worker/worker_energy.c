/* ENERGY: a configuration's energy per launch and power, from NVML's
 * energy counter polled while the kernel runs back to back (protocol.h
 * says why the worker reads NVML itself, common/energy.h how the windows
 * are cut). NVML is only read: nvml_lib.h resolves no function that could
 * change the GPU.
 */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda_runtime_api.h>

#include "energy.h"
#include "nvml_lib.h"
#include "protocol.h"
#include "util.h"
#include "worker_state.h"

/* Batches queued at once: while the host looks at the counter, two more
 * keep the GPU busy. */
#define DEPTH 3
/* A batch is about this much GPU time: short enough that queuing it
 * (a few µs a launch) does not delay the counter's polling much. */
#define BATCH_S       0.001
#define MAX_BATCH     4096
#define POWER_EVERY_S 0.01
/* Between polls when nothing happened: the counter steps every tens of
 * ms, so this costs the step's time little and the host's CPU less. */
#define POLL_SLEEP_NS 100000L

/* What one run read and counted, kept for cutune__energy_windows. */
typedef struct energy_log {
    cutune__energy_read *reads;
    cutune__launch_mark *marks;
    cutune__power_read *power;
    size_t n_reads, n_marks, n_power;
    size_t cap_reads, cap_marks, cap_power;
    int power_instant;
} energy_log;

static int grow(void **a, size_t *cap, size_t n, size_t size)
{
    if (n < *cap)
        return 0;
    size_t c = *cap ? 2 * *cap : 256;
    void *p = realloc(*a, c * size);
    if (!p)
        return -1;
    *a = p;
    *cap = c;
    return 0;
}

static int add_read(energy_log *g, double t, unsigned long long mj)
{
    if (grow((void **)&g->reads, &g->cap_reads, g->n_reads, sizeof *g->reads))
        return -1;
    g->reads[g->n_reads++] = (cutune__energy_read){t, mj};
    return 0;
}

static int add_mark(energy_log *g, double t, double launches)
{
    if (grow((void **)&g->marks, &g->cap_marks, g->n_marks, sizeof *g->marks))
        return -1;
    g->marks[g->n_marks++] = (cutune__launch_mark){t, launches};
    return 0;
}

static void add_power(energy_log *g, cutune__nvml *n, double t)
{
    unsigned mw;
    int instant;
    if (cutune__nvml_power_mw(n, &mw, &instant) != CUTUNE__NVML_OK ||
        grow((void **)&g->power, &g->cap_power, g->n_power, sizeof *g->power))
        return;
    g->power_instant = instant;
    g->power[g->n_power++] = (cutune__power_read){t, mw * 1e-3};
}

/* Only the reads around a step matter: the last of the old value and the
 * first of the new (the step's time lies between). The first read of all
 * is kept as the old value of the first step. */
static int poll_counter(energy_log *g, cutune__nvml *n, double *last_t,
                        unsigned long long *last_mj, int *stepped)
{
    unsigned long long mj;
    *stepped = 0;
    if (cutune__nvml_energy_mj(n, &mj) != CUTUNE__NVML_OK)
        return 0; /* a failed read is a read missed */
    double t = cutune__now();
    if (g->n_reads == 0) {
        *last_t = t;
        *last_mj = mj;
        return add_read(g, t, mj);
    }
    if (mj != *last_mj) {
        if (g->reads[g->n_reads - 1].t_s != *last_t &&
            add_read(g, *last_t, *last_mj) != 0)
            return -1;
        *stepped = 1;
        if (add_read(g, t, mj) != 0)
            return -1;
    }
    *last_t = t;
    *last_mj = mj;
    return 0;
}

typedef struct batches {
    cudaEvent_t done[DEPTH];
    uint32_t size[DEPTH];
    unsigned head, queued;
    uint32_t per_batch;
    uint64_t completed;
} batches;

static cudaError_t queue_batch(cutune__worker *w,
                               const cutune__energy_request *q, batches *b)
{
    cudaError_t e = cudaSuccess;
    for (uint32_t k = 0; k < b->per_batch && e == cudaSuccess; k++)
        e = cutune__worker_launch(w, q->grid, q->block, q->dynamic_smem);
    unsigned slot = (b->head + b->queued) % DEPTH;
    if (e == cudaSuccess)
        e = cudaEventRecord(b->done[slot], 0);
    if (e == cudaSuccess) {
        b->size[slot] = b->per_batch;
        b->queued++;
    }
    return e;
}

/* Marks the batches completed by now; a CUDA error other than "not yet"
 * is returned. */
static cudaError_t reap(batches *b, energy_log *g, int *marked)
{
    *marked = 0;
    while (b->queued > 0) {
        cudaError_t e = cudaEventQuery(b->done[b->head]);
        if (e == cudaErrorNotReady)
            return cudaSuccess;
        if (e != cudaSuccess)
            return e;
        b->completed += b->size[b->head];
        b->head = (b->head + 1) % DEPTH;
        b->queued--;
        if (add_mark(g, cutune__now(), (double)b->completed) != 0)
            return cudaErrorMemoryAllocation;
        *marked = 1;
    }
    return cudaSuccess;
}

/* The launches and the polling, until the windows are closed and enough
 * launches completed, or time is up. */
static cudaError_t run_windows(cutune__worker *w,
                               const cutune__energy_request *q,
                               const cutune__energy_plan *plan, energy_log *g,
                               uint64_t *completed)
{
    batches b = {.per_batch = 1};
    if (q->launch_ms > 0 && BATCH_S / (q->launch_ms * 1e-3) > 1)
        b.per_batch =
            (uint32_t)fmin(BATCH_S / (q->launch_ms * 1e-3), MAX_BATCH);
    unsigned made = 0;
    cudaError_t e = cudaSuccess;
    while (made < DEPTH && e == cudaSuccess)
        if ((e = cudaEventCreateWithFlags(
                 &b.done[made], cudaEventDisableTiming)) == cudaSuccess)
            made++;
    double last_t = 0, last_power = -1;
    unsigned long long last_mj = 0;
    int stepped = 0, marked = 0;
    const double t0 = cutune__now();
    if (e == cudaSuccess &&
        (poll_counter(g, w->nvml, &last_t, &last_mj, &stepped) != 0 ||
         add_mark(g, t0, 0) != 0))
        e = cudaErrorMemoryAllocation;
    for (int stop = 0; e == cudaSuccess && !stop;) {
        while (b.queued < DEPTH && e == cudaSuccess)
            e = queue_batch(w, q, &b);
        if (e == cudaSuccess &&
            poll_counter(g, w->nvml, &last_t, &last_mj, &stepped) != 0)
            e = cudaErrorMemoryAllocation;
        double now = cutune__now();
        if (now - last_power >= POWER_EVERY_S) {
            add_power(g, w->nvml, now);
            last_power = now;
        }
        if (e == cudaSuccess)
            e = reap(&b, g, &marked);
        if ((stepped || marked) && b.completed >= q->min_launches &&
            cutune__energy_windows(g->reads, g->n_reads, g->marks, g->n_marks,
                                   NULL, 0, plan, NULL) >= plan->windows)
            stop = 1;
        if (now - t0 > q->max_seconds && b.completed >= q->min_launches)
            stop = 1;
        if (!stepped && !marked && !stop)
            nanosleep(&(struct timespec){0, POLL_SLEEP_NS}, NULL);
    }
    /* The batches still queued end before the reply. */
    cudaError_t drained = cudaDeviceSynchronize();
    if (e == cudaSuccess)
        e = drained;
    for (unsigned i = 0; i < made; i++)
        cudaEventDestroy(b.done[i]);
    *completed = b.completed;
    return e;
}

/* The worker's NVML, opened on the first request; 0 when its energy
 * counter reads. */
static int open_counter(cutune__worker *w, cutune__energy_reply *r)
{
    if (!w->nvml_tried) {
        w->nvml_tried = 1;
        w->nvml = cutune__nvml_open(w->props.fingerprint.uuid, w->nvml_why,
                                    sizeof w->nvml_why);
    }
    unsigned long long mj;
    int st = w->nvml ? cutune__nvml_energy_mj(w->nvml, &mj) : -1;
    if (st == CUTUNE__NVML_OK)
        return 0;
    r->why = CUTUNE__ENERGY_UNAVAILABLE;
    if (!w->nvml)
        snprintf(r->head.message, sizeof r->head.message, "%s", w->nvml_why);
    else
        snprintf(r->head.message, sizeof r->head.message,
                 "nvmlDeviceGetTotalEnergyConsumption: %s",
                 cutune__nvml_error(w->nvml, st));
    return -1;
}

void cutune__worker_handle_energy(cutune__worker *w, const void *payload,
                                  size_t size)
{
    cutune__energy_reply r;
    memset(&r, 0, sizeof r);
    r.energy_j = r.energy_rsd = r.power_w = r.counter_w = NAN;
    r.launches = r.seconds = r.step_s = NAN;
    const cutune__energy_request *q = payload;
    energy_log g = {0};
    if (!w->loaded || !w->params || size < sizeof *q || q->windows == 0) {
        r.head.cuda_error = cudaErrorInvalidValue;
        r.why = CUTUNE__ENERGY_LAUNCH_FAILED;
        snprintf(r.head.message, sizeof r.head.message,
                 "bad ENERGY request (no kernel or arguments)");
        goto send;
    }
    if (open_counter(w, &r) != 0)
        goto send;
    const cutune__energy_plan plan = {
        .lead_s = q->lead_s, .window_s = q->window_s, .windows = q->windows};
    const double t0 = cutune__now();
    uint64_t completed = 0;
    cudaError_t e = run_windows(w, q, &plan, &g, &completed);
    r.run_s = cutune__now() - t0;
    r.completed = completed;
    if (e != cudaSuccess) {
        cutune__worker_error(&r.head, e, "launches for the energy windows");
        r.why = CUTUNE__ENERGY_LAUNCH_FAILED;
        r.head.fatal = cutune__worker_context_broken();
        goto send;
    }
    cutune__energy_figures f;
    cutune__energy_windows(g.reads, g.n_reads, g.marks, g.n_marks, g.power,
                           g.n_power, &plan, &f);
    r.why = (int32_t)f.why;
    r.windows = (uint32_t)f.windows;
    r.energy_j = f.energy_j;
    r.energy_rsd = f.energy_rsd;
    r.power_w = f.sampled_w;
    r.counter_w = f.counter_w;
    r.launches = f.launches;
    r.seconds = f.seconds;
    r.step_s = f.step_s;
    r.power_instant = g.power_instant;
    if (f.why != CUTUNE__ENERGY_OK)
        snprintf(r.head.message, sizeof r.head.message,
                 "%s in %.2f s of %llu launches",
                 cutune__energy_why_str(f.why), r.run_s,
                 (unsigned long long)completed);
send:
    free(g.reads);
    free(g.marks);
    free(g.power);
    cutune__msg_send(w->fd, CUTUNE__MSG_ENERGY, &r, sizeof r, NULL, 0);
}
