#define _POSIX_C_SOURCE 200809L

#include "compile.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
 * time side by side (the jobs of one batch, or of threads sharing one
 * cache, may hold the same key). */
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

/* Claims `key` for this job's compile: waits while another job holds it
 * (unless `wait` is 0) and returns 1 when the cache then has the result
 * (the job is filled from it), 0 when the job should compile, with
 * `*mine` the claim to give back (NULL where memory ran out: it compiles
 * unclaimed). */
static int inflight_claim(cutune__compile_job *job, char *key, int wait,
                          inflight **mine)
{
    *mine = NULL;
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

int cutune__compile_with(cutune__compile_job *job,
                         const cutune__compiler *remote, int slot)
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
        key = base ? cutune__strdup_printf(
                         "kernel %s\n%s",
                         job->kernel_name ? job->kernel_name : "", base)
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
        claim = key ? inflight_claim(job, key, !job->refresh, &mine) : 0;
        if (claim > 0) {
            free(key);
            job->seconds = cutune__now() - t0;
            return 0;
        }
    }
    int rc;
    if (!remote) {
        rc = compile_uncached(job);
    } else if (remote->acquire) {
        int shared = remote->acquire(remote->ctx);
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
        } else if (job->log)
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
    nvrtcResult r = nvrtcCreateProgram(&prog, job->source, job->source_name, 0,
                                       NULL, NULL);
    if (r != NVRTC_SUCCESS) {
        job->log = cutune__strdup_printf("nvrtcCreateProgram: %s",
                                         nvrtcGetErrorString(r));
        job->nvrtc_failed = 1;
        return -1;
    }
    if (job->kernel_name && (r = nvrtcAddNameExpression(
                                 prog, job->kernel_name)) != NVRTC_SUCCESS) {
        job->log =
            cutune__strdup_printf("nvrtcAddNameExpression(%s): %s",
                                  job->kernel_name, nvrtcGetErrorString(r));
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
            /* Compiled, and no binary: a virtual architecture
             * (compute_XY) gives PTX alone. */
            free(job->cubin);
            job->cubin = NULL;
            free(job->log);
            job->log = cutune__strdup_printf(
                "NVRTC compiled but made no binary (nvrtcGetCUBIN); is "
                "the architecture a real one (sm_XY)?");
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

/* A batch's threads take the next job in index order until none is
 * left; the caller joins them. */
typedef struct batch {
    cutune__compile_job *jobs;
    size_t n;
    size_t next;
    int failed;
    pthread_mutex_t lock;
    const cutune__compiler *remote;
} batch;

struct batch_slot {
    batch *b;
    int slot;
};

static void *batch_thread(void *arg)
{
    const struct batch_slot *me = arg;
    batch *b = me->b;
    for (;;) {
        pthread_mutex_lock(&b->lock);
        size_t i = b->next;
        if (i < b->n)
            b->next++;
        pthread_mutex_unlock(&b->lock);
        if (i >= b->n)
            return NULL;
        int rc = cutune__compile_with(&b->jobs[i], b->remote, me->slot);
        if (rc != 0) {
            pthread_mutex_lock(&b->lock);
            b->failed = 1;
            pthread_mutex_unlock(&b->lock);
        }
    }
}

static int default_threads(int threads)
{
    if (threads > 0)
        return threads;
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    return cores > 0 ? (int)cores : 1;
}

int cutune__compile_batch(cutune__compile_job *jobs, size_t n, int threads,
                          const cutune__compiler *remote)
{
    threads = remote ? remote->slots : default_threads(threads);
    if ((size_t)threads > n)
        threads = n > 0 ? (int)n : 1;
    batch b = {.jobs = jobs, .n = n, .remote = remote};
    pthread_mutex_init(&b.lock, NULL);
    pthread_t *tids = calloc((size_t)threads, sizeof *tids);
    struct batch_slot *slots = calloc((size_t)threads, sizeof *slots);
    int started = 0;
    for (; tids && slots && started < threads; started++) {
        slots[started] = (struct batch_slot){&b, started};
        if (pthread_create(&tids[started], NULL, batch_thread,
                           &slots[started]) != 0)
            break;
    }
    if (started == 0) {
        /* No thread could be started: compile here, one after another. */
        struct batch_slot here = {&b, 0};
        batch_thread(&here);
    }
    for (int i = 0; i < started; i++)
        pthread_join(tids[i], NULL);
    free(slots);
    free(tids);
    pthread_mutex_destroy(&b.lock);
    return b.failed ? -1 : 0;
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
