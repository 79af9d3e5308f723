/* The default strategy's probe of the best configuration (every value of
 * every parameter, block shapes, pairs of its best single moves), the
 * edge of the space (every block dimension at its largest value), and
 * where climbs start: far from everything evaluated, or in another niche
 * (setting of the switches).
 */
#include "default_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_randist.h>

/* The learnt effect of moving parameter p from value a to v (0 unknown). */
static double move_effect(const cutune__default_state *st, size_t p,
                          uint32_t a, uint32_t v)
{
    if (st->stats_off[p] == CUTUNE__NONE || a == v)
        return 0;
    size_t nv = cutune__space_value_count(st->space, p);
    size_t e = st->stats_off[p] + a * nv + v;
    return st->delta_count[e] ? st->delta_sum[e] / st->delta_count[e] : 0;
}

/* A probe move's score (its learnt or observed slowdown) with what
 * trying `index` is predicted to cost against the clock, as one-step
 * moves are ranked (cutune__default_cost_penalty). */
static double with_cost(const cutune__default_state *st, double score,
                        size_t index)
{
    double penalty = cutune__default_cost_penalty(st, index);
    return penalty != 0 ? score + penalty : score;
}

static int64_t int_value(const cutune__default_state *st, size_t p, uint32_t v)
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
static void add_shapes(cutune__default_state *st, size_t b, size_t n_any)
{
    size_t px = CUTUNE__NONE, py = CUTUNE__NONE, n_shapes = 0;
    for (size_t p = 0; p < st->n_params; p++)
        if (st->edge_param[p] && px == CUTUNE__NONE)
            px = p;
        else if (st->edge_param[p] && py == CUTUNE__NONE)
            py = p;
    if (py == CUTUNE__NONE)
        return;
    const uint32_t *cb = cutune__space_config(st->space, b);
    int64_t threads = int_value(st, px, cb[px]) * int_value(st, py, cb[py]);
    size_t nx = cutune__space_value_count(st->space, px);
    size_t ny = cutune__space_value_count(st->space, py);
    size_t cap = (st->any_size + 1) / 2;
    cutune__default_ranked *shapes = st->list + st->list_count;
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
            cutune__default_ranked *r = &shapes[n_shapes++];
            r->score = with_cost(st,
                                 move_effect(st, px, cb[px], x) +
                                     move_effect(st, py, cb[py], y),
                                 idx);
            r->index = idx;
            r->order = idx;
        }
    qsort(shapes, n_shapes, sizeof *shapes, cutune__default_by_score);
    if (n_shapes > cap)
        n_shapes = cap;
    /* After the single moves, before the pairs (or right after the
     * edges, which lead the list at -INFINITY). */
    if (st->prm.shapes_first) {
        size_t e = 0;
        while (e < n_any && st->list[e].score == -INFINITY)
            e++;
        n_any = e;
    }
    size_t n_pairs = st->list_count - n_any;
    cutune__default_ranked *tmp =
        malloc((n_pairs ? n_pairs : 1) * sizeof *tmp);
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
/* The edges seen from b (every block dimension at its largest, then at
 * its smallest value) ahead of the probe's single moves: one-step moves
 * reach them last, and single-configuration optima sit there (issue 18:
 * dedispersion at block 32x32, found by brute force only). */
static void put_edges_first(cutune__default_state *st, size_t b)
{
    size_t edge[2], n_edges = 0;
    for (int largest = 1; largest >= 0; largest--) {
        size_t e = cutune__default_edge_of(st, b, largest);
        if (e != CUTUNE__NONE && (n_edges == 0 || edge[0] != e))
            edge[n_edges++] = e;
    }
    memmove(st->list + n_edges, st->list, st->list_count * sizeof *st->list);
    for (size_t k = 0; k < n_edges; k++) {
        st->list[k].score = -INFINITY;
        st->list[k].index = edge[k];
        st->list[k].order = k;
    }
    st->list_count += n_edges;
}

void cutune__default_load_probe(cutune__default_state *st, size_t b)
{
    cutune__default_ranked singles[PAIR_SINGLES + 1];
    size_t n_singles = 0, n_any;
    double fb = st->h.objective[b];
    const uint32_t *cb = cutune__space_config(st->space, b);
    size_t m = cutune__default_neighbours(st, b, CUTUNE__NEIGHBOUR_ANY);

    st->probed[b] = 1;
    st->list_count = st->list_next = 0;
    if (m > 1)
        gsl_ran_shuffle(st->rng, st->nbr, m, sizeof *st->nbr);
    for (size_t i = 0; i < m; i++) {
        size_t j = st->nbr[i];
        if (cutune__history_is_taken(&st->h, j))
            continue;
        size_t p = cutune__default_differing_param(st, b, j);
        uint32_t a = cb[p], v = cutune__space_config(st->space, j)[p];
        if (a + 1 == v || v + 1 == a)
            continue;
        cutune__default_ranked *r = &st->list[st->list_count];
        r->score = cutune__default_move_score(st, b, j);
        r->index = j;
        r->order = st->list_count++;
    }
    qsort(st->list, st->list_count, sizeof *st->list,
          cutune__default_by_score);
    if (st->prm.probe_edges)
        put_edges_first(st, b);
    n_any = st->list_count;

    /* The best PAIR_SINGLES evaluated single moves, by insertion: m is
     * small. Those just listed are not evaluated yet; pairs are built
     * from what is known now. */
    for (size_t i = 0; i < m; i++) {
        size_t j = st->nbr[i];
        if (!st->h.done[j] || !isfinite(st->h.objective[j]))
            continue;
        cutune__default_ranked r = {
            cutune__default_slowdown(st->h.objective[j], fb), j, j};
        size_t pos = n_singles;
        while (pos > 0 &&
               cutune__default_by_score(&r, &singles[pos - 1]) < 0) {
            singles[pos] = singles[pos - 1];
            pos--;
        }
        singles[pos] = r;
        if (n_singles < PAIR_SINGLES)
            n_singles++;
    }
    cutune__default_ranked *pairs = st->list + n_any;
    size_t n_pairs = 0;
    for (size_t a = 0; a < n_singles; a++) {
        size_t pa = cutune__default_differing_param(st, b, singles[a].index);
        for (size_t c = a + 1; c < n_singles; c++) {
            size_t pc =
                cutune__default_differing_param(st, b, singles[c].index);
            size_t idx;
            if (pa == pc || pa == CUTUNE__NONE || pc == CUTUNE__NONE)
                continue;
            memcpy(st->config, cb, st->n_params * sizeof *st->config);
            st->config[pa] =
                cutune__space_config(st->space, singles[a].index)[pa];
            st->config[pc] =
                cutune__space_config(st->space, singles[c].index)[pc];
            if (!cutune__space_index_of(st->space, st->config, &idx) ||
                cutune__history_is_taken(&st->h, idx))
                continue;
            cutune__default_ranked *r = &pairs[n_pairs++];
            r->score = with_cost(st, singles[a].score + singles[c].score, idx);
            r->index = idx;
            r->order = idx;
        }
    }
    qsort(pairs, n_pairs, sizeof *pairs, cutune__default_by_score);
    if (n_pairs > (st->any_size + 1) / 2)
        n_pairs = (st->any_size + 1) / 2;
    st->list_count = n_any + n_pairs;
    add_shapes(st, b, n_any);
}

/* The edge of the space that one-step moves reach last, seen from
 * `from`: its configuration with every block dimension at its largest
 * value, or the valid configuration nearest to that. CUTUNE__NONE when that is
 * `from` itself or already taken. */
size_t cutune__default_edge_of(cutune__default_state *st, size_t from,
                               int largest)
{
    size_t idx =
        cutune__space_block_edge(st->space, from, largest, st->config);
    if (idx == CUTUNE__NONE || cutune__history_is_taken(&st->h, idx))
        return CUTUNE__NONE;
    return idx;
}

/* How far configuration a is from b: value steps scaled to [0, 1] per
 * parameter, summed. */
static double spread(const cutune__default_state *st, size_t a, size_t b)
{
    const uint32_t *ca = cutune__space_config(st->space, a);
    const uint32_t *cb = cutune__space_config(st->space, b);
    double d = 0;
    for (size_t i = 0; i < st->n_varying; i++) {
        size_t p = st->varying[i];
        size_t nv = cutune__space_value_count(st->space, p);
        d += fabs((double)ca[p] - (double)cb[p]) / (double)(nv - 1);
    }
    return d;
}

/* A start for a climb where nothing has been looked at: of
 * restart_pool untaken configurations drawn at random, the one farthest
 * from every evaluated configuration (the largest distance to its
 * nearest). A uniform draw lands where evaluations already are as often
 * as the space is dense there; a basin in a corner the first ones missed
 * waits for luck. The draws are a stream fixed per run (a hash of the
 * salt, the restart and the candidate), so asking again changes nothing.
 * CUTUNE__NONE when nothing is left. */
size_t cutune__default_far_draw(cutune__default_state *st)
{
    size_t left = st->n - st->h.n_taken, best = CUTUNE__NONE;
    double best_d = -1;
    size_t pool = st->prm.restart_pool ? st->prm.restart_pool : 1;
    for (size_t k = 0; k < pool && left > 0; k++) {
        uint64_t r = cutune__default_mix(
            st->salt ^
            cutune__default_mix(((uint64_t)st->restarts << 16) + k));
        size_t c = cutune__history_untaken_at(&st->h, (size_t)(r % left));
        double d = INFINITY;
        for (size_t e = 0; e < st->n_order && d > 0; e++) {
            double x = spread(st, c, st->order[e]);
            d = x < d ? x : d;
        }
        /* Against the clock, distance per predicted second (to the power
         * cost_power): a climb's one-step moves mostly keep what makes
         * its start dear. */
        double penalty = cutune__default_cost_penalty(st, c);
        if (penalty != 0)
            d *= exp(-penalty);
        if (d > best_d) {
            best_d = d;
            best = c;
        }
    }
    return best;
}

/* The niche of configuration c: its switch values, a bit each. */
size_t cutune__default_niche_of(const cutune__default_state *st, size_t c)
{
    const uint32_t *cc = cutune__space_config(st->space, c);
    size_t code = 0;
    for (size_t i = 0; i < st->n_switch; i++)
        code |= (size_t)(cc[st->switches[i]] != 0) << i;
    return code;
}

/* A start for a climb in a niche not climbed yet, the farthest from the
 * best's first (the most switches changed; the lowest code among equals):
 * the best's configuration with that niche's switch values, or the valid
 * configuration nearest to it where that has them. The probe of the best
 * tries its switches one at a time and its pairs of best moves two; a
 * niche that differs in more is what nothing else reaches. CUTUNE__NONE when
 * none is left. */
size_t cutune__default_niche_start(cutune__default_state *st)
{
    size_t n_niches = (size_t)1 << st->n_switch;
    if (st->n_switch == 0 || st->best == CUTUNE__NONE)
        return CUTUNE__NONE;
    size_t own = cutune__default_niche_of(st, st->best);
    st->niche_done[own] = 1;
    for (size_t dist = st->n_switch; dist > 0; dist--)
        for (size_t code = 0; code < n_niches; code++) {
            if (st->niche_done[code] ||
                (size_t)__builtin_popcountll(
                    (unsigned long long)(code ^ own)) != dist)
                continue;
            st->niche_done[code] = 1;
            memcpy(st->config, cutune__space_config(st->space, st->best),
                   st->n_params * sizeof *st->config);
            for (size_t i = 0; i < st->n_switch; i++)
                st->config[st->switches[i]] = (uint32_t)((code >> i) & 1);
            size_t idx = cutune__space_nearest(st->space, st->config);
            if (idx != CUTUNE__NONE &&
                cutune__default_niche_of(st, idx) == code)
                return idx;
        }
    return CUTUNE__NONE;
}
