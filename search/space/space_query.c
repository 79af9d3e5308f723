/* Lookups on a built search space: its parameters and values, a
 * configuration by index and back, neighbours, random and nearest
 * configurations. */
#include <assert.h>
#include <string.h>

#include "space_internal.h"

size_t cutune__space_param_count(const cutune__space *s)
{
    return s->n_params;
}

const char *cutune__space_param_name(const cutune__space *s, size_t p)
{
    return p < s->n_params ? s->names[p] : NULL;
}

int cutune__space_is_block_param(const cutune__space *s, size_t p)
{
    const char *name = cutune__space_param_name(s, p);
    return name && strncmp(name, "block_size_", 11) == 0;
}

size_t cutune__space_block_edge(const cutune__space *s, size_t from,
                                int largest, uint32_t *config)
{
    int any = 0;
    memcpy(config, cutune__space_config(s, from),
           s->n_params * sizeof *config);
    for (size_t p = 0; p < s->n_params; p++)
        if (cutune__space_is_block_param(s, p)) {
            uint32_t end = largest ? (uint32_t)s->n_values[p] - 1 : 0;
            any |= config[p] != end;
            config[p] = end;
        }
    return any ? cutune__space_nearest(s, config) : CUTUNE__NONE;
}

size_t cutune__space_value_count(const cutune__space *s, size_t p)
{
    return p < s->n_params ? s->n_values[p] : 0;
}

const cutune__value *cutune__space_value(const cutune__space *s, size_t p,
                                         size_t v)
{
    if (p >= s->n_params || v >= s->n_values[p])
        return NULL;
    return &s->values[p][v];
}

size_t cutune__space_find_param(const cutune__space *s, const char *name)
{
    if (!name)
        return CUTUNE__NONE;
    for (size_t p = 0; p < s->n_params; p++) {
        if (strcmp(s->names[p], name) == 0)
            return p;
    }
    return CUTUNE__NONE;
}

double cutune__space_cartesian_size(const cutune__space *s)
{
    return s->cartesian;
}

size_t cutune__space_size(const cutune__space *s)
{
    return s->n_valid;
}

const uint32_t *cutune__space_config(const cutune__space *s, size_t index)
{
    if (index >= s->n_valid)
        return NULL;
    return s->configs + index * s->n_params;
}

/* Lexicographic comparison of stored configuration k with `base` in which
 * parameter `p` is replaced by `v` (p == CUTUNE__NONE: no replacement), so
 * that neighbours are looked up without building them in a buffer. */
static int compare_with(const cutune__space *s, size_t k, const uint32_t *base,
                        size_t p, uint32_t v)
{
    assert(k < s->n_valid);
    const uint32_t *c = s->configs + k * s->n_params;
    for (size_t q = 0; q < s->n_params; q++) {
        uint32_t want = q == p ? v : base[q];
        if (c[q] != want)
            return c[q] < want ? -1 : 1;
    }
    return 0;
}

static int find_with(const cutune__space *s, const uint32_t *base, size_t p,
                     uint32_t v, size_t *index)
{
    size_t lo = 0, hi = s->n_valid;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = compare_with(s, mid, base, p, v);
        if (c == 0) {
            *index = mid;
            return 1;
        }
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return 0;
}

int cutune__space_index_of(const cutune__space *s, const uint32_t *config,
                           size_t *index)
{
    size_t found;
    if (!config && s->n_params)
        return 0;
    if (!find_with(s, config, CUTUNE__NONE, 0, &found))
        return 0;
    if (index)
        *index = found;
    return 1;
}

size_t cutune__space_neighbours(const cutune__space *s, size_t index,
                                cutune__neighbour_kind kind, size_t *out,
                                size_t cap)
{
    size_t count = 0;
    if (index >= s->n_valid)
        return 0;
    const uint32_t *base = s->configs + index * s->n_params;
    for (size_t p = 0; p < s->n_params; p++) {
        size_t nv = s->n_values[p];
        uint32_t cur = base[p];
        for (size_t v = 0; v < nv; v++) {
            if (v == cur)
                continue;
            if (kind == CUTUNE__NEIGHBOUR_ADJACENT && v + 1 != cur &&
                v != (size_t)cur + 1)
                continue;
            size_t found;
            if (!find_with(s, base, p, (uint32_t)v, &found))
                continue;
            if (count < cap && out)
                out[count] = found;
            count++;
        }
    }
    return count;
}

size_t cutune__space_random(const cutune__space *s, gsl_rng *rng)
{
    size_t n = s->n_valid;
    if (n == 0)
        return CUTUNE__NONE;
    unsigned long range = gsl_rng_max(rng) - gsl_rng_min(rng);
    if ((unsigned long)(n - 1) <= range)
        return (size_t)gsl_rng_uniform_int(rng, (unsigned long)n);
    /* Beyond the generator's range uniform_int would fail; the rounding
     * bias of a scaled double is negligible at such sizes. */
    size_t r = (size_t)(gsl_rng_uniform(rng) * (double)n);
    return r < n ? r : n - 1;
}

/* Cost of a configuration relative to the target: differing parameters
 * first, then total index distance. */
typedef struct nearest_cost {
    size_t mismatches;
    uint64_t distance;
} nearest_cost;

static int cost_cmp(nearest_cost a, nearest_cost b)
{
    if (a.mismatches != b.mismatches)
        return a.mismatches < b.mismatches ? -1 : 1;
    if (a.distance != b.distance)
        return a.distance < b.distance ? -1 : 1;
    return 0;
}

typedef struct nearest_search {
    const cutune__space *s;
    const uint32_t *target;
    size_t best;
    nearest_cost best_cost;
} nearest_search;

/* First index in [lo, hi) whose value of parameter p exceeds v; the range
 * shares a prefix, so it is sorted on p. */
static size_t upper_bound(const cutune__space *s, size_t lo, size_t hi,
                          size_t p, uint32_t v)
{
    assert(lo <= hi && hi <= s->n_valid && p < s->n_params);
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->configs[mid * s->n_params + p] <= v)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static size_t lower_bound(const cutune__space *s, size_t lo, size_t hi,
                          size_t p, uint32_t v)
{
    assert(lo <= hi && hi <= s->n_valid && p < s->n_params);
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->configs[mid * s->n_params + p] < v)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Branch and bound over the sorted configurations viewed as a trie: the
 * range [lo, hi) shares the values of parameters before p. Costs only grow
 * with depth, so a subtree is cut when it cannot beat the best found, or
 * can at most tie it at higher indices. The target's own value is tried
 * first, which finds a tight bound early. */
static void nearest_visit(nearest_search *ns, size_t lo, size_t hi, size_t p,
                          nearest_cost cost)
{
    const cutune__space *s = ns->s;
    /* Only non-empty ranges are visited, so a leaf is a configuration. */
    assert(lo < hi && hi <= s->n_valid && p <= s->n_params);
    if (ns->best != CUTUNE__NONE) {
        int c = cost_cmp(cost, ns->best_cost);
        if (c > 0 || (c == 0 && lo > ns->best))
            return;
    }
    if (p == s->n_params) {
        /* Equal cost here means lo < best, by the cut above. */
        ns->best = lo;
        ns->best_cost = cost;
        return;
    }
    uint32_t t = ns->target[p];
    size_t t_lo = lower_bound(s, lo, hi, p, t);
    size_t t_hi = upper_bound(s, t_lo, hi, p, t);
    if (t_lo < t_hi)
        nearest_visit(ns, t_lo, t_hi, p + 1, cost);
    for (size_t g = lo; g < hi;) {
        if (g == t_lo && t_lo < t_hi) {
            g = t_hi;
            continue;
        }
        uint32_t v = s->configs[g * s->n_params + p];
        size_t end = upper_bound(s, g, hi, p, v);
        nearest_cost child = cost;
        child.mismatches++;
        child.distance += v > t ? (uint64_t)(v - t) : (uint64_t)(t - v);
        nearest_visit(ns, g, end, p + 1, child);
        g = end;
    }
}

size_t cutune__space_nearest(const cutune__space *s, const uint32_t *config)
{
    nearest_search ns;
    nearest_cost zero = {0, 0};
    if (s->n_valid == 0 || (!config && s->n_params))
        return CUTUNE__NONE;
    ns.s = s;
    ns.target = config;
    ns.best = CUTUNE__NONE;
    ns.best_cost = zero;
    nearest_visit(&ns, 0, s->n_valid, 0, zero);
    assert(ns.best < s->n_valid);
    return ns.best;
}
