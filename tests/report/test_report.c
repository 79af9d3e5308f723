/* Reports through the public API, without a browser: from a T4 file the
 * project's own writer made (the path `tune --report` takes after a tune,
 * which needs a GPU to run whole), from a 102,400-configuration space (the
 * page stays under 5 MB), from a tuning cache, and the errors. Each page
 * is left in the test's folder for the browser tests. */
#define _POSIX_C_SOURCE 200809L

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "cutune/report.h"
#include "problem.h"
#include "t4.h"

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    if (s && fread(s, 1, (size_t)n, f) != (size_t)n) {
        free(s);
        s = NULL;
    }
    if (s)
        s[n] = '\0';
    fclose(f);
    if (len)
        *len = (size_t)n;
    return s;
}

static size_t count(const char *s, const char *what)
{
    size_t n = 0;
    for (const char *p = s; p && (p = strstr(p, what)); p += strlen(what))
        n++;
    return n;
}

static size_t multi_valued(const cutune_problem *p)
{
    size_t n = 0;
    for (size_t k = 0; k < cutune_problem_param_count(p); k++)
        n += cutune_problem_value_count(p, k) > 1;
    return n;
}

static double synthetic_ms(size_t i)
{
    return 0.2 + (double)((i * 37) % 50) / 100.0;
}

static cutune_outcome synthetic_outcome(size_t i)
{
    return i % 11 == 5   ? CUTUNE_OUTCOME_COMPILE
           : i % 13 == 7 ? CUTUNE_OUTCOME_RESOURCES
           : i % 17 == 3 ? CUTUNE_OUTCOME_CORRECTNESS
                         : CUTUNE_OUTCOME_CORRECT;
}

/* A tune's worth of results written by cutune__t4_write, reported with
 * what `tune --report` passes from the tune's result. */
static void test_own_t4(void)
{
    cutune_problem *p = NULL;
    CHECK_INT(cutune_problem_load("vector_add", NULL, &p), CUTUNE_OK);
    size_t space = cutune_problem_space_size(p), n = space < 60 ? space : 60;
    cutune__t4_record rec[60];
    double runtimes[60][2];
    size_t fastest = 0;
    for (size_t i = 0; i < n; i++) {
        double t = synthetic_ms(i);
        runtimes[i][0] = t;
        runtimes[i][1] = t * 1.01;
        rec[i] = (cutune__t4_record){.config_index = i * (space / n),
                                     .outcome = synthetic_outcome(i),
                                     .runtimes = runtimes[i],
                                     .n_runtimes = 2,
                                     .time_ms = t,
                                     .compile_ms = 100,
                                     .framework_ms = 5,
                                     .timestamp = 1.7e9 + i};
        if (rec[i].outcome != CUTUNE_OUTCOME_CORRECT)
            rec[i].n_runtimes = 0;
        else if (synthetic_ms(i) < synthetic_ms(fastest))
            fastest = i;
    }
    char err[512] = "";
    CHECK_INT(
        cutune__t4_write("own_T4.json.gz", p, NULL, rec, n, err, sizeof err),
        CUTUNE_OK);
    cutune_param_value baseline[16], winner[16];
    cutune__problem_config_values(p, rec[0].config_index, baseline);
    cutune__problem_config_values(p, rec[fastest].config_index, winner);
    cutune_report_options o;
    cutune_report_options_init(&o);
    o.results_path = "own_T4.json.gz";
    o.device_name = "GTX Fictional 9000";
    o.strategy = "default";
    o.occupancy_block_size = 256;
    o.baseline = baseline;
    o.n_baseline = cutune_problem_param_count(p);
    o.winner = winner;
    o.n_winner = cutune_problem_param_count(p);
    o.winner_ms = synthetic_ms(fastest) * 0.99;
    cutune_report *r = NULL;
    CHECK_INT(cutune_report_create(p, &o, &r), CUTUNE_OK);
    CHECK_INT(cutune_report_write(r, "own.html"), CUTUNE_OK);
    for (size_t i = 0; i < cutune_report_note_count(r); i++) {
        CHECK(!strstr(cutune_report_note(r, i), "occupancy suggestion is"));
        /* the writer's timestamps are read back: seconds come from them */
        CHECK(!strstr(cutune_report_note(r, i), "Seconds are"));
    }
    cutune_report_destroy(r);
    char *html = slurp("own.html", NULL);
    CHECK(html != NULL);
    CHECK_INT(count(html, "<svg"), 3 + multi_valued(p));
    CHECK_CONTAINS(html, "GTX Fictional 9000");
    CHECK_CONTAINS(html, "<th>GB/s</th>");
    CHECK_CONTAINS(html, "the occupancy API&#39;s block size: 256");
    CHECK_CONTAINS(html, "occupancy suggestion: ");
    CHECK(!strstr(html, "unknown</span> over the occupancy"));
    /* 20 top rows, the winner's marked */
    CHECK_INT(count(html, "<tr><td class=\"n\">") +
                  count(html, "<tr class=\"mark\"><td class=\"n\">"),
              20);
    CHECK_INT(count(html, "<tr class=\"mark\">"), 1);
    free(html);
    cutune_problem_destroy(p);
}

/* Results `cutune explain --output` wrote: the top table shows the
 * counters and the bottleneck they point to, classified as explain does
 * (figures like an H100's: vector_add at 91% of DRAM, transpose without
 * padding with 15.7 conflicts per shared request). */
static void test_counters(void)
{
    cutune_problem *p = NULL;
    CHECK_INT(cutune_problem_load("vector_add", NULL, &p), CUTUNE_OK);
    const char *const names[] = {
        "dram__throughput.avg.pct_of_peak_sustained_elapsed",
        "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
        "sm__throughput.avg.pct_of_peak_sustained_elapsed",
        "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
        "smsp__inst_executed_op_shared_ld.sum",
        "registers_per_thread"};
    const char *const units[] = {"%", "%", "%", "count", "count", "count"};
    const double memory[] = {90.9, 90.9, 18.3, 0, 0, 25};
    const double conflicts[] = {51.7, 93.1, 23.0, 31e6, 2e6, 32};
    double rt[2][1] = {{0.2676}, {0.3140}};
    cutune__t4_record rec[3] = {{.config_index = 5,
                                 .outcome = CUTUNE_OUTCOME_CORRECT,
                                 .runtimes = rt[0],
                                 .n_runtimes = 1,
                                 .time_ms = 0.2676,
                                 .extra_names = names,
                                 .extra_values = memory,
                                 .extra_units = units,
                                 .n_extra = 6},
                                {.config_index = 9,
                                 .outcome = CUTUNE_OUTCOME_CORRECT,
                                 .runtimes = rt[1],
                                 .n_runtimes = 1,
                                 .time_ms = 0.3140,
                                 .extra_names = names,
                                 .extra_values = conflicts,
                                 .extra_units = units,
                                 .n_extra = 6},
                                {.config_index = 11,
                                 .outcome = CUTUNE_OUTCOME_COMPILE,
                                 .time_ms = NAN}};
    char err[512] = "";
    CHECK_INT(
        cutune__t4_write("counters_T4.json", p, NULL, rec, 3, err, sizeof err),
        CUTUNE_OK);
    cutune_report_options o;
    cutune_report_options_init(&o);
    o.results_path = "counters_T4.json";
    cutune_report *r = NULL;
    CHECK_INT(cutune_report_create(p, &o, &r), CUTUNE_OK);
    CHECK_INT(cutune_report_write(r, "counters.html"), CUTUNE_OK);
    cutune_report_destroy(r);
    char *html = slurp("counters.html", NULL);
    CHECK(html != NULL);
    CHECK_CONTAINS(html, "<th>DRAM % of peak</th><th>compute % of peak</th>"
                         "<th>bottleneck (counters)</th>");
    CHECK_CONTAINS(html, "<td>memory-bound</td>");
    CHECK_CONTAINS(html, "<td>shared-memory bank conflicts</td>");
    CHECK_INT(count(html, "<td>memory-bound</td>"), 1);
    free(html);
    /* Results without counters have no such columns. */
    rec[0].n_extra = rec[1].n_extra = 0;
    CHECK_INT(
        cutune__t4_write("counters_T4.json", p, NULL, rec, 3, err, sizeof err),
        CUTUNE_OK);
    CHECK_INT(cutune_report_create(p, &o, &r), CUTUNE_OK);
    CHECK_INT(cutune_report_write(r, "counters.html"), CUTUNE_OK);
    cutune_report_destroy(r);
    html = slurp("counters.html", NULL);
    CHECK(html && !strstr(html, "bottleneck (counters)"));
    free(html);
    cutune_problem_destroy(p);
}

/* 102,400 configurations: the page summarizes and stays under 5 MB. */
static void test_big_space(void)
{
    char path[4096];
    const char *src = getenv("CUTUNE_SOURCE_DIR");
    snprintf(path, sizeof path, "%s/tests/report/fixtures/big.json",
             src ? src : ".");
    cutune_problem_options po = {.space_only = 1};
    cutune_problem *p = NULL;
    CHECK_INT(cutune_problem_load(path, &po, &p), CUTUNE_OK);
    size_t n = cutune_problem_space_size(p);
    CHECK_INT(n, 102400);
    cutune__t4_record *rec = calloc(n, sizeof *rec);
    double *rt = malloc(n * sizeof *rt);
    for (size_t i = 0; i < n; i++) {
        rt[i] = 0.5 + (double)((i * 7919) % 1000) / 100.0;
        rec[i] = (cutune__t4_record){.config_index = (i * 40507) % n,
                                     .outcome = i % 37 == 1
                                                    ? CUTUNE_OUTCOME_RUNTIME
                                                    : CUTUNE_OUTCOME_CORRECT,
                                     .runtimes = &rt[i],
                                     .n_runtimes = i % 37 == 1 ? 0 : 1,
                                     .time_ms = rt[i],
                                     .compile_ms = 50,
                                     .timestamp = 1.7e9 + i};
    }
    char err[512] = "";
    CHECK_INT(
        cutune__t4_write("big_T4.json.gz", p, NULL, rec, n, err, sizeof err),
        CUTUNE_OK);
    free(rec);
    free(rt);
    cutune_report_options o;
    cutune_report_options_init(&o);
    o.results_path = "big_T4.json.gz";
    cutune_report *r = NULL;
    CHECK_INT(cutune_report_create(p, &o, &r), CUTUNE_OK);
    CHECK_INT(cutune_report_write(r, "big.html"), CUTUNE_OK);
    cutune_report_destroy(r);
    size_t len = 0;
    char *html = slurp("big.html", &len);
    CHECK(html && len <= 5u * 1000 * 1000);
    printf("big.html: %zu bytes for %zu results\n", len, n);
    CHECK_INT(count(html, "<svg"), 5);
    const char *threads = html ? strstr(html, "id=\"threads\"") : NULL;
    const char *end = threads ? strstr(threads, "</svg>") : NULL;
    size_t dots = 0;
    for (const char *q = threads; q && q < end && (q = strstr(q, "h0"));
         q += 2)
        dots += q < end;
    CHECK(dots > 1000 && dots <= 5000);
    free(html);
    cutune_problem_destroy(p);
}

static void test_cache(void)
{
    char dir[4096];
    const char *src = getenv("CUTUNE_SOURCE_DIR");
    snprintf(dir, sizeof dir, "%s/tests/cli/fixtures/fleet", src ? src : ".");
    cutune_cache *c = NULL;
    CHECK_INT(cutune_cache_open(dir, &c), CUTUNE_OK);
    cutune_report *r = NULL;
    CHECK_INT(cutune_report_create_cache(c, NULL, &r), CUTUNE_OK);
    CHECK_INT(cutune_report_write(r, "cache.html"), CUTUNE_OK);
    CHECK_INT(cutune_report_note_count(r), 1); /* the refused version 3 */
    cutune_report_destroy(r);
    cutune_cache_close(c);
    char *html = slurp("cache.html", NULL);
    CHECK_INT(count(html, "<table class=\"grid\""), 1);
    CHECK_INT(count(html, "<tr><th scope=\"row\">"), 4);
    CHECK_INT(count(html, "not tuned"), 3);
    CHECK_INT(count(html, "<svg"), 1);
    /* The newest record of a device, problem and size is the one shown. */
    CHECK_CONTAINS(html, "0.01 ms</b>, 1.30x");
    free(html);
}

/* The T4 reader keeps what the seconds axis needs: timestamps (with a
 * fraction and a zone) and the framework and validation times. */
static void test_t4_times(void)
{
    char t1[4096], t4[4096];
    const char *src = getenv("CUTUNE_SOURCE_DIR");
    snprintf(t1, sizeof t1, "%s/tests/data/t1/convolution_milo.json",
             src ? src : ".");
    snprintf(t4, sizeof t4,
             "%s/tests/data/t4/convolution_milo_A100_T4.json.gz",
             src ? src : ".");
    cutune_problem_options po = {.space_only = 1};
    cutune_problem *p = NULL;
    CHECK_INT(cutune_problem_load(t1, &po, &p), CUTUNE_OK);
    cutune__t4 *res = NULL;
    char err[512] = "";
    CHECK_INT(cutune__t4_load(t4, p, &res, err, sizeof err), CUTUNE_OK);
    if (res) {
        CHECK_INT(res->n_entries, 4362);
        /* "2023-12-22 09:54:05.502007+00:00" */
        CHECK_NEAR(res->entries[0].timestamp, 1703238845.502007, 1e-5);
        CHECK_NEAR(res->entries[0].other_ms, 105.24242906831205, 1e-9);
        CHECK(res->entries[1].timestamp > res->entries[0].timestamp);
    }
    cutune__t4_free(res);
    cutune_problem_destroy(p);
}

static void test_errors(void)
{
    cutune_problem *p = NULL;
    CHECK_INT(cutune_problem_load("vector_add", NULL, &p), CUTUNE_OK);
    cutune_report_options o;
    cutune_report_options_init(&o);
    o.results_path = "no-such-results.json";
    cutune_report *r = NULL;
    CHECK_INT(cutune_report_create(p, &o, &r), CUTUNE_ERR_IO);
    CHECK_CONTAINS(cutune_report_errmsg(r), "no-such-results.json");
    CHECK_INT(cutune_report_write(r, "x.html"), CUTUNE_ERR_INVALID_ARGUMENT);
    cutune_report_destroy(r);
    CHECK_INT(cutune_report_create(p, NULL, &r), CUTUNE_ERR_INVALID_ARGUMENT);
    cutune_report_destroy(r);
    o.results_path = "own_T4.json.gz";
    CHECK_INT(cutune_report_create(p, &o, &r), CUTUNE_OK);
    CHECK_INT(cutune_report_write(r, "/nonexistent/dir/x.html"),
              CUTUNE_ERR_IO);
    CHECK_CONTAINS(cutune_report_errmsg(r), "/nonexistent/dir/x.html");
    cutune_report_destroy(r);
    cutune_report_destroy(NULL);
    cutune_problem_destroy(p);
}

int main(void)
{
    test_own_t4();
    test_counters();
    test_big_space();
    test_cache();
    test_t4_times();
    test_errors();
    return check_finish();
}
