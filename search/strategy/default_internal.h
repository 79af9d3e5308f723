/* The default strategy's state and the steps its files share: moves and
 * their statistics (default_moves.c), the probe and the edge
 * (default_probe.c), the proposals and results (default.c). Internal to
 * search/.
 */
#ifndef CUTUNE_SEARCH_DEFAULT_INTERNAL_H
#define CUTUNE_SEARCH_DEFAULT_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "cost_model.h"
#include "default.h"
#include "history.h"
#include "strategy.h"

/* Pair moves are built from this many of the best single moves. */
#define PAIR_SINGLES 32
#define MAX_PAIRS    (PAIR_SINGLES * (PAIR_SINGLES - 1) / 2)
/* Move statistics are kept for parameters with at most this many values
 * (a table of values x values per parameter). */
#define STATS_MAX_VALUES 128
/* Results closer than this (relative) are ties, and a tie does not make a
 * new best: the tuner measures each median to within 1% (the 95%
 * confidence interval of its timing protocol), so a smaller difference is
 * noise, and letting noise decide when the probe comes would send each
 * repeat of a tune along another path (onto configurations that its
 * binary cache has not compiled). */
#define TIE_REL 0.01
/* Niches (settings of the switches: two-valued parameters other than
 * block dimensions) are told apart by the first this many switches in
 * parameter order; later ones are moved like any other parameter. 256
 * niches at most: far more than a budget of hundreds can climb, and a
 * table of as many bytes. */
#define NICHE_SWITCHES 8

typedef struct cutune__default_ranked {
    double score;
    size_t index;
    size_t order; /* tie-break: place in a shuffle, or the index */
} cutune__default_ranked;

typedef struct cutune__default_state {
    cutune__history h;
    const cutune__space *space;
    gsl_rng *rng;
    cutune__default_params prm; /* the context's, or the standard ones */
    size_t n;
    size_t n_params;
    size_t start;
    size_t *varying; /* parameters with more than one value */
    size_t n_varying;
    size_t any_size; /* neighbours of a configuration, at most */

    /* Move statistics: for parameter p with stats_off[p] != CUTUNE__NONE,
     * entry stats_off[p] + a * nv + v sums the log ratios of going from
     * value a to value v. */
    size_t *stats_off;
    double *delta_sum;
    uint32_t *delta_count;

    unsigned char *probed; /* n: configurations probed */
    size_t *heap;          /* open nodes: a binary heap by objective */
    size_t heap_len;
    /* Nodes closed only by proposals that may still be handed back: out
     * of the heap until then. */
    size_t *held;
    size_t held_len;

    size_t sample_left;  /* of the initial sample, still to propose */
    size_t sample_first; /* its first configuration */
    size_t sample_batch; /* proposals of the last batch, when of the
                            sample (a batch never mixes it with more) */
    size_t best;         /* the best result; a tie keeps the earlier one */
    size_t last_better;  /* evaluations reported when the best last changed */
    size_t *batch;       /* batch_cap: the last batch of expansions */
    size_t batch_cap;
    size_t batch_len;      /* proposals of the last batch */
    size_t batch_pos;      /* of them, results reported */
    size_t probe_batch;    /* proposals of the last batch, when a probe */
    size_t probe_start;    /* evaluations reported when the last probe
                              began */
    int probe_cut;         /* the probe ended at a new best: the rest of
                              its batch is not wanted */
    uint64_t salt;         /* ties among predictions, fixed per run */
    uint64_t draws;        /* random configurations drawn (random_draw) */
    size_t first_random;   /* in the batch, the first random draw: from
                              there on all are (no node was open) */
    uint64_t draws_before; /* draws before that one */
    cutune__default_ranked *list; /* the probe being proposed */
    size_t list_count;
    size_t list_next;

    /* Restarts: a climb from a new start, so that the budget is spread
     * over basins instead of staying around the first fast one. */
    size_t climb;       /* the node climbed from; CUTUNE__NONE: none */
    size_t climb_evals; /* evaluations of the current climb */
    size_t climb_end;   /* evaluations when the last climb ended */
    size_t restarts;    /* climbs started */
    int climb_batch;    /* the last batch is the climb's steps: only
                           their results move or spend the climb (a
                           probe may come between its steps) */
    size_t *order;      /* n: configurations reported, in order */
    size_t n_order;
    unsigned char *edge_param;   /* n_params: block-size parameters */
    unsigned char *switch_param; /* n_params: two-valued, not block */
    size_t *switches;            /* the switch parameters, at most
                                    NICHE_SWITCHES */
    size_t n_switch;
    unsigned char *niche_done;    /* 1 << n_switch: niches climbed */
    int climb_frozen;             /* the climb keeps its switches */
    size_t *niche_n;              /* 1 << n_switch: evaluations per niche */
    double spread_ref;            /* the first result: spreads are of log
                                     ratios to it */
    double spread_sum, spread_sq; /* of those log ratios */
    size_t spread_n;
    size_t *niche_node; /* 1 << n_switch: scratch, the fastest open
                           node of each niche */
    size_t *niche_prop; /* 1 << n_switch: scratch, its proposal */

    /* Against the clock (no evaluation budget), what trying each
     * configuration costs, where the evaluator says (the `cost`
     * callback): moves are ranked per predicted second (cost_power). */
    int against_clock;
    cutune__cost_model costs;

    size_t *nbr;      /* any_size: scratch neighbours */
    uint32_t *config; /* n_params: scratch configuration */
} cutune__default_state;

/* default_moves.c: statistics of moves, open nodes, draws. */
double cutune__default_slowdown(double a, double b);
size_t cutune__default_differing_param(const cutune__default_state *st,
                                       size_t a, size_t b);
size_t cutune__default_neighbours(cutune__default_state *st, size_t index,
                                  cutune__neighbour_kind kind);
void cutune__default_learn(cutune__default_state *st, size_t index);
double cutune__default_predicted(const cutune__default_state *st, size_t from,
                                 size_t to, uint32_t min_count, int *known);
double cutune__default_cost_penalty(const cutune__default_state *st,
                                    size_t index);
double cutune__default_move_score(const cutune__default_state *st, size_t from,
                                  size_t to);
int cutune__default_by_score(const void *a, const void *b);
int cutune__default_faster(double a, double b);
void cutune__default_heap_push(cutune__default_state *st, size_t index);
uint64_t cutune__default_tie_order(const cutune__default_state *st,
                                   size_t index);
uint64_t cutune__default_mix(uint64_t z);
size_t cutune__default_random_draw(cutune__default_state *st);
size_t cutune__default_expand(cutune__default_state *st);
size_t cutune__default_niche_of(const cutune__default_state *st, size_t c);
double cutune__default_spread(const cutune__default_state *st);
size_t cutune__default_climb_step(cutune__default_state *st);
void cutune__default_unhold(cutune__default_state *st);

/* default_probe.c: the probe of the best, the edge of the space, the
 * starts of climbs. */
void cutune__default_load_probe(cutune__default_state *st, size_t b);
size_t cutune__default_edge_of(cutune__default_state *st, size_t from,
                               int largest);
size_t cutune__default_far_draw(cutune__default_state *st);
size_t cutune__default_niche_start(cutune__default_state *st);

#endif
