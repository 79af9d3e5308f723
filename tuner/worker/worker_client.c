#define _GNU_SOURCE

#include "worker_client.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "util.h"

#ifndef CUTUNE_INSTALLED_WORKER
#define CUTUNE_INSTALLED_WORKER "/usr/local/libexec/cutune/cutune-worker"
#endif
#ifndef CUTUNE_LIBDIR_TO_WORKER
#define CUTUNE_LIBDIR_TO_WORKER "../libexec/cutune"
#endif

extern char **environ;

/* The folder of `file` (resolved), malloc'ed; NULL if it cannot be had. */
static char *folder_of(const char *file)
{
    char *real = file ? realpath(file, NULL) : NULL;
    char *slash = real ? strrchr(real, '/') : NULL;
    if (!slash) {
        free(real);
        return NULL;
    }
    *slash = '\0';
    return real;
}

/* `dir`/`rel`/cutune-worker when it can be run, malloc'ed; else NULL. */
static char *worker_in(const char *dir, const char *rel)
{
    if (!dir)
        return NULL;
    char *path = rel ? cutune__strdup_printf("%s/%s/cutune-worker", dir, rel)
                     : cutune__strdup_printf("%s/cutune-worker", dir);
    if (path && access(path, X_OK) == 0)
        return path;
    free(path);
    return NULL;
}

char *cutune__worker_locate(const char *configured)
{
    if (configured && *configured)
        return strdup(configured);
    const char *env = getenv("CUTUNE_WORKER");
    if (env && *env)
        return strdup(env);
    /* The library's own file: a program that loaded libcutune.so from
     * anywhere (an rpath, ctypes) runs the worker installed with it, even
     * in a tree that was moved. Linked statically, the library is the
     * program, whose path dladdr may only know as argv[0]: then the
     * program's own path stands in. */
    char *exe_dir = folder_of("/proc/self/exe");
    Dl_info info;
    char *lib_dir = NULL;
    if (dladdr((void *)cutune__worker_locate, &info) != 0)
        lib_dir = folder_of(info.dli_fname);
    if (!lib_dir && exe_dir)
        lib_dir = strdup(exe_dir);
    char *found = worker_in(exe_dir, NULL);
    if (!found)
        found = worker_in(lib_dir, NULL);
    if (!found)
        found = worker_in(lib_dir, CUTUNE_LIBDIR_TO_WORKER);
    free(exe_dir);
    free(lib_dir);
    return found ? found : strdup(CUTUNE_INSTALLED_WORKER);
}

int cutune__worker_start(cutune__worker_client *w, const char *path)
{
    int sv[2];
    w->pid = 0;
    w->fd = -1;
    w->message[0] = '\0';
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
        snprintf(w->message, sizeof w->message, "socketpair: %s",
                 strerror(errno));
        return -1;
    }
    /* Keep the child's end off the fd it is dup'ed onto, because dup2
     * onto itself would leave close-on-exec set. */
    int child = sv[1];
    if (child == CUTUNE__WORKER_FD) {
        child = fcntl(sv[1], F_DUPFD_CLOEXEC, CUTUNE__WORKER_FD + 1);
        close(sv[1]);
        if (child < 0) {
            close(sv[0]);
            snprintf(w->message, sizeof w->message, "fcntl: %s",
                     strerror(errno));
            return -1;
        }
    }
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, child, CUTUNE__WORKER_FD);
    /* The worker's own output would mix with the user's terminal; it
     * reports everything through the protocol instead. */
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    char *argv[] = {(char *)"cutune-worker", NULL};
    pid_t pid;
    int err = posix_spawn(&pid, path, &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(child);
    if (err != 0) {
        close(sv[0]);
        snprintf(w->message, sizeof w->message,
                 "cannot start the GPU worker %s: %s", path, strerror(err));
        return -1;
    }
    w->pid = pid;
    w->fd = sv[0];
    return 0;
}

/* Waits for the worker to exit, up to `seconds`, and describes how. */
static int reap(cutune__worker_client *w, double seconds, char *how,
                size_t len)
{
    double end = cutune__now() + seconds;
    for (;;) {
        int status;
        pid_t r = waitpid(w->pid, &status, WNOHANG);
        if (r == w->pid) {
            if (WIFSIGNALED(status))
                snprintf(how, len, "killed by signal %d (%s)",
                         WTERMSIG(status), strsignal(WTERMSIG(status)));
            else
                snprintf(how, len, "exited with status %d",
                         WEXITSTATUS(status));
            return 0;
        }
        if (r < 0) {
            snprintf(how, len, "lost (%s)", strerror(errno));
            return 0;
        }
        if (cutune__now() >= end)
            return -1;
        struct timespec ts = {0, 2000000};
        nanosleep(&ts, NULL);
    }
}

static void kill_and_reap(cutune__worker_client *w, char *how, size_t len)
{
    kill(w->pid, SIGKILL);
    if (reap(w, 10.0, how, len) != 0)
        snprintf(how, len, "did not exit after SIGKILL");
}

static void closed(cutune__worker_client *w)
{
    if (w->fd >= 0)
        close(w->fd);
    w->fd = -1;
    w->pid = 0;
}

cutune__call_result cutune__worker_call(cutune__worker_client *w,
                                        uint32_t type, const void *a,
                                        size_t alen, const void *b,
                                        size_t blen, void **reply,
                                        size_t *reply_size, double timeout_s)
{
    char how[160];
    *reply = NULL;
    *reply_size = 0;
    if (w->pid == 0) {
        snprintf(w->message, sizeof w->message,
                 "the GPU worker is not "
                 "running");
        return CUTUNE__CALL_DIED;
    }
    int rc = cutune__msg_send(w->fd, type, a, alen, b, blen);
    uint32_t rtype = 0;
    if (rc == 0)
        rc = cutune__msg_recv(w->fd, &rtype, reply, reply_size, timeout_s);
    if (rc == 0 && rtype == type)
        return CUTUNE__CALL_OK;
    if (rc == -3)
        return CUTUNE__CALL_NOMEM;
    free(*reply);
    *reply = NULL;
    if (rc == -2) {
        kill_and_reap(w, how, sizeof how);
        snprintf(w->message, sizeof w->message,
                 "no reply from the GPU worker within %.1f s; it was "
                 "stopped",
                 timeout_s);
        closed(w);
        return CUTUNE__CALL_TIMEOUT;
    }
    /* The peer is gone or spoke nonsense: give it a moment to finish
     * exiting, so the message can say how it ended. */
    if (reap(w, 2.0, how, sizeof how) != 0)
        kill_and_reap(w, how, sizeof how);
    snprintf(w->message, sizeof w->message, "the GPU worker %s", how);
    closed(w);
    return CUTUNE__CALL_DIED;
}

static void ask_quit(cutune__worker_client *w)
{
    cutune__msg_send(w->fd, CUTUNE__MSG_QUIT, NULL, 0, NULL, 0);
    shutdown(w->fd, SHUT_WR);
}

static void wait_quit(cutune__worker_client *w)
{
    char how[160];
    if (reap(w, 5.0, how, sizeof how) != 0)
        kill_and_reap(w, how, sizeof how);
    closed(w);
}

void cutune__worker_stop(cutune__worker_client *w)
{
    cutune__worker_stop_all(w, 1);
}

void cutune__worker_stop_all(cutune__worker_client *w, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (w[i].pid != 0)
            ask_quit(&w[i]);
    for (size_t i = 0; i < n; i++)
        if (w[i].pid != 0)
            wait_quit(&w[i]);
}
