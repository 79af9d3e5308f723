/* A tune on the clock (search/replay/replay.h) depends on its strategy,
 * space, seed and recorded seconds only: not on what ran before it in the
 * process. bench-strategies once gave the default strategy other clock
 * figures on a space depending on the other jobs of the run: in flight,
 * results come out of proposal order, and the strategy compared a result
 * with its climb's start before that start had one, reading memory the
 * strategy had never written. Whatever that memory held (the leftovers of
 * an earlier run in the same process) decided the comparison. Here the
 * heap is filled with two different leftovers before the same runs, and
 * runs are interleaved with runs on another space of the same problem;
 * every figure must come out the same, bit for bit. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_errno.h>

#include "../check.h"
#include "launch_space.h"
#include "replay/replay.h"
#include "strategy/strategy.h"

#define SEEDS   12
#define BLOCKS  64
#define BLOCK_N 8192

/* Uniform in [0, 1) from an index and a salt, the same on every host. */
static double hash01(size_t i, uint64_t salt)
{
    uint64_t x = (uint64_t)i * 0x9e3779b97f4a7c15ULL ^ salt;
    x ^= x >> 31;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 29;
    return (double)(x >> 11) / 9007199254740992.0;
}

/* A recording of the space: rough objectives (many local minima, so that
 * the default strategy climbs from new starts) and compile times of 0.2 to
 * 6 s against runs of 10 ms, so that results come far out of proposal
 * order. `salt` makes another device's recording. */
typedef struct record {
    double *obj, *compile, *measure;
} record;

static int record_make(record *r, size_t n, uint64_t salt)
{
    r->obj = malloc(n * sizeof *r->obj);
    r->compile = malloc(n * sizeof *r->compile);
    r->measure = malloc(n * sizeof *r->measure);
    if (!r->obj || !r->compile || !r->measure)
        return -1;
    for (size_t i = 0; i < n; i++) {
        r->obj[i] = 1.0 + hash01(i, salt) + 0.3 * hash01(i / 8, salt + 1);
        r->compile[i] = 0.2 + 5.8 * hash01(i, salt + 2);
        r->measure[i] = 0.01;
    }
    return 0;
}

static void record_free(record *r)
{
    free(r->obj);
    free(r->compile);
    free(r->measure);
}

/* Leaves the heap's free memory full of `v`: what a run allocates next
 * without writing it reads as v. */
static void poison_heap(double v)
{
    double *b[BLOCKS];
    for (size_t k = 0; k < BLOCKS; k++) {
        b[k] = malloc(BLOCK_N * sizeof *b[k]);
        for (size_t i = 0; b[k] && i < BLOCK_N; i++)
            b[k][i] = v;
    }
    for (size_t k = BLOCKS; k-- > 0;)
        free(b[k]);
}

typedef struct clock_figs {
    double wall[SEEDS], to[SEEDS][CUTUNE__REPLAY_N_RATIOS];
    size_t compiles[SEEDS], evaluations[SEEDS];
} clock_figs;

/* The default strategy's 200-evaluation tune on 16 threads, seed s + 1,
 * on `rec`. */
static void run_seed(const cutune__space *sp, const record *rec, size_t s,
                     clock_figs *f)
{
    cutune__replay_options ro = {
        .max_evals = 200,
        .batch = cutune__search_batch(cutune__strategy_default, 16, 1),
        .seed = s + 1,
        .start = 0,
        .threads = 16,
        .compile_s = rec->compile,
        .measure_s = rec->measure,
        .setup_s = 0.5};
    cutune__replay_result r;
    CHECK_INT(cutune__replay_run(cutune__strategy_default, sp, rec->obj, NULL,
                                 &ro, &r, NULL, 0),
              0);
    f->wall[s] = r.wall_s;
    for (size_t k = 0; k < CUTUNE__REPLAY_N_RATIOS; k++)
        f->to[s][k] = r.seconds_to[k];
    f->compiles[s] = r.compiles;
    f->evaluations[s] = r.search.evaluations;
}

/* Bit for bit: a time never reached is INFINITY in both. */
static void check_same(const clock_figs *a, const clock_figs *b)
{
    for (size_t s = 0; s < SEEDS; s++) {
        CHECK(memcmp(&a->wall[s], &b->wall[s], sizeof a->wall[s]) == 0);
        CHECK(memcmp(a->to[s], b->to[s], sizeof a->to[s]) == 0);
        CHECK_INT(a->compiles[s], b->compiles[s]);
        CHECK_INT(a->evaluations[s], b->evaluations[s]);
    }
}

int main(void)
{
    gsl_set_error_handler_off();
    cutune__space *sp = make_space();
    CHECK(sp != NULL);
    size_t n = cutune__space_size(sp);
    record a, b;
    CHECK_INT(record_make(&a, n, 11), 0);
    CHECK_INT(record_make(&b, n, 23), 0);
    static clock_figs alone, zero_left, inf_left, mixed, other;

    /* Each seed alone, after leftovers of 0 and of -inf: a comparison
     * with either goes opposite ways (cutune__default_faster). */
    for (size_t s = 0; s < SEEDS; s++) {
        poison_heap(0.0);
        run_seed(sp, &a, s, &zero_left);
        poison_heap(-INFINITY);
        run_seed(sp, &a, s, &inf_left);
        run_seed(sp, &a, s, &alone);
    }
    check_same(&zero_left, &inf_left);
    check_same(&alone, &inf_left);

    /* Interleaved with the other recording of the same space, as
     * bench-strategies runs the jobs of one problem. */
    for (size_t s = 0; s < SEEDS; s++) {
        run_seed(sp, &b, s, &other);
        run_seed(sp, &a, s, &mixed);
    }
    check_same(&alone, &mixed);

    /* The runs climbed and went on for the whole budget. */
    for (size_t s = 0; s < SEEDS; s++) {
        CHECK_INT(alone.evaluations[s], 200);
        CHECK(isfinite(alone.wall[s]) && alone.wall[s] > 0.5);
    }
    record_free(&a);
    record_free(&b);
    cutune__space_free(sp);
    return check_finish();
}
