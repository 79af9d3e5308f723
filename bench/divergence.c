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

#include "batch_jobs.h"
#include "budget.h"
#include "cutune/cutune.h"
#include "problem.h"
#include "replay.h"
#include "space.h"
#include "strategy.h"
#include "t4.h"

typedef struct run_ctx {
    const double *objective; /* this run's perturbed record */
    unsigned char *seen;     /* evaluated in this run */
    /* Speculation model (first run only; top_k 0: off): after each result
     * the neighbours of the top_k fastest so far count as compiled. */
    const cutune__space *space;
    size_t top_k;
    int any;                 /* ANY neighbours instead of ADJACENT */
    size_t *top;             /* indices of the fastest so far */
    size_t n_top;
    unsigned char *spec;     /* compiled ahead, not evaluated */
    size_t *nb;
    size_t nb_cap;
    /* Look-ahead model (repeat only; ahead_k 0: off): after each result
     * the untaken neighbours of the ahead_k fastest nodes that still have
     * one are noted with the evaluation count (first_ahead), to see how
     * long before its evaluation a compile could have started. */
    size_t ahead_k;
    size_t count;            /* evaluations so far */
    size_t *eval_at;         /* evaluation number of each configuration */
    size_t *first_ahead;     /* SIZE_MAX: never looked ahead to */
    size_t *order;           /* evaluated configurations, in order */
    unsigned char *picked;   /* scratch: nodes picked this round */
    /* Compile model (cached NULL: off): the tuner's batch as jobs, each
     * of the first ahead_p proposals followed by ahead_m configurations
     * of the strategy's `ahead` (cutune__batch_jobs, as the tuner builds
     * it); the first `threads` jobs not cached yet are compiled at the
     * batch's start, and
     * a batch whose first proposal was not cached before waits for NVRTC.
     * `cached` outlives the first run, as the binary cache does. */
    unsigned char *cached;
    unsigned char *started;  /* compiled at this batch's start */
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
    size_t m = cutune__space_neighbours(rc->space, i,
                                        CUTUNE__NEIGHBOUR_ADJACENT, rc->nb,
                                        rc->nb_cap);
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
        double v = en->outcome == CUTUNE_OUTCOME_CORRECT ? en->time_ms
                                                         : INFINITY;
        if (isnan(o[en->config_index]) || v < o[en->config_index])
            o[en->config_index] = v;
    }
    cutune__t4_free(t4);
    return o;
}

int main(int argc, char **argv)
{
    size_t seeds = 100, budget = 100;
    double noise = 0.003, shift = 0.005, far_noise = 0, far_at = 1.03;
    const char *strategies = "default,local,random";
    size_t top_k = 0, ahead_k = 0, batch = 1, threads = 16;
    size_t ahead_p = 0, ahead_m = 0;
    int model = 0;
    int any = 0;
    int first = 1;
    for (; first < argc && strncmp(argv[first], "--", 2) == 0; first += 2) {
        if (first + 1 >= argc) {
            fprintf(stderr, "bench-divergence: %s needs a value\n",
                    argv[first]);
            return 2;
        }
        const char *v = argv[first + 1];
        if (!strcmp(argv[first], "--seeds"))
            seeds = strtoul(v, NULL, 10);
        else if (!strcmp(argv[first], "--budget"))
            budget = strtoul(v, NULL, 10);
        else if (!strcmp(argv[first], "--noise"))
            noise = strtod(v, NULL);
        else if (!strcmp(argv[first], "--shift"))
            shift = strtod(v, NULL);
        else if (!strcmp(argv[first], "--strategies"))
            strategies = v;
        else if (!strcmp(argv[first], "--speculate"))
            top_k = strtoul(v, NULL, 10);
        else if (!strcmp(argv[first], "--far-noise"))
            far_noise = strtod(v, NULL);
        else if (!strcmp(argv[first], "--far-at"))
            far_at = strtod(v, NULL);
        else if (!strcmp(argv[first], "--lookahead"))
            ahead_k = strtoul(v, NULL, 10);
        else if (!strcmp(argv[first], "--speculate-kind"))
            any = !strcmp(v, "any");
        else if (!strcmp(argv[first], "--batch"))
            batch = strtoul(v, NULL, 10);
        else if (!strcmp(argv[first], "--threads"))
            threads = strtoul(v, NULL, 10);
        else if (!strcmp(argv[first], "--ahead")) {
            model = sscanf(v, "%zu,%zu", &ahead_p, &ahead_m) == 2;
            if (!model) {
                fprintf(stderr, "bench-divergence: --ahead P,M\n");
                return 2;
            }
        }
        else {
            fprintf(stderr, "bench-divergence: unknown option %s\n",
                    argv[first]);
            return 2;
        }
    }
    if (first >= argc || seeds == 0 || budget == 0 || batch == 0) {
        fprintf(stderr, "usage: bench-divergence [--seeds N] [--budget B] "
                "[--noise REL] [--shift REL] [--strategies a,b] T1:T4 ...\n");
        return 2;
    }
    printf("Repeated tunes under noise: %zu seeds, %zu evaluations, noise "
           "%.2f%%, shift %.2f%% (standard deviations of log time).\n\n",
           seeds, budget, 100 * noise, 100 * shift);
    printf("| file | strategy | new in the repeat: median | mean | seeds "
           "with none | opt/found, first / repeat |%s\n",
           model ? " compiles, first / repeat |" : "");
    printf("|---|---|---:|---:|---:|---:|%s\n", model ? "---|" : "");
    gsl_rng *noise_rng = gsl_rng_alloc(gsl_rng_mt19937);
    for (int f = first; f < argc; f++) {
        cutune_problem *problem = NULL;
        size_t n = 0;
        double *record = load(argv[f], &problem, &n);
        if (!record) {
            cutune_problem_destroy(problem);
            return 1;
        }
        double optimum = cutune__replay_optimum(record, n, NULL);
        const char *name = strrchr(argv[f], '/');
        name = name ? name + 1 : argv[f];
        double *perturbed = malloc(n * sizeof *perturbed);
        unsigned char *spec = calloc(n, 1), *picked = calloc(n, 1);
        unsigned char *cached = model ? calloc(n, 1) : NULL;
        unsigned char *started = model ? calloc(n, 1) : NULL;
        size_t waits[2] = {0, 0}, batches[2] = {0, 0}, late[2] = {0, 0};
        size_t *top = malloc((top_k + 1) * sizeof *top);
        size_t *nb = malloc(n * sizeof *nb);
        size_t *eval_at = malloc(n * sizeof *eval_at);
        size_t *first_ahead = malloc(n * sizeof *first_ahead);
        size_t *order = malloc(n * sizeof *order);
        size_t lead_hist[4] = {0}, lead_total = 0;
        unsigned char *seen[2] = {calloc(n, 1), calloc(n, 1)};
        double *news = malloc(seeds * sizeof *news);
        double *found[2] = {malloc(seeds * sizeof(double)),
                            malloc(seeds * sizeof(double))};
        char list[256];
        snprintf(list, sizeof list, "%s", strategies);
        for (char *save = NULL, *sname = strtok_r(list, ",", &save); sname;
             sname = strtok_r(NULL, ",", &save)) {
            const cutune__strategy_type *type = cutune__strategy_find(sname);
            if (!type) {
                fprintf(stderr, "bench-divergence: no strategy '%s'\n",
                        sname);
                return 2;
            }
            /* --budget B is an evaluation budget, as --budget-evals B
             * of a tune (budget.h). */
            cutune__budget limit = cutune__budget_resolve(
                &(cutune__budget){budget, 0, 0}, NULL, n, type);
            double sum = 0;
            size_t none = 0, extra = 0;
            for (size_t s = 0; s < seeds; s++) {
                for (int r = 0; r < 2; r++) {
                    /* Noise depends on (seed, run) only, so every strategy
                     * meets the same perturbed records. */
                    gsl_rng_set(noise_rng, 1 + 2 * s + (unsigned long)r);
                    double k = exp(gsl_ran_gaussian(noise_rng, shift));
                    for (size_t i = 0; i < n; i++)
                        perturbed[i] =
                            isfinite(record[i])
                                ? record[i] * k *
                                      exp(gsl_ran_gaussian(
                                          noise_rng,
                                          far_noise > 0 &&
                                                  record[i] > far_at * optimum
                                              ? far_noise
                                              : noise))
                                : record[i];
                    memset(seen[r], 0, n);
                    run_ctx rc = {.objective = perturbed, .seen = seen[r]};
                    if (cached) {
                        if (r == 0)
                            memset(cached, 0, n);
                        rc.cached = cached;
                        rc.started = started;
                        rc.ahead_p = ahead_p;
                        rc.ahead_m = ahead_m;
                        rc.threads = threads;
                    }
                    if (r == 0 && top_k) {
                        memset(spec, 0, n);
                        rc.space = problem->space;
                        rc.top_k = top_k;
                        rc.any = any;
                        rc.top = top;
                        rc.spec = spec;
                        rc.nb = nb;
                        rc.nb_cap = n;
                    }
                    if (r == 1 && ahead_k) {
                        memset(picked, 0, n);
                        for (size_t i = 0; i < n; i++)
                            first_ahead[i] = SIZE_MAX;
                        rc.space = problem->space;
                        rc.picked = picked;
                        rc.nb = nb;
                        rc.nb_cap = n;
                        rc.ahead_k = ahead_k;
                        rc.eval_at = eval_at;
                        rc.first_ahead = first_ahead;
                        rc.order = order;
                    }
                    cutune__search_options so;
                    memset(&so, 0, sizeof so);
                    so.max_evals = limit.max_evals;
                    so.batch = batch;
                    so.seed = s + 1;
                    so.start = SIZE_MAX;
                    cutune__search_result res;
                    cutune__search_run(type, problem->space, &so, eval, &rc,
                                       &res);
                    waits[r] += rc.waits;
                    late[r] += rc.late;
                    batches[r] += rc.batches;
                    found[r][s] = res.best == SIZE_MAX
                                      ? 0.0
                                      : optimum / record[res.best];
                }
                size_t fresh = 0;
                for (size_t i = 0; i < n; i++) {
                    fresh += seen[1][i] && !seen[0][i] &&
                             !(top_k && spec[i]);
                    extra += top_k && spec[i] && !seen[0][i];
                }
                for (size_t i = 0; ahead_k && i < n; i++) {
                    if (!seen[1][i] || seen[0][i])
                        continue;
                    static const size_t leads[4] = {1, 5, 10, 20};
                    lead_total++;
                    for (int l = 0; l < 4; l++)
                        lead_hist[l] += first_ahead[i] != SIZE_MAX &&
                                        eval_at[i] >= first_ahead[i] + leads[l];
                }
                news[s] = (double)fresh;
                sum += (double)fresh;
                none += fresh == 0;
            }
            printf("| %s | %s | %.0f | %.1f | %.2f | %.3f / %.3f |", name,
                   sname, median(news, seeds), sum / (double)seeds,
                   (double)none / (double)seeds, median(found[0], seeds),
                   median(found[1], seeds));
            if (top_k)
                printf(" %.1f |", (double)extra / (double)seeds);
            if (ahead_k)
                printf(" ahead by 1/5/10/20: %.2f %.2f %.2f %.2f |",
                       (double)lead_hist[0] / (double)(lead_total + !lead_total),
                       (double)lead_hist[1] / (double)(lead_total + !lead_total),
                       (double)lead_hist[2] / (double)(lead_total + !lead_total),
                       (double)lead_hist[3] / (double)(lead_total + !lead_total));
            if (cached)
                printf(" batches %.1f / %.1f, starting on a compile %.1f "
                       "/ %.1f, waiting later in the batch %.1f / %.1f |",
                       (double)batches[0] / (double)seeds,
                       (double)batches[1] / (double)seeds,
                       (double)waits[0] / (double)seeds,
                       (double)waits[1] / (double)seeds,
                       (double)late[0] / (double)seeds,
                       (double)late[1] / (double)seeds);
            memset(waits, 0, sizeof waits);
            memset(late, 0, sizeof late);
            memset(batches, 0, sizeof batches);
            memset(lead_hist, 0, sizeof lead_hist);
            lead_total = 0;
            printf("\n");
        }
        free(found[0]);
        free(found[1]);
        free(news);
        free(seen[0]);
        free(seen[1]);
        free(perturbed);
        free(spec);
        free(picked);
        free(cached);
        free(started);
        free(top);
        free(nb);
        free(eval_at);
        free(first_ahead);
        free(order);
        free(record);
        cutune_problem_destroy(problem);
    }
    gsl_rng_free(noise_rng);
    return 0;
}
