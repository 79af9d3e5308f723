/* What the GPU worker's files share: the worker's state and the request
 * handlers the service loop (worker.c) dispatches to. Internal to the
 * cutune-worker program; the tuning process sees only protocol.h.
 *
 * The worker is split by what a request does: worker.c brings the device
 * up, compiles for the tuning process and runs the loop; worker_args.c
 * sets the arguments up and binds them to a loaded kernel; worker_run.c
 * launches, validates and times a configuration. None of it is
 * thread-safe: the worker serves one request at a time.
 */
#ifndef CUTUNE_TUNER_WORKER_STATE_H
#define CUTUNE_TUNER_WORKER_STATE_H

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

#include "dtype.h"
#include "protocol.h"

typedef struct cutune__worker {
    int fd;
    int device;
    int initialized;
    cutune__device_props props;

    size_t n_args;
    cutune__wire_arg *args;
    void **dev;       /* device buffer of each vector argument */
    void **pristine;  /* outputs: their initial contents */
    void **reference; /* outputs: the reference configuration's result */
    double *ref_atol; /* outputs: tolerances from T1 ReferenceArguments */
    double *ref_rtol;
    unsigned char *ref_given; /* outputs with a T1 reference */
    int external_reference;   /* references come from the T1 file */
    uint64_t *scalars;        /* storage of scalar arguments */
    void **slots;             /* per argument: where its parameter value is */
    void **params;            /* kernel parameter pointers, in order: the
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

    struct cutune__nvml *nvml; /* opened on the first ENERGY, or NULL */
    int nvml_tried;
    char nvml_why[256]; /* why it did not open */

    struct cutune__cupti *cupti; /* loaded on the first PROFILE, or NULL */
    int cupti_tried;
    char cupti_why[512]; /* why it did not load */
} cutune__worker;

/* Fills `r` with what failed (the printf-style `fmt`) and CUDA's error
 * `e`; returns -1, for `return cutune__worker_error(...)`. */
int cutune__worker_error(cutune__reply *r, cudaError_t e, const char *fmt,
                         ...);

/* After an error, whether the context is broken for good (a sticky
 * error), so that the reply can say the worker must be replaced. */
int cutune__worker_context_broken(void);

/* Copies every output argument's buffer from src[i] to dst[i] on the
 * device: resetting outputs to their initial contents, or keeping them as
 * the reference. */
cudaError_t cutune__worker_copy_outputs(cutune__worker *w, void **dst,
                                        void **src);

/* Launches the loaded kernel once on the default stream. */
cudaError_t cutune__worker_launch(cutune__worker *w, const uint32_t grid[3],
                                  const uint32_t block[3], uint32_t smem);

/* Request handlers: each reads its request from `payload` (`size` bytes,
 * borrowed) and sends its reply on w->fd. */
void cutune__worker_handle_args(cutune__worker *w, const void *payload,
                                size_t size);
void cutune__worker_handle_load(cutune__worker *w, const void *payload,
                                size_t size);
void cutune__worker_handle_reference(cutune__worker *w, const char *payload,
                                     size_t size);
void cutune__worker_handle_occupancy(cutune__worker *w, const void *payload,
                                     size_t size);
void cutune__worker_handle_run(cutune__worker *w, const void *payload,
                               size_t size);
void cutune__worker_handle_profile(cutune__worker *w, const char *payload,
                                   size_t size);
void cutune__worker_handle_energy(cutune__worker *w, const void *payload,
                                  size_t size);
void cutune__worker_handle_bandwidth(cutune__worker *w, const void *payload,
                                     size_t size);

#endif
