#define _POSIX_C_SOURCE 200809L

#include "compile.h"

#include <pthread.h>
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

int cutune__compile(cutune__compile_job *job)
{
    double t0 = cutune__now();
    job->ok = 0;
    job->cubin = NULL;
    job->cubin_size = 0;
    job->log = NULL;
    nvrtcProgram prog;
    nvrtcResult r = nvrtcCreateProgram(&prog, job->source, job->source_name,
                                       0, NULL, NULL);
    if (r != NVRTC_SUCCESS) {
        job->log = cutune__strdup_printf("nvrtcCreateProgram: %s",
                                         nvrtcGetErrorString(r));
        job->nvrtc_failed = 1;
        return -1;
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
    job->seconds = cutune__now() - t0;
    job->nvrtc_failed = rc != 0;
    return rc;
}

typedef struct pool {
    cutune__compile_job *jobs;
    size_t n;
    size_t next;
    int failed;
    pthread_mutex_t lock;
} pool;

static void *pool_worker(void *arg)
{
    pool *pl = arg;
    for (;;) {
        pthread_mutex_lock(&pl->lock);
        size_t i = pl->next++;
        pthread_mutex_unlock(&pl->lock);
        if (i >= pl->n)
            return NULL;
        if (cutune__compile(&pl->jobs[i]) != 0) {
            pthread_mutex_lock(&pl->lock);
            pl->failed = 1;
            pthread_mutex_unlock(&pl->lock);
        }
    }
}

int cutune__compile_batch(cutune__compile_job *jobs, size_t n, int threads)
{
    if (threads <= 0) {
        long cores = sysconf(_SC_NPROCESSORS_ONLN);
        threads = cores > 0 ? (int)cores : 1;
    }
    if ((size_t)threads > n)
        threads = (int)n;
    pool pl = {jobs, n, 0, 0, PTHREAD_MUTEX_INITIALIZER};
    pthread_t *tids = calloc((size_t)(threads > 1 ? threads : 1),
                             sizeof *tids);
    int started = 0;
    if (tids)
        for (; started < threads - 1; started++)
            if (pthread_create(&tids[started], NULL, pool_worker, &pl) != 0)
                break;
    /* The calling thread works too; with no helper threads it does all. */
    pool_worker(&pl);
    for (int i = 0; i < started; i++)
        pthread_join(tids[i], NULL);
    free(tids);
    pthread_mutex_destroy(&pl.lock);
    return pl.failed ? -1 : 0;
}

void cutune__compile_job_clear(cutune__compile_job *job)
{
    free(job->cubin);
    free(job->log);
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
