/* Tuning plans without a GPU: reading plans and their errors, a run with
 * the replay backend over tests/cli/fixtures/sim.json (resumable, --force),
 * a failing task among good ones, and the record's JSON round trip that
 * carries records between MPI ranks. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../check.h"
#include "../tmpdir.h"
#include "cutune/plan.h"
#include "plan_run.h"

static char fixtures[4096];

static cutune_plan *parse(const char *text, cutune_status want)
{
    cutune_plan *plan = NULL;
    int device = 3;
    cutune_status st = cutune_plan_parse(text, fixtures, &device, 1, &plan);
    CHECK_INT(st, want);
    if (st != want)
        printf("  plan: %s\n  error: %s\n", text, cutune_plan_errmsg(plan));
    return plan;
}

static void expect_error(const char *text, const char *needle)
{
    cutune_plan *plan = parse(text, CUTUNE_ERR_PARSE);
    CHECK_CONTAINS(cutune_plan_errmsg(plan), needle);
    cutune_plan_destroy(plan);
}

static void test_parse(void)
{
    cutune_plan *plan = parse(
        "{\"items\": [{\"problem\": \"sim.json\", \"sizes\": [[1024], "
        "[2048, 2]], \"devices\": [0, 1]}, {\"problem\": \"vector_add\"}]}",
        CUTUNE_OK);
    CHECK_INT(cutune_plan_item_count(plan), 2);
    CHECK_INT(cutune_plan_task_count(plan), 5);
    const cutune_plan_task *t = cutune_plan_task_at(plan, 0);
    char path[4200];
    snprintf(path, sizeof path, "%s/sim.json", fixtures);
    CHECK_STR(t->problem, path);
    CHECK(t->n_size == 1 && t->size[0] == 1024 && t->device == 0);
    t = cutune_plan_task_at(plan, 1);
    CHECK(t->n_size == 1 && t->size[0] == 1024 && t->device == 1);
    t = cutune_plan_task_at(plan, 3);
    CHECK(t->n_size == 2 && t->size[0] == 2048 && t->size[1] == 2);
    /* A template keeps its name; no devices: the default ones. */
    t = cutune_plan_task_at(plan, 4);
    CHECK_STR(t->problem, "vector_add");
    CHECK(t->size == NULL && t->device == 3 && t->item == 1);
    CHECK(cutune_plan_task_at(plan, 5) == NULL);
    cutune_plan_destroy(plan);
    /* A bare list is a plan too. */
    plan = parse("[{\"problem\": \"/abs/t1.json\"}]", CUTUNE_OK);
    CHECK_STR(cutune_plan_task_at(plan, 0)->problem, "/abs/t1.json");
    cutune_plan_destroy(plan);

    expect_error("{\"items\": [}", "line 1");
    expect_error("{\"items\": []}", "non-empty list");
    expect_error("[{\"sizes\": [[1]]}]", "item 0: \"problem\" is missing");
    expect_error("[{\"problem\": \"a\"}, {\"problem\": \"b\", "
                 "\"size\": [[1]]}]",
                 "item 1: unknown field \"size\"");
    expect_error("[{\"problem\": \"a\", \"sizes\": [1024]}]",
                 "item 0: \"sizes\"[0] is not a list");
    expect_error("[{\"problem\": \"a\", \"sizes\": [[0]]}]", "\"sizes\"[0]");
    expect_error("[{\"problem\": \"a\", \"devices\": [0, -1]}]",
                 "item 0: \"devices\"[1] is not a device ordinal");
    cutune_plan *missing = NULL;
    CHECK_INT(cutune_plan_load("/nonexistent/plan.json", NULL, 0, &missing),
              CUTUNE_ERR_IO);
    CHECK_CONTAINS(cutune_plan_errmsg(missing), "/nonexistent/plan.json");
    cutune_plan_destroy(missing);
}

/* A backend that fails the tasks of one device and otherwise replays. */
typedef struct failing {
    cutune_plan_backend *inner;
    int bad_device;
    size_t tunes;
} failing;

static cutune_status failing_device(void *user, int ordinal,
                                    cutune_device *device, char *why,
                                    size_t why_size)
{
    failing *f = user;
    return f->inner->device(f->inner->user, ordinal, device, why, why_size);
}

static cutune_status failing_tune(void *user, const cutune_plan_task *task,
                                  const cutune_problem *problem,
                                  int write_cache, cutune_cache_record *record,
                                  int *appended, char *why, size_t why_size)
{
    failing *f = user;
    f->tunes++;
    if (task->device == f->bad_device) {
        snprintf(why, why_size, "device %d is on fire", task->device);
        return CUTUNE_ERR_CUDA;
    }
    return f->inner->tune(f->inner->user, task, problem, write_cache, record,
                          appended, why, why_size);
}

static size_t count_lines(const char *dir)
{
    size_t lines = 0;
    DIR *d = opendir(dir);
    for (struct dirent *de; d && (de = readdir(d));) {
        if (!strstr(de->d_name, ".jsonl"))
            continue;
        char path[4400];
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        FILE *f = fopen(path, "r");
        for (int c; f && (c = fgetc(f)) != EOF;)
            lines += c == '\n';
        if (f)
            fclose(f);
    }
    if (d)
        closedir(d);
    return lines;
}

static void test_run(void)
{
    char dir[] = "/tmp/cutune-test-plan-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char pattern[4200];
    snprintf(pattern, sizeof pattern, "%s/{problem}_T4.json", fixtures);
    cutune_plan_backend *replay = NULL;
    CHECK_INT(cutune_plan_replay_backend_create(pattern, NULL, 10, 1, &replay),
              CUTUNE_OK);
    failing f = {replay, 2, 0};
    cutune_plan_backend backend = {
        failing_device, failing_tune, NULL, &f, 1, 0, CUTUNE_OBJECTIVE_TIME};
    cutune_plan *plan =
        parse("{\"items\": [{\"problem\": \"sim.json\", \"sizes\": [[1024], "
              "[2048], [4096]], \"devices\": [0, 1, 2]}, "
              "{\"problem\": \"no_such.json\"}]}",
              CUTUNE_OK);
    cutune_plan_run_options o;
    cutune_plan_run_options_init(&o);
    o.cache_dir = dir;
    cutune_plan_report r;
    CHECK_INT(cutune_plan_run(plan, &backend, &o, &r), CUTUNE_OK);
    /* Devices 0 and 1 at three sizes tuned; device 2 and the missing
     * problem failed, and the rest went on. */
    CHECK(r.tasks == 10 && r.tuned == 6 && r.skipped == 0 && r.failed == 4);
    CHECK_INT(f.tunes, 9);
    CHECK_INT(count_lines(dir), 6);
    const cutune_plan_task *bad = cutune_plan_task_at(plan, 2);
    CHECK(bad->state == CUTUNE_PLAN_FAILED && bad->status == CUTUNE_ERR_CUDA);
    CHECK_CONTAINS(bad->message, "on fire");
    bad = cutune_plan_task_at(plan, 9);
    CHECK(bad->state == CUTUNE_PLAN_FAILED);
    CHECK_CONTAINS(bad->message, "no_such.json");
    CHECK(cutune_plan_task_at(plan, 0)->state == CUTUNE_PLAN_TUNED);
    /* Again: nothing is tuned but what failed. */
    f.tunes = 0;
    CHECK_INT(cutune_plan_run(plan, &backend, &o, &r), CUTUNE_OK);
    CHECK(r.tuned == 0 && r.skipped == 6 && r.failed == 4);
    CHECK_INT(f.tunes, 3);
    CHECK_INT(count_lines(dir), 6);
    /* --force tunes everything again. */
    o.force = 1;
    CHECK_INT(cutune_plan_run(plan, &backend, &o, &r), CUTUNE_OK);
    CHECK(r.tuned == 6 && r.skipped == 0 && r.failed == 4);
    CHECK_INT(count_lines(dir), 12);
    cutune_plan_destroy(plan);
    cutune_plan_backend_destroy(replay);
    remove_tree(dir);
}

static void test_record_json(void)
{
    const cutune_param_value cfg[] = {{"block_size_x", "128"},
                                      {"UNROLL", "4"}};
    const long long size[] = {4096, 2};
    cutune_cache_record r;
    memset(&r, 0, sizeof r);
    snprintf(r.device.name, sizeof r.device.name, "GTX Fictional 9000");
    snprintf(r.device.uuid, sizeof r.device.uuid, "GPU-1234");
    r.device.cc_major = 9;
    r.device.sm_count = 132;
    r.device.l2_bytes = 50LL << 20;
    r.problem_name = "sim";
    r.source_hash = "abc";
    r.problem_size = size;
    r.n_problem_size = 2;
    r.compiler_options = "-O3";
    r.config = cfg;
    r.n_config = 2;
    r.time_ms = 0.125;
    r.baseline_ms = NAN;
    r.runs = 40;
    r.strategy = "default";
    r.timestamp = 1700000000;
    json_t *j = cutune__plan_record_encode(&r);
    CHECK(j != NULL);
    char *text = json_dumps(j, JSON_COMPACT);
    json_decref(j);
    j = json_loads(text, 0, NULL);
    free(text);
    cutune_cache_record back;
    cutune_param_value *config, *baseline;
    long long *back_size;
    CHECK(
        cutune__plan_record_decode(j, &back, &config, &baseline, &back_size));
    CHECK_STR(back.device.name, "GTX Fictional 9000");
    CHECK_STR(back.device.uuid, "GPU-1234");
    CHECK(back.device.sm_count == 132 && back.device.l2_bytes == 50LL << 20);
    CHECK_STR(back.problem_name, "sim");
    CHECK_STR(back.compiler_options, "-O3");
    CHECK(back.n_problem_size == 2 && back.problem_size[1] == 2);
    CHECK(back.n_config == 2 && back.n_baseline == 0);
    CHECK_STR(back.config[1].value, "4");
    CHECK(back.time_ms == 0.125 && isnan(back.baseline_ms));
    CHECK(back.runs == 40 && back.timestamp == 1700000000);
    free(config);
    free(baseline);
    free(back_size);
    json_decref(j);
}

int main(void)
{
    const char *src = getenv("CUTUNE_SOURCE_DIR");
    snprintf(fixtures, sizeof fixtures, "%s/tests/cli/fixtures",
             src ? src : ".");
    test_parse();
    test_run();
    test_record_json();
    return check_finish();
}
