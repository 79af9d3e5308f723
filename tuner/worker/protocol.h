/* The pipe protocol between the tuning process and its GPU worker.
 *
 * Both ends are built from the same sources for the same machine, so
 * messages are fixed C structs followed by variable data; the header's
 * magic and version catch a stale worker binary. Every request gets exactly
 * one reply of the same type. A worker whose CUDA context is broken (an
 * illegal address is sticky) says `fatal` in its reply and exits.
 */
#ifndef CUTUNE_TUNER_PROTOCOL_H
#define CUTUNE_TUNER_PROTOCOL_H

#include <stddef.h>
#include <stdint.h>

#include "cutune/cutune.h"

#define CUTUNE__PROTO_MAGIC       0x43555457u /* "CUTW" */
#define CUTUNE__PROTO_VERSION     5u
#define CUTUNE__PROTO_MAX_PAYLOAD ((uint64_t)1 << 32)

/* The fd on which an exec'ed worker finds its socket. */
#define CUTUNE__WORKER_FD 3

typedef enum cutune__msg_type {
    CUTUNE__MSG_DEVICES = 1,   /* list devices; no CUDA context needed */
    CUTUNE__MSG_INIT = 2,      /* select a device, make the context */
    CUTUNE__MSG_ARGS = 3,      /* allocate and fill the kernel arguments */
    CUTUNE__MSG_LOAD = 4,      /* load a cubin, find the kernel */
    CUTUNE__MSG_OCCUPANCY = 5, /* occupancy-suggested block size */
    CUTUNE__MSG_RUN = 6,       /* validate and time one launch config */
    CUTUNE__MSG_BANDWIDTH = 7, /* device-to-device cudaMemcpy rate */
    CUTUNE__MSG_QUIT = 8,
    CUTUNE__MSG_HANG = 9,       /* testing only: never reply */
    CUTUNE__MSG_COMPILE = 10,   /* NVRTC only; never touches CUDA */
    CUTUNE__MSG_REFERENCE = 11, /* expected contents of one output */
    CUTUNE__MSG_PROFILE = 12,   /* hardware counters of one launch config */
    CUTUNE__MSG_ENERGY = 13     /* energy and power of one launch config */
} cutune__msg_type;

typedef struct cutune__msg_header {
    uint32_t magic;
    uint32_t version;
    uint32_t type;
    uint32_t reserved;
    uint64_t size; /* payload bytes after the header */
} cutune__msg_header;

/* Common head of every reply. */
typedef struct cutune__reply {
    int32_t cuda_error; /* cudaError_t; 0 on success */
    int32_t fatal;      /* the worker exits after this reply */
    char message[1024];
} cutune__reply;

typedef struct cutune__device_props {
    cutune_device fingerprint;
    int32_t max_threads_per_sm;
    int32_t max_threads_per_block;
    int32_t warp_size;
    int32_t regs_per_sm;
    int64_t smem_per_sm;
    int64_t smem_per_block;
} cutune__device_props;

typedef struct cutune__devices_reply {
    cutune__reply head;
    int32_t count; /* followed by count cutune__device_props */
} cutune__devices_reply;

/* The comparison and fill kernels (compare_kernels.c) compiled for the
 * device follow the request, from the session's binary cache; with none
 * (cubin_size 0) the worker compiles them itself. */
typedef struct cutune__init_request {
    int32_t device;
    uint32_t reserved;
    uint64_t cubin_size;
} cutune__init_request;

typedef struct cutune__init_reply {
    cutune__reply head;
    cutune__device_props props;
    int32_t cubin_rejected; /* the comparison kernels sent would not
                               load (the error is in head) */
    int32_t reserved;
} cutune__init_reply;

typedef struct cutune__wire_arg {
    uint32_t is_vector;
    uint32_t dtype; /* cutune__dtype */
    uint32_t fill;  /* cutune__fill */
    uint32_t is_output;
    uint64_t count;
    uint64_t seed;
    double fill_value;
    uint32_t is_symbol; /* constant memory: copied after each LOAD to
                           the __constant__ variable `symbol` where
                           the module has one, passed where the
                           kernel takes a parameter for it */
    char symbol[64];    /* the argument's name (truncated) */
    uint64_t data_size; /* FILL_BINARY: bytes that follow */
} cutune__wire_arg;

typedef struct cutune__args_request {
    uint32_t n_args; /* followed by n_args cutune__wire_arg, then
                        the data of each FILL_BINARY argument in
                        argument order */
} cutune__args_request;

/* The expected contents of output argument `arg` (T1 ReferenceArguments),
 * with its own tolerance; for FILL_BINARY the bytes follow. Once any is
 * given, only outputs with one are validated. */
typedef struct cutune__reference_request {
    uint32_t arg;
    uint32_t fill; /* cutune__fill */
    uint64_t seed;
    double fill_value;
    double atol;
    double rtol;
} cutune__reference_request;

typedef struct cutune__load_request {
    uint32_t name_len;   /* followed by the kernel name, no NUL, */
    uint64_t cubin_size; /* then the cubin */
} cutune__load_request;

typedef struct cutune__load_reply {
    cutune__reply head;
    int32_t num_regs;
    int32_t shared_bytes;
    int32_t const_bytes;
    int32_t local_bytes;
    int32_t max_threads_per_block;
    int32_t image_rejected; /* the driver would not take the cubin as an
                               image (damaged, or built for another
                               driver): compiling it again may help */
    int32_t args_mismatch;  /* the kernel's parameters do not match the
                               arguments (the message names which) */
} cutune__load_reply;

typedef struct cutune__occupancy_request {
    uint32_t dynamic_smem;
    int32_t block_size_limit; /* 0: none */
} cutune__occupancy_request;

typedef struct cutune__occupancy_reply {
    cutune__reply head;
    int32_t min_grid_size;
    int32_t block_size;
} cutune__occupancy_reply;

typedef enum cutune__run_mode {
    CUTUNE__RUN_MEASURE = 0,  /* validate against the reference, time */
    CUTUNE__RUN_REFERENCE = 1 /* keep the outputs as the reference, time */
} cutune__run_mode;

typedef struct cutune__run_request {
    uint32_t grid[3];
    uint32_t block[3];
    uint32_t dynamic_smem;
    uint32_t mode;   /* cutune__run_mode */
    uint32_t warmup; /* launches before timing */
    uint32_t min_reps;
    uint32_t max_reps;
    uint32_t flush_l2;  /* overwrite the L2 before each launch */
    double min_seconds; /* keep repeating until this much kernel time */
    double max_seconds; /* stop repeating after this much */
    double atol;        /* |out - ref| <= atol + rtol * |ref| */
    double rtol;
    double ci_level;     /* stop repeating once the ci_level       */
    double ci_rel;       /* interval of the median is within ci_rel
                            of it (0: repeat to the minimums only) */
    double best_ms;      /* best median so far; 0: none */
    uint32_t early_reps; /* after this many launches, stop when */
    uint32_t check;      /* cutune__check: how outputs are checked */
    double early_margin; /* the fastest is slower than best_ms by
                            more than this fraction */
    double race_margin;  /* after min_reps, stop when the interval
                            of the median lies above best_ms by more
                            than this fraction (0: never) */
} cutune__run_request;

/* How a run's outputs are checked. With PROBE, an output that is finite
 * but differs from the reference is still timed (outcome CORRECTNESS,
 * `differs` set), so that the session can settle on REFERENCE or FINITE
 * from the first configurations without measuring them again. */
typedef enum cutune__check {
    CUTUNE__CHECK_REFERENCE = 0, /* equal to the reference, within tolerance */
    CUTUNE__CHECK_PROBE = 1,
    CUTUNE__CHECK_FINITE = 2 /* no NaN or infinity in any output */
} cutune__check;

typedef struct cutune__run_reply {
    cutune__reply head;
    int32_t outcome;       /* cutune_outcome */
    int32_t active_blocks; /* per SM, from the occupancy API */
    uint32_t n_times;      /* followed by n_times floats, ms */
    uint32_t reserved;
    uint64_t mismatches;
    double max_error;
    double ci_lo; /* the interval of the median, ms */
    double ci_hi;
    double gpu_ms;         /* kernel time of all launches, warm-up
                              and validation included, ms */
    int32_t stopped_early; /* dropped as clearly slower than best_ms */
    int32_t differs;       /* CHECK_PROBE: outputs finite but not the
                              reference's; timed all the same */
    double span_ms;        /* GPU time from the first to the last
                              operation of the run: kernels, output
                              resets, comparisons and L2 flushes */
} cutune__run_reply;

/* The source, the program name, the options and the kernel name to lower
 * (each NUL-terminated; the kernel name empty for none) follow the
 * request. */
typedef struct cutune__compile_request {
    uint64_t source_len;
    uint32_t name_len;
    uint32_t n_options;
    uint64_t options_len;
    uint32_t kernel_len;
    uint32_t reserved;
} cutune__compile_request;

/* The cubin, the log and the lowered kernel name (both NUL-terminated)
 * follow the reply. */
typedef struct cutune__compile_reply {
    cutune__reply head;
    int32_t ok;
    int32_t nvrtc_failed;
    uint64_t cubin_size;
    uint64_t log_size;
    double seconds;
    uint64_t lowered_size;
} cutune__compile_reply;

typedef struct cutune__bandwidth_request {
    uint64_t bytes;
} cutune__bandwidth_request;

typedef struct cutune__bandwidth_reply {
    cutune__reply head;
    double gbs; /* bytes read plus written per second, 1e9 */
} cutune__bandwidth_reply;

/* PROFILE: the loaded kernel launched under CUPTI's range profiler, a
 * pass of its own, separate from timing (RUN), as many launches as the
 * counters need (outputs reset and the L2 flushed before each, outside
 * the profiled range). The metric names follow the request, each
 * NUL-terminated. The static facts of the kernel come back whether or not
 * the counters could be read. */
typedef struct cutune__profile_request {
    uint32_t grid[3];
    uint32_t block[3];
    uint32_t dynamic_smem;
    uint32_t n_metrics;
    uint64_t names_len; /* bytes of names that follow */
} cutune__profile_request;

/* Why counters were or were not read; stable values (the command's exit
 * status and the JSON name them). */
typedef enum cutune__counters {
    CUTUNE__COUNTERS_READ = 0,
    CUTUNE__COUNTERS_NO_CUPTI = 1,    /* libcupti could not be loaded */
    CUTUNE__COUNTERS_REFUSED = 2,     /* no permission to read counters */
    CUTUNE__COUNTERS_UNSUPPORTED = 3, /* this GPU or setup (a virtual GPU,
                                         confidential computing, ...) */
    CUTUNE__COUNTERS_FAILED = 4,      /* another CUPTI error */
    CUTUNE__COUNTERS_NOT_RUN = 5      /* the configuration did not run */
} cutune__counters;

typedef struct cutune__profile_reply {
    cutune__reply head; /* a CUDA error: the launch itself failed */
    int32_t counters;   /* cutune__counters */
    int32_t passes;     /* launches the counters took */
    char why[512];      /* one sentence unless counters are READ */
    /* The kernel (cudaFuncGetAttributes) and its occupancy. */
    int32_t num_regs;
    int32_t local_bytes; /* per thread: spills and local arrays */
    int32_t static_smem;
    int32_t kernel_max_threads;
    int32_t active_blocks; /* per SM, from the occupancy API */
    /* The device's limits the occupancy follows from. */
    int32_t max_blocks_per_sm;
    int32_t reserved_smem_per_block;
    int32_t max_regs_per_block;
    uint32_t n_values;     /* followed by n_values doubles (NaN: the
                              GPU has no such metric) */
    int32_t range_of_ours; /* the profiled range was opened around the
                              launch, not the kernel's own */
} cutune__profile_reply;

/* ENERGY: the loaded kernel launched back to back, in batches of about a
 * millisecond of GPU time kept queued so that the GPU never waits, while
 * the worker polls NVML's energy counter (and the power every 10 ms); the
 * windows between the counter's steps give the energy per launch
 * (common/energy.h). No output reset and no L2 flush between launches:
 * the windows hold the kernel's energy alone, as in a loop that calls it.
 * It runs until `windows` windows are closed and at least `min_launches`
 * launches completed, or max_seconds passed. The worker reads NVML
 * itself rather than the tuning process around the request: the counter
 * must be polled while the kernels run, and the launches counted at the
 * same moments; in the worker both happen in one loop, with no socket or
 * process wake-up between a step and the launches it is set against. */
typedef struct cutune__energy_request {
    uint32_t grid[3];
    uint32_t block[3];
    uint32_t dynamic_smem;
    uint32_t windows;      /* wanted */
    uint32_t min_launches; /* at least, however long they take */
    uint32_t reserved;
    double lead_s;      /* launches before the first window */
    double window_s;    /* each window spans at least this */
    double launch_ms;   /* the kernel's time (RUN's median): the batches'
                           size */
    double max_seconds; /* stop then, windows closed or not */
} cutune__energy_request;

typedef struct cutune__energy_reply {
    cutune__reply head;    /* a CUDA error: a launch failed */
    int32_t why;           /* cutune__energy_why; the message says
                              more unless OK */
    int32_t power_instant; /* power_w from NVML's instantaneous
                              field, not its one-second average */
    uint32_t windows;      /* closed */
    uint32_t reserved;
    double energy_j;    /* median J per launch of the windows; NaN */
    double energy_rsd;  /* their relative standard deviation; NaN */
    double power_w;     /* mean power read within the windows (a check;
                           the session reports counter_w); NaN */
    double counter_w;   /* the counter's energy over the windows' time */
    double launches;    /* in the windows */
    double seconds;     /* the windows' span */
    double step_s;      /* mean time between the counter's steps */
    double run_s;       /* the whole run, lead and drain included */
    uint64_t completed; /* launches of the whole run */
} cutune__energy_reply;

/* Sends header + a + b (either may be empty). 0, or -1 when the peer is
 * gone. Never raises SIGPIPE. */
int cutune__msg_send(int fd, uint32_t type, const void *a, size_t alen,
                     const void *b, size_t blen);

/* Receives one message into a malloc'ed payload the caller frees.
 * `timeout_s` < 0 waits forever. 0; -1 peer gone or protocol error;
 * -2 timed out; -3 out of memory. */
int cutune__msg_recv(int fd, uint32_t *type, void **payload, size_t *size,
                     double timeout_s);

#endif
