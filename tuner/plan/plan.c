/* Reading a tuning plan: a JSON object whose "items" each name a problem,
 * optionally its sizes and devices; flattened into tasks (item x size x
 * device) at load time. docs/plans.md has the format. */
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan_run.h"
#include "util.h"

#define PLAN_MAX_DIMS   8
#define PLAN_MAX_DEVICE 1024
/* Far more than hours of GPU time each could fill, and few enough that
 * flattening a hostile file (6.4 M tasks from 400 KB) is refused before
 * it takes gigabytes. */
#define PLAN_MAX_TASKS 100000

void cutune__plan_error(cutune_plan *plan, const char *fmt, ...)
{
    if (!fmt) {
        free(plan->errmsg);
        plan->errmsg = NULL;
        return;
    }
    va_list ap;
    va_start(ap, fmt);
    cutune__vfail(&plan->errmsg, CUTUNE_ERR_INVALID_ARGUMENT, NULL, fmt, ap);
    va_end(ap);
}

/* One item as read, before it is flattened into tasks. */
typedef struct plan_item {
    const char *problem;
    json_t *sizes; /* NULL: the problem's own size */
    size_t n_devices;
    int devices[64];
} plan_item;

/* Relative T1 paths are the plan's: resolve them against its folder. */
static char *resolve_problem(const char *problem, const char *base_dir)
{
    size_t n = strlen(problem);
    int is_file = strchr(problem, '/') != NULL ||
                  (n > 5 && strcmp(problem + n - 5, ".json") == 0);
    if (!is_file || problem[0] == '/' || !base_dir || !base_dir[0])
        return strdup(problem);
    size_t len = strlen(base_dir) + 1 + n + 1;
    char *path = malloc(len);
    if (path)
        snprintf(path, len, "%s/%s", base_dir, problem);
    return path;
}

static int read_sizes(cutune_plan *plan, size_t i, json_t *sizes)
{
    if (!json_is_array(sizes) || json_array_size(sizes) == 0) {
        cutune__plan_error(
            plan,
            "item %zu: \"sizes\" is not a non-empty list of sizes "
            "such as [[1024], [4096]]",
            i);
        return 0;
    }
    for (size_t s = 0; s < json_array_size(sizes); s++) {
        json_t *size = json_array_get(sizes, s);
        size_t dims = json_array_size(size);
        int ok = json_is_array(size) && dims > 0 && dims <= PLAN_MAX_DIMS;
        for (size_t d = 0; ok && d < dims; d++) {
            json_t *v = json_array_get(size, d);
            ok = json_is_integer(v) && json_integer_value(v) > 0;
        }
        if (!ok) {
            cutune__plan_error(
                plan,
                "item %zu: \"sizes\"[%zu] is not a list of 1 to %d "
                "positive integers",
                i, s, PLAN_MAX_DIMS);
            return 0;
        }
    }
    return 1;
}

static int read_devices(cutune_plan *plan, size_t i, json_t *devices,
                        plan_item *item)
{
    size_t n = json_array_size(devices);
    if (!json_is_array(devices) || n == 0 ||
        n > sizeof item->devices / sizeof *item->devices) {
        cutune__plan_error(
            plan,
            "item %zu: \"devices\" is not a list of 1 to 64 device "
            "ordinals",
            i);
        return 0;
    }
    for (size_t d = 0; d < n; d++) {
        json_t *v = json_array_get(devices, d);
        if (!json_is_integer(v) || json_integer_value(v) < 0 ||
            json_integer_value(v) > PLAN_MAX_DEVICE) {
            cutune__plan_error(
                plan,
                "item %zu: \"devices\"[%zu] is not a device ordinal "
                "(0 to %d)",
                i, d, PLAN_MAX_DEVICE);
            return 0;
        }
        item->devices[d] = (int)json_integer_value(v);
        for (size_t k = 0; k < d; k++)
            if (item->devices[k] == item->devices[d]) {
                cutune__plan_error(
                    plan,
                    "item %zu: \"devices\"[%zu] repeats device %d "
                    "(each device once; a task per device)",
                    i, d, item->devices[d]);
                return 0;
            }
    }
    item->n_devices = n;
    return 1;
}

static int read_item(cutune_plan *plan, size_t i, json_t *obj,
                     const int *default_devices, size_t n_default,
                     plan_item *item)
{
    const char *key;
    json_t *value;
    if (!json_is_object(obj)) {
        cutune__plan_error(plan, "item %zu: not an object with \"problem\"",
                           i);
        return 0;
    }
    json_object_foreach(obj, key, value)
    {
        if (strcmp(key, "problem") && strcmp(key, "sizes") &&
            strcmp(key, "devices")) {
            cutune__plan_error(plan,
                               "item %zu: unknown field \"%s\" (an item has "
                               "\"problem\", \"sizes\" and \"devices\")",
                               i, key);
            return 0;
        }
    }
    json_t *problem = json_object_get(obj, "problem");
    if (!json_is_string(problem) || !json_string_value(problem)[0]) {
        cutune__plan_error(
            plan,
            "item %zu: \"problem\" is missing or not a template "
            "name or T1 path",
            i);
        return 0;
    }
    item->problem = json_string_value(problem);
    item->sizes = json_object_get(obj, "sizes");
    if (item->sizes && !read_sizes(plan, i, item->sizes))
        return 0;
    json_t *devices = json_object_get(obj, "devices");
    if (devices)
        return read_devices(plan, i, devices, item);
    item->n_devices = n_default ? n_default : 1;
    for (size_t d = 0; d < item->n_devices; d++)
        item->devices[d] = n_default ? default_devices[d] : 0;
    return 1;
}

static size_t item_size_count(const plan_item *item)
{
    return item->sizes ? json_array_size(item->sizes) : 1;
}

/* Flattens the items into tasks: sizes outside, devices inside, so the
 * devices of one size are neighbours. */
static int make_tasks(cutune_plan *plan, const plan_item *items,
                      size_t n_items, const char *base_dir)
{
    size_t n_tasks = 0, n_values = 0;
    for (size_t i = 0; i < n_items; i++) {
        n_tasks += item_size_count(&items[i]) * items[i].n_devices;
        n_values +=
            item_size_count(&items[i]) * items[i].n_devices * PLAN_MAX_DIMS;
    }
    plan->tasks = calloc(n_tasks ? n_tasks : 1, sizeof *plan->tasks);
    plan->sizes = calloc(n_values ? n_values : 1, sizeof *plan->sizes);
    plan->items = calloc(n_items ? n_items : 1, sizeof *plan->items);
    if (!plan->tasks || !plan->sizes || !plan->items)
        return 0;
    plan->n_items = n_items;
    long long *next = plan->sizes;
    for (size_t i = 0; i < n_items; i++) {
        if (!(plan->items[i] = resolve_problem(items[i].problem, base_dir)))
            return 0;
        for (size_t s = 0; s < item_size_count(&items[i]); s++) {
            json_t *size =
                items[i].sizes ? json_array_get(items[i].sizes, s) : NULL;
            for (size_t d = 0; d < items[i].n_devices; d++) {
                cutune_plan_task *t = &plan->tasks[plan->n_tasks++];
                t->item = i;
                t->problem = plan->items[i];
                t->device = items[i].devices[d];
                t->message = "";
                if (!size)
                    continue;
                t->size = next;
                t->n_size = json_array_size(size);
                for (size_t k = 0; k < t->n_size; k++)
                    next[k] = json_integer_value(json_array_get(size, k));
                next += t->n_size;
            }
        }
    }
    return 1;
}

static cutune_status parse_root(cutune_plan *plan, json_t *root,
                                const char *base_dir,
                                const int *default_devices, size_t n_default)
{
    const char *key;
    json_t *value;
    json_object_foreach(root, key, value)
    {
        if (strcmp(key, "items") != 0) {
            cutune__plan_error(
                plan, "unknown field \"%s\" (a plan has \"items\")", key);
            return CUTUNE_ERR_PARSE;
        }
    }
    json_t *items =
        json_is_object(root) ? json_object_get(root, "items") : root;
    if (!json_is_array(items) || json_array_size(items) == 0) {
        cutune__plan_error(
            plan, "a plan is an object whose \"items\" is a non-empty "
                  "list");
        return CUTUNE_ERR_PARSE;
    }
    size_t n = json_array_size(items);
    plan_item *read = calloc(n, sizeof *read);
    if (!read)
        return CUTUNE_ERR_NO_MEMORY;
    cutune_status st = CUTUNE_OK;
    size_t n_tasks = 0;
    for (size_t i = 0; i < n && st == CUTUNE_OK; i++) {
        if (!read_item(plan, i, json_array_get(items, i), default_devices,
                       n_default, &read[i]))
            st = CUTUNE_ERR_PARSE;
        else if ((n_tasks += item_size_count(&read[i]) * read[i].n_devices) >
                 PLAN_MAX_TASKS) {
            cutune__plan_error(
                plan,
                "item %zu: the plan has more than %d tasks (items x "
                "sizes x devices); split it",
                i, PLAN_MAX_TASKS);
            st = CUTUNE_ERR_LIMIT;
        }
    }
    if (st == CUTUNE_OK && !make_tasks(plan, read, n, base_dir)) {
        cutune__plan_error(plan, "out of memory");
        st = CUTUNE_ERR_NO_MEMORY;
    }
    free(read);
    return st;
}

cutune_status cutune_plan_parse(const char *json_text, const char *base_dir,
                                const int *default_devices, size_t n_default,
                                cutune_plan **out)
{
    if (!out)
        return CUTUNE_ERR_INVALID_ARGUMENT;
    cutune_plan *plan = *out = calloc(1, sizeof *plan);
    if (!plan)
        return CUTUNE_ERR_NO_MEMORY;
    for (size_t d = 0; d < n_default; d++)
        if (!default_devices || default_devices[d] < 0 ||
            default_devices[d] > PLAN_MAX_DEVICE || n_default > 64) {
            cutune__plan_error(plan, "default devices: not device ordinals");
            return CUTUNE_ERR_INVALID_ARGUMENT;
        }
    if (!json_text) {
        cutune__plan_error(plan, "no plan text");
        return CUTUNE_ERR_INVALID_ARGUMENT;
    }
    json_error_t err;
    /* A key given twice: which one the author meant is unknown. */
    json_t *root = json_loads(json_text, JSON_REJECT_DUPLICATES, &err);
    if (!root) {
        cutune__plan_error(plan, "line %d: %s", err.line, err.text);
        return CUTUNE_ERR_PARSE;
    }
    cutune_status st =
        parse_root(plan, root, base_dir, default_devices, n_default);
    json_decref(root);
    return st;
}

static char *read_file(const char *path, size_t limit)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *text = malloc(limit + 1);
    size_t n = text ? fread(text, 1, limit, f) : 0;
    int ok = text && !ferror(f) && n < limit;
    fclose(f);
    if (!ok) {
        free(text);
        return NULL;
    }
    text[n] = '\0';
    return text;
}

cutune_status cutune_plan_load(const char *path, const int *default_devices,
                               size_t n_default, cutune_plan **out)
{
    if (!out)
        return CUTUNE_ERR_INVALID_ARGUMENT;
    *out = NULL;
    if (!path)
        return CUTUNE_ERR_INVALID_ARGUMENT;
    char *text = read_file(path, 16u << 20);
    char *dir = strdup(path);
    if (!dir) {
        free(text);
        return CUTUNE_ERR_NO_MEMORY;
    }
    char *slash = strrchr(dir, '/');
    if (slash)
        *slash = '\0';
    cutune_status st = cutune_plan_parse(text ? text : "",
                                         slash ? (dir[0] ? dir : "/") : NULL,
                                         default_devices, n_default, out);
    if (!text && *out) {
        cutune_plan_destroy(*out);
        *out = calloc(1, sizeof **out);
        if (*out)
            cutune__plan_error(
                *out, "%s: cannot read the plan (or it is over 16 MiB)", path);
        st = *out ? CUTUNE_ERR_IO : CUTUNE_ERR_NO_MEMORY;
    } else if (st != CUTUNE_OK && *out) {
        char *msg = (*out)->errmsg;
        (*out)->errmsg = NULL;
        cutune__plan_error(*out, "%s: %s", path, msg ? msg : "");
        free(msg);
    }
    free(dir);
    free(text);
    return st;
}

void cutune_plan_destroy(cutune_plan *plan)
{
    if (!plan)
        return;
    for (size_t t = 0; t < plan->n_tasks; t++)
        if (plan->tasks[t].message && plan->tasks[t].message[0])
            free((char *)plan->tasks[t].message);
    for (size_t i = 0; i < plan->n_items; i++)
        free(plan->items[i]);
    free(plan->items);
    free(plan->tasks);
    free(plan->sizes);
    free(plan->errmsg);
    free(plan);
}

const char *cutune_plan_errmsg(const cutune_plan *plan)
{
    return !plan ? "out of memory" : plan->errmsg ? plan->errmsg : "";
}

size_t cutune_plan_item_count(const cutune_plan *plan)
{
    return plan ? plan->n_items : 0;
}

size_t cutune_plan_task_count(const cutune_plan *plan)
{
    return plan ? plan->n_tasks : 0;
}

const cutune_plan_task *cutune_plan_task_at(const cutune_plan *plan,
                                            size_t index)
{
    return plan && index < plan->n_tasks ? &plan->tasks[index] : NULL;
}

void cutune__plan_fail(cutune_plan_task *task, cutune_status status,
                       const char *message)
{
    if (task->message && task->message[0])
        free((char *)task->message);
    char *copy =
        strdup(message && message[0] ? message : cutune_status_str(status));
    task->message = copy ? copy : "";
    task->state = CUTUNE_PLAN_FAILED;
    task->status = status;
}
