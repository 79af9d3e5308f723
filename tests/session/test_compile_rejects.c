/* Grouping NVRTC's rejections (compile_rejects.c) on made-up logs of the
 * space of tests/cli/fixtures/rejects.json: block_size_x [64, 128],
 * tile_size_x [1, 2, 4, 8], use_shmem [0, 1], unroll [1, 2], VEC [1]. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../check.h"
#include "compile_rejects.h"
#include "problem.h"

/* The space index of block, tile, shmem and unroll given as value
 * indices. */
static size_t config_of(const cutune_problem *p, uint32_t b, uint32_t t,
                        uint32_t s, uint32_t u)
{
    const uint32_t v[5] = {b, t, s, u, 0};
    size_t index = SIZE_MAX;
    CHECK(cutune__space_index_of(p->space, v, &index));
    return index;
}

static void check_shared(const cutune_rejected_group *g, const char *want)
{
    char got[256] = "";
    for (size_t k = 0; k < g->n_shared; k++)
        snprintf(got + strlen(got), sizeof got - strlen(got), "%s%s=%s",
                 k ? " " : "", g->shared[k].name, g->shared[k].value);
    CHECK_STR(got, want);
}

static void grouping(cutune_problem *p)
{
    /* Too_big<unroll> in four configurations with tile 8 and shmem 1, a
     * line number (2) and a count (1) that equal values of some of them,
     * and one configuration rejected for another reason. */
    const size_t configs[] = {
        config_of(p, 0, 3, 1, 0), config_of(p, 1, 3, 1, 1),
        config_of(p, 0, 1, 0, 1), config_of(p, 1, 3, 1, 0),
        config_of(p, 0, 3, 1, 1)};
    const char *logs[] = {
        "k(2): error: incomplete type \"Too_big<1>\"\n1 error detected\n",
        "k(2): error: incomplete type \"Too_big<2>\"\n1 error detected\n",
        "k(7): error: identifier \"x\" is undefined\n1 error detected\n",
        "k(2): error: incomplete type \"Too_big<1>\"\n1 error detected\n",
        "k(2): error: incomplete type \"Too_big<2>\"\n1 error detected\n"};
    cutune__rejects *r = cutune__rejects_group(p, configs, logs, 5);
    CHECK(r != NULL);
    CHECK_INT(cutune__rejects_count(r), 2);
    const cutune_rejected_group *g = cutune__rejects_get(r, 0);
    CHECK(g != NULL);
    if (g) {
        CHECK_INT(g->count, 4);
        CHECK_INT(g->first, configs[0]);
        CHECK_STR(g->log, logs[0]);
        /* block_size_x and unroll differ; VEC has one value. */
        check_shared(g, "tile_size_x=8 use_shmem=1");
    }
    g = cutune__rejects_get(r, 1);
    CHECK(g != NULL);
    if (g) {
        CHECK_INT(g->count, 1);
        check_shared(g, "block_size_x=64 tile_size_x=2 use_shmem=0 unroll=2");
    }
    CHECK(cutune__rejects_get(r, 2) == NULL);
    cutune__rejects_free(r);

    /* A word that is a value of the configuration's in one log and other
     * text in the other: not alike. */
    const size_t two[] = {config_of(p, 0, 0, 0, 0), config_of(p, 0, 1, 0, 1)};
    const char *differ[] = {"error: tile 1 too small", "error: tile 1 too "
                                                       "small"};
    r = cutune__rejects_group(p, two, differ, 2);
    CHECK_INT(cutune__rejects_count(r), 2);
    cutune__rejects_free(r);
    r = cutune__rejects_group(p, NULL, NULL, 0);
    CHECK_INT(cutune__rejects_count(r), 0);
    cutune__rejects_free(r);
}

int main(void)
{
    const char *src = getenv("CUTUNE_SOURCE_DIR");
    char path[4096];
    snprintf(path, sizeof path, "%s/tests/cli/fixtures/rejects.json",
             src ? src : ".");
    cutune_problem *p;
    CHECK_INT(cutune_problem_load(path, NULL, &p), CUTUNE_OK);
    if (p && cutune_problem_space_size(p) == 32)
        grouping(p);
    cutune_problem_destroy(p);
    return check_finish();
}
