/* GPU test of the template library: for every built-in template, a sample
 * of its configurations (the default, the first and the last included) is
 * compiled with NVRTC, launched with the geometry its T1 file gives at
 * small sizes chosen to be no multiple of any tile (1, primes, a tile plus
 * one), and its output compared with a reference computed here on the CPU
 * from data generated here. This checks the kernels themselves, each
 * configuration against the mathematics rather than against the default
 * configuration as cutune's own validation does; it also runs both layouts
 * of aos_soa on random data.
 *
 * Exits 77 ("SKIPPED: no CUDA device") without a GPU. */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>

#include "check.h"
#include "compile.h"
#include "cutune/cutune.h"
#include "problem.h"
#include "tmpdir.h"

/* Configurations per template: all of a space up to this size, else this
 * many (the default, the first, the last and a seeded sample). */
#define SAMPLE 40

/* What one launch needs: device buffers, the kernel's parameters, and the
 * output with its CPU reference. */
typedef struct gpu_case {
    void *dev[6];
    size_t n_dev;
    void *params[8];
    union {
        int i;
        double d;
    } scalars[8];
    void *out; /* device output (one of dev) */
    size_t out_count;
    int out_double; /* else float */
    void *ref;      /* host reference, out_count elements */
    void *got;      /* host copy of the output */
    double rtol, atol;
    const char *symbol; /* a __constant__ variable to fill after loading, */
    void *symbol_data;  /* from this host copy (owned) */
    size_t symbol_bytes;
} gpu_case;

static uint64_t rng_state;
static float random_float(void)
{
    rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (float)((rng_state >> 40) * 0x1.0p-24) * 2.0f - 1.0f;
}

static float *random_floats(size_t n)
{
    float *v = malloc((n ? n : 1) * sizeof *v);
    for (size_t i = 0; v && i < n; i++)
        v[i] = random_float();
    return v;
}

static void *to_device(gpu_case *c, const void *host, size_t bytes)
{
    void *d = NULL;
    if (cudaMalloc(&d, bytes ? bytes : 4) != cudaSuccess)
        return NULL;
    if (host)
        cudaMemcpy(d, host, bytes, cudaMemcpyHostToDevice);
    else
        cudaMemset(d, 0, bytes ? bytes : 4);
    c->dev[c->n_dev++] = d;
    return d;
}

static void case_free(gpu_case *c)
{
    for (size_t i = 0; i < c->n_dev; i++)
        cudaFree(c->dev[i]);
    free(c->ref);
    free(c->got);
    free(c->symbol_data);
    memset(c, 0, sizeof *c);
}

static const char *config_value(const cutune_problem *p, size_t config,
                                const char *name)
{
    size_t i = cutune__problem_find_param(p, name);
    if (i == SIZE_MAX)
        return NULL;
    return p->value_texts[i][cutune__space_config(p->space, config)[i]];
}

/* ------------------------------------------------------------------ */
/* The templates: data, parameters and CPU reference at a size          */

static int setup_vector_add(gpu_case *c, const long long *s, int mirror)
{
    const int n = (int)s[0], offset = 5;
    float *a = random_floats((size_t)n + 32),
          *b = random_floats((size_t)n + 32);
    float *ref = calloc((size_t)n + 32, sizeof *ref);
    for (int i = 0; i < n; i++) {
        if (mirror)
            ref[i + offset] = a[i] + b[i];
        else
            ref[i] = a[i + offset] + b[i + offset];
    }
    c->out_count = mirror ? (size_t)n + 32 : (size_t)n;
    c->out = to_device(c, NULL, c->out_count * 4);
    to_device(c, a, ((size_t)n + 32) * 4);
    to_device(c, b, ((size_t)n + 32) * 4);
    c->scalars[0].i = n;
    c->scalars[1].i = offset;
    for (int i = 0; i < 3; i++)
        c->params[i] = &c->dev[i];
    c->params[3] = &c->scalars[0].i;
    c->params[4] = &c->scalars[1].i;
    c->ref = ref;
    free(a);
    free(b);
    return 0;
}

static int setup_write_offset(gpu_case *c, const long long *s,
                              const cutune_problem *p, size_t cfg)
{
    (void)p;
    (void)cfg;
    return setup_vector_add(c, s, 1);
}

static int setup_vector_add_case(gpu_case *c, const long long *s,
                                 const cutune_problem *p, size_t cfg)
{
    (void)p;
    (void)cfg;
    return setup_vector_add(c, s, 0);
}

static int setup_copy(gpu_case *c, const long long *s, const cutune_problem *p,
                      size_t cfg)
{
    (void)p;
    (void)cfg;
    const int n = (int)s[0];
    float *src = random_floats((size_t)n);
    c->out_count = (size_t)n;
    c->out = to_device(c, NULL, (size_t)n * 4);
    to_device(c, src, (size_t)n * 4);
    c->scalars[0].i = n;
    c->params[0] = &c->dev[0];
    c->params[1] = &c->dev[1];
    c->params[2] = &c->scalars[0].i;
    c->ref = src;
    return 0;
}

static int setup_aos_soa(gpu_case *c, const long long *s,
                         const cutune_problem *p, size_t cfg)
{
    const int n = (int)s[0];
    const int soa = strcmp(config_value(p, cfg, "LAYOUT"), "1") == 0;
    float *x = random_floats((size_t)n), *y = random_floats((size_t)n);
    float *aos = malloc(2 * (size_t)n * sizeof *aos);
    float *ref = malloc(2 * (size_t)n * sizeof *ref);
    for (int i = 0; i < n; i++) {
        aos[2 * i] = x[i];
        aos[2 * i + 1] = y[i];
        if (soa) {
            ref[i] = x[i] + 10.0f;
            ref[n + i] = y[i] + 20.0f;
        } else {
            ref[2 * i] = x[i] + 10.0f;
            ref[2 * i + 1] = y[i] + 20.0f;
        }
    }
    c->out_count = 2 * (size_t)n;
    c->out = to_device(c, NULL, 2 * (size_t)n * 4);
    to_device(c, aos, 2 * (size_t)n * 4);
    to_device(c, x, (size_t)n * 4);
    to_device(c, y, (size_t)n * 4);
    c->scalars[0].i = n;
    for (int i = 0; i < 4; i++)
        c->params[i] = &c->dev[i];
    c->params[4] = &c->scalars[0].i;
    c->ref = ref;
    free(x);
    free(y);
    free(aos);
    return 0;
}

static int setup_transpose(gpu_case *c, const long long *s,
                           const cutune_problem *p, size_t cfg)
{
    (void)p;
    (void)cfg;
    const int cols = (int)s[0], rows = (int)s[1];
    const size_t n = (size_t)cols * rows;
    float *in = random_floats(n), *ref = malloc(n * sizeof *ref);
    for (int r = 0; r < rows; r++)
        for (int k = 0; k < cols; k++)
            ref[(size_t)k * rows + r] = in[(size_t)r * cols + k];
    c->out_count = n;
    c->out = to_device(c, NULL, n * 4);
    to_device(c, in, n * 4);
    c->scalars[0].i = cols;
    c->scalars[1].i = rows;
    c->params[0] = &c->dev[0];
    c->params[1] = &c->dev[1];
    c->params[2] = &c->scalars[0].i;
    c->params[3] = &c->scalars[1].i;
    c->ref = ref;
    free(in);
    return 0;
}

static int setup_reduce(gpu_case *c, const long long *s,
                        const cutune_problem *p, size_t cfg)
{
    (void)p;
    (void)cfg;
    const int n = (int)s[0];
    float *in = random_floats((size_t)n);
    double *ref = malloc(sizeof *ref);
    *ref = 0.0;
    for (int i = 0; i < n; i++)
        *ref += in[i];
    c->out_count = 1;
    c->out_double = 1;
    c->out = to_device(c, NULL, sizeof(double));
    to_device(c, in, (size_t)n * 4);
    c->scalars[0].i = n;
    c->params[0] = &c->dev[0];
    c->params[1] = &c->dev[1];
    c->params[2] = &c->scalars[0].i;
    c->ref = ref;
    c->rtol = 1e-9;
    c->atol = 1e-9;
    free(in);
    return 0;
}

static int setup_matmul(gpu_case *c, const long long *s,
                        const cutune_problem *p, size_t cfg)
{
    (void)p;
    (void)cfg;
    const int M = (int)s[0], N = (int)s[1], K = (int)s[2];
    float *A = random_floats((size_t)M * K), *B = random_floats((size_t)K * N);
    float *ref = malloc((size_t)M * N * sizeof *ref);
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            float acc = 0.0f;
            for (int k = 0; k < K; k++)
                acc = fmaf(A[(size_t)i * K + k], B[(size_t)k * N + j], acc);
            ref[(size_t)i * N + j] = acc;
        }
    c->out_count = (size_t)M * N;
    c->out = to_device(c, NULL, (size_t)M * N * 4);
    to_device(c, A, (size_t)M * K * 4);
    to_device(c, B, (size_t)K * N * 4);
    c->scalars[0].i = M;
    c->scalars[1].i = N;
    c->scalars[2].i = K;
    for (int i = 0; i < 3; i++) {
        c->params[i] = &c->dev[i];
        c->params[3 + i] = &c->scalars[i].i;
    }
    c->ref = ref;
    free(A);
    free(B);
    return 0;
}

static int setup_conv2d(gpu_case *c, const long long *s,
                        const cutune_problem *p, size_t cfg)
{
    (void)p;
    (void)cfg;
    const int W = (int)s[0], H = (int)s[1], F = 7;
    const int iw = W + F - 1, ih = H + F - 1;
    float *in = random_floats((size_t)iw * ih), *f = random_floats(F * F);
    float *ref = malloc((size_t)W * H * sizeof *ref);
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) {
            float acc = 0.0f;
            for (int fy = 0; fy < F; fy++)
                for (int fx = 0; fx < F; fx++)
                    acc = fmaf(in[(size_t)(y + fy) * iw + x + fx],
                               f[fy * F + fx], acc);
            ref[(size_t)y * W + x] = acc;
        }
    c->out_count = (size_t)W * H;
    c->out = to_device(c, NULL, (size_t)W * H * 4);
    to_device(c, in, (size_t)iw * ih * 4);
    /* The filter is the module's __constant__ variable `filter`. */
    c->symbol = "filter";
    c->symbol_data = f;
    c->symbol_bytes = F * F * 4;
    c->scalars[0].i = W;
    c->scalars[1].i = H;
    for (int i = 0; i < 2; i++)
        c->params[i] = &c->dev[i];
    c->params[2] = &c->scalars[0].i;
    c->params[3] = &c->scalars[1].i;
    c->ref = ref;
    free(in);
    return 0;
}

typedef int (*setup_fn)(gpu_case *, const long long *, const cutune_problem *,
                        size_t);

static const struct {
    const char *name;
    setup_fn setup;
    size_t dims;
    long long sizes[4][3];
} templates[] = {
    {"vector_add",
     setup_vector_add_case,
     1,
     {{1}, {1000}, {65537}, {(1 << 20) + 3}}},
    {"write_offset",
     setup_write_offset,
     1,
     {{1}, {1000}, {65537}, {(1 << 20) + 3}}},
    {"copy", setup_copy, 1, {{1}, {3}, {1001}, {(1 << 20) + 5}}},
    {"aos_soa", setup_aos_soa, 1, {{1}, {7}, {1003}, {(1 << 18) + 1}}},
    {"transpose",
     setup_transpose,
     2,
     {{1, 1}, {33, 17}, {100, 257}, {1025, 64}}},
    {"reduce", setup_reduce, 1, {{1}, {5}, {1000}, {(1 << 20) + 7}}},
    {"matmul",
     setup_matmul,
     3,
     {{1, 1, 1}, {17, 33, 9}, {100, 70, 129}, {128, 256, 64}}},
    {"conv2d", setup_conv2d, 2, {{1, 1}, {37, 19}, {130, 67}, {256, 128}}},
};

/* ------------------------------------------------------------------ */

static size_t pick(const cutune_problem *p, size_t *out)
{
    size_t n = cutune_problem_space_size(p);
    if (n <= SAMPLE) {
        for (size_t i = 0; i < n; i++)
            out[i] = i;
        return n;
    }
    size_t k = 0;
    out[k++] = cutune__problem_default_config(p);
    if (out[0] != 0)
        out[k++] = 0;
    if (out[0] != n - 1)
        out[k++] = n - 1;
    uint64_t state = 14;
    while (k < SAMPLE) {
        state = state * 6364136223846793005ULL + 1442695040888963407ULL;
        size_t c = (size_t)((state >> 33) % n);
        int seen = 0;
        for (size_t j = 0; j < k; j++)
            seen |= out[j] == c;
        if (!seen)
            out[k++] = c;
    }
    return k;
}

static void describe(const cutune_problem *p, size_t cfg, char *buf,
                     size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < p->n_params && used < len; i++)
        used += (size_t)snprintf(buf + used, len - used, "%s%s=%s",
                                 i ? " " : "", p->param_names[i],
                                 config_value(p, cfg, p->param_names[i]));
}

/* Returns -1 when the CUDA context can no longer be trusted. */
static int run_template(size_t t, const char *arch)
{
    const char *name = templates[t].name;
    cutune_problem *p0;
    CHECK_INT(cutune_problem_load(name, NULL, &p0), CUTUNE_OK);
    if (!p0->space) {
        fprintf(stderr, "%s\n", cutune_problem_errmsg(p0));
        cutune_problem_destroy(p0);
        return 0;
    }
    size_t configs[SAMPLE];
    size_t n = pick(p0, configs);
    cutune__compile_job *jobs = calloc(n, sizeof *jobs);
    char ***opts = calloc(n, sizeof *opts);
    size_t *nopts = calloc(n, sizeof *nopts);
    for (size_t i = 0; i < n; i++) {
        opts[i] = cutune__problem_options(p0, configs[i], arch, &nopts[i]);
        jobs[i].source = p0->source;
        jobs[i].source_name = p0->kernel_name;
        jobs[i].options = opts[i];
        jobs[i].n_options = nopts[i];
    }
    cutune__compile_batch(jobs, n, 0, NULL);

    int broken = 0;
    size_t passed = 0, total = 0;
    for (size_t i = 0; i < n && !broken; i++) {
        char cfgtext[512];
        describe(p0, configs[i], cfgtext, sizeof cfgtext);
        CHECK(jobs[i].ok);
        if (!jobs[i].ok) {
            fprintf(stderr, "%s %s: does not compile\n%s\n", name, cfgtext,
                    jobs[i].log);
            continue;
        }
        cudaLibrary_t lib;
        cudaKernel_t kernel;
        cudaError_t e = cudaLibraryLoadData(&lib, jobs[i].cubin, NULL, NULL, 0,
                                            NULL, NULL, 0);
        if (e == cudaSuccess)
            e = cudaLibraryGetKernel(&kernel, lib, p0->kernel_name);
        CHECK_INT(e, cudaSuccess);
        if (e != cudaSuccess)
            continue;
        for (size_t s = 0; s < 4 && !broken; s++) {
            const long long *size = templates[t].sizes[s];
            cutune_problem_options po = {.problem_size = size,
                                         .n_problem_size = templates[t].dims,
                                         .space_only = 0};
            cutune_problem *p;
            if (cutune_problem_load(name, &po, &p) != CUTUNE_OK) {
                CHECK(0);
                cutune_problem_destroy(p);
                continue;
            }
            unsigned grid[3], block[3];
            char err[256];
            int geo = cutune__problem_geometry(p, configs[i], grid, block, err,
                                               sizeof err);
            CHECK_INT(geo, 0);
            gpu_case c;
            memset(&c, 0, sizeof c);
            c.rtol = 1e-5;
            c.atol = 1e-6;
            rng_state = 1000 + s;
            if (geo != 0 || templates[t].setup(&c, size, p, configs[i])) {
                case_free(&c);
                cutune_problem_destroy(p);
                continue;
            }
            dim3 g = {grid[0], grid[1], grid[2]};
            dim3 b = {block[0], block[1], block[2]};
            e = cudaSuccess;
            if (c.symbol) {
                void *symbol = NULL;
                size_t bytes = 0;
                e = cudaLibraryGetGlobal(&symbol, &bytes, lib, c.symbol);
                if (e == cudaSuccess && bytes < c.symbol_bytes)
                    e = cudaErrorInvalidValue;
                if (e == cudaSuccess)
                    e = cudaMemcpy(symbol, c.symbol_data, c.symbol_bytes,
                                   cudaMemcpyHostToDevice);
            }
            if (e == cudaSuccess)
                e = cudaLaunchKernel((const void *)kernel, g, b, c.params, 0,
                                     0);
            if (e == cudaSuccess)
                e = cudaDeviceSynchronize();
            size_t esize = c.out_double ? sizeof(double) : sizeof(float);
            c.got = malloc(c.out_count * esize);
            if (e == cudaSuccess)
                e = cudaMemcpy(c.got, c.out, c.out_count * esize,
                               cudaMemcpyDeviceToHost);
            total++;
            if (e != cudaSuccess) {
                fprintf(stderr, "%s %s size %lld: %s\n", name, cfgtext,
                        size[0], cudaGetErrorString(e));
                CHECK_INT(e, cudaSuccess);
                broken = cudaGetLastError() != cudaSuccess ||
                         cudaDeviceSynchronize() != cudaSuccess;
            } else {
                size_t bad = 0, first = 0;
                for (size_t k = 0; k < c.out_count; k++) {
                    double o = c.out_double ? ((double *)c.got)[k]
                                            : ((float *)c.got)[k];
                    double r = c.out_double ? ((double *)c.ref)[k]
                                            : ((float *)c.ref)[k];
                    if (!(fabs(o - r) <= c.atol + c.rtol * fabs(r)) &&
                        bad++ == 0)
                        first = k;
                }
                CHECK_INT(bad, 0);
                if (bad) {
                    double o = c.out_double ? ((double *)c.got)[first]
                                            : ((float *)c.got)[first];
                    double r = c.out_double ? ((double *)c.ref)[first]
                                            : ((float *)c.ref)[first];
                    fprintf(stderr, "%s %s size", name, cfgtext);
                    for (size_t d = 0; d < templates[t].dims; d++)
                        fprintf(stderr, " %lld", size[d]);
                    fprintf(stderr,
                            ": %zu of %zu wrong, first at %zu: %g "
                            "instead of %g\n",
                            bad, c.out_count, first, o, r);
                } else {
                    passed++;
                }
            }
            case_free(&c);
            cutune_problem_destroy(p);
        }
        cudaLibraryUnload(lib);
    }
    printf("%-12s %zu configurations x 4 sizes: %zu of %zu runs correct\n",
           name, n, passed, total);
    for (size_t i = 0; i < n; i++) {
        cutune__compile_job_clear(&jobs[i]);
        cutune__free_strings(opts[i], nopts[i]);
    }
    free(jobs);
    free(opts);
    free(nopts);
    cutune_problem_destroy(p0);
    return broken ? -1 : 0;
}

/* The T1 files as the tuner uses them: a short tune of each template at a
 * size that is no multiple of its tiles, every evaluation correct against
 * the default configuration (this is what checks aos_soa's layout-neutral
 * inputs and reduce's double sum). */
static void tune_template(const char *name, const long long *size, size_t dims,
                          const char *cache_dir)
{
    cutune_problem_options po = {
        .problem_size = size, .n_problem_size = dims, .space_only = 0};
    cutune_problem *p;
    CHECK_INT(cutune_problem_load(name, &po, &p), CUTUNE_OK);
    cutune_session_options o;
    cutune_session_options_init(&o);
    o.max_evals = 30;
    o.cache_dir = cache_dir;
    o.write_cache = 0;
    cutune_session *s;
    CHECK_INT(cutune_session_create(&o, &s), CUTUNE_OK);
    const cutune_tune_result *r;
    cutune_status st = cutune_session_tune(s, p, &r);
    CHECK_INT(st, CUTUNE_OK);
    if (st != CUTUNE_OK) {
        fprintf(stderr, "%s: %s\n", name, cutune_session_errmsg(s));
    } else {
        size_t correct = 0;
        for (size_t i = 0; i < r->n_evals; i++) {
            if (r->evals[i].outcome == CUTUNE_OUTCOME_CORRECT)
                correct++;
            else
                fprintf(stderr, "%s: evaluation %zu: outcome %d: %s\n", name,
                        i, (int)r->evals[i].outcome,
                        r->evals[i].message ? r->evals[i].message : "");
        }
        CHECK_INT(correct, r->n_evals);
        printf("%-12s tune: %zu evaluations, %zu correct, best %.4f ms\n",
               name, r->n_evals, correct, r->best_ms);
    }
    cutune_session_destroy(s);
    cutune_problem_destroy(p);
}

int main(void)
{
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0)
        return check_skip("no CUDA device");
    struct cudaDeviceProp prop;
    cudaGetDeviceProperties(&prop, 0);
    char arch[16];
    snprintf(arch, sizeof arch, "sm_%d%d", prop.major, prop.minor);
    printf("%s (%s)\n", prop.name, arch);
    size_t n_templates = sizeof templates / sizeof *templates;
    CHECK_INT(cutune_template_count(), n_templates);
    for (size_t t = 0; t < n_templates; t++)
        if (run_template(t, arch) != 0) {
            fprintf(stderr, "the CUDA context is broken; stopping\n");
            return check_finish();
        }

    char cache_dir[] = "/tmp/cutune-templates-gpu-XXXXXX";
    if (!mkdtemp(cache_dir))
        return check_finish();
    for (size_t t = 0; t < n_templates; t++)
        tune_template(templates[t].name, templates[t].sizes[3],
                      templates[t].dims, cache_dir);
    remove_tree(cache_dir);
    return check_finish();
}
