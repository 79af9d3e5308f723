/* Hardware counters of one kernel launch through CUPTI's range profiler
 * (CUDA 13: cupti_range_profiler.h, cupti_profiler_host.h), for the GPU
 * worker's PROFILE request.
 *
 * libcupti is loaded at run time (dlopen), so that cutune builds and runs
 * where it is absent; what could not be loaded or was refused comes back
 * as a state and one sentence, never as a failure of the worker. Not
 * thread-safe: the worker serves one request at a time.
 */
#ifndef CUTUNE_TUNER_CUPTI_PROFILE_H
#define CUTUNE_TUNER_CUPTI_PROFILE_H

#include <stddef.h>

#include "protocol.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cutune__cupti cutune__cupti;

/* One pass of the profiled work: `prepare` runs outside the profiled
 * range (resetting outputs, flushing the L2), `launch` inside it. Each
 * returns 0 or a cudaError_t. */
typedef struct cutune__profile_work {
    int (*prepare)(void *user);
    int (*launch)(void *user);
    void *user;
} cutune__profile_work;

/* Loads libcupti: $CUTUNE_CUPTI when set (and only it), else
 * libcupti.so.13, libcupti.so, then the toolkit's usual folders. NULL
 * with the reason in `why` when none loads or a function is missing.
 * The handle lives as long as the process. */
cutune__cupti *cutune__cupti_open(char *why, size_t why_len);

/* Profiles the work on `device` (the current context) for the metrics
 * `names[n]`: as many passes as the counters need. values[i] is NaN for a
 * metric this GPU does not have. *range_of_ours is 1 when CUPTI would
 * not take the kernel as its own range and a range around the launch was
 * profiled instead. Returns a cutune__counters state;
 * anything but CUTUNE__COUNTERS_READ comes with one sentence in `why`.
 * *launch_error is the cudaError_t of a failed prepare or launch (the
 * work's fault, not the profiler's), else 0. */
int cutune__cupti_profile(cutune__cupti *c, int device,
                          const char *const *names, size_t n,
                          const cutune__profile_work *work, double *values,
                          int *passes, int *range_of_ours, int *launch_error,
                          char *why, size_t why_len);

#ifdef __cplusplus
}
#endif

#endif
