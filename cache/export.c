/* Exporting the winners of a cache as a C/C++ header or as JSON.
 *
 * The export is first built as a JSON model, which the JSON format writes
 * as it is:
 *
 *   {"cutune_export":1,"cutune":"0.1.0","device":NAME or null,
 *    "problems":[{"name":"vector_add","match":"exact",
 *                 "entries":[{"device":..,"uuid":..,"cc":"9.0",
 *                             "sm_count":..,"simulated":false,
 *                             "match":"exact","problem_size":[..],
 *                             "source_hash":..,"time_ms":..,"runs":..,
 *                             "config":{"block_size_x":"128",..}}],
 *                 "default":0 or null,
 *                 "default_avg_relative":1.0,"default_devices":2}]}
 *
 * One device (the queries name it): each problem's "entries" hold the one
 * record the fallback chain found (none when it ended at "occupancy"), and
 * the header has one #define per parameter:
 *
 *   #define CUTUNE_TUNED_VECTOR_ADD 1         (0: use the occupancy API)
 *   #define CUTUNE_LEVEL_VECTOR_ADD "exact"   (cutune_match_str())
 *   #define CUTUNE_VECTOR_ADD_BLOCK_SIZE_X 128
 *
 * Many devices: "entries" holds every device's record (nearest to the
 * query's size), "default" the index of the cross-device default, and the
 * header a table inside a lookup function per problem:
 *
 *   const cutune_vector_add_config *
 *   cutune_vector_add_lookup(const char *name, int cc_major, int cc_minor,
 *                            int sm_count, int *level);
 *
 * which selects by device name (case-insensitive), then the same compute
 * capability with the nearest SM count, then the default, and stores the
 * level (cutune_match's values) in *level when level is not NULL. Values
 * are integers (long long) where every device's value is one, else
 * strings. Identifiers are the names upper-cased (macros) or as they are
 * (members), with every character other than a letter or digit made '_'.
 */
#include "store.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define EXPORT_FORMAT 1

/* ------------------------------------------------------------------ */
/* The model                                                            */

static json_t *entry_json(const cutune_cache_record *r, cutune_match match)
{
    char cc[32];
    snprintf(cc, sizeof cc, "%d.%d", r->device.cc_major, r->device.cc_minor);
    json_t *size = json_array();
    for (size_t i = 0; size && i < r->n_problem_size; i++)
        json_array_append_new(size, json_integer(r->problem_size[i]));
    json_t *config = json_object();
    for (size_t i = 0; config && i < r->n_config; i++)
        json_object_set_new(config, r->config[i].name,
                            json_string(r->config[i].value));
    return json_pack("{s:s, s:s, s:s, s:i, s:b, s:s, s:o*, s:s, s:f, s:I, "
                     "s:o*}",
                     "device", r->device.name, "uuid", r->device.uuid, "cc",
                     cc, "sm_count", r->device.sm_count, "simulated",
                     r->device.simulated != 0, "match",
                     cutune_match_str(match), "problem_size", size,
                     "source_hash", r->source_hash, "time_ms", r->time_ms,
                     "runs", (json_int_t)r->runs, "config", config);
}

/* Per problem, the devices that have a record of it (by name, in the order
 * they are first read). */
typedef struct collect_state {
    json_t *problems; /* name -> [device names] */
    json_t *order;    /* problem names in the order first read */
    int no_memory;
} collect_state;

static int collect_visit(void *user, const cutune_cache_record *r,
                         json_t *root, const char *path, size_t line)
{
    (void)root;
    (void)path;
    (void)line;
    collect_state *st = user;
    json_t *devices = json_object_get(st->problems, r->problem_name);
    if (!devices) {
        devices = json_array();
        if (!devices ||
            json_object_set_new(st->problems, r->problem_name, devices) ||
            json_array_append_new(st->order, json_string(r->problem_name))) {
            st->no_memory = 1;
            return 1;
        }
    }
    size_t i;
    json_t *name;
    json_array_foreach(devices, i, name)
    {
        if (strcasecmp(json_string_value(name), r->device.name) == 0)
            return 0;
    }
    if (json_array_append_new(devices, json_string(r->device.name))) {
        st->no_memory = 1;
        return 1;
    }
    return 0;
}

static cutune_status no_memory(cutune_cache *cache)
{
    return cutune__cache_fail(cache, CUTUNE_ERR_NO_MEMORY, "out of memory");
}

static int names_device(const cutune_cache_query *q)
{
    return (q->device_name && q->device_name[0]) ||
           (q->device_uuid && q->device_uuid[0]);
}

/* One device: each query's answer through the chain. */
static cutune_status model_one_device(cutune_cache *cache,
                                      const cutune_cache_query *queries,
                                      size_t n, json_t *problems,
                                      char *warning, size_t wsize)
{
    for (size_t i = 0; i < n; i++) {
        const cutune_cache_record *rec = NULL;
        cutune_match match = CUTUNE_MATCH_NONE;
        cutune_status st = cutune_cache_lookup(cache, &queries[i], &rec,
                                               &match);
        if (st != CUTUNE_OK && st != CUTUNE_ERR_NOT_FOUND)
            return st;
        if (cutune_cache_warning(cache)[0] && !warning[0])
            snprintf(warning, wsize, "%s", cutune_cache_warning(cache));
        json_t *entries = json_array();
        if (rec)
            json_array_append_new(entries, entry_json(rec, match));
        json_t *p = json_pack("{s:s, s:s, s:o*, s:n}", "name",
                              queries[i].problem_name, "match",
                              cutune_match_str(match), "entries", entries,
                              "default");
        if (!p || json_array_append_new(problems, p))
            return no_memory(cache);
        if (!rec) {
            size_t used = strlen(warning);
            snprintf(warning + used, wsize - used,
                     "%sno record of %s for %s: %s", used ? "; " : "",
                     queries[i].problem_name,
                     queries[i].device_name && queries[i].device_name[0]
                         ? queries[i].device_name
                         : queries[i].device_uuid,
                     match == CUTUNE_MATCH_OCCUPANCY
                         ? "use the occupancy suggestion"
                         : "nothing exported");
        }
    }
    return CUTUNE_OK;
}

/* Many devices: every device's record of each problem and the default. */
static cutune_status model_all_devices(cutune_cache *cache,
                                       const cutune_cache_query *queries,
                                       size_t n, json_t *problems,
                                       char *warning, size_t wsize)
{
    collect_state cs = {json_object(), json_array(), 0};
    cutune_status status = CUTUNE_OK;
    if (!cs.problems || !cs.order)
        status = no_memory(cache);
    if (status == CUTUNE_OK)
        status = cutune__cache_scan(cache, NULL, 0, collect_visit, &cs);
    if (status == CUTUNE_OK && cs.no_memory)
        status = no_memory(cache);
    if (status == CUTUNE_OK && cutune_cache_warning(cache)[0])
        snprintf(warning, wsize, "%s", cutune_cache_warning(cache));
    size_t count = n ? n : json_array_size(cs.order);
    for (size_t i = 0; status == CUTUNE_OK && i < count; i++) {
        cutune_cache_query q;
        if (n) {
            q = queries[i];
        } else {
            memset(&q, 0, sizeof q);
            q.problem_name = json_string_value(json_array_get(cs.order, i));
        }
        q.device_uuid = NULL;
        q.fallback = 0;
        json_t *devices = json_object_get(cs.problems, q.problem_name);
        if (json_array_size(devices) == 0) {
            size_t used = strlen(warning);
            snprintf(warning + used, wsize - used,
                     "%sno record of %s in %s: nothing exported",
                     used ? "; " : "", q.problem_name,
                     cutune_cache_dir(cache));
            continue;
        }
        json_t *entries = json_array();
        if (!entries) {
            status = no_memory(cache);
            break;
        }
        size_t k;
        json_t *name;
        json_array_foreach(devices, k, name)
        {
            const cutune_cache_record *rec = NULL;
            cutune_match match;
            q.device_name = json_string_value(name);
            status = cutune_cache_lookup(cache, &q, &rec, &match);
            if (status != CUTUNE_OK)
                break;
            if (json_array_append_new(entries, entry_json(rec, match))) {
                status = no_memory(cache);
                break;
            }
        }
        const cutune_cache_record *def = NULL;
        double avg = 0;
        size_t ndev = 0;
        q.device_name = NULL;
        if (status == CUTUNE_OK)
            status = cutune__cache_lookup_default(cache, &q, &def, &avg,
                                                  &ndev);
        size_t def_index = 0;
        json_t *e;
        json_array_foreach(entries, k, e)
        {
            if (def && strcasecmp(json_string_value(json_object_get(
                                      e, "device")),
                                  def->device.name) == 0)
                def_index = k;
        }
        json_t *p = NULL;
        if (status == CUTUNE_OK)
            p = json_pack("{s:s, s:s, s:o, s:I, s:f, s:I}", "name",
                          q.problem_name, "match", "table", "entries",
                          entries, "default", (json_int_t)def_index,
                          "default_avg_relative", avg, "default_devices",
                          (json_int_t)ndev);
        else
            json_decref(entries);
        if (status == CUTUNE_OK &&
            (!p || json_array_append_new(problems, p)))
            status = no_memory(cache);
    }
    json_decref(cs.problems);
    json_decref(cs.order);
    return status;
}

/* ------------------------------------------------------------------ */
/* Text output                                                          */

typedef struct out {
    char *buf;
    size_t len, cap;
    int failed;
} out;

static void emit(out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void emit(out *o, const char *fmt, ...)
{
    if (o->failed)
        return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(o->buf ? o->buf + o->len : NULL,
                          o->buf ? o->cap - o->len : 0, fmt, ap);
        va_end(ap);
        if (n < 0) {
            o->failed = 1;
            return;
        }
        if (o->buf && o->len + (size_t)n < o->cap) {
            o->len += (size_t)n;
            return;
        }
        size_t ncap = o->cap ? o->cap : 4096;
        while (ncap <= o->len + (size_t)n)
            ncap *= 2;
        char *grown = realloc(o->buf, ncap);
        if (!grown) {
            o->failed = 1;
            return;
        }
        o->buf = grown;
        o->cap = ncap;
    }
}

/* An identifier from a name: letters and digits kept (upper-cased for
 * macros), everything else '_', a leading digit prefixed with '_'. */
static void ident(const char *s, int upper, char *buf, size_t size)
{
    size_t n = 0;
    if (*s >= '0' && *s <= '9' && n + 1 < size)
        buf[n++] = '_';
    for (; *s && n + 1 < size; s++) {
        char c = *s;
        int alnum = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
                    (c >= 'A' && c <= 'Z');
        if (!alnum)
            c = '_';
        else if (upper && c >= 'a' && c <= 'z')
            c = (char)(c - 'a' + 'A');
        buf[n++] = c;
    }
    buf[n] = '\0';
}

/* A C string literal; anything but printable ASCII is escaped in octal. */
static void emit_string(out *o, const char *s)
{
    emit(o, "\"");
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            emit(o, "\\%c", c);
        else if (c < 0x20 || c >= 0x7f || c == '?')
            emit(o, "\\%03o", c); /* '?' too: no trigraphs */
        else
            emit(o, "%c", c);
    }
    emit(o, "\"");
}

/* A decimal integer that fits a long long. */
static int is_integer(const char *s)
{
    size_t i = s[0] == '-';
    size_t digits = strlen(s + i);
    if (digits == 0 || digits > 18)
        return 0;
    for (; s[i]; i++)
        if (s[i] < '0' || s[i] > '9')
            return 0;
    return 1;
}

/* A comment line cannot be ended early by a name. */
static void emit_comment_text(out *o, const char *s)
{
    for (; *s; s++) {
        if (s[0] == '*' && s[1] == '/')
            emit(o, "* /");
        else if ((unsigned char)*s >= 0x20 && (unsigned char)*s < 0x7f)
            emit(o, "%c", *s);
        else
            emit(o, "?");
    }
}

static void emit_entry_comment(out *o, json_t *e)
{
    emit(o, " on ");
    emit_comment_text(o, json_string_value(json_object_get(e, "device")));
    emit(o, " (cc %s, %lld SMs%s), size ",
         json_string_value(json_object_get(e, "cc")),
         (long long)json_integer_value(json_object_get(e, "sm_count")),
         json_is_true(json_object_get(e, "simulated")) ? ", simulated" : "");
    size_t i;
    json_t *d;
    json_array_foreach(json_object_get(e, "problem_size"), i, d)
    {
        emit(o, "%s%lld", i ? "x" : "", (long long)json_integer_value(d));
    }
    emit(o, ", %.4f ms, source hash ",
         json_real_value(json_object_get(e, "time_ms")));
    emit_comment_text(o,
                      json_string_value(json_object_get(e, "source_hash")));
}

static void header_one_device(out *o, json_t *p)
{
    char pm[128], pp[128], pv[256];
    const char *name = json_string_value(json_object_get(p, "name"));
    ident(name, 1, pm, sizeof pm);
    json_t *e = json_array_get(json_object_get(p, "entries"), 0);
    const char *match = json_string_value(json_object_get(p, "match"));
    emit(o, "\n/* ");
    emit_comment_text(o, name);
    emit(o, ": ");
    if (!e) {
        emit(o, "no record; use the occupancy suggestion */\n");
        emit(o, "#define CUTUNE_TUNED_%s 0\n", pm);
        emit(o, "#define CUTUNE_LEVEL_%s \"%s\"\n", pm, match);
        return;
    }
    emit(o, "%s match", match);
    emit_entry_comment(o, e);
    emit(o, " */\n");
    emit(o, "#define CUTUNE_TUNED_%s 1\n", pm);
    emit(o, "#define CUTUNE_LEVEL_%s \"%s\"\n", pm, match);
    const char *key;
    json_t *v;
    json_object_foreach(json_object_get(e, "config"), key, v)
    {
        ident(key, 1, pp, sizeof pp);
        snprintf(pv, sizeof pv, "%s", json_string_value(v));
        emit(o, "#define CUTUNE_%s_%s ", pm, pp);
        if (is_integer(pv))
            emit(o, "%s\n", pv);
        else {
            emit_string(o, pv);
            emit(o, "\n");
        }
    }
}

static int param_is_integer(json_t *entries, const char *param)
{
    size_t i;
    json_t *e;
    json_array_foreach(entries, i, e)
    {
        json_t *v = json_object_get(json_object_get(e, "config"), param);
        if (!json_is_string(v) || !is_integer(json_string_value(v)))
            return 0;
    }
    return 1;
}

static void header_table(out *o, json_t *p)
{
    char pl[128], pp[128];
    const char *name = json_string_value(json_object_get(p, "name"));
    ident(name, 0, pl, sizeof pl);
    json_t *entries = json_object_get(p, "entries");
    size_t n = json_array_size(entries);
    size_t def = (size_t)json_integer_value(json_object_get(p, "default"));
    /* The parameters are those of the default's record: every device tuned
     * the same problem, and a device missing one gets "" or 0. */
    json_t *params = json_object_get(json_array_get(entries, def), "config");

    emit(o, "\n/* ");
    emit_comment_text(o, name);
    emit(o, ": tuned on %zu device%s; default: the configuration of entry "
            "%zu, %.4f times the best on average over %lld device%s */\n",
         n, n == 1 ? "" : "s", def,
         json_number_value(json_object_get(p, "default_avg_relative")),
         (long long)json_integer_value(json_object_get(p, "default_devices")),
         json_integer_value(json_object_get(p, "default_devices")) == 1
             ? ""
             : "s");
    emit(o, "typedef struct cutune_%s_config {\n", pl);
    emit(o, "    const char *device;\n    int cc_major;\n    int cc_minor;\n"
            "    int sm_count;\n    int simulated;\n"
            "    int level; /* the record's cutune_match on its device */\n");
    const char *key;
    json_t *v;
    json_object_foreach(params, key, v)
    {
        ident(key, 0, pp, sizeof pp);
        emit(o, "    %s%s;\n",
             param_is_integer(entries, key) ? "long long " : "const char *",
             pp);
    }
    emit(o, "} cutune_%s_config;\n\n", pl);

    emit(o, "static inline const cutune_%s_config *\ncutune_%s_lookup("
            "const char *name, int cc_major, int cc_minor,\n"
            "    int sm_count, int *level)\n{\n",
         pl, pl);
    emit(o, "    static const cutune_%s_config table[%zu] = {\n", pl, n);
    size_t i;
    json_t *e;
    json_array_foreach(entries, i, e)
    {
        int major = 0, minor = 0;
        sscanf(json_string_value(json_object_get(e, "cc")), "%d.%d", &major,
               &minor);
        const char *m = json_string_value(json_object_get(e, "match"));
        emit(o, "        {");
        emit_string(o, json_string_value(json_object_get(e, "device")));
        emit(o, ", %d, %d, %lld, %d, %d", major, minor,
             (long long)json_integer_value(json_object_get(e, "sm_count")),
             json_is_true(json_object_get(e, "simulated")),
             strcmp(m, "exact") == 0 ? CUTUNE_MATCH_EXACT
                                     : CUTUNE_MATCH_NEAREST_SIZE);
        json_t *config = json_object_get(e, "config");
        json_object_foreach(params, key, v)
        {
            json_t *val = json_object_get(config, key);
            const char *s = json_is_string(val) ? json_string_value(val) : "";
            if (param_is_integer(entries, key))
                emit(o, ", %sLL", s[0] ? s : "0");
            else {
                emit(o, ", ");
                emit_string(o, s);
            }
        }
        emit(o, "},\n");
    }
    emit(o, "    };\n");
    emit(o,
         "    unsigned i, best = %zuu;\n"
         "    int found = %d;\n"
         "    long long best_gap = -1;\n"
         "    for (i = 0; name && i < %zuu; i++) {\n"
         "        const char *a = table[i].device, *b = name;\n"
         "        while (*a && *b) {\n"
         "            char x = *a >= 'A' && *a <= 'Z' ? (char)(*a + 32) : "
         "*a;\n"
         "            char y = *b >= 'A' && *b <= 'Z' ? (char)(*b + 32) : "
         "*b;\n"
         "            if (x != y)\n"
         "                break;\n"
         "            a++;\n"
         "            b++;\n"
         "        }\n"
         "        if (*a == '\\0' && *b == '\\0') {\n"
         "            if (level)\n"
         "                *level = table[i].level;\n"
         "            return &table[i];\n"
         "        }\n"
         "    }\n"
         "    for (i = 0; cc_major > 0 && i < %zuu; i++) {\n"
         "        long long gap = (long long)table[i].sm_count - sm_count;\n"
         "        if (table[i].cc_major != cc_major ||\n"
         "            table[i].cc_minor != cc_minor)\n"
         "            continue;\n"
         "        if (gap < 0)\n"
         "            gap = -gap;\n"
         "        if (sm_count <= 0)\n"
         "            gap = 0;\n"
         "        if (best_gap < 0 || gap < best_gap) {\n"
         "            best_gap = gap;\n"
         "            best = i;\n"
         "            found = %d;\n"
         "        }\n"
         "    }\n"
         "    if (level)\n"
         "        *level = found;\n"
         "    return &table[best];\n"
         "}\n",
         def, CUTUNE_MATCH_DEFAULT, n, n, CUTUNE_MATCH_ARCHITECTURE);
}

static cutune_status render(cutune_cache *cache, json_t *model,
                            cutune_export_format format, const char *path,
                            out *o)
{
    if (format == CUTUNE_EXPORT_JSON) {
        char *text = json_dumps(model, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
        if (!text)
            return no_memory(cache);
        emit(o, "%s\n", text);
        free(text);
        return o->failed ? no_memory(cache) : CUTUNE_OK;
    }
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    char guard[160];
    ident(base, 1, guard, sizeof guard);
    json_t *device = json_object_get(model, "device");
    emit(o, "/* Generated by cutune %s (cutune export) from the tuning "
            "cache; do not edit.\n * ",
         CUTUNE_VERSION_STRING);
    if (json_is_string(device)) {
        emit(o, "Launch configurations for device ");
        emit_comment_text(o, json_string_value(device));
    } else {
        emit(o, "Launch configurations for every cached device, with a "
                "lookup function per kernel");
    }
    emit(o, ". */\n#ifndef CUTUNE_EXPORT_%s\n#define CUTUNE_EXPORT_%s\n",
         guard, guard);
    size_t i;
    json_t *p;
    json_array_foreach(json_object_get(model, "problems"), i, p)
    {
        if (json_is_string(device))
            header_one_device(o, p);
        else
            header_table(o, p);
    }
    emit(o, "\n#endif\n");
    return o->failed ? no_memory(cache) : CUTUNE_OK;
}

cutune_status cutune_cache_export(cutune_cache *cache,
                                  const cutune_cache_query *queries,
                                  size_t n_queries,
                                  cutune_export_format format,
                                  const char *path)
{
    if (!cache)
        return CUTUNE_ERR_INVALID_ARGUMENT;
    if (!path || !path[0] || (n_queries > 0 && !queries) ||
        (format != CUTUNE_EXPORT_HEADER && format != CUTUNE_EXPORT_JSON))
        return cutune__cache_fail(cache, CUTUNE_ERR_INVALID_ARGUMENT,
                                  "export needs a format and an output "
                                  "path");
    int one = n_queries > 0 && names_device(&queries[0]);
    for (size_t i = 0; i < n_queries; i++) {
        if (!queries[i].problem_name || !queries[i].problem_name[0])
            return cutune__cache_fail(cache, CUTUNE_ERR_INVALID_ARGUMENT,
                                      "export query %zu names no problem",
                                      i);
        if (names_device(&queries[i]) != one)
            return cutune__cache_fail(cache, CUTUNE_ERR_INVALID_ARGUMENT,
                                      "export queries must all name a "
                                      "device or none");
    }

    char warning[1024] = "";
    json_t *problems = json_array();
    const char *device = one ? (queries[0].device_name &&
                                        queries[0].device_name[0]
                                    ? queries[0].device_name
                                    : queries[0].device_uuid)
                             : NULL;
    json_t *model = json_pack("{s:i, s:s, s:s*, s:o*}", "cutune_export",
                              EXPORT_FORMAT, "cutune", CUTUNE_VERSION_STRING,
                              "device", device, "problems", problems);
    if (!model)
        return no_memory(cache);
    cutune_status status =
        one ? model_one_device(cache, queries, n_queries, problems, warning,
                               sizeof warning)
            : model_all_devices(cache, queries, n_queries, problems, warning,
                                sizeof warning);
    out o = {NULL, 0, 0, 0};
    if (status == CUTUNE_OK)
        status = render(cache, model, format, path, &o);
    if (status == CUTUNE_OK)
        status = cutune__cache_write_file(cache, path, o.buf, o.len);
    free(o.buf);
    json_decref(model);
    if (status == CUTUNE_OK && warning[0])
        cutune__cache_set_warning(cache, "%s", warning);
    return status;
}
