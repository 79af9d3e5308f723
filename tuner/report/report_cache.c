/* The page of a tuning cache: per problem, a grid of devices by problem
 * sizes holding each winner, its time and its speed-up over the occupancy
 * suggestion, and a plot of the speed-ups against the problem size. Of
 * records with the same device, problem and size, the newest counts (as
 * in a lookup; among equal times the later line). Caches run to tens of
 * thousands of records, so the cells are sorted once and every step after
 * walks them in that order rather than searching. */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report_internal.h"
#include "report_svg.h"
#include "util.h"

typedef struct cache_cell {
    char *problem, *device, *size, *config;
    double size_product;
    double time_ms, baseline_ms, gbs;
    long long timestamp;
    size_t seq; /* the record's place in the walk */
    int simulated;
} cache_cell;

struct cutune__report_cache {
    cache_cell *cells;
    size_t n, cap;
    size_t records;
    int oom;
};

static void cell_free(cache_cell *c)
{
    free(c->problem);
    free(c->device);
    free(c->size);
    free(c->config);
}

void cutune__report_cache_free(cutune__report_cache *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->n; i++)
        cell_free(&c->cells[i]);
    free(c->cells);
    free(c);
}

static char *join_config(const cutune_param_value *v, size_t n)
{
    cutune__rtext t = {0};
    for (size_t i = 0; i < n; i++)
        cutune__rtext_printf(&t, "%s%s=%s", i ? ", " : "", v[i].name,
                             v[i].value);
    if (t.oom || !t.data) {
        free(t.data);
        return t.oom ? NULL : strdup("");
    }
    return t.data;
}

static char *join_size(const long long *size, size_t n, double *product)
{
    cutune__rtext t = {0};
    *product = 1;
    for (size_t i = 0; i < n; i++) {
        cutune__rtext_printf(&t, "%s%lld", i ? "x" : "", size[i]);
        *product *= (double)size[i];
    }
    if (t.oom || !t.data) {
        free(t.data);
        return t.oom ? NULL : strdup("-");
    }
    return t.data;
}

static int visit(void *user, const cutune_cache_record *rec)
{
    cutune__report_cache *c = user;
    cache_cell cell = {0};
    cell.problem = strdup(rec->problem_name ? rec->problem_name : "");
    cell.device = cutune__strdup_printf(
        "%s (sm_%d%d)%s", rec->device.name, rec->device.cc_major,
        rec->device.cc_minor, rec->device.simulated ? ", simulated" : "");
    cell.size =
        join_size(rec->problem_size, rec->n_problem_size, &cell.size_product);
    cell.config = join_config(rec->config, rec->n_config);
    cell.time_ms = rec->time_ms;
    cell.baseline_ms = rec->baseline_ms;
    cell.gbs = rec->gbs;
    cell.timestamp = rec->timestamp;
    cell.seq = c->records++;
    if (!cell.problem || !cell.device || !cell.size || !cell.config) {
        cell_free(&cell);
        c->oom = 1;
        return 1;
    }
    if (c->n == c->cap) {
        size_t cap = c->cap ? 2 * c->cap : 16;
        cache_cell *bigger = realloc(c->cells, cap * sizeof *bigger);
        if (!bigger) {
            cell_free(&cell);
            c->oom = 1;
            return 1;
        }
        c->cells = bigger;
        c->cap = cap;
    }
    c->cells[c->n++] = cell;
    return 0;
}

/* A grid column's order: by the product of the dimensions, then by the
 * size's text. */
static int by_size(const cache_cell *x, const cache_cell *y)
{
    if (x->size_product != y->size_product)
        return x->size_product < y->size_product ? -1 : 1;
    return strcmp(x->size, y->size);
}

static int by_problem_device_size(const void *a, const void *b)
{
    const cache_cell *x = a, *y = b;
    int d = strcmp(x->problem, y->problem);
    if (!d)
        d = strcmp(x->device, y->device);
    if (!d)
        d = by_size(x, y);
    if (!d && x->timestamp != y->timestamp)
        d = x->timestamp < y->timestamp ? -1 : 1;
    if (!d && x->seq != y->seq)
        d = x->seq < y->seq ? -1 : 1;
    return d;
}

/* Sorted, each (problem, device, size) is a run that ends with its
 * newest record: keep that one. */
static void keep_newest(cutune__report_cache *c)
{
    qsort(c->cells, c->n, sizeof *c->cells, by_problem_device_size);
    size_t kept = 0;
    for (size_t i = 0; i < c->n; i++) {
        const cache_cell *x = &c->cells[i], *next = x + 1;
        if (i + 1 < c->n && !strcmp(x->problem, next->problem) &&
            !strcmp(x->device, next->device) && !strcmp(x->size, next->size)) {
            cell_free(&c->cells[i]);
            continue;
        }
        c->cells[kept++] = c->cells[i];
    }
    c->n = kept;
}

cutune_status cutune__report_cache_load(cutune_report *r, cutune_cache *cache)
{
    r->cache = calloc(1, sizeof *r->cache);
    if (!r->cache)
        return cutune__report_fail(r, CUTUNE_ERR_NO_MEMORY, "out of memory");
    cutune_status st = cutune_cache_foreach(cache, visit, r->cache);
    if (st)
        return cutune__report_fail(r, st, "%s", cutune_cache_errmsg(cache));
    if (r->cache->oom)
        return cutune__report_fail(r, CUTUNE_ERR_NO_MEMORY, "out of memory");
    keep_newest(r->cache);
    const char *warning = cutune_cache_warning(cache);
    if (warning && *warning && cutune__report_note(r, "%s", warning))
        return cutune__report_fail(r, CUTUNE_ERR_NO_MEMORY, "out of memory");
    if (r->cache->n == 0 &&
        cutune__report_note(r, "The cache %s holds no records.",
                            cutune_cache_dir(cache)))
        return cutune__report_fail(r, CUTUNE_ERR_NO_MEMORY, "out of memory");
    return CUTUNE_OK;
}

/* The first cell of each device over cells [from, to) (sorted, so a
 * device's cells are one run), and the end of the last run in out[n]. */
static size_t device_runs(const cache_cell *cells, size_t from, size_t to,
                          const cache_cell **out)
{
    size_t n = 0;
    for (size_t i = from; i < to; i++)
        if (i == from || strcmp(cells[i].device, cells[i - 1].device))
            out[n++] = &cells[i];
    out[n] = &cells[to];
    return n;
}

static int by_size_ptr(const void *a, const void *b)
{
    return by_size(*(const cache_cell *const *)a,
                   *(const cache_cell *const *)b);
}

/* One cell of each problem size over cells [from, to), in column order. */
static size_t distinct_sizes(const cache_cell *cells, size_t from, size_t to,
                             const cache_cell **out)
{
    for (size_t i = from; i < to; i++)
        out[i - from] = &cells[i];
    qsort(out, to - from, sizeof *out, by_size_ptr);
    size_t n = 0;
    for (size_t i = 0; i < to - from; i++)
        if (n == 0 || strcmp(out[i]->size, out[n - 1]->size))
            out[n++] = out[i];
    return n;
}

static double speedup(const cache_cell *c)
{
    return c->baseline_ms > 0 && c->time_ms > 0 ? c->baseline_ms / c->time_ms
                                                : NAN;
}

static void put_cell(cutune__rtext *out, const cache_cell *c)
{
    char a[32], b[32], g[32];
    if (!c) {
        cutune__rtext_put(out, "<td class=\"unknown\">not tuned</td>");
        return;
    }
    cutune__rtext_printf(out, "<td><b>%s ms</b>, %sx",
                         cutune__rtext_num(a, c->time_ms, 4),
                         cutune__rtext_fixed(b, speedup(c), 3));
    if (c->gbs > 0)
        cutune__rtext_printf(out, ", %s GB/s",
                             cutune__rtext_num(g, c->gbs, 4));
    cutune__rtext_put(out, "<br><code>");
    cutune__rtext_escape(out, c->config);
    cutune__rtext_put(out, "</code></td>");
}

/* devs[d] .. devs[d + 1] is device d's run, sorted in column order as
 * `sizes` is: one walk along both fills the row. */
static void grid(cutune__rtext *out, const cache_cell **devs, size_t nd,
                 const cache_cell **sizes, size_t ns)
{
    cutune__rtext_put(out, "<table class=\"grid\"><thead><tr><th>device \\ "
                           "problem size</th>");
    for (size_t s = 0; s < ns; s++) {
        cutune__rtext_put(out, "<th>");
        cutune__rtext_escape(out, sizes[s]->size);
        cutune__rtext_put(out, "</th>");
    }
    cutune__rtext_put(out, "</tr></thead><tbody>");
    for (size_t d = 0; d < nd; d++) {
        cutune__rtext_put(out, "<tr><th scope=\"row\">");
        cutune__rtext_escape(out, devs[d]->device);
        cutune__rtext_put(out, "</th>");
        const cache_cell *c = devs[d], *end = devs[d + 1];
        for (size_t s = 0; s < ns; s++) {
            while (c < end && by_size(c, sizes[s]) < 0)
                c++;
            put_cell(out, c < end && !by_size(c, sizes[s]) ? c : NULL);
        }
        cutune__rtext_put(out, "</tr>");
    }
    cutune__rtext_put(out, "</tbody></table>");
}

static void speedup_plot(cutune__rtext *out, size_t index,
                         const cache_cell *cells, size_t from, size_t to,
                         const cache_cell **devs, size_t nd)
{
    double xlo = INFINITY, xhi = 0, ylo = INFINITY, yhi = 0;
    for (size_t i = from; i < to; i++) {
        xlo = fmin(xlo, cells[i].size_product);
        xhi = fmax(xhi, cells[i].size_product);
        if (isfinite(speedup(&cells[i]))) {
            ylo = fmin(ylo, speedup(&cells[i]));
            yhi = fmax(yhi, speedup(&cells[i]));
        }
    }
    if (!isfinite(ylo))
        return;
    cutune__svg_plot p = {.width = 560,
                          .height = 300,
                          .left = 64,
                          .right = 16,
                          .top = 14,
                          .bottom = 46};
    p.x = (cutune__svg_axis){.scale = xhi / xlo > 30 ? CUTUNE__SCALE_LOG10
                                                     : CUTUNE__SCALE_LINEAR,
                             .lo = xlo,
                             .hi = xhi,
                             .label = "problem size (product of the "
                                      "dimensions)"};
    p.y = (cutune__svg_axis){.lo = fmin(ylo, 1),
                             .hi = yhi,
                             .label = "speed-up over occupancy suggestion"};
    const char *names[8] = {NULL};
    for (size_t d = 0; d < nd && d < 8; d++)
        names[d] = devs[d]->device;
    p.legend_above = 1;
    p.top = cutune__svg_legend_top(&p, names, nd < 8 ? nd : 8);
    p.height += p.top;
    char id[32];
    snprintf(id, sizeof id, "cache-%zu", index);
    cutune__svg_begin(&p, out, id, "Speed-up against problem size",
                      "Per device, the cached winner's speed-up over the "
                      "occupancy suggestion at each problem size.");
    cutune__svg_hline(&p, 1, 6, "no speed-up");
    double *x = malloc((to - from) * sizeof *x);
    double *y = malloc((to - from) * sizeof *y);
    for (size_t d = 0; x && y && d < nd; d++) {
        size_t n = 0;
        for (const cache_cell *c = devs[d]; c < devs[d + 1]; c++) {
            x[n] = c->size_product;
            y[n++] = speedup(c);
        }
        cutune__svg_line(&p, x, y, n, d, 0, d % 2, devs[d]->device);
        for (size_t i = 0; i < n; i++)
            cutune__svg_marker(&p, x[i], y[i], (cutune__svg_shape)(d % 6), d,
                               devs[d]->device);
        if (d < 8)
            cutune__svg_legend(&p, (int)(d % 6), d, 0, devs[d]->device);
    }
    if (!x || !y)
        out->oom = 1;
    free(x);
    free(y);
    cutune__svg_end(&p);
}

static void one_problem(cutune__rtext *out, size_t index,
                        const cache_cell *cells, size_t from, size_t to)
{
    const cache_cell **devs = malloc((to - from + 1) * sizeof *devs);
    const cache_cell **sizes = malloc((to - from) * sizeof *sizes);
    if (!devs || !sizes) {
        free(devs);
        free(sizes);
        out->oom = 1;
        return;
    }
    size_t nd = device_runs(cells, from, to, devs);
    size_t ns = distinct_sizes(cells, from, to, sizes);
    cutune__rtext_printf(out,
                         "<section class=\"problem\" id=\"problem-%zu\">"
                         "<h2>",
                         index);
    cutune__rtext_escape(out, cells[from].problem);
    cutune__rtext_printf(out,
                         "</h2><p>%zu device%s, %zu problem size%s. Each "
                         "cell: the winner's time, its speed-up over the "
                         "occupancy suggestion, and its configuration.</p>",
                         nd, nd == 1 ? "" : "s", ns, ns == 1 ? "" : "s");
    grid(out, devs, nd, sizes, ns);
    cutune__rtext_put(out, "<div class=\"plots\">");
    speedup_plot(out, index, cells, from, to, devs, nd);
    cutune__rtext_put(out, "</div></section>\n");
    free(devs);
    free(sizes);
}

void cutune__report_html_cache(const cutune_report *r, cutune__rtext *out)
{
    const cutune__report_cache *c = r->cache;
    cutune__report_html_head(out, r->title);
    cutune__rtext_printf(out,
                         "<p>%zu record%s read; %zu winner%s shown (the "
                         "newest of each device, problem and size).</p>\n",
                         c->records, c->records == 1 ? "" : "s", c->n,
                         c->n == 1 ? "" : "s");
    size_t index = 0;
    for (size_t i = 0; i < c->n;) {
        size_t j = i;
        while (j < c->n && !strcmp(c->cells[j].problem, c->cells[i].problem))
            j++;
        one_problem(out, index++, c->cells, i, j);
        i = j;
    }
    cutune__rtext_put(out, "<section id=\"notes\"><h2>Notes</h2><ul>");
    for (size_t i = 0; i < r->n_notes; i++) {
        cutune__rtext_put(out, "<li>");
        cutune__rtext_escape(out, r->notes[i]);
        cutune__rtext_put(out, "</li>");
    }
    cutune__rtext_put(out, "<li>Speed-up: the occupancy suggestion's time "
                           "over the winner's, both as the tune measured them."
                           "</li></ul></section>\n");
    cutune__report_html_foot(out);
}
