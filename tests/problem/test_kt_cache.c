/* Kernel Tuner cache files read as T4 (kt_cache.c): a cache Kernel Tuner
 * wrote itself (tests/data/kt/kt_cache_cpu.json) with the same best as
 * Kernel Tuner's, computed here from the file; Kernel Tuner's error
 * strings; an entry known only by its key; a cache left open; and bad
 * files refused naming the field. */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "check.h"
#include "problem.h"
#include "t4.h"
#include "tmpdir.h"

static char dir[] = "/tmp/cutune-kt-cache-test-XXXXXX";

static void write_file(const char *name, const char *text)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    fputs(text, f);
    fclose(f);
}

static cutune_problem *load_problem(void)
{
    const char *data = getenv("CUTUNE_TEST_DATA");
    char path[1024];
    snprintf(path, sizeof path, "%s/kt/sum_cpu.json", data ? data : "");
    cutune_problem *p;
    CHECK_INT(cutune_problem_load(path, NULL, &p), CUTUNE_OK);
    if (!p->space) {
        fprintf(stderr, "%s\n", cutune_problem_errmsg(p));
        cutune_problem_destroy(p);
        return NULL;
    }
    return p;
}

/* Kernel Tuner's best: the smallest `time` among entries without an
 * error, read from the file with nothing of cutune's. */
static double kt_best(const char *path, long long *bx, long long *vec)
{
    json_t *root = json_load_file(path, 0, NULL);
    const char *key;
    json_t *e;
    double best = INFINITY;
    json_object_foreach(json_object_get(root, "cache"), key, e)
    {
        json_t *t = json_object_get(e, "time");
        if (json_object_get(e, "__error__") || !json_is_number(t) ||
            json_number_value(t) >= best)
            continue;
        best = json_number_value(t);
        *bx = json_integer_value(json_object_get(e, "block_size_x"));
        *vec = json_integer_value(json_object_get(e, "vector"));
    }
    json_decref(root);
    return best;
}

static void test_genuine(const cutune_problem *p)
{
    const char *data = getenv("CUTUNE_TEST_DATA");
    char path[1024], err[1024] = "";
    snprintf(path, sizeof path, "%s/kt/kt_cache_cpu.json", data ? data : "");
    long long bx = 0, vec = 0;
    double want = kt_best(path, &bx, &vec);
    CHECK(isfinite(want));
    cutune__t4 *t4 = NULL;
    CHECK_INT(cutune__t4_load(path, p, &t4, err, sizeof err), CUTUNE_OK);
    if (!t4) {
        fprintf(stderr, "%s\n", err);
        return;
    }
    CHECK_INT(t4->n_entries, 20);
    CHECK_INT(t4->n_outside, 0);
    CHECK(t4->from_kernel_tuner);
    CHECK(t4->meta.device_name == NULL); /* "" on a CPU */
    CHECK_INT(t4->meta.n_problem_size, 1);
    CHECK_INT(t4->meta.problem_size[0], 65536);
    size_t correct = 0, compile = 0;
    const cutune__t4_entry *best = NULL;
    for (size_t i = 0; i < t4->n_entries; i++) {
        const cutune__t4_entry *e = &t4->entries[i];
        correct += e->outcome == CUTUNE_OUTCOME_CORRECT;
        compile += e->outcome == CUTUNE_OUTCOME_COMPILE;
        if (e->outcome == CUTUNE_OUTCOME_CORRECT) {
            CHECK_INT(e->n_runtimes, 5);
            CHECK(e->compile_ms > 0);
            CHECK(isfinite(e->timestamp));
            if (!best || e->time_ms < best->time_ms)
                best = e;
        }
    }
    CHECK_INT(correct, 19);
    CHECK_INT(compile, 1);
    CHECK(best != NULL);
    if (best) {
        CHECK(best->time_ms == want);
        const uint32_t *cfg =
            cutune__space_config(p->space, best->config_index);
        char text[64];
        snprintf(text, sizeof text, "%lld", bx);
        CHECK_STR(p->value_texts[0][cfg[0]], text);
        snprintf(text, sizeof text, "%lld", vec);
        CHECK_STR(p->value_texts[1][cfg[1]], text);
    }
    cutune__t4_free(t4);
}

/* Made-up entries for what a CPU run does not produce. */
static const char header[] =
    "{\"device_name\": \"GTX Fictional 9000\", \"kernel_name\": "
    "\"sum_floats\", \"problem_size\": [65536], \"tune_params_keys\": "
    "[\"block_size_x\", \"vector\"], \"tune_params\": {}, \"objective\": "
    "\"time\", \"cache\": {\n";

static void test_made_up(const cutune_problem *p)
{
    char text[2048], path[512], err[1024] = "";
    snprintf(text, sizeof text, "%s%s", header,
             "\"32,1\": {\"block_size_x\": 32, \"vector\": 1, \"time\": "
             "\"RuntimeFailedConfig\", \"compile_time\": 3.0},\n"
             "\"64,1\": {\"block_size_x\": 64, \"vector\": 1, \"time\": "
             "\"InvalidConfig\"},\n"
             "\"128,2\": {\"time\": 2.5, \"times\": [2.0, 3.0, 4.0]},\n"
             "\"256,4\": {\"block_size_x\": 256, \"vector\": 4, \"time\": "
             "1.5, \"times\": [1.0, 1.0, 2.5], \"compile_time\": 40},\n");
    /* Left open, as a cut-short run leaves it. */
    write_file("open.json", text);
    snprintf(path, sizeof path, "%s/open.json", dir);
    cutune__t4 *t4 = NULL;
    CHECK_INT(cutune__t4_load(path, p, &t4, err, sizeof err), CUTUNE_OK);
    if (!t4) {
        fprintf(stderr, "%s\n", err);
        return;
    }
    CHECK_INT(t4->n_entries, 4);
    CHECK_STR(t4->meta.device_name, "GTX Fictional 9000");
    CHECK_INT(t4->entries[0].outcome, CUTUNE_OUTCOME_RUNTIME);
    CHECK_NEAR(t4->entries[0].compile_ms, 3.0, 1e-12);
    CHECK_INT(t4->entries[1].outcome, CUTUNE_OUTCOME_RUNTIME);
    CHECK_INT(t4->n_other_invalidity, 1); /* InvalidConfig: "constraints" */
    /* By its key alone; ranked by `time` (the mean), not the median. */
    CHECK_INT(t4->entries[2].outcome, CUTUNE_OUTCOME_CORRECT);
    CHECK(t4->entries[2].config_index != SIZE_MAX);
    CHECK_NEAR(t4->entries[2].time_ms, 2.5, 1e-12);
    CHECK_NEAR(t4->entries[3].time_ms, 1.5, 1e-12);
    CHECK_INT(t4->entries[3].n_runtimes, 3);
    cutune__t4_free(t4);
}

static void expect_error(const char *entries, const char *needle)
{
    char text[2048], path[512], err[1024] = "";
    snprintf(text, sizeof text, "%s%s}}\n", header, entries);
    write_file("bad.json", text);
    snprintf(path, sizeof path, "%s/bad.json", dir);
    cutune_problem *p = load_problem();
    if (!p)
        return;
    cutune__t4 *t4 = NULL;
    CHECK(cutune__t4_load(path, p, &t4, err, sizeof err) != CUTUNE_OK);
    CHECK(t4 == NULL);
    CHECK_CONTAINS(err, "bad.json");
    CHECK_CONTAINS(err, needle);
    cutune_problem_destroy(p);
}

static void test_bad(void)
{
    expect_error("\"32,1\": {\"block_size_x\": 32, \"vector\": 1}",
                 "cache.\"32,1\".time: expected a positive number");
    expect_error("\"32\": {\"time\": 1.0}",
                 "cache.\"32\": no value of block_size_x, and the key "
                 "has 1 values");
    expect_error("\"32,1\": [1]", "cache.\"32,1\": expected an object");
    char text[1024], path[512], err[1024] = "";
    snprintf(text, sizeof text, "%s",
             "{\"tune_params_keys\": [\"block_size_x\", \"unroll\"], "
             "\"cache\": {}}");
    write_file("keys.json", text);
    snprintf(path, sizeof path, "%s/keys.json", dir);
    cutune_problem *p = load_problem();
    cutune__t4 *t4 = NULL;
    if (p) {
        CHECK(cutune__t4_load(path, p, &t4, err, sizeof err) != CUTUNE_OK);
        CHECK_CONTAINS(err, "tune_params_keys: 'unroll' is not a parameter");
    }
    cutune_problem_destroy(p);
}

int main(void)
{
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    cutune_problem *p = load_problem();
    if (p) {
        test_genuine(p);
        test_made_up(p);
    }
    cutune_problem_destroy(p);
    test_bad();
    remove_tree(dir);
    return check_finish();
}
