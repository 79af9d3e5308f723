/* A cache kept in memory (cutune_cache_preload) answers as one read from
 * disk at every lookup: the same record and level for every kind of
 * query, lines appended by another handle seen, a file replaced, removed
 * or torn seen, the same skipped-line counts and warning. Devices are
 * made up. */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cutune/cutune.h"

#include "../check.h"
#include "../tmpdir.h"

static char dir[] = "/tmp/cutune-test-memo-XXXXXX";

static void make_record(cutune_cache_record *r, cutune_param_value cfg[2],
                        long long size[1], int device, const char *problem,
                        long long s, long long timestamp, const char *tag)
{
    memset(r, 0, sizeof *r);
    snprintf(r->device.name, sizeof r->device.name, "GTX Fictional %d",
             device);
    snprintf(r->device.uuid, sizeof r->device.uuid,
             "GPU-%08d-0000-0000-0000-000000000000", device);
    r->device.cc_major = 8 + device % 2;
    r->device.sm_count = 100 + device;
    snprintf(r->device.nvrtc_version, sizeof r->device.nvrtc_version, "13.0");
    snprintf(r->device.cutune_version, sizeof r->device.cutune_version,
             "0.1.0");
    cfg[0] = (cutune_param_value){"block_size_x", "256"};
    cfg[1] = (cutune_param_value){"tag", tag};
    size[0] = s;
    r->problem_name = problem;
    r->source_hash = "0123456789abcdef";
    r->problem_size = size;
    r->n_problem_size = 1;
    r->compiler_options = "";
    r->config = cfg;
    r->n_config = 2;
    r->baseline = cfg;
    r->n_baseline = 1;
    r->time_ms = 1.0 + (double)(s % 7);
    r->time_min_ms = r->time_ms;
    r->baseline_ms = 2.0 * r->time_ms;
    r->runs = 10;
    r->strategy = "default";
    r->evaluations = 10;
    r->timestamp = timestamp;
}

static void append(cutune_cache *c, int device, const char *problem,
                   long long s, long long timestamp, const char *tag)
{
    cutune_cache_record r;
    cutune_param_value cfg[2];
    long long size[1];
    make_record(&r, cfg, size, device, problem, s, timestamp, tag);
    CHECK_INT(cutune_cache_append(c, &r), CUTUNE_OK);
}

/* The tag of the answer to (problem, device, size, fallback), "" when
 * none, with its level. */
static void answer(cutune_cache *c, const char *problem, int device,
                   long long s, int fallback, char *tag, size_t tag_size,
                   cutune_match *match)
{
    char name[64], uuid[64];
    snprintf(name, sizeof name, "GTX Fictional %d", device);
    snprintf(uuid, sizeof uuid, "GPU-%08d-0000-0000-0000-000000000000",
             device);
    cutune_cache_query q;
    memset(&q, 0, sizeof q);
    q.problem_name = problem;
    q.device_name = name;
    q.device_uuid = device % 3 ? uuid : NULL;
    q.problem_size = &s;
    q.n_problem_size = 1;
    q.fallback = fallback;
    q.cc_major = 8 + device % 2;
    q.sm_count = 100 + device;
    const cutune_cache_record *rec = NULL;
    tag[0] = '\0';
    if (cutune_cache_lookup(c, &q, &rec, match) == CUTUNE_OK)
        snprintf(tag, tag_size, "%s", rec->config[1].value);
}

/* Every query asked of a kept cache and of a fresh handle agrees. */
static void agree(cutune_cache *kept, const char *when)
{
    cutune_cache *plain = NULL;
    CHECK_INT(cutune_cache_open(dir, &plain), CUTUNE_OK);
    static const char *const problems[] = {"alpha", "beta", "gamma"};
    size_t disagree = 0;
    for (int p = 0; p < 3; p++)
        for (int d = 0; d < 6; d++)
            for (long long s = 1; s <= 40; s += 5)
                for (int fb = 0; fb < 2; fb++) {
                    char a[64], b[64];
                    cutune_match ma, mb;
                    answer(kept, problems[p], d, s, fb, a, sizeof a, &ma);
                    size_t skipped_a = cutune_cache_skipped_lines(kept);
                    char warning_a[1024];
                    snprintf(warning_a, sizeof warning_a, "%s",
                             cutune_cache_warning(kept));
                    answer(plain, problems[p], d, s, fb, b, sizeof b, &mb);
                    if (strcmp(a, b) || ma != mb ||
                        skipped_a != cutune_cache_skipped_lines(plain) ||
                        strcmp(warning_a, cutune_cache_warning(plain))) {
                        if (!disagree++)
                            printf("  %s: %s device %d size %lld fallback "
                                   "%d: kept '%s' (%d, %zu skipped: %s), "
                                   "read '%s' (%d, %zu skipped: %s)\n",
                                   when, problems[p], d, s, fb, a, ma,
                                   skipped_a, warning_a, b, mb,
                                   cutune_cache_skipped_lines(plain),
                                   cutune_cache_warning(plain));
                    }
                }
    CHECK_INT(disagree, 0);
    cutune_cache_close(plain);
}

static void append_line(const char *name, const char *text)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "a");
    CHECK(f != NULL);
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

int main(void)
{
    CHECK(mkdtemp(dir) != NULL);
    cutune_cache *writer = NULL, *kept = NULL;
    CHECK_INT(cutune_cache_open(dir, &writer), CUTUNE_OK);
    CHECK_INT(cutune_cache_open(dir, &kept), CUTUNE_OK);
    /* An empty directory, then records of three problems on five devices
     * (device 5 has none), newer ones at some sizes, equal times. */
    CHECK_INT(cutune_cache_preload(kept), CUTUNE_OK);
    agree(kept, "empty");
    static const char *const problems[] = {"alpha", "beta", "gamma"};
    for (int p = 0; p < 3; p++)
        for (int d = 0; d < 5; d++)
            for (long long s = 1; s <= 40; s += 2 + d) {
                char tag[32];
                snprintf(tag, sizeof tag, "p%d-d%d-s%lld", p, d, s);
                append(writer, d, problems[p], s, 1700000000 + s % 5, tag);
            }
    agree(kept, "first records");
    CHECK_INT(cutune_cache_preload(kept), CUTUNE_OK);
    agree(kept, "preloaded");

    /* Appended by another handle, torn lines, a future format, a file
     * that appears: read from where the kept copy stopped. */
    append(writer, 1, "alpha", 4, 1800000000, "newer");
    append(writer, 5, "beta", 7, 1700000000, "device-5");
    append_line("gtx-fictional-2-00000002.jsonl", "{\"torn\": ");
    append_line("extra.jsonl", "{\"cutune_cache\": 9}\n\n");
    agree(kept, "appended");
    char tag[64];
    cutune_match match;
    answer(kept, "alpha", 1, 4, 0, tag, sizeof tag, &match);
    CHECK_STR(tag, "newer");
    CHECK_INT(match, CUTUNE_MATCH_EXACT);
    CHECK(cutune_cache_skipped_lines(kept) == 2);
    CHECK_CONTAINS(cutune_cache_warning(kept), "format version 9");
    append(writer, 2, "gamma", 40, 1800000000, "after-torn");
    agree(kept, "after a torn line");

    /* A file replaced by a rename (as merge writes), one removed. */
    char from[256], to[256];
    snprintf(from, sizeof from, "%s/extra.jsonl", dir);
    snprintf(to, sizeof to, "%s/gtx-fictional-2-00000002.jsonl", dir);
    CHECK(rename(from, to) == 0);
    agree(kept, "replaced");
    CHECK(unlink(to) == 0);
    agree(kept, "removed");
    answer(kept, "gamma", 2, 40, 0, tag, sizeof tag, &match);
    CHECK(tag[0] == 0 && match == CUTUNE_MATCH_NONE); /* its only file */

    cutune_cache_close(kept);
    cutune_cache_close(writer);
    CHECK_INT(cutune_cache_preload(NULL), CUTUNE_ERR_INVALID_ARGUMENT);
    remove_tree(dir);
    return check_finish();
}
