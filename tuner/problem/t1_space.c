/* T1 ConfigurationSpace: tuning parameters, their values and Defaults,
 * and the conditions, read into the draft's spec (the space is built from
 * it by problem_spec.c). */
#define _XOPEN_SOURCE 700

#include "t1_read.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

/* ------------------------------------------------------------------ */
/* ConfigurationSpace                                                  */

/* A JSON value as a tunable's value; a string is borrowed from the
 * document. */
static cutune_status value_from_json(cutune_problem *p, json_t *j,
                                     const char *field, cutune_value *out)
{
    memset(out, 0, sizeof *out);
    if (json_is_integer(j)) {
        out->type = CUTUNE_VALUE_INT;
        out->i = json_integer_value(j);
    } else if (json_is_real(j)) {
        out->type = CUTUNE_VALUE_FLOAT;
        out->f = json_real_value(j);
    } else if (json_is_boolean(j)) {
        out->type = CUTUNE_VALUE_BOOL;
        out->i = json_is_true(j);
    } else if (json_is_string(j)) {
        out->type = CUTUNE_VALUE_STRING;
        out->s = json_string_value(j);
    } else {
        return cutune__t1_fail(p, CUTUNE_ERR_PARSE,
                               "%s: expected a number or a string", field);
    }
    return CUTUNE_OK;
}

/* Values written as a list expression ("list(range(32, 1025, 32))"),
 * evaluated once; the list stays with the draft, its strings borrowed. */
static cutune_status values_from_expr(cutune_problem *p, cutune__t1_draft *d,
                                      const char *text, const char *field,
                                      cutune_tunable *t)
{
    cutune__value list = {0};
    cutune__expr_error xerr;
    if (cutune__expr_eval_const(text, &list, &xerr) != 0)
        return cutune__t1_fail(p, CUTUNE_ERR_PARSE,
                               "%s.Values (%s): %s at column %d ('%s')", field,
                               t->name, xerr.message, xerr.column, xerr.token);
    cutune__value *more =
        realloc(d->lists, (d->n_lists + 1) * sizeof *d->lists);
    if (!more) {
        cutune__value_clear(&list);
        return cutune__t1_fail(p, CUTUNE_ERR_NO_MEMORY, "out of memory");
    }
    d->lists = more;
    d->lists[d->n_lists++] = list;
    if (list.type != CUTUNE__V_LIST)
        return cutune__t1_fail(p, CUTUNE_ERR_PARSE,
                               "%s.Values (%s): not a list", field, t->name);
    size_t n = list.u.list.n;
    cutune_value *v = cutune__t1_alloc(p, d, n, sizeof *v);
    if (!v)
        return CUTUNE_ERR_NO_MEMORY;
    for (size_t k = 0; k < n; k++) {
        const cutune__value *item = &list.u.list.items[k];
        v[k].type = item->type == CUTUNE__V_FLOAT  ? CUTUNE_VALUE_FLOAT
                    : item->type == CUTUNE__V_BOOL ? CUTUNE_VALUE_BOOL
                    : item->type == CUTUNE__V_STR  ? CUTUNE_VALUE_STRING
                                                   : CUTUNE_VALUE_INT;
        if (item->type == CUTUNE__V_LIST || item->type == CUTUNE__V_NONE)
            return cutune__t1_fail(p, CUTUNE_ERR_UNSUPPORTED,
                                   "%s.Values (%s): value %zu is not a "
                                   "number, a bool or a string",
                                   field, t->name, k);
        if (item->type == CUTUNE__V_FLOAT)
            v[k].f = item->u.f;
        else if (item->type == CUTUNE__V_STR)
            v[k].s = item->u.s;
        else
            v[k].i = item->u.i;
    }
    t->values = v;
    t->n_values = n;
    return CUTUNE_OK;
}

static cutune_status parse_values(cutune_problem *p, cutune__t1_draft *d,
                                  json_t *jp, const char *field,
                                  cutune_tunable *t)
{
    json_t *jv = json_object_get(jp, "Values");
    if (json_is_string(jv))
        return values_from_expr(p, d, json_string_value(jv), field, t);
    if (!json_is_array(jv))
        return cutune__t1_fail(p, CUTUNE_ERR_PARSE, "%s.Values (%s): missing",
                               field, t->name);
    size_t n = json_array_size(jv);
    cutune_value *v = cutune__t1_alloc(p, d, n, sizeof *v);
    if (!v)
        return CUTUNE_ERR_NO_MEMORY;
    for (size_t k = 0; k < n; k++) {
        cutune_status st =
            value_from_json(p, json_array_get(jv, k), field, &v[k]);
        if (st)
            return st;
    }
    t->values = v;
    t->n_values = n;
    return CUTUNE_OK;
}

static cutune_status parse_param(cutune_problem *p, cutune__t1_draft *d,
                                 json_t *jp, size_t i)
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
    cutune_tunable *t = &d->tunables[i];
    t->name = cutune__t1_string(jp, "Name");
    if (!t->name || !*t->name)
        return cutune__t1_fail(p, CUTUNE_ERR_PARSE, "%s.Name: missing", field);
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
            field, t->name, type ? type : "(not a string)");
    if ((st = parse_values(p, d, jp, field, t)))
        return st;
    json_t *jd = json_object_get(jp, "Default");
    /* Some published files wrap the default in a one-element list. */
    if (json_is_array(jd) && json_array_size(jd) == 1)
        jd = json_array_get(jd, 0);
    if (!jd || json_is_null(jd))
        return CUTUNE_OK;
    char dfield[128];
    snprintf(dfield, sizeof dfield, "%s.Default", field);
    cutune_value *def = cutune__t1_alloc(p, d, 1, sizeof *def);
    if (!def)
        return CUTUNE_ERR_NO_MEMORY;
    t->default_value = def;
    return value_from_json(p, jd, dfield, def);
}

/* One condition's Expression, with its Parameters list checked: the space
 * finds the names an expression reads by itself, but a list naming
 * something else is still a mistake in the file, and would be one for
 * every other T1 reader. */
static cutune_status parse_condition(cutune_problem *p, cutune__t1_draft *d,
                                     json_t *c, size_t i, const char **out)
{
    char field[96];
    snprintf(field, sizeof field,
             "ConfigurationSpace.Conditions[%zu].Expression", i);
    json_t *ex = json_is_object(c) ? json_object_get(c, "Expression") : NULL;
    if (!json_is_string(ex))
        return cutune__t1_fail(p, CUTUNE_ERR_PARSE, "%s: missing", field);
    static const char *const cknown[] = {"Expression", "Parameters", NULL};
    char cfield[96];
    snprintf(cfield, sizeof cfield, "ConfigurationSpace.Conditions[%zu]", i);
    cutune_status st = cutune__t1_check_known(p, c, cfield, cknown);
    if (st)
        return st;
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
        int known = 0;
        for (size_t t = 0; json_is_string(nj) && t < d->spec.n_tune_params;
             t++)
            known |= strcmp(d->tunables[t].name, json_string_value(nj)) == 0;
        if (!known)
            return cutune__t1_fail(p, CUTUNE_ERR_PARSE,
                                   "%s.Parameters[%zu]: '%s' "
                                   "is not a tuning parameter",
                                   cfield, k,
                                   json_is_string(nj) ? json_string_value(nj)
                                                      : "(not a string)");
    }
    *out = json_string_value(ex);
    return CUTUNE_OK;
}

cutune_status cutune__t1_parse_space(cutune_problem *p, cutune__t1_draft *d,
                                     json_t *root)
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
    if (!(d->tunables = cutune__t1_alloc(p, d, n, sizeof *d->tunables)))
        return CUTUNE_ERR_NO_MEMORY;
    d->spec.tune_params = d->tunables;
    for (size_t i = 0; i < n; i++) {
        d->spec.n_tune_params = i + 1;
        if ((st = parse_param(p, d, json_array_get(tp, i), i)))
            return st;
    }
    json_t *cj = json_object_get(cs, "Conditions");
    size_t nc = json_is_array(cj) ? json_array_size(cj) : 0;
    if (cj && !json_is_null(cj) && !json_is_array(cj))
        return cutune__t1_fail(
            p, CUTUNE_ERR_PARSE,
            "ConfigurationSpace.Conditions: expected an array");
    const char **conditions = cutune__t1_alloc(p, d, nc, sizeof *conditions);
    if (!conditions)
        return CUTUNE_ERR_NO_MEMORY;
    for (size_t i = 0; i < nc; i++)
        if ((st = parse_condition(p, d, json_array_get(cj, i), i,
                                  &conditions[i])))
            return st;
    d->spec.restrictions = conditions;
    d->spec.n_restrictions = nc;
    return CUTUNE_OK;
}
