/* How far a repeated tune strays from the first when the GPU's timings
 * are noisy, by replay (no GPU): each strategy runs twice per seed against
 * a recorded T4 file whose times are perturbed differently each run (a
 * multiplicative shift of the whole run, as clocks give, and independent
 * noise on each configuration's median). The figure is how many of the
 * repeat's evaluations the first run never made: each of those is a
 * compile that a warm binary cache cannot save (bench/warm_cache.sh
 * measures the same on the GPU). It also prints the opt/found medians
 * under that noise (the optimum of the noiseless record over the
 * noiseless time of what each run found best).
 *
 * Usage: bench-divergence [--seeds N] [--budget B] [--noise REL]
 *            [--shift REL] [--far-noise REL [--far-at X]]
 *            [--speculate K [--speculate-kind any]] [--lookahead K]
 *            [--batch B [--threads T] --ahead P,M]
 *            [--strategies a,b] T1:T4 ...
 * Noise and shift are standard deviations of the logarithm (default 0.003
 * and 0.005: two tunes on the H100 measured configurations 0.3-1.0% apart,
 * mostly as a shift; bench/results/2026-11-23-h100-s5.md).
 *
 * Three questions the options answer (bench/results/divergence.md):
 * - Where does noise matter? --far-noise gives configurations more than
 *   --far-at (default 1.03) times the optimum their own noise, as racing
 *   (measuring a clear loser less) does.
 * - Would compiling ahead in the first run help the repeat? --speculate K:
 *   after each result of the first run the neighbours (adjacent, or any
 *   value with --speculate-kind any) of its K fastest configurations count
 *   as compiled; the table then counts only new configurations that were
 *   not, and prints how many extra compiles that took per seed.
 * - Would compiling ahead in the repeat itself help? --lookahead K: after
 *   each of the repeat's results the untaken neighbours of its K fastest
 *   open nodes are noted; the table prints the share of the new
 *   configurations noted at least 1, 5, 10 and 20 evaluations before they
 *   were evaluated (a compile needs tens of a warm run's evaluations).
 * - How often does a tune wait for NVRTC, with and without compiling
 *   ahead? --ahead P,M models the tuner's batches (--batch B proposals,
 *   --threads T compiles at once, default 16; see run_ctx) with the
 *   first P proposals of each followed by M configurations of the
 *   strategy's `ahead`; --ahead 0,0 is the tuner without it.
 */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "cutune/cutune.h"
#include "problem.h"
#include "replay/batch_jobs.h"
#include "replay/replay.h"
#include "space/space.h"
#include "strategy/budget.h"
#include "strategy/strategy.h"
#include "t4.h"

typedef struct run_ctx {
    const double *objective; /* this run's perturbed record */
    unsigned char *seen;     /* evaluated in this run */
    /* Speculation model (first run only; top_k 0: off): after each result
     * the neighbours of the top_k fastest so far count as compiled. */
    const cutune__space *space;
    size_t top_k;
    int any;     /* ANY neighbours instead of ADJACENT */
    size_t *top; /* indices of the fastest so far */
    size_t n_top;
    unsigned char *spec; /* compiled ahead, not evaluated */
    size_t *nb;
    size_t nb_cap;
    /* Look-ahead model (repeat only; ahead_k 0: off): after each result
     * the untaken neighbours of the ahead_k fastest nodes that still have
     * one are noted with the evaluation count (first_ahead), to see how
     * long before its evaluation a compile could have started. */
    size_t ahead_k;
    size_t count;          /* evaluations so far */
    size_t *eval_at;       /* evaluation number of each configuration */
    size_t *first_ahead;   /* SIZE_MAX: never looked ahead to */
    size_t *order;         /* evaluated configurations, in order */
    unsigned char *picked; /* scratch: nodes picked this round */
    /* Compile model (cached NULL: off): the tuner's batch as jobs, each
     * of the first ahead_p proposals followed by ahead_m configurations
     * of the strategy's `ahead` (cutune__batch_jobs, as the tuner builds
     * it); the first `threads` jobs not cached yet are compiled at the
     * batch's start, and
     * a batch whose first proposal was not cached before waits for NVRTC.
     * `cached` outlives the first run, as the binary cache does. */
    unsigned char *cached;
    unsigned char *started; /* compiled at this batch's start */
    size_t ahead_p, ahead_m, threads;
    size_t batches, waits, late;
} run_ctx;

/* The compile model at the start of a batch (see run_ctx). */
static void compile_batch(run_ctx *rc, const size_t *indices, size_t n,
                          void *more_ctx)
{
    size_t m = rc->ahead_m < 16 ? rc->ahead_m : 16, named, started = 0;
    size_t *jobs = malloc((n + rc->ahead_p * m) * sizeof *jobs);
    size_t *job_of = malloc(n * sizeof *job_of);
    rc->batches++;
    rc->waits += !rc->cached[indices[0]];
    for (size_t i = 0; i < n; i++)
        rc->started[indices[i]] = rc->cached[indices[i]];
    if (!jobs || !job_of) {
        fprintf(stderr, "bench-divergence: out of memory\n");
        exit(1);
    }
    /* The tuner's own job list; a cached job takes no thread. */
    size_t n_jobs = cutune__batch_jobs(indices, n, NULL, rc->ahead_p, m,
                                       cutune__search_ahead, more_ctx, jobs,
                                       job_of, &named);
    for (size_t i = 0; i < n_jobs && started < rc->threads; i++)
        if (!rc->cached[jobs[i]]) {
            rc->cached[jobs[i]] = rc->started[jobs[i]] = 1;
            started++;
        }
    free(jobs);
    free(job_of);
}

/* The adjacent neighbours of configuration i not evaluated yet, left in
 * rc->nb; returns how many. */
static size_t untaken_neighbours(run_ctx *rc, size_t i)
{
    size_t m = cutune__space_neighbours(
        rc->space, i, CUTUNE__NEIGHBOUR_ADJACENT, rc->nb, rc->nb_cap);
    size_t k = 0;
    for (size_t j = 0; j < m && j < rc->nb_cap; j++)
        if (!rc->seen[rc->nb[j]])
            rc->nb[k++] = rc->nb[j];
    return k;
}

static void look_ahead(run_ctx *rc, size_t index)
{
    rc->eval_at[index] = rc->count;
    rc->order[rc->count++] = index;
    if (!rc->ahead_k)
        return;
    /* The ahead_k fastest open nodes, by selection: counts are small. */
    for (size_t t = 0; t < rc->ahead_k; t++) {
        size_t best = SIZE_MAX;
        for (size_t e = 0; e < rc->count; e++) {
            size_t i = rc->order[e];
            if (!isfinite(rc->objective[i]) || rc->picked[i])
                continue;
            if (best == SIZE_MAX || rc->objective[i] < rc->objective[best])
                if (untaken_neighbours(rc, i) > 0)
                    best = i;
        }
        if (best == SIZE_MAX)
            break;
        rc->picked[best] = 1;
        size_t k = untaken_neighbours(rc, best);
        for (size_t j = 0; j < k; j++)
            if (rc->first_ahead[rc->nb[j]] == SIZE_MAX)
                rc->first_ahead[rc->nb[j]] = rc->count;
    }
    for (size_t e = 0; e < rc->count; e++)
        rc->picked[rc->order[e]] = 0;
}

static void speculate(run_ctx *rc, size_t index, double o)
{
    if (!rc->top_k || !isfinite(o))
        return;
    size_t pos = rc->n_top;
    while (pos > 0 && rc->objective[rc->top[pos - 1]] > o)
        pos--;
    if (pos >= rc->top_k)
        return;
    if (rc->n_top < rc->top_k)
        rc->n_top++;
    memmove(rc->top + pos + 1, rc->top + pos,
            (rc->n_top - 1 - pos) * sizeof *rc->top);
    rc->top[pos] = index;
    for (size_t t = 0; t < rc->n_top; t++) {
        size_t m = cutune__space_neighbours(
            rc->space, rc->top[t],
            rc->any ? CUTUNE__NEIGHBOUR_ANY : CUTUNE__NEIGHBOUR_ADJACENT,
            rc->nb, rc->nb_cap);
        for (size_t j = 0; j < m && j < rc->nb_cap; j++)
            rc->spec[rc->nb[j]] = 1;
    }
}

static int eval(void *user, const size_t *indices, size_t n,
                double *objectives, size_t *done, cutune__eval_more_fn more,
                void *more_ctx)
{
    run_ctx *rc = user;
    size_t i;
    int late = 0;
    if (rc->cached && n > 0)
        compile_batch(rc, indices, n, more_ctx);
    for (i = 0; i < n; i++) {
        if (rc->cached) {
            /* Not started with the batch: its compile began when a
             * thread came free, after the batch's first compiles (those
             * of one batch run side by side: one wait per batch). */
            late |= !rc->started[indices[i]];
            rc->cached[indices[i]] = 1; /* measured, so compiled */
        }
        double o = rc->objective[indices[i]];
        objectives[i] = isnan(o) ? INFINITY : o;
        rc->seen[indices[i]] = 1;
        speculate(rc, indices[i], objectives[i]);
        if (rc->eval_at)
            look_ahead(rc, indices[i]);
        if (more && !more(more_ctx, i, objectives[i])) {
            i++;
            break;
        }
    }
    rc->late += late;
    *done = i;
    return 0;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, size_t n)
{
    qsort(v, n, sizeof *v, by_value);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* The record of spec "T1:T4" as objectives per configuration (NaN: not
 * recorded, INFINITY: failed). NULL with a message on failure. */
static double *load(const char *spec, cutune_problem **problem, size_t *n)
{
    char t1[1024];
    const char *colon = strchr(spec, ':');
    if (!colon || (size_t)(colon - spec) >= sizeof t1) {
        fprintf(stderr, "bench-divergence: '%s' is not T1:T4\n", spec);
        return NULL;
    }
    memcpy(t1, spec, (size_t)(colon - spec));
    t1[colon - spec] = '\0';
    cutune_problem_options po = {
        .problem_size = NULL, .n_problem_size = 0, .space_only = 1};
    if (cutune_problem_load(t1, &po, problem) != CUTUNE_OK) {
        fprintf(stderr, "bench-divergence: %s\n",
                cutune_problem_errmsg(*problem));
        return NULL;
    }
    cutune__t4 *t4;
    char err[512];
    if (cutune__t4_load(colon + 1, *problem, &t4, err, sizeof err) !=
        CUTUNE_OK) {
        fprintf(stderr, "bench-divergence: %s\n", err);
        return NULL;
    }
    *n = cutune__space_size((*problem)->space);
    double *o = malloc((*n ? *n : 1) * sizeof *o);
    for (size_t i = 0; o && i < *n; i++)
        o[i] = NAN;
    for (size_t e = 0; o && e < t4->n_entries; e++) {
        const cutune__t4_entry *en = &t4->entries[e];
        if (en->config_index >= *n)
            continue;
        double v =
            en->outcome == CUTUNE_OUTCOME_CORRECT ? en->time_ms : INFINITY;
        if (isnan(o[en->config_index]) || v < o[en->config_index])
            o[en->config_index] = v;
    }
    cutune__t4_free(t4);
    return o;
}

/* The command line. */
typedef struct options {
    size_t seeds, budget;
    double noise, shift, far_noise, far_at;
    const char *strategies;
    size_t top_k, ahead_k, batch, threads;
    size_t ahead_p, ahead_m;
    int model; /* --ahead given: the compile model is on */
    int any;
    int first; /* argv index of the first T1:T4 */
} options;

/* Reads the options into *o. 0, or the exit code after a message. */
static int parse_options(int argc, char **argv, options *o)
{
    *o = (options){.seeds = 100,
                   .budget = 100,
                   .noise = 0.003,
                   .shift = 0.005,
                   .far_at = 1.03,
                   .strategies = "default,local,random",
                   .batch = 1,
                   .threads = 16};
    int first = 1;
    for (; first < argc && strncmp(argv[first], "--", 2) == 0; first += 2) {
        if (first + 1 >= argc) {
            fprintf(stderr, "bench-divergence: %s needs a value\n",
                    argv[first]);
            return 2;
        }
        const char *v = argv[first + 1];
        if (!strcmp(argv[first], "--seeds"))
            o->seeds = strtoul(v, NULL, 10);
        else if (!strcmp(argv[first], "--budget"))
            o->budget = strtoul(v, NULL, 10);
        else if (!strcmp(argv[first], "--noise"))
            o->noise = strtod(v, NULL);
        else if (!strcmp(argv[first], "--shift"))
            o->shift = strtod(v, NULL);
        else if (!strcmp(argv[first], "--strategies"))
            o->strategies = v;
        else if (!strcmp(argv[first], "--speculate"))
            o->top_k = strtoul(v, NULL, 10);
        else if (!strcmp(argv[first], "--far-noise"))
            o->far_noise = strtod(v, NULL);
        else if (!strcmp(argv[first], "--far-at"))
            o->far_at = strtod(v, NULL);
        else if (!strcmp(argv[first], "--lookahead"))
            o->ahead_k = strtoul(v, NULL, 10);
        else if (!strcmp(argv[first], "--speculate-kind"))
            o->any = !strcmp(v, "any");
        else if (!strcmp(argv[first], "--batch"))
            o->batch = strtoul(v, NULL, 10);
        else if (!strcmp(argv[first], "--threads"))
            o->threads = strtoul(v, NULL, 10);
        else if (!strcmp(argv[first], "--ahead")) {
            o->model = sscanf(v, "%zu,%zu", &o->ahead_p, &o->ahead_m) == 2;
            if (!o->model) {
                fprintf(stderr, "bench-divergence: --ahead P,M\n");
                return 2;
            }
        } else {
            fprintf(stderr, "bench-divergence: unknown option %s\n",
                    argv[first]);
            return 2;
        }
    }
    if (first >= argc || o->seeds == 0 || o->budget == 0 || o->batch == 0) {
        fprintf(stderr,
                "usage: bench-divergence [--seeds N] [--budget B] "
                "[--noise REL] [--shift REL] [--strategies a,b] T1:T4 ...\n");
        return 2;
    }
    o->first = first;
    return 0;
}

/* One file's record and the scratch its strategies share. */
typedef struct file_run {
    const options *o;
    cutune_problem *problem;
    double *record;
    size_t n;
    double optimum;
    double *perturbed;
    unsigned char *spec, *picked, *cached, *started;
    size_t *top, *nb, *eval_at, *first_ahead, *order;
    unsigned char *seen[2];
    double *news, *found[2];
    /* Totals of the strategy being run, per run (first, repeat). */
    size_t waits[2], batches[2], late[2];
    size_t lead_hist[4], lead_total;
} file_run;

static void file_run_alloc(file_run *fr)
{
    size_t n = fr->n, seeds = fr->o->seeds;
    fr->perturbed = malloc(n * sizeof *fr->perturbed);
    fr->spec = calloc(n, 1);
    fr->picked = calloc(n, 1);
    fr->cached = fr->o->model ? calloc(n, 1) : NULL;
    fr->started = fr->o->model ? calloc(n, 1) : NULL;
    fr->top = malloc((fr->o->top_k + 1) * sizeof *fr->top);
    fr->nb = malloc(n * sizeof *fr->nb);
    fr->eval_at = malloc(n * sizeof *fr->eval_at);
    fr->first_ahead = malloc(n * sizeof *fr->first_ahead);
    fr->order = malloc(n * sizeof *fr->order);
    fr->seen[0] = calloc(n, 1);
    fr->seen[1] = calloc(n, 1);
    fr->news = malloc(seeds * sizeof *fr->news);
    fr->found[0] = malloc(seeds * sizeof(double));
    fr->found[1] = malloc(seeds * sizeof(double));
}

static void file_run_free(file_run *fr)
{
    free(fr->found[0]);
    free(fr->found[1]);
    free(fr->news);
    free(fr->seen[0]);
    free(fr->seen[1]);
    free(fr->perturbed);
    free(fr->spec);
    free(fr->picked);
    free(fr->cached);
    free(fr->started);
    free(fr->top);
    free(fr->nb);
    free(fr->eval_at);
    free(fr->first_ahead);
    free(fr->order);
    free(fr->record);
    cutune_problem_destroy(fr->problem);
}

/* Run r of seed s's record. Noise depends on (seed, run) only, so every
 * strategy meets the same perturbed records. */
static void perturb(file_run *fr, gsl_rng *noise_rng, size_t s, int r)
{
    const options *o = fr->o;
    const double *record = fr->record;
    gsl_rng_set(noise_rng, 1 + 2 * s + (unsigned long)r);
    double k = exp(gsl_ran_gaussian(noise_rng, o->shift));
    for (size_t i = 0; i < fr->n; i++) {
        if (!isfinite(record[i])) {
            fr->perturbed[i] = record[i];
            continue;
        }
        double sd = o->far_noise > 0 && record[i] > o->far_at * fr->optimum
                        ? o->far_noise
                        : o->noise;
        fr->perturbed[i] =
            record[i] * k * exp(gsl_ran_gaussian(noise_rng, sd));
    }
}

/* The models run r takes part in (see run_ctx). */
static void prepare_ctx(file_run *fr, int r, run_ctx *rc)
{
    const options *o = fr->o;
    size_t n = fr->n;
    if (fr->cached) {
        if (r == 0)
            memset(fr->cached, 0, n);
        rc->cached = fr->cached;
        rc->started = fr->started;
        rc->ahead_p = o->ahead_p;
        rc->ahead_m = o->ahead_m;
        rc->threads = o->threads;
    }
    if (r == 0 && o->top_k) {
        memset(fr->spec, 0, n);
        rc->space = fr->problem->space;
        rc->top_k = o->top_k;
        rc->any = o->any;
        rc->top = fr->top;
        rc->spec = fr->spec;
        rc->nb = fr->nb;
        rc->nb_cap = n;
    }
    if (r == 1 && o->ahead_k) {
        memset(fr->picked, 0, n);
        for (size_t i = 0; i < n; i++)
            fr->first_ahead[i] = SIZE_MAX;
        rc->space = fr->problem->space;
        rc->picked = fr->picked;
        rc->nb = fr->nb;
        rc->nb_cap = n;
        rc->ahead_k = o->ahead_k;
        rc->eval_at = fr->eval_at;
        rc->first_ahead = fr->first_ahead;
        rc->order = fr->order;
    }
}

/* The first run and the repeat of seed s. */
static void run_seed(file_run *fr, const cutune__strategy_type *type,
                     gsl_rng *noise_rng, size_t s)
{
    for (int r = 0; r < 2; r++) {
        perturb(fr, noise_rng, s, r);
        memset(fr->seen[r], 0, fr->n);
        run_ctx rc = {.objective = fr->perturbed, .seen = fr->seen[r]};
        prepare_ctx(fr, r, &rc);
        cutune__search_options so;
        memset(&so, 0, sizeof so);
        /* --budget B is an evaluation budget, as --budget-evals B of a
         * tune (budget.h). */
        cutune__budget caller = {fr->o->budget, 0, 0};
        so.max_evals =
            cutune__budget_resolve(&caller, NULL, fr->n, type).max_evals;
        so.batch = fr->o->batch;
        so.seed = s + 1;
        so.start = SIZE_MAX;
        cutune__search_result res;
        cutune__search_run(type, fr->problem->space, &so, eval, &rc, &res);
        fr->waits[r] += rc.waits;
        fr->late[r] += rc.late;
        fr->batches[r] += rc.batches;
        fr->found[r][s] =
            res.best == SIZE_MAX ? 0.0 : fr->optimum / fr->record[res.best];
    }
}

/* How many configurations the repeat evaluated that the first run did
 * not (nor compiled ahead); adds the first run's extra compiles to
 * *extra and the look-ahead's leads to the histogram. */
static size_t count_fresh(file_run *fr, size_t *extra)
{
    size_t fresh = 0, top_k = fr->o->top_k;
    unsigned char *const *seen = fr->seen;
    for (size_t i = 0; i < fr->n; i++) {
        fresh += seen[1][i] && !seen[0][i] && !(top_k && fr->spec[i]);
        *extra += top_k && fr->spec[i] && !seen[0][i];
    }
    for (size_t i = 0; fr->o->ahead_k && i < fr->n; i++) {
        if (!seen[1][i] || seen[0][i])
            continue;
        static const size_t leads[4] = {1, 5, 10, 20};
        fr->lead_total++;
        for (int l = 0; l < 4; l++)
            fr->lead_hist[l] +=
                fr->first_ahead[i] != SIZE_MAX &&
                fr->eval_at[i] >= fr->first_ahead[i] + leads[l];
    }
    return fresh;
}

static void print_row(const file_run *fr, const char *name, const char *sname,
                      double sum, size_t none, size_t extra)
{
    const options *o = fr->o;
    double seeds = (double)o->seeds;
    double ahead = (double)(fr->lead_total + !fr->lead_total);
    printf("| %s | %s | %.0f | %.1f | %.2f | %.3f / %.3f |", name, sname,
           median(fr->news, o->seeds), sum / seeds, (double)none / seeds,
           median(fr->found[0], o->seeds), median(fr->found[1], o->seeds));
    if (o->top_k)
        printf(" %.1f |", (double)extra / seeds);
    if (o->ahead_k)
        printf(" ahead by 1/5/10/20: %.2f %.2f %.2f %.2f |",
               (double)fr->lead_hist[0] / ahead,
               (double)fr->lead_hist[1] / ahead,
               (double)fr->lead_hist[2] / ahead,
               (double)fr->lead_hist[3] / ahead);
    if (fr->cached)
        printf(" batches %.1f / %.1f, starting on a compile %.1f "
               "/ %.1f, waiting later in the batch %.1f / %.1f |",
               (double)fr->batches[0] / seeds, (double)fr->batches[1] / seeds,
               (double)fr->waits[0] / seeds, (double)fr->waits[1] / seeds,
               (double)fr->late[0] / seeds, (double)fr->late[1] / seeds);
    printf("\n");
}

/* One row of the table: strategy `type` over all seeds. */
static void run_strategy(file_run *fr, const cutune__strategy_type *type,
                         const char *name, const char *sname,
                         gsl_rng *noise_rng)
{
    memset(fr->waits, 0, sizeof fr->waits);
    memset(fr->late, 0, sizeof fr->late);
    memset(fr->batches, 0, sizeof fr->batches);
    memset(fr->lead_hist, 0, sizeof fr->lead_hist);
    fr->lead_total = 0;
    double sum = 0;
    size_t none = 0, extra = 0;
    for (size_t s = 0; s < fr->o->seeds; s++) {
        run_seed(fr, type, noise_rng, s);
        size_t fresh = count_fresh(fr, &extra);
        fr->news[s] = (double)fresh;
        sum += (double)fresh;
        none += fresh == 0;
    }
    print_row(fr, name, sname, sum, none, extra);
}

/* The rows of spec "T1:T4". 0, or the exit code after a message. */
static int run_file(const options *o, const char *spec, gsl_rng *noise_rng)
{
    file_run fr = {.o = o};
    fr.record = load(spec, &fr.problem, &fr.n);
    if (!fr.record) {
        cutune_problem_destroy(fr.problem);
        return 1;
    }
    fr.optimum = cutune__replay_optimum(fr.record, fr.n, NULL);
    const char *name = strrchr(spec, '/');
    name = name ? name + 1 : spec;
    file_run_alloc(&fr);
    char list[256];
    snprintf(list, sizeof list, "%s", o->strategies);
    for (char *save = NULL, *sname = strtok_r(list, ",", &save); sname;
         sname = strtok_r(NULL, ",", &save)) {
        const cutune__strategy_type *type = cutune__strategy_find(sname);
        if (!type) {
            fprintf(stderr, "bench-divergence: no strategy '%s'\n", sname);
            file_run_free(&fr);
            return 2;
        }
        run_strategy(&fr, type, name, sname, noise_rng);
    }
    file_run_free(&fr);
    return 0;
}

int main(int argc, char **argv)
{
    options o;
    int rc = parse_options(argc, argv, &o);
    if (rc)
        return rc;
    printf("Repeated tunes under noise: %zu seeds, %zu evaluations, noise "
           "%.2f%%, shift %.2f%% (standard deviations of log time).\n\n",
           o.seeds, o.budget, 100 * o.noise, 100 * o.shift);
    printf("| file | strategy | new in the repeat: median | mean | seeds "
           "with none | opt/found, first / repeat |%s\n",
           o.model ? " compiles, first / repeat |" : "");
    printf("|---|---|---:|---:|---:|---:|%s\n", o.model ? "---|" : "");
    gsl_rng *noise_rng = gsl_rng_alloc(gsl_rng_mt19937);
    for (int f = o.first; f < argc && rc == 0; f++)
        rc = run_file(&o, argv[f], noise_rng);
    gsl_rng_free(noise_rng);
    return rc;
}
