/* The strategy benchmark: every strategy against every recorded T4 file,
 * at several evaluation budgets, over many seeds, by replay (no GPU).
 *
 * usage: bench-strategies [--seeds N] [--first-seed K] [--threads N]
 *                         [--out FILE]
 *                         [--strategies NAME,NAME,...] [--shares]
 *                         [--batch B] [--spaces LIST] [--plant]
 *                         [--variant NAME=V,...]... [--loo]
 *                         [--clock-threads N,...] [--clock-evals N]
 *                         [--no-clock]
 *                         PROBLEM[@SIZE]:T4.json.gz ...
 *
 * PROBLEM is a T1 file (only its space is read) or a built-in template,
 * SIZE its problem size (N[,N...], as --size). --spaces reads such pairs
 * from a list, one "PROBLEM[@SIZE] T4" a line (# comments), paths
 * relative to the list (bench/spaces/spaces.txt).
 *
 * For each file, strategy and budget it runs N seeds (K..K+N-1, K 1
 * unless --first-seed says) of a replay
 * with that budget, starting where a tune starts when the occupancy API
 * gives no answer (search/strategy/seed.h: the default configuration; none
 * with
 * --no-start), and prints a markdown table of medians over the seeds:
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
 *
 * A time budget is the fifth column: the recorded seconds (compilation
 * and runs) that 100 evaluations of the space cost on average.
 *
 * --plant adds, for every space, its copies with a planted edge optimum
 * and a planted distant basin (search/replay/plant.h): the two failures issue
 * 18 found on GPUs the default strategy had never seen. --variant
 * "name=value,..." (repeatable) adds the default strategy with other
 * settings (search/strategy/default.h), --variant "bayes:name=value,..." the
 * Bayesian one (search/strategy/bayes.h); --loo then prints, per held-out
 * problem, the setting chosen on the other problems and its worst figure on
 * the held-out one (leave one kernel out, every device and size of it held out
 * together): for the default its worst median, for bayes its worst margin
 * over random search's median (--strategies must include random).
 *
 * The clock (search/replay/replay.h): each strategy also runs a tune of
 * --clock-evals evaluations (default 200) per seed on a host modelled
 * with N compile threads, for each N of --clock-threads (default 16,32;
 * --threads is this program's own), asking for proposals as a tune with
 * N threads asks (cutune__search_batch, whatever --batch says), and
 * prints the medians over the seeds of the modelled seconds until the
 * best came within 0.95 and 0.98 of the optimum (opt/found; a seed that
 * never did counts as infinite) and of the tune's modelled wall time:
 * per space after its tables, and per strategy the worst and the median
 * over the spaces. --no-clock leaves it out.
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

#include "name_list.h"
#include "replay/replay.h"
#include "strategies.h"

_Static_assert(CLOCK_RATIOS <= CUTUNE__REPLAY_N_RATIOS,
               "the clock reports the first of cutune__replay_ratios");

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

double bench_median(double *v, size_t n)
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

typedef struct seed_figures {
    double *ratio, *score, *w5, *evals;
} seed_figures;

/* A replay of job j with `seed`, `batch` proposals at a time, no budget
 * yet. */
static cutune__replay_options seed_options(const job *j, uint64_t seed,
                                           size_t batch)
{
    cutune__replay_options o = {.batch = batch,
                                .seed = seed,
                                .start = j->data->start,
                                .try_cost = j->data->try_cost};
    o.params = !j->var->has_params ? NULL
               : j->var->type == cutune__strategy_bayes
                   ? (const void *)&j->var->bayes_params
                   : (const void *)&j->var->params;
    return o;
}

/* Seed first + s of job j at budget b into slot s of `sf`. */
static void run_seed(const job *j, size_t b, size_t s, uint64_t first,
                     size_t batch, seed_figures *sf)
{
    const dataset *d = j->data;
    cutune__replay_options o = seed_options(j, first + s, batch);
    if (b == TIME_BUDGET)
        o.max_seconds = d->time_budget;
    else
        o.max_evals = bench_budgets[b];
    cutune__replay_result r;
    if (cutune__replay_run(j->var->type, d->problem->space, d->objective,
                           d->cost, &o, &r, NULL, 0) != 0) {
        sf->ratio[s] = sf->score[s] = sf->w5[s] = sf->evals[s] = NAN;
        return;
    }
    double f = r.search.best_objective;
    sf->ratio[s] = isfinite(f) ? d->optimum / f : 0;
    sf->score[s] = cutune__replay_score(d->random_best[b], f, d->optimum);
    /* Not finding anything scores lowest; where random search expects
     * the optimum (a budget the size of the space) P is not defined, and
     * 1 says it was matched. */
    if (isnan(sf->score[s]))
        sf->score[s] = d->random_best[b] == d->optimum ? 1 : -INFINITY;
    sf->w5[s] =
        r.evals_within[2] == SIZE_MAX ? INFINITY : (double)r.evals_within[2];
    sf->evals[s] = (double)r.search.evaluations;
}

static void summarise(figures *fig, seed_figures *sf, size_t seeds)
{
    for (size_t l = 0; l < N_LEVELS; l++) {
        size_t k = 0;
        for (size_t s = 0; s < seeds; s++)
            k += sf->ratio[s] >= bench_share_levels[l];
        fig->share[l] = (double)k / (double)seeds;
    }
    fig->ratio_q1 = quantile(sf->ratio, seeds, 0.25);
    fig->ratio_q3 = quantile(sf->ratio, seeds, 0.75);
    fig->ratio_min = sf->ratio[0];
    fig->ratio = bench_median(sf->ratio, seeds);
    fig->score = bench_median(sf->score, seeds);
    fig->within5 = bench_median(sf->w5, seeds);
    fig->evals = bench_median(sf->evals, seeds);
}

/* Seed first + s of job j on the clock with `threads` compile threads,
 * asking for proposals as a tune with them asks (cutune__search_batch),
 * into slot s of to[] and wall. */
static void run_clock_seed(const job *j, int threads, size_t evals, size_t s,
                           uint64_t first, double *to[CLOCK_RATIOS],
                           double *wall)
{
    const dataset *d = j->data;
    cutune__replay_options o = seed_options(
        j, first + s, cutune__search_batch(j->var->type, threads, 1));
    o.max_evals = evals;
    o.threads = threads;
    o.compile_s = d->compile_s;
    o.measure_s = d->measure_s;
    o.setup_s = d->setup_s;
    cutune__replay_result r;
    int ok = cutune__replay_run(j->var->type, d->problem->space, d->objective,
                                d->cost, &o, &r, NULL, 0) == 0;
    for (size_t q = 0; q < CLOCK_RATIOS; q++)
        to[q][s] = ok ? r.seconds_to[q] : NAN;
    wall[s] = ok ? r.wall_s : NAN;
}

/* The medians over the seeds of job j on the clock, per thread count;
 * -1 when memory ran out. */
static int run_clock(job *j, const pool *p)
{
    double *v = malloc((CLOCK_RATIOS + 1) * p->seeds * sizeof *v);
    double *to[CLOCK_RATIOS], *wall = v + CLOCK_RATIOS * p->seeds;
    if (!v)
        return -1;
    for (size_t q = 0; q < CLOCK_RATIOS; q++)
        to[q] = v + q * p->seeds;
    for (size_t c = 0; c < p->n_clock; c++) {
        clock_figures *cf = &j->clock[c];
        for (size_t s = 0; s < p->seeds; s++)
            run_clock_seed(j, p->clock_threads[c], p->clock_evals, s,
                           p->first_seed, to, wall);
        for (size_t q = 0; q < CLOCK_RATIOS; q++) {
            cf->reached[q] = 0;
            for (size_t s = 0; s < p->seeds; s++)
                cf->reached[q] += isfinite(to[q][s]) != 0;
            cf->to[q] = bench_median(to[q], p->seeds);
        }
        cf->wall = bench_median(wall, p->seeds);
    }
    free(v);
    return 0;
}

static void run_job(job *j, size_t seeds, uint64_t first, size_t batch)
{
    seed_figures sf;
    sf.ratio = malloc(seeds * sizeof *sf.ratio);
    sf.score = malloc(seeds * sizeof *sf.score);
    sf.w5 = malloc(seeds * sizeof *sf.w5);
    sf.evals = malloc(seeds * sizeof *sf.evals);
    for (size_t b = 0;
         sf.ratio && sf.score && sf.w5 && sf.evals && b < N_BUDGETS; b++) {
        if (b == TIME_BUDGET && j->data->time_budget <= 0) {
            memset(&j->fig[b], 0, sizeof j->fig[b]);
            j->fig[b].ratio = NAN;
            continue;
        }
        double t0 = cpu_now();
        for (size_t s = 0; s < seeds; s++)
            run_seed(j, b, s, first, batch, &sf);
        j->fig[b].seconds = (cpu_now() - t0) / (double)seeds;
        summarise(&j->fig[b], &sf, seeds);
    }
    free(sf.evals);
    free(sf.w5);
    free(sf.score);
    free(sf.ratio);
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
        run_job(&p->jobs[i], p->seeds, p->first_seed, p->batch);
        if (run_clock(&p->jobs[i], p) != 0)
            for (size_t c = 0; c < p->n_clock; c++)
                p->jobs[i].clock[c].wall = NAN;
    }
}

/* The default strategy with the settings "name=value,..." of `spec`, or
 * bayes with those of "bayes:name=value,...". */
static int add_variant(bench_args *a, const char *spec)
{
    if (a->n_variants >= MAX_VARIANTS) {
        fprintf(stderr, "bench-strategies: more than %d variants\n",
                MAX_VARIANTS);
        return -1;
    }
    variant *v = &a->variants[a->n_variants];
    int bayes = strncmp(spec, "bayes:", 6) == 0;
    const char *settings = bayes ? spec + 6 : spec;
    v->type = bayes ? cutune__strategy_bayes : cutune__strategy_default;
    v->has_params = 1;
    v->params = cutune__default_params_std;
    v->bayes_params = cutune__bayes_params_std;
    snprintf(v->label, sizeof v->label, "%s[%.140s]", v->type->name, settings);
    char buf[256];
    snprintf(buf, sizeof buf, "%s", settings);
    for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
        char *eq = strchr(tok, '=');
        char *end = NULL;
        double val = eq ? strtod(eq + 1, &end) : NAN;
        if (eq)
            *eq = '\0';
        if (!eq || end == eq + 1 || *end ||
            (bayes ? cutune__bayes_params_set(&v->bayes_params, tok, val)
                   : cutune__default_params_set(&v->params, tok, val))) {
            fprintf(stderr,
                    "bench-strategies: --variant '%s': '%s' is not "
                    "NAME=VALUE of the %s strategy's settings\n",
                    spec, tok, v->type->name);
            return -1;
        }
    }
    a->n_variants++;
    return 0;
}

/* The strategies to run (after the --variant ones): every one named by
 * --strategies, or all but the exhaustive (brute force only sweeps in
 * index order: its figures say where the optimum happens to sit). */
static int add_strategies(bench_args *a)
{
    for (size_t s = 0; cutune__strategies[s]; s++) {
        const cutune__strategy_type *t = cutune__strategies[s];
        if (a->only ? !bench_listed(a->only, t->name) : t->exhaustive)
            continue;
        variant *v = &a->variants[a->n_variants++];
        memset(v, 0, sizeof *v);
        v->type = t;
        snprintf(v->label, sizeof v->label, "%s", t->name);
    }
    return 0;
}

static const char usage[] =
    "usage: bench-strategies [--seeds N] [--first-seed K] [--threads N] "
    "[--out FILE] "
    "[--strategies NAME,...] [--shares] [--batch B] [--spaces LIST] "
    "[--plant] [--variant NAME=V,...]... [--loo] [--no-start] "
    "[--clock-threads N,...] [--clock-evals N] [--no-clock] "
    "[--objective time|energy|edp] "
    "PROBLEM[@SIZE]:T4.json.gz ...\n"
    "       bench-strategies --settings   (the strategies' settings, as "
    "Markdown)\n";

/* The compile threads of --clock-threads "N,N,...": 0, or 1 when the
 * list is not of 1 to MAX_CLOCK_THREADS positive integers. */
static int parse_clock_threads(bench_args *a, const char *list)
{
    a->n_clock = 0;
    for (const char *q = list;;) {
        char *end = NULL;
        long t = strtol(q, &end, 10);
        if (end == q || t <= 0 || t > 4096 ||
            a->n_clock >= MAX_CLOCK_THREADS || (*end && *end != ',')) {
            fprintf(stderr,
                    "bench-strategies: --clock-threads '%s' is not "
                    "1 to %d thread counts N,N,...\n",
                    list, MAX_CLOCK_THREADS);
            return 1;
        }
        a->clock_threads[a->n_clock++] = (int)t;
        if (!*end)
            return 0;
        q = end + 1;
    }
}

/* --objective, wherever it stands, before any space loads: each space
 * ranks its configurations by it. 0, or 1 on a usage error. */
static int objective_first(bench_args *a, int argc, char **argv)
{
    for (int i = 1; i + 1 < argc; i++)
        if (strcmp(argv[i], "--objective") == 0 &&
            cutune_objective_parse(argv[i + 1], &a->objective) != 0) {
            fprintf(stderr,
                    "bench-strategies: --objective '%s' is not an "
                    "objective (%s)\n",
                    argv[i + 1], CUTUNE_OBJECTIVE_NAMES);
            return 1;
        }
    for (size_t k = 0; k < MAX_FILES; k++)
        a->data[k].minimise = a->objective;
    return 0;
}

/* One option at argv[*i]; 0, 1 on a usage error, 2 when a space did not
 * load, 3 after --help. */
static int parse_one(bench_args *a, int argc, char **argv, int *i)
{
    const char *o = argv[*i];
    int has = *i + 1 < argc;
    if (strcmp(o, "--seeds") == 0 && has)
        a->seeds = (size_t)strtoul(argv[++*i], NULL, 10);
    else if (strcmp(o, "--first-seed") == 0 && has) {
        const char *v = argv[++*i];
        char *end = NULL;
        a->first_seed = (uint64_t)strtoull(v, &end, 10);
        if (*v < '0' || *v > '9' || *end) {
            fprintf(stderr,
                    "bench-strategies: --first-seed '%s' is not "
                    "a non-negative integer\n",
                    v);
            return 1;
        }
    } else if (strcmp(o, "--threads") == 0 && has)
        a->threads = (size_t)strtoul(argv[++*i], NULL, 10);
    else if (strcmp(o, "--out") == 0 && has)
        a->out_path = argv[++*i];
    else if (strcmp(o, "--strategies") == 0 && has)
        a->only = argv[++*i];
    else if (strcmp(o, "--batch") == 0 && has)
        a->batch = (size_t)strtoul(argv[++*i], NULL, 10);
    else if (strcmp(o, "--variant") == 0 && has)
        return add_variant(a, argv[++*i]) ? 1 : 0;
    else if (strcmp(o, "--shares") == 0)
        a->shares = 1;
    else if (strcmp(o, "--plant") == 0)
        a->plant = 1;
    else if (strcmp(o, "--loo") == 0)
        a->loo = 1;
    else if (strcmp(o, "--no-start") == 0)
        a->no_start = 1;
    else if (strcmp(o, "--clock-threads") == 0 && has)
        return parse_clock_threads(a, argv[++*i]);
    else if (strcmp(o, "--clock-evals") == 0 && has)
        a->clock_evals = (size_t)strtoul(argv[++*i], NULL, 10);
    else if (strcmp(o, "--no-clock") == 0)
        a->n_clock = 0;
    else if (strcmp(o, "--objective") == 0 && has)
        ++*i; /* read before the spaces (objective_first) */
    else if (strcmp(o, "--help") == 0 || strcmp(o, "-h") == 0) {
        fputs(usage, stdout);
        return 3;
    } else if (strcmp(o, "--settings") == 0) {
        bench_print_settings(stdout);
        return 3;
    } else if (strcmp(o, "--spaces") == 0 && has) {
        long k = bench_load_list(a->data, a->n_data, argv[++*i]);
        if (k < 0)
            return 2;
        a->n_data = (size_t)k;
    } else if (o[0] == '-') {
        fprintf(stderr, "bench-strategies: unknown option '%s'\n%s", o, usage);
        return 1;
    } else if (a->n_data < MAX_FILES) {
        if (bench_load(&a->data[a->n_data], o, NULL))
            return 2;
        a->n_data++;
    }
    return 0;
}

/* Returns 0, 1 on a usage error, 2 when a space did not load, 3 after
 * --help. */
static int parse_args(bench_args *a, int argc, char **argv)
{
    a->seeds = 100;
    a->first_seed = 1;
    a->batch = 1;
    a->clock_threads[0] = 16;
    a->clock_threads[1] = 32;
    a->n_clock = 2;
    a->clock_evals = 200;
    int rc0 = objective_first(a, argc, argv);
    if (rc0)
        return rc0;
    for (int i = 1; i < argc; i++) {
        int rc = parse_one(a, argc, argv, &i);
        if (rc)
            return rc;
    }
    if (a->n_data == 0 || a->seeds == 0 || a->batch == 0 ||
        a->clock_evals == 0) {
        fputs(usage, stderr);
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
                fprintf(stderr, "bench-strategies: no strategy '%s'\n", name);
                return 1;
            }
            q += len + (end != NULL);
        }
    }
    if (a->plant)
        a->n_data = bench_plant(a->data, a->n_data);
    for (size_t f = 0; f < a->n_data && a->no_start; f++)
        a->data[f].start = SIZE_MAX;
    return add_strategies(a);
}

/* One job per space and variant. Returns the wall time in seconds, or a
 * negative number when memory ran out. */
static double run_all(pool *p, const bench_args *a)
{
    memset(p, 0, sizeof *p);
    p->jobs = calloc(a->n_data * a->n_variants + 1, sizeof *p->jobs);
    if (!p->jobs)
        return -1;
    for (size_t f = 0; f < a->n_data; f++)
        for (size_t v = 0; v < a->n_variants; v++) {
            p->jobs[p->n_jobs].data = &a->data[f];
            p->jobs[p->n_jobs++].var = &a->variants[v];
        }
    p->seeds = a->seeds;
    p->first_seed = a->first_seed;
    p->batch = a->batch;
    p->clock_threads = a->clock_threads;
    p->n_clock = a->n_clock;
    p->clock_evals = a->clock_evals;
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

int main(int argc, char **argv)
{
    static bench_args a;
    pool p;
    gsl_set_error_handler_off();
    int rc = parse_args(&a, argc, argv);
    if (rc)
        return rc == 3 ? 0 : rc;
    double wall = run_all(&p, &a);
    if (wall < 0)
        return 2;
    FILE *out = a.out_path ? fopen(a.out_path, "w") : stdout;
    if (!out) {
        perror(a.out_path);
        return 2;
    }
    bench_print_intro(out, &a, wall);
    bench_print_worst(out, &p, &a);
    if (a.loo) {
        bench_print_loo(out, &p, &a, cutune__strategy_default);
        bench_print_loo(out, &p, &a, cutune__strategy_bayes);
    }
    bench_print_clock(out, &p, &a);
    for (size_t f = 0; f < a.n_data; f++) {
        bench_print_space(out, &p, &a.data[f], a.shares);
        bench_print_space_clock(out, &p, &a.data[f]);
    }
    if (out != stdout)
        fclose(out);
    /* Planted copies borrow their problem: freed first. */
    for (size_t f = a.n_data; f-- > 0;)
        bench_dataset_free(&a.data[f]);
    free(p.jobs);
    return 0;
}
