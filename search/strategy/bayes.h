/* The Bayesian strategy's settings, for a benchmark that chooses them by
 * leave-one-out (bench-strategies --variant bayes:NAME=V,...): a run uses
 * cutune__bayes_params_std unless its context's `params` points to one of
 * these. Nothing here depends on a kernel or a GPU.
 */
#ifndef CUTUNE_SEARCH_BAYES_H
#define CUTUNE_SEARCH_BAYES_H

#include <stddef.h>

#include "settings.h"

typedef struct cutune__bayes_params {
    size_t initial;       /* configurations of the initial design, the
                             start included (random search's draws) */
    size_t candidates;    /* untaken configurations of the pool scored
                             by expected improvement per proposal */
    double clip_quantile; /* the model sees every log time above this
                             quantile of those observed as that quantile
                             (1: as observed) */
    size_t ard_sweeps;    /* passes of a per-parameter length-scale search
                             after the shared one (0: one length scale) */
    double cost_power;    /* against the clock (no evaluation budget, and
                             the evaluator reports costs): expected
                             improvement over predicted seconds to this
                             power (0: costs ignored) */
} cutune__bayes_params;

/* The settings the strategy uses when none are given. */
extern const cutune__bayes_params cutune__bayes_params_std;

/* Sets the setting named `name` (cutune__bayes_settings) to `value`; 0,
 * or -1 for an unknown name or a value out of range (p unchanged). */
int cutune__bayes_params_set(cutune__bayes_params *p, const char *name,
                             double value);

/* The settings as a table (settings.h): names, ranges, meanings. */
extern const cutune__settings cutune__bayes_settings;

#endif
