/* T4 results: the published exhaustive measurements read onto the spaces
 * of their T1 problems, with the counts and optima of tests/data/README.md;
 * small plain-JSON files for the cases the published ones do not have. */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "problem.h"
#include "t4.h"
#include "tmpdir.h"

static char dir[] = "/tmp/cutune-t4-test-XXXXXX";

static void write_file(const char *name, const char *text)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    fputs(text, f);
    fclose(f);
}

static void test_published(void)
{
    static const struct {
        const char *t1;
        const char *t4;
        size_t n, correct, within_1pct;
        double best;
    } files[] = {
        {"convolution_milo.json", "convolution_milo_A100_T4.json.gz", 4362,
         4201, 1, 0.5499},
        {"convolution_milo.json", "convolution_milo_A4000_T4.json.gz", 4362,
         4201, 3, 0.9979},
        {"convolution_milo.json", "convolution_milo_A6000_T4.json.gz", 4362,
         3889, 1, 0.5851},
        {"dedispersion_milo.json", "dedispersion_milo_A100_T4.json.gz", 11130,
         11130, 57, 67.6204},
    };
    const char *data = getenv("CUTUNE_TEST_DATA");
    for (size_t f = 0; f < sizeof files / sizeof *files; f++) {
        char t1[1024], t4path[1024];
        snprintf(t1, sizeof t1, "%s/t1/%s", data ? data : "", files[f].t1);
        snprintf(t4path, sizeof t4path, "%s/t4/%s", data ? data : "",
                 files[f].t4);
        /* The data is part of the tree: missing is a failure. */
        CHECK(data && access(t1, R_OK) == 0 && access(t4path, R_OK) == 0);
        if (!data || access(t1, R_OK) != 0 || access(t4path, R_OK) != 0) {
            fprintf(stderr, "missing test data: %s or %s\n", t1, t4path);
            continue;
        }
        cutune_problem_options po = {
            .problem_size = NULL, .n_problem_size = 0, .space_only = 1};
        cutune_problem *p;
        CHECK_INT(cutune_problem_load(t1, &po, &p), CUTUNE_OK);
        cutune__t4 *t4 = NULL;
        char err[512] = "";
        CHECK_INT(cutune__t4_load(t4path, p, &t4, err, sizeof err), CUTUNE_OK);
        if (!t4) {
            fprintf(stderr, "%s\n", err);
            cutune_problem_destroy(p);
            continue;
        }
        CHECK_INT(t4->n_entries, files[f].n);
        CHECK_INT(t4->n_outside, 0);
        CHECK_INT(t4->n_other_invalidity, 0);
        size_t correct = 0, within = 0;
        double best = INFINITY;
        /* Each recorded configuration is a distinct point of the space. */
        size_t space = cutune_problem_space_size(p);
        unsigned char *seen = calloc(space, 1);
        size_t dup = 0;
        for (size_t i = 0; i < t4->n_entries; i++) {
            const cutune__t4_entry *e = &t4->entries[i];
            if (e->config_index < space) {
                dup += seen[e->config_index];
                seen[e->config_index] = 1;
            }
            if (e->outcome == CUTUNE_OUTCOME_CORRECT) {
                correct++;
                CHECK(isfinite(e->time_ms) && e->n_runtimes > 0);
                if (e->time_ms < best)
                    best = e->time_ms;
            } else if (!isinf(e->time_ms)) {
                CHECK(isinf(e->time_ms));
            }
        }
        for (size_t i = 0; i < t4->n_entries; i++)
            if (t4->entries[i].time_ms <= best * 1.01)
                within++;
        free(seen);
        CHECK_INT(dup, 0);
        CHECK_INT(correct, files[f].correct);
        CHECK_NEAR(best, files[f].best, 5e-5);
        CHECK_INT(within, files[f].within_1pct);
        CHECK(t4->entries[0].compile_ms > 0.0);
        CHECK_INT(t4->entries[0].n_runtimes, 32);
        cutune__t4_free(t4);
        cutune_problem_destroy(p);
    }
}

static const char problem_json[] =
    "{\"ConfigurationSpace\": {\"TuningParameters\": [\n"
    "   {\"Name\": \"bx\", \"Type\": \"int\", \"Values\": [32, 64, 128]},\n"
    "   {\"Name\": \"mode\", \"Type\": \"string\", "
    "\"Values\": [\"ca\", \"cg\"]},\n"
    "   {\"Name\": \"f\", \"Type\": \"float\", \"Values\": [0.5, 1.0]}],\n"
    "  \"Conditions\": [{\"Expression\": \"bx != 128 or mode == 'ca'\"}]},\n"
    " \"KernelSpecification\": {\"KernelName\": \"k\", "
    "\"ProblemSize\": [16]}}\n";

static cutune_status load_t4(const char *json, cutune__t4 **t4, char *err,
                             size_t errlen)
{
    char path[512];
    write_file("problem.json", problem_json);
    write_file("results.json", json);
    snprintf(path, sizeof path, "%s/problem.json", dir);
    cutune_problem_options po = {
        .problem_size = NULL, .n_problem_size = 0, .space_only = 1};
    cutune_problem *p;
    cutune_status st = cutune_problem_load(path, &po, &p);
    CHECK_INT(st, CUTUNE_OK);
    snprintf(path, sizeof path, "%s/results.json", dir);
    st = cutune__t4_load(path, p, t4, err, errlen);
    cutune_problem_destroy(p);
    return st;
}

static void test_plain(void)
{
    /* Values written as numbers, as strings, as floats for ints; a point
     * outside the conditions; one outside the values; times in seconds. */
    static const char json[] =
        "{\"metadata\": {\"timeunit\": \"seconds\"}, \"results\": [\n"
        " {\"configuration\": {\"bx\": 64, \"mode\": \"cg\", \"f\": 1},\n"
        "  \"times\": {\"compilation\": 2, \"runtimes\": [0.001, 0.003]},\n"
        "  \"invalidity\": \"correct\"},\n"
        " {\"configuration\": {\"bx\": \"128\", \"mode\": \"ca\", "
        "\"f\": \"0.5\"},\n"
        "  \"times\": {}, \"invalidity\": \"compile\"},\n"
        " {\"configuration\": {\"bx\": 128.0, \"mode\": \"cg\", \"f\": 0.5},\n"
        "  \"invalidity\": \"constraints\"},\n"
        " {\"configuration\": {\"bx\": 256, \"mode\": \"cg\", \"f\": 0.5},\n"
        "  \"invalidity\": \"brand-new\"},\n"
        " {\"configuration\": {\"f\": 0.5, \"mode\": \"ca\", \"bx\": 32},\n"
        "  \"measurements\": [{\"name\": \"time\", \"value\": 0.25}],\n"
        "  \"invalidity\": \"correct\"}]}\n";
    cutune__t4 *t4 = NULL;
    char err[512] = "";
    CHECK_INT(load_t4(json, &t4, err, sizeof err), CUTUNE_OK);
    if (!t4) {
        fprintf(stderr, "%s\n", err);
        return;
    }
    CHECK_INT(t4->n_entries, 5);
    CHECK_INT(t4->n_outside, 2);
    CHECK_INT(t4->n_other_invalidity, 2);
    /* Valid points in index order: bx 32 x 4, bx 64 x 4, bx 128 with ca
     * x 2; (64, cg, 1.0) is the 8th. */
    CHECK_INT(t4->entries[0].config_index, 7);
    CHECK_INT(t4->entries[0].outcome, CUTUNE_OUTCOME_CORRECT);
    CHECK_NEAR(t4->entries[0].time_ms, 2.0, 1e-12);
    CHECK_NEAR(t4->entries[0].compile_ms, 2000.0, 1e-9);
    CHECK_INT(t4->entries[0].n_runtimes, 2);
    CHECK_NEAR(t4->entries[0].runtimes[1], 3.0, 1e-12);
    CHECK_INT(t4->entries[1].config_index, 8);
    CHECK_INT(t4->entries[1].outcome, CUTUNE_OUTCOME_COMPILE);
    CHECK(isinf(t4->entries[1].time_ms));
    CHECK_INT(t4->entries[2].config_index, SIZE_MAX);
    CHECK_INT(t4->entries[2].outcome, CUTUNE_OUTCOME_RUNTIME);
    CHECK_INT(t4->entries[3].config_index, SIZE_MAX);
    CHECK_INT(t4->entries[3].outcome, CUTUNE_OUTCOME_RUNTIME);
    CHECK_INT(t4->entries[4].config_index, 0);
    CHECK_NEAR(t4->entries[4].time_ms, 250.0, 1e-9);
    CHECK_INT(t4->entries[4].n_runtimes, 0);
    cutune__t4_free(t4);

    /* Ranked by the median of the runtimes, as a tune ranks: one slow
     * launch does not move it (the mean would be 4 ms). */
    static const char skewed[] =
        "{\"results\": [{\"configuration\": {\"bx\": 32, \"mode\": "
        "\"ca\", \"f\": 1}, \"times\": {\"runtimes\": [1, 10, 1]}, "
        "\"invalidity\": \"correct\"}]}\n";
    CHECK_INT(load_t4(skewed, &t4, err, sizeof err), CUTUNE_OK);
    if (t4)
        CHECK_NEAR(t4->entries[0].time_ms, 1.0, 1e-12);
    cutune__t4_free(t4);

    cutune_outcome o;
    CHECK_INT(cutune__t4_outcome_from_str("timeout", &o), 1);
    CHECK_INT(o, CUTUNE_OUTCOME_TIMEOUT);
    CHECK_INT(cutune__t4_outcome_from_str("correctness", &o), 1);
    CHECK_INT(o, CUTUNE_OUTCOME_CORRECTNESS);
    CHECK_INT(cutune__t4_outcome_from_str("resources", &o), 1);
    CHECK_INT(o, CUTUNE_OUTCOME_RESOURCES);
}

static void expect_error(const char *json, cutune_status status,
                         const char *needle)
{
    cutune__t4 *t4 = (cutune__t4 *)1;
    char err[512] = "";
    CHECK_INT(load_t4(json, &t4, err, sizeof err), status);
    CHECK(t4 == NULL);
    CHECK_CONTAINS(err, "results.json");
    CHECK_CONTAINS(err, needle);
}

static void test_bad(void)
{
    expect_error("{\"results\": [}", CUTUNE_ERR_PARSE, "line 1, column");
    expect_error("{\"data\": []}", CUTUNE_ERR_PARSE, "results: missing");
    expect_error("{\"results\": [{\"configuration\": {\"bx\": 32, "
                 "\"mode\": \"ca\"}, \"invalidity\": \"correct\"}]}",
                 CUTUNE_ERR_PARSE, "results[0].configuration.f: missing");
    expect_error("{\"results\": [{\"configuration\": {\"bx\": 32, "
                 "\"mode\": \"ca\", \"f\": 1, \"by\": 2}, "
                 "\"invalidity\": \"correct\"}]}",
                 CUTUNE_ERR_PARSE, "configuration.by: the problem has no");
    expect_error("{\"results\": [{\"configuration\": {\"bx\": 32, "
                 "\"mode\": \"ca\", \"f\": 1}}]}",
                 CUTUNE_ERR_PARSE, "results[0].invalidity: missing");
    /* Correct with no time at all: refused, naming the entry. */
    expect_error("{\"results\": [{\"configuration\": {\"bx\": 32, "
                 "\"mode\": \"ca\", \"f\": 1}, \"times\": {}, "
                 "\"invalidity\": \"correct\"}]}",
                 CUTUNE_ERR_PARSE,
                 "results[0]: invalidity \"correct\" with "
                 "no time");
    expect_error("{\"metadata\": {\"timeunit\": \"fortnights\"}, "
                 "\"results\": []}",
                 CUTUNE_ERR_UNSUPPORTED, "fortnights");

    cutune__t4 *t4 = NULL;
    char err[512] = "";
    cutune_problem *p;
    CHECK_INT(cutune_problem_load("vector_add", NULL, &p), CUTUNE_OK);
    CHECK_INT(
        cutune__t4_load("/no/such/results.json.gz", p, &t4, err, sizeof err),
        CUTUNE_ERR_IO);
    CHECK_CONTAINS(err, "/no/such/results.json.gz");
    cutune_problem_destroy(p);
}

/* What cutune writes reads back onto the same space: both forms. */
static void test_round_trip(void)
{
    char path[512];
    write_file("problem.json", problem_json);
    snprintf(path, sizeof path, "%s/problem.json", dir);
    cutune_problem_options po = {
        .problem_size = NULL, .n_problem_size = 0, .space_only = 1};
    cutune_problem *p;
    CHECK_INT(cutune_problem_load(path, &po, &p), CUTUNE_OK);
    const double rt[3] = {1.5, 2.5, 3.5};
    /* `cutune explain --output`: counters as extra measurements; a NaN
     * (a metric the GPU lacks) is left out. */
    /* The parentheses tell clang the concatenation is meant. */
    const char *const xn[3] = {("dram__throughput.avg.pct_of_peak_sustained_"
                                "elapsed"),
                               "lts__t_sector_hit_rate.pct",
                               "registers_per_thread"};
    const char *const xu[3] = {"%", "%", "count"};
    const double xv[3] = {91.5, NAN, 26};
    cutune__t4_record recs[3] = {{.config_index = 7,
                                  .outcome = CUTUNE_OUTCOME_CORRECT,
                                  .runtimes = rt,
                                  .n_runtimes = 3,
                                  .time_ms = 2.5,
                                  .compile_ms = 120,
                                  .framework_ms = 4,
                                  .search_ms = 0.25,
                                  .validation_ms = 0.5,
                                  .timestamp = 1700000000,
                                  .extra_names = xn,
                                  .extra_values = xv,
                                  .extra_units = xu,
                                  .n_extra = 3},
                                 {.config_index = 9,
                                  .outcome = CUTUNE_OUTCOME_COMPILE,
                                  .time_ms = NAN,
                                  .compile_ms = 80},
                                 {.config_index = 0,
                                  .outcome = CUTUNE_OUTCOME_RESOURCES,
                                  .time_ms = NAN}};
    static const char *const names[2] = {"out.json", "out.json.gz"};
    for (int f = 0; f < 2; f++) {
        snprintf(path, sizeof path, "%s/%s", dir, names[f]);
        char err[512] = "";
        CHECK_INT(cutune__t4_write(path, p, NULL, recs, 3, err, sizeof err),
                  CUTUNE_OK);
        FILE *fp = fopen(path, "rb");
        int c0 = fp ? fgetc(fp) : EOF;
        if (fp)
            fclose(fp);
        /* The gzip magic starts with 0x1f; plain JSON with '{'. */
        CHECK_INT(c0, f ? 0x1f : '{');
        cutune__t4 *t4 = NULL;
        CHECK_INT(cutune__t4_load(path, p, &t4, err, sizeof err), CUTUNE_OK);
        if (!t4) {
            fprintf(stderr, "%s\n", err);
            continue;
        }
        CHECK_INT(t4->n_entries, 3);
        CHECK_INT(t4->n_outside, 0);
        CHECK_INT(t4->n_other_invalidity, 0);
        for (size_t i = 0; i < 3 && i < t4->n_entries; i++) {
            CHECK_INT(t4->entries[i].config_index, recs[i].config_index);
            CHECK_INT(t4->entries[i].outcome, recs[i].outcome);
            CHECK_NEAR(t4->entries[i].compile_ms, recs[i].compile_ms, 1e-12);
            CHECK_INT(t4->entries[i].n_runtimes, recs[i].n_runtimes);
        }
        CHECK_NEAR(t4->entries[0].time_ms, 2.5, 1e-12);
        CHECK_NEAR(t4->entries[0].runtimes[2], 3.5, 1e-12);
        CHECK(isinf(t4->entries[1].time_ms));
        CHECK_INT(t4->entries[0].n_extra, 2);
        if (t4->entries[0].n_extra == 2) {
            CHECK_STR(t4->entries[0].extra_names[0], xn[0]);
            CHECK_NEAR(t4->entries[0].extra_values[0], 91.5, 1e-12);
            CHECK_STR(t4->entries[0].extra_names[1], "registers_per_thread");
            CHECK_NEAR(t4->entries[0].extra_values[1], 26, 1e-12);
        }
        CHECK_INT(t4->entries[1].n_extra, 0);
        cutune__t4_free(t4);
    }
    char err[512] = "";
    cutune__t4_record bad = {.config_index = 99};
    CHECK_INT(cutune__t4_write(path, p, NULL, &bad, 1, err, sizeof err),
              CUTUNE_ERR_INVALID_ARGUMENT);
    CHECK_INT(cutune__t4_write("/no/such/dir/out.json", p, NULL, recs, 1, err,
                               sizeof err),
              CUTUNE_ERR_IO);
    CHECK_CONTAINS(err, "/no/such/dir/out.json");
    cutune_problem_destroy(p);
}

int main(void)
{
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    test_published();
    test_plain();
    test_bad();
    test_round_trip();
    remove_tree(dir);
    return check_finish();
}
