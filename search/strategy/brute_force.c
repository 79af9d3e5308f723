/* "brute_force": every configuration once, in index order, the start first
 * when there is one. A reference for other strategies and the right choice
 * for small spaces. */
#include "strategy.h"

typedef struct brute_force_state {
    size_t n;
    size_t start; /* CUTUNE__NONE when none or already proposed */
    size_t skip;  /* the start, passed over when the sweep reaches it */
    size_t cursor;
} brute_force_state;

static int brute_force_init(void *state, const cutune__strategy_ctx *ctx)
{
    brute_force_state *st = state;
    st->n = cutune__space_size(ctx->space);
    st->start = ctx->start < st->n ? ctx->start : CUTUNE__NONE;
    st->skip = st->start;
    st->cursor = 0;
    return 0;
}

static size_t brute_force_next(void *state, size_t *out, size_t cap)
{
    brute_force_state *st = state;
    size_t k = 0;
    if (st->start != CUTUNE__NONE && k < cap) {
        out[k++] = st->start;
        st->start = CUTUNE__NONE;
    }
    while (k < cap && st->cursor < st->n) {
        size_t idx = st->cursor++;
        if (idx != st->skip)
            out[k++] = idx;
    }
    return k;
}

static void brute_force_report(void *state, size_t index, double objective)
{
    (void)state;
    (void)index;
    (void)objective;
}

static void brute_force_destroy(void *state)
{
    (void)state;
}

const cutune__strategy_type cutune__strategy_brute_force_type = {
    .name = "brute_force",
    .state_size = sizeof(brute_force_state),
    .init = brute_force_init,
    .next = brute_force_next,
    .report = brute_force_report,
    .destroy = brute_force_destroy,
    .oblivious = 1,  /* proposals never depend on results */
    .exhaustive = 1, /* every configuration, then it stops */
};

const cutune__strategy_type *cutune__strategy_brute_force =
    &cutune__strategy_brute_force_type;
