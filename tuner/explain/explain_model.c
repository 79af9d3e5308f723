/* The metric table, occupancy limits, bottleneck rules and headroom of
 * `cutune explain` (explain_model.h); pure functions of the figures. */
#include "explain_model.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Nsight Compute's names, checked on an H100 through the profiler host
 * API (bench/results/2026-11-25-explain-s9.md). */
static const char *const metric_names[CUTUNE__METRIC_COUNT] = {
    [CUTUNE__M_TIME_NS] = "gpu__time_duration.sum",
    [CUTUNE__M_WARPS_ACTIVE_PCT] =
        "sm__warps_active.avg.pct_of_peak_sustained_active",
    [CUTUNE__M_DRAM_PCT] =
        "dram__throughput.avg.pct_of_peak_sustained_elapsed",
    [CUTUNE__M_MEMORY_PCT] =
        "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
    [CUTUNE__M_SM_PCT] = "sm__throughput.avg.pct_of_peak_sustained_elapsed",
    [CUTUNE__M_LD_SECTORS] = "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
    [CUTUNE__M_LD_REQUESTS] =
        "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
    [CUTUNE__M_ST_SECTORS] = "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
    [CUTUNE__M_ST_REQUESTS] =
        "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",
    [CUTUNE__M_L1_HIT_PCT] = "l1tex__t_sector_hit_rate.pct",
    [CUTUNE__M_L2_HIT_PCT] = "lts__t_sector_hit_rate.pct",
    [CUTUNE__M_SHARED_LD_CONFLICTS] =
        "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
    [CUTUNE__M_SHARED_ST_CONFLICTS] =
        "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
    [CUTUNE__M_SHARED_LD_INSTS] = "smsp__inst_executed_op_shared_ld.sum",
    [CUTUNE__M_SHARED_ST_INSTS] = "smsp__inst_executed_op_shared_st.sum",
    [CUTUNE__M_DRAM_BYTES] = "dram__bytes.sum",
};

const char *cutune__metric_name(cutune__metric m)
{
    return (unsigned)m < CUTUNE__METRIC_COUNT ? metric_names[m] : "?";
}

const char *cutune__metric_unit(cutune__metric m)
{
    const char *name = cutune__metric_name(m);
    if (m == CUTUNE__M_TIME_NS)
        return "ns";
    if (m == CUTUNE__M_DRAM_BYTES)
        return "bytes";
    return strstr(name, "pct") ? "%" : "count";
}

/* The static facts among the measurements, by these names. */
#define M_REGISTERS   "registers_per_thread"
#define M_LOCAL       "local_bytes_per_thread"
#define M_THEORETICAL "theoretical_occupancy"

size_t cutune__explain_measurements(const cutune__explained *e,
                                    const char **names, double *values,
                                    const char **units, size_t cap)
{
    size_t n = 0;
    for (int m = 0; m < CUTUNE__METRIC_COUNT && n < cap; m++) {
        if (!isfinite(e->values[m]))
            continue;
        names[n] = cutune__metric_name((cutune__metric)m);
        units[n] = cutune__metric_unit((cutune__metric)m);
        values[n++] = e->values[m];
    }
    if (!e->has_static || n + 3 > cap)
        return n;
    names[n] = M_REGISTERS;
    units[n] = "count";
    values[n++] = e->facts.regs_per_thread;
    names[n] = M_LOCAL;
    units[n] = "bytes";
    values[n++] = e->facts.local_bytes;
    names[n] = M_THEORETICAL;
    units[n] = "%";
    values[n++] = 100 * e->occ.theoretical;
    return n;
}

int cutune__explain_from_measurements(cutune__explained *e,
                                      const char *const *names,
                                      const double *values, size_t n)
{
    int any = 0;
    for (int m = 0; m < CUTUNE__METRIC_COUNT; m++)
        e->values[m] = NAN;
    for (size_t i = 0; i < n; i++) {
        for (int m = 0; m < CUTUNE__METRIC_COUNT; m++)
            if (strcmp(names[i], cutune__metric_name((cutune__metric)m)) ==
                0) {
                e->values[m] = values[i];
                any = 1;
            }
        /* The static facts as far as the rules need them. */
        if (strcmp(names[i], M_REGISTERS) == 0) {
            e->has_static = 1;
            e->facts.regs_per_thread = (int)values[i];
        } else if (strcmp(names[i], M_LOCAL) == 0) {
            e->facts.local_bytes = (int)values[i];
        } else if (strcmp(names[i], M_THEORETICAL) == 0) {
            e->occ.theoretical = values[i] / 100;
        }
    }
    e->counters = any ? CUTUNE_COUNTERS_READ : CUTUNE_COUNTERS_NOT_RUN;
    return any;
}

const char *cutune__limiter_str(cutune__limiter l)
{
    switch (l) {
    case CUTUNE__LIMIT_NONE: return "none";
    case CUTUNE__LIMIT_REGISTERS: return "registers";
    case CUTUNE__LIMIT_SHARED: return "shared memory";
    case CUTUNE__LIMIT_BLOCK_SIZE: return "block size";
    case CUTUNE__LIMIT_BLOCKS: return "blocks per SM";
    }
    return "?";
}

const char *cutune__bottleneck_str(cutune__bottleneck b)
{
    switch (b) {
    case CUTUNE__B_UNKNOWN: return "unknown";
    case CUTUNE__B_MEMORY: return "memory-bound";
    case CUTUNE__B_SHARED_CONFLICTS: return "shared-memory bank conflicts";
    case CUTUNE__B_UNCOALESCED: return "uncoalesced global access";
    case CUTUNE__B_OCCUPANCY: return "low occupancy";
    case CUTUNE__B_COMPUTE: return "compute-bound";
    case CUTUNE__B_LATENCY: return "latency-bound";
    case CUTUNE__B_SPILLS: return "register spills";
    }
    return "?";
}

/* Registers are given out per warp in units of 256, shared memory per
 * block in units of 128 bytes (CUDA occupancy calculator, sm_50 on). */
#define REG_UNIT  256
#define SMEM_UNIT 128

static int round_up(long long v, long long unit)
{
    return (int)((v + unit - 1) / unit * unit);
}

void cutune__occupancy_compute(const cutune__static_facts *f,
                               cutune__occupancy *out)
{
    memset(out, 0, sizeof *out);
    const int warp = f->warp_size > 0 ? f->warp_size : 32;
    const int warps_sm = f->max_threads_per_sm / warp;
    const int warps = (f->threads_per_block + warp - 1) / warp;
    if (warps <= 0 || warps_sm <= 0)
        return;
    out->by_block_size = warps_sm / warps;
    out->by_blocks = f->max_blocks_per_sm > 0 ? f->max_blocks_per_sm : INT_MAX;
    out->by_registers = INT_MAX;
    if (f->regs_per_thread > 0 && f->regs_per_sm > 0) {
        int per_warp =
            round_up((long long)f->regs_per_thread * warp, REG_UNIT);
        out->by_registers = f->regs_per_sm / per_warp / warps;
    }
    out->by_shared = INT_MAX;
    long long smem = (long long)f->static_smem + f->dynamic_smem;
    if (smem > 0 && f->smem_per_sm > 0)
        out->by_shared =
            (int)(f->smem_per_sm /
                  round_up(smem + f->reserved_smem_per_block, SMEM_UNIT));
    /* The binding limit: the smallest. On a tie the block's shape is
     * named first: registers that would allow every warp slot do not
     * limit a block size whose warps do not divide them. */
    const int limits[] = {out->by_block_size, out->by_blocks,
                          out->by_registers, out->by_shared};
    const cutune__limiter which[] = {
        CUTUNE__LIMIT_BLOCK_SIZE, CUTUNE__LIMIT_BLOCKS,
        CUTUNE__LIMIT_REGISTERS, CUTUNE__LIMIT_SHARED};
    int best = INT_MAX;
    for (size_t i = 0; i < sizeof limits / sizeof *limits; i++)
        if (limits[i] < best) {
            best = limits[i];
            out->limiter = which[i];
        }
    out->blocks = f->active_blocks > 0 ? f->active_blocks : best;
    out->theoretical = (double)out->blocks * warps / warps_sm;
    if (out->theoretical > 1.0)
        out->theoretical = 1.0;
    if (out->blocks * warps >= warps_sm)
        out->limiter = CUTUNE__LIMIT_NONE;
}

static double ratio(double a, double b)
{
    return isfinite(a) && isfinite(b) && b > 0 ? a / b : NAN;
}

double cutune__ld_sectors_per_request(const cutune__explained *e)
{
    return ratio(e->values[CUTUNE__M_LD_SECTORS],
                 e->values[CUTUNE__M_LD_REQUESTS]);
}

double cutune__st_sectors_per_request(const cutune__explained *e)
{
    return ratio(e->values[CUTUNE__M_ST_SECTORS],
                 e->values[CUTUNE__M_ST_REQUESTS]);
}

/* Extra wavefronts per shared-memory instruction, loads and stores
 * together: 0 without conflicts, 31 when a warp's 32 lanes hit one bank. */
/* a + b where either is known (results read back keep only the
 * figures a GPU gave); NaN when neither is. */
static double sum_known(double a, double b)
{
    if (!isfinite(a))
        return b;
    return isfinite(b) ? a + b : a;
}

double cutune__conflicts_per_request(const cutune__explained *e)
{
    const double *v = e->values;
    double insts =
        sum_known(v[CUTUNE__M_SHARED_LD_INSTS], v[CUTUNE__M_SHARED_ST_INSTS]);
    if (!(insts > 0))
        return isfinite(insts) ? 0.0 : NAN;
    return ratio(sum_known(v[CUTUNE__M_SHARED_LD_CONFLICTS],
                           v[CUTUNE__M_SHARED_ST_CONFLICTS]),
                 insts);
}

double cutune__achieved_occupancy(const cutune__explained *e)
{
    double pct = e->values[CUTUNE__M_WARPS_ACTIVE_PCT];
    if (!isfinite(pct) || !e->has_static)
        return NAN;
    /* Nsight's figure is a share of the SM's warp slots while active. */
    return pct / 100.0;
}

double cutune__dram_gbs(const cutune__explained *e)
{
    return ratio(e->values[CUTUNE__M_DRAM_BYTES],
                 e->values[CUTUNE__M_TIME_NS]);
}

/* "DRAM at 91% of peak", or the busiest memory unit when that is not
 * DRAM (shared memory, L1 or L2 of a kernel that reuses its data). */
static void memory_text(const cutune__explained *e, char *buf, size_t len)
{
    const double dram = e->values[CUTUNE__M_DRAM_PCT];
    const double mem = e->values[CUTUNE__M_MEMORY_PCT];
    if (!isfinite(mem) || mem <= dram + 1.0)
        snprintf(buf, len, "DRAM at %.0f%% of peak", dram);
    else
        snprintf(buf, len,
                 "the busiest memory unit (L1, shared, L2) at "
                 "%.0f%% of peak, DRAM at %.0f%%",
                 mem, dram);
}

/* The higher of DRAM and the busiest memory unit, % of peak. */
static double memory_pct(const cutune__explained *e)
{
    const double dram = e->values[CUTUNE__M_DRAM_PCT];
    const double mem = e->values[CUTUNE__M_MEMORY_PCT];
    return isfinite(mem) && !(mem < dram) ? mem : dram;
}

#define FIND(kind, ...)                                                       \
    do {                                                                      \
        out[n] = (kind);                                                      \
        snprintf(texts[n], 128, __VA_ARGS__);                                 \
        n++;                                                                  \
    } while (0)

/* What is wrong besides the roofs: conflicts, coalescing, spills,
 * occupancy. */
static size_t defects(const cutune__explained *e, cutune__bottleneck *out,
                      char texts[][128], size_t n)
{
    const double conflicts = cutune__conflicts_per_request(e);
    const double ld = cutune__ld_sectors_per_request(e);
    const double st = cutune__st_sectors_per_request(e);
    const double achieved = cutune__achieved_occupancy(e);
    if (conflicts >= CUTUNE__CONFLICTS_PER_REQ)
        FIND(CUTUNE__B_SHARED_CONFLICTS,
             "%.1f extra shared-memory wavefronts per request", conflicts);
    if (ld > CUTUNE__SECTORS_PER_REQ || st > CUTUNE__SECTORS_PER_REQ)
        FIND(CUTUNE__B_UNCOALESCED,
             "%.1f sectors per load request, %.1f per store", ld, st);
    if (e->has_static && e->facts.local_bytes > 0)
        FIND(CUTUNE__B_SPILLS, "%d bytes of local memory per thread",
             e->facts.local_bytes);
    if (e->has_static && e->occ.theoretical > 0 &&
        (e->occ.theoretical < CUTUNE__LOW_OCCUPANCY ||
         achieved < CUTUNE__LOW_OCCUPANCY)) {
        if (isfinite(achieved))
            FIND(CUTUNE__B_OCCUPANCY,
                 "%.0f%% achieved of %.0f%% theoretical, limited by %s",
                 100 * achieved, 100 * e->occ.theoretical,
                 cutune__limiter_str(e->occ.limiter));
        else
            FIND(CUTUNE__B_OCCUPANCY, "%.0f%% theoretical, limited by %s",
                 100 * e->occ.theoretical,
                 cutune__limiter_str(e->occ.limiter));
    }
    return n;
}

/* The findings in the order the rules weigh them (docs/explain.md); the
 * first is the bottleneck, the others are said after it. DRAM at its roof
 * binds whatever else is imperfect; below it, bank conflicts come first
 * (they keep the shared-memory unit busy, which would otherwise read as
 * a memory roof), then the busier of memory and compute. */
static size_t findings(const cutune__explained *e, cutune__bottleneck *out,
                       char texts[][128])
{
    size_t n = 0;
    const double dram = e->values[CUTUNE__M_DRAM_PCT];
    const double mem = memory_pct(e), sm = e->values[CUTUNE__M_SM_PCT];
    const double conflicts = cutune__conflicts_per_request(e);
    char mtext[128];
    memory_text(e, mtext, sizeof mtext);
    if (dram >= CUTUNE__ROOF_PCT)
        FIND(CUTUNE__B_MEMORY, "%s", mtext);
    else if (conflicts >= CUTUNE__CONFLICTS_PER_REQ)
        FIND(CUTUNE__B_SHARED_CONFLICTS,
             "%.1f extra shared-memory wavefronts per request", conflicts);
    else if (mem >= CUTUNE__BOUND_PCT && !(sm > mem))
        FIND(CUTUNE__B_MEMORY, "%s", mtext);
    else if (sm >= CUTUNE__BOUND_PCT)
        FIND(CUTUNE__B_COMPUTE, "compute at %.0f%% of peak", sm);
    /* The defects after the bound, each once. */
    cutune__bottleneck more[8];
    char more_texts[8][128];
    size_t m = defects(e, more, more_texts, 0);
    for (size_t i = 0; i < m; i++) {
        if (n > 0 && more[i] == out[0])
            continue;
        out[n] = more[i];
        memcpy(texts[n], more_texts[i], sizeof texts[n]);
        n++;
    }
    if (n == 0 && isfinite(mem) && isfinite(sm))
        FIND(CUTUNE__B_LATENCY,
             "neither memory (%.0f%%) nor compute (%.0f%%) near its peak", mem,
             sm);
    return n;
}
#undef FIND

void cutune__classify(cutune__explained *e)
{
    cutune__bottleneck kinds[12];
    char texts[12][128];
    size_t n = findings(e, kinds, texts);
    e->bottleneck = n ? kinds[0] : CUTUNE__B_UNKNOWN;
    if (n == 0) {
        snprintf(e->verdict, sizeof e->verdict, "%s",
                 e->counters == CUTUNE_COUNTERS_READ
                     ? "unknown"
                     : "unknown without counters");
        return;
    }
    int used = snprintf(e->verdict, sizeof e->verdict, "%s: %s",
                        cutune__bottleneck_str(kinds[0]), texts[0]);
    for (size_t i = 1; i < n && used > 0 && (size_t)used < sizeof e->verdict;
         i++)
        used += snprintf(e->verdict + used, sizeof e->verdict - (size_t)used,
                         "%s%s", i == 1 ? "; also " : ", ", texts[i]);
}

int cutune__headroom(const cutune__explained *e, double *factor, char *buf,
                     size_t len)
{
    /* A unit kept busy by bank conflicts is waste, not a roof: DRAM's is
     * the memory roof of such a kernel. */
    const double mem = e->bottleneck == CUTUNE__B_SHARED_CONFLICTS
                           ? e->values[CUTUNE__M_DRAM_PCT]
                           : memory_pct(e);
    const double sm = e->values[CUTUNE__M_SM_PCT];
    if (!isfinite(mem) || !isfinite(sm) || (mem <= 0 && sm <= 0))
        return 0;
    const int memory = mem >= sm;
    const double at = memory ? mem : sm;
    *factor = 100.0 / at;
    char what[128];
    if (memory && e->bottleneck == CUTUNE__B_SHARED_CONFLICTS)
        snprintf(what, sizeof what, "DRAM at %.0f%% of peak", mem);
    else if (memory)
        memory_text(e, what, sizeof what);
    else
        snprintf(what, sizeof what, "compute at %.0f%% of peak", sm);
    snprintf(buf, len,
             "the %s is at %.0f%% of the %s roof (%s): at most "
             "%.2fx faster there",
             e->role, at, memory ? "memory" : "compute", what, *factor);
    return 1;
}

void cutune__explain_settle(cutune_explain *x)
{
    x->counters = CUTUNE_COUNTERS_READ;
    x->why[0] = '\0';
    for (size_t i = 0; i < x->n; i++) {
        const cutune__explained *e = &x->cfg[i];
        if (e->counters == CUTUNE_COUNTERS_READ ||
            e->counters == CUTUNE_COUNTERS_NOT_RUN)
            continue;
        x->counters = e->counters;
        snprintf(x->why, sizeof x->why, "%s", e->why);
        return;
    }
}

void cutune__explain_free(cutune_explain *x)
{
    if (!x)
        return;
    for (size_t i = 0; i < x->n; i++) {
        free(x->cfg[i].config_text);
        free(x->cfg[i].message);
    }
    free(x);
}
