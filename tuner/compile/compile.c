#define _POSIX_C_SOURCE 200809L

#include "compile.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <unistd.h>

#include <nvrtc.h>

#include "util.h"

static char *dup_text(const char *s)
{
    size_t n = strlen(s);
    char *d = malloc(n + 1);
    if (d)
        memcpy(d, s, n + 1);
    return d;
}

/* Looks the job up in its binary cache; 1 on a hit. */
static int from_cache(cutune__compile_job *job, char *key)
{
    int ok;
    char *data;
    size_t size;
    if (!key || !cutune__binary_cache_get(job->cache, key, &ok, &data, &size))
        return 0;
    /* A cubin entry starts with the lowered kernel name and its NUL. */
    size_t name_len = ok ? strnlen(data, size) : 0;
    if (ok && name_len == size) {
        free(data);
        return 0;
    }
    job->ok = ok;
    job->from_cache = 1;
    if (ok) {
        job->lowered_name = *data ? dup_text(data) : NULL;
        job->cubin_size = size - name_len - 1;
        job->cubin = malloc(job->cubin_size ? job->cubin_size : 1);
        if (job->cubin)
            memcpy(job->cubin, data + name_len + 1, job->cubin_size);
        int named = *data != '\0';
        free(data);
        job->log = dup_text("");
        if (!job->cubin || !job->log || (named && !job->lowered_name))
            job->ok = 0;
    } else {
        job->log = data;
    }
    return 1;
}

static int compile_uncached(cutune__compile_job *job);

/* Keys being compiled in this process, per binary cache. A job that
 * misses the cache while another compiles the same key waits for that one
 * and takes its result from the cache, instead of compiling it a second
 * time side by side: a batch a strategy ends early leaves its compiles
 * running, and the next batch often proposes some of them again. */
typedef struct inflight {
    const cutune__binary_cache *cache;
    char *key;
    struct inflight *next;
} inflight;
static pthread_mutex_t inflight_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t inflight_ended = PTHREAD_COND_INITIALIZER;
static inflight *inflight_list;

static inflight **inflight_find(const cutune__binary_cache *cache,
                                const char *key)
{
    inflight **at = &inflight_list;
    while (*at && ((*at)->cache != cache || strcmp((*at)->key, key) != 0))
        at = &(*at)->next;
    return at;
}

static int pool_let_go(cutune__compile_pool *pl);

/* Claims `key` for this job's compile: waits while another job holds it
 * (unless `wait` is 0) and returns 1 when the cache then has the result
 * (the job is filled from it), -1 when the job's pool `pl` was let go
 * meanwhile (not wanted: not compiled), 0 when the job should compile,
 * with `*mine` the claim to give back (NULL where memory ran out: it
 * compiles unclaimed). */
static int inflight_claim(cutune__compile_job *job, char *key, int wait,
                          cutune__compile_pool *pl, inflight **mine)
{
    *mine = NULL;
    if (pl && pool_let_go(pl))
        return -1; /* no claim for others to wait on */
    pthread_mutex_lock(&inflight_lock);
    for (;;) {
        if (!wait || !*inflight_find(job->cache, key))
            break;
        while (*inflight_find(job->cache, key))
            pthread_cond_wait(&inflight_ended, &inflight_lock);
        pthread_mutex_unlock(&inflight_lock);
        if (from_cache(job, key)) {
            job->waited = 1;
            return 1;
        }
        if (pl && pool_let_go(pl))
            return -1;
        /* Not stored (NVRTC itself failed, or was cancelled): ours to
         * compile, unless someone else claimed it meanwhile. */
        pthread_mutex_lock(&inflight_lock);
    }
    inflight *f = malloc(sizeof *f);
    if (f && (f->key = dup_text(key)) != NULL) {
        f->cache = job->cache;
        f->next = inflight_list;
        inflight_list = f;
        *mine = f;
    } else {
        free(f);
    }
    pthread_mutex_unlock(&inflight_lock);
    return 0;
}

static void inflight_release(inflight *mine)
{
    if (!mine)
        return;
    pthread_mutex_lock(&inflight_lock);
    inflight **at = &inflight_list;
    while (*at != mine)
        at = &(*at)->next;
    *at = mine->next;
    pthread_cond_broadcast(&inflight_ended);
    pthread_mutex_unlock(&inflight_lock);
    free(mine->key);
    free(mine);
}

int cutune__compile(cutune__compile_job *job)
{
    return cutune__compile_with(job, NULL, 0);
}

/* A job no longer wanted: an NVRTC failure, which the cache does not
 * keep. */
static int cancelled(cutune__compile_job *job)
{
    job->nvrtc_failed = 1;
    job->log = dup_text("compilation cancelled");
    return -1;
}

/* cutune__compile_with for a job of pool `pl` (NULL: none): a job whose
 * pool was let go while it waited for a process is not compiled. */
static int compile_for(cutune__compile_job *job,
                       const cutune__compiler *remote, int slot,
                       cutune__compile_pool *pl);

int cutune__compile_with(cutune__compile_job *job,
                         const cutune__compiler *remote, int slot)
{
    return compile_for(job, remote, slot, NULL);
}

static int compile_for(cutune__compile_job *job,
                       const cutune__compiler *remote, int slot,
                       cutune__compile_pool *pl)
{
    double t0 = cutune__now();
    job->ok = 0;
    job->cubin = NULL;
    job->cubin_size = 0;
    job->log = NULL;
    job->from_cache = 0;
    job->nvrtc_failed = 0;
    job->lowered_name = NULL;
    job->waited = 0;
    char *key = NULL;
    inflight *mine = NULL;
    int claim = 0;
    if (job->cache) {
        char version[16];
        cutune__nvrtc_version(version, sizeof version);
        char *base = cutune__binary_cache_key(job->source, job->options,
                                              job->n_options, version);
        key = base ? cutune__strdup_printf("kernel %s\n%s",
                                           job->kernel_name
                                               ? job->kernel_name
                                               : "",
                                           base)
                   : NULL;
        free(base);
        if (!job->refresh && from_cache(job, key)) {
            free(key);
            job->seconds = cutune__now() - t0;
            return 0;
        }
        /* A refresh replaces an entry that would not load: it compiles
         * whatever others are doing (a job that finds the old entry
         * meanwhile takes it, as it would have without the refresh). */
        claim = key ? inflight_claim(job, key, !job->refresh, pl, &mine) : 0;
        if (claim > 0) {
            free(key);
            job->seconds = cutune__now() - t0;
            return 0;
        }
    }
    int rc;
    if (claim < 0) {
        rc = cancelled(job);
    } else if (!remote) {
        rc = compile_uncached(job);
    } else if (remote->acquire) {
        int shared = remote->acquire(remote->ctx);
        if (shared >= 0 && pl && pool_let_go(pl)) {
            remote->release(remote->ctx, shared);
            shared = -1;
        }
        if (shared < 0) {
            rc = cancelled(job);
        } else {
            rc = remote->compile(remote->ctx, shared, job);
            remote->release(remote->ctx, shared);
        }
    } else {
        rc = remote->compile(remote->ctx, slot, job);
    }
    /* NVRTC failing is not a property of the configuration: not kept. */
    if (key && rc == 0) {
        if (job->ok) {
            const char *name = job->lowered_name ? job->lowered_name : "";
            size_t nl = strlen(name) + 1;
            char *entry = malloc(nl + job->cubin_size);
            if (entry) {
                memcpy(entry, name, nl);
                memcpy(entry + nl, job->cubin, job->cubin_size);
                cutune__binary_cache_put(job->cache, key, 1, entry,
                                         nl + job->cubin_size);
                free(entry);
            }
        }
        else if (job->log)
            cutune__binary_cache_put(job->cache, key, 0, job->log,
                                     strlen(job->log) + 1);
    }
    inflight_release(mine);
    free(key);
    job->seconds = cutune__now() - t0;
    return rc;
}

static int compile_uncached(cutune__compile_job *job)
{
    nvrtcProgram prog;
    nvrtcResult r = nvrtcCreateProgram(&prog, job->source, job->source_name,
                                       0, NULL, NULL);
    if (r != NVRTC_SUCCESS) {
        job->log = cutune__strdup_printf("nvrtcCreateProgram: %s",
                                         nvrtcGetErrorString(r));
        job->nvrtc_failed = 1;
        return -1;
    }
    if (job->kernel_name &&
        (r = nvrtcAddNameExpression(prog, job->kernel_name)) !=
            NVRTC_SUCCESS) {
        job->log = cutune__strdup_printf("nvrtcAddNameExpression(%s): %s",
                                         job->kernel_name,
                                         nvrtcGetErrorString(r));
        nvrtcDestroyProgram(&prog);
        return job->log ? 0 : -1;
    }
    r = nvrtcCompileProgram(prog, (int)job->n_options,
                            (const char *const *)job->options);
    int rc = 0;
    size_t log_size = 0;
    if (nvrtcGetProgramLogSize(prog, &log_size) == NVRTC_SUCCESS &&
        log_size > 1) {
        job->log = malloc(log_size);
        if (job->log && nvrtcGetProgramLog(prog, job->log) != NVRTC_SUCCESS)
            job->log[0] = '\0';
    } else {
        job->log = dup_text("");
    }
    if (r == NVRTC_SUCCESS) {
        if (nvrtcGetCUBINSize(prog, &job->cubin_size) == NVRTC_SUCCESS &&
            job->cubin_size > 0 && (job->cubin = malloc(job->cubin_size)) &&
            nvrtcGetCUBIN(prog, job->cubin) == NVRTC_SUCCESS) {
            job->ok = 1;
            const char *lowered = NULL;
            if (job->kernel_name) {
                /* A kernel the source does not define has no lowered
                 * name: that is the configuration's (or the file's)
                 * error, reported like a compile error. */
                if (nvrtcGetLoweredName(prog, job->kernel_name, &lowered) !=
                        NVRTC_SUCCESS ||
                    !(job->lowered_name = dup_text(lowered))) {
                    job->ok = 0;
                    free(job->cubin);
                    job->cubin = NULL;
                    free(job->log);
                    job->log = cutune__strdup_printf(
                        "the program defines no kernel '%s'",
                        job->kernel_name);
                }
            }
        } else {
            free(job->cubin);
            job->cubin = NULL;
            rc = -1;
        }
    } else if (r != NVRTC_ERROR_COMPILATION &&
               r != NVRTC_ERROR_INVALID_OPTION) {
        /* Anything but a rejected program is NVRTC failing, not the
         * configuration. */
        char *why = cutune__strdup_printf("nvrtcCompileProgram: %s\n%s",
                                          nvrtcGetErrorString(r),
                                          job->log ? job->log : "");
        free(job->log);
        job->log = why;
        rc = -1;
    } else if (r == NVRTC_ERROR_INVALID_OPTION && job->log &&
               job->log[0] == '\0') {
        free(job->log);
        job->log = dup_text("nvrtcCompileProgram: invalid option");
    }
    nvrtcDestroyProgram(&prog);
    if (!job->log)
        rc = -1;
    job->nvrtc_failed = rc != 0;
    return rc;
}

struct cutune__compile_drain {
    pthread_mutex_t lock;
    pthread_cond_t ended;
    int pending;
};

struct cutune__compile_pool {
    cutune__compile_job *jobs;
    size_t n;
    size_t next;        /* the next job to compile */
    unsigned char *done;
    int failed;
    pthread_mutex_t lock;
    pthread_cond_t finished;
    pthread_t *threads;
    int n_threads;
    int running;        /* threads not ended yet */
    const cutune__compiler *remote;
    struct pool_slot {
        struct cutune__compile_pool *pool;
        int slot;
    } *slots;
    /* Set by cutune__compile_detach: the last thread to end frees. */
    int detached;
    int let_go;         /* detach has begun: jobs waiting for a process
                           are no longer compiled */
    cutune__compile_drain *drain;
    void (*release)(void *ctx);
    void *release_ctx;
};

/* Whether the pool was let go (its jobs are no longer wanted). */
static int pool_let_go(cutune__compile_pool *pl)
{
    pthread_mutex_lock(&pl->lock);
    int gone = pl->let_go;
    pthread_mutex_unlock(&pl->lock);
    return gone;
}

static void pool_free(cutune__compile_pool *pl)
{
    pthread_cond_destroy(&pl->finished);
    pthread_mutex_destroy(&pl->lock);
    free(pl->done);
    free(pl->threads);
    free(pl->slots);
    free(pl);
}

/* The end of a detached pool: its jobs go back to their owner, its drain
 * counts one fewer. */
static void pool_end_detached(cutune__compile_pool *pl)
{
    cutune__compile_drain *d = pl->drain;
    if (pl->release)
        pl->release(pl->release_ctx);
    pool_free(pl);
    if (d) {
        pthread_mutex_lock(&d->lock);
        d->pending--;
        pthread_cond_broadcast(&d->ended);
        pthread_mutex_unlock(&d->lock);
    }
}

static void *pool_thread(void *arg)
{
    struct pool_slot *me = arg;
    cutune__compile_pool *pl = me->pool;
    for (;;) {
        pthread_mutex_lock(&pl->lock);
        size_t i = pl->next < pl->n ? pl->next++ : SIZE_MAX;
        if (i == SIZE_MAX) {
            int last = --pl->running == 0 && pl->detached;
            pthread_mutex_unlock(&pl->lock);
            if (last)
                pool_end_detached(pl);
            return NULL;
        }
        pthread_mutex_unlock(&pl->lock);
        int rc = compile_for(&pl->jobs[i], pl->remote, me->slot, pl);
        pthread_mutex_lock(&pl->lock);
        pl->done[i] = 1;
        if (rc != 0)
            pl->failed = 1;
        pthread_cond_broadcast(&pl->finished);
        pthread_mutex_unlock(&pl->lock);
    }
}

static int default_threads(int threads)
{
    if (threads > 0)
        return threads;
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    return cores > 0 ? (int)cores : 1;
}

cutune__compile_pool *cutune__compile_start(cutune__compile_job *jobs,
                                            size_t n, int threads,
                                            const cutune__compiler *remote)
{
    threads = remote ? remote->slots : default_threads(threads);
    if ((size_t)threads > n)
        threads = n > 0 ? (int)n : 1;
    cutune__compile_pool *pl = calloc(1, sizeof *pl);
    if (!pl)
        return NULL;
    pl->jobs = jobs;
    pl->n = n;
    pl->remote = remote;
    pl->done = calloc(n ? n : 1, 1);
    pl->threads = calloc((size_t)threads, sizeof *pl->threads);
    pl->slots = calloc((size_t)threads, sizeof *pl->slots);
    if (!pl->done || !pl->threads || !pl->slots) {
        free(pl->done);
        free(pl->threads);
        free(pl->slots);
        free(pl);
        return NULL;
    }
    pthread_mutex_init(&pl->lock, NULL);
    pthread_cond_init(&pl->finished, NULL);
    for (; pl->n_threads < threads; pl->n_threads++) {
        struct pool_slot *slot = &pl->slots[pl->n_threads];
        slot->pool = pl;
        slot->slot = pl->n_threads;
        pthread_mutex_lock(&pl->lock);
        pl->running++;
        pthread_mutex_unlock(&pl->lock);
        if (pthread_create(&pl->threads[pl->n_threads], NULL, pool_thread,
                           slot) != 0) {
            pthread_mutex_lock(&pl->lock);
            pl->running--;
            pthread_mutex_unlock(&pl->lock);
            break;
        }
    }
    if (pl->n_threads == 0) {
        cutune__compile_finish(pl);
        return NULL;
    }
    return pl;
}

void cutune__compile_wait(cutune__compile_pool *pl, size_t index)
{
    pthread_mutex_lock(&pl->lock);
    while (index < pl->n && !pl->done[index])
        pthread_cond_wait(&pl->finished, &pl->lock);
    pthread_mutex_unlock(&pl->lock);
}

void cutune__compile_finish(cutune__compile_pool *pl)
{
    if (!pl)
        return;
    pthread_mutex_lock(&pl->lock);
    pl->next = pl->n;
    pthread_mutex_unlock(&pl->lock);
    for (int i = 0; i < pl->n_threads; i++)
        pthread_join(pl->threads[i], NULL);
    pool_free(pl);
}

void cutune__compile_detach(cutune__compile_pool *pl,
                            cutune__compile_drain *drain,
                            void (*release)(void *ctx), void *ctx)
{
    /* Slots of a compiler without acquire belong to the threads of one
     * pool at a time: this pool's must end before another's start. */
    if (!pl || (pl->remote && !pl->remote->acquire)) {
        cutune__compile_finish(pl);
        if (release)
            release(ctx);
        return;
    }
    if (drain) {
        pthread_mutex_lock(&drain->lock);
        drain->pending++;
        pthread_mutex_unlock(&drain->lock);
    }
    pthread_mutex_lock(&pl->lock);
    pl->next = pl->n;
    pl->let_go = 1;
    pl->drain = drain;
    pl->release = release;
    pl->release_ctx = ctx;
    pthread_mutex_unlock(&pl->lock);
    /* No thread frees the pool before `detached` is set, so the thread
     * handles stay valid here. */
    for (int i = 0; i < pl->n_threads; i++)
        pthread_detach(pl->threads[i]);
    pthread_mutex_lock(&pl->lock);
    pl->detached = 1;
    int ended = pl->running == 0;
    pthread_mutex_unlock(&pl->lock);
    if (ended)
        pool_end_detached(pl);
}

cutune__compile_drain *cutune__compile_drain_create(void)
{
    cutune__compile_drain *d = calloc(1, sizeof *d);
    if (!d)
        return NULL;
    pthread_mutex_init(&d->lock, NULL);
    pthread_cond_init(&d->ended, NULL);
    return d;
}

void cutune__compile_drain_wait(cutune__compile_drain *d)
{
    if (!d)
        return;
    pthread_mutex_lock(&d->lock);
    while (d->pending > 0)
        pthread_cond_wait(&d->ended, &d->lock);
    pthread_mutex_unlock(&d->lock);
}

int cutune__compile_drain_pending(cutune__compile_drain *d)
{
    if (!d)
        return 0;
    pthread_mutex_lock(&d->lock);
    int n = d->pending;
    pthread_mutex_unlock(&d->lock);
    return n;
}

void cutune__compile_drain_destroy(cutune__compile_drain *d)
{
    if (!d)
        return;
    cutune__compile_drain_wait(d);
    pthread_cond_destroy(&d->ended);
    pthread_mutex_destroy(&d->lock);
    free(d);
}

int cutune__compile_batch(cutune__compile_job *jobs, size_t n, int threads,
                          const cutune__compiler *remote)
{
    cutune__compile_pool *pl = cutune__compile_start(jobs, n, threads, remote);
    if (!pl) {
        /* No thread could be started: compile here, one after another. */
        int failed = 0;
        for (size_t i = 0; i < n; i++)
            failed |= cutune__compile_with(&jobs[i], remote, 0) != 0;
        return failed ? -1 : 0;
    }
    for (size_t i = 0; i < n; i++)
        cutune__compile_wait(pl, i);
    int failed = pl->failed;
    cutune__compile_finish(pl);
    return failed ? -1 : 0;
}

void cutune__compile_job_clear(cutune__compile_job *job)
{
    free(job->cubin);
    free(job->log);
    free(job->lowered_name);
    job->lowered_name = NULL;
    job->cubin = NULL;
    job->log = NULL;
    job->cubin_size = 0;
    job->ok = 0;
}

void cutune__nvrtc_version(char *buf, size_t len)
{
    int major = 0, minor = 0;
    if (nvrtcVersion(&major, &minor) != NVRTC_SUCCESS)
        major = minor = 0;
    snprintf(buf, len, "%d.%d", major, minor);
}
