/* The strategy benchmark: every strategy against every recorded T4 file,
 * at several evaluation budgets, over many seeds, by replay (no GPU).
 *
 * usage: bench-strategies [--seeds N] [--threads N] [--out FILE]
 *                         [--strategies NAME,NAME,...] [--shares]
 *                         [--batch B] [--spaces LIST]
 *                         PROBLEM[@SIZE]:T4.json.gz ...
 *
 * PROBLEM is a T1 file (only its space is read) or a built-in template,
 * SIZE its problem size (N[,N...], as --size). --spaces reads such pairs
 * from a list, one "PROBLEM[@SIZE] T4" a line (# comments), paths
 * relative to the list (bench/spaces/spaces.txt).
 *
 * For each file, strategy and budget it runs N seeds (1..N) of a replay
 * with that budget, with no start configuration (nothing is known about
 * occupancy here), and prints a markdown table of medians over the seeds:
 * optimum time / best found time with its quartiles, the score P =
 * (B - F) / (B - O) of Willemsen et al., and the evaluations needed to
 * come within 5% of the optimum ("-" when the median run never did).
 * Then the worst case: per strategy and budget, the lowest median and
 * the lowest first quartile over all spaces, and the worst single seed.
 * It prints figures and does not judge them. bench/strategies.sh runs it
 * on bench/spaces.
 *
 * --strategies runs only the strategies named (brute_force included when
 * named). --shares adds, per file, strategy and budget, the share of seeds
 * whose best came within 10%, 5% and 2% of the optimum (opt/found >= 0.90,
 * 0.95, 0.98): the spread behind a median. --batch B asks the strategies
 * for B proposals at a time (default 1), as `cutune tune` does (twice its
 * compile threads), results handed back one by one as the tuner does.
 */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <gsl/gsl_errno.h>

#include "cutune/cutune.h"
#include "problem.h"
#include "replay.h"
#include "strategy.h"
#include "t4.h"

static const size_t budgets[] = {50, 100, 200, 400};
#define N_BUDGETS (sizeof budgets / sizeof *budgets)
#define MAX_FILES 64
#define MAX_STRATEGIES 32

/* opt/found thresholds of --shares. */
static const double share_levels[] = {0.90, 0.95, 0.98};
#define N_LEVELS (sizeof share_levels / sizeof *share_levels)

typedef struct figures {
    double ratio, ratio_q1, ratio_q3, ratio_min, score, within5;
    double share[N_LEVELS]; /* of seeds with opt/found >= share_levels[] */
    double seconds; /* CPU time of the strategy, per run */
} figures;

typedef struct dataset {
    char name[256];
    cutune_problem *problem;
    double *objective;
    size_t n;
    double optimum;
    double random_best[N_BUDGETS];
} dataset;

typedef struct job {
    const dataset *data;
    const cutune__strategy_type *type;
    figures fig[N_BUDGETS];
} job;

typedef struct pool {
    job *jobs;
    size_t n_jobs;
    size_t next;
    size_t seeds;
    size_t batch;
    pthread_mutex_t lock;
} pool;

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, size_t n)
{
    qsort(v, n, sizeof *v, by_value);
    if (n % 2)
        return v[n / 2];
    /* inf - inf: both middle runs never got there. */
    if (v[n / 2 - 1] == v[n / 2])
        return v[n / 2];
    return 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* The q-quantile (0..1) by linear interpolation between order
 * statistics, as cutune simulate reports them. Sorts v. */
static double quantile(double *v, size_t n, double q)
{
    qsort(v, n, sizeof *v, by_value);
    double pos = q * (double)(n - 1);
    size_t lo = (size_t)floor(pos), hi = lo + 1 < n ? lo + 1 : lo;
    if (v[lo] == v[hi])
        return v[lo];
    return v[lo] + (pos - (double)lo) * (v[hi] - v[lo]);
}

static double cpu_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void run_job(job *j, size_t seeds, size_t batch)
{
    const dataset *d = j->data;
    double *ratio = malloc(seeds * sizeof *ratio);
    double *score = malloc(seeds * sizeof *score);
    double *w5 = malloc(seeds * sizeof *w5);
    if (!ratio || !score || !w5)
        goto out;
    for (size_t b = 0; b < N_BUDGETS; b++) {
        double t0 = cpu_now();
        for (size_t s = 0; s < seeds; s++) {
            cutune__replay_options o = {budgets[b], 0, batch,
                                        (uint64_t)s + 1, SIZE_MAX};
            cutune__replay_result r;
            if (cutune__replay_run(j->type,
                                   d->problem->space, d->objective, NULL, &o,
                                   &r, NULL, 0) != 0) {
                ratio[s] = score[s] = w5[s] = NAN;
                continue;
            }
            double f = r.search.best_objective;
            ratio[s] = isfinite(f) ? d->optimum / f : 0;
            score[s] = cutune__replay_score(d->random_best[b], f, d->optimum);
            /* Not finding anything scores lowest; where random search
             * expects the optimum (a budget the size of the space) P is
             * not defined, and 1 says it was matched. */
            if (isnan(score[s]))
                score[s] = d->random_best[b] == d->optimum ? 1 : -INFINITY;
            w5[s] = r.evals_within[2] == SIZE_MAX ? INFINITY
                                                  : (double)r.evals_within[2];
        }
        j->fig[b].seconds = (cpu_now() - t0) / (double)seeds;
        for (size_t l = 0; l < N_LEVELS; l++) {
            size_t k = 0;
            for (size_t s = 0; s < seeds; s++)
                k += ratio[s] >= share_levels[l];
            j->fig[b].share[l] = (double)k / (double)seeds;
        }
        j->fig[b].ratio_q1 = quantile(ratio, seeds, 0.25);
        j->fig[b].ratio_q3 = quantile(ratio, seeds, 0.75);
        j->fig[b].ratio_min = ratio[0];
        j->fig[b].ratio = median(ratio, seeds);
        j->fig[b].score = median(score, seeds);
        j->fig[b].within5 = median(w5, seeds);
    }
out:
    free(w5);
    free(score);
    free(ratio);
}

static void *worker(void *arg)
{
    pool *p = arg;
    for (;;) {
        pthread_mutex_lock(&p->lock);
        size_t i = p->next++;
        pthread_mutex_unlock(&p->lock);
        if (i >= p->n_jobs)
            return NULL;
        run_job(&p->jobs[i], p->seeds, p->batch);
    }
}

/* Loads the space of `spec` ("PROBLEM[@SIZE]:T4"), relative paths taken
 * from `dir` when not NULL. */
static int load(dataset *d, const char *spec, const char *dir)
{
    char problem[2048], t4path[2048];
    long long size[4];
    size_t n_size = 0;
    const char *colon = strchr(spec, ':');
    if (!colon || (size_t)(colon - spec) >= sizeof problem) {
        fprintf(stderr, "bench-strategies: '%s' is not PROBLEM:T4\n", spec);
        return -1;
    }
    memcpy(problem, spec, (size_t)(colon - spec));
    problem[colon - spec] = '\0';
    char *at = strchr(problem, '@');
    if (at) {
        *at = '\0';
        for (char *q = at + 1; *q && n_size < 4; q += *q == ',')
            size[n_size++] = strtoll(q, &q, 10);
    }
    /* A template name has no '/' and no ".json"; a file is relative. */
    if (dir && strstr(problem, ".json") && problem[0] != '/') {
        char rel[1024];
        snprintf(rel, sizeof rel, "%.1000s", problem);
        snprintf(problem, sizeof problem, "%.1000s/%s", dir, rel);
    }
    snprintf(t4path, sizeof t4path, "%.1000s%s%.1000s",
             dir && colon[1] != '/' ? dir : "",
             dir && colon[1] != '/' ? "/" : "", colon + 1);
    const char *base = strrchr(t4path, '/');
    snprintf(d->name, sizeof d->name, "%.200s", base ? base + 1 : t4path);
    char *dot = strstr(d->name, "_T4.json");
    if (!dot)
        dot = strstr(d->name, ".json");
    if (dot)
        *dot = '\0';
    cutune_problem_options po;
    cutune_problem_options_init(&po);
    po.problem_size = n_size ? size : NULL;
    po.n_problem_size = n_size;
    po.space_only = 1;
    if (cutune_problem_load(problem, &po, &d->problem) != CUTUNE_OK) {
        fprintf(stderr, "bench-strategies: %s\n",
                cutune_problem_errmsg(d->problem));
        return -1;
    }
    cutune__t4 *t4;
    char err[512];
    if (cutune__t4_load(t4path, d->problem, &t4, err, sizeof err) !=
        CUTUNE_OK) {
        fprintf(stderr, "bench-strategies: %s\n", err);
        return -1;
    }
    d->n = cutune__space_size(d->problem->space);
    d->objective = malloc((d->n ? d->n : 1) * sizeof *d->objective);
    if (!d->objective) {
        cutune__t4_free(t4);
        return -1;
    }
    for (size_t i = 0; i < d->n; i++)
        d->objective[i] = NAN;
    for (size_t e = 0; e < t4->n_entries; e++) {
        const cutune__t4_entry *en = &t4->entries[e];
        if (en->config_index >= d->n)
            continue;
        double o = en->outcome == CUTUNE_OUTCOME_CORRECT ? en->time_ms
                                                         : INFINITY;
        if (isnan(d->objective[en->config_index]) ||
            o < d->objective[en->config_index])
            d->objective[en->config_index] = o;
    }
    cutune__t4_free(t4);
    d->optimum = cutune__replay_optimum(d->objective, d->n, NULL);
    for (size_t b = 0; b < N_BUDGETS; b++)
        d->random_best[b] =
            cutune__replay_random_best(d->objective, d->n, budgets[b]);
    return 0;
}

/* Loads every "PROBLEM[@SIZE] T4" line of the list at `path` after the
 * n_data spaces already in `data`; returns the new count, or -1. */
static long load_list(dataset *data, size_t n_data, const char *path)
{
    char dir[1024], line[2048], spec[2100];
    FILE *f = fopen(path, "r");
    if (!f) {
        perror(path);
        return -1;
    }
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash)
        *slash = '\0';
    else
        snprintf(dir, sizeof dir, ".");
    while (fgets(line, sizeof line, f)) {
        char a[1024], b[1024];
        if (line[0] == '#' || sscanf(line, "%1023s %1023s", a, b) != 2)
            continue;
        if (n_data >= MAX_FILES)
            break;
        snprintf(spec, sizeof spec, "%s:%s", a, b);
        if (load(&data[n_data], spec, dir)) {
            fclose(f);
            return -1;
        }
        n_data++;
    }
    fclose(f);
    return (long)n_data;
}

static void fmt_evals(char *buf, size_t len, double v)
{
    if (isinf(v) || isnan(v))
        snprintf(buf, len, "-");
    else
        snprintf(buf, len, "%.0f", v);
}

/* 1 when `name` is one of the comma-separated names in `list`. */
static int listed(const char *list, const char *name)
{
    size_t len = strlen(name);
    for (const char *p = list; *p;) {
        const char *end = strchr(p, ',');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        if (n == len && strncmp(p, name, n) == 0)
            return 1;
        p += n + (end != NULL);
    }
    return 0;
}

typedef struct bench_args {
    size_t seeds, threads, n_data, batch;
    const char *out_path, *only;
    int shares;
    dataset data[MAX_FILES];
} bench_args;

/* Returns 0, 1 on a usage error, 2 when a space did not load. */
static int parse_args(bench_args *a, int argc, char **argv)
{
    a->seeds = 100;
    a->batch = 1;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--seeds") == 0 && i + 1 < argc)
            a->seeds = (size_t)strtoul(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc)
            a->threads = (size_t)strtoul(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--out") == 0 && i + 1 < argc)
            a->out_path = argv[++i];
        else if (strcmp(argv[i], "--strategies") == 0 && i + 1 < argc)
            a->only = argv[++i];
        else if (strcmp(argv[i], "--batch") == 0 && i + 1 < argc)
            a->batch = (size_t)strtoul(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--shares") == 0)
            a->shares = 1;
        else if (strcmp(argv[i], "--spaces") == 0 && i + 1 < argc) {
            long k = load_list(a->data, a->n_data, argv[++i]);
            if (k < 0)
                return 2;
            a->n_data = (size_t)k;
        } else if (a->n_data < MAX_FILES) {
            if (load(&a->data[a->n_data], argv[i], NULL))
                return 2;
            a->n_data++;
        }
    }
    if (a->n_data == 0 || a->seeds == 0 || a->batch == 0) {
        fputs("usage: bench-strategies [--seeds N] [--threads N] "
              "[--out FILE] [--strategies NAME,...] [--shares] "
              "[--batch B] [--spaces LIST] PROBLEM[@SIZE]:T4.json.gz ...\n",
              stderr);
        return 1;
    }
    if (a->threads == 0) {
        long c = sysconf(_SC_NPROCESSORS_ONLN);
        a->threads = c > 0 ? (size_t)c : 1;
    }
    if (a->threads > 64)
        a->threads = 64;
    if (a->only) {
        char name[64];
        for (const char *q = a->only; *q;) {
            const char *end = strchr(q, ',');
            size_t len = end ? (size_t)(end - q) : strlen(q);
            snprintf(name, sizeof name, "%.*s", (int)len, q);
            if (!cutune__strategy_find(name)) {
                fprintf(stderr, "bench-strategies: no strategy '%s'\n",
                        name);
                return 1;
            }
            q += len + (end != NULL);
        }
    }
    return 0;
}

/* One job per space and strategy; brute_force is left out unless named:
 * it sweeps in index order and its figures say where the optimum happens
 * to sit, nothing about search. Returns the wall time in seconds, or a
 * negative number when memory ran out. */
static double run_all(pool *p, const bench_args *a)
{
    size_t n_strat = 0;
    while (cutune__strategies[n_strat])
        n_strat++;
    memset(p, 0, sizeof *p);
    p->jobs = calloc(a->n_data * n_strat, sizeof *p->jobs);
    if (!p->jobs)
        return -1;
    for (size_t f = 0; f < a->n_data; f++)
        for (size_t s = 0; s < n_strat; s++) {
            const char *name = cutune__strategies[s]->name;
            /* An exhaustive strategy only sweeps in index order: left
             * out unless named. */
            if (a->only ? !listed(a->only, name)
                        : cutune__strategies[s]->exhaustive)
                continue;
            p->jobs[p->n_jobs].data = &a->data[f];
            p->jobs[p->n_jobs++].type = cutune__strategies[s];
        }
    p->seeds = a->seeds;
    p->batch = a->batch;
    pthread_mutex_init(&p->lock, NULL);
    pthread_t tid[64];
    struct timespec w0, w1;
    clock_gettime(CLOCK_MONOTONIC, &w0);
    for (size_t t = 0; t < a->threads; t++)
        pthread_create(&tid[t], NULL, worker, p);
    for (size_t t = 0; t < a->threads; t++)
        pthread_join(tid[t], NULL);
    clock_gettime(CLOCK_MONOTONIC, &w1);
    pthread_mutex_destroy(&p->lock);
    return (double)(w1.tv_sec - w0.tv_sec) +
           1e-9 * (double)(w1.tv_nsec - w0.tv_nsec);
}

static void print_intro(FILE *out, const bench_args *a, double wall)
{
    fprintf(out, "# Search strategies on recorded measurements\n\n"
                 "Produced by `bench/strategies.sh` (bench-strategies, "
                 "cutune %s): every strategy replayed against every T4 "
                 "file, at budgets of", CUTUNE_VERSION_STRING);
    for (size_t b = 0; b < N_BUDGETS; b++)
        fprintf(out, "%s %zu", b ? (b + 1 == N_BUDGETS ? " and" : ",") : "",
                budgets[b]);
    fprintf(out, " evaluations, %zu seeds each, no start configuration, "
                 "%zu proposal%s at a time. "
                 "Medians over the seeds of: **opt/found**, the optimum's "
                 "time over the best found time (1 = the optimum), with "
                 "its first and third quartiles in brackets; **P**, "
                 "the score (B - F) / (B - O) of Willemsen et al. with B "
                 "the exact expected best of random search with the same "
                 "budget (1 = the optimum, 0 = as good as random search); "
                 "**5%%**, evaluations until the best found was within 5%% "
                 "of the optimum (- when the median run never got there). "
                 "CPU time of the strategy itself is the last column "
                 "(ms per run at the largest budget). The worst case over "
                 "all spaces comes first. Wall time of the "
                 "whole benchmark: %.0f s on %zu threads.\n",
            a->seeds, a->batch, a->batch == 1 ? "" : "s", wall, a->threads);
}

/* Per strategy and budget, over all spaces: the lowest median opt/found
 * (and its space), the lowest first quartile, the lowest P and the
 * worst single seed. */
static void print_worst(FILE *out, const pool *p, const bench_args *a)
{
    fprintf(out, "\n## Worst case over the %zu spaces\n\n"
                 "Per strategy and budget: the lowest median opt/found of "
                 "any space (the space), the lowest first quartile, the "
                 "lowest median P, and the worst single seed.\n\n"
                 "| strategy | budget | worst median | space | worst Q1 | "
                 "worst P | worst seed |\n|---|---:|---:|---|---:|---:|---:|\n",
            a->n_data);
    for (size_t j0 = 0; j0 < p->n_jobs; j0++) {
        const cutune__strategy_type *type = p->jobs[j0].type;
        int first = 1;
        for (size_t k = 0; k < j0; k++)
            first &= p->jobs[k].type != type;
        if (!first)
            continue;
        for (size_t b = 0; b < N_BUDGETS; b++) {
            double med = INFINITY, q1 = INFINITY, sc = INFINITY;
            double lo = INFINITY;
            const char *where = "";
            for (size_t j = j0; j < p->n_jobs; j++) {
                const figures *f = &p->jobs[j].fig[b];
                if (p->jobs[j].type != type)
                    continue;
                if (f->ratio < med) {
                    med = f->ratio;
                    where = p->jobs[j].data->name;
                }
                q1 = f->ratio_q1 < q1 ? f->ratio_q1 : q1;
                sc = f->score < sc ? f->score : sc;
                lo = f->ratio_min < lo ? f->ratio_min : lo;
            }
            fprintf(out, "| %s | %zu | %.3f | %s | %.3f | %.2f | %.3f |\n",
                    b ? "" : type->name, budgets[b], med, where, q1, sc, lo);
        }
    }
}

static void print_shares(FILE *out, const pool *p, const dataset *d)
{
    fprintf(out, "\nShare of seeds with opt/found >=");
    for (size_t l = 0; l < N_LEVELS; l++)
        fprintf(out, "%s %.2f", l ? " /" : "", share_levels[l]);
    fprintf(out, ":\n\n| strategy |");
    for (size_t b = 0; b < N_BUDGETS; b++)
        fprintf(out, " %zu |", budgets[b]);
    fprintf(out, "\n|---|");
    for (size_t b = 0; b < N_BUDGETS; b++)
        fprintf(out, "---:|");
    fprintf(out, "\n");
    for (size_t j = 0; j < p->n_jobs; j++) {
        const job *jb = &p->jobs[j];
        if (jb->data != d)
            continue;
        fprintf(out, "| %s |", jb->type->name);
        for (size_t b = 0; b < N_BUDGETS; b++) {
            for (size_t l = 0; l < N_LEVELS; l++)
                fprintf(out, "%s%.2f", l ? " / " : " ", jb->fig[b].share[l]);
            fprintf(out, " |");
        }
        fprintf(out, "\n");
    }
}

static void print_space(FILE *out, const pool *p, const dataset *d,
                        int shares)
{
    size_t correct = 0;
    for (size_t i = 0; i < d->n; i++)
        correct += isfinite(d->objective[i]) != 0;
    fprintf(out, "\n## %s\n\n%zu configurations, %zu correct, optimum "
                 "%.4f ms. Random search expects",
            d->name, d->n, correct, d->optimum);
    for (size_t b = 0; b < N_BUDGETS; b++)
        fprintf(out, "%s %.4f ms (opt/found %.3f) at %zu", b ? "," : "",
                d->random_best[b], d->optimum / d->random_best[b],
                budgets[b]);
    fprintf(out, ".\n\n| strategy |");
    for (size_t b = 0; b < N_BUDGETS; b++)
        fprintf(out, " %zu: opt/found [Q1, Q3] | P | 5%% |", budgets[b]);
    fprintf(out, " ms/run |\n|---|");
    for (size_t b = 0; b < N_BUDGETS; b++)
        fprintf(out, "---:|---:|---:|");
    fprintf(out, "---:|\n");
    for (size_t j = 0; j < p->n_jobs; j++) {
        const job *jb = &p->jobs[j];
        if (jb->data != d)
            continue;
        fprintf(out, "| %s |", jb->type->name);
        for (size_t b = 0; b < N_BUDGETS; b++) {
            char w[16];
            fmt_evals(w, sizeof w, jb->fig[b].within5);
            fprintf(out, " %.3f [%.3f, %.3f] | %.2f | %s |", jb->fig[b].ratio,
                    jb->fig[b].ratio_q1, jb->fig[b].ratio_q3,
                    jb->fig[b].score, w);
        }
        fprintf(out, " %.1f |\n", 1e3 * jb->fig[N_BUDGETS - 1].seconds);
    }
    if (shares)
        print_shares(out, p, d);
}

int main(int argc, char **argv)
{
    static bench_args a;
    pool p;
    gsl_set_error_handler_off();
    int rc = parse_args(&a, argc, argv);
    if (rc)
        return rc;
    double wall = run_all(&p, &a);
    if (wall < 0)
        return 2;
    FILE *out = a.out_path ? fopen(a.out_path, "w") : stdout;
    if (!out) {
        perror(a.out_path);
        return 2;
    }
    print_intro(out, &a, wall);
    print_worst(out, &p, &a);
    for (size_t f = 0; f < a.n_data; f++)
        print_space(out, &p, &a.data[f], a.shares);
    if (out != stdout)
        fclose(out);
    for (size_t f = 0; f < a.n_data; f++) {
        free(a.data[f].objective);
        cutune_problem_destroy(a.data[f].problem);
    }
    free(p.jobs);
    return 0;
}
