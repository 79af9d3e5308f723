/* Compile processes: cutune-worker programs that only run NVRTC, two per
 * thread of a compile pool. NVRTC serializes the threads of one process
 * (measured on a 16-core machine: about 60 compilations/s from any number of
 * threads, against 290/s from 16 processes), so parallel compilation needs
 * processes. These never initialize CUDA. */
#ifndef CUTUNE_TUNER_COMPILE_REMOTE_H
#define CUTUNE_TUNER_COMPILE_REMOTE_H

#include "compile.h"

typedef struct cutune__compile_procs cutune__compile_procs;

/* Prepares compilation for pools of `n` threads through 2n processes
 * running `worker_path` (started on first use; see acquire() in the .c).
 * NULL when memory ran out. */
cutune__compile_procs *cutune__compile_procs_create(const char *worker_path,
                                                    int n);
void cutune__compile_procs_destroy(cutune__compile_procs *p);

/* Kills the processes busy compiling, and fails every job that asks for
 * a process until cutune__compile_procs_resume (as NVRTC failures, which
 * the binary cache does not keep; the next job of a killed slot starts a
 * new process). For ending work nobody waits for any more. */
void cutune__compile_procs_cancel(cutune__compile_procs *p);
void cutune__compile_procs_resume(cutune__compile_procs *p);

/* The compiler to give cutune__compile_with/batch. */
const cutune__compiler *
cutune__compile_procs_compiler(const cutune__compile_procs *p);

#endif
