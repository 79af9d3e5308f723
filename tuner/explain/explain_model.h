/* `cutune explain` without a GPU: the metrics it reads (one table), the
 * theoretical occupancy and what limits it, the bottleneck each
 * configuration's figures point to, the headroom left to the winner, and
 * the report as text and JSON (explain_format.c). Everything here is pure
 * computation on figures already measured, so that tests can pin it down
 * on made-up figures; the session (tuner/session/explain.c) fills the
 * structs from the GPU worker.
 */
#ifndef CUTUNE_TUNER_EXPLAIN_MODEL_H
#define CUTUNE_TUNER_EXPLAIN_MODEL_H

#include <stddef.h>

#include "cutune/explain.h"

/* The hardware metrics read through CUPTI, by their Nsight Compute names
 * (cutune__metric_name). */
typedef enum cutune__metric {
    CUTUNE__M_TIME_NS = 0,      /* gpu__time_duration.sum */
    CUTUNE__M_WARPS_ACTIVE_PCT, /* achieved occupancy */
    CUTUNE__M_DRAM_PCT,         /* DRAM throughput, % of peak */
    CUTUNE__M_MEMORY_PCT,       /* the busiest memory unit, % of peak */
    CUTUNE__M_SM_PCT,           /* compute throughput, % of peak */
    CUTUNE__M_LD_SECTORS,       /* global loads: 32-byte sectors */
    CUTUNE__M_LD_REQUESTS,      /* ... and warp-level requests */
    CUTUNE__M_ST_SECTORS,
    CUTUNE__M_ST_REQUESTS,
    CUTUNE__M_L1_HIT_PCT,
    CUTUNE__M_L2_HIT_PCT,
    CUTUNE__M_SHARED_LD_CONFLICTS, /* extra wavefronts of shared loads */
    CUTUNE__M_SHARED_ST_CONFLICTS,
    CUTUNE__M_SHARED_LD_INSTS, /* warp-level shared load instructions */
    CUTUNE__M_SHARED_ST_INSTS,
    CUTUNE__M_DRAM_BYTES,
    CUTUNE__METRIC_COUNT
} cutune__metric;

const char *cutune__metric_name(cutune__metric m);
/* "ns", "%", "bytes" or "count". */
const char *cutune__metric_unit(cutune__metric m);

/* What limits the resident blocks per SM. */
typedef enum cutune__limiter {
    CUTUNE__LIMIT_NONE = 0, /* every warp slot can be used */
    CUTUNE__LIMIT_REGISTERS,
    CUTUNE__LIMIT_SHARED,
    CUTUNE__LIMIT_BLOCK_SIZE, /* whole blocks do not fill the warps */
    CUTUNE__LIMIT_BLOCKS      /* the SM's cap on resident blocks */
} cutune__limiter;

const char *cutune__limiter_str(cutune__limiter l);

/* A kernel's resources and the device's limits (cudaFuncGetAttributes,
 * the occupancy API, device attributes). */
typedef struct cutune__static_facts {
    int threads_per_block;
    int regs_per_thread;
    int local_bytes; /* per thread: spills and local arrays */
    int static_smem;
    int dynamic_smem;
    int active_blocks; /* the occupancy API's answer; 0 unknown */
    int warp_size;
    int max_threads_per_sm;
    int max_blocks_per_sm;
    int regs_per_sm;
    long long smem_per_sm;
    int reserved_smem_per_block;
} cutune__static_facts;

typedef struct cutune__occupancy {
    double theoretical; /* resident warps / warp slots, 0..1 */
    int blocks;         /* resident blocks per SM */
    int by_registers, by_shared, by_block_size, by_blocks; /* each limit */
    cutune__limiter limiter;
} cutune__occupancy;

/* The theoretical occupancy and the limit that binds: the occupancy
 * API's block count where known (it is the driver's word), the limits
 * computed here to name which one it is. */
void cutune__occupancy_compute(const cutune__static_facts *f,
                               cutune__occupancy *out);

/* Thresholds of the bottleneck rules (docs/explain.md). */
#define CUTUNE__ROOF_PCT          80.0 /* at the memory or compute roof */
#define CUTUNE__BOUND_PCT         60.0 /* memory- or compute-bound */
#define CUTUNE__CONFLICTS_PER_REQ 2.0  /* shared-memory bank conflicts */
/* Uncoalesced above: a warp's 16-byte accesses need 16 sectors, 4-byte
 * ones 4; the counters do not say which width a kernel uses, so only
 * more than the widest needs is judged (the half absorbs rounding). */
#define CUTUNE__SECTORS_PER_REQ 16.5
#define CUTUNE__LOW_OCCUPANCY   0.5 /* theoretical or achieved */

typedef enum cutune__bottleneck {
    CUTUNE__B_UNKNOWN = 0, /* no counters, nothing static to say */
    CUTUNE__B_MEMORY,
    CUTUNE__B_SHARED_CONFLICTS,
    CUTUNE__B_UNCOALESCED,
    CUTUNE__B_OCCUPANCY,
    CUTUNE__B_COMPUTE,
    CUTUNE__B_LATENCY,
    CUTUNE__B_SPILLS
} cutune__bottleneck;

const char *cutune__bottleneck_str(cutune__bottleneck b);

/* One configuration as explained. */
typedef struct cutune__explained {
    char role[16];     /* winner, given, occupancy, default */
    char *config_text; /* "NAME=VALUE ...", owned */
    size_t config_index;
    int outcome;    /* cutune_outcome of the timed run */
    char *message;  /* its message, owned; "" when none */
    double time_ms; /* median of the timed launches; NaN */
    /* Energy per launch (J) and mean power (W) as a tune measures them
     * (NVML, measure_energy); NaN, or 0 in a zeroed struct, when not
     * measured. */
    double energy_j, power_w;
    int has_static; /* the static facts are known */
    cutune__static_facts facts;
    cutune__occupancy occ;
    int counters;   /* cutune_counters */
    char why[1024]; /* why the counters were not read */
    int passes;
    int range_of_ours;                   /* profiled around the launch, not the
                                            kernel's own range */
    double values[CUTUNE__METRIC_COUNT]; /* NaN where absent */
    cutune__bottleneck bottleneck;
    char verdict[256]; /* the bottleneck line, figures included */
} cutune__explained;

/* Derived figures; NaN when a metric they need is absent. */
double cutune__ld_sectors_per_request(const cutune__explained *e);
double cutune__st_sectors_per_request(const cutune__explained *e);
double cutune__conflicts_per_request(const cutune__explained *e);
double cutune__achieved_occupancy(const cutune__explained *e); /* 0..1 */
double cutune__dram_gbs(const cutune__explained *e); /* during the profile */

/* Sets e->bottleneck and e->verdict from the figures (occ computed). */
void cutune__classify(cutune__explained *e);

/* How far the configuration is from its nearer roof, as one sentence;
 * 0 when no counters say. `factor` is the largest speed-up the roof
 * leaves (100 / the higher of DRAM and compute %). */
int cutune__headroom(const cutune__explained *e, double *factor, char *buf,
                     size_t len);

#define CUTUNE__EXPLAIN_MAX 3

struct cutune_explain {
    char problem[128];
    char device[256];
    char arch[16];
    char size[96];  /* "8192x8192" */
    char note[512]; /* e.g. why no winner is shown */
    int counters;   /* the state of the first that was not
                       READ, else READ */
    char why[1024];
    size_t n;
    cutune__explained cfg[CUTUNE__EXPLAIN_MAX];
};

/* A configuration's figures as T4 measurements (name, value, unit): the
 * counters that were read and the static facts (registers, local memory,
 * theoretical occupancy). Names and units are static strings. Returns how
 * many were written (at most `cap`). */
#define CUTUNE__MEASUREMENTS_MAX (CUTUNE__METRIC_COUNT + 3)
size_t cutune__explain_measurements(const cutune__explained *e,
                                    const char **names, double *values,
                                    const char **units, size_t cap);

/* The reverse, for results read back (cutune report): the counters and
 * static facts found among `names[n]`; others are ignored. Returns 1 when
 * any counter was found (e->counters READ), else 0. */
int cutune__explain_from_measurements(cutune__explained *e,
                                      const char *const *names,
                                      const double *values, size_t n);

/* The counters' state of the whole explanation: READ only when every
 * configuration that ran had its counters read. */
void cutune__explain_settle(cutune_explain *x);

/* Frees what the configurations own and the explanation. */
void cutune__explain_free(cutune_explain *x);

#endif
