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
 *    stood for twice as many evaluations as a configuration has
 *    neighbours, it is probed once: every value of every parameter, in
 *    predicted order, then moves of two parameters at once, built from
 *    its best single moves and ranked by the sum of their effects (at most
 *    half a neighbourhood of those). A better configuration found there
 *    becomes the node expanded next. A result within TIE_REL of the best
 *    is not a new best.
 *
 *  - A better first start: a few random configurations (the
 *    occupancy-seeded start among them, evaluated first) are the first
 *    nodes; the second is the edge seen from the first (every block
 *    dimension at its largest value), where single-configuration optima
 *    sit that one-step moves reach last. When every node is closed, a
 *    random configuration is the next.
 *
 *  - Block shapes. Where the space has two block dimensions, the probe
 *    also tries the best's width and height changed together at the same
 *    thread count, half or twice it (block 128x2 -> 32x4), which neither
 *    single moves nor pairs of the best single moves reach.
 *
 *  - Restarts. Once the best has stood for RESTART_AFTER neighbourhoods'
 *    worth of evaluations (since it last changed or the last climb
 *    ended), a climb starts from a new configuration (the first at the
 *    largest block seen from the best, the others at random) and moves
 *    to its first better neighbour, best predicted first, until a local
 *    minimum or a neighbourhood's worth of evaluations. Its nodes join the
 *    others, so a basin it finds that beats the best is expanded from
 *    then on: the budget is not spent in the first basin alone.
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
#include "strategy.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_randist.h>

#include "history.h"

/* Random configurations evaluated first. */
#define INITIAL_SAMPLE 5
/* The best configuration is probed once it has stood for this many
 * neighbourhoods' worth of evaluations. */
#define PROBE_AFTER_NEIGHBOURHOODS 2
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
/* A climb from a new start is due once the best has stood for this many
 * neighbourhoods' worth of evaluations since it last changed or the last
 * climb ended (see restart_due). One neighbourhood cost A100 convolution
 * its median at 100 and 200 evaluations (0.931 -> 0.773, 1.000 -> 0.931,
 * 60 seeds); two left every space of bench/spaces within noise of no
 * restarts at all, three the same as two. */
#define RESTART_AFTER 2.0
/* A climb ends after this share of a neighbourhood's worth of
 * evaluations, or at a local minimum. */
#define CLIMB_MAX 1.0

typedef struct ranked {
    double score;
    size_t index;
    size_t order; /* tie-break: place in a shuffle, or the index */
} ranked;

typedef struct default_state {
    cutune__history h;
    const cutune__space *space;
    gsl_rng *rng;
    size_t n;
    size_t n_params;
    size_t start;
    size_t *varying; /* parameters with more than one value */
    size_t n_varying;
    size_t any_size; /* neighbours of a configuration, at most */

    /* Move statistics: for parameter p with stats_off[p] != SIZE_MAX,
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

    size_t sample_left; /* of the initial sample, still to propose */
    size_t sample_first; /* its first configuration */
    size_t best;        /* the best result; a tie keeps the earlier one */
    size_t last_better; /* evaluations reported when the best last changed */
    size_t *batch;      /* batch_cap: the last batch of expansions */
    size_t batch_cap;
    size_t batch_len;      /* proposals of the last batch */
    size_t batch_pos;      /* of them, results reported */
    size_t probe_batch;    /* proposals of the last batch, when a probe */
    uint64_t salt;         /* ties among predictions, fixed per run */
    uint64_t draws;        /* random configurations drawn (random_draw) */
    size_t first_random;   /* in the batch, the first random draw: from
                              there on all are (no node was open) */
    uint64_t draws_before; /* draws before that one */
    ranked *list;          /* the probe being proposed */
    size_t list_count;
    size_t list_next;

    /* Restarts: a climb from a new start, so that the budget is spread
     * over basins instead of staying around the first fast one. */
    size_t climb;        /* the node climbed from; SIZE_MAX: none */
    size_t climb_evals;  /* evaluations of the current climb */
    size_t climb_end;    /* evaluations when the last climb ended */
    size_t restarts;     /* climbs started */
    unsigned char *edge_param; /* n_params: block-size parameters */

    size_t *nbr;      /* any_size: scratch neighbours */
    uint32_t *config; /* n_params: scratch configuration */
} default_state;

static void default_destroy(void *state)
{
    default_state *st = state;
    free(st->batch);
    free(st->edge_param);
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

/* Whether a parameter is a thread block dimension (Kernel Tuner's and
 * cutune's naming: block_size_x/y/z), whose largest value is an edge of
 * the space where optima sit more often than a random start would find. */
static int is_block_param(const char *name)
{
    return name && strncmp(name, "block_size_", 11) == 0;
}

static int default_init(void *state, const cutune__strategy_ctx *ctx)
{
    default_state *st = state;
    const cutune__space *s = ctx->space;
    size_t n_stats = 0, list_cap;
    memset(st, 0, sizeof *st);
    st->space = s;
    st->rng = ctx->rng;
    st->n = cutune__space_size(s);
    st->n_params = cutune__space_param_count(s);
    st->start = ctx->start < st->n ? ctx->start : SIZE_MAX;
    st->sample_left = INITIAL_SAMPLE;
    st->best = SIZE_MAX;
    st->first_random = SIZE_MAX;
    st->climb = SIZE_MAX;
    st->salt = ((uint64_t)gsl_rng_get(ctx->rng) << 32) ^ gsl_rng_get(ctx->rng);
    if (cutune__history_init(&st->h, st->n))
        return -1;
    size_t np = st->n_params ? st->n_params : 1;
    st->varying = malloc(np * sizeof *st->varying);
    st->stats_off = malloc(np * sizeof *st->stats_off);
    st->config = malloc(np * sizeof *st->config);
    st->edge_param = calloc(np, sizeof *st->edge_param);
    if (!st->varying || !st->stats_off || !st->config || !st->edge_param)
        goto fail;
    for (size_t p = 0; p < st->n_params; p++) {
        size_t nv = cutune__space_value_count(s, p);
        st->stats_off[p] = SIZE_MAX;
        if (nv < 2)
            continue;
        st->varying[st->n_varying++] = p;
        st->any_size += nv - 1;
        st->edge_param[p] = is_block_param(cutune__space_param_name(s, p));
        if (nv <= STATS_MAX_VALUES) {
            st->stats_off[p] = n_stats;
            n_stats += nv * nv;
        }
    }
    /* A probe: the ANY scan, then up to half a neighbourhood of pairs. */
    list_cap = 2 * st->any_size +
               (MAX_PAIRS > st->any_size ? MAX_PAIRS : st->any_size);
    st->delta_sum = calloc(n_stats ? n_stats : 1, sizeof *st->delta_sum);
    st->delta_count = calloc(n_stats ? n_stats : 1, sizeof *st->delta_count);
    st->probed = calloc(st->n ? st->n : 1, sizeof *st->probed);
    st->heap = malloc((st->n ? st->n : 1) * sizeof *st->heap);
    st->held = malloc((st->n ? st->n : 1) * sizeof *st->held);
    st->list = malloc(list_cap * sizeof *st->list);
    st->nbr = malloc((st->any_size ? st->any_size : 1) * sizeof *st->nbr);
    if (!st->delta_sum || !st->delta_count || !st->probed || !st->heap ||
        !st->held || !st->list || !st->nbr)
        goto fail;
    return 0;
fail:
    default_destroy(st);
    return -1;
}
/* How much slower a is than b, as a difference of logarithms (relative
 * for objectives that are not positive), so that a ratio learnt on one
 * configuration applies to another. */
static double slowdown(double a, double b)
{
    if (a > 0 && b > 0)
        return log(a / b);
    return (a - b) / (fabs(b) > 1e-300 ? fabs(b) : 1e-300);
}

/* The one parameter in which neighbours a and b differ. */
static size_t differing_param(const default_state *st, size_t a, size_t b)
{
    const uint32_t *ca = cutune__space_config(st->space, a);
    const uint32_t *cb = cutune__space_config(st->space, b);
    for (size_t i = 0; i < st->n_varying; i++) {
        size_t p = st->varying[i];
        if (ca[p] != cb[p])
            return p;
    }
    return SIZE_MAX;
}

static size_t neighbours(default_state *st, size_t index,
                         cutune__neighbour_kind kind)
{
    size_t m = cutune__space_neighbours(st->space, index, kind, st->nbr,
                                        st->any_size);
    return m < st->any_size ? m : st->any_size;
}

/* Adds what the new result at `index` says about moves to and from each
 * evaluated neighbour. */
static void learn(default_state *st, size_t index)
{
    double f = st->h.objective[index];
    if (!isfinite(f))
        return;
    const uint32_t *ci = cutune__space_config(st->space, index);
    size_t m = neighbours(st, index, CUTUNE__NEIGHBOUR_ANY);
    for (size_t i = 0; i < m; i++) {
        size_t j = st->nbr[i];
        if (!st->h.done[j] || !isfinite(st->h.objective[j]))
            continue;
        size_t p = differing_param(st, index, j);
        if (p == SIZE_MAX || st->stats_off[p] == SIZE_MAX)
            continue;
        size_t nv = cutune__space_value_count(st->space, p);
        size_t a = cutune__space_config(st->space, j)[p], v = ci[p];
        double d = slowdown(f, st->h.objective[j]);
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
static double predicted(const default_state *st, size_t from, size_t to,
                        uint32_t min_count, int *known)
{
    size_t p = differing_param(st, from, to);
    *known = 0;
    if (p == SIZE_MAX || st->stats_off[p] == SIZE_MAX)
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

static int by_score(const void *a, const void *b)
{
    const ranked *x = a, *y = b;
    if (x->score < y->score)
        return -1;
    if (x->score > y->score)
        return 1;
    return x->order < y->order ? -1 : x->order > y->order;
}

/* Whether objective a beats b by more than a tie. */
static int faster(double a, double b)
{
    if (!isfinite(b))
        return isfinite(a) || a < b;
    return a < b - TIE_REL * fabs(b);
}

/* Open nodes, fastest first (ties: lower index). */
static int node_before(const default_state *st, size_t a, size_t b)
{
    double x = st->h.objective[a], y = st->h.objective[b];
    return x < y || (x == y && a < b);
}

static void heap_push(default_state *st, size_t index)
{
    size_t i = st->heap_len++;
    while (i > 0 && node_before(st, index, st->heap[(i - 1) / 2])) {
        st->heap[i] = st->heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    st->heap[i] = index;
}

static void heap_pop(default_state *st)
{
    size_t last = st->heap[--st->heap_len], i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= st->heap_len)
            break;
        if (c + 1 < st->heap_len &&
            node_before(st, st->heap[c + 1], st->heap[c]))
            c++;
        if (!node_before(st, st->heap[c], last))
            break;
        st->heap[i] = st->heap[c];
        i = c;
    }
    if (st->heap_len > 0)
        st->heap[i] = last;
}

/* splitmix64's finaliser: a well-spread hash of a 64-bit number. */
static uint64_t mix(uint64_t z)
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
static uint64_t tie_order(const default_state *st, size_t index)
{
    return mix((uint64_t)index + st->salt);
}

/* The next random untaken configuration when no node is open: draw number
 * `draws` of a stream fixed per run, so that draws handed back with a
 * batch can be taken back too (default_withdraw) and the stream does not
 * depend on the batch size. */
static size_t random_draw(default_state *st)
{
    size_t left = st->n - st->h.n_taken;
    if (left == 0)
        return SIZE_MAX;
    uint64_t r = mix(st->draws++ ^ ~st->salt);
    return cutune__history_untaken_at(&st->h, (size_t)(r % left));
}

/* The untaken one-step neighbour of c, best predicted (ties in
 * tie_order); SIZE_MAX when none. *pending is set when a neighbour is
 * proposed but has no result yet. */
static size_t best_neighbour(default_state *st, size_t c, int *pending)
{
    size_t best = SIZE_MAX;
    size_t m = neighbours(st, c, CUTUNE__NEIGHBOUR_ADJACENT);
    double best_score = 0;
    uint64_t best_order = 0;
    *pending = 0;
    for (size_t i = 0; i < m; i++) {
        size_t j = st->nbr[i];
        int known;
        if (cutune__history_is_taken(&st->h, j)) {
            *pending |= !st->h.done[j];
            continue;
        }
        double score = predicted(st, c, j, 1, &known);
        uint64_t order = tie_order(st, j);
        if (best == SIZE_MAX || score < best_score ||
            (score == best_score && order < best_order)) {
            best = j;
            best_score = score;
            best_order = order;
        }
    }
    return best;
}

/* The untaken one-step neighbour, best predicted (ties in tie_order), of
 * the fastest open node; nodes found closed on the way leave the heap (to
 * `held` while a neighbour is only proposed). SIZE_MAX when no node is
 * open. */
static size_t expand(default_state *st)
{
    while (st->heap_len > 0) {
        size_t c = st->heap[0];
        int pending;
        size_t best = best_neighbour(st, c, &pending);
        if (best != SIZE_MAX)
            return best;
        heap_pop(st);
        if (pending)
            st->held[st->held_len++] = c;
    }
    return SIZE_MAX;
}

/* The next step of the climb: the best predicted untaken neighbour of
 * the climb's node, while the climb has budget left. SIZE_MAX when the
 * climb is over (a local minimum: every neighbour taken). */
static size_t climb_step(default_state *st)
{
    int pending;
    if (st->climb == SIZE_MAX ||
        (double)st->climb_evals >= CLIMB_MAX * (double)st->any_size)
        return SIZE_MAX;
    return best_neighbour(st, st->climb, &pending);
}

/* Held nodes back into the heap: the proposals that closed them have been
 * answered or handed back. */
static void unhold(default_state *st)
{
    while (st->held_len > 0)
        heap_push(st, st->held[--st->held_len]);
}

/* The learnt effect of moving parameter p from value a to v (0 unknown). */
static double move_effect(const default_state *st, size_t p, uint32_t a,
                          uint32_t v)
{
    if (st->stats_off[p] == SIZE_MAX || a == v)
        return 0;
    size_t nv = cutune__space_value_count(st->space, p);
    size_t e = st->stats_off[p] + a * nv + v;
    return st->delta_count[e] ? st->delta_sum[e] / st->delta_count[e] : 0;
}

static int64_t int_value(const default_state *st, size_t p, uint32_t v)
{
    const cutune__value *x = cutune__space_value(st->space, p, v);
    return x && x->type == CUTUNE__V_INT ? x->u.i : 0;
}

/* Block shapes of b: where the space has two block dimensions, the
 * untaken configurations like b but for those two, with as many threads
 * as b, half or twice as many (a width and height that change together,
 * which neither single nor most pair moves reach), by the sum of their
 * learnt effects; inserted after the first n_any of the probe, at most
 * half a neighbourhood of them. */
static void add_shapes(default_state *st, size_t b, size_t n_any)
{
    size_t px = SIZE_MAX, py = SIZE_MAX, n_shapes = 0;
    for (size_t p = 0; p < st->n_params; p++)
        if (st->edge_param[p] && px == SIZE_MAX)
            px = p;
        else if (st->edge_param[p] && py == SIZE_MAX)
            py = p;
    if (py == SIZE_MAX)
        return;
    const uint32_t *cb = cutune__space_config(st->space, b);
    int64_t threads = int_value(st, px, cb[px]) * int_value(st, py, cb[py]);
    size_t nx = cutune__space_value_count(st->space, px);
    size_t ny = cutune__space_value_count(st->space, py);
    size_t cap = (st->any_size + 1) / 2;
    ranked *shapes = st->list + st->list_count;
    for (uint32_t x = 0; x < nx; x++)
        for (uint32_t y = 0; y < ny; y++) {
            int64_t t = int_value(st, px, x) * int_value(st, py, y);
            size_t idx;
            if ((x == cb[px] || y == cb[py]) ||
                (t != threads && 2 * t != threads && t != 2 * threads))
                continue;
            memcpy(st->config, cb, st->n_params * sizeof *st->config);
            st->config[px] = x;
            st->config[py] = y;
            if (!cutune__space_index_of(st->space, st->config, &idx) ||
                cutune__history_is_taken(&st->h, idx))
                continue;
            ranked *r = &shapes[n_shapes++];
            r->score = move_effect(st, px, cb[px], x) +
                       move_effect(st, py, cb[py], y);
            r->index = idx;
            r->order = idx;
        }
    qsort(shapes, n_shapes, sizeof *shapes, by_score);
    if (n_shapes > cap)
        n_shapes = cap;
    /* After the single moves, before the pairs. */
    size_t n_pairs = st->list_count - n_any;
    ranked *tmp = malloc((n_pairs ? n_pairs : 1) * sizeof *tmp);
    if (!tmp)
        return;
    memcpy(tmp, st->list + n_any, n_pairs * sizeof *tmp);
    memmove(st->list + n_any, shapes, n_shapes * sizeof *shapes);
    memcpy(st->list + n_any + n_shapes, tmp, n_pairs * sizeof *tmp);
    free(tmp);
    st->list_count += n_shapes;
}

/* The probe of b: its untaken neighbours of any one parameter that are
 * not one step away, by predicted slowdown (ties at random); then pair
 * moves, two of its best evaluated single moves (in different
 * parameters) at once, by the sum of their slowdowns, at most half a
 * neighbourhood of them. */
static void load_probe(default_state *st, size_t b)
{
    ranked singles[PAIR_SINGLES + 1];
    size_t n_singles = 0, n_any;
    double fb = st->h.objective[b];
    const uint32_t *cb = cutune__space_config(st->space, b);
    size_t m = neighbours(st, b, CUTUNE__NEIGHBOUR_ANY);

    st->probed[b] = 1;
    st->list_count = st->list_next = 0;
    if (m > 1)
        gsl_ran_shuffle(st->rng, st->nbr, m, sizeof *st->nbr);
    for (size_t i = 0; i < m; i++) {
        size_t j = st->nbr[i];
        int known;
        if (cutune__history_is_taken(&st->h, j))
            continue;
        size_t p = differing_param(st, b, j);
        uint32_t a = cb[p], v = cutune__space_config(st->space, j)[p];
        if (a + 1 == v || v + 1 == a)
            continue;
        ranked *r = &st->list[st->list_count];
        r->score = predicted(st, b, j, 1, &known);
        r->index = j;
        r->order = st->list_count++;
    }
    qsort(st->list, st->list_count, sizeof *st->list, by_score);
    n_any = st->list_count;

    /* The best PAIR_SINGLES evaluated single moves, by insertion: m is
     * small. Those just listed are not evaluated yet; pairs are built
     * from what is known now. */
    for (size_t i = 0; i < m; i++) {
        size_t j = st->nbr[i];
        if (!st->h.done[j] || !isfinite(st->h.objective[j]))
            continue;
        ranked r = {slowdown(st->h.objective[j], fb), j, j};
        size_t pos = n_singles;
        while (pos > 0 && by_score(&r, &singles[pos - 1]) < 0) {
            singles[pos] = singles[pos - 1];
            pos--;
        }
        singles[pos] = r;
        if (n_singles < PAIR_SINGLES)
            n_singles++;
    }
    ranked *pairs = st->list + n_any;
    size_t n_pairs = 0;
    for (size_t a = 0; a < n_singles; a++) {
        size_t pa = differing_param(st, b, singles[a].index);
        for (size_t c = a + 1; c < n_singles; c++) {
            size_t pc = differing_param(st, b, singles[c].index);
            size_t idx;
            if (pa == pc || pa == SIZE_MAX || pc == SIZE_MAX)
                continue;
            memcpy(st->config, cb, st->n_params * sizeof *st->config);
            st->config[pa] =
                cutune__space_config(st->space, singles[a].index)[pa];
            st->config[pc] =
                cutune__space_config(st->space, singles[c].index)[pc];
            if (!cutune__space_index_of(st->space, st->config, &idx) ||
                cutune__history_is_taken(&st->h, idx))
                continue;
            ranked *r = &pairs[n_pairs++];
            r->score = singles[a].score + singles[c].score;
            r->index = idx;
            r->order = idx;
        }
    }
    qsort(pairs, n_pairs, sizeof *pairs, by_score);
    if (n_pairs > (st->any_size + 1) / 2)
        n_pairs = (st->any_size + 1) / 2;
    st->list_count = n_any + n_pairs;
    add_shapes(st, b, n_any);
}

/* Whether the best configuration's probe is due. */
static int probe_due(const default_state *st)
{
    return st->list_next >= st->list_count && st->best != SIZE_MAX &&
           !st->probed[st->best] &&
           st->h.n_done - st->last_better >=
               PROBE_AFTER_NEIGHBOURHOODS * st->any_size;
}

/* Whether a climb from a new start is due: no climb or probe under way,
 * and the best has stood for RESTART_AFTER neighbourhoods' worth of
 * evaluations since it last changed or the last climb ended. */
static int restart_due(const default_state *st)
{
    if (st->climb != SIZE_MAX || st->best == SIZE_MAX ||
        st->sample_left > 0 || st->list_next < st->list_count ||
        st->batch_pos < st->probe_batch)
        return 0;
    size_t since =
        st->last_better > st->climb_end ? st->last_better : st->climb_end;
    return (double)(st->h.n_done - since) >=
           RESTART_AFTER * (double)st->any_size;
}

/* The edge of the space that one-step moves reach last, seen from
 * `from`: its configuration with every block dimension at its largest
 * value, or the valid configuration nearest to that. SIZE_MAX when that is
 * `from` itself or already taken. */
static size_t edge_of(default_state *st, size_t from)
{
    int any = 0;
    memcpy(st->config, cutune__space_config(st->space, from),
           st->n_params * sizeof *st->config);
    for (size_t p = 0; p < st->n_params; p++)
        if (st->edge_param[p]) {
            uint32_t last =
                (uint32_t)cutune__space_value_count(st->space, p) - 1;
            any |= st->config[p] != last;
            st->config[p] = last;
        }
    size_t idx = any ? cutune__space_nearest(st->space, st->config)
                     : SIZE_MAX;
    if (idx == SIZE_MAX || cutune__history_is_taken(&st->h, idx))
        return SIZE_MAX;
    return idx;
}

/* Where the next climb starts: the first at the edge seen from the best,
 * the others at random. SIZE_MAX when nothing is left. */
static size_t restart_point(default_state *st)
{
    size_t idx = SIZE_MAX;
    if (st->restarts == 0)
        idx = edge_of(st, st->best);
    return idx != SIZE_MAX ? idx : random_draw(st);
}

/* Proposes the start of a climb, alone (its steps depend on its result):
 * 1, or 0 when nothing is left. */
static size_t start_climb(default_state *st, size_t *out)
{
    size_t idx = restart_point(st);
    if (idx == SIZE_MAX)
        return 0;
    cutune__history_take(&st->h, idx);
    st->climb = idx;
    st->climb_evals = 0;
    st->restarts++;
    out[0] = idx;
    return 1;
}

static size_t default_next(void *state, size_t *out, size_t cap)
{
    default_state *st = state;
    size_t k = 0;
    if (st->h.n_taken >= st->n)
        return 0;
    if (st->sample_left > 0) {
        while (k < cap && st->sample_left > 0) {
            size_t idx = st->start;
            st->start = SIZE_MAX;
            /* The second is the edge seen from the first. */
            if (idx == SIZE_MAX && st->sample_left + 1 == INITIAL_SAMPLE)
                idx = edge_of(st, st->sample_first);
            if (idx == SIZE_MAX)
                idx = cutune__history_random_untaken(&st->h, st->rng);
            if (st->sample_left == INITIAL_SAMPLE)
                st->sample_first = idx;
            if (idx == SIZE_MAX)
                break;
            cutune__history_take(&st->h, idx);
            out[k++] = idx;
            st->sample_left--;
        }
        return k;
    }
    if (probe_due(st))
        load_probe(st, st->best);
    while (k < cap && st->list_next < st->list_count) {
        size_t idx = st->list[st->list_next++].index;
        if (cutune__history_is_taken(&st->h, idx))
            continue;
        cutune__history_take(&st->h, idx);
        out[k++] = idx;
    }
    /* A batch is all probe or all expansion, so that a jump (see
     * default_enough) never cuts a probe short. */
    st->batch_len = st->batch_pos = 0;
    st->first_random = SIZE_MAX;
    st->probe_batch = k;
    if (k > 0)
        return k;
    if (st->climb != SIZE_MAX && climb_step(st) == SIZE_MAX) {
        st->climb = SIZE_MAX;
        st->climb_end = st->h.n_done;
    }
    if (restart_due(st) && (k = start_climb(st, out)) > 0)
        return k;
    if (cap > st->batch_cap) {
        size_t *b = realloc(st->batch, cap * sizeof *b);
        if (b) {
            st->batch = b;
            st->batch_cap = cap;
        }
    }
    unhold(st);
    /* A batch takes the next neighbours of the same nodes, in order (at
     * least one, even if no memory was left to remember them); when no
     * node is open, random configurations. */
    size_t limit = cap < st->batch_cap ? cap : st->batch_cap;
    if (limit == 0)
        limit = 1;
    st->first_random = SIZE_MAX;
    /* A climb's batch holds its steps only: when it ends, the next
     * batch decides what comes after it. */
    int climbing = st->climb != SIZE_MAX;
    while (k < limit) {
        size_t idx = climbing ? climb_step(st) : expand(st);
        if (idx == SIZE_MAX && climbing)
            break;
        if (idx == SIZE_MAX) {
            if (st->first_random == SIZE_MAX) {
                st->first_random = k;
                st->draws_before = st->draws;
            }
            idx = random_draw(st);
        }
        if (idx == SIZE_MAX)
            break;
        cutune__history_take(&st->h, idx);
        if (k < st->batch_cap)
            st->batch[k] = idx;
        out[k++] = idx;
    }
    st->batch_len = st->batch_cap ? k : 0;
    return k;
}

/* What expand() would propose should `index` turn out the fastest node:
 * its untaken one-step neighbours, best predicted first (ties in
 * tie_order), at most AHEAD_MAX. Reads the state only (st->nbr is
 * scratch). */
#define AHEAD_MAX 16
static size_t default_ahead(void *state, size_t index, size_t *out,
                            size_t cap)
{
    default_state *st = state;
    double score[AHEAD_MAX];
    uint64_t order[AHEAD_MAX];
    size_t k = 0;
    if (index >= st->n)
        return 0;
    if (cap > AHEAD_MAX)
        cap = AHEAD_MAX;
    size_t m = neighbours(st, index, CUTUNE__NEIGHBOUR_ADJACENT);
    for (size_t i = 0; i < m; i++) {
        size_t j = st->nbr[i];
        int known;
        if (cutune__history_is_taken(&st->h, j))
            continue;
        double sc = predicted(st, index, j, 1, &known);
        uint64_t o = tie_order(st, j);
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
static int still_next(default_state *st, size_t pos)
{
    for (size_t i = pos; i < st->batch_len; i++)
        cutune__history_release(&st->h, st->batch[i]);
    unhold(st);
    int climbing = st->climb != SIZE_MAX;
    size_t now = climbing ? climb_step(st) : expand(st);
    for (size_t i = pos; i < st->batch_len; i++)
        cutune__history_take(&st->h, st->batch[i]);
    /* A climb that has nothing more to propose is over: what comes next
     * is decided afresh. */
    return now == st->batch[pos] || (now == SIZE_MAX && !climbing);
}

static void default_report(void *state, size_t index, double objective)
{
    default_state *st = state;
    if (index >= st->n)
        return;
    int fresh = !st->h.done[index];
    cutune__history_report(&st->h, index, objective);
    if (!fresh)
        return;
    learn(st, index);
    double o = st->h.objective[index];
    if (st->climb == index && !isfinite(o)) {
        st->climb = SIZE_MAX;
        st->climb_end = st->h.n_done;
    } else if (st->climb != SIZE_MAX && st->climb != index) {
        st->climb_evals++;
        if (isfinite(o) && faster(o, st->h.objective[st->climb]))
            st->climb = index;
    }
    if (isfinite(o)) {
        heap_push(st, index);
        if (st->best == SIZE_MAX || faster(o, st->h.objective[st->best])) {
            st->best = index;
            st->last_better = st->h.n_done;
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
 * whole batch. (A cut during the first sample, which would need the probe
 * due within five evaluations, cannot happen on a space the sample does
 * not cover; sample_left is not given back.) */
static int default_enough(void *state)
{
    default_state *st = state;
    return (st->batch_pos < st->batch_len && !still_next(st, st->batch_pos)) ||
           probe_due(st) || restart_due(st);
}

/* A proposal handed back (the batch was cut, or the budget ran out before
 * it) is proposable again and no longer part of the batch. */
static void default_withdraw(void *state, size_t index)
{
    default_state *st = state;
    cutune__history_release(&st->h, index);
    for (size_t i = st->batch_pos; i < st->batch_len; i++)
        if (st->batch[i] == index) {
            memmove(st->batch + i, st->batch + i + 1,
                    (st->batch_len - i - 1) * sizeof *st->batch);
            st->batch_len--;
            /* A random draw handed back is undrawn, with every later one
             * (what is handed back is the end of a batch). */
            if (st->first_random != SIZE_MAX && i >= st->first_random) {
                uint64_t d = st->draws_before + (i - st->first_random);
                if (d < st->draws)
                    st->draws = d;
            } else if (st->first_random != SIZE_MAX) {
                st->first_random--;
            }
            break;
        }
}

const cutune__strategy_type cutune__strategy_default_type = {
    "default",      sizeof(default_state), default_init,   default_next,
    default_report, default_destroy,       default_enough, default_withdraw,
    0,              default_ahead,
    0, /* not exhaustive */
};
const cutune__strategy_type *cutune__strategy_default =
    &cutune__strategy_default_type;
