/* Compile processes: cutune-worker programs that only run NVRTC, one per
 * compile thread. NVRTC serializes the threads of one process (measured on
 * a 16-core machine: about 60 compilations/s from any number of threads,
 * against 290/s from 16 processes), so parallel compilation needs
 * processes. These never initialize CUDA. */
#ifndef CUTUNE_TUNER_COMPILE_REMOTE_H
#define CUTUNE_TUNER_COMPILE_REMOTE_H

#include "compile.h"

typedef struct cutune__compile_procs cutune__compile_procs;

/* Prepares `n` slots running `worker_path`; processes start on first use.
 * NULL when memory ran out. */
cutune__compile_procs *cutune__compile_procs_create(const char *worker_path,
                                                    int n);
void cutune__compile_procs_destroy(cutune__compile_procs *p);

/* The compiler to give cutune__compile_start/batch. */
const cutune__compiler *cutune__compile_procs_compiler(
    const cutune__compile_procs *p);

#endif
