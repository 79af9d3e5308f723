/* bench-strategies: the spaces, as records of objectives and costs by
 * space index (and the clock's compile and measuring seconds), and their
 * planted copies (search/replay/plant.h). */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "replay/plant.h"
#include "replay/replay.h"
#include "strategies.h"
#include "t4.h"

const size_t bench_budgets[N_EVAL_BUDGETS] = {50, 100, 200, 400};

/* The optimum, the random-search expectations and the time budget of a
 * loaded record. */
static void describe(dataset *d)
{
    double sum = 0;
    size_t k = 0;
    d->optimum = cutune__replay_optimum(d->objective, d->n, NULL);
    for (size_t b = 0; b < N_EVAL_BUDGETS; b++)
        d->random_best[b] =
            cutune__replay_random_best(d->objective, d->n, bench_budgets[b]);
    d->random_best[TIME_BUDGET] =
        cutune__replay_random_best(d->objective, d->n, TIME_BUDGET_EVALS);
    for (size_t i = 0; i < d->n; i++)
        if (!isnan(d->objective[i]) && d->cost[i] > 0) {
            sum += d->cost[i];
            k++;
        }
    d->time_budget = k ? TIME_BUDGET_EVALS * sum / (double)k : 0;
}

/* The record of `t4` by space index: objective NaN where nothing was
 * recorded, a configuration recorded twice at its better. */
static int fill(dataset *d, const cutune__t4 *t4)
{
    d->n = cutune__space_size(d->problem->space);
    d->objective = malloc((d->n ? d->n : 1) * sizeof *d->objective);
    d->cost = calloc(d->n ? d->n : 1, sizeof *d->cost);
    d->try_cost = calloc(d->n ? d->n : 1, sizeof *d->try_cost);
    d->compile_s = calloc(d->n ? d->n : 1, sizeof *d->compile_s);
    d->measure_s = calloc(d->n ? d->n : 1, sizeof *d->measure_s);
    if (!d->objective || !d->cost || !d->try_cost || !d->compile_s ||
        !d->measure_s)
        return -1;
    for (size_t i = 0; i < d->n; i++)
        d->objective[i] = NAN;
    for (size_t e = 0; e < t4->n_entries; e++) {
        const cutune__t4_entry *en = &t4->entries[e];
        if (en->config_index >= d->n)
            continue;
        double o = INFINITY;
        if (en->outcome == CUTUNE_OUTCOME_CORRECT &&
            d->minimise == CUTUNE_OBJECTIVE_TIME)
            o = en->time_ms;
        else if (en->outcome == CUTUNE_OUTCOME_CORRECT && en->energy_j > 0 &&
                 isfinite(en->energy_j))
            o = d->minimise == CUTUNE_OBJECTIVE_ENERGY
                    ? en->energy_j
                    : en->energy_j * en->time_ms * 1e-3;
        if (isnan(d->objective[en->config_index]) ||
            o < d->objective[en->config_index])
            d->objective[en->config_index] = o;
        d->cost[en->config_index] = cutune__t4_entry_seconds(en);
        d->try_cost[en->config_index] = cutune__t4_entry_try_seconds(en);
        d->compile_s[en->config_index] = en->compile_ms / 1000.0;
        d->measure_s[en->config_index] = cutune__t4_entry_measure_seconds(en);
    }
    /* As `cutune simulate --threads` sets a tune's clock up. */
    d->setup_s =
        cutune__replay_setup_s(d->compile_s, d->measure_s, d->n,
                               cutune__problem_default_config(d->problem));
    describe(d);
    return 0;
}

/* Names the space after its T4 file, less "_T4.json..." */
static void name_after(dataset *d, const char *t4path)
{
    const char *base = strrchr(t4path, '/');
    snprintf(d->name, sizeof d->name, "%.200s", base ? base + 1 : t4path);
    char *dot = strstr(d->name, "_T4.json");
    if (!dot)
        dot = strstr(d->name, ".json");
    if (dot)
        *dot = '\0';
}

/* Loads the space of `spec` ("PROBLEM[@SIZE]:T4"), relative paths taken
 * from `dir` when not NULL. */
int bench_load(dataset *d, const char *spec, const char *dir)
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
    snprintf(d->group, sizeof d->group, "%.200s", problem);
    /* A template name has no '/' and no ".json"; a file is relative. */
    if (dir && strstr(problem, ".json") && problem[0] != '/') {
        char rel[1024];
        snprintf(rel, sizeof rel, "%.1000s", problem);
        snprintf(problem, sizeof problem, "%.1000s/%s", dir, rel);
    }
    snprintf(t4path, sizeof t4path, "%.1000s%s%.1000s",
             dir && colon[1] != '/' ? dir : "",
             dir && colon[1] != '/' ? "/" : "", colon + 1);
    name_after(d, t4path);
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
    d->start = cutune__problem_seed_start(d->problem, 0, NULL);
    int rc = fill(d, t4);
    cutune__t4_free(t4);
    if (rc == 0 && d->minimise != CUTUNE_OBJECTIVE_TIME &&
        !isfinite(d->optimum)) {
        fprintf(stderr,
                "bench-strategies: %s: objective %s: no correct result "
                "has an energy measurement\n",
                t4path, cutune_objective_str(d->minimise));
        return -1;
    }
    return rc;
}

/* Loads every "PROBLEM[@SIZE] T4" line of the list at `path` after the
 * n_data spaces already in `data`; returns the new count, or -1. */
long bench_load_list(dataset *data, size_t n_data, const char *path)
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
        if (n_data >= MAX_FILES) {
            fprintf(stderr, "bench-strategies: %s: more than %d spaces\n",
                    path, MAX_FILES);
            fclose(f);
            return -1;
        }
        snprintf(spec, sizeof spec, "%s:%s", a, b);
        if (bench_load(&data[n_data], spec, dir)) {
            fclose(f);
            return -1;
        }
        n_data++;
    }
    fclose(f);
    return (long)n_data;
}

/* A copy of `src` with an optimum planted by `plant`, named NAME+`what`;
 * 0, or -1 when the space has no place for it (nothing added). */
static int derive(dataset *d, const dataset *src, const char *what,
                  size_t (*plant)(const cutune__space *, const double *,
                                  double *))
{
    memset(d, 0, sizeof *d);
    d->n = src->n;
    d->minimise = src->minimise;
    d->objective = malloc((d->n ? d->n : 1) * sizeof *d->objective);
    d->cost = malloc((d->n ? d->n : 1) * sizeof *d->cost);
    d->try_cost = malloc((d->n ? d->n : 1) * sizeof *d->try_cost);
    d->compile_s = malloc((d->n ? d->n : 1) * sizeof *d->compile_s);
    d->measure_s = malloc((d->n ? d->n : 1) * sizeof *d->measure_s);
    if (!d->objective || !d->cost || !d->try_cost || !d->compile_s ||
        !d->measure_s ||
        plant(src->problem->space, src->objective, d->objective) == SIZE_MAX) {
        bench_dataset_free(d);
        return -1;
    }
    memcpy(d->cost, src->cost, d->n * sizeof *d->cost);
    memcpy(d->try_cost, src->try_cost, d->n * sizeof *d->try_cost);
    memcpy(d->compile_s, src->compile_s, d->n * sizeof *d->compile_s);
    memcpy(d->measure_s, src->measure_s, d->n * sizeof *d->measure_s);
    d->setup_s = src->setup_s;
    d->problem = src->problem;
    d->start = src->start;
    d->derived = 1;
    snprintf(d->name, sizeof d->name, "%.200s+%s", src->name, what);
    snprintf(d->group, sizeof d->group, "%s", src->group);
    describe(d);
    return 0;
}

size_t bench_plant(dataset *data, size_t n)
{
    size_t k = n;
    for (size_t i = 0; i < n && k + 2 <= MAX_FILES; i++) {
        k += derive(&data[k], &data[i], "edge", cutune__plant_edge) == 0;
        k += derive(&data[k], &data[i], "basin", cutune__plant_basin) == 0;
    }
    return k;
}

void bench_dataset_free(dataset *d)
{
    free(d->objective);
    free(d->measure_s);
    free(d->compile_s);
    free(d->try_cost);
    free(d->cost);
    if (!d->derived)
        cutune_problem_destroy(d->problem);
    memset(d, 0, sizeof *d);
}
