/* Fuzz target for what a plan run reads: any bytes as a plan file
 * (cutune_plan_parse, then every task walked and the plan hashed as MPI
 * ranks do), and the same bytes as a message from another MPI rank (the
 * record of a RESULT, the device of a CHECK, the task, HELLO and FAIL
 * fields). Broken promises abort with the input kept:
 * - every task of a plan that loads has a problem, 1 to 8 positive
 *   dimensions or none, and a device ordinal of 0 or more;
 * - a record that decodes encodes and decodes again to the same fields;
 * - a decoded record the cache takes (rank 0 appends what ranks send) is
 *   found again by an exact lookup: what one end writes, the other
 *   reads. */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../tmpdir.h"
#include "cutune/plan.h"
#include "fuzz_input.h"
#include "plan_run.h"

static void walk_plan(const char *text)
{
    cutune_plan *plan = NULL;
    int defaults[2] = {0, 3};
    cutune_status st =
        cutune_plan_parse(text, "/nonexistent", defaults, 2, &plan);
    if (st != CUTUNE_OK) {
        cutune_fuzz_set_message(cutune_plan_errmsg(plan));
        cutune_plan_destroy(plan);
        return;
    }
    for (size_t t = 0; t < cutune_plan_task_count(plan); t++) {
        const cutune_plan_task *task = cutune_plan_task_at(plan, t);
        if (!task || !task->problem || !task->problem[0] || task->device < 0 ||
            task->n_size > 8 || (task->n_size == 0) != (task->size == NULL) ||
            task->item >= cutune_plan_item_count(plan))
            abort();
        for (size_t k = 0; k < task->n_size; k++)
            if (task->size[k] <= 0)
                abort();
    }
    (void)cutune__plan_hash(plan);
    cutune_plan_destroy(plan);
}

static int same_record(const cutune_cache_record *a,
                       const cutune_cache_record *b)
{
    int same =
        !strcmp(a->problem_name, b->problem_name) &&
        !strcmp(a->device.name, b->device.name) &&
        a->n_problem_size == b->n_problem_size && a->n_config == b->n_config &&
        a->runs == b->runs && a->timestamp == b->timestamp &&
        (a->time_ms == b->time_ms || (isnan(a->time_ms) && isnan(b->time_ms)));
    for (size_t k = 0; same && k < a->n_problem_size; k++)
        same = a->problem_size[k] == b->problem_size[k];
    for (size_t k = 0; same && k < a->n_config; k++)
        same = !strcmp(a->config[k].name, b->config[k].name) &&
               !strcmp(a->config[k].value, b->config[k].value);
    return same;
}

/* Rank 0's end of a RESULT: append, then the record must be found. */
static void append_and_find(const cutune_cache_record *r)
{
    char dir[160];
    const char *base = cutune_fuzz_path("cache");
    if (!base)
        return;
    snprintf(dir, sizeof dir, "%s", base);
    remove_tree(dir);
    cutune_cache *c = NULL;
    if (cutune_cache_open(dir, &c) != CUTUNE_OK ||
        cutune_cache_append(c, r) != CUTUNE_OK) {
        cutune_fuzz_set_message(cutune_cache_errmsg(c));
        cutune_cache_close(c);
        return;
    }
    cutune_cache_query q;
    memset(&q, 0, sizeof q);
    q.problem_name = r->problem_name;
    q.device_name = r->device.name;
    q.device_uuid = r->device.uuid;
    q.problem_size = r->problem_size;
    q.n_problem_size = r->n_problem_size;
    const cutune_cache_record *found = NULL;
    cutune_match match;
    if (cutune_cache_lookup(c, &q, &found, &match) != CUTUNE_OK ||
        match != CUTUNE_MATCH_EXACT || !same_record(found, r)) {
        fprintf(stderr, "appended, not found: %s\n", cutune_cache_errmsg(c));
        abort();
    }
    cutune_cache_close(c);
}

/* Returns 0 when `j` is not a record. */
static int decode_record(json_t *j)
{
    cutune_cache_record r, back;
    cutune_param_value *config, *baseline, *config2, *baseline2;
    long long *size, *size2;
    if (cutune__plan_record_decode(j, &r, &config, &baseline, &size)) {
        json_t *again = cutune__plan_record_encode(&r);
        if (!again ||
            !cutune__plan_record_decode(again, &back, &config2, &baseline2,
                                        &size2) ||
            !same_record(&r, &back))
            abort();
        free(config2);
        free(baseline2);
        free(size2);
        json_decref(again);
        append_and_find(&r);
    } else {
        r.problem_name = NULL;
    }
    free(config);
    free(baseline);
    free(size);
    return r.problem_name != NULL;
}

static void decode_message(const uint8_t *data, size_t size)
{
    json_t *j = json_loadb((const char *)data, size, 0, NULL);
    if (!j)
        return;
    decode_record(j);
    if (json_object_get(j, "record") &&
        !decode_record(json_object_get(j, "record")))
        cutune_fuzz_set_message("a malformed record");
    cutune_device device;
    (void)cutune__plan_device_decode(json_object_get(j, "device"), &device);
    size_t task;
    if (cutune__plan_message_task(j, 16, &task) && task >= 16)
        abort();
    char hash[32];
    int beats;
    if (cutune__plan_message_hello(j, hash, sizeof hash, &beats) &&
        strlen(hash) >= sizeof hash)
        abort();
    cutune_status status;
    const char *why;
    if (cutune__plan_message_fail(j, &status, &why) &&
        (status == CUTUNE_OK || !why))
        abort();
    json_decref(j);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    cutune_fuzz_set_message("");
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    walk_plan(text);
    free(text);
    decode_message(data, size);
    return 0;
}
