/* A cache record as a JSON object, the form in which it travels from an
 * MPI rank to rank 0. Its own small encoding: the cache's line format is
 * not public, and rank 0 re-encodes through cutune_cache_append anyway. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan_run.h"
#include "util.h"

json_t *cutune__plan_device_encode(const cutune_device *d)
{
    return json_pack(
        "{s:s, s:s, s:i, s:i, s:i, s:I, s:I, s:i, s:s, s:s, "
        "s:i}",
        "name", d->name, "uuid", d->uuid, "cc_major", d->cc_major, "cc_minor",
        d->cc_minor, "sm_count", d->sm_count, "l2_bytes",
        (json_int_t)d->l2_bytes, "memory_bytes", (json_int_t)d->memory_bytes,
        "driver_version", d->driver_version, "nvrtc_version", d->nvrtc_version,
        "cutune_version", d->cutune_version, "simulated", d->simulated);
}

int cutune__plan_device_decode(json_t *o, cutune_device *d)
{
    const char *name, *uuid, *nvrtc, *version;
    json_int_t l2, memory;
    memset(d, 0, sizeof *d);
    if (json_unpack(o,
                    "{s:s, s:s, s:i, s:i, s:i, s:I, s:I, s:i, s:s, s:s, "
                    "s:i}",
                    "name", &name, "uuid", &uuid, "cc_major", &d->cc_major,
                    "cc_minor", &d->cc_minor, "sm_count", &d->sm_count,
                    "l2_bytes", &l2, "memory_bytes", &memory, "driver_version",
                    &d->driver_version, "nvrtc_version", &nvrtc,
                    "cutune_version", &version, "simulated", &d->simulated))
        return 0;
    snprintf(d->name, sizeof d->name, "%s", name);
    snprintf(d->uuid, sizeof d->uuid, "%s", uuid);
    snprintf(d->nvrtc_version, sizeof d->nvrtc_version, "%s", nvrtc);
    snprintf(d->cutune_version, sizeof d->cutune_version, "%s", version);
    d->l2_bytes = l2;
    d->memory_bytes = memory;
    return 1;
}

static json_t *config_encode(const cutune_param_value *v, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; a && i < n; i++)
        json_array_append_new(a, json_pack("[s, s]", v[i].name, v[i].value));
    return a;
}

static int config_decode(json_t *a, cutune_param_value **out, size_t *n)
{
    *n = json_array_size(a);
    *out = calloc(*n ? *n : 1, sizeof **out);
    if (!json_is_array(a) || !*out)
        return 0;
    for (size_t i = 0; i < *n; i++)
        if (json_unpack(json_array_get(a, i), "[s, s]", &(*out)[i].name,
                        &(*out)[i].value))
            return 0;
    return 1;
}

/* The times as numbers, a time that is not finite (a replay without
 * recorded times, a baseline that failed) as null. */
static const char *const time_keys[] = {"time_ms",        "time_min_ms",
                                        "time_stddev_ms", "gbs",
                                        "baseline_ms",    "tune_seconds"};

static double *time_field(cutune_cache_record *r, size_t k)
{
    double *fields[] = {&r->time_ms, &r->time_min_ms, &r->time_stddev_ms,
                        &r->gbs,     &r->baseline_ms, &r->tune_seconds};
    return fields[k];
}

json_t *cutune__plan_record_encode(const cutune_cache_record *r)
{
    json_t *size = json_array();
    for (size_t d = 0; size && d < r->n_problem_size; d++)
        json_array_append_new(size, json_integer(r->problem_size[d]));
    json_t *o = json_pack(
        "{s:o, s:s, s:s, s:o, s:s, s:o, s:I, s:o, s:s, s:I, s:I}", "device",
        cutune__plan_device_encode(&r->device), "problem_name",
        r->problem_name, "source_hash", r->source_hash ? r->source_hash : "",
        "problem_size", size, "compiler_options",
        r->compiler_options ? r->compiler_options : "", "config",
        config_encode(r->config, r->n_config), "runs", (json_int_t)r->runs,
        "baseline", config_encode(r->baseline, r->n_baseline), "strategy",
        r->strategy ? r->strategy : "", "evaluations",
        (json_int_t)r->evaluations, "timestamp", (json_int_t)r->timestamp);
    cutune_cache_record copy = *r;
    for (size_t k = 0; o && k < sizeof time_keys / sizeof *time_keys; k++) {
        double v = *time_field(&copy, k);
        json_object_set_new(o, time_keys[k],
                            isfinite(v) ? json_real(v) : json_null());
    }
    if (o) {
        json_object_set_new(o, "objective",
                            json_string(cutune_objective_str(r->objective)));
        json_object_set_new(o, "energy_j",
                            isfinite(r->energy_j) && r->energy_j > 0
                                ? json_real(r->energy_j)
                                : json_null());
    }
    return o;
}

int cutune__plan_record_decode(json_t *o, cutune_cache_record *r,
                               cutune_param_value **config,
                               cutune_param_value **baseline, long long **size)
{
    json_t *device, *ps, *cfg, *base;
    json_int_t runs, evaluations, timestamp;
    memset(r, 0, sizeof *r);
    *config = *baseline = NULL;
    *size = NULL;
    if (json_unpack(o,
                    "{s:o, s:s, s:s, s:o, s:s, s:o, s:I, s:o, s:s, s:I, "
                    "s:I}",
                    "device", &device, "problem_name", &r->problem_name,
                    "source_hash", &r->source_hash, "problem_size", &ps,
                    "compiler_options", &r->compiler_options, "config", &cfg,
                    "runs", &runs, "baseline", &base, "strategy", &r->strategy,
                    "evaluations", &evaluations, "timestamp", &timestamp) ||
        !cutune__plan_device_decode(device, &r->device) ||
        !json_is_array(ps) || runs < 0 || evaluations < 0)
        return 0;
    for (size_t k = 0; k < sizeof time_keys / sizeof *time_keys; k++) {
        json_t *v = json_object_get(o, time_keys[k]);
        if (!json_is_number(v) && !json_is_null(v))
            return 0;
        *time_field(r, k) = json_is_null(v) ? NAN : json_number_value(v);
    }
    /* A rank of a cutune before objectives sends none: time. */
    json_t *objective = json_object_get(o, "objective");
    json_t *energy = json_object_get(o, "energy_j");
    if ((objective && cutune_objective_parse(json_string_value(objective),
                                             &r->objective) != 0) ||
        (energy && !json_is_number(energy) && !json_is_null(energy)))
        return 0;
    r->energy_j = json_is_number(energy) ? json_number_value(energy) : NAN;
    r->runs = (size_t)runs;
    r->evaluations = (size_t)evaluations;
    r->timestamp = timestamp;
    r->n_problem_size = json_array_size(ps);
    *size = calloc(r->n_problem_size ? r->n_problem_size : 1, sizeof **size);
    if (!*size)
        return 0;
    for (size_t d = 0; d < r->n_problem_size; d++) {
        json_t *v = json_array_get(ps, d);
        if (!json_is_integer(v) || json_integer_value(v) <= 0)
            return 0;
        (*size)[d] = json_integer_value(v);
    }
    r->problem_size = *size;
    if (!config_decode(cfg, config, &r->n_config) ||
        !config_decode(base, baseline, &r->n_baseline))
        return 0;
    r->config = *config;
    r->baseline = *baseline;
    return 1;
}

int cutune__plan_message_task(json_t *o, size_t n_tasks, size_t *task)
{
    json_t *v = json_object_get(o, "task");
    if (!json_is_integer(v) || json_integer_value(v) < 0 ||
        (unsigned long long)json_integer_value(v) >= n_tasks)
        return 0;
    *task = (size_t)json_integer_value(v);
    return 1;
}

int cutune__plan_message_hello(json_t *o, char *hash, size_t hash_size,
                               int *beats)
{
    const char *h = json_string_value(json_object_get(o, "hash"));
    json_t *b = json_object_get(o, "beats");
    if (!h || strlen(h) >= hash_size || !json_is_boolean(b))
        return 0;
    snprintf(hash, hash_size, "%s", h);
    *beats = json_is_true(b);
    return 1;
}

int cutune__plan_message_fail(json_t *o, cutune_status *status,
                              const char **message)
{
    json_t *st = json_object_get(o, "status");
    *message = json_string_value(json_object_get(o, "message"));
    if (!json_is_integer(st) || json_integer_value(st) < 1 ||
        json_integer_value(st) > 255 || !*message)
        return 0;
    *status = (cutune_status)json_integer_value(st);
    return 1;
}

uint64_t cutune__plan_hash(const cutune_plan *plan)
{
    uint64_t h = cutune__fnv1a64(&plan->n_tasks, sizeof plan->n_tasks);
    for (size_t t = 0; t < plan->n_tasks; t++) {
        const cutune_plan_task *task = &plan->tasks[t];
        long long fixed[3] = {(long long)task->item, task->device,
                              (long long)task->n_size};
        h = cutune__fnv1a64_continue(h, fixed, sizeof fixed);
        h = cutune__fnv1a64_continue(h, task->problem,
                                     strlen(task->problem) + 1);
        if (task->n_size)
            h = cutune__fnv1a64_continue(h, task->size,
                                         task->n_size * sizeof *task->size);
    }
    return h;
}
