/* The GPU worker: the only code in cutune that talks to the CUDA runtime.
 *
 * It runs as its own process (cutune-worker) so that a candidate which
 * corrupts the CUDA context (an illegal address is sticky) or never
 * finishes takes down only this process; the tuning process records the
 * failure and starts a new worker. It serves one request at a time over the
 * socket on CUTUNE__WORKER_FD (see protocol.h).
 *
 * This file holds what every request relies on: the service loop, error
 * replies, the device (DEVICES, INIT with its comparison kernels) and
 * NVRTC for the tuning process (COMPILE). The arguments are in
 * worker_args.c, launching and timing in worker_run.c (worker_state.h
 * says why the worker is split so).
 */
#define _POSIX_C_SOURCE 200809L

#include "worker.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cuda_runtime_api.h>
#include <nvrtc.h>

#include "compare_kernels.h"
#include "compile.h"
#include "cutune/cutune.h"
#include "protocol.h"
#include "worker_state.h"

int cutune__worker_error(cutune__reply *r, cudaError_t e, const char *fmt, ...)
{
    char what[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    r->cuda_error = (int32_t)e;
    snprintf(r->message, sizeof r->message, "%s: %s (%s)", what,
             cudaGetErrorString(e), cudaGetErrorName(e));
    return -1;
}

/* After an error, decide whether the context still works. Sticky errors
 * (illegal address, launch failure, ...) persist in every later call. */
int cutune__worker_context_broken(void)
{
    (void)cudaGetLastError();
    return cudaDeviceSynchronize() != cudaSuccess;
}

static void format_uuid(const cudaUUID_t *u, char *out, size_t len)
{
    const unsigned char *b = (const unsigned char *)u->bytes;
    snprintf(out, len,
             "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-"
             "%02x%02x%02x%02x%02x%02x",
             b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10],
             b[11], b[12], b[13], b[14], b[15]);
}

static cudaError_t read_props(int device, cutune__device_props *out)
{
    struct cudaDeviceProp p;
    cudaError_t e = cudaGetDeviceProperties(&p, device);
    if (e != cudaSuccess)
        return e;
    memset(out, 0, sizeof *out);
    cutune_device *fp = &out->fingerprint;
    snprintf(fp->name, sizeof fp->name, "%s", p.name);
    format_uuid(&p.uuid, fp->uuid, sizeof fp->uuid);
    fp->cc_major = p.major;
    fp->cc_minor = p.minor;
    fp->sm_count = p.multiProcessorCount;
    fp->l2_bytes = p.l2CacheSize;
    fp->memory_bytes = (long long)p.totalGlobalMem;
    if (cudaDriverGetVersion(&fp->driver_version) != cudaSuccess)
        fp->driver_version = 0;
    int major = 0, minor = 0;
    if (nvrtcVersion(&major, &minor) == NVRTC_SUCCESS)
        snprintf(fp->nvrtc_version, sizeof fp->nvrtc_version, "%d.%d", major,
                 minor);
    snprintf(fp->cutune_version, sizeof fp->cutune_version, "%s",
             CUTUNE_VERSION_STRING);
    out->max_threads_per_sm = p.maxThreadsPerMultiProcessor;
    out->max_threads_per_block = p.maxThreadsPerBlock;
    out->warp_size = p.warpSize;
    out->regs_per_sm = p.regsPerMultiprocessor;
    out->smem_per_sm = (int64_t)p.sharedMemPerMultiprocessor;
    out->smem_per_block = (int64_t)p.sharedMemPerBlockOptin;
    return cudaSuccess;
}

/* ------------------------------------------------------------------ */

static void handle_devices(cutune__worker *w)
{
    cutune__devices_reply r;
    memset(&r, 0, sizeof r);
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    cutune__device_props *props = NULL;
    if (e != cudaSuccess) {
        cutune__worker_error(&r.head, e, "cudaGetDeviceCount");
        count = 0;
    } else if (count > 0) {
        props = calloc((size_t)count, sizeof *props);
        if (!props) {
            snprintf(r.head.message, sizeof r.head.message, "out of memory");
            r.head.cuda_error = cudaErrorMemoryAllocation;
            count = 0;
        }
        for (int i = 0; i < count; i++) {
            e = read_props(i, &props[i]);
            if (e != cudaSuccess) {
                cutune__worker_error(&r.head, e, "cudaGetDeviceProperties(%d)",
                                     i);
                count = 0;
            }
        }
    }
    r.count = count;
    cutune__msg_send(w->fd, CUTUNE__MSG_DEVICES, &r, sizeof r, props,
                     (size_t)count * sizeof *props);
    free(props);
}

static int compare_kernels(cutune__worker *w, cutune__reply *r);

/* Loads the comparison and fill kernels: `cubin` when the session sent
 * one, else compiled here with NVRTC. */
static int build_compare(cutune__worker *w, cutune__reply *r,
                         const void *given, size_t given_size,
                         int32_t *rejected)
{
    cudaError_t e;
    if (given_size > 0) {
        if ((e = cudaLibraryLoadData(&w->compare_library, given, NULL, NULL, 0,
                                     NULL, NULL, 0)) != cudaSuccess) {
            *rejected = 1;
            return cutune__worker_error(r, e,
                                        "loading the comparison kernels sent");
        }
        if (compare_kernels(w, r) != 0) {
            *rejected = 1;
            return -1;
        }
        return 0;
    }
    char arch[32];
    snprintf(arch, sizeof arch, "--gpu-architecture=sm_%d%d",
             w->props.fingerprint.cc_major, w->props.fingerprint.cc_minor);
    const char *opts[] = {arch};
    nvrtcProgram prog;
    if (nvrtcCreateProgram(&prog, cutune__compare_source, "cutune_compare.cu",
                           0, NULL, NULL) != NVRTC_SUCCESS) {
        r->cuda_error = cudaErrorUnknown;
        snprintf(r->message, sizeof r->message,
                 "NVRTC: cannot create the "
                 "output comparison program");
        return -1;
    }
    nvrtcResult nr = nvrtcCompileProgram(prog, 1, opts);
    size_t size = 0;
    char *cubin = NULL;
    if (nr == NVRTC_SUCCESS && nvrtcGetCUBINSize(prog, &size) == NVRTC_SUCCESS)
        cubin = malloc(size);
    if (cubin && nvrtcGetCUBIN(prog, cubin) != NVRTC_SUCCESS) {
        free(cubin);
        cubin = NULL;
    }
    nvrtcDestroyProgram(&prog);
    if (!cubin) {
        r->cuda_error = cudaErrorUnknown;
        snprintf(r->message, sizeof r->message,
                 "NVRTC: cannot compile the "
                 "output comparison kernels for %s: %s",
                 arch, nvrtcGetErrorString(nr));
        return -1;
    }
    e = cudaLibraryLoadData(&w->compare_library, cubin, NULL, NULL, 0, NULL,
                            NULL, 0);
    free(cubin);
    if (e != cudaSuccess)
        return cutune__worker_error(r, e, "loading the comparison kernels");
    return compare_kernels(w, r);
}

/* The kernels of the loaded comparison library, and its result buffer. */
static int compare_kernels(cutune__worker *w, cutune__reply *r)
{
    cudaError_t e;
    for (size_t i = 0; i < CUTUNE__DT_COUNT; i++) {
        if ((e = cudaLibraryGetKernel(&w->compare[i], w->compare_library,
                                      cutune__compare_names[i])) !=
            cudaSuccess)
            return cutune__worker_error(r, e, "cudaLibraryGetKernel(%s)",
                                        cutune__compare_names[i]);
        if ((e = cudaLibraryGetKernel(&w->fill[i], w->compare_library,
                                      cutune__fill_names[i])) != cudaSuccess)
            return cutune__worker_error(r, e, "cudaLibraryGetKernel(%s)",
                                        cutune__fill_names[i]);
    }
    if ((e = cudaMalloc((void **)&w->compare_result,
                        3 * sizeof(unsigned long long))) != cudaSuccess)
        return cutune__worker_error(r, e, "cudaMalloc");
    return 0;
}

static void handle_init(cutune__worker *w, const void *payload, size_t size)
{
    cutune__init_reply r;
    memset(&r, 0, sizeof r);
    cudaError_t e;
    const cutune__init_request *q = payload;
    if (size < sizeof *q || size - sizeof *q != q->cubin_size) {
        snprintf(r.head.message, sizeof r.head.message, "bad INIT request");
        r.head.cuda_error = cudaErrorInvalidValue;
    } else if (w->initialized) {
        snprintf(r.head.message, sizeof r.head.message, "already initialized");
        r.head.cuda_error = cudaErrorInvalidValue;
    } else {
        w->device = q->device;
        if ((e = cudaSetDevice(w->device)) != cudaSuccess)
            cutune__worker_error(&r.head, e, "cudaSetDevice(%d)", w->device);
        else if ((e = cudaFree(NULL)) != cudaSuccess)
            cutune__worker_error(
                &r.head, e, "creating a CUDA context on device %d", w->device);
        else if ((e = read_props(w->device, &w->props)) != cudaSuccess)
            cutune__worker_error(&r.head, e, "cudaGetDeviceProperties");
        else if (build_compare(w, &r.head, q + 1, q->cubin_size,
                               &r.cubin_rejected) == 0) {
            /* Twice the L2, so that writing it evicts every line a
             * previous launch left. */
            w->flush_bytes = 2 * (size_t)w->props.fingerprint.l2_bytes;
            if (w->flush_bytes < ((size_t)8 << 20))
                w->flush_bytes = (size_t)8 << 20;
            if ((e = cudaMalloc(&w->flush, w->flush_bytes)) != cudaSuccess)
                cutune__worker_error(&r.head, e,
                                     "cudaMalloc(L2 flush buffer)");
            else
                w->initialized = 1;
        }
        r.props = w->props;
    }
    cutune__msg_send(w->fd, CUTUNE__MSG_INIT, &r, sizeof r, NULL, 0);
}

/* Compiles with NVRTC for the tuning process, which cannot run NVRTC on
 * more than about two threads at a time itself. No CUDA call is made. */
static void handle_compile(cutune__worker *w, const char *payload, size_t size)
{
    cutune__compile_reply r;
    memset(&r, 0, sizeof r);
    const cutune__compile_request *q = (const void *)payload;
    cutune__compile_job job;
    memset(&job, 0, sizeof job);
    char **opts = NULL;
    char *source = NULL, *name = NULL;
    if (size < sizeof *q || q->name_len > 4096 || q->n_options > 4096 ||
        q->kernel_len > 4096 ||
        size != sizeof *q + q->source_len + 1 + q->name_len + 1 +
                    q->options_len + q->kernel_len + 1) {
        r.nvrtc_failed = 1;
        snprintf(r.head.message, sizeof r.head.message, "bad COMPILE request");
        goto send;
    }
    const char *p = payload + sizeof *q;
    source = (char *)p;
    name = source + q->source_len + 1;
    const char *o = name + q->name_len + 1;
    const char *kernel = o + q->options_len, *end = kernel;
    opts = calloc(q->n_options + 1, sizeof *opts);
    for (uint32_t i = 0; opts && i < q->n_options; i++) {
        const char *nul = memchr(o, '\0', (size_t)(end - o));
        if (!nul) {
            free(opts);
            opts = NULL;
            break;
        }
        opts[i] = (char *)o;
        o = nul + 1;
    }
    if (!opts || source[q->source_len] || name[q->name_len] ||
        kernel[q->kernel_len]) {
        r.nvrtc_failed = 1;
        snprintf(r.head.message, sizeof r.head.message, "bad COMPILE request");
        goto send;
    }
    job.source = source;
    job.source_name = name;
    job.options = opts;
    job.n_options = q->n_options;
    job.kernel_name = q->kernel_len ? kernel : NULL;
    cutune__compile(&job);
    r.ok = job.ok;
    r.nvrtc_failed = job.nvrtc_failed;
    r.cubin_size = job.ok ? job.cubin_size : 0;
    r.log_size = job.log ? strlen(job.log) + 1 : 0;
    r.lowered_size =
        job.ok && job.lowered_name ? strlen(job.lowered_name) + 1 : 0;
    r.seconds = job.seconds;
send:;
    /* One block after the reply: the cubin, the log, the lowered name. */
    size_t blen = (size_t)(r.cubin_size + r.log_size + r.lowered_size);
    char *block = malloc(blen ? blen : 1);
    if (!block) {
        r.ok = 0;
        r.nvrtc_failed = 1;
        r.cubin_size = r.log_size = r.lowered_size = 0;
        blen = 0;
    } else {
        if (r.cubin_size)
            memcpy(block, job.cubin, r.cubin_size);
        if (r.log_size)
            memcpy(block + r.cubin_size, job.log, r.log_size);
        if (r.lowered_size)
            memcpy(block + r.cubin_size + r.log_size, job.lowered_name,
                   r.lowered_size);
    }
    cutune__msg_send(w->fd, CUTUNE__MSG_COMPILE, &r, sizeof r, block, blen);
    free(block);
    free(opts);
    cutune__compile_job_clear(&job);
}

int cutune__worker_main(int fd)
{
    cutune__worker w;
    memset(&w, 0, sizeof w);
    w.fd = fd;
    for (;;) {
        uint32_t type;
        void *payload;
        size_t size;
        if (cutune__msg_recv(fd, &type, &payload, &size, -1.0) != 0)
            break; /* the tuning process is gone */
        int quit = 0;
        switch ((cutune__msg_type)type) {
        case CUTUNE__MSG_DEVICES: handle_devices(&w); break;
        case CUTUNE__MSG_INIT: handle_init(&w, payload, size); break;
        case CUTUNE__MSG_ARGS:
            cutune__worker_handle_args(&w, payload, size);
            break;
        case CUTUNE__MSG_LOAD:
            cutune__worker_handle_load(&w, payload, size);
            break;
        case CUTUNE__MSG_OCCUPANCY:
            cutune__worker_handle_occupancy(&w, payload, size);
            break;
        case CUTUNE__MSG_RUN:
            cutune__worker_handle_run(&w, payload, size);
            break;
        case CUTUNE__MSG_BANDWIDTH:
            cutune__worker_handle_bandwidth(&w, payload, size);
            break;
        case CUTUNE__MSG_COMPILE: handle_compile(&w, payload, size); break;
        case CUTUNE__MSG_REFERENCE:
            cutune__worker_handle_reference(&w, payload, size);
            break;
        case CUTUNE__MSG_PROFILE:
            cutune__worker_handle_profile(&w, payload, size);
            break;
        case CUTUNE__MSG_ENERGY:
            cutune__worker_handle_energy(&w, payload, size);
            break;
        case CUTUNE__MSG_HANG:
            for (;;)
                pause();
        case CUTUNE__MSG_QUIT:
        default: quit = 1; break;
        }
        free(payload);
        /* A reply that said fatal ends the worker: its context is gone. */
        if (quit || (w.initialized && cutune__worker_context_broken()))
            break;
    }
    /* Nothing here outlives the process, and the driver releases the
     * context with it: freeing first would only make the tuner wait. */
    _exit(0);
}
