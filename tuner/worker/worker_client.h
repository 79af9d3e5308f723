/* The tuning process's side of a GPU worker: start it, talk to it, notice
 * when it dies or hangs, and stop it. */
#ifndef CUTUNE_TUNER_WORKER_CLIENT_H
#define CUTUNE_TUNER_WORKER_CLIENT_H

#include <stddef.h>
#include <sys/types.h>

#include "protocol.h"

typedef struct cutune__worker_client {
    pid_t pid; /* 0 when not running */
    int fd;
    char message[512]; /* why the last call failed */
} cutune__worker_client;

typedef enum cutune__call_result {
    CUTUNE__CALL_OK = 0,
    CUTUNE__CALL_DIED = -1,    /* the worker exited or broke the protocol */
    CUTUNE__CALL_TIMEOUT = -2, /* no reply in time; the worker was killed */
    CUTUNE__CALL_NOMEM = -3
} cutune__call_result;

/* Starts `path` with its socket on CUTUNE__WORKER_FD. 0 or -1. */
int cutune__worker_start(cutune__worker_client *w, const char *path);

/* Sends a request and waits up to timeout_s (< 0: forever) for its reply,
 * a malloc'ed payload the caller frees. On DIED or TIMEOUT the worker has
 * been reaped (killed first if needed) and w->message says what happened. */
cutune__call_result cutune__worker_call(cutune__worker_client *w,
                                        uint32_t type, const void *a,
                                        size_t alen, const void *b,
                                        size_t blen, void **reply,
                                        size_t *reply_size, double timeout_s);

/* Asks the worker to quit, then kills it if it does not. */
void cutune__worker_stop(cutune__worker_client *w);

/* Stops n workers together: all are asked to quit before any is waited
 * for, so that they exit side by side (one by one, 32 compile processes
 * took 0.15 s). */
void cutune__worker_stop_all(cutune__worker_client *w, size_t n);

/* The worker program to run: `configured` when given, else $CUTUNE_WORKER,
 * else cutune-worker beside the running executable, else beside the
 * library (a shared libcutune's own file), else where the installation
 * the library belongs to keeps it (libexec/cutune, found from the
 * library's folder), else the configured install path. Returns a malloc'ed
 * path. */
char *cutune__worker_locate(const char *configured);

#endif
