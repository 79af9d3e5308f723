/* From a results file to a report's summary: each result in the file's
 * order with its time, when it ended and its threads per block, and where
 * the default configuration, the occupancy suggestion and the winner are.
 * What the file does not say is left unknown, with a note. */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "explain_model.h"
#include "expr/none.h"
#include "problem.h"
#include "report_internal.h"
#include "t1_read.h"
#include "t4.h"

int cutune__report_find_config(const cutune_problem *p,
                               const cutune_param_value *v, size_t n,
                               size_t *index_out)
{
    *index_out = CUTUNE__NONE;
    if (!v || n != p->n_params || !p->space)
        return 0;
    uint32_t *cfg = malloc((n ? n : 1) * sizeof *cfg);
    size_t index = CUTUNE__NONE;
    if (!cfg)
        return -1;
    for (size_t k = 0; k < n; k++) {
        size_t param =
            cutune__problem_find_param(p, v[k].name ? v[k].name : "");
        size_t found = CUTUNE__NONE;
        for (size_t j = 0;
             param != CUTUNE__NONE && j < p->param_value_counts[param]; j++)
            if (v[k].value &&
                strcmp(p->value_texts[param][j], v[k].value) == 0)
                found = j;
        if (found == CUTUNE__NONE)
            goto done;
        cfg[param] = (uint32_t)found;
    }
    if (!cutune__space_index_of(p->space, cfg, &index))
        index = CUTUNE__NONE;
done:
    free(cfg);
    *index_out = index;
    return 0;
}

double cutune__report_speedup(const cutune_report *r, size_t ref_eval,
                              double time_ms)
{
    if (ref_eval == CUTUNE__NONE || !isfinite(r->evals[ref_eval].time_ms) ||
        !(time_ms > 0))
        return NAN;
    return r->evals[ref_eval].time_ms / time_ms;
}

static size_t first_eval_of(const cutune_report *r, size_t config)
{
    for (size_t i = 0; config != CUTUNE__NONE && i < r->n_evals; i++)
        if (r->evals[i].config == config)
            return i;
    return CUTUNE__NONE;
}

typedef struct config_at {
    size_t config, eval;
} config_at;

static int by_config_then_eval(const void *a, const void *b)
{
    const config_at *x = a, *y = b;
    if (x->config != y->config)
        return x->config < y->config ? -1 : 1;
    return x->eval < y->eval ? -1 : x->eval > y->eval;
}

/* A configuration the file holds twice counts once, at its first place,
 * wherever a count of configurations is meant. */
static int mark_duplicates(cutune_report *r)
{
    config_at *at = malloc((r->n_evals ? r->n_evals : 1) * sizeof *at);
    size_t n = 0;
    if (!at)
        return -1;
    for (size_t i = 0; i < r->n_evals; i++)
        if (r->evals[i].config != CUTUNE__NONE)
            at[n++] = (config_at){r->evals[i].config, i};
    qsort(at, n, sizeof *at, by_config_then_eval);
    for (size_t i = 1; i < n; i++)
        if (at[i].config == at[i - 1].config) {
            r->evals[at[i].eval].duplicate = 1;
            r->n_duplicates++;
        }
    free(at);
    return 0;
}

static double entry_seconds(const cutune__t4_entry *e)
{
    double ms = e->compile_ms + e->other_ms;
    for (size_t k = 0; k < e->n_runtimes; k++)
        ms += e->runtimes[k];
    return ms / 1000.0;
}

/* Seconds from the file's timestamps when every result has one and they
 * never go back; else the recorded durations added up (which overstate a
 * tune that compiled in parallel). */
static void set_elapsed(cutune_report *r, const cutune__t4 *t4)
{
    int stamps = t4->n_entries > 0;
    for (size_t i = 0; stamps && i < t4->n_entries; i++)
        stamps = isfinite(t4->entries[i].timestamp) &&
                 (i == 0 ||
                  t4->entries[i].timestamp >= t4->entries[i - 1].timestamp);
    r->seconds_from_timestamps = stamps;
    double sum = 0;
    for (size_t i = 0; i < t4->n_entries; i++) {
        const cutune__t4_entry *e = &t4->entries[i];
        sum += entry_seconds(e);
        r->evals[i].elapsed_s = stamps
                                    ? e->timestamp - t4->entries[0].timestamp +
                                          entry_seconds(&t4->entries[0])
                                    : sum;
    }
}

static double param_product(const cutune_problem *p, size_t config,
                            const size_t *params, size_t n)
{
    const uint32_t *cfg = cutune__space_config(p->space, config);
    double t = 1;
    for (size_t k = 0; k < n; k++) {
        long long v;
        if (cutune__t1_as_i64(&p->param_values[params[k]][cfg[params[k]]],
                              &v) != 0 ||
            v <= 0)
            return NAN;
        t *= (double)v;
    }
    return t;
}

/* Threads per block: from the problem's LocalSize when its kernel part was
 * read, else from Kernel Tuner's block_size_x/y/z parameters. */
static void set_threads(cutune_report *r)
{
    static const char *const names[] = {"block_size_x", "block_size_y",
                                        "block_size_z"};
    const cutune_problem *p = r->problem;
    size_t params[3], n = 0;
    for (size_t d = 0; d < 3; d++) {
        size_t k = cutune__problem_find_param(p, names[d]);
        if (k != CUTUNE__NONE)
            params[n++] = k;
    }
    int local = !p->space_only && p->local_size[0];
    if (local)
        r->threads_source = "the problem's LocalSize";
    else if (cutune__problem_find_param(p, names[0]) != CUTUNE__NONE)
        r->threads_source = n == 3   ? "block_size_x * block_size_y * "
                                       "block_size_z"
                            : n == 2 ? "the product of the block_size_* "
                                       "parameters"
                                     : "block_size_x";
    else
        return;
    for (size_t i = 0; i < r->n_evals; i++) {
        cutune__report_eval *e = &r->evals[i];
        e->threads = NAN;
        if (e->config == CUTUNE__NONE)
            continue;
        if (local) {
            unsigned grid[3], block[3];
            char err[256];
            if (cutune__problem_geometry(p, e->config, grid, block, err,
                                         sizeof err) == 0)
                e->threads = (double)block[0] * block[1] * block[2];
        } else {
            e->threads = param_product(p, e->config, params, n);
        }
    }
}

/* The counters among an entry's extra measurements, classified by the
 * rules of `cutune explain`. */
static void take_counters(cutune_report *r, const cutune__t4_entry *e,
                          cutune__report_eval *v)
{
    v->dram_pct = v->sm_pct = NAN;
    if (e->n_extra == 0)
        return;
    cutune__explained x;
    memset(&x, 0, sizeof x);
    if (!cutune__explain_from_measurements(&x,
                                           (const char *const *)e->extra_names,
                                           e->extra_values, e->n_extra))
        return;
    cutune__classify(&x);
    v->dram_pct = x.values[CUTUNE__M_DRAM_PCT];
    v->sm_pct = x.values[CUTUNE__M_SM_PCT];
    v->bottleneck = cutune__bottleneck_str(x.bottleneck);
    r->has_counters = 1;
}

/* The value an objective ranks by (cutune_objective's order). */
static double objective_value(const cutune__report_eval *e, size_t objective)
{
    return objective == 0   ? e->time_ms
           : objective == 1 ? e->energy_j
                            : e->energy_j * e->time_ms * 1e-3;
}

/* Whether e beats the winner w by objective k: a tie in time goes to the
 * lower energy and one in energy to the lower time, so that every winner
 * is on the Pareto front; then to the first in the file. */
static int beats(const cutune__report_eval *e, const cutune__report_eval *w,
                 size_t k)
{
    double a = objective_value(e, k), b = objective_value(w, k);
    if (a != b || k == 2)
        return a < b;
    return objective_value(e, 1 - k) < objective_value(w, 1 - k);
}

/* The results with energy, and the best of them by each objective. */
static void set_energy_winners(cutune_report *r)
{
    for (size_t k = 0; k < CUTUNE__REPORT_OBJECTIVES; k++)
        r->energy_winner[k] = CUTUNE__NONE;
    for (size_t i = 0; i < r->n_evals; i++) {
        const cutune__report_eval *e = &r->evals[i];
        if (e->duplicate || !isfinite(e->energy_j))
            continue;
        r->n_energy++;
        for (size_t k = 0; k < CUTUNE__REPORT_OBJECTIVES; k++) {
            size_t *w = &r->energy_winner[k];
            if (*w == CUTUNE__NONE || beats(e, &r->evals[*w], k))
                *w = i;
        }
    }
}

static cutune_status copy_entries(cutune_report *r, const cutune__t4 *t4)
{
    r->evals = calloc(t4->n_entries ? t4->n_entries : 1, sizeof *r->evals);
    if (!r->evals)
        return cutune__report_fail(r, CUTUNE_ERR_NO_MEMORY, "out of memory");
    r->n_evals = t4->n_entries;
    r->n_outside = t4->n_outside;
    r->n_other_invalidity = t4->n_other_invalidity;
    r->best_eval = CUTUNE__NONE;
    for (size_t i = 0; i < t4->n_entries; i++) {
        const cutune__t4_entry *e = &t4->entries[i];
        cutune__report_eval *v = &r->evals[i];
        v->config = e->config_index;
        v->outcome = e->outcome;
        v->threads = NAN;
        take_counters(r, e, v);
        v->time_ms = e->outcome == CUTUNE_OUTCOME_CORRECT &&
                             isfinite(e->time_ms) && e->time_ms > 0
                         ? e->time_ms
                         : INFINITY;
        if (v->outcome == CUTUNE_OUTCOME_CORRECT && !isfinite(v->time_ms))
            v->outcome = CUTUNE_OUTCOME_RUNTIME; /* a success with no time */
        int has_energy =
            isfinite(v->time_ms) && isfinite(e->energy_j) && e->energy_j > 0;
        v->energy_j = has_energy ? e->energy_j : NAN;
        v->power_w = has_energy && isfinite(e->power_w) ? e->power_w : NAN;
        if ((size_t)v->outcome < sizeof r->by_outcome / sizeof *r->by_outcome)
            r->by_outcome[v->outcome]++;
        if (isfinite(v->time_ms)) {
            r->n_correct++;
            if (r->best_eval == CUTUNE__NONE ||
                v->time_ms < r->evals[r->best_eval].time_ms)
                r->best_eval = i;
        }
    }
    set_elapsed(r, t4);
    if (mark_duplicates(r))
        return cutune__report_fail(r, CUTUNE_ERR_NO_MEMORY, "out of memory");
    set_energy_winners(r);
    return CUTUNE_OK;
}

/* The default configuration, the occupancy suggestion and the winner. */
static int place_references(cutune_report *r, const cutune_report_options *o)
{
    const cutune_problem *p = r->problem;
    int bad = 0;
    r->default_config = cutune__problem_default_config(p);
    r->default_eval = first_eval_of(r, r->default_config);
    if (r->default_eval == CUTUNE__NONE)
        bad |= cutune__report_note(r, "The default configuration (the T1 "
                                      "Defaults) is not among the results: no "
                                      "speed-up over it.");
    bad |= cutune__report_find_config(p, o->baseline, o->n_baseline,
                                      &r->baseline_config);
    r->baseline_eval = first_eval_of(r, r->baseline_config);
    r->occupancy_block_size = o->occupancy_block_size;
    if (!o->baseline)
        bad |= cutune__report_note(r, "The occupancy suggestion is unknown: "
                                      "a results file does not record it (a "
                                      "report written by `cutune tune "
                                      "--report` shows it).");
    else if (r->baseline_eval == CUTUNE__NONE)
        bad |= cutune__report_note(r, "The occupancy suggestion is not among "
                                      "the results.");
    r->winner_eval = r->best_eval;
    r->winner_ms =
        r->best_eval != CUTUNE__NONE ? r->evals[r->best_eval].time_ms : NAN;
    size_t winner_config;
    bad |=
        cutune__report_find_config(p, o->winner, o->n_winner, &winner_config);
    size_t w = first_eval_of(r, winner_config);
    if (w != CUTUNE__NONE && isfinite(r->evals[w].time_ms)) {
        r->winner_eval = w;
        r->winner_ms = o->winner_ms > 0 ? o->winner_ms : r->evals[w].time_ms;
    }
    return bad;
}

static int add_notes(cutune_report *r, const cutune__t4 *t4)
{
    const cutune_problem *p = r->problem;
    int bad = cutune__report_note(r, "The evaluation order is the order of "
                                     "the results in the file.");
    if (t4->n_outside)
        bad |=
            cutune__report_note(r,
                                "%zu result%s name%s a configuration "
                                "outside the problem's space: shown in the "
                                "convergence plots, left out of the "
                                "parameter effects.",
                                t4->n_outside, t4->n_outside == 1 ? "" : "s",
                                t4->n_outside == 1 ? "s" : "");
    if (r->n_duplicates)
        bad |= cutune__report_note(r,
                                   "%zu result%s repeat a configuration "
                                   "the file held before: counted once.",
                                   r->n_duplicates,
                                   r->n_duplicates == 1 ? "" : "s");
    if (!r->seconds_from_timestamps)
        bad |= cutune__report_note(r, "Seconds are the recorded compile and "
                                      "run times added up: not every result "
                                      "has a timestamp.");
    if (!r->threads_source)
        bad |=
            cutune__report_note(r, "Threads per block are unknown: the "
                                   "problem was read for its space only and "
                                   "has no block_size_x parameter.");
    if (p->space_only)
        bad |= cutune__report_note(r, "The problem was read for its space "
                                      "only (its kernel is not at hand): no "
                                      "bytes or FLOPs per launch, so no GB/s "
                                      "or GFLOP/s.");
    else if (!r->has_bytes && !r->has_flops)
        bad |= cutune__report_note(r, "The problem gives no bytes or FLOPs "
                                      "per launch (CutuneExtensions "
                                      "BytesPerLaunch, FlopsPerLaunch): no "
                                      "GB/s or GFLOP/s.");
    if (!r->device)
        bad |= cutune__report_note(r, "The device is unknown: a results file "
                                      "does not name it.");
    return bad;
}

/* What the file's metadata knows and the caller did not say (the
 * device, the strategy); a file recorded for another problem is a
 * warning, logged once, and a note on the page. */
static cutune_status take_meta(cutune_report *r, const cutune__t4 *t4,
                               const cutune_report_options *o)
{
    const cutune__t4_meta *m = &t4->meta;
    if ((!r->device && m->device_name &&
         !(r->device = strdup(m->device_name))) ||
        (!r->strategy && m->strategy && !(r->strategy = strdup(m->strategy))))
        return cutune__report_fail(r, CUTUNE_ERR_NO_MEMORY, "out of memory");
    char differs[1024];
    if (!cutune__t4_mismatch(t4, o->results_path, r->problem, differs,
                             sizeof differs))
        return CUTUNE_OK;
    if (o->log)
        o->log(o->log_user, CUTUNE_LOG_WARN, differs);
    if (cutune__report_note(r, "%s", differs))
        return cutune__report_fail(r, CUTUNE_ERR_NO_MEMORY, "out of memory");
    return CUTUNE_OK;
}

cutune_status cutune__report_load(cutune_report *r,
                                  const cutune_report_options *o)
{
    const cutune_problem *p = r->problem;
    char err[1024] = "";
    cutune__t4 *t4 = NULL;
    cutune_status st =
        cutune__t4_load(o->results_path, p, &t4, err, sizeof err);
    if (st)
        return cutune__report_fail(r, st, "%s", err);
    st = copy_entries(r, t4);
    if (!st)
        st = take_meta(r, t4, o);
    r->has_bytes = !p->space_only && p->bytes_per_launch != NULL;
    r->has_flops = !p->space_only && p->flops_per_launch != NULL;
    if (!st) {
        set_threads(r);
        st = cutune__report_param_stats(r);
    }
    if (!st && (add_notes(r, t4) || place_references(r, o)))
        st = cutune__report_fail(r, CUTUNE_ERR_NO_MEMORY, "out of memory");
    cutune__t4_free(t4);
    return st;
}
