/* The GPU worker: the only code in cutune that talks to the CUDA runtime.
 *
 * It runs as its own process (cutune-worker) so that a candidate which
 * corrupts the CUDA context (an illegal address is sticky) or never
 * finishes takes down only this process; the tuning process records the
 * failure and starts a new worker. It serves one request at a time over the
 * socket on CUTUNE__WORKER_FD (see protocol.h).
 */
#define _POSIX_C_SOURCE 200809L

#include "worker.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cuda_runtime_api.h>
#include <nvrtc.h>

#include "cutune/cutune.h"
#include "occupancy.h"
#include "compare_kernels.h"
#include "compile.h"
#include "dtype.h"
#include "kernel_args.h"
#include "protocol.h"
#include "stats.h"

typedef struct worker {
    int fd;
    int device;
    int initialized;
    cutune__device_props props;

    size_t n_args;
    cutune__wire_arg *args;
    void **dev;           /* device buffer of each vector argument */
    void **pristine;      /* outputs: their initial contents */
    void **reference;     /* outputs: the reference configuration's result */
    double *ref_atol;     /* outputs: tolerances from T1 ReferenceArguments */
    double *ref_rtol;
    unsigned char *ref_given; /* outputs with a T1 reference */
    int external_reference; /* references come from the T1 file */
    uint64_t *scalars;    /* storage of scalar arguments */
    void **slots;         /* per argument: where its parameter value is */
    void **params;        /* kernel parameter pointers, in order: the
                             arguments the loaded kernel takes */
    size_t n_params;
    int have_reference;

    cudaLibrary_t library;
    cudaKernel_t kernel;
    int loaded;

    cudaLibrary_t compare_library;
    cudaKernel_t compare[CUTUNE__DT_COUNT];
    cudaKernel_t fill[CUTUNE__DT_COUNT];
    unsigned long long *compare_result;

    void *flush;
    size_t flush_bytes;

    cudaEvent_t *events;
    size_t n_events;
} worker;

static int reply_error(cutune__reply *r, cudaError_t e, const char *fmt, ...)
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
static int context_broken(void)
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
             b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9],
             b[10], b[11], b[12], b[13], b[14], b[15]);
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

static void handle_devices(worker *w)
{
    cutune__devices_reply r;
    memset(&r, 0, sizeof r);
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    cutune__device_props *props = NULL;
    if (e != cudaSuccess) {
        reply_error(&r.head, e, "cudaGetDeviceCount");
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
                reply_error(&r.head, e, "cudaGetDeviceProperties(%d)", i);
                count = 0;
            }
        }
    }
    r.count = count;
    cutune__msg_send(w->fd, CUTUNE__MSG_DEVICES, &r, sizeof r, props,
                     (size_t)count * sizeof *props);
    free(props);
}

static int compare_kernels(worker *w, cutune__reply *r);

/* Loads the comparison and fill kernels: `cubin` when the session sent
 * one, else compiled here with NVRTC. */
static int build_compare(worker *w, cutune__reply *r, const void *given,
                         size_t given_size, int32_t *rejected)
{
    cudaError_t e;
    if (given_size > 0) {
        if ((e = cudaLibraryLoadData(&w->compare_library, given, NULL, NULL,
                                     0, NULL, NULL, 0)) != cudaSuccess) {
            *rejected = 1;
            return reply_error(r, e, "loading the comparison kernels sent");
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
    if (nvrtcCreateProgram(&prog, cutune__compare_source, "cutune_compare.cu", 0,
                           NULL, NULL) != NVRTC_SUCCESS) {
        r->cuda_error = cudaErrorUnknown;
        snprintf(r->message, sizeof r->message, "NVRTC: cannot create the "
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
        snprintf(r->message, sizeof r->message, "NVRTC: cannot compile the "
                 "output comparison kernels for %s: %s", arch,
                 nvrtcGetErrorString(nr));
        return -1;
    }
    e = cudaLibraryLoadData(&w->compare_library, cubin, NULL, NULL, 0, NULL,
                            NULL, 0);
    free(cubin);
    if (e != cudaSuccess)
        return reply_error(r, e, "loading the comparison kernels");
    return compare_kernels(w, r);
}

/* The kernels of the loaded comparison library, and its result buffer. */
static int compare_kernels(worker *w, cutune__reply *r)
{
    cudaError_t e;
    for (size_t i = 0; i < CUTUNE__DT_COUNT; i++) {
        if ((e = cudaLibraryGetKernel(&w->compare[i], w->compare_library,
                                      cutune__compare_names[i])) != cudaSuccess)
            return reply_error(r, e, "cudaLibraryGetKernel(%s)",
                               cutune__compare_names[i]);
        if ((e = cudaLibraryGetKernel(&w->fill[i], w->compare_library,
                                      cutune__fill_names[i])) != cudaSuccess)
            return reply_error(r, e, "cudaLibraryGetKernel(%s)",
                               cutune__fill_names[i]);
    }
    if ((e = cudaMalloc((void **)&w->compare_result,
                        3 * sizeof(unsigned long long))) != cudaSuccess)
        return reply_error(r, e, "cudaMalloc");
    return 0;
}

static void handle_init(worker *w, const void *payload, size_t size)
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
            reply_error(&r.head, e, "cudaSetDevice(%d)", w->device);
        else if ((e = cudaFree(NULL)) != cudaSuccess)
            reply_error(&r.head, e, "creating a CUDA context on device %d",
                        w->device);
        else if ((e = read_props(w->device, &w->props)) != cudaSuccess)
            reply_error(&r.head, e, "cudaGetDeviceProperties");
        else if (build_compare(w, &r.head, q + 1, q->cubin_size,
                               &r.cubin_rejected) == 0) {
            /* Twice the L2, so that writing it evicts every line a
             * previous launch left. */
            w->flush_bytes = 2 * (size_t)w->props.fingerprint.l2_bytes;
            if (w->flush_bytes < ((size_t)8 << 20))
                w->flush_bytes = (size_t)8 << 20;
            if ((e = cudaMalloc(&w->flush, w->flush_bytes)) != cudaSuccess)
                reply_error(&r.head, e, "cudaMalloc(L2 flush buffer)");
            else
                w->initialized = 1;
        }
        r.props = w->props;
    }
    cutune__msg_send(w->fd, CUTUNE__MSG_INIT, &r, sizeof r, NULL, 0);
}

static void store_value(void *dst, uint32_t dtype, double v)
{
    switch ((cutune__dtype)dtype) {
    case CUTUNE__DT_FLOAT: *(float *)dst = (float)v; break;
    case CUTUNE__DT_DOUBLE: *(double *)dst = v; break;
    case CUTUNE__DT_INT8: *(int8_t *)dst = (int8_t)v; break;
    case CUTUNE__DT_UINT8: *(uint8_t *)dst = (uint8_t)v; break;
    case CUTUNE__DT_INT16: *(int16_t *)dst = (int16_t)v; break;
    case CUTUNE__DT_UINT16: *(uint16_t *)dst = (uint16_t)v; break;
    case CUTUNE__DT_INT32: *(int32_t *)dst = (int32_t)v; break;
    case CUTUNE__DT_UINT32: *(uint32_t *)dst = (uint32_t)v; break;
    case CUTUNE__DT_INT64: *(int64_t *)dst = (int64_t)v; break;
    case CUTUNE__DT_UINT64: *(uint64_t *)dst = (uint64_t)v; break;
    case CUTUNE__DT_HALF:
        *(uint16_t *)dst = cutune__half_from_double(v);
        break;
    }
}

/* Fills a vector argument on the GPU: a kernel writes gigabytes in
 * milliseconds where the host would take seconds. The values depend only
 * on the seed and the index, so every worker builds the same inputs. */
static cudaError_t fill_vector(worker *w, void *dev, const cutune__wire_arg *a)
{
    const size_t bytes =
        (size_t)a->count * cutune__dtype_size((cutune__dtype)a->dtype);
    if (a->fill == CUTUNE__FILL_CONSTANT && a->fill_value == 0.0)
        return cudaMemset(dev, 0, bytes);
    unsigned long long n = a->count, seed = a->seed;
    double value = a->fill_value;
    int random = a->fill == CUTUNE__FILL_RANDOM;
    int integer = a->dtype != CUTUNE__DT_FLOAT &&
                  a->dtype != CUTUNE__DT_DOUBLE && a->dtype != CUTUNE__DT_HALF;
    void *params[] = {&dev, &n, &seed, &value, &random, &integer};
    unsigned blocks = (unsigned)w->props.fingerprint.sm_count * 8;
    dim3 grid = {blocks ? blocks : 1, 1, 1}, block = {256, 1, 1};
    cudaError_t e = cudaLaunchKernel((const void *)w->fill[a->dtype], grid,
                                     block, params, 0, 0);
    return e == cudaSuccess ? cudaDeviceSynchronize() : e;
}

static void free_args(worker *w)
{
    for (size_t i = 0; i < w->n_args; i++) {
        if (w->dev)
            cudaFree(w->dev[i]);
        if (w->pristine)
            cudaFree(w->pristine[i]);
        if (w->reference)
            cudaFree(w->reference[i]);
    }
    free(w->args);
    free(w->dev);
    free(w->pristine);
    free(w->reference);
    free(w->ref_atol);
    free(w->ref_rtol);
    free(w->ref_given);
    w->ref_atol = w->ref_rtol = NULL;
    w->ref_given = NULL;
    w->external_reference = 0;
    free(w->scalars);
    free(w->slots);
    free(w->params);
    w->args = NULL;
    w->dev = w->pristine = w->reference = w->params = w->slots = NULL;
    w->scalars = NULL;
    w->n_args = 0;
    w->n_params = 0;
    w->have_reference = 0;
}

/* Bytes allocated past a buffer's declared size, zeroed: published T1
 * files size some buffers without the halo their kernels read (hotspot's
 * temp), and a read past the end must not fault or read another buffer. */
static size_t slack_bytes(size_t bytes)
{
    size_t s = bytes / 8;
    if (s < ((size_t)64 << 10))
        s = (size_t)64 << 10;
    if (s > ((size_t)64 << 20))
        s = (size_t)64 << 20;
    return s;
}

/* One vector argument on the device: allocated with slack, filled (from
 * `data` when binary), and with its pristine and reference copies when it
 * is an output. */
static int setup_vector(worker *w, size_t i, const char *data,
                        cutune__reply *r)
{
    const cutune__wire_arg *a = &w->args[i];
    size_t bytes = (size_t)a->count *
                   cutune__dtype_size((cutune__dtype)a->dtype);
    size_t slack = slack_bytes(bytes);
    cudaError_t e = cudaMalloc(&w->dev[i], bytes + slack);
    if (e != cudaSuccess)
        return reply_error(r, e, "cudaMalloc(argument %zu, %zu bytes)", i,
                           bytes);
    if ((e = cudaMemset((char *)w->dev[i] + bytes, 0, slack)) != cudaSuccess)
        return reply_error(r, e, "clearing argument %zu", i);
    if (a->fill == CUTUNE__FILL_BINARY)
        e = cudaMemcpy(w->dev[i], data, bytes, cudaMemcpyHostToDevice);
    else
        e = fill_vector(w, w->dev[i], a);
    if (e != cudaSuccess)
        return reply_error(r, e, "filling argument %zu", i);
    if (a->is_output) {
        if ((e = cudaMalloc(&w->pristine[i], bytes)) != cudaSuccess ||
            (e = cudaMalloc(&w->reference[i], bytes)) != cudaSuccess)
            return reply_error(r, e, "cudaMalloc(output copies of "
                               "argument %zu)", i);
        if ((e = cudaMemcpy(w->pristine[i], w->dev[i], bytes,
                            cudaMemcpyDeviceToDevice)) != cudaSuccess)
            return reply_error(r, e, "copying argument %zu", i);
    }
    w->slots[i] = &w->dev[i];
    return 0;
}

/* The payload's size if it is well formed: the wire arguments, then each
 * binary argument's bytes. 0 when it is not. */
static size_t args_payload_size(const cutune__args_request *q, size_t size)
{
    size_t n = q->n_args;
    if (size < sizeof *q || n > (size - sizeof *q) / sizeof(cutune__wire_arg))
        return 0;
    const cutune__wire_arg *args = (const void *)(q + 1);
    size_t total = sizeof *q + n * sizeof(cutune__wire_arg);
    for (size_t i = 0; i < n; i++) {
        size_t want = args[i].fill == CUTUNE__FILL_BINARY
                          ? (size_t)args[i].count *
                                cutune__dtype_size(
                                    (cutune__dtype)args[i].dtype)
                          : 0;
        if (args[i].data_size != want || want > size - total)
            return 0;
        total += want;
    }
    return total;
}

static int setup_args(worker *w, const void *payload, size_t size,
                      cutune__reply *r)
{
    const cutune__args_request *q = payload;
    if (!w->initialized || args_payload_size(q, size) != size) {
        r->cuda_error = cudaErrorInvalidValue;
        snprintf(r->message, sizeof r->message, "bad ARGS request");
        return -1;
    }
    free_args(w);
    size_t n = q->n_args;
    w->n_args = n;
    w->args = calloc(n + 1, sizeof *w->args);
    w->dev = calloc(n + 1, sizeof *w->dev);
    w->pristine = calloc(n + 1, sizeof *w->pristine);
    w->reference = calloc(n + 1, sizeof *w->reference);
    w->ref_atol = calloc(n + 1, sizeof *w->ref_atol);
    w->ref_rtol = calloc(n + 1, sizeof *w->ref_rtol);
    w->ref_given = calloc(n + 1, 1);
    w->scalars = calloc(n + 1, sizeof *w->scalars);
    w->slots = calloc(n + 1, sizeof *w->slots);
    w->params = calloc(n + 1, sizeof *w->params);
    if (!w->args || !w->dev || !w->pristine || !w->reference ||
        !w->scalars || !w->params || !w->slots || !w->ref_atol ||
        !w->ref_rtol || !w->ref_given) {
        r->cuda_error = cudaErrorMemoryAllocation;
        snprintf(r->message, sizeof r->message, "out of host memory");
        return -1;
    }
    memcpy(w->args, (const char *)payload + sizeof *q,
           n * sizeof(cutune__wire_arg));
    const char *data = (const char *)payload + sizeof *q +
                       n * sizeof(cutune__wire_arg);
    for (size_t i = 0; i < n; i++) {
        const cutune__wire_arg *a = &w->args[i];
        if (!a->is_vector) {
            store_value(&w->scalars[i], a->dtype, a->fill_value);
            w->slots[i] = &w->scalars[i];
        } else if (setup_vector(w, i, data, r) != 0) {
            return -1;
        }
        data += a->data_size;
    }
    /* Until a kernel is loaded and says otherwise: every argument but the
     * constant-memory ones. */
    w->n_params = 0;
    for (size_t i = 0; i < n; i++)
        if (!w->args[i].is_symbol)
            w->params[w->n_params++] = w->slots[i];
    return 0;
}

static void handle_args(worker *w, const void *payload, size_t size)
{
    cutune__reply r;
    memset(&r, 0, sizeof r);
    setup_args(w, payload, size, &r);
    cutune__msg_send(w->fd, CUTUNE__MSG_ARGS, &r, sizeof r, NULL, 0);
}

/* Errors that say the image itself is unusable, rather than anything
 * about the kernel or its arguments. With lazy loading the driver reports
 * them at cudaLibraryGetKernel as often as at cudaLibraryLoadData. */
static int image_error(cudaError_t e)
{
    return e == cudaErrorInvalidKernelImage ||
           e == cudaErrorNoKernelImageForDevice ||
           e == cudaErrorInvalidPtx || e == cudaErrorUnsupportedPtxVersion ||
           e == cudaErrorSharedObjectInitFailed ||
           e == cudaErrorInvalidSource;
}

/* The loaded kernel's parameter sizes, by asking for each in turn; -1
 * when the driver cannot say (older than CUDA 12.4). */
static long kernel_param_sizes(worker *w, size_t **sizes)
{
    size_t cap = w->n_args + 4, n = 0;
    *sizes = malloc(cap * sizeof **sizes);
    while (*sizes && n < 4096) {
        size_t offset, bytes;
        cudaError_t e = cudaFuncGetParamInfo((const void *)w->kernel, n,
                                             &offset, &bytes);
        if (e != cudaSuccess) {
            cudaGetLastError();
            return e == cudaErrorInvalidValue ? (long)n : -1;
        }
        if (n == cap) {
            size_t *more = realloc(*sizes, 2 * cap * sizeof *more);
            if (!more)
                break;
            *sizes = more;
            cap *= 2;
        }
        (*sizes)[n++] = bytes;
    }
    return -1;
}

/* Copies a constant-memory argument into its __constant__ variable. */
static int fill_symbol(worker *w, size_t i, cutune__reply *r)
{
    const cutune__wire_arg *a = &w->args[i];
    void *symbol = NULL;
    size_t symbol_bytes = 0;
    size_t bytes = (size_t)a->count *
                   cutune__dtype_size((cutune__dtype)a->dtype);
    cudaError_t e = cudaLibraryGetGlobal(&symbol, &symbol_bytes, w->library,
                                         a->symbol);
    if (e != cudaSuccess)
        return reply_error(r, e, "__constant__ variable '%s'", a->symbol);
    if (symbol_bytes < bytes) {
        r->cuda_error = cudaErrorInvalidValue;
        snprintf(r->message, sizeof r->message, "KernelSpecification."
                 "Arguments[%zu] ('%s'): the __constant__ variable holds %zu "
                 "bytes; the argument has %zu", i, a->symbol, symbol_bytes,
                 bytes);
        return -1;
    }
    if ((e = cudaMemcpy(symbol, w->dev[i], bytes,
                        cudaMemcpyDeviceToDevice)) != cudaSuccess)
        return reply_error(r, e, "filling __constant__ '%s'", a->symbol);
    return 0;
}

/* Matches the arguments to the loaded kernel's parameters (kernel_args.c)
 * and fills the constant-memory variables the module declares: anew in
 * every module, since they live in it. */
static int bind_params(worker *w, cutune__load_reply *r)
{
    size_t n = w->n_args;
    unsigned char *has = calloc(n + 1, 1), *pass = calloc(n + 1, 1);
    size_t *sizes = NULL;
    int rc = -1;
    if (!has || !pass) {
        r->head.cuda_error = cudaErrorMemoryAllocation;
        snprintf(r->head.message, sizeof r->head.message, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        void *sym;
        size_t bytes;
        if (w->args[i].is_symbol)
            has[i] = cudaLibraryGetGlobal(&sym, &bytes, w->library,
                                          w->args[i].symbol) == cudaSuccess;
        cudaGetLastError();
    }
    long n_params = kernel_param_sizes(w, &sizes);
    if (n_params >= 0) {
        if (cutune__bind_kernel_args(w->args, n, sizes, (size_t)n_params,
                                     has, pass, r->head.message,
                                     sizeof r->head.message) != 0) {
            r->head.cuda_error = cudaErrorInvalidValue;
            r->args_mismatch = 1;
            goto out;
        }
    } else {
        for (size_t i = 0; i < n; i++)
            pass[i] = !w->args[i].is_symbol;
    }
    w->n_params = 0;
    for (size_t i = 0; i < n; i++) {
        if (pass[i])
            w->params[w->n_params++] = w->slots[i];
        if (w->args[i].is_symbol && (has[i] || !pass[i]) &&
            fill_symbol(w, i, &r->head) != 0)
            goto out;
    }
    rc = 0;
out:
    free(sizes);
    free(has);
    free(pass);
    return rc;
}

static void handle_load(worker *w, const void *payload, size_t size)
{
    cutune__load_reply r;
    memset(&r, 0, sizeof r);
    const cutune__load_request *q = payload;
    cudaError_t e;
    if (!w->initialized || size < sizeof *q ||
        size != sizeof *q + q->name_len + q->cubin_size || q->name_len > 1000) {
        r.head.cuda_error = cudaErrorInvalidValue;
        snprintf(r.head.message, sizeof r.head.message, "bad LOAD request");
        goto send;
    }
    if (w->loaded) {
        cudaLibraryUnload(w->library);
        w->loaded = 0;
    }
    char name[1024];
    memcpy(name, (const char *)payload + sizeof *q, q->name_len);
    name[q->name_len] = '\0';
    const void *cubin = (const char *)payload + sizeof *q + q->name_len;
    if ((e = cudaLibraryLoadData(&w->library, cubin, NULL, NULL, 0, NULL,
                                 NULL, 0)) != cudaSuccess) {
        reply_error(&r.head, e, "cudaLibraryLoadData");
        r.image_rejected = image_error(e);
        goto send;
    }
    w->loaded = 1;
    if ((e = cudaLibraryGetKernel(&w->kernel, w->library, name)) !=
        cudaSuccess) {
        reply_error(&r.head, e, "kernel '%s' not found in the module", name);
        r.image_rejected = image_error(e);
        goto send;
    }
    if (bind_params(w, &r) != 0)
        goto send;
    struct cudaFuncAttributes attr;
    if ((e = cudaFuncGetAttributes(&attr, (const void *)w->kernel)) !=
        cudaSuccess) {
        reply_error(&r.head, e, "cudaFuncGetAttributes");
        goto send;
    }
    r.num_regs = attr.numRegs;
    r.shared_bytes = (int32_t)attr.sharedSizeBytes;
    r.const_bytes = (int32_t)attr.constSizeBytes;
    r.local_bytes = (int32_t)attr.localSizeBytes;
    r.max_threads_per_block = attr.maxThreadsPerBlock;
send:
    if (r.head.cuda_error)
        r.head.fatal = context_broken();
    cutune__msg_send(w->fd, CUTUNE__MSG_LOAD, &r, sizeof r, NULL, 0);
}

static void handle_occupancy(worker *w, const void *payload, size_t size)
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
            reply_error(&r.head, e, "occupancy calculation");
    }
    cutune__msg_send(w->fd, CUTUNE__MSG_OCCUPANCY, &r, sizeof r, NULL, 0);
}

static cudaError_t launch(worker *w, const cutune__run_request *q)
{
    dim3 grid = {q->grid[0], q->grid[1], q->grid[2]};
    dim3 block = {q->block[0], q->block[1], q->block[2]};
    return cudaLaunchKernel((const void *)w->kernel, grid, block, w->params,
                            q->dynamic_smem, 0);
}

/* Copies every output argument's buffer from src[i] to dst[i] on the
 * device: resetting outputs to their initial contents, or keeping them as
 * the reference. */
static cudaError_t copy_outputs(worker *w, void **dst, void **src)
{
    for (size_t i = 0; i < w->n_args; i++) {
        const cutune__wire_arg *a = &w->args[i];
        if (!a->is_vector || !a->is_output)
            continue;
        size_t bytes = (size_t)a->count *
                       cutune__dtype_size((cutune__dtype)a->dtype);
        cudaError_t e = cudaMemcpy(dst[i], src[i], bytes,
                                   cudaMemcpyDeviceToDevice);
        if (e != cudaSuccess)
            return e;
    }
    return cudaSuccess;
}

/* Compares every output with the reference; fills mismatches/max_error. */
static cudaError_t validate(worker *w, const cutune__run_request *q,
                            cutune__run_reply *r, char *detail, size_t dlen,
                            unsigned long long *nonfinite)
{
    detail[0] = '\0';
    for (size_t i = 0; i < w->n_args; i++) {
        const cutune__wire_arg *a = &w->args[i];
        if (!a->is_vector || !a->is_output ||
            (w->external_reference && !w->ref_given[i]))
            continue;
        cudaError_t e = cudaMemset(w->compare_result, 0,
                                   3 * sizeof(unsigned long long));
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
                snprintf(detail, dlen, "%llu of %llu elements of output "
                         "argument %zu are NaN or infinite", host[2], n, i);
            r->mismatches += host[2];
            continue;
        }
        double worst;
        memcpy(&worst, &host[1], sizeof worst);
        if (worst > r->max_error)
            r->max_error = worst;
        if (host[0] > 0 && r->mismatches == 0)
            snprintf(detail, dlen, "%llu of %llu elements of output argument "
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

static int ensure_events(worker *w, size_t n)
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
static cudaError_t time_launches(worker *w, const cutune__run_request *q,
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
        if (e == cudaSuccess && (e = cudaEventSynchronize(warm[1])) ==
                                    cudaSuccess &&
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
        uint32_t batch = done < q->early_reps   ? q->early_reps - done
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

static void handle_run(worker *w, const void *payload, size_t size)
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
    /* Resource checks first: a configuration that cannot be resident is
     * rejected without a launch. */
    struct cudaFuncAttributes attr;
    if ((e = cudaFuncGetAttributes(&attr, (const void *)w->kernel)) !=
        cudaSuccess) {
        reply_error(&r.head, e, "cudaFuncGetAttributes");
        goto send;
    }
    const unsigned long long threads =
        (unsigned long long)q->block[0] * q->block[1] * q->block[2];
    if (threads > (unsigned long long)attr.maxThreadsPerBlock) {
        r.outcome = CUTUNE_OUTCOME_RESOURCES;
        snprintf(r.head.message, sizeof r.head.message,
                 "%llu threads per block exceed the kernel's limit of %d "
                 "(%d registers per thread)", threads,
                 attr.maxThreadsPerBlock, attr.numRegs);
        goto send;
    }
    int active = 0;
    if ((e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(
             &active, (const void *)w->kernel, (int)threads,
             q->dynamic_smem)) != cudaSuccess) {
        reply_error(&r.head, e, "cudaOccupancyMaxActiveBlocksPerMultiprocessor");
        goto send;
    }
    r.active_blocks = active;
    if (active == 0) {
        r.outcome = CUTUNE_OUTCOME_RESOURCES;
        snprintf(r.head.message, sizeof r.head.message,
                 "zero occupancy: %d registers per thread, %d bytes of static "
                 "and %u of dynamic shared memory per block",
                 attr.numRegs, (int)attr.sharedSizeBytes, q->dynamic_smem);
        goto send;
    }

    /* The span of the GPU work of this run, for the GPU-busy figure. */
    if (cudaEventCreate(&span_start) == cudaSuccess &&
        cudaEventCreate(&span_end) == cudaSuccess)
        cudaEventRecord(span_start, 0);
    if ((e = copy_outputs(w, w->dev, w->pristine)) != cudaSuccess) {
        reply_error(&r.head, e, "resetting the outputs");
        goto send;
    }
    /* The first launch produces the output to validate; it is timed only
     * for the GPU-busy figure. */
    float first_ms = 0.0f;
    if (ensure_events(w, 2) != 0) {
        r.head.cuda_error = cudaErrorMemoryAllocation;
        snprintf(r.head.message, sizeof r.head.message, "out of memory");
        goto send;
    }
    if ((e = cudaEventRecord(w->events[0], 0)) != cudaSuccess ||
        (e = launch(w, q)) != cudaSuccess ||
        (e = cudaEventRecord(w->events[1], 0)) != cudaSuccess ||
        (e = cudaDeviceSynchronize()) != cudaSuccess) {
        reply_error(&r.head, e, "launching grid (%u,%u,%u) block (%u,%u,%u)",
                    q->grid[0], q->grid[1], q->grid[2], q->block[0],
                    q->block[1], q->block[2]);
        goto send;
    }
    if (cudaEventElapsedTime(&first_ms, w->events[0], w->events[1]) ==
        cudaSuccess)
        r.gpu_ms += first_ms;
    if (q->mode == CUTUNE__RUN_REFERENCE) {
        if ((e = copy_outputs(w, w->reference, w->dev)) != cudaSuccess) {
            reply_error(&r.head, e, "keeping the reference output");
            goto send;
        }
        w->have_reference = 1;
    } else {
        char detail[512];
        unsigned long long nonfinite = 0;
        if ((e = validate(w, q, &r, detail, sizeof detail, &nonfinite)) !=
            cudaSuccess) {
            reply_error(&r.head, e, "validating the output");
            goto send;
        }
        if (r.mismatches > 0) {
            r.outcome = CUTUNE_OUTCOME_CORRECTNESS;
            snprintf(r.head.message, sizeof r.head.message, "%s", detail);
            if (q->check != CUTUNE__CHECK_PROBE || nonfinite > 0)
                goto send;
            r.differs = 1;
        }
    }
    if ((e = time_launches(w, q, &r, &times)) != cudaSuccess) {
        reply_error(&r.head, e, "timed launches");
        r.n_times = 0;
        goto send;
    }
    r.outcome = r.differs ? CUTUNE_OUTCOME_CORRECTNESS : CUTUNE_OUTCOME_CORRECT;
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
        r.head.fatal = context_broken();
    cutune__msg_send(w->fd, CUTUNE__MSG_RUN, &r, sizeof r, times,
                     r.n_times * sizeof(float));
    free(times);
}

static void handle_bandwidth(worker *w, const void *payload, size_t size)
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
        reply_error(&r.head, e, "measuring cudaMemcpy bandwidth");
        goto send;
    }
    for (int i = 0; i < reps && e == cudaSuccess; i++)
        e = cudaMemcpyAsync(i % 2 ? a : b, i % 2 ? b : a, bytes,
                            cudaMemcpyDeviceToDevice, 0);
    if (e == cudaSuccess && (e = cudaEventRecord(stop, 0)) == cudaSuccess &&
        (e = cudaEventSynchronize(stop)) == cudaSuccess)
        e = cudaEventElapsedTime(&ms, start, stop);
    if (e != cudaSuccess)
        reply_error(&r.head, e, "measuring cudaMemcpy bandwidth");
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

static void handle_reference(worker *w, const char *payload, size_t size)
{
    cutune__reply r;
    memset(&r, 0, sizeof r);
    const cutune__reference_request *q = (const void *)payload;
    cudaError_t e;
    if (!w->args || size < sizeof *q || q->arg >= w->n_args ||
        !w->args[q->arg].is_vector || !w->reference[q->arg]) {
        r.cuda_error = cudaErrorInvalidValue;
        snprintf(r.message, sizeof r.message, "bad REFERENCE request");
        goto send;
    }
    const cutune__wire_arg *a = &w->args[q->arg];
    size_t bytes = (size_t)a->count *
                   cutune__dtype_size((cutune__dtype)a->dtype);
    if (q->fill == CUTUNE__FILL_BINARY) {
        if (size != sizeof *q + bytes) {
            r.cuda_error = cudaErrorInvalidValue;
            snprintf(r.message, sizeof r.message, "reference data of %zu "
                     "bytes for an argument of %zu", size - sizeof *q, bytes);
            goto send;
        }
        e = cudaMemcpy(w->reference[q->arg], payload + sizeof *q, bytes,
                       cudaMemcpyHostToDevice);
    } else {
        cutune__wire_arg ref = *a;
        ref.fill = q->fill;
        ref.fill_value = q->fill_value;
        ref.seed = q->seed;
        e = fill_vector(w, w->reference[q->arg], &ref);
    }
    if (e != cudaSuccess) {
        reply_error(&r, e, "filling the reference of argument %u", q->arg);
        goto send;
    }
    w->ref_atol[q->arg] = q->atol;
    w->ref_rtol[q->arg] = q->rtol;
    w->ref_given[q->arg] = 1;
    w->external_reference = 1;
    w->have_reference = 1;
send:
    cutune__msg_send(w->fd, CUTUNE__MSG_REFERENCE, &r, sizeof r, NULL, 0);
}

/* Compiles with NVRTC for the tuning process, which cannot run NVRTC on
 * more than about two threads at a time itself. No CUDA call is made. */
static void handle_compile(worker *w, const char *payload, size_t size)
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
        snprintf(r.head.message, sizeof r.head.message,
                 "bad COMPILE request");
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
        snprintf(r.head.message, sizeof r.head.message,
                 "bad COMPILE request");
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
    r.lowered_size = job.ok && job.lowered_name
                         ? strlen(job.lowered_name) + 1
                         : 0;
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
    worker w;
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
        case CUTUNE__MSG_ARGS: handle_args(&w, payload, size); break;
        case CUTUNE__MSG_LOAD: handle_load(&w, payload, size); break;
        case CUTUNE__MSG_OCCUPANCY: handle_occupancy(&w, payload, size); break;
        case CUTUNE__MSG_RUN: handle_run(&w, payload, size); break;
        case CUTUNE__MSG_BANDWIDTH: handle_bandwidth(&w, payload, size); break;
        case CUTUNE__MSG_COMPILE: handle_compile(&w, payload, size); break;
        case CUTUNE__MSG_REFERENCE: handle_reference(&w, payload, size); break;
        case CUTUNE__MSG_HANG:
            for (;;)
                pause();
        case CUTUNE__MSG_QUIT:
        default:
            quit = 1;
            break;
        }
        free(payload);
        /* A reply that said fatal ends the worker: its context is gone. */
        if (quit || (w.initialized && context_broken()))
            break;
    }
    /* Nothing here outlives the process, and the driver releases the
     * context with it: freeing first would only make the tuner wait. */
    _exit(0);
}
