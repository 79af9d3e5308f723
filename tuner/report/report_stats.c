/* Statistics of a report: random search's expected best, medians, the
 * effect of each tunable, and which points a scatter plot keeps. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "expr/none.h"
#include "problem.h"
#include "report_internal.h"

void cutune__report_random_best(const double *sorted, size_t n_finite,
                                size_t m, const size_t *k, size_t n_k,
                                double *out)
{
    for (size_t j = 0; j < n_k; j++) {
        size_t draws = k[j] > m ? m : k[j];
        if (draws == 0 || n_finite == 0) {
            out[j] = NAN;
            continue;
        }
        /* P_i, that the best of the draws is the i-th fastest, is
         * C(m - i, draws - 1) / C(m, draws); P_1 = draws / m and each
         * next one is a factor (m - i - draws + 1) / (m - i) <= 1 of the
         * one before, so the sum can stop once the terms are negligible. */
        double p = (double)draws / (double)m, sum_p = 0, sum_pv = 0;
        for (size_t i = 1; i <= n_finite && p > 0; i++) {
            sum_p += p;
            sum_pv += p * sorted[i - 1];
            if (p < 1e-17 * sum_p)
                break;
            double num = (double)m - (double)i - (double)draws + 1.0;
            p = num > 0 ? p * num / (double)(m - i) : 0;
        }
        out[j] = sum_p > 0 ? sum_pv / sum_p : NAN;
    }
}

size_t cutune__report_draws(size_t m, size_t max, size_t *out)
{
    size_t n = 0;
    if (m == 0 || max == 0)
        return 0;
    if (m <= max) {
        for (size_t k = 1; k <= m; k++)
            out[n++] = k;
        return n;
    }
    double lm = log((double)m);
    for (size_t j = 0; j < max; j++) {
        size_t k = (size_t)llround(exp(lm * (double)j / (double)(max - 1)));
        if (k < 1)
            k = 1;
        if (k > m)
            k = m;
        if (n == 0 || k > out[n - 1])
            out[n++] = k;
    }
    if (out[n - 1] != m)
        out[n - 1] = m;
    return n;
}

static int by_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

double cutune__report_median(double *v, size_t n)
{
    if (n == 0)
        return NAN;
    qsort(v, n, sizeof *v, by_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

size_t cutune__report_subsample(size_t n, size_t max, size_t *out)
{
    if (n <= max) {
        for (size_t i = 0; i < n; i++)
            out[i] = i;
        return n;
    }
    size_t keep = max / 10, rest = max - keep, k = 0;
    for (size_t i = 0; i < keep; i++)
        out[k++] = i;
    for (size_t j = 0; j < rest; j++)
        out[k++] =
            keep + (size_t)((double)j * (double)(n - keep) / (double)rest);
    return k;
}

typedef struct ranked_item {
    size_t index;
    double time;
} ranked_item;

static int by_time_then_index(const void *a, const void *b)
{
    const ranked_item *x = a, *y = b;
    if (x->time != y->time)
        return x->time < y->time ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

size_t *cutune__report_ranked(const cutune_report *r, size_t *n)
{
    *n = 0;
    ranked_item *items = malloc((r->n_evals ? r->n_evals : 1) * sizeof *items);
    size_t k = 0;
    if (!items)
        return NULL;
    for (size_t i = 0; i < r->n_evals; i++)
        if (isfinite(r->evals[i].time_ms) && !r->evals[i].duplicate)
            items[k++] = (ranked_item){i, r->evals[i].time_ms};
    qsort(items, k, sizeof *items, by_time_then_index);
    size_t *order = malloc((k ? k : 1) * sizeof *order);
    if (order) {
        for (size_t i = 0; i < k; i++)
            order[i] = items[i].index;
        *n = k;
    }
    free(items);
    return order;
}

typedef struct value_time {
    size_t value;
    double time;
} value_time;

static int by_value_then_time(const void *a, const void *b)
{
    const value_time *x = a, *y = b;
    if (x->value != y->value)
        return x->value < y->value ? -1 : 1;
    return x->time < y->time ? -1 : x->time > y->time;
}

/* Best, median and counts per value of one tunable, from `vt` (scratch,
 * room for every result). */
static void one_param(const cutune_report *r, cutune__report_param *rp,
                      value_time *vt, double *scratch)
{
    const cutune_problem *p = r->problem;
    size_t n = 0;
    for (size_t i = 0; i < r->n_evals; i++) {
        const cutune__report_eval *e = &r->evals[i];
        if (e->config == CUTUNE__NONE || e->duplicate)
            continue;
        size_t v = cutune__space_config(p->space, e->config)[rp->param];
        rp->values[v].total++;
        if (isfinite(e->time_ms))
            vt[n++] = (value_time){v, e->time_ms};
    }
    qsort(vt, n, sizeof *vt, by_value_then_time);
    double lo = INFINITY, hi = 0;
    for (size_t i = 0; i < n;) {
        size_t j = i, v = vt[i].value;
        while (j < n && vt[j].value == v) {
            scratch[j - i] = vt[j].time;
            j++;
        }
        cutune__report_value_stat *s = &rp->values[v];
        s->correct = j - i;
        s->best_ms = vt[i].time;
        s->median_ms = cutune__report_median(scratch, j - i);
        lo = fmin(lo, s->median_ms);
        hi = fmax(hi, s->median_ms);
        i = j;
    }
    rp->spread = isfinite(lo) && lo > 0 ? hi / lo : NAN;
}

static int by_spread(const void *a, const void *b)
{
    const cutune__report_param *x = a, *y = b;
    double sx = isnan(x->spread) ? 0 : x->spread;
    double sy = isnan(y->spread) ? 0 : y->spread;
    if (sx != sy)
        return sx > sy ? -1 : 1;
    return x->param < y->param ? -1 : x->param > y->param;
}

cutune_status cutune__report_param_stats(cutune_report *r)
{
    const cutune_problem *p = r->problem;
    r->params = calloc(p->n_params ? p->n_params : 1, sizeof *r->params);
    value_time *vt = malloc((r->n_evals ? r->n_evals : 1) * sizeof *vt);
    double *scratch = malloc((r->n_evals ? r->n_evals : 1) * sizeof *scratch);
    cutune_status st = CUTUNE_OK;
    if (!r->params || !vt || !scratch)
        st = CUTUNE_ERR_NO_MEMORY;
    for (size_t k = 0; !st && k < p->n_params; k++) {
        size_t nv = p->param_value_counts[k];
        if (nv < 2)
            continue;
        cutune__report_param *rp = &r->params[r->n_params];
        rp->param = k;
        rp->n_values = nv;
        rp->values = calloc(nv, sizeof *rp->values);
        if (!rp->values) {
            st = CUTUNE_ERR_NO_MEMORY;
            break;
        }
        for (size_t v = 0; v < nv; v++)
            rp->values[v].best_ms = rp->values[v].median_ms = NAN;
        r->n_params++;
        one_param(r, rp, vt, scratch);
    }
    if (!st)
        qsort(r->params, r->n_params, sizeof *r->params, by_spread);
    free(vt);
    free(scratch);
    return st ? cutune__report_fail(r, st, "out of memory") : CUTUNE_OK;
}

typedef struct xy_item {
    size_t index;
    double x, y;
} xy_item;

static int by_x_then_y(const void *a, const void *b)
{
    const xy_item *p = a, *q = b;
    if (p->x != q->x)
        return p->x < q->x ? -1 : 1;
    if (p->y != q->y)
        return p->y < q->y ? -1 : 1;
    return p->index < q->index ? -1 : p->index > q->index;
}

int cutune__report_pareto(const double *x, const double *y, size_t n,
                          size_t *out, size_t *n_out)
{
    *n_out = 0;
    xy_item *items = malloc((n ? n : 1) * sizeof *items);
    if (!items)
        return -1;
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (isfinite(x[i]) && isfinite(y[i]))
            items[m++] = (xy_item){i, x[i], y[i]};
    qsort(items, m, sizeof *items, by_x_then_y);
    /* Sorted by x, a point is beaten exactly when one before it has a
     * lower y, or the same y at a lower x: the front keeps each point
     * whose y is below every earlier one's, and any point equal to the
     * last one kept. */
    size_t k = 0;
    for (size_t i = 0; i < m; i++) {
        const xy_item *last = k ? &items[k - 1] : NULL;
        if (!last || items[i].y < last->y ||
            (items[i].y == last->y && items[i].x == last->x))
            items[k++] = items[i];
    }
    for (size_t i = 0; i < k; i++)
        out[i] = items[i].index;
    *n_out = k;
    free(items);
    return 0;
}

size_t cutune__report_energy_points(const cutune_report *r, double *x,
                                    double *y, size_t *evals)
{
    size_t n = 0;
    for (size_t i = 0; i < r->n_evals; i++) {
        const cutune__report_eval *e = &r->evals[i];
        if (e->duplicate || !isfinite(e->time_ms) || !isfinite(e->energy_j))
            continue;
        x[n] = e->time_ms;
        y[n] = e->energy_j;
        evals[n++] = i;
    }
    return n;
}
