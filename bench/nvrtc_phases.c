/* Where NVRTC's time goes, per problem (issue 34, item 4). For a sample
 * of configurations evenly spread over the space index, single-threaded:
 *
 *   cubin      the compile as cutune does it (cutune__compile, no binary
 *              cache): NVRTC to a cubin for sm_90
 *   syntax     the front end alone (-fdevice-syntax-only)
 *   ptx        NVRTC to PTX only (compute_90, nvrtcGetPTX)
 *   sass       the PTX to a cubin for sm_90 through nvJitLink
 *
 * and whether nvJitLink's cubin is byte for byte NVRTC's. --pch times the
 * cubin compile again with NVRTC's automatic precompiled headers (a fresh
 * folder per variant): with the source and options as they are, and with
 * a header stop and the tunables as #define lines (so that one header
 * serves every configuration), with and without --pch, and compares each
 * cubin's bytes with cutune's; --groups compiles the sample to PTX only
 * and counts configurations whose PTX another one already has.
 * A benchmark: it prints figures, medians over the sample; on a shared
 * machine they are CPU timings with the machine's noise in them.
 *
 * Usage: nvrtc_phases [--sample N] [--pch] [--groups] [--arch sm_XX]
 *                     PROBLEM...
 * PROBLEM is a built-in template name or a T1 file, as `cutune compile`
 * takes it; --sample 0 takes the whole space. */
#define _POSIX_C_SOURCE 200809L

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <nvJitLink.h>
#include <nvrtc.h>

#include "compile.h"
#include "cutune/cutune.h"
#include "fsio.h"
#include "problem.h"
#include "util.h"

typedef struct settings {
    size_t sample; /* 0: the whole space */
    int pch;
    int groups;
    const char *arch; /* "sm_90" */
} settings;

/* One configuration's NVRTC inputs. */
typedef struct config_input {
    char *source;   /* owned, or NULL: the problem's */
    char **options; /* owned, the architecture last */
    size_t n_options;
} config_input;

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, size_t n)
{
    if (n == 0)
        return 0.0;
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static size_t *sample_configs(size_t space, size_t want, size_t *n)
{
    *n = want == 0 || want > space ? space : want;
    size_t *idx = malloc((*n ? *n : 1) * sizeof *idx);
    for (size_t i = 0; idx && i < *n; i++)
        idx[i] = (size_t)((double)i * (double)space / (double)*n);
    return idx;
}

static int input_make(const cutune_problem *p, size_t config, const char *arch,
                      config_input *in)
{
    in->source = cutune__problem_source(p, config);
    in->options = cutune__problem_options(p, config, arch, &in->n_options);
    return in->options ? 0 : -1;
}

static void input_clear(config_input *in)
{
    free(in->source);
    cutune__free_strings(in->options, in->n_options);
}

/* The options with the architecture (last) swapped for `arch_option` and
 * `extra` appended; borrowed strings, the array malloc'ed. */
static const char **options_with(const config_input *in,
                                 const char *arch_option,
                                 const char *const *extra, size_t n_extra,
                                 size_t *n)
{
    const char **o = malloc((in->n_options + n_extra) * sizeof *o);
    if (!o)
        return NULL;
    for (size_t i = 0; i + 1 < in->n_options; i++)
        o[i] = in->options[i];
    o[in->n_options - 1] =
        arch_option ? arch_option : in->options[in->n_options - 1];
    for (size_t i = 0; i < n_extra; i++)
        o[in->n_options + i] = extra[i];
    *n = in->n_options + n_extra;
    return o;
}

/* The whole compile as cutune does it; the job keeps the cubin. */
static int time_cubin(const cutune_problem *p, const config_input *in,
                      cutune__compile_job *job, double *seconds)
{
    memset(job, 0, sizeof *job);
    job->source = in->source ? in->source : p->source;
    job->source_name = p->kernel_name;
    job->options = in->options;
    job->n_options = in->n_options;
    job->kernel_name = p->kernel_name;
    if (cutune__compile(job) != 0 || !job->ok)
        return -1;
    *seconds = job->seconds;
    return 0;
}

/* NVRTC with the options `o`: returns the program (compiled) or NULL. */
static nvrtcProgram nvrtc_run(const cutune_problem *p, const char *source,
                              const char **o, size_t n, double *seconds)
{
    double t0 = cutune__now();
    nvrtcProgram prog;
    if (nvrtcCreateProgram(&prog, source ? source : p->source, p->kernel_name,
                           0, NULL, NULL) != NVRTC_SUCCESS)
        return NULL;
    nvrtcAddNameExpression(prog, p->kernel_name);
    nvrtcResult r = nvrtcCompileProgram(prog, (int)n, o);
    *seconds = cutune__now() - t0;
    if (r != NVRTC_SUCCESS) {
        nvrtcDestroyProgram(&prog);
        return NULL;
    }
    return prog;
}

/* NVRTC to PTX for `arch_option` ("--gpu-architecture=compute_90"):
 * malloc'ed PTX, or NULL. */
static char *time_ptx(const cutune_problem *p, const config_input *in,
                      const char *arch_option, double *seconds)
{
    size_t n;
    const char **o = options_with(in, arch_option, NULL, 0, &n);
    if (!o)
        return NULL;
    double t0 = cutune__now(), compiled;
    nvrtcProgram prog = nvrtc_run(p, in->source, o, n, &compiled);
    free(o);
    char *ptx = NULL;
    size_t size;
    if (prog && nvrtcGetPTXSize(prog, &size) == NVRTC_SUCCESS &&
        (ptx = malloc(size)) && nvrtcGetPTX(prog, ptx) != NVRTC_SUCCESS) {
        free(ptx);
        ptx = NULL;
    }
    if (prog)
        nvrtcDestroyProgram(&prog);
    *seconds = cutune__now() - t0;
    return ptx;
}

static int time_syntax(const cutune_problem *p, const config_input *in,
                       double *seconds)
{
    static const char *const extra[] = {"-fdevice-syntax-only"};
    size_t n;
    const char **o = options_with(in, NULL, extra, 1, &n);
    if (!o)
        return -1;
    nvrtcProgram prog = nvrtc_run(p, in->source, o, n, seconds);
    free(o);
    if (!prog)
        return -1;
    nvrtcDestroyProgram(&prog);
    return 0;
}

/* PTX to a cubin through nvJitLink: malloc'ed cubin, or NULL. */
static char *time_sass(const char *ptx, const char *arch, size_t *size,
                       double *seconds)
{
    char arch_option[32];
    snprintf(arch_option, sizeof arch_option, "-arch=%s", arch);
    const char *o[] = {arch_option};
    double t0 = cutune__now();
    nvJitLinkHandle h;
    if (nvJitLinkCreate(&h, 1, o) != NVJITLINK_SUCCESS)
        return NULL;
    char *cubin = NULL;
    if (nvJitLinkAddData(h, NVJITLINK_INPUT_PTX, ptx, strlen(ptx) + 1,
                         "kernel.ptx") == NVJITLINK_SUCCESS &&
        nvJitLinkComplete(h) == NVJITLINK_SUCCESS &&
        nvJitLinkGetLinkedCubinSize(h, size) == NVJITLINK_SUCCESS &&
        (cubin = malloc(*size)) &&
        nvJitLinkGetLinkedCubin(h, cubin) != NVJITLINK_SUCCESS) {
        free(cubin);
        cubin = NULL;
    }
    nvJitLinkDestroy(&h);
    *seconds = cutune__now() - t0;
    return cubin;
}

static int same_bytes(const char *a, size_t na, const char *b, size_t nb)
{
    return a && b && na == nb && memcmp(a, b, na) == 0;
}

/* The PCH variants --pch times, each against the cubin as cutune
 * compiles it now. */
enum { PCH_AS_IS, STOP_PLAIN, STOP_PCH, N_VARIANTS };
static const char *const variant_names[N_VARIANTS] = {
    "--pch, source and options as now", "header stop, -D as #define, no --pch",
    "header stop, -D as #define, --pch"};

typedef struct variant_times {
    double *seconds; /* all but the first compile */
    double first;    /* the first compile (creates the header); < 0: none */
    size_t n, same;
    char *log; /* NVRTC's log of the first two compiles */
} variant_times;

/* Medians over the sample, seconds per configuration. */
typedef struct phase_times {
    double *cubin, *syntax, *ptx, *sass;
    size_t n, failed, sass_same;
    variant_times v[N_VARIANTS];
} phase_times;

static int times_alloc(phase_times *t, size_t n)
{
    memset(t, 0, sizeof *t);
    t->cubin = calloc(n + 1, sizeof(double));
    t->syntax = calloc(n + 1, sizeof(double));
    t->ptx = calloc(n + 1, sizeof(double));
    t->sass = calloc(n + 1, sizeof(double));
    int ok = t->cubin && t->syntax && t->ptx && t->sass;
    for (int k = 0; k < N_VARIANTS; k++) {
        t->v[k].first = -1.0;
        ok = ok && (t->v[k].seconds = calloc(n + 1, sizeof(double)));
    }
    return ok ? 0 : -1;
}

static void times_free(phase_times *t)
{
    free(t->cubin);
    free(t->syntax);
    free(t->ptx);
    free(t->sass);
    for (int k = 0; k < N_VARIANTS; k++) {
        free(t->v[k].seconds);
        free(t->v[k].log);
    }
}

static char *cubin_of(const cutune_problem *p, size_t config, const char *arch,
                      size_t *size);

/* The source of the header-stop variants: an empty header and a
 * declaration end the part a PCH can hold (NVRTC's own headers, the same
 * for every configuration); the -D options follow as #define lines, so
 * that every configuration's command line is the same. */
static char *stop_source(const cutune_problem *p, const config_input *in)
{
    size_t len = strlen(in->source ? in->source : p->source) + 128;
    for (size_t i = 0; i < in->n_options; i++)
        len += strlen(in->options[i]) + 16;
    char *src = malloc(len);
    if (!src)
        return NULL;
    size_t k = (size_t)sprintf(src, "#include \"cutune_pch_stop.h\"\n"
                                    "namespace cutune_pch_stop {}\n");
    for (size_t i = 0; i < in->n_options; i++) {
        const char *o = in->options[i];
        if (strncmp(o, "-D", 2) != 0)
            continue;
        const char *eq = strchr(o, '=');
        if (eq)
            k += (size_t)sprintf(src + k, "#define %.*s %s\n",
                                 (int)(eq - o - 2), o + 2, eq + 1);
        else
            k += (size_t)sprintf(src + k, "#define %s 1\n", o + 2);
    }
    sprintf(src + k, "#line 1\n%s", in->source ? in->source : p->source);
    return src;
}

/* The options of a variant: borrowed strings, the array malloc'ed. */
static const char **variant_options(const config_input *in, int variant,
                                    const char *dir_option, size_t *n)
{
    const char **o = malloc((in->n_options + 3) * sizeof *o);
    if (!o)
        return NULL;
    *n = 0;
    for (size_t i = 0; i < in->n_options; i++)
        if (variant == PCH_AS_IS || strncmp(in->options[i], "-D", 2) != 0)
            o[(*n)++] = in->options[i];
    if (variant != STOP_PLAIN) {
        o[(*n)++] = "--pch";
        o[(*n)++] = dir_option;
        o[(*n)++] = "--pch-messages=true";
    }
    return o;
}

static void keep_log(nvrtcProgram prog, variant_times *v)
{
    size_t size = 0;
    char *log = NULL;
    if (v->n + (v->first >= 0) < 2 &&
        nvrtcGetProgramLogSize(prog, &size) == NVRTC_SUCCESS &&
        (log = malloc(size + 1)) &&
        nvrtcGetProgramLog(prog, log) == NVRTC_SUCCESS) {
        char *both =
            cutune__strdup_printf("%s[compile %zu]\n%s", v->log ? v->log : "",
                                  v->n + (v->first >= 0), log);
        free(v->log);
        v->log = both;
    }
    free(log);
}

/* The cubin compile as `variant`, into t->v[variant]; counted identical
 * when the bytes are those of `job` (the compile as cutune does it). */
static void time_variant(const cutune_problem *p, const config_input *in,
                         const cutune__compile_job *job, const char *dir,
                         int variant, phase_times *t)
{
    static const char *const header[] = {"/* empty */\n"};
    static const char *const header_name[] = {"cutune_pch_stop.h"};
    variant_times *v = &t->v[variant];
    char *dir_option = cutune__strdup_printf("--pch-dir=%s", dir);
    char *src = variant == PCH_AS_IS ? NULL : stop_source(p, in);
    size_t n;
    const char **o = variant_options(in, variant, dir_option, &n);
    double t0 = cutune__now();
    nvrtcProgram prog = NULL;
    if (o && dir_option && (variant == PCH_AS_IS || src) &&
        nvrtcCreateProgram(&prog,
                           src          ? src
                           : in->source ? in->source
                                        : p->source,
                           p->kernel_name, 1, header,
                           header_name) == NVRTC_SUCCESS) {
        nvrtcAddNameExpression(prog, p->kernel_name);
        if (nvrtcCompileProgram(prog, (int)n, o) != NVRTC_SUCCESS)
            nvrtcDestroyProgram(&prog);
    }
    double s = cutune__now() - t0;
    free(o);
    free(src);
    free(dir_option);
    if (!prog)
        return;
    size_t size = 0;
    char *cubin = NULL;
    if (nvrtcGetCUBINSize(prog, &size) == NVRTC_SUCCESS &&
        (cubin = malloc(size)) && nvrtcGetCUBIN(prog, cubin) == NVRTC_SUCCESS)
        v->same += same_bytes(cubin, size, job->cubin, job->cubin_size);
    keep_log(prog, v);
    free(cubin);
    nvrtcDestroyProgram(&prog);
    if (v->first < 0)
        v->first = s;
    else
        v->seconds[v->n++] = s;
}

/* One configuration: every phase, into slot t->n. */
static void measure_config(const cutune_problem *p, size_t config,
                           const settings *st, char *const pch_dirs[],
                           phase_times *t)
{
    config_input in = {0};
    cutune__compile_job job = {0};
    char arch_option[64];
    snprintf(arch_option, sizeof arch_option, "--gpu-architecture=compute_%s",
             st->arch + 3);
    size_t i = t->n;
    if (input_make(p, config, st->arch, &in) != 0 ||
        time_cubin(p, &in, &job, &t->cubin[i]) != 0 ||
        time_syntax(p, &in, &t->syntax[i]) != 0) {
        t->failed++;
        cutune__compile_job_clear(&job);
        input_clear(&in);
        return;
    }
    char *ptx = time_ptx(p, &in, arch_option, &t->ptx[i]);
    size_t size = 0;
    char *cubin = ptx ? time_sass(ptx, st->arch, &size, &t->sass[i]) : NULL;
    if (!cubin) {
        t->failed++;
    } else {
        t->sass_same += same_bytes(cubin, size, job.cubin, job.cubin_size);
        t->n++;
        for (int k = 0; pch_dirs && k < N_VARIANTS; k++)
            time_variant(p, &in, &job, pch_dirs[k], k, t);
    }
    free(cubin);
    free(ptx);
    cutune__compile_job_clear(&job);
    input_clear(&in);
}

/* A line per PCH variant: medians against the compile as now, the first
 * compile (which creates the header) apart, and NVRTC's words on it. */
static void print_pch(phase_times *t)
{
    double cubin = median(t->cubin, t->n);
    for (int k = 0; k < N_VARIANTS; k++) {
        variant_times *v = &t->v[k];
        double m = median(v->seconds, v->n);
        printf("  %-38s %8.1f ms  %+6.1f%% (first: %.1f ms); "
               "cubin identical %zu of %zu\n",
               variant_names[k], 1e3 * m,
               cubin > 0 ? 100.0 * (m - cubin) / cubin : 0.0, 1e3 * v->first,
               v->same, v->n + (v->first >= 0));
    }
    for (int k = 0; k < N_VARIANTS; k++) {
        const char *log = t->v[k].log;
        if (!log || !*log || k == STOP_PLAIN)
            continue;
        printf("  NVRTC's log, %s:\n", variant_names[k]);
        for (const char *l = log; *l;) {
            const char *e = strchr(l, '\n');
            int len = e ? (int)(e - l) : (int)strlen(l);
            if (len > 0 && strncmp(l, "Remark", 6) != 0)
                printf("    %.*s\n", len, l);
            l += len + (e != NULL);
        }
    }
}

static char *make_pch_dir(void)
{
    char *dir = strdup("/tmp/nvrtc_phases_pch.XXXXXX");
    if (dir && !mkdtemp(dir)) {
        free(dir);
        dir = NULL;
    }
    return dir;
}

static void remove_pch_dir(char *dir)
{
    if (!dir)
        return;
    char *cmd = cutune__strdup_printf("rm -rf '%s'", dir);
    if (cmd && system(cmd) != 0)
        fprintf(stderr, "nvrtc_phases: could not remove %s\n", dir);
    free(cmd);
    free(dir);
}

static void print_phases(const char *name, size_t space, phase_times *t)
{
    double cubin = median(t->cubin, t->n), syntax = median(t->syntax, t->n);
    double ptx = median(t->ptx, t->n), sass = median(t->sass, t->n);
    printf("%s: %zu configurations, %zu measured (%zu failed)\n", name, space,
           t->n, t->failed);
    printf("  cubin (as cutune):      %8.1f ms\n", 1e3 * cubin);
    printf("  front end (syntax):     %8.1f ms  %5.1f%%\n", 1e3 * syntax,
           cubin > 0 ? 100.0 * syntax / cubin : 0.0);
    printf("  to PTX (compute_90):    %8.1f ms  %5.1f%%\n", 1e3 * ptx,
           cubin > 0 ? 100.0 * ptx / cubin : 0.0);
    printf("  PTX to SASS (nvJitLink):%8.1f ms  %5.1f%%\n", 1e3 * sass,
           cubin > 0 ? 100.0 * sass / cubin : 0.0);
    printf("  nvJitLink cubin identical to NVRTC's: %zu of %zu\n",
           t->sass_same, t->n);
}

static int run_phases(const cutune_problem *p, const settings *st)
{
    size_t space = cutune__space_size(p->space), n;
    size_t *idx = sample_configs(space, st->sample, &n);
    phase_times t = {0};
    char *pch_dirs[N_VARIANTS] = {0};
    int ok = idx && times_alloc(&t, n) == 0;
    for (int k = 0; ok && st->pch && k < N_VARIANTS; k++)
        ok = (pch_dirs[k] = make_pch_dir()) != NULL;
    if (ok && n > 0) {
        /* Loading NVRTC's built-in headers the first time is no
         * compile's. */
        size_t warm_size;
        free(cubin_of(p, idx[0], st->arch, &warm_size));
        for (size_t i = 0; i < n; i++)
            measure_config(p, idx[i], st, st->pch ? pch_dirs : NULL, &t);
        print_phases(p->name, space, &t);
        if (st->pch)
            print_pch(&t);
    }
    for (int k = 0; k < N_VARIANTS; k++)
        remove_pch_dir(pch_dirs[k]);
    times_free(&t);
    free(idx);
    return ok ? 0 : -1;
}

/* One configuration's PTX hash; 0 when it did not compile. */
typedef struct ptx_entry {
    uint64_t hash;
    size_t config;
} ptx_entry;

static int cmp_entry(const void *a, const void *b)
{
    const ptx_entry *x = a, *y = b;
    if (x->hash != y->hash)
        return x->hash < y->hash ? -1 : 1;
    return x->config < y->config ? -1 : x->config > y->config;
}

/* The cubin of `config` as cutune compiles it: malloc'ed, or NULL. */
static char *cubin_of(const cutune_problem *p, size_t config, const char *arch,
                      size_t *size)
{
    config_input in = {0};
    cutune__compile_job job = {0};
    double s;
    char *cubin = NULL;
    if (input_make(p, config, arch, &in) == 0 &&
        time_cubin(p, &in, &job, &s) == 0) {
        cubin = job.cubin;
        *size = job.cubin_size;
        job.cubin = NULL;
    }
    cutune__compile_job_clear(&job);
    input_clear(&in);
    return cubin;
}

/* Checks, for up to `limit` groups of two or more, that the group's first
 * two members compile to the same cubin. */
static void check_groups(const cutune_problem *p, const ptx_entry *e, size_t n,
                         const char *arch, size_t limit)
{
    size_t checked = 0, same = 0;
    for (size_t i = 0; i + 1 < n && checked < limit; i++) {
        if (e[i].hash == 0 || e[i].hash != e[i + 1].hash ||
            (i > 0 && e[i - 1].hash == e[i].hash))
            continue;
        size_t na = 0, nb = 0;
        char *a = cubin_of(p, e[i].config, arch, &na);
        char *b = cubin_of(p, e[i + 1].config, arch, &nb);
        checked++;
        same += same_bytes(a, na, b, nb);
        free(a);
        free(b);
    }
    printf("  same PTX, same cubin: %zu of %zu groups checked\n", same,
           checked);
}

static void print_groups(const char *name, size_t space, ptx_entry *e,
                         size_t n, double seconds)
{
    qsort(e, n, sizeof *e, cmp_entry);
    size_t ok = 0, distinct = 0, largest = 0, run = 0, in_groups = 0;
    for (size_t i = 0; i < n; i++) {
        if (e[i].hash == 0)
            continue;
        ok++;
        run = i > 0 && e[i - 1].hash == e[i].hash ? run + 1 : 1;
        distinct += run == 1;
        largest = run > largest ? run : largest;
        if (run == 2)
            in_groups += 2;
        else if (run > 2)
            in_groups++;
    }
    printf("%s: %zu configurations, %zu compiled to PTX (median %.1f ms)\n",
           name, space, ok, 1e3 * seconds);
    printf("  distinct PTX: %zu; a compile saved for %zu (%.1f%%); "
           "%zu configurations share their PTX; largest group %zu\n",
           distinct, ok - distinct,
           ok ? 100.0 * (double)(ok - distinct) / (double)ok : 0.0, in_groups,
           largest);
}

static int run_groups(const cutune_problem *p, const settings *st)
{
    size_t space = cutune__space_size(p->space), n;
    size_t *idx = sample_configs(space, st->sample, &n);
    ptx_entry *e = calloc(n + 1, sizeof *e);
    double *secs = calloc(n + 1, sizeof *secs);
    if (!idx || !e || !secs) {
        free(idx);
        free(e);
        free(secs);
        return -1;
    }
    char arch_option[64];
    snprintf(arch_option, sizeof arch_option, "--gpu-architecture=compute_%s",
             st->arch + 3);
    size_t timed = 0;
    for (size_t i = 0; i < n; i++) {
        config_input in = {0};
        e[i].config = idx[i];
        char *ptx = input_make(p, idx[i], st->arch, &in) == 0
                        ? time_ptx(p, &in, arch_option, &secs[timed])
                        : NULL;
        if (ptx) {
            e[i].hash = cutune__fnv1a64(ptx, strlen(ptx));
            e[i].hash += e[i].hash == 0;
            timed++;
        }
        free(ptx);
        input_clear(&in);
    }
    print_groups(p->name, space, e, n, median(secs, timed));
    check_groups(p, e, n, st->arch, 20);
    free(idx);
    free(e);
    free(secs);
    return 0;
}

static int parse_args(int argc, char **argv, settings *st, int *first)
{
    *st = (settings){.sample = 20, .arch = "sm_90"};
    int i = 1;
    for (; i < argc && argv[i][0] == '-'; i++) {
        if (strcmp(argv[i], "--sample") == 0 && i + 1 < argc)
            st->sample = (size_t)strtoul(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--arch") == 0 && i + 1 < argc)
            st->arch = argv[++i];
        else if (strcmp(argv[i], "--pch") == 0)
            st->pch = 1;
        else if (strcmp(argv[i], "--groups") == 0)
            st->groups = 1;
        else
            return -1;
    }
    *first = i;
    return i < argc && strncmp(st->arch, "sm_", 3) == 0 ? 0 : -1;
}

int main(int argc, char **argv)
{
    settings st;
    int first;
    if (parse_args(argc, argv, &st, &first) != 0) {
        fprintf(stderr, "usage: nvrtc_phases [--sample N] [--pch] "
                        "[--groups] [--arch sm_XX] PROBLEM...\n");
        return 2;
    }
    char version[16];
    cutune__nvrtc_version(version, sizeof version);
    printf("NVRTC %s, %s, %ld cores, one thread, medians over the sample\n",
           version, st.arch, sysconf(_SC_NPROCESSORS_ONLN));
    int rc = 0;
    for (int i = first; i < argc; i++) {
        cutune_problem *p;
        if (cutune_problem_load(argv[i], NULL, &p) != CUTUNE_OK) {
            fprintf(stderr, "%s: %s\n", argv[i], cutune_problem_errmsg(p));
            cutune_problem_destroy(p);
            rc = 1;
            continue;
        }
        if ((st.groups ? run_groups(p, &st) : run_phases(p, &st)) != 0)
            rc = 1;
        fflush(stdout);
        cutune_problem_destroy(p);
    }
    return rc;
}
