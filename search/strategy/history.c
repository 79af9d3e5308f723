/* Proposal bookkeeping shared by the strategies; see history.h. */
#include "history.h"

#include <assert.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int cutune__history_init(cutune__history *h, size_t n)
{
    memset(h, 0, sizeof *h);
    h->n = n;
    h->best = CUTUNE__NONE;
    h->best_objective = INFINITY;
    h->taken = calloc(n ? n : 1, 1);
    h->done = calloc(n ? n : 1, 1);
    h->objective = malloc((n ? n : 1) * sizeof *h->objective);
    h->tree = malloc((n + 1) * sizeof *h->tree);
    if (!h->taken || !h->done || !h->objective || !h->tree) {
        cutune__history_free(h);
        return -1;
    }
    /* Every configuration starts untaken: node i covers the lowest set bit
     * of i. */
    h->tree[0] = 0;
    for (size_t i = 1; i <= n; i++)
        h->tree[i] = i & (~i + 1);
    return 0;
}

void cutune__history_free(cutune__history *h)
{
    free(h->tree);
    free(h->objective);
    free(h->done);
    free(h->taken);
    memset(h, 0, sizeof *h);
}

void cutune__history_take(cutune__history *h, size_t index)
{
    if (index >= h->n || h->taken[index])
        return;
    h->taken[index] = 1;
    h->n_taken++;
    assert(h->n_taken <= h->n);
    for (size_t i = index + 1; i <= h->n; i += i & (~i + 1))
        h->tree[i]--;
}

void cutune__history_release(cutune__history *h, size_t index)
{
    if (index >= h->n || !h->taken[index] || h->done[index])
        return;
    assert(h->n_taken > 0);
    h->taken[index] = 0;
    h->n_taken--;
    for (size_t i = index + 1; i <= h->n; i += i & (~i + 1))
        h->tree[i]++;
}

void cutune__history_report(cutune__history *h, size_t index, double objective)
{
    if (index >= h->n)
        return;
    if (isnan(objective))
        objective = INFINITY;
    cutune__history_take(h, index);
    if (!h->done[index]) {
        h->done[index] = 1;
        h->n_done++;
    }
    /* Reported implies taken, so the done ones are among the taken. */
    assert(h->taken[index] && h->n_done <= h->n_taken);
    h->objective[index] = objective;
    if (isfinite(objective) &&
        (h->best == CUTUNE__NONE || objective < h->best_objective ||
         (objective == h->best_objective && index < h->best))) {
        h->best = index;
        h->best_objective = objective;
    }
}

size_t cutune__random_below(gsl_rng *rng, size_t n)
{
    unsigned long range = gsl_rng_max(rng) - gsl_rng_min(rng);
    if (n <= 1)
        return 0;
    if ((unsigned long)(n - 1) <= range)
        return (size_t)gsl_rng_uniform_int(rng, (unsigned long)n);
    size_t r = (size_t)(gsl_rng_uniform(rng) * (double)n);
    return r < n ? r : n - 1;
}

size_t cutune__history_random_untaken(const cutune__history *h, gsl_rng *rng)
{
    size_t left = h->n - h->n_taken;
    if (left == 0)
        return CUTUNE__NONE;
    return cutune__history_untaken_at(h, cutune__random_below(rng, left));
}

size_t cutune__history_untaken_at(const cutune__history *h, size_t k)
{
    size_t pos = 0, step = 1;
    if (k >= h->n - h->n_taken)
        return CUTUNE__NONE;
    while (step <= h->n / 2)
        step <<= 1;
    for (; step; step >>= 1) {
        if (pos + step <= h->n && h->tree[pos + step] <= k) {
            pos += step;
            k -= h->tree[pos];
        }
    }
    assert(pos < h->n && !h->taken[pos]);
    return pos;
}

size_t cutune__history_untaken_near(const cutune__history *h,
                                    const cutune__space *space,
                                    uint32_t *config, gsl_rng *rng, int tries)
{
    size_t np = cutune__space_param_count(space);
    for (int t = 0; t <= tries; t++) {
        if (t > 0) {
            /* Moving a single-valued parameter would change nothing, so
             * such picks are redrawn a few times. */
            for (int pick = 0; pick < 8 && np > 0; pick++) {
                size_t p = cutune__random_below(rng, np);
                size_t nv = cutune__space_value_count(space, p);
                if (nv < 2)
                    continue;
                size_t v = cutune__random_below(rng, nv - 1);
                if (v >= config[p])
                    v++;
                config[p] = (uint32_t)v;
                break;
            }
        }
        size_t idx = cutune__space_nearest(space, config);
        if (idx == CUTUNE__NONE)
            return CUTUNE__NONE;
        if (!cutune__history_is_taken(h, idx))
            return idx;
    }
    return CUTUNE__NONE;
}
