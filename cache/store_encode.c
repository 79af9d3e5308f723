/* Checks a record against the format and encodes it as one JSON line. */
#include "store_internal.h"

/* ------------------------------------------------------------------ */
/* Writing a record                                                     */

static cutune_status check_params(cutune_cache *cache,
                                  const cutune_param_value *params, size_t n,
                                  const char *field)
{
    if (n > 0 && !params)
        return cutune__cache_fail(cache, CUTUNE_ERR_INVALID_ARGUMENT,
                                  "record field %s is NULL with %zu entries",
                                  field, n);
    for (size_t i = 0; i < n; i++) {
        const char *name = params[i].name, *value = params[i].value;
        if (!name || !name[0])
            return cutune__cache_fail(
                cache, CUTUNE_ERR_INVALID_ARGUMENT,
                "record field %s: parameter %zu has no name", field, i);
        if (!value)
            return cutune__cache_fail(
                cache, CUTUNE_ERR_INVALID_ARGUMENT,
                "record field %s: parameter %s has no value", field, name);
        if (!cutune__store_utf8_valid(name) ||
            !cutune__store_utf8_valid(value))
            return cutune__cache_fail(
                cache, CUTUNE_ERR_INVALID_ARGUMENT,
                "record field %s: parameter %zu is not valid UTF-8", field, i);
        for (size_t j = 0; j < i; j++)
            if (strcmp(params[j].name, name) == 0)
                return cutune__cache_fail(
                    cache, CUTUNE_ERR_INVALID_ARGUMENT,
                    "record field %s names parameter %s twice", field, name);
    }
    return CUTUNE_OK;
}

/* Everything the encoder could trip on, so that it can only run out of
 * memory, and everything a reader would reject, so that what is written
 * reads back. */
cutune_status cutune__store_check_record(cutune_cache *cache,
                                         const cutune_cache_record *r)
{
    const cutune_device *d = &r->device;
    if (!r->problem_name || !r->problem_name[0])
        return cutune__cache_fail(cache, CUTUNE_ERR_INVALID_ARGUMENT,
                                  "record has no problem name");
    if (!cutune__store_fits(d->name, sizeof d->name) ||
        !cutune__store_fits(d->uuid, sizeof d->uuid) ||
        !cutune__store_fits(d->nvrtc_version, sizeof d->nvrtc_version) ||
        !cutune__store_fits(d->cutune_version, sizeof d->cutune_version))
        return cutune__cache_fail(
            cache, CUTUNE_ERR_INVALID_ARGUMENT,
            "record's device has a string without its NUL");
    if (d->cc_major < 0 || d->cc_minor < 0)
        return cutune__cache_fail(
            cache, CUTUNE_ERR_INVALID_ARGUMENT,
            "record's device has a negative compute capability");

    const char *texts[][2] = {
        {"device.name", d->name},
        {"device.uuid", d->uuid},
        {"device.nvrtc", d->nvrtc_version},
        {"device.cutune", d->cutune_version},
        {"problem.name", r->problem_name},
        {"problem.source_hash", r->source_hash},
        {"problem.compiler_options", r->compiler_options},
        {"strategy", r->strategy},
    };
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++)
        if (texts[i][1] && !cutune__store_utf8_valid(texts[i][1]))
            return cutune__cache_fail(cache, CUTUNE_ERR_INVALID_ARGUMENT,
                                      "record field %s is not valid UTF-8",
                                      texts[i][0]);

    if (r->n_problem_size > 0 && !r->problem_size)
        return cutune__cache_fail(
            cache, CUTUNE_ERR_INVALID_ARGUMENT,
            "record field problem.problem_size is NULL with %zu "
            "dimensions",
            r->n_problem_size);
    cutune_status status =
        check_params(cache, r->config, r->n_config, "config");
    if (status == CUTUNE_OK)
        status =
            check_params(cache, r->baseline, r->n_baseline, "baseline.config");
    if (status != CUTUNE_OK)
        return status;

    const struct {
        const char *field;
        double value;
    } reals[] = {
        {"stats.time_ms", r->time_ms},
        {"stats.time_min_ms", r->time_min_ms},
        {"stats.time_stddev_ms", r->time_stddev_ms},
        {"stats.gbs", r->gbs},
        {"tune_seconds", r->tune_seconds},
    };
    for (size_t i = 0; i < sizeof reals / sizeof reals[0]; i++)
        if (!isfinite(reals[i].value))
            return cutune__cache_fail(
                cache, CUTUNE_ERR_INVALID_ARGUMENT,
                "record field %s is not a finite number (JSON has "
                "no NaN or infinity)",
                reals[i].field);
    /* Readers skip a line whose time is not positive; a negative baseline
     * would win the cross-device default. A baseline of 0 is unknown (a
     * simulated record); NaN is "no baseline": the start configuration
     * failed, and the line says null. */
    if (!(r->time_ms > 0))
        return cutune__cache_fail(cache, CUTUNE_ERR_INVALID_ARGUMENT,
                                  "record field stats.time_ms is %g; a "
                                  "time is above 0",
                                  r->time_ms);
    if (!isnan(r->baseline_ms) &&
        !(r->baseline_ms >= 0 && isfinite(r->baseline_ms)))
        return cutune__cache_fail(cache, CUTUNE_ERR_INVALID_ARGUMENT,
                                  "record field baseline.time_ms is %g; a "
                                  "time is 0 or above (NaN: no baseline)",
                                  r->baseline_ms);
    if (strcmp(cutune_objective_str(r->objective), "unknown") == 0)
        return cutune__cache_fail(cache, CUTUNE_ERR_INVALID_ARGUMENT,
                                  "record field objective is %d, none of "
                                  "%s",
                                  (int)r->objective, CUTUNE_OBJECTIVE_NAMES);
    if (!isnan(r->energy_j) && !(r->energy_j >= 0 && isfinite(r->energy_j)))
        return cutune__cache_fail(cache, CUTUNE_ERR_INVALID_ARGUMENT,
                                  "record field stats.energy_j is %g; an "
                                  "energy is 0 or above (0 or NaN: not "
                                  "measured)",
                                  r->energy_j);
    if ((unsigned long long)r->runs > (unsigned long long)LLONG_MAX ||
        (unsigned long long)r->evaluations > (unsigned long long)LLONG_MAX)
        return cutune__cache_fail(
            cache, CUTUNE_ERR_INVALID_ARGUMENT,
            "record's run or evaluation count is too large");
    if (r->timestamp < TIMESTAMP_MIN || r->timestamp > TIMESTAMP_MAX)
        return cutune__cache_fail(
            cache, CUTUNE_ERR_INVALID_ARGUMENT,
            "record timestamp %lld is outside years 0000-9999", r->timestamp);
    return CUTUNE_OK;
}

/* Builds the JSON tree; after a failed put the tree under construction is
 * never touched again, so the half-built objects need no bookkeeping. */
typedef struct encoder {
    int failed;
} encoder;

/* Steals `value` (like json_object_set_new), whatever happens. */
static void put(encoder *e, json_t *object, const char *key, json_t *value)
{
    if (e->failed || !value) {
        json_decref(value);
        e->failed = 1;
        return;
    }
    if (json_object_set_new(object, key, value) != 0)
        e->failed = 1;
}

static json_t *text(const char *s)
{
    return json_string(s ? s : "");
}

static json_t *params_object(const cutune_param_value *params, size_t n)
{
    json_t *obj = json_object();
    for (size_t i = 0; obj && i < n; i++) {
        if (json_object_set_new(obj, params[i].name,
                                json_string(params[i].value)) != 0) {
            json_decref(obj);
            obj = NULL;
        }
    }
    return obj;
}

static json_t *size_array(const long long *size, size_t n)
{
    json_t *arr = json_array();
    for (size_t i = 0; arr && i < n; i++) {
        if (json_array_append_new(arr, json_integer(size[i])) != 0) {
            json_decref(arr);
            arr = NULL;
        }
    }
    return arr;
}

/* On success *line holds "\n<json>\n" (malloc'd, *len bytes): the leading
 * newline is written only after a torn line. */
cutune_status cutune__store_encode_record(cutune_cache *cache,
                                          const cutune_cache_record *r,
                                          char **line, size_t *len)
{
    const cutune_device *d = &r->device;
    encoder e = {0};
    char cc[32], when[48];
    snprintf(cc, sizeof cc, "%d.%d", d->cc_major, d->cc_minor);
    cutune__store_format_timestamp(r->timestamp, when, sizeof when);

    json_t *root = json_object();
    json_t *dev = json_object();
    json_t *problem = json_object();
    json_t *stats = json_object();
    json_t *baseline = json_object();
    /* Children are filled before being attached, so a failure frees each
     * exactly once through put(). */
    put(&e, dev, "name", text(d->name));
    put(&e, dev, "uuid", text(d->uuid));
    put(&e, dev, "cc", text(cc));
    put(&e, dev, "sm_count", json_integer(d->sm_count));
    put(&e, dev, "l2_bytes", json_integer(d->l2_bytes));
    put(&e, dev, "memory_bytes", json_integer(d->memory_bytes));
    put(&e, dev, "driver", json_integer(d->driver_version));
    put(&e, dev, "nvrtc", text(d->nvrtc_version));
    put(&e, dev, "cutune", text(d->cutune_version));
    put(&e, dev, "simulated", json_boolean(d->simulated != 0));

    put(&e, problem, "name", text(r->problem_name));
    put(&e, problem, "source_hash", text(r->source_hash));
    put(&e, problem, "problem_size",
        size_array(r->problem_size, r->n_problem_size));
    put(&e, problem, "compiler_options", text(r->compiler_options));

    put(&e, stats, "time_ms", json_real(r->time_ms));
    put(&e, stats, "time_min_ms", json_real(r->time_min_ms));
    put(&e, stats, "time_stddev_ms", json_real(r->time_stddev_ms));
    put(&e, stats, "runs", json_integer((json_int_t)r->runs));
    put(&e, stats, "gbs", json_real(r->gbs));
    if (r->energy_j > 0 && isfinite(r->energy_j))
        put(&e, stats, "energy_j", json_real(r->energy_j));

    put(&e, baseline, "config", params_object(r->baseline, r->n_baseline));
    put(&e, baseline, "time_ms",
        isnan(r->baseline_ms) ? json_null() : json_real(r->baseline_ms));

    int timed = r->objective == CUTUNE_OBJECTIVE_TIME;
    put(&e, root, "cutune_cache",
        json_integer(timed ? CUTUNE__CACHE_FORMAT_TIME
                           : CUTUNE__CACHE_FORMAT));
    put(&e, root, "device", dev);
    put(&e, root, "problem", problem);
    put(&e, root, "config", params_object(r->config, r->n_config));
    put(&e, root, "stats", stats);
    put(&e, root, "baseline", baseline);
    put(&e, root, "strategy", text(r->strategy));
    put(&e, root, "evaluations", json_integer((json_int_t)r->evaluations));
    put(&e, root, "tune_seconds", json_real(r->tune_seconds));
    put(&e, root, "timestamp", text(when));
    if (!timed)
        put(&e, root, "objective", text(cutune_objective_str(r->objective)));

    char *json = NULL;
    if (!e.failed)
        json = json_dumps(root, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(root);
    if (!json)
        return cutune__store_fail_memory(cache);

    size_t n = strlen(json);
    char *buf = malloc(n + 2);
    if (!buf) {
        free(json);
        return cutune__store_fail_memory(cache);
    }
    buf[0] = '\n';
    memcpy(buf + 1, json, n);
    buf[n + 1] = '\n';
    free(json);
    *line = buf;
    *len = n + 2;
    return CUTUNE_OK;
}
