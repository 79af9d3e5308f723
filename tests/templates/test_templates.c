/* The built-in template library without a GPU.
 *
 * With no argument: every template loads, its space has the documented
 * size, its default configuration is in the space, and every configuration
 * has a launch geometry within CUDA's limits and a positive byte count.
 * With a template name: a sample of its configurations (all of them when
 * the space is small) compiles with NVRTC for sm_80 and sm_90. The sample
 * is fixed (a seeded shuffle, plus the default and the first and last
 * configurations), so a failure names the same configurations every run;
 * one CTest test per template keeps each within its own time limit. */
#define _POSIX_C_SOURCE 200809L

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "compile.h"
#include "cutune/cutune.h"
#include "problem.h"
#include "util.h"

/* Configurations compiled per template and architecture. */
#define SAMPLE 200

static const struct {
    const char *name;
    size_t space;
} templates[] = {
    {"vector_add", 512}, {"write_offset", 512}, {"copy", 3072},
    {"aos_soa", 3072},   {"transpose", 128},    {"reduce", 1800},
    {"matmul", 56754},   {"conv2d", 639},
};
#define N_TEMPLATES (sizeof templates / sizeof *templates)

static void test_load(size_t t)
{
    const char *name = templates[t].name;
    cutune_problem *p;
    CHECK_INT(cutune_problem_load(name, NULL, &p), CUTUNE_OK);
    if (!p->space) {
        fprintf(stderr, "%s: %s\n", name, cutune_problem_errmsg(p));
        cutune_problem_destroy(p);
        return;
    }
    CHECK_STR(cutune_problem_name(p), name);
    CHECK_STR(cutune_problem_kernel_name(p), name);
    size_t n = cutune_problem_space_size(p);
    if (templates[t].space)
        CHECK_INT(n, templates[t].space);
    CHECK(n > 0);
    printf("%-12s %6zu configurations\n", name, n);

    /* The default configuration is the T1 Defaults themselves, not the
     * nearest valid configuration to them: it produces the reference. */
    size_t def = cutune__problem_default_config(p);
    CHECK(def < n);
    const uint32_t *cfg = cutune__space_config(p->space, def);
    for (size_t i = 0; i < p->n_params; i++)
        CHECK_INT(cfg[i], p->default_values[i]);

    int any_output = 0;
    for (size_t i = 0; i < p->n_args; i++)
        any_output |= p->args[i].is_output;
    CHECK(any_output);

    size_t bad_geometry = 0, bad_bytes = 0;
    for (size_t c = 0; c < n; c++) {
        unsigned grid[3], block[3];
        char err[256];
        if (cutune__problem_geometry(p, c, grid, block, err, sizeof err) !=
                0 ||
            block[0] * block[1] * block[2] > 1024) {
            if (bad_geometry++ == 0)
                fprintf(stderr, "%s: configuration %zu: %s\n", name, c, err);
        }
        /* matmul is compute-bound: it states no bytes. */
        if (p->bytes_per_launch && !(cutune__problem_bytes(p, c) > 0.0))
            bad_bytes++;
    }
    CHECK_INT(bad_geometry, 0);
    CHECK_INT(bad_bytes, 0);
    cutune_problem_destroy(p);
}

static uint64_t next_random(uint64_t *state)
{
    *state = *state * 6364136223846793005ULL + 1442695040888963407ULL;
    return *state >> 33;
}

/* The configurations to compile: all, or the default, the first, the last
 * and a seeded shuffle's first ones. */
static size_t pick_sample(const cutune_problem *p, size_t *out)
{
    size_t n = cutune_problem_space_size(p);
    if (n <= SAMPLE) {
        for (size_t i = 0; i < n; i++)
            out[i] = i;
        return n;
    }
    size_t *order = malloc(n * sizeof *order);
    if (!order)
        return 0;
    for (size_t i = 0; i < n; i++)
        order[i] = i;
    uint64_t state = 6;
    for (size_t i = n - 1; i > 0; i--) {
        size_t j = (size_t)(next_random(&state) % (i + 1));
        size_t tmp = order[i];
        order[i] = order[j];
        order[j] = tmp;
    }
    size_t k = 0;
    size_t fixed[3] = {cutune__problem_default_config(p), 0, n - 1};
    for (size_t i = 0; i < 3; i++) {
        int seen = 0;
        for (size_t j = 0; j < k; j++)
            seen |= out[j] == fixed[i];
        if (!seen)
            out[k++] = fixed[i];
    }
    for (size_t i = 0; i < n && k < SAMPLE; i++) {
        int seen = 0;
        for (size_t j = 0; j < 3; j++)
            seen |= order[i] == fixed[j];
        if (!seen)
            out[k++] = order[i];
    }
    free(order);
    return k;
}

static void test_compile(const char *name)
{
    static const char *const archs[] = {"sm_80", "sm_90"};
    cutune_problem *p;
    CHECK_INT(cutune_problem_load(name, NULL, &p), CUTUNE_OK);
    if (!p->space) {
        fprintf(stderr, "%s: %s\n", name, cutune_problem_errmsg(p));
        cutune_problem_destroy(p);
        return;
    }
    size_t configs[SAMPLE];
    size_t n = pick_sample(p, configs);
    CHECK(n > 0);
    for (size_t a = 0; a < 2; a++) {
        cutune__compile_job *jobs = calloc(n, sizeof *jobs);
        char ***opts = calloc(n, sizeof *opts);
        size_t *nopts = calloc(n, sizeof *nopts);
        CHECK(jobs && opts && nopts);
        if (!jobs || !opts || !nopts)
            return;
        for (size_t i = 0; i < n; i++) {
            opts[i] =
                cutune__problem_options(p, configs[i], archs[a], &nopts[i]);
            jobs[i].source = p->source;
            jobs[i].source_name = p->kernel_name;
            jobs[i].options = opts[i];
            jobs[i].n_options = nopts[i];
        }
        double t0 = cutune__now();
        CHECK_INT(cutune__compile_batch(jobs, n, 0, NULL), 0);
        size_t ok = 0;
        for (size_t i = 0; i < n; i++) {
            if (jobs[i].ok) {
                ok++;
            } else {
                fprintf(stderr, "%s %s:", name, archs[a]);
                for (size_t o = 0; o < nopts[i]; o++)
                    fprintf(stderr, " %s", opts[i][o]);
                fprintf(stderr, "\n%s\n", jobs[i].log ? jobs[i].log : "");
            }
            cutune__compile_job_clear(&jobs[i]);
            cutune__free_strings(opts[i], nopts[i]);
        }
        CHECK_INT(ok, n);
        printf("%s %s: %zu of %zu configurations compiled in %.1f s\n", name,
               archs[a], ok, cutune_problem_space_size(p), cutune__now() - t0);
        free(jobs);
        free(opts);
        free(nopts);
    }
    cutune_problem_destroy(p);
}

int main(int argc, char **argv)
{
    if (argc > 1) {
        test_compile(argv[1]);
        return check_finish();
    }
    CHECK_INT(cutune_template_count(), N_TEMPLATES);
    for (size_t t = 0; t < N_TEMPLATES; t++) {
        CHECK_STR(cutune_template_name(t), templates[t].name);
        test_load(t);
    }
    return check_finish();
}
