/* Every registered strategy on synthetic spaces: never a configuration
 * twice, budgets honoured exactly, the same seed giving the same sequence,
 * the start evaluated first, failures and constrained spaces handled, the
 * optimum of a small space found, and a space where everything fails
 * ending cleanly. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_errno.h>

#include "../check.h"
#include "launch_space.h"
#include "strategy/strategy.h"

#define MAX_LOG 4096

typedef struct evaluator {
    const cutune__space *space;
    size_t *count;
    size_t log[MAX_LOG];
    size_t n_log;
    size_t cut; /* batches the strategy stopped short */
    int all_fail;
    int fail_most; /* all but one configuration in 13 fail */
    size_t calls;  /* batches evaluated */
} evaluator;

/* A bowl with its minimum at bx = 128, by = 2, unroll = 3, flag = 1, a
 * multiplicative ridge (as runtimes have) and failures at the largest
 * blocks with the largest unroll. */
static double objective_of(const evaluator *ev, size_t index)
{
    const uint32_t *c = cutune__space_config(ev->space, index);
    if (ev->all_fail || (ev->fail_most && index % 13 != 0))
        return INFINITY;
    /* The tiny spaces have two parameters only. */
    if (cutune__space_param_count(ev->space) < 4)
        return 1.0 + c[0] + 2.0 * c[1];
    if (c[2] >= 6 && (16LL << c[0]) * (1LL << c[1]) >= 512)
        return INFINITY;
    double bx = (double)c[0], by = (double)c[1], u = (double)c[2];
    return (1.0 + 0.3 * (bx - 3) * (bx - 3)) *
           (1.0 + 0.2 * (by - 1) * (by - 1)) *
           (1.0 + 0.1 * (u - 2) * (u - 2)) * (c[3] ? 1.0 : 1.15);
}

static int eval_cb(void *user, const size_t *indices, size_t n,
                   double *objectives, size_t *done, cutune__eval_more_fn more,
                   void *more_ctx)
{
    /* Results are handed over one at a time, as the tuner does. */
    evaluator *ev = user;
    ev->calls++;
    for (size_t i = 0; i < n; i++) {
        objectives[i] = objective_of(ev, indices[i]);
        ev->count[indices[i]]++;
        if (ev->n_log < MAX_LOG)
            ev->log[ev->n_log++] = indices[i];
        if (more && !more(more_ctx, i, objectives[i])) {
            ev->cut += i + 1 < n;
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
    if (ev)
        free(ev->count);
    free(ev);
}

static int each_at_most_once(const evaluator *ev)
{
    for (size_t i = 0; i < cutune__space_size(ev->space); i++)
        if (ev->count[i] > 1)
            return 0;
    return 1;
}

static size_t true_optimum(const evaluator *ev)
{
    size_t b = SIZE_MAX;
    double bo = INFINITY;
    for (size_t i = 0; i < cutune__space_size(ev->space); i++) {
        double o = objective_of(ev, i);
        if (isfinite(o) && (b == SIZE_MAX || o < bo)) {
            b = i;
            bo = o;
        }
    }
    return b;
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
    static const char *names[] = {
        "default", "bayes",    "forest", "local",  "annealing",
        "genetic", "diff_evo", "sobol",  "random", "brute_force"};
    size_t n = 0;
    while (cutune__strategies[n])
        n++;
    CHECK_INT(n, sizeof names / sizeof *names);
    CHECK(cutune__strategies[0] == cutune__strategy_default);
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        const cutune__strategy_type *t = cutune__strategy_find(names[i]);
        CHECK(t != NULL);
        if (t)
            CHECK_STR(t->name, names[i]);
    }
}

static void test_one(const cutune__strategy_type *t, const cutune__space *s)
{
    size_t n = cutune__space_size(s);
    int ok_once = 1, ok_budget = 1, ok_start = 1, ok_repro = 1;
    for (size_t batch = 1; batch <= 8; batch += 7) {
        for (uint64_t seed = 1; seed <= 3; seed++) {
            const size_t budget = 37;
            size_t start = seed == 1 ? SIZE_MAX : (seed * 97) % n;
            evaluator *a = evaluator_new(s), *b = evaluator_new(s);
            cutune__search_options o = opts(budget, batch, seed, start);
            cutune__search_result ra, rb;
            CHECK_INT(cutune__search_run(t, s, &o, eval_cb, a, &ra), 0);
            CHECK_INT(cutune__search_run(t, s, &o, eval_cb, b, &rb), 0);
            ok_once &= each_at_most_once(a);
            ok_budget &= ra.evaluations == budget && a->n_log == budget;
            ok_repro &=
                a->n_log == b->n_log &&
                memcmp(a->log, b->log, a->n_log * sizeof a->log[0]) == 0 &&
                ra.best == rb.best;
            if (start != SIZE_MAX)
                ok_start &= a->log[0] == start;
            evaluator_free(a);
            evaluator_free(b);
        }
    }
    if (!ok_once || !ok_budget || !ok_repro || !ok_start)
        fprintf(stderr, "strategy %s: once %d budget %d repro %d start %d\n",
                t->name, ok_once, ok_budget, ok_repro, ok_start);
    CHECK(ok_once);
    CHECK(ok_budget);
    CHECK(ok_repro);
    CHECK(ok_start);

    /* Another seed takes another path, unless the strategy uses none. */
    if (strcmp(t->name, "brute_force") != 0) {
        evaluator *a = evaluator_new(s), *b = evaluator_new(s);
        cutune__search_options o = opts(60, 1, 11, SIZE_MAX);
        CHECK_INT(cutune__search_run(t, s, &o, eval_cb, a, NULL), 0);
        o.seed = 12;
        CHECK_INT(cutune__search_run(t, s, &o, eval_cb, b, NULL), 0);
        CHECK(memcmp(a->log, b->log, 60 * sizeof a->log[0]) != 0);
        evaluator_free(a);
        evaluator_free(b);
    }

    /* Unlimited: the whole space once, and the optimum. */
    for (size_t batch = 1; batch <= 5; batch += 4) {
        evaluator *ev = evaluator_new(s);
        cutune__search_options o = opts(0, batch, 5, SIZE_MAX);
        cutune__search_result r;
        CHECK_INT(cutune__search_run(t, s, &o, eval_cb, ev, &r), 0);
        CHECK_INT(r.evaluations, n);
        CHECK(each_at_most_once(ev));
        CHECK_INT(r.best, true_optimum(ev));
        evaluator_free(ev);
    }

    /* Everything fails: it ends, with no best. */
    evaluator *ev = evaluator_new(s);
    ev->all_fail = 1;
    cutune__search_options o = opts(50, 4, 2, 3);
    cutune__search_result r;
    CHECK_INT(cutune__search_run(t, s, &o, eval_cb, ev, &r), 0);
    CHECK_INT(r.evaluations, 50);
    CHECK_INT(r.best, SIZE_MAX);
    CHECK(isinf(r.best_objective));
    CHECK(each_at_most_once(ev));
    CHECK_INT(ev->log[0], 3);
    evaluator_free(ev);
}

/* The searching strategies find the optimum of the bowl with a third of
 * the space in most seeds. */
static void test_finds_optimum(const cutune__strategy_type *t,
                               const cutune__space *s)
{
    size_t n = cutune__space_size(s), found = 0, seeds = 20;
    for (uint64_t seed = 1; seed <= seeds; seed++) {
        evaluator *ev = evaluator_new(s);
        cutune__search_options o = opts(n / 3, 1, seed, SIZE_MAX);
        cutune__search_result r;
        CHECK_INT(cutune__search_run(t, s, &o, eval_cb, ev, &r), 0);
        found += r.best == true_optimum(ev);
        evaluator_free(ev);
    }
    printf("%-12s found the optimum of %zu configurations with %zu "
           "evaluations in %zu of %zu seeds\n",
           t->name, n, n / 3, found, seeds);
    CHECK(found * 2 >= seeds);
}

static void test_tiny_spaces(const cutune__strategy_type *t)
{
    /* One configuration, and a space smaller than any population. */
    cutune__value v[3];
    for (int i = 0; i < 3; i++) {
        v[i].type = CUTUNE__V_INT;
        v[i].u.i = i;
    }
    for (size_t nv = 1; nv <= 3; nv += 2) {
        cutune__param params[] = {{"a", v, nv}, {"b", v, nv}};
        cutune__space *s =
            cutune__space_create(params, 2, NULL, 0, NULL, 0, NULL);
        CHECK(s != NULL);
        if (!s)
            continue;
        evaluator *ev = evaluator_new(s);
        cutune__search_options o = opts(100, 4, 1, SIZE_MAX);
        cutune__search_result r;
        CHECK_INT(cutune__search_run(t, s, &o, eval_cb, ev, &r), 0);
        CHECK_INT(r.evaluations, nv * nv);
        CHECK(each_at_most_once(ev));
        evaluator_free(ev);
        cutune__space_free(s);
    }
}

/* A strategy that stops batches short (default: at a result after which
 * it would propose something else next) evaluates at any batch size what
 * it evaluates with proposals made one by one, each configuration once and
 * its budget exactly; and it does stop them. So the benchmark (batch 1)
 * describes what a tune (a batch per compile round) does. */
static void test_batch_invariant(const cutune__strategy_type *t,
                                 const cutune__space *s)
{
    if (!t->enough)
        return;
    size_t cut = 0;
    int same = 1, ok = 1;
    /* Budgets that end mid-batch: the driver hands the rest back before
     * evaluating the batch. Seeds 11-14: most configurations fail, so
     * that often no node is open and random draws fill the batch. */
    static const size_t budgets[] = {41, 150};
    size_t rounds_failing = 0, evals_failing = 0;
    for (uint64_t seed = 1; seed <= 14; seed++) {
        const size_t budget = budgets[seed % 2];
        const int fail_most = seed > 10;
        evaluator *one = evaluator_new(s);
        cutune__search_options o = opts(budget, 1, seed, SIZE_MAX);
        one->fail_most = fail_most;
        cutune__search_result r1;
        CHECK_INT(cutune__search_run(t, s, &o, eval_cb, one, &r1), 0);
        for (size_t batch = 7; batch <= 32; batch += 25) {
            evaluator *many = evaluator_new(s);
            cutune__search_result rn;
            many->fail_most = fail_most;
            o.batch = batch;
            CHECK_INT(cutune__search_run(t, s, &o, eval_cb, many, &rn), 0);
            same &= one->n_log == many->n_log &&
                    memcmp(one->log, many->log,
                           one->n_log * sizeof one->log[0]) == 0 &&
                    r1.best == rn.best;
            ok &= rn.evaluations == budget && many->n_log == budget &&
                  each_at_most_once(many);
            cut += many->cut;
            if (fail_most && batch == 32) {
                rounds_failing += many->calls;
                evals_failing += many->n_log;
            }
            evaluator_free(many);
        }
        evaluator_free(one);
    }
    if (!same)
        fprintf(stderr, "strategy %s: batch changes what it evaluates\n",
                t->name);
    CHECK(same);
    CHECK(ok);
    CHECK(cut > 0);
    /* Where most configurations fail, batches still hold several
     * proposals (the compile pool is not left with one job per round). */
    CHECK(evals_failing > 4 * rounds_failing);
}

int main(void)
{
    gsl_set_error_handler_off();
    cutune__space *s = make_space();
    CHECK(s != NULL);
    if (!s)
        return check_finish();
    test_registry();
    for (size_t i = 0; cutune__strategies[i]; i++) {
        const cutune__strategy_type *t = cutune__strategies[i];
        test_one(t, s);
        test_tiny_spaces(t);
        test_batch_invariant(t, s);
        if (strcmp(t->name, "brute_force") != 0 &&
            strcmp(t->name, "random") != 0 && strcmp(t->name, "sobol") != 0)
            test_finds_optimum(t, s);
    }
    cutune__space_free(s);
    return check_finish();
}
