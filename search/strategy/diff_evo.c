/* "diff_evo": differential evolution on value indices.
 *
 * Each member of a population is a configuration, read as a vector of
 * value indices. For a target member x a trial is built by the
 * current-to-best/1 rule, v = x + F (best - x) + F (a - b) with a and b
 * two other random members, binomial crossover of v with x, rounding to
 * the nearest value indices and snapping to the nearest valid untaken
 * configuration. The trial replaces its target when it is at least as
 * good. Targets are taken in turn, one trial per proposal, so results
 * feed back at once (steady state) and a batch holds trials for
 * consecutive targets.
 */
#include "strategy.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "history.h"

#define POPULATION 16
#define WEIGHT     0.6
#define CROSSOVER  0.9

typedef struct diff_evo_state {
    cutune__strategy_base base; /* h, space, rng, start, n_params */
    size_t members[POPULATION];
    double member_obj[POPULATION];
    size_t n_members;
    size_t target; /* next target, round robin */
    size_t pending[POPULATION];
    size_t pending_target[POPULATION]; /* CUTUNE__NONE: joins the population */
    size_t n_pending;
    double *vec;
    uint32_t *trial;
} diff_evo_state;

static void diff_evo_destroy(void *state)
{
    diff_evo_state *st = state;
    free(st->trial);
    free(st->vec);
    cutune__strategy_base_free(&st->base);
}

static int diff_evo_init(void *state, const cutune__strategy_ctx *ctx)
{
    diff_evo_state *st = state;
    memset(st, 0, sizeof *st);
    if (cutune__strategy_base_init(&st->base, ctx))
        return -1;
    size_t np = st->base.n_params ? st->base.n_params : 1;
    st->vec = malloc(np * sizeof *st->vec);
    st->trial = malloc(np * sizeof *st->trial);
    if (!st->vec || !st->trial) {
        diff_evo_destroy(st);
        return -1;
    }
    return 0;
}

static size_t best_member(const diff_evo_state *st)
{
    size_t b = 0;
    for (size_t i = 1; i < st->n_members; i++)
        if (st->member_obj[i] < st->member_obj[b])
            b = i;
    return b;
}

/* A trial for member t, or CUTUNE__NONE when none could be placed. */
static size_t make_trial(diff_evo_state *st, size_t t)
{
    const cutune__space *s = st->base.space;
    size_t m = st->n_members, a, b;
    const uint32_t *x = cutune__space_config(s, st->members[t]);
    const uint32_t *best =
        cutune__space_config(s, st->members[best_member(st)]);
    do
        a = cutune__random_below(st->base.rng, m);
    while (a == t && m > 1);
    do
        b = cutune__random_below(st->base.rng, m);
    while ((b == t || b == a) && m > 2);
    const uint32_t *xa = cutune__space_config(s, st->members[a]);
    const uint32_t *xb = cutune__space_config(s, st->members[b]);
    size_t forced = cutune__random_below(
        st->base.rng, st->base.n_params ? st->base.n_params : 1);
    for (size_t p = 0; p < st->base.n_params; p++) {
        double nv = (double)cutune__space_value_count(s, p);
        double v = (double)x[p];
        if (p == forced || gsl_rng_uniform(st->base.rng) < CROSSOVER)
            v += WEIGHT * ((double)best[p] - (double)x[p]) +
                 WEIGHT * ((double)xa[p] - (double)xb[p]);
        v = floor(v + 0.5);
        if (v < 0)
            v = 0;
        if (v > nv - 1)
            v = nv - 1;
        st->trial[p] = (uint32_t)v;
    }
    return cutune__history_untaken_near(&st->base.h, s, st->trial,
                                        st->base.rng, 8);
}

static size_t diff_evo_next(void *state, size_t *out, size_t cap)
{
    diff_evo_state *st = state;
    size_t k = 0;
    if (st->base.h.n_taken >= st->base.h.n)
        return 0;
    if (st->n_pending > 0) {
        for (size_t i = 0; i < st->n_pending && k < cap; i++)
            out[k++] = st->pending[i];
        return k;
    }
    if (cap > POPULATION)
        cap = POPULATION;
    while (k < cap) {
        size_t idx, target = CUTUNE__NONE;
        if (st->base.start != CUTUNE__NONE) {
            idx = st->base.start;
            st->base.start = CUTUNE__NONE;
        } else if (st->n_members + st->n_pending < POPULATION) {
            idx = cutune__history_random_untaken(&st->base.h, st->base.rng);
        } else {
            target = st->target;
            st->target = (st->target + 1) % st->n_members;
            idx = make_trial(st, target);
            if (idx == CUTUNE__NONE)
                idx =
                    cutune__history_random_untaken(&st->base.h, st->base.rng);
        }
        if (idx == CUTUNE__NONE)
            break;
        cutune__history_take(&st->base.h, idx);
        st->pending[st->n_pending] = idx;
        st->pending_target[st->n_pending++] = target;
        out[k++] = idx;
        /* The population must be complete before trials are built. */
        if (target == CUTUNE__NONE &&
            st->n_members + st->n_pending >= POPULATION)
            break;
    }
    return k;
}

static void diff_evo_report(void *state, size_t index, double objective)
{
    diff_evo_state *st = state;
    size_t i;
    cutune__history_report(&st->base.h, index, objective);
    objective = st->base.h.objective[index];
    for (i = 0; i < st->n_pending && st->pending[i] != index; i++)
        ;
    if (i == st->n_pending)
        return;
    size_t target = st->pending_target[i];
    st->n_pending--;
    st->pending[i] = st->pending[st->n_pending];
    st->pending_target[i] = st->pending_target[st->n_pending];
    if (target == CUTUNE__NONE) {
        st->members[st->n_members] = index;
        st->member_obj[st->n_members++] = objective;
    } else if (objective <= st->member_obj[target]) {
        st->members[target] = index;
        st->member_obj[target] = objective;
    }
}

const cutune__strategy_type cutune__strategy_diff_evo_type = {
    .name = "diff_evo",
    .state_size = sizeof(diff_evo_state),
    .init = diff_evo_init,
    .next = diff_evo_next,
    .report = diff_evo_report,
    .destroy = diff_evo_destroy,
};

const cutune__strategy_type *cutune__strategy_diff_evo =
    &cutune__strategy_diff_evo_type;
