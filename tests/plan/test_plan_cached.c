/* A plan over a cache of many records (the plan run keeps the cache in
 * memory): exactly the tasks the cache holds at the EXACT level are
 * skipped, whatever else it holds (other problems, devices and sizes, a
 * newer record that no longer fits the space beside an older one that
 * does, one that alone does not fit); the others are tuned, and a second
 * run finds them. Replayed devices, no GPU. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../check.h"
#include "../tmpdir.h"
#include "cutune/plan.h"

static char fixtures[4096];

/* A record of problem `problem` on "replay D" at `size`, with a
 * configuration of sim.json's space unless `fits` is 0. */
static void append(cutune_cache *c, const char *problem, int device,
                   long long size, long long timestamp, int fits)
{
    cutune_cache_record r;
    memset(&r, 0, sizeof r);
    snprintf(r.device.name, sizeof r.device.name, "replay %d", device);
    snprintf(r.device.cutune_version, sizeof r.device.cutune_version, "0.1.0");
    r.device.simulated = 1;
    cutune_param_value cfg[] = {{"block_size_x", fits ? "64" : "48"},
                                {"UNROLL", "2"}};
    r.problem_name = problem;
    r.source_hash = "";
    r.problem_size = &size;
    r.n_problem_size = 1;
    r.compiler_options = "";
    r.config = cfg;
    r.n_config = 2;
    r.time_ms = 1.5;
    r.time_min_ms = 1.5;
    r.baseline_ms = 3.0;
    r.runs = 2;
    r.strategy = "default";
    r.evaluations = 4;
    r.timestamp = timestamp;
    CHECK_INT(cutune_cache_append(c, &r), CUTUNE_OK);
}

/* The replay backend, counting what it tunes. */
typedef struct counting {
    cutune_plan_backend *inner;
    size_t tunes;
} counting;

static cutune_status counting_device(void *user, int ordinal,
                                     cutune_device *device, char *why,
                                     size_t why_size)
{
    counting *c = user;
    return c->inner->device(c->inner->user, ordinal, device, why, why_size);
}

static cutune_status counting_tune(void *user, const cutune_plan_task *task,
                                   const cutune_problem *problem,
                                   int write_cache,
                                   cutune_cache_record *record, int *appended,
                                   char *why, size_t why_size)
{
    counting *c = user;
    c->tunes++;
    return c->inner->tune(c->inner->user, task, problem, write_cache, record,
                          appended, why, why_size);
}

int main(void)
{
    const char *src = getenv("CUTUNE_SOURCE_DIR");
    snprintf(fixtures, sizeof fixtures, "%s/tests/cli/fixtures",
             src ? src : ".");
    char dir[] = "/tmp/cutune-test-plan-cached-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    cutune_cache *c = NULL;
    CHECK_INT(cutune_cache_open(dir, &c), CUTUNE_OK);
    /* Around the plan's tasks: other problems, devices and sizes. */
    for (int d = 0; d < 6; d++)
        for (long long s = 1; s <= 60; s++) {
            append(c, "other", d, s * 1024, 1700000000, 1);
            if (d >= 2)
                append(c, "sim", d, s * 1024, 1700000000, 1);
            else if (s > 8)
                append(c, "sim", d, s * 1000, 1700000000, 1);
        }
    /* Tasks (size index k = 1..8, device d = 0..1) the cache holds: k
     * even on device 0, k = 3 on device 1. k = 4 on device 0 has a newer
     * record that does not fit beside the one that does; k = 5 on device
     * 1 only one that does not fit. */
    for (long long k = 2; k <= 8; k += 2)
        append(c, "sim", 0, k * 1024, 1700000000, 1);
    append(c, "sim", 0, 4 * 1024, 1800000000, 0);
    append(c, "sim", 1, 3 * 1024, 1700000000, 1);
    append(c, "sim", 1, 5 * 1024, 1700000000, 0);
    cutune_cache_close(c);

    char text[8192], pattern[4200];
    snprintf(text, sizeof text,
             "{\"items\": [{\"problem\": \"%s/sim.json\", \"sizes\": "
             "[[1024], [2048], [3072], [4096], [5120], [6144], [7168], "
             "[8192]], \"devices\": [0, 1]}]}",
             fixtures);
    snprintf(pattern, sizeof pattern, "%s/{problem}_T4.json", fixtures);
    cutune_plan *plan = NULL;
    CHECK_INT(cutune_plan_parse(text, NULL, NULL, 0, &plan), CUTUNE_OK);
    cutune_plan_backend *replay = NULL;
    CHECK_INT(cutune_plan_replay_backend_create(pattern, NULL, 4, 1, &replay),
              CUTUNE_OK);
    counting count = {replay, 0};
    cutune_plan_backend backend;
    memset(&backend, 0, sizeof backend);
    backend.device = counting_device;
    backend.tune = counting_tune;
    backend.user = &count;
    backend.space_only = 1;
    cutune_plan_run_options o;
    cutune_plan_run_options_init(&o);
    o.cache_dir = dir;
    cutune_plan_report r;
    CHECK_INT(cutune_plan_run(plan, &backend, &o, &r), CUTUNE_OK);
    CHECK(r.tasks == 16 && r.skipped == 5 && r.tuned == 11 && r.failed == 0);
    CHECK_INT(count.tunes, 11);
    for (size_t t = 0; t < cutune_plan_task_count(plan); t++) {
        const cutune_plan_task *task = cutune_plan_task_at(plan, t);
        long long k = task->size[0] / 1024;
        int cached = task->device == 0 ? k % 2 == 0 : k == 3;
        if (task->state != (cached ? CUTUNE_PLAN_SKIPPED : CUTUNE_PLAN_TUNED))
            printf("  size %lld device %d: state %d\n", task->size[0],
                   task->device, task->state);
        CHECK(task->state ==
              (cached ? CUTUNE_PLAN_SKIPPED : CUTUNE_PLAN_TUNED));
    }
    /* What was tuned is found the next time. */
    count.tunes = 0;
    CHECK_INT(cutune_plan_run(plan, &backend, &o, &r), CUTUNE_OK);
    CHECK(r.skipped == 16 && r.tuned == 0);
    CHECK_INT(count.tunes, 0);
    cutune_plan_destroy(plan);
    cutune_plan_backend_destroy(replay);
    remove_tree(dir);
    return check_finish();
}
