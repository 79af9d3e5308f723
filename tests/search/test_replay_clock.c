/* The clock of a replay (search/replay/replay_clock.h), on timelines worked
 * out by hand: compile threads start jobs in the shared order, the GPU waits
 * for each proposal's compile, a new batch's jobs go before the last
 * one's, and a whole replay's wall time, final round and time to a
 * fraction of the optimum. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include <gsl/gsl_errno.h>

#include "../check.h"
#include "line_space.h"
#include "replay/batch_jobs.h"
#include "replay/replay.h"
#include "replay/replay_clock.h"
#include "strategy/strategy.h"

/* Two threads, compiles of 1 s, measurements of 0.1 s: jobs 0 and 1
 * compile in [0, 1], 2 and 3 in [1, 2]; the GPU measures 0 and 1 at 1,
 * waits until 2 for the others. */
static void test_waves(void)
{
    const double compile[] = {1, 1, 1, 1}, measure[] = {0.1, 0.1, 0.1, 0.1};
    cutune__clock c;
    CHECK_INT(cutune__clock_init(&c, 4, 2, compile, measure, 0.0), 0);
    const size_t batch[] = {0, 1, 2, 3};
    CHECK_INT(cutune__clock_batch(&c, batch, 4, NULL), 0);
    CHECK_NEAR(cutune__clock_measure(&c, 0), 1.1, 1e-12);
    CHECK_NEAR(cutune__clock_measure(&c, 1), 1.2, 1e-12);
    CHECK_NEAR(cutune__clock_measure(&c, 2), 2.1, 1e-12);
    CHECK_NEAR(cutune__clock_measure(&c, 3), 2.2, 1e-12);
    CHECK_NEAR(c.gpu_wait_s, 1.0 + 0.8, 1e-12);
    CHECK_INT(c.order.stats.started, 4);
    CHECK_NEAR(c.compile_busy_s, 4.0, 1e-12);
    cutune__clock_free(&c);
}

/* One thread. A batch of four: 0 compiles in [0, 1] and is measured by
 * 1.1; meanwhile the thread took 1 at 1 (the batch still wanted it). The
 * next batch, at 1.1, wants 2 and 9: 2 starts when the thread is free, at
 * 2, ahead of 3 (now speculation), and 9 after it. */
static void test_new_batch(void)
{
    double compile[10], measure[10];
    for (int i = 0; i < 10; i++) {
        compile[i] = 1;
        measure[i] = 0.1;
    }
    cutune__clock c;
    CHECK_INT(cutune__clock_init(&c, 10, 1, compile, measure, 0.0), 0);
    const size_t a[] = {0, 1, 2, 3}, b[] = {2, 9};
    cutune__clock_batch(&c, a, 4, NULL);
    CHECK_NEAR(cutune__clock_measure(&c, 0), 1.1, 1e-12);
    cutune__clock_batch(&c, b, 2, NULL);
    CHECK_INT(cutune__order_state(&c.order, 1), CUTUNE__JOB_RUNNING);
    CHECK_NEAR(cutune__clock_measure(&c, 2), 3.1, 1e-12);
    CHECK_NEAR(cutune__clock_measure(&c, 9), 4.1, 1e-12);
    CHECK_INT(cutune__order_state(&c.order, 3), CUTUNE__JOB_QUEUED);
    /* At 4 the thread took 3 (speculation: nothing else was queued), so
     * a job never queued, urged at 4.1, starts when 3 is done. */
    CHECK_NEAR(cutune__clock_measure(&c, 5), 6.1, 1e-12);
    cutune__clock_free(&c);
}

/* Brute force over eight configurations on four threads, compiles of 1 s,
 * measurements of 0.01 s, 0.5 s of setup: the first four are in by 1.54,
 * the rest by 2.54, configuration 5 (the optimum, alone within 3%) at
 * 2.52; the final round measures it twice more. */
static void test_replay_wall(void)
{
    cutune__value v[8];
    cutune__space *sp = line_space(8, v);
    CHECK(sp != NULL);
    double obj[8], compile[8], measure[8];
    for (int i = 0; i < 8; i++) {
        obj[i] = i == 5 ? 0.5 : 1.0 + 0.1 * i;
        compile[i] = 1;
        measure[i] = 0.01;
    }
    cutune__replay_options ro = {
        .batch = cutune__search_batch(cutune__strategy_brute_force, 4, 1),
        .seed = 1,
        .start = SIZE_MAX,
        .threads = 4,
        .compile_s = compile,
        .measure_s = measure,
        .setup_s = 0.5};
    cutune__replay_result r;
    CHECK_INT(cutune__replay_run(cutune__strategy_brute_force, sp, obj, NULL,
                                 &ro, &r, NULL, 0),
              0);
    CHECK_INT(r.search.evaluations, 8);
    CHECK_NEAR(r.final_s, 0.02, 1e-12);
    CHECK_NEAR(r.wall_s, 2.56, 1e-9);
    CHECK_NEAR(r.gpu_wait_s, 1.0 + 0.96, 1e-9);
    for (int k = 0; k < CUTUNE__REPLAY_N_RATIOS; k++)
        CHECK_NEAR(r.seconds_to[k], 2.52, 1e-9);
    CHECK_INT(r.compiles, 8);
    double busy = 0;
    for (size_t i = 0; i < 8; i++)
        busy += compile[i];
    CHECK_NEAR(r.compile_busy_s, busy, 1e-9);
    /* Without threads there is no clock. */
    ro.threads = 0;
    CHECK_INT(cutune__replay_run(cutune__strategy_brute_force, sp, obj, NULL,
                                 &ro, &r, NULL, 0),
              0);
    CHECK_NEAR(r.wall_s, 0.0, 0);
    cutune__space_free(sp);
}

/* The window: compiles as long as k measurements keep k in flight, at
 * most the threads; every thread's worth without figures. */
static void test_window(void)
{
    CHECK_INT(cutune__clock_window(16, 2.0, 0.01), 16);
    CHECK_INT(cutune__clock_window(16, 0.1, 0.05), 2);
    CHECK_INT(cutune__clock_window(16, 0.01, 0.05), 1);
    CHECK_INT(cutune__clock_window(16, 0, 0), 16);
    CHECK_INT(cutune__clock_window(0, 2.0, 0.01), 1);
}

/* An evaluator that answers the newest proposal in flight first (out of
 * order), keeps `window` in flight and may stop after `stop_after`. */
typedef struct lifo {
    size_t flight[64], n, max_n, window, results, stop_after, submitted;
    unsigned char seen[400];
    int twice;
} lifo;

static int lifo_submit(void *user, size_t index)
{
    lifo *l = user;
    if (l->n == 64 || index >= 400)
        return -1;
    l->twice += l->seen[index];
    l->seen[index] = 1;
    l->flight[l->n++] = index;
    l->submitted++;
    if (l->n > l->max_n)
        l->max_n = l->n;
    return 0;
}

static int lifo_result(void *user, size_t *index, double *objective,
                       double *cost)
{
    lifo *l = user;
    if (l->stop_after && l->results == l->stop_after)
        return 1;
    *index = l->flight[--l->n];
    /* A bowl with its floor at 17. */
    *objective = 1.0 + fabs((double)*index - 17.0);
    *cost = NAN;
    l->results++;
    return 0;
}

static size_t lifo_window(void *user)
{
    return ((lifo *)user)->window;
}

static void test_async_driver(void)
{
    cutune__value v[400];
    cutune__space *sp = line_space(400, v);
    CHECK(sp != NULL);
    const cutune__async_eval ev = {lifo_submit, lifo_result, lifo_window};
    cutune__search_options so = {
        .max_evals = 60, .batch = 32, .seed = 3, .start = 0};
    lifo l = {.window = 6};
    cutune__search_result r;
    CHECK(cutune__strategy_default->async);
    CHECK_INT(cutune__search_run_async(cutune__strategy_default, sp, &so, &ev,
                                       &l, &r),
              0);
    CHECK_INT(r.evaluations, 60);
    CHECK_INT(l.results, 60);
    CHECK_INT(l.submitted, 60);
    CHECK_INT(l.twice, 0);
    CHECK_INT(l.max_n, 6);
    CHECK_INT(r.best, 17);
    /* Stopped after 10 results: the rest in flight are withdrawn, and a
     * window larger than the batch is held to the batch. */
    lifo m = {.window = 100, .stop_after = 10};
    CHECK_INT(cutune__search_run_async(cutune__strategy_default, sp, &so, &ev,
                                       &m, &r),
              0);
    CHECK_INT(r.evaluations, 10);
    CHECK_INT(m.max_n, 32);
    cutune__space_free(sp);
}

/* On the clock an async strategy keeps the threads busy: 40 evaluations
 * of compiles of 1 s on 8 threads take about five waves, not forty. */
static void test_async_clock(void)
{
    cutune__value v[200];
    cutune__space *sp = line_space(200, v);
    CHECK(sp != NULL);
    double obj[200], compile[200], measure[200];
    for (int i = 0; i < 200; i++) {
        obj[i] = 1.0 + fabs(i - 120.0) / 100.0;
        compile[i] = 1;
        measure[i] = 0.01;
    }
    cutune__replay_options ro = {
        .max_evals = 40,
        .batch = cutune__search_batch(cutune__strategy_default, 8, 1),
        .seed = 1,
        .start = 0,
        .threads = 8,
        .compile_s = compile,
        .measure_s = measure};
    cutune__replay_result r;
    CHECK_INT(cutune__replay_run(cutune__strategy_default, sp, obj, NULL, &ro,
                                 &r, NULL, 0),
              0);
    CHECK_INT(r.search.evaluations, 40);
    CHECK_INT(r.compiles, 40);
    CHECK(r.wall_s >= 5.0 && r.wall_s < 6.0);
    cutune__space_free(sp);
}

int main(void)
{
    gsl_set_error_handler_off();
    test_waves();
    test_new_batch();
    test_replay_wall();
    test_window();
    test_async_driver();
    test_async_clock();
    return check_finish();
}
