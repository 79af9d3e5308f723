/* The one constructor of a problem: a cutune_problem_spec (from a
 * program, or from the T1 reader, which reads a file into one) made into
 * a cutune_problem and its search space. This file holds the public entry,
 * the names messages give the fields, and the space (problem size,
 * tunables, conditions); problem_spec_kernel.c the kernel's part (source,
 * launch geometry, arguments, answers).
 *
 * Both users get the same checks and the same messages, worded with the
 * field names of what they wrote: a T1 file's "ConfigurationSpace.
 * TuningParameters[1]", a spec's "tune_params[1]".
 */
#define _XOPEN_SOURCE 700

#include "problem_spec.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expr/none.h"
#include "t1_read.h"
#include "util.h"

/* ------------------------------------------------------------------ */
/* Field names                                                         */

const char *cutune__problem_member(const cutune_problem *p, const char *t1,
                                   const char *spec)
{
    return p->spec_names ? spec : t1;
}

const char *cutune__problem_field(const cutune_problem *p, cutune__field f,
                                  size_t i, size_t k, char *out, size_t len)
{
    static const char upper[3] = {'X', 'Y', 'Z'}, lower[3] = {'x', 'y', 'z'};
    const int s = p->spec_names;
    const size_t d = i < 3 ? i : 0;
    switch (f) {
    case CUTUNE__F_PARAM:
        snprintf(out, len,
                 s ? "tune_params[%zu]"
                   : "ConfigurationSpace.TuningParameters[%zu]",
                 i);
        break;
    case CUTUNE__F_PARAMS:
        snprintf(out, len, "%s", s ? "tune_params" : "ConfigurationSpace");
        break;
    case CUTUNE__F_CONDITION:
        snprintf(out, len,
                 s ? "restrictions[%zu]"
                   : "ConfigurationSpace.Conditions[%zu].Expression",
                 i);
        break;
    case CUTUNE__F_PROBLEM_SIZE:
        snprintf(out, len, "%s",
                 s ? "problem_size" : "KernelSpecification.ProblemSize");
        break;
    case CUTUNE__F_SIZE_AT:
        snprintf(out, len,
                 s ? "problem_size[%zu]"
                   : "KernelSpecification.ProblemSize[%zu]",
                 i);
        break;
    case CUTUNE__F_LOCAL:
        if (s)
            snprintf(out, len, "block_size[%zu]", d);
        else
            snprintf(out, len, "KernelSpecification.LocalSize.%c", upper[d]);
        break;
    case CUTUNE__F_GLOBAL:
        if (s)
            snprintf(out, len, "global_size[%zu]", d);
        else
            snprintf(out, len, "KernelSpecification.GlobalSize.%c", upper[d]);
        break;
    case CUTUNE__F_GRID_DIV:
        if (s)
            snprintf(out, len, "grid_div_%c[%zu]", lower[d], k);
        else
            snprintf(out, len, "KernelSpecification.GridDiv%c[%zu]", upper[d],
                     k);
        break;
    case CUTUNE__F_BYTES:
        snprintf(out, len, "%s",
                 s ? "bytes_per_launch" : "CutuneExtensions.BytesPerLaunch");
        break;
    case CUTUNE__F_FLOPS:
        snprintf(out, len, "%s",
                 s ? "flops_per_launch" : "CutuneExtensions.FlopsPerLaunch");
        break;
    case CUTUNE__F_ARG:
        snprintf(out, len,
                 s ? "arguments[%zu]" : "KernelSpecification.Arguments[%zu]",
                 i);
        break;
    case CUTUNE__F_ANSWER:
        snprintf(out, len,
                 s ? "answers[%zu]"
                   : "KernelSpecification.ReferenceArguments[%zu]",
                 i);
        break;
    }
    return out;
}

/* ------------------------------------------------------------------ */
/* Values and expressions                                              */

/* A public value as the expression language's, borrowing its string
 * (the result is a view: never cleared). */
static int value_view(const cutune_value *v, cutune__value *out)
{
    memset(out, 0, sizeof *out);
    switch (v->type) {
    case CUTUNE_VALUE_INT:
        out->type = CUTUNE__V_INT;
        out->u.i = v->i;
        return 0;
    case CUTUNE_VALUE_FLOAT:
        out->type = CUTUNE__V_FLOAT;
        out->u.f = v->f;
        return isfinite(v->f) ? 0 : -1;
    case CUTUNE_VALUE_BOOL:
        out->type = CUTUNE__V_BOOL;
        out->u.i = v->i != 0;
        return 0;
    case CUTUNE_VALUE_STRING:
        out->type = CUTUNE__V_STR;
        out->u.s = (char *)v->s;
        return v->s ? 0 : -1;
    }
    return -1;
}

cutune__expr *cutune__problem_parse(cutune_problem *p, const char *text,
                                    const char *field, cutune_status *st)
{
    if (!text) {
        *st = cutune__t1_fail(p, CUTUNE_ERR_INVALID_ARGUMENT, "%s: missing",
                              field);
        return NULL;
    }
    cutune__expr_error xerr;
    cutune__expr *e = cutune__expr_parse(text, 0, &xerr);
    if (!e)
        *st = cutune__t1_fail(p, CUTUNE_ERR_PARSE,
                              "%s: %s at column %d ('%s') in \"%s\"", field,
                              xerr.message, xerr.column, xerr.token, text);
    return e;
}

cutune_status cutune__problem_check_names(cutune_problem *p,
                                          const cutune__expr *e,
                                          const char *field)
{
    for (size_t i = 0; i < cutune__expr_name_count(e); i++) {
        const char *name = cutune__expr_name(e, i);
        if (cutune__problem_find_param(p, name) == CUTUNE__NONE)
            return cutune__t1_fail(p, CUTUNE_ERR_PARSE,
                                   "%s: '%s' is not a "
                                   "tuning parameter",
                                   field, name);
    }
    return CUTUNE_OK;
}

/* The problem size the options or the spec give, dimension d; 0 where
 * the spec's varies. */
static long long spec_size(const cutune_problem_spec *spec,
                           const cutune_problem_options *opt, size_t d)
{
    if (opt && opt->n_problem_size > 0)
        return opt->problem_size[d];
    if (spec->problem_size_expr && spec->problem_size_expr[d])
        return 0;
    return spec->problem_size ? spec->problem_size[d] : 0;
}

int cutune__spec_eval(const cutune_problem_spec *spec,
                      const cutune_problem_options *opt, const cutune__expr *e,
                      cutune__value *out, char *err, size_t errlen)
{
    size_t n = cutune__expr_name_count(e);
    size_t dims = opt && opt->n_problem_size > 0 ? opt->n_problem_size
                                                 : spec->n_problem_size;
    cutune__value *vars = calloc(n ? n : 1, sizeof *vars);
    cutune__value *sizes = calloc(dims ? dims : 1, sizeof *sizes);
    cutune__value **lists = calloc(n ? n : 1, sizeof *lists);
    int rc = -1;
    if (!vars || !sizes || !lists) {
        snprintf(err, errlen, "out of memory");
        goto done;
    }
    for (size_t d = 0; d < dims; d++) {
        sizes[d].type = CUTUNE__V_INT;
        sizes[d].u.i = spec_size(spec, opt, d);
    }
    for (size_t i = 0; i < n; i++) {
        const char *name = cutune__expr_name(e, i);
        const cutune_tunable *t = NULL;
        for (size_t k = 0; k < spec->n_tune_params && !t; k++)
            if (spec->tune_params[k].name &&
                strcmp(spec->tune_params[k].name, name) == 0)
                t = &spec->tune_params[k];
        if (strcmp(name, "ProblemSize") == 0) {
            for (size_t d = 0; d < dims; d++)
                if (sizes[d].u.i <= 0) {
                    snprintf(err, errlen,
                             "ProblemSize varies with the configuration "
                             "(KernelSpecification.ProblemSize names "
                             "tunable parameters) and has no value here");
                    goto done;
                }
            vars[i].type = CUTUNE__V_LIST;
            vars[i].u.list.items = sizes;
            vars[i].u.list.n = dims;
        } else if (t) {
            lists[i] = calloc(t->n_values ? t->n_values : 1, sizeof **lists);
            if (!lists[i]) {
                snprintf(err, errlen, "out of memory");
                goto done;
            }
            for (size_t v = 0; v < t->n_values; v++)
                value_view(&t->values[v], &lists[i][v]);
            vars[i].type = CUTUNE__V_LIST;
            vars[i].u.list.items = lists[i];
            vars[i].u.list.n = t->n_values;
        } else {
            snprintf(err, errlen, "'%s' names no parameter", name);
            goto done;
        }
    }
    cutune__expr_error xerr;
    rc = cutune__expr_eval(e, vars, out, &xerr);
    if (rc != 0)
        snprintf(err, errlen, "%s at column %d ('%s')", xerr.message,
                 xerr.column, xerr.token);
done:
    for (size_t i = 0; lists && i < n; i++)
        free(lists[i]);
    free(lists);
    free(sizes);
    free(vars);
    return rc;
}

/* ------------------------------------------------------------------ */
/* The problem size                                                    */

static cutune_status size_entry(cutune_problem *p,
                                const cutune_problem_spec *spec, size_t d)
{
    char field[64];
    cutune__problem_field(p, CUTUNE__F_SIZE_AT, d, 0, field, sizeof field);
    const char *text =
        spec->problem_size_expr ? spec->problem_size_expr[d] : NULL;
    if (text) {
        size_t n = p->n_problem_size;
        if (!p->problem_size_exprs && !(p->problem_size_exprs = calloc(
                                            n, sizeof *p->problem_size_exprs)))
            return cutune__t1_fail(p, CUTUNE_ERR_NO_MEMORY, "out of memory");
        cutune_status st = CUTUNE_OK;
        p->problem_size_exprs[d] = cutune__problem_parse(p, text, field, &st);
        p->problem_size[d] = 0;
        return p->problem_size_exprs[d] ? CUTUNE_OK : st;
    }
    if (!spec->problem_size)
        return cutune__t1_fail(p, CUTUNE_ERR_INVALID_ARGUMENT, "%s: missing",
                               field);
    if (spec->problem_size[d] <= 0)
        return cutune__t1_fail(p, CUTUNE_ERR_PARSE,
                               "%s: %lld is not a positive size", field,
                               spec->problem_size[d]);
    p->problem_size[d] = spec->problem_size[d];
    return CUTUNE_OK;
}

cutune_status
cutune__problem_check_size_option(cutune_problem *p,
                                  const cutune_problem_spec *spec,
                                  const cutune_problem_options *opt)
{
    char field[64];
    size_t n = spec->n_problem_size;
    if (!opt || opt->n_problem_size == 0)
        return CUTUNE_OK;
    /* A dimension the kernel has no use for would be cached as a size of
     * its own; fewer are the problem's own business (1 where missing). */
    if (n > 0 && opt->n_problem_size > n)
        return cutune__t1_fail(
            p, CUTUNE_ERR_INVALID_ARGUMENT,
            "a problem size of %zu dimensions where %s has %zu",
            opt->n_problem_size,
            cutune__problem_field(p, CUTUNE__F_PROBLEM_SIZE, 0, 0, field,
                                  sizeof field),
            n);
    if (!opt->problem_size)
        return cutune__t1_fail(p, CUTUNE_ERR_INVALID_ARGUMENT,
                               "options: problem_size is NULL with "
                               "n_problem_size %zu",
                               opt->n_problem_size);
    for (size_t i = 0; i < opt->n_problem_size; i++)
        if (opt->problem_size[i] <= 0)
            return cutune__t1_fail(p, CUTUNE_ERR_INVALID_ARGUMENT,
                                   "problem size %lld in dimension %zu: "
                                   "must be positive",
                                   opt->problem_size[i], i);
    return CUTUNE_OK;
}

static cutune_status build_problem_size(cutune_problem *p,
                                        const cutune_problem_spec *spec,
                                        const cutune_problem_options *opt)
{
    size_t n = spec->n_problem_size;
    int given = opt && opt->n_problem_size > 0;
    cutune_status st = cutune__problem_check_size_option(p, spec, opt);
    if (st)
        return st;
    if (given)
        n = opt->n_problem_size;
    p->n_problem_size = n;
    p->problem_size = calloc(n ? n : 1, sizeof(long long));
    p->problem_size_value.type = CUTUNE__V_LIST;
    p->problem_size_value.u.list.items =
        calloc(n ? n : 1, sizeof(cutune__value));
    if (!p->problem_size || !p->problem_size_value.u.list.items)
        st = cutune__t1_fail(p, CUTUNE_ERR_NO_MEMORY, "out of memory");
    for (size_t i = 0; i < n && !st; i++) {
        if (given)
            p->problem_size[i] = opt->problem_size[i];
        else
            st = size_entry(p, spec, i);
        p->problem_size_value.u.list.items[i].type = CUTUNE__V_INT;
        p->problem_size_value.u.list.items[i].u.i = p->problem_size[i];
    }
    p->problem_size_value.u.list.n = n;
    return st;
}

/* ------------------------------------------------------------------ */
/* Tunables                                                            */

/* The value nearest to d where both are numbers; else the first. */
static size_t nearest_value(const cutune__value *d, const cutune__value *v,
                            size_t n)
{
    double x, best_gap = INFINITY;
    size_t best = 0;
    if (cutune__t1_as_double(d, &x) != 0)
        return 0;
    for (size_t k = 0; k < n; k++) {
        double y;
        if (cutune__t1_as_double(&v[k], &y) == 0 && fabs(y - x) < best_gap) {
            best_gap = fabs(y - x);
            best = k;
        }
    }
    return best;
}

/* Tunable i's default, as an index into its values (0 when none). A
 * default outside the values is common in published T1 files (the
 * convolution file's block_size_y, hotspot's max_tfactor): the nearest
 * value stands in, and the user is told. */
static cutune_status param_default(cutune_problem *p, const cutune_tunable *t,
                                   const char *field, size_t i)
{
    p->default_values[i] = 0;
    if (!t->default_value)
        return CUTUNE_OK;
    char dfield[128];
    snprintf(dfield, sizeof dfield, "%s.%s", field,
             cutune__problem_member(p, "Default", "default_value"));
    cutune__value d;
    if (value_view(t->default_value, &d) != 0)
        return cutune__t1_fail(p, CUTUNE_ERR_INVALID_ARGUMENT,
                               "%s (%s): not a value (a finite number, a "
                               "bool or a string)",
                               dfield, t->name);
    const cutune__value *items = p->param_values[i];
    size_t n = p->param_value_counts[i], found = CUTUNE__NONE;
    for (size_t k = 0; k < n && found == CUTUNE__NONE; k++)
        if (cutune__value_equal(&d, &items[k]))
            found = k;
    if (found == CUTUNE__NONE) {
        found = nearest_value(&d, items, n);
        char *text = cutune__value_to_text(&d);
        cutune__t1_warn(p, "%s (%s): %s is not among its %s; using %s", dfield,
                        t->name, text ? text : "?",
                        cutune__problem_member(p, "Values", "values"),
                        p->value_texts[i][found]);
        free(text);
    }
    p->default_values[i] = found;
    return CUTUNE_OK;
}

static cutune_status build_param(cutune_problem *p, const cutune_tunable *t,
                                 size_t i)
{
    char field[96];
    cutune__problem_field(p, CUTUNE__F_PARAM, i, 0, field, sizeof field);
    const char *values = cutune__problem_member(p, "Values", "values");
    if (!t->name || !*t->name)
        return cutune__t1_fail(p, CUTUNE_ERR_INVALID_ARGUMENT,
                               "%s.%s: missing", field,
                               cutune__problem_member(p, "Name", "name"));
    for (size_t k = 0; k < i; k++)
        if (strcmp(p->param_names[k], t->name) == 0)
            return cutune__t1_fail(
                p, CUTUNE_ERR_PARSE, "%s.%s: '%s' is defined twice", field,
                cutune__problem_member(p, "Name", "name"), t->name);
    if (!(p->param_names[i] = strdup(t->name)))
        return cutune__t1_fail(p, CUTUNE_ERR_NO_MEMORY, "out of memory");
    if (!t->values || t->n_values == 0)
        return cutune__t1_fail(p, CUTUNE_ERR_PARSE, "%s.%s (%s): empty", field,
                               values, t->name);
    size_t n = t->n_values;
    p->param_values[i] = calloc(n, sizeof(cutune__value));
    p->param_value_counts[i] = n;
    p->value_texts[i] = calloc(n, sizeof(char *));
    if (!p->param_values[i] || !p->value_texts[i])
        return cutune__t1_fail(p, CUTUNE_ERR_NO_MEMORY, "out of memory");
    for (size_t k = 0; k < n; k++) {
        cutune__value view;
        if (value_view(&t->values[k], &view) != 0)
            return cutune__t1_fail(p, CUTUNE_ERR_INVALID_ARGUMENT,
                                   "%s.%s[%zu] (%s): not a value (a finite "
                                   "number, a bool or a string)",
                                   field, values, k, t->name);
        if (cutune__value_copy(&p->param_values[i][k], &view) != 0 ||
            !(p->value_texts[i][k] = cutune__value_to_text(&view)))
            return cutune__t1_fail(p, CUTUNE_ERR_NO_MEMORY, "out of memory");
        if (t->compiler_option && view.type != CUTUNE__V_STR)
            return cutune__t1_fail(p, CUTUNE_ERR_PARSE,
                                   "%s.compiler_option (%s): the values "
                                   "must be strings (compiler options)",
                                   field, t->name);
    }
    if (t->compiler_option)
        p->param_is_option[i] = 1; /* allocated by build_params */
    return param_default(p, t, field, i);
}

static cutune_status build_params(cutune_problem *p,
                                  const cutune_problem_spec *spec)
{
    size_t n = spec->n_tune_params;
    char field[64];
    if (n == 0 || !spec->tune_params)
        return cutune__t1_fail(p, CUTUNE_ERR_INVALID_ARGUMENT,
                               "%s: none given",
                               cutune__problem_field(p, CUTUNE__F_PARAMS, 0, 0,
                                                     field, sizeof field));
    p->param_names = calloc(n, sizeof(char *));
    p->param_values = calloc(n, sizeof(cutune__value *));
    p->param_value_counts = calloc(n, sizeof(size_t));
    p->value_texts = calloc(n, sizeof(char **));
    p->default_values = calloc(n, sizeof(size_t));
    if (!p->param_names || !p->param_values || !p->param_value_counts ||
        !p->value_texts || !p->default_values)
        return cutune__t1_fail(p, CUTUNE_ERR_NO_MEMORY, "out of memory");
    /* One flag per parameter, all of them: n_params grows as they are
     * built, so the flags cannot be sized by it. */
    for (size_t i = 0; i < n && !p->param_is_option; i++)
        if (spec->tune_params[i].compiler_option &&
            !(p->param_is_option = calloc(n, 1)))
            return cutune__t1_fail(p, CUTUNE_ERR_NO_MEMORY, "out of memory");
    for (size_t i = 0; i < n; i++) {
        p->n_params = i + 1;
        cutune_status st = build_param(p, &spec->tune_params[i], i);
        if (st)
            return st;
    }
    return CUTUNE_OK;
}

static cutune_status build_conditions(cutune_problem *p,
                                      const cutune_problem_spec *spec)
{
    size_t n = spec->n_restrictions;
    if (n && !spec->restrictions)
        return cutune__t1_fail(p, CUTUNE_ERR_INVALID_ARGUMENT,
                               "restrictions: NULL with n_restrictions %zu",
                               n);
    p->conditions = calloc(n ? n : 1, sizeof(cutune__expr *));
    if (!p->conditions)
        return cutune__t1_fail(p, CUTUNE_ERR_NO_MEMORY, "out of memory");
    for (size_t i = 0; i < n; i++) {
        char field[96];
        cutune__problem_field(p, CUTUNE__F_CONDITION, i, 0, field,
                              sizeof field);
        cutune_status st = CUTUNE_OK;
        p->conditions[i] =
            cutune__problem_parse(p, spec->restrictions[i], field, &st);
        if (!p->conditions[i])
            return st;
        p->n_conditions = i + 1;
    }
    return CUTUNE_OK;
}

/* After the tunables: the names in a varying problem size are tunables,
 * and no condition reads a problem size that varies. */
static cutune_status check_problem_size(cutune_problem *p)
{
    char field[96];
    for (size_t d = 0; p->problem_size_exprs && d < p->n_problem_size; d++) {
        cutune__problem_field(p, CUTUNE__F_SIZE_AT, d, 0, field, sizeof field);
        cutune_status st;
        if (p->problem_size_exprs[d] &&
            (st = cutune__problem_check_names(p, p->problem_size_exprs[d],
                                              field)))
            return st;
    }
    char size[64];
    cutune__problem_field(p, CUTUNE__F_PROBLEM_SIZE, 0, 0, size, sizeof size);
    for (size_t c = 0; p->problem_size_exprs && c < p->n_conditions; c++)
        for (size_t i = 0; i < cutune__expr_name_count(p->conditions[c]); i++)
            if (strcmp(cutune__expr_name(p->conditions[c], i),
                       "ProblemSize") == 0)
                return cutune__t1_fail(
                    p, CUTUNE_ERR_UNSUPPORTED,
                    "%s: reads ProblemSize, which varies with the "
                    "configuration here (%s names tunable parameters)",
                    cutune__problem_field(p, CUTUNE__F_CONDITION, c, 0, field,
                                          sizeof field),
                    size);
    return CUTUNE_OK;
}

/* ------------------------------------------------------------------ */
/* The space                                                           */

void cutune__t1_config_text(const cutune_problem *p, const uint32_t *v,
                            char *out, size_t outlen)
{
    size_t used = 0;
    out[0] = '\0';
    for (size_t i = 0; i < p->n_params && used < outlen; i++) {
        int w = snprintf(out + used, outlen - used, "%s%s=%s", i ? ", " : "",
                         p->param_names[i], p->value_texts[i][v[i]]);
        if (w < 0)
            break;
        used += (size_t)w;
    }
}

/* The defaults together may break a condition: the tune then starts from
 * the nearest valid configuration, and says which. */
static void warn_invalid_default(cutune_problem *p)
{
    size_t def = cutune__problem_default_config(p);
    if (def == CUTUNE__NONE)
        return;
    const uint32_t *got = cutune__space_config(p->space, def);
    int same = 1;
    for (size_t i = 0; i < p->n_params; i++)
        same &= got[i] == p->default_values[i];
    if (same)
        return;
    uint32_t *want = malloc(p->n_params * sizeof *want);
    char a[512], b[512], field[64];
    if (!want)
        return;
    for (size_t i = 0; i < p->n_params; i++)
        want[i] = (uint32_t)p->default_values[i];
    cutune__t1_config_text(p, want, a, sizeof a);
    cutune__t1_config_text(p, got, b, sizeof b);
    free(want);
    cutune__t1_warn(
        p,
        "%s: the Default configuration (%s) "
        "breaks the conditions; starting from the nearest valid "
        "one (%s)",
        cutune__problem_field(p, CUTUNE__F_PARAMS, 0, 0, field, sizeof field),
        a, b);
}

static cutune_status build_space(cutune_problem *p)
{
    cutune__param *params = calloc(p->n_params, sizeof *params);
    if (!params)
        return cutune__t1_fail(p, CUTUNE_ERR_NO_MEMORY, "out of memory");
    for (size_t i = 0; i < p->n_params; i++) {
        params[i].name = p->param_names[i];
        params[i].values = p->param_values[i];
        params[i].n_values = p->param_value_counts[i];
    }
    cutune__constant ps = {"ProblemSize", &p->problem_size_value};
    cutune__space_error serr;
    double t0 = cutune__now();
    p->space = cutune__space_create_limited(
        params, p->n_params, (const cutune__expr *const *)p->conditions,
        p->n_conditions, &ps, 1,
        p->max_space_visits ? p->max_space_visits
                            : CUTUNE__SPACE_VISITS_DEFAULT,
        &serr);
    p->space_seconds = cutune__now() - t0;
    free(params);
    char field[96];
    if (!p->space && serr.condition != CUTUNE__NONE) {
        cutune__problem_field(p, CUTUNE__F_CONDITION, serr.condition, 0, field,
                              sizeof field);
        if (serr.expr.column > 0)
            return cutune__t1_fail(
                p, CUTUNE_ERR_PARSE, "%s: %s, at column %d ('%s')", field,
                serr.message, serr.expr.column, serr.expr.token);
        return cutune__t1_fail(p, CUTUNE_ERR_PARSE, "%s: %s", field,
                               serr.message);
    }
    cutune__problem_field(p, CUTUNE__F_PARAMS, 0, 0, field, sizeof field);
    if (!p->space)
        return cutune__t1_fail(p, CUTUNE_ERR_PARSE, "%s: %s", field,
                               serr.message);
    if (cutune__space_size(p->space) == 0)
        return cutune__t1_fail(p, CUTUNE_ERR_EMPTY_SPACE,
                               "%s: no configuration satisfies the "
                               "conditions",
                               field);
    uint32_t *cfg = malloc((p->n_params ? p->n_params : 1) * sizeof *cfg);
    if (!cfg)
        return cutune__t1_fail(p, CUTUNE_ERR_NO_MEMORY, "out of memory");
    for (size_t i = 0; i < p->n_params; i++)
        cfg[i] = (uint32_t)p->default_values[i];
    p->default_config = cutune__space_nearest(p->space, cfg);
    free(cfg);
    warn_invalid_default(p);
    return CUTUNE_OK;
}

/* ------------------------------------------------------------------ */
/* The constructor                                                     */

static cutune_status build_names(cutune_problem *p,
                                 const cutune_problem_spec *spec)
{
    const char *kname = spec->kernel_name ? spec->kernel_name : "";
    if (!*kname && !p->space_only)
        return cutune__t1_fail(
            p, CUTUNE_ERR_INVALID_ARGUMENT, "%s: missing",
            cutune__problem_member(p, "KernelSpecification.KernelName",
                                   "kernel_name"));
    const char *name = spec->name && *spec->name ? spec->name
                       : *kname                  ? kname
                                                 : "unnamed";
    if (!(p->name = strdup(name)) || !(p->kernel_name = strdup(kname)))
        return cutune__t1_fail(p, CUTUNE_ERR_NO_MEMORY, "out of memory");
    if (spec->strategy && !(p->search_strategy = strdup(spec->strategy)))
        return cutune__t1_fail(p, CUTUNE_ERR_NO_MEMORY, "out of memory");
    p->budget_evals = spec->budget_evals;
    p->budget_seconds = spec->budget_seconds;
    p->budget_fraction = spec->budget_fraction;
    p->kernel_tuner_defines = spec->kernel_tuner_defines;
    return CUTUNE_OK;
}

cutune_status cutune__problem_build(cutune_problem *p,
                                    const cutune_problem_spec *spec,
                                    const cutune_problem_options *opt,
                                    const char *source_hash)
{
    cutune_status st;
    if (opt) {
        p->max_space_visits = opt->max_space_visits;
        p->space_only = opt->space_only != 0;
    }
    if ((st = build_names(p, spec)) ||
        (st = build_problem_size(p, spec, opt)) ||
        (st = build_params(p, spec)) || (st = build_conditions(p, spec)) ||
        (st = check_problem_size(p)))
        return st;
    if (p->space_only) {
        /* The geometry where the spec gives a block, though nothing is
         * launched: a simulation starts where a tune would, and an
         * occupancy suggestion is placed by threads per block
         * (search/strategy/seed.h). */
        if ((spec->block_size[0] &&
             (st = cutune__problem_build_geometry(p, spec))) ||
            (st = build_space(p)))
            return st;
        if (source_hash)
            snprintf(p->source_hash, sizeof p->source_hash, "%s", source_hash);
        else if (spec->source)
            snprintf(p->source_hash, sizeof p->source_hash, "%016llx",
                     (unsigned long long)cutune__fnv1a64(
                         spec->source, spec->source_len
                                           ? spec->source_len
                                           : strlen(spec->source)));
        return CUTUNE_OK;
    }
    if ((st = cutune__problem_build_kernel(p, spec, source_hash)) ||
        (st = cutune__problem_build_args(p, spec)) ||
        (st = cutune__problem_build_answers(p, spec)) || (st = build_space(p)))
        return st;
    return cutune__problem_check_geometry(p);
}

/* ------------------------------------------------------------------ */
/* Public API                                                          */

void cutune_problem_spec_init(cutune_problem_spec *spec)
{
    if (!spec)
        return;
    memset(spec, 0, sizeof *spec);
    spec->kernel_tuner_defines = 1;
}

cutune_status cutune_problem_from_spec(const cutune_problem_spec *spec,
                                       const cutune_problem_options *options,
                                       cutune_problem **out)
{
    if (!out)
        return CUTUNE_ERR_INVALID_ARGUMENT;
    cutune_problem *p = calloc(1, sizeof *p);
    *out = p;
    if (!p)
        return CUTUNE_ERR_NO_MEMORY;
    p->spec_names = 1;
    p->origin = strdup("problem spec");
    if (!p->origin)
        return CUTUNE_ERR_NO_MEMORY;
    if (!spec)
        return cutune__t1_fail(p, CUTUNE_ERR_INVALID_ARGUMENT,
                               "no spec given");
    return cutune__problem_build(p, spec, options, NULL);
}

const char *cutune_problem_config_value(const cutune_problem *p, size_t index,
                                        size_t param)
{
    if (!p || !p->space || index >= cutune__space_size(p->space) ||
        param >= p->n_params)
        return NULL;
    return p->value_texts[param][cutune__space_config(p->space, index)[param]];
}
