/* What cutune writes as T4 is valid T4: every result of a replayed tune,
 * written by the session's own writer, checked against the rules of the
 * T4 1.0.0 results and metadata schemas (Kernel Tuner's
 * kernel_tuner/schema/T4/1.0.0, encoded here rather than copied, and
 * needing no network or Python at test time), and against the metadata
 * cutune promises (docs/t1-t4.md). Also: the old form of RESOURCES
 * (`"invalidity": "resources"`, in files written before) reads as the new
 * one does, and readers warn once on a recording of another problem. */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "check.h"
#include "cutune/report.h"
#include "cutune/simulate.h"
#include "problem.h"
#include "t4.h"
#include "tmpdir.h"

static char dir[] = "/tmp/cutune-t4-schema-XXXXXX";
static char path_buf[8][512];

static const char *in_dir(int slot, const char *name)
{
    snprintf(path_buf[slot], sizeof path_buf[slot], "%s/%s", dir, name);
    return path_buf[slot];
}

/* ------------------------------------------------------------------ */
/* The schemas' rules                                                  */

typedef struct verdict {
    size_t errors;
    char first[512];
} verdict;

__attribute__((format(printf, 2, 3))) static void
violation(verdict *v, const char *fmt, ...)
{
    if (v->errors++ == 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(v->first, sizeof v->first, fmt, ap);
        va_end(ap);
    }
}

/* A key that, where present, has the JSON type `is` checks. */
static void typed(verdict *v, json_t *obj, const char *key,
                  int (*is)(const json_t *), const char *type,
                  const char *where)
{
    json_t *x = json_object_get(obj, key);
    if (x && !is(x))
        violation(v, "%s.%s: not %s", where, key, type);
}

static int is_object(const json_t *j)
{
    return json_is_object(j);
}
static int is_array(const json_t *j)
{
    return json_is_array(j);
}
static int is_string(const json_t *j)
{
    return json_is_string(j);
}
static int is_number(const json_t *j)
{
    return json_is_number(j);
}
static int is_measured(const json_t *j)
{
    return json_is_number(j) || json_is_string(j) || json_is_array(j);
}

/* "^[0-9]{1,}.[0-9]{1,}.[0-9]{1,}$", the schema's version pattern (its
 * '.' any character). */
static int is_version(const char *s)
{
    for (int part = 0; part < 3; part++) {
        if (part && !*s++)
            return 0;
        const char *start = s;
        while (*s >= '0' && *s <= '9')
            s++;
        if (s == start)
            return 0;
    }
    return *s == '\0';
}

static void check_result(verdict *v, json_t *res, size_t i)
{
    static const char *const invalidity[] = {"timeout",     "compile",
                                             "runtime",     "correctness",
                                             "constraints", "correct"};
    static const char *const required[] = {"configuration", "times",
                                           "invalidity", "correctness"};
    char where[64];
    snprintf(where, sizeof where, "results[%zu]", i);
    if (!json_is_object(res)) {
        violation(v, "%s: not an object", where);
        return;
    }
    for (size_t k = 0; k < 4; k++)
        if (!json_object_get(res, required[k]))
            violation(v, "%s.%s: missing (required)", where, required[k]);
    typed(v, res, "timestamp", is_string, "a string", where);
    typed(v, res, "configuration", is_object, "an object", where);
    typed(v, res, "objectives", is_array, "an array", where);
    typed(v, res, "times", is_object, "an object", where);
    typed(v, res, "correctness", is_number, "a number", where);
    typed(v, res, "measurements", is_array, "an array", where);
    json_t *inv = json_object_get(res, "invalidity");
    int known = 0;
    for (size_t k = 0; k < 6 && json_is_string(inv); k++)
        known |= strcmp(json_string_value(inv), invalidity[k]) == 0;
    if (inv && !known)
        violation(v, "%s.invalidity: not in the enum", where);
    json_t *times = json_object_get(res, "times");
    static const char *const numbers[] = {"compilation_time", "framework",
                                          "search_algorithm", "validation"};
    for (size_t k = 0; json_is_object(times) && k < 4; k++)
        typed(v, times, numbers[k], is_number, "a number", where);
    if (json_is_object(times))
        typed(v, times, "runtimes", is_array, "an array", where);
    size_t m;
    json_t *e;
    json_array_foreach(json_object_get(res, "measurements"), m, e)
    {
        if (!json_is_object(e)) {
            violation(v, "%s.measurements[%zu]: not an object", where, m);
            continue;
        }
        typed(v, e, "name", is_string, "a string", where);
        typed(v, e, "value", is_measured, "a number, string or array", where);
        typed(v, e, "unit", is_string, "a string", where);
    }
}

/* The results schema and the metadata schema, which share the file. */
static verdict schema_check(json_t *root)
{
    verdict v = {0, ""};
    if (!json_is_object(root)) {
        violation(&v, "(top level): not an object");
        return v;
    }
    json_t *version = json_object_get(root, "schema_version");
    if (version &&
        !(json_is_string(version) && is_version(json_string_value(version))))
        violation(&v, "schema_version: not major.minor.patch");
    typed(&v, root, "results", is_array, "an array", "(top level)");
    size_t i;
    json_t *res;
    json_array_foreach(json_object_get(root, "results"), i, res)
        check_result(&v, res, i);
    json_t *meta = json_object_get(root, "metadata");
    typed(&v, root, "metadata", is_object, "an object", "(top level)");
    typed(&v, meta, "zenodo", is_object, "an object", "metadata");
    typed(&v, meta, "hardware", is_object, "an object", "metadata");
    typed(&v, meta, "environment", is_object, "an object", "metadata");
    json_t *hw = json_object_get(meta, "hardware");
    typed(&v, hw, "hardware_description", is_array, "an array", "hardware");
    typed(&v, hw, "operating_system", is_string, "a string", "hardware");
    json_t *env = json_object_get(meta, "environment");
    typed(&v, env, "device_query", is_object, "an object", "environment");
    typed(&v, env, "requirements", is_array, "an array", "environment");
    return v;
}

/* The checker itself: documents that break a rule each fail it. */
static void test_checker(void)
{
    static const char *const bad[] = {
        "{\"results\": [{\"configuration\": {}, \"times\": {}, "
        "\"invalidity\": \"resources\", \"correctness\": 0}]}",
        "{\"results\": [{\"configuration\": {}, \"times\": {\"framework\": "
        "null}, \"invalidity\": \"correct\", \"correctness\": 1}]}",
        "{\"results\": [{\"configuration\": {}, \"invalidity\": \"correct\", "
        "\"correctness\": 1}]}",
        "{\"results\": [{\"configuration\": {}, \"times\": {}, "
        "\"invalidity\": \"correct\", \"correctness\": 1, \"measurements\": "
        "[{\"name\": \"time\", \"value\": null}]}]}",
        "{\"schema_version\": \"1.0\", \"results\": []}",
        "{\"metadata\": {\"hardware\": {\"hardware_description\": {}}}, "
        "\"results\": []}",
    };
    for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
        json_t *j = json_loads(bad[k], 0, NULL);
        CHECK(j != NULL);
        CHECK(schema_check(j).errors > 0);
        json_decref(j);
    }
    json_t *good = json_loads(
        "{\"schema_version\": \"1.0.0\", \"metadata\": {\"timeunit\": \"ms\"},"
        " \"results\": [{\"configuration\": {\"a\": 1}, \"times\": "
        "{\"runtimes\": [1.0]}, \"invalidity\": \"constraints\", "
        "\"correctness\": 0}]}",
        0, NULL);
    CHECK_INT(schema_check(good).errors, 0);
    json_decref(good);
}

/* ------------------------------------------------------------------ */
/* Recordings with RESOURCES, in the new form and the old              */

static cutune_problem *load(const char *data, const long long *size)
{
    char t1[1024];
    snprintf(t1, sizeof t1, "%s/t1/convolution_milo.json", data);
    cutune_problem_options po;
    cutune_problem_options_init(&po);
    po.space_only = 1;
    po.problem_size = size;
    po.n_problem_size = size ? 2 : 0;
    cutune_problem *p = NULL;
    CHECK_INT(cutune_problem_load(t1, &po, &p), CUTUNE_OK);
    return p;
}

/* The A100 recording with every configuration of more than 256 threads a
 * block as RESOURCES (as a GPU of smaller blocks would answer), written
 * by the writer (the new form) at new_path and, with the field's old spelling,
 * at old_path. Returns how many are RESOURCES. */
static size_t write_recordings(const char *data, const cutune_problem *p,
                               const char *new_path, const char *old_path)
{
    char a100[1024], err[1024] = "";
    snprintf(a100, sizeof a100, "%s/t4/convolution_milo_A100_T4.json.gz",
             data);
    cutune__t4 *t4 = NULL;
    CHECK_INT(cutune__t4_load(a100, p, &t4, err, sizeof err), CUTUNE_OK);
    if (!t4)
        return 0;
    cutune__t4_record *recs = calloc(t4->n_entries, sizeof *recs);
    size_t n = 0, resources = 0;
    size_t bx = cutune__problem_find_param(p, "block_size_x");
    size_t by = cutune__problem_find_param(p, "block_size_y");
    for (size_t i = 0; recs && i < t4->n_entries; i++) {
        const cutune__t4_entry *e = &t4->entries[i];
        if (e->config_index == SIZE_MAX)
            continue;
        const uint32_t *cfg = cutune__space_config(p->space, e->config_index);
        long long threads = p->param_values[bx][cfg[bx]].u.i *
                            p->param_values[by][cfg[by]].u.i;
        cutune__t4_record *r = &recs[n++];
        r->config_index = e->config_index;
        r->outcome = threads > 256 ? CUTUNE_OUTCOME_RESOURCES : e->outcome;
        resources += r->outcome == CUTUNE_OUTCOME_RESOURCES;
        int timed = r->outcome == CUTUNE_OUTCOME_CORRECT;
        r->runtimes = timed ? e->runtimes : NULL;
        r->n_runtimes = timed ? e->n_runtimes : 0;
        r->time_ms = timed ? e->time_ms : NAN;
        r->compile_ms = e->compile_ms;
    }
    CHECK_INT(cutune__t4_write(new_path, p, NULL, recs, n, err, sizeof err),
              CUTUNE_OK);
    free(recs);
    cutune__t4_free(t4);

    /* The old form, as cutune wrote it before: no field of its own. */
    json_t *root = json_load_file(new_path, 0, NULL);
    size_t i, old = 0;
    json_t *res;
    json_array_foreach(json_object_get(root, "results"), i, res)
    {
        json_t *finer = json_object_get(res, "cutune_invalidity");
        if (!finer)
            continue;
        CHECK_STR(json_string_value(finer), "resources");
        CHECK_STR(json_string_value(json_object_get(res, "invalidity")),
                  "constraints");
        json_object_set(res, "invalidity", finer);
        json_object_del(res, "cutune_invalidity");
        old++;
    }
    CHECK_INT(old, resources);
    CHECK_INT(json_dump_file(root, old_path, 0), 0);
    json_decref(root);
    return resources;
}

/* Both forms read the same: entry by entry, RESOURCES where written. */
static void test_both_forms(const cutune_problem *p, const char *new_path,
                            const char *old_path, size_t resources)
{
    char err[1024] = "";
    cutune__t4 *a = NULL, *b = NULL;
    CHECK_INT(cutune__t4_load(new_path, p, &a, err, sizeof err), CUTUNE_OK);
    CHECK_INT(cutune__t4_load(old_path, p, &b, err, sizeof err), CUTUNE_OK);
    if (!a || !b)
        goto out;
    CHECK_INT(a->n_entries, b->n_entries);
    size_t same = 0, res = 0;
    for (size_t i = 0; i < a->n_entries && i < b->n_entries; i++) {
        same += a->entries[i].outcome == b->entries[i].outcome &&
                a->entries[i].config_index == b->entries[i].config_index;
        res += a->entries[i].outcome == CUTUNE_OUTCOME_RESOURCES;
    }
    CHECK_INT(same, a->n_entries);
    CHECK_INT(res, resources);
    CHECK_INT(a->n_other_invalidity, 0);
    CHECK_INT(b->n_other_invalidity, 0);
out:
    cutune__t4_free(a);
    cutune__t4_free(b);
}

/* ------------------------------------------------------------------ */
/* A replayed tune's T4, through the session's writer                  */

static void test_replayed_tune(const cutune_problem *p, const char *old_path,
                               size_t resources)
{
    cutune_session_options o;
    cutune_session_options_init(&o);
    o.strategy = "brute_force";
    o.seed = 7;
    o.replay_devices = old_path;
    o.cache_dir = in_dir(2, "cache");
    cutune_session *s = NULL;
    const cutune_tune_result *r = NULL;
    CHECK_INT(cutune_session_create(&o, &s), CUTUNE_OK);
    CHECK_INT(cutune_session_tune(s, p, &r), CUTUNE_OK);
    const char *out = in_dir(3, "tuned_T4.json");
    CHECK_INT(cutune_session_write_t4(s, out), CUTUNE_OK);
    cutune_session_destroy(s);

    json_t *root = json_load_file(out, 0, NULL);
    CHECK(root != NULL);
    verdict v = schema_check(root);
    if (v.errors)
        fprintf(stderr, "%zu schema violations, the first: %s\n", v.errors,
                v.first);
    CHECK_INT(v.errors, 0);
    size_t n = 0, constraints = 0, finer = 0, i;
    json_t *res;
    json_array_foreach(json_object_get(root, "results"), i, res)
    {
        n++;
        const char *inv =
            json_string_value(json_object_get(res, "invalidity"));
        const char *why =
            json_string_value(json_object_get(res, "cutune_invalidity"));
        constraints += inv && strcmp(inv, "constraints") == 0;
        finer += why && strcmp(why, "resources") == 0;
    }
    CHECK(n >= cutune__space_size(p->space));
    CHECK(resources > 0);
    CHECK_INT(constraints, resources);
    CHECK_INT(finer, resources);

    json_t *m = json_object_get(root, "metadata");
    CHECK_STR(json_string_value(json_object_get(m, "timeunit")),
              "milliseconds");
    CHECK_STR(json_string_value(
                  json_object_get(json_object_get(m, "device"), "name")),
              "replay old");
    json_t *prob = json_object_get(m, "problem");
    CHECK_STR(json_string_value(json_object_get(prob, "name")),
              "convolution_milo");
    json_t *size = json_object_get(prob, "size");
    CHECK_INT(json_array_size(size), 2);
    CHECK_INT(json_integer_value(json_array_get(size, 0)), 4096);
    CHECK_STR(json_string_value(json_object_get(m, "strategy")),
              "brute_force");
    CHECK_INT(json_integer_value(json_object_get(m, "seed")), 7);
    CHECK(json_is_object(json_object_get(m, "budget")));
    CHECK_STR(json_string_value(json_object_get(m, "cutune_version")),
              cutune_version());
    json_decref(root);
}

/* Every metadata field, written and read back, and the mismatch line. */
static void test_metadata(const cutune_problem *p, const char *data)
{
    const long long dims[] = {4096, 4096};
    cutune__t4_meta meta = {.device_name = "GTX fictional",
                            .cc_major = 9,
                            .cc_minor = 0,
                            .device_uuid =
                                "GPU-00000000-fict-iona-l000-000000000000",
                            .problem_name = "convolution_milo",
                            .problem_size = dims,
                            .n_problem_size = 2,
                            .source_hash = "00112233aabbccdd",
                            .strategy = "random",
                            .seed = UINT64_MAX,
                            .max_evals = 100,
                            .max_seconds = 60,
                            .cutune_version = cutune_version()};
    cutune__t4_record rec = {.config_index = 0,
                             .outcome = CUTUNE_OUTCOME_COMPILE,
                             .time_ms = NAN,
                             .framework_ms = NAN};
    const char *path = in_dir(4, "meta_T4.json");
    char err[1024] = "";
    CHECK_INT(cutune__t4_write(path, p, &meta, &rec, 1, err, sizeof err),
              CUTUNE_OK);
    json_t *root = json_load_file(path, 0, NULL);
    CHECK_INT(schema_check(root).errors, 0);
    json_t *m = json_object_get(root, "metadata");
    json_t *dev = json_object_get(m, "device");
    CHECK_STR(json_string_value(json_object_get(dev, "compute_capability")),
              "9.0");
    CHECK_STR(json_string_value(json_object_get(dev, "uuid")),
              meta.device_uuid);
    CHECK_STR(json_string_value(json_object_get(json_object_get(m, "problem"),
                                                "source_hash")),
              meta.source_hash);
    CHECK_STR(json_string_value(json_object_get(m, "seed")),
              "18446744073709551615");
    CHECK_INT(json_integer_value(json_object_get(json_object_get(m, "budget"),
                                                 "evaluations")),
              100);
    json_decref(root);

    cutune__t4 *t4 = NULL;
    CHECK_INT(cutune__t4_load(path, p, &t4, err, sizeof err), CUTUNE_OK);
    if (!t4)
        return;
    CHECK_STR(t4->meta.device_name, "GTX fictional");
    CHECK_STR(t4->meta.strategy, "random");
    CHECK_INT(t4->meta.n_problem_size, 2);
    char msg[1024];
    /* The loaded problem has no kernel here: no hash to compare. */
    CHECK_INT(cutune__t4_mismatch(t4, path, p, msg, sizeof msg), 0);
    CHECK_STR(msg, "");
    const long long small[] = {1024, 1024};
    cutune_problem *q = load(data, small);
    if (q) {
        strcpy(q->source_hash, "ffeeddccbbaa9988");
        free(q->name);
        q->name = strdup("conv");
        CHECK_INT(cutune__t4_mismatch(t4, path, q, msg, sizeof msg), 1);
        CHECK_CONTAINS(msg, "problem 'convolution_milo' (here 'conv')");
        CHECK_CONTAINS(msg, "size 4096x4096 (here 1024x1024)");
        CHECK_CONTAINS(msg, "kernel source hash 00112233aabbccdd (here "
                            "ffeeddccbbaa9988)");
    }
    cutune_problem_destroy(q);
    cutune__t4_free(t4);
}

/* ------------------------------------------------------------------ */
/* Readers warn once                                                   */

typedef struct logged {
    size_t warnings;
    char last[1024];
} logged;

static void on_log(void *user, cutune_log_level level, const char *msg)
{
    logged *l = user;
    if (level == CUTUNE_LOG_WARN && strstr(msg, "different problem")) {
        l->warnings++;
        snprintf(l->last, sizeof l->last, "%s", msg);
    }
}

static void test_readers_warn(const char *data, const char *recorded)
{
    const long long big[] = {8192, 8192};
    cutune_problem *q = load(data, big);
    if (!q)
        return;
    logged sim_log = {0, ""}, report_log = {0, ""};
    cutune_simulate_options so;
    cutune_simulate_options_init(&so);
    so.results_path = recorded;
    so.strategy = "random";
    so.max_evals = 20;
    so.repeat = 3;
    so.log = on_log;
    so.log_user = &sim_log;
    cutune_simulation *sim = NULL;
    CHECK_INT(cutune_simulate(q, &so, &sim), CUTUNE_OK);
    cutune_simulation_destroy(sim);
    CHECK_INT(sim_log.warnings, 1);
    CHECK_CONTAINS(sim_log.last, "size 4096x4096 (here 8192x8192)");

    cutune_report_options ro;
    cutune_report_options_init(&ro);
    ro.results_path = recorded;
    ro.log = on_log;
    ro.log_user = &report_log;
    cutune_report *rep = NULL;
    CHECK_INT(cutune_report_create(q, &ro, &rep), CUTUNE_OK);
    const char *page = in_dir(5, "report.html");
    CHECK_INT(cutune_report_write(rep, page), CUTUNE_OK);
    cutune_report_destroy(rep);
    CHECK_INT(report_log.warnings, 1);
    FILE *f = fopen(page, "r");
    static char html[1 << 20];
    size_t got = f ? fread(html, 1, sizeof html - 1, f) : 0;
    html[got] = '\0';
    if (f)
        fclose(f);
    CHECK_CONTAINS(html, "replay old");
    CHECK(!strstr(html, "The device is unknown"));

    /* Replayed devices: two slots on one file warn once, for the file. */
    logged tune_log = {0, ""};
    char devices[2048];
    snprintf(devices, sizeof devices, "%s,%s", recorded, recorded);
    cutune_session_options o;
    cutune_session_options_init(&o);
    o.strategy = "random";
    o.max_evals = 10;
    o.replay_devices = devices;
    o.cache_dir = in_dir(6, "cache");
    o.log = on_log;
    o.log_user = &tune_log;
    cutune_session *s = NULL;
    const cutune_tune_result *r = NULL;
    CHECK_INT(cutune_session_create(&o, &s), CUTUNE_OK);
    CHECK_INT(cutune_session_tune(s, q, &r), CUTUNE_OK);
    cutune_session_destroy(s);
    CHECK_INT(tune_log.warnings, 1);
    CHECK_CONTAINS(tune_log.last, "replayed device 0: ");
    CHECK_CONTAINS(tune_log.last, "size 4096x4096 (here 8192x8192)");
    cutune_problem_destroy(q);
}

int main(void)
{
    const char *data = getenv("CUTUNE_TEST_DATA");
    CHECK(data != NULL);
    if (!data || !mkdtemp(dir))
        return check_finish();
    test_checker();
    cutune_problem *p = load(data, NULL);
    if (p) {
        const char *new_path = in_dir(0, "new_T4.json");
        const char *old_path = in_dir(1, "old_T4.json.gz");
        size_t resources = write_recordings(data, p, new_path, old_path);
        test_both_forms(p, new_path, old_path, resources);
        test_replayed_tune(p, old_path, resources);
        test_metadata(p, data);
        test_readers_warn(data, in_dir(3, "tuned_T4.json"));
    }
    cutune_problem_destroy(p);
    remove_tree(dir);
    return check_finish();
}
