/* "default": the strategy used when none is named: best-first search
 * over one-step moves, with a wider probe of the best configuration once
 * it has stopped improving.
 *
 * Every evaluated configuration is a node; the search always expands the
 * fastest node that still has an unproposed neighbour of one parameter
 * one step away, proposing that neighbour. A node whose neighbours are all
 * taken is closed. So the evaluations go around the fastest configurations
 * found so far, the fastest first, and fall back to slower ones only where
 * those are exhausted. Unlike repeated hill climbs it never spends a whole
 * climb confirming a poor local minimum before it looks elsewhere, and a
 * fast configuration that a climb would have passed by (moving on at its
 * first improving neighbour) still gets its other neighbours tried: an
 * isolated optimum is often one step from such a configuration, though
 * not from the minimum the climb ended in. (On the recorded convolution
 * spaces, over 400 seeds, the share within 10% of the optimum at 100
 * evaluations went from 0.47 to 0.69 on A100, 0.63 to 0.72 on A4000 and
 * 0.69 to 0.96 on A6000 against iterated hill climbing with restarts.)
 *
 *  - Move statistics. Every pair of evaluated configurations that differ in
 *    one parameter says what changing that parameter from one value to the
 *    other did (as a ratio of runtimes). Averaged over the run, these
 *    predict what a move will do elsewhere; a node proposes its neighbours
 *    in the order of that prediction, ties in a pseudo-random order of the
 *    configurations fixed per run.
 *
 *  - The probe. One-step moves do not reach everything: switches and tile
 *    shapes are not ordered in a useful way, and a block shape's width and
 *    height often must change together. Once the best configuration has
 *    stood for probe_after neighbourhoods' worth of evaluations, it is
 *    probed once: its edges (every block dimension at its largest, then
 *    at its smallest value), every value of every parameter, in
 *    predicted order, then moves of two parameters at once, built from
 *    its best single moves and ranked by the sum of their effects (at
 *    most half a neighbourhood of those). A better configuration found
 *    there becomes the node expanded next; where it is faster than the
 *    probed best by cut_gain or more, the probe ends there and the new
 *    best is probed next (the rest was ranked around the old best). A
 *    result within TIE_REL of the best is not a new best.
 *
 *  - A better first start: initial_sample configurations (the start,
 *    search/strategy/seed.h, first, then random ones) are the first nodes; the
 *    second is the edge seen from the first (every block
 *    dimension at its largest value), where single-configuration optima
 *    sit that one-step moves reach last. When every node is closed, a
 *    random configuration is the next.
 *
 *  - Block shapes. Where the space has two block dimensions, the probe
 *    also tries the best's width and height changed together at the same
 *    thread count, half or twice it (block 128x2 -> 32x4), which neither
 *    single moves nor pairs of the best single moves reach.
 *
 *  - Restarts. Once the best has stood for restart_after neighbourhoods'
 *    worth of evaluations (since it last changed or the last climb
 *    ended), a climb starts from a new configuration (the first at the
 *    largest block seen from the best, the others at the farthest from
 *    everything evaluated of restart_pool random ones, or every other
 *    one in a niche where niche_climbs is set, below) and moves
 *    to its first better neighbour, best predicted first, until a local
 *    minimum or a neighbourhood's worth of evaluations. Its nodes join the
 *    others, so a basin it finds that beats the best is expanded from
 *    then on: the budget is not spent in the first basin alone. A probe
 *    that falls due meanwhile comes between the climb's steps; only the
 *    climb's own steps move it on or spend it.
 *
 *  - Niches share the expansions. Two-valued parameters other than block
 *    dimensions (read-only loads, padding, shared memory, __restrict__)
 *    are switches: each setting of them (a niche) is a different code,
 *    with its own landscape over the rest. The node expanded is the
 *    fastest open node of one niche, the niche whose fastest open node is
 *    the fastest less a bonus of niche_ucb * s * sqrt(ln N / n) in log
 *    runtime (s the standard deviation of the log runtimes so far, N
 *    evaluations in all, n in the niche: UCB1's bound). Plain
 *    best-first spends the budget in the niche of the first fast
 *    configurations; on the A100 convolution space the optimum is in
 *    another one, with read-only loads on.
 *
 *  - Niche climbs (a setting, off in the standard ones). With
 *    niche_climbs, every other climb starts in the niche farthest from
 *    the best's (the most switches changed) not climbed yet, at the
 *    best's configuration with that niche's switches, and keeps them: a
 *    niche slow on average but holding the optimum (shared memory off on
 *    the RTX A4000 convolution space: 3-5x slower where the runs stopped)
 *    is one that neither the averaged move statistics nor the probe's
 *    single switch moves lead to, and a climb free to switch back
 *    returns to the best's niche at once.
 *
 *  - Costs against the clock (a setting, off in the standard ones).
 *    With a time limit and no evaluation budget, where the evaluator
 *    says what each result cost to try, cost_power ranks a node's
 *    neighbours and the probe's moves by predicted log slowdown plus
 *    cost_power times the configuration's predicted log seconds over
 *    their mean (cost_model.h, the model bayes uses), and a climb starts
 *    at the farthest candidate per predicted second. Best-first expands
 *    every neighbour of its fastest nodes sooner or later, so this
 *    delays dear moves more than it skips them: on the benchmark's time
 *    budget as many medians went down as up (docs/clock.md).
 *
 *  - Batches. The tuner asks for many proposals at once (its compile pool
 *    works ahead) and reports results one at a time. After each, the
 *    strategy checks whether the next proposal of the batch is still what
 *    it would propose now, and when it is not, asks for no more of the
 *    batch (default_enough); the rest is handed back. So a run evaluates
 *    the same configurations, in the same order, at any batch size, and
 *    the strategy benchmark (one proposal at a time) describes the tuner.
 *    Where a batch ends at a new best, the next starts around it: for
 *    each proposal, default_ahead names what that next start would be,
 *    for the tuner to compile beside the batch.
 *
 * No constant here depends on a kernel or a GPU: the limits scale with the
 * size of a configuration's neighbourhood.
 */
#include "default_internal.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* The settings: what each means is in the table below; why each has
 * the value it has (the runs that chose them) is in docs/strategies.md,
 * "Why the default's settings are what they are". */
const cutune__default_params cutune__default_params_std = {
    .initial_sample = 15,
    .probe_after = 1.0,
    .restart_after = 1.0,
    .climb_max = 1.0,
    .climb_any = 0,
    .restart_pool = 16,
    .probe_edges = 1,
    .probe_every = 0,
    .probe_cut = 2,
    .cut_gain = 0.05,
    .shapes_first = 0,
    .niche_climbs = 0,
    .niche_ucb = 1.0,
    .cost_power = 0,
};

#define FIELD(name) #name, offsetof(cutune__default_params, name)
static const cutune__setting default_table[] = {
    {FIELD(initial_sample), CUTUNE__SETTING_COUNT, 1, 1000, 0,
     "the first nodes: the start, then random configurations"},
    {FIELD(probe_after), CUTUNE__SETTING_REAL, 0, INFINITY, 0,
     "neighbourhoods' worth of evaluations the best stands before it is "
     "probed"},
    {FIELD(restart_after), CUTUNE__SETTING_REAL, 0, INFINITY, 1,
     "... before a climb from a new start"},
    {FIELD(climb_max), CUTUNE__SETTING_REAL, 0, INFINITY, 1,
     "a climb's length, in neighbourhoods"},
    {FIELD(climb_any), CUTUNE__SETTING_LEVEL, 0, 1, 0,
     "a climb moves one parameter to any value (1) or one step (0)"},
    {FIELD(restart_pool), CUTUNE__SETTING_COUNT, 0, 4096, 0,
     "a climb starts at the farthest of this many random configurations "
     "from those evaluated (1: at a random one)"},
    {FIELD(probe_edges), CUTUNE__SETTING_LEVEL, 0, 1, 0,
     "the probe of the best starts at its edges (block dimensions largest, "
     "smallest)"},
    {FIELD(probe_every), CUTUNE__SETTING_REAL, 0, INFINITY, 0,
     "the best is probed too once this many neighbourhoods' worth of "
     "evaluations have passed since the last probe began (0: never)"},
    {FIELD(probe_cut), CUTUNE__SETTING_LEVEL, 0, 2, 0,
     "a probe that finds a new best goes on to its end (0), ends there (1), "
     "or ends there and the new best is probed next (2)"},
    {FIELD(cut_gain), CUTUNE__SETTING_REAL, 0, INFINITY, 0,
     "... only where the new best is faster than the old by this share"},
    {FIELD(shapes_first), CUTUNE__SETTING_LEVEL, 0, 1, 0,
     "the probe's block shapes come right after its edges (1) or after its "
     "single moves (0)"},
    {FIELD(niche_ucb), CUTUNE__SETTING_REAL, 0, INFINITY, 0,
     "weight of the bonus that gives a niche evaluated less its expansions "
     "(0: plain best-first)"},
    {FIELD(niche_climbs), CUTUNE__SETTING_LEVEL, 0, 1, 0,
     "every other climb starts at the best with the switch values of the "
     "farthest niche not climbed yet"},
    {FIELD(cost_power), CUTUNE__SETTING_REAL, 0, 4, 0,
     "against the clock: moves ranked by predicted runtime ratio times "
     "predicted seconds to this power (0: costs ignored)"},
};
#undef FIELD

const cutune__settings cutune__default_settings = {
    "default", default_table, sizeof default_table / sizeof *default_table,
    &cutune__default_params_std};

int cutune__default_params_set(cutune__default_params *p, const char *name,
                               double value)
{
    return cutune__settings_set(&cutune__default_settings, p, name, value);
}

static void default_destroy(void *state)
{
    cutune__default_state *st = state;
    cutune__cost_model_free(&st->costs);
    free(st->order);
    free(st->batch);
    free(st->edge_param);
    free(st->switch_param);
    free(st->switches);
    free(st->niche_done);
    free(st->niche_n);
    free(st->niche_node);
    free(st->niche_prop);
    free(st->config);
    free(st->nbr);
    free(st->list);
    free(st->held);
    free(st->heap);
    free(st->probed);
    free(st->delta_count);
    free(st->delta_sum);
    free(st->stats_off);
    free(st->varying);
    cutune__history_free(&st->h);
    memset(st, 0, sizeof *st);
}

static int default_init(void *state, const cutune__strategy_ctx *ctx)
{
    cutune__default_state *st = state;
    const cutune__space *s = ctx->space;
    size_t n_stats = 0, list_cap;
    memset(st, 0, sizeof *st);
    st->space = s;
    st->rng = ctx->rng;
    st->n = cutune__space_size(s);
    st->n_params = cutune__space_param_count(s);
    st->start = ctx->start < st->n ? ctx->start : CUTUNE__NONE;
    st->prm = ctx->params ? *(const cutune__default_params *)ctx->params
                          : cutune__default_params_std;
    st->sample_left = st->prm.initial_sample;
    st->best = CUTUNE__NONE;
    st->first_random = CUTUNE__NONE;
    st->climb = CUTUNE__NONE;
    st->salt = ((uint64_t)gsl_rng_get(ctx->rng) << 32) ^ gsl_rng_get(ctx->rng);
    st->against_clock = ctx->budget == CUTUNE__UNLIMITED;
    if (cutune__history_init(&st->h, st->n))
        return -1;
    if (cutune__cost_model_init(&st->costs, s))
        goto fail;
    size_t np = st->n_params ? st->n_params : 1;
    st->varying = malloc(np * sizeof *st->varying);
    st->stats_off = malloc(np * sizeof *st->stats_off);
    st->config = malloc(np * sizeof *st->config);
    st->edge_param = calloc(np, sizeof *st->edge_param);
    st->switch_param = calloc(np, sizeof *st->switch_param);
    st->switches = malloc(NICHE_SWITCHES * sizeof *st->switches);
    if (!st->varying || !st->stats_off || !st->config || !st->edge_param ||
        !st->switch_param || !st->switches)
        goto fail;
    for (size_t p = 0; p < st->n_params; p++) {
        size_t nv = cutune__space_value_count(s, p);
        st->stats_off[p] = CUTUNE__NONE;
        if (nv < 2)
            continue;
        st->varying[st->n_varying++] = p;
        st->any_size += nv - 1;
        st->edge_param[p] = cutune__space_is_block_param(s, p);
        if (nv == 2 && !st->edge_param[p] && st->n_switch < NICHE_SWITCHES) {
            st->switch_param[p] = 1;
            st->switches[st->n_switch++] = p;
        }
        if (nv <= STATS_MAX_VALUES) {
            st->stats_off[p] = n_stats;
            n_stats += nv * nv;
        }
    }
    /* A probe: the ANY scan, then up to half a neighbourhood of pairs. */
    list_cap = 2 * st->any_size + 4 +
               (MAX_PAIRS > st->any_size ? MAX_PAIRS : st->any_size);
    size_t n_niches = (size_t)1 << st->n_switch;
    st->niche_done = calloc(n_niches, 1);
    st->niche_n = calloc(n_niches, sizeof *st->niche_n);
    st->niche_node = malloc(n_niches * sizeof *st->niche_node);
    st->niche_prop = malloc(n_niches * sizeof *st->niche_prop);
    st->delta_sum = calloc(n_stats ? n_stats : 1, sizeof *st->delta_sum);
    st->delta_count = calloc(n_stats ? n_stats : 1, sizeof *st->delta_count);
    st->probed = calloc(st->n ? st->n : 1, sizeof *st->probed);
    st->heap = malloc((st->n ? st->n : 1) * sizeof *st->heap);
    st->order = malloc((st->n ? st->n : 1) * sizeof *st->order);
    st->held = malloc((st->n ? st->n : 1) * sizeof *st->held);
    st->list = malloc(list_cap * sizeof *st->list);
    st->nbr = malloc((st->any_size ? st->any_size : 1) * sizeof *st->nbr);
    if (!st->delta_sum || !st->delta_count || !st->probed || !st->heap ||
        !st->held || !st->list || !st->nbr || !st->order || !st->niche_done ||
        !st->niche_n || !st->niche_node || !st->niche_prop)
        goto fail;
    return 0;
fail:
    default_destroy(st);
    return -1;
}
/* Whether the best configuration's probe is due. */
static int probe_due(const cutune__default_state *st)
{
    if (st->list_next < st->list_count || st->best == CUTUNE__NONE ||
        st->probed[st->best])
        return 0;
    if (st->prm.probe_cut == 2 && st->probe_cut)
        return 1; /* a probe that just found it ended there */
    double hood = (double)st->any_size;
    return (double)(st->h.n_done - st->last_better) >=
               st->prm.probe_after * hood ||
           (st->prm.probe_every > 0 &&
            (double)(st->h.n_done - st->probe_start) >=
                st->prm.probe_every * hood);
}

/* The climb is over: the wait for the next starts now. */
static void end_climb(cutune__default_state *st)
{
    st->climb = CUTUNE__NONE;
    st->climb_end = st->h.n_done;
}

/* Ends a climb that has nothing more to propose (a local minimum, or its
 * length spent). */
static void end_spent_climb(cutune__default_state *st)
{
    if (st->climb != CUTUNE__NONE &&
        cutune__default_climb_step(st) == CUTUNE__NONE)
        end_climb(st);
}

/* Whether a climb from a new start is due: no climb or probe under way,
 * and the best has stood for restart_after neighbourhoods' worth of
 * evaluations since it last changed or the last climb ended. */
static int restart_due(const cutune__default_state *st)
{
    if (st->climb != CUTUNE__NONE || st->best == CUTUNE__NONE ||
        st->sample_left > 0 || st->list_next < st->list_count ||
        st->batch_pos < st->probe_batch)
        return 0;
    size_t since =
        st->last_better > st->climb_end ? st->last_better : st->climb_end;
    return (double)(st->h.n_done - since) >=
           st->prm.restart_after * (double)st->any_size;
}

/* Where the next climb starts: the first at the edge seen from the best,
 * the others at random. CUTUNE__NONE when nothing is left. */
static size_t restart_point(cutune__default_state *st)
{
    size_t idx = CUTUNE__NONE;
    st->climb_frozen = 0;
    if (st->restarts == 0)
        idx = cutune__default_edge_of(st, st->best, 1);
    else if (st->prm.niche_climbs && st->restarts % 2 == 1) {
        idx = cutune__default_niche_start(st);
        st->climb_frozen = idx != CUTUNE__NONE;
    }
    return idx != CUTUNE__NONE ? idx : cutune__default_far_draw(st);
}

/* Proposes the start of a climb, alone (its steps depend on its result):
 * 1, or 0 when nothing is left. */
static size_t start_climb(cutune__default_state *st, size_t *out)
{
    size_t idx = restart_point(st);
    if (idx == CUTUNE__NONE)
        return 0;
    st->climb = idx;
    st->climb_evals = 0;
    st->restarts++;
    /* A niche's start may have been evaluated already: the climb goes on
     * from it. */
    if (cutune__history_is_taken(&st->h, idx))
        return 0;
    cutune__history_take(&st->h, idx);
    out[0] = idx;
    return 1;
}

/* The first sample: the start, then the edge seen from it, then random
 * configurations. */
static size_t next_sample(cutune__default_state *st, size_t *out, size_t cap)
{
    size_t k = 0;
    st->batch_len = st->batch_pos = st->probe_batch = 0;
    while (k < cap && st->sample_left > 0) {
        size_t idx = st->start;
        st->start = CUTUNE__NONE;
        /* The second is the edge seen from the first. */
        if (idx == CUTUNE__NONE &&
            st->sample_left + 1 == st->prm.initial_sample)
            idx = cutune__default_edge_of(st, st->sample_first, 1);
        if (idx == CUTUNE__NONE)
            idx = cutune__history_random_untaken(&st->h, st->rng);
        if (st->sample_left == st->prm.initial_sample)
            st->sample_first = idx;
        if (idx == CUTUNE__NONE)
            break;
        cutune__history_take(&st->h, idx);
        out[k++] = idx;
        st->sample_left--;
    }
    st->sample_batch = k;
    return k;
}

/* The probe of the best: its next configurations where one is under way
 * or falls due now; 0 when none is. */
static size_t next_probe(cutune__default_state *st, size_t *out, size_t cap)
{
    size_t k = 0;
    /* A probe whose remaining configurations are all taken is over:
     * whether another probe is due must not depend on whether the last
     * of them was skipped in this call or in an earlier batch. */
    while (st->list_next < st->list_count &&
           cutune__history_is_taken(&st->h, st->list[st->list_next].index))
        st->list_next++;
    if (probe_due(st)) {
        st->probe_cut = 0;
        cutune__default_load_probe(st, st->best);
        st->probe_start = st->h.n_done;
    }
    while (k < cap && st->list_next < st->list_count) {
        size_t idx = st->list[st->list_next++].index;
        if (cutune__history_is_taken(&st->h, idx))
            continue;
        cutune__history_take(&st->h, idx);
        out[k++] = idx;
    }
    st->probe_cut = 0;
    /* A batch is all probe or all expansion, so that a jump (see
     * default_enough) never cuts a probe short; only a new best found by
     * the probe itself does (probe_cut). */
    st->batch_len = st->batch_pos = 0;
    st->first_random = CUTUNE__NONE;
    st->probe_batch = k;
    return k;
}

/* The next neighbours of the open nodes (or a climb's steps), random
 * configurations where no node is open. */
static size_t next_expansions(cutune__default_state *st, size_t *out,
                              size_t cap)
{
    size_t k = 0;
    if (cap > st->batch_cap) {
        size_t *b = realloc(st->batch, cap * sizeof *b);
        if (b) {
            st->batch = b;
            st->batch_cap = cap;
        }
    }
    cutune__default_unhold(st);
    /* A batch takes the next neighbours of the same nodes, in order (at
     * least one, even if no memory was left to remember them); when no
     * node is open, random configurations. */
    size_t limit = cap < st->batch_cap ? cap : st->batch_cap;
    if (limit == 0)
        limit = 1;
    st->first_random = CUTUNE__NONE;
    /* A climb's batch holds its steps only: when it ends, the next
     * batch decides what comes after it. */
    int climbing = st->climb != CUTUNE__NONE;
    while (k < limit) {
        size_t idx = climbing ? cutune__default_climb_step(st)
                              : cutune__default_expand(st);
        if (idx == CUTUNE__NONE && climbing)
            break;
        if (idx == CUTUNE__NONE) {
            if (st->first_random == CUTUNE__NONE) {
                st->first_random = k;
                st->draws_before = st->draws;
            }
            idx = cutune__default_random_draw(st);
        }
        if (idx == CUTUNE__NONE)
            break;
        cutune__history_take(&st->h, idx);
        if (k < st->batch_cap)
            st->batch[k] = idx;
        out[k++] = idx;
    }
    st->batch_len = st->batch_cap ? k : 0;
    st->climb_batch = climbing;
    return k;
}

/* A batch: the first sample, else the probe, else a climb from a new
 * start where one is due, else expansions. */
static size_t default_next(void *state, size_t *out, size_t cap)
{
    cutune__default_state *st = state;
    if (st->h.n_taken >= st->n)
        return 0;
    st->sample_batch = 0;
    st->climb_batch = 0;
    if (st->sample_left > 0)
        return next_sample(st, out, cap);
    size_t k = next_probe(st, out, cap);
    if (k > 0)
        return k;
    end_spent_climb(st);
    if (restart_due(st) && (k = start_climb(st, out)) > 0)
        return k;
    end_spent_climb(st); /* a niche's, from an evaluated start */
    return next_expansions(st, out, cap);
}

/* What expand() would propose should `index` turn out the fastest node
 * (or the climb's node, during a climb): its untaken one-step neighbours,
 * best predicted first (ties in tie_order), at most AHEAD_MAX; in a
 * niche's climb only those that keep the niche. Reads the state only
 * (st->nbr is scratch). */
#define AHEAD_MAX 16
static size_t default_ahead(void *state, size_t index, size_t *out, size_t cap)
{
    cutune__default_state *st = state;
    double score[AHEAD_MAX];
    uint64_t order[AHEAD_MAX];
    size_t k = 0;
    if (index >= st->n)
        return 0;
    if (cap > AHEAD_MAX)
        cap = AHEAD_MAX;
    size_t m =
        cutune__default_neighbours(st, index, CUTUNE__NEIGHBOUR_ADJACENT);
    /* In a niche's climb, its next steps keep the niche. */
    int frozen = st->climb != CUTUNE__NONE && st->climb_frozen;
    for (size_t i = 0; i < m; i++) {
        size_t j = st->nbr[i];
        if (cutune__history_is_taken(&st->h, j) ||
            (frozen &&
             st->switch_param[cutune__default_differing_param(st, index, j)]))
            continue;
        double sc = cutune__default_move_score(st, index, j);
        uint64_t o = cutune__default_tie_order(st, j);
        size_t pos = k;
        while (pos > 0 && (sc < score[pos - 1] ||
                           (sc == score[pos - 1] && o < order[pos - 1])))
            pos--;
        if (pos >= cap)
            continue;
        if (k < cap)
            k++;
        for (size_t q = k - 1; q > pos; q--) {
            score[q] = score[q - 1];
            order[q] = order[q - 1];
            out[q] = out[q - 1];
        }
        score[pos] = sc;
        order[pos] = o;
        out[pos] = j;
    }
    return k;
}

/* Whether proposal `pos` of the last batch of expansions is still what
 * expand() would propose now that more results are in: the proposals
 * from there on are handed back for the question, and taken again. A
 * random draw (no node was open) stays right while none is open: one by
 * one, the same draw of the stream would come next. */
static int still_next(cutune__default_state *st, size_t pos)
{
    for (size_t i = pos; i < st->batch_len; i++)
        cutune__history_release(&st->h, st->batch[i]);
    cutune__default_unhold(st);
    int climbing = st->climb != CUTUNE__NONE;
    size_t now =
        climbing ? cutune__default_climb_step(st) : cutune__default_expand(st);
    for (size_t i = pos; i < st->batch_len; i++)
        cutune__history_take(&st->h, st->batch[i]);
    /* A climb that has nothing more to propose is over: what comes next
     * is decided afresh. */
    return now == st->batch[pos] || (now == CUTUNE__NONE && !climbing);
}

/* The driver tells a result's cost just before the result. */
static void default_cost(void *state, size_t index, double seconds)
{
    cutune__default_state *st = state;
    cutune__cost_model_tell(&st->costs, index, seconds);
}

static void default_report(void *state, size_t index, double objective)
{
    cutune__default_state *st = state;
    int fresh = index < st->n && !st->h.done[index];
    cutune__cost_model_settle(&st->costs, index, fresh);
    if (index >= st->n)
        return;
    cutune__history_report(&st->h, index, objective);
    if (!fresh)
        return;
    st->order[st->n_order++] = index;
    cutune__default_learn(st, index);
    double o = st->h.objective[index];
    st->niche_n[cutune__default_niche_of(st, index)]++;
    if (isfinite(o)) {
        if (st->spread_n == 0)
            st->spread_ref = o;
        double x = cutune__default_slowdown(o, st->spread_ref);
        st->spread_sum += x;
        st->spread_sq += x * x;
        st->spread_n++;
    }
    if (st->climb == index && !isfinite(o)) {
        end_climb(st);
    } else if (st->climb != CUTUNE__NONE && st->climb != index &&
               st->climb_batch) {
        st->climb_evals++;
        /* In flight, results come out of proposal order: one may come
         * before the climb's start has its own, and there is nothing
         * to compare with yet (its objective is unwritten). The climb
         * stays where it started. */
        if (isfinite(o) && st->h.done[st->climb] &&
            cutune__default_faster(o, st->h.objective[st->climb]))
            st->climb = index;
    }
    if (isfinite(o)) {
        cutune__default_heap_push(st, index);
        if (st->best == CUTUNE__NONE ||
            cutune__default_faster(o, st->h.objective[st->best])) {
            double gain = st->best == CUTUNE__NONE
                              ? 0
                              : st->h.objective[st->best] / o - 1;
            st->best = index;
            st->last_better = st->h.n_done;
            /* A probe that found a best faster by cut_gain or more
             * ends there: the rest of it was ranked around the old
             * best (probe_cut 2: the new best is probed next). */
            if (st->prm.probe_cut && st->batch_pos < st->probe_batch &&
                gain >= st->prm.cut_gain) {
                st->list_next = st->list_count;
                st->probe_cut = 1;
            }
        }
    }
    st->batch_pos++; /* results come in the order proposed */
}

/* A result after which the next proposal of the batch is no longer what
 * expand() would propose (a new fastest node, statistics that now rank
 * another neighbour first, a node opened where random draws were next),
 * or after which the probe is due, ends the batch: the rest is not
 * wanted. So the tuner measures exactly what proposals made one at a time
 * would have measured, while its compile pool still works ahead on the
 * whole batch. The first sample is never cut: one at a time it is
 * proposed whole before anything else, even where the probe falls due
 * inside it (a neighbourhood smaller than the sample, as transpose's). */
static int default_enough(void *state)
{
    cutune__default_state *st = state;
    if (st->batch_pos < st->sample_batch)
        return 0;
    /* Inside a probe's batch, the probe is not over even where its list
     * is all proposed: one at a time, the rest of the list would come
     * before another probe could fall due. */
    int in_probe = st->batch_pos < st->probe_batch;
    return (st->batch_pos < st->batch_len && !still_next(st, st->batch_pos)) ||
           (st->probe_cut && in_probe) || (!in_probe && probe_due(st)) ||
           restart_due(st);
}

/* A proposal handed back (the batch was cut, or the budget ran out before
 * it) is proposable again and no longer part of the batch. */
static void default_withdraw(void *state, size_t index)
{
    cutune__default_state *st = state;
    cutune__history_release(&st->h, index);
    for (size_t i = st->batch_pos; i < st->batch_len; i++)
        if (st->batch[i] == index) {
            memmove(st->batch + i, st->batch + i + 1,
                    (st->batch_len - i - 1) * sizeof *st->batch);
            st->batch_len--;
            /* A random draw handed back is undrawn, with every later one
             * (what is handed back is the end of a batch). */
            if (st->first_random != CUTUNE__NONE && i >= st->first_random) {
                uint64_t d = st->draws_before + (i - st->first_random);
                if (d < st->draws)
                    st->draws = d;
            } else if (st->first_random != CUTUNE__NONE) {
                st->first_random--;
            }
            break;
        }
}

const cutune__strategy_type cutune__strategy_default_type = {
    .name = "default",
    .state_size = sizeof(cutune__default_state),
    .init = default_init,
    .next = default_next,
    .report = default_report,
    .destroy = default_destroy,
    .enough = default_enough,
    .withdraw = default_withdraw,
    .ahead = default_ahead,
    .cost = default_cost,
    .async = 1,
};
const cutune__strategy_type *cutune__strategy_default =
    &cutune__strategy_default_type;
