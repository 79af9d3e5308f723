/* `cutune explain` without a GPU (tuner/explain/): the metric table
 * against the names an H100's profiler accepted, theoretical occupancy
 * and its limiter on an H100's limits, the bottleneck rules on figures
 * like those an H100 gave (transpose with and without padding,
 * vector_add, matmul), the headroom, and the report as text and JSON,
 * with counters and without them. */
#define _POSIX_C_SOURCE 200809L

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../check.h"
#include "explain_model.h"

/* An H100 (sm_90) as cudaGetDeviceProperties and the attributes give it. */
static cutune__static_facts h100(int threads, int regs, int smem)
{
    cutune__static_facts f = {
        .threads_per_block = threads,
        .regs_per_thread = regs,
        .static_smem = smem,
        .warp_size = 32,
        .max_threads_per_sm = 2048,
        .max_blocks_per_sm = 32,
        .regs_per_sm = 65536,
        .smem_per_sm = 233472,
        .reserved_smem_per_block = 1024,
    };
    return f;
}

static void test_metric_table(void)
{
    char path[4096];
    const char *data = getenv("CUTUNE_TEST_DATA");
    CHECK(data != NULL);
    snprintf(path, sizeof path, "%s/explain/metrics-h100.txt",
             data ? data : ".");
    FILE *f = fopen(path, "r");
    CHECK(f != NULL);
    char accepted[64][128];
    size_t n = 0;
    while (f && n < 64 && fgets(accepted[n], sizeof accepted[n], f)) {
        accepted[n][strcspn(accepted[n], "\n")] = '\0';
        n++;
    }
    if (f)
        fclose(f);
    CHECK(n >= CUTUNE__METRIC_COUNT);
    for (int m = 0; m < CUTUNE__METRIC_COUNT; m++) {
        const char *name = cutune__metric_name((cutune__metric)m);
        int found = 0;
        for (size_t i = 0; i < n; i++)
            found |= strcmp(accepted[i], name) == 0;
        if (!found)
            fprintf(stderr, "not accepted on the H100: %s\n", name);
        CHECK(found);
        for (int k = 0; k < m; k++)
            CHECK(strcmp(name, cutune__metric_name((cutune__metric)k)) != 0);
    }
    CHECK_STR(cutune__metric_name(CUTUNE__METRIC_COUNT), "?");
}

static void test_occupancy(void)
{
    cutune__occupancy o;
    /* vector_add's default: 256 threads, 12 registers: every warp slot. */
    cutune__static_facts f = h100(256, 12, 0);
    cutune__occupancy_compute(&f, &o);
    CHECK(fabs(o.theoretical - 1.0) < 1e-9);
    CHECK_INT(o.blocks, 8);
    CHECK_INT(o.limiter, CUTUNE__LIMIT_NONE);
    /* 192 threads (6 warps) of 26 registers: the registers would allow
     * all 64 warps, but 10 blocks of 6 warps leave 4 slots: block size,
     * 93.75% (the H100's occupancy API gave 10 blocks). */
    f = h100(192, 26, 0);
    f.active_blocks = 10;
    cutune__occupancy_compute(&f, &o);
    CHECK(fabs(o.theoretical - 0.9375) < 1e-9);
    CHECK_INT(o.limiter, CUTUNE__LIMIT_BLOCK_SIZE);
    CHECK_INT(o.by_registers, 10);
    /* transpose 64x4 with 39 registers: 1280 registers a warp, 51 warps,
     * 6 blocks of 8: 75%, registers. */
    f = h100(256, 39, 16640);
    cutune__occupancy_compute(&f, &o);
    CHECK_INT(o.by_registers, 6);
    CHECK(fabs(o.theoretical - 0.75) < 1e-9);
    CHECK_INT(o.limiter, CUTUNE__LIMIT_REGISTERS);
    /* matmul's winner: 128 registers, 256 threads: 2 blocks, 25%. */
    f = h100(256, 128, 16896);
    cutune__occupancy_compute(&f, &o);
    CHECK_INT(o.blocks, 2);
    CHECK(fabs(o.theoretical - 0.25) < 1e-9);
    CHECK_INT(o.limiter, CUTUNE__LIMIT_REGISTERS);
    /* One warp per block: 32 blocks fill half the slots. */
    f = h100(32, 16, 0);
    cutune__occupancy_compute(&f, &o);
    CHECK(fabs(o.theoretical - 0.5) < 1e-9);
    CHECK_INT(o.limiter, CUTUNE__LIMIT_BLOCKS);
    /* 48 KiB of shared memory (+1 KiB reserved) per block: 4 blocks. */
    f = h100(256, 16, 49152);
    cutune__occupancy_compute(&f, &o);
    CHECK_INT(o.by_shared, 4);
    CHECK_INT(o.limiter, CUTUNE__LIMIT_SHARED);
    CHECK(fabs(o.theoretical - 0.5) < 1e-9);
    /* Dynamic shared memory counts too. */
    f = h100(256, 16, 0);
    f.dynamic_smem = 100000;
    cutune__occupancy_compute(&f, &o);
    CHECK_INT(o.by_shared, 2);
    CHECK_INT(o.limiter, CUTUNE__LIMIT_SHARED);
    /* Nothing known: nothing computed. */
    memset(&f, 0, sizeof f);
    cutune__occupancy_compute(&f, &o);
    CHECK(o.theoretical == 0.0);
}

/* A configuration with counters; figures by metric, others NaN. */
static cutune__explained with_counters(const char *role,
                                       cutune__static_facts f)
{
    cutune__explained e;
    memset(&e, 0, sizeof e);
    snprintf(e.role, sizeof e.role, "%s", role);
    e.config_text = strdup("PAD=0");
    e.message = strdup("");
    e.time_ms = 0.3;
    e.facts = f;
    e.has_static = 1;
    cutune__occupancy_compute(&e.facts, &e.occ);
    e.counters = CUTUNE_COUNTERS_READ;
    e.passes = 12;
    for (int m = 0; m < CUTUNE__METRIC_COUNT; m++)
        e.values[m] = NAN;
    return e;
}

static void set_common(cutune__explained *e, double dram, double mem,
                       double sm, double achieved_pct)
{
    double *v = e->values;
    v[CUTUNE__M_TIME_NS] = 300000;
    v[CUTUNE__M_DRAM_PCT] = dram;
    v[CUTUNE__M_MEMORY_PCT] = mem;
    v[CUTUNE__M_SM_PCT] = sm;
    v[CUTUNE__M_WARPS_ACTIVE_PCT] = achieved_pct;
    v[CUTUNE__M_LD_SECTORS] = 8388608;
    v[CUTUNE__M_LD_REQUESTS] = 2097152;
    v[CUTUNE__M_ST_SECTORS] = 8388608;
    v[CUTUNE__M_ST_REQUESTS] = 2097152;
    v[CUTUNE__M_L1_HIT_PCT] = 0;
    v[CUTUNE__M_L2_HIT_PCT] = 51;
    v[CUTUNE__M_SHARED_LD_CONFLICTS] = 0;
    v[CUTUNE__M_SHARED_ST_CONFLICTS] = 0;
    v[CUTUNE__M_SHARED_LD_INSTS] = 2097152;
    v[CUTUNE__M_SHARED_ST_INSTS] = 2097152;
    v[CUTUNE__M_DRAM_BYTES] = 537965000;
}

static void test_rules(void)
{
    /* transpose without padding: 31 extra wavefronts per load (a 32-way
     * conflict), the shared-memory unit busy, DRAM not. */
    cutune__explained pad0 = with_counters("given", h100(256, 32, 4096));
    set_common(&pad0, 41.8, 76.5, 18.9, 94.0);
    pad0.values[CUTUNE__M_SHARED_LD_CONFLICTS] = 65560300;
    pad0.values[CUTUNE__M_SHARED_ST_CONFLICTS] = 143511;
    CHECK(fabs(cutune__conflicts_per_request(&pad0) - 15.67) < 0.01);
    cutune__classify(&pad0);
    CHECK_INT(pad0.bottleneck, CUTUNE__B_SHARED_CONFLICTS);
    CHECK_CONTAINS(pad0.verdict, "shared-memory bank conflicts: 15.7 extra");
    /* ... and with padding: no conflicts; at 60% of DRAM, memory-bound. */
    cutune__explained pad1 = with_counters("given", h100(256, 32, 4224));
    set_common(&pad1, 61.6, 61.6, 15.8, 95.2);
    pad1.values[CUTUNE__M_SHARED_LD_CONFLICTS] = 55369;
    pad1.values[CUTUNE__M_SHARED_ST_CONFLICTS] = 47230;
    cutune__classify(&pad1);
    CHECK_INT(pad1.bottleneck, CUTUNE__B_MEMORY);
    CHECK(strstr(pad1.verdict, "bank conflicts") == NULL);
    CHECK_CONTAINS(pad1.verdict, "memory-bound: DRAM at 62% of peak");
    /* DRAM at its roof binds even with conflicts, which come after. */
    pad0.values[CUTUNE__M_DRAM_PCT] = 90;
    pad0.values[CUTUNE__M_MEMORY_PCT] = 90;
    cutune__classify(&pad0);
    CHECK_INT(pad0.bottleneck, CUTUNE__B_MEMORY);
    CHECK_CONTAINS(pad0.verdict, "; also 15.7 extra shared-memory");
    /* matmul's winner: compute at 73%, 25% occupancy by registers. */
    cutune__explained mm = with_counters("winner", h100(256, 128, 16896));
    set_common(&mm, 6.0, 60.5, 72.6, 23.8);
    mm.values[CUTUNE__M_LD_SECTORS] = 16 * 1000.0;
    mm.values[CUTUNE__M_LD_REQUESTS] = 1000.0;
    cutune__classify(&mm);
    CHECK_INT(mm.bottleneck, CUTUNE__B_COMPUTE);
    CHECK_CONTAINS(mm.verdict, "compute-bound: compute at 73% of peak");
    CHECK_CONTAINS(mm.verdict, "24% achieved of 25% theoretical, limited "
                               "by registers");
    /* 16 sectors per request is a warp's 16-byte accesses: not judged. */
    CHECK(strstr(mm.verdict, "uncoalesced") == NULL);
    /* The busiest memory unit is not DRAM: said so. */
    cutune__explained mo = with_counters("occupancy", h100(256, 76, 8192));
    set_common(&mo, 3.7, 76.5, 50.4, 36.4);
    cutune__classify(&mo);
    CHECK_INT(mo.bottleneck, CUTUNE__B_MEMORY);
    CHECK_CONTAINS(mo.verdict, "busiest memory unit (L1, shared, L2) at 76% "
                               "of peak, DRAM at 4%");
    /* Strided loads: 32 sectors a request; nothing near a roof. */
    cutune__explained un = with_counters("given", h100(256, 16, 0));
    set_common(&un, 30, 30, 10, 90);
    un.values[CUTUNE__M_LD_SECTORS] = 32 * 1000.0;
    un.values[CUTUNE__M_LD_REQUESTS] = 1000.0;
    cutune__classify(&un);
    CHECK_INT(un.bottleneck, CUTUNE__B_UNCOALESCED);
    CHECK_CONTAINS(un.verdict, "32.0 sectors per load request");
    /* Spills are named. */
    un.facts.local_bytes = 64;
    cutune__classify(&un);
    CHECK_CONTAINS(un.verdict, "64 bytes of local memory per thread");
    /* Nothing stands out: latency. */
    cutune__explained lat = with_counters("default", h100(256, 32, 0));
    set_common(&lat, 33, 33, 18, 93);
    cutune__classify(&lat);
    CHECK_INT(lat.bottleneck, CUTUNE__B_LATENCY);
    CHECK_CONTAINS(lat.verdict, "neither memory (33%) nor compute (18%)");
    /* Without counters: static facts only. */
    cutune__explained none = with_counters("winner", h100(256, 128, 0));
    none.counters = CUTUNE_COUNTERS_REFUSED;
    for (int m = 0; m < CUTUNE__METRIC_COUNT; m++)
        none.values[m] = NAN;
    cutune__classify(&none);
    CHECK_INT(none.bottleneck, CUTUNE__B_OCCUPANCY);
    CHECK_CONTAINS(none.verdict, "25% theoretical, limited by registers");
    cutune__explained bare = with_counters("winner", h100(256, 12, 0));
    bare.counters = CUTUNE_COUNTERS_NO_CUPTI;
    for (int m = 0; m < CUTUNE__METRIC_COUNT; m++)
        bare.values[m] = NAN;
    cutune__classify(&bare);
    CHECK_STR(bare.verdict, "unknown without counters");

    double factor = 0;
    char line[256];
    CHECK(cutune__headroom(&pad1, &factor, line, sizeof line));
    CHECK(fabs(factor - 100.0 / 61.6) < 1e-9);
    CHECK_CONTAINS(line, "the given is at 62% of the memory roof");
    CHECK(cutune__headroom(&mm, &factor, line, sizeof line));
    CHECK(fabs(factor - 100.0 / 72.6) < 1e-9);
    CHECK_CONTAINS(line, "compute roof");
    CHECK(!cutune__headroom(&bare, &factor, line, sizeof line));
    const cutune__explained *all[] = {&pad0, &pad1, &mm,   &mo,
                                      &un,   &lat,  &none, &bare};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++) {
        free(all[i]->config_text);
        free(all[i]->message);
    }
}

/* An explanation of three columns; `counters` for all of them. */
static cutune_explain *three(int counters)
{
    cutune_explain *x = calloc(1, sizeof *x);
    snprintf(x->problem, sizeof x->problem, "transpose");
    snprintf(x->device, sizeof x->device, "GTX Fictional 9000");
    snprintf(x->arch, sizeof x->arch, "sm_90");
    snprintf(x->size, sizeof x->size, "8192x8192");
    const char *roles[] = {"winner", "occupancy", "default"};
    for (size_t i = 0; i < 3; i++) {
        x->cfg[i] = with_counters(roles[i], h100(256, 32, 4224));
        set_common(&x->cfg[i], 61.6, 61.6, 15.8, 95.2);
        x->cfg[i].counters = counters;
        if (counters != CUTUNE_COUNTERS_READ) {
            snprintf(x->cfg[i].why, sizeof x->cfg[i].why,
                     "CUPTI could not be loaded");
            for (int m = 0; m < CUTUNE__METRIC_COUNT; m++)
                x->cfg[i].values[m] = NAN;
        }
        cutune__classify(&x->cfg[i]);
        x->n = i + 1;
    }
    cutune__explain_settle(x);
    return x;
}

static size_t count(const char *hay, const char *needle)
{
    size_t n = 0;
    for (const char *at = hay; (at = strstr(at, needle)); at++)
        n++;
    return n;
}

static void test_text(void)
{
    cutune_explain *x = three(CUTUNE_COUNTERS_READ);
    const char *why = NULL;
    CHECK_INT(cutune_explain_counters(x, &why), CUTUNE_COUNTERS_READ);
    char *t = cutune_explain_text(x);
    CHECK_CONTAINS(t, "transpose, size 8192x8192 on GTX Fictional 9000 "
                      "(sm_90)\n");
    CHECK_CONTAINS(t, "        winner     occupancy       default\n");
    CHECK_CONTAINS(t, "DRAM throughput (% peak)                61.6"
                      "          61.6          61.6\n");
    CHECK_CONTAINS(t, "DRAM bandwidth (GB/s)                   1793");
    CHECK_CONTAINS(t, "shared conflicts per request            0.00");
    CHECK_CONTAINS(t, "  limited by                            none");
    CHECK_CONTAINS(t, "\nbottleneck\n  winner     memory-bound: DRAM at 62% "
                      "of peak\n");
    CHECK_CONTAINS(t, "headroom: the winner is at 62% of the memory roof");
    CHECK(strstr(t, "counters not read") == NULL);
    free(t);
    cutune_explain_destroy(x);

    /* Refused: one line says why, times and static figures remain. */
    x = three(CUTUNE_COUNTERS_NO_CUPTI);
    CHECK_INT(cutune_explain_counters(x, &why), CUTUNE_COUNTERS_NO_CUPTI);
    CHECK_STR(why, "CUPTI could not be loaded");
    t = cutune_explain_text(x);
    CHECK_INT(count(t, "counters not read"), 1);
    CHECK_CONTAINS(t, "counters not read (no-cupti): CUPTI could not be "
                      "loaded\n");
    CHECK_CONTAINS(t, "registers per thread                      32"
                      "            32            32\n");
    CHECK_CONTAINS(t, "time, timed launches (ms)             0.3000");
    CHECK_CONTAINS(t, "DRAM throughput (% peak)                   -"
                      "             -             -\n");
    CHECK(strstr(t, "headroom") == NULL);
    free(t);
    cutune_explain_destroy(x);
}

static void test_json(void)
{
    cutune_explain *x = three(CUTUNE_COUNTERS_REFUSED);
    x->cfg[1].counters = CUTUNE_COUNTERS_READ;
    set_common(&x->cfg[1], 61.6, 61.6, 15.8, 95.2);
    cutune__classify(&x->cfg[1]);
    cutune__explain_settle(x);
    char *text = cutune_explain_json(x);
    json_error_t err;
    json_t *j = json_loads(text, 0, &err);
    CHECK(j != NULL);
    CHECK_STR(json_string_value(json_object_get(j, "counters")), "refused");
    CHECK_STR(json_string_value(json_object_get(j, "problem")), "transpose");
    json_t *cs = json_object_get(j, "configurations");
    CHECK_INT(json_array_size(cs), 3);
    json_t *w = json_array_get(cs, 0), *o = json_array_get(cs, 1);
    CHECK_STR(json_string_value(json_object_get(w, "role")), "winner");
    CHECK_STR(json_string_value(json_object_get(w, "counters")), "refused");
    CHECK(json_is_null(json_object_get(json_object_get(w, "metrics"),
                                       "dram__throughput.avg.pct_of_peak_"
                                       "sustained_elapsed")));
    CHECK(fabs(json_real_value(json_object_get(
                   json_object_get(o, "metrics"),
                   "dram__throughput.avg.pct_of_peak_sustained_elapsed")) -
               61.6) < 1e-9);
    CHECK_STR(json_string_value(json_object_get(o, "bottleneck")),
              "memory-bound");
    json_t *st = json_object_get(w, "static");
    CHECK_INT(json_integer_value(json_object_get(st, "registers_per_thread")),
              32);
    CHECK_STR(json_string_value(json_object_get(st, "limited_by")), "none");
    CHECK(json_is_null(json_object_get(j, "headroom")));
    json_decref(j);
    free(text);
    cutune_explain_destroy(x);
    CHECK_STR(cutune_counters_str(CUTUNE_COUNTERS_UNSUPPORTED), "unsupported");
    CHECK_STR(cutune_counters_str(CUTUNE_COUNTERS_NO_CUPTI), "no-cupti");
}

/* Power and energy: rows and keys only where measured (a tune's
 * measurement, `explain --measure-energy`); "-" for a column without. */
static void test_energy(void)
{
    cutune_explain *x = three(CUTUNE_COUNTERS_READ);
    char *t = cutune_explain_text(x);
    CHECK(strstr(t, "power (W)") == NULL);
    CHECK(strstr(t, "energy per launch") == NULL);
    free(t);
    char *text = cutune_explain_json(x);
    CHECK(strstr(text, "energy_j") == NULL && strstr(text, "power_w") == NULL);
    free(text);

    x->cfg[0].energy_j = 0.1024;
    x->cfg[0].power_w = 64;
    x->cfg[1].energy_j = x->cfg[1].power_w = NAN;
    x->cfg[2].energy_j = 0.25;
    x->cfg[2].power_w = 125.5;
    t = cutune_explain_text(x);
    CHECK_CONTAINS(t, "time, timed launches (ms)             0.3000"
                      "        0.3000        0.3000\n"
                      "power (W)                               64.0"
                      "             -         125.5\n"
                      "energy per launch (J)                 0.1024"
                      "             -          0.25\n");
    free(t);
    text = cutune_explain_json(x);
    json_error_t err;
    json_t *j = json_loads(text, 0, &err);
    CHECK(j != NULL);
    json_t *cs = json_object_get(j, "configurations");
    json_t *w = json_array_get(cs, 0), *o = json_array_get(cs, 1),
           *d = json_array_get(cs, 2);
    CHECK_NEAR(json_real_value(json_object_get(w, "energy_j")), 0.1024, 1e-12);
    CHECK_NEAR(json_real_value(json_object_get(w, "power_w")), 64, 1e-12);
    CHECK(json_object_get(o, "energy_j") == NULL);
    CHECK(json_object_get(o, "power_w") == NULL);
    CHECK_NEAR(json_real_value(json_object_get(d, "power_w")), 125.5, 1e-12);
    /* The keys that were there before stay. */
    CHECK_STR(json_string_value(json_object_get(w, "role")), "winner");
    CHECK(json_object_get(w, "time_ms") != NULL);
    json_decref(j);
    free(text);
    cutune_explain_destroy(x);
}

int main(void)
{
    test_metric_table();
    test_occupancy();
    test_rules();
    test_text();
    test_json();
    test_energy();
    return check_finish();
}
