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
 * level (cutune_match's values) in *level when level is not NULL.
 *
 * Values are written exactly. A value is an integer (a macro's number,
 * parenthesized when negative; a long long member where every device's
 * value is one) only when its text is the decimal literal of that number
 * with no sign but '-', no leading zero and at most 18 digits, so "08",
 * "010", "+1" and "-0" stay strings and nothing is read as octal. Strings
 * are written whole, however long.
 *
 * Identifiers are the names upper-cased (macros) or as they are (members),
 * with every character other than an ASCII letter or digit made '_' and a
 * leading digit prefixed with '_'; a member named as a C or C++ keyword
 * ("int", "class") gets a trailing '_'. Two names that become one
 * identifier (parameters "a_b" and "A_B", problems "x-y" and "x_y", a
 * parameter named "level" beside the member of that name) are refused
 * with one error naming both: a header never defines a name twice. JSON
 * keeps every name as it is.
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
    cutune_objective objective; /* of the records collected */
} collect_state;

static int collect_visit(void *user, const cutune_cache_record *r,
                         json_t *root, const char *path, size_t line)
{
    (void)root;
    (void)path;
    (void)line;
    collect_state *st = user;
    if (r->objective != st->objective)
        return 0;
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
        cutune_status st =
            cutune_cache_lookup(cache, &queries[i], &rec, &match);
        if (st != CUTUNE_OK && st != CUTUNE_ERR_NOT_FOUND)
            return st;
        if (cutune_cache_warning(cache)[0] && !warning[0])
            snprintf(warning, wsize, "%s", cutune_cache_warning(cache));
        json_t *entries = json_array();
        if (rec)
            json_array_append_new(entries, entry_json(rec, match));
        json_t *p = json_pack(
            "{s:s, s:s, s:o*, s:n}", "name", queries[i].problem_name, "match",
            cutune_match_str(match), "entries", entries, "default");
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
    collect_state cs = {json_object(), json_array(), 0,
                        n ? queries[0].objective : CUTUNE_OBJECTIVE_TIME};
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
            status =
                cutune__cache_lookup_default(cache, &q, &def, &avg, &ndev);
        size_t def_index = 0;
        json_t *e;
        json_array_foreach(entries, k, e)
        {
            if (def &&
                strcasecmp(json_string_value(json_object_get(e, "device")),
                           def->device.name) == 0)
                def_index = k;
        }
        json_t *p = NULL;
        if (status == CUTUNE_OK)
            p = json_pack("{s:s, s:s, s:o, s:I, s:f, s:I}", "name",
                          q.problem_name, "match", "table", "entries", entries,
                          "default", (json_int_t)def_index,
                          "default_avg_relative", avg, "default_devices",
                          (json_int_t)ndev);
        else
            json_decref(entries);
        if (status == CUTUNE_OK && (!p || json_array_append_new(problems, p)))
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

static void emit(out *o, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

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

/* How a name becomes (part of) an identifier. */
enum ident_kind {
    IDENT_MACRO, /* upper-cased */
    IDENT_PART,  /* as it is, inside a longer identifier */
    IDENT_MEMBER /* as it is, a whole identifier: keywords get a '_' */
};

static int is_keyword(const char *s)
{
    static const char *const words[] = {"_Alignas",
                                        "_Alignof",
                                        "_Atomic",
                                        "_BitInt",
                                        "_Bool",
                                        "_Complex",
                                        "_Decimal128",
                                        "_Decimal32",
                                        "_Decimal64",
                                        "_Generic",
                                        "_Imaginary",
                                        "_Noreturn",
                                        "_Static_assert",
                                        "_Thread_local",
                                        "alignas",
                                        "alignof",
                                        "and",
                                        "and_eq",
                                        "asm",
                                        "auto",
                                        "bitand",
                                        "bitor",
                                        "bool",
                                        "break",
                                        "case",
                                        "catch",
                                        "char",
                                        "char16_t",
                                        "char32_t",
                                        "char8_t",
                                        "class",
                                        "co_await",
                                        "co_return",
                                        "co_yield",
                                        "compl",
                                        "concept",
                                        "const",
                                        "const_cast",
                                        "consteval",
                                        "constexpr",
                                        "constinit",
                                        "continue",
                                        "decltype",
                                        "default",
                                        "delete",
                                        "do",
                                        "double",
                                        "dynamic_cast",
                                        "else",
                                        "enum",
                                        "explicit",
                                        "export",
                                        "extern",
                                        "false",
                                        "float",
                                        "for",
                                        "friend",
                                        "goto",
                                        "if",
                                        "inline",
                                        "int",
                                        "long",
                                        "mutable",
                                        "namespace",
                                        "new",
                                        "noexcept",
                                        "not",
                                        "not_eq",
                                        "nullptr",
                                        "operator",
                                        "or",
                                        "or_eq",
                                        "private",
                                        "protected",
                                        "public",
                                        "register",
                                        "reinterpret_cast",
                                        "requires",
                                        "restrict",
                                        "return",
                                        "short",
                                        "signed",
                                        "sizeof",
                                        "static",
                                        "static_assert",
                                        "static_cast",
                                        "struct",
                                        "switch",
                                        "template",
                                        "this",
                                        "thread_local",
                                        "throw",
                                        "true",
                                        "try",
                                        "typedef",
                                        "typeid",
                                        "typename",
                                        "typeof",
                                        "typeof_unqual",
                                        "union",
                                        "unsigned",
                                        "using",
                                        "virtual",
                                        "void",
                                        "volatile",
                                        "wchar_t",
                                        "while",
                                        "xor",
                                        "xor_eq"};
    for (size_t i = 0; i < sizeof words / sizeof *words; i++)
        if (strcmp(s, words[i]) == 0)
            return 1;
    return 0;
}

/* An identifier from a name: ASCII letters and digits kept (upper-cased
 * for macros), everything else '_', a leading digit prefixed with '_'. */
static void emit_ident(out *o, const char *s, enum ident_kind kind)
{
    if (*s >= '0' && *s <= '9')
        emit(o, "_");
    for (const char *p = s; *p; p++) {
        char c = *p;
        int alnum = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
                    (c >= 'A' && c <= 'Z');
        if (!alnum)
            c = '_';
        else if (kind == IDENT_MACRO && c >= 'a' && c <= 'z')
            c = (char)(c - 'a' + 'A');
        emit(o, "%c", c);
    }
    if (kind == IDENT_MEMBER && is_keyword(s))
        emit(o, "_");
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

/* The decimal literal of a number that fits a long long, spelled as C
 * spells it back: "0", or digits without a leading zero after an optional
 * '-'. "08" (not a C literal), "010" (octal 8), "-0" and "+1" are not. */
static int is_integer(const char *s)
{
    size_t i = s[0] == '-';
    size_t digits = strlen(s + i);
    if (digits == 0 || digits > 18 || (s[i] == '0' && (digits > 1 || i)))
        return 0;
    for (; s[i]; i++)
        if (s[i] < '0' || s[i] > '9')
            return 0;
    return 1;
}

/* A name can neither end a comment early nor open one inside it
 * (-Wcomment). */
static void emit_comment_text(out *o, const char *s)
{
    for (; *s; s++) {
        if ((s[0] == '*' && s[1] == '/') || (s[0] == '/' && s[1] == '*'))
            emit(o, "%c ", s[0]);
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
    emit_comment_text(o, json_string_value(json_object_get(e, "source_hash")));
}

/* "#define CUTUNE_<prefix><NAME>[_<PARAM>] " */
static void emit_define(out *o, const char *prefix, const char *name,
                        const char *param)
{
    emit(o, "#define CUTUNE_%s", prefix);
    emit_ident(o, name, IDENT_MACRO);
    if (param) {
        emit(o, "_");
        emit_ident(o, param, IDENT_MACRO);
    }
    emit(o, " ");
}

static void header_one_device(out *o, json_t *p)
{
    const char *name = json_string_value(json_object_get(p, "name"));
    json_t *e = json_array_get(json_object_get(p, "entries"), 0);
    const char *match = json_string_value(json_object_get(p, "match"));
    emit(o, "\n/* ");
    emit_comment_text(o, name);
    emit(o, ": ");
    if (!e)
        emit(o, "no record; use the occupancy suggestion */\n");
    else {
        emit(o, "%s match", match);
        emit_entry_comment(o, e);
        emit(o, " */\n");
    }
    emit_define(o, "TUNED_", name, NULL);
    emit(o, "%d\n", e != NULL);
    emit_define(o, "LEVEL_", name, NULL);
    emit(o, "\"%s\"\n", match);
    const char *key;
    json_t *v;
    json_object_foreach(json_object_get(e, "config"), key, v)
    {
        const char *value = json_string_value(v);
        emit_define(o, "", name, key);
        if (is_integer(value))
            emit(o, value[0] == '-' ? "(%s)\n" : "%s\n", value);
        else {
            emit_string(o, value);
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
    const char *name = json_string_value(json_object_get(p, "name"));
    out type = {NULL, 0, 0, 0};
    emit(&type, "cutune_");
    emit_ident(&type, name, IDENT_PART);
    const char *pl = type.failed ? "" : type.buf + strlen("cutune_");
    o->failed |= type.failed;
    json_t *entries = json_object_get(p, "entries");
    size_t n = json_array_size(entries);
    size_t def = (size_t)json_integer_value(json_object_get(p, "default"));
    /* The parameters are those of the default's record: every device tuned
     * the same problem, and a device missing one gets "" or 0. */
    json_t *params = json_object_get(json_array_get(entries, def), "config");

    emit(o, "\n/* ");
    emit_comment_text(o, name);
    emit(o,
         ": tuned on %zu device%s; default: the configuration of entry "
         "%zu, %.4f times the best on average over %lld device%s */\n",
         n, n == 1 ? "" : "s", def,
         json_number_value(json_object_get(p, "default_avg_relative")),
         (long long)json_integer_value(json_object_get(p, "default_devices")),
         json_integer_value(json_object_get(p, "default_devices")) == 1 ? ""
                                                                        : "s");
    emit(o, "typedef struct cutune_%s_config {\n", pl);
    emit(o, "    const char *device;\n    int cc_major;\n    int cc_minor;\n"
            "    int sm_count;\n    int simulated;\n"
            "    int level; /* the record's cutune_match on its device */\n");
    const char *key;
    json_t *v;
    json_object_foreach(params, key, v)
    {
        emit(o, "    %s",
             param_is_integer(entries, key) ? "long long " : "const char *");
        emit_ident(o, key, IDENT_MEMBER);
        emit(o, ";\n");
    }
    emit(o, "} cutune_%s_config;\n\n", pl);

    emit(o,
         "static inline const cutune_%s_config *\ncutune_%s_lookup("
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
    free(type.buf);
}

/* ------------------------------------------------------------------ */
/* Names                                                                */

/* Takes the identifier in `id` for what `what` describes, in `seen`
 * (identifier -> the description of what first became it). Refused,
 * naming both, when it was taken. Frees both texts. */
static cutune_status claim(cutune_cache *cache, json_t *seen, out *id,
                           out *what)
{
    cutune_status status = CUTUNE_OK;
    json_t *had;
    if (id->failed || what->failed || !id->buf || !what->buf)
        status = no_memory(cache);
    else if ((had = json_object_get(seen, id->buf)))
        status = cutune__cache_fail(
            cache, CUTUNE_ERR_UNSUPPORTED,
            "cannot export a header: %s and %s both become %s; rename one, "
            "or export JSON",
            json_string_value(had), what->buf, id->buf);
    else if (json_object_set_new(seen, id->buf,
                                 json_string_nocheck(what->buf)))
        status = no_memory(cache);
    free(id->buf);
    free(what->buf);
    memset(id, 0, sizeof *id);
    memset(what, 0, sizeof *what);
    return status;
}

/* Claims "<prefix>IDENT(name)[<mid>IDENT(param)]<suffix>". */
static cutune_status claim_ident(cutune_cache *cache, json_t *seen,
                                 const char *prefix, const char *name,
                                 const char *param, enum ident_kind kind,
                                 const char *suffix, out *what)
{
    out id = {NULL, 0, 0, 0};
    emit(&id, "%s", prefix);
    emit_ident(&id, name, param && kind == IDENT_MEMBER ? IDENT_PART : kind);
    if (param) {
        emit(&id, "_");
        emit_ident(&id, param, kind);
    }
    emit(&id, "%s", suffix);
    return claim(cache, seen, &id, what);
}

/* "problem NAME" or "parameter PARAM of NAME" into a fresh text. */
static out describe(const char *name, const char *param)
{
    out what = {NULL, 0, 0, 0};
    if (param)
        emit(&what, "parameter %s of %s", param, name);
    else
        emit(&what, "problem %s", name);
    return what;
}

/* One device: the macros CUTUNE_TUNED_P, CUTUNE_LEVEL_P, CUTUNE_P_PARAM
 * share one name space. */
static cutune_status check_one_device(cutune_cache *cache, json_t *seen,
                                      json_t *p)
{
    const char *name = json_string_value(json_object_get(p, "name"));
    out what = describe(name, NULL);
    cutune_status status = claim_ident(cache, seen, "CUTUNE_TUNED_", name,
                                       NULL, IDENT_MACRO, "", &what);
    what = describe(name, NULL);
    if (status == CUTUNE_OK)
        status = claim_ident(cache, seen, "CUTUNE_LEVEL_", name, NULL,
                             IDENT_MACRO, "", &what);
    free(what.buf);
    json_t *e = json_array_get(json_object_get(p, "entries"), 0);
    const char *key;
    json_t *v;
    json_object_foreach(json_object_get(e, "config"), key, v)
    {
        if (status != CUTUNE_OK)
            break;
        what = describe(name, key);
        status = claim_ident(cache, seen, "CUTUNE_", name, key, IDENT_MACRO,
                             "", &what);
    }
    return status;
}

/* Many devices: a type and a function per problem (cutune_P_config,
 * cutune_P_lookup), and the struct's members, the fixed ones included. */
static cutune_status check_table(cutune_cache *cache, json_t *seen, json_t *p)
{
    static const char *const fixed[] = {"device",   "cc_major",  "cc_minor",
                                        "sm_count", "simulated", "level"};
    const char *name = json_string_value(json_object_get(p, "name"));
    out what = describe(name, NULL);
    cutune_status status = claim_ident(cache, seen, "cutune_", name, NULL,
                                       IDENT_PART, "_config", &what);
    json_t *members = json_object();
    if (!members && status == CUTUNE_OK)
        status = no_memory(cache);
    for (size_t i = 0; status == CUTUNE_OK && i < 6; i++) {
        what = (out){NULL, 0, 0, 0};
        emit(&what, "the member %s of cutune_", fixed[i]);
        emit_ident(&what, name, IDENT_PART);
        emit(&what, "_config");
        status = claim_ident(cache, members, "", fixed[i], NULL, IDENT_MEMBER,
                             "", &what);
    }
    json_t *entries = json_object_get(p, "entries");
    size_t def = (size_t)json_integer_value(json_object_get(p, "default"));
    const char *key;
    json_t *v;
    json_object_foreach(
        json_object_get(json_array_get(entries, def), "config"), key, v)
    {
        if (status != CUTUNE_OK)
            break;
        what = describe(name, key);
        status = claim_ident(cache, members, "", key, NULL, IDENT_MEMBER, "",
                             &what);
    }
    json_decref(members);
    return status;
}

/* Refuses a header in which two names would become one identifier. */
static cutune_status check_names(cutune_cache *cache, json_t *model,
                                 const char *base)
{
    json_t *seen = json_object();
    if (!seen)
        return no_memory(cache);
    out what = {NULL, 0, 0, 0};
    emit(&what, "the include guard of %s", base);
    cutune_status status = claim_ident(cache, seen, "CUTUNE_EXPORT_", base,
                                       NULL, IDENT_MACRO, "", &what);
    int one = json_is_string(json_object_get(model, "device"));
    size_t i;
    json_t *p;
    json_array_foreach(json_object_get(model, "problems"), i, p)
    {
        if (status != CUTUNE_OK)
            break;
        status = one ? check_one_device(cache, seen, p)
                     : check_table(cache, seen, p);
    }
    json_decref(seen);
    return status;
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
    cutune_status status = check_names(cache, model, base);
    if (status != CUTUNE_OK)
        return status;
    json_t *device = json_object_get(model, "device");
    emit(o,
         "/* Generated by cutune %s (cutune export) from the tuning "
         "cache; do not edit.\n * ",
         CUTUNE_VERSION_STRING);
    if (json_is_string(device)) {
        emit(o, "Launch configurations for device ");
        emit_comment_text(o, json_string_value(device));
    } else {
        emit(o, "Launch configurations for every cached device, with a "
                "lookup function per kernel");
    }
    json_t *objective = json_object_get(model, "objective");
    if (json_is_string(objective))
        emit(o, ", tuned for %s", json_string_value(objective));
    emit(o, ". */\n#ifndef CUTUNE_EXPORT_");
    emit_ident(o, base, IDENT_MACRO);
    emit(o, "\n#define CUTUNE_EXPORT_");
    emit_ident(o, base, IDENT_MACRO);
    emit(o, "\n");
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
                                      "export query %zu names no problem", i);
        if (names_device(&queries[i]) != one ||
            queries[i].objective != queries[0].objective)
            return cutune__cache_fail(cache, CUTUNE_ERR_INVALID_ARGUMENT,
                                      "export queries must all name a "
                                      "device or none, and one objective");
    }
    cutune_objective objective =
        n_queries ? queries[0].objective : CUTUNE_OBJECTIVE_TIME;

    char warning[1024] = "";
    json_t *problems = json_array();
    const char *device =
        one ? (queries[0].device_name && queries[0].device_name[0]
                   ? queries[0].device_name
                   : queries[0].device_uuid)
            : NULL;
    json_t *model = json_pack("{s:i, s:s, s:s*, s:o*}", "cutune_export",
                              EXPORT_FORMAT, "cutune", CUTUNE_VERSION_STRING,
                              "device", device, "problems", problems);
    /* Named only where it is not time, the one objective of every export
     * before there were others. */
    if (model && objective != CUTUNE_OBJECTIVE_TIME &&
        json_object_set_new(model, "objective",
                            json_string(cutune_objective_str(objective)))) {
        json_decref(model);
        model = NULL;
    }
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
