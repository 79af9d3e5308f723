/* The search driver, brute force and local search on a synthetic
 * objective: a smooth bowl over four launch-like parameters, with a
 * condition and a few failing configurations. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../check.h"
#include "launch_space.h"
#include "strategy/strategy.h"

#define MAX_LOG 100000

/* What the evaluator records, so that tests can see every call. */
typedef struct evaluator {
    const cutune__space *space;
    size_t *count;       /* per configuration */
    size_t log[MAX_LOG]; /* indices in evaluation order */
    size_t n_log;
    size_t calls;
    size_t abort_at_call; /* return -1 on this call (1-based); 0: never */
    size_t short_at_call; /* evaluate only part of this call's batch */
    int unimodal;         /* no failures */
    int all_at_once;      /* never hands results over one at a time */
    int negate;           /* the objective turned upside down */
} evaluator;

/* Minimum at bx = 128, by = 2, unroll = 3, flag = 1. */
static double objective_of(const evaluator *ev, size_t index)
{
    const uint32_t *c = cutune__space_config(ev->space, index);
    double bx = (double)c[0], by = (double)c[1], u = (double)c[2];
    double f = (double)c[3];
    if (!ev->unimodal && c[2] == 7 && (16LL << c[0]) * (1LL << c[1]) == 1024)
        return INFINITY;
    return 1.0 + (bx - 3) * (bx - 3) + 0.7 * (by - 1) * (by - 1) +
           0.3 * (u - 2) * (u - 2) + 0.2 * (1 - f);
}

static int eval_cb(void *user, const size_t *indices, size_t n,
                   double *objectives, size_t *done, cutune__eval_more_fn more,
                   void *more_ctx)
{
    /* Results are handed over one at a time, as the tuner does. */
    evaluator *ev = user;
    ev->calls++;
    if (ev->abort_at_call && ev->calls == ev->abort_at_call)
        return -1;
    /* Out of time on this call: it stops on its own, and hands the
     * results over at the end (a strategy must not take its stop for one
     * it asked for). */
    int short_call = ev->short_at_call && ev->calls == ev->short_at_call;
    if (short_call && n > 1)
        n = n / 2;
    for (size_t i = 0; i < n; i++) {
        objectives[i] = objective_of(ev, indices[i]);
        if (ev->negate && isfinite(objectives[i]))
            objectives[i] = 100.0 - objectives[i];
        ev->count[indices[i]]++;
        if (ev->n_log < MAX_LOG)
            ev->log[ev->n_log++] = indices[i];
        if (!ev->all_at_once && !short_call && more &&
            !more(more_ctx, i, objectives[i])) {
            n = i + 1;
            break;
        }
    }
    *done = n;
    return 0;
}

static evaluator *evaluator_new(const cutune__space *s)
{
    evaluator *ev = calloc(1, sizeof *ev);
    if (!ev)
        return NULL;
    ev->space = s;
    ev->count = calloc(cutune__space_size(s), sizeof *ev->count);
    if (!ev->count) {
        free(ev);
        return NULL;
    }
    return ev;
}

static void evaluator_free(evaluator *ev)
{
    if (!ev)
        return;
    free(ev->count);
    free(ev);
}

static size_t true_optimum(evaluator *ev, double *best)
{
    size_t b = SIZE_MAX;
    *best = INFINITY;
    for (size_t i = 0; i < cutune__space_size(ev->space); i++) {
        double o = objective_of(ev, i);
        if (isfinite(o) && (b == SIZE_MAX || o < *best)) {
            b = i;
            *best = o;
        }
    }
    return b;
}

static int each_once(const evaluator *ev, size_t *evaluated)
{
    int ok = 1;
    *evaluated = 0;
    for (size_t i = 0; i < cutune__space_size(ev->space); i++) {
        if (ev->count[i] > 1)
            ok = 0;
        *evaluated += ev->count[i];
    }
    return ok;
}

static cutune__search_options opts(size_t max_evals, size_t batch,
                                   uint64_t seed, size_t start)
{
    cutune__search_options o = {0};
    o.max_evals = max_evals;
    o.batch = batch;
    o.seed = seed;
    o.start = start;
    return o;
}

static void test_registry(void)
{
    CHECK(cutune__strategies[0] == cutune__strategy_default);
    CHECK(cutune__strategy_find("local") == cutune__strategy_local);
    CHECK(cutune__strategy_find("brute_force") ==
          cutune__strategy_brute_force);
    CHECK(cutune__strategy_find("annealing") == cutune__strategy_annealing);
    CHECK(cutune__strategy_find("nosuch") == NULL);
    CHECK(cutune__strategy_find(NULL) == NULL);
    size_t n = 0;
    while (cutune__strategies[n])
        n++;
    CHECK_INT(n, 10);
}

static void test_brute_force(const cutune__space *s)
{
    size_t n = cutune__space_size(s), evaluated;
    for (size_t batch = 1; batch <= 7; batch += 6) {
        evaluator *ev = evaluator_new(s);
        cutune__search_options o = opts(0, batch, 1, SIZE_MAX);
        cutune__search_result r;
        double best;
        size_t opt = true_optimum(ev, &best);
        CHECK_INT(cutune__search_run(cutune__strategy_brute_force, s, &o,
                                     eval_cb, ev, &r),
                  0);
        CHECK_INT(r.evaluations, n);
        CHECK_INT(r.best, opt);
        CHECK_NEAR(r.best_objective, best, 0);
        CHECK(each_once(ev, &evaluated));
        CHECK_INT(evaluated, n);
        CHECK_INT(ev->log[0], 0);
        CHECK_INT(ev->log[n - 1], n - 1);
        evaluator_free(ev);
    }

    /* The start goes first and is not evaluated again. */
    evaluator *ev = evaluator_new(s);
    cutune__search_options o = opts(0, 4, 1, n / 2);
    cutune__search_result r;
    CHECK_INT(cutune__search_run(cutune__strategy_brute_force, s, &o, eval_cb,
                                 ev, &r),
              0);
    CHECK_INT(ev->log[0], n / 2);
    CHECK_INT(ev->log[1], 0);
    CHECK(each_once(ev, &evaluated));
    CHECK_INT(evaluated, n);
    evaluator_free(ev);
}

static void test_local_finds_optimum(const cutune__space *s)
{
    const size_t budget = 120;
    int found_all = 1, within = 1, once = 1;
    size_t total = 0;
    for (uint64_t seed = 1; seed <= 20; seed++) {
        for (size_t batch = 1; batch <= 4; batch += 3) {
            evaluator *ev = evaluator_new(s);
            double best;
            ev->unimodal = 1;
            size_t opt = true_optimum(ev, &best);
            /* From a random start, and from the worst corner. */
            size_t start = seed % 2 ? SIZE_MAX : 0;
            cutune__search_options o = opts(budget, batch, seed, start);
            cutune__search_result r;
            size_t evaluated;
            CHECK_INT(cutune__search_run(cutune__strategy_local, s, &o,
                                         eval_cb, ev, &r),
                      0);
            if (r.best != opt)
                found_all = 0;
            if (r.evaluations > budget)
                within = 0;
            if (!each_once(ev, &evaluated) || evaluated != r.evaluations)
                once = 0;
            /* Where in the log the optimum first appeared. */
            for (size_t i = 0; i < ev->n_log; i++) {
                if (ev->log[i] == opt) {
                    total += i + 1;
                    break;
                }
            }
            evaluator_free(ev);
        }
    }
    CHECK(found_all);
    CHECK(within);
    CHECK(once);
    printf("local: optimum of %zu configurations found after %.1f "
           "evaluations on average\n",
           cutune__space_size(s), (double)total / 40.0);
}

static void test_local_exhausts_once(const cutune__space *s)
{
    size_t n = cutune__space_size(s);
    for (size_t batch = 1; batch <= 16; batch *= 4) {
        evaluator *ev = evaluator_new(s);
        cutune__search_options o = opts(0, batch, 7, SIZE_MAX);
        cutune__search_result r;
        size_t evaluated;
        double best;
        size_t opt = true_optimum(ev, &best);
        CHECK_INT(
            cutune__search_run(cutune__strategy_local, s, &o, eval_cb, ev, &r),
            0);
        CHECK_INT(r.evaluations, n);
        CHECK(each_once(ev, &evaluated));
        CHECK_INT(evaluated, n);
        CHECK_INT(r.best, opt);
        evaluator_free(ev);
    }
}

static void test_budget_exact(const cutune__space *s)
{
    for (int which = 0; which < 2; which++) {
        const cutune__strategy_type *t =
            which ? cutune__strategy_brute_force : cutune__strategy_local;
        evaluator *ev = evaluator_new(s);
        cutune__search_options o = opts(37, 5, 3, SIZE_MAX);
        cutune__search_result r;
        size_t evaluated;
        CHECK_INT(cutune__search_run(t, s, &o, eval_cb, ev, &r), 0);
        CHECK_INT(r.evaluations, 37);
        CHECK_INT(ev->n_log, 37);
        CHECK(each_once(ev, &evaluated));
        evaluator_free(ev);
    }
}

static void test_deterministic(const cutune__space *s)
{
    evaluator *a = evaluator_new(s), *b = evaluator_new(s),
              *c = evaluator_new(s);
    cutune__search_options o = opts(80, 3, 12345, SIZE_MAX);
    cutune__search_result ra, rb, rc;
    CHECK_INT(
        cutune__search_run(cutune__strategy_local, s, &o, eval_cb, a, &ra), 0);
    CHECK_INT(
        cutune__search_run(cutune__strategy_local, s, &o, eval_cb, b, &rb), 0);
    CHECK_INT(a->n_log, b->n_log);
    CHECK(a->n_log == b->n_log &&
          memcmp(a->log, b->log, a->n_log * sizeof a->log[0]) == 0);
    CHECK_INT(ra.best, rb.best);
    /* Another seed takes another path (not required, but a seed that
     * changed nothing would mean the rng is not used). */
    o.seed = 54321;
    CHECK_INT(
        cutune__search_run(cutune__strategy_local, s, &o, eval_cb, c, &rc), 0);
    CHECK(a->n_log != c->n_log ||
          memcmp(a->log, c->log, a->n_log * sizeof a->log[0]) != 0);
    evaluator_free(a);
    evaluator_free(b);
    evaluator_free(c);
}

/* A strategy marked oblivious proposes the same configurations whatever
 * the results say (here: the objective turned upside down), so the tuner
 * may ask it for long batches. */
static void test_oblivious(const cutune__space *s)
{
    for (const cutune__strategy_type *const *t = cutune__strategies; *t; t++) {
        if (!(*t)->oblivious)
            continue;
        evaluator *a = evaluator_new(s), *b = evaluator_new(s);
        cutune__search_options o = opts(60, 4, 777, SIZE_MAX);
        cutune__search_result ra, rb;
        CHECK_INT(cutune__search_run(*t, s, &o, eval_cb, a, &ra), 0);
        b->negate = 1;
        o.batch = 32;
        CHECK_INT(cutune__search_run(*t, s, &o, eval_cb, b, &rb), 0);
        CHECK_INT(a->n_log, 60);
        CHECK(a->n_log == b->n_log &&
              memcmp(a->log, b->log, a->n_log * sizeof a->log[0]) == 0);
        evaluator_free(a);
        evaluator_free(b);
    }
    /* The adaptive ones are not marked: they do steer by results. */
    CHECK(!cutune__strategy_default->oblivious);
    CHECK(!cutune__strategy_local->oblivious);
    CHECK(cutune__strategy_brute_force->oblivious &&
          cutune__strategy_random->oblivious &&
          cutune__strategy_sobol->oblivious);
}

/* A strategy marked exhaustive ends on its own, with every configuration
 * evaluated once; callers rely on that to run it without a budget. */
static void test_exhaustive(const cutune__space *s)
{
    size_t n = cutune__space_size(s), evaluated, marked = 0;
    for (const cutune__strategy_type *const *t = cutune__strategies; *t; t++) {
        if (!(*t)->exhaustive)
            continue;
        marked++;
        evaluator *ev = evaluator_new(s);
        cutune__search_options o = opts(0, 4, 3, SIZE_MAX);
        cutune__search_result r;
        CHECK_INT(cutune__search_run(*t, s, &o, eval_cb, ev, &r), 0);
        CHECK_INT(r.evaluations, n);
        CHECK(each_once(ev, &evaluated));
        CHECK_INT(evaluated, n);
        evaluator_free(ev);
    }
    CHECK_INT(marked, 1);
    CHECK(cutune__strategy_brute_force->exhaustive);
}

static void test_start_first(const cutune__space *s)
{
    size_t n = cutune__space_size(s);
    const size_t starts[] = {0, n / 3, n - 1};
    for (size_t k = 0; k < 3; k++) {
        for (int which = 0; which < 2; which++) {
            const cutune__strategy_type *t =
                which ? cutune__strategy_brute_force : cutune__strategy_local;
            evaluator *ev = evaluator_new(s);
            cutune__search_options o = opts(10, 4, 9, starts[k]);
            cutune__search_result r;
            CHECK_INT(cutune__search_run(t, s, &o, eval_cb, ev, &r), 0);
            CHECK_INT(ev->log[0], starts[k]);
            evaluator_free(ev);
        }
    }
}

static void test_abort_and_short(const cutune__space *s)
{
    for (int which = 0; which < 2; which++) {
        const cutune__strategy_type *t =
            which ? cutune__strategy_brute_force : cutune__strategy_local;
        evaluator *ev = evaluator_new(s);
        ev->abort_at_call = 6;
        cutune__search_options o = opts(0, 2, 5, SIZE_MAX);
        cutune__search_result r;
        CHECK_INT(cutune__search_run(t, s, &o, eval_cb, ev, &r), -2);
        CHECK_INT(r.evaluations, ev->n_log);
        size_t b = SIZE_MAX;
        double bo = INFINITY;
        for (size_t i = 0; i < ev->n_log; i++) {
            double obj = objective_of(ev, ev->log[i]);
            if (isfinite(obj) &&
                (b == SIZE_MAX || obj < bo || (obj == bo && ev->log[i] < b))) {
                b = ev->log[i];
                bo = obj;
            }
        }
        CHECK(ev->n_log > 0);
        CHECK_INT(r.best, b);
        CHECK_NEAR(r.best_objective, bo, 0);
        evaluator_free(ev);

        /* An evaluator out of time evaluates part of a batch: what it did
         * counts, and the search ends. */
        ev = evaluator_new(s);
        ev->short_at_call = 3;
        o = opts(0, 4, 5, SIZE_MAX);
        CHECK_INT(cutune__search_run(t, s, &o, eval_cb, ev, &r), 0);
        CHECK_INT(r.evaluations, ev->n_log);
        CHECK_INT(ev->calls, 3);
        evaluator_free(ev);
    }
}

/* A strategy that proposes a fixed script, to test the driver alone. */
typedef struct script_state {
    size_t step;
    size_t reports;
    size_t reported_zero;
} script_state;

static int script_init(void *state, const cutune__strategy_ctx *ctx)
{
    (void)ctx;
    memset(state, 0, sizeof(script_state));
    return 0;
}

static size_t script_next(void *state, size_t *out, size_t cap)
{
    script_state *st = state;
    size_t k = 0;
    if (st->step++ == 0) {
        /* A repeat within the batch is evaluated once. */
        const size_t first[] = {0, 0, 1};
        for (; k < 3 && k < cap; k++)
            out[k] = first[k];
        return k;
    }
    /* Then nothing but seen configurations, for ever. */
    out[0] = 1;
    return 1;
}

static void script_report(void *state, size_t index, double objective)
{
    script_state *st = state;
    (void)objective;
    st->reports++;
    st->reported_zero += index == 0;
}

static script_state *last_script;

static void script_destroy(void *state)
{
    static script_state copy;
    copy = *(script_state *)state;
    last_script = &copy;
}

static const cutune__strategy_type script_type = {
    .name = "script",
    .state_size = sizeof(script_state),
    .init = script_init,
    .next = script_next,
    .report = script_report,
    .destroy = script_destroy,
};

/* A strategy that proposes batches of 4 consecutive indices and has
 * enough of each batch after its second result: the driver must evaluate
 * two per batch, hand the other two back, and go on with the next batch. */
typedef struct stopper_state {
    size_t next_index;
    size_t in_batch; /* results of the current batch */
    size_t withdrawn[16];
    size_t n_withdrawn;
    size_t reports;
} stopper_state;

static stopper_state last_stopper;

static int stopper_init(void *state, const cutune__strategy_ctx *ctx)
{
    (void)ctx;
    memset(state, 0, sizeof(stopper_state));
    return 0;
}

static size_t stopper_next(void *state, size_t *out, size_t cap)
{
    stopper_state *st = state;
    size_t k = 0;
    /* Withdrawn proposals come back first, as the default strategy may
     * propose them again. */
    while (k < cap && k < 4 && st->n_withdrawn > 0)
        out[k++] = st->withdrawn[--st->n_withdrawn];
    while (k < cap && k < 4)
        out[k++] = st->next_index++;
    st->in_batch = 0;
    return k;
}

static void stopper_report(void *state, size_t index, double objective)
{
    stopper_state *st = state;
    (void)index;
    (void)objective;
    st->reports++;
    st->in_batch++;
}

static int stopper_enough(void *state)
{
    return ((stopper_state *)state)->in_batch >= 2;
}

static void stopper_withdraw(void *state, size_t index)
{
    stopper_state *st = state;
    if (st->n_withdrawn < 16)
        st->withdrawn[st->n_withdrawn++] = index;
}

static void stopper_destroy(void *state)
{
    last_stopper = *(stopper_state *)state;
}

static const cutune__strategy_type stopper_type = {
    .name = "stopper",
    .state_size = sizeof(stopper_state),
    .init = stopper_init,
    .next = stopper_next,
    .report = stopper_report,
    .destroy = stopper_destroy,
    .enough = stopper_enough,
    .withdraw = stopper_withdraw,
};

/* Costs: an evaluator that says what each result cost (here only for
 * even indices) reaches the strategy's `cost` just before that result's
 * report, whether the results come one at a time or at the end. */
#define COST_N 12

typedef struct coster_state {
    size_t next_index;
    double cost[COST_N];     /* NAN: never told */
    size_t told;             /* the index the last cost was for */
    size_t cost_then_report; /* reports right after their own cost */
} coster_state;

static coster_state last_coster;

static int coster_init(void *state, const cutune__strategy_ctx *ctx)
{
    coster_state *st = state;
    (void)ctx;
    memset(st, 0, sizeof *st);
    for (size_t i = 0; i < COST_N; i++)
        st->cost[i] = NAN;
    st->told = SIZE_MAX;
    return 0;
}

static size_t coster_next(void *state, size_t *out, size_t cap)
{
    coster_state *st = state;
    size_t k = 0;
    while (k < cap && k < 4 && st->next_index < COST_N)
        out[k++] = st->next_index++;
    return k;
}

static void coster_cost(void *state, size_t index, double seconds)
{
    coster_state *st = state;
    if (index < COST_N)
        st->cost[index] = seconds;
    st->told = index;
}

static void coster_report(void *state, size_t index, double objective)
{
    coster_state *st = state;
    (void)objective;
    st->cost_then_report += st->told == index;
    st->told = SIZE_MAX;
}

static void coster_destroy(void *state)
{
    last_coster = *(coster_state *)state;
}

static const cutune__strategy_type coster_type = {
    .name = "coster",
    .state_size = sizeof(coster_state),
    .init = coster_init,
    .next = coster_next,
    .report = coster_report,
    .destroy = coster_destroy,
    .cost = coster_cost,
};

static int costed_eval(void *user, const size_t *indices, size_t n,
                       double *objectives, size_t *done,
                       cutune__eval_more_fn more, void *more_ctx)
{
    const int *one_at_a_time = user;
    for (size_t i = 0; i < n; i++) {
        objectives[i] = 1.0 + (double)indices[i];
        if (indices[i] % 2 == 0)
            cutune__search_cost(more_ctx, i, 1.0 + 0.25 * (double)indices[i]);
        if (*one_at_a_time && more)
            more(more_ctx, i, objectives[i]);
    }
    *done = n;
    return 0;
}

static void test_costs(const cutune__space *s)
{
    for (int one = 0; one <= 1; one++) {
        cutune__search_options o = opts(COST_N, 4, 1, SIZE_MAX);
        cutune__search_result r;
        CHECK_INT(
            cutune__search_run(&coster_type, s, &o, costed_eval, &one, &r), 0);
        CHECK_INT(r.evaluations, COST_N);
        for (size_t i = 0; i < COST_N; i++)
            if (i % 2 == 0)
                CHECK(last_coster.cost[i] == 1.0 + 0.25 * (double)i);
            else
                CHECK(isnan(last_coster.cost[i]));
        CHECK_INT(last_coster.cost_then_report, COST_N / 2);
    }
}

static void test_enough(const cutune__space *s)
{
    evaluator *ev = evaluator_new(s);
    cutune__search_options o = opts(9, 4, 1, SIZE_MAX);
    cutune__search_result r;
    CHECK_INT(cutune__search_run(&stopper_type, s, &o, eval_cb, ev, &r), 0);
    /* Batches {0,1,2,3} -> 0,1 evaluated; {3,2,4,5} -> 3,2; {5,4,6,7} ->
     * 5,4; {7,6,8,9} -> 7,6, with 9 handed back first (beyond the budget
     * of 9) and 8 second (not wanted); {8,9,10,11} -> 8. */
    const size_t expect[] = {0, 1, 3, 2, 5, 4, 7, 6, 8};
    CHECK_INT(r.evaluations, 9);
    CHECK_INT(ev->n_log, 9);
    int same = ev->n_log == 9;
    for (size_t i = 0; same && i < 9; i++)
        same = ev->log[i] == expect[i];
    if (!same)
        for (size_t i = 0; i < ev->n_log; i++)
            fprintf(stderr, "evaluated %zu: %zu\n", i, ev->log[i]);
    CHECK(same);
    CHECK_INT(last_stopper.reports, 9);
    for (size_t i = 0; i < cutune__space_size(s); i++)
        if (ev->count[i] > 1)
            CHECK_INT(ev->count[i], 1);
    evaluator_free(ev);

    /* An evaluator that hands over the whole batch at once is not cut:
     * everything it evaluated is reported and counted. */
    ev = evaluator_new(s);
    ev->all_at_once = 1;
    o = opts(8, 4, 1, SIZE_MAX);
    CHECK_INT(cutune__search_run(&stopper_type, s, &o, eval_cb, ev, &r), 0);
    CHECK_INT(r.evaluations, 8);
    CHECK_INT(last_stopper.reports, 8);
    CHECK_INT(ev->log[4], 4);
    evaluator_free(ev);
}

static void test_driver(const cutune__space *s)
{
    evaluator *ev = evaluator_new(s);
    cutune__search_options o = opts(0, 3, 1, SIZE_MAX);
    cutune__search_result r;
    CHECK_INT(cutune__search_run(&script_type, s, &o, eval_cb, ev, &r), 0);
    CHECK_INT(r.evaluations, 2);
    CHECK_INT(ev->n_log, 2);
    CHECK_INT(ev->count[0], 1);
    CHECK_INT(ev->count[1], 1);
    CHECK(last_script != NULL);
    if (last_script) {
        /* Both proposals of 0 were answered; the endless repeats were
         * answered from memory until the driver gave up. */
        CHECK_INT(last_script->reported_zero, 2);
        CHECK(last_script->reports > 100);
        CHECK(last_script->reports < 100000);
    }
    evaluator_free(ev);

    /* A budget larger than the space ends when everything is seen. */
    ev = evaluator_new(s);
    o = opts(1000000, 8, 1, SIZE_MAX);
    CHECK_INT(
        cutune__search_run(cutune__strategy_local, s, &o, eval_cb, ev, &r), 0);
    CHECK_INT(r.evaluations, cutune__space_size(s));
    evaluator_free(ev);

    /* A start outside the space is ignored; options may be NULL. */
    ev = evaluator_new(s);
    o = opts(5, 1, 1, cutune__space_size(s) + 10);
    CHECK_INT(cutune__search_run(cutune__strategy_brute_force, s, &o, eval_cb,
                                 ev, &r),
              0);
    CHECK_INT(ev->log[0], 0);
    evaluator_free(ev);
    ev = evaluator_new(s);
    CHECK_INT(cutune__search_run(cutune__strategy_brute_force, s, NULL,
                                 eval_cb, ev, &r),
              0);
    CHECK_INT(r.evaluations, cutune__space_size(s));
    evaluator_free(ev);
}

static int eval_all_fail(void *user, const size_t *indices, size_t n,
                         double *objectives, size_t *done,
                         cutune__eval_more_fn more, void *more_ctx)
{
    (void)more; /* results all at once, as an evaluator may */
    (void)more_ctx;
    size_t *count = user;
    for (size_t i = 0; i < n; i++) {
        count[indices[i]]++;
        objectives[i] = INFINITY;
    }
    *done = n;
    return 0;
}

static void test_failures_everywhere(void)
{
    /* Every configuration fails: there is no best, and local still covers
     * the space once, restarting from plateau to plateau. */
    cutune__value v[5];
    size_t count[25] = {0};
    for (int i = 0; i < 5; i++) {
        v[i].type = CUTUNE__V_INT;
        v[i].u.i = i;
    }
    cutune__param params[] = {{"a", v, 5}, {"b", v, 5}};
    cutune__space *s = cutune__space_create(params, 2, NULL, 0, NULL, 0, NULL);
    CHECK(s != NULL);
    if (!s)
        return;
    cutune__search_options o = opts(0, 2, 1, 12);
    cutune__search_result r;
    CHECK_INT(cutune__search_run(cutune__strategy_local, s, &o, eval_all_fail,
                                 count, &r),
              0);
    CHECK_INT(r.evaluations, 25);
    CHECK_INT(r.best, SIZE_MAX);
    CHECK(isinf(r.best_objective));
    int once = 1;
    for (int i = 0; i < 25; i++)
        once &= count[i] == 1;
    CHECK(once);
    cutune__space_free(s);
}

int main(void)
{
    cutune__space *s = make_space();
    CHECK(s != NULL);
    if (!s)
        return check_finish();
    test_registry();
    test_brute_force(s);
    test_local_finds_optimum(s);
    test_local_exhausts_once(s);
    test_budget_exact(s);
    test_deterministic(s);
    test_oblivious(s);
    test_exhaustive(s);
    test_start_first(s);
    test_abort_and_short(s);
    test_driver(s);
    test_enough(s);
    test_costs(s);
    test_failures_everywhere();
    cutune__space_free(s);
    return check_finish();
}
