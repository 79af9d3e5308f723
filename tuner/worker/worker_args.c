/* The GPU worker's arguments: allocating and filling them on the device
 * (ARGS), the references a T1 file gives (REFERENCE), and binding them to
 * the parameters of each kernel loaded (LOAD). Split from worker.c
 * because the arguments are the worker's state that outlives every
 * configuration, and binding them is its own set of rules
 * (kernel_args.c); launching and timing are in worker_run.c.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "dtype.h"
#include "kernel_args.h"
#include "protocol.h"
#include "worker_state.h"

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
static cudaError_t fill_vector(cutune__worker *w, void *dev,
                               const cutune__wire_arg *a)
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

static void free_args(cutune__worker *w)
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
static int setup_vector(cutune__worker *w, size_t i, const char *data,
                        cutune__reply *r)
{
    const cutune__wire_arg *a = &w->args[i];
    size_t bytes =
        (size_t)a->count * cutune__dtype_size((cutune__dtype)a->dtype);
    size_t slack = slack_bytes(bytes);
    cudaError_t e = cudaMalloc(&w->dev[i], bytes + slack);
    if (e != cudaSuccess)
        return cutune__worker_error(
            r, e, "cudaMalloc(argument %zu, %zu bytes)", i, bytes);
    if ((e = cudaMemset((char *)w->dev[i] + bytes, 0, slack)) != cudaSuccess)
        return cutune__worker_error(r, e, "clearing argument %zu", i);
    if (a->fill == CUTUNE__FILL_BINARY)
        e = cudaMemcpy(w->dev[i], data, bytes, cudaMemcpyHostToDevice);
    else
        e = fill_vector(w, w->dev[i], a);
    if (e != cudaSuccess)
        return cutune__worker_error(r, e, "filling argument %zu", i);
    if (a->is_output) {
        if ((e = cudaMalloc(&w->pristine[i], bytes)) != cudaSuccess ||
            (e = cudaMalloc(&w->reference[i], bytes)) != cudaSuccess)
            return cutune__worker_error(r, e,
                                        "cudaMalloc(output copies of "
                                        "argument %zu)",
                                        i);
        if ((e = cudaMemcpy(w->pristine[i], w->dev[i], bytes,
                            cudaMemcpyDeviceToDevice)) != cudaSuccess)
            return cutune__worker_error(r, e, "copying argument %zu", i);
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
        size_t want =
            args[i].fill == CUTUNE__FILL_BINARY
                ? (size_t)args[i].count *
                      cutune__dtype_size((cutune__dtype)args[i].dtype)
                : 0;
        if (args[i].data_size != want || want > size - total)
            return 0;
        total += want;
    }
    return total;
}

static int setup_args(cutune__worker *w, const void *payload, size_t size,
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
    if (!w->args || !w->dev || !w->pristine || !w->reference || !w->scalars ||
        !w->params || !w->slots || !w->ref_atol || !w->ref_rtol ||
        !w->ref_given) {
        r->cuda_error = cudaErrorMemoryAllocation;
        snprintf(r->message, sizeof r->message, "out of host memory");
        return -1;
    }
    memcpy(w->args, (const char *)payload + sizeof *q,
           n * sizeof(cutune__wire_arg));
    const char *data =
        (const char *)payload + sizeof *q + n * sizeof(cutune__wire_arg);
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

void cutune__worker_handle_args(cutune__worker *w, const void *payload,
                                size_t size)
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
           e == cudaErrorNoKernelImageForDevice || e == cudaErrorInvalidPtx ||
           e == cudaErrorUnsupportedPtxVersion ||
           e == cudaErrorSharedObjectInitFailed || e == cudaErrorInvalidSource;
}

/* The loaded kernel's parameter sizes, by asking for each in turn; -1
 * when the driver cannot say (older than CUDA 12.4). */
static long kernel_param_sizes(cutune__worker *w, size_t **sizes)
{
    size_t cap = w->n_args + 4, n = 0;
    *sizes = malloc(cap * sizeof **sizes);
    while (*sizes && n < 4096) {
        size_t offset, bytes;
        cudaError_t e =
            cudaFuncGetParamInfo((const void *)w->kernel, n, &offset, &bytes);
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
static int fill_symbol(cutune__worker *w, size_t i, cutune__reply *r)
{
    const cutune__wire_arg *a = &w->args[i];
    void *symbol = NULL;
    size_t symbol_bytes = 0;
    size_t bytes =
        (size_t)a->count * cutune__dtype_size((cutune__dtype)a->dtype);
    cudaError_t e =
        cudaLibraryGetGlobal(&symbol, &symbol_bytes, w->library, a->symbol);
    if (e != cudaSuccess)
        return cutune__worker_error(r, e, "__constant__ variable '%s'",
                                    a->symbol);
    if (symbol_bytes < bytes) {
        r->cuda_error = cudaErrorInvalidValue;
        snprintf(r->message, sizeof r->message,
                 "KernelSpecification."
                 "Arguments[%zu] ('%s'): the __constant__ variable holds %zu "
                 "bytes; the argument has %zu",
                 i, a->symbol, symbol_bytes, bytes);
        return -1;
    }
    if ((e = cudaMemcpy(symbol, w->dev[i], bytes, cudaMemcpyDeviceToDevice)) !=
        cudaSuccess)
        return cutune__worker_error(r, e, "filling __constant__ '%s'",
                                    a->symbol);
    return 0;
}

/* Matches the arguments to the loaded kernel's parameters (kernel_args.c)
 * and fills the constant-memory variables the module declares: anew in
 * every module, since they live in it. */
static int bind_params(cutune__worker *w, cutune__load_reply *r)
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
        if (cutune__bind_kernel_args(w->args, n, sizes, (size_t)n_params, has,
                                     pass, r->head.message,
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

void cutune__worker_handle_load(cutune__worker *w, const void *payload,
                                size_t size)
{
    cutune__load_reply r;
    memset(&r, 0, sizeof r);
    const cutune__load_request *q = payload;
    cudaError_t e;
    if (!w->initialized || size < sizeof *q ||
        size != sizeof *q + q->name_len + q->cubin_size ||
        q->name_len > 1000) {
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
    if ((e = cudaLibraryLoadData(&w->library, cubin, NULL, NULL, 0, NULL, NULL,
                                 0)) != cudaSuccess) {
        cutune__worker_error(&r.head, e, "cudaLibraryLoadData");
        r.image_rejected = image_error(e);
        goto send;
    }
    w->loaded = 1;
    if ((e = cudaLibraryGetKernel(&w->kernel, w->library, name)) !=
        cudaSuccess) {
        cutune__worker_error(&r.head, e, "kernel '%s' not found in the module",
                             name);
        r.image_rejected = image_error(e);
        goto send;
    }
    if (bind_params(w, &r) != 0)
        goto send;
    struct cudaFuncAttributes attr;
    if ((e = cudaFuncGetAttributes(&attr, (const void *)w->kernel)) !=
        cudaSuccess) {
        cutune__worker_error(&r.head, e, "cudaFuncGetAttributes");
        goto send;
    }
    r.num_regs = attr.numRegs;
    r.shared_bytes = (int32_t)attr.sharedSizeBytes;
    r.const_bytes = (int32_t)attr.constSizeBytes;
    r.local_bytes = (int32_t)attr.localSizeBytes;
    r.max_threads_per_block = attr.maxThreadsPerBlock;
send:
    if (r.head.cuda_error)
        r.head.fatal = cutune__worker_context_broken();
    cutune__msg_send(w->fd, CUTUNE__MSG_LOAD, &r, sizeof r, NULL, 0);
}

void cutune__worker_handle_reference(cutune__worker *w, const char *payload,
                                     size_t size)
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
    size_t bytes =
        (size_t)a->count * cutune__dtype_size((cutune__dtype)a->dtype);
    if (q->fill == CUTUNE__FILL_BINARY) {
        if (size != sizeof *q + bytes) {
            r.cuda_error = cudaErrorInvalidValue;
            snprintf(r.message, sizeof r.message,
                     "reference data of %zu "
                     "bytes for an argument of %zu",
                     size - sizeof *q, bytes);
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
        cutune__worker_error(&r, e, "filling the reference of argument %u",
                             q->arg);
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
