/* Kernel Tuner's cache files, read wherever T4 is read.
 *
 * Kernel Tuner (`tune_kernel(..., cache="file.json")`) keeps one JSON
 * object per tuning run: `device_name`, `kernel_name`, `problem_size`,
 * `tune_params_keys` (the parameter names in order), `tune_params`,
 * `objective` and `cache`, an object keyed by the configuration's values
 * joined by commas ("128,4"). Each entry holds the parameter values by
 * name, `time` (its objective, ms: the mean of `times`), `times` (every
 * run, ms), `compile_time`, `verification_time`, `benchmark_time`,
 * `framework_time`, `strategy_time` (ms) and `timestamp`; an entry that
 * failed carries one of the strings "InvalidConfig",
 * "CompilationFailedConfig", "RuntimeFailedConfig" or "ErrorConfig" in
 * place of its time. A run that was cut short leaves the file open (no
 * closing braces, maybe a trailing comma): it is read as Kernel Tuner
 * reads it, closed.
 *
 * The file is turned into the T4 document the T4 reader takes, so that
 * everything after (placing results on the space, outcomes, units) is one
 * code path: `metadata` carries the device name and the problem size,
 * and `kernel_tuner_cache` tells the reader to rank by `time`, Kernel
 * Tuner's own objective, so that its best is Kernel Tuner's best.
 */
/* memmem() */
#define _GNU_SOURCE

#include "t4.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "expr/none.h"
#include "problem.h"
#include "util.h"

int cutune__kt_cache_is(json_t *root)
{
    return json_is_object(json_object_get(root, "cache")) &&
           json_is_array(json_object_get(root, "tune_params_keys")) &&
           !json_object_get(root, "results");
}

json_t *cutune__kt_cache_reopen(const char *text, size_t len)
{
    static const char marker[] = "\"tune_params_keys\"";
    size_t n = len;
    while (n > 0 && strchr(" \t\r\n", text[n - 1]))
        n--;
    /* Only what Kernel Tuner leaves behind: its header, and entries each
     * followed by a comma. */
    if (n == 0 || text[0] != '{' ||
        !memmem(text, n, marker, sizeof marker - 1))
        return NULL;
    if (text[n - 1] == ',')
        n--;
    char *closed = malloc(n + 4);
    if (!closed)
        return NULL;
    memcpy(closed, text, n);
    memcpy(closed + n, "}\n}", 4);
    json_t *root = json_loadb(closed, n + 3, 0, NULL);
    free(closed);
    return root;
}

static int names_param(json_t *keys, const char *key)
{
    for (size_t k = 0; k < json_array_size(keys); k++) {
        const char *name = json_string_value(json_array_get(keys, k));
        if (name && strcmp(name, key) == 0)
            return 1;
    }
    return 0;
}

/* The T4 invalidity of an entry: "correct", or the failure its error
 * string stands for (as Kernel Tuner's own T4 writer names them). */
static const char *entry_invalidity(json_t *entry, json_t *keys)
{
    static const struct {
        const char *kt;
        const char *t4;
    } errors[] = {{"CompilationFailedConfig", "compile"},
                  {"RuntimeFailedConfig", "runtime"},
                  {"InvalidConfig", "constraints"},
                  {"ErrorConfig", "runtime"}};
    const char *key;
    json_t *v;
    json_object_foreach(entry, key, v)
    {
        if (!json_is_string(v) || names_param(keys, key))
            continue;
        for (size_t i = 0; i < sizeof errors / sizeof *errors; i++)
            if (strcmp(json_string_value(v), errors[i].kt) == 0)
                return errors[i].t4;
    }
    return "correct";
}

/* The entry's configuration: each parameter's value from the entry, or
 * where the entry lacks it, from its key's comma-separated values (as
 * text, which the T4 reader matches against the values' texts). */
static json_t *entry_configuration(const char *path, const char *ckey,
                                   json_t *entry, json_t *keys, char *err,
                                   size_t errlen, cutune_status *st)
{
    json_t *conf = json_object();
    char *parts = strdup(ckey);
    size_t n = json_array_size(keys);
    char **part = calloc(n ? n : 1, sizeof *part);
    if (!conf || !parts || !part) {
        *st = cutune__errf(err, errlen, CUTUNE_ERR_NO_MEMORY, "out of memory");
        goto out;
    }
    size_t got = 0;
    for (char *save = NULL, *tok = strtok_r(parts, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save))
        if (got++ < n)
            part[got - 1] = tok;
    for (size_t k = 0; k < n; k++) {
        const char *name = json_string_value(json_array_get(keys, k));
        json_t *v = json_object_get(entry, name);
        if (!v && got != n) {
            *st = cutune__errf(err, errlen, CUTUNE_ERR_PARSE,
                               "%s: cache.\"%s\": no value of %s, and the "
                               "key has %zu values for %zu parameters",
                               path, ckey, name, got, n);
            goto out;
        }
        json_object_set_new(conf, name,
                            v ? json_incref(v) : json_string(part[k]));
    }
    free(parts);
    free(part);
    return conf;
out:
    json_decref(conf);
    free(parts);
    free(part);
    return NULL;
}

static void set_number(json_t *obj, const char *key, json_t *entry,
                       const char *from)
{
    json_t *v = json_object_get(entry, from);
    if (json_is_number(v))
        json_object_set_new(obj, key, json_real(json_number_value(v)));
}

/* One cache entry as a T4 result; NULL with *st and err set. */
static json_t *entry_result(const char *path, const char *ckey, json_t *entry,
                            json_t *keys, char *err, size_t errlen,
                            cutune_status *st)
{
    if (!json_is_object(entry)) {
        *st = cutune__errf(err, errlen, CUTUNE_ERR_PARSE,
                           "%s: cache.\"%s\": expected an object", path, ckey);
        return NULL;
    }
    json_t *conf =
        entry_configuration(path, ckey, entry, keys, err, errlen, st);
    if (!conf)
        return NULL;
    const char *invalidity = entry_invalidity(entry, keys);
    json_t *times = json_object();
    json_t *res = json_pack("{s:o, s:s, s:o}", "configuration", conf,
                            "invalidity", invalidity, "times", times);
    if (!res) {
        *st = cutune__errf(err, errlen, CUTUNE_ERR_NO_MEMORY, "out of memory");
        return NULL;
    }
    set_number(times, "compilation", entry, "compile_time");
    set_number(times, "framework", entry, "framework_time");
    set_number(times, "search_algorithm", entry, "strategy_time");
    set_number(times, "validation", entry, "verification_time");
    json_t *runs = json_object_get(entry, "times");
    if (json_is_array(runs))
        json_object_set(times, "runtimes", runs);
    json_t *stamp = json_object_get(entry, "timestamp");
    if (json_is_string(stamp))
        json_object_set(res, "timestamp", stamp);
    json_t *time = json_object_get(entry, "time");
    if (strcmp(invalidity, "correct") == 0) {
        if (!json_is_number(time) || !(json_number_value(time) > 0) ||
            !isfinite(json_number_value(time))) {
            *st = cutune__errf(err, errlen, CUTUNE_ERR_PARSE,
                               "%s: cache.\"%s\".time: expected a positive "
                               "number of milliseconds or a Kernel Tuner "
                               "error string",
                               path, ckey);
            json_decref(res);
            return NULL;
        }
        json_t *meas = json_pack("[{s:s, s:f, s:s}]", "name", "time", "value",
                                 json_number_value(time), "unit", "ms");
        json_object_set_new(res, "measurements", meas);
        /* The NVMLObserver's figures, in J per launch and W, as its T4
         * writer would give them (t4_energy.c). */
        static const char *const nvml[] = {"nvml_energy", "nvml_power"};
        for (size_t k = 0; meas && k < 2; k++) {
            json_t *v = json_object_get(entry, nvml[k]);
            if (json_is_number(v))
                json_array_append_new(meas, json_pack("{s:s, s:O, s:s}",
                                                      "name", nvml[k], "value",
                                                      v, "unit", ""));
        }
    }
    return res;
}

/* The file's problem_size: a number, or a list of numbers; a string (a
 * size that names tunables) or "callable" is no size and is left out. */
static json_t *problem_size(json_t *kt)
{
    json_t *ps = json_object_get(kt, "problem_size");
    if (json_is_integer(ps))
        return json_pack("[O]", ps);
    if (!json_is_array(ps) || json_array_size(ps) == 0)
        return NULL;
    for (size_t d = 0; d < json_array_size(ps); d++)
        if (!json_is_integer(json_array_get(ps, d)))
            return NULL;
    return json_incref(ps);
}

/* The parameters of the file are the problem's, in any order: a cache
 * of another problem is refused naming the parameter. */
static cutune_status check_keys(const char *path, json_t *keys,
                                const cutune_problem *p, char *err,
                                size_t errlen)
{
    for (size_t k = 0; k < json_array_size(keys); k++) {
        const char *name = json_string_value(json_array_get(keys, k));
        if (!name)
            return cutune__errf(err, errlen, CUTUNE_ERR_PARSE,
                                "%s: tune_params_keys[%zu]: expected a "
                                "parameter name",
                                path, k);
        if (cutune__problem_find_param(p, name) == CUTUNE__NONE)
            return cutune__errf(err, errlen, CUTUNE_ERR_PARSE,
                                "%s: tune_params_keys: '%s' is not a "
                                "parameter of %s",
                                path, name, p->name ? p->name : p->origin);
    }
    for (size_t i = 0; i < p->n_params; i++) {
        int found = 0;
        for (size_t k = 0; k < json_array_size(keys) && !found; k++)
            found = strcmp(p->param_names[i],
                           json_string_value(json_array_get(keys, k))) == 0;
        if (!found)
            return cutune__errf(err, errlen, CUTUNE_ERR_PARSE,
                                "%s: tune_params_keys: the problem's "
                                "parameter '%s' is missing",
                                path, p->param_names[i]);
    }
    return CUTUNE_OK;
}

cutune_status cutune__kt_cache_to_t4(const char *path, json_t *kt,
                                     const cutune_problem *p, json_t **out,
                                     char *err, size_t errlen)
{
    *out = NULL;
    json_t *keys = json_object_get(kt, "tune_params_keys");
    cutune_status st = check_keys(path, keys, p, err, errlen);
    if (st)
        return st;
    json_t *results = json_array();
    json_t *meta = json_pack("{s:s}", "timeunit", "milliseconds");
    json_t *root = json_pack("{s:o, s:o, s:b}", "metadata", meta, "results",
                             results, "kernel_tuner_cache", 1);
    if (!root)
        return cutune__errf(err, errlen, CUTUNE_ERR_NO_MEMORY,
                            "out of memory");
    json_t *device = json_object_get(kt, "device_name");
    if (json_is_string(device) && json_string_length(device) > 0)
        json_object_set(meta, "device_name", device);
    json_t *size = problem_size(kt);
    if (size)
        json_object_set_new(meta, "problem_size", size);
    const char *ckey;
    json_t *entry;
    json_object_foreach(json_object_get(kt, "cache"), ckey, entry)
    {
        json_t *res = entry_result(path, ckey, entry, keys, err, errlen, &st);
        if (!res || json_array_append_new(results, res)) {
            if (res)
                st = cutune__errf(err, errlen, CUTUNE_ERR_NO_MEMORY,
                                  "out of memory");
            json_decref(root);
            return st;
        }
    }
    *out = root;
    return CUTUNE_OK;
}
