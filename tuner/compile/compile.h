/* NVRTC compilation of kernel configurations. Works without a GPU. */
#ifndef CUTUNE_TUNER_COMPILE_H
#define CUTUNE_TUNER_COMPILE_H

#include <stddef.h>

#include "binary_cache.h"

/* One compilation. Inputs are borrowed; outputs are malloc'ed and owned by
 * the job until cutune__compile_job_clear. */
typedef struct cutune__compile_job {
    const char *source;
    const char *source_name;
    char *const *options;
    size_t n_options;
    cutune__binary_cache *cache; /* optional: results are looked up and
                                    stored there */
    const char *kernel_name;     /* optional: the kernel as the source names
                                    it ("k", "k<3>"), to lower */
    int refresh;                 /* 1: do not look the cache up; compile
                                    and replace the entry (one whose binary
                                    would not load) */
    /* results */
    int ok;           /* 1: cubin holds the binary */
    int nvrtc_failed; /* 1: NVRTC itself failed, not the program */
    char *cubin;
    size_t cubin_size;
    char *log; /* NVRTC's log, whole; "" when it said nothing */
    double seconds;
    int from_cache;     /* 1: the result came from the binary cache */
    int waited;         /* 1: ... after waiting for another job of this
                           process that was compiling the same key */
    char *lowered_name; /* kernel_name as the cubin knows it (C++ names are
                           mangled; extern "C" ones are not); NULL when no
                           kernel_name was given */
} cutune__compile_job;

/* Compiles one job. A compile error is a result (ok = 0, log kept), not a
 * failure: returns -1 only when NVRTC itself could not run or memory ran
 * out, with job->log saying why. */
int cutune__compile(cutune__compile_job *job);

/* Somewhere else to run NVRTC: NVRTC serializes the threads of one
 * process, so throughput beyond about two threads needs processes. Each
 * thread `slot` (0 <= slot < slots) calls `compile` for its jobs,
 * which fills the job's results like cutune__compile does (the binary
 * cache is consulted before and filled after, in this process). */
typedef struct cutune__compiler {
    int (*compile)(void *ctx, int slot, cutune__compile_job *job);
    void *ctx;
    int slots;
    /* Optional: slots shared by every thread compiling through this
     * compiler at once, whoever started it (a batch, the session's compile
     * queue). acquire waits for a free slot and returns it (-1: the
     * compiler is being shut down; the job fails as an NVRTC failure),
     * release gives it back; a job found in the binary cache takes none.
     * Without them, the caller's `slot` is used. */
    int (*acquire)(void *ctx);
    void (*release)(void *ctx, int slot);
} cutune__compiler;

/* cutune__compile through `remote` (NULL: in this process). */
int cutune__compile_with(cutune__compile_job *job,
                         const cutune__compiler *remote, int slot);

/* Compiles jobs[0..n) on up to `threads` threads (0: one per online core),
 * or through `remote` with one thread per slot when it is not NULL.
 * Returns -1 when any job returned -1. */
int cutune__compile_batch(cutune__compile_job *jobs, size_t n, int threads,
                          const cutune__compiler *remote);

void cutune__compile_job_clear(cutune__compile_job *job);

/* "MAJOR.MINOR" of the NVRTC in use. */
void cutune__nvrtc_version(char *buf, size_t len);

#endif
