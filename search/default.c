/* "default": the strategy used when none is named.
 *
 * It is simulated annealing ("annealing"), the strategy with the best
 * results over all budgets on the benchmark in bench/results/strategies.md:
 * hill climbing gets to a good configuration sooner on some spaces but
 * stays in a good local minimum for good on others, where annealing's
 * early uphill moves and restarts find the best one. A separate table, so
 * that the default can change (or become a hybrid) without renaming what
 * users asked for by name.
 */
#include "strategy.h"

#include <stdlib.h>

typedef struct default_state {
    void *sub;
} default_state;

static int default_init(void *state, const cutune__strategy_ctx *ctx)
{
    default_state *st = state;
    const cutune__strategy_type *t = &cutune__strategy_annealing_type;
    st->sub = calloc(1, t->state_size ? t->state_size : 1);
    if (!st->sub)
        return -1;
    if (t->init(st->sub, ctx)) {
        free(st->sub);
        st->sub = NULL;
        return -1;
    }
    return 0;
}

static size_t default_next(void *state, size_t *out, size_t cap)
{
    default_state *st = state;
    return cutune__strategy_annealing_type.next(st->sub, out, cap);
}

static void default_report(void *state, size_t index, double objective)
{
    default_state *st = state;
    cutune__strategy_annealing_type.report(st->sub, index, objective);
}

static void default_destroy(void *state)
{
    default_state *st = state;
    cutune__strategy_annealing_type.destroy(st->sub);
    free(st->sub);
    st->sub = NULL;
}

const cutune__strategy_type cutune__strategy_default_type = {
    "default", sizeof(default_state), default_init,
    default_next, default_report, default_destroy,
};
const cutune__strategy_type *cutune__strategy_default =
    &cutune__strategy_default_type;
