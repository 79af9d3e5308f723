/* The record checks of an append against what the readers take (issue
 * 35): a time not above 0 or not finite and a negative baseline are
 * refused with the field named; a failed start's baseline (NaN) is
 * written as null and read back as NaN; a line with a negative baseline
 * is skipped; cutune_cache_check_writable tells a cache that cannot take
 * records. Devices are made up. */
#define _POSIX_C_SOURCE 200809L

#include "store.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../check.h"
#include "../tmpdir.h"

static const cutune_param_value config[] = {{"block_size_x", "128"}};
static const long long size[] = {4096};

static cutune_cache_record record(double time_ms, double baseline_ms)
{
    cutune_cache_record r;
    memset(&r, 0, sizeof r);
    snprintf(r.device.name, sizeof r.device.name, "GTX Fictional 9000");
    r.problem_name = "checks";
    r.source_hash = "0123456789abcdef";
    r.problem_size = size;
    r.n_problem_size = 1;
    r.compiler_options = "";
    r.config = config;
    r.n_config = 1;
    r.time_ms = time_ms;
    r.time_min_ms = time_ms > 0 ? time_ms : 0.1;
    r.runs = 10;
    r.baseline = config;
    r.n_baseline = 1;
    r.baseline_ms = baseline_ms;
    r.strategy = "random";
    r.evaluations = 10;
    r.tune_seconds = 1.0;
    r.timestamp = 1795341600LL;
    return r;
}

static void refused(cutune_cache *c, double time_ms, double baseline_ms,
                    const char *field)
{
    cutune_cache_record r = record(time_ms, baseline_ms);
    CHECK_INT(cutune_cache_append(c, &r), CUTUNE_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(cutune_cache_errmsg(c), field);
}

static void test_refused(const char *dir)
{
    cutune_cache *c = NULL;
    CHECK_INT(cutune_cache_open(dir, &c), CUTUNE_OK);
    refused(c, 0.0, 0.2, "stats.time_ms");
    refused(c, -1.0, 0.2, "stats.time_ms");
    refused(c, INFINITY, 0.2, "stats.time_ms");
    refused(c, NAN, 0.2, "stats.time_ms");
    refused(c, 0.1, -0.3, "baseline.time_ms");
    refused(c, 0.1, INFINITY, "baseline.time_ms");
    cutune_cache_close(c);
}

static int count(void *user, const cutune_cache_record *r)
{
    (void)r;
    ++*(size_t *)user;
    return 0;
}

static void test_no_baseline(const char *dir)
{
    cutune_cache *c = NULL;
    CHECK_INT(cutune_cache_open(dir, &c), CUTUNE_OK);
    cutune_cache_record r = record(0.1, NAN);
    CHECK_INT(cutune_cache_append(c, &r), CUTUNE_OK);
    cutune_cache_query q;
    memset(&q, 0, sizeof q);
    q.problem_name = "checks";
    q.problem_size = size;
    q.n_problem_size = 1;
    q.device_name = "GTX Fictional 9000";
    const cutune_cache_record *got = NULL;
    cutune_match m;
    CHECK_INT(cutune_cache_lookup(c, &q, &got, &m), CUTUNE_OK);
    CHECK(got && isnan(got->baseline_ms));
    CHECK_INT(cutune_cache_skipped_lines(c), 0);
    cutune_cache_close(c);

    /* A line written by hand with a negative baseline is skipped. */
    char path[512];
    snprintf(path, sizeof path, "%s/hand.jsonl", dir);
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (!f)
        return;
    fputs("{\"cutune_cache\":1,\"device\":{\"name\":\"GTX Fictional 9000\","
          "\"uuid\":\"\",\"cc\":\"9.0\",\"sm_count\":1,\"l2_bytes\":1,"
          "\"memory_bytes\":1,\"driver\":1,\"nvrtc\":\"13.0\",\"cutune\":"
          "\"0.1.0\",\"simulated\":false},\"problem\":{\"name\":\"checks\","
          "\"source_hash\":\"\",\"problem_size\":[4096],\"compiler_options\":"
          "\"\"},\"config\":{\"block_size_x\":\"64\"},\"stats\":{\"time_ms\":"
          "0.1,\"time_min_ms\":0.1,\"time_stddev_ms\":0,\"runs\":1,\"gbs\":0},"
          "\"baseline\":{\"config\":{\"block_size_x\":\"128\"},\"time_ms\":"
          "-5},\"strategy\":\"random\",\"evaluations\":1,\"tune_seconds\":1,"
          "\"timestamp\":\"2026-11-22T10:00:00Z\"}\n",
          f);
    fclose(f);
    size_t n = 0;
    CHECK_INT(cutune_cache_open(dir, &c), CUTUNE_OK);
    CHECK_INT(cutune_cache_foreach(c, count, &n), CUTUNE_OK);
    CHECK_INT(n, 1);
    CHECK_INT(cutune_cache_skipped_lines(c), 1);
    cutune_cache_close(c);
}

static void test_writable(const char *dir)
{
    cutune_cache *c = NULL;
    CHECK_INT(cutune_cache_open(dir, &c), CUTUNE_OK);
    CHECK_INT(cutune_cache_check_writable(c), CUTUNE_OK);
    cutune_cache_close(c);
    /* Under a regular file, so that it holds for root too. */
    char file[512], under[600];
    snprintf(file, sizeof file, "%s/plain", dir);
    snprintf(under, sizeof under, "%s/cache", file);
    FILE *f = fopen(file, "w");
    CHECK(f != NULL);
    if (f)
        fclose(f);
    CHECK_INT(cutune_cache_open(under, &c), CUTUNE_OK);
    CHECK(cutune_cache_check_writable(c) != CUTUNE_OK);
    CHECK_CONTAINS(cutune_cache_errmsg(c), "Not a directory");
    cutune_cache_close(c);
}

int main(void)
{
    char dir[] = "/tmp/cutune-test-store-encode-XXXXXX";
    if (!mkdtemp(dir))
        return 1;
    char a[300], b[300], w[300];
    snprintf(a, sizeof a, "%s/refused", dir);
    snprintf(b, sizeof b, "%s/baseline", dir);
    snprintf(w, sizeof w, "%s/writable", dir);
    test_refused(a);
    test_no_baseline(b);
    test_writable(w);
    remove_tree(dir);
    return check_finish();
}
