/* The order of a tune's compiles (search/replay/compile_order.h): a batch's
 * jobs in its order, the last batch's unstarted ones behind as speculation,
 * the newest speculation first, stale speculation dropped, a job the GPU
 * waits for urged to the front, and speculation that a later batch
 * wanted counted as used. */
#include <stddef.h>
#include <stdint.h>

#include "../check.h"
#include "replay/compile_order.h"

static void test_batch_order(void)
{
    cutune__compile_order o;
    CHECK_INT(cutune__order_init(&o, 32), 0);
    const size_t a[] = {3, 1, 2};
    CHECK_INT(cutune__order_want(&o, a, 3), 0);
    CHECK_INT(cutune__order_pop(&o), 3);
    CHECK_INT(cutune__order_pop(&o), 1);
    CHECK_INT(cutune__order_state(&o, 1), CUTUNE__JOB_RUNNING);
    cutune__order_done(&o, 1);
    CHECK_INT(cutune__order_state(&o, 1), CUTUNE__JOB_DONE);
    CHECK_INT(cutune__order_pop(&o), 2);
    CHECK_INT(cutune__order_pop(&o), SIZE_MAX);
    CHECK_INT(o.stats.started_wanted, 3);
    CHECK_INT(o.stats.started_spec, 0);
    cutune__order_free(&o);
}

/* A new batch goes first; the old one's unstarted jobs follow as
 * speculation, the newest batch's before older ones. */
static void test_speculation(void)
{
    cutune__compile_order o;
    CHECK_INT(cutune__order_init(&o, 32), 0);
    const size_t a[] = {1, 2}, b[] = {3, 4}, c[] = {5};
    cutune__order_want(&o, a, 2);
    cutune__order_want(&o, b, 2);
    cutune__order_want(&o, c, 1);
    CHECK_INT(cutune__order_state(&o, 1), CUTUNE__JOB_QUEUED);
    CHECK_INT(cutune__order_pop(&o), 5);
    CHECK_INT(cutune__order_pop(&o), 3);
    CHECK_INT(cutune__order_pop(&o), 4);
    CHECK_INT(cutune__order_pop(&o), 1);
    CHECK_INT(o.stats.started_spec, 3);
    /* 1 started as a guess; a batch that wants it counts a hit, once;
     * 2 was still queued, so wanting it again is no hit. */
    const size_t d[] = {1, 2, 6};
    cutune__order_want(&o, d, 3);
    cutune__order_want(&o, d, 3);
    CHECK_INT(o.stats.spec_used, 1);
    CHECK_INT(cutune__order_pop(&o), 2);
    CHECK_INT(cutune__order_pop(&o), 6);
    CHECK_INT(cutune__order_pop(&o), SIZE_MAX);
    cutune__order_free(&o);
}

/* Speculation that waited CUTUNE__ORDER_GENERATIONS batches is dropped
 * unstarted, and may be queued again later. */
static void test_stale_dropped(void)
{
    cutune__compile_order o;
    CHECK_INT(cutune__order_init(&o, 64), 0);
    const size_t a[] = {7};
    cutune__order_want(&o, a, 1);
    for (size_t g = 1; g < CUTUNE__ORDER_GENERATIONS; g++) {
        size_t k = 10 + g;
        cutune__order_want(&o, &k, 1);
        CHECK_INT(cutune__order_state(&o, 7), CUTUNE__JOB_QUEUED);
    }
    size_t last = 40;
    cutune__order_want(&o, &last, 1);
    CHECK_INT(cutune__order_state(&o, 7), CUTUNE__JOB_NONE);
    CHECK_INT(o.stats.dropped, 1);
    cutune__order_want(&o, a, 1);
    CHECK_INT(cutune__order_pop(&o), 7);
    cutune__order_free(&o);
}

/* The job the GPU waits for goes first, also one never queued; a running
 * one is left alone. */
static void test_urge(void)
{
    cutune__compile_order o;
    CHECK_INT(cutune__order_init(&o, 32), 0);
    const size_t a[] = {1, 2, 3};
    cutune__order_want(&o, a, 3);
    CHECK_INT(cutune__order_urge(&o, 3), 0);
    CHECK_INT(cutune__order_pop(&o), 3);
    CHECK_INT(cutune__order_urge(&o, 9), 0);
    CHECK_INT(cutune__order_urge(&o, 3), 0);
    CHECK_INT(cutune__order_state(&o, 3), CUTUNE__JOB_RUNNING);
    CHECK_INT(cutune__order_pop(&o), 9);
    CHECK_INT(cutune__order_pop(&o), 1);
    /* A key outside the space is ignored. */
    CHECK_INT(cutune__order_urge(&o, 99), 0);
    const size_t out[] = {99};
    cutune__order_want(&o, out, 1);
    CHECK_INT(cutune__order_pop(&o), 2);
    CHECK_INT(cutune__order_pop(&o), SIZE_MAX);
    cutune__order_free(&o);
}

int main(void)
{
    test_batch_order();
    test_speculation();
    test_stale_dropped();
    test_urge();
    return check_finish();
}
