/* The strategy benchmark: every strategy against every recorded T4 file,
 * at several evaluation budgets, over many seeds, by replay (no GPU).
 *
 * usage: bench-strategies [--seeds N] [--threads N] [--out FILE]
 *                         [--strategies NAME,NAME,...] [--shares]
 *                         [--batch B]
 *                         T1.json:T4.json.gz ...
 *
 * For each file, strategy and budget it runs N seeds (1..N) of a replay
 * with that budget, with no start configuration (nothing is known about
 * occupancy here), and prints a markdown table of medians over the seeds:
 * optimum time / best found time, the score P = (B - F) / (B - O) of
 * Willemsen et al., and the evaluations needed to come within 5% of the
 * optimum ("-" when the median run never did). It prints figures and does
 * not judge them. bench/strategies.sh runs it on tests/data.
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

#include "budget.h"
#include "cutune/cutune.h"
#include "problem.h"
#include "replay.h"
#include "strategy.h"
#include "t4.h"

/* The budgets compared: evaluations only, as a tune given --budget-evals
 * runs (budget.h). */
static const cutune__budget budgets[] = {{50, 0, 0}, {100, 0, 0},
                                         {200, 0, 0}, {400, 0, 0}};
#define N_BUDGETS (sizeof budgets / sizeof *budgets)
#define MAX_FILES 16
#define MAX_STRATEGIES 32

/* opt/found thresholds of --shares. */
static const double share_levels[] = {0.90, 0.95, 0.98};
#define N_LEVELS (sizeof share_levels / sizeof *share_levels)

typedef struct figures {
    double ratio, score, within5;
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
        cutune__budget limit =
            cutune__budget_resolve(&budgets[b], NULL, d->n, j->type);
        for (size_t s = 0; s < seeds; s++) {
            cutune__replay_options o = {limit.max_evals, limit.max_seconds,
                                        batch, (uint64_t)s + 1, SIZE_MAX};
            cutune__replay_result r;
            if (cutune__replay_run(j->type, d->problem->space, d->objective,
                                   NULL, &o, &r, NULL, 0) != 0) {
                ratio[s] = score[s] = w5[s] = NAN;
                continue;
            }
            double f = r.search.best_objective;
            ratio[s] = isfinite(f) ? d->optimum / f : 0;
            score[s] = cutune__replay_score(d->random_best[b], f, d->optimum);
            if (isnan(score[s]))
                score[s] = -INFINITY;
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

static int load(dataset *d, const char *spec)
{
    char t1[1024];
    const char *colon = strchr(spec, ':');
    if (!colon || (size_t)(colon - spec) >= sizeof t1) {
        fprintf(stderr, "bench-strategies: '%s' is not T1:T4\n", spec);
        return -1;
    }
    memcpy(t1, spec, (size_t)(colon - spec));
    t1[colon - spec] = '\0';
    const char *t4path = colon + 1;
    const char *base = strrchr(t4path, '/');
    snprintf(d->name, sizeof d->name, "%s", base ? base + 1 : t4path);
    char *dot = strstr(d->name, ".json");
    if (dot)
        *dot = '\0';
    cutune_problem_options po = {
        .problem_size = NULL, .n_problem_size = 0, .space_only = 1};
    if (cutune_problem_load(t1, &po, &d->problem) != CUTUNE_OK) {
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
        d->random_best[b] = cutune__replay_random_best(d->objective, d->n,
                                                       budgets[b].max_evals);
    return 0;
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

int main(int argc, char **argv)
{
    size_t seeds = 100, threads = 0, n_data = 0, batch = 1;
    const char *out_path = NULL, *only = NULL;
    int shares = 0;
    dataset data[MAX_FILES];
    gsl_set_error_handler_off();
    memset(data, 0, sizeof data);
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--seeds") == 0 && i + 1 < argc)
            seeds = (size_t)strtoul(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc)
            threads = (size_t)strtoul(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--out") == 0 && i + 1 < argc)
            out_path = argv[++i];
        else if (strcmp(argv[i], "--strategies") == 0 && i + 1 < argc)
            only = argv[++i];
        else if (strcmp(argv[i], "--batch") == 0 && i + 1 < argc)
            batch = (size_t)strtoul(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--shares") == 0)
            shares = 1;
        else if (n_data < MAX_FILES) {
            if (load(&data[n_data], argv[i]))
                return 2;
            n_data++;
        }
    }
    if (n_data == 0 || seeds == 0 || batch == 0) {
        fputs("usage: bench-strategies [--seeds N] [--threads N] "
              "[--out FILE] [--strategies NAME,...] [--shares] "
              "[--batch B] T1.json:T4.json.gz ...\n", stderr);
        return 1;
    }
    if (threads == 0) {
        long c = sysconf(_SC_NPROCESSORS_ONLN);
        threads = c > 0 ? (size_t)c : 1;
    }
    size_t n_strat = 0;
    while (cutune__strategies[n_strat])
        n_strat++;
    if (only) {
        char name[64];
        for (const char *q = only; *q;) {
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
    /* An exhaustive strategy (brute_force) is left out unless named: it
     * sweeps in index order and its figures say where the optimum happens
     * to sit, nothing about search. */
    pool p;
    memset(&p, 0, sizeof p);
    p.jobs = calloc(n_data * n_strat, sizeof *p.jobs);
    if (!p.jobs)
        return 2;
    for (size_t f = 0; f < n_data; f++)
        for (size_t s = 0; s < n_strat; s++) {
            const char *name = cutune__strategies[s]->name;
            if (only ? !listed(only, name)
                     : cutune__strategies[s]->exhaustive)
                continue;
            p.jobs[p.n_jobs].data = &data[f];
            p.jobs[p.n_jobs++].type = cutune__strategies[s];
        }
    p.seeds = seeds;
    p.batch = batch;
    pthread_mutex_init(&p.lock, NULL);
    pthread_t tid[64];
    if (threads > 64)
        threads = 64;
    struct timespec w0, w1;
    clock_gettime(CLOCK_MONOTONIC, &w0);
    for (size_t t = 0; t < threads; t++)
        pthread_create(&tid[t], NULL, worker, &p);
    for (size_t t = 0; t < threads; t++)
        pthread_join(tid[t], NULL);
    clock_gettime(CLOCK_MONOTONIC, &w1);

    FILE *out = out_path ? fopen(out_path, "w") : stdout;
    if (!out) {
        perror(out_path);
        return 2;
    }
    fprintf(out, "# Search strategies on recorded measurements\n\n"
                 "Produced by `bench/strategies.sh` (bench-strategies, "
                 "cutune %s): every strategy replayed against every T4 "
                 "file, at budgets of", CUTUNE_VERSION_STRING);
    for (size_t b = 0; b < N_BUDGETS; b++)
        fprintf(out, "%s %zu", b ? (b + 1 == N_BUDGETS ? " and" : ",") : "",
                budgets[b].max_evals);
    fprintf(out, " evaluations, %zu seeds each, no start configuration, "
                 "%zu proposal%s at a time. "
                 "Medians over the seeds of: **opt/found**, the optimum's "
                 "time over the best found time (1 = the optimum); **P**, "
                 "the score (B - F) / (B - O) of Willemsen et al. with B "
                 "the exact expected best of random search with the same "
                 "budget (1 = the optimum, 0 = as good as random search); "
                 "**5%%**, evaluations until the best found was within 5%% "
                 "of the optimum (- when the median run never got there). "
                 "CPU time of the strategy itself is the last column "
                 "(ms per run at the largest budget). Wall time of the "
                 "whole benchmark: %.0f s on %zu threads.\n",
            seeds, batch, batch == 1 ? "" : "s",
            (double)(w1.tv_sec - w0.tv_sec) +
                1e-9 * (double)(w1.tv_nsec - w0.tv_nsec),
            threads);
    for (size_t f = 0; f < n_data; f++) {
        const dataset *d = &data[f];
        size_t correct = 0;
        for (size_t i = 0; i < d->n; i++)
            correct += isfinite(d->objective[i]) != 0;
        fprintf(out, "\n## %s\n\n%zu configurations, %zu correct, optimum "
                     "%.4f ms. Random search expects",
                d->name, d->n, correct, d->optimum);
        for (size_t b = 0; b < N_BUDGETS; b++)
            fprintf(out, "%s %.4f ms (opt/found %.3f) at %zu", b ? "," : "",
                    d->random_best[b], d->optimum / d->random_best[b],
                    budgets[b].max_evals);
        fprintf(out, ".\n\n| strategy |");
        for (size_t b = 0; b < N_BUDGETS; b++)
            fprintf(out, " %zu: opt/found | P | 5%% |", budgets[b].max_evals);
        fprintf(out, " ms/run |\n|---|");
        for (size_t b = 0; b < N_BUDGETS; b++)
            fprintf(out, "---:|---:|---:|");
        fprintf(out, "---:|\n");
        for (size_t j = 0; j < p.n_jobs; j++) {
            const job *jb = &p.jobs[j];
            if (jb->data != d)
                continue;
            fprintf(out, "| %s |", jb->type->name);
            for (size_t b = 0; b < N_BUDGETS; b++) {
                char w[16];
                fmt_evals(w, sizeof w, jb->fig[b].within5);
                fprintf(out, " %.3f | %.2f | %s |", jb->fig[b].ratio,
                        jb->fig[b].score, w);
            }
            fprintf(out, " %.1f |\n",
                    1e3 * jb->fig[N_BUDGETS - 1].seconds);
        }
        if (!shares)
            continue;
        fprintf(out, "\nShare of seeds with opt/found >=");
        for (size_t l = 0; l < N_LEVELS; l++)
            fprintf(out, "%s %.2f", l ? " /" : "", share_levels[l]);
        fprintf(out, ":\n\n| strategy |");
        for (size_t b = 0; b < N_BUDGETS; b++)
            fprintf(out, " %zu |", budgets[b].max_evals);
        fprintf(out, "\n|---|");
        for (size_t b = 0; b < N_BUDGETS; b++)
            fprintf(out, "---:|");
        fprintf(out, "\n");
        for (size_t j = 0; j < p.n_jobs; j++) {
            const job *jb = &p.jobs[j];
            if (jb->data != d)
                continue;
            fprintf(out, "| %s |", jb->type->name);
            for (size_t b = 0; b < N_BUDGETS; b++) {
                for (size_t l = 0; l < N_LEVELS; l++)
                    fprintf(out, "%s%.2f", l ? " / " : " ",
                            jb->fig[b].share[l]);
                fprintf(out, " |");
            }
            fprintf(out, "\n");
        }
    }
    if (out != stdout)
        fclose(out);
    for (size_t f = 0; f < n_data; f++) {
        free(data[f].objective);
        cutune_problem_destroy(data[f].problem);
    }
    free(p.jobs);
    return 0;
}
