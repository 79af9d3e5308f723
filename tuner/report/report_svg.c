/* The report's SVG plot writer; see report_svg.h for what it draws and why
 * it is ours rather than gnuplot's. */
#include "report_svg.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#define SVG_PI 3.14159265358979323846

/* Okabe & Ito (2008), "Color Universal Design": blue, vermillion, bluish
 * green, orange, reddish purple, sky blue, black, yellow. The darker ones
 * come first because lines and labels are drawn in them on white. */
static const char *const palette[] = {"#0072B2", "#D55E00", "#009E73",
                                      "#E69F00", "#CC79A7", "#56B4E9",
                                      "#000000", "#F0E442"};

const char *cutune__svg_colour(size_t series)
{
    return palette[series % (sizeof palette / sizeof *palette)];
}

double cutune__svg_nice(double x, int round)
{
    if (!(x > 0) || !isfinite(x))
        return 1.0;
    double e = floor(log10(x));
    double f = x / pow(10, e), nf;
    if (round)
        nf = f < 1.5 ? 1 : f < 3 ? 2 : f < 7 ? 5 : 10;
    else
        nf = f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10;
    return nf * pow(10, e);
}

static void add_tick(cutune__svg_axis *a, double v)
{
    if (a->n_ticks < CUTUNE__SVG_MAX_TICKS)
        a->ticks[a->n_ticks++] = v;
}

static void fit_linear(cutune__svg_axis *a)
{
    /* Near DBL_MAX a range, and nice() of it, overflow: the axis stops
     * short of such values, which are drawn at its end. */
    const double big = DBL_MAX / 64;
    if (!isfinite(a->lo) || !isfinite(a->hi)) {
        a->lo = isfinite(a->lo) ? a->lo : 0;
        a->hi = isfinite(a->hi) ? a->hi : a->lo + 1;
    }
    a->lo = fmin(fmax(a->lo, -big), big);
    a->hi = fmin(fmax(a->hi, -big), big);
    if (!(a->hi > a->lo)) {
        double pad = a->lo == 0 ? 1 : fabs(a->lo) * 0.1;
        a->lo -= pad;
        a->hi += pad;
    }
    double range = cutune__svg_nice(a->hi - a->lo, 0);
    double step = cutune__svg_nice(range / 5, 1);
    double lo = floor(a->lo / step) * step, hi = ceil(a->hi / step) * step;
    a->lo = lo;
    a->hi = hi;
    a->decimals = step >= 1 ? 0 : (int)ceil(-log10(step) - 1e-9);
    if (a->decimals > 12)
        a->decimals = 12;
    /* Bounded by count: where step is below the precision of lo, lo +
     * k * step would not move. */
    for (int k = 0;
         k <= 4 * CUTUNE__SVG_MAX_TICKS && lo + k * step <= hi + step / 2; k++)
        add_tick(a, lo + k * step);
}

/* A narrow range on a log axis: nice linear steps read better than 1-2-5
 * values of which only one or two would fall inside. */
static void fit_log_narrow(cutune__svg_axis *a)
{
    double step = cutune__svg_nice((a->hi - a->lo) / 4, 1);
    double lo = floor(a->lo / step) * step, hi = ceil(a->hi / step) * step;
    if (lo <= 0)
        lo = step;
    a->lo = lo;
    a->hi = hi;
    a->decimals = step >= 1 ? 0 : (int)ceil(-log10(step) - 1e-9);
    for (double k = 0; lo + k * step <= hi + step / 2; k++)
        add_tick(a, lo + k * step);
}

/* A log axis spans 1e-300 to 1e300 at most: the powers of ten at its ends
 * must be neither 0 (a subnormal's decade) nor inf; values beyond are
 * drawn at its ends. */
static void clamp_log(cutune__svg_axis *a)
{
    a->lo = fmin(fmax(a->lo, 1e-300), 1e300);
    a->hi = fmin(fmax(a->hi, 1e-300), 1e300);
}

static void fit_log10(cutune__svg_axis *a)
{
    if (!(a->hi > 0) || !isfinite(a->hi))
        a->hi = 1;
    if (!(a->lo > 0) || !isfinite(a->lo))
        a->lo = a->hi / 10;
    clamp_log(a);
    if (!(a->hi > a->lo * 1.0000001)) {
        a->lo /= 2;
        a->hi *= 2;
    }
    if (a->hi / a->lo < 4) {
        fit_log_narrow(a);
        return;
    }
    int d0 = (int)floor(log10(a->lo)), d1 = (int)ceil(log10(a->hi));
    if (d1 - d0 <= 2) {
        static const double mant[] = {1, 2, 5};
        double lo = pow(10, d0), hi = pow(10, d1);
        for (int d = d0; d <= d1; d++)
            for (int m = 0; m < 3; m++) {
                double v = mant[m] * pow(10, d);
                if (v <= a->lo * (1 + 1e-9))
                    lo = v;
                if (v >= a->hi * (1 - 1e-9) && hi >= v)
                    hi = v;
            }
        a->lo = lo;
        a->hi = hi;
        for (int d = d0; d <= d1; d++)
            for (int m = 0; m < 3; m++) {
                double v = mant[m] * pow(10, d);
                if (v >= lo * (1 - 1e-9) && v <= hi * (1 + 1e-9))
                    add_tick(a, v);
            }
        return;
    }
    int every = (d1 - d0 + 7) / 8;
    d0 -= ((d0 % every) + every) % every;
    while ((d1 - d0) % every)
        d1++;
    a->lo = pow(10, d0);
    a->hi = pow(10, d1);
    for (int d = d0; d <= d1; d += every)
        add_tick(a, pow(10, d));
}

static void fit_log2(cutune__svg_axis *a)
{
    if (!(a->hi > 0) || !isfinite(a->hi))
        a->hi = 1;
    if (!(a->lo > 0) || !isfinite(a->lo))
        a->lo = a->hi / 2;
    clamp_log(a);
    int e0 = (int)floor(log2(a->lo) + 1e-9),
        e1 = (int)ceil(log2(a->hi) - 1e-9);
    if (e0 == e1) {
        e0--;
        e1++;
    }
    int every = (e1 - e0 + 12) / 12;
    a->lo = ldexp(1, e0);
    a->hi = ldexp(1, e1);
    for (int e = e0; e <= e1; e += every)
        add_tick(a, ldexp(1, e));
}

void cutune__svg_axis_fit(cutune__svg_axis *a)
{
    a->n_ticks = 0;
    a->decimals = 0;
    if (a->n_categories) {
        size_t every = (a->n_categories + CUTUNE__SVG_MAX_TICKS - 1) /
                       CUTUNE__SVG_MAX_TICKS;
        a->scale = CUTUNE__SCALE_LINEAR;
        a->lo = -0.5;
        a->hi = (double)a->n_categories - 0.5;
        for (size_t i = 0; i < a->n_categories; i += every)
            add_tick(a, (double)i);
        return;
    }
    switch (a->scale) {
    case CUTUNE__SCALE_LOG10: fit_log10(a); break;
    case CUTUNE__SCALE_LOG2: fit_log2(a); break;
    default: fit_linear(a); break;
    }
}

char *cutune__svg_tick_label(const cutune__svg_axis *a, double v, char *buf)
{
    if (a->n_categories) {
        size_t i = (size_t)(v + 0.5);
        snprintf(buf, 32, "%.31s",
                 i < a->n_categories ? a->categories[i] : "");
        return buf;
    }
    if (a->scale == CUTUNE__SCALE_LINEAR ||
        (a->scale == CUTUNE__SCALE_LOG10 && a->decimals > 0)) {
        snprintf(buf, 32, "%.*f", a->decimals, fabs(v) < 1e-12 ? 0.0 : v);
        return buf;
    }
    return cutune__rtext_num(buf, v, 4);
}

static double axis_t(const cutune__svg_axis *a, double v)
{
    switch (a->scale) {
    case CUTUNE__SCALE_LOG10: return v > 0 ? log10(v) : NAN;
    case CUTUNE__SCALE_LOG2: return v > 0 ? log2(v) : NAN;
    default: return v;
    }
}

static double axis_frac(const cutune__svg_axis *a, double v)
{
    double lo = axis_t(a, a->lo), hi = axis_t(a, a->hi), t = axis_t(a, v);
    if (isnan(t))
        return NAN;
    /* Halved, so that a range near DBL_MAX does not overflow to inf and
     * the coordinate to NaN. */
    double f = (t / 2 - lo / 2) / (hi / 2 - lo / 2);
    if (isnan(f))
        return 0;
    return f < 0 ? 0 : f > 1 ? 1 : f;
}

double cutune__svg_px(const cutune__svg_plot *p, double x)
{
    double w = p->width - p->left - p->right;
    return p->left + axis_frac(&p->x, x) * w;
}

double cutune__svg_py(const cutune__svg_plot *p, double y)
{
    double h = p->height - p->top - p->bottom;
    return p->top + (1 - axis_frac(&p->y, y)) * h;
}

/* Every how many x ticks a label fits (about 6.6 px a character). */
static size_t x_label_step(const cutune__svg_plot *p)
{
    char buf[32];
    double widest = 0;
    for (size_t i = 0; i < p->x.n_ticks; i++)
        widest = fmax(widest, 6.6 * (double)strlen(cutune__svg_tick_label(
                                        &p->x, p->x.ticks[i], buf)) +
                                  6);
    double room = p->x.n_ticks > 1
                      ? (p->width - p->left - p->right) / (double)p->x.n_ticks
                      : widest;
    return room >= widest ? 1 : (size_t)ceil(widest / room);
}

static void draw_axes(cutune__svg_plot *p)
{
    cutune__rtext *o = p->out;
    double x0 = p->left, x1 = p->width - p->right;
    double y0 = p->top, y1 = p->height - p->bottom;
    char buf[32];
    cutune__rtext_put(o, "<g class=\"grid\" stroke=\"#e3e3e3\">");
    for (size_t i = 0; i < p->x.n_ticks; i++) {
        double x = cutune__svg_px(p, p->x.ticks[i]);
        cutune__rtext_printf(o,
                             "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
                             "y2=\"%.1f\"/>",
                             x, y0, x, y1);
    }
    for (size_t i = 0; i < p->y.n_ticks; i++) {
        double y = cutune__svg_py(p, p->y.ticks[i]);
        cutune__rtext_printf(o,
                             "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
                             "y2=\"%.1f\"/>",
                             x0, y, x1, y);
    }
    cutune__rtext_printf(o,
                         "</g><rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
                         "height=\"%.1f\" fill=\"none\" stroke=\"#333\"/>",
                         x0, y0, x1 - x0, y1 - y0);
    cutune__rtext_put(o, "<g class=\"ticks\" fill=\"#222\">");
    size_t every = x_label_step(p);
    for (size_t i = 0; i < p->x.n_ticks; i += every) {
        double x = cutune__svg_px(p, p->x.ticks[i]);
        cutune__rtext_printf(o,
                             "<text x=\"%.1f\" y=\"%.1f\" text-anchor="
                             "\"middle\">",
                             x, y1 + 16);
        cutune__rtext_escape(
            o, cutune__svg_tick_label(&p->x, p->x.ticks[i], buf));
        cutune__rtext_put(o, "</text>");
    }
    for (size_t i = 0; i < p->y.n_ticks; i++) {
        double y = cutune__svg_py(p, p->y.ticks[i]);
        cutune__rtext_printf(o,
                             "<text x=\"%.1f\" y=\"%.1f\" text-anchor="
                             "\"end\" dy=\".32em\">",
                             x0 - 6, y);
        cutune__rtext_escape(
            o, cutune__svg_tick_label(&p->y, p->y.ticks[i], buf));
        cutune__rtext_put(o, "</text>");
    }
    cutune__rtext_printf(o,
                         "<text x=\"%.1f\" y=\"%.1f\" text-anchor="
                         "\"middle\">",
                         (x0 + x1) / 2, y1 + 36);
    cutune__rtext_escape(o, p->x.label ? p->x.label : "");
    cutune__rtext_printf(o,
                         "</text><text transform=\"translate(%.1f %.1f) "
                         "rotate(-90)\" text-anchor=\"middle\">",
                         16.0, (y0 + y1) / 2);
    cutune__rtext_escape(o, p->y.label ? p->y.label : "");
    cutune__rtext_put(o, "</text></g>");
}

void cutune__svg_begin(cutune__svg_plot *p, cutune__rtext *out, const char *id,
                       const char *title, const char *desc)
{
    p->out = out;
    p->n_legend = 0;
    p->n_series = 0;
    cutune__svg_axis_fit(&p->x);
    cutune__svg_axis_fit(&p->y);
    cutune__rtext_printf(out,
                         "<svg class=\"plot\" id=\"%s\" viewBox=\"0 0 "
                         "%.0f %.0f\" width=\"%.0f\" height=\"%.0f\" "
                         "role=\"img\" aria-labelledby=\"%s-t %s-d\" "
                         "font-family=\"sans-serif\" font-size=\"12\">"
                         "<title id=\"%s-t\">",
                         id, p->width, p->height, p->width, p->height, id, id,
                         id);
    cutune__rtext_escape(out, title);
    cutune__rtext_printf(out, "</title><desc id=\"%s-d\">", id);
    cutune__rtext_escape(out, desc);
    cutune__rtext_put(out, "</desc>");
    draw_axes(p);
    /* Data stays inside the frame. */
    cutune__rtext_printf(out,
                         "<clipPath id=\"%s-c\"><rect x=\"%.1f\" "
                         "y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"/>"
                         "</clipPath><g clip-path=\"url(#%s-c)\">",
                         id, p->left - 8, p->top - 8,
                         p->width - p->left - p->right + 16,
                         p->height - p->top - p->bottom + 16, id);
    p->clipped = 1;
}

static void name_title(cutune__rtext *o, const char *name)
{
    if (!name || !*name)
        return;
    cutune__rtext_put(o, "<title>");
    cutune__rtext_escape(o, name);
    cutune__rtext_put(o, "</title>");
}

void cutune__svg_line(cutune__svg_plot *p, const double *x, const double *y,
                      size_t n, size_t series, int step, int dash,
                      const char *name)
{
    cutune__rtext *o = p->out;
    cutune__rtext_printf(o,
                         "<path class=\"series\" fill=\"none\" stroke=\"%s\""
                         " stroke-width=\"2\"%s d=\"",
                         cutune__svg_colour(series),
                         dash ? " stroke-dasharray=\"7 4\"" : "");
    int started = 0;
    for (size_t i = 0; i < n; i++) {
        double px = cutune__svg_px(p, x[i]), py = cutune__svg_py(p, y[i]);
        if (!isfinite(x[i]) || !isfinite(y[i]) || isnan(px) || isnan(py))
            continue;
        if (!started)
            cutune__rtext_printf(o, "M%.1f %.1f", px, py);
        else if (step)
            cutune__rtext_printf(o, "H%.1fV%.1f", px, py);
        else
            cutune__rtext_printf(o, "L%.1f %.1f", px, py);
        started = 1;
    }
    cutune__rtext_put(o, "\">");
    name_title(o, name);
    cutune__rtext_put(o, "</path>");
    p->n_series++;
}

void cutune__svg_dots(cutune__svg_plot *p, const double *x, const double *y,
                      size_t n, size_t series, const char *name)
{
    cutune__rtext *o = p->out;
    /* Zero-length subpaths with round caps render as dots: a few bytes a
     * point instead of a <circle> element each. */
    cutune__rtext_printf(o,
                         "<path class=\"series dots\" fill=\"none\" "
                         "stroke=\"%s\" stroke-opacity=\".55\" "
                         "stroke-width=\"5\" stroke-linecap=\"round\" d=\"",
                         cutune__svg_colour(series));
    for (size_t i = 0; i < n; i++) {
        double px = cutune__svg_px(p, x[i]), py = cutune__svg_py(p, y[i]);
        if (isfinite(x[i]) && isfinite(y[i]) && !isnan(px) && !isnan(py))
            cutune__rtext_printf(o, "M%.1f %.1fh0", px, py);
    }
    cutune__rtext_put(o, "\">");
    name_title(o, name);
    cutune__rtext_put(o, "</path>");
    p->n_series++;
}

static void marker_shape(cutune__rtext *o, double x, double y, int shape,
                         const char *colour, double s)
{
    const char *paint = "stroke=\"#000\" stroke-width=\"1\"";
    switch (shape) {
    case CUTUNE__MARK_SQUARE:
        cutune__rtext_printf(o,
                             "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
                             "height=\"%.1f\" fill=\"%s\" %s/>",
                             x - s * .8, y - s * .8, s * 1.6, s * 1.6, colour,
                             paint);
        break;
    case CUTUNE__MARK_TRIANGLE:
        cutune__rtext_printf(o,
                             "<path d=\"M%.1f %.1fL%.1f %.1fL%.1f %.1fZ\" "
                             "fill=\"%s\" %s/>",
                             x, y - s, x + s, y + s * .8, x - s, y + s * .8,
                             colour, paint);
        break;
    case CUTUNE__MARK_DIAMOND:
        cutune__rtext_printf(o,
                             "<path d=\"M%.1f %.1fL%.1f %.1fL%.1f %.1fL%.1f "
                             "%.1fZ\" fill=\"%s\" %s/>",
                             x, y - s * 1.2, x + s, y, x, y + s * 1.2, x - s,
                             y, colour, paint);
        break;
    case CUTUNE__MARK_CROSS:
        cutune__rtext_printf(o,
                             "<path d=\"M%.1f %.1fL%.1f %.1fM%.1f %.1fL%.1f "
                             "%.1f\" stroke=\"%s\" stroke-width=\"3\"/>",
                             x - s, y - s, x + s, y + s, x + s, y - s, x - s,
                             y + s, colour);
        break;
    case CUTUNE__MARK_STAR:
        cutune__rtext_put(o, "<path d=\"");
        for (int k = 0; k < 10; k++) {
            double r = (k % 2 ? 0.45 : 1.25) * s;
            double a = -SVG_PI / 2 + k * SVG_PI / 5;
            cutune__rtext_printf(o, "%c%.1f %.1f", k ? 'L' : 'M',
                                 x + r * cos(a), y + r * sin(a));
        }
        cutune__rtext_printf(o, "Z\" fill=\"%s\" %s/>", colour, paint);
        break;
    default:
        cutune__rtext_printf(o,
                             "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"%.1f\" "
                             "fill=\"%s\" %s/>",
                             x, y, s * .9, colour, paint);
        break;
    }
}

void cutune__svg_marker(cutune__svg_plot *p, double x, double y,
                        cutune__svg_shape shape, size_t series,
                        const char *name)
{
    double px = cutune__svg_px(p, x), py = cutune__svg_py(p, y);
    if (!isfinite(x) || !isfinite(y) || isnan(px) || isnan(py))
        return;
    cutune__rtext_put(p->out, "<g class=\"mark\">");
    name_title(p->out, name);
    marker_shape(p->out, px, py, (int)shape, cutune__svg_colour(series), 6);
    cutune__rtext_put(p->out, "</g>");
}

static void ref_line(cutune__svg_plot *p, double x1, double y1, double x2,
                     double y2, size_t series, const char *name)
{
    cutune__rtext_printf(p->out,
                         "<g class=\"ref\"><line x1=\"%.1f\" "
                         "y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
                         "stroke-width=\"1.5\" stroke-dasharray=\"2 3\"/>",
                         x1, y1, x2, y2, cutune__svg_colour(series));
    name_title(p->out, name);
    cutune__rtext_put(p->out, "</g>");
}

void cutune__svg_hline(cutune__svg_plot *p, double y, size_t series,
                       const char *name)
{
    double py = cutune__svg_py(p, y);
    if (!isfinite(y) || isnan(py))
        return;
    ref_line(p, p->left, py, p->width - p->right, py, series, name);
}

void cutune__svg_vline(cutune__svg_plot *p, double x, size_t series,
                       const char *name)
{
    double px = cutune__svg_px(p, x);
    if (!isfinite(x) || isnan(px))
        return;
    ref_line(p, px, p->top, px, p->height - p->bottom, series, name);
}

static double legend_width(const char *name)
{
    return 30 + 6.6 * (double)strlen(name ? name : "");
}

double cutune__svg_legend_top(const cutune__svg_plot *p,
                              const char *const *names, size_t n)
{
    double x = p->left;
    size_t rows = n ? 1 : 0;
    for (size_t i = 0; i < n; i++) {
        double w = legend_width(names[i]);
        if (i && x + w > p->width - p->right) {
            rows++;
            x = p->left;
        }
        x += w + 14;
    }
    return 12 + 20.0 * (double)rows;
}

void cutune__svg_legend(cutune__svg_plot *p, int marker, size_t series,
                        int dash, const char *name)
{
    double w = legend_width(name);
    double x, y;
    if (p->legend_above && p->clipped) {
        cutune__rtext_put(p->out, "</g>");
        p->clipped = 0;
    }
    if (p->legend_above) {
        /* Rows from the left edge of the frame, wrapping at its right. */
        if (p->n_legend == 0 || p->legend_x + w > p->width - p->right) {
            p->legend_x = p->left;
            p->legend_y = p->n_legend ? p->legend_y + 20 : 4;
        }
        x = p->legend_x;
        y = p->legend_y;
        p->legend_x += w + 14;
    } else {
        /* Stacked down from the top right, each on its own light
         * background, drawn where called: after the data, on top. */
        x = p->width - p->right - 8 - w;
        y = p->top + 8 + 18.0 * (double)p->n_legend;
    }
    cutune__rtext_printf(p->out,
                         "<g class=\"legend\"><rect x=\"%.1f\" "
                         "y=\"%.1f\" width=\"%.1f\" height=\"18\" "
                         "fill=\"#fff\" fill-opacity=\".85\"/>",
                         x - 4, y, w + 8);
    double cy = y + 9;
    if (marker < 0)
        cutune__rtext_printf(p->out,
                             "<line x1=\"%.1f\" y1=\"%.1f\" "
                             "x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
                             "stroke-width=\"2\"%s/>",
                             x, cy, x + 22, cy, cutune__svg_colour(series),
                             dash == 2 ? " stroke-dasharray=\"2 3\""
                             : dash    ? " stroke-dasharray=\"7 4\""
                                       : "");
    else
        marker_shape(p->out, x + 11, cy, marker, cutune__svg_colour(series),
                     5);
    cutune__rtext_printf(p->out, "<text x=\"%.1f\" y=\"%.1f\" dy=\".32em\">",
                         x + 28, cy);
    cutune__rtext_escape(p->out, name ? name : "");
    cutune__rtext_put(p->out, "</text></g>");
    p->n_legend++;
}

void cutune__svg_end(cutune__svg_plot *p)
{
    cutune__rtext_put(p->out, p->clipped ? "</g></svg>\n" : "</svg>\n");
    p->clipped = 0;
}
