/* What a tune leaves: the winner chosen among the finalists (ties to the
 * lowest index) and published as the cutune_tune_result, the record
 * appended to the per-device cache, and the T4 file of every evaluation. */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "session_internal.h"
#include "t4.h"
#include "util.h"

static const eval_record *find_eval(const cutune_session *s, size_t config)
{
    for (size_t i = 0; i < s->record.n_evals; i++)
        if (s->record.evals[i].pub.config_index == config)
            return &s->record.evals[i];
    return NULL;
}

cutune_status cutune__session_record_winner(cutune_session *s)
{
    const cutune_problem *p = s->problem;
    cutune_cache *cache = NULL;
    cutune_status st = cutune_cache_open(s->cache_dir, &cache);
    if (st == CUTUNE_OK) {
        char joined[2048] = "";
        for (size_t i = 0; i < p->n_options; i++) {
            if (i)
                strncat(joined, " ", sizeof joined - strlen(joined) - 1);
            strncat(joined, p->options[i], sizeof joined - strlen(joined) - 1);
        }
        const cutune_tune_result *r = &s->out.result;
        cutune_cache_record rec;
        memset(&rec, 0, sizeof rec);
        rec.device = r->device;
        rec.problem_name = p->name;
        rec.source_hash = p->source_hash;
        rec.problem_size = p->problem_size;
        rec.n_problem_size = p->n_problem_size;
        rec.compiler_options = joined;
        rec.config = r->best;
        rec.n_config = r->n_params;
        rec.time_ms = r->best_ms;
        rec.time_min_ms = r->best_min_ms;
        rec.time_stddev_ms = r->best_stddev_ms;
        rec.runs = r->best_runs;
        rec.gbs = r->best_gbs;
        rec.baseline = r->baseline;
        rec.n_baseline = r->baseline ? r->n_params : 0;
        rec.baseline_ms = r->baseline_ms;
        rec.strategy = r->strategy;
        rec.evaluations = r->evaluations;
        rec.tune_seconds = r->wall_s;
        rec.timestamp = (long long)time(NULL);
        st = cutune_cache_append(cache, &rec);
    }
    if (st)
        st = cutune__session_fail(s, st, "writing the tuning cache: %s",
                                  cutune_cache_errmsg(cache));
    cutune_cache_close(cache);
    return st;
}

cutune_status cutune__session_publish(cutune_session *s,
                                      const cutune__search_result *sr,
                                      size_t start,
                                      const cutune__strategy_type *type)
{
    const cutune_problem *p = s->problem;
    cutune_tune_result *r = &s->out.result;
    r->device = s->proto.device.fingerprint;
    r->n_params = p->n_params;
    r->strategy = type->name;
    r->evaluations = s->record.n_evals;
    r->workers = s->n_slots;
    r->restarts = s->tel.restarts;
    s->out.pub_evals = calloc(s->record.n_evals + 1, sizeof *s->out.pub_evals);
    s->out.best_values = calloc(p->n_params, sizeof *s->out.best_values);
    s->out.baseline_values =
        calloc(p->n_params, sizeof *s->out.baseline_values);
    if (!s->out.pub_evals || !s->out.best_values || !s->out.baseline_values)
        return cutune__session_fail(s, CUTUNE_ERR_NO_MEMORY, "out of memory");
    for (size_t i = 0; i < s->record.n_evals; i++) {
        s->out.pub_evals[i] = s->record.evals[i].pub;
        s->out.pub_evals[i].runs = s->record.evals[i].runs;
        s->out.pub_evals[i].final_runs = s->record.evals[i].final_runs;
        s->out.pub_evals[i].energy_j = s->record.evals[i].energy_j;
        s->out.pub_evals[i].power_w = s->record.evals[i].power_w;
        s->out.pub_evals[i].energy_rsd = s->record.evals[i].energy_rsd;
        if (s->record.evals[i].pub.outcome != CUTUNE_OUTCOME_CORRECT)
            r->failures++;
    }
    r->evals = s->out.pub_evals;
    r->n_evals = s->record.n_evals;

    const eval_record *base = find_eval(s, start);
    cutune__problem_config_values(p, start, s->out.baseline_values);
    r->baseline = s->out.baseline_values;
    r->baseline_ms = base && base->pub.outcome == CUTUNE_OUTCOME_CORRECT
                         ? base->pub.time_ms
                         : NAN;
    r->wall_s = cutune__now() - s->started;
    if (sr->best == SIZE_MAX)
        return cutune__session_fail(
            s, CUTUNE_ERR_NO_VALID_RESULT,
            "%s: none of the %zu configurations evaluated ran "
            "correctly",
            p->origin, s->record.n_evals);
    /* The winner is the fastest of the final round's finalists that are
     * still correct (of every result, where none is). Configurations
     * whose intervals overlap its interval are tied; the tie goes to the
     * lowest index, so that noise does not change the winner from one
     * tune to the next. */
    int any_finalist = 0;
    for (size_t i = 0; i < s->record.n_evals; i++) {
        any_finalist |= s->record.evals[i].finalist &&
                        cutune__session_contender(&s->record.evals[i]);
        r->finalists += s->record.evals[i].finalist;
    }
    const eval_record *fastest = NULL;
    for (size_t i = 0; i < s->record.n_evals; i++) {
        const eval_record *e = &s->record.evals[i];
        if (cutune__session_contender(e) && (e->finalist || !any_finalist) &&
            (!fastest || cutune__session_faster_first(&e, &fastest) < 0))
            fastest = e;
    }
    if (!fastest)
        return cutune__session_fail(
            s, CUTUNE_ERR_NO_VALID_RESULT,
            "%s: none of the %zu configurations evaluated stayed "
            "correct in the final round",
            p->origin, s->record.n_evals);
    const eval_record *best = fastest;
    for (size_t i = 0; i < s->record.n_evals; i++) {
        const eval_record *e = &s->record.evals[i];
        if (e == fastest || !cutune__session_contender(e) ||
            (any_finalist && !e->finalist) ||
            e->ci_lo_ms > fastest->ci_hi_ms || fastest->ci_lo_ms > e->ci_hi_ms)
            continue;
        r->tied++;
        if (e->pub.config_index < best->pub.config_index)
            best = e;
    }
    r->gpu_busy = r->wall_s > 0 ? s->tel.span_ms * 1e-3 / r->wall_s : 0.0;
    r->reused = s->tel.reused;
    r->kernel_share = r->wall_s > 0 ? s->tel.gpu_ms * 1e-3 / r->wall_s : 0.0;
    cutune__problem_config_values(p, best->pub.config_index,
                                  s->out.best_values);
    r->best = s->out.best_values;
    r->best_ms = best->pub.time_ms;
    r->best_min_ms = best->min_ms;
    r->best_stddev_ms = best->stddev_ms;
    r->best_runs = best->runs;
    double bytes = cutune__problem_bytes(p, best->pub.config_index);
    r->best_gbs = bytes > 0 ? bytes / (r->best_ms * 1e-3) / 1e9 : 0.0;
    double flops = cutune__problem_flops(p, best->pub.config_index);
    r->best_gflops = flops > 0 ? flops / (r->best_ms * 1e-3) / 1e9 : 0.0;
    r->speedup = r->baseline_ms / r->best_ms;
    return CUTUNE_OK;
}

cutune_status cutune_session_write_t4(cutune_session *s, const char *path)
{
    if (!s || !path)
        return CUTUNE_ERR_INVALID_ARGUMENT;
    if (!s->problem || s->record.n_evals == 0)
        return cutune__session_fail(s, CUTUNE_ERR_INVALID_ARGUMENT,
                                    "%s: no evaluations to "
                                    "write (tune first)",
                                    path);
    cutune__t4_record *recs = calloc(s->record.n_evals, sizeof *recs);
    if (!recs)
        return cutune__session_fail(s, CUTUNE_ERR_NO_MEMORY, "out of memory");
    for (size_t i = 0; i < s->record.n_evals; i++) {
        const eval_record *e = &s->record.evals[i];
        recs[i].config_index = e->pub.config_index;
        recs[i].outcome = e->pub.outcome;
        recs[i].runtimes = e->runtimes;
        recs[i].n_runtimes = e->runtimes ? e->runs : 0;
        recs[i].time_ms = e->pub.time_ms;
        recs[i].compile_ms = e->pub.compile_ms;
        recs[i].framework_ms = e->framework_ms;
        recs[i].search_ms = e->search_ms;
        /* Validation runs inside the worker's first launch and is not
         * timed apart from it: it is part of framework_ms. */
        recs[i].validation_ms = 0.0;
        recs[i].timestamp = e->timestamp;
        recs[i].extra_names = e->extra_names;
        recs[i].extra_values = e->extra_values;
        recs[i].extra_units = e->extra_units;
        recs[i].n_extra = e->n_extra;
    }
    const cutune_device *dev = &s->proto.device.fingerprint;
    const cutune_problem *p = s->problem;
    cutune__t4_meta meta = {
        .device_name = dev->name,
        .cc_major = dev->cc_major,
        .cc_minor = dev->cc_minor,
        .device_uuid = dev->uuid,
        .problem_name = p->name,
        .problem_size = p->problem_size,
        .n_problem_size = p->n_problem_size,
        .source_hash = p->source_hash,
        .strategy = s->tuned_with ? s->tuned_with->name : NULL,
        .seed = s->opt.seed,
        .max_evals = s->budget.max_evals,
        .max_seconds = s->budget.max_seconds,
        .fraction = s->budget.fraction,
        .cutune_version = cutune_version(),
    };
    char err[1024];
    cutune_status st = cutune__t4_write(path, s->problem, &meta, recs,
                                        s->record.n_evals, err, sizeof err);
    free(recs);
    if (st)
        return cutune__session_fail(s, st, "%s", err);
    return CUTUNE_OK;
}
