/* How NVRTC compilation scales with threads and with processes on this
 * machine: compiles the vector_add template (one configuration, no cache)
 * N times, split over T threads of one process or over T processes, and
 * prints compilations per second. A benchmark: it prints figures only.
 *
 * Usage: nvrtc_scaling [COMPILES_PER_WORKER] */
#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <nvrtc.h>

#include "cutune/cutune.h"
#include "problem.h"

static const cutune_problem *problem;
static int per_worker;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void *compile_some(void *arg)
{
    (void)arg;
    size_t n;
    char **opts = cutune__problem_options(problem, 0, "sm_90", &n);
    for (int i = 0; i < per_worker; i++) {
        nvrtcProgram p;
        nvrtcCreateProgram(&p, problem->source, "vector_add.cu", 0, NULL,
                           NULL);
        nvrtcCompileProgram(p, (int)n, (const char *const *)opts);
        nvrtcDestroyProgram(&p);
    }
    cutune__free_strings(opts, n);
    return NULL;
}

int main(int argc, char **argv)
{
    per_worker = argc > 1 ? atoi(argv[1]) : 16;
    cutune_problem *p;
    if (cutune_problem_load("vector_add", NULL, &p) != CUTUNE_OK) {
        fprintf(stderr, "%s\n", cutune_problem_errmsg(p));
        return 1;
    }
    problem = p;
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    printf("%ld cores, %d compilations per worker\n", cores, per_worker);
    for (long workers = 1; workers <= cores; workers *= 2) {
        pthread_t threads[256];
        double t0 = now();
        for (long i = 0; i < workers; i++)
            pthread_create(&threads[i], NULL, compile_some, NULL);
        for (long i = 0; i < workers; i++)
            pthread_join(threads[i], NULL);
        double threaded = workers * per_worker / (now() - t0);
        t0 = now();
        for (long i = 0; i < workers; i++)
            if (fork() == 0) {
                compile_some(NULL);
                _exit(0);
            }
        for (long i = 0; i < workers; i++)
            wait(NULL);
        double forked = workers * per_worker / (now() - t0);
        printf("%3ld workers: threads %7.1f/s, processes %7.1f/s\n", workers,
               threaded, forked);
    }
    cutune_problem_destroy(p);
    return 0;
}
