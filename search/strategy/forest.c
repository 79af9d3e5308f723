/* "forest": Bayesian optimisation with a random-forest surrogate.
 *
 * Why a forest beside the Gaussian process of "bayes": kernel spaces are
 * made of switches (shared memory, read-only loads, padding) that change
 * the code, and the best block and tile shape differ from one setting of
 * the switches to the next. On the hub's convolution spaces shared memory
 * off is the fastest code on three GPUs, but only with a block one row
 * high and four rows of tile; elsewhere it is among the slowest. A
 * smooth kernel over value indices averages that away; a regression tree
 * splits on the switch first and fits each side on its own (the
 * surrogate of SMAC, Hutter et al., 2011). Over 200 seeds never used to
 * choose anything it reached within 5% of the optimum in 92% of runs at
 * 200 evaluations on the A100 convolution space, where the default does
 * in 60% (docs/strategies.md).
 *
 * The model: the logarithm of the runtime (a relative difference means
 * the same everywhere), values above the median of those observed and
 * failures taken as the median (only the fast end needs telling apart,
 * as in "bayes"), FOREST_TREES regression trees each grown on a
 * bootstrap sample of the observations. A node splits the value
 * indices of one parameter at a threshold, chosen among a random half of
 * the parameters for the largest drop in squared error; leaves hold at
 * least FOREST_MIN_LEAF observations. The trees' spread is the model's
 * uncertainty. Every proposal after the initial design (FOREST_INITIAL
 * configurations) maximises expected improvement
 * over the untaken configurations: all of them on a space of up to
 * FOREST_ALL, else FOREST_POOL drawn at random plus the best's
 * neighbours. The initial design is the default's first sample in
 * kind: the start, its block edge, random draws. A batch (FOREST_BATCH
 * at most) takes the best candidates in turn, none one parameter away
 * from one taken before it, so that it spreads.
 */
#include "strategy.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_randist.h>

#include "history.h"

#define FOREST_TREES    32
#define FOREST_MIN_LEAF 2
#define FOREST_INITIAL  15
#define FOREST_ALL      4096
#define FOREST_POOL     2048
/* A tree sees at most this many observations (a bootstrap sample of that
 * size), so that a long run's proposals cost the same as a short one's. */
#define FOREST_SAMPLE 1024
/* Model proposals per batch, at most: proposals drawn from one fit are
 * guesses the next result would have corrected. Runs within 5% of the
 * optimum at 200 evaluations on the A100 convolution space (seeds
 * 1000-1049): 0.88 one at a time, 0.74 in batches of 4, 0.72 of 8, 0.36
 * of 32 (what the tuner asks for with 16 compile threads). Tunes stay as
 * quick: on an H100, 100 evaluations of conv2d 4096^2 took 7.4 s against
 * the default's 8.6 s, binaries not cached. */
#define FOREST_BATCH 4
/* Trees deeper than this would split single observations only. */
#define FOREST_DEPTH 32

typedef struct fnode {
    int32_t param;  /* index into var; -1 for a leaf */
    uint32_t below; /* value indices below this go left */
    uint32_t left, right;
    double value; /* a leaf's mean */
} fnode;

typedef struct forest_state {
    cutune__strategy_base b; /* b.h.n: the space's size */
    size_t *var;             /* varying parameters */
    size_t n_var;
    size_t *obs; /* reported configurations, in order */
    size_t n_obs;
    size_t proposed;
    size_t first;     /* the first proposal */
    uint32_t *config; /* n_params: scratch */
    double *y;        /* n_obs: the modelled log runtime */
    double *sorted;   /* n_obs: finite log runtimes, sorted */
    size_t *pick;     /* FOREST_SAMPLE: a tree's bootstrap sample */
    double *h_sum, *h_sq;
    size_t *h_cnt; /* the most values of a parameter: a split's histograms */
    size_t *perm;  /* n_var */
    fnode *nodes;
    size_t n_nodes, cap_nodes;
    size_t root[FOREST_TREES];
    size_t *cand; /* candidates and their scores */
    double *score;
    size_t n_cand, cap_cand;
    size_t *nbr;
    size_t nbr_cap;
} forest_state;

static void forest_destroy(void *state)
{
    forest_state *st = state;
    free(st->var);
    free(st->obs);
    free(st->y);
    free(st->sorted);
    free(st->pick);
    free(st->h_sum);
    free(st->h_sq);
    free(st->h_cnt);
    free(st->perm);
    free(st->config);
    free(st->nodes);
    free(st->cand);
    free(st->score);
    free(st->nbr);
    cutune__strategy_base_free(&st->b);
}

static int forest_init(void *state, const cutune__strategy_ctx *ctx)
{
    forest_state *st = state;
    memset(st, 0, sizeof *st);
    if (cutune__strategy_base_init(&st->b, ctx))
        return -1;
    size_t n = st->b.h.n, np = st->b.n_params, max_values = 2;
    st->var = malloc((np ? np : 1) * sizeof *st->var);
    st->perm = malloc((np ? np : 1) * sizeof *st->perm);
    st->config = malloc((np ? np : 1) * sizeof *st->config);
    st->obs = malloc((n ? n : 1) * sizeof *st->obs);
    st->y = malloc((n ? n : 1) * sizeof *st->y);
    st->sorted = malloc((n ? n : 1) * sizeof *st->sorted);
    st->pick = malloc(FOREST_SAMPLE * sizeof *st->pick);
    st->cap_cand = n < FOREST_ALL ? n : FOREST_ALL;
    st->cand = malloc((st->cap_cand + 1) * sizeof *st->cand);
    st->score = malloc((st->cap_cand + 1) * sizeof *st->score);
    st->nbr_cap = 2 * np + 1;
    st->nbr = malloc(st->nbr_cap * sizeof *st->nbr);
    if (!st->var || !st->perm || !st->config || !st->obs || !st->y ||
        !st->sorted || !st->pick || !st->cand || !st->score || !st->nbr)
        goto fail;
    for (size_t p = 0; p < np; p++) {
        size_t nv = cutune__space_value_count(ctx->space, p);
        if (nv > 1) {
            st->var[st->n_var++] = p;
            if (nv > max_values)
                max_values = nv;
        }
    }
    st->h_sum = malloc(max_values * sizeof *st->h_sum);
    st->h_sq = malloc(max_values * sizeof *st->h_sq);
    st->h_cnt = malloc(max_values * sizeof *st->h_cnt);
    if (!st->h_sum || !st->h_sq || !st->h_cnt)
        goto fail;
    return 0;
fail:
    forest_destroy(st);
    return -1;
}

static uint32_t value_of(const forest_state *st, size_t config, size_t f)
{
    return cutune__space_config(st->b.space, config)[st->var[f]];
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The modelled objective of every observation: log runtime, capped at the
 * median of the finite ones, failures at that median too (they are never
 * faster). 0 while fewer than two results are finite. */
static int prepare_targets(forest_state *st, double *best_y)
{
    size_t nf = 0;
    for (size_t i = 0; i < st->n_obs; i++) {
        double o = st->b.h.objective[st->obs[i]];
        if (isfinite(o) && o > 0)
            st->sorted[nf++] = log(o);
    }
    if (nf < 2)
        return 0;
    qsort(st->sorted, nf, sizeof *st->sorted, by_value);
    double med = st->sorted[nf / 2];
    for (size_t i = 0; i < st->n_obs; i++) {
        double o = st->b.h.objective[st->obs[i]];
        double y = isfinite(o) && o > 0 ? log(o) : med;
        st->y[i] = y < med ? y : med;
    }
    *best_y = st->sorted[0];
    return 1;
}

static size_t new_node(forest_state *st)
{
    if (st->n_nodes == st->cap_nodes) {
        size_t cap = st->cap_nodes ? 2 * st->cap_nodes : 1024;
        fnode *p = realloc(st->nodes, cap * sizeof *p);
        if (!p)
            return CUTUNE__NONE;
        st->nodes = p;
        st->cap_nodes = cap;
    }
    st->nodes[st->n_nodes].param = -1;
    return st->n_nodes++;
}

/* The best split of sample[0..m) on parameter f: the threshold (0 when
 * none) and its drop in squared error. */
static uint32_t best_threshold(forest_state *st, const size_t *sample,
                               size_t m, size_t f, double *gain)
{
    size_t nv = cutune__space_value_count(st->b.space, st->var[f]);
    double tot = 0, tot2 = 0;
    memset(st->h_sum, 0, nv * sizeof *st->h_sum);
    memset(st->h_sq, 0, nv * sizeof *st->h_sq);
    memset(st->h_cnt, 0, nv * sizeof *st->h_cnt);
    for (size_t i = 0; i < m; i++) {
        uint32_t v = value_of(st, st->obs[sample[i]], f);
        double y = st->y[sample[i]];
        st->h_sum[v] += y;
        st->h_sq[v] += y * y;
        st->h_cnt[v]++;
        tot += y;
        tot2 += y * y;
    }
    double base = tot2 - tot * tot / (double)m, ls = 0, l2 = 0;
    size_t lc = 0;
    uint32_t thr = 0;
    *gain = 0;
    for (size_t v = 0; v + 1 < nv; v++) {
        ls += st->h_sum[v];
        l2 += st->h_sq[v];
        lc += st->h_cnt[v];
        size_t rc = m - lc;
        if (st->h_cnt[v + 1] == 0 || lc < FOREST_MIN_LEAF ||
            rc < FOREST_MIN_LEAF)
            continue;
        double rs = tot - ls, r2 = tot2 - l2;
        double sse = (l2 - ls * ls / (double)lc) + (r2 - rs * rs / (double)rc);
        if (base - sse > *gain + 1e-12) {
            *gain = base - sse;
            thr = (uint32_t)(v + 1);
        }
    }
    return thr;
}

/* Grows the subtree over sample[0..m); its node, or CUTUNE__NONE when memory
 * ran out. */
static size_t grow(forest_state *st, size_t *sample, size_t m, int depth)
{
    size_t me = new_node(st);
    if (me == CUTUNE__NONE)
        return CUTUNE__NONE;
    double sum = 0;
    for (size_t i = 0; i < m; i++)
        sum += st->y[sample[i]];
    st->nodes[me].value = sum / (double)m;
    if (m < 2 * FOREST_MIN_LEAF || depth >= FOREST_DEPTH)
        return me;
    /* A random half of the parameters (at least one) compete. */
    size_t try_n = (st->n_var + 1) / 2, bf = CUTUNE__NONE;
    for (size_t i = 0; i < st->n_var; i++)
        st->perm[i] = i;
    double best = 0;
    uint32_t bt = 0;
    for (size_t i = 0; i < try_n; i++) {
        size_t j = i + cutune__random_below(st->b.rng, st->n_var - i);
        size_t f = st->perm[j];
        st->perm[j] = st->perm[i];
        st->perm[i] = f;
        double g;
        uint32_t t = best_threshold(st, sample, m, f, &g);
        if (t && g > best) {
            best = g;
            bf = f;
            bt = t;
        }
    }
    if (bf == CUTUNE__NONE)
        return me;
    size_t a = 0, z = m;
    while (a < z) {
        if (value_of(st, st->obs[sample[a]], bf) < bt) {
            a++;
        } else {
            size_t t = sample[a];
            sample[a] = sample[--z];
            sample[z] = t;
        }
    }
    size_t l = grow(st, sample, a, depth + 1);
    size_t r = l == CUTUNE__NONE ? CUTUNE__NONE
                                 : grow(st, sample + a, m - a, depth + 1);
    if (r == CUTUNE__NONE)
        return CUTUNE__NONE;
    st->nodes[me].param = (int32_t)bf;
    st->nodes[me].below = bt;
    st->nodes[me].left = (uint32_t)l;
    st->nodes[me].right = (uint32_t)r;
    return me;
}

/* Grows the forest; 0, or -1 when memory ran out. */
static int fit(forest_state *st)
{
    st->n_nodes = 0;
    size_t m = st->n_obs < FOREST_SAMPLE ? st->n_obs : FOREST_SAMPLE;
    for (size_t t = 0; t < FOREST_TREES; t++) {
        for (size_t i = 0; i < m; i++)
            st->pick[i] = cutune__random_below(st->b.rng, st->n_obs);
        st->root[t] = grow(st, st->pick, m, 0);
        if (st->root[t] == CUTUNE__NONE)
            return -1;
    }
    return 0;
}

static double expected_improvement(const forest_state *st, size_t config,
                                   double best_y)
{
    const uint32_t *c = cutune__space_config(st->b.space, config);
    double s = 0, s2 = 0;
    for (size_t t = 0; t < FOREST_TREES; t++) {
        const fnode *nd = st->nodes + st->root[t];
        while (nd->param >= 0)
            nd = st->nodes +
                 (c[st->var[nd->param]] < nd->below ? nd->left : nd->right);
        s += nd->value;
        s2 += nd->value * nd->value;
    }
    double mu = s / FOREST_TREES;
    double var = s2 / FOREST_TREES - mu * mu;
    double sd = sqrt(var > 1e-12 ? var : 1e-12);
    double z = (best_y - mu) / sd;
    return (best_y - mu) * gsl_cdf_ugaussian_P(z) +
           sd * gsl_ran_ugaussian_pdf(z);
}

/* The candidates: every untaken configuration of a small space; else
 * the best's neighbours and random untaken ones. Each is taken while
 * gathering, so that none comes twice, and released at the end. */
static void gather(forest_state *st)
{
    st->n_cand = 0;
    size_t left = st->b.h.n - st->b.h.n_taken;
    if (left <= st->cap_cand) {
        for (size_t k = 0; k < left; k++)
            st->cand[st->n_cand++] = cutune__history_untaken_at(&st->b.h, k);
        return;
    }
    size_t best = st->b.h.best;
    if (best != CUTUNE__NONE) {
        size_t m = cutune__space_neighbours(st->b.space, best,
                                            CUTUNE__NEIGHBOUR_ADJACENT,
                                            st->nbr, st->nbr_cap);
        for (size_t i = 0; i < m && i < st->nbr_cap; i++)
            if (!cutune__history_is_taken(&st->b.h, st->nbr[i])) {
                cutune__history_take(&st->b.h, st->nbr[i]);
                st->cand[st->n_cand++] = st->nbr[i];
            }
    }
    size_t want = st->n_cand + FOREST_POOL;
    while (st->n_cand < want) {
        size_t c = cutune__history_random_untaken(&st->b.h, st->b.rng);
        if (c == CUTUNE__NONE)
            break;
        cutune__history_take(&st->b.h, c);
        st->cand[st->n_cand++] = c;
    }
    for (size_t i = 0; i < st->n_cand; i++)
        cutune__history_release(&st->b.h, st->cand[i]);
}

/* Whether configurations a and b differ in one parameter at most. */
static int close_to(const forest_state *st, size_t a, size_t b)
{
    const uint32_t *x = cutune__space_config(st->b.space, a);
    const uint32_t *y = cutune__space_config(st->b.space, b);
    size_t diff = 0;
    for (size_t f = 0; f < st->n_var && diff < 2; f++)
        diff += x[st->var[f]] != y[st->var[f]];
    return diff < 2;
}

/* Up to cap proposals by expected improvement; 0 when nothing is left or
 * memory ran out (then random draws take over). */
static size_t model_next(forest_state *st, size_t *out, size_t cap)
{
    double best_y;
    if (!prepare_targets(st, &best_y) || fit(st))
        return 0;
    gather(st);
    for (size_t i = 0; i < st->n_cand; i++)
        st->score[i] = expected_improvement(st, st->cand[i], best_y);
    size_t k = 0;
    while (k < cap) {
        size_t bi = CUTUNE__NONE;
        for (size_t i = 0; i < st->n_cand; i++) {
            if (st->score[i] < 0)
                continue; /* taken, or too close to one taken */
            if (bi == CUTUNE__NONE || st->score[i] > st->score[bi] ||
                (st->score[i] == st->score[bi] && st->cand[i] < st->cand[bi]))
                bi = i;
        }
        if (bi == CUTUNE__NONE)
            break;
        size_t c = st->cand[bi];
        out[k++] = c;
        cutune__history_take(&st->b.h, c);
        for (size_t i = 0; i < st->n_cand; i++)
            if (st->score[i] >= 0 && close_to(st, st->cand[i], c))
                st->score[i] = -1;
    }
    return k;
}

static size_t random_next(forest_state *st, size_t *out, size_t cap)
{
    size_t k = 0;
    while (k < cap) {
        size_t c = cutune__history_random_untaken(&st->b.h, st->b.rng);
        if (c == CUTUNE__NONE)
            break;
        cutune__history_take(&st->b.h, c);
        out[k++] = c;
    }
    return k;
}

/* The initial design: the start, the block edge seen from it (every
 * block dimension at its largest: single-configuration optima sit there,
 * as in the default's first sample), random draws. */
static size_t design_next(forest_state *st, size_t *out, size_t cap)
{
    size_t k = 0;
    if (st->proposed == 0 && st->b.start != CUTUNE__NONE) {
        out[k++] = st->b.start;
        cutune__history_take(&st->b.h, st->b.start);
    }
    if (st->proposed + k == 0 && k < cap)
        k += random_next(st, out + k, 1);
    if (st->proposed + k == 1 && k < cap) {
        size_t first = k ? out[0] : st->first;
        size_t e = cutune__space_block_edge(st->b.space, first, 1, st->config);
        if (e != CUTUNE__NONE && !cutune__history_is_taken(&st->b.h, e)) {
            cutune__history_take(&st->b.h, e);
            out[k++] = e;
        }
    }
    if (st->proposed == 0 && k)
        st->first = out[0];
    size_t want = FOREST_INITIAL - st->proposed - k;
    if (st->proposed + k < FOREST_INITIAL && k < cap)
        k += random_next(st, out + k, cap - k < want ? cap - k : want);
    return k;
}

static size_t forest_next(void *state, size_t *out, size_t cap)
{
    forest_state *st = state;
    size_t k;
    if (st->proposed < FOREST_INITIAL) {
        k = design_next(st, out, cap);
    } else {
        k = model_next(st, out, cap < FOREST_BATCH ? cap : FOREST_BATCH);
        if (k == 0)
            k = random_next(st, out, cap);
    }
    st->proposed += k;
    return k;
}

static void forest_report(void *state, size_t index, double objective)
{
    forest_state *st = state;
    if (index >= st->b.h.n || st->b.h.done[index])
        return;
    cutune__history_report(&st->b.h, index, objective);
    st->obs[st->n_obs++] = index;
}

static void forest_withdraw(void *state, size_t index)
{
    forest_state *st = state;
    if (index < st->b.h.n && !st->b.h.done[index]) {
        cutune__history_release(&st->b.h, index);
        if (st->proposed)
            st->proposed--;
    }
}

const cutune__strategy_type cutune__strategy_forest_type = {
    .name = "forest",
    .state_size = sizeof(forest_state),
    .init = forest_init,
    .next = forest_next,
    .report = forest_report,
    .destroy = forest_destroy,
    .withdraw = forest_withdraw,
};

const cutune__strategy_type *cutune__strategy_forest =
    &cutune__strategy_forest_type;
