/* A small SVG plot writer for the report: axes with "nice" ticks on
 * linear, log10 and log2 scales, categorical axes, lines, step lines,
 * point clouds, markers and a legend, written as text into a
 * cutune__rtext.
 *
 * Why not gnuplot (or PLplot): the library never runs other programs
 * except its own worker, and a report must be writable on a machine that
 * has only the driver; gnuplot would be a runtime dependency, its output
 * would change with its version (which the browser tests pin by counts),
 * and sending it the data means temporary files or a pipe protocol. What
 * the report needs from a plotting library is ticks, scales and a legend:
 * a few hundred lines, tested in tests/report/test_report_svg.c.
 *
 * Colours are the Okabe-Ito palette (safe for the common colour-vision
 * deficiencies); every series also has its own marker shape or dash so
 * that a greyscale print keeps them apart. */
#ifndef CUTUNE_REPORT_SVG_H
#define CUTUNE_REPORT_SVG_H

#include <stddef.h>

#include "report_text.h"

typedef enum cutune__svg_scale {
    CUTUNE__SCALE_LINEAR = 0,
    CUTUNE__SCALE_LOG10 = 1,
    CUTUNE__SCALE_LOG2 = 2
} cutune__svg_scale;

#define CUTUNE__SVG_MAX_TICKS 24

/* An axis: the caller sets scale, lo, hi (data range), label and, for a
 * categorical axis, categories (then lo/hi/scale are set by the writer:
 * category i sits at i). cutune__svg_axis_fit() widens lo/hi to nice
 * numbers and fills the ticks. */
typedef struct cutune__svg_axis {
    cutune__svg_scale scale;
    double lo, hi;
    const char *label;
    const char *const *categories;
    size_t n_categories;
    double ticks[CUTUNE__SVG_MAX_TICKS];
    size_t n_ticks;
    int decimals; /* for linear tick labels */
} cutune__svg_axis;

/* Heckbert's nice number: the 1, 2, 5 or 10 times a power of ten nearest
 * x (round) or at least x (not round). */
double cutune__svg_nice(double x, int round);

/* Fits the axis range to nice numbers and computes its ticks: linear, at
 * most about 6 ticks a nice step apart; log10, at 1-2-5 steps within two
 * decades or fewer, else at powers of ten (every second or more when many);
 * log2, at powers of two. A range of one value is widened. Log scales
 * need lo > 0 (a non-positive lo is read as hi / 10). */
void cutune__svg_axis_fit(cutune__svg_axis *a);

/* The label of tick value v on axis a, into buf (32 bytes). */
char *cutune__svg_tick_label(const cutune__svg_axis *a, double v, char *buf);

/* Okabe-Ito colours and marker shapes, by series number. */
const char *cutune__svg_colour(size_t series);

typedef enum cutune__svg_marker {
    CUTUNE__MARK_CIRCLE = 0,
    CUTUNE__MARK_SQUARE,
    CUTUNE__MARK_TRIANGLE,
    CUTUNE__MARK_DIAMOND,
    CUTUNE__MARK_CROSS,
    CUTUNE__MARK_STAR
} cutune__svg_shape;

typedef struct cutune__svg_plot {
    cutune__rtext *out;
    double width, height;
    double left, right, top, bottom; /* margins, px */
    cutune__svg_axis x, y;
    int legend_above; /* legend in rows in the top margin
                         (make it 20 px a row taller)
                         instead of inside, top right */
    size_t n_legend;
    double legend_x, legend_y; /* where the next entry goes */
    size_t n_series;           /* counted for the caller's checks */
    int clipped;               /* the data's clip group is open */
} cutune__svg_plot;

/* Starts a plot: fits both axes, writes <svg> with role="img", a <title>
 * and <desc>, the frame, grid lines, ticks and axis labels. `id` is the
 * element id (letters, digits, '-'). */
void cutune__svg_begin(cutune__svg_plot *p, cutune__rtext *out, const char *id,
                       const char *title, const char *desc);
void cutune__svg_end(cutune__svg_plot *p);

/* Pixel position of a data value; values outside the axis are clamped to
 * its ends. NAN for what a log scale cannot show (<= 0). */
double cutune__svg_px(const cutune__svg_plot *p, double x);
double cutune__svg_py(const cutune__svg_plot *p, double y);

/* A line through the points whose x and y are finite; `step` draws
 * horizontal-then-vertical steps (a best-so-far curve); `dash` a dashed
 * line. */
void cutune__svg_line(cutune__svg_plot *p, const double *x, const double *y,
                      size_t n, size_t series, int step, int dash,
                      const char *name);
/* Many points as one path of dots (cheap for thousands). */
void cutune__svg_dots(cutune__svg_plot *p, const double *x, const double *y,
                      size_t n, size_t series, const char *name);
/* One emphasized marker with a tooltip title. */
void cutune__svg_marker(cutune__svg_plot *p, double x, double y,
                        cutune__svg_shape shape, size_t series,
                        const char *name);
/* A horizontal or vertical reference line across the plot, labelled. */
void cutune__svg_hline(cutune__svg_plot *p, double y, size_t series,
                       const char *name);
void cutune__svg_vline(cutune__svg_plot *p, double x, size_t series,
                       const char *name);
/* A legend entry (call after the data: the first one above the frame ends
 * the clipping of what is drawn): a line sample (marker < 0; dash 1 dashed, 2
 * dotted) or a marker, stacked inside the frame at the top right, or in rows
 * above the frame when legend_above. */
void cutune__svg_legend(cutune__svg_plot *p, int marker, size_t series,
                        int dash, const char *name);
/* The top margin a legend_above of these entries needs on a plot of this
 * width and left/right margins. */
double cutune__svg_legend_top(const cutune__svg_plot *p,
                              const char *const *names, size_t n);

#endif
