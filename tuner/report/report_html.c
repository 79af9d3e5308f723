/* The HTML around the plots: the page frame (shared with the cache page)
 * and the results page's sections and tables. No scripts: everything is
 * readable with them off, and a Content-Security-Policy forbids every
 * fetch, so the page is the same offline. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "expr/none.h"
#include "problem.h"
#include "report_internal.h"

static const char page_css[] =
    "body{font-family:system-ui,sans-serif;color:#222;max-width:1220px;"
    "margin:0 auto;padding:0 16px 40px;line-height:1.4}"
    "h1{font-size:1.6em;margin:18px 0 4px}h2{font-size:1.25em;margin-top:"
    "28px;border-bottom:1px solid #ccc}.sub{color:#555;margin:0}"
    "nav a{margin-right:14px}"
    ".plots{display:flex;flex-wrap:wrap;gap:12px}"
    "svg.plot{max-width:100%;height:auto;background:#fff;border:1px solid "
    "#ddd}"
    "table{border-collapse:collapse;margin:8px 0;font-size:.92em}"
    "th,td{border:1px solid #ccc;padding:3px 7px;text-align:left;"
    "vertical-align:top}th{background:#f2f2f2}td.n{text-align:right;"
    "font-variant-numeric:tabular-nums}"
    "tr.mark td{background:#fff3d6}.unknown{color:#777;font-style:italic}"
    "code{font-size:.95em}"
    "@media print{nav{display:none}svg.plot{border:none}}";

void cutune__report_html_head(cutune__rtext *out, const char *title)
{
    cutune__rtext_put(out,
                      "<!DOCTYPE html>\n<html lang=\"en\"><head>"
                      "<meta charset=\"utf-8\">"
                      "<meta name=\"viewport\" content=\"width=device-width, "
                      "initial-scale=1\">"
                      "<meta http-equiv=\"Content-Security-Policy\" "
                      "content=\"default-src 'none'; style-src "
                      "'unsafe-inline'; img-src data:\">"
                      "<link rel=\"icon\" href=\"data:,\"><title>");
    cutune__rtext_escape(out, title);
    cutune__rtext_printf(out,
                         "</title><style>%s</style></head>\n<body>\n"
                         "<header><h1>",
                         page_css);
    cutune__rtext_escape(out, title);
    cutune__rtext_put(
        out, "</h1><p class=\"sub\">written by cutune " CUTUNE_VERSION_STRING
             "</p></header>\n");
}

void cutune__report_html_foot(cutune__rtext *out)
{
    cutune__rtext_put(out, "</body></html>\n");
}

/* A number with `digits` significant digits and `unit` after it, or
 * "unknown". */
static void put_num(cutune__rtext *out, double v, int digits, const char *unit)
{
    char buf[32];
    if (isfinite(v))
        cutune__rtext_printf(out, "%s%s", cutune__rtext_fixed(buf, v, digits),
                             unit);
    else
        cutune__rtext_put(out, "<span class=\"unknown\">unknown</span>");
}

/* name=value of every tunable (all of them, or those with more than one
 * value), comma-separated. */
static void put_config(cutune__rtext *out, const cutune_problem *p,
                       size_t config, int all)
{
    if (config == CUTUNE__NONE) {
        cutune__rtext_put(out, "<span class=\"unknown\">outside the space"
                               "</span>");
        return;
    }
    const uint32_t *cfg = cutune__space_config(p->space, config);
    int first = 1;
    cutune__rtext_put(out, "<code>");
    for (size_t k = 0; k < p->n_params; k++) {
        if (!all && p->param_value_counts[k] < 2)
            continue;
        cutune__rtext_put(out, first ? "" : ", ");
        cutune__rtext_escape(out, p->param_names[k]);
        cutune__rtext_put(out, "=");
        cutune__rtext_escape(out, p->value_texts[k][cfg[k]]);
        first = 0;
    }
    cutune__rtext_put(out, "</code>");
}

static void fact(cutune__rtext *out, const char *name, const char *text)
{
    cutune__rtext_put(out, "<tr><th scope=\"row\">");
    cutune__rtext_escape(out, name);
    cutune__rtext_put(out, "</th><td>");
    if (text)
        cutune__rtext_escape(out, text);
    else
        cutune__rtext_put(out, "<span class=\"unknown\">unknown</span>");
    cutune__rtext_put(out, "</td></tr>");
}

/* One reference configuration's row: its time, configuration and where
 * it came in the file. */
static void reference_fact(const cutune_report *r, cutune__rtext *out,
                           const char *name, size_t eval, double time_ms,
                           const char *missing)
{
    cutune__rtext_put(out, "<tr><th scope=\"row\">");
    cutune__rtext_escape(out, name);
    cutune__rtext_put(out, "</th><td>");
    if (eval == CUTUNE__NONE) {
        cutune__rtext_printf(out,
                             "<span class=\"unknown\">%s</span></td>"
                             "</tr>",
                             missing);
        return;
    }
    if (isfinite(time_ms)) {
        put_num(out, time_ms, 4, " ms");
    } else {
        cutune__rtext_printf(out, "failed (%s)",
                             cutune_outcome_str(r->evals[eval].outcome));
    }
    cutune__rtext_printf(out, ", evaluation %zu: ", eval + 1);
    put_config(out, r->problem, r->evals[eval].config, 1);
    cutune__rtext_put(out, "</td></tr>");
}

static void summary(const cutune_report *r, cutune__rtext *out)
{
    const cutune_problem *p = r->problem;
    char buf[256];
    cutune__rtext_put(out, "<section id=\"summary\"><h2>Summary</h2>"
                           "<table class=\"facts\">");
    fact(out, "problem", p->name);
    fact(out, "results file", r->source);
    fact(out, "device", r->device);
    fact(out, "strategy", r->strategy);
    snprintf(buf, sizeof buf,
             "%zu in the file (%zu correct, %zu failed) of "
             "%zu configurations in the space",
             r->n_evals, r->n_correct, r->n_evals - r->n_correct,
             cutune__space_size(p->space));
    fact(out, "results", buf);
    reference_fact(r, out, "winner", r->winner_eval, r->winner_ms,
                   "no configuration ran correctly");
    reference_fact(r, out, "default configuration", r->default_eval,
                   r->default_eval == CUTUNE__NONE
                       ? NAN
                       : r->evals[r->default_eval].time_ms,
                   "not among the results");
    reference_fact(r, out, "occupancy suggestion", r->baseline_eval,
                   r->baseline_eval == CUTUNE__NONE
                       ? NAN
                       : r->evals[r->baseline_eval].time_ms,
                   r->baseline_config == CUTUNE__NONE
                       ? "unknown: not recorded in a results file"
                       : "not among the results");
    cutune__rtext_put(out, "<tr><th scope=\"row\">winner's speed-up</th><td>");
    put_num(out, cutune__report_speedup(r, r->default_eval, r->winner_ms), 3,
            "x");
    cutune__rtext_put(out, " over the default, ");
    put_num(out, cutune__report_speedup(r, r->baseline_eval, r->winner_ms), 3,
            "x");
    cutune__rtext_put(out, " over the occupancy suggestion</td></tr>"
                           "</table></section>\n");
}

static void plots(const cutune_report *r, cutune__rtext *out)
{
    cutune__rtext_put(out,
                      "<section id=\"convergence\"><h2>Convergence</h2>"
                      "<p>The best time found so far after each evaluation, "
                      "in the file's order (solid), against random search's "
                      "expected best for as many draws without replacement "
                      "from the same results (dashed, computed exactly from "
                      "the recorded times; against seconds at the file's "
                      "average pace). Dotted lines: the default "
                      "configuration's and the occupancy suggestion's "
                      "times.</p><div class=\"plots\">");
    if (!cutune__report_plot_convergence(r, out))
        cutune__rtext_put(out, "<p class=\"unknown\">No configuration ran "
                               "correctly: nothing to plot.</p>");
    cutune__rtext_put(out, "</div></section>\n<section id=\"threads\"><h2>"
                           "Time against threads per block</h2><p>");
    if (r->threads_source)
        cutune__rtext_printf(out, "Threads per block from %s; ",
                             r->threads_source);
    cutune__rtext_printf(out,
                         "at most %zu points: the fastest tenth of them "
                         "always, an even sample of the rest.</p><div "
                         "class=\"plots\">",
                         r->max_points);
    if (!cutune__report_plot_threads(r, out))
        cutune__rtext_put(out, "<p class=\"unknown\">Threads per block are "
                               "unknown for these results.</p>");
    cutune__rtext_put(out,
                      "</div></section>\n<section id=\"params\"><h2>"
                      "Parameter effects</h2><p>Per tunable and value, the "
                      "best (circles) and the median (squares) time of the "
                      "correct configurations with that value; the tunables "
                      "whose medians differ most come first.</p>"
                      "<div class=\"plots\">");
    cutune__report_plot_params(r, out);
    cutune__rtext_put(out, "</div></section>\n");
}

/* One configuration of the energy section: ms, J per launch, W, where it
 * came in the file and what it is. */
static void energy_cells(const cutune_report *r, cutune__rtext *out, size_t ev)
{
    const cutune__report_eval *e = &r->evals[ev];
    cutune__rtext_put(out, "<td class=\"n\">");
    put_num(out, e->time_ms, 4, "");
    cutune__rtext_put(out, "</td><td class=\"n\">");
    put_num(out, e->energy_j, 4, "");
    cutune__rtext_put(out, "</td><td class=\"n\">");
    put_num(out, e->power_w, 4, "");
    cutune__rtext_printf(out, "</td><td class=\"n\">%zu</td><td>", ev + 1);
    put_config(out, r->problem, e->config, 0);
    cutune__rtext_put(out, "</td>");
}

static const char energy_head[] =
    "<th>time (ms)</th><th>energy per launch (J)</th><th>power (W)</th>"
    "<th>evaluation</th><th>configuration</th></tr></thead><tbody>";

static void energy_tables(const cutune_report *r, cutune__rtext *out,
                          const size_t *front, size_t n_front)
{
    static const char *const objectives[CUTUNE__REPORT_OBJECTIVES] = {
        "time", "energy", "edp"};
    static const char *const meaning[CUTUNE__REPORT_OBJECTIVES] = {
        "least time", "least energy per launch", "least energy x time"};
    cutune__rtext_printf(out,
                         "<table id=\"objective-winners\"><caption>"
                         "The best by each objective</caption><thead>"
                         "<tr><th>objective</th>%s",
                         energy_head);
    for (size_t k = 0; k < CUTUNE__REPORT_OBJECTIVES; k++) {
        cutune__rtext_printf(out,
                             "<tr data-objective=\"%s\"><th scope=\"row\">"
                             "%s (%s)</th>",
                             objectives[k], objectives[k], meaning[k]);
        energy_cells(r, out, r->energy_winner[k]);
        cutune__rtext_put(out, "</tr>");
    }
    cutune__rtext_printf(out,
                         "</tbody></table></div><p>The Pareto front: %zu of "
                         "the %zu configurations, fastest first; the "
                         "objectives' winners are marked.</p><table "
                         "id=\"pareto-table\"><thead><tr>%s",
                         n_front, r->n_energy, energy_head);
    for (size_t i = 0; i < n_front; i++) {
        int winner = 0;
        for (size_t k = 0; k < CUTUNE__REPORT_OBJECTIVES; k++)
            winner |= r->energy_winner[k] == front[i];
        cutune__rtext_put(out, winner ? "<tr class=\"mark\">" : "<tr>");
        energy_cells(r, out, front[i]);
        cutune__rtext_put(out, "</tr>");
    }
    cutune__rtext_put(out, "</tbody></table>");
}

/* Only for results that carry energy: a page without it is unchanged. */
static void energy_section(const cutune_report *r, cutune__rtext *out)
{
    if (!r->n_energy)
        return;
    size_t n = r->n_evals;
    double *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
    size_t *evals = malloc(n * sizeof *evals),
           *front = malloc(n * sizeof *front);
    size_t m = 0, n_front = 0;
    if (x && y && evals && front) {
        m = cutune__report_energy_points(r, x, y, evals);
        if (cutune__report_pareto(x, y, m, front, &n_front) != 0)
            out->oom = 1;
        for (size_t i = 0; i < n_front; i++)
            front[i] = evals[front[i]];
    } else {
        out->oom = 1;
    }
    cutune__rtext_printf(out,
                         "<section id=\"energy\"><h2>Energy against time"
                         "</h2><p>Each correct configuration's energy per "
                         "launch against its time, as the file recorded them "
                         "(%zu configurations",
                         r->n_energy);
    size_t without = 0;
    for (size_t i = 0; i < r->n_evals; i++)
        without += !r->evals[i].duplicate && isfinite(r->evals[i].time_ms) &&
                   !isfinite(r->evals[i].energy_j);
    if (without)
        cutune__rtext_printf(out, "; %zu correct without energy are left out",
                             without);
    cutune__rtext_put(out,
                      "). The Pareto front, connected, is the "
                      "configurations no other beats on both: none is at "
                      "least as fast and takes at most as much energy while "
                      "better in one. Each objective's winner (time, energy, "
                      "energy x time) is on it.</p><div class=\"plots\">");
    if (!out->oom) {
        cutune__report_plot_energy(r, front, n_front, out);
        energy_tables(r, out, front, n_front);
    }
    cutune__rtext_put(out, "</section>\n");
    free(x);
    free(y);
    free(evals);
    free(front);
}

static void top_row(const cutune_report *r, cutune__rtext *out, size_t rank,
                    size_t ev)
{
    const cutune_problem *p = r->problem;
    const cutune__report_eval *e = &r->evals[ev];
    cutune__rtext_printf(out, "<tr%s><td class=\"n\">%zu</td><td class=\"n\">",
                         ev == r->winner_eval ? " class=\"mark\"" : "", rank);
    put_num(out, e->time_ms, 4, "");
    cutune__rtext_put(out, "</td><td class=\"n\">");
    put_num(out, cutune__report_speedup(r, r->default_eval, e->time_ms), 3,
            "");
    cutune__rtext_put(out, "</td><td class=\"n\">");
    put_num(out, cutune__report_speedup(r, r->baseline_eval, e->time_ms), 3,
            "");
    if (r->has_bytes) {
        cutune__rtext_put(out, "</td><td class=\"n\">");
        put_num(out,
                e->config == CUTUNE__NONE
                    ? NAN
                    : cutune__problem_bytes(p, e->config) / (e->time_ms * 1e6),
                4, "");
    }
    if (r->has_flops) {
        cutune__rtext_put(out, "</td><td class=\"n\">");
        put_num(out,
                e->config == CUTUNE__NONE
                    ? NAN
                    : cutune__problem_flops(p, e->config) / (e->time_ms * 1e6),
                4, "");
    }
    if (r->has_counters) {
        cutune__rtext_put(out, "</td><td class=\"n\">");
        put_num(out, e->dram_pct, 3, "");
        cutune__rtext_put(out, "</td><td class=\"n\">");
        put_num(out, e->sm_pct, 3, "");
        cutune__rtext_printf(out, "</td><td>%s",
                             e->bottleneck ? e->bottleneck : "");
    }
    cutune__rtext_printf(out, "</td><td class=\"n\">%zu</td><td>", ev + 1);
    put_config(out, p, e->config, 0);
    cutune__rtext_put(out, "</td></tr>");
}

static void top_table(const cutune_report *r, cutune__rtext *out)
{
    size_t n = 0;
    size_t *order = cutune__report_ranked(r, &n);
    cutune__rtext_printf(
        out,
        "<section id=\"top\"><h2>Top configurations"
        "</h2><p>The %zu fastest of %zu correct; speed-ups "
        "are the default's and the occupancy suggestion's "
        "times over each one's.</p><table id=\"top-table\">"
        "<thead><tr><th>rank</th><th>time (ms)</th><th>"
        "speed-up over default</th><th>speed-up over "
        "occupancy suggestion</th>%s%s%s<th>evaluation</th>"
        "<th>configuration</th></tr></thead><tbody>",
        n < r->top ? n : r->top, n, r->has_bytes ? "<th>GB/s</th>" : "",
        r->has_flops ? "<th>GFLOP/s</th>" : "",
        r->has_counters ? "<th>DRAM % of peak</th><th>compute % of "
                          "peak</th><th>bottleneck (counters)</th>"
                        : "");
    for (size_t i = 0; order && i < n && i < r->top; i++)
        top_row(r, out, i + 1, order[i]);
    cutune__rtext_put(out, "</tbody></table>");
    free(order);
    const cutune_problem *p = r->problem;
    int fixed = 0;
    for (size_t k = 0; k < p->n_params; k++) {
        if (p->param_value_counts[k] != 1)
            continue;
        cutune__rtext_put(out, fixed++ ? ", "
                                       : "<p>The same in every "
                                         "configuration: <code>");
        cutune__rtext_escape(out, p->param_names[k]);
        cutune__rtext_put(out, "=");
        cutune__rtext_escape(out, p->value_texts[k][0]);
    }
    cutune__rtext_put(out,
                      fixed ? "</code>.</p></section>\n" : "</section>\n");
}

static void failures(const cutune_report *r, cutune__rtext *out)
{
    static const struct {
        cutune_outcome outcome;
        const char *what;
    } kinds[] = {{CUTUNE_OUTCOME_COMPILE, "compile: the compiler rejected it"},
                 {CUTUNE_OUTCOME_RESOURCES,
                  "resources: too many threads, registers "
                  "or shared memory; not launched"},
                 {CUTUNE_OUTCOME_RUNTIME, "runtime: the launch failed"},
                 {CUTUNE_OUTCOME_TIMEOUT, "timeout: a launch took too long"},
                 {CUTUNE_OUTCOME_CORRECTNESS, "correctness: wrong output"}};
    cutune__rtext_put(out,
                      "<section id=\"failures\"><h2>Failures by kind"
                      "</h2><table id=\"failure-table\"><thead><tr><th>kind"
                      "</th><th>results</th><th>share</th></tr></thead>"
                      "<tbody>");
    for (size_t k = 0; k < sizeof kinds / sizeof *kinds; k++) {
        size_t n = r->by_outcome[kinds[k].outcome];
        cutune__rtext_put(out, "<tr><td>");
        cutune__rtext_escape(out, kinds[k].what);
        if (kinds[k].outcome == CUTUNE_OUTCOME_RUNTIME &&
            r->n_other_invalidity)
            cutune__rtext_printf(out,
                                 " (%zu of them recorded with another "
                                 "invalidity, such as \"constraints\")",
                                 r->n_other_invalidity);
        cutune__rtext_printf(
            out,
            "</td><td class=\"n\">%zu</td><td "
            "class=\"n\">%.1f%%</td></tr>",
            n, r->n_evals ? 100.0 * (double)n / (double)r->n_evals : 0.0);
    }
    cutune__rtext_printf(out,
                         "</tbody><tfoot><tr><th>failed in all</th><td "
                         "class=\"n\">%zu</td><td class=\"n\">%.1f%%</td>"
                         "</tr></tfoot></table></section>\n",
                         r->n_evals - r->n_correct,
                         r->n_evals
                             ? 100.0 * (double)(r->n_evals - r->n_correct) /
                                   (double)r->n_evals
                             : 0.0);
}

void cutune__report_html_results(const cutune_report *r, cutune__rtext *out)
{
    cutune__report_html_head(out, r->title);
    cutune__rtext_put(out,
                      "<nav><a href=\"#summary\">summary</a><a href=\""
                      "#convergence\">convergence</a><a href=\"#threads\">"
                      "threads per block</a><a href=\"#params\">parameters"
                      "</a>");
    if (r->n_energy)
        cutune__rtext_put(out, "<a href=\"#energy\">energy</a>");
    cutune__rtext_put(out, "<a href=\"#top\">top configurations</a><a href=\""
                           "#failures\">failures</a><a href=\"#notes\">notes"
                           "</a></nav>\n");
    summary(r, out);
    plots(r, out);
    energy_section(r, out);
    top_table(r, out);
    failures(r, out);
    cutune__rtext_put(out, "<section id=\"notes\"><h2>Notes</h2><ul>");
    for (size_t i = 0; i < r->n_notes; i++) {
        cutune__rtext_put(out, "<li>");
        cutune__rtext_escape(out, r->notes[i]);
        cutune__rtext_put(out, "</li>");
    }
    cutune__rtext_put(out, "</ul></section>\n");
    cutune__report_html_foot(out);
}
