/* The search driver and the registry of strategies; see strategy.h. */
#include "strategy.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A strategy that proposes this many configurations in a row without a new
 * one is taken to be stuck rather than about to find something. */
#define STALE_LIMIT 1000

const cutune__strategy_type *const cutune__strategies[] = {
    &cutune__strategy_default_type,
    &cutune__strategy_bayes_type,
    &cutune__strategy_forest_type,
    &cutune__strategy_local_type,
    &cutune__strategy_annealing_type,
    &cutune__strategy_genetic_type,
    &cutune__strategy_diff_evo_type,
    &cutune__strategy_sobol_type,
    &cutune__strategy_random_type,
    &cutune__strategy_brute_force_type,
    NULL,
};

/* Five strategies began alike; a slip in one copy (a start past the space
 * proposed as a configuration) would have shown only in that strategy. */
int cutune__strategy_base_init(cutune__strategy_base *b,
                               const cutune__strategy_ctx *ctx)
{
    size_t n = cutune__space_size(ctx->space);
    if (cutune__history_init(&b->h, n))
        return -1;
    b->space = ctx->space;
    b->rng = ctx->rng;
    b->start = ctx->start < n ? ctx->start : CUTUNE__NONE;
    b->n_params = cutune__space_param_count(ctx->space);
    return 0;
}

void cutune__strategy_base_free(cutune__strategy_base *b)
{
    cutune__history_free(&b->h);
}

const cutune__strategy_type *cutune__strategy_find(const char *name)
{
    if (!name)
        return NULL;
    for (size_t i = 0; cutune__strategies[i]; i++) {
        if (strcmp(cutune__strategies[i]->name, name) == 0)
            return cutune__strategies[i];
    }
    return NULL;
}

/* What the driver remembers of each configuration. */
enum {
    SEEN_NEVER = 0,
    SEEN_PENDING, /* in the batch being evaluated */
    SEEN_DONE
};

typedef struct run_state {
    const cutune__strategy_type *type;
    void *strategy;
    size_t n;
    unsigned char *seen; /* n */
    double *objective;   /* n */
    size_t batch;
    size_t *proposals; /* batch */
    size_t *fresh;     /* batch: new configurations to evaluate */
    size_t *repeats;   /* batch: proposed twice within the batch */
    double *results;   /* batch */
    double *costs;     /* batch: seconds, NAN while unknown */
    size_t n_fresh;    /* of the batch being evaluated */
    size_t reported;   /* of them, reported while it was evaluated */
    int had_enough;    /* the strategy wanted no more of the batch */
    cutune__search_result *result;
} run_state;

static void remember(run_state *rs, size_t index, double objective,
                     double cost)
{
    cutune__search_result *r = rs->result;
    /* The header promises INFINITY for failures; NaN would also defeat
     * every comparison below. */
    if (isnan(objective))
        objective = INFINITY;
    rs->seen[index] = SEEN_DONE;
    rs->objective[index] = objective;
    r->evaluations++;
    if (isfinite(objective) &&
        (r->best == CUTUNE__NONE || objective < r->best_objective ||
         (objective == r->best_objective && index < r->best))) {
        r->best = index;
        r->best_objective = objective;
    }
    if (rs->type->cost && isfinite(cost) && cost >= 0)
        rs->type->cost(rs->strategy, index, cost);
    rs->type->report(rs->strategy, index, objective);
}

/* The evaluator's call after each result: the result goes to the strategy
 * at once, so that it can stop the batch where proposals made one by one
 * would have stopped. */
static int on_result(void *ctx, size_t i, double objective)
{
    run_state *rs = ctx;
    if (rs->had_enough || i != rs->reported || i >= rs->n_fresh)
        return !rs->had_enough; /* out of order: reported afterwards */
    remember(rs, rs->fresh[i], objective, rs->costs[i]);
    rs->reported = i + 1;
    if (rs->type->enough && rs->type->enough(rs->strategy))
        rs->had_enough = 1;
    return !rs->had_enough;
}

void cutune__search_cost(void *more_ctx, size_t i, double seconds)
{
    run_state *rs = more_ctx;
    if (rs && i < rs->n_fresh)
        rs->costs[i] = seconds;
}

double cutune__search_try_seconds(double compile_ms, double time_ms)
{
    double ms = compile_ms > 0 ? compile_ms : 0;
    if (time_ms > 0 && isfinite(time_ms))
        ms += time_ms * CUTUNE__COST_LAUNCHES;
    return ms / 1e3;
}

size_t cutune__search_ahead(void *more_ctx, size_t index, size_t *out,
                            size_t cap)
{
    run_state *rs = more_ctx;
    if (!rs || !rs->type->ahead || index >= rs->n || cap == 0)
        return 0;
    size_t k = rs->type->ahead(rs->strategy, index, out, cap), m = 0;
    if (k > cap)
        k = cap;
    for (size_t i = 0; i < k; i++)
        if (out[i] < rs->n && rs->seen[out[i]] == SEEN_NEVER)
            out[m++] = out[i];
    return m;
}

/* A proposal that will not be evaluated in this round. */
static void withdraw(run_state *rs, size_t index)
{
    rs->seen[index] = SEEN_NEVER;
    if (rs->type->withdraw)
        rs->type->withdraw(rs->strategy, index);
}

/* One round of propose, evaluate, report. Returns 1 to go on, 0 when the
 * search is over, -2 when the evaluator aborted. */
static int run_round(run_state *rs, size_t budget, size_t *stale,
                     cutune__eval_fn eval, void *user)
{
    size_t k = rs->type->next(rs->strategy, rs->proposals, rs->batch);
    size_t n_fresh = 0, n_repeats = 0, done;
    int rc;

    if (k == 0)
        return 0;
    if (k > rs->batch)
        k = rs->batch;
    for (size_t i = 0; i < k; i++) {
        size_t idx = rs->proposals[i];
        /* An index outside the space is a strategy bug; it is ignored and
         * counts towards the stale limit. */
        if (idx >= rs->n)
            continue;
        if (rs->seen[idx] == SEEN_DONE)
            rs->type->report(rs->strategy, idx, rs->objective[idx]);
        else if (rs->seen[idx] == SEEN_PENDING)
            rs->repeats[n_repeats++] = idx;
        else {
            rs->seen[idx] = SEEN_PENDING;
            rs->fresh[n_fresh++] = idx;
        }
    }
    if (n_fresh == 0) {
        *stale += k;
        return *stale < STALE_LIMIT;
    }
    *stale = 0;

    size_t left = budget - rs->result->evaluations;
    for (size_t i = left; i < n_fresh; i++)
        withdraw(rs, rs->fresh[i]);
    if (n_fresh > left)
        n_fresh = left;

    /* CUTUNE__NONE tells an evaluator that left *done alone apart from one
     * that set it: the former evaluated everything, unless it aborted. */
    done = CUTUNE__NONE;
    rs->n_fresh = n_fresh;
    rs->reported = 0;
    rs->had_enough = 0;
    for (size_t i = 0; i < n_fresh; i++)
        rs->costs[i] = NAN;
    rc = eval(user, rs->fresh, n_fresh, rs->results, &done, on_result, rs);
    if (done == CUTUNE__NONE)
        done = rc == 0 ? n_fresh : 0;
    if (done > n_fresh)
        done = n_fresh;
    if (done < rs->reported)
        done = rs->reported;
    for (size_t i = rs->reported; i < done; i++)
        remember(rs, rs->fresh[i], rs->results[i], rs->costs[i]);
    for (size_t i = done; i < n_fresh; i++)
        withdraw(rs, rs->fresh[i]);
    for (size_t i = 0; i < n_repeats; i++) {
        size_t idx = rs->repeats[i];
        if (rs->seen[idx] == SEEN_DONE)
            rs->type->report(rs->strategy, idx, rs->objective[idx]);
    }
    if (rc != 0)
        return -2;
    /* An evaluator that stops short, unasked, has run out of its own
     * time. */
    if (done < n_fresh && !rs->had_enough)
        return 0;
    return 1;
}

size_t cutune__search_batch(const cutune__strategy_type *type, int threads,
                            size_t slots)
{
    size_t batch = 2 * (size_t)(threads > 0 ? threads : 1);
    if (type->oblivious)
        batch *= CUTUNE__OBLIVIOUS_BATCHES;
    if (slots > 1 && batch < 2 * slots)
        batch = 2 * slots;
    return batch;
}

/* A proposal still in flight when the evaluator stopped goes back. */
static void withdraw_pending(run_state *rs, size_t *n_pending)
{
    for (size_t i = 0; i < *n_pending; i++)
        withdraw(rs, rs->fresh[i]);
    *n_pending = 0;
}

/* Proposals one at a time, up to the evaluator's window in flight,
 * results taken in the order they come. rs->fresh holds those in flight.
 * Returns 0, or -2 when the evaluator aborted. */
static int run_async(run_state *rs, size_t budget,
                     const cutune__async_eval *ev, void *user)
{
    size_t n_pending = 0, stale = 0;
    cutune__search_result *r = rs->result;
    while (r->evaluations < rs->n && r->evaluations < budget) {
        size_t window = ev->window(user);
        if (window > rs->batch)
            window = rs->batch;
        int dry = 0;
        while (!dry && n_pending < (window ? window : 1) &&
               r->evaluations + n_pending < budget) {
            if (rs->type->next(rs->strategy, rs->proposals, 1) == 0) {
                dry = 1;
                break;
            }
            size_t idx = rs->proposals[0];
            if (idx < rs->n && rs->seen[idx] == SEEN_NEVER) {
                stale = 0;
                rs->seen[idx] = SEEN_PENDING;
                rs->fresh[n_pending++] = idx;
                if (ev->submit(user, idx) != 0) {
                    withdraw_pending(rs, &n_pending);
                    return -2;
                }
                continue;
            }
            if (idx < rs->n && rs->seen[idx] == SEEN_DONE)
                rs->type->report(rs->strategy, idx, rs->objective[idx]);
            if (++stale >= STALE_LIMIT)
                dry = 1;
        }
        if (n_pending == 0)
            break;
        size_t idx;
        double objective, cost;
        int rc = ev->result(user, &idx, &objective, &cost);
        if (rc != 0) {
            withdraw_pending(rs, &n_pending);
            return rc < 0 ? -2 : 0;
        }
        for (size_t i = 0; i < n_pending; i++)
            if (rs->fresh[i] == idx) {
                rs->fresh[i] = rs->fresh[--n_pending];
                remember(rs, idx, objective, cost);
                break;
            }
    }
    withdraw_pending(rs, &n_pending);
    return 0;
}

/* A run's working memory, for rs->type, rs->n and rs->batch: 0, or -1
 * when memory ran out (run_state_free frees what there is either way). */
static int run_state_alloc(run_state *rs)
{
    const cutune__strategy_type *type = rs->type;
    rs->strategy = calloc(1, type->state_size ? type->state_size : 1);
    rs->seen = calloc(rs->n, sizeof *rs->seen);
    rs->objective = malloc(rs->n * sizeof *rs->objective);
    rs->proposals = malloc(rs->batch * sizeof *rs->proposals);
    rs->fresh = malloc(rs->batch * sizeof *rs->fresh);
    rs->repeats = malloc(rs->batch * sizeof *rs->repeats);
    rs->results = malloc(rs->batch * sizeof *rs->results);
    rs->costs = malloc(rs->batch * sizeof *rs->costs);
    return rs->strategy && rs->seen && rs->objective && rs->proposals &&
                   rs->fresh && rs->repeats && rs->results && rs->costs
               ? 0
               : -1;
}

static void run_state_free(run_state *rs)
{
    free(rs->costs);
    free(rs->results);
    free(rs->repeats);
    free(rs->fresh);
    free(rs->proposals);
    free(rs->objective);
    free(rs->seen);
    free(rs->strategy);
}

/* The strategy's rounds until the budget or the space is spent: in
 * flight when the evaluator is asynchronous (ev), else batch by batch.
 * 0, or -2 when the evaluator stopped the run. */
static int run_rounds(run_state *rs, size_t budget, cutune__eval_fn eval,
                      const cutune__async_eval *ev, void *user)
{
    if (ev)
        return run_async(rs, budget, ev, user);
    size_t stale = 0;
    while (rs->result->evaluations < rs->n &&
           rs->result->evaluations < budget) {
        int more = run_round(rs, budget, &stale, eval, user);
        if (more == -2)
            return -2;
        if (more == 0)
            break;
    }
    return 0;
}

/* cutune__search_run and cutune__search_run_async: `ev` NULL for the
 * former. */
static int search_run(const cutune__strategy_type *type,
                      const cutune__space *space,
                      const cutune__search_options *options,
                      cutune__eval_fn eval, const cutune__async_eval *ev,
                      void *user, cutune__search_result *result)
{
    cutune__search_result local_result;
    cutune__search_options defaults;
    cutune__strategy_ctx ctx;
    run_state rs;
    gsl_rng *rng = NULL;
    size_t budget;
    int rc = -1, initialised = 0;

    if (!result)
        result = &local_result;
    result->evaluations = 0;
    result->best = CUTUNE__NONE;
    result->best_objective = INFINITY;
    if (!options) {
        memset(&defaults, 0, sizeof defaults);
        defaults.start = CUTUNE__NONE;
        options = &defaults;
    }
    memset(&rs, 0, sizeof rs);
    rs.type = type;
    rs.result = result;
    rs.n = cutune__space_size(space);
    if (rs.n == 0)
        return 0;
    budget = options->max_evals ? options->max_evals : CUTUNE__UNLIMITED;
    rs.batch = options->batch ? options->batch : 1;

    rng = gsl_rng_alloc(gsl_rng_mt19937);
    if (run_state_alloc(&rs) != 0 || !rng)
        goto out;
    /* mt19937 takes 32 bits of seed; fold the high half in so that no bit
     * of the caller's seed is ignored. */
    gsl_rng_set(rng, (unsigned long)((options->seed ^ (options->seed >> 32)) &
                                     0xffffffffu));

    ctx.space = space;
    ctx.rng = rng;
    ctx.start = options->start < rs.n ? options->start : CUTUNE__NONE;
    ctx.budget = budget;
    ctx.params = options->params;
    if (type->init(rs.strategy, &ctx))
        goto out;
    initialised = 1;

    rc = run_rounds(&rs, budget, eval, ev, user);
out:
    if (initialised && type->destroy)
        type->destroy(rs.strategy);
    if (rng)
        gsl_rng_free(rng);
    run_state_free(&rs);
    return rc;
}

int cutune__search_run(const cutune__strategy_type *type,
                       const cutune__space *space,
                       const cutune__search_options *options,
                       cutune__eval_fn eval, void *user,
                       cutune__search_result *result)
{
    return search_run(type, space, options, eval, NULL, user, result);
}

int cutune__search_run_async(const cutune__strategy_type *type,
                             const cutune__space *space,
                             const cutune__search_options *options,
                             const cutune__async_eval *ev, void *user,
                             cutune__search_result *result)
{
    return search_run(type, space, options, NULL, ev, user, result);
}
