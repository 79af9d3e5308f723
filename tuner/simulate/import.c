/* cutune_cache_import: the best correct configuration of recorded
 * results (a T4 file, or a Kernel Tuner cache file) into the per-device
 * tuning cache, so that a team's earlier measurements answer a lookup.
 *
 * The results are read by the T4 reader (t4.h), which places them on the
 * problem's space and ranks them as `simulate` does; the record is the
 * problem's (its name, source hash and size) on the device the file
 * names. Messages go to the cache handle (store.h's cutune__cache_fail),
 * as every failure of a cache call does.
 */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "cutune/cutune.h"
#include "expr/none.h"
#include "problem.h"
#include "store.h"
#include "t1_read.h"
#include "t4.h"

void cutune_import_options_init(cutune_import_options *o)
{
    if (o)
        memset(o, 0, sizeof *o);
}

/* An entry's value of objective `o`; INFINITY without the energy it
 * needs. */
static double value_of(const cutune__t4_entry *e, cutune_objective o)
{
    if (o == CUTUNE_OBJECTIVE_TIME)
        return e->time_ms;
    if (!(e->energy_j > 0) || !isfinite(e->energy_j))
        return INFINITY;
    return o == CUTUNE_OBJECTIVE_ENERGY ? e->energy_j
                                        : e->energy_j * e->time_ms * 1e-3;
}

/* The entry with the least value of `o` among the correct ones on the
 * space; NULL when there is none. */
static const cutune__t4_entry *best_entry(const cutune__t4 *t4,
                                          cutune_objective o, size_t *correct)
{
    const cutune__t4_entry *best = NULL;
    *correct = 0;
    for (size_t i = 0; i < t4->n_entries; i++) {
        const cutune__t4_entry *e = &t4->entries[i];
        if (e->outcome != CUTUNE_OUTCOME_CORRECT ||
            e->config_index == CUTUNE__NONE)
            continue;
        (*correct)++;
        if (isfinite(value_of(e, o)) &&
            (!best || value_of(e, o) < value_of(best, o)))
            best = e;
    }
    return best;
}

/* The device of the record: the file's, else the caller's; a file that
 * names another device than the caller is refused. */
static cutune_status pick_device(cutune_cache *cache, const char *path,
                                 const cutune__t4 *t4, const char *given,
                                 char *name, size_t size)
{
    const char *file = t4->meta.device_name;
    if (file && given && *given && strcasecmp(file, given) != 0)
        return cutune__cache_fail(cache, CUTUNE_ERR_INVALID_ARGUMENT,
                                  "%s: measured on '%s', not on '%s' (the "
                                  "device name given)",
                                  path, file, given);
    if (!file && !(given && *given))
        return cutune__cache_fail(cache, CUTUNE_ERR_INVALID_ARGUMENT,
                                  "%s: names no device; say which device "
                                  "measured it (--device-name NAME)",
                                  path);
    snprintf(name, size, "%s", file ? file : given);
    return CUTUNE_OK;
}

/* A file measured at another size than the problem's would be cached
 * under the wrong size. */
static cutune_status check_size(cutune_cache *cache, const char *path,
                                const cutune__t4 *t4, const cutune_problem *p)
{
    if (t4->meta.n_problem_size == 0)
        return CUTUNE_OK;
    int same = 1;
    for (size_t d = 0; d < t4->meta.n_problem_size || d < p->n_problem_size;
         d++) {
        long long a =
            d < t4->meta.n_problem_size ? t4->meta.problem_size[d] : 1;
        long long b = d < p->n_problem_size ? p->problem_size[d] : 1;
        /* A dimension of the problem that varies is no size to hold the
         * file's against. */
        same &= a == b || b == 0;
    }
    if (same)
        return CUTUNE_OK;
    char file[128] = "", ours[128] = "";
    for (size_t d = 0; d < t4->meta.n_problem_size; d++)
        snprintf(file + strlen(file), sizeof file - strlen(file), "%s%lld",
                 d ? "," : "", t4->meta.problem_size[d]);
    for (size_t d = 0; d < p->n_problem_size; d++)
        snprintf(ours + strlen(ours), sizeof ours - strlen(ours), "%s%lld",
                 d ? "," : "", p->problem_size[d]);
    return cutune__cache_fail(cache, CUTUNE_ERR_INVALID_ARGUMENT,
                              "%s: measured at problem size %s, not %s; "
                              "give the problem that size (--size %s)",
                              path, file, ours, file);
}

static double runs_stddev(const cutune__t4_entry *e)
{
    if (e->n_runtimes < 2)
        return 0.0;
    double mean = 0.0, ss = 0.0;
    for (size_t k = 0; k < e->n_runtimes; k++)
        mean += e->runtimes[k] / (double)e->n_runtimes;
    for (size_t k = 0; k < e->n_runtimes; k++)
        ss += (e->runtimes[k] - mean) * (e->runtimes[k] - mean);
    return sqrt(ss / (double)(e->n_runtimes - 1));
}

static void fill_record(cutune_cache_record *rec, const cutune_problem *p,
                        const cutune__t4 *t4, const cutune__t4_entry *best,
                        cutune_param_value *config, const char *origin)
{
    snprintf(rec->device.cutune_version, sizeof rec->device.cutune_version,
             "%s", CUTUNE_VERSION_STRING);
    rec->problem_name = p->name ? p->name : "";
    rec->source_hash = p->source_hash;
    rec->problem_size = p->problem_size;
    rec->n_problem_size = p->n_problem_size;
    rec->compiler_options = "";
    cutune__problem_config_values(p, best->config_index, config);
    rec->config = config;
    rec->n_config = p->n_params;
    rec->time_ms = best->time_ms;
    rec->time_min_ms = best->time_ms;
    for (size_t k = 0; k < best->n_runtimes; k++)
        if (best->runtimes[k] < rec->time_min_ms)
            rec->time_min_ms = best->runtimes[k];
    rec->time_stddev_ms = runs_stddev(best);
    rec->runs = best->n_runtimes ? best->n_runtimes : 1;
    rec->baseline_ms = NAN;
    rec->strategy = origin;
    rec->evaluations = t4->n_entries;
    rec->timestamp = isfinite(best->timestamp) ? (long long)best->timestamp
                                               : (long long)time(NULL);
}

cutune_status cutune_cache_import(cutune_cache *cache,
                                  const cutune_problem *problem,
                                  const char *path,
                                  const cutune_import_options *options,
                                  cutune_import_result *result)
{
    if (result) {
        memset(result, 0, sizeof *result);
        result->time_ms = NAN;
    }
    if (!cache)
        return CUTUNE_ERR_INVALID_ARGUMENT;
    if (!problem || !problem->space || !path)
        return cutune__cache_fail(cache, CUTUNE_ERR_INVALID_ARGUMENT,
                                  "import: no problem or no file given");
    char err[1024];
    cutune__t4 *t4 = NULL;
    cutune_status st = cutune__t4_load(path, problem, &t4, err, sizeof err);
    if (st)
        return cutune__cache_fail(cache, st, "%s", err);
    cutune_cache_record rec;
    memset(&rec, 0, sizeof rec);
    size_t correct = 0;
    cutune_objective objective =
        options ? options->objective : CUTUNE_OBJECTIVE_TIME;
    const cutune__t4_entry *best = best_entry(t4, objective, &correct);
    cutune_param_value *config =
        calloc(problem->n_params ? problem->n_params : 1, sizeof *config);
    if (!config)
        st = cutune__cache_fail(cache, CUTUNE_ERR_NO_MEMORY, "out of memory");
    else if (!(st = pick_device(cache, path, t4,
                                options ? options->device_name : NULL,
                                rec.device.name, sizeof rec.device.name)) &&
             !(st = check_size(cache, path, t4, problem)) && !best)
        st = cutune__cache_fail(cache, CUTUNE_ERR_NO_VALID_RESULT,
                                "%s: no correct result on the space of %s "
                                "(%zu results, %zu outside it)%s",
                                path, problem->name, t4->n_entries,
                                t4->n_outside,
                                correct ? " with an energy measurement" : "");
    if (!st) {
        fill_record(&rec, problem, t4, best, config,
                    t4->from_kernel_tuner ? "kernel_tuner" : "import");
        rec.objective = objective;
        rec.energy_j = best->energy_j;
        st = cutune_cache_append(cache, &rec);
    }
    if (result) {
        result->results = t4->n_entries;
        result->correct = correct;
        result->outside = t4->n_outside;
        result->time_ms = best ? best->time_ms : NAN;
        if (best)
            cutune__t1_config_text(
                problem,
                cutune__space_config(problem->space, best->config_index),
                result->config, sizeof result->config);
        snprintf(result->device_name, sizeof result->device_name, "%s",
                 rec.device.name);
        result->kernel_tuner = t4->from_kernel_tuner;
    }
    free(config);
    cutune__t4_free(t4);
    return st;
}
