#define _GNU_SOURCE

#include "compile_remote.h"

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

#include "protocol.h"
#include "util.h"
#include "worker_client.h"

struct cutune__compile_procs {
    char *worker_path;
    cutune__worker_client *workers;
    int n_workers;          /* processes: twice the threads of a pool */
    unsigned char *busy;    /* per process: a compile in progress */
    int *pidfd;             /* per process: a pidfd of it, or -1 */
    pid_t *pidfd_of;        /* the pid each pidfd was opened for */
    unsigned char *doomed;  /* per process: killed by a cancel */
    unsigned char *in_call; /* per process: a COMPILE request out */
    int cancelled;          /* cutune__compile_procs_cancel until resume */
    pthread_mutex_t lock;
    pthread_cond_t freed;
    cutune__compiler compiler;
};

/* Any idle process, waiting for one when all are busy. There are twice
 * as many processes as a pool has threads, so that a batch the strategy
 * ended early can finish its running compiles (into the binary cache)
 * while the next batch compiles: its first job does not wait for them. */
static int acquire(void *ctx)
{
    cutune__compile_procs *p = ctx;
    pthread_mutex_lock(&p->lock);
    for (;;) {
        if (p->cancelled) {
            pthread_mutex_unlock(&p->lock);
            return -1;
        }
        for (int i = 0; i < p->n_workers; i++)
            if (!p->busy[i]) {
                p->busy[i] = 1;
                pthread_mutex_unlock(&p->lock);
                return i;
            }
        pthread_cond_wait(&p->freed, &p->lock);
    }
}

static void release(void *ctx, int slot)
{
    cutune__compile_procs *p = ctx;
    pthread_mutex_lock(&p->lock);
    p->busy[slot] = 0;
    pthread_cond_broadcast(&p->freed);
    pthread_mutex_unlock(&p->lock);
}

/* NVRTC on a large kernel can take tens of seconds; a process that takes
 * longer is presumed stuck. */
#define COMPILE_TIMEOUT_S 300.0

static void fail_job(cutune__compile_job *job, const char *why)
{
    job->ok = 0;
    job->nvrtc_failed = 1;
    free(job->log);
    job->log = cutune__strdup_printf("NVRTC compile process: %s", why);
}

/* A cancel kills the process of a slot whose COMPILE request is out
 * (in_call, set and cleared under the lock with the check for a cancel),
 * through a pidfd: it names that process even once it is reaped, where a
 * pid could by then be another process's. Only the slot's own thread
 * opens, closes or reaps. Where the kernel gives no pidfd (before Linux
 * 5.3, or a sandbox that forbids it), a cancel cannot kill and the
 * compile runs to its end. */
static int open_pidfd(pid_t pid)
{
#ifdef SYS_pidfd_open
    return (int)syscall(SYS_pidfd_open, pid, 0);
#else
    (void)pid;
    return -1;
#endif
}

static int signal_pidfd(int fd)
{
#ifdef SYS_pidfd_send_signal
    return (int)syscall(SYS_pidfd_send_signal, fd, SIGKILL, NULL, 0);
#else
    (void)fd;
    return -1;
#endif
}

static void forget_pidfd(cutune__compile_procs *p, int slot)
{
    pthread_mutex_lock(&p->lock);
    if (p->pidfd[slot] >= 0)
        close(p->pidfd[slot]);
    p->pidfd[slot] = -1;
    p->pidfd_of[slot] = 0;
    pthread_mutex_unlock(&p->lock);
}

/* Makes sure the slot's process runs and can be killed by a cancel.
 * Returns 0, or -1 (the job failed) when it could not start or a cancel
 * came first. */
static int ready(cutune__compile_procs *p, int slot, cutune__compile_job *job)
{
    cutune__worker_client *w = &p->workers[slot];
    pthread_mutex_lock(&p->lock);
    int cancelled = p->cancelled;
    pthread_mutex_unlock(&p->lock);
    if (cancelled) {
        fail_job(job, "compilation cancelled");
        return -1;
    }
    if (w->pid == 0 && cutune__worker_start(w, p->worker_path) != 0) {
        fail_job(job, w->message);
        return -1;
    }
    if (p->pidfd_of[slot] == w->pid)
        return 0;
    forget_pidfd(p, slot);
    int fd = open_pidfd(w->pid);
    if (fd >= 0) {
        pthread_mutex_lock(&p->lock);
        p->pidfd[slot] = fd;
        p->pidfd_of[slot] = w->pid;
        pthread_mutex_unlock(&p->lock);
    }
    return 0;
}

/* Marks the slot's request as out, unless a cancel came first (then the
 * job fails and 0 is returned). */
static int begin_call(cutune__compile_procs *p, int slot,
                      cutune__compile_job *job)
{
    pthread_mutex_lock(&p->lock);
    int cancelled = p->cancelled;
    if (!cancelled)
        p->in_call[slot] = 1;
    pthread_mutex_unlock(&p->lock);
    if (cancelled)
        fail_job(job, "compilation cancelled");
    return !cancelled;
}

static int compile_in_process(void *ctx, int slot, cutune__compile_job *job)
{
    cutune__compile_procs *p = ctx;
    cutune__worker_client *w = &p->workers[slot];
    if (ready(p, slot, job) != 0)
        return -1;
    size_t src_len = strlen(job->source), name_len = strlen(job->source_name);
    size_t opt_len = 0;
    for (size_t i = 0; i < job->n_options; i++)
        opt_len += strlen(job->options[i]) + 1;
    const char *kernel = job->kernel_name ? job->kernel_name : "";
    size_t kernel_len = strlen(kernel);
    cutune__compile_request q = {
        src_len, (uint32_t)name_len,   (uint32_t)job->n_options,
        opt_len, (uint32_t)kernel_len, 0};
    size_t blen = src_len + 1 + name_len + 1 + opt_len + kernel_len + 1;
    char *block = malloc(blen);
    if (!block) {
        fail_job(job, "out of memory");
        return -1;
    }
    char *at = block;
    memcpy(at, job->source, src_len + 1);
    at += src_len + 1;
    memcpy(at, job->source_name, name_len + 1);
    at += name_len + 1;
    for (size_t i = 0; i < job->n_options; i++) {
        size_t len = strlen(job->options[i]) + 1;
        memcpy(at, job->options[i], len);
        at += len;
    }
    memcpy(at, kernel, kernel_len + 1);
    void *reply = NULL;
    size_t size = 0;
    if (!begin_call(p, slot, job)) {
        free(block);
        return -1;
    }
    cutune__call_result cr =
        cutune__worker_call(w, CUTUNE__MSG_COMPILE, &q, sizeof q, block, blen,
                            &reply, &size, COMPILE_TIMEOUT_S);
    free(block);
    pthread_mutex_lock(&p->lock);
    int doomed = p->doomed[slot];
    p->doomed[slot] = 0;
    p->in_call[slot] = 0;
    pthread_mutex_unlock(&p->lock);
    if (w->pid == 0) {
        /* The call failed and reaped the process. */
        forget_pidfd(p, slot);
    } else if (doomed) {
        /* Killed by a cancel after it replied: reap it now, so that the
         * slot's next job starts a new process. */
        cutune__worker_stop(w);
        forget_pidfd(p, slot);
    }
    const cutune__compile_reply *r = reply;
    if (cr != CUTUNE__CALL_OK || size < sizeof *r ||
        size != sizeof *r + r->cubin_size + r->log_size + r->lowered_size) {
        /* A compiler that crashed or hung fails this configuration; the
         * next job of this slot starts a new process. */
        fail_job(job, cr != CUTUNE__CALL_OK ? w->message : "bad reply");
        free(reply);
        return -1;
    }
    const char *data = (const char *)(r + 1);
    job->ok = r->ok;
    job->nvrtc_failed = r->nvrtc_failed;
    if (r->ok && r->cubin_size) {
        job->cubin = malloc(r->cubin_size);
        if (job->cubin) {
            memcpy(job->cubin, data, r->cubin_size);
            job->cubin_size = r->cubin_size;
        } else {
            job->ok = 0;
        }
    }
    if (r->log_size)
        job->log = cutune__strdup_printf("%.*s", (int)(r->log_size - 1),
                                         data + r->cubin_size);
    else
        job->log = cutune__strdup_printf("%s", r->head.message);
    if (r->lowered_size) {
        job->lowered_name =
            cutune__strdup_printf("%.*s", (int)(r->lowered_size - 1),
                                  data + r->cubin_size + r->log_size);
        if (!job->lowered_name)
            job->ok = 0;
    }
    int rc = job->nvrtc_failed || !job->log || (r->ok && !job->ok) ? -1 : 0;
    free(reply);
    return rc;
}

cutune__compile_procs *cutune__compile_procs_create(const char *worker_path,
                                                    int n)
{
    cutune__compile_procs *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    if (n < 1)
        n = 1;
    p->n_workers = 2 * n;
    p->worker_path = strdup(worker_path);
    p->workers = calloc((size_t)p->n_workers, sizeof *p->workers);
    p->busy = calloc((size_t)p->n_workers, 1);
    p->doomed = calloc((size_t)p->n_workers, 1);
    p->in_call = calloc((size_t)p->n_workers, 1);
    p->pidfd = malloc((size_t)p->n_workers * sizeof *p->pidfd);
    for (int i = 0; p->pidfd && i < p->n_workers; i++)
        p->pidfd[i] = -1;
    p->pidfd_of = calloc((size_t)p->n_workers, sizeof *p->pidfd_of);
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->freed, NULL);
    if (!p->worker_path || !p->workers || !p->busy || !p->doomed ||
        !p->in_call || !p->pidfd || !p->pidfd_of) {
        cutune__compile_procs_destroy(p);
        return NULL;
    }
    for (int i = 0; i < p->n_workers; i++)
        p->workers[i].fd = -1;
    p->compiler.compile = compile_in_process;
    p->compiler.ctx = p;
    p->compiler.slots = n;
    p->compiler.acquire = acquire;
    p->compiler.release = release;
    return p;
}

void cutune__compile_procs_destroy(cutune__compile_procs *p)
{
    if (!p)
        return;
    if (p->workers)
        cutune__worker_stop_all(p->workers, (size_t)p->n_workers);
    for (int i = 0; p->pidfd && i < p->n_workers; i++)
        if (p->pidfd[i] >= 0)
            close(p->pidfd[i]);
    pthread_cond_destroy(&p->freed);
    pthread_mutex_destroy(&p->lock);
    free(p->busy);
    free(p->doomed);
    free(p->in_call);
    free(p->pidfd);
    free(p->pidfd_of);
    free(p->workers);
    free(p->worker_path);
    free(p);
}

void cutune__compile_procs_cancel(cutune__compile_procs *p)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->lock);
    for (int i = 0; i < p->n_workers; i++)
        if (p->in_call[i] && p->pidfd[i] >= 0 &&
            signal_pidfd(p->pidfd[i]) == 0)
            p->doomed[i] = 1;
    p->cancelled = 1;
    pthread_cond_broadcast(&p->freed);
    pthread_mutex_unlock(&p->lock);
}

void cutune__compile_procs_resume(cutune__compile_procs *p)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->lock);
    p->cancelled = 0;
    pthread_mutex_unlock(&p->lock);
}

const cutune__compiler *
cutune__compile_procs_compiler(const cutune__compile_procs *p)
{
    return p ? &p->compiler : NULL;
}
