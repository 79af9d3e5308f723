/* T1 ConfigurationSpace: tuning parameters, their values and Defaults,
 * the conditions, and the search space built from them. */
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
#include "util.h"

/* ------------------------------------------------------------------ */
/* ConfigurationSpace                                                  */

static cutune_status value_from_json(cutune_problem *p, json_t *j,
                                     const char *field, cutune__value *out)
{
    memset(out, 0, sizeof *out);
    if (json_is_integer(j)) {
        out->type = CUTUNE__V_INT;
        out->u.i = json_integer_value(j);
    } else if (json_is_real(j)) {
        out->type = CUTUNE__V_FLOAT;
        out->u.f = json_real_value(j);
    } else if (json_is_boolean(j)) {
        out->type = CUTUNE__V_BOOL;
        out->u.i = json_is_true(j);
    } else if (json_is_string(j)) {
        out->type = CUTUNE__V_STR;
        out->u.s = strdup(json_string_value(j));
        if (!out->u.s)
            return cutune__t1_fail(p, CUTUNE_ERR_NO_MEMORY, "out of memory");
    } else {
        return cutune__t1_fail(p, CUTUNE_ERR_PARSE,
                               "%s: expected a number or a string", field);
    }
    return CUTUNE_OK;
}

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

/* Parameter i's Default, as an index into its Values (0 when absent). */
static cutune_status parse_default(cutune_problem *p, json_t *jp,
                                   const char *field, const char *name,
                                   size_t i)
{
    const cutune__value *items = p->param_values[i];
    size_t n = p->param_value_counts[i];
    cutune_status st;
    p->default_values[i] = 0;
    json_t *jd = json_object_get(jp, "Default");
    /* Some published files wrap the default in a one-element list. */
    if (json_is_array(jd) && json_array_size(jd) == 1)
        jd = json_array_get(jd, 0);
    if (jd && !json_is_null(jd)) {
        char dfield[128];
        snprintf(dfield, sizeof dfield, "%s.Default", field);
        cutune__value d;
        st = value_from_json(p, jd, dfield, &d);
        if (st)
            return st;
        size_t found = CUTUNE__NONE;
        for (size_t k = 0; k < n && found == CUTUNE__NONE; k++)
            if (cutune__value_equal(&d, &items[k]))
                found = k;
        /* A Default outside the Values is common in published files (the
         * convolution file's block_size_y, hotspot's max_tfactor): the
         * nearest value stands in, and the user is told. */
        if (found == CUTUNE__NONE) {
            found = nearest_value(&d, items, n);
            char *text = cutune__value_to_text(&d);
            cutune__t1_warn(p,
                            "%s (%s): %s is not among its Values; using "
                            "%s",
                            dfield, name, text ? text : "?",
                            p->value_texts[i][found]);
            free(text);
        }
        cutune__value_clear(&d);
        p->default_values[i] = found;
    }
    return CUTUNE_OK;
}

static cutune_status parse_param(cutune_problem *p, json_t *jp, size_t i)
{
    char field[96];
    static const char *const known[] = {"Name", "Type", "Values", "Default",
                                        NULL};
    snprintf(field, sizeof field, "ConfigurationSpace.TuningParameters[%zu]",
             i);
    if (!json_is_object(jp))
        return cutune__t1_fail(p, CUTUNE_ERR_PARSE, "%s: expected an object",
                               field);
    cutune_status st = cutune__t1_check_known(p, jp, field, known);
    if (st)
        return st;
    const char *name = cutune__t1_string(jp, "Name");
    if (!name || !*name)
        return cutune__t1_fail(p, CUTUNE_ERR_PARSE, "%s.Name: missing", field);
    for (size_t k = 0; k < i; k++)
        if (strcmp(p->param_names[k], name) == 0)
            return cutune__t1_fail(p, CUTUNE_ERR_PARSE,
                                   "%s.Name: '%s' is defined twice", field,
                                   name);
    p->param_names[i] = strdup(name);
    if (!p->param_names[i])
        return cutune__t1_fail(p, CUTUNE_ERR_NO_MEMORY, "out of memory");
    /* The Type enum of the T1 schema. Values keep the types their
     * literals have, so the Type itself changes nothing here; an unknown
     * one means a file for a newer format. */
    const char *type = cutune__t1_string(jp, "Type");
    json_t *jt = json_object_get(jp, "Type");
    if (jt && !json_is_null(jt) &&
        (!type || (strcmp(type, "int") != 0 && strcmp(type, "uint") != 0 &&
                   strcmp(type, "float") != 0 && strcmp(type, "bool") != 0 &&
                   strcmp(type, "string") != 0)))
        return cutune__t1_fail(
            p, CUTUNE_ERR_UNSUPPORTED,
            "%s.Type (%s): '%s' is not a parameter type (int, uint, "
            "float, bool, string)",
            field, name, type ? type : "(not a string)");

    /* Values: a JSON array, or a string holding a list expression. */
    json_t *jv = json_object_get(jp, "Values");
    cutune__value list = {0};
    if (json_is_string(jv)) {
        cutune__expr_error xerr;
        if (cutune__expr_eval_const(json_string_value(jv), &list, &xerr) != 0)
            return cutune__t1_fail(
                p, CUTUNE_ERR_PARSE, "%s.Values (%s): %s at column %d ('%s')",
                field, name, xerr.message, xerr.column, xerr.token);
        if (list.type != CUTUNE__V_LIST) {
            cutune__value_clear(&list);
            return cutune__t1_fail(p, CUTUNE_ERR_PARSE,
                                   "%s.Values (%s): not a list", field, name);
        }
    } else if (json_is_array(jv)) {
        size_t n = json_array_size(jv);
        list.type = CUTUNE__V_LIST;
        list.u.list.items = calloc(n ? n : 1, sizeof(cutune__value));
        if (!list.u.list.items)
            return cutune__t1_fail(p, CUTUNE_ERR_NO_MEMORY, "out of memory");
        for (size_t k = 0; k < n; k++) {
            st = value_from_json(p, json_array_get(jv, k), field,
                                 &list.u.list.items[k]);
            list.u.list.n = k + 1;
            if (st) {
                cutune__value_clear(&list);
                return st;
            }
        }
    } else {
        return cutune__t1_fail(p, CUTUNE_ERR_PARSE, "%s.Values (%s): missing",
                               field, name);
    }
    if (list.u.list.n == 0) {
        cutune__value_clear(&list);
        return cutune__t1_fail(p, CUTUNE_ERR_PARSE, "%s.Values (%s): empty",
                               field, name);
    }
    p->param_values[i] = list.u.list.items;
    p->param_value_counts[i] = list.u.list.n;

    p->value_texts[i] = calloc(list.u.list.n, sizeof(char *));
    if (!p->value_texts[i])
        return cutune__t1_fail(p, CUTUNE_ERR_NO_MEMORY, "out of memory");
    for (size_t k = 0; k < list.u.list.n; k++) {
        p->value_texts[i][k] = cutune__value_to_text(&list.u.list.items[k]);
        if (!p->value_texts[i][k])
            return cutune__t1_fail(p, CUTUNE_ERR_NO_MEMORY, "out of memory");
    }

    return parse_default(p, jp, field, name, i);
}

cutune_status cutune__t1_parse_space(cutune_problem *p, json_t *root)
{
    json_t *cs = json_object_get(root, "ConfigurationSpace");
    if (!json_is_object(cs))
        return cutune__t1_fail(p, CUTUNE_ERR_PARSE,
                               "ConfigurationSpace: missing");
    static const char *const known[] = {"TuningParameters", "Conditions",
                                        NULL};
    cutune_status st =
        cutune__t1_check_known(p, cs, "ConfigurationSpace", known);
    if (st)
        return st;
    json_t *tp = json_object_get(cs, "TuningParameters");
    if (!json_is_array(tp) || json_array_size(tp) == 0)
        return cutune__t1_fail(
            p, CUTUNE_ERR_PARSE,
            "ConfigurationSpace.TuningParameters: missing or empty");
    size_t n = json_array_size(tp);
    p->param_names = calloc(n, sizeof(char *));
    p->param_values = calloc(n, sizeof(cutune__value *));
    p->param_value_counts = calloc(n, sizeof(size_t));
    p->value_texts = calloc(n, sizeof(char **));
    p->default_values = calloc(n, sizeof(size_t));
    if (!p->param_names || !p->param_values || !p->param_value_counts ||
        !p->value_texts || !p->default_values)
        return cutune__t1_fail(p, CUTUNE_ERR_NO_MEMORY, "out of memory");
    for (size_t i = 0; i < n; i++) {
        p->n_params = i + 1;
        st = parse_param(p, json_array_get(tp, i), i);
        if (st)
            return st;
    }

    json_t *cj = json_object_get(cs, "Conditions");
    size_t nc = json_is_array(cj) ? json_array_size(cj) : 0;
    if (cj && !json_is_null(cj) && !json_is_array(cj))
        return cutune__t1_fail(
            p, CUTUNE_ERR_PARSE,
            "ConfigurationSpace.Conditions: expected an array");
    p->conditions = calloc(nc ? nc : 1, sizeof(cutune__expr *));
    if (!p->conditions)
        return cutune__t1_fail(p, CUTUNE_ERR_NO_MEMORY, "out of memory");
    for (size_t i = 0; i < nc; i++) {
        char field[96];
        snprintf(field, sizeof field,
                 "ConfigurationSpace.Conditions[%zu].Expression", i);
        json_t *c = json_array_get(cj, i);
        json_t *ex =
            json_is_object(c) ? json_object_get(c, "Expression") : NULL;
        if (!json_is_string(ex))
            return cutune__t1_fail(p, CUTUNE_ERR_PARSE, "%s: missing", field);
        static const char *const cknown[] = {"Expression", "Parameters", NULL};
        char cfield[96];
        snprintf(cfield, sizeof cfield, "ConfigurationSpace.Conditions[%zu]",
                 i);
        if ((st = cutune__t1_check_known(p, c, cfield, cknown)))
            return st;
        /* The space finds the names an expression reads by itself; a
         * Parameters list naming something else is still a mistake in the
         * file, and would be one for every other T1 reader. */
        json_t *names = json_object_get(c, "Parameters");
        size_t k;
        json_t *nj;
        if (names && !json_is_null(names) && !json_is_array(names))
            return cutune__t1_fail(p, CUTUNE_ERR_PARSE,
                                   "%s.Parameters: expected an "
                                   "array of parameter names",
                                   cfield);
        json_array_foreach(names, k, nj)
        {
            if (!json_is_string(nj) ||
                cutune__problem_find_param(p, json_string_value(nj)) ==
                    CUTUNE__NONE)
                return cutune__t1_fail(p, CUTUNE_ERR_PARSE,
                                       "%s.Parameters[%zu]: '%s' "
                                       "is not a tuning parameter",
                                       cfield, k,
                                       json_is_string(nj)
                                           ? json_string_value(nj)
                                           : "(not a string)");
        }
        p->conditions[i] = cutune__t1_parse_field(p, ex, field, &st);
        if (!p->conditions[i])
            return st;
        p->n_conditions = i + 1;
    }
    return CUTUNE_OK;
}

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

/* The Defaults together may break a condition: the tune then starts from
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
    char a[512], b[512];
    if (!want)
        return;
    for (size_t i = 0; i < p->n_params; i++)
        want[i] = (uint32_t)p->default_values[i];
    cutune__t1_config_text(p, want, a, sizeof a);
    cutune__t1_config_text(p, got, b, sizeof b);
    free(want);
    cutune__t1_warn(p,
                    "ConfigurationSpace: the Default configuration (%s) "
                    "breaks the conditions; starting from the nearest valid "
                    "one (%s)",
                    a, b);
}

cutune_status cutune__t1_build_space(cutune_problem *p)
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
    if (!p->space) {
        if (serr.condition != CUTUNE__NONE && serr.expr.column > 0)
            return cutune__t1_fail(
                p, CUTUNE_ERR_PARSE,
                "ConfigurationSpace.Conditions[%zu].Expression: %s, "
                "at column %d ('%s')",
                serr.condition, serr.message, serr.expr.column,
                serr.expr.token);
        if (serr.condition != CUTUNE__NONE)
            return cutune__t1_fail(
                p, CUTUNE_ERR_PARSE,
                "ConfigurationSpace.Conditions[%zu].Expression: %s",
                serr.condition, serr.message);
        return cutune__t1_fail(p, CUTUNE_ERR_PARSE, "ConfigurationSpace: %s",
                               serr.message);
    }
    if (cutune__space_size(p->space) == 0)
        return cutune__t1_fail(
            p, CUTUNE_ERR_EMPTY_SPACE,
            "ConfigurationSpace: no configuration satisfies the "
            "conditions");
    warn_invalid_default(p);
    return CUTUNE_OK;
}
