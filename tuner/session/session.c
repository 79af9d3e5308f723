/* A tuning session: finds the device through a worker process, compiles
 * configurations with NVRTC, has the worker measure them, lets a strategy
 * choose what to try next, and keeps the winner in the per-device cache.
 *
 * This process never initializes CUDA (it does not even link the CUDA
 * runtime): every GPU call happens in cutune-worker, which is restarted
 * when a candidate kills it.
 */
#define _POSIX_C_SOURCE 200809L

#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <gsl/gsl_errno.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>

#include "batch_jobs.h"
#include "binary_cache.h"
#include "compare_kernels.h"
#include "compile.h"
#include "compile_remote.h"
#include "gpu_monitor.h"
#include "measure_log.h"
#include "output_check.h"
#include "cutune/cutune.h"
#include "problem.h"
#include "stats.h"
#include "strategy.h"
#include "t4.h"
#include "util.h"
#include "worker_client.h"

/* Measurement protocol: a validated first launch, two more warm-up
 * launches, then timed launches until at least 10 and 2 ms of kernel time
 * are measured and the 95% confidence interval of the median is within 1%
 * of it, at most 1000 launches or 1 s. A candidate is dropped early, as
 * one that cannot win, when the fastest of its first 5 launches is more
 * than 10% slower than the best median so far, or when from its 10th
 * launch on the interval of its median lies wholly more than RACE_MARGIN
 * above that best (racing: it could not even be a finalist, below, and
 * its further launches would only pin down a loser's time; on kernels of
 * a few µs most of a tune's measuring went there).
 *
 * That is enough to steer the search, not to name the winner: on a short
 * window slow drifts of the GPU (clocks, temperature) and the luck of the
 * draw among many near-equal candidates move the fastest median by more
 * than its interval says. So the search's best few (at most FINAL_MAX,
 * within FINAL_MARGIN of the fastest) are measured again after it, in a
 * final round: FINAL_PASSES passes over them, in opposite orders so that a
 * drift weighs on all of them alike, each pass at least FINAL_SECONDS of
 * kernel time per finalist. The winner is decided on all of a finalist's
 * launches. Measuring every candidate that long instead (a 20 ms floor,
 * the earlier protocol) made a repeated tune measuring-bound: see the
 * README's "Measuring". */
#define WARMUP_LAUNCHES 3
#define MIN_REPS 10
#define MAX_REPS 1000
#define MIN_SECONDS 0.002
#define MAX_SECONDS 1.0
#define CI_LEVEL 0.95
#define CI_REL 0.01
#define EARLY_REPS 5
#define EARLY_MARGIN 0.10
#define FINAL_MAX 5
#define FINAL_MARGIN 0.03
#define FINAL_PASSES 2
#define FINAL_SECONDS 0.01
/* A pass's cap on launches for a finalist: 10 ms of a 6 µs kernel would
 * be 1,600 launches, each after an L2 flush several times its length. */
#define FINAL_MAX_REPS 300
#define RACE_MARGIN FINAL_MARGIN
#define DEFAULT_LAUNCH_TIMEOUT 10.0
/* Batches of strategies whose proposals ignore results are this many
 * times longer. */
#define OBLIVIOUS_BATCHES 8
/* Compiling ahead: after each of a batch's first jobs, up to half the
 * compile threads and AHEAD_PROPOSALS, the AHEAD_EACH configurations the
 * strategy would propose next should that one turn out the fastest (its
 * `ahead`), so that the first compiles of a batch are half proposals,
 * half those. A batch of the default strategy mostly ends at a new best,
 * and the next one starts around it: replayed on the recorded spaces with
 * 16 threads, the batches that began by waiting for NVRTC fell from 12-15
 * to 3.5 per tune of 100 evaluations (bench-divergence --batch 32
 * --ahead 8,1; at batch 16 from 13-16 to 3.6-3.8, where 4 x 2 did less
 * for as many compiles and 6 x 2 made more proposals compile late), and
 * with 2 threads all waits from 53-54 to 49.
 * The replay takes every compile to be as long; on an H200, where they
 * are not, the tuner's waits fell by 8-10% (bench/results/
 * 2026-11-23-h200-s7.md). */
#define AHEAD_PROPOSALS 8
#define AHEAD_EACH 1
/* Validation tolerance: |out - ref| <= ATOL + RTOL * |ref|. */
#define ATOL 1e-6
#define RTOL 1e-5

typedef struct eval_record {
    cutune_eval pub;
    double min_ms;
    double stddev_ms;
    size_t runs;
    double ci_lo_ms;    /* 95% confidence interval of the median */
    double ci_hi_ms;
    double gpu_ms;      /* kernel time of every launch it made */
    double *runtimes;   /* every timed launch in order, ms (T4 output) */
    double framework_ms; /* the evaluation's wall time less compile and
                            kernel time: loading, launching, copying */
    double search_ms;   /* this evaluation's share of the strategy's time */
    double timestamp;   /* wall clock when it finished */
    int reused;         /* taken from the measurement log, not measured */
    int finalist;       /* chosen for the final round */
    int differs;        /* CHECK_PROBE: timed, but its output differs from
                           the default's; CORRECTNESS until settled */
    size_t final_runs;  /* the last runtimes that the final round added */
} eval_record;

struct cutune_session {
    cutune_session_options opt;
    char *strategy;
    char *cache_dir;
    char *worker_path;
    char *errmsg;

    cutune__worker_client worker;
    cutune__device_props *props;   /* all devices, from DEVICES */
    cutune_device *devices;
    size_t n_devices;

    /* State of the tune in progress. */
    const cutune_problem *problem;  /* of the last tune; its evals index it */
    cutune__device_props device;
    char arch[16];
    char *ref_cubin;
    size_t ref_cubin_size;
    char *ref_lowered;
    int ref_from_cache;             /* the reference binary came from disk */
    char *compare_cubin;            /* the worker's comparison kernels */
    size_t compare_cubin_size;
    int compare_refreshed;          /* compiled again after a rejection */
    int compare_from_worker;        /* the cached ones failed to load
                                       (for the session) */
    cutune__wire_arg *wire_args;
    char *args_payload;             /* ARGS: wire args, then binary data */
    size_t args_payload_size;
    int load_mismatch;              /* the last LOAD: the kernel's
                                       parameters do not fit the arguments */
    uint32_t check;                 /* cutune__check of the runs now */
    size_t check_agreed, check_differed;
    eval_record *evals;
    size_t n_evals, cap_evals;
    double started;
    cutune__binary_cache *binaries; /* NVRTC results on disk, or NULL */
    cutune__gpu_monitor *monitor;   /* NVML, or NULL where absent */
    cutune__compile_procs *compilers; /* NVRTC processes, or NULL: threads */
    cutune__compile_drain *drain;   /* batches ended early, still compiling */
    cutune__measure_log *measured;  /* this context's measurements, or NULL */
    size_t reused;                  /* evaluations taken from it */
    size_t recompiled;              /* cached binaries that did not load */
    int warned_other_processes;
    double best_ms;                 /* best median measured so far in this
                                       session, for early stops, racing and
                                       time limits */
    size_t max_evals;               /* this tune's budget: the caller's, */
    double max_seconds;             /* else the T1 file's */
    double max_fraction;
    double gpu_ms;                  /* kernel time of the whole tune */
    double span_ms;                 /* GPU time of all measuring work */
    double batch_end;               /* when the last batch was evaluated */
    double wait_compile_s;          /* waiting for a compile to measure */
    double wait_finish_s;           /* waiting for the compiles of a batch
                                       that ended early */
    size_t batches;
    size_t shared_compiles;         /* configurations whose compile another
                                       job was already running */
    size_t compiled_ahead;          /* configurations compiled ahead of
                                       their proposal (AHEAD_EACH) */
    int fatal;                      /* the tune cannot go on */
    cutune_status fatal_status;

    /* The published result. */
    cutune_tune_result result;
    cutune_param_value *best_values;
    cutune_param_value *baseline_values;
    cutune_eval *pub_evals;
};

/* ------------------------------------------------------------------ */

static cutune_status fail(cutune_session *s, cutune_status st,
                          const char *fmt, ...)
{
    char buf[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    free(s->errmsg);
    s->errmsg = strdup(buf);
    return st;
}

static void logf_(cutune_session *s, cutune_log_level level, const char *fmt,
                  ...)
{
    if (!s->opt.log)
        return;
    char buf[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    s->opt.log(s->opt.log_user, level, buf);
}

void cutune_session_options_init(cutune_session_options *o)
{
    memset(o, 0, sizeof *o);
    o->write_cache = 1;
    o->seed = 1;
}

static char *dup_or_null(const char *s) { return s ? strdup(s) : NULL; }

cutune_status cutune_session_create(const cutune_session_options *options,
                                    cutune_session **out)
{
    if (!out)
        return CUTUNE_ERR_INVALID_ARGUMENT;
    cutune_session *s = calloc(1, sizeof *s);
    *out = s;
    if (!s)
        return CUTUNE_ERR_NO_MEMORY;
    /* GSL's default handler aborts the process; the library reports
     * errors instead. */
    gsl_set_error_handler_off();
    if (options)
        s->opt = *options;
    else
        cutune_session_options_init(&s->opt);
    s->strategy = dup_or_null(s->opt.strategy);
    s->cache_dir = dup_or_null(s->opt.cache_dir);
    s->worker_path = cutune__worker_locate(s->opt.worker_path);
    s->opt.strategy = s->strategy;
    s->opt.cache_dir = s->cache_dir;
    s->opt.worker_path = NULL;
    if ((options && options->strategy && !s->strategy) ||
        (options && options->cache_dir && !s->cache_dir) || !s->worker_path)
        return fail(s, CUTUNE_ERR_NO_MEMORY, "out of memory");
    if (s->strategy && !cutune__strategy_find(s->strategy)) {
        char names[256] = "";
        for (size_t i = 0; cutune__strategies[i]; i++) {
            if (i)
                strncat(names, ", ", sizeof names - strlen(names) - 1);
            strncat(names, cutune__strategies[i]->name,
                    sizeof names - strlen(names) - 1);
        }
        return fail(s, CUTUNE_ERR_INVALID_ARGUMENT,
                    "unknown strategy '%s' (known: %s)", s->strategy, names);
    }
    s->worker.pid = 0;
    s->worker.fd = -1;
    /* Without it, a batch ended early waits for its running compiles. */
    s->drain = cutune__compile_drain_create();
    return CUTUNE_OK;
}

static void clear_tune(cutune_session *s)
{
    cutune__gpu_monitor_close(s->monitor);
    s->monitor = NULL;
    cutune__measure_log_close(s->measured);
    s->measured = NULL;
    s->reused = 0;
    s->recompiled = 0;
    s->warned_other_processes = 0;
    s->best_ms = 0;
    s->gpu_ms = 0;
    s->span_ms = 0;
    s->wait_compile_s = s->wait_finish_s = 0;
    s->shared_compiles = s->compiled_ahead = 0;
    s->batches = 0;
    for (size_t i = 0; i < s->n_evals; i++) {
        free((char *)s->evals[i].pub.message);
        free(s->evals[i].runtimes);
    }
    free(s->evals);
    s->evals = NULL;
    s->n_evals = s->cap_evals = 0;
    free(s->ref_cubin);
    s->ref_cubin = NULL;
    free(s->ref_lowered);
    s->ref_lowered = NULL;
    free(s->compare_cubin);
    s->compare_cubin = NULL;
    s->compare_cubin_size = 0;
    free(s->wire_args);
    s->wire_args = NULL;
    free(s->args_payload);
    s->args_payload = NULL;
    free(s->best_values);
    free(s->baseline_values);
    free(s->pub_evals);
    s->best_values = s->baseline_values = NULL;
    s->pub_evals = NULL;
    memset(&s->result, 0, sizeof s->result);
    s->fatal = 0;
}

void cutune_session_destroy(cutune_session *s)
{
    if (!s)
        return;
    cutune__worker_stop(&s->worker);
    clear_tune(s);
    cutune__compile_drain_destroy(s->drain);
    cutune__binary_cache_close(s->binaries);
    double t0 = cutune__now();
    cutune__compile_procs_destroy(s->compilers);
    if (s->compilers)
        logf_(s, CUTUNE_LOG_DEBUG, "%.3f s to stop the compile processes",
              cutune__now() - t0);
    free(s->props);
    free(s->devices);
    free(s->strategy);
    free(s->cache_dir);
    free(s->worker_path);
    free(s->errmsg);
    free(s);
}

const char *cutune_session_errmsg(const cutune_session *s)
{
    if (!s)
        return "out of memory";
    return s->errmsg ? s->errmsg : "no error";
}

/* "<cache dir>/<leaf>" (malloc'ed), the cache directory resolved as the
 * tuning cache resolves it; NULL when there is none or memory ran out. */
static char *cache_path(const cutune_session *s, const char *leaf)
{
    cutune_cache *c = NULL;
    char *path = NULL;
    if (cutune_cache_open(s->cache_dir, &c) == CUTUNE_OK)
        path = cutune__strdup_printf("%s/%s", cutune_cache_dir(c), leaf);
    cutune_cache_close(c);
    return path;
}

/* Opens the binary cache beside the tuning cache (<cache dir>/binaries)
 * unless the options turn it off. A cache that cannot be opened only
 * means compiling everything. */
static void open_binaries(cutune_session *s)
{
    if (s->binaries || s->opt.no_binary_cache)
        return;
    char *dir = cache_path(s, "binaries");
    if (dir)
        s->binaries = cutune__binary_cache_open(dir, 0);
    free(dir);
}

/* Digest of everything a measurement depends on besides the values of the
 * configuration: the device as the fingerprint describes it (this GPU, its
 * driver, NVRTC and cutune versions), the kernel, the options every
 * configuration is compiled with, the arguments as resolved for the
 * problem size, the reference data and the measuring options. The version
 * names the measurement protocol: change it with the protocol. */
static uint64_t measure_key(const cutune_session *s)
{
    const cutune_problem *p = s->problem;
    const cutune_device *d = &s->device.fingerprint;
    char head[1024];
    int n = snprintf(head, sizeof head,
                     "cutune measurements v3\n%s\n%s\n%d.%d %d %lld %lld %d "
                     "%s %s\n%s\nwarm %d shared %u\n",
                     d->name, d->uuid, d->cc_major, d->cc_minor, d->sm_count,
                     d->l2_bytes, d->memory_bytes, d->driver_version,
                     d->nvrtc_version, d->cutune_version, p->kernel_name,
                     s->opt.warm_cache, p->shared_memory);
    uint64_t h = cutune__fnv1a64(head, n > 0 ? (size_t)n : 0);
    /* The source with the headers it includes. */
    h = cutune__fnv1a64_continue(h, p->source_hash, sizeof p->source_hash);
    for (size_t i = 0; i < p->n_options; i++)
        h = cutune__fnv1a64_continue(h, p->options[i],
                                     strlen(p->options[i]) + 1);
    h = cutune__fnv1a64_continue(h, s->arch, strlen(s->arch) + 1);
    for (size_t i = 0; i < p->n_problem_size; i++)
        h = cutune__fnv1a64_continue(h, &p->problem_size[i],
                                     sizeof p->problem_size[i]);
    /* Wire arguments are calloc'ed, so their padding is zeros. */
    h = cutune__fnv1a64_continue(h, s->wire_args,
                                 p->n_args * sizeof *s->wire_args);
    for (size_t i = 0; i < p->n_args; i++)
        if (p->args[i].data)
            h = cutune__fnv1a64_continue(h, p->args[i].data,
                                         p->args[i].data_size);
    for (size_t i = 0; i < p->n_refs; i++) {
        const cutune__reference *r = &p->refs[i];
        double nums[3] = {r->fill_value, r->atol, r->rtol};
        uint64_t ints[3] = {r->arg, (uint64_t)r->fill, r->seed};
        h = cutune__fnv1a64_continue(h, nums, sizeof nums);
        h = cutune__fnv1a64_continue(h, ints, sizeof ints);
        if (r->data)
            h = cutune__fnv1a64_continue(h, r->data, r->data_size);
    }
    return h;
}

/* Opens this tune's measurement log under <cache dir>/measurements. Every
 * measured configuration is appended to it; with reuse_measurements, what
 * it already holds is read so that those configurations are not measured
 * again. A log that cannot be opened is a warning, never a failure. */
static void open_measure_log(cutune_session *s)
{
    char *leaf = cutune__strdup_printf(
        "measurements/%s-%016llx.jsonl", s->problem->name,
        (unsigned long long)measure_key(s));
    char *path = leaf ? cache_path(s, leaf) : NULL;
    free(leaf);
    if (!path)
        return;
    char err[512];
    s->measured = cutune__measure_log_open(path, s->opt.reuse_measurements,
                                           err, sizeof err);
    if (!s->measured)
        logf_(s, CUTUNE_LOG_WARN, "measurements are not logged: %s", err);
    else if (s->opt.reuse_measurements)
        logf_(s, CUTUNE_LOG_INFO, "%zu earlier measurements in %s (%zu "
              "torn or unreadable lines skipped)",
              cutune__measure_log_count(s->measured), path,
              cutune__measure_log_skipped(s->measured));
    free(path);
}

/* Compile threads: as configured, else one per online core. */
static int pool_threads(const cutune_session *s)
{
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    return s->opt.compile_threads > 0 ? s->opt.compile_threads
                                      : (int)(cores > 0 ? cores : 1);
}

/* Compile processes for parallel compilation (NVRTC serializes threads),
 * when the worker program is there to run them; else compile threads. */
static const cutune__compiler *compilers(cutune_session *s)
{
    if (!s->compilers) {
        int n = pool_threads(s);
        if (n > 1 && access(s->worker_path, X_OK) == 0)
            s->compilers = cutune__compile_procs_create(s->worker_path, n);
    }
    return cutune__compile_procs_compiler(s->compilers);
}

/* ------------------------------------------------------------------ */
/* Talking to the worker                                               */

/* Calls the worker; a reply shorter than `min_size` is a protocol error.
 * On DIED/TIMEOUT the session's message says so. */
static cutune__call_result call(cutune_session *s, uint32_t type,
                                const void *a, size_t alen, const void *b,
                                size_t blen, void **reply, size_t min_size,
                                double timeout_s)
{
    size_t size;
    cutune__call_result r = cutune__worker_call(&s->worker, type, a, alen, b,
                                                blen, reply, &size, timeout_s);
    if (r == CUTUNE__CALL_OK && size < min_size) {
        free(*reply);
        *reply = NULL;
        cutune__worker_stop(&s->worker);
        snprintf(s->worker.message, sizeof s->worker.message,
                 "the GPU worker sent a malformed reply (is %s from another "
                 "cutune version?)", s->worker_path);
        return CUTUNE__CALL_DIED;
    }
    return r;
}

static const char no_device_hint[] =
    "cutune tunes on an NVIDIA GPU with its driver installed; on a machine "
    "without one, `cutune compile` and `cutune lookup --device-name NAME` "
    "still work";

static cutune_status start_worker(cutune_session *s)
{
    if (s->worker.pid != 0)
        return CUTUNE_OK;
    if (cutune__worker_start(&s->worker, s->worker_path) != 0)
        return fail(s, CUTUNE_ERR_WORKER, "%s (set CUTUNE_WORKER to the "
                    "path of cutune-worker)", s->worker.message);
    return CUTUNE_OK;
}

static cutune_status list_devices(cutune_session *s)
{
    cutune_status st = start_worker(s);
    if (st)
        return st;
    cutune__devices_reply *r = NULL;
    cutune__call_result cr = call(s, CUTUNE__MSG_DEVICES, NULL, 0, NULL, 0,
                                  (void **)&r, sizeof *r, 60.0);
    if (cr == CUTUNE__CALL_NOMEM)
        return fail(s, CUTUNE_ERR_NO_MEMORY, "out of memory");
    if (cr != CUTUNE__CALL_OK)
        return fail(s, CUTUNE_ERR_WORKER, "listing CUDA devices: %s",
                    s->worker.message);
    free(s->props);
    free(s->devices);
    s->props = NULL;
    s->devices = NULL;
    s->n_devices = 0;
    if (r->count <= 0) {
        st = fail(s, CUTUNE_ERR_NO_DEVICE, "no CUDA device found (%s). %s",
                  r->head.message[0] ? r->head.message : "count is 0",
                  no_device_hint);
        free(r);
        return st;
    }
    size_t n = (size_t)r->count;
    s->props = malloc(n * sizeof *s->props);
    s->devices = malloc(n * sizeof *s->devices);
    if (!s->props || !s->devices) {
        free(r);
        return fail(s, CUTUNE_ERR_NO_MEMORY, "out of memory");
    }
    memcpy(s->props, r + 1, n * sizeof *s->props);
    for (size_t i = 0; i < n; i++)
        s->devices[i] = s->props[i].fingerprint;
    s->n_devices = n;
    free(r);
    return CUTUNE_OK;
}

cutune_status cutune_session_devices(cutune_session *s,
                                     const cutune_device **devices,
                                     size_t *count)
{
    if (!s || !devices || !count)
        return CUTUNE_ERR_INVALID_ARGUMENT;
    cutune_status st = list_devices(s);
    cutune__worker_stop(&s->worker);
    *devices = s->devices;
    *count = s->n_devices;
    return st;
}

/* How long a RUN may take before the worker is presumed hung. A launch
 * may take 100 times the best median so far (at least 1 s), never more
 * than the absolute cap; the first launches (validation, warm-up) are each allowed
 * that, plus the timed loop's own limit. */
static double run_timeout(const cutune_session *s)
{
    double cap = s->opt.launch_timeout_s > 0 ? s->opt.launch_timeout_s
                                             : DEFAULT_LAUNCH_TIMEOUT;
    /* Until something has been measured, only the cap applies. */
    double per_launch = s->best_ms > 0 ? 100.0 * s->best_ms * 1e-3 : cap;
    if (per_launch < 1.0)
        per_launch = 1.0;
    if (per_launch > cap)
        per_launch = cap;
    return 2.0 * MAX_SECONDS + (WARMUP_LAUNCHES + 1) * per_launch;
}

static void fill_run_request(cutune__run_request *q, const unsigned grid[3],
                             const unsigned block[3], unsigned smem,
                             cutune__run_mode mode)
{
    memset(q, 0, sizeof *q);
    for (int d = 0; d < 3; d++) {
        q->grid[d] = grid[d];
        q->block[d] = block[d];
    }
    q->dynamic_smem = smem;
    q->mode = mode;
    q->warmup = WARMUP_LAUNCHES;
    q->min_reps = MIN_REPS;
    q->max_reps = MAX_REPS;
    q->flush_l2 = 1;
    q->min_seconds = MIN_SECONDS;
    q->max_seconds = MAX_SECONDS;
    q->atol = ATOL;
    q->rtol = RTOL;
    q->ci_level = CI_LEVEL;
    q->ci_rel = CI_REL;
    q->early_reps = EARLY_REPS;
    q->early_margin = EARLY_MARGIN;
    q->race_margin = RACE_MARGIN;
}

/* Loads a cubin into the worker. Returns the call result; a CUDA error in
 * the reply is returned as *cuda_error with the message in `msg`, and
 * *rejected says whether the driver refused the image itself. */
static cutune__call_result load_cubin(cutune_session *s, const char *cubin,
                                      size_t size, const char *lowered,
                                      int *cuda_error, int *rejected,
                                      char *msg, size_t msglen)
{
    *rejected = 0;
    /* The kernel by its name in the cubin (mangled for C++ kernels). */
    const char *name = lowered ? lowered : s->problem->kernel_name;
    cutune__load_request q = {(uint32_t)strlen(name), size};
    /* The name and cubin are sent as one block after the request. */
    size_t blen = q.name_len + size;
    char *buf = malloc(blen);
    if (!buf)
        return CUTUNE__CALL_NOMEM;
    memcpy(buf, name, q.name_len);
    memcpy(buf + q.name_len, cubin, size);
    cutune__load_reply *r = NULL;
    cutune__call_result cr = call(s, CUTUNE__MSG_LOAD, &q, sizeof q, buf,
                                  blen, (void **)&r, sizeof *r, 60.0);
    free(buf);
    if (cr != CUTUNE__CALL_OK)
        return cr;
    *cuda_error = r->head.cuda_error;
    *rejected = r->head.cuda_error && r->image_rejected;
    s->load_mismatch = r->head.cuda_error && r->args_mismatch;
    snprintf(msg, msglen, "%s", r->head.message);
    if (r->head.fatal)
        cutune__worker_stop(&s->worker);
    free(r);
    return CUTUNE__CALL_OK;
}

static cutune_status send_references(cutune_session *s)
{
    const cutune_problem *p = s->problem;
    for (size_t i = 0; i < p->n_refs; i++) {
        const cutune__reference *ref = &p->refs[i];
        cutune__reference_request q = {(uint32_t)ref->arg,
                                       (uint32_t)ref->fill, ref->seed,
                                       ref->fill_value, ref->atol,
                                       ref->rtol};
        cutune__reply *r = NULL;
        cutune__call_result cr = call(
            s, CUTUNE__MSG_REFERENCE, &q, sizeof q, ref->data,
            ref->fill == CUTUNE__FILL_BINARY ? ref->data_size : 0,
            (void **)&r, sizeof *r, 120.0);
        if (cr != CUTUNE__CALL_OK)
            return fail(s, CUTUNE_ERR_WORKER, "setting the reference of "
                        "'%s': %s", p->args[ref->arg].name,
                        s->worker.message);
        cutune_status st = CUTUNE_OK;
        if (r->cuda_error)
            st = fail(s, CUTUNE_ERR_CUDA, "setting the reference of '%s': %s",
                      p->args[ref->arg].name, r->message);
        free(r);
        if (st)
            return st;
    }
    return CUTUNE_OK;
}

/* The worker's output comparison and fill kernels for s->arch, through
 * the binary cache: compiling them is most of a worker's start-up
 * otherwise. Without them (NVRTC failing here) the worker compiles its
 * own. */
static void compile_compare(cutune_session *s, int refresh)
{
    if (s->compare_cubin || s->compare_from_worker)
        return;
    char arch[48];
    snprintf(arch, sizeof arch, "--gpu-architecture=%s", s->arch);
    char *opts[] = {arch};
    cutune__compile_job job = {.source = cutune__compare_source,
                               .source_name = "cutune_compare.cu",
                               .options = opts,
                               .n_options = 1,
                               .cache = s->binaries,
                               .refresh = refresh};
    if (cutune__compile(&job) == 0 && job.ok) {
        s->compare_cubin = job.cubin;
        s->compare_cubin_size = job.cubin_size;
        job.cubin = NULL;
    } else if (refresh) {
        s->compare_from_worker = 1;
    }
    cutune__compile_job_clear(&job);
}

static cutune_status compile_reference(cutune_session *s, size_t config,
                                       int refresh);

/* Runs the default configuration (loaded) once; its outputs become the
 * reference every other configuration is validated against. */
static cutune_status run_reference(cutune_session *s)
{
    const cutune_problem *p = s->problem;
    cutune_status st;
    cutune__call_result cr;
    size_t ref = cutune__problem_default_config(p);
    unsigned grid[3], block[3];
    char gerr[256];
    if (cutune__problem_geometry(p, ref, grid, block, gerr, sizeof gerr))
        return fail(s, CUTUNE_ERR_PARSE, "%s: default configuration: %s",
                    p->origin, gerr);
    cutune__run_request rq;
    fill_run_request(&rq, grid, block, p->shared_memory,
                     CUTUNE__RUN_REFERENCE);
    cutune__run_reply *rr = NULL;
    cr = call(s, CUTUNE__MSG_RUN, &rq, sizeof rq, NULL, 0, (void **)&rr,
              sizeof *rr, run_timeout(s));
    if (cr != CUTUNE__CALL_OK)
        return fail(s, CUTUNE_ERR_CUDA, "running the default configuration "
                    "for the reference output: %s", s->worker.message);
    if (rr->outcome != CUTUNE_OUTCOME_CORRECT) {
        st = fail(s, CUTUNE_ERR_CUDA, "the default configuration, which "
                  "gives the reference output, failed (%s): %s",
                  cutune_outcome_str((cutune_outcome)rr->outcome),
                  rr->head.message);
        free(rr);
        return st;
    }
    free(rr);
    return CUTUNE_OK;
}
/* Starts a worker ready to measure: device, arguments, reference output.
 * Used at the start of a tune and again after a worker died. */
static cutune_status bring_up(cutune_session *s, int keep_reference)
{
    cutune_status st = start_worker(s);
    if (st)
        return st;
    compile_compare(s, 0);
    cutune__init_request iq = {s->opt.device, 0, s->compare_cubin_size};
    cutune__init_reply *ir = NULL;
    cutune__call_result cr = call(s, CUTUNE__MSG_INIT, &iq, sizeof iq,
                                  s->compare_cubin, s->compare_cubin_size,
                                  (void **)&ir, sizeof *ir, 120.0);
    if (cr != CUTUNE__CALL_OK)
        return fail(s, CUTUNE_ERR_WORKER, "starting the GPU worker: %s",
                    s->worker.message);
    if (ir->head.cuda_error && ir->cubin_rejected) {
        /* The comparison kernels did not load. From the binary cache (a
         * damaged entry, a changed driver): compiled again, which replaces
         * the entry. Compiled just now and still rejected: the worker
         * compiles its own, for the rest of the session. */
        int again = !s->compare_refreshed;
        logf_(s, CUTUNE_LOG_WARN, "the comparison kernels did not load "
              "(%s); %s", ir->head.message,
              again ? "compiling them again"
                    : "compiling them in the worker");
        free(ir);
        ir = NULL;
        cutune__worker_stop(&s->worker);
        free(s->compare_cubin);
        s->compare_cubin = NULL;
        s->compare_cubin_size = 0;
        if (again) {
            s->compare_refreshed = 1;
            compile_compare(s, 1);
        } else {
            s->compare_from_worker = 1;
        }
        return bring_up(s, keep_reference);
    }
    if (ir->head.cuda_error) {
        st = fail(s, CUTUNE_ERR_CUDA, "device %d: %s", s->opt.device,
                  ir->head.message);
        free(ir);
        cutune__worker_stop(&s->worker);
        return st;
    }
    s->device = ir->props;
    free(ir);
    double t_init = cutune__now();
    snprintf(s->arch, sizeof s->arch, "sm_%d%d",
             s->device.fingerprint.cc_major, s->device.fingerprint.cc_minor);

    const cutune_problem *p = s->problem;
    cutune__args_request aq = {(uint32_t)p->n_args};
    cutune__reply *ar = NULL;
    cr = call(s, CUTUNE__MSG_ARGS, &aq, sizeof aq, s->args_payload,
              s->args_payload_size, (void **)&ar, sizeof *ar, 300.0);
    if (cr != CUTUNE__CALL_OK)
        return fail(s, CUTUNE_ERR_WORKER, "setting up kernel arguments: %s",
                    s->worker.message);
    if (ar->cuda_error) {
        st = fail(s, CUTUNE_ERR_CUDA, "setting up kernel arguments: %s",
                  ar->message);
        free(ar);
        return st;
    }
    free(ar);
    logf_(s, CUTUNE_LOG_DEBUG, "GPU worker: %.3f s to set up the arguments",
          cutune__now() - t_init);
    if (!keep_reference)
        return CUTUNE_OK;

    int cerr = 0, rejected = 0;
    char msg[1024];
    cr = load_cubin(s, s->ref_cubin, s->ref_cubin_size, s->ref_lowered, &cerr,
                    &rejected, msg, sizeof msg);
    if (cr == CUTUNE__CALL_OK && rejected && s->ref_from_cache &&
        s->worker.pid != 0) {
        /* As for any configuration (reload_fresh): compiled again. */
        logf_(s, CUTUNE_LOG_WARN, "the cached binary of the default "
              "configuration did not load (%s); compiling it again", msg);
        st = compile_reference(s, cutune__problem_default_config(p), 1);
        if (st)
            return st;
        cr = load_cubin(s, s->ref_cubin, s->ref_cubin_size, s->ref_lowered,
                        &cerr, &rejected, msg, sizeof msg);
    }
    /* The parameter list does not change with the tunables in practice:
     * a mismatch here is the problem's, named as the T1 field to fix. */
    if (cr == CUTUNE__CALL_OK && cerr && s->load_mismatch)
        return fail(s, CUTUNE_ERR_PARSE, "%s: %s", p->origin, msg);
    if (cr != CUTUNE__CALL_OK || cerr)
        return fail(s, CUTUNE_ERR_CUDA, "loading the reference "
                    "configuration: %s", cr ? s->worker.message : msg);
    /* T1 ReferenceArguments give the expected outputs; the default
     * configuration stays loaded for the occupancy query. */
    return p->n_refs > 0 ? send_references(s) : run_reference(s);
}

/* ------------------------------------------------------------------ */
/* Evaluating configurations                                           */

static eval_record *add_eval(cutune_session *s, size_t config)
{
    if (s->n_evals == s->cap_evals) {
        size_t cap = s->cap_evals ? 2 * s->cap_evals : 64;
        eval_record *e = realloc(s->evals, cap * sizeof *e);
        if (!e)
            return NULL;
        s->evals = e;
        s->cap_evals = cap;
    }
    eval_record *e = &s->evals[s->n_evals++];
    memset(e, 0, sizeof *e);
    e->pub.config_index = config;
    e->pub.time_ms = NAN;
    e->pub.sm_clock_mhz = e->pub.temperature_c = -1;
    return e;
}

static void set_message(eval_record *e, const char *msg)
{
    free((char *)e->pub.message);
    e->pub.message = strdup(msg ? msg : "");
}

/* "NAME=VALUE NAME=VALUE ..." of a configuration into buf. Returns 1 when
 * the whole text fitted, 0 when it was cut short (then it may read like
 * another configuration's, so it must not serve as a key). */
static int describe(const cutune_problem *p, size_t config, char *buf,
                    size_t len)
{
    const uint32_t *cfg = cutune__space_config(p->space, config);
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < p->n_params; i++) {
        int n = snprintf(buf + used, len - used, "%s%s=%s", i ? " " : "",
                         p->param_names[i], p->value_texts[i][cfg[i]]);
        if (n < 0 || (size_t)n >= len - used)
            return 0;
        used += (size_t)n;
    }
    return 1;
}

/* Median, minimum, standard deviation and interval of the first n of e's
 * runtimes. Returns -1 when memory ran out. */
static int summarize(eval_record *e, size_t n)
{
    double *d = malloc((n ? n : 1) * sizeof *d);
    if (!d)
        return -1;
    memcpy(d, e->runtimes, n * sizeof *d);
    gsl_sort(d, 1, n);
    e->pub.time_ms = gsl_stats_median_from_sorted_data(d, 1, n);
    e->min_ms = d[0];
    e->stddev_ms = n > 1 ? gsl_stats_sd(d, 1, n) : 0.0;
    cutune__median_ci(d, n, CI_LEVEL, &e->ci_lo_ms, &e->ci_hi_ms);
    free(d);
    return 0;
}

/* A binary from the cache that the driver would not load (a damaged
 * entry, or one a changed driver cannot use) is not the configuration's
 * fault: it is compiled again, which also replaces the entry, and loaded
 * once more. Returns the second load's result. */
static cutune__call_result reload_fresh(cutune_session *s,
                                        const eval_record *e,
                                        cutune__compile_job *job,
                                        int *cerr, char *msg, size_t msglen)
{
    char cfg[512];
    describe(s->problem, e->pub.config_index, cfg, sizeof cfg);
    /* The first in full; a damaged cache usually holds many more, which
     * the end of the tune counts. */
    logf_(s, s->recompiled++ ? CUTUNE_LOG_DEBUG : CUTUNE_LOG_WARN,
          "the cached binary of %s did not load (%s); compiling it again",
          cfg, msg);
    cutune__compile_job fresh = {.source = job->source,
                                 .source_name = job->source_name,
                                 .options = job->options,
                                 .n_options = job->n_options,
                                 .cache = job->cache,
                                 .kernel_name = job->kernel_name,
                                 .refresh = 1};
    cutune__call_result cr = CUTUNE__CALL_OK;
    int rejected;
    if (cutune__compile_with(&fresh, compilers(s), 0) != 0 || !fresh.ok) {
        snprintf(msg, msglen, "compiling again after the cached binary did "
                 "not load: %s", fresh.log ? fresh.log : "failed");
        cutune__compile_job_clear(&fresh);
        return cr;
    }
    /* The job takes the fresh binary, so that the final round (which
     * loads it again) does not meet the damaged one a second time. */
    char *cubin = job->cubin, *lowered = job->lowered_name;
    job->cubin = fresh.cubin;
    job->cubin_size = fresh.cubin_size;
    job->lowered_name = fresh.lowered_name;
    job->from_cache = 0;
    fresh.cubin = cubin;
    fresh.lowered_name = lowered;
    cutune__compile_job_clear(&fresh);
    /* A worker the rejected image took down is brought back first. */
    if (s->worker.pid == 0) {
        cutune_status st = bring_up(s, 1);
        if (st) {
            s->fatal = 1;
            s->fatal_status = st;
            snprintf(msg, msglen, "%s", s->errmsg);
            return CUTUNE__CALL_DIED;
        }
    }
    return load_cubin(s, job->cubin, job->cubin_size, job->lowered_name,
                      cerr, &rejected, msg, msglen);
}

/* Measures one compiled configuration on the worker, restarting the
 * worker first when a previous candidate killed it. In the final round
 * (`final`) nothing stops early and each finalist gets FINAL_SECONDS. */
static void measure(cutune_session *s, eval_record *e,
                    cutune__compile_job *job, int final)
{
    const cutune_problem *p = s->problem;
    unsigned grid[3], block[3];
    char msg[1024];
    if (cutune__problem_geometry(p, e->pub.config_index, grid, block, msg,
                                 sizeof msg) != 0) {
        e->pub.outcome = CUTUNE_OUTCOME_RUNTIME;
        set_message(e, msg);
        return;
    }
    if (s->worker.pid == 0) {
        logf_(s, CUTUNE_LOG_INFO, "starting a new GPU worker");
        cutune_status st = bring_up(s, 1);
        if (st) {
            s->fatal = 1;
            s->fatal_status = st;
            e->pub.outcome = CUTUNE_OUTCOME_RUNTIME;
            set_message(e, s->errmsg);
            return;
        }
    }
    int cerr = 0, rejected = 0;
    double t_load = cutune__now();
    cutune__call_result cr = load_cubin(s, job->cubin, job->cubin_size,
                                        job->lowered_name, &cerr, &rejected,
                                        msg, sizeof msg);
    if (cr == CUTUNE__CALL_OK && rejected && job->from_cache)
        cr = reload_fresh(s, e, job, &cerr, msg, sizeof msg);
    t_load = cutune__now() - t_load;
    if (cr != CUTUNE__CALL_OK || cerr) {
        e->pub.outcome = cr == CUTUNE__CALL_TIMEOUT ? CUTUNE_OUTCOME_TIMEOUT
                                                    : CUTUNE_OUTCOME_RUNTIME;
        set_message(e, cr ? s->worker.message : msg);
        return;
    }
    cutune__run_request rq;
    fill_run_request(&rq, grid, block, p->shared_memory, CUTUNE__RUN_MEASURE);
    rq.best_ms = final ? 0.0 : s->best_ms;
    rq.check = s->check;
    if (final) {
        rq.min_seconds = FINAL_SECONDS;
        rq.max_reps = FINAL_MAX_REPS;
    }
    if (s->opt.warm_cache)
        rq.flush_l2 = 0;
    /* Conditions of the measurement, where NVML can tell them. */
    cutune__gpu_sample gs;
    cutune__gpu_monitor_sample(s->monitor, s->worker.pid, &gs);
    e->pub.sm_clock_mhz = gs.sm_clock_mhz;
    e->pub.temperature_c = gs.temperature_c;
    if (gs.other_processes > 0 && !s->warned_other_processes) {
        s->warned_other_processes = 1;
        logf_(s, CUTUNE_LOG_WARN, "%d other process%s using the GPU during "
              "the tune; timings may be disturbed", gs.other_processes,
              gs.other_processes == 1 ? " is" : "es are");
    }
    cutune__run_reply *rr = NULL;
    double t_run = cutune__now();
    cr = call(s, CUTUNE__MSG_RUN, &rq, sizeof rq, NULL, 0, (void **)&rr,
              sizeof *rr, run_timeout(s));
    t_run = cutune__now() - t_run;
    if (cr == CUTUNE__CALL_OK)
        logf_(s, CUTUNE_LOG_DEBUG, "load %.2f ms, run %.2f ms of which GPU "
              "%.2f ms (kernels %.2f ms, %u timed launches)", 1e3 * t_load,
              1e3 * t_run, rr->span_ms, rr->gpu_ms, rr->n_times);
    if (cr == CUTUNE__CALL_TIMEOUT) {
        e->pub.outcome = CUTUNE_OUTCOME_TIMEOUT;
        set_message(e, s->worker.message);
        return;
    }
    if (cr != CUTUNE__CALL_OK) {
        e->pub.outcome = CUTUNE_OUTCOME_RUNTIME;
        set_message(e, s->worker.message);
        return;
    }
    e->pub.outcome = (cutune_outcome)rr->outcome;
    set_message(e, rr->head.message);
    e->gpu_ms = rr->gpu_ms;
    s->span_ms += rr->span_ms;
    e->pub.stopped_early = rr->stopped_early;
    s->gpu_ms += rr->gpu_ms;
    if (rr->head.fatal)
        cutune__worker_stop(&s->worker);
    e->differs = rr->outcome == CUTUNE_OUTCOME_CORRECTNESS && rr->differs;
    if ((rr->outcome == CUTUNE_OUTCOME_CORRECT || e->differs) &&
        rr->n_times > 0) {
        const float *t = (const float *)(rr + 1);
        e->runtimes = malloc(rr->n_times * sizeof *e->runtimes);
        for (uint32_t i = 0; e->runtimes && i < rr->n_times; i++)
            e->runtimes[i] = t[i];
        e->runs = e->runtimes ? rr->n_times : 0;
        if (!e->runtimes || summarize(e, e->runs) != 0) {
            free(e->runtimes);
            e->runtimes = NULL;
            e->runs = 0;
            e->pub.outcome = CUTUNE_OUTCOME_RUNTIME;
            set_message(e, "out of memory");
        }
    } else if (rr->outcome == CUTUNE_OUTCOME_CORRECT) {
        e->pub.outcome = CUTUNE_OUTCOME_RUNTIME;
        set_message(e, "no timed launch completed");
    }
    free(rr);
}

/* NVRTC jobs for configurations of a problem, with the options they own. */
typedef struct job_set {
    cutune__compile_job *jobs;
    char ***opts;
    size_t *nopts;
    char **srcs;        /* per job: its own source, or NULL for p->source */
    size_t n;
} job_set;

static void job_set_clear(job_set *js)
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
static void job_set_free(void *js)
{
    job_set_clear(js);
    free(js);
}

/* Jobs for configurations indices[0..n) (indices NULL: 0..n-1) for `arch`.
 * Returns 0, or -1 when memory ran out (js cleared). */
static int job_set_init(job_set *js, cutune_session *s,
                        const cutune_problem *p, const size_t *indices,
                        size_t n, const char *arch)
{
    js->n = n;
    js->jobs = calloc(n ? n : 1, sizeof *js->jobs);
    js->opts = calloc(n ? n : 1, sizeof *js->opts);
    js->nopts = calloc(n ? n : 1, sizeof *js->nopts);
    js->srcs = calloc(n ? n : 1, sizeof *js->srcs);
    if (!js->jobs || !js->opts || !js->nopts || !js->srcs) {
        job_set_clear(js);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        size_t config = indices ? indices[i] : i;
        js->opts[i] = cutune__problem_options(p, config, arch, &js->nopts[i]);
        if (!js->opts[i]) {
            job_set_clear(js);
            return -1;
        }
        js->srcs[i] = cutune__problem_source(p, config);
        js->jobs[i].source = js->srcs[i] ? js->srcs[i] : p->source;
        js->jobs[i].source_name = p->kernel_name;
        js->jobs[i].options = js->opts[i];
        js->jobs[i].n_options = js->nopts[i];
        js->jobs[i].cache = s->binaries;
        js->jobs[i].kernel_name = p->kernel_name;
    }
    return 0;
}

/* A record of the measurement log that configuration `config` (text
 * `cfg`) may take instead of being measured: one with the same launch
 * geometry and an outcome measuring again would repeat. A failed launch or
 * a time-out may have been the machine's fault rather than the
 * configuration's, so those are measured again. */
static const cutune__measured *earlier(const cutune_session *s,
                                       size_t config, const char *cfg)
{
    const cutune__measured *m = cutune__measure_log_find(s->measured, cfg);
    if (!m || m->outcome == CUTUNE_OUTCOME_RUNTIME ||
        m->outcome == CUTUNE_OUTCOME_TIMEOUT)
        return NULL;
    unsigned grid[3], block[3];
    char err[64];
    if (cutune__problem_geometry(s->problem, config, grid, block, err,
                                 sizeof err) != 0 ||
        memcmp(grid, m->grid, sizeof grid) != 0 ||
        memcmp(block, m->block, sizeof block) != 0)
        return NULL;
    return m;
}

/* Fills `e` from an earlier measurement. -1 when memory ran out. */
static int take_earlier(eval_record *e, const cutune__measured *m)
{
    e->pub.outcome = m->outcome;
    set_message(e, m->message);
    e->pub.time_ms = m->time_ms;
    e->pub.compile_ms = m->compile_ms;
    e->pub.stopped_early = m->stopped_early;
    e->pub.sm_clock_mhz = m->sm_clock_mhz;
    e->pub.temperature_c = m->temperature_c;
    e->min_ms = m->min_ms;
    e->stddev_ms = m->stddev_ms;
    e->ci_lo_ms = m->ci_lo_ms;
    e->ci_hi_ms = m->ci_hi_ms;
    e->gpu_ms = m->gpu_ms;
    e->framework_ms = m->framework_ms;
    e->timestamp = m->timestamp;
    e->reused = 1;
    e->final_runs = m->final_runs;
    if (m->runs > 0) {
        e->runtimes = malloc(m->runs * sizeof *e->runtimes);
        if (!e->runtimes)
            return -1;
        memcpy(e->runtimes, m->runtimes, m->runs * sizeof *e->runtimes);
        e->runs = m->runs;
    }
    /* A finalist's record sums up all its launches; the strategy is given
     * what the search measured, as the tune that logged it was, so that a
     * resumed tune takes the same path. */
    if (m->final_runs > 0 && m->final_runs < m->runs &&
        m->outcome == CUTUNE_OUTCOME_CORRECT)
        return summarize(e, m->runs - m->final_runs);
    return 0;
}

/* Appends a measured configuration to the log; a failure loses only its
 * line, so it is not reported. */
static void log_measurement(cutune_session *s, const eval_record *e,
                            char *cfg)
{
    if (!s->measured)
        return;
    cutune__measured m = {
        .config = cfg,
        .outcome = e->pub.outcome,
        .time_ms = e->pub.time_ms,
        .min_ms = e->min_ms,
        .stddev_ms = e->stddev_ms,
        .ci_lo_ms = e->ci_lo_ms,
        .ci_hi_ms = e->ci_hi_ms,
        .gpu_ms = e->gpu_ms,
        .compile_ms = e->pub.compile_ms,
        .framework_ms = e->framework_ms,
        .stopped_early = e->pub.stopped_early,
        .sm_clock_mhz = e->pub.sm_clock_mhz,
        .temperature_c = e->pub.temperature_c,
        .timestamp = e->timestamp,
        .message = (char *)e->pub.message,
        .runtimes = e->runtimes,
        .runs = e->runtimes ? e->runs : 0,
        .final_runs = e->runtimes ? e->final_runs : 0,
    };
    char err[64];
    if (cutune__problem_geometry(s->problem, e->pub.config_index, m.grid,
                                 m.block, err, sizeof err) != 0)
        return;
    cutune__measure_log_append(s->measured, &m);
}

/* AUTO output checks (output_check.h): once enough configurations have a
 * result, or at the end of the search, settles on comparing with the
 * default's output or on NaN/infinity checks. Settling on the latter turns
 * the timed configurations that differed into correct ones, in the
 * batch's objectives too (batch[0] is evals[first]). */
static void settle_check(cutune_session *s, size_t first, double *batch,
                         size_t n_batch)
{
    if (s->check != CUTUNE__CHECK_PROBE)
        return;
    int vary = cutune__outputs_vary(s->check_agreed, s->check_differed);
    s->check = vary ? CUTUNE__CHECK_FINITE : CUTUNE__CHECK_REFERENCE;
    size_t *configs = malloc((s->n_evals + 1) * sizeof *configs);
    unsigned char *differs = malloc(s->n_evals + 1);
    size_t n = 0;
    for (size_t i = 0; i < s->n_evals; i++) {
        eval_record *e = &s->evals[i];
        if (e->differs && vary) {
            e->pub.outcome = CUTUNE_OUTCOME_CORRECT;
            set_message(e, "");
            if (i >= first && i - first < n_batch)
                batch[i - first] = e->pub.time_ms;
        } else if (e->differs) {
            free(e->runtimes);
            e->runtimes = NULL;
            e->runs = 0;
            e->pub.time_ms = 0;
        }
        if (configs && differs &&
            (e->differs || e->pub.outcome == CUTUNE_OUTCOME_CORRECT)) {
            configs[n] = e->pub.config_index;
            differs[n++] = (unsigned char)e->differs;
        }
        e->differs = 0;
    }
    if (vary) {
        char names[256];
        size_t named = configs && differs
                           ? cutune__explain_differences(
                                 s->problem,
                                 cutune__problem_default_config(s->problem),
                                 configs, differs, n, names, sizeof names)
                           : 0;
        logf_(s, CUTUNE_LOG_WARN, "%s: %zu of the first %zu configurations "
              "give outputs that differ from the default configuration's; "
              "the output depends on %s%s by design, so from here outputs "
              "are only checked for NaN and infinity (give "
              "ReferenceArguments in the T1 file, or --check reference to "
              "insist on the default's output)", s->problem->origin,
              s->check_differed, s->check_agreed + s->check_differed,
              named ? "the tunables " : "tunables",
              named ? names : " cutune could not single out");
    }
    free(configs);
    free(differs);
}

static int evaluate_batch(void *user, const size_t *indices, size_t n,
                          double *objectives, size_t *done,
                          cutune__eval_more_fn more, void *more_ctx)
{
    cutune_session *s = user;
    *done = 0;
    s->batches++;
    /* The time since the previous batch was the strategy's, and so is the
     * time in `more`; it is shared among the evaluations made. */
    double search_ms = (cutune__now() - s->batch_end) * 1e3;
    size_t first_eval = s->n_evals;
    if (s->max_seconds > 0 && cutune__now() - s->started >= s->max_seconds)
        return 0;
    /* Configurations measured before (with reuse_measurements) are not
     * compiled; the rest are, as jobs todo[0..n_todo), among them the
     * configurations compiled ahead (cutune__batch_jobs). */
    const cutune__measured **prior = calloc(n ? n : 1, sizeof *prior);
    unsigned char *skip = calloc(n ? n : 1, 1);
    size_t *todo = calloc(n + AHEAD_PROPOSALS * AHEAD_EACH, sizeof *todo);
    size_t *job_of = malloc((n ? n : 1) * sizeof *job_of);
    size_t n_todo = 0;
    job_set js;
    memset(&js, 0, sizeof js);
    int rc = 0;
    /* Configurations compiled ahead are only worth their CPU where the
     * binary cache keeps them for the batch that wants them. */
    size_t ahead = more_ctx && s->binaries && s->drain
                       ? (size_t)(pool_threads(s) + 1) / 2
                       : 0;
    if (ahead > AHEAD_PROPOSALS)
        ahead = AHEAD_PROPOSALS;
    if (prior && skip && todo && job_of) {
        for (size_t i = 0; i < n; i++) {
            char cfg[512];
            if (s->opt.reuse_measurements && s->measured &&
                describe(s->problem, indices[i], cfg, sizeof cfg))
                prior[i] = earlier(s, indices[i], cfg);
            skip[i] = prior[i] != NULL;
        }
        size_t named;
        n_todo = cutune__batch_jobs(indices, n, skip, ahead, AHEAD_EACH,
                                    cutune__search_ahead, more_ctx, todo,
                                    job_of, &named);
        s->compiled_ahead += named;
    }
    int allocated = prior && skip && todo && job_of;
    free(skip);
    if (!allocated ||
        job_set_init(&js, s, s->problem, todo, n_todo, s->arch) != 0) {
        free(prior);
        free(todo);
        free(job_of);
        s->fatal = 1;
        s->fatal_status = fail(s, CUTUNE_ERR_NO_MEMORY, "out of memory");
        return -1;
    }
    /* The pool compiles in the background while the worker measures, so
     * the GPU waits for NVRTC only on the first job of a batch. A program
     * NVRTC rejects is a result of its configuration; NVRTC itself failing
     * is recorded the same way, with its reason, so that the tune still
     * ends with what it measured. */
    const cutune__compiler *remote = n_todo ? compilers(s) : NULL;
    cutune__compile_pool *pool =
        n_todo ? cutune__compile_start(js.jobs, n_todo,
                                       s->opt.compile_threads, remote)
               : NULL;
    if (!pool && n_todo)
        cutune__compile_batch(js.jobs, n_todo, s->opt.compile_threads, remote);
    for (size_t i = 0; i < n; i++) {
        if (s->max_seconds > 0 &&
            cutune__now() - s->started >= s->max_seconds)
            break;
        eval_record *e = add_eval(s, indices[i]);
        if (!e || (prior[i] && take_earlier(e, prior[i]) != 0)) {
            s->fatal = 1;
            s->fatal_status = fail(s, CUTUNE_ERR_NO_MEMORY, "out of memory");
            rc = -1;
            break;
        }
        char cfg[512];
        int whole = describe(s->problem, indices[i], cfg, sizeof cfg);
        if (prior[i]) {
            s->reused++;
        } else {
            if (pool) {
                double t0 = cutune__now();
                cutune__compile_wait(pool, job_of[i]);
                s->wait_compile_s += cutune__now() - t0;
            }
            cutune__compile_job *job = &js.jobs[job_of[i]];
            s->shared_compiles += job->waited;
            e->pub.compile_ms = job->seconds * 1e3;
            if (!job->ok) {
                e->pub.outcome = CUTUNE_OUTCOME_COMPILE;
                set_message(e, job->log);
            } else {
                double t0 = cutune__now();
                measure(s, e, job, 0);
                double kernel_ms = 0.0;
                for (size_t k = 0; e->runtimes && k < e->runs; k++)
                    kernel_ms += e->runtimes[k];
                e->framework_ms = (cutune__now() - t0) * 1e3 - kernel_ms;
                if (e->framework_ms < 0)
                    e->framework_ms = 0;
            }
            e->timestamp = (double)time(NULL);
            /* A worker that could not be brought back says nothing about
             * the configuration; a cut text cannot name it. */
            if (!s->fatal && whole)
                log_measurement(s, e, cfg);
        }
        if (s->check == CUTUNE__CHECK_PROBE && !prior[i]) {
            s->check_agreed += e->pub.outcome == CUTUNE_OUTCOME_CORRECT;
            s->check_differed += e->differs != 0;
        }
        objectives[i] = e->pub.outcome == CUTUNE_OUTCOME_CORRECT
                            ? e->pub.time_ms
                            : INFINITY;
        if (s->check == CUTUNE__CHECK_PROBE &&
            s->check_agreed + s->check_differed >= CUTUNE__CHECK_SAMPLE)
            settle_check(s, first_eval, objectives, i + 1);
        /* Early stops and racing compare with what this session measured:
         * a time taken from the log was measured under other conditions
         * (clocks, temperature), and a GPU a few % slower now would drop
         * true contenders. */
        if (isfinite(objectives[i]) && !prior[i] &&
            (s->best_ms == 0 || objectives[i] < s->best_ms))
            s->best_ms = objectives[i];
        *done = i + 1;
        const char *from = e->reused ? ", measured before" : "";
        if (e->pub.outcome == CUTUNE_OUTCOME_CORRECT)
            logf_(s, CUTUNE_LOG_INFO, "[%zu] %s: %.4f ms%s%s", s->n_evals,
                  cfg, e->pub.time_ms,
                  e->pub.stopped_early ? " (dropped early)" : "", from);
        else
            logf_(s, CUTUNE_LOG_INFO, "[%zu] %s: %s%s: %.200s", s->n_evals,
                  cfg, cutune_outcome_str(e->pub.outcome), from,
                  e->pub.message);
        if (s->fatal) {
            rc = -1;
            break;
        }
        /* The strategy has what it needed of this batch: the rest is not
         * measured (compiles already running finish, into the binary
         * cache where there is one, for a later proposal to find). */
        if (more) {
            double t0 = cutune__now();
            int go_on = more(more_ctx, i, objectives[i]);
            search_ms += (cutune__now() - t0) * 1e3;
            if (!go_on)
                break;
        }
    }
    for (size_t i = first_eval; i < s->n_evals; i++)
        s->evals[i].search_ms = search_ms / (double)(s->n_evals - first_eval);
    /* Compiles still running (the batch ended early) go on into the
     * binary cache without holding up the next batch: a later proposal
     * may well be one of them. (Without a binary cache nothing could
     * find their results, so the batch waits for them instead.) */
    double t_finish = cutune__now();
    job_set *left = pool && s->drain && s->binaries ? malloc(sizeof *left)
                                                    : NULL;
    if (left) {
        *left = js;
        memset(&js, 0, sizeof js);
        cutune__compile_detach(pool, s->drain, job_set_free, left);
    } else {
        cutune__compile_finish(pool);
    }
    s->wait_finish_s += cutune__now() - t_finish;
    job_set_clear(&js);
    free(prior);
    free(todo);
    free(job_of);
    s->batch_end = cutune__now();
    return rc;
}

/* ------------------------------------------------------------------ */
/* The final round                                                     */

/* Adds `t`, a final-round measurement of e's configuration, to `e`, and
 * frees t's parts. A finalist that fails now (a race that gives a wrong
 * answer now and then, a launch that breaks) takes that outcome: it is not
 * reliably right. Returns -1 when memory ran out. */
static int merge_final(eval_record *e, eval_record *t)
{
    int rc = 0;
    e->gpu_ms += t->gpu_ms;
    if (t->pub.outcome != CUTUNE_OUTCOME_CORRECT) {
        char *msg = cutune__strdup_printf("in the final round: %s",
                                          t->pub.message ? t->pub.message
                                                         : "");
        e->pub.outcome = t->pub.outcome;
        set_message(e, msg ? msg : t->pub.message);
        free(msg);
        e->pub.time_ms = NAN;
    } else {
        double *rt = realloc(e->runtimes,
                             (e->runs + t->runs) * sizeof *rt);
        if (rt) {
            memcpy(rt + e->runs, t->runtimes, t->runs * sizeof *rt);
            e->runtimes = rt;
            e->runs += t->runs;
            e->final_runs += t->runs;
        }
        rc = rt ? summarize(e, e->runs) : -1;
    }
    free((char *)t->pub.message);
    free(t->runtimes);
    return rc;
}

/* Whether a result may take part in the final round or win. */
static int contender(const eval_record *e)
{
    return e->pub.outcome == CUTUNE_OUTCOME_CORRECT && !e->pub.stopped_early;
}

static int faster_first(const void *a, const void *b)
{
    const eval_record *x = *(eval_record *const *)a;
    const eval_record *y = *(eval_record *const *)b;
    if (x->pub.time_ms != y->pub.time_ms)
        return x->pub.time_ms < y->pub.time_ms ? -1 : 1;
    return x->pub.config_index < y->pub.config_index ? -1
           : x->pub.config_index > y->pub.config_index;
}

/* Measures the search's best few again (see the protocol at the top). A
 * finalist that already has final-round launches (from the measurement
 * log, with reuse_measurements) is not measured again, so a resumed tune
 * that had finished costs no GPU time. The binaries come from the binary
 * cache, or are compiled again without one. */
static cutune_status final_round(cutune_session *s)
{
    double fastest = INFINITY;
    for (size_t i = 0; i < s->n_evals; i++)
        if (contender(&s->evals[i]) && s->evals[i].pub.time_ms < fastest)
            fastest = s->evals[i].pub.time_ms;
    if (!isfinite(fastest))
        return CUTUNE_OK;
    eval_record **fin = malloc(s->n_evals * sizeof *fin);
    size_t n_fin = 0;
    if (!fin)
        return fail(s, CUTUNE_ERR_NO_MEMORY, "out of memory");
    for (size_t i = 0; i < s->n_evals; i++)
        if (contender(&s->evals[i]) &&
            s->evals[i].pub.time_ms <= fastest * (1.0 + FINAL_MARGIN))
            fin[n_fin++] = &s->evals[i];
    qsort(fin, n_fin, sizeof *fin, faster_first);
    if (n_fin > FINAL_MAX)
        n_fin = FINAL_MAX;
    /* Those to measure first, as fin[0..n_todo), the rest after them. */
    size_t n_todo = 0;
    for (size_t k = 0; k < n_fin; k++) {
        fin[k]->finalist = 1;
        if (fin[k]->final_runs == 0) {
            eval_record *x = fin[n_todo];
            fin[n_todo++] = fin[k];
            fin[k] = x;
        }
    }
    size_t *configs = malloc((n_todo ? n_todo : 1) * sizeof *configs);
    job_set js;
    memset(&js, 0, sizeof js);
    if (!configs) {
        free(fin);
        return fail(s, CUTUNE_ERR_NO_MEMORY, "out of memory");
    }
    for (size_t k = 0; k < n_todo; k++)
        configs[k] = fin[k]->pub.config_index;
    if (n_todo && job_set_init(&js, s, s->problem, configs, n_todo,
                               s->arch) != 0) {
        free(configs);
        free(fin);
        return fail(s, CUTUNE_ERR_NO_MEMORY, "out of memory");
    }
    logf_(s, CUTUNE_LOG_INFO, "final round: %zu finalist%s within %.0f%% "
          "of the fastest, %zu to measure", n_fin, n_fin == 1 ? "" : "s",
          100.0 * FINAL_MARGIN, n_todo);
    if (n_todo)
        cutune__compile_batch(js.jobs, n_todo, s->opt.compile_threads,
                              compilers(s));
    cutune_status st = CUTUNE_OK;
    /* Finalists taken from the log with their final round. */
    for (size_t k = n_todo; k < n_fin && !st; k++)
        if (summarize(fin[k], fin[k]->runs) != 0)
            st = fail(s, CUTUNE_ERR_NO_MEMORY, "out of memory");
    int passes_done = 0, cut = 0;
    for (int pass = 0; pass < FINAL_PASSES && !st && !cut; pass++) {
        for (size_t j = 0; j < n_todo && !st && !cut; j++) {
            size_t k = pass % 2 ? n_todo - 1 - j : j;
            eval_record *e = fin[k];
            cutune__compile_job *job = &js.jobs[k];
            if (!contender(e))
                continue;    /* failed in an earlier pass */
            if (!job->ok) {  /* NVRTC disagrees with itself: keep what the
                                search measured */
                e->finalist = 0;
                continue;
            }
            eval_record t;
            memset(&t, 0, sizeof t);
            t.pub.config_index = e->pub.config_index;
            t.pub.time_ms = NAN;
            measure(s, &t, job, 1);
            if (s->fatal) {
                /* No worker could be brought back: that says nothing of
                 * the finalist, and the search's results still stand. */
                logf_(s, CUTUNE_LOG_WARN, "final round cut short, the "
                      "winner is chosen on what was measured: %s",
                      t.pub.message ? t.pub.message : "");
                free((char *)t.pub.message);
                free(t.runtimes);
                cut = 1;
                break;
            } else if (merge_final(e, &t) != 0) {
                st = fail(s, CUTUNE_ERR_NO_MEMORY, "out of memory");
            }
        }
        if (!st && !cut)
            passes_done++;
    }
    /* What a whole final round measured goes to the log (the last line
     * of a configuration wins there). A round cut short is not logged:
     * a resumed tune measures it again. */
    for (size_t k = 0; k < n_todo; k++) {
        char cfg[512];
        int whole = describe(s->problem, fin[k]->pub.config_index, cfg,
                             sizeof cfg);
        /* A finalist that failed now keeps the search's line in the log,
         * so that a resumed tune steers as this one did (and measures it
         * again in its final round). */
        if (whole && fin[k]->final_runs > 0 && contender(fin[k]) &&
            passes_done == FINAL_PASSES)
            log_measurement(s, fin[k], cfg);
        if (contender(fin[k]))
            logf_(s, CUTUNE_LOG_INFO, "[final] %s: %.4f ms (median of %zu "
                  "launches, %zu in the final round)", cfg,
                  fin[k]->pub.time_ms, fin[k]->runs, fin[k]->final_runs);
        else
            logf_(s, CUTUNE_LOG_INFO, "[final] %s: %s: %.200s", cfg,
                  cutune_outcome_str(fin[k]->pub.outcome),
                  fin[k]->pub.message);
    }
    job_set_clear(&js);
    free(configs);
    free(fin);
    return st;
}

/* ------------------------------------------------------------------ */
/* Tuning                                                              */

static const eval_record *find_eval(const cutune_session *s, size_t config)
{
    for (size_t i = 0; i < s->n_evals; i++)
        if (s->evals[i].pub.config_index == config)
            return &s->evals[i];
    return NULL;
}

/* Spaces larger than this are not scanned for a block size (see below). */
#define OCCUPANCY_SCAN_LIMIT ((size_t)1 << 20)

/* For a problem whose threads per block follow from other parameters (a
 * LocalSize expression such as "(BM // TM) * (BN // TN)") rather than a
 * block_size_x parameter: the configuration whose block has the number of
 * threads nearest to the suggestion, and among those the one that differs
 * from the default in the fewest parameters (then the lowest index). */
static size_t occupancy_scan(const cutune_problem *p, size_t def,
                             int block_size)
{
    size_t n = cutune__space_size(p->space);
    if (def == SIZE_MAX || n > OCCUPANCY_SCAN_LIMIT)
        return def;
    const uint32_t *dcfg = cutune__space_config(p->space, def);
    size_t best = def;
    double best_d = INFINITY;
    size_t best_diff = SIZE_MAX;
    for (size_t i = 0; i < n; i++) {
        unsigned grid[3], block[3];
        char err[16];
        if (cutune__problem_geometry(p, i, grid, block, err, sizeof err) != 0)
            continue;
        double threads = (double)block[0] * block[1] * block[2];
        if (threads <= 0)
            continue;
        double d = fabs(log(threads / (double)block_size));
        const uint32_t *cfg = cutune__space_config(p->space, i);
        size_t diff = 0;
        for (size_t k = 0; k < p->n_params; k++)
            diff += cfg[k] != dcfg[k];
        /* Block sizes within 1% count as equal. */
        if (d < best_d - 0.01 || (d <= best_d + 0.01 && diff < best_diff)) {
            best = i;
            best_d = d;
            best_diff = diff;
        }
    }
    return best;
}

/* The occupancy suggestion as a configuration: the problem's defaults with
 * the block size nearest to what the occupancy API suggests. */
static size_t occupancy_start(cutune_session *s, int block_size)
{
    const cutune_problem *p = s->problem;
    size_t def = cutune__problem_default_config(p);
    if (block_size <= 0)
        return def;
    size_t bx = cutune__problem_find_param(p, "block_size_x");
    if (bx == SIZE_MAX)
        return occupancy_scan(p, def, block_size);
    uint32_t *cfg = malloc(p->n_params * sizeof *cfg);
    if (!cfg)
        return def;
    memcpy(cfg, cutune__space_config(p->space, def),
           p->n_params * sizeof *cfg);
    /* Threads in y and z stay as the defaults have them. */
    long long others = 1;
    size_t by = cutune__problem_find_param(p, "block_size_y");
    size_t bz = cutune__problem_find_param(p, "block_size_z");
    const cutune__value *v;
    if (by != SIZE_MAX && (v = &p->param_values[by][cfg[by]]) &&
        v->type == CUTUNE__V_INT && v->u.i > 0)
        others *= v->u.i;
    if (bz != SIZE_MAX && (v = &p->param_values[bz][cfg[bz]]) &&
        v->type == CUTUNE__V_INT && v->u.i > 0)
        others *= v->u.i;
    double want = (double)block_size / (double)others;
    double best = INFINITY;
    for (size_t k = 0; k < p->param_value_counts[bx]; k++) {
        v = &p->param_values[bx][k];
        if (v->type != CUTUNE__V_INT || v->u.i <= 0)
            continue;
        double d = fabs(log((double)v->u.i / want));
        if (d < best) {
            best = d;
            cfg[bx] = (uint32_t)k;
        }
    }
    size_t idx = cutune__space_nearest(p->space, cfg);
    free(cfg);
    return idx;
}

static cutune_status prepare_args(cutune_session *s)
{
    const cutune_problem *p = s->problem;
    s->wire_args = calloc(p->n_args + 1, sizeof *s->wire_args);
    if (!s->wire_args)
        return fail(s, CUTUNE_ERR_NO_MEMORY, "out of memory");
    int any_output = 0;
    for (size_t i = 0; i < p->n_args; i++)
        any_output |= p->args[i].is_output;
    any_output |= p->n_refs > 0;
    for (size_t i = 0; i < p->n_args; i++) {
        const cutune__arg *a = &p->args[i];
        cutune__wire_arg *w = &s->wire_args[i];
        w->is_vector = (uint32_t)a->is_vector;
        w->dtype = (uint32_t)a->dtype;
        w->fill = (uint32_t)a->fill;
        w->count = a->count;
        w->seed = a->seed;
        w->fill_value = a->fill_value;
        w->is_output = (uint32_t)a->is_output;
        /* An argument with a T1 reference is an output to validate. */
        for (size_t k = 0; k < p->n_refs; k++)
            if (p->refs[k].arg == i)
                w->is_output = 1;
        w->is_symbol = (uint32_t)a->is_symbol;
        snprintf(w->symbol, sizeof w->symbol, "%s", a->name);
        w->data_size = a->fill == CUTUNE__FILL_BINARY ? a->data_size : 0;
    }
    s->args_payload_size = p->n_args * sizeof *s->wire_args;
    for (size_t i = 0; i < p->n_args; i++)
        s->args_payload_size += s->wire_args[i].data_size;
    s->args_payload = malloc(s->args_payload_size + 1);
    if (!s->args_payload)
        return fail(s, CUTUNE_ERR_NO_MEMORY, "out of memory");
    memcpy(s->args_payload, s->wire_args, p->n_args * sizeof *s->wire_args);
    char *at = s->args_payload + p->n_args * sizeof *s->wire_args;
    for (size_t i = 0; i < p->n_args; i++) {
        if (!s->wire_args[i].data_size)
            continue;
        memcpy(at, p->args[i].data, s->wire_args[i].data_size);
        at += s->wire_args[i].data_size;
    }
    if (!any_output)
        logf_(s, CUTUNE_LOG_WARN, "%s: no argument is marked Output, so "
              "results are not validated", p->origin);
    return CUTUNE_OK;
}

static cutune_status compile_reference(cutune_session *s, size_t config,
                                       int refresh)
{
    size_t n;
    char **opts = cutune__problem_options(s->problem, config, s->arch, &n);
    if (!opts)
        return fail(s, CUTUNE_ERR_NO_MEMORY, "out of memory");
    char *src = cutune__problem_source(s->problem, config);
    cutune__compile_job job = {.source = src ? src : s->problem->source,
                               .source_name = s->problem->kernel_name,
                               .options = opts,
                               .n_options = n,
                               .cache = s->binaries,
                               .kernel_name = s->problem->kernel_name,
                               .refresh = refresh};
    int rc = cutune__compile(&job);
    cutune__free_strings(opts, n);
    free(src);
    cutune_status st = CUTUNE_OK;
    if (rc != 0)
        st = fail(s, CUTUNE_ERR_NVRTC, "NVRTC failed: %s", job.log);
    else if (!job.ok)
        st = fail(s, CUTUNE_ERR_PARSE, "%s: the default configuration does "
                  "not compile for %s:\n%s", s->problem->origin, s->arch,
                  job.log);
    if (st) {
        cutune__compile_job_clear(&job);
        return st;
    }
    free(s->ref_cubin);
    free(s->ref_lowered);
    s->ref_cubin = job.cubin;
    s->ref_cubin_size = job.cubin_size;
    s->ref_lowered = job.lowered_name;
    s->ref_from_cache = job.from_cache;
    job.cubin = NULL;
    job.lowered_name = NULL;
    cutune__compile_job_clear(&job);
    return CUTUNE_OK;
}

static cutune_status query_occupancy(cutune_session *s, int *block_size)
{
    cutune__occupancy_request q = {s->problem->shared_memory, 0};
    cutune__occupancy_reply *r = NULL;
    cutune__call_result cr = call(s, CUTUNE__MSG_OCCUPANCY, &q, sizeof q, NULL,
                                  0, (void **)&r, sizeof *r, 60.0);
    if (cr != CUTUNE__CALL_OK)
        return fail(s, CUTUNE_ERR_WORKER, "occupancy query: %s",
                    s->worker.message);
    cutune_status st = CUTUNE_OK;
    if (r->head.cuda_error)
        st = fail(s, CUTUNE_ERR_CUDA, "occupancy query: %s", r->head.message);
    *block_size = r->block_size;
    free(r);
    return st;
}

static cutune_status measure_bandwidth(cutune_session *s)
{
    long long mem = s->device.fingerprint.memory_bytes;
    cutune__bandwidth_request q = {(uint64_t)(mem / 16 < (1LL << 30)
                                                  ? mem / 16
                                                  : (1LL << 30))};
    cutune__bandwidth_reply *r = NULL;
    cutune__call_result cr = call(s, CUTUNE__MSG_BANDWIDTH, &q, sizeof q,
                                  NULL, 0, (void **)&r, sizeof *r, 60.0);
    if (cr != CUTUNE__CALL_OK)
        return fail(s, CUTUNE_ERR_WORKER, "bandwidth measurement: %s",
                    s->worker.message);
    s->result.memcpy_gbs = r->head.cuda_error ? 0.0 : r->gbs;
    if (r->head.cuda_error)
        logf_(s, CUTUNE_LOG_WARN, "%s", r->head.message);
    free(r);
    return CUTUNE_OK;
}

static cutune_status record_winner(cutune_session *s)
{
    const cutune_problem *p = s->problem;
    cutune_cache *cache = NULL;
    cutune_status st = cutune_cache_open(s->cache_dir, &cache);
    if (st == CUTUNE_OK) {
        char joined[2048] = "";
        for (size_t i = 0; i < p->n_options; i++) {
            if (i)
                strncat(joined, " ", sizeof joined - strlen(joined) - 1);
            strncat(joined, p->options[i], sizeof joined - strlen(joined) - 1);
        }
        const cutune_tune_result *r = &s->result;
        cutune_cache_record rec;
        memset(&rec, 0, sizeof rec);
        rec.device = r->device;
        rec.problem_name = p->name;
        rec.source_hash = p->source_hash;
        rec.problem_size = p->problem_size;
        rec.n_problem_size = p->n_problem_size;
        rec.compiler_options = joined;
        rec.config = r->best;
        rec.n_config = r->n_params;
        rec.time_ms = r->best_ms;
        rec.time_min_ms = r->best_min_ms;
        rec.time_stddev_ms = r->best_stddev_ms;
        rec.runs = r->best_runs;
        rec.gbs = r->best_gbs;
        rec.baseline = r->baseline;
        rec.n_baseline = r->baseline ? r->n_params : 0;
        rec.baseline_ms = r->baseline_ms;
        rec.strategy = r->strategy;
        rec.evaluations = r->evaluations;
        rec.tune_seconds = r->wall_s;
        rec.timestamp = (long long)time(NULL);
        st = cutune_cache_append(cache, &rec);
    }
    if (st)
        st = fail(s, st, "writing the tuning cache: %s",
                  cutune_cache_errmsg(cache));
    cutune_cache_close(cache);
    return st;
}

static cutune_status publish(cutune_session *s,
                             const cutune__search_result *sr, size_t start,
                             const cutune__strategy_type *type)
{
    const cutune_problem *p = s->problem;
    cutune_tune_result *r = &s->result;
    r->device = s->device.fingerprint;
    r->n_params = p->n_params;
    r->strategy = type->name;
    r->evaluations = s->n_evals;
    s->pub_evals = calloc(s->n_evals + 1, sizeof *s->pub_evals);
    s->best_values = calloc(p->n_params, sizeof *s->best_values);
    s->baseline_values = calloc(p->n_params, sizeof *s->baseline_values);
    if (!s->pub_evals || !s->best_values || !s->baseline_values)
        return fail(s, CUTUNE_ERR_NO_MEMORY, "out of memory");
    for (size_t i = 0; i < s->n_evals; i++) {
        s->pub_evals[i] = s->evals[i].pub;
        s->pub_evals[i].runs = s->evals[i].runs;
        s->pub_evals[i].final_runs = s->evals[i].final_runs;
        if (s->evals[i].pub.outcome != CUTUNE_OUTCOME_CORRECT)
            r->failures++;
    }
    r->evals = s->pub_evals;
    r->n_evals = s->n_evals;

    const eval_record *base = find_eval(s, start);
    cutune__problem_config_values(p, start, s->baseline_values);
    r->baseline = s->baseline_values;
    r->baseline_ms = base && base->pub.outcome == CUTUNE_OUTCOME_CORRECT
                         ? base->pub.time_ms
                         : NAN;
    r->wall_s = cutune__now() - s->started;
    if (sr->best == SIZE_MAX)
        return fail(s, CUTUNE_ERR_NO_VALID_RESULT,
                    "%s: none of the %zu configurations evaluated ran "
                    "correctly", p->origin, s->n_evals);
    /* The winner is the fastest of the final round's finalists that are
     * still correct (of every result, where none is). Configurations
     * whose intervals overlap its interval are tied; the tie goes to the
     * lowest index, so that noise does not change the winner from one
     * tune to the next. */
    int any_finalist = 0;
    for (size_t i = 0; i < s->n_evals; i++) {
        any_finalist |= s->evals[i].finalist && contender(&s->evals[i]);
        r->finalists += s->evals[i].finalist;
    }
    const eval_record *fastest = NULL;
    for (size_t i = 0; i < s->n_evals; i++) {
        const eval_record *e = &s->evals[i];
        if (contender(e) && (e->finalist || !any_finalist) &&
            (!fastest || faster_first(&e, &fastest) < 0))
            fastest = e;
    }
    if (!fastest)
        return fail(s, CUTUNE_ERR_NO_VALID_RESULT,
                    "%s: none of the %zu configurations evaluated stayed "
                    "correct in the final round", p->origin, s->n_evals);
    const eval_record *best = fastest;
    for (size_t i = 0; i < s->n_evals; i++) {
        const eval_record *e = &s->evals[i];
        if (e == fastest || !contender(e) ||
            (any_finalist && !e->finalist) ||
            e->ci_lo_ms > fastest->ci_hi_ms ||
            fastest->ci_lo_ms > e->ci_hi_ms)
            continue;
        r->tied++;
        if (e->pub.config_index < best->pub.config_index)
            best = e;
    }
    r->gpu_busy = r->wall_s > 0 ? s->span_ms * 1e-3 / r->wall_s : 0.0;
    r->reused = s->reused;
    r->kernel_share = r->wall_s > 0 ? s->gpu_ms * 1e-3 / r->wall_s : 0.0;
    cutune__problem_config_values(p, best->pub.config_index, s->best_values);
    r->best = s->best_values;
    r->best_ms = best->pub.time_ms;
    r->best_min_ms = best->min_ms;
    r->best_stddev_ms = best->stddev_ms;
    r->best_runs = best->runs;
    double bytes = cutune__problem_bytes(p, best->pub.config_index);
    r->best_gbs = bytes > 0 ? bytes / (r->best_ms * 1e-3) / 1e9 : 0.0;
    double flops = cutune__problem_flops(p, best->pub.config_index);
    r->best_gflops = flops > 0 ? flops / (r->best_ms * 1e-3) / 1e9 : 0.0;
    r->speedup = r->baseline_ms / r->best_ms;
    return CUTUNE_OK;
}

cutune_status cutune_session_tune(cutune_session *s,
                                  const cutune_problem *problem,
                                  const cutune_tune_result **result)
{
    if (!s || !problem || !result || !problem->space)
        return CUTUNE_ERR_INVALID_ARGUMENT;
    if (problem->space_only)
        return fail(s, CUTUNE_ERR_INVALID_ARGUMENT, "%s: loaded for its "
                    "search space only; it cannot be tuned", problem->origin);
    *result = NULL;
    clear_tune(s);
    s->problem = problem;
    s->started = cutune__now();
    open_binaries(s);
    /* The caller's strategy and budget win; else the T1 file's. */
    const cutune__strategy_type *type =
        s->strategy             ? cutune__strategy_find(s->strategy)
        : problem->search_strategy ? cutune__strategy_find(problem->search_strategy)
                                   : cutune__strategies[0];
    int caller_budget = s->opt.max_evals || s->opt.max_seconds > 0 ||
                        s->opt.max_fraction > 0;
    s->max_evals = caller_budget ? s->opt.max_evals : problem->budget_evals;
    s->max_seconds = caller_budget ? s->opt.max_seconds
                                   : problem->budget_seconds;
    s->max_fraction = caller_budget ? s->opt.max_fraction
                                    : problem->budget_fraction;

    cutune_status st;
    if (!type) {
        st = fail(s, CUTUNE_ERR_INVALID_ARGUMENT, "%s: strategy '%s' is not "
                  "built into this cutune", problem->origin,
                  problem->search_strategy);
        goto out;
    }
    s->check_agreed = s->check_differed = 0;
    s->check = s->opt.output_check == CUTUNE_CHECK_REFERENCE ||
                       problem->n_refs > 0
                   ? CUTUNE__CHECK_REFERENCE
               : s->opt.output_check == CUTUNE_CHECK_FINITE
                   ? CUTUNE__CHECK_FINITE
                   : CUTUNE__CHECK_PROBE;
    if ((st = prepare_args(s)) || (st = list_devices(s)))
        goto out;
    if (s->opt.device < 0 || (size_t)s->opt.device >= s->n_devices) {
        st = fail(s, CUTUNE_ERR_INVALID_ARGUMENT, "device %d does not exist "
                  "(%zu CUDA device%s found)", s->opt.device, s->n_devices,
                  s->n_devices == 1 ? "" : "s");
        goto out;
    }
    /* The arch is known from the device list before any context exists. */
    snprintf(s->arch, sizeof s->arch, "sm_%d%d",
             s->props[s->opt.device].fingerprint.cc_major,
             s->props[s->opt.device].fingerprint.cc_minor);
    size_t ref = cutune__problem_default_config(problem);
    double t_devices = cutune__now();
    if ((st = compile_reference(s, ref, 0)))
        goto out;
    double t_ref = cutune__now();
    if ((st = bring_up(s, 1)))
        goto out;
    double t_up = cutune__now();
    if ((st = measure_bandwidth(s)))
        goto out;
    double t_bw = cutune__now();
    int occ_block = 0;
    if ((st = query_occupancy(s, &occ_block)))
        goto out;
    logf_(s, CUTUNE_LOG_DEBUG, "start: %.3f s to list devices, %.3f s to "
          "compile the default configuration, %.3f s to set up the device, "
          "arguments and reference, %.3f s measuring bandwidth, %.3f s for "
          "the occupancy query", t_devices - s->started, t_ref - t_devices,
          t_up - t_ref, t_bw - t_up, cutune__now() - t_bw);
    char why[128];
    s->monitor = cutune__gpu_monitor_open(s->device.fingerprint.uuid, why,
                                          sizeof why);
    if (!s->monitor)
        logf_(s, CUTUNE_LOG_DEBUG, "no clock or temperature records: %s",
              why);
    s->result.occupancy_block_size = occ_block;
    open_measure_log(s);
    size_t start = occupancy_start(s, occ_block);
    logf_(s, CUTUNE_LOG_INFO, "%s on %s (%s): %zu configurations; the "
          "occupancy API suggests %d threads per block", problem->name,
          s->device.fingerprint.name, s->arch,
          cutune__space_size(problem->space), occ_block);

    /* Exhaustive search is bounded by the space; any other strategy gets
     * a default budget unless the caller gave one. */
    size_t budget = s->max_evals;
    if (s->max_fraction > 0 && s->max_fraction <= 1) {
        size_t share = (size_t)ceil(s->max_fraction *
                                    (double)cutune__space_size(problem->space));
        if (share < 1)
            share = 1;
        if (budget == 0 || share < budget)
            budget = share;
    }
    if (budget == 0 && s->max_seconds <= 0 &&
        strcmp(type->name, "brute_force") != 0)
        budget = CUTUNE_DEFAULT_BUDGET;
    cutune__search_options so = {budget, 0, s->opt.seed, start};
    /* Twice the compile threads, so that the pool has the next jobs to
     * start while the first are measured. */
    so.batch = 2 * (size_t)pool_threads(s);
    /* A strategy that does not steer by results loses nothing to long
     * batches, and the GPU then waits for NVRTC at a batch's first job only
     * every OBLIVIOUS_BATCHES-th time (on a cold brute-force tune of 1 ms
     * kernels those waits were a tenth of the wall time). */
    if (type->oblivious)
        so.batch *= OBLIVIOUS_BATCHES;
    cutune__search_result sr;
    s->batch_end = cutune__now();
    double t_search = s->batch_end;
    int rc = cutune__search_run(type, problem->space, &so, evaluate_batch, s,
                                &sr);
    double t_final = cutune__now();
    if (rc == -1) {
        st = fail(s, CUTUNE_ERR_NO_MEMORY, "out of memory");
        goto out;
    }
    if (s->fatal) {
        st = s->fatal_status;
        goto out;
    }
    /* A search shorter than the sample settles on what it measured. */
    int settled_late = s->check == CUTUNE__CHECK_PROBE &&
                       cutune__outputs_vary(s->check_agreed,
                                            s->check_differed);
    settle_check(s, 0, NULL, 0);
    if ((sr.best != SIZE_MAX || settled_late) && (st = final_round(s)))
        goto out;
    if (s->recompiled > 1)
        logf_(s, CUTUNE_LOG_WARN, "%zu cached binaries did not load and were "
              "compiled again (the binary cache was damaged, or written for "
              "another driver)", s->recompiled);
    logf_(s, CUTUNE_LOG_DEBUG, "wall time: %.3f s to start (devices, the "
          "reference, bandwidth, occupancy), %.3f s searching (%zu batches; "
          "%.3f s waiting for a compile to measure, %.3f s for the "
          "compiles of batches that ended early; %zu compiles shared with "
          "an earlier batch's, %zu configurations queued to compile "
          "ahead), %.3f s in the final round",
          t_search - s->started, t_final - t_search, s->batches,
          s->wait_compile_s, s->wait_finish_s, s->shared_compiles,
          s->compiled_ahead, cutune__now() - t_final);
    if ((st = publish(s, &sr, start, type)))
        goto out;
    if (s->opt.write_cache)
        st = record_winner(s);
    if (st == CUTUNE_OK)
        *result = &s->result;
out:;
    /* Compiles of batches that ended early borrow the problem's source,
     * which the caller may free once this returns: nobody waits for them
     * any more, so their processes are killed (threads, where there are
     * no processes, are waited for). */
    if (cutune__compile_drain_pending(s->drain) > 0) {
        double t0 = cutune__now();
        cutune__compile_procs_cancel(s->compilers);
        cutune__compile_drain_wait(s->drain);
        cutune__compile_procs_resume(s->compilers);
        logf_(s, CUTUNE_LOG_DEBUG, "%.3f s to end the compiles of batches "
              "that ended early", cutune__now() - t0);
    }
    double t_stop = cutune__now();
    cutune__worker_stop(&s->worker);
    logf_(s, CUTUNE_LOG_DEBUG, "%.3f s to stop the GPU worker",
          cutune__now() - t_stop);
    return st;
}

cutune_status cutune_session_compile(cutune_session *s,
                                     const cutune_problem *problem,
                                     const char *arch, size_t limit,
                                     size_t *compiled, size_t *failed,
                                     double *seconds)
{
    if (!s || !problem || !arch || !problem->space)
        return CUTUNE_ERR_INVALID_ARGUMENT;
    if (problem->space_only)
        return fail(s, CUTUNE_ERR_INVALID_ARGUMENT, "%s: loaded for its "
                    "search space only; it cannot be compiled",
                    problem->origin);
    size_t n = cutune__space_size(problem->space);
    if (limit > 0 && limit < n)
        n = limit;
    double t0 = cutune__now();
    open_binaries(s);
    job_set js;
    if (job_set_init(&js, s, problem, NULL, n, arch) != 0) {
        if (seconds)
            *seconds = cutune__now() - t0;
        return fail(s, CUTUNE_ERR_NO_MEMORY, "out of memory");
    }
    cutune__compile_batch(js.jobs, n, s->opt.compile_threads, compilers(s));
    cutune_status st = CUTUNE_OK;
    size_t ok = 0, bad = 0;
    for (size_t i = 0; i < n; i++) {
        const cutune__compile_job *job = &js.jobs[i];
        if (job->ok)
            ok++;
        else
            bad++;
        if (job->nvrtc_failed && st == CUTUNE_OK) {
            st = fail(s, CUTUNE_ERR_NVRTC, "%s", job->log);
        } else if (!job->ok) {
            char cfg[512];
            describe(problem, i, cfg, sizeof cfg);
            logf_(s, CUTUNE_LOG_INFO, "%s: does not compile:\n%s", cfg,
                  job->log ? job->log : "");
        }
    }
    if (compiled)
        *compiled = ok;
    if (failed)
        *failed = bad;
    if (seconds)
        *seconds = cutune__now() - t0;
    job_set_clear(&js);
    return st;
}

cutune_status cutune_session_write_t4(cutune_session *s, const char *path)
{
    if (!s || !path)
        return CUTUNE_ERR_INVALID_ARGUMENT;
    if (!s->problem || s->n_evals == 0)
        return fail(s, CUTUNE_ERR_INVALID_ARGUMENT, "%s: no evaluations to "
                    "write (tune first)", path);
    cutune__t4_record *recs = calloc(s->n_evals, sizeof *recs);
    if (!recs)
        return fail(s, CUTUNE_ERR_NO_MEMORY, "out of memory");
    for (size_t i = 0; i < s->n_evals; i++) {
        const eval_record *e = &s->evals[i];
        recs[i].config_index = e->pub.config_index;
        recs[i].outcome = e->pub.outcome;
        recs[i].runtimes = e->runtimes;
        recs[i].n_runtimes = e->runtimes ? e->runs : 0;
        recs[i].time_ms = e->pub.time_ms;
        recs[i].compile_ms = e->pub.compile_ms;
        recs[i].framework_ms = e->framework_ms;
        recs[i].search_ms = e->search_ms;
        /* Validation runs inside the worker's first launch and is not
         * timed apart from it: it is part of framework_ms. */
        recs[i].validation_ms = 0.0;
        recs[i].timestamp = e->timestamp;
    }
    char err[1024];
    cutune_status st = cutune__t4_write(path, s->problem, recs,
                                        s->n_evals,
                                        err, sizeof err);
    free(recs);
    if (st)
        return fail(s, st, "%s", err);
    return CUTUNE_OK;
}
