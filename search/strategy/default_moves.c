/* The default strategy's moves: what evaluated neighbours teach about
 * changing a parameter, the open nodes by objective, the fixed-per-run
 * tie order and random stream, and the next one-step proposal.
 */
#include "default_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* How much slower a is than b, as a difference of logarithms (relative
 * for objectives that are not positive), so that a ratio learnt on one
 * configuration applies to another. */
double cutune__default_slowdown(double a, double b)
{
    if (a > 0 && b > 0)
        return log(a / b);
    return (a - b) / (fabs(b) > 1e-300 ? fabs(b) : 1e-300);
}

/* The one parameter in which neighbours a and b differ. */
size_t cutune__default_differing_param(const cutune__default_state *st,
                                       size_t a, size_t b)
{
    const uint32_t *ca = cutune__space_config(st->space, a);
    const uint32_t *cb = cutune__space_config(st->space, b);
    for (size_t i = 0; i < st->n_varying; i++) {
        size_t p = st->varying[i];
        if (ca[p] != cb[p])
            return p;
    }
    return CUTUNE__NONE;
}

size_t cutune__default_neighbours(cutune__default_state *st, size_t index,
                                  cutune__neighbour_kind kind)
{
    size_t m = cutune__space_neighbours(st->space, index, kind, st->nbr,
                                        st->any_size);
    return m < st->any_size ? m : st->any_size;
}

/* Adds what the new result at `index` says about moves to and from each
 * evaluated neighbour. */
void cutune__default_learn(cutune__default_state *st, size_t index)
{
    double f = st->h.objective[index];
    if (!isfinite(f))
        return;
    const uint32_t *ci = cutune__space_config(st->space, index);
    size_t m = cutune__default_neighbours(st, index, CUTUNE__NEIGHBOUR_ANY);
    for (size_t i = 0; i < m; i++) {
        size_t j = st->nbr[i];
        if (!st->h.done[j] || !isfinite(st->h.objective[j]))
            continue;
        size_t p = cutune__default_differing_param(st, index, j);
        if (p == CUTUNE__NONE || st->stats_off[p] == CUTUNE__NONE)
            continue;
        size_t nv = cutune__space_value_count(st->space, p);
        size_t a = cutune__space_config(st->space, j)[p], v = ci[p];
        double d = cutune__default_slowdown(f, st->h.objective[j]);
        size_t there = st->stats_off[p] + a * nv + v;
        size_t back = st->stats_off[p] + v * nv + a;
        st->delta_sum[there] += d;
        st->delta_count[there]++;
        st->delta_sum[back] -= d;
        st->delta_count[back]++;
    }
}

/* The predicted slowdown of moving configuration `from` to its neighbour
 * `to`; 0 (no better, no worse) with fewer than min_count (>= 1)
 * observations. */
double cutune__default_predicted(const cutune__default_state *st, size_t from,
                                 size_t to, uint32_t min_count, int *known)
{
    size_t p = cutune__default_differing_param(st, from, to);
    *known = 0;
    if (p == CUTUNE__NONE || st->stats_off[p] == CUTUNE__NONE)
        return 0;
    size_t nv = cutune__space_value_count(st->space, p);
    size_t e = st->stats_off[p] +
               cutune__space_config(st->space, from)[p] * nv +
               cutune__space_config(st->space, to)[p];
    if (st->delta_count[e] < min_count)
        return 0;
    *known = 1;
    return st->delta_sum[e] / st->delta_count[e];
}

/* What the predicted cost of trying `index` adds to a move's score
 * against the clock: cost_power times its predicted log seconds over
 * their mean, so that a score, a log slowdown plus this, ranks moves by
 * their predicted runtime ratio times their predicted relative seconds to
 * the power cost_power. A neighbour whose move is predicted as good as
 * another's but costs twice the seconds comes after it, and one predicted
 * 2^cost_power times faster evens the cost out. 0 with an evaluation
 * budget (the costs change nothing there), with cost_power 0, and before
 * two costs are known. */
double cutune__default_cost_penalty(const cutune__default_state *st,
                                    size_t index)
{
    if (!st->against_clock || st->prm.cost_power <= 0 || st->costs.n < 2)
        return 0;
    return st->prm.cost_power * cutune__cost_model_relative(&st->costs, index);
}

/* The score that ranks the move from `from` to its neighbour `to` (lower
 * first): its predicted slowdown (min_count 1), plus its predicted cost
 * against the clock. */
double cutune__default_move_score(const cutune__default_state *st, size_t from,
                                  size_t to)
{
    int known;
    double score = cutune__default_predicted(st, from, to, 1, &known);
    double penalty = cutune__default_cost_penalty(st, to);
    return penalty != 0 ? score + penalty : score;
}

int cutune__default_by_score(const void *a, const void *b)
{
    const cutune__default_ranked *x = a, *y = b;
    if (x->score < y->score)
        return -1;
    if (x->score > y->score)
        return 1;
    return x->order < y->order ? -1 : x->order > y->order;
}

/* Whether objective a beats b by more than a tie. */
int cutune__default_faster(double a, double b)
{
    if (!isfinite(b))
        return isfinite(a) || a < b;
    return a < b - TIE_REL * fabs(b);
}

/* Open nodes, fastest first (ties: lower index). */
static int node_before(const cutune__default_state *st, size_t a, size_t b)
{
    double x = st->h.objective[a], y = st->h.objective[b];
    return x < y || (x == y && a < b);
}

void cutune__default_heap_push(cutune__default_state *st, size_t index)
{
    size_t i = st->heap_len++;
    while (i > 0 && node_before(st, index, st->heap[(i - 1) / 2])) {
        st->heap[i] = st->heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    st->heap[i] = index;
}

/* Moves the node at heap position i down to its place. */
static void sift_down(cutune__default_state *st, size_t i)
{
    size_t x = st->heap[i];
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= st->heap_len)
            break;
        if (c + 1 < st->heap_len &&
            node_before(st, st->heap[c + 1], st->heap[c]))
            c++;
        if (!node_before(st, st->heap[c], x))
            break;
        st->heap[i] = st->heap[c];
        i = c;
    }
    st->heap[i] = x;
}

static void heap_pop(cutune__default_state *st)
{
    st->heap[0] = st->heap[--st->heap_len];
    if (st->heap_len > 0)
        sift_down(st, 0);
}

/* splitmix64's finaliser: a well-spread hash of a 64-bit number. */
uint64_t cutune__default_mix(uint64_t z)
{
    z += 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* A fixed pseudo-random order of the configurations for the run, to
 * break ties among predictions: unlike draws from the run's generator, it
 * does not depend on how many proposals came before, so expand() can be
 * asked again what it would propose. */
uint64_t cutune__default_tie_order(const cutune__default_state *st,
                                   size_t index)
{
    return cutune__default_mix((uint64_t)index + st->salt);
}

/* The next random untaken configuration when no node is open: draw number
 * `draws` of a stream fixed per run, so that draws handed back with a
 * batch can be taken back too (default_withdraw) and the stream does not
 * depend on the batch size. */
size_t cutune__default_random_draw(cutune__default_state *st)
{
    size_t left = st->n - st->h.n_taken;
    if (left == 0)
        return CUTUNE__NONE;
    uint64_t r = cutune__default_mix(st->draws++ ^ ~st->salt);
    return cutune__history_untaken_at(&st->h, (size_t)(r % left));
}

/* The untaken one-step neighbour of c, best predicted (ties in
 * tie_order); CUTUNE__NONE when none. *pending is set when a neighbour is
 * proposed but has no result yet. */
static size_t best_neighbour(cutune__default_state *st, size_t c,
                             cutune__neighbour_kind kind, int frozen,
                             int *pending)
{
    size_t best = CUTUNE__NONE;
    size_t m = cutune__default_neighbours(st, c, kind);
    double best_score = 0;
    uint64_t best_order = 0;
    *pending = 0;
    for (size_t i = 0; i < m; i++) {
        size_t j = st->nbr[i];
        if (frozen &&
            st->switch_param[cutune__default_differing_param(st, c, j)])
            continue;
        if (cutune__history_is_taken(&st->h, j)) {
            *pending |= !st->h.done[j];
            continue;
        }
        double score = cutune__default_move_score(st, c, j);
        uint64_t order = cutune__default_tie_order(st, j);
        if (best == CUTUNE__NONE || score < best_score ||
            (score == best_score && order < best_order)) {
            best = j;
            best_score = score;
            best_order = order;
        }
    }
    return best;
}

/* The spread of the results so far: the standard deviation of their log
 * runtimes (0 before two). */
double cutune__default_spread(const cutune__default_state *st)
{
    if (st->spread_n < 2)
        return 0;
    double m = st->spread_sum / (double)st->spread_n;
    double v = st->spread_sq / (double)st->spread_n - m * m;
    return v > 0 ? sqrt(v) : 0;
}

/* Best-first across niches: the node expanded is the fastest open node
 * of the niche whose fastest open node, less a bonus that shrinks as the
 * niche is evaluated more, is the fastest (an upper confidence bound, as
 * in UCB1, on log runtimes). A niche is a different code: its landscape
 * over blocks and tiles is its own, and a few results from it say little
 * about its best. Plain best-first stays in the niche of the best so far
 * and finds another niche's optimum only where a probe or a climb lands
 * near it (docs/strategies.md, "Niches share the expansions"). The bonus
 * is in units of the spread of the results, so that it is the same on a
 * space whose configurations are all within a few percent (dedispersion)
 * as on one where they differ threefold (convolution): a bonus in plain
 * log runtime outweighs every difference of the first and spreads its
 * expansions evenly over its niches. Closed nodes met on the way leave
 * the heap (to `held` while a neighbour is only proposed). CUTUNE__NONE when
 * no node is open. */
static size_t niche_expand(cutune__default_state *st)
{
    size_t n_niches = (size_t)1 << st->n_switch;
    size_t *node = st->niche_node, *prop = st->niche_prop;
    for (size_t c = 0; c < n_niches; c++)
        node[c] = prop[c] = CUTUNE__NONE;
    size_t kept = 0, len = st->heap_len;
    for (size_t i = 0; i < len; i++) {
        size_t x = st->heap[i];
        size_t c = cutune__default_niche_of(st, x);
        if (node[c] != CUTUNE__NONE && !node_before(st, x, node[c])) {
            st->heap[kept++] = x;
            continue;
        }
        int pending;
        size_t b =
            best_neighbour(st, x, CUTUNE__NEIGHBOUR_ADJACENT, 0, &pending);
        if (b == CUTUNE__NONE) {
            if (pending)
                st->held[st->held_len++] = x;
            continue;
        }
        st->heap[kept++] = x;
        node[c] = x;
        prop[c] = b;
    }
    if (kept < len) {
        st->heap_len = kept;
        for (size_t i = kept / 2; i-- > 0;)
            sift_down(st, i);
    }
    double best_o = st->best != CUTUNE__NONE ? st->h.objective[st->best] : 0;
    double log_n = log(st->h.n_done > 2 ? (double)st->h.n_done : 2.0);
    double bonus = st->prm.niche_ucb * cutune__default_spread(st);
    size_t pick = CUTUNE__NONE;
    double pick_score = 0;
    for (size_t c = 0; c < n_niches; c++) {
        if (node[c] == CUTUNE__NONE)
            continue;
        double seen = st->niche_n[c] > 0 ? (double)st->niche_n[c] : 1.0;
        double score =
            cutune__default_slowdown(st->h.objective[node[c]], best_o) -
            bonus * sqrt(log_n / seen);
        if (pick == CUTUNE__NONE || score < pick_score) {
            pick = c;
            pick_score = score;
        }
    }
    return pick == CUTUNE__NONE ? CUTUNE__NONE : prop[pick];
}

/* The untaken one-step neighbour, best predicted (ties in tie_order), of
 * the fastest open node (with niches, of the niche niche_expand
 * chooses); nodes found closed on the way leave the heap (to
 * `held` while a neighbour is only proposed). CUTUNE__NONE when no node is
 * open. */
size_t cutune__default_expand(cutune__default_state *st)
{
    if (st->prm.niche_ucb > 0 && st->n_switch > 0)
        return niche_expand(st);
    while (st->heap_len > 0) {
        size_t c = st->heap[0];
        int pending;
        size_t best =
            best_neighbour(st, c, CUTUNE__NEIGHBOUR_ADJACENT, 0, &pending);
        if (best != CUTUNE__NONE)
            return best;
        heap_pop(st);
        if (pending)
            st->held[st->held_len++] = c;
    }
    return CUTUNE__NONE;
}

/* The next step of the climb: the best predicted untaken neighbour of
 * the climb's node, while the climb has budget left. CUTUNE__NONE when the
 * climb is over (a local minimum: every neighbour taken). */
size_t cutune__default_climb_step(cutune__default_state *st)
{
    int pending;
    if (st->climb == CUTUNE__NONE ||
        (double)st->climb_evals >= st->prm.climb_max * (double)st->any_size)
        return CUTUNE__NONE;
    return best_neighbour(st, st->climb,
                          st->prm.climb_any ? CUTUNE__NEIGHBOUR_ANY
                                            : CUTUNE__NEIGHBOUR_ADJACENT,
                          st->climb_frozen, &pending);
}

/* Held nodes back into the heap: the proposals that closed them have been
 * answered or handed back. */
void cutune__default_unhold(cutune__default_state *st)
{
    while (st->held_len > 0)
        cutune__default_heap_push(st, st->held[--st->held_len]);
}
