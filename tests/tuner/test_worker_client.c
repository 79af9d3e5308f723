/* The tuning process's handling of its GPU worker, without a GPU: a worker
 * that cannot start, one that dies, one that hangs, and workers released
 * at the end of a tune. */
#define _POSIX_C_SOURCE 200809L

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "util.h"
#include "worker_client.h"

/* A script standing in for a worker: `body` runs with the socket on
 * CUTUNE__WORKER_FD. Returns its malloc'ed path. */
static char *fake_worker(const char *dir, const char *name, const char *body)
{
    char *path = malloc(strlen(dir) + strlen(name) + 2);
    sprintf(path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (f) {
        fprintf(f, "#!/bin/sh\n%s\n", body);
        fclose(f);
    }
    chmod(path, 0755);
    return path;
}

/* Released workers are not waited for, yet none is left behind: a later
 * release or reap collects the ones that exited, and a reap with a wait
 * kills one that does not. */
static void check_release(void)
{
    char dir[] = "/tmp/cutune-test-release-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    /* Exits when the tuner's side of the socket closes, as the worker
     * does after QUIT; the sleep stands for the driver's teardown. */
    char *slow = fake_worker(dir, "slow", "cat <&3 >/dev/null; sleep 0.3");
    char *stuck = fake_worker(dir, "stuck", "exec sleep 30");
    cutune__worker_client w;
    pid_t pids[10];

    CHECK_INT(cutune__worker_start(&w, slow), 0);
    pids[0] = w.pid;
    double t0 = cutune__now();
    cutune__worker_release(&w);
    CHECK(cutune__now() - t0 < 0.2); /* not waited for */
    CHECK_INT(w.pid, 0);
    CHECK_INT(w.fd, -1);
    CHECK(kill(pids[0], 0) == 0); /* still there */
    cutune__worker_reap_released(5.0);
    CHECK(kill(pids[0], 0) != 0); /* reaped: no zombie */

    /* More released than the list holds: the later ones are stopped the
     * old way, and everything is reaped in the end. */
    for (size_t i = 0; i < 10; i++) {
        CHECK_INT(cutune__worker_start(&w, slow), 0);
        pids[i] = w.pid;
        cutune__worker_release(&w);
    }
    cutune__worker_reap_released(5.0);
    for (size_t i = 0; i < 10; i++)
        CHECK(kill(pids[i], 0) != 0);

    /* One that ignores the request to quit is killed by a reap that
     * waits, and left alone by one that does not. */
    CHECK_INT(cutune__worker_start(&w, stuck), 0);
    pids[0] = w.pid;
    cutune__worker_release(&w);
    cutune__worker_reap_released(0);
    CHECK(kill(pids[0], 0) == 0);
    t0 = cutune__now();
    cutune__worker_reap_released(0.2);
    CHECK(cutune__now() - t0 < 5.0);
    CHECK(kill(pids[0], 0) != 0);

    unlink(slow);
    unlink(stuck);
    rmdir(dir);
    free(slow);
    free(stuck);
}

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

    check_release();

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
