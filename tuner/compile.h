/* NVRTC compilation of kernel configurations. Works without a GPU. */
#ifndef CUTUNE_TUNER_COMPILE_H
#define CUTUNE_TUNER_COMPILE_H

#include <stddef.h>

/* One compilation. Inputs are borrowed; outputs are malloc'ed and owned by
 * the job until cutune__compile_job_clear. */
typedef struct cutune__compile_job {
    const char *source;
    const char *source_name;
    char *const *options;
    size_t n_options;
    /* results */
    int ok;            /* 1: cubin holds the binary */
    int nvrtc_failed;  /* 1: NVRTC itself failed, not the program */
    char *cubin;
    size_t cubin_size;
    char *log;         /* NVRTC's log, whole; "" when it said nothing */
    double seconds;
} cutune__compile_job;

/* Compiles one job. A compile error is a result (ok = 0, log kept), not a
 * failure: returns -1 only when NVRTC itself could not run or memory ran
 * out, with job->log saying why. */
int cutune__compile(cutune__compile_job *job);

/* Compiles jobs[0..n) on up to `threads` threads (0: one per online core).
 * Returns -1 when any job returned -1. */
int cutune__compile_batch(cutune__compile_job *jobs, size_t n, int threads);

void cutune__compile_job_clear(cutune__compile_job *job);

/* "MAJOR.MINOR" of the NVRTC in use. */
void cutune__nvrtc_version(char *buf, size_t len);

#endif
