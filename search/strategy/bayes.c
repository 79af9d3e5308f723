/* "bayes": Bayesian optimisation with a Gaussian-process surrogate.
 *
 * The objective is modelled on its logarithm (runtimes span orders of
 * magnitude, and a log makes "10% faster" mean the same everywhere) as a
 * Gaussian process over the configurations' value indices, each scaled to
 * [0, 1], with a Matern 5/2 kernel. After an initial design (the start and
 * random search's first draws) every proposal maximises expected
 * improvement over `candidates` untaken configurations drawn at random
 * from a pool (the whole space when it is small enough, else a fixed
 * random sample of it), plus, on sampled pools, the neighbours of the best
 * so far. Failed configurations enter the model at the worst runtime
 * seen, which steers the search away from regions that fail.
 *
 * Two choices make it at least as good as random search on every space of
 * the corpus (bench/spaces; docs/strategies.md), where one length scale
 * on raw log times left it below in 8 of 90 (space, budget) medians:
 *
 *  - Clipped observations. Log times above the median of those observed
 *    are modelled as the median: a slow tail (and every failure) would
 *    otherwise set the model's variance and length scale, and the small
 *    differences among fast configurations, the only ones that matter,
 *    would vanish in its noise.
 *  - A length scale per parameter (automatic relevance determination):
 *    parameters differ in how much they matter (a tile width against a
 *    read-only switch), and one shared scale either blurs the important
 *    ones or splits the irrelevant ones. The shared scale that maximises
 *    the marginal likelihood over a grid comes first, then each
 *    parameter's scale in turn over the grid and "irrelevant" values.
 *
 * Hyperparameters are refitted whenever the number of observations has
 * doubled since the last fit. Between fits each new observation extends
 * the Cholesky factor by one row (GSL's triangular solve), and the
 * posterior of every candidate is updated in O(n) rather than recomputed;
 * bench-proposal-cost reports the milliseconds per proposal.
 *
 * With a batch of b, the b best candidates are taken in turn, each time
 * damping the expected improvement of candidates correlated with those
 * already picked, so that a batch spreads out.
 *
 * Against the clock (a time limit and no evaluation budget) and where the
 * evaluator says what each result cost to try (compilation and the
 * launches every candidate gets: CUTUNE__COST_LAUNCHES), the candidates
 * are ranked by expected improvement per predicted second
 * (Snoek et al., 2012): a model drawn to configurations that compile
 * slowly otherwise spends a time budget on few of them (on the hub
 * convolution spaces it made 105-113 evaluations in the seconds random
 * search makes 100 in; with costs 119-131). The costs are predicted by an
 * additive model of the log seconds (cost_model.h), not by the Gaussian
 * process: its length scales are the runtime's, and what costs (an unroll
 * factor's compile time) often barely changes the runtime. With an
 * evaluation budget the costs change nothing.
 */
#include "strategy.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_blas.h>
#include <gsl/gsl_cdf.h>
#include <gsl/gsl_matrix.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_vector.h>

#include "bayes.h"
#include "cost_model.h"
#include "history.h"

/* Observations the model holds at most; beyond that the search goes on
 * around the best configuration. */
#define GP_MAX 512
/* Candidates scored at most per proposal. */
#define POOL_MAX 2048
/* The settings: what each means is in the table below; why each has
 * the value it has is in docs/strategies.md, "Why the default's settings
 * are what they are" (its Bayesian part). */
const cutune__bayes_params cutune__bayes_params_std = {
    .initial = 10,
    .candidates = 64,
    .clip_quantile = 0.5,
    .ard_sweeps = 2,
    .cost_power = 1.0,
};

#define FIELD(name) #name, offsetof(cutune__bayes_params, name)
static const cutune__setting bayes_table[] = {
    {FIELD(initial), CUTUNE__SETTING_COUNT, 2, 1000, 0,
     "configurations of the initial design, the start included (random "
     "search's draws)"},
    {FIELD(candidates), CUTUNE__SETTING_COUNT, 1, POOL_MAX, 0,
     "untaken configurations of the pool scored by expected improvement per "
     "proposal"},
    {FIELD(clip_quantile), CUTUNE__SETTING_REAL, 0, 1, 1,
     "the model sees every log time above this quantile of those observed "
     "as that quantile (1: as observed)"},
    {FIELD(ard_sweeps), CUTUNE__SETTING_COUNT, 0, 8, 0,
     "passes of a per-parameter length-scale search after the shared one "
     "(0: one length scale)"},
    {FIELD(cost_power), CUTUNE__SETTING_REAL, 0, 4, 0,
     "against the clock: expected improvement over predicted seconds to "
     "this power (0: costs ignored)"},
};
#undef FIELD

const cutune__settings cutune__bayes_settings = {
    "bayes", bayes_table, sizeof bayes_table / sizeof *bayes_table,
    &cutune__bayes_params_std};

int cutune__bayes_params_set(cutune__bayes_params *p, const char *name,
                             double value)
{
    return cutune__settings_set(&cutune__bayes_settings, p, name, value);
}

/* Refit when the observations have grown by this factor since the last. */
#define REFIT_GROWTH 2.0

/* Length scales the marginal likelihood chooses among; a parameter's own
 * scale may also be one of irrelevant_grid (it barely matters). */
static const double length_grid[] = {0.1, 0.17, 0.3, 0.5, 0.85, 1.5};
static const double irrelevant_grid[] = {4.0, 16.0};
/* The noise level, relative to the variance: replayed and measured times
 * alike repeat to within a few per cent, and a floor keeps the factor well
 * defined where two configurations look alike to the model (a level chosen
 * by marginal likelihood from 1e-3 to 1e-1 did worse). */
#define NOISE 1e-3

typedef struct bayes_state {
    cutune__strategy_base base; /* h, space, rng, start, n_params */
    cutune__bayes_params prm;
    size_t d;         /* parameters that vary */
    size_t *varying;  /* d */
    double *scale;    /* d: 1 / (values - 1) */
    double *xbuf;     /* d */
    uint32_t *config; /* n_params */

    size_t *pool; /* candidate configurations */
    size_t n_pool;
    double *pool_x;    /* n_pool * d features */
    int pool_is_space; /* pool[i] == i for all i */

    size_t cap; /* observations held at most */
    size_t n_obs;
    size_t *obs_index;
    double *obs_x;   /* cap * d */
    double *obs_y;   /* cap, log objective as modelled */
    double *obs_raw; /* cap, log objective */
    double clip;     /* modelled values are at most this */
    size_t *waiting; /* failures before anything ran */
    size_t n_waiting;
    int any_finite;
    double y_worst;

    int fitted;
    double mean, sig2;
    double *inv_ell; /* d: 1 / length scale per parameter */
    double *try_ell; /* d scratch */
    size_t n_fit;    /* observations in the factor below */
    size_t next_refit;
    double *L;     /* cap * cap, lower triangular */
    double *alpha; /* cap: L^-1 (y - mean) */
    double **row;  /* cap rows of n_pool: L^-1 k(X, candidate) */
    double *ssq;   /* n_pool: |row[.][c]|^2 */
    double *dot;   /* n_pool: row[.][c] . alpha */
    double *kvec;  /* cap scratch */
    double *acq;   /* n_pool scratch */
    size_t *local; /* neighbours of the best (sampled pools) */
    size_t local_cap;

    /* What evaluations cost, where the evaluator says (the `cost`
     * callback): cost_model.h. */
    int against_clock; /* no evaluation budget: the time limits */
    cutune__cost_model costs;
} bayes_state;

static void bayes_destroy(void *state)
{
    bayes_state *st = state;
    if (st->row)
        for (size_t j = 0; j < st->cap; j++)
            free(st->row[j]);
    cutune__cost_model_free(&st->costs);
    free(st->local);
    free(st->acq);
    free(st->kvec);
    free(st->dot);
    free(st->ssq);
    free(st->row);
    free(st->alpha);
    free(st->L);
    free(st->waiting);
    free(st->obs_y);
    free(st->obs_raw);
    free(st->obs_x);
    free(st->obs_index);
    free(st->pool_x);
    free(st->pool);
    free(st->config);
    free(st->xbuf);
    free(st->inv_ell);
    free(st->try_ell);
    free(st->scale);
    free(st->varying);
    cutune__strategy_base_free(&st->base);
}

static void features(const bayes_state *st, size_t index, double *x)
{
    const uint32_t *c = cutune__space_config(st->base.space, index);
    for (size_t j = 0; j < st->d; j++)
        x[j] = (double)c[st->varying[j]] * st->scale[j];
}

/* The candidate pool: the whole space where it is small, else a sample
 * of POOL_MAX configurations; with each one's features. 0, or -1 when
 * memory ran out. */
static int build_pool(bayes_state *st, size_t n)
{
    st->n_pool = n < POOL_MAX ? n : POOL_MAX;
    st->pool_is_space = st->n_pool == n;
    st->pool = malloc((st->n_pool ? st->n_pool : 1) * sizeof *st->pool);
    st->pool_x = malloc((st->n_pool * st->d + 1) * sizeof *st->pool_x);
    if (!st->pool || !st->pool_x)
        return -1;
    if (st->pool_is_space) {
        for (size_t i = 0; i < n; i++)
            st->pool[i] = i;
    } else {
        /* A sample without replacement, in index order, from a stream of
         * its own: the run's stream draws the initial design, which is
         * then random search's. */
        gsl_rng *r = gsl_rng_clone(st->base.rng);
        if (!r)
            return -1;
        gsl_rng_set(r, gsl_rng_get(r) ^ 0x9e3779b9UL);
        size_t k = 0;
        for (size_t i = 0; i < n && k < st->n_pool; i++) {
            /* Selection sampling (Knuth's algorithm S). */
            if ((double)(n - i) * gsl_rng_uniform(r) <
                (double)(st->n_pool - k))
                st->pool[k++] = i;
        }
        gsl_rng_free(r);
        st->n_pool = k;
    }
    for (size_t i = 0; i < st->n_pool; i++)
        features(st, st->pool[i], st->pool_x + i * st->d);
    return 0;
}

/* The observations' and the acquisition's buffers. 0, or -1 when memory
 * ran out. */
static int alloc_observations(bayes_state *st)
{
    st->obs_index = malloc(st->cap * sizeof *st->obs_index);
    st->obs_x = malloc((st->cap * st->d + 1) * sizeof *st->obs_x);
    st->obs_y = malloc(st->cap * sizeof *st->obs_y);
    st->obs_raw = malloc(st->cap * sizeof *st->obs_raw);
    st->clip = INFINITY;
    st->waiting = malloc(st->cap * sizeof *st->waiting);
    st->L = malloc(st->cap * st->cap * sizeof *st->L);
    st->alpha = malloc(st->cap * sizeof *st->alpha);
    st->row = calloc(st->cap, sizeof *st->row);
    st->ssq = malloc((st->n_pool ? st->n_pool : 1) * sizeof *st->ssq);
    st->dot = malloc((st->n_pool ? st->n_pool : 1) * sizeof *st->dot);
    st->acq = malloc((st->n_pool ? st->n_pool : 1) * sizeof *st->acq);
    st->kvec = malloc(st->cap * sizeof *st->kvec);
    st->local =
        malloc((st->local_cap ? st->local_cap : 1) * sizeof *st->local);
    if (!st->obs_index || !st->obs_x || !st->obs_y || !st->obs_raw ||
        !st->waiting || !st->L || !st->alpha || !st->row || !st->ssq ||
        !st->dot || !st->acq || !st->kvec || !st->local)
        return -1;
    return 0;
}

static int bayes_init(void *state, const cutune__strategy_ctx *ctx)
{
    bayes_state *st = state;
    const cutune__space *s = ctx->space;
    size_t n = cutune__space_size(s);
    memset(st, 0, sizeof *st);
    if (cutune__strategy_base_init(&st->base, ctx))
        return -1;
    st->prm = ctx->params ? *(const cutune__bayes_params *)ctx->params
                          : cutune__bayes_params_std;
    size_t np = st->base.n_params ? st->base.n_params : 1;
    st->varying = malloc(np * sizeof *st->varying);
    st->scale = malloc(np * sizeof *st->scale);
    st->xbuf = malloc(np * sizeof *st->xbuf);
    st->inv_ell = malloc(np * sizeof *st->inv_ell);
    st->try_ell = malloc(np * sizeof *st->try_ell);
    st->config = malloc(np * sizeof *st->config);
    if (!st->varying || !st->scale || !st->xbuf || !st->config ||
        !st->inv_ell || !st->try_ell)
        goto fail;
    for (size_t p = 0; p < st->base.n_params; p++) {
        size_t nv = cutune__space_value_count(s, p);
        if (nv > 1) {
            st->scale[st->d] = 1.0 / (double)(nv - 1);
            st->varying[st->d++] = p;
        }
        st->local_cap += nv - 1;
    }
    st->cap = ctx->budget < GP_MAX ? ctx->budget : GP_MAX;
    if (st->cap > n)
        st->cap = n;
    if (st->cap < 1)
        st->cap = 1;

    if (build_pool(st, n) != 0 || alloc_observations(st) != 0 ||
        cutune__cost_model_init(&st->costs, s) != 0)
        goto fail;

    st->against_clock = ctx->budget == CUTUNE__UNLIMITED;
    st->next_refit = st->prm.initial;
    return 0;
fail:
    bayes_destroy(st);
    return -1;
}

/* Matern 5/2 correlation of two feature vectors, each parameter's
 * difference scaled by its inverse length scale. */
static double matern(const double *a, const double *b, size_t d,
                     const double *inv_ell)
{
    double r2 = 0;
    for (size_t j = 0; j < d; j++) {
        double t = (a[j] - b[j]) * inv_ell[j];
        r2 += t * t;
    }
    double r = sqrt(5.0 * r2);
    return (1.0 + r + r * r / 3.0) * exp(-r);
}

/* Appends observation j (< n_fit + 1) to the factor L for the current
 * hyperparameters; L holds j rows already. */
static void factor_append(bayes_state *st, size_t j, double sig2,
                          const double *inv_ell, double mean)
{
    double *Lj = st->L + j * st->cap;
    const double *xj = st->obs_x + j * st->d;
    for (size_t i = 0; i < j; i++)
        Lj[i] = sig2 * matern(st->obs_x + i * st->d, xj, st->d, inv_ell);
    if (j > 0) {
        gsl_matrix_view Lv =
            gsl_matrix_view_array_with_tda(st->L, j, j, st->cap);
        gsl_vector_view lv = gsl_vector_view_array(Lj, j);
        gsl_blas_dtrsv(CblasLower, CblasNoTrans, CblasNonUnit, &Lv.matrix,
                       &lv.vector);
    }
    double ss = 0;
    for (size_t i = 0; i < j; i++)
        ss += Lj[i] * Lj[i];
    double diag = sig2 * (1.0 + NOISE) - ss;
    /* Rounding can leave a duplicate-like point with nothing; a floor of
     * the noise keeps the factor well defined. */
    if (diag < sig2 * NOISE)
        diag = sig2 * NOISE;
    Lj[j] = sqrt(diag);
    double acc = st->obs_y[j] - mean;
    for (size_t i = 0; i < j; i++)
        acc -= Lj[i] * st->alpha[i];
    st->alpha[j] = acc / Lj[j];
}

/* Extends every candidate's posterior by observation j. */
static int rows_append(bayes_state *st, size_t j)
{
    if (!st->row[j]) {
        st->row[j] =
            malloc((st->n_pool ? st->n_pool : 1) * sizeof *st->row[j]);
        if (!st->row[j])
            return -1;
    }
    double *r = st->row[j];
    const double *Lj = st->L + j * st->cap;
    const double *xj = st->obs_x + j * st->d;
    for (size_t c = 0; c < st->n_pool; c++)
        r[c] =
            st->sig2 * matern(st->pool_x + c * st->d, xj, st->d, st->inv_ell);
    for (size_t i = 0; i < j; i++) {
        const double *ri = st->row[i];
        double l = Lj[i];
        for (size_t c = 0; c < st->n_pool; c++)
            r[c] -= l * ri[c];
    }
    double inv = 1.0 / Lj[j], a = st->alpha[j];
    for (size_t c = 0; c < st->n_pool; c++) {
        r[c] *= inv;
        st->ssq[c] += r[c] * r[c];
        st->dot[c] += r[c] * a;
    }
    return 0;
}

/* Log marginal likelihood (up to a constant) of the observations for
 * length scales try_ell; leaves L and alpha factored for them. */
static double log_likelihood(bayes_state *st, double var, double mean)
{
    double lml = 0;
    for (size_t j = 0; j < st->n_obs; j++) {
        factor_append(st, j, var, st->try_ell, mean);
        lml -= 0.5 * st->alpha[j] * st->alpha[j] + log(st->L[j * st->cap + j]);
    }
    return lml;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Models every observation above the clip quantile of those so far as
 * that quantile (clip_quantile 1: none clipped). */
static void clip_observations(bayes_state *st)
{
    size_t n = st->n_obs;
    if (st->prm.clip_quantile < 1 && n > 0) {
        memcpy(st->kvec, st->obs_raw, n * sizeof *st->kvec);
        qsort(st->kvec, n, sizeof *st->kvec, cmp_double);
        size_t at = (size_t)(st->prm.clip_quantile * (double)(n - 1));
        st->clip = st->kvec[at];
    }
    for (size_t j = 0; j < n; j++)
        st->obs_y[j] = st->obs_raw[j] < st->clip ? st->obs_raw[j] : st->clip;
}

/* Chooses the length scales (into inv_ell) by marginal likelihood: one
 * shared scale over length_grid, then ard_sweeps passes over the
 * parameters, each one's own scale over length_grid and irrelevant_grid
 * with the others held. */
static void choose_lengths(bayes_state *st, double var, double mean)
{
    double best = -INFINITY;
    size_t ng = sizeof length_grid / sizeof *length_grid;
    size_t ni = sizeof irrelevant_grid / sizeof *irrelevant_grid;
    for (size_t a = 0; a < ng; a++) {
        for (size_t j = 0; j < st->d; j++)
            st->try_ell[j] = 1.0 / length_grid[a];
        double lml = log_likelihood(st, var, mean);
        if (lml > best) {
            best = lml;
            memcpy(st->inv_ell, st->try_ell, st->d * sizeof *st->inv_ell);
        }
    }
    for (size_t sweep = 0; sweep < st->prm.ard_sweeps; sweep++) {
        for (size_t dim = 0; dim < st->d; dim++) {
            memcpy(st->try_ell, st->inv_ell, st->d * sizeof *st->inv_ell);
            for (size_t a = 0; a < ng + ni; a++) {
                double l = a < ng ? length_grid[a] : irrelevant_grid[a - ng];
                st->try_ell[dim] = 1.0 / l;
                double lml = log_likelihood(st, var, mean);
                if (lml > best) {
                    best = lml;
                    st->inv_ell[dim] = st->try_ell[dim];
                }
            }
        }
    }
}

/* Chooses hyperparameters by marginal likelihood and rebuilds the model
 * on all observations. */
static int refit(bayes_state *st)
{
    size_t n = st->n_obs;
    double mean = 0, var = 0;
    clip_observations(st);
    for (size_t j = 0; j < n; j++)
        mean += st->obs_y[j];
    mean /= (double)n;
    for (size_t j = 0; j < n; j++)
        var += (st->obs_y[j] - mean) * (st->obs_y[j] - mean);
    var = n > 1 ? var / (double)(n - 1) : 1.0;
    if (!(var > 1e-12))
        var = 1e-12;
    choose_lengths(st, var, mean);
    st->mean = mean;
    st->sig2 = var;
    memset(st->ssq, 0, st->n_pool * sizeof *st->ssq);
    memset(st->dot, 0, st->n_pool * sizeof *st->dot);
    for (size_t j = 0; j < n; j++) {
        factor_append(st, j, st->sig2, st->inv_ell, st->mean);
        if (rows_append(st, j))
            return -1;
    }
    st->n_fit = n;
    st->fitted = 1;
    st->next_refit = (size_t)ceil((double)n * REFIT_GROWTH);
    return 0;
}

static int add_observation(bayes_state *st, size_t index, double y)
{
    if (st->n_obs >= st->cap)
        return 0;
    size_t j = st->n_obs++;
    st->obs_index[j] = index;
    st->obs_raw[j] = y;
    st->obs_y[j] = y < st->clip ? y : st->clip;
    features(st, index, st->obs_x + j * st->d);
    if (st->fitted && j == st->n_fit) {
        factor_append(st, j, st->sig2, st->inv_ell, st->mean);
        if (rows_append(st, j))
            return -1;
        st->n_fit = j + 1;
    }
    return 0;
}

/* The driver tells a result's cost just before the result. */
static void bayes_cost(void *state, size_t index, double seconds)
{
    bayes_state *st = state;
    cutune__cost_model_tell(&st->costs, index, seconds);
}

static void bayes_report(void *state, size_t index, double objective)
{
    bayes_state *st = state;
    int fresh = index < st->base.h.n && !st->base.h.done[index];
    cutune__cost_model_settle(&st->costs, index, fresh);
    if (!fresh)
        return;
    cutune__history_report(&st->base.h, index, objective);
    objective = st->base.h.objective[index];
    if (isfinite(objective)) {
        double y = log(objective > 1e-300 ? objective : 1e-300);
        if (!st->any_finite || y > st->y_worst)
            st->y_worst = y;
        st->any_finite = 1;
        /* Memory failures inside add_observation leave the model short of
         * this point; the search goes on with what it has. */
        (void)add_observation(st, index, y);
        for (size_t i = 0; i < st->n_waiting; i++)
            (void)add_observation(st, st->waiting[i], st->y_worst);
        st->n_waiting = 0;
    } else if (st->any_finite) {
        (void)add_observation(st, index, st->y_worst);
    } else if (st->n_waiting < st->cap) {
        st->waiting[st->n_waiting++] = index;
    }
}

static double expected_improvement(double mu, double var, double best)
{
    double sd = var > 0 ? sqrt(var) : 0;
    if (sd < 1e-12)
        return best > mu ? best - mu : 0;
    double z = (best - mu) / sd;
    return (best - mu) * gsl_cdf_ugaussian_P(z) +
           sd * gsl_ran_ugaussian_pdf(z);
}

/* Posterior of a configuration outside the pool, from scratch. */
static void posterior_of(bayes_state *st, size_t index, double *mu,
                         double *var)
{
    size_t n = st->n_fit;
    features(st, index, st->xbuf);
    for (size_t j = 0; j < n; j++)
        st->kvec[j] = st->sig2 * matern(st->obs_x + j * st->d, st->xbuf, st->d,
                                        st->inv_ell);
    gsl_matrix_view Lv = gsl_matrix_view_array_with_tda(st->L, n, n, st->cap);
    gsl_vector_view kv = gsl_vector_view_array(st->kvec, n);
    gsl_blas_dtrsv(CblasLower, CblasNoTrans, CblasNonUnit, &Lv.matrix,
                   &kv.vector);
    double ss = 0, dt = 0;
    for (size_t j = 0; j < n; j++) {
        ss += st->kvec[j] * st->kvec[j];
        dt += st->kvec[j] * st->alpha[j];
    }
    *mu = st->mean + dt;
    *var = st->sig2 - ss;
}

static double best_y(const bayes_state *st)
{
    return log(st->base.h.best_objective > 1e-300 ? st->base.h.best_objective
                                                  : 1e-300);
}

/* Expected improvement per predicted second (to the power cost_power,
 * relative to the mean cost) when the run is against the clock and costs
 * have been reported; as it is otherwise. */
static double per_cost(const bayes_state *st, double ei, size_t index)
{
    if (!st->against_clock || st->prm.cost_power <= 0 || st->costs.n < 2 ||
        ei <= 0)
        return ei;
    return ei * exp(-st->prm.cost_power *
                    cutune__cost_model_relative(&st->costs, index));
}

/* One proposal by expected improvement; `picked` of this batch so far
 * damp their neighbourhoods. CUTUNE__NONE when no candidate is left. */
static size_t propose_ei(bayes_state *st, const size_t *picked,
                         size_t n_picked)
{
    double fbest = best_y(st);
    size_t arg = CUTUNE__NONE;
    double top = -1;
    for (size_t t = 0; t < st->prm.candidates; t++) {
        size_t c = (size_t)gsl_rng_uniform_int(st->base.rng,
                                               (unsigned long)st->n_pool);
        size_t idx = st->pool[c];
        if (cutune__history_is_taken(&st->base.h, idx))
            continue;
        double ei =
            per_cost(st,
                     expected_improvement(st->mean + st->dot[c],
                                          st->sig2 - st->ssq[c], fbest),
                     idx);
        for (size_t i = 0; i < n_picked && ei > 0; i++) {
            features(st, picked[i], st->xbuf);
            ei *= 1.0 -
                  matern(st->pool_x + c * st->d, st->xbuf, st->d, st->inv_ell);
        }
        if (ei > top) {
            top = ei;
            arg = idx;
        }
    }
    if (!st->pool_is_space && st->base.h.best != CUTUNE__NONE) {
        size_t m = cutune__space_neighbours(st->base.space, st->base.h.best,
                                            CUTUNE__NEIGHBOUR_ANY, st->local,
                                            st->local_cap);
        if (m > st->local_cap)
            m = st->local_cap;
        for (size_t i = 0; i < m; i++) {
            size_t idx = st->local[i];
            double mu, var;
            if (cutune__history_is_taken(&st->base.h, idx))
                continue;
            posterior_of(st, idx, &mu, &var);
            double ei =
                per_cost(st, expected_improvement(mu, var, fbest), idx);
            if (ei > top) {
                top = ei;
                arg = idx;
            }
        }
    }
    return arg;
}

/* Around the best, once the model is full. */
static size_t propose_near_best(bayes_state *st)
{
    size_t idx = CUTUNE__NONE;
    if (st->base.h.best != CUTUNE__NONE) {
        memcpy(st->config,
               cutune__space_config(st->base.space, st->base.h.best),
               st->base.n_params * sizeof *st->config);
        idx = cutune__history_untaken_near(&st->base.h, st->base.space,
                                           st->config, st->base.rng, 8);
    }
    if (idx == CUTUNE__NONE)
        idx = cutune__history_random_untaken(&st->base.h, st->base.rng);
    return idx;
}

static size_t bayes_next(void *state, size_t *out, size_t cap)
{
    bayes_state *st = state;
    size_t k = 0;
    if (st->base.h.n_taken >= st->base.h.n)
        return 0;
    if (st->base.start != CUTUNE__NONE) {
        out[k++] = st->base.start;
        cutune__history_take(&st->base.h, st->base.start);
        st->base.start = CUTUNE__NONE;
    }
    /* The initial design, and random configurations for as long as too
     * little has run to build a model on. */
    if (st->base.h.n_taken < st->prm.initial || !st->any_finite ||
        st->n_obs < 2) {
        while (k < cap && (k == 0 || st->base.h.n_taken < st->prm.initial)) {
            size_t idx =
                cutune__history_random_untaken(&st->base.h, st->base.rng);
            if (idx == CUTUNE__NONE)
                break;
            cutune__history_take(&st->base.h, idx);
            out[k++] = idx;
        }
        return k;
    }
    if (k > 0)
        return k;
    /* Out of memory for the model: go on around the best. */
    int model = 1;
    if ((!st->fitted || st->n_obs >= st->next_refit) && refit(st))
        model = 0;
    while (k < cap) {
        size_t idx = !model || st->n_obs >= st->cap ? propose_near_best(st)
                                                    : propose_ei(st, out, k);
        if (idx == CUTUNE__NONE)
            idx = cutune__history_random_untaken(&st->base.h, st->base.rng);
        if (idx == CUTUNE__NONE)
            break;
        cutune__history_take(&st->base.h, idx);
        out[k++] = idx;
    }
    return k;
}

const cutune__strategy_type cutune__strategy_bayes_type = {
    .name = "bayes",
    .state_size = sizeof(bayes_state),
    .init = bayes_init,
    .next = bayes_next,
    .report = bayes_report,
    .destroy = bayes_destroy,
    .cost = bayes_cost,
};

const cutune__strategy_type *cutune__strategy_bayes =
    &cutune__strategy_bayes_type;
