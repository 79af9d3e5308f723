/* The SVG plots of a results page: convergence against evaluations and
 * against seconds, time against threads per block, and one small plot per
 * tunable. Each plot keeps at most r->max_points points. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "expr/none.h"
#include "problem.h"
#include "report_internal.h"
#include "report_svg.h"

/* Series numbers, which are colours (report_svg.c): one meaning each
 * across the page. */
/* Tunables with more values get lines without a marker per value. */
#define PARAM_MARKERS_MAX 40

enum {
    S_BEST = 0,
    S_RANDOM = 1,
    S_OCCUPANCY = 2,
    S_DEFAULT = 3,
    S_WINNER = 4,
    S_MEDIAN = 5,
    S_FRONT = 6
};

static void plot_init(cutune__svg_plot *p, double w, double h)
{
    *p = (cutune__svg_plot){0};
    p->width = w;
    p->height = h;
    p->left = 64;
    p->right = 26;
    p->top = 14;
    p->bottom = 46;
}

/* A log axis when the values span more than `ratio`, else linear. */
static cutune__svg_scale scale_for(double lo, double hi, double ratio)
{
    return lo > 0 && hi / lo > ratio ? CUTUNE__SCALE_LOG10
                                     : CUTUNE__SCALE_LINEAR;
}

/* A time axis from lo to hi, a little wider so that no point sits on the
 * frame; log when the times span more than a factor 5. */
static cutune__svg_axis time_axis(double lo, double hi, const char *label)
{
    cutune__svg_scale scale = scale_for(lo, hi, 5);
    if (scale == CUTUNE__SCALE_LOG10) {
        lo /= 1.04;
        hi *= 1.04;
    } else {
        double pad = (hi - lo) * 0.04;
        lo = lo - pad > 0 ? lo - pad : lo;
        hi += pad;
    }
    return (cutune__svg_axis){
        .scale = scale, .lo = lo, .hi = hi, .label = label};
}

static double eval_time(const cutune_report *r, size_t eval)
{
    return eval == CUTUNE__NONE ? NAN : r->evals[eval].time_ms;
}

/* The expected best of random search over the recorded configurations,
 * at log-spaced draw counts. Returns how many points; NULL arrays when
 * nothing is correct. */
static size_t random_curve(const cutune_report *r, double **k_out,
                           double **best_out)
{
    size_t m = r->n_evals - r->n_duplicates, nf = 0;
    double *sorted = malloc((m ? m : 1) * sizeof *sorted);
    size_t *draws = malloc(CUTUNE__REPORT_CURVE_POINTS * sizeof *draws);
    double *k = malloc(CUTUNE__REPORT_CURVE_POINTS * sizeof *k);
    double *best = malloc(CUTUNE__REPORT_CURVE_POINTS * sizeof *best);
    size_t n = 0;
    if (sorted && draws && k && best) {
        for (size_t i = 0; i < r->n_evals; i++)
            if (!r->evals[i].duplicate && isfinite(r->evals[i].time_ms))
                sorted[nf++] = r->evals[i].time_ms;
        cutune__report_median(sorted, nf); /* sorts */
        n = nf ? cutune__report_draws(m, CUTUNE__REPORT_CURVE_POINTS, draws)
               : 0;
        cutune__report_random_best(sorted, nf, m, draws, n, best);
        for (size_t j = 0; j < n; j++)
            k[j] = (double)draws[j];
    }
    free(sorted);
    free(draws);
    if (!n) {
        free(k);
        free(best);
        k = best = NULL;
    }
    *k_out = k;
    *best_out = best;
    return n;
}

/* The file's best-so-far as steps: a point where it improves and one at
 * the end; x is the evaluation number or its end in seconds. */
static size_t best_so_far(const cutune_report *r, int seconds, double *x,
                          double *y)
{
    size_t n = 0;
    double best = INFINITY;
    for (size_t i = 0; i < r->n_evals; i++) {
        const cutune__report_eval *e = &r->evals[i];
        double at = seconds ? e->elapsed_s : (double)(i + 1);
        if (e->time_ms < best) {
            best = e->time_ms;
            x[n] = at;
            y[n++] = best;
        } else if (i + 1 == r->n_evals && n) {
            x[n] = at;
            y[n++] = best;
        }
    }
    return n;
}

static void reference_marks(cutune__svg_plot *p, const cutune_report *r,
                            int seconds)
{
    static const struct {
        int which;
        cutune__svg_shape shape;
        int series;
        const char *name;
    } refs[] = {
        {0, CUTUNE__MARK_SQUARE, S_DEFAULT, "default configuration"},
        {1, CUTUNE__MARK_TRIANGLE, S_OCCUPANCY, "occupancy suggestion"},
        {2, CUTUNE__MARK_STAR, S_WINNER, "winner"}};
    for (size_t k = 0; k < 3; k++) {
        size_t ev = refs[k].which == 0   ? r->default_eval
                    : refs[k].which == 1 ? r->baseline_eval
                                         : r->winner_eval;
        double t = refs[k].which == 2 ? r->winner_ms : eval_time(r, ev);
        if (ev == CUTUNE__NONE || !isfinite(t))
            continue;
        char name[160], ms[32];
        snprintf(name, sizeof name, "%s: %s ms, evaluation %zu", refs[k].name,
                 cutune__rtext_num(ms, t, 4), ev + 1);
        if (refs[k].which < 2)
            cutune__svg_hline(p, t, refs[k].series, name);
        double x = seconds ? r->evals[ev].elapsed_s : (double)(ev + 1);
        cutune__svg_marker(p, x, t, refs[k].shape, refs[k].series, name);
        cutune__svg_legend(p, refs[k].shape, refs[k].series, 0, refs[k].name);
    }
}

static void one_convergence(const cutune_report *r, cutune__rtext *out,
                            int seconds, const double *bx, const double *by,
                            size_t nb, const double *rk, const double *rb,
                            size_t nr)
{
    double per_eval =
        r->n_evals ? r->evals[r->n_evals - 1].elapsed_s / (double)r->n_evals
                   : 0;
    double *rx = malloc((nr ? nr : 1) * sizeof *rx);
    if (!rx)
        return;
    double lo = INFINITY, hi = 0,
           xhi = seconds ? bx[nb - 1] : (double)r->n_evals;
    for (size_t j = 0; j < nr; j++) {
        rx[j] = seconds ? rk[j] * per_eval : rk[j];
        hi = fmax(hi, rb[j]);
        lo = fmin(lo, rb[j]);
        xhi = fmax(xhi, rx[j]);
    }
    for (size_t j = 0; j < nb; j++) {
        hi = fmax(hi, by[j]);
        lo = fmin(lo, by[j]);
    }
    cutune__svg_plot p;
    plot_init(&p, 560, 340);
    double xlo = seconds ? fmin(bx[0], nr ? rx[0] : bx[0]) : 1;
    p.x = (cutune__svg_axis){.scale = scale_for(xlo, xhi, 30),
                             .lo = xlo,
                             .hi = xhi,
                             .label = seconds ? "seconds since the start"
                                              : "evaluations (file order)"};
    p.y = time_axis(lo, hi, "best time so far (ms)");
    cutune__svg_begin(&p, out, seconds ? "conv-seconds" : "conv-evals",
                      seconds ? "Best time so far against seconds"
                              : "Best time so far against evaluations",
                      "The fastest time found after each evaluation, in the "
                      "results file's order, and random search's expected "
                      "best for as many draws from the same results.");
    cutune__svg_line(&p, rx, rb, nr, S_RANDOM, 0, 1,
                     "random search, expected best");
    cutune__svg_line(&p, bx, by, nb, S_BEST, 1, 0, "best so far");
    cutune__svg_legend(&p, -1, S_BEST, 0, "best so far");
    cutune__svg_legend(&p, -1, S_RANDOM, 1, "random search (expected)");
    reference_marks(&p, r, seconds);
    cutune__svg_end(&p);
    free(rx);
}

size_t cutune__report_plot_convergence(const cutune_report *r,
                                       cutune__rtext *out)
{
    double *bx = malloc((r->n_evals + 1) * sizeof *bx);
    double *by = malloc((r->n_evals + 1) * sizeof *by);
    double *rk = NULL, *rb = NULL;
    size_t nr = random_curve(r, &rk, &rb), plots = 0;
    if (bx && by && nr) {
        for (int seconds = 0; seconds < 2; seconds++) {
            size_t nb = best_so_far(r, seconds, bx, by);
            one_convergence(r, out, seconds, bx, by, nb, rk, rb, nr);
            plots++;
        }
    }
    free(bx);
    free(by);
    free(rk);
    free(rb);
    return plots;
}

static void threads_marks(cutune__svg_plot *p, const cutune_report *r)
{
    if (r->occupancy_block_size > 0) {
        char name[96];
        snprintf(name, sizeof name, "the occupancy API's block size: %d",
                 r->occupancy_block_size);
        cutune__svg_vline(p, r->occupancy_block_size, S_OCCUPANCY, name);
        cutune__svg_legend(p, -1, S_OCCUPANCY, 2, "occupancy API block size");
    }
    const size_t evs[3] = {r->default_eval, r->baseline_eval, r->winner_eval};
    static const char *const names[3] = {"default configuration",
                                         "occupancy suggestion", "winner"};
    static const int shapes[3] = {CUTUNE__MARK_SQUARE, CUTUNE__MARK_TRIANGLE,
                                  CUTUNE__MARK_STAR};
    static const int series[3] = {S_DEFAULT, S_OCCUPANCY, S_WINNER};
    for (size_t k = 0; k < 3; k++) {
        if (evs[k] == CUTUNE__NONE || !isfinite(r->evals[evs[k]].time_ms))
            continue;
        const cutune__report_eval *e = &r->evals[evs[k]];
        char name[160], ms[32];
        snprintf(name, sizeof name, "%s: %.0f threads, %s ms", names[k],
                 e->threads, cutune__rtext_num(ms, e->time_ms, 4));
        cutune__svg_marker(p, e->threads, e->time_ms, shapes[k], series[k],
                           name);
        cutune__svg_legend(p, shapes[k], series[k], 0, names[k]);
    }
}

size_t cutune__report_plot_threads(const cutune_report *r, cutune__rtext *out)
{
    size_t n = 0;
    size_t *order = cutune__report_ranked(r, &n);
    size_t *keep = malloc((n ? n : 1) * sizeof *keep);
    double *x = malloc((n ? n : 1) * sizeof *x);
    double *y = malloc((n ? n : 1) * sizeof *y);
    size_t plots = 0, m = 0;
    if (r->threads_source && order && keep && x && y && n) {
        double xlo = INFINITY, xhi = 0;
        for (size_t i = 0; i < n; i++) {
            double t = r->evals[order[i]].threads;
            if (isfinite(t)) {
                order[m++] = order[i];
                xlo = fmin(xlo, t);
                xhi = fmax(xhi, t);
            }
        }
        size_t k = cutune__report_subsample(m, r->max_points, keep);
        for (size_t i = 0; i < k; i++) {
            x[i] = r->evals[order[keep[i]]].threads;
            y[i] = r->evals[order[keep[i]]].time_ms;
        }
        if (m) {
            cutune__svg_plot p;
            plot_init(&p, 560, 330);
            p.legend_above = 1;
            const char *names[5];
            size_t nn = 0;
            names[nn++] = "configuration";
            if (r->occupancy_block_size > 0)
                names[nn++] = "occupancy API block size";
            if (r->default_eval != CUTUNE__NONE)
                names[nn++] = "default configuration";
            if (r->baseline_eval != CUTUNE__NONE)
                names[nn++] = "occupancy suggestion";
            names[nn++] = "winner";
            p.top = cutune__svg_legend_top(&p, names, nn);
            p.height += p.top;
            double lo = r->evals[order[0]].time_ms;
            double hi = r->evals[order[m - 1]].time_ms;
            p.x = (cutune__svg_axis){.scale = CUTUNE__SCALE_LOG2,
                                     .lo = xlo,
                                     .hi = xhi,
                                     .label = "threads per block"};
            p.y = time_axis(lo, hi, "time (ms)");
            cutune__svg_begin(&p, out, "threads",
                              "Time against threads per block",
                              "Each correct configuration's time against "
                              "its threads per block.");
            cutune__svg_dots(&p, x, y, k, S_BEST, "configurations");
            cutune__svg_legend(&p, CUTUNE__MARK_CIRCLE, S_BEST, 0,
                               "configuration");
            threads_marks(&p, r);
            cutune__svg_end(&p);
            plots = 1;
        }
    }
    free(order);
    free(keep);
    free(x);
    free(y);
    return plots;
}

static void one_param_plot(const cutune_report *r,
                           const cutune__report_param *rp, cutune__rtext *out)
{
    const cutune_problem *pr = r->problem;
    size_t nv = rp->n_values;
    double *x = malloc(nv * sizeof *x), *best = malloc(nv * sizeof *best);
    double *median = malloc(nv * sizeof *median);
    if (!x || !best || !median) {
        free(x);
        free(best);
        free(median);
        return;
    }
    double lo = INFINITY, hi = 0;
    for (size_t v = 0; v < nv; v++) {
        x[v] = (double)v;
        best[v] = rp->values[v].best_ms;
        median[v] = rp->values[v].median_ms;
        if (!isnan(best[v])) {
            lo = fmin(lo, best[v]);
            hi = fmax(hi, median[v]);
        }
    }
    const char *name = pr->param_names[rp->param];
    cutune__svg_plot p;
    plot_init(&p, 380, 260);
    p.legend_above = 1;
    p.top = 32;
    p.x = (cutune__svg_axis){
        .label = name,
        .categories = (const char *const *)pr->value_texts[rp->param],
        .n_categories = nv};
    p.y = time_axis(lo, hi, "time (ms)");
    char id[64], title[200], spread[32];
    snprintf(id, sizeof id, "param-%zu", rp->param);
    snprintf(title, sizeof title, "%s: slowest median / fastest median %sx",
             name, cutune__rtext_num(spread, rp->spread, 3));
    cutune__svg_begin(&p, out, id, title,
                      "Per value of the tunable: the best and the median "
                      "time of the correct configurations with that value.");
    cutune__svg_line(&p, x, median, nv, S_MEDIAN, 0, 1, "median");
    cutune__svg_line(&p, x, best, nv, S_BEST, 0, 0, "best");
    /* Past a few dozen values markers would only hide each other. */
    int marks = nv <= PARAM_MARKERS_MAX;
    for (size_t v = 0; marks && v < nv; v++) {
        char tip[160], b[32], m[32];
        snprintf(tip, sizeof tip,
                 "%s = %s: best %s ms, median %s ms, %zu of "
                 "%zu correct",
                 name, pr->value_texts[rp->param][v],
                 cutune__rtext_num(b, best[v], 4),
                 cutune__rtext_num(m, median[v], 4), rp->values[v].correct,
                 rp->values[v].total);
        cutune__svg_marker(&p, x[v], median[v], CUTUNE__MARK_SQUARE, S_MEDIAN,
                           tip);
        cutune__svg_marker(&p, x[v], best[v], CUTUNE__MARK_CIRCLE, S_BEST,
                           tip);
    }
    cutune__svg_legend(&p, marks ? CUTUNE__MARK_CIRCLE : -1, S_BEST, 0,
                       "best");
    cutune__svg_legend(&p, marks ? CUTUNE__MARK_SQUARE : -1, S_MEDIAN, 1,
                       "median");
    cutune__svg_end(&p);
    free(x);
    free(best);
    free(median);
}

size_t cutune__report_plot_params(const cutune_report *r, cutune__rtext *out)
{
    size_t plots = 0;
    for (size_t k = 0; k < r->n_params; k++) {
        if (isnan(r->params[k].spread))
            continue;
        one_param_plot(r, &r->params[k], out);
        plots++;
    }
    return plots;
}

/* The objectives' winners on the energy plot: shape, series, name. */
static const struct {
    cutune__svg_shape shape;
    int series;
    const char *name;
} objective_marks[CUTUNE__REPORT_OBJECTIVES] = {
    {CUTUNE__MARK_STAR, S_WINNER, "time winner"},
    {CUTUNE__MARK_DIAMOND, S_DEFAULT, "energy winner"},
    {CUTUNE__MARK_TRIANGLE, S_OCCUPANCY, "edp winner"}};

/* "NAME: T ms, E J per launch, P W, evaluation N" into buf. */
static void energy_tip(const cutune__report_eval *e, size_t eval,
                       const char *name, char *buf, size_t len)
{
    char t[32], j[32], w[32];
    snprintf(buf, len, "%s: %s ms, %s J per launch, %s W, evaluation %zu",
             name, cutune__rtext_num(t, e->time_ms, 4),
             cutune__rtext_num(j, e->energy_j, 4),
             cutune__rtext_num(w, e->power_w, 4), eval + 1);
}

static void energy_marks(cutune__svg_plot *p, const cutune_report *r,
                         const size_t *front, size_t n_front)
{
    double *fx = malloc((n_front ? n_front : 1) * sizeof *fx);
    double *fy = malloc((n_front ? n_front : 1) * sizeof *fy);
    if (fx && fy) {
        for (size_t i = 0; i < n_front; i++) {
            fx[i] = r->evals[front[i]].time_ms;
            fy[i] = r->evals[front[i]].energy_j;
        }
        cutune__svg_line(p, fx, fy, n_front, S_FRONT, 0, 0, "Pareto front");
        for (size_t i = 0; i < n_front; i++) {
            char tip[200];
            energy_tip(&r->evals[front[i]], front[i], "Pareto front", tip,
                       sizeof tip);
            cutune__svg_marker(p, fx[i], fy[i], CUTUNE__MARK_CIRCLE, S_FRONT,
                               tip);
        }
    }
    free(fx);
    free(fy);
    for (size_t k = 0; k < CUTUNE__REPORT_OBJECTIVES; k++) {
        size_t w = r->energy_winner[k];
        char tip[200];
        energy_tip(&r->evals[w], w, objective_marks[k].name, tip, sizeof tip);
        cutune__svg_marker(p, r->evals[w].time_ms, r->evals[w].energy_j,
                           objective_marks[k].shape, objective_marks[k].series,
                           tip);
    }
}

size_t cutune__report_plot_energy(const cutune_report *r, const size_t *front,
                                  size_t n_front, cutune__rtext *out)
{
    size_t n = r->n_evals ? r->n_evals : 1;
    double *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
    size_t *evals = malloc(n * sizeof *evals),
           *keep = malloc(n * sizeof *keep);
    size_t m = x && y && evals && keep && r->n_energy
                   ? cutune__report_energy_points(r, x, y, evals)
                   : 0;
    if (m) {
        double xlo = INFINITY, xhi = 0, ylo = INFINITY, yhi = 0;
        for (size_t i = 0; i < m; i++) {
            xlo = fmin(xlo, x[i]);
            xhi = fmax(xhi, x[i]);
            ylo = fmin(ylo, y[i]);
            yhi = fmax(yhi, y[i]);
        }
        /* Every point when they are few; else an even sample (the front
         * and the winners are drawn on top in any case). */
        size_t k = cutune__report_subsample(m, r->max_points, keep);
        for (size_t i = 0; i < k; i++) {
            x[i] = x[keep[i]];
            y[i] = y[keep[i]];
        }
        cutune__svg_plot p;
        plot_init(&p, 560, 340);
        p.legend_above = 1;
        const char *names[] = {
            "configuration", "Pareto front", objective_marks[0].name,
            objective_marks[1].name, objective_marks[2].name};
        p.top = cutune__svg_legend_top(&p, names, 5);
        p.height += p.top;
        p.x = time_axis(xlo, xhi, "time per launch (ms)");
        p.y = time_axis(ylo, yhi, "energy per launch (J)");
        cutune__svg_begin(&p, out, "energy-time", "Energy against time",
                          "Each correct configuration's energy per launch "
                          "against its time, the Pareto front (those no "
                          "other beats on both) connected, and the best by "
                          "time, by energy and by energy x time.");
        cutune__svg_dots(&p, x, y, k, S_BEST, "configurations");
        energy_marks(&p, r, front, n_front);
        cutune__svg_legend(&p, CUTUNE__MARK_CIRCLE, S_BEST, 0, names[0]);
        cutune__svg_legend(&p, CUTUNE__MARK_CIRCLE, S_FRONT, 0, names[1]);
        for (size_t j = 0; j < CUTUNE__REPORT_OBJECTIVES; j++)
            cutune__svg_legend(&p, objective_marks[j].shape,
                               objective_marks[j].series, 0,
                               objective_marks[j].name);
        cutune__svg_end(&p);
    }
    free(x);
    free(y);
    free(evals);
    free(keep);
    return m ? 1 : 0;
}
