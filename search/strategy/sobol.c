/* "sobol": a low-discrepancy sequence over the parameters.
 *
 * Each point of GSL's Sobol sequence (Halton beyond Sobol's 40 dimensions)
 * gives one coordinate per parameter that has more than one value; the
 * coordinate picks a value index, and the configuration is snapped to the
 * nearest valid one. Points that land on a configuration already taken are
 * skipped. The sequence is shifted by a random vector modulo 1 (a
 * Cranley-Patterson rotation), so that seeds give different, equally
 * well-spread designs. Covers a space more evenly than random sampling.
 */
#include "strategy.h"

#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_qrng.h>

#include "history.h"

/* Points in a row that land on taken configurations before one uniformly
 * random untaken configuration is proposed instead. */
#define MISS_LIMIT 64
/* The most dimensions of GSL's Sobol generator. */
#define SOBOL_MAX_DIM 40

typedef struct sobol_state {
    cutune__strategy_base base; /* h, space, rng, start, n_params */
    gsl_qrng *q;
    size_t *varying; /* parameters with more than one value */
    size_t n_varying;
    double *shift;    /* n_varying */
    double *point;    /* n_varying */
    uint32_t *config; /* n_params */
} sobol_state;

static void sobol_destroy(void *state)
{
    sobol_state *st = state;
    if (st->q)
        gsl_qrng_free(st->q);
    free(st->config);
    free(st->point);
    free(st->shift);
    free(st->varying);
    cutune__strategy_base_free(&st->base);
}

static int sobol_init(void *state, const cutune__strategy_ctx *ctx)
{
    sobol_state *st = state;
    const cutune__space *s = ctx->space;
    memset(st, 0, sizeof *st);
    if (cutune__strategy_base_init(&st->base, ctx))
        return -1;
    size_t np = st->base.n_params ? st->base.n_params : 1;
    st->varying = malloc(np * sizeof *st->varying);
    st->shift = malloc(np * sizeof *st->shift);
    st->point = malloc(np * sizeof *st->point);
    st->config = calloc(np, sizeof *st->config);
    if (!st->varying || !st->shift || !st->point || !st->config)
        goto fail;
    for (size_t p = 0; p < st->base.n_params; p++)
        if (cutune__space_value_count(s, p) > 1)
            st->varying[st->n_varying++] = p;
    for (size_t i = 0; i < st->n_varying; i++)
        st->shift[i] = gsl_rng_uniform(st->base.rng);
    /* Halton reaches 1229 dimensions; beyond that (no real launch space)
     * the strategy proposes random configurations. */
    if (st->n_varying > 0 && st->n_varying <= SOBOL_MAX_DIM)
        st->q = gsl_qrng_alloc(gsl_qrng_sobol, (unsigned)st->n_varying);
    else if (st->n_varying > 0 && st->n_varying <= 1229)
        st->q = gsl_qrng_alloc(gsl_qrng_halton, (unsigned)st->n_varying);
    if (st->n_varying > 0 && st->n_varying <= 1229 && !st->q)
        goto fail;
    return 0;
fail:
    sobol_destroy(st);
    return -1;
}

/* The next untaken configuration of the sequence, or CUTUNE__NONE after
 * MISS_LIMIT misses. */
static size_t next_point(sobol_state *st)
{
    const cutune__space *s = st->base.space;
    if (!st->q)
        return CUTUNE__NONE;
    for (int miss = 0; miss < MISS_LIMIT; miss++) {
        if (gsl_qrng_get(st->q, st->point))
            return CUTUNE__NONE;
        for (size_t i = 0; i < st->n_varying; i++) {
            size_t p = st->varying[i];
            size_t nv = cutune__space_value_count(s, p);
            double u = st->point[i] + st->shift[i];
            if (u >= 1.0)
                u -= 1.0;
            size_t v = (size_t)(u * (double)nv);
            st->config[p] = (uint32_t)(v < nv ? v : nv - 1);
        }
        size_t idx = cutune__space_nearest(s, st->config);
        if (idx != CUTUNE__NONE && !cutune__history_is_taken(&st->base.h, idx))
            return idx;
    }
    return CUTUNE__NONE;
}

static size_t sobol_next(void *state, size_t *out, size_t cap)
{
    sobol_state *st = state;
    size_t k = 0;
    if (st->base.start != CUTUNE__NONE) {
        out[k++] = st->base.start;
        cutune__history_take(&st->base.h, st->base.start);
        st->base.start = CUTUNE__NONE;
    }
    while (k < cap) {
        size_t idx = next_point(st);
        if (idx == CUTUNE__NONE)
            idx = cutune__history_random_untaken(&st->base.h, st->base.rng);
        if (idx == CUTUNE__NONE)
            break;
        cutune__history_take(&st->base.h, idx);
        out[k++] = idx;
    }
    return k;
}

static void sobol_report(void *state, size_t index, double objective)
{
    sobol_state *st = state;
    cutune__history_report(&st->base.h, index, objective);
}

const cutune__strategy_type cutune__strategy_sobol_type = {
    .name = "sobol",
    .state_size = sizeof(sobol_state),
    .init = sobol_init,
    .next = sobol_next,
    .report = sobol_report,
    .destroy = sobol_destroy,
    .oblivious = 1, /* proposals never depend on results */
};

const cutune__strategy_type *cutune__strategy_sobol =
    &cutune__strategy_sobol_type;
