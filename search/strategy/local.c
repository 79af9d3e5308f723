/* "local": hill climbing from the occupancy-seeded start.
 *
 * Launch parameters usually act smoothly (one more step of block size or
 * unroll changes runtime a little), so the walk moves one parameter one
 * step at a time and takes the best improvement. At a local minimum it
 * looks once at every other value of each parameter, since some parameters
 * (on/off switches, tile shapes) are not ordered in a useful way. After
 * that it restarts, alternating between a small jump away from the best so
 * far (good configurations tend to cluster) and a uniformly random unseen
 * configuration (so that a misleading basin cannot hold the search).
 *
 * It never proposes a configuration it has seen, and stops only when the
 * whole space has been evaluated.
 */
#include "strategy.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_randist.h>

/* Attempts at a perturbation of the best that lands on an unseen
 * configuration before falling back to a uniform one. */
#define PERTURB_TRIES 8

typedef struct local_state {
    const cutune__space *space;
    gsl_rng *rng;
    size_t n;
    size_t n_params;
    size_t start;

    unsigned char *seen; /* n */
    double *objective;   /* n; valid where seen */
    /* Fenwick tree over "not yet seen" (1-based, n + 1 entries), so that a
     * uniformly random unseen configuration costs O(log n) at any fill. */
    size_t *unseen_tree;
    size_t n_seen;
    size_t best; /* CUTUNE__NONE until something finite is seen */
    double best_objective;

    int started;
    size_t current;
    cutune__neighbour_kind kind;
    size_t *nbr; /* neighbours of current, in random order */
    size_t nbr_cap;
    size_t nbr_count;
    size_t nbr_next; /* next one to consider proposing */
    int nbr_valid;   /* nbr holds current's neighbours of `kind` */

    size_t *varying; /* parameters with more than one value */
    size_t n_varying;
    size_t *chosen;    /* scratch for picking parameters to perturb */
    uint32_t *scratch; /* n_params: the perturbed configuration */
    int perturb_next;  /* restart alternation */
} local_state;

static void local_destroy(void *state)
{
    local_state *st = state;
    free(st->scratch);
    free(st->chosen);
    free(st->varying);
    free(st->nbr);
    free(st->unseen_tree);
    free(st->objective);
    free(st->seen);
    memset(st, 0, sizeof *st);
}

static int local_init(void *state, const cutune__strategy_ctx *ctx)
{
    local_state *st = state;
    const cutune__space *s = ctx->space;
    memset(st, 0, sizeof *st);
    st->space = s;
    st->rng = ctx->rng;
    st->n = cutune__space_size(s);
    st->n_params = cutune__space_param_count(s);
    st->start = ctx->start < st->n ? ctx->start : CUTUNE__NONE;
    st->best = CUTUNE__NONE;
    st->best_objective = INFINITY;
    st->kind = CUTUNE__NEIGHBOUR_ADJACENT;
    st->perturb_next = 1;

    /* The ANY neighbourhood is the larger: every other value of each
     * parameter. */
    for (size_t p = 0; p < st->n_params; p++) {
        size_t nv = cutune__space_value_count(s, p);
        if (nv > 1)
            st->nbr_cap += nv - 1;
    }
    st->seen = calloc(st->n ? st->n : 1, sizeof *st->seen);
    st->objective = calloc(st->n ? st->n : 1, sizeof *st->objective);
    st->unseen_tree = calloc(st->n + 1, sizeof *st->unseen_tree);
    st->nbr = malloc((st->nbr_cap ? st->nbr_cap : 1) * sizeof *st->nbr);
    st->varying =
        malloc((st->n_params ? st->n_params : 1) * sizeof *st->varying);
    st->chosen =
        malloc((st->n_params ? st->n_params : 1) * sizeof *st->chosen);
    st->scratch =
        malloc((st->n_params ? st->n_params : 1) * sizeof *st->scratch);
    if (!st->seen || !st->objective || !st->unseen_tree || !st->nbr ||
        !st->varying || !st->chosen || !st->scratch) {
        local_destroy(st);
        return -1;
    }
    /* Every entry starts unseen: node i covers the lowest set bit of i. */
    for (size_t i = 1; i <= st->n; i++)
        st->unseen_tree[i] = i & (~i + 1);
    for (size_t p = 0; p < st->n_params; p++) {
        if (cutune__space_value_count(s, p) > 1)
            st->varying[st->n_varying++] = p;
    }
    return 0;
}

static void mark_seen(local_state *st, size_t index)
{
    for (size_t i = index + 1; i <= st->n; i += i & (~i + 1))
        st->unseen_tree[i]--;
}

/* The k-th (0-based) unseen configuration in index order; k < n - n_seen. */
static size_t kth_unseen(const local_state *st, size_t k)
{
    size_t pos = 0, step = 1;
    while (step <= st->n / 2)
        step <<= 1;
    for (; step; step >>= 1) {
        if (pos + step <= st->n && st->unseen_tree[pos + step] <= k) {
            pos += step;
            k -= st->unseen_tree[pos];
        }
    }
    return pos;
}

static size_t random_below(gsl_rng *rng, size_t n)
{
    unsigned long range = gsl_rng_max(rng) - gsl_rng_min(rng);
    if ((unsigned long)(n - 1) <= range)
        return (size_t)gsl_rng_uniform_int(rng, (unsigned long)n);
    size_t r = (size_t)(gsl_rng_uniform(rng) * (double)n);
    return r < n ? r : n - 1;
}

static size_t random_unseen(local_state *st)
{
    return kth_unseen(st, random_below(st->rng, st->n - st->n_seen));
}

/* A configuration near the best: two or three parameters changed at
 * random, snapped to the nearest valid one. CUTUNE__NONE when no attempt
 * landed on an unseen configuration. */
static size_t perturb_best(local_state *st)
{
    const cutune__space *s = st->space;
    if (st->best == CUTUNE__NONE || st->n_varying == 0)
        return CUTUNE__NONE;
    for (int t = 0; t < PERTURB_TRIES; t++) {
        size_t m = 2 + random_below(st->rng, 2);
        if (m > st->n_varying)
            m = st->n_varying;
        memcpy(st->scratch, cutune__space_config(s, st->best),
               st->n_params * sizeof *st->scratch);
        gsl_ran_choose(st->rng, st->chosen, m, st->varying, st->n_varying,
                       sizeof *st->chosen);
        for (size_t i = 0; i < m; i++) {
            size_t p = st->chosen[i];
            size_t nv = cutune__space_value_count(s, p);
            size_t v = random_below(st->rng, nv - 1);
            /* Drawn from the other nv - 1 values. */
            if (v >= st->scratch[p])
                v++;
            st->scratch[p] = (uint32_t)v;
        }
        size_t idx = cutune__space_nearest(s, st->scratch);
        if (idx != CUTUNE__NONE && !st->seen[idx])
            return idx;
    }
    return CUTUNE__NONE;
}

static size_t restart_point(local_state *st)
{
    size_t idx = CUTUNE__NONE;
    if (st->perturb_next)
        idx = perturb_best(st);
    st->perturb_next = !st->perturb_next;
    if (idx == CUTUNE__NONE)
        idx = random_unseen(st);
    return idx;
}

/* The best evaluated neighbour strictly better than current (ties to the
 * lowest index), or CUTUNE__NONE. Strictness rules out cycling on plateaus. */
static size_t best_improving(const local_state *st)
{
    size_t b = CUTUNE__NONE;
    double bobj = st->objective[st->current];
    for (size_t i = 0; i < st->nbr_count; i++) {
        size_t idx = st->nbr[i];
        if (!st->seen[idx])
            continue;
        double o = st->objective[idx];
        if (o < bobj || (b != CUTUNE__NONE && o == bobj && idx < b)) {
            b = idx;
            bobj = o;
        }
    }
    return b;
}

static void load_neighbours(local_state *st)
{
    st->nbr_count = cutune__space_neighbours(st->space, st->current, st->kind,
                                             st->nbr, st->nbr_cap);
    if (st->nbr_count > st->nbr_cap)
        st->nbr_count = st->nbr_cap;
    /* A random order, so that a batch smaller than the neighbourhood does
     * not always favour the first parameters. */
    if (st->nbr_count > 1)
        gsl_ran_shuffle(st->rng, st->nbr, st->nbr_count, sizeof *st->nbr);
    st->nbr_next = 0;
    st->nbr_valid = 1;
}

static void move_to(local_state *st, size_t index)
{
    st->current = index;
    st->kind = CUTUNE__NEIGHBOUR_ADJACENT;
    st->nbr_valid = 0;
}

static size_t local_next(void *state, size_t *out, size_t cap)
{
    local_state *st = state;
    if (st->n_seen >= st->n)
        return 0;
    if (!st->started) {
        st->started = 1;
        move_to(st, st->start != CUTUNE__NONE ? st->start : random_unseen(st));
        out[0] = st->current;
        return 1;
    }
    /* Each pass either proposes, or moves to a strictly better seen
     * configuration, or widens the neighbourhood, or restarts on an unseen
     * one, so the loop ends. */
    for (;;) {
        if (!st->seen[st->current]) {
            /* Proposed but never reported (the driver trimmed it). */
            out[0] = st->current;
            return 1;
        }
        if (!st->nbr_valid)
            load_neighbours(st);
        size_t better = best_improving(st);
        if (better != CUTUNE__NONE) {
            move_to(st, better);
            continue;
        }
        size_t k = 0;
        while (st->nbr_next < st->nbr_count && k < cap) {
            size_t idx = st->nbr[st->nbr_next++];
            if (!st->seen[idx])
                out[k++] = idx;
        }
        if (k > 0)
            return k;
        if (st->kind == CUTUNE__NEIGHBOUR_ADJACENT) {
            st->kind = CUTUNE__NEIGHBOUR_ANY;
            st->nbr_valid = 0;
            continue;
        }
        move_to(st, restart_point(st));
        out[0] = st->current;
        return 1;
    }
}

static void local_report(void *state, size_t index, double objective)
{
    local_state *st = state;
    if (index >= st->n)
        return;
    if (isnan(objective))
        objective = INFINITY;
    if (!st->seen[index]) {
        st->seen[index] = 1;
        st->n_seen++;
        mark_seen(st, index);
    }
    st->objective[index] = objective;
    if (isfinite(objective) &&
        (st->best == CUTUNE__NONE || objective < st->best_objective ||
         (objective == st->best_objective && index < st->best))) {
        st->best = index;
        st->best_objective = objective;
    }
}

/* A batch of neighbours ends at the first that improves on the current
 * configuration, where proposals made one at a time would have moved: a
 * tune (a batch per compile round) then climbs as the benchmark does. The
 * neighbours not measured need no handing back: local marks only what is
 * reported as seen. */
static int local_enough(void *state)
{
    const local_state *st = state;
    return st->started && st->current < st->n && st->seen[st->current] &&
           st->nbr_valid && best_improving(st) != CUTUNE__NONE;
}

const cutune__strategy_type cutune__strategy_local_type = {
    .name = "local",
    .state_size = sizeof(local_state),
    .init = local_init,
    .next = local_next,
    .report = local_report,
    .destroy = local_destroy,
    .enough = local_enough,
};

const cutune__strategy_type *cutune__strategy_local =
    &cutune__strategy_local_type;
