/* Tunes on several devices at once, without a GPU: replayed devices
 * (recorded T4 files) stand in for GPUs, so the slots, the shared search,
 * the final round and the cache records run as they do on GPUs.
 *
 * - brute force over the recorded convolution space (A100) on 1, 2 and 4
 *   devices of one model finds the same winner, measures every
 *   configuration exactly once, and spreads the measuring over all the
 *   devices;
 * - the default strategy, which ends batches early, evaluates the same
 *   sequence on 1, 2 and 4 devices: results reach it in proposal order;
 * - devices of two models (A100 and A4000 recordings) make two groups, are
 *   refused in one session, and tuned apart leave two cache records under
 *   two fingerprints;
 * - a device that dies, or hangs, on one configuration loses only that
 *   configuration (RUNTIME, TIMEOUT), is started again, and the tune ends
 *   with the same winner.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "cutune/cutune.h"
#include "tmpdir.h"

static char t1[4096], a100[4096], a4000[4096], cache_dir[64];
static cutune_problem *problem;

/* Recorded time is slept at this scale: 12,182 s of recorded compiles and
 * runs become 1.2 s, enough that a device's sleep lets the others take
 * proposals, as a GPU's measuring would. */
#define SCALE 1e-4

typedef struct tune_run {
    cutune_session *s;
    const cutune_tune_result *r;
    cutune_status st;
} tune_run;

static tune_run tune_with(const char *strategy, const char *files,
                          const int *devices, size_t n, const char *fail,
                          int write_cache)
{
    cutune_session_options o;
    cutune_session_options_init(&o);
    o.strategy = strategy;
    o.replay_devices = files;
    o.replay_time_scale = SCALE;
    o.devices = devices;
    o.n_devices = n;
    o.cache_dir = cache_dir;
    o.write_cache = write_cache;
    tune_run t = {NULL, NULL, CUTUNE_OK};
    /* The failure hook is the environment's, read at create. */
    if (fail)
        setenv("CUTUNE_REPLAY_FAIL", fail, 1);
    else
        unsetenv("CUTUNE_REPLAY_FAIL");
    t.st = cutune_session_create(&o, &t.s);
    unsetenv("CUTUNE_REPLAY_FAIL");
    if (t.st == CUTUNE_OK)
        t.st = cutune_session_tune(t.s, problem, &t.r);
    if (t.st)
        fprintf(stderr, "tune: %s\n", cutune_session_errmsg(t.s));
    return t;
}

static tune_run tune(const char *files, const int *devices, size_t n,
                     const char *fail, int write_cache)
{
    return tune_with("brute_force", files, devices, n, fail, write_cache);
}

static int same_config(const cutune_tune_result *a,
                       const cutune_tune_result *b)
{
    if (a->n_params != b->n_params)
        return 0;
    for (size_t i = 0; i < a->n_params; i++)
        if (strcmp(a->best[i].value, b->best[i].value) != 0)
            return 0;
    return 1;
}

static const cutune_eval *eval_of(const cutune_tune_result *r, size_t config)
{
    for (size_t i = 0; i < r->n_evals; i++)
        if (r->evals[i].config_index == config)
            return &r->evals[i];
    return NULL;
}

/* Each configuration once, and every device measuring a fair part. */
static void check_shared_search(const cutune_tune_result *one,
                                const cutune_tune_result *r, size_t n_dev)
{
    CHECK_INT(r->workers, n_dev);
    CHECK_INT(r->n_evals, one->n_evals);
    CHECK(same_config(one, r));
    CHECK(r->best_ms == one->best_ms);
    size_t space = r->n_evals;
    unsigned char *seen = calloc(space * 4, 1);
    size_t per[8] = {0}, repeats = 0;
    for (size_t i = 0; seen && i < r->n_evals; i++) {
        size_t c = r->evals[i].config_index;
        if (c < space * 4)
            repeats += seen[c]++ != 0;
        if (r->evals[i].worker < 8)
            per[r->evals[i].worker]++;
    }
    CHECK_INT(repeats, 0);
    for (size_t k = 0; k < n_dev; k++) {
        printf("%zu devices: device %zu measured %zu of %zu\n", n_dev, k,
               per[k], r->n_evals);
        CHECK(per[k] >= r->n_evals / (4 * n_dev));
    }
    free(seen);
}

static void test_one_model(size_t *victim)
{
    char files[4 * 4096 + 8];
    snprintf(files, sizeof files, "%s,%s,%s,%s", a100, a100, a100, a100);
    tune_run one = tune(files, NULL, 0, NULL, 0);
    CHECK_INT(one.st, CUTUNE_OK);
    if (one.st)
        return;
    CHECK_INT(one.r->n_evals, 4362);
    CHECK_INT(one.r->workers, 1);
    CHECK_INT(one.r->failures, 161);
    static const int two[] = {0, 1}, four[] = {0, 1, 2, 3};
    tune_run t2 = tune(files, two, 2, NULL, 0);
    tune_run t4 = tune(files, four, 4, NULL, 0);
    CHECK_INT(t2.st, CUTUNE_OK);
    CHECK_INT(t4.st, CUTUNE_OK);
    if (!t2.st)
        check_shared_search(one.r, t2.r, 2);
    if (!t4.st)
        check_shared_search(one.r, t4.r, 4);
    /* A configuration that runs, and not the winner: the victim of the
     * failure tests. */
    *victim = SIZE_MAX;
    for (size_t i = 100; i < one.r->n_evals && *victim == SIZE_MAX; i++)
        if (one.r->evals[i].outcome == CUTUNE_OUTCOME_CORRECT &&
            one.r->evals[i].time_ms > 1.5 * one.r->best_ms)
            *victim = one.r->evals[i].config_index;
    CHECK(*victim != SIZE_MAX);
    cutune_session_destroy(one.s);
    cutune_session_destroy(t2.s);
    cutune_session_destroy(t4.s);
}

static void test_steering(void)
{
    char files[4 * 4096 + 8];
    snprintf(files, sizeof files, "%s,%s,%s,%s", a100, a100, a100, a100);
    static const int four[] = {0, 1, 2, 3};
    tune_run t[3];
    for (int k = 0; k < 3; k++)
        t[k] = tune_with("default", files, k ? four : NULL, k ? 2 * k : 0,
                         NULL, 0);
    for (int k = 0; k < 3; k++)
        CHECK_INT(t[k].st, CUTUNE_OK);
    if (!t[0].st && !t[1].st && !t[2].st) {
        CHECK_INT(t[0].r->n_evals, 100);
        for (int k = 1; k < 3; k++) {
            CHECK_INT(t[k].r->workers, 2 * k);
            CHECK_INT(t[k].r->n_evals, t[0].r->n_evals);
            size_t same = 0;
            for (size_t i = 0; i < t[0].r->n_evals && i < t[k].r->n_evals; i++)
                same += t[0].r->evals[i].config_index ==
                        t[k].r->evals[i].config_index;
            CHECK_INT(same, t[0].r->n_evals);
            CHECK(same_config(t[0].r, t[k].r));
        }
    }
    for (int k = 0; k < 3; k++)
        cutune_session_destroy(t[k].s);
}

typedef struct seen_records {
    size_t n;
    char names[4][256];
} seen_records;

static int visit(void *user, const cutune_cache_record *rec)
{
    seen_records *v = user;
    if (v->n < 4)
        snprintf(v->names[v->n], sizeof v->names[v->n], "%s",
                 rec->device.name);
    v->n++;
    CHECK(rec->device.simulated);
    return 0;
}

static void test_two_models(void)
{
    char files[3 * 4096 + 4];
    snprintf(files, sizeof files, "%s,%s,%s", a100, a4000, a100);
    cutune_session_options o;
    cutune_session_options_init(&o);
    o.replay_devices = files;
    cutune_session *s = NULL;
    CHECK_INT(cutune_session_create(&o, &s), CUTUNE_OK);
    static const int all[] = {0, 1, 2};
    size_t group[3], n_groups = 0;
    CHECK_INT(cutune_session_device_groups(s, all, 3, group, &n_groups),
              CUTUNE_OK);
    CHECK_INT(n_groups, 2);
    CHECK_INT(group[0], 0);
    CHECK_INT(group[1], 1);
    CHECK_INT(group[2], 0);
    static const int bad[] = {0, 7};
    CHECK_INT(cutune_session_device_groups(s, bad, 2, group, &n_groups),
              CUTUNE_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(cutune_session_errmsg(s), "device 7 does not exist");
    cutune_session_destroy(s);

    /* One session refuses two models... */
    static const int mixed[] = {0, 1};
    tune_run m = tune(files, mixed, 2, NULL, 1);
    CHECK_INT(m.st, CUTUNE_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(cutune_session_errmsg(m.s), "different models");
    cutune_session_destroy(m.s);
    /* ... and a session each leaves a record each. */
    static const int g0[] = {0, 2}, g1[] = {1};
    tune_run a = tune(files, g0, 2, NULL, 1);
    tune_run b = tune(files, g1, 1, NULL, 1);
    CHECK_INT(a.st, CUTUNE_OK);
    CHECK_INT(b.st, CUTUNE_OK);
    if (!a.st && !b.st) {
        CHECK_STR(a.r->device.name, "replay convolution_milo_A100");
        CHECK_STR(b.r->device.name, "replay convolution_milo_A4000");
        CHECK(!same_config(a.r, b.r) || a.r->best_ms != b.r->best_ms);
    }
    cutune_cache *cache = NULL;
    seen_records v = {0, {{0}}};
    CHECK_INT(cutune_cache_open(cache_dir, &cache), CUTUNE_OK);
    CHECK_INT(cutune_cache_foreach(cache, visit, &v), CUTUNE_OK);
    cutune_cache_close(cache);
    CHECK_INT(v.n, 2);
    CHECK(v.n == 2 && strcmp(v.names[0], v.names[1]) != 0);
    cutune_session_destroy(a.s);
    cutune_session_destroy(b.s);
}

static void test_failure(const char *kind, size_t victim,
                         cutune_outcome outcome)
{
    char files[2 * 4096 + 4], hook[64];
    snprintf(files, sizeof files, "%s,%s", a100, a100);
    snprintf(hook, sizeof hook, "%s:%zu", kind, victim);
    static const int two[] = {0, 1};
    tune_run ok = tune(files, two, 2, NULL, 0);
    tune_run t = tune(files, two, 2, hook, 0);
    CHECK_INT(t.st, CUTUNE_OK);
    if (!t.st && !ok.st) {
        CHECK_INT(t.r->n_evals, ok.r->n_evals);
        CHECK_INT(t.r->failures, ok.r->failures + 1);
        CHECK_INT(t.r->restarts, 1);
        CHECK_INT(ok.r->restarts, 0);
        CHECK(same_config(ok.r, t.r));
        const cutune_eval *e = eval_of(t.r, victim);
        CHECK(e && e->outcome == outcome);
        /* Every other configuration as it was recorded. */
        size_t differ = 0;
        for (size_t i = 0; i < ok.r->n_evals; i++) {
            const cutune_eval *x = &ok.r->evals[i];
            const cutune_eval *y = eval_of(t.r, x->config_index);
            if (x->config_index != victim && (!y || y->outcome != x->outcome))
                differ++;
        }
        CHECK_INT(differ, 0);
    }
    cutune_session_destroy(ok.s);
    cutune_session_destroy(t.s);
}

int main(void)
{
    const char *data = getenv("CUTUNE_TEST_DATA");
    CHECK(data != NULL);
    if (!data)
        return check_finish();
    snprintf(t1, sizeof t1, "%s/t1/convolution_milo.json", data);
    snprintf(a100, sizeof a100, "%s/t4/convolution_milo_A100_T4.json.gz",
             data);
    snprintf(a4000, sizeof a4000, "%s/t4/convolution_milo_A4000_T4.json.gz",
             data);
    snprintf(cache_dir, sizeof cache_dir, "/tmp/cutune-devices-XXXXXX");
    CHECK(mkdtemp(cache_dir) != NULL);
    cutune_problem_options po;
    cutune_problem_options_init(&po);
    po.space_only = 1;
    CHECK_INT(cutune_problem_load(t1, &po, &problem), CUTUNE_OK);
    if (problem) {
        size_t victim = SIZE_MAX;
        test_one_model(&victim);
        test_steering();
        test_two_models();
        if (victim != SIZE_MAX) {
            test_failure("die", victim, CUTUNE_OUTCOME_RUNTIME);
            test_failure("hang", victim, CUTUNE_OUTCOME_TIMEOUT);
        }
    }
    cutune_problem_destroy(problem);
    remove_tree(cache_dir);
    return check_finish();
}
