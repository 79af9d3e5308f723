/* The T1 reader's shared pieces (see t1_read.h). */
#define _XOPEN_SOURCE 700

#include "t1_read.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "expr/none.h"
#include "kernel_source.h"
#include "problem_spec.h"
#include "util.h"

/* ------------------------------------------------------------------ */
/* Error reporting                                                     */

cutune_status cutune__t1_fail(cutune_problem *p, cutune_status st,
                              const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    st = cutune__vfail(&p->errmsg, st, p->origin, fmt, ap);
    va_end(ap);
    return st;
}

/* ------------------------------------------------------------------ */
/* Evaluating expressions against the problem                          */

/* ProblemSize of one configuration as a list of ints (malloc'ed), where a
 * dimension varies; NULL with a message outside a configuration, where
 * it has no value. */
static cutune__value *varying_size(const cutune_problem *p,
                                   const uint32_t *config, char *err,
                                   size_t errlen)
{
    if (!config) {
        char field[64];
        snprintf(err, errlen,
                 "ProblemSize varies with the configuration "
                 "(%s names tunable parameters) and has no value here",
                 cutune__problem_field(p, CUTUNE__F_PROBLEM_SIZE, 0, 0, field,
                                       sizeof field));
        return NULL;
    }
    size_t n = p->n_problem_size;
    long long *dims = calloc(n ? n : 1, sizeof *dims);
    cutune__value *items = calloc(n ? n : 1, sizeof *items);
    if (!dims || !items) {
        snprintf(err, errlen, "out of memory");
    } else if (cutune__problem_size_at(p, config, dims, err, errlen) == 0) {
        for (size_t d = 0; d < n; d++) {
            items[d].type = CUTUNE__V_INT;
            items[d].u.i = dims[d];
        }
        free(dims);
        return items;
    }
    free(dims);
    free(items);
    return NULL;
}

int cutune__problem_size_at(const cutune_problem *p, const uint32_t *config,
                            long long *out, char *err, size_t errlen)
{
    for (size_t d = 0; d < p->n_problem_size; d++) {
        const cutune__expr *e =
            p->problem_size_exprs ? p->problem_size_exprs[d] : NULL;
        char why[256];
        out[d] = p->problem_size[d];
        if (!e)
            continue;
        char field[64];
        cutune__problem_field(p, CUTUNE__F_SIZE_AT, d, 0, field, sizeof field);
        if (cutune__t1_eval_int(p, e, config, &out[d], why, sizeof why)) {
            snprintf(err, errlen, "%s: %s", field, why);
            return -1;
        }
        if (out[d] <= 0) {
            snprintf(err, errlen, "%s: '%s' is %lld, not a positive size",
                     field, cutune__expr_text(e), out[d]);
            return -1;
        }
    }
    return 0;
}

/* Binds each free name of `e`: a parameter to its value in `config`, or,
 * when config is NULL, to the list of all its values (T1 sizes such as
 * max(filter_width) read parameters that way); ProblemSize to the problem
 * size. The bound values are views into the problem, never freed here. */
int cutune__t1_eval_in(const cutune_problem *p, const cutune__expr *e,
                       const uint32_t *config, cutune__value *out, char *err,
                       size_t errlen)
{
    size_t n = cutune__expr_name_count(e);
    cutune__value *vars = calloc(n ? n : 1, sizeof *vars);
    if (!vars) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    cutune__value *sizes = NULL;
    for (size_t i = 0; i < n; i++) {
        const char *name = cutune__expr_name(e, i);
        size_t param = cutune__problem_find_param(p, name);
        if (strcmp(name, "ProblemSize") == 0 && p->problem_size_exprs) {
            if (!sizes && !(sizes = varying_size(p, config, err, errlen))) {
                free(vars);
                return -1;
            }
            vars[i].type = CUTUNE__V_LIST;
            vars[i].u.list.items = sizes;
            vars[i].u.list.n = p->n_problem_size;
        } else if (strcmp(name, "ProblemSize") == 0) {
            vars[i] = p->problem_size_value;
        } else if (param != CUTUNE__NONE && config) {
            vars[i] = p->param_values[param][config[param]];
        } else if (param != CUTUNE__NONE) {
            vars[i].type = CUTUNE__V_LIST;
            vars[i].u.list.items = p->param_values[param];
            vars[i].u.list.n = p->param_value_counts[param];
        } else {
            snprintf(err, errlen, "'%s' names no parameter", name);
            free(vars);
            free(sizes);
            return -1;
        }
    }
    cutune__expr_error xerr;
    int rc = cutune__expr_eval(e, vars, out, &xerr);
    free(vars);
    free(sizes);
    if (rc != 0)
        snprintf(err, errlen, "%s at column %d ('%s')", xerr.message,
                 xerr.column, xerr.token);
    return rc;
}

int cutune__t1_as_i64(const cutune__value *v, long long *out)
{
    if (v->type == CUTUNE__V_INT || v->type == CUTUNE__V_BOOL) {
        *out = v->u.i;
        return 0;
    }
    if (v->type == CUTUNE__V_FLOAT && isfinite(v->u.f) &&
        v->u.f == floor(v->u.f) && fabs(v->u.f) < 9.0e18) {
        *out = (long long)v->u.f;
        return 0;
    }
    return -1;
}

int cutune__t1_as_double(const cutune__value *v, double *out)
{
    if (v->type == CUTUNE__V_INT || v->type == CUTUNE__V_BOOL) {
        *out = (double)v->u.i;
        return 0;
    }
    if (v->type == CUTUNE__V_FLOAT) {
        *out = v->u.f;
        return 0;
    }
    return -1;
}

/* Evaluates an integer expression; for sizes and geometry. */
int cutune__t1_eval_int(const cutune_problem *p, const cutune__expr *e,
                        const uint32_t *config, long long *out, char *err,
                        size_t errlen)
{
    cutune__value v;
    if (cutune__t1_eval_in(p, e, config, &v, err, errlen) != 0)
        return -1;
    int rc = cutune__t1_as_i64(&v, out);
    if (rc != 0)
        snprintf(err, errlen, "'%s' is not an integer", cutune__expr_text(e));
    cutune__value_clear(&v);
    return rc;
}

/* ------------------------------------------------------------------ */
/* JSON helpers                                                        */

/* A JSON scalar or an expression string as expression text. JSON
 * numbers become their literal text, so every size and value field may be
 * written either way. */
const char *cutune__t1_field_text(cutune_problem *p, cutune__t1_draft *d,
                                  json_t *j, const char *field,
                                  cutune_status *st)
{
    char *text;
    if (json_is_string(j))
        return json_string_value(j);
    if (json_is_integer(j))
        text = cutune__strdup_printf("%" JSON_INTEGER_FORMAT,
                                     json_integer_value(j));
    else if (json_is_real(j))
        text = cutune__strdup_printf("%.17g", json_real_value(j));
    else {
        *st = cutune__t1_fail(p, CUTUNE_ERR_PARSE,
                              "%s: expected a number or an expression string",
                              field);
        return NULL;
    }
    if (!cutune__t1_keep(p, d, text)) {
        *st = CUTUNE_ERR_NO_MEMORY;
        return NULL;
    }
    return text;
}

cutune_status cutune__t1_eval_field(cutune_problem *p, cutune__t1_draft *d,
                                    json_t *j, const char *field,
                                    cutune__value *out)
{
    cutune_status st = CUTUNE_OK;
    const char *text = cutune__t1_field_text(p, d, j, field, &st);
    cutune__expr *e = text ? cutune__problem_parse(p, text, field, &st) : NULL;
    if (!e)
        return st;
    char err[256];
    int rc = cutune__spec_eval(&d->spec, d->opt, e, out, err, sizeof err);
    cutune__expr_free(e);
    return rc ? cutune__t1_fail(p, CUTUNE_ERR_PARSE, "%s: %s", field, err)
              : CUTUNE_OK;
}

/* ------------------------------------------------------------------ */
/* The draft's memory                                                  */

void *cutune__t1_keep(cutune_problem *p, cutune__t1_draft *d, void *ptr)
{
    void **more =
        ptr ? realloc(d->owned, (d->n_owned + 1) * sizeof *more) : NULL;
    if (!more) {
        free(ptr);
        cutune__t1_fail(p, CUTUNE_ERR_NO_MEMORY, "out of memory");
        return NULL;
    }
    d->owned = more;
    d->owned[d->n_owned++] = ptr;
    return ptr;
}

void *cutune__t1_alloc(cutune_problem *p, cutune__t1_draft *d, size_t n,
                       size_t size)
{
    return cutune__t1_keep(p, d, calloc(n ? n : 1, size));
}

void cutune__t1_draft_free(cutune__t1_draft *d)
{
    for (size_t i = 0; i < d->n_owned; i++)
        free(d->owned[i]);
    free(d->owned);
    for (size_t i = 0; i < d->n_lists; i++)
        cutune__value_clear(&d->lists[i]);
    free(d->lists);
    free(d->source_hash);
}

const char *cutune__t1_string(json_t *obj, const char *key)
{
    json_t *v = json_object_get(obj, key);
    return json_is_string(v) ? json_string_value(v) : NULL;
}

/* Adds a warning unless the same text was given already: a field
 * repeated in every argument is reported once. */
void cutune__t1_warn(cutune_problem *p, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    /* The built-in templates are cutune's own: what they carry for other
     * T1 readers is not the user's to fix. */
    if (p->builtin)
        return;
    for (size_t i = 0; i < p->n_warnings; i++)
        if (strcmp(p->warnings[i], buf) == 0)
            return;
    char **more = realloc(p->warnings, (p->n_warnings + 1) * sizeof *more);
    if (!more)
        return;
    p->warnings = more;
    if ((p->warnings[p->n_warnings] = strdup(buf)))
        p->n_warnings++;
}

/* "KernelSpecification.Arguments[3]" -> "KernelSpecification.Arguments[]",
 * so that a field is named once for every element of a list. */
static void generic_section(const char *section, char *out, size_t outlen)
{
    size_t k = 0;
    for (const char *c = section; *c && k + 1 < outlen; c++) {
        out[k++] = *c;
        if (*c == '[')
            while (c[1] >= '0' && c[1] <= '9')
                c++;
    }
    out[k] = '\0';
}

/* Fields of the T1 schema (or of files people publish) that cutune reads
 * but does not act on, with the reason a user would want to know. */
static const struct {
    const char *section;
    const char *key;
    const char *why;
} ignored_fields[] = {
    {"(top level)", "BenchmarkConfig",
     "cutune sets its own repetitions "
     "and limits; see tune --help"},
    {"General", "FormatVersion", "any 1.x file is read"},
    {"General", "LoggingLevel", "use tune --verbose"},
    {"General", "TimeUnit", "cutune reports milliseconds"},
    {"General", "OutputFile", "use tune --output"},
    {"General", "OutputFormat", "T4 output is JSON"},
    {"KernelSpecification", "Device", "use --device"},
    {"KernelSpecification", "Profiling", "use cutune explain"},
    {"KernelSpecification", "Stream",
     "every launch uses the default "
     "stream"},
    {"KernelSpecification", "Misc", "tool-specific settings"},
    {"KernelSpecification.Arguments[]", "AccessType",
     "the arguments "
     "marked Output are the ones validated"},
    {"KernelSpecification.ReferenceArguments[]", "AccessType",
     "not needed "
     "for a reference"},
    {"KernelSpecification.ReferenceArguments[]", "MemoryType",
     "a "
     "reference takes its target's"},
};

/* Checks the keys of a section: the honoured ones (`known`) pass, the
 * ignored ones are reported once as ignored, and anything else is named
 * as outside the schema. None is refused: T1 allows any key, and files
 * in the wild carry their tools' own. */
cutune_status cutune__t1_check_known(cutune_problem *p, json_t *obj,
                                     const char *section,
                                     const char *const *known)
{
    const char *key;
    json_t *val;
    char generic[128];
    generic_section(section, generic, sizeof generic);
    json_object_foreach(obj, key, val)
    {
        int found = 0;
        for (size_t i = 0; known[i] && !found; i++)
            found = strcmp(key, known[i]) == 0;
        /* T1 writes absent optional things as null. */
        if (found || json_is_null(val))
            continue;
        const char *why = NULL;
        for (size_t i = 0;
             i < sizeof ignored_fields / sizeof *ignored_fields && !why; i++)
            if (strcmp(ignored_fields[i].section, generic) == 0 &&
                strcmp(ignored_fields[i].key, key) == 0)
                why = ignored_fields[i].why;
        if (why)
            cutune__t1_warn(p, "%s.%s: accepted and ignored (%s)", generic,
                            key, why);
        else
            cutune__t1_warn(p, "%s.%s: not a field cutune knows; ignored",
                            generic, key);
    }
    return CUTUNE_OK;
}

/* A field that is present with the wrong JSON type: named as such, not
 * as missing. */
const char *cutune__t1_json_kind(const json_t *j)
{
    switch (json_typeof(j)) {
    case JSON_OBJECT: return "an object";
    case JSON_ARRAY: return "a list";
    case JSON_STRING: return "a string";
    case JSON_INTEGER:
    case JSON_REAL: return "a number";
    case JSON_TRUE:
    case JSON_FALSE: return "a boolean";
    default: return "null";
    }
}

/* A required string field: missing, or of the wrong type, each said as
 * such. NULL after cutune__t1_fail() has set the message. */
const char *cutune__t1_need_string(cutune_problem *p, json_t *obj,
                                   const char *field, const char *key,
                                   cutune_status *st)
{
    json_t *v = json_object_get(obj, key);
    if (!v || json_is_null(v)) {
        *st =
            cutune__t1_fail(p, CUTUNE_ERR_PARSE, "%s.%s: missing", field, key);
        return NULL;
    }
    if (!json_is_string(v)) {
        *st = cutune__t1_fail(p, CUTUNE_ERR_PARSE,
                              "%s.%s: expected a string, found "
                              "%s",
                              field, key, cutune__t1_json_kind(v));
        return NULL;
    }
    return json_string_value(v);
}

cutune_status cutune__t1_read_file(cutune_problem *p, const char *path,
                                   char **data, size_t *len, const char *field)
{
    char err[512];
    if (cutune__read_regular_file(path, CUTUNE__MAX_DATA_BYTES, data, len, err,
                                  sizeof err) != 0)
        return cutune__t1_fail(p, CUTUNE_ERR_IO, "%s: %s", field, err);
    return CUTUNE_OK;
}
