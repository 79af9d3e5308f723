/* NVRTC compilation without a GPU: every vector_add configuration for
 * sm_80 and sm_90, the worker's comparison kernels, and a compile error
 * kept as a result with its log. */
#define _GNU_SOURCE

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "compare_kernels.h"
#include "compile.h"
#include "cutune/cutune.h"

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
    cutune__compile_job job2 = {
        .source = "extern \"C\" __global__ void k() {}\n",
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
    cutune__compile_job job = {
        .source = "extern \"C\" __global__ void k() {}\n",
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
        }
        else
            CHECK_STR(again.log, first.log);
        cutune__compile_job_clear(&first);
        cutune__compile_job_clear(&again);
    }
    cutune__binary_cache_close(c);
}

int main(void)
{
    test_binary_cache();
    test_missing_kernel();
    test_compile_error();
    test_batch();
    test_compare_kernels("sm_80");
    test_compare_kernels("sm_90");
    test_all_vector_add("sm_80");
    test_all_vector_add("sm_90");
    return check_finish();
}
