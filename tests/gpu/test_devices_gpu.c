/* Two GPU workers on one GPU (devices {0, 0}), the real path of a tune on
 * several devices end to end:
 * - vector_add, brute force: every configuration measured once, by both
 *   workers between them, and a winner as fast as one worker's (within
 *   10%: the search's times are taken with two workers sharing the GPU,
 *   the final round's on one);
 * - the faulty fixture: a configuration that kills its worker or hangs it
 *   loses only itself, the worker is started again, and the tune ends with
 *   FAULT=0 as on one worker. */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "cutune/cutune.h"
#include "gpu_fixtures.h"
#include "tmpdir.h"

static char cache_dir[] = "/tmp/cutune-devices-gpu-XXXXXX";
static const int two[] = {0, 0};

static cutune_status tune(cutune_problem *p, size_t n_dev, double timeout,
                          cutune_session **s, const cutune_tune_result **r)
{
    cutune_session_options o;
    cutune_session_options_init(&o);
    o.strategy = "brute_force";
    o.cache_dir = cache_dir;
    o.write_cache = 0;
    o.launch_timeout_s = timeout;
    o.devices = n_dev > 1 ? two : NULL;
    o.n_devices = n_dev > 1 ? n_dev : 0;
    *r = NULL;
    cutune_status st = cutune_session_create(&o, s);
    if (st == CUTUNE_OK)
        st = cutune_session_tune(*s, p, r);
    if (st && st != CUTUNE_ERR_NO_DEVICE)
        fprintf(stderr, "tune: %s\n", cutune_session_errmsg(*s));
    return st;
}

/* 1 when there is no GPU. */
static int two_workers_vector_add(void)
{
    long long size = 1 << 24;
    cutune_problem_options po;
    cutune_problem_options_init(&po);
    po.problem_size = &size;
    po.n_problem_size = 1;
    cutune_problem *p = NULL;
    CHECK_INT(cutune_problem_load("vector_add", &po, &p), CUTUNE_OK);
    cutune_session *s1 = NULL, *s2 = NULL;
    const cutune_tune_result *r1, *r2;
    cutune_status st = tune(p, 1, 0, &s1, &r1);
    if (st == CUTUNE_ERR_NO_DEVICE) {
        cutune_session_destroy(s1);
        cutune_problem_destroy(p);
        return 1;
    }
    CHECK_INT(st, CUTUNE_OK);
    CHECK_INT(tune(p, 2, 0, &s2, &r2), CUTUNE_OK);
    if (r1 && r2) {
        size_t n = cutune_problem_space_size(p);
        CHECK_INT(r1->n_evals, n);
        CHECK_INT(r2->n_evals, n);
        CHECK_INT(r2->workers, 2);
        size_t per[2] = {0, 0}, repeats = 0;
        unsigned char *seen = calloc(n, 1);
        for (size_t i = 0; seen && i < r2->n_evals; i++) {
            per[r2->evals[i].worker < 2 ? r2->evals[i].worker : 0]++;
            if (r2->evals[i].config_index < n)
                repeats += seen[r2->evals[i].config_index]++ != 0;
        }
        free(seen);
        CHECK_INT(repeats, 0);
        CHECK(per[0] > 0 && per[1] > 0);
        CHECK(r2->best_ms <= 1.10 * r1->best_ms);
        CHECK(r1->best_ms <= 1.10 * r2->best_ms);
        printf("vector_add 2^24, brute force over %zu: one worker %.2f s, "
               "best %.4f ms (block %s, unroll %s); two workers %.2f s "
               "(%zu + %zu measured), best %.4f ms (block %s, unroll %s)\n",
               n, r1->wall_s, r1->best_ms,
               value_of(r1->best, r1->n_params, "block_size_x"),
               value_of(r1->best, r1->n_params, "UNROLL"), r2->wall_s, per[0],
               per[1], r2->best_ms,
               value_of(r2->best, r2->n_params, "block_size_x"),
               value_of(r2->best, r2->n_params, "UNROLL"));
    }
    cutune_session_destroy(s1);
    cutune_session_destroy(s2);
    cutune_problem_destroy(p);
    return 0;
}

static void two_workers_faulty(void)
{
    cutune_problem *p = NULL;
    CHECK_INT(load_fixture("faulty.json", &p), CUTUNE_OK);
    cutune_session *s = NULL;
    const cutune_tune_result *r;
    CHECK_INT(tune(p, 2, 1.0, &s, &r), CUTUNE_OK);
    if (r) {
        CHECK_INT(r->evaluations, 12);
        const cutune_outcome *expected = faulty_expected;
        for (size_t i = 0; i < r->n_evals; i++) {
            size_t fault = r->evals[i].config_index % 6;
            CHECK_INT(r->evals[i].outcome, expected[fault]);
            if (r->evals[i].outcome != expected[fault])
                fprintf(stderr, "FAULT=%zu on worker %zu: %s: %s\n", fault,
                        r->evals[i].worker,
                        cutune_outcome_str(r->evals[i].outcome),
                        r->evals[i].message);
        }
        CHECK_INT(r->failures, 10);
        CHECK_STR(value_of(r->best, r->n_params, "FAULT"), "0");
        /* Out-of-bounds writes and hangs take their worker down. */
        CHECK(r->restarts >= 1);
        printf("faulty fixture on two workers: %zu restarts, %.2f s\n",
               r->restarts, r->wall_s);
    }
    cutune_session_destroy(s);
    cutune_problem_destroy(p);
}

int main(void)
{
    if (!mkdtemp(cache_dir))
        return check_skip("no scratch folder");
    if (two_workers_vector_add()) {
        remove_tree(cache_dir);
        return check_skip("no CUDA device");
    }
    two_workers_faulty();
    remove_tree(cache_dir);
    return check_finish();
}
