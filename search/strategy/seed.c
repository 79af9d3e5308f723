/* The start of a search (seed.h). */
#include "seed.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

const char *cutune__seed_source_name(cutune__seed_source source)
{
    switch (source) {
    case CUTUNE__SEED_OCCUPANCY: return "occupancy";
    case CUTUNE__SEED_DEFAULT: return "default";
    default: return "none";
    }
}

static long long int_of(const cutune__space *s, size_t p, uint32_t v)
{
    const cutune__value *x = cutune__space_value(s, p, v);
    return x && x->type == CUTUNE__V_INT ? x->u.i : 0;
}

/* Threads follow from other parameters: the configuration with the
 * threads per block nearest to the suggestion, then the fewest changes
 * from the default, then the lowest index. */
static size_t scan(const cutune__space *s, size_t def, int block_size,
                   cutune__threads_fn threads, void *ctx)
{
    size_t n = cutune__space_size(s), np = cutune__space_param_count(s);
    if (!threads || n > CUTUNE__SEED_SCAN_LIMIT)
        return def;
    const uint32_t *dcfg = cutune__space_config(s, def);
    size_t best = def, best_diff = SIZE_MAX;
    double best_d = INFINITY;
    for (size_t i = 0; i < n; i++) {
        double t = threads(ctx, i);
        if (!(t > 0))
            continue;
        double d = fabs(log(t / (double)block_size));
        const uint32_t *cfg = cutune__space_config(s, i);
        size_t diff = 0;
        for (size_t k = 0; k < np; k++)
            diff += cfg[k] != dcfg[k];
        /* Block sizes within 1% count as equal. */
        if (d < best_d - 0.01 || (d <= best_d + 0.01 && diff < best_diff)) {
            best = i;
            best_d = d;
            best_diff = diff;
        }
    }
    return best;
}

/* The default with block_size_x nearest to the suggestion; threads in y
 * and z stay as the default has them. */
static size_t nearest_block(const cutune__space *s, size_t def, size_t bx,
                            int block_size)
{
    size_t np = cutune__space_param_count(s);
    uint32_t *cfg = malloc(np * sizeof *cfg);
    if (!cfg)
        return def;
    memcpy(cfg, cutune__space_config(s, def), np * sizeof *cfg);
    long long others = 1;
    static const char *const yz[] = {"block_size_y", "block_size_z"};
    for (int k = 0; k < 2; k++) {
        size_t p = cutune__space_find_param(s, yz[k]);
        long long v = p == CUTUNE__NONE ? 0 : int_of(s, p, cfg[p]);
        if (v > 0)
            others *= v;
    }
    double want = (double)block_size / (double)others, best = INFINITY;
    for (size_t k = 0; k < cutune__space_value_count(s, bx); k++) {
        long long v = int_of(s, bx, (uint32_t)k);
        double d = v > 0 ? fabs(log((double)v / want)) : INFINITY;
        if (d < best) {
            best = d;
            cfg[bx] = (uint32_t)k;
        }
    }
    size_t idx = cutune__space_nearest(s, cfg);
    free(cfg);
    return idx == CUTUNE__NONE ? def : idx;
}

size_t cutune__seed_start(const cutune__space *s, size_t def, int block_size,
                          cutune__threads_fn threads, void *ctx,
                          cutune__seed_source *source)
{
    cutune__seed_source src = CUTUNE__SEED_NONE;
    size_t idx = CUTUNE__NONE;
    if (s && def < cutune__space_size(s)) {
        src = CUTUNE__SEED_DEFAULT;
        idx = def;
        if (block_size > 0) {
            size_t bx = cutune__space_find_param(s, "block_size_x");
            idx = bx == CUTUNE__NONE ? scan(s, def, block_size, threads, ctx)
                                     : nearest_block(s, def, bx, block_size);
            src = CUTUNE__SEED_OCCUPANCY;
        }
    }
    if (source)
        *source = src;
    return idx;
}
