/* Decodes one JSON line into a record, accepting only what the format
 * allows: a line that is not a valid record is reported, never read
 * approximately. */
#include "store_internal.h"

/* ------------------------------------------------------------------ */
/* Reading records                                                      */

void cutune__store_entry_free(cache_entry *e)
{
    json_decref(e->root);
    free(e->problem_size);
    free(e->config);
    free(e->baseline);
    memset(e, 0, sizeof *e);
}

static int get_string(json_t *obj, const char *key, const char **out)
{
    json_t *v = json_object_get(obj, key);
    if (!json_is_string(v))
        return 0;
    *out = json_string_value(v);
    return 1;
}

/* Too long for the device's array is invalid rather than truncated. */
static int get_string_into(json_t *obj, const char *key, char *buf,
                           size_t size)
{
    const char *s;
    if (!get_string(obj, key, &s))
        return 0;
    size_t n = strlen(s);
    if (n >= size)
        return 0;
    memcpy(buf, s, n + 1);
    return 1;
}

static int get_int(json_t *obj, const char *key, long long min, long long max,
                   long long *out)
{
    json_t *v = json_object_get(obj, key);
    if (!json_is_integer(v))
        return 0;
    long long x = (long long)json_integer_value(v);
    if (x < min || x > max)
        return 0;
    *out = x;
    return 1;
}

static int get_real(json_t *obj, const char *key, double *out)
{
    json_t *v = json_object_get(obj, key);
    if (!json_is_number(v))
        return 0;
    *out = json_number_value(v);
    return isfinite(*out);
}

/* A baseline time of 0 or above (0: unknown, in simulated records), or
 * null when the start configuration failed (NaN in the record). */
static int get_baseline_time(json_t *baseline, double *out)
{
    if (json_is_null(json_object_get(baseline, "time_ms"))) {
        *out = NAN;
        return 1;
    }
    return get_real(baseline, "time_ms", out) && *out >= 0;
}

static int get_params(json_t *obj, cutune_param_value **out, size_t *count)
{
    if (!json_is_object(obj))
        return DECODE_INVALID;
    size_t n = json_object_size(obj);
    *count = n;
    if (n == 0)
        return DECODE_OK;
    cutune_param_value *params = malloc(n * sizeof *params);
    if (!params)
        return DECODE_NO_MEMORY;
    *out = params;
    size_t i = 0;
    const char *key;
    json_t *value;
    json_object_foreach(obj, key, value)
    {
        if (!key[0] || !json_is_string(value))
            return DECODE_INVALID;
        params[i].name = key;
        params[i].value = json_string_value(value);
        i++;
    }
    return DECODE_OK;
}

static int decode_device(json_t *dev, cutune_device *d)
{
    const char *cc;
    long long sm, l2, mem, driver;
    if (!json_is_object(dev) ||
        !get_string_into(dev, "name", d->name, sizeof d->name) ||
        !get_string_into(dev, "uuid", d->uuid, sizeof d->uuid) ||
        !get_string(dev, "cc", &cc) ||
        !cutune__store_parse_cc(cc, &d->cc_major, &d->cc_minor) ||
        !get_int(dev, "sm_count", INT_MIN, INT_MAX, &sm) ||
        !get_int(dev, "l2_bytes", LLONG_MIN, LLONG_MAX, &l2) ||
        !get_int(dev, "memory_bytes", LLONG_MIN, LLONG_MAX, &mem) ||
        !get_int(dev, "driver", INT_MIN, INT_MAX, &driver) ||
        !get_string_into(dev, "nvrtc", d->nvrtc_version,
                         sizeof d->nvrtc_version) ||
        !get_string_into(dev, "cutune", d->cutune_version,
                         sizeof d->cutune_version))
        return 0;
    json_t *sim = json_object_get(dev, "simulated");
    if (!json_is_boolean(sim))
        return 0;
    d->sm_count = (int)sm;
    d->l2_bytes = l2;
    d->memory_bytes = mem;
    d->driver_version = (int)driver;
    d->simulated = json_is_true(sim);
    return 1;
}

/* Version 1 records were all tuned for time; version 2 names its
 * objective, and one it does not name, or names wrongly, is no record. The
 * winner's energy, where the tune measured it, is in stats. */
static int decode_objective(json_t *root, long long version,
                            cutune_cache_record *r)
{
    const char *name;
    double energy;
    r->energy_j = get_real(json_object_get(root, "stats"), "energy_j", &energy)
                      ? energy
                      : NAN;
    if (!isnan(r->energy_j) && !(r->energy_j >= 0))
        return 0;
    r->objective = CUTUNE_OBJECTIVE_TIME;
    if (version == CUTUNE__CACHE_FORMAT_TIME)
        return 1;
    return get_string(root, "objective", &name) &&
           cutune_objective_parse(name, &r->objective) == 0;
}

/* Takes `root` in every case. Anything short of a complete record of a
 * known version is DECODE_INVALID: a line is read whole or not at all. */
int cutune__store_decode_entry(json_t *root, cache_entry *e)
{
    memset(e, 0, sizeof *e);
    e->root = root;
    cutune_cache_record *r = &e->record;
    long long version, runs, evals;
    const char *when;
    int rc = DECODE_INVALID;

    if (!json_is_object(root) ||
        !get_int(root, "cutune_cache", CUTUNE__CACHE_FORMAT_TIME,
                 CUTUNE__CACHE_FORMAT, &version) ||
        !decode_objective(root, version, r))
        goto out;
    if (!decode_device(json_object_get(root, "device"), &r->device))
        goto out;

    json_t *problem = json_object_get(root, "problem");
    json_t *sizes = json_object_get(problem, "problem_size");
    if (!get_string(problem, "name", &r->problem_name) ||
        !r->problem_name[0] ||
        !get_string(problem, "source_hash", &r->source_hash) ||
        !get_string(problem, "compiler_options", &r->compiler_options) ||
        !json_is_array(sizes))
        goto out;
    r->n_problem_size = json_array_size(sizes);
    if (r->n_problem_size > 0) {
        e->problem_size = malloc(r->n_problem_size * sizeof *e->problem_size);
        if (!e->problem_size) {
            rc = DECODE_NO_MEMORY;
            goto out;
        }
        for (size_t i = 0; i < r->n_problem_size; i++) {
            json_t *v = json_array_get(sizes, i);
            if (!json_is_integer(v))
                goto out;
            e->problem_size[i] = (long long)json_integer_value(v);
        }
        r->problem_size = e->problem_size;
    }

    rc = get_params(json_object_get(root, "config"), &e->config, &r->n_config);
    if (rc != DECODE_OK)
        goto out;
    r->config = e->config;

    json_t *baseline = json_object_get(root, "baseline");
    rc = get_params(json_object_get(baseline, "config"), &e->baseline,
                    &r->n_baseline);
    if (rc != DECODE_OK)
        goto out;
    r->baseline = e->baseline;
    rc = DECODE_INVALID;

    json_t *stats = json_object_get(root, "stats");
    if (!get_real(stats, "time_ms", &r->time_ms) || !(r->time_ms > 0) ||
        !get_real(stats, "time_min_ms", &r->time_min_ms) ||
        !get_real(stats, "time_stddev_ms", &r->time_stddev_ms) ||
        !get_int(stats, "runs", 0,
                 SIZE_MAX < LLONG_MAX ? (long long)SIZE_MAX : LLONG_MAX,
                 &runs) ||
        !get_real(stats, "gbs", &r->gbs) ||
        !get_baseline_time(baseline, &r->baseline_ms) ||
        !get_string(root, "strategy", &r->strategy) ||
        !get_int(root, "evaluations", 0,
                 SIZE_MAX < LLONG_MAX ? (long long)SIZE_MAX : LLONG_MAX,
                 &evals) ||
        !get_real(root, "tune_seconds", &r->tune_seconds) ||
        !get_string(root, "timestamp", &when) ||
        !cutune__store_parse_timestamp(when, &r->timestamp))
        goto out;
    r->runs = (size_t)runs;
    r->evaluations = (size_t)evals;
    return DECODE_OK;

out:
    cutune__store_entry_free(e);
    return rc;
}
