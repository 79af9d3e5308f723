/* The public report functions (cutune.h): creating a report from a
 * results file or a cache, writing its page, its notes and errors. */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expr/none.h"
#include "problem.h"
#include "report_internal.h"
#include "util.h"

void cutune_report_options_init(cutune_report_options *options)
{
    if (options)
        memset(options, 0, sizeof *options);
}

static char *vformat(const char *fmt, va_list ap)
{
    va_list copy;
    va_copy(copy, ap);
    int n = vsnprintf(NULL, 0, fmt, copy);
    va_end(copy);
    char *s = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (s)
        vsnprintf(s, (size_t)n + 1, fmt, ap);
    return s;
}

cutune_status cutune__report_fail(cutune_report *r, cutune_status st,
                                  const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    st = cutune__vfail(&r->errmsg, st, NULL, fmt, ap);
    va_end(ap);
    return st;
}

int cutune__report_note(cutune_report *r, const char *fmt, ...)
{
    char **more = realloc(r->notes, (r->n_notes + 1) * sizeof *more);
    if (!more)
        return -1;
    r->notes = more;
    va_list ap;
    va_start(ap, fmt);
    char *note = vformat(fmt, ap);
    va_end(ap);
    if (!note)
        return -1;
    r->notes[r->n_notes++] = note;
    return 0;
}

static char *dup_or_null(const char *s)
{
    return s ? strdup(s) : NULL;
}

static cutune_report *report_new(const cutune_report_options *o)
{
    cutune_report *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    r->max_points =
        o && o->max_points ? o->max_points : CUTUNE__REPORT_MAX_POINTS;
    r->top = o && o->top ? o->top : CUTUNE__REPORT_TOP;
    r->best_eval = r->winner_eval = CUTUNE__NONE;
    r->default_config = r->default_eval = CUTUNE__NONE;
    r->baseline_config = r->baseline_eval = CUTUNE__NONE;
    return r;
}

cutune_status cutune_report_create(const cutune_problem *problem,
                                   const cutune_report_options *options,
                                   cutune_report **out)
{
    if (!out)
        return CUTUNE_ERR_INVALID_ARGUMENT;
    cutune_report *r = *out = report_new(options);
    if (!r)
        return CUTUNE_ERR_NO_MEMORY;
    if (!problem || !problem->space || !options || !options->results_path)
        return cutune__report_fail(r, CUTUNE_ERR_INVALID_ARGUMENT,
                                   "no problem or no results file given");
    r->problem = problem;
    const char *base = strrchr(options->results_path, '/');
    r->source = strdup(base ? base + 1 : options->results_path);
    r->device = dup_or_null(options->device_name);
    r->strategy = dup_or_null(options->strategy);
    r->title = options->title
                   ? strdup(options->title)
                   : cutune__strdup_printf("Tuning report: %s", problem->name);
    if (!r->source || !r->title || (options->device_name && !r->device) ||
        (options->strategy && !r->strategy))
        return cutune__report_fail(r, CUTUNE_ERR_NO_MEMORY, "out of memory");
    return cutune__report_load(r, options);
}

cutune_status cutune_report_create_cache(cutune_cache *cache,
                                         const cutune_report_options *options,
                                         cutune_report **out)
{
    if (!out)
        return CUTUNE_ERR_INVALID_ARGUMENT;
    cutune_report *r = *out = report_new(options);
    if (!r)
        return CUTUNE_ERR_NO_MEMORY;
    if (!cache)
        return cutune__report_fail(r, CUTUNE_ERR_INVALID_ARGUMENT,
                                   "no cache given");
    r->title = options && options->title
                   ? strdup(options->title)
                   : cutune__strdup_printf("Tuning cache: %s",
                                           cutune_cache_dir(cache));
    if (!r->title)
        return cutune__report_fail(r, CUTUNE_ERR_NO_MEMORY, "out of memory");
    return cutune__report_cache_load(r, cache);
}

cutune_status cutune_report_write(cutune_report *report, const char *path)
{
    if (!report || !path)
        return CUTUNE_ERR_INVALID_ARGUMENT;
    if (!report->cache && !report->evals)
        return cutune__report_fail(report, CUTUNE_ERR_INVALID_ARGUMENT,
                                   "the report holds nothing to write");
    cutune__rtext page = {0};
    if (report->cache)
        cutune__report_html_cache(report, &page);
    else
        cutune__report_html_results(report, &page);
    if (page.oom) {
        cutune__rtext_free(&page);
        return cutune__report_fail(report, CUTUNE_ERR_NO_MEMORY,
                                   "out of memory");
    }
    char why[1024];
    int rc = cutune__output_write(path, page.data, page.len, why, sizeof why);
    int no_memory = rc != 0 && errno == ENOMEM;
    cutune__rtext_free(&page);
    if (rc)
        return cutune__report_fail(
            report, no_memory ? CUTUNE_ERR_NO_MEMORY : CUTUNE_ERR_IO, "%s",
            why);
    return CUTUNE_OK;
}

size_t cutune_report_note_count(const cutune_report *report)
{
    return report ? report->n_notes : 0;
}

const char *cutune_report_note(const cutune_report *report, size_t index)
{
    return report && index < report->n_notes ? report->notes[index] : NULL;
}

const char *cutune_report_errmsg(const cutune_report *report)
{
    if (!report)
        return "out of memory";
    return report->errmsg ? report->errmsg : "";
}

void cutune_report_destroy(cutune_report *report)
{
    if (!report)
        return;
    for (size_t i = 0; i < report->n_notes; i++)
        free(report->notes[i]);
    free(report->notes);
    for (size_t k = 0; k < report->n_params; k++)
        free(report->params[k].values);
    free(report->params);
    free(report->evals);
    free(report->errmsg);
    free(report->title);
    free(report->source);
    free(report->device);
    free(report->strategy);
    cutune__report_cache_free(report->cache);
    free(report);
}
