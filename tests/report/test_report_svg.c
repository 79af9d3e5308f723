/* The report's SVG writer and text helpers: nice numbers, ticks on linear,
 * log10, log2 and categorical axes, labels, escaping, number formats, and
 * that a plot is well-formed enough to count. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "report_svg.h"
#include "report_text.h"

static void test_nice(void)
{
    CHECK_NEAR(cutune__svg_nice(0.7, 1), 0.5, 1e-12);
    CHECK_NEAR(cutune__svg_nice(0.8, 1), 1.0, 1e-12);
    CHECK_NEAR(cutune__svg_nice(2.9, 1), 2.0, 1e-12);
    CHECK_NEAR(cutune__svg_nice(3.1, 0), 5.0, 1e-12);
    CHECK_NEAR(cutune__svg_nice(7.5, 0), 10.0, 1e-12);
    CHECK_NEAR(cutune__svg_nice(430, 1), 500.0, 1e-9);
    CHECK_NEAR(cutune__svg_nice(0.0123, 0), 0.02, 1e-12);
}

static void test_linear(void)
{
    cutune__svg_axis a = {
        .scale = CUTUNE__SCALE_LINEAR, .lo = 0.53, .hi = 2.31};
    cutune__svg_axis_fit(&a);
    /* range 2 -> step 0.5: 0.5, 1.0, ..., 2.5 */
    CHECK_NEAR(a.lo, 0.5, 1e-12);
    CHECK_NEAR(a.hi, 2.5, 1e-12);
    CHECK_INT(a.n_ticks, 5);
    CHECK_INT(a.decimals, 1);
    char buf[32];
    CHECK_STR(cutune__svg_tick_label(&a, a.ticks[1], buf), "1.0");
    CHECK_STR(cutune__svg_tick_label(&a, a.ticks[4], buf), "2.5");

    cutune__svg_axis b = {.scale = CUTUNE__SCALE_LINEAR, .lo = 3, .hi = 3};
    cutune__svg_axis_fit(&b);
    CHECK(b.lo < 3 && b.hi > 3 && b.n_ticks >= 2);

    cutune__svg_axis c = {.scale = CUTUNE__SCALE_LINEAR, .lo = 1, .hi = 4362};
    cutune__svg_axis_fit(&c);
    CHECK_NEAR(c.lo, 0, 1e-9);
    CHECK_NEAR(c.hi, 5000, 1e-9);
    CHECK_STR(cutune__svg_tick_label(&c, c.ticks[1], buf), "1000");
}

static void test_log10(void)
{
    /* Two decades or fewer: 1-2-5 ticks, range widened to such values. */
    cutune__svg_axis a = {.scale = CUTUNE__SCALE_LOG10, .lo = 0.55, .hi = 4.2};
    cutune__svg_axis_fit(&a);
    CHECK_NEAR(a.lo, 0.5, 1e-12);
    CHECK_NEAR(a.hi, 5, 1e-12);
    CHECK_INT(a.n_ticks, 4); /* 0.5 1 2 5 */
    CHECK_NEAR(a.ticks[1], 1, 1e-12);
    CHECK_NEAR(a.ticks[2], 2, 1e-12);
    char buf[32];
    CHECK_STR(cutune__svg_tick_label(&a, a.ticks[0], buf), "0.5");

    /* Many decades: powers of ten only, every second when there are more
     * than eight. */
    cutune__svg_axis b = {.scale = CUTUNE__SCALE_LOG10, .lo = 1, .hi = 4362};
    cutune__svg_axis_fit(&b);
    CHECK_NEAR(b.lo, 1, 1e-12);
    CHECK_NEAR(b.hi, 1e4, 1e-6);
    CHECK_INT(b.n_ticks, 5);
    cutune__svg_axis c = {.scale = CUTUNE__SCALE_LOG10, .lo = 1e-3, .hi = 1e9};
    cutune__svg_axis_fit(&c);
    /* 12 decades: every second power, aligned to even exponents */
    CHECK_INT(c.n_ticks, 8);
    CHECK_STR(cutune__svg_tick_label(&c, c.ticks[0], buf), "0.0001");
    CHECK_STR(cutune__svg_tick_label(&c, c.ticks[7], buf), "1e10");

    /* A narrow range: linear steps inside it. */
    cutune__svg_axis d = {.scale = CUTUNE__SCALE_LOG10, .lo = 1.12, .hi = 1.9};
    cutune__svg_axis_fit(&d);
    CHECK(d.n_ticks >= 3);
    CHECK(d.lo <= 1.12 && d.hi >= 1.9);
    CHECK_STR(cutune__svg_tick_label(&d, 1.2, buf), "1.2");

    /* A non-positive lower end is read as a decade below the top. */
    cutune__svg_axis e = {.scale = CUTUNE__SCALE_LOG10, .lo = 0, .hi = 100};
    cutune__svg_axis_fit(&e);
    CHECK_NEAR(e.lo, 10, 1e-9);
}

static void test_log2_and_categories(void)
{
    cutune__svg_axis a = {.scale = CUTUNE__SCALE_LOG2, .lo = 16, .hi = 1000};
    cutune__svg_axis_fit(&a);
    CHECK_NEAR(a.lo, 16, 1e-12);
    CHECK_NEAR(a.hi, 1024, 1e-12);
    CHECK_INT(a.n_ticks, 7);
    char buf[32];
    CHECK_STR(cutune__svg_tick_label(&a, a.ticks[6], buf), "1024");
    cutune__svg_axis b = {.scale = CUTUNE__SCALE_LOG2, .lo = 1, .hi = 1 << 30};
    cutune__svg_axis_fit(&b);
    CHECK(b.n_ticks <= 16);

    static const char *const cats[] = {"16", "32", "<48>"};
    cutune__svg_axis c = {.categories = cats, .n_categories = 3};
    cutune__svg_axis_fit(&c);
    CHECK_NEAR(c.lo, -0.5, 1e-12);
    CHECK_NEAR(c.hi, 2.5, 1e-12);
    CHECK_INT(c.n_ticks, 3);
    CHECK_STR(cutune__svg_tick_label(&c, 2, buf), "<48>");
}

static size_t count(const char *s, const char *what)
{
    size_t n = 0;
    for (const char *p = s; (p = strstr(p, what)); p += strlen(what))
        n++;
    return n;
}

static void test_plot(void)
{
    cutune__rtext out = {0};
    cutune__svg_plot p = {.width = 400,
                          .height = 300,
                          .left = 60,
                          .right = 20,
                          .top = 10,
                          .bottom = 40};
    p.x = (cutune__svg_axis){.scale = CUTUNE__SCALE_LOG10,
                             .lo = 1,
                             .hi = 100,
                             .label = "evaluations"};
    p.y = (cutune__svg_axis){.scale = CUTUNE__SCALE_LINEAR,
                             .lo = 0,
                             .hi = 10,
                             .label = "time <ms>"};
    cutune__svg_begin(&p, &out, "t1", "A \"title\"", "desc & more");
    double x[] = {1, 10, 100, -1}, y[] = {10, 5, 1, 3};
    cutune__svg_line(&p, x, y, 4, 0, 1, 0, "best");
    cutune__svg_dots(&p, x, y, 4, 1, "dots");
    for (int m = 0; m < 6; m++)
        cutune__svg_marker(&p, 10, 5, (cutune__svg_shape)m, (size_t)m, "m");
    cutune__svg_hline(&p, 5, 2, "h");
    cutune__svg_vline(&p, 10, 3, "v");
    cutune__svg_legend(&p, -1, 0, 1, "best");
    cutune__svg_end(&p);
    CHECK(!out.oom);
    CHECK_INT(count(out.data, "<svg"), 1);
    CHECK_INT(count(out.data, "</svg>"), 1);
    CHECK_INT(count(out.data, "<g"), count(out.data, "</g>"));
    CHECK_INT(p.n_series, 2);
    /* x = -1 cannot be shown on a log axis: three of four dots */
    CHECK_INT(count(out.data, "h0"), 3);
    CHECK_CONTAINS(out.data, "A &quot;title&quot;");
    CHECK_CONTAINS(out.data, "desc &amp; more");
    CHECK_CONTAINS(out.data, "time &lt;ms&gt;");
    CHECK(!strstr(out.data, "http"));
    /* Pixel positions: the axis ends map to the frame's edges. */
    CHECK_NEAR(cutune__svg_px(&p, 1), 60, 1e-9);
    CHECK_NEAR(cutune__svg_px(&p, 100), 380, 1e-9);
    CHECK_NEAR(cutune__svg_py(&p, 0), 260, 1e-9);
    CHECK_NEAR(cutune__svg_py(&p, 10), 10, 1e-9);
    cutune__rtext_free(&out);
}

static void test_text(void)
{
    cutune__rtext t = {0};
    cutune__rtext_escape(&t, "a<b>&\"c'");
    CHECK_STR(t.data, "a&lt;b&gt;&amp;&quot;c&#39;");
    for (int i = 0; i < 2000; i++)
        cutune__rtext_printf(&t, "%0300d", i);
    CHECK_INT(t.len, 27 + 2000 * 300);
    cutune__rtext_free(&t);
    char buf[32];
    CHECK_STR(cutune__rtext_num(buf, 0.5536, 4), "0.5536");
    CHECK_STR(cutune__rtext_num(buf, 1e7, 4), "1e7");
    CHECK_STR(cutune__rtext_num(buf, 2.5e-5, 4), "2.5e-5");
    CHECK_STR(cutune__rtext_num(buf, NAN, 4), "-");
    CHECK_STR(cutune__rtext_fixed(buf, 0.625, 4), "0.6250");
    CHECK_STR(cutune__rtext_fixed(buf, 2, 3), "2.00");
    CHECK_STR(cutune__rtext_fixed(buf, 1234.4, 4), "1234");
    CHECK_STR(cutune__rtext_fixed(buf, INFINITY, 4), "-");
    CHECK_STR(cutune__svg_colour(0), "#0072B2");
    CHECK_STR(cutune__svg_colour(8), "#0072B2");
}

/* Times at the ends of the doubles (a subnormal, near DBL_MAX): the axes
 * end, no coordinate is NaN, no label says "inf" (issue 35). */
static void test_extremes(void)
{
    char buf[32];
    CHECK_STR(cutune__rtext_num(buf, 5e-324, 4), "4.941e-324");
    CHECK_STR(cutune__rtext_num(buf, 1e308, 4), "1e308");
    CHECK_STR(cutune__rtext_num(buf, 9.9996e6, 4), "1e7");
    CHECK_STR(cutune__rtext_num(buf, -2.5e-5, 4), "-2.5e-5");
    static const cutune__svg_scale scales[] = {
        CUTUNE__SCALE_LINEAR, CUTUNE__SCALE_LOG10, CUTUNE__SCALE_LOG2};
    for (size_t k = 0; k < 3; k++) {
        cutune__rtext out = {0};
        cutune__svg_plot p = {.width = 400,
                              .height = 300,
                              .left = 60,
                              .right = 20,
                              .top = 10,
                              .bottom = 40};
        p.x = (cutune__svg_axis){.scale = CUTUNE__SCALE_LINEAR,
                                 .lo = 1,
                                 .hi = 3,
                                 .label = "evaluations"};
        p.y = (cutune__svg_axis){
            .scale = scales[k], .lo = 5e-324, .hi = 1e308, .label = "time"};
        cutune__svg_begin(&p, &out, "x", "extremes", "extremes");
        double x[] = {1, 2, 3}, y[] = {5e-324, 1.5, 1e308};
        cutune__svg_line(&p, x, y, 3, 0, 1, 0, "best");
        cutune__svg_end(&p);
        CHECK(!out.oom);
        CHECK(out.data && !strstr(out.data, "nan") &&
              !strstr(out.data, "inf"));
        for (size_t i = 0; i < 3; i++)
            CHECK(isfinite(cutune__svg_py(&p, y[i])));
        cutune__rtext_free(&out);
    }
}

int main(void)
{
    test_nice();
    test_extremes();
    test_linear();
    test_log10();
    test_log2_and_categories();
    test_plot();
    test_text();
    return check_finish();
}
