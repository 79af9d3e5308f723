/* "genetic": a generational genetic algorithm on value indices.
 *
 * A population of configurations (the start and random ones at first)
 * breeds a generation of children: two parents picked by binary
 * tournament, uniform crossover parameter by parameter, and mutation of
 * each parameter with probability 1/(parameters that vary) to another of
 * its values. A child is snapped to the nearest valid untaken
 * configuration. Parents and children then compete for the places of the
 * next population (elitist, failures last), so the best never gets lost.
 */
#include "strategy.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "history.h"

#define POPULATION 16

typedef struct member {
    size_t index;
    double objective;
} member;

typedef struct genetic_state {
    cutune__strategy_base base; /* h, space, rng, start, n_params */
    size_t pop_size;
    member pool[2 * POPULATION]; /* population, then this generation */
    size_t n_pop;
    size_t n_made; /* proposals of this generation */
    size_t n_back; /* of which results came back */
    size_t *pending;
    size_t n_pending;
    int initial; /* still filling the first population */
    double mutation;
    uint32_t *child;
} genetic_state;

static void genetic_destroy(void *state)
{
    genetic_state *st = state;
    free(st->child);
    free(st->pending);
    cutune__strategy_base_free(&st->base);
}

static int genetic_init(void *state, const cutune__strategy_ctx *ctx)
{
    genetic_state *st = state;
    const cutune__space *s = ctx->space;
    size_t varying = 0;
    memset(st, 0, sizeof *st);
    if (cutune__strategy_base_init(&st->base, ctx))
        return -1;
    st->pop_size = POPULATION;
    st->initial = 1;
    for (size_t p = 0; p < st->base.n_params; p++)
        varying += cutune__space_value_count(s, p) > 1;
    st->mutation = varying ? 1.0 / (double)varying : 0;
    st->pending = malloc(st->pop_size * sizeof *st->pending);
    st->child = malloc((st->base.n_params ? st->base.n_params : 1) *
                       sizeof *st->child);
    if (!st->pending || !st->child) {
        genetic_destroy(st);
        return -1;
    }
    return 0;
}

static int by_objective(const void *a, const void *b)
{
    const member *x = a, *y = b;
    if (x->objective < y->objective)
        return -1;
    if (x->objective > y->objective)
        return 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

static const member *tournament(genetic_state *st)
{
    const member *a = &st->pool[cutune__random_below(st->base.rng, st->n_pop)];
    const member *b = &st->pool[cutune__random_below(st->base.rng, st->n_pop)];
    return by_objective(a, b) <= 0 ? a : b;
}

static size_t breed(genetic_state *st)
{
    const cutune__space *s = st->base.space;
    if (st->n_pop == 0)
        return cutune__history_random_untaken(&st->base.h, st->base.rng);
    const uint32_t *a = cutune__space_config(s, tournament(st)->index);
    const uint32_t *b = cutune__space_config(s, tournament(st)->index);
    for (size_t p = 0; p < st->base.n_params; p++) {
        size_t nv = cutune__space_value_count(s, p);
        st->child[p] = gsl_rng_uniform(st->base.rng) < 0.5 ? a[p] : b[p];
        if (nv > 1 && gsl_rng_uniform(st->base.rng) < st->mutation) {
            size_t v = cutune__random_below(st->base.rng, nv - 1);
            if (v >= st->child[p])
                v++;
            st->child[p] = (uint32_t)v;
        }
    }
    size_t idx = cutune__history_untaken_near(&st->base.h, s, st->child,
                                              st->base.rng, 8);
    if (idx == CUTUNE__NONE)
        idx = cutune__history_random_untaken(&st->base.h, st->base.rng);
    return idx;
}

/* Parents and children compete; the best pop_size stay. */
static void select_next(genetic_state *st)
{
    size_t total = st->n_pop + st->n_back;
    qsort(st->pool, total, sizeof *st->pool, by_objective);
    st->n_pop = total < st->pop_size ? total : st->pop_size;
    st->n_made = st->n_back = 0;
    st->initial = 0;
}

static size_t genetic_next(void *state, size_t *out, size_t cap)
{
    genetic_state *st = state;
    size_t k = 0;
    if (st->base.h.n_taken >= st->base.h.n)
        return 0;
    if (st->n_pending > 0) {
        for (size_t i = 0; i < st->n_pending && k < cap; i++)
            out[k++] = st->pending[i];
        return k;
    }
    if (st->n_made == st->pop_size)
        select_next(st);
    while (k < cap && st->n_made < st->pop_size) {
        size_t idx;
        if (st->base.start != CUTUNE__NONE) {
            idx = st->base.start;
            st->base.start = CUTUNE__NONE;
        } else if (st->initial) {
            idx = cutune__history_random_untaken(&st->base.h, st->base.rng);
        } else {
            idx = breed(st);
        }
        if (idx == CUTUNE__NONE)
            break;
        cutune__history_take(&st->base.h, idx);
        st->pending[st->n_pending++] = idx;
        st->n_made++;
        out[k++] = idx;
    }
    return k;
}

static void genetic_report(void *state, size_t index, double objective)
{
    genetic_state *st = state;
    size_t i;
    cutune__history_report(&st->base.h, index, objective);
    for (i = 0; i < st->n_pending && st->pending[i] != index; i++)
        ;
    if (i == st->n_pending)
        return;
    st->pending[i] = st->pending[--st->n_pending];
    member *m = &st->pool[st->n_pop + st->n_back++];
    m->index = index;
    m->objective = st->base.h.objective[index];
}

const cutune__strategy_type cutune__strategy_genetic_type = {
    .name = "genetic",
    .state_size = sizeof(genetic_state),
    .init = genetic_init,
    .next = genetic_next,
    .report = genetic_report,
    .destroy = genetic_destroy,
};

const cutune__strategy_type *cutune__strategy_genetic =
    &cutune__strategy_genetic_type;
