/* The measuring device a session tunes on: the CUDA GPU worker
 * (session_worker.c, measure.c) or a replayed device answering from a T4
 * recording (replay_device.c). One is picked when the session is created
 * (`replay_devices` given or not), as Redis's ae.c picks its event
 * backend in one place; the rest of the session calls through it and
 * never asks which one it has.
 */
#ifndef CUTUNE_SESSION_DEVICE_H
#define CUTUNE_SESSION_DEVICE_H

#include <stddef.h>

#include "cutune/cutune.h"

struct cutune__mslot;
struct eval_record;
struct cutune__compile_job;

typedef struct cutune__device {
    const char *kind; /* in messages: "CUDA", "replayed" */
    /* Whether it runs kernels, so needs NVRTC's binaries (the compile
     * queue, the final round's compiles) and a problem loaded whole. A
     * device that does not also has no clock to win on: the search stays
     * batch by batch there, the deterministic harness of that path. */
    int runs_kernels;
    /* The devices there are, into s->props and s->devices. */
    cutune_status (*list)(cutune_session *s);
    /* Everything before the search (devices chosen, reference, the first
     * slot brought up); *start the configuration the search starts at. */
    cutune_status (*start)(cutune_session *s, size_t *start);
    /* A slot ready to measure; again after its worker died. */
    cutune_status (*bring_up)(cutune_session *s, struct cutune__mslot *slot,
                              int keep_reference);
    /* One configuration measured on a slot (`job` its binary, or NULL on a
     * device that runs no kernels); `final`: the final round's. */
    void (*measure)(cutune_session *s, struct cutune__mslot *slot,
                    struct eval_record *e, struct cutune__compile_job *job,
                    int final);
} cutune__device;

extern const cutune__device cutune__device_cuda;   /* tune.c */
extern const cutune__device cutune__device_replay; /* replay_device.c */

#endif
