/* What NVML's energy counter and power readings give on this GPU, to
 * choose cutune's energy windows (docs/measuring.md#energy-and-power) on
 * data: run it on each GPU model energy is tuned on and keep the summary
 * in bench/results/.
 *
 * Usage: energy_probe [DEVICE] [ITERS]
 *   DEVICE  CUDA ordinal (default 0); ITERS the test kernel's loop length
 *   (default 2048: tens of µs on a data-centre GPU; its time is printed).
 *
 * It prints, one "key value" line each (grep-able):
 *   read_us        what one counter read costs
 *   idle_step_ms / busy_step_ms   time between the counter's steps, idle
 *                  and while a kernel runs back to back (min, median, max)
 *   step_mj        the counter's steps (smallest and median): its resolution
 *   trace          power over 3 s (0.5 s idle, 1.5 s busy, 1 s idle), every
 *                  10 ms: instantaneous field, nvmlDeviceGetPowerUsage and
 *                  the counter, to see the ramp, the lag and the averaging
 *   window         for windows of 50, 100, 250 and 500 ms, ten windows each
 *                  cut as cutune cuts them (step to step) and ten cut by the
 *                  host clock alone (read before and after): the median J
 *                  per launch and the relative spread of each.
 * NVML is only read. */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda_runtime.h>
#include <nvrtc.h>

#include "energy.h"
#include "nvml_lib.h"
#include "stats.h"
#include "util.h"

#define N_WINDOWS 10
#define LEAD_S    0.1
#define BATCH_S   0.001
#define MAX_READS 200000

static const char *source =
    "extern \"C\" __global__ void burn(float *x, int iters)\n"
    "{\n"
    "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    float a = x[i], b = 1.0f + 1e-7f * (float)i;\n"
    "    for (int k = 0; k < iters; k++)\n"
    "        a = fmaf(a, b, 1e-7f);\n"
    "    x[i] = a;\n"
    "}\n";

typedef struct probe {
    cudaKernel_t kernel;
    float *x;
    int iters;
    unsigned blocks;
    double launch_s;
    cutune__nvml *nvml;
} probe;

static int fail(const char *what, const char *why)
{
    fprintf(stderr, "energy_probe: %s: %s\n", what, why);
    return 1;
}

static cudaError_t launch(probe *p)
{
    void *args[] = {&p->x, &p->iters};
    dim3 grid = {p->blocks, 1, 1}, block = {256, 1, 1};
    return cudaLaunchKernel((const void *)p->kernel, grid, block, args, 0, 0);
}

static int build(probe *p, int device)
{
    struct cudaDeviceProp prop;
    if (cudaGetDeviceProperties(&prop, device) != cudaSuccess ||
        cudaSetDevice(device) != cudaSuccess)
        return fail("device", "cannot be opened");
    char arch[64], uuid[64];
    snprintf(arch, sizeof arch, "--gpu-architecture=sm_%d%d", prop.major,
             prop.minor);
    const unsigned char *u = (const unsigned char *)prop.uuid.bytes;
    snprintf(uuid, sizeof uuid,
             "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-"
             "%02x%02x%02x%02x%02x%02x",
             u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10],
             u[11], u[12], u[13], u[14], u[15]);
    printf("device %s %s\n", prop.name, uuid);
    char why[256];
    if (!(p->nvml = cutune__nvml_open(uuid, why, sizeof why)))
        return fail("NVML", why);
    nvrtcProgram prog;
    const char *opts[] = {arch};
    size_t size = 0;
    char *cubin = NULL;
    if (nvrtcCreateProgram(&prog, source, "burn.cu", 0, NULL, NULL) ||
        nvrtcCompileProgram(prog, 1, opts) || nvrtcGetCUBINSize(prog, &size) ||
        !(cubin = malloc(size)) || nvrtcGetCUBIN(prog, cubin))
        return fail("NVRTC", "the test kernel did not compile");
    nvrtcDestroyProgram(&prog);
    cudaLibrary_t lib;
    p->blocks = (unsigned)prop.multiProcessorCount * 8;
    size_t bytes = (size_t)p->blocks * 256 * sizeof(float);
    if (cudaLibraryLoadData(&lib, cubin, NULL, NULL, 0, NULL, NULL, 0) ||
        cudaLibraryGetKernel(&p->kernel, lib, "burn") ||
        cudaMalloc((void **)&p->x, bytes) || cudaMemset(p->x, 0, bytes))
        return fail("CUDA", "the test kernel did not load");
    free(cubin);
    cudaEvent_t a, b;
    float ms = 0;
    cudaEventCreate(&a);
    cudaEventCreate(&b);
    launch(p);
    cudaEventRecord(a, 0);
    for (int i = 0; i < 20; i++)
        launch(p);
    cudaEventRecord(b, 0);
    if (cudaEventSynchronize(b) || cudaEventElapsedTime(&ms, a, b))
        return fail("CUDA", "the test kernel did not run");
    p->launch_s = ms * 1e-3 / 20;
    printf("launch_ms %.4f (%u blocks of 256, %d iterations)\n",
           1e3 * p->launch_s, p->blocks, p->iters);
    return 0;
}

/* What a run read: the counter's changes (with the read before each),
 * the launches completed over time, the power every 10 ms. */
typedef struct run_log {
    cutune__energy_read reads[MAX_READS];
    cutune__launch_mark marks[MAX_READS];
    cutune__power_read power[MAX_READS / 10];
    size_t n_reads, n_marks, n_power;
} run_log;

/* Batches of ~1 ms of launches kept three deep, so that the GPU never
 * waits for the host while it polls. */
typedef struct feeder {
    cudaEvent_t done[3];
    unsigned head, queued, per;
    double completed;
} feeder;

static void feeder_start(feeder *f, const probe *p)
{
    memset(f, 0, sizeof *f);
    f->per = (unsigned)fmax(1, BATCH_S / p->launch_s);
    for (int i = 0; i < 3; i++)
        cudaEventCreateWithFlags(&f->done[i], cudaEventDisableTiming);
}

static void feed(feeder *f, probe *p)
{
    while (f->queued < 3) {
        for (unsigned k = 0; k < f->per; k++)
            launch(p);
        cudaEventRecord(f->done[(f->head + f->queued++) % 3], 0);
    }
}

/* 1 when a batch completed since the last call. */
static int reap(feeder *f)
{
    if (f->queued == 0 || cudaEventQuery(f->done[f->head]) != cudaSuccess)
        return 0;
    f->completed += f->per;
    f->head = (f->head + 1) % 3;
    f->queued--;
    return 1;
}

static void feeder_stop(feeder *f)
{
    cudaDeviceSynchronize();
    for (int i = 0; i < 3; i++)
        cudaEventDestroy(f->done[i]);
}

/* Launches back to back for `seconds` (busy 0: the GPU stays idle)
 * while polling the counter as the worker does. */
static void run_for(probe *p, double seconds, int busy, run_log *g)
{
    g->n_reads = g->n_marks = g->n_power = 0;
    feeder f;
    feeder_start(&f, p);
    double last_power = -1, last_t = 0;
    unsigned long long last_mj = 0, mj;
    const double t0 = cutune__now();
    g->marks[g->n_marks++] = (cutune__launch_mark){t0, 0};
    for (double now = t0; now - t0 < seconds; now = cutune__now()) {
        if (busy)
            feed(&f, p);
        if (cutune__nvml_energy_mj(p->nvml, &mj) == CUTUNE__NVML_OK &&
            g->n_reads + 2 < MAX_READS) {
            double t = cutune__now();
            if (g->n_reads == 0 || mj != last_mj) {
                if (g->n_reads > 0)
                    g->reads[g->n_reads++] =
                        (cutune__energy_read){last_t, last_mj};
                g->reads[g->n_reads++] = (cutune__energy_read){t, mj};
            }
            last_t = t;
            last_mj = mj;
        }
        while (g->n_marks < MAX_READS && reap(&f))
            g->marks[g->n_marks++] =
                (cutune__launch_mark){cutune__now(), f.completed};
        unsigned mw;
        int instant;
        if (now - last_power >= 0.01 && g->n_power < MAX_READS / 10 &&
            cutune__nvml_power_mw(p->nvml, &mw, &instant) == 0) {
            g->power[g->n_power++] = (cutune__power_read){now, mw * 1e-3};
            last_power = now;
        }
        nanosleep(&(struct timespec){0, 100000L}, NULL);
    }
    feeder_stop(&f);
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Time between the counter's steps and their sizes. */
static void steps(const char *name, const run_log *g)
{
    static double dt[MAX_READS], dmj[MAX_READS];
    size_t n = 0;
    double prev = NAN;
    for (size_t i = 1; i < g->n_reads; i++) {
        if (g->reads[i].mj == g->reads[i - 1].mj)
            continue;
        double t = 0.5 * (g->reads[i].t_s + g->reads[i - 1].t_s);
        if (!isnan(prev)) {
            dt[n] = 1e3 * (t - prev);
            dmj[n++] = (double)(g->reads[i].mj - g->reads[i - 1].mj);
        }
        prev = t;
    }
    if (n == 0) {
        printf("%s_step_ms none (fewer than two steps)\n", name);
        return;
    }
    qsort(dt, n, sizeof *dt, by_value);
    qsort(dmj, n, sizeof *dmj, by_value);
    printf("%s_step_ms min %.2f median %.2f max %.2f (%zu steps)\n", name,
           dt[0], dt[n / 2], dt[n - 1], n);
    printf("%s_step_mj min %.0f median %.0f\n", name, dmj[0], dmj[n / 2]);
}

static void trace(probe *p)
{
    feeder f;
    feeder_start(&f, p);
    const double t0 = cutune__now();
    double printed = -1;
    for (double t = 0; t < 3.0; t = cutune__now() - t0) {
        int busy = t >= 0.5 && t < 2.0;
        if (busy)
            feed(&f, p);
        while (reap(&f))
            ;
        /* Polled every 0.5 ms to keep the GPU fed, printed every 10. */
        nanosleep(&(struct timespec){0, 500000L}, NULL);
        if (t - printed < 0.01)
            continue;
        printed = t;
        unsigned inst = 0, avg = 0;
        int instant = 0;
        unsigned long long mj = 0;
        cutune__nvml_power_mw(p->nvml, &inst, &instant);
        cutune__nvml_power_usage_mw(p->nvml, &avg);
        cutune__nvml_energy_mj(p->nvml, &mj);
        printf("trace t_ms %.0f busy %d %s_w %.1f usage_w %.1f counter_mj "
               "%llu\n",
               1e3 * t, busy, instant ? "instant" : "usage", inst * 1e-3,
               avg * 1e-3, mj);
    }
    feeder_stop(&f);
}

/* Ten windows of the host clock alone: the counter read before and after
 * `window_s` of launches. */
static void host_windows(probe *p, double window_s, double *median,
                         double *rsd)
{
    double e[N_WINDOWS], mean = 0, ss = 0;
    unsigned per = (unsigned)fmax(1, BATCH_S / p->launch_s);
    for (int w = 0; w < N_WINDOWS; w++) {
        unsigned long long a = 0, b = 0;
        double launches = 0;
        cutune__nvml_energy_mj(p->nvml, &a);
        for (double t0 = cutune__now(); cutune__now() - t0 < window_s;) {
            for (unsigned k = 0; k < per; k++)
                launch(p);
            launches += per;
            cudaDeviceSynchronize();
        }
        cutune__nvml_energy_mj(p->nvml, &b);
        e[w] = (double)(b - a) * 1e-3 / launches;
        mean += e[w] / N_WINDOWS;
    }
    for (int w = 0; w < N_WINDOWS; w++)
        ss += (e[w] - mean) * (e[w] - mean);
    *median = cutune__median(e, N_WINDOWS);
    *rsd = sqrt(ss / (N_WINDOWS - 1)) / mean;
}

static void windows(probe *p, run_log *g)
{
    const double lengths[] = {0.05, 0.1, 0.25, 0.5};
    for (size_t i = 0; i < sizeof lengths / sizeof *lengths; i++) {
        cutune__energy_plan plan = {
            .lead_s = LEAD_S, .window_s = lengths[i], .windows = N_WINDOWS};
        cutune__energy_figures f;
        run_for(p, LEAD_S + N_WINDOWS * (lengths[i] + 0.15) + 0.2, 1, g);
        cutune__energy_windows(g->reads, g->n_reads, g->marks, g->n_marks,
                               g->power, g->n_power, &plan, &f);
        double hm, hr;
        host_windows(p, lengths[i], &hm, &hr);
        printf("window_ms %.0f steps: %zu windows median_j %.6g rsd %.4f "
               "counter_w %.1f power_w %.1f (%s) | host clock: median_j "
               "%.6g rsd %.4f\n",
               1e3 * lengths[i], f.windows, f.energy_j, f.energy_rsd,
               f.counter_w, f.power_w, cutune__energy_why_str(f.why), hm, hr);
    }
}

int main(int argc, char **argv)
{
    static run_log g;
    probe p = {.iters = argc > 2 ? atoi(argv[2]) : 2048};
    if (build(&p, argc > 1 ? atoi(argv[1]) : 0))
        return 1;
    unsigned long long mj;
    const double t0 = cutune__now();
    for (int i = 0; i < 1000; i++)
        cutune__nvml_energy_mj(p.nvml, &mj);
    printf("read_us %.1f\n", 1e6 * (cutune__now() - t0) / 1000);
    run_for(&p, 1.5, 0, &g);
    steps("idle", &g);
    run_for(&p, 3.0, 1, &g);
    steps("busy", &g);
    trace(&p);
    windows(&p, &g);
    cutune__nvml_close(p.nvml);
    return 0;
}
