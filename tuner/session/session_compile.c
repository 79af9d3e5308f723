/* NVRTC for the session: sets of compile jobs for configurations, the
 * compile processes of the pool, the reference and comparison binaries,
 * and cutune_session_compile (a whole space compiled, nothing measured). */
#define _POSIX_C_SOURCE 200809L

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compare_kernels.h"
#include "session_internal.h"
#include "util.h"

/* Compile threads: as configured, else one per online core. */
int cutune__session_pool_threads(const cutune_session *s)
{
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    return s->opt.compile_threads > 0 ? s->opt.compile_threads
                                      : (int)(cores > 0 ? cores : 1);
}

/* Compile processes for parallel compilation (NVRTC serializes threads),
 * when the worker program is there to run them; else compile threads. */
const cutune__compiler *cutune__session_compilers(cutune_session *s)
{
    if (!s->compile.compilers) {
        int n = cutune__session_pool_threads(s);
        if (n > 1 && access(s->worker_path, X_OK) == 0)
            s->compile.compilers =
                cutune__compile_procs_create(s->worker_path, n);
    }
    return cutune__compile_procs_compiler(s->compile.compilers);
}

/* The worker's output comparison and fill kernels for s->proto.arch, through
 * the binary cache: compiling them is most of a worker's start-up
 * otherwise. Without them (NVRTC failing here) the worker compiles its
 * own. */
void cutune__session_compile_compare(cutune_session *s, int refresh)
{
    if (s->proto.compare.cubin || s->proto.compare.from_worker)
        return;
    char arch[48];
    snprintf(arch, sizeof arch, "--gpu-architecture=%s", s->proto.arch);
    char *opts[] = {arch};
    cutune__compile_job job = {.source = cutune__compare_source,
                               .source_name = "cutune_compare.cu",
                               .options = opts,
                               .n_options = 1,
                               .cache = s->compile.binaries,
                               .refresh = refresh};
    if (cutune__compile(&job) == 0 && job.ok) {
        s->proto.compare.cubin = job.cubin;
        s->proto.compare.cubin_size = job.cubin_size;
        job.cubin = NULL;
    } else if (refresh) {
        s->proto.compare.from_worker = 1;
    }
    cutune__compile_job_clear(&job);
}

void cutune__session_job_set_clear(job_set *js)
{
    for (size_t i = 0; js->jobs && i < js->n; i++) {
        cutune__compile_job_clear(&js->jobs[i]);
        if (js->opts && js->opts[i])
            cutune__free_strings(js->opts[i], js->nopts[i]);
        if (js->srcs)
            free(js->srcs[i]);
    }
    free(js->srcs);
    free(js->jobs);
    free(js->opts);
    free(js->nopts);
    memset(js, 0, sizeof *js);
}

/* A job set handed to a detached pool. */
void cutune__session_job_set_free(void *js)
{
    cutune__session_job_set_clear(js);
    free(js);
}

/* Jobs for configurations indices[0..n) (indices NULL: 0..n-1) for `arch`.
 * Returns 0, or -1 when memory ran out (js cleared). */
int cutune__session_job_set_init(job_set *js, cutune_session *s,
                                 const cutune_problem *p,
                                 const size_t *indices, size_t n,
                                 const char *arch)
{
    js->n = n;
    js->jobs = calloc(n ? n : 1, sizeof *js->jobs);
    js->opts = calloc(n ? n : 1, sizeof *js->opts);
    js->nopts = calloc(n ? n : 1, sizeof *js->nopts);
    js->srcs = calloc(n ? n : 1, sizeof *js->srcs);
    if (!js->jobs || !js->opts || !js->nopts || !js->srcs) {
        cutune__session_job_set_clear(js);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        size_t config = indices ? indices[i] : i;
        js->opts[i] = cutune__problem_options(p, config, arch, &js->nopts[i]);
        if (!js->opts[i]) {
            cutune__session_job_set_clear(js);
            return -1;
        }
        js->srcs[i] = cutune__problem_source(p, config);
        js->jobs[i].source = js->srcs[i] ? js->srcs[i] : p->source;
        js->jobs[i].source_name = p->kernel_name;
        js->jobs[i].options = js->opts[i];
        js->jobs[i].n_options = js->nopts[i];
        js->jobs[i].cache = s->compile.binaries;
        js->jobs[i].kernel_name = p->kernel_name;
    }
    return 0;
}

cutune_status cutune__session_compile_reference(cutune_session *s,
                                                size_t config, int refresh)
{
    size_t n;
    char **opts =
        cutune__problem_options(s->problem, config, s->proto.arch, &n);
    if (!opts)
        return cutune__session_fail(s, CUTUNE_ERR_NO_MEMORY, "out of memory");
    char *src = cutune__problem_source(s->problem, config);
    cutune__compile_job job = {.source = src ? src : s->problem->source,
                               .source_name = s->problem->kernel_name,
                               .options = opts,
                               .n_options = n,
                               .cache = s->compile.binaries,
                               .kernel_name = s->problem->kernel_name,
                               .refresh = refresh};
    int rc = cutune__compile(&job);
    cutune__free_strings(opts, n);
    free(src);
    cutune_status st = CUTUNE_OK;
    if (rc != 0)
        st = cutune__session_fail(s, CUTUNE_ERR_NVRTC, "NVRTC failed: %s",
                                  job.log);
    else if (!job.ok)
        st = cutune__session_fail(s, CUTUNE_ERR_PARSE,
                                  "%s: the default configuration does "
                                  "not compile for %s:\n%s",
                                  s->problem->origin, s->proto.arch, job.log);
    if (st) {
        cutune__compile_job_clear(&job);
        return st;
    }
    free(s->proto.ref.cubin);
    free(s->proto.ref.lowered);
    s->proto.ref.cubin = job.cubin;
    s->proto.ref.cubin_size = job.cubin_size;
    s->proto.ref.lowered = job.lowered_name;
    s->proto.ref.from_cache = job.from_cache;
    job.cubin = NULL;
    job.lowered_name = NULL;
    cutune__compile_job_clear(&job);
    return CUTUNE_OK;
}

/* An architecture NVRTC can make a binary for: "sm_90", "sm_90a". */
static cutune_status check_arch(cutune_session *s, const char *arch)
{
    if (strncmp(arch, "compute_", 8) == 0)
        return cutune__session_fail(
            s, CUTUNE_ERR_INVALID_ARGUMENT,
            "architecture '%s' is virtual: NVRTC makes PTX for it, no "
            "binary; compile for a real one such as sm_%s",
            arch, arch + 8);
    if (strncmp(arch, "sm_", 3) != 0 || !isdigit((unsigned char)arch[3]))
        return cutune__session_fail(s, CUTUNE_ERR_INVALID_ARGUMENT,
                                    "architecture '%s' is not one such as "
                                    "sm_90",
                                    arch);
    return CUTUNE_OK;
}

/* The outcome of a compiled job set: counts, rejections logged and
 * grouped, the first NVRTC failure as the session's error. */
static cutune_status tally(cutune_session *s, const cutune_problem *problem,
                           const job_set *js, size_t *ok, size_t *bad)
{
    cutune_status st = CUTUNE_OK;
    size_t *configs = calloc(js->n ? js->n : 1, sizeof *configs);
    const char **logs = calloc(js->n ? js->n : 1, sizeof *logs);
    if (!configs || !logs) {
        free(configs);
        free(logs);
        return cutune__session_fail(s, CUTUNE_ERR_NO_MEMORY, "out of memory");
    }
    for (size_t i = 0; i < js->n; i++) {
        const cutune__compile_job *job = &js->jobs[i];
        *ok += job->ok != 0;
        if (job->ok)
            continue;
        if (job->nvrtc_failed) {
            if (st == CUTUNE_OK)
                st = cutune__session_fail(s, CUTUNE_ERR_NVRTC,
                                          "NVRTC "
                                          "failed: %s",
                                          job->log ? job->log : "");
            continue;
        }
        configs[*bad] = i;
        logs[(*bad)++] = job->log;
        char cfg[512];
        cutune__session_describe(problem, i, cfg, sizeof cfg);
        cutune__session_log(s, CUTUNE_LOG_INFO, "%s: does not compile:\n%s",
                            cfg, job->log ? job->log : "");
    }
    s->compile.rejected = cutune__rejects_group(problem, configs, logs, *bad);
    if (!s->compile.rejected && st == CUTUNE_OK)
        st = cutune__session_fail(s, CUTUNE_ERR_NO_MEMORY, "out of memory");
    free(configs);
    free(logs);
    return st;
}

cutune_status cutune_session_compile(cutune_session *s,
                                     const cutune_problem *problem,
                                     const char *arch, size_t limit,
                                     size_t *compiled, size_t *failed,
                                     double *seconds)
{
    if (!s || !problem || !arch || !problem->space)
        return s ? cutune__session_fail(s, CUTUNE_ERR_INVALID_ARGUMENT,
                                        "cutune_session_compile: no problem "
                                        "or no architecture")
                 : CUTUNE_ERR_INVALID_ARGUMENT;
    cutune__rejects_free(s->compile.rejected);
    s->compile.rejected = NULL;
    if (problem->space_only)
        return cutune__session_fail(s, CUTUNE_ERR_INVALID_ARGUMENT,
                                    "%s: loaded for its "
                                    "search space only; it cannot be compiled",
                                    problem->origin);
    cutune_status st = check_arch(s, arch);
    if (st)
        return st;
    size_t n = cutune__space_size(problem->space);
    if (limit > 0 && limit < n)
        n = limit;
    double t0 = cutune__now();
    cutune__session_open_binaries(s);
    job_set js;
    if (cutune__session_job_set_init(&js, s, problem, NULL, n, arch) != 0) {
        if (seconds)
            *seconds = cutune__now() - t0;
        return cutune__session_fail(s, CUTUNE_ERR_NO_MEMORY, "out of memory");
    }
    cutune__compile_batch(js.jobs, n, s->opt.compile_threads,
                          cutune__session_compilers(s));
    size_t ok = 0, bad = 0;
    st = tally(s, problem, &js, &ok, &bad);
    if (compiled)
        *compiled = ok;
    if (failed)
        *failed = bad;
    if (seconds)
        *seconds = cutune__now() - t0;
    cutune__session_job_set_clear(&js);
    return st;
}

size_t cutune_session_rejected_group_count(const cutune_session *s)
{
    return s ? cutune__rejects_count(s->compile.rejected) : 0;
}

const cutune_rejected_group *
cutune_session_rejected_group(const cutune_session *s, size_t index)
{
    return s ? cutune__rejects_get(s->compile.rejected, index) : NULL;
}
