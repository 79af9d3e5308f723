/* GPU tests of whole tunes through the public API:
 * - vector_add, brute force: every configuration validates, the winner is
 *   the fastest measured, the report and the cache record agree;
 * - the faulty fixture: an out-of-bounds writer, a wrong answer, a kernel
 *   that never finishes, one that does not compile and one whose launch
 *   would be rejected for resources are each recorded with their outcome,
 *   and the tune still ends with the right winner;
 * - a binary cache whose cubins are damaged is compiled again. */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "cutune/cutune.h"
#include "damage.h"
#include "gpu_fixtures.h"
#include "tmpdir.h"

static char cache_dir[] = "/tmp/cutune-gpu-test-XXXXXX";

static int tune_vector_add(void)
{
    long long size = 1 << 22;
    cutune_problem_options po = {
        .problem_size = &size, .n_problem_size = 1, .space_only = 0};
    cutune_problem *p;
    CHECK_INT(cutune_problem_load("vector_add", &po, &p), CUTUNE_OK);
    cutune_session_options o;
    cutune_session_options_init(&o);
    o.strategy = "brute_force";
    o.cache_dir = cache_dir;
    cutune_session *s;
    CHECK_INT(cutune_session_create(&o, &s), CUTUNE_OK);
    const cutune_tune_result *r;
    cutune_status st = cutune_session_tune(s, p, &r);
    if (st == CUTUNE_ERR_NO_DEVICE) {
        cutune_session_destroy(s);
        cutune_problem_destroy(p);
        return 1;
    }
    CHECK_INT(st, CUTUNE_OK);
    if (st) {
        fprintf(stderr, "%s\n", cutune_session_errmsg(s));
        goto out;
    }
    CHECK_INT(r->evaluations, cutune_problem_space_size(p));
    CHECK_INT(r->failures, 0);
    double fastest = INFINITY;
    size_t early = 0;
    for (size_t i = 0; i < r->n_evals; i++) {
        CHECK_INT(r->evals[i].outcome, CUTUNE_OUTCOME_CORRECT);
        if (r->evals[i].time_ms < fastest)
            fastest = r->evals[i].time_ms;
        early += r->evals[i].stopped_early != 0;
    }
    /* The winner is one of the finalists, measured again after the
     * search (two passes of at least 10 launches each on top of the
     * search's 10 or more), near the fastest of all. */
    CHECK(r->finalists >= 1 && r->finalists <= 5);
    CHECK(r->tied < r->finalists);
    CHECK(r->best_ms <= fastest * 1.05);
    CHECK(r->best_runs >= 30);
    /* Clearly slower candidates were dropped after a few launches. */
    CHECK(early > 0);
    CHECK(r->gpu_busy > 0.0 && r->gpu_busy <= 1.0);
    CHECK(r->best_ms > 0);
    CHECK(r->baseline_ms >= r->best_ms);
    CHECK(r->speedup >= 1.0);
    CHECK_NEAR(r->best_gbs, 12.0 * size / (r->best_ms * 1e-3) / 1e9, 1e-6);
    CHECK(r->occupancy_block_size >= 32 && r->occupancy_block_size <= 1024);
    CHECK(r->memcpy_gbs > 0);
    /* The winner went to the cache and reads back. */
    cutune_cache *c;
    CHECK_INT(cutune_cache_open(cache_dir, &c), CUTUNE_OK);
    cutune_cache_query q = {.problem_name = "vector_add",
                            .device_uuid = r->device.uuid,
                            .problem_size = &size,
                            .n_problem_size = 1};
    const cutune_cache_record *rec;
    cutune_match m;
    CHECK_INT(cutune_cache_lookup(c, &q, &rec, &m), CUTUNE_OK);
    CHECK_INT(m, CUTUNE_MATCH_EXACT);
    if (rec) {
        CHECK_NEAR(rec->time_ms, r->best_ms, 1e-9);
        for (size_t i = 0; i < r->n_params; i++)
            CHECK_STR(value_of(rec->config, rec->n_config, r->best[i].name),
                      r->best[i].value);
    }
    cutune_cache_close(c);
    printf("vector_add 2^22: best %.4f ms (%.0f GB/s), occupancy %.4f ms, "
           "memcpy %.0f GB/s; %zu of %zu dropped early, %zu finalists, "
           "%zu tied, GPU busy %.0f%%, %.1f s\n",
           r->best_ms, r->best_gbs, r->baseline_ms, r->memcpy_gbs, early,
           r->n_evals, r->finalists, r->tied, 100 * r->gpu_busy, r->wall_s);
out:
    cutune_session_destroy(s);
    cutune_problem_destroy(p);
    return 0;
}

/* A brute-force tune of tests/gpu/fixtures/FILE. Returns the result, or
 * NULL (with the reason printed) when the tune failed; *s and *p are the
 * caller's to destroy. */
static const cutune_tune_result *tune_fixture(const char *file,
                                              double launch_timeout_s,
                                              int reuse, cutune_session **s,
                                              cutune_problem **p)
{
    CHECK_INT(load_fixture(file, p), CUTUNE_OK);
    cutune_session_options o;
    cutune_session_options_init(&o);
    o.strategy = "brute_force";
    o.cache_dir = cache_dir;
    o.launch_timeout_s = launch_timeout_s;
    o.reuse_measurements = reuse;
    CHECK_INT(cutune_session_create(&o, s), CUTUNE_OK);
    const cutune_tune_result *r = NULL;
    cutune_status st = cutune_session_tune(*s, *p, &r);
    CHECK_INT(st, CUTUNE_OK);
    if (st) {
        fprintf(stderr, "%s: %s\n", file, cutune_session_errmsg(*s));
        return NULL;
    }
    return r;
}

static void tune_faulty(void)
{
    cutune_session *s = NULL;
    cutune_problem *p = NULL;
    const cutune_tune_result *r = tune_fixture("faulty.json", 1.0, 0, &s, &p);
    if (r) {
        CHECK_INT(r->evaluations, 12);
        const cutune_outcome *expected = faulty_expected;
        size_t seen[6] = {0};
        for (size_t i = 0; i < r->n_evals; i++) {
            /* Configurations are numbered with FAULT varying fastest. */
            size_t fault = r->evals[i].config_index % 6;
            CHECK_INT(r->evals[i].outcome, expected[fault]);
            if (r->evals[i].outcome != expected[fault])
                fprintf(stderr, "FAULT=%zu: %s: %s\n", fault,
                        cutune_outcome_str(r->evals[i].outcome),
                        r->evals[i].message);
            seen[fault]++;
        }
        for (int f = 0; f < 6; f++)
            CHECK_INT(seen[f], 2);
        CHECK_STR(value_of(r->best, r->n_params, "FAULT"), "0");
        CHECK_INT(r->failures, 10);
        CHECK(r->best_ms > 0 && isfinite(r->best_ms));
    }
    cutune_session_destroy(s);
    cutune_problem_destroy(p);
}

/* --resume: a tune that follows one of the same problem takes what that
 * one measured instead of measuring it again: the same evaluations in the
 * same order with the same times, no compilation. Of the faulty fixture's
 * failures, launch failures and time-outs are measured again (they may
 * have been the machine's); compile errors, resource refusals and wrong
 * answers are taken as they were. */
static void tune_resume(void)
{
    long long size = 1 << 20;
    cutune_problem_options po = {
        .problem_size = &size, .n_problem_size = 1, .space_only = 0};
    cutune_problem *p;
    CHECK_INT(cutune_problem_load("vector_add", &po, &p), CUTUNE_OK);
    cutune_session_options o;
    cutune_session_options_init(&o);
    o.cache_dir = cache_dir;
    o.max_evals = 40;
    o.reuse_measurements = 1;
    size_t first_idx[40];
    double first_ms[40], first_best = 0, first_wall = 0;
    size_t first_runs = 0;
    for (int run = 0; run < 2; run++) {
        cutune_session *s;
        CHECK_INT(cutune_session_create(&o, &s), CUTUNE_OK);
        const cutune_tune_result *r;
        cutune_status st = cutune_session_tune(s, p, &r);
        CHECK_INT(st, CUTUNE_OK);
        if (st) {
            fprintf(stderr, "%s\n", cutune_session_errmsg(s));
            cutune_session_destroy(s);
            break;
        }
        CHECK_INT(r->n_evals, 40);
        /* A size not tuned before: nothing to take the first time. */
        CHECK_INT(r->reused, run == 0 ? 0 : 40);
        for (size_t i = 0; i < r->n_evals && i < 40; i++) {
            if (run == 0) {
                first_idx[i] = r->evals[i].config_index;
                first_ms[i] = r->evals[i].time_ms;
                continue;
            }
            CHECK_INT(r->evals[i].config_index, first_idx[i]);
            CHECK(r->evals[i].time_ms == first_ms[i] ||
                  (isnan(r->evals[i].time_ms) && isnan(first_ms[i])));
        }
        if (run == 0) {
            first_best = r->best_ms;
            first_wall = r->wall_s;
            first_runs = r->best_runs;
        } else {
            /* The final round is taken from the log too. */
            CHECK(r->best_ms == first_best);
            CHECK_INT(r->best_runs, first_runs);
            CHECK(r->wall_s < first_wall);
            printf("vector_add 2^20, 40 evaluations: %.2f s measured, "
                   "%.2f s resumed\n",
                   first_wall, r->wall_s);
        }
        cutune_session_destroy(s);
    }
    cutune_problem_destroy(p);

    for (int run = 0; run < 2; run++) {
        cutune_session *s = NULL;
        cutune_problem *fp = NULL;
        const cutune_tune_result *r =
            tune_fixture("faulty.json", 1.0, 1, &s, &fp);
        if (r && run == 1) {
            CHECK_INT(r->evaluations, 12);
            CHECK_INT(r->reused, 8);
            CHECK_INT(r->failures, 10);
            CHECK_STR(value_of(r->best, r->n_params, "FAULT"), "0");
        }
        cutune_session_destroy(s);
        cutune_problem_destroy(fp);
    }
}

/* A C++ kernel (lowered name) with a constant-memory argument: every
 * configuration validates only if the worker filled the __constant__
 * coefficients after loading each module. */
static void tune_constmem(void)
{
    cutune_session *s = NULL;
    cutune_problem *p = NULL;
    const cutune_tune_result *r = tune_fixture("constmem.json", 0, 0, &s, &p);
    if (r) {
        CHECK_INT(r->evaluations, 3);
        CHECK_INT(r->failures, 0);
        for (size_t i = 0; i < r->n_evals; i++)
            if (r->evals[i].outcome != CUTUNE_OUTCOME_CORRECT)
                fprintf(stderr, "constmem: %s: %s\n",
                        cutune_outcome_str(r->evals[i].outcome),
                        r->evals[i].message);
    }
    cutune_session_destroy(s);
    cutune_problem_destroy(p);
}

/* T1 ReferenceArguments: a constant expected exactly, and a binary file
 * with an absolute threshold. WRONG=1 exceeds the threshold and fails
 * validation; WRONG=2 stays within it and passes. */
static void tune_reference(void)
{
    cutune_session *s = NULL;
    cutune_problem *p = NULL;
    const cutune_tune_result *r = tune_fixture("reference.json", 0, 0, &s, &p);
    if (r) {
        CHECK_INT(r->evaluations, 6);
        CHECK_INT(r->failures, 2);
        for (size_t i = 0; i < r->n_evals; i++) {
            /* Configurations are numbered with WRONG varying fastest. */
            size_t wrong = r->evals[i].config_index % 3;
            CHECK_INT(r->evals[i].outcome, wrong == 1
                                               ? CUTUNE_OUTCOME_CORRECTNESS
                                               : CUTUNE_OUTCOME_CORRECT);
            if (wrong == 1)
                CHECK_CONTAINS(r->evals[i].message, "differ");
        }
        CHECK(strcmp(value_of(r->best, r->n_params, "WRONG"), "1") != 0);
    }
    cutune_session_destroy(s);
    cutune_problem_destroy(p);
}

/* A binary cache whose cubins are all damaged (the ELF magic overwritten:
 * a bad disk, or a driver that cannot load what was cached): the tune
 * still measures every configuration, compiling again what does not load
 * (the configurations, the reference, the comparison kernels), and the
 * entries are good again afterwards. */
static void tune_damaged_cache(void)
{
    char dir[] = "/tmp/cutune-gpu-damaged-XXXXXX", bins[64];
    if (!mkdtemp(dir))
        return;
    snprintf(bins, sizeof bins, "%s/binaries", dir);
    cutune_problem *p = NULL;
    CHECK_INT(load_fixture("constmem.json", &p), CUTUNE_OK);
    cutune_session_options o;
    cutune_session_options_init(&o);
    o.strategy = "brute_force";
    o.cache_dir = dir;
    for (int run = 0; run < 2 && p; run++) {
        cutune_session *s = NULL;
        CHECK_INT(cutune_session_create(&o, &s), CUTUNE_OK);
        const cutune_tune_result *r = NULL;
        cutune_status st = cutune_session_tune(s, p, &r);
        CHECK_INT(st, CUTUNE_OK);
        if (st)
            fprintf(stderr, "damaged cache, run %d: %s\n", run,
                    cutune_session_errmsg(s));
        if (r) {
            CHECK_INT(r->evaluations, 3);
            CHECK_INT(r->failures, 0);
        }
        cutune_session_destroy(s);
        /* Three configurations (the default among them) and the
         * comparison kernels. */
        if (run == 0)
            CHECK(damage_cubins(bins) >= 4);
        else
            CHECK(count_cubins(bins) >= 4);
    }
    cutune_problem_destroy(p);
    remove_tree(dir);
}

/* The figures a tune logs (at DEBUG) of its batches and of the
 * configurations it queued to compile ahead; SIZE_MAX until that line was
 * seen. */
typedef struct search_line {
    size_t batches, ahead;
} search_line;

static size_t number_before(const char *message, const char *what)
{
    const char *at = strstr(message, what);
    if (!at)
        return SIZE_MAX;
    while (at > message && at[-1] >= '0' && at[-1] <= '9')
        at--;
    return (size_t)strtoull(at, NULL, 10);
}

static void count_ahead(void *user, cutune_log_level level,
                        const char *message)
{
    search_line *l = user;
    (void)level;
    size_t ahead = number_before(message, " configurations queued to "
                                          "compile ahead");
    if (ahead == SIZE_MAX)
        return;
    l->ahead = ahead;
    l->batches = number_before(message, " batches;");
}

/* On one GPU the default strategy keeps proposals in flight (no batches);
 * on two workers it goes batch by batch and gets what it names ahead
 * compiled beside its batches; one that names nothing (random) gets
 * none. */
static void tune_ahead(void)
{
    long long size = 1 << 20;
    cutune_problem_options po = {
        .problem_size = &size, .n_problem_size = 1, .space_only = 0};
    cutune_problem *p;
    CHECK_INT(cutune_problem_load("vector_add", &po, &p), CUTUNE_OK);
    static const char *strategies[3] = {"default", "default", "random"};
    static const int two[] = {0, 0};
    search_line seen[3];
    for (int k = 0; k < 3; k++) {
        seen[k].batches = seen[k].ahead = SIZE_MAX;
        cutune_session_options o;
        cutune_session_options_init(&o);
        o.strategy = strategies[k];
        o.max_evals = 40;
        o.cache_dir = cache_dir;
        o.devices = k == 1 ? two : NULL;
        o.n_devices = k == 1 ? 2 : 0;
        o.log = count_ahead;
        o.log_user = &seen[k];
        cutune_session *s;
        CHECK_INT(cutune_session_create(&o, &s), CUTUNE_OK);
        const cutune_tune_result *r;
        CHECK_INT(cutune_session_tune(s, p, &r), CUTUNE_OK);
        cutune_session_destroy(s);
    }
    printf("default in flight: %zu batches; default on two workers: %zu "
           "batches, %zu compiled ahead; random: %zu compiled ahead\n",
           seen[0].batches, seen[1].batches, seen[1].ahead, seen[2].ahead);
    CHECK_INT(seen[0].batches, 0);
    CHECK(seen[1].batches != SIZE_MAX && seen[1].batches > 0);
    CHECK(seen[1].ahead != SIZE_MAX && seen[1].ahead > 0);
    CHECK_INT(seen[2].ahead, 0);
    cutune_problem_destroy(p);
}

int main(void)
{
    if (!mkdtemp(cache_dir)) {
        perror("mkdtemp");
        return 1;
    }
    if (tune_vector_add()) {
        remove_tree(cache_dir);
        return check_skip("no CUDA device");
    }
    tune_faulty();
    tune_resume();
    tune_constmem();
    tune_reference();
    tune_damaged_cache();
    tune_ahead();
    remove_tree(cache_dir);
    return check_finish();
}
