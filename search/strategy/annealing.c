/* "annealing": simulated annealing over the neighbour graph of the space.
 *
 * From the current configuration it proposes an untaken neighbour (one
 * parameter one step away, or, less often, one parameter changed to any
 * value) and moves there with the Metropolis rule on the logarithm of the
 * objective, so that the temperature is a relative slowdown and means the
 * same for microsecond and second kernels. The temperature falls
 * geometrically over the evaluation budget. When the neighbourhood of the
 * current configuration is used up it restarts from a perturbation of the
 * best so far, or from a random configuration. Failures are never moved to.
 *
 * With a batch of b, b neighbours are proposed together and the best of
 * them is put to the Metropolis test.
 */
#include "strategy.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "history.h"

/* Temperatures, as a difference of log runtimes: at the start a move 30%
 * slower is taken with probability 1/e, at the end one 1% slower. */
#define T_START 0.3
#define T_END   0.01
/* Length of the schedule when the budget is unlimited. */
#define DEFAULT_SCHEDULE 1000
/* Share of proposals that change a parameter to any of its values rather
 * than to an adjacent one. */
#define FAR_MOVE 0.25

typedef struct annealing_state {
    cutune__strategy_base base; /* h, space, rng, start, n_params */
    size_t schedule;
    size_t current; /* CUTUNE__NONE before the first result */
    double current_obj;
    size_t *nbr;
    size_t nbr_cap;
    size_t *pending; /* proposals of this round awaiting results */
    size_t n_pending;
    size_t pending_cap;
    size_t round_best;
    double round_best_obj;
    uint32_t *config;
} annealing_state;

static void annealing_destroy(void *state)
{
    annealing_state *st = state;
    free(st->config);
    free(st->pending);
    free(st->nbr);
    cutune__strategy_base_free(&st->base);
}

static int annealing_init(void *state, const cutune__strategy_ctx *ctx)
{
    annealing_state *st = state;
    const cutune__space *s = ctx->space;
    size_t n = cutune__space_size(s);
    memset(st, 0, sizeof *st);
    if (cutune__strategy_base_init(&st->base, ctx))
        return -1;
    st->schedule = ctx->budget < n ? ctx->budget : n;
    if (st->schedule > DEFAULT_SCHEDULE && ctx->budget == CUTUNE__UNLIMITED)
        st->schedule = DEFAULT_SCHEDULE;
    if (st->schedule < 2)
        st->schedule = 2;
    for (size_t p = 0; p < st->base.n_params; p++)
        st->nbr_cap += cutune__space_value_count(s, p) - 1;
    st->current = CUTUNE__NONE;
    st->round_best = CUTUNE__NONE;
    st->nbr = malloc((st->nbr_cap ? st->nbr_cap : 1) * sizeof *st->nbr);
    st->config = malloc((st->base.n_params ? st->base.n_params : 1) *
                        sizeof *st->config);
    if (!st->nbr || !st->config) {
        annealing_destroy(st);
        return -1;
    }
    return 0;
}

static double temperature(const annealing_state *st)
{
    double t = (double)st->base.h.n_done / (double)(st->schedule - 1);
    if (t > 1)
        t = 1;
    return T_START * pow(T_END / T_START, t);
}

/* How much slower a is than b, as a difference of logarithms (relative
 * for objectives that are not positive). */
static double slowdown(double a, double b)
{
    if (a > 0 && b > 0)
        return log(a / b);
    return (a - b) / (fabs(b) > 1e-300 ? fabs(b) : 1e-300);
}

/* An untaken neighbour of the current configuration, or CUTUNE__NONE. */
static size_t pick_neighbour(annealing_state *st)
{
    cutune__neighbour_kind first = gsl_rng_uniform(st->base.rng) < FAR_MOVE
                                       ? CUTUNE__NEIGHBOUR_ANY
                                       : CUTUNE__NEIGHBOUR_ADJACENT;
    for (int pass = 0; pass < 2; pass++) {
        cutune__neighbour_kind kind =
            pass == 0
                ? first
                : (first == CUTUNE__NEIGHBOUR_ANY ? CUTUNE__NEIGHBOUR_ADJACENT
                                                  : CUTUNE__NEIGHBOUR_ANY);
        size_t m = cutune__space_neighbours(st->base.space, st->current, kind,
                                            st->nbr, st->nbr_cap);
        if (m > st->nbr_cap)
            m = st->nbr_cap;
        size_t k = 0;
        for (size_t i = 0; i < m; i++)
            if (!cutune__history_is_taken(&st->base.h, st->nbr[i]))
                st->nbr[k++] = st->nbr[i];
        if (k > 0)
            return st->nbr[cutune__random_below(st->base.rng, k)];
    }
    return CUTUNE__NONE;
}

/* Where to go when the current neighbourhood is used up. */
static size_t restart(annealing_state *st)
{
    size_t idx = CUTUNE__NONE;
    if (st->base.h.best != CUTUNE__NONE &&
        gsl_rng_uniform(st->base.rng) < 0.5) {
        memcpy(st->config,
               cutune__space_config(st->base.space, st->base.h.best),
               st->base.n_params * sizeof *st->config);
        idx = cutune__history_untaken_near(&st->base.h, st->base.space,
                                           st->config, st->base.rng, 8);
    }
    if (idx == CUTUNE__NONE)
        idx = cutune__history_random_untaken(&st->base.h, st->base.rng);
    return idx;
}

static int push(annealing_state *st, size_t idx)
{
    if (st->n_pending == st->pending_cap) {
        size_t cap = st->pending_cap ? 2 * st->pending_cap : 16;
        size_t *p = realloc(st->pending, cap * sizeof *p);
        if (!p)
            return -1;
        st->pending = p;
        st->pending_cap = cap;
    }
    st->pending[st->n_pending++] = idx;
    cutune__history_take(&st->base.h, idx);
    return 0;
}

static size_t annealing_next(void *state, size_t *out, size_t cap)
{
    annealing_state *st = state;
    size_t k = 0;
    if (st->base.h.n_taken >= st->base.h.n)
        return 0;
    if (st->n_pending > 0) {
        /* Results of this round are still out; re-propose what the driver
         * did not evaluate (it answers evaluated ones from memory). */
        for (size_t i = 0; i < st->n_pending && k < cap; i++)
            out[k++] = st->pending[i];
        return k;
    }
    if (st->base.start != CUTUNE__NONE) {
        if (push(st, st->base.start))
            return 0;
        out[k++] = st->base.start;
        st->base.start = CUTUNE__NONE;
        return k;
    }
    st->round_best = CUTUNE__NONE;
    st->round_best_obj = INFINITY;
    while (k < cap) {
        size_t idx =
            st->current == CUTUNE__NONE ? CUTUNE__NONE : pick_neighbour(st);
        if (idx == CUTUNE__NONE && k > 0)
            break;
        if (idx == CUTUNE__NONE)
            idx = restart(st);
        if (idx == CUTUNE__NONE || push(st, idx))
            break;
        out[k++] = idx;
        if (st->current == CUTUNE__NONE)
            break;
    }
    return k;
}

static void annealing_report(void *state, size_t index, double objective)
{
    annealing_state *st = state;
    size_t i;
    cutune__history_report(&st->base.h, index, objective);
    for (i = 0; i < st->n_pending && st->pending[i] != index; i++)
        ;
    if (i == st->n_pending)
        return;
    st->pending[i] = st->pending[--st->n_pending];
    objective = st->base.h.objective[index];
    if (st->round_best == CUTUNE__NONE || objective < st->round_best_obj) {
        st->round_best = index;
        st->round_best_obj = objective;
    }
    if (st->n_pending > 0)
        return;
    /* The round is complete: Metropolis on its best. */
    if (!isfinite(st->round_best_obj))
        return;
    if (st->current == CUTUNE__NONE || !isfinite(st->current_obj) ||
        st->round_best_obj <= st->current_obj ||
        gsl_rng_uniform(st->base.rng) <
            exp(-slowdown(st->round_best_obj, st->current_obj) /
                temperature(st))) {
        st->current = st->round_best;
        st->current_obj = st->round_best_obj;
    }
}

const cutune__strategy_type cutune__strategy_annealing_type = {
    .name = "annealing",
    .state_size = sizeof(annealing_state),
    .init = annealing_init,
    .next = annealing_next,
    .report = annealing_report,
    .destroy = annealing_destroy,
};

const cutune__strategy_type *cutune__strategy_annealing =
    &cutune__strategy_annealing_type;
