/* The start of a search (search/strategy/seed.h), the rule tune and simulate
 * share: the default configuration without an occupancy answer; with one, the
 * default at the block size nearest to it (block_size_x, threads in y as
 * the default has them), or, where threads follow from other parameters,
 * the configuration with the nearest threads per block and the fewest
 * changes from the default. No GPU needed. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "../check.h"
#include "strategy/seed.h"

static cutune__value v_bx[6], v_by[3], v_u[3];

/* block_size_x 32..1024 (powers of two) x block_size_y 1, 2, 4 x u 1..3,
 * at most 1024 threads. */
static cutune__space *make_block_space(const char *bx_name)
{
    for (int i = 0; i < 6; i++)
        v_bx[i] = (cutune__value){.type = CUTUNE__V_INT, .u.i = 32LL << i};
    for (int i = 0; i < 3; i++) {
        v_by[i] = (cutune__value){.type = CUTUNE__V_INT, .u.i = 1LL << i};
        v_u[i] = (cutune__value){.type = CUTUNE__V_INT, .u.i = i + 1};
    }
    cutune__param params[] = {
        {bx_name, v_bx, 6}, {"block_size_y", v_by, 3}, {"u", v_u, 3}};
    char cond[128];
    snprintf(cond, sizeof cond, "%s * block_size_y <= 1024", bx_name);
    cutune__expr *c = cutune__expr_parse(cond, 0, NULL);
    if (!c)
        return NULL;
    const cutune__expr *conds[] = {c};
    cutune__space *s =
        cutune__space_create(params, 3, conds, 1, NULL, 0, NULL);
    cutune__expr_free(c);
    return s;
}

static size_t index_of(const cutune__space *s, uint32_t bx, uint32_t by,
                       uint32_t u)
{
    uint32_t c[3] = {bx, by, u};
    size_t i = SIZE_MAX;
    CHECK(cutune__space_index_of(s, c, &i));
    return i;
}

static double threads_of(void *ctx, size_t index)
{
    const uint32_t *c = cutune__space_config(ctx, index);
    return (double)(v_bx[c[0]].u.i * v_by[c[1]].u.i);
}

static void test_block_size_x(void)
{
    cutune__space *s = make_block_space("block_size_x");
    CHECK(s != NULL);
    if (!s)
        return;
    cutune__seed_source src;
    /* The default is 64 x 2, u = 3. */
    size_t def = index_of(s, 1, 1, 2);
    CHECK_INT(cutune__seed_start(s, def, 0, NULL, NULL, &src), def);
    CHECK_INT(src, CUTUNE__SEED_DEFAULT);
    CHECK_STR(cutune__seed_source_name(src), "default");
    /* 256 threads with y = 2: x = 128. */
    CHECK_INT(cutune__seed_start(s, def, 256, NULL, NULL, &src),
              index_of(s, 2, 1, 2));
    CHECK_INT(src, CUTUNE__SEED_OCCUPANCY);
    CHECK_STR(cutune__seed_source_name(src), "occupancy");
    /* 2048 threads is past the largest valid block with y = 2 (512 x 2):
     * x = 1024 is nearest and invalid, so the nearest valid
     * configuration. */
    size_t big = cutune__seed_start(s, def, 2048, NULL, NULL, &src);
    const uint32_t *c = cutune__space_config(s, big);
    CHECK(v_bx[c[0]].u.i * v_by[c[1]].u.i <= 1024);
    CHECK_INT(c[2], 2);
    /* No default, no start. */
    CHECK_INT(cutune__seed_start(s, SIZE_MAX, 256, NULL, NULL, &src),
              SIZE_MAX);
    CHECK_INT(src, CUTUNE__SEED_NONE);
    cutune__space_free(s);
}

/* Threads from other parameters (no block_size_x): the scan. */
static void test_scan(void)
{
    cutune__space *s = make_block_space("tx");
    CHECK(s != NULL);
    if (!s)
        return;
    cutune__seed_source src;
    size_t def = index_of(s, 0, 0, 1);
    /* 128 threads: 128 x 1, 64 x 2 and 32 x 4 (u = 2); 128 x 1 and 32 x 4
     * differ from the default (32 x 1, u = 2) in one parameter, 64 x 2 in
     * two: the lower index of the first two. */
    size_t a = index_of(s, 2, 0, 1), b = index_of(s, 0, 2, 1);
    CHECK_INT(cutune__seed_start(s, def, 128, threads_of, s, &src),
              a < b ? a : b);
    CHECK_INT(src, CUTUNE__SEED_OCCUPANCY);
    /* Without a way to count threads, the default. */
    CHECK_INT(cutune__seed_start(s, def, 128, NULL, NULL, &src), def);
    cutune__space_free(s);
}

int main(void)
{
    test_block_size_x();
    test_scan();
    return check_finish();
}
