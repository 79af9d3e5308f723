/* "default": the strategy used when none is named: guided iterated local
 * search.
 *
 * The search is a sequence of hill climbs. A climb moves to the first
 * neighbour that is faster: one parameter one step first, then, at a
 * minimum of those, one parameter to any of its values (switches and tile
 * shapes are not ordered in a useful way). That wider scan costs as many
 * evaluations as all parameters have values, so a climb takes it only
 * where it stands on the best configuration found so far; a climb whose
 * minimum of one-step moves is worse ends there, and its evaluations go
 * to further restarts instead (over 400 seeds of the recorded convolution
 * spaces, the share of seeds within 10% of the optimum at 200 evaluations
 * went from 0.71 to 0.79 on A100 and 0.89 to 0.94 on A6000, and from 0.96
 * to 0.91 on A4000; at 100 evaluations on A100 it stayed 0.47). It never
 * steps onto a configuration evaluated before, so a new climb is pushed
 * away from the basins already explored instead of sliding back into them.
 *
 * Three things make it better than independent climbs:
 *
 *  - Move statistics. Every pair of evaluated configurations that differ in
 *    one parameter says what changing that parameter from one value to the
 *    other did (as a ratio of runtimes). Averaged over the run, these
 *    predict what a move will do elsewhere; a climb tries its neighbours
 *    in the order of that prediction, so it finds the improving move
 *    sooner. Every other restart starts with a walk on the predictions
 *    alone (nothing evaluated) from a random configuration, so that the
 *    climb starts where the statistics expect fast configurations; the
 *    others start from a uniformly random one, so that statistics learnt
 *    in one region cannot hold the search there.
 *
 *  - Pair moves. Once a few climbs have mapped the space, the best local
 *    minimum is probed with moves of two parameters at once, each pair
 *    built from two of its best single moves and tried in the order of
 *    the sum of their effects: a minimum of one-parameter moves is often
 *    one two-parameter move away from a better one (a block shape whose
 *    width and height must change together).
 *
 *  - A better first start: the best of a few random configurations (the
 *    occupancy-seeded start among them, evaluated first).
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

/* Configurations evaluated before the first climb; it starts from the
 * best of them. */
#define INITIAL_SAMPLE 5
/* Local minima found before the best of them is probed with pair moves:
 * probing the first one found would spend the evaluations that a second
 * and third climb need to find a better basin. */
#define CLIMBS_BEFORE_PAIRS 3
/* Pair moves are built from this many of the best single moves. */
#define PAIR_SINGLES 32
#define MAX_PAIRS    (PAIR_SINGLES * (PAIR_SINGLES - 1) / 2)
/* Move statistics are kept for parameters with at most this many values
 * (a table of values x values per parameter). */
#define STATS_MAX_VALUES 128
/* A guided restart follows only predictions backed by this many
 * observations. */
#define GUIDE_MIN_COUNT 2
/* Results closer than this (relative) are ties, and a tie never moves the
 * search: the tuner measures each median to within 1% (the 95% confidence
 * interval of its timing protocol), so a smaller difference is noise, and
 * letting noise choose would send each repeat of a tune along another path
 * (onto configurations that its binary cache has not compiled). */
#define TIE_REL 0.01

enum { MARK_LOCAL_MIN = 1, MARK_PAIRED = 2 };

typedef enum phase {
    PHASE_SAMPLE, /* the initial sample */
    PHASE_CLIMB,  /* neighbours of `current` */
    PHASE_PAIRS   /* pair moves from `current` */
} phase;

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

    unsigned char *mark; /* n: MARK_* */

    phase phase;
    size_t sample_left; /* of the initial sample, still to propose */
    size_t current;
    cutune__neighbour_kind kind;
    ranked *list; /* the neighbours or pair moves being tried */
    size_t list_count;
    size_t list_next;
    size_t pairs_left;  /* pair moves still allowed from `current` */
    size_t move;        /* best improvement of the last batch */
    size_t climbs;      /* local minima reached */
    size_t best;        /* the best result; a tie keeps the earlier one */
    int guided_restart; /* the next restart follows the statistics */

    size_t *nbr;      /* any_size: scratch neighbours */
    uint32_t *config; /* n_params: scratch configuration */
} default_state;

static void default_destroy(void *state)
{
    default_state *st = state;
    free(st->config);
    free(st->nbr);
    free(st->list);
    free(st->mark);
    free(st->delta_count);
    free(st->delta_sum);
    free(st->stats_off);
    free(st->varying);
    cutune__history_free(&st->h);
    memset(st, 0, sizeof *st);
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
    st->phase = PHASE_SAMPLE;
    st->sample_left = INITIAL_SAMPLE;
    st->current = SIZE_MAX;
    st->move = SIZE_MAX;
    st->best = SIZE_MAX;
    st->guided_restart = 1;
    if (cutune__history_init(&st->h, st->n))
        return -1;
    size_t np = st->n_params ? st->n_params : 1;
    st->varying = malloc(np * sizeof *st->varying);
    st->stats_off = malloc(np * sizeof *st->stats_off);
    st->config = malloc(np * sizeof *st->config);
    if (!st->varying || !st->stats_off || !st->config)
        goto fail;
    for (size_t p = 0; p < st->n_params; p++) {
        size_t nv = cutune__space_value_count(s, p);
        st->stats_off[p] = SIZE_MAX;
        if (nv < 2)
            continue;
        st->varying[st->n_varying++] = p;
        st->any_size += nv - 1;
        if (nv <= STATS_MAX_VALUES) {
            st->stats_off[p] = n_stats;
            n_stats += nv * nv;
        }
    }
    list_cap = st->any_size > MAX_PAIRS ? st->any_size : MAX_PAIRS;
    st->delta_sum = calloc(n_stats ? n_stats : 1, sizeof *st->delta_sum);
    st->delta_count = calloc(n_stats ? n_stats : 1, sizeof *st->delta_count);
    st->mark = calloc(st->n ? st->n : 1, sizeof *st->mark);
    st->list = malloc(list_cap * sizeof *st->list);
    st->nbr = malloc((st->any_size ? st->any_size : 1) * sizeof *st->nbr);
    if (!st->delta_sum || !st->delta_count || !st->mark || !st->list ||
        !st->nbr)
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

/* Whether objective a beats b by more than a tie. */
static int faster(double a, double b)
{
    if (!isfinite(b))
        return isfinite(a) || a < b;
    return a < b - TIE_REL * fabs(b);
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

/* Ranks the untaken neighbours of `current` of the current kind (for ANY,
 * those that are not adjacent) by predicted slowdown, ties at random. */
static void load_neighbours(default_state *st)
{
    size_t m = neighbours(st, st->current, st->kind);
    const uint32_t *cc = cutune__space_config(st->space, st->current);
    st->list_count = st->list_next = 0;
    if (m > 1)
        gsl_ran_shuffle(st->rng, st->nbr, m, sizeof *st->nbr);
    for (size_t i = 0; i < m; i++) {
        size_t j = st->nbr[i];
        int known;
        if (cutune__history_is_taken(&st->h, j))
            continue;
        if (st->kind == CUTUNE__NEIGHBOUR_ANY) {
            size_t p = differing_param(st, st->current, j);
            uint32_t a = cc[p], v = cutune__space_config(st->space, j)[p];
            if (a + 1 == v || v + 1 == a)
                continue;
        }
        ranked *r = &st->list[st->list_count];
        r->score = predicted(st, st->current, j, 1, &known);
        r->index = j;
        r->order = st->list_count++;
    }
    qsort(st->list, st->list_count, sizeof *st->list, by_score);
}

static void begin_climb(default_state *st, size_t index)
{
    st->phase = PHASE_CLIMB;
    st->current = index;
    st->kind = CUTUNE__NEIGHBOUR_ADJACENT;
    st->list_count = st->list_next = 0;
    st->move = SIZE_MAX;
    if (st->h.done[index])
        load_neighbours(st);
}

/* Pair moves from local minimum m: two of its best evaluated single moves
 * (in different parameters) at once, ranked by the sum of their
 * slowdowns. */
static void load_pairs(default_state *st, size_t m)
{
    ranked singles[PAIR_SINGLES + 1];
    size_t n_singles = 0;
    double fm = st->h.objective[m];
    const uint32_t *cm = cutune__space_config(st->space, m);
    size_t k = neighbours(st, m, CUTUNE__NEIGHBOUR_ANY);

    /* The best PAIR_SINGLES by insertion: k is small. */
    for (size_t i = 0; i < k; i++) {
        size_t j = st->nbr[i];
        if (!st->h.done[j] || !isfinite(st->h.objective[j]))
            continue;
        ranked r = {slowdown(st->h.objective[j], fm), j, j};
        size_t pos = n_singles;
        while (pos > 0 && by_score(&r, &singles[pos - 1]) < 0) {
            singles[pos] = singles[pos - 1];
            pos--;
        }
        singles[pos] = r;
        if (n_singles < PAIR_SINGLES)
            n_singles++;
    }
    st->phase = PHASE_PAIRS;
    st->current = m;
    st->list_count = st->list_next = 0;
    st->move = SIZE_MAX;
    st->pairs_left = (st->any_size + 1) / 2;
    for (size_t a = 0; a < n_singles; a++) {
        size_t pa = differing_param(st, m, singles[a].index);
        for (size_t b = a + 1; b < n_singles; b++) {
            size_t pb = differing_param(st, m, singles[b].index);
            size_t idx;
            if (pa == pb || pa == SIZE_MAX || pb == SIZE_MAX)
                continue;
            memcpy(st->config, cm, st->n_params * sizeof *st->config);
            st->config[pa] =
                cutune__space_config(st->space, singles[a].index)[pa];
            st->config[pb] =
                cutune__space_config(st->space, singles[b].index)[pb];
            if (!cutune__space_index_of(st->space, st->config, &idx) ||
                cutune__history_is_taken(&st->h, idx))
                continue;
            ranked *r = &st->list[st->list_count];
            r->score = singles[a].score + singles[b].score;
            r->index = idx;
            r->order = idx;
            st->list_count++;
        }
    }
    qsort(st->list, st->list_count, sizeof *st->list, by_score);
}

/* A random untaken configuration moved along the predictions alone (no
 * evaluation) as long as they promise a speed-up; then the untaken
 * configuration there or next to it. */
static size_t guided_start(default_state *st, size_t from)
{
    size_t c = from, best = from;
    double total = 0, best_total = 0;
    const double tie_log = log1p(-TIE_REL);
    for (size_t step = 0; step < 4 * st->n_varying; step++) {
        size_t m = neighbours(st, c, CUTUNE__NEIGHBOUR_ANY), next = SIZE_MAX;
        double gain = 0;
        /* As with results, a predicted gain within a tie of another is no
         * reason to prefer it. */
        for (size_t i = 0; i < m; i++) {
            int known;
            double d = predicted(st, c, st->nbr[i], GUIDE_MIN_COUNT, &known);
            if (known && d < gain + tie_log) {
                gain = d;
                next = st->nbr[i];
            }
        }
        if (next == SIZE_MAX)
            break;
        c = next;
        total += gain;
        if (total < best_total + tie_log) {
            best_total = total;
            best = c;
        }
    }
    if (!cutune__history_is_taken(&st->h, best))
        return best;
    size_t m = neighbours(st, best, CUTUNE__NEIGHBOUR_ANY), k = 0;
    for (size_t i = 0; i < m; i++)
        if (!cutune__history_is_taken(&st->h, st->nbr[i]))
            st->nbr[k++] = st->nbr[i];
    return k ? st->nbr[cutune__random_below(st->rng, k)] : from;
}

/* After a climb or a pair probe: probe the best local minimum with pair
 * moves when its time has come, else start a climb somewhere new and
 * return where (to be proposed). SIZE_MAX when the pair probe began. */
static size_t restart(default_state *st)
{
    size_t b = st->best;
    if (st->climbs >= CLIMBS_BEFORE_PAIRS && b != SIZE_MAX &&
        st->mark[b] == MARK_LOCAL_MIN) {
        st->mark[b] |= MARK_PAIRED;
        load_pairs(st, b);
        return SIZE_MAX;
    }
    size_t r = cutune__history_random_untaken(&st->h, st->rng);
    if (st->guided_restart)
        r = guided_start(st, r);
    st->guided_restart = !st->guided_restart;
    begin_climb(st, r);
    return r;
}

static size_t default_next(void *state, size_t *out, size_t cap)
{
    default_state *st = state;
    size_t k = 0;
    if (st->h.n_taken >= st->n)
        return 0;
    if (st->phase == PHASE_SAMPLE && st->sample_left > 0) {
        while (k < cap && st->sample_left > 0) {
            size_t idx = st->start;
            st->start = SIZE_MAX;
            if (idx == SIZE_MAX)
                idx = cutune__history_random_untaken(&st->h, st->rng);
            if (idx == SIZE_MAX)
                break;
            cutune__history_take(&st->h, idx);
            out[k++] = idx;
            st->sample_left--;
        }
        return k;
    }
    if (st->phase == PHASE_SAMPLE) {
        /* Climb from the best of the sample; if all of it failed, from
         * wherever a restart leads. */
        if (st->best != SIZE_MAX) {
            begin_climb(st, st->best);
        } else {
            st->phase = PHASE_CLIMB;
            st->current = SIZE_MAX;
        }
    }
    /* Each pass proposes, or moves to a strictly better configuration, or
     * widens the neighbourhood, or ends a climb or probe (marking its
     * minimum), or restarts on an untaken configuration, so it ends. */
    for (;;) {
        if (st->current == SIZE_MAX ||
            (st->h.done[st->current] &&
             !isfinite(st->h.objective[st->current]) &&
             st->phase == PHASE_CLIMB)) {
            /* No climb from a failure: every neighbour would look like an
             * improvement. */
            size_t r = restart(st);
            if (r != SIZE_MAX) {
                cutune__history_take(&st->h, r);
                out[0] = r;
                return 1;
            }
            continue;
        }
        if (!st->h.done[st->current]) {
            /* A restart point proposed but not reported (trimmed). */
            out[0] = st->current;
            return 1;
        }
        if (st->move != SIZE_MAX) {
            size_t to = st->move;
            begin_climb(st, to);
            continue;
        }
        if (st->phase == PHASE_CLIMB && st->list_count == 0 &&
            st->list_next == 0 && st->kind == CUTUNE__NEIGHBOUR_ADJACENT)
            load_neighbours(st);
        size_t limit = cap;
        if (st->phase == PHASE_PAIRS && limit > st->pairs_left)
            limit = st->pairs_left;
        while (k < limit && st->list_next < st->list_count) {
            size_t idx = st->list[st->list_next++].index;
            if (cutune__history_is_taken(&st->h, idx))
                continue;
            cutune__history_take(&st->h, idx);
            out[k++] = idx;
        }
        if (k > 0) {
            if (st->phase == PHASE_PAIRS)
                st->pairs_left -= k;
            return k;
        }
        /* A minimum of adjacent moves that is worse than the best found
         * ends the climb: scanning every value of every parameter from
         * there is the dearest part of a climb, and the evaluations buy
         * more as further restarts. */
        if (st->phase == PHASE_CLIMB &&
            st->kind == CUTUNE__NEIGHBOUR_ADJACENT &&
            !(st->best != SIZE_MAX &&
              faster(st->h.objective[st->best],
                     st->h.objective[st->current]))) {
            st->kind = CUTUNE__NEIGHBOUR_ANY;
            load_neighbours(st);
            continue;
        }
        if (st->phase == PHASE_CLIMB) {
            st->mark[st->current] |= MARK_LOCAL_MIN;
            st->climbs++;
        }
        st->current = SIZE_MAX;
    }
}

static void default_report(void *state, size_t index, double objective)
{
    default_state *st = state;
    if (index >= st->n)
        return;
    int fresh = !st->h.done[index];
    cutune__history_report(&st->h, index, objective);
    if (fresh)
        learn(st, index);
    double o = st->h.objective[index];
    if (isfinite(o) &&
        (st->best == SIZE_MAX || faster(o, st->h.objective[st->best])))
        st->best = index;
    /* First improvement: the first result that beats the configuration it
     * was proposed from (default_enough then ends the batch). */
    if (st->phase != PHASE_SAMPLE && st->current != SIZE_MAX &&
        index != st->current && st->h.done[st->current] &&
        st->move == SIZE_MAX && faster(o, st->h.objective[st->current]))
        st->move = index;
}

/* A climb or probe that found its move wants no more of the batch: the
 * tuner then measures exactly what proposals made one by one would have
 * measured, while its compile pool still works ahead on the batch. */
static int default_enough(void *state)
{
    const default_state *st = state;
    return st->phase != PHASE_SAMPLE && st->move != SIZE_MAX;
}

static void default_withdraw(void *state, size_t index)
{
    default_state *st = state;
    cutune__history_release(&st->h, index);
}

const cutune__strategy_type cutune__strategy_default_type = {
    "default",      sizeof(default_state), default_init,
    default_next,   default_report,        default_destroy,
    default_enough, default_withdraw,
};
const cutune__strategy_type *cutune__strategy_default =
    &cutune__strategy_default_type;
