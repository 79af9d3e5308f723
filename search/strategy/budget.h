/* The evaluation budget of a search: one type for every caller that runs
 * a strategy (a tune, a simulation, the benchmarks), and one rule for
 * what a run gets when several limits, or none, are given.
 *
 * It exists so that a limit means the same in every caller: the tuner and
 * the simulator once resolved it separately, and the simulator's copy had
 * drifted (it ignored the T1 file's Budget).
 */
#ifndef CUTUNE_SEARCH_BUDGET_H
#define CUTUNE_SEARCH_BUDGET_H

#include <stddef.h>

#include "strategy.h"

/* Evaluations a non-exhaustive strategy gets when no limit is given. The
 * public header's CUTUNE_DEFAULT_BUDGET says the same (search/ does not
 * include it); the tuner checks at compile time that they agree. */
#define CUTUNE__DEFAULT_BUDGET 100

/* Limits of a run; all that are set apply, whichever comes first. */
typedef struct cutune__budget {
    size_t max_evals;   /* evaluations; 0: no limit */
    double max_seconds; /* time (wall or simulated, as the caller
                           measures it); 0: no limit */
    double fraction;    /* a share of the space, in (0, 1]: at most
                           ceil(fraction * size) evaluations; 0: none */
} cutune__budget;

/* Nonzero when `b` (NULL: none) sets any limit. */
int cutune__budget_given(const cutune__budget *b);

/* The limits a run of `type` on a space of `space_size` configurations
 * gets. The caller's limits (`caller`), when it set any, replace the
 * problem's (`problem`, the T1 file's Budget) as a whole; either may be
 * NULL. A fraction in (0, 1] becomes evaluations, the smaller of it and
 * max_evals winning (a fraction outside that range is ignored). When then
 * neither evaluations nor time are limited, the strategy's default
 * applies: CUTUNE__DEFAULT_BUDGET evaluations, or none for an exhaustive
 * strategy, which stops by itself once it has seen the space.
 *
 * The result's max_evals is what the search drivers take (0: no limit),
 * its max_seconds the time limit, its fraction the one that was chosen. */
cutune__budget cutune__budget_resolve(const cutune__budget *caller,
                                      const cutune__budget *problem,
                                      size_t space_size,
                                      const cutune__strategy_type *type);

#endif
