/* Tests of the per-device cache store: file format and naming, lookup
 * levels, torn and future-format lines, concurrent appends from many
 * processes, and error reporting. Devices are made up. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#ifndef _DEFAULT_SOURCE
#define _DEFAULT_SOURCE /* flock() */
#endif

#include "store.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "../check.h"

#define FICTIONAL       "GTX Fictional 9000"
#define FICTIONAL_UUID  "GPU-12345678-9abc-def0-1234-56789abcdef0"
#define FICTIONAL_UUID2 "GPU-87654321-0fed-cba9-8765-43210fedcba9"
#define TS_2026         1795341600LL /* 2026-11-22T10:00:00Z */

static char tmp_root[256];

static void make_device(cutune_device *d, const char *name, const char *uuid)
{
    memset(d, 0, sizeof *d);
    snprintf(d->name, sizeof d->name, "%s", name);
    snprintf(d->uuid, sizeof d->uuid, "%s", uuid);
    d->cc_major = 8;
    d->cc_minor = 9;
    d->sm_count = 142;
    d->l2_bytes = 100663296;
    d->memory_bytes = 25769803776LL;
    d->driver_version = 13000;
    snprintf(d->nvrtc_version, sizeof d->nvrtc_version, "13.0");
    snprintf(d->cutune_version, sizeof d->cutune_version, "0.1.0");
}

/* A record whose config says which test wrote it ("tag"). */
typedef struct test_record {
    cutune_cache_record rec;
    long long size[3];
    cutune_param_value config[3];
    cutune_param_value baseline[3];
    char tag[32];
} test_record;

static void make_record(test_record *t, const cutune_device *dev,
                        const char *problem, long long sx, long long sy,
                        const char *tag, long long timestamp)
{
    memset(t, 0, sizeof *t);
    snprintf(t->tag, sizeof t->tag, "%s", tag);
    t->size[0] = sx;
    t->size[1] = sy;
    t->config[0] = (cutune_param_value){"block_size_x", "256"};
    t->config[1] = (cutune_param_value){"tag", t->tag};
    t->config[2] = (cutune_param_value){"unroll", "4"};
    t->baseline[0] = (cutune_param_value){"block_size_x", "1024"};
    t->baseline[1] = (cutune_param_value){"tag", "baseline"};
    t->baseline[2] = (cutune_param_value){"unroll", "1"};

    cutune_cache_record *r = &t->rec;
    r->device = *dev;
    r->problem_name = problem;
    r->source_hash = "9f86d081884c7d65";
    r->problem_size = t->size;
    r->n_problem_size = 2;
    r->compiler_options = "-O3 --use_fast_math";
    r->config = t->config;
    r->n_config = 3;
    r->time_ms = 0.1234567890123;
    r->time_min_ms = 0.1;
    r->time_stddev_ms = 1.0 / 3.0;
    r->runs = 50;
    r->gbs = 1021.5;
    r->baseline = t->baseline;
    r->n_baseline = 3;
    r->baseline_ms = 0.25;
    r->strategy = "random";
    r->evaluations = 120;
    r->tune_seconds = 42.5;
    r->timestamp = timestamp;
}

static char *path_in(const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *p = malloc(n);
    snprintf(p, n, "%s/%s", dir, name);
    return p;
}

static char *read_all(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    size_t got;
    while ((got = fread(buf + len, 1, cap - len - 1, f)) > 0) {
        len += got;
        if (cap - len - 1 == 0)
            buf = realloc(buf, cap *= 2);
    }
    buf[len] = '\0';
    fclose(f);
    return buf;
}

static void append_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "ab");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

static size_t count_char(const char *s, char c)
{
    size_t n = 0;
    for (; *s; s++)
        n += *s == c;
    return n;
}

static void remove_tree(const char *path)
{
    struct stat st;
    if (lstat(path, &st) != 0)
        return;
    if (S_ISDIR(st.st_mode)) {
        DIR *d = opendir(path);
        struct dirent *de;
        while (d && (de = readdir(d))) {
            if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
                continue;
            char *child = path_in(path, de->d_name);
            remove_tree(child);
            free(child);
        }
        if (d)
            closedir(d);
        rmdir(path);
    } else {
        unlink(path);
    }
}

static const char *config_value(const cutune_cache_record *r, const char *name)
{
    for (size_t i = 0; r && i < r->n_config; i++)
        if (strcmp(r->config[i].name, name) == 0)
            return r->config[i].value;
    return NULL;
}

static void test_match_str(void)
{
    CHECK_STR(cutune_match_str(CUTUNE_MATCH_NONE), "none");
    CHECK_STR(cutune_match_str(CUTUNE_MATCH_EXACT), "exact");
    CHECK_STR(cutune_match_str(CUTUNE_MATCH_NEAREST_SIZE), "nearest-size");
}

static void test_file_names(void)
{
    cutune_device d;
    char name[CUTUNE__CACHE_FILE_NAME_MAX];

    make_device(&d, FICTIONAL, FICTIONAL_UUID);
    CHECK_INT(cutune__cache_file_name(&d, name, sizeof name), 0);
    CHECK_STR(name, "gtx-fictional-9000-12345678.jsonl");

    make_device(&d, "NVIDIA H100 80GB HBM3", "GPU-1A2B3C4D-0000");
    CHECK_INT(cutune__cache_file_name(&d, name, sizeof name), 0);
    CHECK_STR(name, "nvidia-h100-80gb-hbm3-1a2b3c4d.jsonl");

    make_device(&d, "GeForce (Laptop) GPU/2", FICTIONAL_UUID);
    d.simulated = 1;
    CHECK_INT(cutune__cache_file_name(&d, name, sizeof name), 0);
    CHECK_STR(name, "sim-geforce-laptop-gpu-2-12345678.jsonl");

    /* No UUID: the id comes from the name, stable and distinct. */
    char other[CUTUNE__CACHE_FILE_NAME_MAX];
    make_device(&d, FICTIONAL, "");
    CHECK_INT(cutune__cache_file_name(&d, name, sizeof name), 0);
    CHECK_INT(strlen(name), strlen("gtx-fictional-9000-") + 8 + 6);
    CHECK(strncmp(name, "gtx-fictional-9000-", 19) == 0);
    CHECK(strspn(name + 19, "0123456789abcdef") == 8);
    make_device(&d, "GTX Fictional 9001", "");
    CHECK_INT(cutune__cache_file_name(&d, other, sizeof other), 0);
    CHECK(strcmp(name + 19, other + 19) != 0);

    /* Too small a buffer fails cleanly. */
    make_device(&d, FICTIONAL, FICTIONAL_UUID);
    CHECK_INT(cutune__cache_file_name(&d, name, 10), -1);
    CHECK_STR(name, "");
}

static void check_round_trip(const cutune_cache_record *got,
                             const cutune_cache_record *want)
{
    const cutune_device *g = &got->device, *w = &want->device;
    CHECK_STR(g->name, w->name);
    CHECK_STR(g->uuid, w->uuid);
    CHECK_INT(g->cc_major, w->cc_major);
    CHECK_INT(g->cc_minor, w->cc_minor);
    CHECK_INT(g->sm_count, w->sm_count);
    CHECK_INT(g->l2_bytes, w->l2_bytes);
    CHECK_INT(g->memory_bytes, w->memory_bytes);
    CHECK_INT(g->driver_version, w->driver_version);
    CHECK_STR(g->nvrtc_version, w->nvrtc_version);
    CHECK_STR(g->cutune_version, w->cutune_version);
    CHECK_INT(g->simulated, w->simulated);
    CHECK_STR(got->problem_name, want->problem_name);
    CHECK_STR(got->source_hash, want->source_hash);
    CHECK_INT(got->n_problem_size, want->n_problem_size);
    for (size_t i = 0; i < got->n_problem_size && i < want->n_problem_size;
         i++)
        CHECK_INT(got->problem_size[i], want->problem_size[i]);
    CHECK_STR(got->compiler_options, want->compiler_options);
    CHECK_INT(got->n_config, want->n_config);
    for (size_t i = 0; i < got->n_config && i < want->n_config; i++) {
        CHECK_STR(got->config[i].name, want->config[i].name);
        CHECK_STR(got->config[i].value, want->config[i].value);
    }
    /* Exact equality: reals are written with enough digits to round-trip. */
    CHECK(got->time_ms == want->time_ms);
    CHECK(got->time_min_ms == want->time_min_ms);
    CHECK(got->time_stddev_ms == want->time_stddev_ms);
    CHECK_INT(got->runs, want->runs);
    CHECK(got->gbs == want->gbs);
    CHECK_INT(got->n_baseline, want->n_baseline);
    for (size_t i = 0; i < got->n_baseline && i < want->n_baseline; i++) {
        CHECK_STR(got->baseline[i].name, want->baseline[i].name);
        CHECK_STR(got->baseline[i].value, want->baseline[i].value);
    }
    CHECK(got->baseline_ms == want->baseline_ms);
    CHECK_STR(got->strategy, want->strategy);
    CHECK_INT(got->evaluations, want->evaluations);
    CHECK(got->tune_seconds == want->tune_seconds);
    CHECK_INT(got->timestamp, want->timestamp);
}

static void test_missing_dir(void)
{
    char *dir = path_in(tmp_root, "never/made");
    cutune_cache *cache = NULL;
    CHECK_INT(cutune_cache_open(dir, &cache), CUTUNE_OK);
    CHECK_STR(cutune_cache_dir(cache), dir);
    const cutune_cache_record *rec = (const cutune_cache_record *)1;
    cutune_match match = CUTUNE_MATCH_EXACT;
    cutune_cache_query q = {.problem_name = "saxpy", .device_name = FICTIONAL};
    CHECK_INT(cutune_cache_lookup(cache, &q, &rec, &match),
              CUTUNE_ERR_NOT_FOUND);
    CHECK(rec == NULL);
    CHECK_INT(match, CUTUNE_MATCH_NONE);
    CHECK_CONTAINS(cutune_cache_errmsg(cache), "saxpy");
    CHECK_CONTAINS(cutune_cache_errmsg(cache), FICTIONAL);
    CHECK_INT(cutune_cache_skipped_lines(cache), 0);
    struct stat st;
    CHECK(stat(dir, &st) != 0); /* a lookup creates nothing */
    cutune_cache_close(cache);
    free(dir);
}

static void test_round_trip_and_file(void)
{
    char *dir = path_in(tmp_root, "rt/a/b/");
    char *clean = path_in(tmp_root, "rt/a/b");
    cutune_cache *cache = NULL;
    CHECK_INT(cutune_cache_open(dir, &cache), CUTUNE_OK);
    CHECK_STR(cutune_cache_dir(cache), clean); /* trailing '/' dropped */

    cutune_device dev;
    make_device(&dev, FICTIONAL, FICTIONAL_UUID);
    test_record t;
    make_record(&t, &dev, "matmul", 1024, 2048, "rt", TS_2026);
    CHECK_INT(cutune_cache_append(cache, &t.rec), CUTUNE_OK);
    CHECK_STR(cutune_cache_errmsg(cache), "");

    struct stat st;
    CHECK(stat(clean, &st) == 0 && S_ISDIR(st.st_mode));
    CHECK_INT(st.st_mode & 0777, 0755);
    char *file = path_in(clean, "gtx-fictional-9000-12345678.jsonl");
    char *text = read_all(file);
    CHECK(text != NULL);
    if (text) {
        CHECK_INT(count_char(text, '\n'), 1);
        CHECK(text[strlen(text) - 1] == '\n');
        CHECK(strncmp(text, "{\"cutune_cache\":1,\"device\":{", 28) == 0);
        CHECK_CONTAINS(text, "\"cc\":\"8.9\"");
        CHECK_CONTAINS(text, "\"simulated\":false");
        CHECK_CONTAINS(text, "\"problem_size\":[1024,2048]");
        CHECK_CONTAINS(text, "\"config\":{\"block_size_x\":\"256\","
                             "\"tag\":\"rt\",\"unroll\":\"4\"}");
        CHECK_CONTAINS(text, "\"baseline\":{\"config\":{");
        CHECK_CONTAINS(text, "\"timestamp\":\"2026-11-22T10:00:00Z\"");
        /* The line stands alone as JSON. */
        json_error_t err;
        json_t *root = json_loads(text, 0, &err);
        CHECK(root != NULL);
        CHECK_INT(json_integer_value(json_object_get(root, "cutune_cache")),
                  1);
        CHECK(json_is_real(
            json_object_get(json_object_get(root, "stats"), "time_ms")));
        CHECK(json_is_integer(
            json_object_get(json_object_get(root, "stats"), "runs")));
        json_decref(root);
    }
    free(text);

    cutune_cache_query q = {.problem_name = "matmul",
                            .device_name = "gtx FICTIONAL 9000",
                            .problem_size = t.size,
                            .n_problem_size = 2};
    const cutune_cache_record *rec = NULL;
    cutune_match match = CUTUNE_MATCH_NONE;
    CHECK_INT(cutune_cache_lookup(cache, &q, &rec, &match), CUTUNE_OK);
    CHECK_INT(match, CUTUNE_MATCH_EXACT);
    CHECK(rec != NULL);
    if (rec)
        check_round_trip(rec, &t.rec);
    CHECK_INT(cutune_cache_skipped_lines(cache), 0);

    /* A simulated device with odd values, no problem size, no baseline. */
    cutune_device sim;
    make_device(&sim, "Fictional Sim \xc3\xa9", "");
    sim.simulated = 1;
    sim.cc_major = 10;
    sim.cc_minor = 12;
    sim.l2_bytes = -1;
    test_record s;
    make_record(&s, &sim, "reduce \"quoted\"\n", 0, 0, "sim", 0);
    s.rec.problem_size = NULL;
    s.rec.n_problem_size = 0;
    s.rec.baseline = NULL;
    s.rec.n_baseline = 0;
    s.rec.source_hash = NULL; /* written as "" */
    s.rec.time_ms = 1e-300;
    s.rec.gbs = 0;
    CHECK_INT(cutune_cache_append(cache, &s.rec), CUTUNE_OK);
    cutune_cache_query qs = {.problem_name = "reduce \"quoted\"\n"};
    CHECK_INT(cutune_cache_lookup(cache, &qs, &rec, &match), CUTUNE_OK);
    CHECK_INT(match, CUTUNE_MATCH_EXACT);
    if (rec) {
        s.rec.source_hash = "";
        check_round_trip(rec, &s.rec);
    }
    char sim_name[CUTUNE__CACHE_FILE_NAME_MAX];
    cutune__cache_file_name(&sim, sim_name, sizeof sim_name);
    CHECK(strncmp(sim_name, "sim-fictional-sim-", 18) == 0);
    char *sim_file = path_in(clean, sim_name);
    CHECK(stat(sim_file, &st) == 0);
    free(sim_file);

    cutune_cache_close(cache);
    free(file);
    free(clean);
    free(dir);
}

static void test_lookup_levels(void)
{
    char *dir = path_in(tmp_root, "levels");
    cutune_cache *cache = NULL;
    CHECK_INT(cutune_cache_open(dir, &cache), CUTUNE_OK);
    cutune_device a, b;
    make_device(&a, FICTIONAL, FICTIONAL_UUID);
    make_device(&b, FICTIONAL, FICTIONAL_UUID2); /* same model, other GPU */
    test_record t;

    make_record(&t, &a, "stencil", 1024, 1024, "a-1k", 1000);
    CHECK_INT(cutune_cache_append(cache, &t.rec), CUTUNE_OK);
    make_record(&t, &a, "stencil", 4096, 4096, "a-4k", 2000);
    CHECK_INT(cutune_cache_append(cache, &t.rec), CUTUNE_OK);
    make_record(&t, &b, "stencil", 1024, 1024, "b-1k", 3000);
    CHECK_INT(cutune_cache_append(cache, &t.rec), CUTUNE_OK);
    make_record(&t, &a, "other", 1024, 1024, "a-other", 9000);
    CHECK_INT(cutune_cache_append(cache, &t.rec), CUTUNE_OK);

    long long k1[2] = {1024, 1024}, k3[2] = {3000, 3000},
              k15[2] = {1500, 1500}, k4[2] = {4096, 4096}, d1[1] = {1024};
    const cutune_cache_record *rec = NULL;
    cutune_match match;

    /* By UUID: only device a's records. */
    cutune_cache_query q = {.problem_name = "stencil",
                            .device_uuid = FICTIONAL_UUID,
                            .device_name = "ignored when a uuid is given",
                            .problem_size = k1,
                            .n_problem_size = 2};
    CHECK_INT(cutune_cache_lookup(cache, &q, &rec, &match), CUTUNE_OK);
    CHECK_INT(match, CUTUNE_MATCH_EXACT);
    CHECK_STR(config_value(rec, "tag"), "a-1k"); /* exact beats newer */
    CHECK_STR(rec ? rec->device.uuid : NULL, FICTIONAL_UUID);

    q.problem_size = k3;
    CHECK_INT(cutune_cache_lookup(cache, &q, &rec, &match), CUTUNE_OK);
    CHECK_INT(match, CUTUNE_MATCH_NEAREST_SIZE);
    CHECK_STR(config_value(rec, "tag"), "a-4k");

    q.problem_size = k15;
    CHECK_INT(cutune_cache_lookup(cache, &q, &rec, &match), CUTUNE_OK);
    CHECK_INT(match, CUTUNE_MATCH_NEAREST_SIZE);
    CHECK_STR(config_value(rec, "tag"), "a-1k");

    /* Another dimension count is far, but still the device's best guess. */
    q.problem_size = d1;
    q.n_problem_size = 1;
    CHECK_INT(cutune_cache_lookup(cache, &q, &rec, &match), CUTUNE_OK);
    CHECK_INT(match, CUTUNE_MATCH_NEAREST_SIZE);
    CHECK_STR(config_value(rec, "tag"), "a-4k"); /* the newer of the two */

    /* Any size: the newest. */
    q.problem_size = NULL;
    q.n_problem_size = 0;
    CHECK_INT(cutune_cache_lookup(cache, &q, &rec, &match), CUTUNE_OK);
    CHECK_INT(match, CUTUNE_MATCH_EXACT);
    CHECK_STR(config_value(rec, "tag"), "a-4k");

    /* UUID of the other GPU. */
    q.device_uuid = FICTIONAL_UUID2;
    q.problem_size = k4;
    q.n_problem_size = 2;
    CHECK_INT(cutune_cache_lookup(cache, &q, &rec, &match), CUTUNE_OK);
    CHECK_INT(match, CUTUNE_MATCH_NEAREST_SIZE);
    CHECK_STR(config_value(rec, "tag"), "b-1k");

    /* By name, case-insensitively: both GPUs' records count. */
    cutune_cache_query qn = {.problem_name = "stencil",
                             .device_name = "GTX FICTIONAL 9000",
                             .problem_size = k1,
                             .n_problem_size = 2};
    CHECK_INT(cutune_cache_lookup(cache, &qn, &rec, &match), CUTUNE_OK);
    CHECK_INT(match, CUTUNE_MATCH_EXACT);
    CHECK_STR(config_value(rec, "tag"), "b-1k"); /* newest exact */

    /* No device given: any device. */
    cutune_cache_query qa = {.problem_name = "other"};
    CHECK_INT(cutune_cache_lookup(cache, &qa, &rec, &match), CUTUNE_OK);
    CHECK_STR(config_value(rec, "tag"), "a-other");

    /* Not found: unknown problem, unknown device, unknown uuid. */
    cutune_cache_query qx = {.problem_name = "nonexistent",
                             .device_name = FICTIONAL};
    CHECK_INT(cutune_cache_lookup(cache, &qx, &rec, &match),
              CUTUNE_ERR_NOT_FOUND);
    CHECK(rec == NULL);
    CHECK_INT(match, CUTUNE_MATCH_NONE);
    CHECK_CONTAINS(cutune_cache_errmsg(cache), "nonexistent");
    CHECK_CONTAINS(cutune_cache_errmsg(cache), FICTIONAL);
    qx.problem_name = "stencil";
    qx.device_name = "RTX Imaginary 1";
    CHECK_INT(cutune_cache_lookup(cache, &qx, &rec, &match),
              CUTUNE_ERR_NOT_FOUND);
    CHECK_CONTAINS(cutune_cache_errmsg(cache), "RTX Imaginary 1");
    qx.device_uuid = "GPU-00000000-dead";
    CHECK_INT(cutune_cache_lookup(cache, &qx, &rec, &match),
              CUTUNE_ERR_NOT_FOUND);
    CHECK_CONTAINS(cutune_cache_errmsg(cache), "GPU-00000000-dead");

    cutune_cache_close(cache);
    free(dir);
}

static void test_newest_wins(void)
{
    char *dir = path_in(tmp_root, "newest");
    cutune_cache *cache = NULL;
    CHECK_INT(cutune_cache_open(dir, &cache), CUTUNE_OK);
    cutune_device a;
    make_device(&a, FICTIONAL, FICTIONAL_UUID);
    test_record t;
    make_record(&t, &a, "scan", 512, 512, "new", 2000);
    CHECK_INT(cutune_cache_append(cache, &t.rec), CUTUNE_OK);
    make_record(&t, &a, "scan", 512, 512, "old", 1000); /* appended later */
    CHECK_INT(cutune_cache_append(cache, &t.rec), CUTUNE_OK);

    long long size[2] = {512, 512};
    cutune_cache_query q = {.problem_name = "scan",
                            .device_name = FICTIONAL,
                            .problem_size = size,
                            .n_problem_size = 2};
    const cutune_cache_record *rec = NULL;
    cutune_match match;
    CHECK_INT(cutune_cache_lookup(cache, &q, &rec, &match), CUTUNE_OK);
    CHECK_STR(config_value(rec, "tag"), "new");

    /* Same timestamp: the later line wins. */
    make_record(&t, &a, "scan", 512, 512, "tie", 2000);
    CHECK_INT(cutune_cache_append(cache, &t.rec), CUTUNE_OK);
    CHECK_INT(cutune_cache_lookup(cache, &q, &rec, &match), CUTUNE_OK);
    CHECK_STR(config_value(rec, "tag"), "tie");

    /* Nearest size: a halving and a doubling are equally far, so the
     * newer wins whichever comes first in the file. */
    make_record(&t, &a, "scan2", 256, 256, "half", 5000);
    CHECK_INT(cutune_cache_append(cache, &t.rec), CUTUNE_OK);
    make_record(&t, &a, "scan2", 1024, 1024, "double", 4000);
    CHECK_INT(cutune_cache_append(cache, &t.rec), CUTUNE_OK);
    q.problem_name = "scan2";
    CHECK_INT(cutune_cache_lookup(cache, &q, &rec, &match), CUTUNE_OK);
    CHECK_INT(match, CUTUNE_MATCH_NEAREST_SIZE);
    CHECK_STR(config_value(rec, "tag"), "half");
    make_record(&t, &a, "scan2", 1024, 1024, "double-new", 6000);
    CHECK_INT(cutune_cache_append(cache, &t.rec), CUTUNE_OK);
    CHECK_INT(cutune_cache_lookup(cache, &q, &rec, &match), CUTUNE_OK);
    CHECK_STR(config_value(rec, "tag"), "double-new");

    cutune_cache_close(cache);
    free(dir);
}

static void test_torn_and_future_lines(void)
{
    char *dir = path_in(tmp_root, "torn");
    cutune_cache *cache = NULL;
    CHECK_INT(cutune_cache_open(dir, &cache), CUTUNE_OK);
    cutune_device a;
    make_device(&a, FICTIONAL, FICTIONAL_UUID);
    test_record t;
    make_record(&t, &a, "fft", 64, 64, "first", 1000);
    CHECK_INT(cutune_cache_append(cache, &t.rec), CUTUNE_OK);
    make_record(&t, &a, "fft", 64, 64, "second", 2000);
    CHECK_INT(cutune_cache_append(cache, &t.rec), CUTUNE_OK);

    char *file = path_in(dir, "gtx-fictional-9000-12345678.jsonl");
    char *text = read_all(file);
    CHECK(text != NULL);
    if (!text)
        text = strdup("");

    /* A killed writer's half line, no newline. */
    append_text(file, "{\"cutune_cache\":1,\"device\":{\"name\":\"GTX Fic");

    long long size[2] = {64, 64};
    cutune_cache_query q = {.problem_name = "fft",
                            .device_uuid = FICTIONAL_UUID,
                            .problem_size = size,
                            .n_problem_size = 2};
    const cutune_cache_record *rec = NULL;
    cutune_match match;
    CHECK_INT(cutune_cache_lookup(cache, &q, &rec, &match), CUTUNE_OK);
    CHECK_STR(config_value(rec, "tag"), "second");
    CHECK_INT(cutune_cache_skipped_lines(cache), 1);

    /* The next append must not be glued to the torn fragment. */
    make_record(&t, &a, "fft", 64, 64, "after-torn", 3000);
    CHECK_INT(cutune_cache_append(cache, &t.rec), CUTUNE_OK);
    CHECK_INT(cutune_cache_lookup(cache, &q, &rec, &match), CUTUNE_OK);
    CHECK_STR(config_value(rec, "tag"), "after-torn");
    CHECK_INT(cutune_cache_skipped_lines(cache), 1);

    /* Newer format versions, a missing version, a record that is valid
     * JSON but incomplete, and non-objects: all skipped, none misread,
     * even though each would be the newest. */
    const char *second_line = strchr(text, '\n');
    second_line = second_line ? second_line + 1 : text;
    const char *v1 = "{\"cutune_cache\":1,";
    CHECK(strncmp(second_line, v1, strlen(v1)) == 0);
    const char *rest = second_line + strlen(v1);
    char *line = malloc(strlen(text) + 256);
    const char *heads[] = {
        "{\"cutune_cache\":3,",
        "{\"cutune_cache\":\"1\",",
        "{\"cutune_cache\":0,",
        "{",
    };
    for (size_t i = 0; i < sizeof heads / sizeof heads[0]; i++) {
        sprintf(line, "%s%s", heads[i], rest);
        /* make each the newest and recognisable */
        char *ts = strstr(line, "\"timestamp\":\"");
        if (ts)
            memcpy(ts + 13, "2099", 4);
        char *tag = strstr(line, "\"tag\":\"second\"");
        if (tag)
            memcpy(tag + 7, "FUTURE", 6);
        append_text(file, line);
    }
    /* Well-formed JSON, wrong shape. */
    append_text(file, "[1,2,3]\n");
    append_text(file, "{\"cutune_cache\":1}\n");
    /* Blank lines are not records and are not counted. */
    append_text(file, "\n   \n");
    /* A wrong field type inside an otherwise fine record. */
    sprintf(line, "%s%s", v1, rest);
    char *runs = strstr(line, "\"runs\":50");
    if (runs)
        memcpy(runs, "\"runs\":-5", 9);
    append_text(file, line);

    CHECK_INT(cutune_cache_lookup(cache, &q, &rec, &match), CUTUNE_OK);
    CHECK_STR(config_value(rec, "tag"), "after-torn");
    CHECK_INT(rec ? rec->timestamp : 0, 3000);
    CHECK_INT(cutune_cache_skipped_lines(cache), 1 + 4 + 2 + 1);

    /* The future line is skipped even when nothing else would answer. */
    cutune_cache_query q2 = {.problem_name = "fft", .device_name = "nobody"};
    CHECK_INT(cutune_cache_lookup(cache, &q2, &rec, &match),
              CUTUNE_ERR_NOT_FOUND);

    free(line);
    free(text);
    free(file);
    cutune_cache_close(cache);
    free(dir);
}

#define WRITERS    16
#define PER_WRITER 50

static void test_concurrent_appends(void)
{
    char *dir = path_in(tmp_root, "concurrent");
    /* Lines longer than PIPE_BUF and a page, so that interleaving would
     * show if the lock did not work. */
    static char padding[9000];
    memset(padding, 'x', sizeof padding - 1);

    fflush(NULL);
    pid_t pids[WRITERS];
    for (int w = 0; w < WRITERS; w++) {
        pids[w] = fork();
        if (pids[w] == 0) {
            cutune_cache *cache = NULL;
            int bad = cutune_cache_open(dir, &cache) != CUTUNE_OK;
            cutune_device a;
            make_device(&a, FICTIONAL, FICTIONAL_UUID);
            for (int i = 0; i < PER_WRITER && !bad; i++) {
                test_record t;
                char tag[32];
                snprintf(tag, sizeof tag, "w%d-%d", w, i);
                make_record(&t, &a, "race", 4096, 4096, tag, 1000 + i);
                t.rec.compiler_options = padding;
                bad = cutune_cache_append(cache, &t.rec) != CUTUNE_OK;
            }
            cutune_cache_close(cache);
            free(dir);
            _exit(bad);
        }
    }
    int all_ok = 1;
    for (int w = 0; w < WRITERS; w++) {
        int status = 0;
        if (pids[w] < 0 || waitpid(pids[w], &status, 0) != pids[w] ||
            !WIFEXITED(status) || WEXITSTATUS(status) != 0)
            all_ok = 0;
    }
    CHECK(all_ok);

    char *file = path_in(dir, "gtx-fictional-9000-12345678.jsonl");
    FILE *f = fopen(file, "r");
    CHECK(f != NULL);
    size_t lines = 0, good = 0, distinct = 0;
    static char seen[WRITERS][PER_WRITER];
    memset(seen, 0, sizeof seen);
    char *line = NULL;
    size_t cap = 0;
    ssize_t got;
    while (f && (got = getline(&line, &cap, f)) >= 0) {
        lines++;
        json_error_t err;
        json_t *root = json_loadb(line, (size_t)got, 0, &err);
        const char *tag = json_string_value(
            json_object_get(json_object_get(root, "config"), "tag"));
        const char *opts = json_string_value(json_object_get(
            json_object_get(root, "problem"), "compiler_options"));
        int w, i;
        if (root && line[got - 1] == '\n' && tag && opts &&
            strlen(opts) == sizeof padding - 1 &&
            sscanf(tag, "w%d-%d", &w, &i) == 2 && w >= 0 && w < WRITERS &&
            i >= 0 && i < PER_WRITER) {
            good++;
            if (!seen[w][i]++)
                distinct++;
        }
        json_decref(root);
    }
    free(line);
    if (f)
        fclose(f);
    CHECK_INT(lines, WRITERS * PER_WRITER);
    CHECK_INT(good, WRITERS * PER_WRITER);
    CHECK_INT(distinct, WRITERS * PER_WRITER);

    cutune_cache *cache = NULL;
    CHECK_INT(cutune_cache_open(dir, &cache), CUTUNE_OK);
    cutune_cache_query q = {.problem_name = "race"};
    const cutune_cache_record *rec = NULL;
    cutune_match match;
    CHECK_INT(cutune_cache_lookup(cache, &q, &rec, &match), CUTUNE_OK);
    CHECK_INT(cutune_cache_skipped_lines(cache), 0);
    CHECK_INT(rec ? rec->timestamp : 0, 1000 + PER_WRITER - 1);
    cutune_cache_close(cache);
    free(file);
    free(dir);
}

/* An append waits for the file's lock: on local file systems O_APPEND
 * alone rarely shows interleaving, so test the lock itself. */
static void test_append_waits_for_lock(void)
{
    char *dir = path_in(tmp_root, "locked");
    cutune_cache *cache = NULL;
    CHECK_INT(cutune_cache_open(dir, &cache), CUTUNE_OK);
    cutune_device a;
    make_device(&a, FICTIONAL, FICTIONAL_UUID);
    test_record t;
    make_record(&t, &a, "lock", 8, 8, "first", 1);
    CHECK_INT(cutune_cache_append(cache, &t.rec), CUTUNE_OK);
    cutune_cache_close(cache);

    char *file = path_in(dir, "gtx-fictional-9000-12345678.jsonl");
    int fd = open(file, O_RDONLY);
    CHECK(fd >= 0 && flock(fd, LOCK_EX) == 0);
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        cutune_cache *child = NULL;
        test_record c;
        make_record(&c, &a, "lock", 8, 8, "second", 2);
        int bad = cutune_cache_open(dir, &child) != CUTUNE_OK ||
                  cutune_cache_append(child, &c.rec) != CUTUNE_OK;
        cutune_cache_close(child);
        free(file);
        free(dir);
        _exit(bad);
    }
    struct timespec pause = {0, 300 * 1000 * 1000};
    nanosleep(&pause, NULL);
    int status = 0;
    CHECK(pid > 0 && waitpid(pid, &status, WNOHANG) == 0); /* blocked */
    char *text = read_all(file);
    CHECK(text && count_char(text, '\n') == 1);
    free(text);
    flock(fd, LOCK_UN);
    close(fd);
    CHECK(pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
          WEXITSTATUS(status) == 0);
    text = read_all(file);
    CHECK(text && count_char(text, '\n') == 2);
    CHECK_CONTAINS(text, "\"tag\":\"second\"");
    free(text);
    free(file);
    free(dir);
}

static void test_environment(void)
{
    char *env_dir = path_in(tmp_root, "from-env");
    char *home = path_in(tmp_root, "home");
    char *home_cache = path_in(home, ".cache/cutune");
    cutune_cache *cache = NULL;

    setenv("CUTUNE_CACHE_DIR", env_dir, 1);
    CHECK_INT(cutune_cache_open(NULL, &cache), CUTUNE_OK);
    CHECK_STR(cutune_cache_dir(cache), env_dir);
    cutune_device a;
    make_device(&a, FICTIONAL, FICTIONAL_UUID);
    test_record t;
    make_record(&t, &a, "env", 8, 8, "env", 1);
    CHECK_INT(cutune_cache_append(cache, &t.rec), CUTUNE_OK);
    char *file = path_in(env_dir, "gtx-fictional-9000-12345678.jsonl");
    struct stat st;
    CHECK(stat(file, &st) == 0);
    free(file);
    cutune_cache_close(cache);

    /* An explicit directory wins over the environment. */
    char *explicit_dir = path_in(tmp_root, "explicit");
    CHECK_INT(cutune_cache_open(explicit_dir, &cache), CUTUNE_OK);
    CHECK_STR(cutune_cache_dir(cache), explicit_dir);
    cutune_cache_close(cache);
    free(explicit_dir);

    /* Empty means unset; then $HOME/.cache/cutune. */
    setenv("CUTUNE_CACHE_DIR", "", 1);
    setenv("HOME", home, 1);
    CHECK_INT(cutune_cache_open(NULL, &cache), CUTUNE_OK);
    CHECK_STR(cutune_cache_dir(cache), home_cache);
    CHECK_INT(cutune_cache_append(cache, &t.rec), CUTUNE_OK);
    cutune_cache_close(cache);

    /* Neither: an error that says what to set. */
    unsetenv("CUTUNE_CACHE_DIR");
    unsetenv("HOME");
    cache = NULL;
    CHECK(cutune_cache_open(NULL, &cache) != CUTUNE_OK);
    CHECK(cache != NULL);
    CHECK_CONTAINS(cutune_cache_errmsg(cache), "CUTUNE_CACHE_DIR");
    CHECK_CONTAINS(cutune_cache_errmsg(cache), "HOME");
    CHECK_STR(cutune_cache_dir(cache), "");
    CHECK_INT(cutune_cache_append(cache, &t.rec), CUTUNE_ERR_INVALID_ARGUMENT);
    cutune_cache_close(cache);

    free(home_cache);
    free(home);
    free(env_dir);
}

static void test_errors(void)
{
    /* Root may write anywhere, so make the directory unusable with a
     * regular file where a parent directory should be. */
    char *plain = path_in(tmp_root, "plain-file");
    append_text(plain, "not a directory\n");
    char *dir = path_in(plain, "sub");
    cutune_cache *cache = NULL;
    CHECK_INT(cutune_cache_open(dir, &cache), CUTUNE_OK);
    cutune_device a;
    make_device(&a, FICTIONAL, FICTIONAL_UUID);
    test_record t;
    make_record(&t, &a, "err", 8, 8, "err", 1);
    CHECK_INT(cutune_cache_append(cache, &t.rec), CUTUNE_ERR_IO);
    CHECK_CONTAINS(cutune_cache_errmsg(cache), dir);
    CHECK_CONTAINS(cutune_cache_errmsg(cache), "Not a directory");
    cutune_cache_query q = {.problem_name = "err"};
    const cutune_cache_record *rec = NULL;
    cutune_match match;
    CHECK_INT(cutune_cache_lookup(cache, &q, &rec, &match), CUTUNE_ERR_IO);
    CHECK_CONTAINS(cutune_cache_errmsg(cache), dir);
    cutune_cache_close(cache);
    free(dir);

    /* The cache directory itself is a file. */
    CHECK_INT(cutune_cache_open(plain, &cache), CUTUNE_OK);
    CHECK_INT(cutune_cache_append(cache, &t.rec), CUTUNE_ERR_IO);
    CHECK_CONTAINS(cutune_cache_errmsg(cache), plain);
    cutune_cache_close(cache);

    /* Bad records are refused before anything is written. */
    char *good_dir = path_in(tmp_root, "refused");
    CHECK_INT(cutune_cache_open(good_dir, &cache), CUTUNE_OK);
    CHECK_INT(cutune_cache_append(cache, NULL), CUTUNE_ERR_INVALID_ARGUMENT);
    t.rec.problem_name = NULL;
    CHECK_INT(cutune_cache_append(cache, &t.rec), CUTUNE_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(cutune_cache_errmsg(cache), "problem name");
    make_record(&t, &a, "err", 8, 8, "err", 1);
    t.rec.time_ms = NAN;
    CHECK_INT(cutune_cache_append(cache, &t.rec), CUTUNE_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(cutune_cache_errmsg(cache), "time_ms");
    make_record(&t, &a, "err", 8, 8, "err", 1);
    t.config[2].name = "tag";
    CHECK_INT(cutune_cache_append(cache, &t.rec), CUTUNE_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(cutune_cache_errmsg(cache), "tag");
    make_record(&t, &a, "err", 8, 8, "err", 1);
    t.rec.strategy = "bad \xff utf-8";
    CHECK_INT(cutune_cache_append(cache, &t.rec), CUTUNE_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(cutune_cache_errmsg(cache), "strategy");
    make_record(&t, &a, "err", 8, 8, "err", 1);
    t.rec.timestamp = 300000000000LL; /* year 11476 */
    CHECK_INT(cutune_cache_append(cache, &t.rec), CUTUNE_ERR_INVALID_ARGUMENT);
    struct stat st;
    CHECK(stat(good_dir, &st) != 0);

    CHECK_INT(cutune_cache_lookup(cache, NULL, &rec, &match),
              CUTUNE_ERR_INVALID_ARGUMENT);
    CHECK_INT(cutune_cache_lookup(NULL, &q, &rec, &match),
              CUTUNE_ERR_INVALID_ARGUMENT);
    CHECK_INT(cutune_cache_append(NULL, &t.rec), CUTUNE_ERR_INVALID_ARGUMENT);
    CHECK_INT(cutune_cache_open(good_dir, NULL), CUTUNE_ERR_INVALID_ARGUMENT);
    cutune_cache_close(cache);
    cutune_cache_close(NULL);
    CHECK(cutune_cache_errmsg(NULL) != NULL);
    CHECK_INT(cutune_cache_skipped_lines(NULL), 0);
    free(good_dir);
    free(plain);
}

/* Timestamps at the edges of the four-digit years, and a leap day. */
static void test_timestamps(void)
{
    char *dir = path_in(tmp_root, "time");
    cutune_cache *cache = NULL;
    CHECK_INT(cutune_cache_open(dir, &cache), CUTUNE_OK);
    cutune_device a;
    make_device(&a, FICTIONAL, FICTIONAL_UUID);
    const struct {
        long long ts;
        const char *text;
    } cases[] = {
        {0, "1970-01-01T00:00:00Z"},
        {951782400, "2000-02-29T00:00:00Z"},
        {-62167219200LL, "0000-01-01T00:00:00Z"},
        {253402300799LL, "9999-12-31T23:59:59Z"},
        {-1, "1969-12-31T23:59:59Z"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char problem[32];
        snprintf(problem, sizeof problem, "time%zu", i);
        test_record t;
        make_record(&t, &a, problem, 1, 1, "t", cases[i].ts);
        CHECK_INT(cutune_cache_append(cache, &t.rec), CUTUNE_OK);
        cutune_cache_query q = {.problem_name = problem};
        const cutune_cache_record *rec = NULL;
        cutune_match match;
        CHECK_INT(cutune_cache_lookup(cache, &q, &rec, &match), CUTUNE_OK);
        CHECK_INT(rec ? rec->timestamp : 12345, cases[i].ts);
    }
    char *file = path_in(dir, "gtx-fictional-9000-12345678.jsonl");
    char *text = read_all(file);
    for (size_t i = 0; text && i < sizeof cases / sizeof cases[0]; i++)
        CHECK_CONTAINS(text, cases[i].text);
    free(text);
    free(file);
    cutune_cache_close(cache);
    free(dir);
}

static void set_cc(test_record *t, int major, int minor, int sm)
{
    t->rec.device.cc_major = major;
    t->rec.device.cc_minor = minor;
    t->rec.device.sm_count = sm;
}

/* Each level of the fallback chain, and the level reported. */
static void test_fallback_chain(void)
{
    char *dir = path_in(tmp_root, "chain");
    cutune_cache *cache = NULL;
    CHECK_INT(cutune_cache_open(dir, &cache), CUTUNE_OK);
    cutune_device a, b, c, d, s;
    make_device(&a, "GTX Fictional 9000", FICTIONAL_UUID);
    make_device(&b, "GTX Fictional 8000", "");
    make_device(&c, "GTX Fictional 3000", "");
    make_device(&d, "GTX Fictional 9900", "");
    make_device(&s, "GTX Simulated 8500", "");
    s.simulated = 1;
    test_record t;
    make_record(&t, &a, "gemm", 1024, 1024, "a", 1000);
    set_cc(&t, 8, 9, 142);
    CHECK_INT(cutune_cache_append(cache, &t.rec), CUTUNE_OK);
    make_record(&t, &b, "gemm", 1024, 1024, "b", 1000);
    set_cc(&t, 8, 9, 128);
    CHECK_INT(cutune_cache_append(cache, &t.rec), CUTUNE_OK);
    make_record(&t, &c, "gemm", 1024, 1024, "c", 1000);
    set_cc(&t, 8, 9, 60);
    CHECK_INT(cutune_cache_append(cache, &t.rec), CUTUNE_OK);
    make_record(&t, &d, "gemm", 2048, 2048, "d", 1000);
    set_cc(&t, 9, 0, 132);
    CHECK_INT(cutune_cache_append(cache, &t.rec), CUTUNE_OK);
    /* A simulated device with the nearest SM count of all: a real
     * device's record still beats it. */
    make_record(&t, &s, "gemm", 1024, 1024, "s", 9000);
    set_cc(&t, 8, 9, 130);
    CHECK_INT(cutune_cache_append(cache, &t.rec), CUTUNE_OK);

    long long k1[2] = {1024, 1024}, k2[2] = {2000, 2000};
    const cutune_cache_record *rec = NULL;
    cutune_match match;
    cutune_cache_query q = {.problem_name = "gemm",
                            .device_name = "GTX Fictional 9000",
                            .problem_size = k1,
                            .n_problem_size = 2,
                            .fallback = 1,
                            .cc_major = 8,
                            .cc_minor = 9,
                            .sm_count = 142};
    /* 1: exact */
    CHECK_INT(cutune_cache_lookup(cache, &q, &rec, &match), CUTUNE_OK);
    CHECK_INT(match, CUTUNE_MATCH_EXACT);
    CHECK_STR(config_value(rec, "tag"), "a");
    /* 2: nearest size on the same device, before any other device */
    q.problem_size = k2;
    CHECK_INT(cutune_cache_lookup(cache, &q, &rec, &match), CUTUNE_OK);
    CHECK_INT(match, CUTUNE_MATCH_NEAREST_SIZE);
    CHECK_STR(config_value(rec, "tag"), "a");
    /* 3: same compute capability, nearest SM count */
    q.device_name = "GTX Unknown";
    q.device_uuid = "GPU-99999999";
    q.sm_count = 130;
    q.problem_size = k1;
    CHECK_INT(cutune_cache_lookup(cache, &q, &rec, &match), CUTUNE_OK);
    CHECK_INT(match, CUTUNE_MATCH_ARCHITECTURE);
    CHECK_STR(config_value(rec, "tag"), "b");
    CHECK(rec && !rec->device.simulated);
    q.sm_count = 50;
    CHECK_INT(cutune_cache_lookup(cache, &q, &rec, &match), CUTUNE_OK);
    CHECK_INT(match, CUTUNE_MATCH_ARCHITECTURE);
    CHECK_STR(config_value(rec, "tag"), "c");
    q.cc_major = 9;
    q.cc_minor = 0;
    CHECK_INT(cutune_cache_lookup(cache, &q, &rec, &match), CUTUNE_OK);
    CHECK_INT(match, CUTUNE_MATCH_ARCHITECTURE);
    CHECK_STR(config_value(rec, "tag"), "d");
    /* Only a simulated device shares the architecture: it answers, and
     * says so. */
    make_record(&t, &s, "gemm", 1024, 1024, "s75", 9000);
    set_cc(&t, 7, 5, 40);
    CHECK_INT(cutune_cache_append(cache, &t.rec), CUTUNE_OK);
    q.cc_major = 7;
    q.cc_minor = 5;
    CHECK_INT(cutune_cache_lookup(cache, &q, &rec, &match), CUTUNE_OK);
    CHECK_INT(match, CUTUNE_MATCH_ARCHITECTURE);
    CHECK_STR(config_value(rec, "tag"), "s75");
    CHECK(rec && rec->device.simulated);
    /* 4: no such architecture: the cross-device default */
    q.cc_major = 6;
    q.cc_minor = 1;
    CHECK_INT(cutune_cache_lookup(cache, &q, &rec, &match), CUTUNE_OK);
    CHECK_INT(match, CUTUNE_MATCH_DEFAULT);
    CHECK(rec && !rec->device.simulated);
    /* unknown compute capability: straight to the default */
    q.cc_major = 0;
    CHECK_INT(cutune_cache_lookup(cache, &q, &rec, &match), CUTUNE_OK);
    CHECK_INT(match, CUTUNE_MATCH_DEFAULT);
    /* 5: nothing cached for the problem: the occupancy suggestion */
    q.problem_name = "never-tuned";
    CHECK_INT(cutune_cache_lookup(cache, &q, &rec, &match),
              CUTUNE_ERR_NOT_FOUND);
    CHECK_INT(match, CUTUNE_MATCH_OCCUPANCY);
    CHECK(rec == NULL);
    CHECK_CONTAINS(cutune_cache_errmsg(cache), "any other device");
    /* Without the fallback, the device's own records only. */
    q.problem_name = "gemm";
    q.fallback = 0;
    CHECK_INT(cutune_cache_lookup(cache, &q, &rec, &match),
              CUTUNE_ERR_NOT_FOUND);
    CHECK_INT(match, CUTUNE_MATCH_NONE);
    /* A device matches by UUID or by name. */
    q.device_uuid = FICTIONAL_UUID;
    CHECK_INT(cutune_cache_lookup(cache, &q, &rec, &match), CUTUNE_OK);
    CHECK_STR(config_value(rec, "tag"), "a");

    CHECK_STR(cutune_match_str(CUTUNE_MATCH_ARCHITECTURE), "architecture");
    CHECK_STR(cutune_match_str(CUTUNE_MATCH_DEFAULT), "default");
    CHECK_STR(cutune_match_str(CUTUNE_MATCH_OCCUPANCY), "occupancy");
    CHECK_INT(CUTUNE_MATCH_OCCUPANCY, 5); /* stable values */
    cutune_cache_close(cache);
    free(dir);
}

/* The default: best average relative time over the devices that measured
 * the configuration (as winner, or as baseline). */
static void test_default_level(void)
{
    char *dir = path_in(tmp_root, "default");
    cutune_cache *cache = NULL;
    CHECK_INT(cutune_cache_open(dir, &cache), CUTUNE_OK);
    cutune_device dev[3];
    const char *names[3] = {"Dev One", "Dev Two", "Dev Three"};
    /* winner tag, baseline tag, time, baseline time */
    const char *win[3] = {"X", "Y", "X"};
    const char *base[3] = {"Y", "X", "Z"};
    double time[3] = {1.0, 1.0, 2.0}, btime[3] = {1.5, 1.1, 4.0};
    test_record t;
    for (int i = 0; i < 3; i++) {
        make_device(&dev[i], names[i], "");
        make_record(&t, &dev[i], "reduce", 4096, 1, win[i], 1000 + i);
        t.baseline[0].value = "256";   /* the same parameters as the */
        t.baseline[1].value = base[i]; /* winners but the tag */
        t.baseline[2].value = "4";
        t.rec.time_ms = time[i];
        t.rec.baseline_ms = btime[i];
        CHECK_INT(cutune_cache_append(cache, &t.rec), CUTUNE_OK);
    }
    /* X: 1 on One, 1.1 on Two, 1 on Three: 1.033; Y: 1.5, 1: 1.25 */
    long long k[2] = {4096, 1};
    cutune_cache_query q = {.problem_name = "reduce",
                            .device_name = "Dev Four",
                            .problem_size = k,
                            .n_problem_size = 2,
                            .fallback = 1};
    const cutune_cache_record *rec = NULL;
    cutune_match match;
    CHECK_INT(cutune_cache_lookup(cache, &q, &rec, &match), CUTUNE_OK);
    CHECK_INT(match, CUTUNE_MATCH_DEFAULT);
    CHECK_STR(config_value(rec, "tag"), "X");
    CHECK_STR(rec ? rec->device.name : NULL, "Dev Three"); /* newer */
    double avg = 0;
    size_t devices = 0;
    CHECK_INT(cutune__cache_lookup_default(cache, &q, &rec, &avg, &devices),
              CUTUNE_OK);
    CHECK(fabs(avg - 3.1 / 3) < 1e-12);
    CHECK_INT(devices, 3);
    cutune_cache_close(cache);
    free(dir);
}

/* Records of another format version are refused, counted and named. */
static void test_version_refused(void)
{
    char *dir = path_in(tmp_root, "version");
    cutune_cache *cache = NULL;
    CHECK_INT(cutune_cache_open(dir, &cache), CUTUNE_OK);
    cutune_device a;
    make_device(&a, FICTIONAL, FICTIONAL_UUID);
    test_record t;
    make_record(&t, &a, "fft", 64, 64, "v1", 1000);
    CHECK_INT(cutune_cache_append(cache, &t.rec), CUTUNE_OK);
    char *file = path_in(dir, "gtx-fictional-9000-12345678.jsonl");
    char *text = read_all(file);
    const char *v1 = "{\"cutune_cache\":1,";
    const char *rest = text ? text + strlen(v1) : "";
    char *line = malloc(strlen(rest) + 64);
    sprintf(line, "{\"cutune_cache\":4,%s", rest);
    append_text(file, line);
    sprintf(line, "{\"cutune_cache\":3,%s", rest);
    append_text(file, line);
    append_text(file, "{\"cutune_cache\":1,\"device\":{\"na"); /* torn */

    cutune_cache_query q = {.problem_name = "fft", .device_name = FICTIONAL};
    const cutune_cache_record *rec = NULL;
    cutune_match match;
    CHECK_STR(cutune_cache_warning(cache), "");
    CHECK_INT(cutune_cache_lookup(cache, &q, &rec, &match), CUTUNE_OK);
    CHECK_STR(config_value(rec, "tag"), "v1");
    CHECK_INT(cutune_cache_skipped_lines(cache), 3);
    CHECK_INT(cutune_cache_version_skipped(cache), 2);
    CHECK_CONTAINS(cutune_cache_warning(cache), "2 records of cache format "
                                                "version 4");
    CHECK_CONTAINS(cutune_cache_warning(cache), "upgrade cutune");
    CHECK_CONTAINS(cutune_cache_warning(cache), "1 line in");
    CHECK_CONTAINS(cutune_cache_warning(cache), "torn");
    CHECK_INT(cutune_cache_version_skipped(NULL), 0);
    CHECK_STR(cutune_cache_warning(NULL), "");
    free(line);
    free(text);
    free(file);
    cutune_cache_close(cache);
    free(dir);
}

static size_t count_lines_of(const char *path)
{
    char *text = read_all(path);
    size_t n = text ? count_char(text, '\n') : 0;
    free(text);
    return n;
}

/* Merge: duplicates by key, the better-measured record stays. */
static void test_merge(void)
{
    char *dir1 = path_in(tmp_root, "merge1");
    char *dir2 = path_in(tmp_root, "merge2");
    char *out = path_in(tmp_root, "merged/all.jsonl");
    char *outdir = path_in(tmp_root, "merged");
    mkdir(outdir, 0755);
    cutune_cache *c1 = NULL, *c2 = NULL;
    CHECK_INT(cutune_cache_open(dir1, &c1), CUTUNE_OK);
    CHECK_INT(cutune_cache_open(dir2, &c2), CUTUNE_OK);
    cutune_device a, b;
    make_device(&a, FICTIONAL, FICTIONAL_UUID);
    make_device(&b, "GTX Fictional 8000", "");
    test_record t;
    /* same key: the newer wins, however many runs the older has and
     * however steady it was (a --force re-tune, as lookup answers) */
    make_record(&t, &a, "scan", 512, 512, "few-runs", 5000);
    t.rec.runs = 10;
    CHECK_INT(cutune_cache_append(c1, &t.rec), CUTUNE_OK);
    make_record(&t, &a, "scan", 512, 512, "many-runs", 1000);
    t.rec.runs = 100;
    CHECK_INT(cutune_cache_append(c2, &t.rec), CUTUNE_OK);
    make_record(&t, &b, "scan", 512, 512, "noisy", 5000);
    t.rec.time_stddev_ms = 0.05;
    CHECK_INT(cutune_cache_append(c2, &t.rec), CUTUNE_OK);
    make_record(&t, &b, "scan", 512, 512, "steady", 1000);
    t.rec.time_stddev_ms = 0.001;
    CHECK_INT(cutune_cache_append(c1, &t.rec), CUTUNE_OK);
    /* all equal: the newer */
    make_record(&t, &b, "scan", 64, 64, "old", 1000);
    CHECK_INT(cutune_cache_append(c1, &t.rec), CUTUNE_OK);
    make_record(&t, &b, "scan", 64, 64, "new", 2000);
    CHECK_INT(cutune_cache_append(c2, &t.rec), CUTUNE_OK);
    /* another size, another source hash: other keys, both kept */
    make_record(&t, &b, "scan", 128, 128, "other-size", 1000);
    CHECK_INT(cutune_cache_append(c2, &t.rec), CUTUNE_OK);
    make_record(&t, &b, "scan", 64, 64, "other-hash", 1000);
    t.rec.source_hash = "ffffffffffffffff";
    CHECK_INT(cutune_cache_append(c2, &t.rec), CUTUNE_OK);

    cutune_cache_merge_stats stats;
    const char *inputs[2] = {dir1, dir2};
    CHECK_INT(cutune_cache_merge(c1, inputs, 2, out, &stats), CUTUNE_OK);
    CHECK_INT(stats.records_read, 8);
    CHECK_INT(stats.records_written, 5);
    CHECK_INT(stats.duplicates, 3);
    CHECK_INT(count_lines_of(out), 5);
    char *text = read_all(out);
    CHECK_CONTAINS(text, "few-runs");
    CHECK_CONTAINS(text, "noisy");
    CHECK_CONTAINS(text, "\"new\"");
    CHECK_CONTAINS(text, "other-size");
    CHECK_CONTAINS(text, "other-hash");
    CHECK(text && !strstr(text, "many-runs") && !strstr(text, "steady") &&
          !strstr(text, "\"old\""));
    free(text);

    /* Merging the result with itself into itself changes nothing; no
     * temporary file is left behind. */
    const char *self[2] = {out, out};
    CHECK_INT(cutune_cache_merge(c1, self, 2, out, &stats), CUTUNE_OK);
    CHECK_INT(stats.records_written, 5);
    CHECK_INT(count_lines_of(out), 5);
    DIR *dd = opendir(outdir);
    size_t entries = 0;
    struct dirent *de;
    while (dd && (de = readdir(dd)))
        entries += de->d_name[0] != '.';
    if (dd)
        closedir(dd);
    CHECK_INT(entries, 1);

    /* The merged file reads as a cache. */
    cutune_cache *m = NULL;
    CHECK_INT(cutune_cache_open(outdir, &m), CUTUNE_OK);
    cutune_cache_query q = {.problem_name = "scan", .device_name = FICTIONAL};
    const cutune_cache_record *rec = NULL;
    cutune_match match;
    CHECK_INT(cutune_cache_lookup(m, &q, &rec, &match), CUTUNE_OK);
    CHECK_STR(config_value(rec, "tag"), "few-runs");
    cutune_cache_close(m);

    /* Errors: a missing input, no output. */
    char *nowhere = path_in(tmp_root, "no-such-file.jsonl");
    const char *missing[1] = {nowhere};
    CHECK_INT(cutune_cache_merge(c1, missing, 1, out, NULL), CUTUNE_ERR_IO);
    CHECK_CONTAINS(cutune_cache_errmsg(c1), "no-such-file.jsonl");
    CHECK_INT(cutune_cache_merge(c1, inputs, 2, NULL, NULL),
              CUTUNE_ERR_INVALID_ARGUMENT);
    CHECK_INT(cutune_cache_merge(NULL, inputs, 2, out, NULL),
              CUTUNE_ERR_INVALID_ARGUMENT);
    free(nowhere);
    cutune_cache_close(c1);
    cutune_cache_close(c2);
    free(dir1);
    free(dir2);
    free(out);
    free(outdir);
}

/* Export: one device as #defines, many as a table; JSON. (The headers
 * are compiled as C and C++ by run_cache_cli.sh.) */
static void test_export(void)
{
    char *dir = path_in(tmp_root, "export");
    char *h1 = path_in(tmp_root, "one.h");
    char *h2 = path_in(tmp_root, "many.h");
    char *js = path_in(tmp_root, "many.json");
    cutune_cache *cache = NULL;
    CHECK_INT(cutune_cache_open(dir, &cache), CUTUNE_OK);
    cutune_device a, b;
    make_device(&a, FICTIONAL, FICTIONAL_UUID);
    make_device(&b, "GTX Fictional 8000", "");
    test_record t;
    make_record(&t, &a, "scan", 512, 512, "a\"quote", 1000);
    CHECK_INT(cutune_cache_append(cache, &t.rec), CUTUNE_OK);
    make_record(&t, &b, "scan", 512, 512, "b", 1000);
    CHECK_INT(cutune_cache_append(cache, &t.rec), CUTUNE_OK);

    long long k[2] = {512, 512};
    cutune_cache_query q[2] = {
        {.problem_name = "scan",
         .device_name = FICTIONAL,
         .problem_size = k,
         .n_problem_size = 2,
         .fallback = 1},
        {.problem_name = "never", .device_name = FICTIONAL, .fallback = 1}};
    CHECK_INT(cutune_cache_export(cache, q, 2, CUTUNE_EXPORT_HEADER, h1),
              CUTUNE_OK);
    char *text = read_all(h1);
    CHECK_CONTAINS(text, "#define CUTUNE_SCAN_BLOCK_SIZE_X 256\n");
    CHECK_CONTAINS(text, "#define CUTUNE_SCAN_TAG \"a\\\"quote\"\n");
    CHECK_CONTAINS(text, "#define CUTUNE_LEVEL_SCAN \"exact\"\n");
    CHECK_CONTAINS(text, "#define CUTUNE_TUNED_NEVER 0\n");
    CHECK_CONTAINS(text, "#define CUTUNE_LEVEL_NEVER \"occupancy\"\n");
    CHECK_CONTAINS(cutune_cache_warning(cache), "no record of never");
    free(text);

    CHECK_INT(cutune_cache_export(cache, NULL, 0, CUTUNE_EXPORT_HEADER, h2),
              CUTUNE_OK);
    text = read_all(h2);
    CHECK_CONTAINS(text, "cutune_scan_lookup(");
    CHECK_CONTAINS(text, "{\"GTX Fictional 8000\", 8, 9, 142, 0, 1, 256LL, "
                         "\"b\", 4LL},");
    free(text);
    CHECK_INT(cutune_cache_export(cache, NULL, 0, CUTUNE_EXPORT_JSON, js),
              CUTUNE_OK);
    text = read_all(js);
    json_error_t err;
    json_t *root = json_loads(text ? text : "", 0, &err);
    CHECK(root != NULL);
    json_t *p0 = json_array_get(json_object_get(root, "problems"), 0);
    CHECK_STR(json_string_value(json_object_get(p0, "name")), "scan");
    CHECK_INT(json_array_size(json_object_get(p0, "entries")), 2);
    json_decref(root);
    free(text);

    /* Mixed queries are refused. */
    q[1].device_name = NULL;
    CHECK_INT(cutune_cache_export(cache, q, 2, CUTUNE_EXPORT_HEADER, h1),
              CUTUNE_ERR_INVALID_ARGUMENT);
    cutune_cache_close(cache);
    free(dir);
    free(h1);
    free(h2);
    free(js);
}

int main(void)
{
    umask(022);
    snprintf(tmp_root, sizeof tmp_root, "%s/cutune-test-store-XXXXXX",
             getenv("TMPDIR") && getenv("TMPDIR")[0] ? getenv("TMPDIR")
                                                     : "/tmp");
    if (!mkdtemp(tmp_root)) {
        perror("mkdtemp");
        return 1;
    }
    test_match_str();
    test_file_names();
    test_missing_dir();
    test_round_trip_and_file();
    test_lookup_levels();
    test_newest_wins();
    test_torn_and_future_lines();
    test_concurrent_appends();
    test_append_waits_for_lock();
    test_timestamps();
    test_fallback_chain();
    test_default_level();
    test_version_refused();
    test_merge();
    test_export();
    test_errors();
    test_environment(); /* last: it changes HOME */
    remove_tree(tmp_root);
    return check_finish();
}
