/* What the files of a tuning session share: the session itself, the
 * record of an evaluation, the measurement protocol's constants, and the
 * steps each file offers the others. Private to tuner/session/: nothing
 * outside includes it (the public face is cutune.h).
 *
 * The session is split by stage (docs/architecture.md):
 *   device.h           what it measures on: the CUDA worker or a
 *                      replayed device, picked once at create
 *   session.c          create/destroy, options, errors, the device list
 *   session_worker.c   the GPU worker: calls, bring-up, arguments, the
 *                      reference run, occupancy and bandwidth queries
 *   session_compile.c  NVRTC for the session: job sets, compile
 *                      processes, the reference and comparison kernels,
 *                      cutune_session_compile
 *   compile_rejects.c  its rejections, grouped by alike logs
 *   measure.c          measuring one configuration on a slot's worker
 *   evaluate.c         a strategy's batch: compile, measure, log, report
 *   dispatch.c         a batch over several measuring slots at once
 *   slots.c            the measuring slots: one per device of the tune
 *   replay_device.c    replayed devices (recorded T4 files) in their place:
 *                      the other implementation of device.h
 *   final_round.c      measuring the search's best few again
 *   tune.c             cutune_session_tune: the stages in order
 *   session_output.c   the winner, the cache record and the T4 file
 *
 * This process never initializes CUDA (it does not even link the CUDA
 * runtime): every GPU call happens in cutune-worker, which is restarted
 * when a candidate kills it.
 */
#ifndef CUTUNE_TUNER_SESSION_INTERNAL_H
#define CUTUNE_TUNER_SESSION_INTERNAL_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "binary_cache.h"
#include "compile.h"
#include "compile_rejects.h"
#include "compile_remote.h"
#include "cutune/cutune.h"
#include "device.h"
#include "gpu_monitor.h"
#include "measure_log.h"
#include "problem.h"
#include "replay/compile_order.h"
#include "replay/replay.h"
#include "strategy/budget.h"
#include "strategy/strategy.h"
#include "t4.h"
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
 * the earlier protocol) made a repeated tune measuring-bound: see
 * docs/measuring.md. */
#define WARMUP_LAUNCHES 3
#define MIN_REPS        10
#define MAX_REPS        1000
#define MIN_SECONDS     0.002
#define MAX_SECONDS     1.0
#define CI_LEVEL        0.95
#define CI_REL          0.01
#define EARLY_REPS      5
#define EARLY_MARGIN    0.10
#define FINAL_MAX       CUTUNE__FINAL_MAX
#define FINAL_MARGIN    CUTUNE__FINAL_MARGIN
#define FINAL_PASSES    CUTUNE__FINAL_PASSES
#define FINAL_SECONDS   0.01
/* A pass's cap on launches for a finalist: 10 ms of a 6 µs kernel would
 * be 1,600 launches, each after an L2 flush several times its length. */
#define FINAL_MAX_REPS         300
#define RACE_MARGIN            FINAL_MARGIN
#define DEFAULT_LAUNCH_TIMEOUT 10.0
/* Validation tolerance: |out - ref| <= ATOL + RTOL * |ref|. */
#define ATOL 1e-6
#define RTOL 1e-5

typedef struct eval_record {
    cutune_eval pub;
    double min_ms;
    double stddev_ms;
    size_t runs;
    double ci_lo_ms; /* 95% confidence interval of the median */
    double ci_hi_ms;
    double gpu_ms;       /* kernel time of every launch it made */
    double *runtimes;    /* every timed launch in order, ms (T4 output) */
    double framework_ms; /* the evaluation's wall time less compile and
                            kernel time: loading, launching, copying */
    double search_ms;    /* this evaluation's share of the strategy's time */
    double timestamp;    /* wall clock when it finished */
    int reused;          /* taken from the measurement log, not measured */
    int finalist;        /* chosen for the final round */
    int differs;         /* CHECK_PROBE: timed, but its output differs from
                            the default's; CORRECTNESS until settled */
    size_t final_runs;   /* the last runtimes that the final round added */
    /* Energy and power, set by the device's measure (NaN: not measured):
     * J per launch, mean W while it ran, and the relative standard
     * deviation of the repeated energy readings (NaN: fewer than two).
     * After a final round, the median and spread over the search's
     * measurement and each pass's (energy_seen, power_seen). */
    double energy_j;
    double power_w;
    double energy_rsd;
    double energy_seen[1 + FINAL_PASSES];
    double power_seen[1 + FINAL_PASSES];
    size_t n_energy_seen;
    double rank; /* its value of the tune's objective, set by
                    cutune__session_rank before comparing */
    /* Hardware counters and static figures of `cutune explain`, as T4
     * measurements; names and units are static strings. */
    const char **extra_names;
    const char **extra_units;
    double *extra_values;
    size_t n_extra;
} eval_record;

/* A measuring slot: one device of the tune and the GPU worker measuring
 * on it. A tune has one slot per entry of its device list (one for
 * `--device N`); an ordinal may appear twice (two workers on one GPU).
 * A slot belongs to one measuring thread at a time; what all slots share
 * (the reference, the arguments, the comparison kernels) stays in the
 * session. */
typedef struct cutune__mslot {
    int ordinal; /* CUDA device ordinal, or the replayed
                    device's index */
    cutune__worker_client worker;
    cutune__device_props device;  /* as the worker's INIT reported it */
    cutune__gpu_monitor *monitor; /* NVML, or NULL where absent */
    int monitor_tried;
    int load_mismatch; /* the last LOAD: the kernel's
                          parameters do not fit the arguments */
    int up;            /* a replayed device "brought up" */
    int ever_up;       /* brought up once: starting it again
                          is a restart */
    size_t index;      /* in the session's slots */
} cutune__mslot;

/* A replayed device (replay_device.c): a recorded T4 file in place of a
 * GPU, its records placed on the tune's space. */
typedef struct cutune__replay_device {
    char *path;
    cutune__device_props props;
    cutune__t4 *t4;                     /* of the tune's problem, or NULL */
    const cutune__t4_entry **by_config; /* per space index; NULL: absent */
} cutune__replay_device;

/* NVRTC jobs for configurations of a problem, with the options they own. */
typedef struct job_set {
    cutune__compile_job *jobs;
    char ***opts;
    size_t *nopts;
    char **srcs; /* per job: its own source, or NULL for p->source */
    size_t n;
} job_set;

typedef struct cutune__cq cutune__cq;

struct cutune_session {
    /* What the caller asked for; the strings are the session's copies. */
    cutune_session_options opt;
    char *strategy;
    char *cache_dir;
    char *worker_path;
    char *errmsg;

    /* The measuring slots (slots[0] lists the devices, brings the tune
     * up and runs the final round) and the devices they list. */
    cutune__mslot *slots;
    size_t n_slots;
    cutune__device_props *props; /* all devices, from DEVICES */
    cutune_device *devices;
    size_t n_devices;

    /* The compile pipeline, kept from one tune to the next. */
    struct {
        cutune__binary_cache *binaries;   /* NVRTC results on disk, or
                                             NULL */
        cutune__compile_procs *compilers; /* NVRTC processes, or NULL:
                                             threads */
        cutune__cq *cq;                   /* a search in flight's
                                             compiles, kept for the final
                                             round; NULL: none */
        cutune__rejects *rejected;        /* cutune_session_compile's
                                             NVRTC rejections, grouped;
                                             NULL: none */
    } compile;

    /* The problem of the last tune; its evals index it. */
    const cutune_problem *problem;
    /* The measuring protocol: what a worker is brought up with, kept for
     * the whole tune so that a worker a candidate killed can be started
     * again, and how outputs are checked. */
    struct {
        cutune__device_props device;
        char arch[16];
        struct {
            char *cubin; /* the default configuration's */
            size_t cubin_size;
            char *lowered;
            int from_cache; /* the binary came from disk */
        } ref;
        struct {
            char *cubin; /* the worker's comparison kernels */
            size_t cubin_size;
            int refreshed;   /* compiled again after a rejection */
            int from_worker; /* the cached ones failed to load
                                (for the session) */
        } compare;
        struct {
            cutune__wire_arg *wire;
            char *payload; /* ARGS: wire args, then binary data */
            size_t payload_size;
        } args;
        struct {
            uint32_t mode;           /* cutune__check of the runs now */
            size_t agreed, differed; /* CHECK_PROBE's sample so far */
        } check;
        cutune_objective objective; /* what the tune minimizes */
        int energy_wanted;          /* energy and power are measured
                                       (measure_energy, or an objective
                                       that needs them) */
        /* The energy windows (measure_energy.c), settled before the
         * search. */
        struct {
            int on;           /* measured after each candidate's RUN */
            double window_s;  /* CUTUNE_ENERGY_WINDOW_MS */
            uint32_t windows; /* CUTUNE_ENERGY_WINDOWS */
            int warned;       /* a candidate without a figure was logged */
        } energy;
    } proto;
    /* What it measures on, picked once at create (device.h). */
    const cutune__device *dev;
    /* Replayed devices in place of GPUs (replay_devices), or none. */
    cutune__replay_device *replay;
    size_t n_replay;
    struct {
        int hang;      /* hang rather than die */
        size_t config; /* CUTUNE__NONE: no hook */
    } replay_fail;

    /* With several slots, the measuring threads hold `lock` whenever they
     * touch the session (records, telemetry, the log callback, errors)
     * and let go of it only while they wait on a worker or a compile;
     * `parallel` says whether they run (with one slot nothing locks). */
    pthread_mutex_t lock;
    int parallel;

    /* State of the tune in progress. */
    cutune__budget budget; /* the caller's limits, else the T1
                              file's, resolved for the strategy */
    const cutune__strategy_type *tuned_with; /* the last tune's strategy;
                                       NULL: none (explain measures
                                       without one) */
    /* The evaluation record: every evaluation of the tune, and the
     * measurement log it is kept in across tunes. */
    struct {
        eval_record *evals;
        size_t n_evals, cap_evals;
        cutune__measure_log *measured; /* this context's measurements, or
                                          NULL */
        int warned_other_processes;
    } record;
    double started;
    double best_ms;   /* best median measured so far in this
                         session, for early stops, racing and
                         time limits */
    double best_rank; /* best value of the objective measured so far
                         in this session (0: none), for letting
                         binaries go */
    double batch_end; /* when the last batch was evaluated */
    struct {
        size_t start;                /* the search's first configuration */
        double started;              /* when the search started */
        double best_ms, baseline_ms; /* NAN: none yet */
    } prog;                          /* what the progress callback shows */
    int fatal;                       /* the tune cannot go on */
    cutune_status fatal_status;

    /* Where the tune's time went, for the result and the debug log. */
    struct {
        size_t reused;         /* evaluations taken from the log */
        size_t recompiled;     /* cached binaries that did not load */
        double gpu_ms;         /* kernel time of the whole tune */
        double span_ms;        /* GPU time of all measuring work */
        double wait_compile_s; /* waiting for a compile to measure */
        size_t batches;
        size_t compiled_ahead;     /* configurations compiled ahead of
                                      their proposal (AHEAD_EACH) */
        size_t restarts;           /* workers started again */
        cutune__order_stats order; /* the compile queue's counts, as the
                                      search ended */
    } tel;

    /* The published result; its pointers point into the arrays here. */
    struct {
        cutune_tune_result result;
        cutune_param_value *best_values;
        cutune_param_value *baseline_values;
        cutune_eval *pub_evals;
    } out;
};

/* session.c: errors go to the session (errmsg), messages to the log
 * callback; tune state, the cache directory and the binary cache. */
cutune_status cutune__session_fail(cutune_session *s, cutune_status st,
                                   const char *fmt, ...);
void cutune__session_log(cutune_session *s, cutune_log_level level,
                         const char *fmt, ...);
void cutune__session_clear_tune(cutune_session *s);
char *cutune__session_cache_path(const cutune_session *s, const char *leaf);
void cutune__session_open_binaries(cutune_session *s);
cutune_status cutune__session_list_devices(cutune_session *s);

/* session_worker.c: calls to the GPU worker (a reply shorter than
 * min_size is a protocol error), bringing one up ready to measure, and the
 * requests a tune makes of it. */
cutune__call_result
cutune__session_call(cutune_session *s, cutune__mslot *slot, uint32_t type,
                     const void *a, size_t alen, const void *b, size_t blen,
                     void **reply, size_t min_size, double timeout_s);
cutune_status cutune__session_start_worker(cutune_session *s,
                                           cutune__mslot *slot);
double cutune__session_run_timeout(const cutune_session *s);
void cutune__session_fill_run_request(cutune__run_request *q,
                                      const unsigned grid[3],
                                      const unsigned block[3], unsigned smem,
                                      cutune__run_mode mode);
cutune__call_result cutune__session_load_cubin(cutune_session *s,
                                               cutune__mslot *slot,
                                               const char *cubin, size_t size,
                                               const char *lowered,
                                               int *cuda_error, int *rejected,
                                               char *msg, size_t msglen);
cutune_status cutune__session_bring_up(cutune_session *s, cutune__mslot *slot,
                                       int keep_reference);
cutune_status cutune__session_prepare_args(cutune_session *s);
cutune_status cutune__session_query_occupancy(cutune_session *s,
                                              int *block_size);
cutune_status cutune__session_measure_bandwidth(cutune_session *s);

/* session_compile.c: compile jobs, the compile pool's processes, the
 * reference and comparison binaries. */
int cutune__session_pool_threads(const cutune_session *s);
const cutune__compiler *cutune__session_compilers(cutune_session *s);
void cutune__session_compile_compare(cutune_session *s, int refresh);
void cutune__session_job_set_clear(job_set *js);
void cutune__session_job_set_free(void *js);
int cutune__session_job_set_init(job_set *js, cutune_session *s,
                                 const cutune_problem *p,
                                 const size_t *indices, size_t n,
                                 const char *arch);
cutune_status cutune__session_compile_reference(cutune_session *s,
                                                size_t config, int refresh);

/* compile_queue.c: the compile queue of a search in flight. */
/* NULL when no thread could start or memory ran out. */
cutune__cq *cutune__cq_create(cutune_session *s);
/* Queues `config` after those wanted already. 0, or -1 when memory ran
 * out. */
int cutune__cq_submit(cutune__cq *q, size_t config);
/* A batch: configs[0..n) wanted in that order before anything else, what
 * the last batch wanted and did not start kept as speculation
 * (cutune__order_want). 0, or -1 when memory ran out. */
int cutune__cq_want(cutune__cq *q, const size_t *configs, size_t n);
/* Waits until `config` is compiled (moved to the front if still queued,
 * queued if it was not) and returns its job, owned by the queue; NULL
 * when memory ran out. */
cutune__compile_job *cutune__cq_wait(cutune__cq *q, size_t config);
/* Waits until one of configs[0..n) is compiled; returns its position. */
size_t cutune__cq_wait_any(cutune__cq *q, const size_t *configs, size_t n);
/* The compiled job of `config`, owned by the queue; NULL when none. */
cutune__compile_job *cutune__cq_job(cutune__cq *q, size_t config);
void cutune__cq_stats(cutune__cq *q, cutune__order_stats *st);
/* Frees the binary of a measured `config` (q NULL: nothing); the job
 * stays, marked not compiled, so that nothing takes it for the final
 * round. */
void cutune__cq_release(cutune__cq *q, size_t config);
/* Moves the compiled result of `config` into `job` (its inputs kept):
 * 0, or -1 when the queue (NULL: none) has none that compiled. */
int cutune__cq_take(cutune__cq *q, size_t config, cutune__compile_job *job);
/* Stops the threads (running compiles finish) and frees everything. */
void cutune__cq_destroy(cutune__cq *q);
/* evaluate_async.c: the search in flight on one slot. */
int cutune__session_search_async(cutune_session *s,
                                 const cutune__strategy_type *type,
                                 const cutune__search_options *so,
                                 cutune__search_result *sr);

/* measure.c: evaluation records and measuring one of them. */
eval_record *cutune__session_add_eval(cutune_session *s, size_t config);
/* A fresh record of `config`: nothing measured (times and energy NaN). */
void cutune__session_init_eval(eval_record *e, size_t config);
void cutune__session_set_message(eval_record *e, const char *msg);
int cutune__session_describe(const cutune_problem *p, size_t config, char *buf,
                             size_t len);
int cutune__session_summarize(eval_record *e, size_t n);
void cutune__session_measure(cutune_session *s, cutune__mslot *slot,
                             eval_record *e, cutune__compile_job *job,
                             int final);

/* measure_energy.c: the energy windows' settings (the environment's),
 * read as any tune starts; whether a CUDA tune measures energy (NVML's
 * counter on every slot), settled before the search; a candidate's
 * energy and power after its RUN. */
cutune_status cutune__session_energy_settings(cutune_session *s);
cutune_status cutune__session_check_energy(cutune_session *s);
void cutune__session_measure_energy(cutune_session *s, cutune__mslot *slot,
                                    eval_record *e, const unsigned grid[3],
                                    const unsigned block[3]);

/* slots.c: the session lock, the slots of a tune and their devices. */
void cutune__session_lock(cutune_session *s);
void cutune__session_unlock(cutune_session *s);
cutune_status cutune__session_init_slots(cutune_session *s);
void cutune__session_stop_slots(cutune_session *s);
void cutune__session_free_slots(cutune_session *s);
cutune_status cutune__session_check_slots(cutune_session *s);

/* replay_device.c: replayed devices in place of GPUs. */
cutune_status cutune__replay_devices_open(cutune_session *s);
void cutune__replay_devices_close(cutune_session *s);
cutune_status cutune__replay_devices_load(cutune_session *s);

/* The CUDA device's parts (device.h), each in the file of its kind of
 * work: listing in session.c, the start in tune.c, bring-up in
 * session_worker.c, measuring in measure.c. */
cutune_status cutune__cuda_list(cutune_session *s);
cutune_status cutune__cuda_start(cutune_session *s, size_t *start);
cutune_status cutune__cuda_bring_up(cutune_session *s, cutune__mslot *slot,
                                    int keep_reference);
void cutune__cuda_measure(cutune_session *s, cutune__mslot *slot,
                          eval_record *e, cutune__compile_job *job, int final);
/* tune.c: the devices listed and checked, the arch known from the list
 * before any context exists (both devices' start). */
cutune_status cutune__session_choose_devices(cutune_session *s);

/* evaluate.c: a batch of the search (the cutune__eval_fn of
 * cutune__search_run, `user` the session), the measurement log, settling
 * AUTO output checks. */
void cutune__session_log_measurement(cutune_session *s, const eval_record *e,
                                     char *cfg);
void cutune__session_settle_check(cutune_session *s, size_t first,
                                  double *batch, size_t n_batch);
int cutune__session_evaluate_batch(void *user, const size_t *indices, size_t n,
                                   double *objectives, size_t *done,
                                   cutune__eval_more_fn more, void *more_ctx);
int cutune__session_time_is_up(const cutune_session *s);

/* A batch being evaluated: what plan_batch decided. */
typedef struct cutune__batch {
    const size_t *indices;
    size_t n;
    const cutune__measured **prior; /* per proposal: its earlier
                                       measurement, or NULL */
    size_t *todo;                   /* configurations wanted compiled, in
                                       order (cutune__cq_want) */
    size_t n_todo;
} cutune__batch;

/* evaluate.c, for dispatch.c: proposal i of the batch measured on `slot`
 * into `e` and logged, and its result handed on (see evaluate.c). */
/* A record of the measurement log that configuration `config` (text
 * `cfg`) may take instead of being measured (NULL: none), and taking
 * it (-1 when memory ran out). */
const cutune__measured *cutune__session_earlier(const cutune_session *s,
                                                size_t config,
                                                const char *cfg);
int cutune__session_take_earlier(eval_record *e, const cutune__measured *m);
void cutune__session_measure_job(cutune_session *s, cutune__mslot *slot,
                                 cutune__compile_job *job, eval_record *e);
void cutune__session_measure_proposal(cutune_session *s, cutune__mslot *slot,
                                      cutune__batch *b, size_t i,
                                      eval_record *e);
void cutune__session_record_result(cutune_session *s, const eval_record *e,
                                   int reused, size_t first_eval,
                                   double *objectives, size_t i);

/* dispatch.c: a crew of measuring threads, one per slot, that measure the
 * batch's proposals not taken from the log in proposal order, several at
 * once. The caller (evaluate.c) holds the session lock from start to stop
 * and takes the results in order. */
typedef struct cutune__crew cutune__crew;
/* NULL with one slot, or when the threads could not start (the batch is
 * then measured on slot 0 alone). */
cutune__crew *cutune__crew_start(cutune_session *s, cutune__batch *b);
/* Waits for proposal i and moves its record into *e. Returns -1 when it
 * will not be measured (time is up, the tune cannot go on). */
int cutune__crew_take(cutune__crew *c, size_t i, eval_record *e);
/* No new proposal is started; those running end; what was measured and
 * not taken is dropped. */
void cutune__crew_stop(cutune__crew *c);

/* final_round.c: the search's best few measured again, ranked by the
 * tune's objective. */
int cutune__session_contender(const eval_record *e);
/* e's value of the session's objective (time: the median in ms; energy:
 * J per launch; edp: J s), INFINITY when it has none (failed, or energy
 * not measured), and its interval of the median in lo, hi (either may be
 * NULL): time's 95% confidence interval, energy's median +- 2 relative
 * standard deviations of its readings (none: the value alone), the
 * product of both for edp. */
double cutune__session_rank(const cutune_session *s, const eval_record *e,
                            double *lo, double *hi);
/* qsort order of eval_record pointers: lower `rank` first, then lower
 * configuration index. */
int cutune__session_better_first(const void *a, const void *b);
cutune_status cutune__session_final_round(cutune_session *s);

/* tune.c: the device ready to measure (arguments, the device list, the
 * default configuration compiled, a worker brought up with the
 * reference), with when the device list and the reference were done; the
 * occupancy suggestion `block_size` as a configuration of the space. */
cutune_status cutune__session_open_device(cutune_session *s, double *t_devices,
                                          double *t_ref);
size_t cutune__session_occupancy_start(cutune_session *s, int block_size);

/* session_output.c: the winner into the result and the cache. */
cutune_status cutune__session_record_winner(cutune_session *s);
cutune_status cutune__session_publish(cutune_session *s,
                                      const cutune__search_result *sr,
                                      size_t start,
                                      const cutune__strategy_type *type);
#endif
