/* NVRTC compilation without a GPU: every vector_add configuration for
 * sm_80 and sm_90, the worker's comparison kernels, a compile error kept
 * as a result with its log; jobs of one key at once and compile
 * processes shut down mid-compile. */
#define _GNU_SOURCE

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "compare_kernels.h"
#include "compile.h"
#include "compile_remote.h"
#include "cutune/cutune.h"
#include "damage.h"
#include "tmpdir.h"

static void test_all_vector_add(const char *arch)
{
    cutune_problem *p;
    CHECK_INT(cutune_problem_load("vector_add", NULL, &p), CUTUNE_OK);
    /* NVRTC itself, not the binary cache, is under test here. */
    cutune_session_options o;
    cutune_session_options_init(&o);
    o.no_binary_cache = 1;
    cutune_session *s;
    CHECK_INT(cutune_session_create(&o, &s), CUTUNE_OK);
    size_t ok = 0, bad = 0;
    double secs = 0;
    CHECK_INT(cutune_session_compile(s, p, arch, 0, &ok, &bad, &secs),
              CUTUNE_OK);
    CHECK_INT(ok, 512);
    CHECK_INT(bad, 0);
    printf("%s: 512 configurations in %.1f s\n", arch, secs);
    cutune_session_destroy(s);
    cutune_problem_destroy(p);
}

static void test_compare_kernels(const char *arch)
{
    char opt[64];
    snprintf(opt, sizeof opt, "--gpu-architecture=%s", arch);
    char *opts[] = {opt};
    cutune__compile_job job = {.source = cutune__compare_source,
                               .source_name = "compare.cu",
                               .options = opts,
                               .n_options = 1};
    CHECK_INT(cutune__compile(&job), 0);
    CHECK(job.ok);
    if (!job.ok)
        fprintf(stderr, "%s\n", job.log);
    CHECK(job.cubin_size > 0);
    cutune__compile_job_clear(&job);
}

static void test_compile_error(void)
{
    char *opts[] = {(char *)"--gpu-architecture=sm_90"};
    cutune__compile_job job = {
        .source = "extern \"C\" __global__ void k() { not_declared = 1; }\n",
        .source_name = "broken.cu",
        .options = opts,
        .n_options = 1};
    CHECK_INT(cutune__compile(&job), 0); /* a result, not a failure */
    CHECK(!job.ok);
    CHECK(!job.nvrtc_failed);
    CHECK(job.cubin == NULL);
    CHECK_CONTAINS(job.log, "not_declared");
    CHECK_CONTAINS(job.log, "broken.cu");
    cutune__compile_job_clear(&job);

    /* An option NVRTC does not know is also the configuration's fault. */
    char *bad_opts[] = {(char *)"--no-such-option"};
    cutune__compile_job job2 = {.source =
                                    "extern \"C\" __global__ void k() {}\n",
                                .source_name = "k.cu",
                                .options = bad_opts,
                                .n_options = 1};
    CHECK_INT(cutune__compile(&job2), 0);
    CHECK(!job2.ok);
    CHECK(job2.log && job2.log[0]);
    cutune__compile_job_clear(&job2);
}

/* A kernel name the program does not define is the configuration's
 * compile error, with a message naming it. */
static void test_missing_kernel(void)
{
    char *opts[] = {(char *)"--gpu-architecture=sm_90"};
    cutune__compile_job job = {.source =
                                   "extern \"C\" __global__ void k() {}\n",
                               .source_name = "k.cu",
                               .options = opts,
                               .n_options = 1,
                               .kernel_name = "not_there"};
    CHECK_INT(cutune__compile(&job), 0);
    CHECK(!job.ok);
    CHECK_CONTAINS(job.log, "not_there");
    cutune__compile_job_clear(&job);
}

static void test_batch(void)
{
    /* Results land in their own job whatever thread compiled them. */
    enum { N = 6 };
    cutune__compile_job jobs[N];
    char defs[N][32];
    char *opts[N][2];
    for (int i = 0; i < N; i++) {
        snprintf(defs[i], sizeof defs[i], "-DBROKEN=%d", i % 2);
        opts[i][0] = defs[i];
        opts[i][1] = (char *)"--gpu-architecture=sm_80";
        jobs[i] = (cutune__compile_job){
            .source = "#if BROKEN\n#error broken on purpose\n#endif\n"
                      "extern \"C\" __global__ void k() {}\n",
            .source_name = "b.cu",
            .options = opts[i],
            .n_options = 2};
    }
    CHECK_INT(cutune__compile_batch(jobs, N, 3, NULL), 0);
    for (int i = 0; i < N; i++) {
        CHECK_INT(jobs[i].ok, i % 2 == 0);
        if (i % 2)
            CHECK_CONTAINS(jobs[i].log, "broken on purpose");
        cutune__compile_job_clear(&jobs[i]);
    }
}

/* A compilation through the binary cache: the second time it comes from
 * disk, byte for byte, and a failure keeps its log. */
static void test_binary_cache(void)
{
    char dir[] = "/tmp/cutune-compile-cache-XXXXXX";
    if (!mkdtemp(dir))
        return;
    cutune__binary_cache *c = cutune__binary_cache_open(dir, 0);
    char *opts[] = {(char *)"--gpu-architecture=sm_90"};
    /* A C++ kernel, whose name in the cubin is mangled, and a program
     * that does not compile. */
    const char *sources[2] = {"__global__ void k(int *x) "
                              "{ x[threadIdx.x] = 1; }\n",
                              "extern \"C\" __global__ void k() { oops; }\n"};
    for (int s = 0; s < 2; s++) {
        cutune__compile_job first = {.source = sources[s],
                                     .source_name = "k.cu",
                                     .options = opts,
                                     .n_options = 1,
                                     .cache = c,
                                     .kernel_name = "k"};
        cutune__compile_job again = first;
        CHECK_INT(cutune__compile(&first), 0);
        CHECK_INT(cutune__compile(&again), 0);
        CHECK(!first.from_cache);
        CHECK(again.from_cache);
        CHECK_INT(again.ok, s == 0);
        CHECK_INT(again.cubin_size, first.cubin_size);
        if (s == 0) {
            CHECK(first.cubin && again.cubin &&
                  memcmp(first.cubin, again.cubin, first.cubin_size) == 0);
            CHECK_STR(first.lowered_name, "_Z1kPi");
            CHECK_STR(again.lowered_name, "_Z1kPi");
        } else
            CHECK_STR(again.log, first.log);
        cutune__compile_job_clear(&first);
        cutune__compile_job_clear(&again);
    }
    cutune__binary_cache_close(c);
    remove_tree(dir);
}

/* A cached binary that turned out damaged is compiled again with
 * `refresh`, which skips the lookup and replaces the entry. */
static void test_refresh(void)
{
    char dir[] = "/tmp/cutune-compile-refresh-XXXXXX";
    if (!mkdtemp(dir))
        return;
    cutune__binary_cache *c = cutune__binary_cache_open(dir, 0);
    char *opts[] = {(char *)"--gpu-architecture=sm_90"};
    cutune__compile_job first = {.source = "extern \"C\" __global__ void "
                                           "k(int *x) { x[0] = 2; }\n",
                                 .source_name = "k.cu",
                                 .options = opts,
                                 .n_options = 1,
                                 .cache = c,
                                 .kernel_name = "k"};
    cutune__compile_job damaged = first, fresh = first, after = first;
    fresh.refresh = 1;
    CHECK_INT(cutune__compile(&first), 0);
    CHECK(first.ok && !first.from_cache);
    CHECK_INT(damage_cubins(dir), 1);
    CHECK_INT(cutune__compile(&damaged), 0);
    CHECK(damaged.from_cache && damaged.cubin_size == first.cubin_size);
    CHECK(damaged.cubin && first.cubin &&
          memcmp(damaged.cubin, first.cubin, first.cubin_size) != 0);
    CHECK_INT(cutune__compile(&fresh), 0);
    CHECK(fresh.ok && !fresh.from_cache);
    CHECK(fresh.cubin && first.cubin && fresh.cubin_size == first.cubin_size &&
          memcmp(fresh.cubin, first.cubin, first.cubin_size) == 0);
    /* The entry was replaced: the next lookup finds the good binary. */
    CHECK_INT(cutune__compile(&after), 0);
    CHECK(after.from_cache && after.cubin && first.cubin &&
          after.cubin_size == first.cubin_size &&
          memcmp(after.cubin, first.cubin, first.cubin_size) == 0);
    cutune__compile_job_clear(&first);
    cutune__compile_job_clear(&damaged);
    cutune__compile_job_clear(&fresh);
    cutune__compile_job_clear(&after);
    cutune__binary_cache_close(c);
    remove_tree(dir);
}

/* A stand-in compiler: a compile takes 200 ms, long enough for jobs
 * started together to overlap, on one of PROCS shared slots; it counts
 * how many ran. */
enum { PROCS = 4 };
static struct fake {
    pthread_mutex_t lock;
    pthread_cond_t freed;
    int busy[PROCS];
    int compiled;
} fake = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, {0}, 0};

static int fake_acquire(void *ctx)
{
    (void)ctx;
    pthread_mutex_lock(&fake.lock);
    for (;;)
        for (int i = 0; i < PROCS; i++)
            if (!fake.busy[i]) {
                fake.busy[i] = 1;
                pthread_mutex_unlock(&fake.lock);
                return i;
            } else if (i == PROCS - 1) {
                pthread_cond_wait(&fake.freed, &fake.lock);
            }
}

static void fake_release(void *ctx, int slot)
{
    (void)ctx;
    pthread_mutex_lock(&fake.lock);
    fake.busy[slot] = 0;
    pthread_cond_broadcast(&fake.freed);
    pthread_mutex_unlock(&fake.lock);
}

static int fake_compile(void *ctx, int slot, cutune__compile_job *job)
{
    (void)ctx;
    (void)slot;
    struct timespec ts = {0, 200 * 1000 * 1000};
    nanosleep(&ts, NULL);
    job->ok = 1;
    job->cubin = malloc(4);
    job->cubin_size = 4;
    job->log = strdup("");
    pthread_mutex_lock(&fake.lock);
    fake.compiled++;
    pthread_mutex_unlock(&fake.lock);
    return 0;
}

/* Jobs of one key at once: one compiles, the others wait for it and take
 * its result from the binary cache. A refresh compiles regardless. */
static void test_shared_compile(void)
{
    char dir[] = "/tmp/cutune-compile-shared-XXXXXX";
    if (!mkdtemp(dir))
        return;
    cutune__binary_cache *c = cutune__binary_cache_open(dir, 0);
    cutune__compiler fc = {fake_compile, NULL, PROCS, fake_acquire,
                           fake_release};
    char *opts[] = {(char *)"--gpu-architecture=sm_90"};
    cutune__compile_job jobs[3];
    for (int i = 0; i < 3; i++)
        jobs[i] = (cutune__compile_job){.source = "same",
                                        .source_name = "k.cu",
                                        .options = opts,
                                        .n_options = 1,
                                        .cache = c};
    pthread_mutex_lock(&fake.lock);
    int before = fake.compiled;
    pthread_mutex_unlock(&fake.lock);
    CHECK_INT(cutune__compile_batch(jobs, 3, 3, &fc), 0);
    pthread_mutex_lock(&fake.lock);
    CHECK_INT(fake.compiled - before, 1);
    pthread_mutex_unlock(&fake.lock);
    int waited = 0;
    for (int i = 0; i < 3; i++) {
        CHECK(jobs[i].ok);
        CHECK_INT(jobs[i].cubin_size, 4);
        CHECK_INT(jobs[i].from_cache, jobs[i].waited);
        waited += jobs[i].waited;
        cutune__compile_job_clear(&jobs[i]);
    }
    CHECK_INT(waited, 2);

    for (int i = 0; i < 2; i++)
        jobs[i].refresh = 1;
    CHECK_INT(cutune__compile_batch(jobs, 2, 2, &fc), 0);
    pthread_mutex_lock(&fake.lock);
    CHECK_INT(fake.compiled - before, 3);
    pthread_mutex_unlock(&fake.lock);
    for (int i = 0; i < 2; i++) {
        CHECK(jobs[i].ok && !jobs[i].waited && !jobs[i].from_cache);
        cutune__compile_job_clear(&jobs[i]);
    }
    cutune__binary_cache_close(c);
    remove_tree(dir);
}

struct batch_run {
    cutune__compile_job *jobs;
    size_t n;
    const cutune__compiler *c;
};

static void *run_batch(void *arg)
{
    const struct batch_run *r = arg;
    cutune__compile_batch(r->jobs, r->n, 0, r->c);
    return NULL;
}

/* Compiles on each of the 4 process slots in turn (the others held, so
 * that compile_with gets the one wanted): each must succeed. */
static void every_slot_compiles(const cutune__compiler *c, char **opts)
{
    for (int want = 0; want < 4; want++) {
        int all[4], held[4], n_held = 0;
        for (int k = 0; k < 4; k++)
            all[k] = c->acquire(c->ctx);
        for (int k = 0; k < 4; k++) {
            if (all[k] == want)
                c->release(c->ctx, all[k]);
            else
                held[n_held++] = all[k];
        }
        CHECK_INT(n_held, 3);
        cutune__compile_job job = {.source = cutune__compare_source,
                                   .source_name = "c.cu",
                                   .options = opts,
                                   .n_options = 1};
        CHECK_INT(cutune__compile_with(&job, c, 0), 0);
        CHECK_INT(job.ok, 1);
        if (!job.ok)
            fprintf(stderr, "slot %d after cancel: %s\n", want,
                    job.log ? job.log : "");
        cutune__compile_job_clear(&job);
        for (int k = 0; k < n_held; k++)
            c->release(c->ctx, held[k]);
    }
}

/* Compile processes shut down while compiling: the running jobs fail as
 * NVRTC failures (not configuration results), those asking for a process
 * fail at once, and after resume the same processes compile again. */
static void test_cancel(const char *worker)
{
    cutune__compile_procs *procs = cutune__compile_procs_create(worker, 2);
    CHECK(procs != NULL);
    const cutune__compiler *c = cutune__compile_procs_compiler(procs);
    static char arch[] = "--gpu-architecture=sm_90";
    static char *opts[] = {arch};
    /* Slow to compile: a long loop unrolled whole. */
    static const char slow[] =
        "extern \"C\" __global__ void k(float *x) {\n"
        "  float a = x[0];\n"
        "#pragma unroll\n"
        "  for (int i = 0; i < 20000; i++) a = a * x[i % 7] + x[i % 5];\n"
        "  x[1] = a;\n}\n";
    cutune__compile_job jobs[8];
    for (int i = 0; i < 8; i++)
        jobs[i] = (cutune__compile_job){.source = slow,
                                        .source_name = "c.cu",
                                        .options = opts,
                                        .n_options = 1};
    struct batch_run run = {jobs, 8, c};
    pthread_t batch;
    CHECK_INT(pthread_create(&batch, NULL, run_batch, &run), 0);
    /* Let the processes start and NVRTC begin, so that some are killed. */
    struct timespec ts = {0, 100 * 1000 * 1000};
    nanosleep(&ts, NULL);
    cutune__compile_procs_cancel(procs);
    pthread_join(batch, NULL);
    cutune__compile_procs_resume(procs);
    /* A cancel makes no configuration's result: a job with a log either
     * compiled or failed as NVRTC. */
    int cancel_bad = 0, cancel_killed = 0;
    for (int i = 0; i < 8; i++) {
        if (jobs[i].log && !jobs[i].ok && !jobs[i].nvrtc_failed)
            cancel_bad++;
        cancel_killed += jobs[i].nvrtc_failed;
        cutune__compile_job_clear(&jobs[i]);
    }
    CHECK_INT(cancel_bad, 0);
    printf("cancel: %d compile%s cut short\n", cancel_killed,
           cancel_killed == 1 ? "" : "s");
    every_slot_compiles(c, opts);
    /* Processes idle in slots taken but with no request out are not
     * killed by a cancel: they compile again after it. */
    int all[4];
    for (int k = 0; k < 4; k++)
        all[k] = c->acquire(c->ctx);
    cutune__compile_procs_cancel(procs);
    for (int k = 0; k < 4; k++)
        c->release(c->ctx, all[k]);
    cutune__compile_procs_resume(procs);
    every_slot_compiles(c, opts);
    cutune__compile_procs_destroy(procs);
}

int main(void)
{
    test_binary_cache();
    test_refresh();
    test_missing_kernel();
    test_compile_error();
    test_batch();
    test_shared_compile();
    const char *worker = getenv("CUTUNE_WORKER");
    if (worker && *worker)
        test_cancel(worker);
    else
        printf("SKIP test_cancel: CUTUNE_WORKER not set\n");
    test_compare_kernels("sm_80");
    test_compare_kernels("sm_90");
    test_all_vector_add("sm_80");
    test_all_vector_add("sm_90");
    return check_finish();
}
