/* The evaluation budget: one resolution of the limits for tune, simulate
 * and the benchmarks (budget.h). */
#include "budget.h"

#include <math.h>

int cutune__budget_given(const cutune__budget *b)
{
    return b && (b->max_evals || b->max_seconds > 0 || b->fraction > 0);
}

cutune__budget cutune__budget_resolve(const cutune__budget *caller,
                                      const cutune__budget *problem,
                                      size_t space_size,
                                      const cutune__strategy_type *type)
{
    cutune__budget b = {0, 0.0, 0.0};
    if (cutune__budget_given(caller))
        b = *caller;
    else if (problem)
        b = *problem;
    if (b.fraction > 0 && b.fraction <= 1) {
        size_t share = (size_t)ceil(b.fraction * (double)space_size);
        if (share < 1)
            share = 1;
        if (b.max_evals == 0 || share < b.max_evals)
            b.max_evals = share;
    }
    if (b.max_evals == 0 && b.max_seconds <= 0 && !(type && type->exhaustive))
        b.max_evals = CUTUNE__DEFAULT_BUDGET;
    return b;
}
