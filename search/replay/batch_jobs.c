#include "batch_jobs.h"

#include <math.h>

size_t cutune__clock_window(int threads, double compile_s, double measure_s)
{
    if (threads < 1)
        return 1;
    if (!(compile_s > 0) || !(measure_s > 0))
        return (size_t)threads;
    double k = ceil(compile_s / measure_s);
    if (k > threads)
        k = threads;
    return k < 1 ? 1 : (size_t)k;
}

static int listed(const size_t *v, size_t n, size_t x)
{
    for (size_t i = 0; i < n; i++)
        if (v[i] == x)
            return 1;
    return 0;
}

size_t cutune__batch_jobs(const size_t *proposals, size_t n,
                          const unsigned char *skip, size_t n_ahead,
                          size_t each, cutune__ahead_fn ahead, void *ctx,
                          size_t *jobs, size_t *job_of, size_t *named)
{
    size_t n_jobs = 0, compiled = 0, next[16];
    *named = 0;
    if (each > 16)
        each = 16;
    for (size_t i = 0; i < n; i++) {
        if (skip && skip[i])
            continue;
        job_of[i] = n_jobs;
        jobs[n_jobs++] = proposals[i];
        if (!ahead || each == 0 || compiled++ >= n_ahead)
            continue;
        size_t k = ahead(ctx, proposals[i], next, each);
        for (size_t a = 0; a < k && a < each; a++)
            if (!listed(proposals, n, next[a]) &&
                !listed(jobs, n_jobs, next[a])) {
                jobs[n_jobs++] = next[a];
                (*named)++;
            }
    }
    return n_jobs;
}
