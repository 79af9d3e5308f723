/* "random": uniformly random configurations without replacement, the start
 * first. The baseline every other strategy has to beat. */
#include "strategy.h"

#include "history.h"

typedef struct random_state {
    cutune__history h;
    gsl_rng *rng;
    size_t start;
} random_state;

static int random_init(void *state, const cutune__strategy_ctx *ctx)
{
    random_state *st = state;
    size_t n = cutune__space_size(ctx->space);
    if (cutune__history_init(&st->h, n))
        return -1;
    st->rng = ctx->rng;
    st->start = ctx->start < n ? ctx->start : CUTUNE__NONE;
    return 0;
}

static size_t random_next(void *state, size_t *out, size_t cap)
{
    random_state *st = state;
    size_t k = 0;
    if (st->start != CUTUNE__NONE) {
        out[k++] = st->start;
        cutune__history_take(&st->h, st->start);
        st->start = CUTUNE__NONE;
    }
    while (k < cap) {
        size_t idx = cutune__history_random_untaken(&st->h, st->rng);
        if (idx == CUTUNE__NONE)
            break;
        cutune__history_take(&st->h, idx);
        out[k++] = idx;
    }
    return k;
}

static void random_report(void *state, size_t index, double objective)
{
    random_state *st = state;
    cutune__history_report(&st->h, index, objective);
}

static void random_destroy(void *state)
{
    random_state *st = state;
    cutune__history_free(&st->h);
}

const cutune__strategy_type cutune__strategy_random_type = {
    .name = "random",
    .state_size = sizeof(random_state),
    .init = random_init,
    .next = random_next,
    .report = random_report,
    .destroy = random_destroy,
    .oblivious = 1, /* proposals never depend on results */
};

const cutune__strategy_type *cutune__strategy_random =
    &cutune__strategy_random_type;
