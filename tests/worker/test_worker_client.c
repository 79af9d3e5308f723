/* The tuning process's handling of its GPU worker, without a GPU: a worker
 * that cannot start, one that dies, one that hangs. */
#define _POSIX_C_SOURCE 200809L

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "check.h"
#include "util.h"
#include "worker_client.h"

int main(void)
{
    cutune__worker_client w;
    void *reply;
    size_t size;

    CHECK_INT(cutune__worker_start(&w, "/no/such/cutune-worker"), -1);
    CHECK_CONTAINS(w.message, "/no/such/cutune-worker");

    /* A worker that exits at once: the call reports how it ended. */
    CHECK_INT(cutune__worker_start(&w, "/bin/false"), 0);
    CHECK_INT(cutune__worker_call(&w, CUTUNE__MSG_DEVICES, NULL, 0, NULL, 0,
                                  &reply, &size, 10.0),
              CUTUNE__CALL_DIED);
    CHECK_CONTAINS(w.message, "exited with status 1");
    CHECK_INT(w.pid, 0);
    CHECK_INT(cutune__worker_call(&w, CUTUNE__MSG_DEVICES, NULL, 0, NULL, 0,
                                  &reply, &size, 10.0),
              CUTUNE__CALL_DIED);
    CHECK_CONTAINS(w.message, "not running");

    const char *path = getenv("CUTUNE_WORKER");
    if (!path) {
        printf("SKIPPED: the real worker (CUTUNE_WORKER is not set)\n");
        return check_finish();
    }

    /* The real worker answers DEVICES with or without a GPU. */
    CHECK_INT(cutune__worker_start(&w, path), 0);
    CHECK_INT(cutune__worker_call(&w, CUTUNE__MSG_DEVICES, NULL, 0, NULL, 0,
                                  &reply, &size, 60.0),
              CUTUNE__CALL_OK);
    CHECK(size >= sizeof(cutune__devices_reply));
    cutune__devices_reply *dr = reply;
    if (dr && size >= sizeof *dr && dr->count == 0)
        CHECK(dr->head.message[0] != '\0');
    free(reply);

    /* A worker that stops answering is killed after the time limit. */
    pid_t pid = w.pid;
    double t0 = cutune__now();
    CHECK_INT(cutune__worker_call(&w, CUTUNE__MSG_HANG, NULL, 0, NULL, 0,
                                  &reply, &size, 0.5),
              CUTUNE__CALL_TIMEOUT);
    double waited = cutune__now() - t0;
    CHECK(waited >= 0.45 && waited < 5.0);
    CHECK_CONTAINS(w.message, "no reply");
    CHECK_INT(w.pid, 0);
    /* It is gone: reaped, not left as a zombie. */
    CHECK(kill(pid, 0) != 0);

    /* A fresh worker carries on after the hung one. */
    CHECK_INT(cutune__worker_start(&w, path), 0);
    CHECK_INT(cutune__worker_call(&w, CUTUNE__MSG_DEVICES, NULL, 0, NULL, 0,
                                  &reply, &size, 60.0),
              CUTUNE__CALL_OK);
    free(reply);
    /* A worker killed from outside mid-call is reported, not fatal. */
    kill(w.pid, SIGKILL);
    CHECK_INT(cutune__worker_call(&w, CUTUNE__MSG_DEVICES, NULL, 0, NULL, 0,
                                  &reply, &size, 10.0),
              CUTUNE__CALL_DIED);
    CHECK_CONTAINS(w.message, "signal 9");
    cutune__worker_stop(&w);
    return check_finish();
}
