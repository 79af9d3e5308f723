/* Reading T4 results onto a problem's search space.
 *
 * The whole file is decompressed into memory and parsed with jansson: the
 * largest published T4 files are a few tens of MB as text, and replay needs
 * every entry anyway.
 */
/* timegm() */
#define _DEFAULT_SOURCE
#define _POSIX_C_SOURCE 200809L

#include "t4.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>
#include <zlib.h>

#include "expr/none.h"
#include "inflate.h"
#include "problem.h"
#include "stats.h"
#include "strategy/strategy.h"
#include "t4_energy.h"
#include "util.h"

/* Factor from the file's time unit to milliseconds; 0 when unknown. The
 * published files spell it "miliseconds". */
static double unit_to_ms(const char *unit)
{
    static const struct {
        const char *name;
        double factor;
    } units[] = {{"milliseconds", 1.0},
                 {"miliseconds", 1.0},
                 {"ms", 1.0},
                 {"seconds", 1e3},
                 {"s", 1e3},
                 {"microseconds", 1e-3},
                 {"us", 1e-3},
                 {"nanoseconds", 1e-6},
                 {"ns", 1e-6}};
    for (size_t i = 0; i < sizeof units / sizeof *units; i++)
        if (strcmp(unit, units[i].name) == 0)
            return units[i].factor;
    return 0.0;
}

int cutune__t4_outcome_from_str(const char *invalidity, cutune_outcome *out)
{
    static const struct {
        const char *name;
        cutune_outcome outcome;
    } names[] = {{"correct", CUTUNE_OUTCOME_CORRECT},
                 {"compile", CUTUNE_OUTCOME_COMPILE},
                 {"runtime", CUTUNE_OUTCOME_RUNTIME},
                 {"correctness", CUTUNE_OUTCOME_CORRECTNESS},
                 {"timeout", CUTUNE_OUTCOME_TIMEOUT},
                 {"resources", CUTUNE_OUTCOME_RESOURCES}};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (strcmp(invalidity, names[i].name) == 0) {
            *out = names[i].outcome;
            return 1;
        }
    /* "constraints" (the configuration broke the problem's restrictions)
     * and anything newer: the configuration did not give a usable time,
     * which is what RUNTIME means to a strategy. */
    *out = CUTUNE_OUTCOME_RUNTIME;
    return 0;
}

/* Index of the value of parameter `param` that the JSON value names, or
 * CUTUNE__NONE. Numbers compare as Python compares them (128 == 128.0); a
 * string also matches a value whose text it is, because some writers put
 * every value in quotes. */
static size_t find_value(const cutune_problem *p, size_t param, json_t *j)
{
    cutune__value v = {0};
    if (json_is_integer(j)) {
        v.type = CUTUNE__V_INT;
        v.u.i = json_integer_value(j);
    } else if (json_is_real(j)) {
        v.type = CUTUNE__V_FLOAT;
        v.u.f = json_real_value(j);
    } else if (json_is_boolean(j)) {
        v.type = CUTUNE__V_BOOL;
        v.u.i = json_is_true(j);
    } else if (json_is_string(j)) {
        v.type = CUTUNE__V_STR;
        v.u.s = (char *)json_string_value(j); /* borrowed, never cleared */
    } else {
        return CUTUNE__NONE;
    }
    size_t n = p->param_value_counts[param];
    for (size_t k = 0; k < n; k++)
        if (cutune__value_equal(&v, &p->param_values[param][k]))
            return k;
    if (v.type == CUTUNE__V_STR)
        for (size_t k = 0; k < n; k++)
            if (strcmp(v.u.s, p->value_texts[param][k]) == 0)
                return k;
    return CUTUNE__NONE;
}

static int json_number(json_t *j, double *out)
{
    if (json_is_integer(j)) {
        *out = (double)json_integer_value(j);
        return 1;
    }
    if (json_is_real(j)) {
        *out = json_real_value(j);
        return 1;
    }
    return 0;
}

/* The recorded "time" measurement, for results that have no runtimes. */
static double measured_time(json_t *res)
{
    json_t *m = json_object_get(res, "measurements");
    size_t i;
    json_t *e;
    json_array_foreach(m, i, e)
    {
        const char *name = json_string_value(json_object_get(e, "name"));
        double v;
        if (name && strcmp(name, "time") == 0 &&
            json_number(json_object_get(e, "value"), &v))
            return v;
    }
    return NAN;
}

/* The numeric measurements besides "time", energy and power (read by
 * cutune__t4_read_energy) into the entry; -1 when
 * memory ran out. */
static int extra_measurements(json_t *res, cutune__t4_entry *e)
{
    json_t *m = json_object_get(res, "measurements");
    size_t n = json_array_size(m);
    if (n == 0)
        return 0;
    e->extra_names = calloc(n, sizeof *e->extra_names);
    e->extra_values = calloc(n, sizeof *e->extra_values);
    if (!e->extra_names || !e->extra_values)
        return -1;
    size_t i;
    json_t *it;
    json_array_foreach(m, i, it)
    {
        const char *name = json_string_value(json_object_get(it, "name"));
        double v;
        if (!name || strcmp(name, "time") == 0 ||
            cutune__t4_is_energy_name(name) ||
            !json_number(json_object_get(it, "value"), &v))
            continue;
        if (!(e->extra_names[e->n_extra] = strdup(name)))
            return -1;
        e->extra_values[e->n_extra++] = v;
    }
    return 0;
}

/* "2023-12-22 09:54:05.502007+00:00" (or with 'T', or 'Z'), as seconds
 * since the Unix epoch; NAN when the text is not such a time. */
static double parse_timestamp(const char *text)
{
    struct tm tm = {0};
    int used = 0;
    char sep;
    if (!text ||
        sscanf(text, "%4d-%2d-%2d%c%2d:%2d:%2d%n", &tm.tm_year, &tm.tm_mon,
               &tm.tm_mday, &sep, &tm.tm_hour, &tm.tm_min, &tm.tm_sec,
               &used) != 7 ||
        (sep != ' ' && sep != 'T'))
        return NAN;
    tm.tm_year -= 1900;
    tm.tm_mon -= 1;
    double t = (double)timegm(&tm);
    const char *rest = text + used;
    if (*rest == '.') {
        char *end;
        t += strtod(rest, &end);
        rest = end;
    }
    int zh, zm;
    if ((*rest == '+' || *rest == '-') &&
        sscanf(rest + 1, "%2d:%2d", &zh, &zm) == 2)
        t -= (*rest == '+' ? 1 : -1) * (zh * 3600.0 + zm * 60.0);
    return t;
}

/* A result's configuration as value indices into cfg; *inside is 0 when a
 * value is not among its parameter's. */
static cutune_status load_configuration(const char *path,
                                        const cutune_problem *p, json_t *conf,
                                        size_t i, uint32_t *cfg, int *inside,
                                        char *err, size_t errlen)
{
    /* Every parameter must be named, and nothing else: a file with other
     * names was recorded for a different problem. */
    if (json_object_size(conf) != p->n_params) {
        const char *key;
        json_t *val;
        json_object_foreach(conf, key, val)
        {
            if (cutune__problem_find_param(p, key) == CUTUNE__NONE)
                return cutune__errf(err, errlen, CUTUNE_ERR_PARSE,
                                    "%s: results[%zu].configuration.%s: the "
                                    "problem has no such parameter",
                                    path, i, key);
        }
    }
    *inside = 1;
    for (size_t k = 0; k < p->n_params; k++) {
        json_t *v = json_object_get(conf, p->param_names[k]);
        if (!v)
            return cutune__errf(err, errlen, CUTUNE_ERR_PARSE,
                                "%s: results[%zu].configuration.%s: missing",
                                path, i, p->param_names[k]);
        size_t idx = find_value(p, k, v);
        if (idx == CUTUNE__NONE)
            *inside = 0;
        else
            cfg[k] = (uint32_t)idx;
    }
    return CUTUNE_OK;
}

/* Result i's times.runtimes into e (none where absent or null). */
static cutune_status read_runtimes(const char *path, json_t *times, size_t i,
                                   double to_ms, cutune__t4_entry *e,
                                   char *err, size_t errlen)
{
    json_t *rt = json_object_get(times, "runtimes");
    if (rt && !json_is_null(rt)) {
        if (!json_is_array(rt))
            return cutune__errf(err, errlen, CUTUNE_ERR_PARSE,
                                "%s: results[%zu].times.runtimes: expected an "
                                "array",
                                path, i);
        size_t n = json_array_size(rt);
        e->runtimes = malloc((n ? n : 1) * sizeof *e->runtimes);
        if (!e->runtimes)
            return cutune__errf(err, errlen, CUTUNE_ERR_NO_MEMORY,
                                "out of memory");
        for (size_t k = 0; k < n; k++) {
            double r;
            if (!json_number(json_array_get(rt, k), &r))
                return cutune__errf(err, errlen, CUTUNE_ERR_PARSE,
                                    "%s: results[%zu].times.runtimes[%zu]: "
                                    "expected a number",
                                    path, i, k);
            e->runtimes[k] = r * to_ms;
            e->n_runtimes = k + 1;
            if (!(e->runtimes[k] > 0) || !isfinite(e->runtimes[k]))
                return cutune__errf(
                    err, errlen, CUTUNE_ERR_PARSE,
                    "%s: results[%zu].times.runtimes[%zu]: %g is "
                    "not a time (a positive finite number)",
                    path, i, k, r);
        }
    }
    return CUTUNE_OK;
}

static cutune_status load_entry(const char *path, const cutune_problem *p,
                                json_t *res, size_t i, double to_ms,
                                uint32_t *cfg, cutune__t4 *t4, char *err,
                                size_t errlen)
{
    cutune__t4_entry *e = &t4->entries[i];
    e->config_index = CUTUNE__NONE;
    e->time_ms = INFINITY;
    e->energy_j = e->power_w = NAN;
    if (!json_is_object(res))
        return cutune__errf(err, errlen, CUTUNE_ERR_PARSE,
                            "%s: results[%zu]: expected an object", path, i);
    json_t *conf = json_object_get(res, "configuration");
    if (!json_is_object(conf))
        return cutune__errf(err, errlen, CUTUNE_ERR_PARSE,
                            "%s: results[%zu].configuration: missing", path,
                            i);
    int inside = 0;
    cutune_status st =
        load_configuration(path, p, conf, i, cfg, &inside, err, errlen);
    if (st)
        return st;
    if (inside && !cutune__space_index_of(p->space, cfg, &e->config_index))
        e->config_index = CUTUNE__NONE;
    if (e->config_index == CUTUNE__NONE)
        t4->n_outside++;

    json_t *inv = json_object_get(res, "invalidity");
    if (!json_is_string(inv))
        return cutune__errf(err, errlen, CUTUNE_ERR_PARSE,
                            "%s: results[%zu].invalidity: missing", path, i);
    /* cutune's finer reason, where it wrote one, says more than the
     * schema's enum ("constraints" for RESOURCES). */
    const char *finer =
        json_string_value(json_object_get(res, "cutune_invalidity"));
    if (!(finer && cutune__t4_outcome_from_str(finer, &e->outcome)) &&
        !cutune__t4_outcome_from_str(json_string_value(inv), &e->outcome))
        t4->n_other_invalidity++;

    json_t *times = json_object_get(res, "times");
    if (times && !json_is_object(times))
        return cutune__errf(err, errlen, CUTUNE_ERR_PARSE,
                            "%s: results[%zu].times: expected an object", path,
                            i);
    double c;
    if (json_number(json_object_get(times, "compilation"), &c)) {
        e->compile_ms = c * to_ms;
        if (!(e->compile_ms >= 0) || !isfinite(e->compile_ms))
            return cutune__errf(
                err, errlen, CUTUNE_ERR_PARSE,
                "%s: results[%zu].times.compilation: %g is not a "
                "duration (a finite number, 0 or more)",
                path, i, c);
    }
    static const char *const others[] = {"framework", "search_algorithm",
                                         "validation"};
    for (size_t k = 0; k < 3; k++)
        if (json_number(json_object_get(times, others[k]), &c))
            e->other_ms += c * to_ms;
    e->timestamp =
        parse_timestamp(json_string_value(json_object_get(res, "timestamp")));
    if (extra_measurements(res, e) != 0)
        return cutune__errf(err, errlen, CUTUNE_ERR_NO_MEMORY,
                            "out of memory");
    st = read_runtimes(path, times, i, to_ms, e, err, errlen);
    if (st)
        return st;
    if (e->outcome == CUTUNE_OUTCOME_CORRECT) {
        /* A tune ranks by the median, so every replay of the file does;
         * a Kernel Tuner cache by its own objective, so that its best is
         * Kernel Tuner's. */
        if (e->n_runtimes > 0 && !t4->from_kernel_tuner) {
            e->time_ms = cutune__median(e->runtimes, e->n_runtimes);
            if (isnan(e->time_ms))
                return cutune__errf(err, errlen, CUTUNE_ERR_NO_MEMORY,
                                    "out of memory");
        } else {
            double t = measured_time(res);
            if (!isnan(t) && (!(t > 0) || !isfinite(t * to_ms)))
                return cutune__errf(
                    err, errlen, CUTUNE_ERR_PARSE,
                    "%s: results[%zu].measurements: time %g is "
                    "not a time (a positive finite number)",
                    path, i, t);
            if (isnan(t))
                return cutune__errf(
                    err, errlen, CUTUNE_ERR_PARSE,
                    "%s: results[%zu]: invalidity \"correct\" with no time "
                    "(neither times.runtimes nor a measurements time); "
                    "refused rather than guessed",
                    path, i);
            e->time_ms = t * to_ms;
        }
    }
    return cutune__t4_read_energy(path, res, i, e, err, errlen);
}

/* The metadata's strings that cutune reads back; -1 when memory ran
 * out. A field of another type than cutune writes counts as absent. The
 * device and the size are also read under the names a Kernel Tuner cache
 * gives them (device_name, problem_size: kt_cache.c keeps them so). */
static int read_meta(json_t *metadata, cutune__t4_meta *m)
{
    json_t *dev = json_object_get(metadata, "device");
    json_t *prob = json_object_get(metadata, "problem");
    const struct {
        json_t *from;
        const char *key;
        const char **to;
    } strings[] = {{dev, "name", &m->device_name},
                   {dev, "uuid", &m->device_uuid},
                   {prob, "name", &m->problem_name},
                   {prob, "source_hash", &m->source_hash},
                   {metadata, "strategy", &m->strategy},
                   {metadata, "cutune_version", &m->cutune_version}};
    for (size_t k = 0; k < sizeof strings / sizeof *strings; k++) {
        json_t *j = json_object_get(strings[k].from, strings[k].key);
        const char *v = json_string_value(j);
        if (v && *v && !(*strings[k].to = strdup(v)))
            return -1;
    }
    const char *kt_dev =
        json_string_value(json_object_get(metadata, "device_name"));
    if (!m->device_name && kt_dev && *kt_dev &&
        !(m->device_name = strdup(kt_dev)))
        return -1;
    json_t *size = json_object_get(prob, "size");
    if (!json_is_array(size))
        size = json_object_get(metadata, "problem_size");
    size_t n = json_array_size(size);
    long long *dims = n ? malloc(n * sizeof *dims) : NULL;
    if (n && !dims)
        return -1;
    for (size_t k = 0; k < n; k++) {
        json_t *d = json_array_get(size, k);
        /* Not a list of positive whole numbers: no size it can be
         * compared with, not a broken file. */
        if (!json_is_integer(d) || json_integer_value(d) <= 0) {
            free(dims);
            return 0;
        }
        dims[k] = json_integer_value(d);
    }
    m->problem_size = dims;
    m->n_problem_size = n;
    return 0;
}

cutune_status cutune__t4_load(const char *path, const cutune_problem *problem,
                              cutune__t4 **out, char *err, size_t errlen)
{
    if (!out)
        return CUTUNE_ERR_INVALID_ARGUMENT;
    *out = NULL;
    if (!path || !problem || !problem->space)
        return cutune__errf(err, errlen, CUTUNE_ERR_INVALID_ARGUMENT,
                            "no T4 file or no problem given");
    char *text = NULL;
    size_t len = 0;
    cutune_status st = cutune__read_input(path, 0, &text, &len, err, errlen);
    if (st)
        return st;
    json_error_t jerr;
    json_t *root = json_loadb(text, len, 0, &jerr);
    if (!root)
        root = cutune__kt_cache_reopen(text, len);
    free(text);
    if (!root)
        return cutune__errf(err, errlen, CUTUNE_ERR_PARSE,
                            "%s: line %d, column %d: %s", path, jerr.line,
                            jerr.column, jerr.text);
    int from_kernel_tuner = cutune__kt_cache_is(root);
    if (from_kernel_tuner) {
        json_t *kt = root;
        st = cutune__kt_cache_to_t4(path, kt, problem, &root, err, errlen);
        json_decref(kt);
        if (st)
            return st;
    }
    cutune__t4 *t4 = calloc(1, sizeof *t4);
    uint32_t *cfg =
        malloc((problem->n_params ? problem->n_params : 1) * sizeof *cfg);
    json_t *results = json_object_get(root, "results");
    double to_ms = 1.0;
    if (!t4 || !cfg) {
        st = cutune__errf(err, errlen, CUTUNE_ERR_NO_MEMORY, "out of memory");
        goto done;
    }
    if (!json_is_array(results)) {
        st = cutune__errf(err, errlen, CUTUNE_ERR_PARSE,
                          "%s: results: missing (is this a T4 file or a "
                          "Kernel Tuner cache file?)",
                          path);
        goto done;
    }
    t4->from_kernel_tuner = from_kernel_tuner;
    json_t *unit =
        json_object_get(json_object_get(root, "metadata"), "timeunit");
    if (read_meta(json_object_get(root, "metadata"), &t4->meta) != 0) {
        st = cutune__errf(err, errlen, CUTUNE_ERR_NO_MEMORY, "out of memory");
        goto done;
    }
    if (json_is_string(unit) &&
        (to_ms = unit_to_ms(json_string_value(unit))) == 0.0) {
        st = cutune__errf(err, errlen, CUTUNE_ERR_UNSUPPORTED,
                          "%s: metadata.timeunit: '%s' is not a known unit",
                          path, json_string_value(unit));
        goto done;
    }
    size_t n = json_array_size(results);
    t4->entries = calloc(n ? n : 1, sizeof *t4->entries);
    if (!t4->entries) {
        st = cutune__errf(err, errlen, CUTUNE_ERR_NO_MEMORY, "out of memory");
        goto done;
    }
    for (size_t i = 0; i < n; i++) {
        t4->n_entries = i + 1;
        st = load_entry(path, problem, json_array_get(results, i), i, to_ms,
                        cfg, t4, err, errlen);
        if (st)
            goto done;
    }
done:
    free(cfg);
    json_decref(root);
    if (st) {
        cutune__t4_free(t4);
        return st;
    }
    *out = t4;
    return CUTUNE_OK;
}

void cutune__t4_free(cutune__t4 *t4)
{
    if (!t4)
        return;
    for (size_t i = 0; i < t4->n_entries; i++) {
        cutune__t4_entry *e = &t4->entries[i];
        free(e->runtimes);
        for (size_t k = 0; k < e->n_extra; k++)
            free(e->extra_names[k]);
        free(e->extra_names);
        free(e->extra_values);
    }
    free(t4->entries);
    free((char *)t4->meta.device_name);
    free((char *)t4->meta.device_uuid);
    free((char *)t4->meta.problem_name);
    free((char *)t4->meta.source_hash);
    free((char *)t4->meta.strategy);
    free((char *)t4->meta.cutune_version);
    free((long long *)t4->meta.problem_size);
    free(t4);
}

/* "4096x4096" into buf. */
static void size_text(const long long *size, size_t n, char *buf, size_t len)
{
    size_t at = 0;
    buf[0] = '\0';
    for (size_t k = 0; k < n && at < len; k++) {
        int w = snprintf(buf + at, len - at, "%s%lld", k ? "x" : "", size[k]);
        if (w < 0)
            break;
        at += (size_t)w;
    }
}

/* Appends one difference, "; " between them, to what[0..*at). */
__attribute__((format(printf, 4, 5))) static void
differ(char *what, size_t len, size_t *at, const char *fmt, ...)
{
    if (*at + 3 >= len)
        return;
    if (*at) {
        memcpy(what + *at, "; ", 3);
        *at += 2;
    }
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(what + *at, len - *at, fmt, ap);
    va_end(ap);
    if (w > 0)
        *at = *at + (size_t)w < len ? *at + (size_t)w : len - 1;
}

int cutune__t4_mismatch(const cutune__t4 *t4, const char *path,
                        const cutune_problem *p, char *msg, size_t len)
{
    const cutune__t4_meta *m = &t4->meta;
    char what[768] = "", mine[128], theirs[128];
    size_t at = 0;
    if (m->problem_name && p->name && strcmp(m->problem_name, p->name))
        differ(what, sizeof what, &at, "problem '%s' (here '%s')",
               m->problem_name, p->name);
    size_t n = m->n_problem_size;
    const long long *dims_here = p->problem_size;
    if (n && p->n_problem_size &&
        (n != p->n_problem_size ||
         memcmp(m->problem_size, dims_here, n * sizeof *dims_here))) {
        size_text(m->problem_size, n, theirs, sizeof theirs);
        size_text(p->problem_size, p->n_problem_size, mine, sizeof mine);
        differ(what, sizeof what, &at, "size %s (here %s)", theirs, mine);
    }
    if (m->source_hash && p->source_hash[0] &&
        strcmp(m->source_hash, p->source_hash))
        differ(what, sizeof what, &at, "kernel source hash %s (here %s)",
               m->source_hash, p->source_hash);
    msg[0] = '\0';
    if (!at)
        return 0;
    snprintf(msg, len,
             "%s: recorded for a different problem from %s: %s; its "
             "times are used as they are",
             path, p->origin, what);
    return 1;
}

/* ------------------------------------------------------------------ */
/* Writing                                                             */

static json_t *value_json(const cutune__value *v)
{
    switch (v->type) {
    case CUTUNE__V_INT: return json_integer(v->u.i);
    case CUTUNE__V_FLOAT: return json_real(v->u.f);
    case CUTUNE__V_BOOL: return json_boolean(v->u.i);
    case CUTUNE__V_STR: return json_string(v->u.s);
    default: {
        /* Lists are not parameter values T1 produces; keep their text. */
        char *text = cutune__value_to_text(v);
        json_t *j = text ? json_string(text) : NULL;
        free(text);
        return j;
    }
    }
}

/* A JSON number for a finite value, else null (JSON has no NaN). */
static json_t *number(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

/* Each child is attached to `res` as soon as it exists (jansson's _new
 * calls take the reference even when they fail), so on any failure
 * releasing `res` releases everything. */
static json_t *record_json(const cutune_problem *p, const cutune__t4_record *r,
                           const char *objective)
{
    json_t *res = json_object();
    json_t *conf = json_object();
    json_t *times = json_object();
    json_t *runtimes = json_array();
    json_t *meas = json_array();
    if (!res || !conf || !times || !runtimes || !meas ||
        json_object_set_new(res, "configuration", conf)) {
        if (res && conf && times && runtimes && meas)
            conf = NULL; /* taken by the failed set */
        json_decref(res);
        json_decref(conf);
        json_decref(times);
        json_decref(runtimes);
        json_decref(meas);
        return NULL;
    }
    int bad = 0;
    if (r->timestamp > 0) {
        char stamp[64];
        time_t secs = (time_t)r->timestamp;
        struct tm tm;
        if (gmtime_r(&secs, &tm) &&
            strftime(stamp, sizeof stamp, "%Y-%m-%d %H:%M:%S+00:00", &tm))
            bad |= json_object_set_new(res, "timestamp", json_string(stamp));
    }
    const uint32_t *cfg = cutune__space_config(p->space, r->config_index);
    for (size_t k = 0; !bad && k < p->n_params; k++)
        bad |= json_object_set_new(conf, p->param_names[k],
                                   value_json(&p->param_values[k][cfg[k]]));
    if (!bad) {
        /* The schema types these as numbers: an unknown one is left
         * out rather than written null. */
        const struct {
            const char *key;
            double ms;
        } spent[] = {{"compilation", r->compile_ms},
                     {"framework", r->framework_ms},
                     {"search_algorithm", r->search_ms},
                     {"validation", r->validation_ms}};
        bad |= json_object_set_new(res, "times", times);
        for (size_t k = 0; k < sizeof spent / sizeof *spent; k++)
            if (isfinite(spent[k].ms))
                bad |= json_object_set_new(times, spent[k].key,
                                           json_real(spent[k].ms));
        bad |= json_object_set_new(times, "runtimes", runtimes);
    } else {
        json_decref(times);
        json_decref(runtimes);
    }
    for (size_t k = 0; !bad && k < r->n_runtimes; k++)
        bad |= json_array_append_new(runtimes, number(r->runtimes[k]));
    int correct = r->outcome == CUTUNE_OUTCOME_CORRECT;
    if (!bad) {
        /* The schema's enum has no RESOURCES: Kernel Tuner files a
         * configuration the device cannot launch as given under
         * "constraints"; cutune's own field keeps the finer reason. */
        int resources = r->outcome == CUTUNE_OUTCOME_RESOURCES;
        bad |= json_object_set_new(
            res, "invalidity",
            json_string(resources ? "constraints"
                                  : cutune_outcome_str(r->outcome)));
        if (resources)
            bad |= json_object_set_new(
                res, "cutune_invalidity",
                json_string(cutune_outcome_str(r->outcome)));
        bad |= json_object_set_new(res, "correctness", json_integer(correct));
        bad |= json_object_set_new(res, "measurements", meas);
        if (correct && isfinite(r->time_ms))
            bad |= json_array_append_new(
                meas, json_pack("{s:s, s:o, s:s}", "name", "time", "value",
                                number(r->time_ms), "unit", "ms"));
        if (!bad && correct)
            bad |= cutune__t4_write_energy(meas, r->energy_j, r->power_w);
        for (size_t k = 0; !bad && k < r->n_extra; k++)
            if (isfinite(r->extra_values[k]))
                bad |= json_array_append_new(
                    meas,
                    json_pack("{s:s, s:f, s:s}", "name", r->extra_names[k],
                              "value", r->extra_values[k], "unit",
                              r->extra_units[k]));
        bad |= json_object_set_new(res, "objectives",
                                   json_pack("[s]", objective));
    } else {
        json_decref(meas);
    }
    if (bad) {
        json_decref(res);
        return NULL;
    }
    return res;
}

/* Sets key to a string where there is one; nonzero on failure. */
static int set_text(json_t *obj, const char *key, const char *text)
{
    return text && *text ? json_object_set_new(obj, key, json_string(text))
                         : 0;
}

/* The file's `metadata`: the time unit, then what `m` knows (the schema
 * allows any further key). NULL when memory ran out. */
static json_t *meta_json(const cutune__t4_meta *m)
{
    json_t *o = json_pack("{s:s}", "timeunit", "milliseconds");
    if (!o || !m)
        return o;
    json_t *dev = json_object(), *prob = json_object(), *size = json_array();
    int bad = json_object_set_new(o, "device", dev) |
              json_object_set_new(o, "problem", prob) |
              json_object_set_new(prob, "size", size);
    bad |= set_text(dev, "name", m->device_name);
    if (!bad && (m->cc_major || m->cc_minor)) {
        char cc[32];
        snprintf(cc, sizeof cc, "%d.%d", m->cc_major, m->cc_minor);
        bad |= json_object_set_new(dev, "compute_capability", json_string(cc));
    }
    bad |= set_text(dev, "uuid", m->device_uuid);
    bad |= set_text(prob, "name", m->problem_name);
    for (size_t k = 0; !bad && k < m->n_problem_size; k++)
        bad |= json_array_append_new(size, json_integer(m->problem_size[k]));
    bad |= set_text(prob, "source_hash", m->source_hash);
    if (!bad && m->strategy) {
        /* JSON integers are signed 64-bit: a larger seed as text. */
        char seed[32];
        snprintf(seed, sizeof seed, "%llu", (unsigned long long)m->seed);
        bad |= set_text(o, "strategy", m->strategy) |
               json_object_set_new(o, "seed",
                                   m->seed <= INT64_MAX
                                       ? json_integer((json_int_t)m->seed)
                                       : json_string(seed));
        json_t *budget = json_object();
        bad |= json_object_set_new(o, "budget", budget);
        if (!bad && m->max_evals)
            bad |= json_object_set_new(budget, "evaluations",
                                       json_integer((json_int_t)m->max_evals));
        if (!bad && m->max_seconds > 0)
            bad |= json_object_set_new(budget, "seconds",
                                       json_real(m->max_seconds));
        if (!bad && m->fraction > 0)
            bad |= json_object_set_new(budget, "fraction",
                                       json_real(m->fraction));
    }
    bad |= set_text(o, "cutune_version", m->cutune_version);
    if (bad) {
        json_decref(o);
        return NULL;
    }
    return o;
}

/* `text` gzip-compressed, its length in *len (in: the text's); NULL when
 * memory ran out. Compressed in memory, so that the file is written as
 * every output is (fsio.h). */
static char *gzip_text(const char *text, size_t *len)
{
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    if (deflateInit2(&zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
                     Z_DEFAULT_STRATEGY) != Z_OK)
        return NULL;
    size_t cap = deflateBound(&zs, (uLong)*len) + 64, done = 0;
    char *out = malloc(cap);
    int zrc = Z_OK;
    const size_t step = 1u << 30; /* what one avail_in can hold */
    while (out && zrc == Z_OK) {
        size_t in_left = *len - done;
        zs.next_in = (Bytef *)(text + done);
        zs.avail_in = (uInt)(in_left > step ? step : in_left);
        zs.next_out = (Bytef *)out + zs.total_out;
        size_t out_left = cap - zs.total_out;
        zs.avail_out = (uInt)(out_left > step ? step : out_left);
        uInt given = zs.avail_in;
        zrc = deflate(&zs, in_left > step ? Z_NO_FLUSH : Z_FINISH);
        done += given - zs.avail_in;
    }
    size_t total = zs.total_out;
    deflateEnd(&zs);
    if (zrc != Z_STREAM_END) {
        free(out);
        return NULL;
    }
    *len = total;
    return out;
}

cutune_status cutune__t4_write(const char *path, const cutune_problem *problem,
                               const cutune__t4_meta *meta,
                               const cutune__t4_record *records, size_t n,
                               char *err, size_t errlen)
{
    if (!path || !problem || !problem->space || (n && !records))
        return cutune__errf(err, errlen, CUTUNE_ERR_INVALID_ARGUMENT,
                            "no T4 path, problem or results given");
    size_t space = cutune__space_size(problem->space);
    for (size_t i = 0; i < n; i++)
        if (records[i].config_index >= space)
            return cutune__errf(err, errlen, CUTUNE_ERR_INVALID_ARGUMENT,
                                "result %zu: configuration %zu is not in the "
                                "space",
                                i, records[i].config_index);
    json_t *results = json_array();
    json_t *root = json_pack("{s:o, s:s}", "metadata", meta_json(meta),
                             "schema_version", "1.0.0");
    if (!results || !root)
        goto oom;
    for (size_t i = 0; i < n; i++)
        if (json_array_append_new(results, record_json(problem, &records[i],
                                                       meta && meta->objective
                                                           ? meta->objective
                                                           : "time")))
            goto oom;
    if (json_object_set_new(root, "results", results)) {
        results = NULL;
        goto oom;
    }
    results = NULL;
    char *text = json_dumps(root, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
    json_decref(root);
    if (!text)
        return cutune__errf(err, errlen, CUTUNE_ERR_NO_MEMORY,
                            "out of memory");
    size_t len = strlen(text);
    text[len++] = '\n';
    size_t plen = strlen(path);
    char *packed = NULL;
    if (plen > 3 && strcmp(path + plen - 3, ".gz") == 0 &&
        !(packed = gzip_text(text, &len))) {
        free(text);
        return cutune__errf(err, errlen, CUTUNE_ERR_NO_MEMORY,
                            "out of memory");
    }
    char why[1024];
    int rc = cutune__output_write(path, packed ? packed : text, len, why,
                                  sizeof why);
    int no_memory = rc != 0 && errno == ENOMEM;
    free(packed);
    free(text);
    if (rc)
        return cutune__errf(err, errlen,
                            no_memory ? CUTUNE_ERR_NO_MEMORY : CUTUNE_ERR_IO,
                            "%s", why);
    return CUTUNE_OK;
oom:
    json_decref(results);
    json_decref(root);
    return cutune__errf(err, errlen, CUTUNE_ERR_NO_MEMORY, "out of memory");
}

double cutune__t4_entry_try_seconds(const cutune__t4_entry *e)
{
    return cutune__search_try_seconds(
        e->compile_ms,
        e->outcome == CUTUNE_OUTCOME_CORRECT ? e->time_ms : NAN);
}

double cutune__t4_entry_measure_seconds(const cutune__t4_entry *e)
{
    double ms = e->other_ms > 0 ? e->other_ms : 0;
    for (size_t k = 0; k < e->n_runtimes; k++)
        if (isfinite(e->runtimes[k]))
            ms += e->runtimes[k];
    return ms / 1000.0;
}

double cutune__t4_entry_seconds(const cutune__t4_entry *e)
{
    double c = e->compile_ms;
    for (size_t k = 0; k < e->n_runtimes; k++)
        if (isfinite(e->runtimes[k]))
            c += e->runtimes[k];
    return c / 1000.0;
}
