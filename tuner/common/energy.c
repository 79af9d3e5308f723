/* Energy per launch from the counter's steps (energy.h says why windows
 * run from step to step). */
#include "energy.h"

#include <math.h>
#include <stdlib.h>

#include "stats.h"

/* Launches completed by t, linear between the marks around it. */
static double launches_at(const cutune__launch_mark *m, size_t n, double t)
{
    if (t <= m[0].t_s)
        return m[0].launches;
    for (size_t j = 1; j < n; j++)
        if (t <= m[j].t_s) {
            double span = m[j].t_s - m[j - 1].t_s;
            double f = span > 0 ? (t - m[j - 1].t_s) / span : 1.0;
            return m[j - 1].launches + f * (m[j].launches - m[j - 1].launches);
        }
    return m[n - 1].launches;
}

typedef struct window_sums {
    double *per_launch; /* J per launch of each window kept */
    size_t kept;
    double joules, seconds, launches;
    double first_t, last_t;
    int reset, idle; /* windows dropped, and why */
} window_sums;

/* Window [ta, tb] with the counter at va and vb: kept, or dropped as a
 * reset counter or one in which nothing completed. */
static void close_window(window_sums *w, const cutune__launch_mark *marks,
                         size_t n_marks, double ta, unsigned long long va,
                         double tb, unsigned long long vb)
{
    /* Unsigned: a counter that wrapped past 2^64 still differs by what
     * was used; one that restarted differs by an absurd amount. */
    double joules = (double)(vb - va) * 1e-3, seconds = tb - ta;
    if (joules > CUTUNE__ENERGY_MAX_W * seconds) {
        w->reset = 1;
        return;
    }
    double launches =
        launches_at(marks, n_marks, tb) - launches_at(marks, n_marks, ta);
    if (!(launches > 0)) {
        w->idle = 1;
        return;
    }
    if (w->kept == 0)
        w->first_t = ta;
    w->last_t = tb;
    w->per_launch[w->kept++] = joules / launches;
    w->joules += joules;
    w->seconds += seconds;
    w->launches += launches;
}

static void summarize(const window_sums *w, const cutune__power_read *power,
                      size_t n_power, cutune__energy_figures *out)
{
    out->windows = w->kept;
    out->launches = w->launches;
    out->seconds = w->seconds;
    if (w->kept == 0)
        return;
    out->energy_j = cutune__median(w->per_launch, w->kept);
    out->counter_w = w->joules / w->seconds;
    if (w->kept >= 2) {
        double mean = 0, ss = 0;
        for (size_t i = 0; i < w->kept; i++)
            mean += w->per_launch[i] / (double)w->kept;
        for (size_t i = 0; i < w->kept; i++)
            ss += (w->per_launch[i] - mean) * (w->per_launch[i] - mean);
        out->energy_rsd = sqrt(ss / (double)(w->kept - 1)) / mean;
    }
    double sum = 0;
    size_t n = 0;
    for (size_t i = 0; i < n_power; i++)
        if (power[i].t_s >= w->first_t && power[i].t_s <= w->last_t &&
            isfinite(power[i].w)) {
            sum += power[i].w;
            n++;
        }
    /* The counter's mean power, not the reads': on an H200 the counter's
     * windows gave 258.8-262.6 W over four window lengths where the
     * instantaneous power field's mean gave 212.7-287.5 W (it changes
     * only every ~100 ms, so a window holds a few values). The reads
     * stay as a check (sampled_w). */
    out->sampled_w = n ? sum / (double)n : NAN;
    out->power_w = out->counter_w;
}

size_t cutune__energy_windows(const cutune__energy_read *reads, size_t n_reads,
                              const cutune__launch_mark *marks, size_t n_marks,
                              const cutune__power_read *power, size_t n_power,
                              const cutune__energy_plan *plan,
                              cutune__energy_figures *out)
{
    cutune__energy_figures f = {.energy_j = NAN,
                                .energy_rsd = NAN,
                                .power_w = NAN,
                                .sampled_w = NAN,
                                .counter_w = NAN,
                                .step_s = NAN,
                                .why = CUTUNE__ENERGY_FEW_STEPS};
    window_sums w = {0};
    size_t steps = 0, late_steps = 0;
    double first_late = NAN, last_late = NAN;
    if (n_marks == 0 || plan->windows == 0) {
        f.why = CUTUNE__ENERGY_NO_LAUNCHES;
        goto done;
    }
    w.per_launch = malloc(plan->windows * sizeof *w.per_launch);
    if (!w.per_launch)
        goto done;
    const double from = marks[0].t_s + plan->lead_s;
    const double known_until = marks[n_marks - 1].t_s;
    int open = 0;
    double ta = 0;
    unsigned long long va = 0;
    for (size_t i = 1; i < n_reads && w.kept < plan->windows; i++) {
        if (reads[i].mj == reads[i - 1].mj)
            continue;
        steps++;
        const double t = 0.5 * (reads[i - 1].t_s + reads[i].t_s);
        if (t < from)
            continue;
        if (late_steps++ == 0)
            first_late = t;
        last_late = t;
        if (t > known_until)
            break;
        if (open && t - ta >= plan->window_s) {
            close_window(&w, marks, n_marks, ta, va, t, reads[i].mj);
            open = 0;
        }
        if (!open) {
            open = 1;
            ta = t;
            va = reads[i].mj;
        }
    }
    if (late_steps >= 2)
        f.step_s = (last_late - first_late) / (double)(late_steps - 1);
    summarize(&w, power, n_power, &f);
    f.why = w.kept       ? CUTUNE__ENERGY_OK
            : steps == 0 ? CUTUNE__ENERGY_STILL
            : w.reset    ? CUTUNE__ENERGY_RESET
            : w.idle     ? CUTUNE__ENERGY_NO_LAUNCHES
                         : CUTUNE__ENERGY_FEW_STEPS;
done:
    free(w.per_launch);
    if (out)
        *out = f;
    return f.windows;
}

const char *cutune__energy_why_str(cutune__energy_why why)
{
    switch (why) {
    case CUTUNE__ENERGY_OK: return "measured";
    case CUTUNE__ENERGY_STILL: return "the energy counter did not move";
    case CUTUNE__ENERGY_FEW_STEPS:
        return "the energy counter stepped too rarely for one window";
    case CUTUNE__ENERGY_RESET: return "the energy counter went back";
    case CUTUNE__ENERGY_NO_LAUNCHES:
        return "no launch completed within a window";
    case CUTUNE__ENERGY_UNAVAILABLE:
        return "NVML's energy counter is not available";
    case CUTUNE__ENERGY_LAUNCH_FAILED: return "a launch failed";
    }
    return "unknown";
}
