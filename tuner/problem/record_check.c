/* Whether a cached record fits a problem: every parameter named once, no
 * other name, each value one of the parameter's, the configuration a
 * point of the space (the conditions hold), and a time that is a time.
 * It lives beside the problems (not in cache/) because it reads a
 * cutune_problem; the cache calls it through cutune_cache_query.accept. */
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cutune/cutune.h"
#include "expr/none.h"
#include "problem.h"

static int reject(char *why, size_t why_size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int reject(char *why, size_t why_size, const char *fmt, ...)
{
    if (why && why_size) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(why, why_size, fmt, ap);
        va_end(ap);
    }
    return 0;
}

/* Index of the value of parameter k whose text is `text`, or CUTUNE__NONE. */
static size_t value_index(const cutune_problem *p, size_t k, const char *text)
{
    for (size_t v = 0; v < p->param_value_counts[k]; v++)
        if (strcmp(p->value_texts[k][v], text) == 0)
            return v;
    return CUTUNE__NONE;
}

int cutune_problem_accepts_record(void *problem,
                                  const cutune_cache_record *record, char *why,
                                  size_t why_size)
{
    const cutune_problem *p = problem;
    if (why && why_size)
        why[0] = '\0';
    if (!p || !record)
        return reject(why, why_size, "no problem or no record");
    if (!(record->time_ms > 0) || !isfinite(record->time_ms))
        return reject(why, why_size,
                      "stats.time_ms: %g is not a time "
                      "(a positive finite number)",
                      record->time_ms);
    if (!p->space)
        return 1; /* nothing to check the configuration against */
    uint32_t *cfg = calloc(p->n_params ? p->n_params : 1, sizeof *cfg);
    unsigned char *seen = calloc(p->n_params ? p->n_params : 1, 1);
    int ok = cfg && seen;
    if (!ok)
        reject(why, why_size, "out of memory");
    for (size_t i = 0; ok && i < record->n_config; i++) {
        const cutune_param_value *pv = &record->config[i];
        size_t k = cutune__problem_find_param(p, pv->name);
        size_t v =
            k == CUTUNE__NONE ? CUTUNE__NONE : value_index(p, k, pv->value);
        if (k == CUTUNE__NONE)
            ok = reject(why, why_size,
                        "config.%s: the problem has no such parameter",
                        pv->name);
        else if (seen[k])
            ok = reject(why, why_size, "config.%s: named twice", pv->name);
        else if (v == CUTUNE__NONE)
            ok = reject(why, why_size,
                        "config.%s: '%s' is not one of its values", pv->name,
                        pv->value);
        else
            cfg[k] = (uint32_t)v;
        if (ok)
            seen[k] = 1;
    }
    for (size_t k = 0; ok && k < p->n_params; k++)
        if (!seen[k])
            ok =
                reject(why, why_size, "config.%s: missing", p->param_names[k]);
    size_t index;
    if (ok && !cutune__space_index_of(p->space, cfg, &index))
        ok = reject(why, why_size,
                    "config: outside the search space (a "
                    "condition of the problem does not hold)");
    free(seen);
    free(cfg);
    return ok;
}

int cutune__problem_config_from_values(const cutune_problem *p,
                                       const cutune_param_value *values,
                                       size_t n, size_t *index, char *why,
                                       size_t why_size)
{
    size_t def = cutune__problem_default_config(p);
    if (def == CUTUNE__NONE)
        return reject(why, why_size, "the search space is empty");
    uint32_t *cfg = malloc((p->n_params ? p->n_params : 1) * sizeof *cfg);
    unsigned char *seen = calloc(p->n_params ? p->n_params : 1, 1);
    int ok = cfg && seen;
    if (!ok)
        reject(why, why_size, "out of memory");
    else
        memcpy(cfg, cutune__space_config(p->space, def),
               p->n_params * sizeof *cfg);
    for (size_t i = 0; ok && i < n; i++) {
        size_t k = cutune__problem_find_param(p, values[i].name);
        size_t v = k == CUTUNE__NONE ? CUTUNE__NONE
                                     : value_index(p, k, values[i].value);
        if (k == CUTUNE__NONE)
            ok = reject(why, why_size,
                        "%s: the problem has no such "
                        "parameter",
                        values[i].name);
        else if (seen[k])
            ok = reject(why, why_size, "%s: named twice", values[i].name);
        else if (v == CUTUNE__NONE)
            ok = reject(why, why_size, "%s: '%s' is not one of its values",
                        values[i].name, values[i].value);
        else {
            cfg[k] = (uint32_t)v;
            seen[k] = 1;
        }
    }
    if (ok && !cutune__space_index_of(p->space, cfg, index))
        ok = reject(why, why_size,
                    "the configuration is outside the "
                    "search space (a condition of the problem does not "
                    "hold)");
    free(seen);
    free(cfg);
    return ok ? 0 : -1;
}
