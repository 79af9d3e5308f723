/* The default strategy's settings, for a benchmark that chooses them by
 * leave-one-out (bench-strategies --variant): a run uses
 * cutune__default_params_std unless its context's `params` points to one
 * of these. Nothing here depends on a kernel or a GPU; the counts of
 * evaluations scale with the size of a configuration's neighbourhood.
 */
#ifndef CUTUNE_SEARCH_DEFAULT_H
#define CUTUNE_SEARCH_DEFAULT_H

#include <stddef.h>

#include "settings.h"

typedef struct cutune__default_params {
    size_t initial_sample; /* configurations evaluated first */
    double probe_after;    /* neighbourhoods' worth of evaluations the
                              best stands before it is probed */
    double restart_after;  /* ... before a climb from a new start */
    double climb_max;      /* a climb's length, in neighbourhoods */
    int climb_any;         /* a climb moves one parameter to any value (1)
                              or one step (0) */
    size_t restart_pool;   /* a climb starts at the farthest of this many
                              random configurations from those evaluated
                              (1: at a random one) */
    int probe_edges;       /* the probe of the best starts at its edges
                              (block dimensions largest, smallest) */
    double probe_every;    /* the best is probed too once this many
                              neighbourhoods' worth of evaluations have
                              passed since the last probe began, however
                              it improved meanwhile (0: never) */
    int shapes_first;      /* the probe's block shapes come right after its
                              edges (1) or after its single moves (0) */
    int probe_cut;         /* a probe that finds a new best goes on to
                              its end (0), ends there (1), or ends there
                              and the new best is probed next (2) */
    double cut_gain;       /* ... only where the new best is faster than
                              the old by at least this share */
    double niche_ucb;      /* weight of the bonus by which a niche
                              evaluated less gets expansions: its
                              fastest open node is ranked faster by
                              niche_ucb * s * sqrt(ln N / n) in log
                              runtime, s the standard deviation of the
                              log runtimes so far (0: plain best-first) */
    int niche_climbs;      /* every other climb starts at the best with
                              the switch values of the farthest niche
                              not climbed yet, and keeps them (1; off
                              in the standard settings) */
    double cost_power;     /* against the clock (no evaluation budget, and
                              the evaluator reports costs): moves are
                              ranked by their predicted runtime ratio
                              times their predicted seconds (relative to
                              the mean, cost_model.h) to this power, a
                              log slowdown plus cost_power times a log
                              relative cost (0: costs ignored) */
} cutune__default_params;

/* The settings the strategy uses when none are given. */
extern const cutune__default_params cutune__default_params_std;

/* Sets the setting named `name` (cutune__default_settings) to `value`;
 * 0, or -1 for an unknown name or a value out of range (p unchanged). */
int cutune__default_params_set(cutune__default_params *p, const char *name,
                               double value);

/* The settings as a table (settings.h): names, ranges, meanings. */
extern const cutune__settings cutune__default_settings;

#endif
