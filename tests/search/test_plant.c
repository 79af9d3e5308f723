/* Planted optima (search/replay/plant.h) and the default strategy on them: the
 * two failures issue 18 found on GPUs the strategy had never seen, an optimum
 * alone at the edge of the space (largest block) and a small basin far
 * from the first one, planted in a launch-shaped space whose own optimum
 * sits in the middle. The default strategy must find each within 100
 * evaluations in a clear majority of seeds. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_errno.h>

#include "../check.h"
#include "replay/plant.h"
#include "replay/replay.h"
#include "strategy/strategy.h"

#define SEEDS  40
#define BUDGET 100

static cutune__value v_bx[7], v_by[6], v_tile[4], v_unroll[3];

/* block_size_x 16..1024 x block_size_y 1..32 (powers of two, at most 1024
 * threads) x tile_x, tile_y 1..8 x unroll 1, 2, 4: 1,296 configurations. */
static cutune__space *make_launch_space(void)
{
    for (int i = 0; i < 7; i++)
        v_bx[i] = (cutune__value){.type = CUTUNE__V_INT, .u.i = 16LL << i};
    for (int i = 0; i < 6; i++)
        v_by[i] = (cutune__value){.type = CUTUNE__V_INT, .u.i = 1LL << i};
    for (int i = 0; i < 4; i++)
        v_tile[i] = (cutune__value){.type = CUTUNE__V_INT, .u.i = 1LL << i};
    for (int i = 0; i < 3; i++)
        v_unroll[i] = (cutune__value){.type = CUTUNE__V_INT, .u.i = 1LL << i};
    cutune__param params[] = {{"block_size_x", v_bx, 7},
                              {"block_size_y", v_by, 6},
                              {"tile_x", v_tile, 4},
                              {"tile_y", v_tile, 4},
                              {"unroll", v_unroll, 3}};
    cutune__expr *cond =
        cutune__expr_parse("block_size_x * block_size_y <= 1024", 0, NULL);
    if (!cond)
        return NULL;
    const cutune__expr *conds[] = {cond};
    cutune__space *s =
        cutune__space_create(params, 5, conds, 1, NULL, 0, NULL);
    cutune__expr_free(cond);
    return s;
}

/* A bowl in the value indices, lowest at 128 x 4 threads, tiles 2 x 2,
 * unroll 2: each step away costs a few per cent, more further out. */
static double *bowl(const cutune__space *s)
{
    static const double centre[] = {3, 2, 1, 1, 1};
    size_t n = cutune__space_size(s);
    double *t = malloc(n * sizeof *t);
    for (size_t i = 0; t && i < n; i++) {
        const uint32_t *c = cutune__space_config(s, i);
        double d2 = 0;
        for (size_t p = 0; p < 5; p++)
            d2 += ((double)c[p] - centre[p]) * ((double)c[p] - centre[p]);
        t[i] = 1.0 + 0.04 * d2 + 0.002 * (double)(i % 7);
    }
    return t;
}

/* Seeds out of SEEDS in which `type` (with `params`) found the planted
 * optimum `at` within BUDGET evaluations. */
static size_t found_in(const cutune__strategy_type *type, const void *params,
                       const cutune__space *s, const double *record, size_t at)
{
    size_t found = 0;
    for (uint64_t seed = 1; seed <= SEEDS; seed++) {
        cutune__replay_options o = {.max_evals = BUDGET,
                                    .max_seconds = 0,
                                    .batch = 1,
                                    .seed = seed,
                                    .start = SIZE_MAX,
                                    .params = params,
                                    .try_cost = NULL};
        cutune__replay_result r;
        CHECK_INT(cutune__replay_run(type, s, record, NULL, &o, &r, NULL, 0),
                  0);
        found += r.search.best == at;
    }
    return found;
}

static void test_edge(const cutune__space *s, const double *t)
{
    size_t n = cutune__space_size(s), opt;
    double *e = malloc(n * sizeof *e);
    double o = cutune__replay_optimum(t, n, &opt);
    size_t at = cutune__plant_edge(s, t, e);
    CHECK(at != SIZE_MAX && at != opt);
    if (at == SIZE_MAX) {
        free(e);
        return;
    }
    /* The recorded optimum with the largest block that fits, 5% faster
     * than the recorded optimum and the new optimum, neighbours unchanged. */
    const uint32_t *c = cutune__space_config(s, at);
    const uint32_t *co = cutune__space_config(s, opt);
    CHECK(c[2] == co[2] && c[3] == co[3] && c[4] == co[4]);
    CHECK_INT(v_bx[c[0]].u.i * v_by[c[1]].u.i, 1024);
    CHECK_NEAR(e[at], o / PLANT_EDGE_GAIN, 1e-12);
    size_t changed = 0;
    for (size_t i = 0; i < n; i++)
        changed += e[i] != t[i];
    CHECK_INT(changed, 1);
    size_t dflt = found_in(cutune__strategy_default, NULL, s, e, at);
    size_t rnd = found_in(cutune__strategy_random, NULL, s, e, at);
    printf("edge: default %zu of %d seeds, random %zu\n", dflt, SEEDS, rnd);
    CHECK(rnd * 4 < SEEDS);
    CHECK(dflt * 4 >= SEEDS * 3);
    free(e);
}

static void test_basin(const cutune__space *s, const double *t)
{
    size_t n = cutune__space_size(s), opt;
    double *b = malloc(n * sizeof *b);
    double o = cutune__replay_optimum(t, n, &opt);
    size_t at = cutune__plant_basin(s, t, b);
    CHECK(at != SIZE_MAX);
    if (at == SIZE_MAX) {
        free(b);
        return;
    }
    /* Far: every parameter differs from the recorded optimum. */
    const uint32_t *c = cutune__space_config(s, at);
    const uint32_t *co = cutune__space_config(s, opt);
    for (size_t p = 0; p < 5; p++)
        CHECK(c[p] != co[p]);
    /* Four configurations at least 13% faster than the recorded optimum
     * (17% less up to 3%), the centre fastest; nothing else is. */
    size_t fast = 0, planted;
    CHECK_NEAR(cutune__replay_optimum(b, n, &planted), o / PLANT_BASIN_GAIN,
               1e-12);
    CHECK_INT(planted, at);
    for (size_t i = 0; i < n; i++)
        fast += b[i] * 1.13 <= o;
    CHECK_INT(fast, 4);
    size_t dflt = found_in(cutune__strategy_default, NULL, s, b, at);
    size_t rnd = found_in(cutune__strategy_random, NULL, s, b, at);
    printf("basin: default %zu of %d seeds, random %zu\n", dflt, SEEDS, rnd);
    /* Not found by luck: random search rarely gets there. */
    CHECK(rnd * 4 < SEEDS);
    CHECK(dflt * 4 >= SEEDS * 3);
    free(b);
}

/* A record with no correct configuration has nothing to plant. */
static void test_nothing_to_plant(const cutune__space *s)
{
    size_t n = cutune__space_size(s);
    double *t = malloc(n * sizeof *t), *out = malloc(n * sizeof *out);
    for (size_t i = 0; i < n; i++)
        t[i] = INFINITY;
    CHECK_INT(cutune__plant_edge(s, t, out), SIZE_MAX);
    CHECK_INT(cutune__plant_basin(s, t, out), SIZE_MAX);
    free(out);
    free(t);
}

int main(void)
{
    gsl_set_error_handler_off();
    cutune__space *s = make_launch_space();
    CHECK(s != NULL);
    if (!s)
        return check_finish();
    CHECK_INT(cutune__space_size(s), 1296);
    double *t = bowl(s);
    CHECK(t != NULL);
    if (t) {
        test_edge(s, t);
        test_basin(s, t);
    }
    test_nothing_to_plant(s);
    free(t);
    cutune__space_free(s);
    return check_finish();
}
