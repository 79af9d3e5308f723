/* What trying a configuration costs, learnt during a run: an additive
 * model of the logarithm of the seconds (compilation and the launches
 * every candidate gets, cutune__search_cost), one shrunk mean deviation
 * per value of each parameter with more than one value.
 *
 * Not a model of the runtime: what costs (an unroll factor's compile
 * time) is often what barely changes the runtime, so a strategy's
 * runtime model, whose length scales or move statistics are the
 * runtime's, is the wrong place for it. Strategies that run against the
 * clock (a time limit, no evaluation budget) weigh what they propose by
 * it: `bayes` (expected improvement per predicted second) and `default`
 * (its moves' predicted runtime ratio per predicted second, to a power).
 *
 * The model reads the space and nothing else; it is a plain struct the
 * strategy holds in its state. Not thread-safe on one model.
 */
#ifndef CUTUNE_SEARCH_COST_MODEL_H
#define CUTUNE_SEARCH_COST_MODEL_H

#include <math.h>
#include <stddef.h>

#include "space/space.h"

/* A value's mean deviation is shrunk towards none by this many results'
 * worth: one result at a value says little about the value. */
#define CUTUNE__COST_PRIOR 2.0

typedef struct cutune__cost_model {
    const cutune__space *space; /* borrowed */
    size_t *varying;            /* d: parameters with more than one value */
    size_t d;
    size_t *off;       /* d: offset of each varying parameter's values */
    double *sum;       /* per value: summed log seconds */
    double *count;     /* per value: results learnt */
    double total;      /* summed log seconds of all results */
    size_t n;          /* results learnt */
    size_t told_index; /* the configuration `told` belongs to, or
                          CUTUNE__NONE */
    double told;       /* log seconds told, not learnt yet */
} cutune__cost_model;

/* The log seconds the model learns from a cost in seconds: at least a
 * microsecond's, so that a free try does not weigh infinitely. */
static inline double cutune__cost_log(double seconds)
{
    return log(seconds > 1e-6 ? seconds : 1e-6);
}

/* Sizes `m` for `space` (borrowed; it must outlive the model), nothing
 * learnt. 0, or -1 when memory ran out (nothing to free then). */
int cutune__cost_model_init(cutune__cost_model *m, const cutune__space *space);
/* Frees what init took; a zeroed model is fine. */
void cutune__cost_model_free(cutune__cost_model *m);

/* Adds the result of configuration `index` that cost `log_seconds`. */
void cutune__cost_model_learn(cutune__cost_model *m, size_t index,
                              double log_seconds);

/* The predicted log seconds of configuration `index` over the mean of
 * those learnt: the sum over its varying parameters of its value's mean
 * deviation from that mean, shrunk by CUTUNE__COST_PRIOR results' worth
 * (0 for a value never seen). 0 before anything is learnt. */
double cutune__cost_model_relative(const cutune__cost_model *m, size_t index);

/* The predicted log seconds of configuration `index`: the mean learnt
 * plus the relative prediction. NaN before anything is learnt. */
double cutune__cost_model_predict(const cutune__cost_model *m, size_t index);

/* The driver tells a result's cost (the strategy's `cost` callback) just
 * before the result itself: tell holds it, settle learns it when the
 * result that follows is of the same configuration and `fresh` (its
 * first report), and forgets it either way. */
static inline void cutune__cost_model_tell(cutune__cost_model *m, size_t index,
                                           double seconds)
{
    m->told_index = index;
    m->told = cutune__cost_log(seconds);
}
void cutune__cost_model_settle(cutune__cost_model *m, size_t index, int fresh);

#endif
