/* bench-strategies: the markdown it prints, the clock's last. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "replay/replay.h"
#include "strategies.h"
#include "strategy/settings.h"

const double bench_share_levels[N_LEVELS] = {0.90, 0.95, 0.98};

static void budget_name(char *buf, size_t len, size_t b)
{
    if (b == TIME_BUDGET)
        snprintf(buf, len, "time");
    else
        snprintf(buf, len, "%zu", bench_budgets[b]);
}

/* A table head's per-budget part: " NAME<cells>" for each budget. */
static void budget_cells(FILE *out, const char *cells)
{
    for (size_t b = 0; b < N_BUDGETS; b++) {
        char bn[16];
        budget_name(bn, sizeof bn, b);
        fprintf(out, " %s%s", bn, cells);
    }
}

/* The rule under it: `rule` once per budget. */
static void budget_rule(FILE *out, const char *rule)
{
    for (size_t b = 0; b < N_BUDGETS; b++)
        fputs(rule, out);
}

static void fmt_evals(char *buf, size_t len, double v)
{
    if (isinf(v) || isnan(v))
        snprintf(buf, len, "-");
    else
        snprintf(buf, len, "%.0f", v);
}

void bench_print_intro(FILE *out, const bench_args *a, double wall)
{
    fprintf(out,
            "# Search strategies on recorded measurements\n\n"
            "Produced by bench-strategies (cutune %s; "
            "`bench/strategies.sh` and `bench/seeds.sh` run it): every "
            "strategy replayed against every T4 "
            "file, at budgets of",
            CUTUNE_VERSION_STRING);
    for (size_t b = 0; b < N_EVAL_BUDGETS; b++)
        fprintf(out, "%s %zu", b ? "," : "", bench_budgets[b]);
    fprintf(out,
            " evaluations and a time budget (**time**: the recorded "
            "compile and run seconds that %d evaluations of the space cost "
            "on average; the evaluations a run got in it are in brackets), "
            "%zu seeds each (%llu to %llu), %s, "
            "%zu proposal%s at a time. "
            "Medians over the seeds of: **opt/found**, the optimum's "
            "time over the best found time (1 = the optimum), with "
            "its first and third quartiles in brackets; **P**, "
            "the score (B - F) / (B - O) of Willemsen et al. with B "
            "the exact expected best of random search with the same "
            "budget (1 = the optimum, 0 = as good as random search; "
            "for time, B is random search's at %d evaluations); "
            "**5%%**, evaluations until the best found was within 5%% "
            "of the optimum (- when the median run never got there). "
            "CPU time of the strategy itself is the last column "
            "(ms per run at the largest budget). The worst case over "
            "all spaces comes first. Wall time of the "
            "whole benchmark: %.0f s on %zu threads.\n",
            TIME_BUDGET_EVALS, a->seeds, (unsigned long long)a->first_seed,
            (unsigned long long)(a->first_seed + a->seeds - 1),
            a->no_start ? "no start configuration"
                        : "each run starting at the default configuration "
                          "(what a tune starts from when the occupancy API "
                          "gives no answer: search/strategy/seed.h)",
            a->batch, a->batch == 1 ? "" : "s", TIME_BUDGET_EVALS, wall,
            a->threads);
}

/* Per variant and budget, over all spaces: the lowest median opt/found
 * (and its space), the lowest first quartile, the lowest P and the
 * worst single seed. */
void bench_print_worst(FILE *out, const pool *p, const bench_args *a)
{
    fprintf(out,
            "\n## Worst case over the %zu spaces\n\n"
            "Per strategy and budget: the lowest median opt/found of "
            "any space (the space), the lowest first quartile, the "
            "lowest median P, and the worst single seed.\n\n"
            "| strategy | budget | worst median | space | worst Q1 | "
            "worst P | worst seed |\n|---|---:|---:|---|---:|---:|---:|\n",
            a->n_data);
    for (size_t v = 0; v < a->n_variants; v++) {
        const variant *var = &a->variants[v];
        for (size_t b = 0; b < N_BUDGETS; b++) {
            double med = INFINITY, q1 = INFINITY, sc = INFINITY;
            double lo = INFINITY;
            const char *where = "";
            char bn[16];
            for (size_t j = 0; j < p->n_jobs; j++) {
                const figures *f = &p->jobs[j].fig[b];
                if (p->jobs[j].var != var || isnan(f->ratio))
                    continue;
                if (f->ratio < med) {
                    med = f->ratio;
                    where = p->jobs[j].data->name;
                }
                q1 = f->ratio_q1 < q1 ? f->ratio_q1 : q1;
                sc = f->score < sc ? f->score : sc;
                lo = f->ratio_min < lo ? f->ratio_min : lo;
            }
            budget_name(bn, sizeof bn, b);
            fprintf(out, "| %s | %s | %.3f | %s | %.3f | %.2f | %.3f |\n",
                    b ? "" : var->label, bn, med, where, q1, sc, lo);
        }
    }
}

static const job *find_job(const pool *p, const variant *v, const dataset *d)
{
    for (size_t j = 0; j < p->n_jobs; j++)
        if (p->jobs[j].var == v && p->jobs[j].data == d)
            return &p->jobs[j];
    return NULL;
}

/* Random search as --strategies named it, or NULL. */
static const variant *random_variant(const bench_args *a)
{
    for (size_t v = 0; v < a->n_variants; v++)
        if (a->variants[v].type == cutune__strategy_random &&
            !a->variants[v].has_params)
            return &a->variants[v];
    return NULL;
}

/* What leave-one-out compares at budget b of variant v on space d: the
 * median opt/found, or for bayes its margin over random search's median
 * (bayes must never be below random search). NAN when not run. */
static double loo_figure(const pool *p, const bench_args *a, const variant *v,
                         const dataset *d, size_t b)
{
    const job *jb = find_job(p, v, d);
    if (!jb || isnan(jb->fig[b].ratio))
        return NAN;
    if (v->type != cutune__strategy_bayes)
        return jb->fig[b].ratio;
    const variant *r = random_variant(a);
    const job *jr = r ? find_job(p, r, d) : NULL;
    return jr ? jb->fig[b].ratio - jr->fig[b].ratio : NAN;
}

/* The lowest and the mean figure at budget b of variant v over the
 * spaces in group g (inside) or outside it. */
static double worst_of(const pool *p, const bench_args *a, const variant *v,
                       const char *g, int inside, size_t b, double *mean)
{
    double w = INFINITY, sum = 0;
    size_t k = 0;
    for (size_t f = 0; f < a->n_data; f++) {
        if ((strcmp(a->data[f].group, g) == 0) != inside)
            continue;
        double x = loo_figure(p, a, v, &a->data[f], b);
        if (isnan(x))
            continue;
        w = x < w ? x : w;
        sum += x;
        k++;
    }
    if (mean)
        *mean = k ? sum / (double)k : NAN;
    return w;
}

/* The setting of strategy `type` chosen without group g: the highest
 * worst figure over the other spaces at budget b (b == N_BUDGETS: summed
 * over the budgets), ties to the higher mean, then to the first listed. */
static const variant *choose(const pool *p, const bench_args *a, const char *g,
                             size_t b, const cutune__strategy_type *type)
{
    const variant *pick = NULL;
    double best_w = -INFINITY, best_m = -INFINITY;
    for (size_t v = 0; v < a->n_variants; v++) {
        const variant *var = &a->variants[v];
        if (var->type != type)
            continue;
        double w = 0, m = 0;
        for (size_t k = b == N_BUDGETS ? 0 : b;
             k < (b == N_BUDGETS ? N_BUDGETS : b + 1); k++) {
            double mk;
            w += worst_of(p, a, var, g, 0, k, &mk);
            m += mk;
        }
        if (w > best_w || (w == best_w && m > best_m)) {
            best_w = w;
            best_m = m;
            pick = var;
        }
    }
    return pick;
}

static void print_loo_head(FILE *out, const cutune__strategy_type *type)
{
    int margin = type == cutune__strategy_bayes;
    const char *what = margin ? "margin over random search's median "
                                "(opt/found; below 0: below random search)"
                              : "median";
    fprintf(out,
            "\n## Leave one kernel out: %s\n\nPer held-out problem "
            "(its spaces of every device and size): the setting of the "
            "%s strategy with the highest worst %s over the "
            "other problems' spaces (ties to the higher mean), and its "
            "worst figure on the held-out spaces, per budget; the last "
            "columns choose one setting for every budget (the highest "
            "sum of worst figures). The last row is the worst "
            "held-out figure: what a setting chosen without a kernel "
            "does on it.\n\n| held out |",
            type->name, type->name, what);
    budget_cells(out, ": chosen | held-out |");
    fprintf(out, " one for all | held-out 50/100/200/400/time |\n|---|");
    budget_rule(out, "---|---:|");
    fprintf(out, "---|---|\n");
}

/* Leave one kernel out: for each problem (all its devices and sizes held
 * out together), the setting of `type` chosen on the other problems, and
 * that setting's worst figure on the held-out one. Nothing where no
 * variant of `type` ran (or, for bayes, no random search). */
void bench_print_loo(FILE *out, const pool *p, const bench_args *a,
                     const cutune__strategy_type *type)
{
    double worst[N_BUDGETS], all_worst[N_BUDGETS];
    size_t n_type = 0;
    for (size_t v = 0; v < a->n_variants; v++)
        n_type += a->variants[v].type == type;
    if (n_type == 0 || (type == cutune__strategy_bayes && !random_variant(a)))
        return;
    for (size_t b = 0; b < N_BUDGETS; b++)
        worst[b] = all_worst[b] = INFINITY;
    print_loo_head(out, type);
    for (size_t f = 0; f < a->n_data; f++) {
        const char *g = a->data[f].group;
        int first = 1;
        for (size_t k = 0; k < f; k++)
            first &= strcmp(a->data[k].group, g) != 0;
        if (!first)
            continue;
        fprintf(out, "| %s |", g);
        for (size_t b = 0; b < N_BUDGETS; b++) {
            const variant *pick = choose(p, a, g, b, type);
            double held = pick ? worst_of(p, a, pick, g, 1, b, NULL) : NAN;
            worst[b] = held < worst[b] ? held : worst[b];
            fprintf(out, " %s | %.3f |", pick ? pick->label : "-", held);
        }
        const variant *one = choose(p, a, g, N_BUDGETS, type);
        fprintf(out, " %s |", one ? one->label : "-");
        for (size_t b = 0; b < N_BUDGETS; b++) {
            double held = one ? worst_of(p, a, one, g, 1, b, NULL) : NAN;
            all_worst[b] = held < all_worst[b] ? held : all_worst[b];
            fprintf(out, "%s%.3f", b ? " / " : " ", held);
        }
        fprintf(out, " |\n");
    }
    fprintf(out, "| **worst** |");
    for (size_t b = 0; b < N_BUDGETS; b++)
        fprintf(out, " | **%.3f** |", worst[b]);
    fprintf(out, " |");
    for (size_t b = 0; b < N_BUDGETS; b++)
        fprintf(out, "%s**%.3f**", b ? " / " : " ", all_worst[b]);
    fprintf(out, " |\n");
}

static void print_shares(FILE *out, const pool *p, const dataset *d)
{
    fprintf(out, "\nShare of seeds with opt/found >=");
    for (size_t l = 0; l < N_LEVELS; l++)
        fprintf(out, "%s %.2f", l ? " /" : "", bench_share_levels[l]);
    fprintf(out, ":\n\n| strategy |");
    budget_cells(out, " |");
    fprintf(out, "\n|---|");
    budget_rule(out, "---:|");
    fprintf(out, "\n");
    for (size_t j = 0; j < p->n_jobs; j++) {
        const job *jb = &p->jobs[j];
        if (jb->data != d)
            continue;
        fprintf(out, "| %s |", jb->var->label);
        for (size_t b = 0; b < N_BUDGETS; b++) {
            for (size_t l = 0; l < N_LEVELS; l++)
                fprintf(out, "%s%.2f", l ? " / " : " ", jb->fig[b].share[l]);
            fprintf(out, " |");
        }
        fprintf(out, "\n");
    }
}

static void print_head(FILE *out, const dataset *d)
{
    size_t correct = 0;
    for (size_t i = 0; i < d->n; i++)
        correct += isfinite(d->objective[i]) != 0;
    /* Times as they always printed; energies (µJ to J) with digits. */
    int timed = d->minimise == CUTUNE_OBJECTIVE_TIME;
    const char *unit = timed                                    ? "ms"
                       : d->minimise == CUTUNE_OBJECTIVE_ENERGY ? "J"
                                                                : "J s";
    char v[32];
    snprintf(v, sizeof v, timed ? "%.4f" : "%.4g", d->optimum);
    fprintf(out, "\n## %s\n\n%zu configurations, %zu correct, optimum %s %s",
            d->name, d->n, correct, v, unit);
    if (!timed)
        fprintf(out, " (objective %s)", cutune_objective_str(d->minimise));
    fprintf(out, "; time budget %.1f s. Random search expects",
            d->time_budget);
    for (size_t b = 0; b < N_EVAL_BUDGETS; b++) {
        snprintf(v, sizeof v, timed ? "%.4f" : "%.4g", d->random_best[b]);
        fprintf(out, "%s %s %s (opt/found %.3f) at %zu", b ? "," : "", v, unit,
                d->optimum / d->random_best[b], bench_budgets[b]);
    }
    fprintf(out, ".\n\n| strategy |");
    budget_cells(out, ": opt/found [Q1, Q3] | P | 5% |");
    fprintf(out, " ms/run |\n|---|");
    budget_rule(out, "---:|---:|---:|");
    fprintf(out, "---:|\n");
}

void bench_print_space(FILE *out, const pool *p, const dataset *d, int shares)
{
    print_head(out, d);
    for (size_t j = 0; j < p->n_jobs; j++) {
        const job *jb = &p->jobs[j];
        if (jb->data != d)
            continue;
        fprintf(out, "| %s |", jb->var->label);
        for (size_t b = 0; b < N_BUDGETS; b++) {
            char w[16];
            const figures *f = &jb->fig[b];
            fmt_evals(w, sizeof w, f->within5);
            if (isnan(f->ratio)) {
                fprintf(out, " - | - | - |");
                continue;
            }
            fprintf(out, " %.3f [%.3f, %.3f]", f->ratio, f->ratio_q1,
                    f->ratio_q3);
            if (b == TIME_BUDGET)
                fprintf(out, " (%.0f)", f->evals);
            fprintf(out, " | %.2f | %s |", f->score, w);
        }
        fprintf(out, " %.1f |\n", 1e3 * jb->fig[N_EVAL_BUDGETS - 1].seconds);
    }
    if (shares)
        print_shares(out, p, d);
}

/* Modelled seconds, "-" where never reached (or not run). */
static void fmt_seconds(char *buf, size_t len, double v)
{
    if (isinf(v) || isnan(v))
        snprintf(buf, len, "-");
    else
        snprintf(buf, len, "%.1f", v);
}

/* What every clock table measures, after "## On the clock" or a space. */
static void print_clock_what(FILE *out, const pool *p)
{
    fprintf(out,
            "a tune of %zu evaluations per seed modelled on a host with N "
            "compile threads and one GPU (search/replay/replay.h: each "
            "configuration's recorded compile and measuring seconds, "
            "scheduled as the tuner schedules them, proposals asked for as "
            "a tune with N threads asks; the setup and the reference "
            "compiled and measured first, the final round last). Medians "
            "over the %zu seeds of: **to %.2f**, **to %.2f**, modelled "
            "seconds until the best found first came within that fraction "
            "of the optimum (opt/found; a seed that never did counts as "
            "infinite, - when the median is), with the seeds that got "
            "there in brackets; **wall**, modelled seconds of the whole "
            "tune.",
            p->clock_evals, p->seeds, cutune__replay_ratios[0],
            cutune__replay_ratios[CLOCK_RATIOS - 1]);
}

/* One cell per ratio and the wall of `cf`, for N compile threads. */
static void print_clock_cells(FILE *out, const clock_figures *cf, size_t seeds)
{
    char b[32];
    for (size_t q = 0; q < CLOCK_RATIOS; q++) {
        fmt_seconds(b, sizeof b, cf->to[q]);
        fprintf(out, " %s (%zu/%zu) |", b, cf->reached[q], seeds);
    }
    fmt_seconds(b, sizeof b, cf->wall);
    fprintf(out, " %s |", b);
}

void bench_print_space_clock(FILE *out, const pool *p, const dataset *d)
{
    if (p->n_clock == 0)
        return;
    fprintf(out,
            "\nOn the clock (a tune of %zu evaluations with N compile "
            "threads, modelled; medians over the seeds, as in \"On the "
            "clock\" above; setup and reference %.1f s):\n\n| strategy |",
            p->clock_evals, d->setup_s);
    for (size_t c = 0; c < p->n_clock; c++) {
        for (size_t q = 0; q < CLOCK_RATIOS; q++)
            fprintf(out, " %d threads: to %.2f |", p->clock_threads[c],
                    cutune__replay_ratios[q]);
        fprintf(out, " %d threads: wall |", p->clock_threads[c]);
    }
    fprintf(out, "\n|---|");
    for (size_t c = 0; c < p->n_clock; c++)
        for (size_t q = 0; q <= CLOCK_RATIOS; q++)
            fprintf(out, "---:|");
    fprintf(out, "\n");
    for (size_t j = 0; j < p->n_jobs; j++) {
        const job *jb = &p->jobs[j];
        if (jb->data != d)
            continue;
        fprintf(out, "| %s |", jb->var->label);
        for (size_t c = 0; c < p->n_clock; c++)
            print_clock_cells(out, &jb->clock[c], p->seeds);
        fprintf(out, "\n");
    }
}

/* Over the spaces, for variant v with thread count c: the worst (highest)
 * median seconds to the last ratio and its space, the median over the
 * spaces of each ratio's median and of the wall, and the spaces whose
 * median never got to the last ratio. */
static void print_clock_row(FILE *out, const pool *p, const variant *v,
                            size_t c, double *scratch)
{
    double worst = -INFINITY, med[CLOCK_RATIOS + 1];
    const char *where = "-";
    size_t never = 0;
    for (size_t k = 0; k <= CLOCK_RATIOS; k++) {
        size_t n = 0;
        for (size_t j = 0; j < p->n_jobs; j++) {
            const clock_figures *cf = &p->jobs[j].clock[c];
            double x = k < CLOCK_RATIOS ? cf->to[k] : cf->wall;
            if (p->jobs[j].var != v || isnan(x) || isnan(cf->wall))
                continue;
            scratch[n++] = x;
            if (k + 1 != CLOCK_RATIOS)
                continue;
            never += isinf(x) != 0;
            if (x > worst) {
                worst = x;
                where = p->jobs[j].data->name;
            }
        }
        med[k] = n ? bench_median(scratch, n) : NAN;
    }
    char w[32], m[CLOCK_RATIOS + 1][32];
    fmt_seconds(w, sizeof w, worst);
    for (size_t k = 0; k <= CLOCK_RATIOS; k++)
        fmt_seconds(m[k], sizeof m[k], med[k]);
    fprintf(out, "| %s | %d | %s | %s |", c ? "" : v->label,
            p->clock_threads[c], w, where);
    for (size_t k = CLOCK_RATIOS; k-- > 0;)
        fprintf(out, " %s |", m[k]);
    fprintf(out, " %s | %zu |\n", m[CLOCK_RATIOS], never);
}

void bench_print_clock(FILE *out, const pool *p, const bench_args *a)
{
    if (p->n_clock == 0)
        return;
    double *scratch = malloc((a->n_data ? a->n_data : 1) * sizeof *scratch);
    if (!scratch)
        return;
    double last = cutune__replay_ratios[CLOCK_RATIOS - 1];
    fprintf(out, "\n## On the clock\n\nPer space, ");
    print_clock_what(out, p);
    fprintf(out,
            " Here, per strategy and N, over the %zu spaces: the highest "
            "median seconds to %.2f (and its space), the median over the "
            "spaces of the medians to %.2f, to %.2f and of the wall, and "
            "the spaces where the median seed never got to %.2f.\n\n"
            "| strategy | threads | worst to %.2f | space | median to "
            "%.2f | median to %.2f | median wall | never |\n"
            "|---|---:|---:|---|---:|---:|---:|---:|\n",
            a->n_data, last, last, cutune__replay_ratios[0], last, last, last,
            cutune__replay_ratios[0]);
    for (size_t v = 0; v < a->n_variants; v++)
        for (size_t c = 0; c < p->n_clock; c++)
            print_clock_row(out, p, &a->variants[v], c, scratch);
    free(scratch);
}

/* A setting's range, as the table holds it: "0 or 1", "[1, 1000], whole",
 * "(0, ∞)". */
static void print_range(FILE *out, const cutune__setting *t)
{
    int whole = t->kind != CUTUNE__SETTING_REAL;
    const char *from = t->above_min ? "(" : "[";
    if (whole && t->max - t->min == 1 && !t->above_min)
        fprintf(out, "%g or %g", t->min, t->max);
    else if (isinf(t->max))
        fprintf(out, "%s%g, ∞)%s", from, t->min, whole ? ", whole" : "");
    else
        fprintf(out, "%s%g, %g]%s", from, t->min, t->max,
                whole ? ", whole" : "");
}

void bench_print_settings(FILE *out)
{
    for (size_t k = 0; cutune__strategy_settings[k]; k++) {
        const cutune__settings *s = cutune__strategy_settings[k];
        fprintf(out,
                "%s| `%s` setting | range | default | meaning |\n"
                "|---|---|---|---|\n",
                k ? "\n" : "", s->strategy);
        for (size_t i = 0; i < s->n; i++) {
            fprintf(out, "| `%s` | ", s->table[i].name);
            print_range(out, &s->table[i]);
            fprintf(out, " | %g | %s |\n", cutune__settings_get(s, s->std, i),
                    s->table[i].meaning);
        }
    }
}
