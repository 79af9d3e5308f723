/* Energy per launch from synthetic counter reads (tuner/common/energy.c):
 * windows from step to step, the median and the relative spread of
 * windows of different power, a counter that wraps, one that restarts,
 * one that never moves or steps too rarely, and no launch completed. */
#include <math.h>
#include <stdlib.h>

#include "check.h"
#include "energy.h"

/* A synthetic run: the GPU draws power_at(t) W from t = 0, the counter
 * steps every `step_s` (first at step0_s) to the energy used by then
 * (plus `base` mJ), read every ms; `rate` launches per second complete,
 * marked every 5 ms; the power read every 10 ms is `read_w` off what it
 * draws. */
typedef struct run {
    double seconds, step_s, step0_s, rate, read_w;
    unsigned long long base;
    double w[3]; /* power in [0, split1), [split1, split2), after */
    double split1, split2;
    double reset_at; /* the counter restarts at 0 from here (0: never) */
    cutune__energy_read *reads;
    cutune__launch_mark *marks;
    cutune__power_read *power;
    size_t n_reads, n_marks, n_power;
} run;

static double power_at(const run *r, double t)
{
    return t < r->split1 ? r->w[0] : t < r->split2 ? r->w[1] : r->w[2];
}

/* Joules used from 0 to t (the power is piecewise constant). */
static double joules_by(const run *r, double t)
{
    double a = fmin(t, r->split1), b = fmin(fmax(t, r->split1), r->split2);
    return r->w[0] * a + r->w[1] * (b - r->split1) +
           r->w[2] * (fmax(t, r->split2) - r->split2);
}

static void make(run *r)
{
    size_t n = (size_t)(r->seconds * 1000) + 1;
    r->reads = malloc(n * sizeof *r->reads);
    r->marks = malloc((n / 5 + 2) * sizeof *r->marks);
    r->power = malloc((n / 10 + 2) * sizeof *r->power);
    r->n_reads = r->n_marks = r->n_power = 0;
    for (size_t i = 0; i < n; i++) {
        double t = (double)i * 1e-3;
        /* The last step at or before t. */
        double k = floor((t - r->step0_s) / r->step_s);
        double step = k < 0 ? 0 : r->step0_s + k * r->step_s;
        unsigned long long mj =
            r->base + (unsigned long long)(joules_by(r, step) * 1e3);
        if (r->reset_at > 0 && step >= r->reset_at)
            mj = (unsigned long long)((joules_by(r, step) -
                                       joules_by(r, r->reset_at)) *
                                      1e3);
        r->reads[r->n_reads++] = (cutune__energy_read){t, mj};
        if (i % 5 == 0)
            r->marks[r->n_marks++] =
                (cutune__launch_mark){t, floor(r->rate * t)};
        if (i % 10 == 0)
            r->power[r->n_power++] =
                (cutune__power_read){t, power_at(r, t) + r->read_w};
    }
}

static void drop(run *r)
{
    free(r->reads);
    free(r->marks);
    free(r->power);
}

static size_t windows_of(run *r, const cutune__energy_plan *plan,
                         cutune__energy_figures *f)
{
    make(r);
    size_t n =
        cutune__energy_windows(r->reads, r->n_reads, r->marks, r->n_marks,
                               r->power, r->n_power, plan, f);
    drop(r);
    return n;
}

static const cutune__energy_plan plan3 = {
    .lead_s = 0.1, .window_s = 0.25, .windows = 3};

/* 400 W steadily, 2000 launches per second: 0.2 J per launch in every
 * window, however the steps fall against the window's start. */
static void test_steady(void)
{
    run r = {.seconds = 1.4,
             .step_s = 0.1,
             .step0_s = 0.0437,
             .rate = 2000,
             .read_w = 10,
             .w = {400, 400, 400},
             .split1 = 10,
             .split2 = 10};
    cutune__energy_figures f;
    CHECK_INT(windows_of(&r, &plan3, &f), 3);
    CHECK_INT(f.why, CUTUNE__ENERGY_OK);
    CHECK_NEAR(f.energy_j, 0.2, 0.002);
    CHECK(isfinite(f.energy_rsd) && f.energy_rsd < 0.01);
    CHECK_NEAR(f.counter_w, 400, 4);
    /* The counter's mean power; the reads' mean beside it. */
    CHECK_NEAR(f.power_w, f.counter_w, 1e-12);
    CHECK_NEAR(f.sampled_w, 410, 1e-9);
    CHECK_NEAR(f.step_s, 0.1, 0.002);
    /* Windows step to step: three of 0.3 s each. */
    CHECK_NEAR(f.seconds, 0.9, 0.003);
    CHECK_NEAR(f.launches, 1800, 4);

    /* Without power reads, the same power and no sampled mean. */
    make(&r);
    cutune__energy_windows(r.reads, r.n_reads, r.marks, r.n_marks, NULL, 0,
                           &plan3, &f);
    CHECK_NEAR(f.power_w, f.counter_w, 1e-12);
    CHECK(isnan(f.sampled_w));
    /* A run cut short closes fewer windows: the worker goes on. */
    CHECK_INT(cutune__energy_windows(r.reads, 500, r.marks, 100, NULL, 0,
                                     &plan3, NULL),
              1);
    drop(&r);
}

/* Windows of 300, 400 and 500 W: J per launch 0.15, 0.2, 0.25; the
 * median is the middle one and the spread is their sample standard
 * deviation over their mean, 0.05 / 0.2. */
static void test_spread(void)
{
    /* Steps at 0.1503 + 0.1 k: the windows are [0.1503, 0.4503),
     * [0.4503, 0.7503), [0.7503, 1.0503). */
    run r = {.seconds = 1.3,
             .step_s = 0.1,
             .step0_s = 0.0503,
             .rate = 2000,
             .w = {300, 400, 500},
             .split1 = 0.4503,
             .split2 = 0.7503};
    cutune__energy_figures f;
    CHECK_INT(windows_of(&r, &plan3, &f), 3);
    CHECK_NEAR(f.energy_j, 0.2, 0.002);
    CHECK_NEAR(f.energy_rsd, 0.25, 0.01);
    /* Power 300 W in the first window: it started before the lead. */
    CHECK_NEAR(f.counter_w, 400, 4);
}

/* A counter near 2^64 wraps: the energy is what was used all the same. */
static void test_wrap(void)
{
    run r = {.seconds = 1.4,
             .step_s = 0.1,
             .step0_s = 0.0437,
             .rate = 2000,
             .w = {400, 400, 400},
             .split1 = 10,
             .split2 = 10,
             .base = ~0ULL - 250000ULL};
    cutune__energy_figures f;
    CHECK_INT(windows_of(&r, &plan3, &f), 3);
    CHECK_NEAR(f.energy_j, 0.2, 0.002);
}

/* A counter that restarts (a driver reload) spoils the window around
 * it, which is dropped; the later windows count. With only that window,
 * there is no figure, and the reason says why. */
static void test_reset(void)
{
    run r = {.seconds = 1.8,
             .step_s = 0.1,
             .step0_s = 0.0437,
             .rate = 2000,
             .w = {400, 400, 400},
             .split1 = 10,
             .split2 = 10,
             .base = 5000000,
             .reset_at = 0.3};
    cutune__energy_figures f;
    CHECK_INT(windows_of(&r, &plan3, &f), 3);
    CHECK_NEAR(f.energy_j, 0.2, 0.002);
    cutune__energy_plan one = {.lead_s = 0.1, .window_s = 0.25, .windows = 1};
    r.seconds = 0.5;
    CHECK_INT(windows_of(&r, &one, &f), 0);
    CHECK_INT(f.why, CUTUNE__ENERGY_RESET);
    CHECK(isnan(f.energy_j));
}

/* A counter that never moves, one that steps too rarely for a window, a
 * kernel that never completes a launch: no figure, and why. */
static void test_no_figure(void)
{
    cutune__energy_figures f;
    run still = {.seconds = 1.0,
                 .step_s = 100,
                 .step0_s = 50,
                 .rate = 2000,
                 .w = {400, 400, 400},
                 .split1 = 10,
                 .split2 = 10};
    CHECK_INT(windows_of(&still, &plan3, &f), 0);
    CHECK_INT(f.why, CUTUNE__ENERGY_STILL);
    CHECK(isnan(f.energy_j) && isnan(f.energy_rsd) && isnan(f.power_w));

    run rare = still;
    rare.step_s = 0.9;
    rare.step0_s = 0.2;
    CHECK_INT(windows_of(&rare, &plan3, &f), 0);
    CHECK_INT(f.why, CUTUNE__ENERGY_FEW_STEPS);

    run idle = still;
    idle.step_s = 0.1;
    idle.step0_s = 0.0437;
    idle.rate = 0;
    CHECK_INT(windows_of(&idle, &plan3, &f), 0);
    CHECK_INT(f.why, CUTUNE__ENERGY_NO_LAUNCHES);

    /* One window only: a figure, no spread. */
    run once = idle;
    once.rate = 2000;
    cutune__energy_plan one = {.lead_s = 0.1, .window_s = 0.25, .windows = 1};
    CHECK_INT(windows_of(&once, &one, &f), 1);
    CHECK_NEAR(f.energy_j, 0.2, 0.002);
    CHECK(isnan(f.energy_rsd));
    CHECK_STR(cutune__energy_why_str(CUTUNE__ENERGY_STILL),
              "the energy counter did not move");
}

int main(void)
{
    test_steady();
    test_spread();
    test_wrap();
    test_reset();
    test_no_figure();
    return check_finish();
}
