/* Loading a T1 tuning problem (a file or a built-in template) into a
 * cutune_problem and its search space.
 *
 * The loader is strict: a field cutune does not understand yet is refused
 * with a message naming it, never silently ignored, because a silently
 * ignored field would tune a different problem than the file describes.
 * Each T1 section has its own parse_* function, so support for more of T1
 * is added section by section.
 */
#define _POSIX_C_SOURCE 200809L

#include "problem.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <jansson.h>

#include "embedded.h"
#include "source_hash.h"
#include "util.h"

/* ------------------------------------------------------------------ */
/* Error reporting                                                     */

static cutune_status fail(cutune_problem *p, cutune_status st,
                          const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    free(p->errmsg);
    p->errmsg = cutune__strdup_printf("%s: %s", p->origin, buf);
    return st;
}

/* ------------------------------------------------------------------ */
/* Evaluating expressions against the problem                          */

/* Binds each free name of `e`: a parameter to its value in `config`, or,
 * when config is NULL, to the list of all its values (T1 sizes such as
 * max(filter_width) read parameters that way); ProblemSize to the problem
 * size. The bound values are views into the problem, never freed here. */
static int eval_in(const cutune_problem *p, const cutune__expr *e,
                   const uint32_t *config, cutune__value *out, char *err,
                   size_t errlen)
{
    size_t n = cutune__expr_name_count(e);
    cutune__value *vars = calloc(n ? n : 1, sizeof *vars);
    if (!vars) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        const char *name = cutune__expr_name(e, i);
        size_t param = cutune__problem_find_param(p, name);
        if (strcmp(name, "ProblemSize") == 0) {
            vars[i] = p->problem_size_value;
        } else if (param != SIZE_MAX && config) {
            vars[i] = p->param_values[param][config[param]];
        } else if (param != SIZE_MAX) {
            vars[i].type = CUTUNE__V_LIST;
            vars[i].u.list.items = p->param_values[param];
            vars[i].u.list.n = p->param_value_counts[param];
        } else {
            snprintf(err, errlen, "'%s' names no parameter", name);
            free(vars);
            return -1;
        }
    }
    cutune__expr_error xerr;
    int rc = cutune__expr_eval(e, vars, out, &xerr);
    free(vars);
    if (rc != 0)
        snprintf(err, errlen, "%s at column %d ('%s')", xerr.message,
                 xerr.column, xerr.token);
    return rc;
}

static int value_as_i64(const cutune__value *v, long long *out)
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

static int value_as_double(const cutune__value *v, double *out)
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
static int eval_int(const cutune_problem *p, const cutune__expr *e,
                    const uint32_t *config, long long *out, char *err,
                    size_t errlen)
{
    cutune__value v;
    if (eval_in(p, e, config, &v, err, errlen) != 0)
        return -1;
    int rc = value_as_i64(&v, out);
    if (rc != 0)
        snprintf(err, errlen, "'%s' is not an integer",
                 cutune__expr_text(e));
    cutune__value_clear(&v);
    return rc;
}

/* ------------------------------------------------------------------ */
/* JSON helpers                                                        */

/* Parses a JSON scalar or an expression string into an expression. JSON
 * numbers become their literal text, so every size and value field may be
 * written either way. */
static cutune__expr *parse_field(cutune_problem *p, json_t *j,
                                 const char *field, cutune_status *st)
{
    char text[64];
    const char *src;
    if (json_is_string(j)) {
        src = json_string_value(j);
    } else if (json_is_integer(j)) {
        snprintf(text, sizeof text, "%" JSON_INTEGER_FORMAT,
                 json_integer_value(j));
        src = text;
    } else if (json_is_real(j)) {
        snprintf(text, sizeof text, "%.17g", json_real_value(j));
        src = text;
    } else {
        *st = fail(p, CUTUNE_ERR_PARSE,
                   "%s: expected a number or an expression string", field);
        return NULL;
    }
    cutune__expr_error xerr;
    cutune__expr *e = cutune__expr_parse(src, 0, &xerr);
    if (!e)
        *st = fail(p, CUTUNE_ERR_PARSE, "%s: %s at column %d ('%s') in \"%s\"",
                   field, xerr.message, xerr.column, xerr.token, src);
    return e;
}

static const char *get_string(json_t *obj, const char *key)
{
    json_t *v = json_object_get(obj, key);
    return json_is_string(v) ? json_string_value(v) : NULL;
}

/* Fields of a section this loader knows; anything else is refused. */
static cutune_status check_known(cutune_problem *p, json_t *obj,
                                 const char *section,
                                 const char *const *known)
{
    const char *key;
    json_t *val;
    json_object_foreach(obj, key, val) {
        int found = 0;
        for (size_t i = 0; known[i]; i++)
            if (strcmp(key, known[i]) == 0)
                found = 1;
        /* T1 writes absent optional things as null. */
        if (!found && !json_is_null(val))
            return fail(p, CUTUNE_ERR_UNSUPPORTED,
                        "%s.%s: not supported by this version of cutune",
                        section, key);
    }
    return CUTUNE_OK;
}

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
            return fail(p, CUTUNE_ERR_NO_MEMORY, "out of memory");
    } else {
        return fail(p, CUTUNE_ERR_PARSE, "%s: expected a number or a string",
                    field);
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
        return fail(p, CUTUNE_ERR_PARSE, "%s: expected an object", field);
    cutune_status st = check_known(p, jp, field, known);
    if (st)
        return st;
    const char *name = get_string(jp, "Name");
    if (!name || !*name)
        return fail(p, CUTUNE_ERR_PARSE, "%s.Name: missing", field);
    for (size_t k = 0; k < i; k++)
        if (strcmp(p->param_names[k], name) == 0)
            return fail(p, CUTUNE_ERR_PARSE, "%s.Name: '%s' is defined twice",
                        field, name);
    p->param_names[i] = strdup(name);
    if (!p->param_names[i])
        return fail(p, CUTUNE_ERR_NO_MEMORY, "out of memory");
    /* The Type enum of the T1 schema. Values keep the types their
     * literals have, so the Type itself changes nothing here; an unknown
     * one means a file for a newer format. */
    const char *type = get_string(jp, "Type");
    json_t *jt = json_object_get(jp, "Type");
    if (jt && !json_is_null(jt) &&
        (!type || (strcmp(type, "int") != 0 && strcmp(type, "uint") != 0 &&
                   strcmp(type, "float") != 0 && strcmp(type, "bool") != 0 &&
                   strcmp(type, "string") != 0)))
        return fail(p, CUTUNE_ERR_UNSUPPORTED,
                    "%s.Type (%s): '%s' is not a parameter type (int, uint, "
                    "float, bool, string)", field, name,
                    type ? type : "(not a string)");

    /* Values: a JSON array, or a string holding a list expression. */
    json_t *jv = json_object_get(jp, "Values");
    cutune__value list = {0};
    if (json_is_string(jv)) {
        cutune__expr_error xerr;
        if (cutune__expr_eval_const(json_string_value(jv), &list, &xerr) != 0)
            return fail(p, CUTUNE_ERR_PARSE,
                        "%s.Values (%s): %s at column %d ('%s')", field, name,
                        xerr.message, xerr.column, xerr.token);
        if (list.type != CUTUNE__V_LIST) {
            cutune__value_clear(&list);
            return fail(p, CUTUNE_ERR_PARSE, "%s.Values (%s): not a list",
                        field, name);
        }
    } else if (json_is_array(jv)) {
        size_t n = json_array_size(jv);
        list.type = CUTUNE__V_LIST;
        list.u.list.items = calloc(n ? n : 1, sizeof(cutune__value));
        if (!list.u.list.items)
            return fail(p, CUTUNE_ERR_NO_MEMORY, "out of memory");
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
        return fail(p, CUTUNE_ERR_PARSE, "%s.Values (%s): missing", field,
                    name);
    }
    if (list.u.list.n == 0) {
        cutune__value_clear(&list);
        return fail(p, CUTUNE_ERR_PARSE, "%s.Values (%s): empty", field, name);
    }
    p->param_values[i] = list.u.list.items;
    p->param_value_counts[i] = list.u.list.n;

    p->value_texts[i] = calloc(list.u.list.n, sizeof(char *));
    if (!p->value_texts[i])
        return fail(p, CUTUNE_ERR_NO_MEMORY, "out of memory");
    for (size_t k = 0; k < list.u.list.n; k++) {
        p->value_texts[i][k] = cutune__value_to_text(&list.u.list.items[k]);
        if (!p->value_texts[i][k])
            return fail(p, CUTUNE_ERR_NO_MEMORY, "out of memory");
    }

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
        size_t found = SIZE_MAX;
        for (size_t k = 0; k < list.u.list.n && found == SIZE_MAX; k++)
            if (cutune__value_equal(&d, &list.u.list.items[k]))
                found = k;
        cutune__value_clear(&d);
        /* A Default outside the Values is common in published files (the
         * convolution file's block_size_y); the first value stands in. */
        if (found != SIZE_MAX)
            p->default_values[i] = found;
    }
    return CUTUNE_OK;
}

static cutune_status parse_space(cutune_problem *p, json_t *root)
{
    json_t *cs = json_object_get(root, "ConfigurationSpace");
    if (!json_is_object(cs))
        return fail(p, CUTUNE_ERR_PARSE, "ConfigurationSpace: missing");
    static const char *const known[] = {"TuningParameters", "Conditions",
                                        NULL};
    cutune_status st = check_known(p, cs, "ConfigurationSpace", known);
    if (st)
        return st;
    json_t *tp = json_object_get(cs, "TuningParameters");
    if (!json_is_array(tp) || json_array_size(tp) == 0)
        return fail(p, CUTUNE_ERR_PARSE,
                    "ConfigurationSpace.TuningParameters: missing or empty");
    size_t n = json_array_size(tp);
    p->param_names = calloc(n, sizeof(char *));
    p->param_values = calloc(n, sizeof(cutune__value *));
    p->param_value_counts = calloc(n, sizeof(size_t));
    p->value_texts = calloc(n, sizeof(char **));
    p->default_values = calloc(n, sizeof(size_t));
    if (!p->param_names || !p->param_values || !p->param_value_counts ||
        !p->value_texts || !p->default_values)
        return fail(p, CUTUNE_ERR_NO_MEMORY, "out of memory");
    for (size_t i = 0; i < n; i++) {
        p->n_params = i + 1;
        st = parse_param(p, json_array_get(tp, i), i);
        if (st)
            return st;
    }

    json_t *cj = json_object_get(cs, "Conditions");
    size_t nc = json_is_array(cj) ? json_array_size(cj) : 0;
    if (cj && !json_is_null(cj) && !json_is_array(cj))
        return fail(p, CUTUNE_ERR_PARSE,
                    "ConfigurationSpace.Conditions: expected an array");
    p->conditions = calloc(nc ? nc : 1, sizeof(cutune__expr *));
    if (!p->conditions)
        return fail(p, CUTUNE_ERR_NO_MEMORY, "out of memory");
    for (size_t i = 0; i < nc; i++) {
        char field[96];
        snprintf(field, sizeof field,
                 "ConfigurationSpace.Conditions[%zu].Expression", i);
        json_t *c = json_array_get(cj, i);
        json_t *ex = json_is_object(c) ? json_object_get(c, "Expression")
                                       : NULL;
        if (!json_is_string(ex))
            return fail(p, CUTUNE_ERR_PARSE, "%s: missing", field);
        static const char *const cknown[] = {"Expression", "Parameters",
                                             NULL};
        char cfield[96];
        snprintf(cfield, sizeof cfield, "ConfigurationSpace.Conditions[%zu]",
                 i);
        if ((st = check_known(p, c, cfield, cknown)))
            return st;
        /* The space finds the names an expression reads by itself; a
         * Parameters list naming something else is still a mistake in the
         * file, and would be one for every other T1 reader. */
        json_t *names = json_object_get(c, "Parameters");
        size_t k;
        json_t *nj;
        if (names && !json_is_null(names) && !json_is_array(names))
            return fail(p, CUTUNE_ERR_PARSE, "%s.Parameters: expected an "
                        "array of parameter names", cfield);
        json_array_foreach(names, k, nj) {
            if (!json_is_string(nj) ||
                cutune__problem_find_param(p, json_string_value(nj)) ==
                    SIZE_MAX)
                return fail(p, CUTUNE_ERR_PARSE, "%s.Parameters[%zu]: '%s' "
                            "is not a tuning parameter", cfield, k,
                            json_is_string(nj) ? json_string_value(nj)
                                               : "(not a string)");
        }
        p->conditions[i] = parse_field(p, ex, field, &st);
        if (!p->conditions[i])
            return st;
        p->n_conditions = i + 1;
    }
    return CUTUNE_OK;
}

static cutune_status build_space(cutune_problem *p)
{
    cutune__param *params = calloc(p->n_params, sizeof *params);
    if (!params)
        return fail(p, CUTUNE_ERR_NO_MEMORY, "out of memory");
    for (size_t i = 0; i < p->n_params; i++) {
        params[i].name = p->param_names[i];
        params[i].values = p->param_values[i];
        params[i].n_values = p->param_value_counts[i];
    }
    cutune__constant ps = {"ProblemSize", &p->problem_size_value};
    cutune__space_error serr;
    double t0 = cutune__now();
    p->space = cutune__space_create(params, p->n_params,
                                    (const cutune__expr *const *)p->conditions,
                                    p->n_conditions, &ps, 1, &serr);
    p->space_seconds = cutune__now() - t0;
    free(params);
    if (!p->space) {
        if (serr.condition != SIZE_MAX && serr.expr.column > 0)
            return fail(p, CUTUNE_ERR_PARSE,
                        "ConfigurationSpace.Conditions[%zu].Expression: %s, "
                        "at column %d ('%s')", serr.condition, serr.message,
                        serr.expr.column, serr.expr.token);
        if (serr.condition != SIZE_MAX)
            return fail(p, CUTUNE_ERR_PARSE,
                        "ConfigurationSpace.Conditions[%zu].Expression: %s",
                        serr.condition, serr.message);
        return fail(p, CUTUNE_ERR_PARSE, "ConfigurationSpace: %s",
                    serr.message);
    }
    if (cutune__space_size(p->space) == 0)
        return fail(p, CUTUNE_ERR_EMPTY_SPACE,
                    "ConfigurationSpace: no configuration satisfies the "
                    "conditions");
    return CUTUNE_OK;
}

/* ------------------------------------------------------------------ */
/* KernelSpecification                                                 */

static const struct {
    const char *name;
    cutune__dtype type;
} dtype_names[] = {
    {"float", CUTUNE__DT_FLOAT},     {"float32", CUTUNE__DT_FLOAT},
    {"double", CUTUNE__DT_DOUBLE},   {"float64", CUTUNE__DT_DOUBLE},
    {"int8", CUTUNE__DT_INT8},       {"char", CUTUNE__DT_INT8},
    {"uint8", CUTUNE__DT_UINT8},     {"int16", CUTUNE__DT_INT16},
    {"uint16", CUTUNE__DT_UINT16},   {"int", CUTUNE__DT_INT32},
    {"int32", CUTUNE__DT_INT32},     {"uint", CUTUNE__DT_UINT32},
    {"uint32", CUTUNE__DT_UINT32},   {"int64", CUTUNE__DT_INT64},
    {"long", CUTUNE__DT_INT64},      {"uint64", CUTUNE__DT_UINT64},
};

static cutune_status parse_arg(cutune_problem *p, json_t *ja, size_t i)
{
    char field[64];
    static const char *const known[] = {
        "Name", "Type", "MemoryType", "MemType", "AccessType", "FillType",
        "Size", "FillValue", "Output", "RandomSeed", NULL};
    snprintf(field, sizeof field, "KernelSpecification.Arguments[%zu]", i);
    if (!json_is_object(ja))
        return fail(p, CUTUNE_ERR_PARSE, "%s: expected an object", field);
    cutune_status st = check_known(p, ja, field, known);
    if (st)
        return st;
    cutune__arg *a = &p->args[i];
    const char *name = get_string(ja, "Name");
    a->name = strdup(name ? name : "");
    if (!a->name)
        return fail(p, CUTUNE_ERR_NO_MEMORY, "out of memory");

    const char *type = get_string(ja, "Type");
    size_t k;
    for (k = 0; type && k < sizeof dtype_names / sizeof *dtype_names; k++)
        if (strcmp(type, dtype_names[k].name) == 0)
            break;
    if (!type || k == sizeof dtype_names / sizeof *dtype_names)
        return fail(p, CUTUNE_ERR_UNSUPPORTED, "%s.Type: '%s' is not a known "
                    "type (float, double, int8..int64, uint8..uint64)",
                    field, type ? type : "(missing)");
    a->dtype = dtype_names[k].type;

    const char *mem = get_string(ja, "MemoryType");
    if (!mem)
        return fail(p, CUTUNE_ERR_PARSE, "%s.MemoryType: missing", field);
    /* Constant memory: `MemoryType: Symbol`, or a vector with `MemType:
     * Constant` as published files spell it. Its data goes to the
     * module's __constant__ variable of the argument's name, not to a
     * kernel parameter. */
    const char *memtype = get_string(ja, "MemType");
    if (memtype && strcmp(memtype, "Constant") != 0)
        return fail(p, CUTUNE_ERR_UNSUPPORTED, "%s.MemType: '%s' is not "
                    "supported (Constant)", field, memtype);
    if (strcmp(mem, "Symbol") == 0 ||
        (strcmp(mem, "Vector") == 0 && memtype)) {
        a->is_vector = 1;
        a->is_symbol = 1;
        if (!name || !*name || strlen(name) >= 64)
            return fail(p, CUTUNE_ERR_PARSE, "%s.Name: a constant-memory "
                        "argument needs the name of its __constant__ "
                        "variable (under 64 characters)", field);
    } else if (strcmp(mem, "Vector") == 0)
        a->is_vector = 1;
    else if (strcmp(mem, "Scalar") == 0)
        a->is_vector = 0;
    else
        return fail(p, CUTUNE_ERR_UNSUPPORTED,
                    "%s.MemoryType: '%s' is not supported (Vector, Scalar)",
                    field, mem);

    char err[256];
    if (a->is_vector) {
        const char *fill = get_string(ja, "FillType");
        if (!fill || strcmp(fill, "Constant") == 0)
            a->fill = CUTUNE__FILL_CONSTANT;
        else if (strcmp(fill, "Random") == 0)
            a->fill = CUTUNE__FILL_RANDOM;
        else
            return fail(p, CUTUNE_ERR_UNSUPPORTED,
                        "%s.FillType: '%s' is not supported (Constant, "
                        "Random)", field, fill);
        char sfield[96];
        snprintf(sfield, sizeof sfield, "%s.Size", field);
        cutune__expr *size = parse_field(p, json_object_get(ja, "Size"),
                                         sfield, &st);
        if (!size)
            return st;
        long long count;
        int rc = eval_int(p, size, NULL, &count, err, sizeof err);
        cutune__expr_free(size);
        if (rc != 0)
            return fail(p, CUTUNE_ERR_PARSE, "%s: %s", sfield, err);
        if (count <= 0)
            return fail(p, CUTUNE_ERR_PARSE, "%s: %lld elements", sfield,
                        count);
        a->count = (uint64_t)count;
    }

    json_t *fv = json_object_get(ja, "FillValue");
    if (fv && !json_is_null(fv)) {
        char ffield[96];
        snprintf(ffield, sizeof ffield, "%s.FillValue", field);
        cutune__expr *e = parse_field(p, fv, ffield, &st);
        if (!e)
            return st;
        cutune__value v;
        int rc = eval_in(p, e, NULL, &v, err, sizeof err);
        cutune__expr_free(e);
        if (rc != 0)
            return fail(p, CUTUNE_ERR_PARSE, "%s: %s", ffield, err);
        rc = value_as_double(&v, &a->fill_value);
        cutune__value_clear(&v);
        if (rc != 0)
            return fail(p, CUTUNE_ERR_PARSE, "%s: not a number", ffield);
    } else if (!a->is_vector) {
        return fail(p, CUTUNE_ERR_PARSE, "%s.FillValue: a scalar needs one",
                    field);
    }
    json_t *seed = json_object_get(ja, "RandomSeed");
    a->seed = json_is_integer(seed) ? (uint64_t)json_integer_value(seed)
                                    : (uint64_t)i + 1;
    json_t *out = json_object_get(ja, "Output");
    a->is_output = a->is_vector && out && json_is_true(out);
    if (a->is_vector && json_is_integer(out))
        a->is_output = json_integer_value(out) != 0;
    return CUTUNE_OK;
}

static cutune_status parse_geometry(cutune_problem *p, json_t *ks,
                                    const char *key, cutune__expr *out[3])
{
    static const char *const dims[3] = {"X", "Y", "Z"};
    json_t *g = json_object_get(ks, key);
    if (!json_is_object(g))
        return fail(p, CUTUNE_ERR_PARSE, "KernelSpecification.%s: missing",
                    key);
    for (int d = 0; d < 3; d++) {
        char field[64];
        snprintf(field, sizeof field, "KernelSpecification.%s.%s", key,
                 dims[d]);
        json_t *v = json_object_get(g, dims[d]);
        cutune_status st = CUTUNE_OK;
        if (v) {
            out[d] = parse_field(p, v, field, &st);
        } else {
            /* An absent dimension is 1, as in CUDA's dim3. */
            out[d] = cutune__expr_parse("1", 0, NULL);
            st = CUTUNE_ERR_NO_MEMORY;
        }
        if (!out[d])
            return st;
    }
    return CUTUNE_OK;
}

/* GridDivX/Y/Z: lists of parameter names, as Kernel Tuner's grid_div_*
 * and BAT's runner take them. */
static cutune_status parse_grid_div(cutune_problem *p, json_t *ks)
{
    static const char *const keys[3] = {"GridDivX", "GridDivY", "GridDivZ"};
    for (int d = 0; d < 3; d++) {
        json_t *g = json_object_get(ks, keys[d]);
        if (!g || json_is_null(g))
            continue;
        if (!json_is_array(g))
            return fail(p, CUTUNE_ERR_PARSE, "KernelSpecification.%s: "
                        "expected a list of parameter names", keys[d]);
        size_t n = json_array_size(g);
        p->grid_div[d] = calloc(n ? n : 1, sizeof(size_t));
        if (!p->grid_div[d])
            return fail(p, CUTUNE_ERR_NO_MEMORY, "out of memory");
        for (size_t k = 0; k < n; k++) {
            json_t *name = json_array_get(g, k);
            size_t param = json_is_string(name)
                               ? cutune__problem_find_param(
                                     p, json_string_value(name))
                               : SIZE_MAX;
            if (param == SIZE_MAX)
                return fail(p, CUTUNE_ERR_PARSE, "KernelSpecification.%s[%zu]"
                            ": '%s' is not a tuning parameter", keys[d], k,
                            json_is_string(name) ? json_string_value(name)
                                                 : "(not a string)");
            p->grid_div[d][k] = param;
        }
        p->n_grid_div[d] = n;
        p->grid_div_given[d] = 1;
        p->has_grid_div = 1;
    }
    return CUTUNE_OK;
}

static cutune_status read_file(cutune_problem *p, const char *path,
                               char **data, size_t *len, const char *field)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return fail(p, CUTUNE_ERR_IO, "%s: cannot open %s: %s", field, path,
                    strerror(errno));
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap + 1);
    while (buf) {
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (n < cap)
            break;
        char *bigger = realloc(buf, 2 * cap + 1);
        if (!bigger) {
            free(buf);
            buf = NULL;
            break;
        }
        buf = bigger;
        cap *= 2;
    }
    int bad = ferror(f);
    fclose(f);
    if (!buf)
        return fail(p, CUTUNE_ERR_NO_MEMORY, "out of memory");
    if (bad) {
        free(buf);
        return fail(p, CUTUNE_ERR_IO, "%s: cannot read %s", field, path);
    }
    buf[n] = '\0';
    *data = buf;
    *len = n;
    return CUTUNE_OK;
}

static cutune_status parse_kernel(cutune_problem *p, json_t *root,
                                  const char *dir,
                                  const cutune__template *builtin)
{
    json_t *ks = json_object_get(root, "KernelSpecification");
    if (!json_is_object(ks))
        return fail(p, CUTUNE_ERR_PARSE, "KernelSpecification: missing");
    static const char *const known[] = {
        "Language", "CompilerOptions", "BenchmarkName", "KernelName",
        "KernelFile", "GlobalSizeType", "LocalSize", "GlobalSize",
        "GridDivX", "GridDivY", "GridDivZ",
        "ProblemSize", "SharedMemory", "Stream", "Arguments",
        "ReferenceArguments", NULL};
    cutune_status st = check_known(p, ks, "KernelSpecification", known);
    if (st)
        return st;
    const char *lang = get_string(ks, "Language");
    if (lang && strcmp(lang, "CUDA") != 0)
        return fail(p, CUTUNE_ERR_UNSUPPORTED,
                    "KernelSpecification.Language: '%s' (cutune tunes CUDA)",
                    lang);
    const char *kname = get_string(ks, "KernelName");
    if (!kname || !*kname)
        return fail(p, CUTUNE_ERR_PARSE, "KernelSpecification.KernelName: "
                    "missing");
    p->kernel_name = strdup(kname);
    if (!p->name)
        p->name = strdup(kname);
    if (!p->kernel_name || !p->name)
        return fail(p, CUTUNE_ERR_NO_MEMORY, "out of memory");

    json_t *opts = json_object_get(ks, "CompilerOptions");
    size_t no = json_is_array(opts) ? json_array_size(opts) : 0;
    p->options = calloc(no ? no : 1, sizeof(char *));
    if (!p->options)
        return fail(p, CUTUNE_ERR_NO_MEMORY, "out of memory");
    for (size_t i = 0; i < no; i++) {
        json_t *o = json_array_get(opts, i);
        if (!json_is_string(o))
            return fail(p, CUTUNE_ERR_PARSE,
                        "KernelSpecification.CompilerOptions[%zu]: expected "
                        "a string", i);
        p->options[i] = strdup(json_string_value(o));
        if (!p->options[i])
            return fail(p, CUTUNE_ERR_NO_MEMORY, "out of memory");
        p->n_options = i + 1;
    }

    const char *gst = get_string(ks, "GlobalSizeType");
    if (!gst || strcmp(gst, "OpenCL") == 0)
        p->global_in_blocks = 0;
    else if (strcmp(gst, "CUDA") == 0)
        p->global_in_blocks = 1;
    else
        return fail(p, CUTUNE_ERR_UNSUPPORTED,
                    "KernelSpecification.GlobalSizeType: '%s' (CUDA, OpenCL)",
                    gst);
    if ((st = parse_geometry(p, ks, "LocalSize", p->local_size)) ||
        (st = parse_geometry(p, ks, "GlobalSize", p->global_size)) ||
        (st = parse_grid_div(p, ks)))
        return st;

    json_t *sm = json_object_get(ks, "SharedMemory");
    if (sm && !json_is_null(sm)) {
        if (!json_is_integer(sm) || json_integer_value(sm) < 0)
            return fail(p, CUTUNE_ERR_PARSE, "KernelSpecification."
                        "SharedMemory: expected a byte count");
        p->shared_memory = (unsigned)json_integer_value(sm);
    }

    /* The kernel source: embedded for a built-in, else beside the file. */
    if (builtin) {
        p->source = malloc(builtin->source_len + 1);
        if (!p->source)
            return fail(p, CUTUNE_ERR_NO_MEMORY, "out of memory");
        memcpy(p->source, builtin->source, builtin->source_len + 1);
        p->source_len = builtin->source_len;
    } else {
        const char *kf = get_string(ks, "KernelFile");
        if (!kf)
            return fail(p, CUTUNE_ERR_PARSE,
                        "KernelSpecification.KernelFile: missing");
        char *path = kf[0] == '/' ? strdup(kf)
                                  : cutune__strdup_printf("%s/%s", dir, kf);
        if (!path)
            return fail(p, CUTUNE_ERR_NO_MEMORY, "out of memory");
        st = read_file(p, path, &p->source, &p->source_len,
                       "KernelSpecification.KernelFile");
        free(path);
        if (st)
            return st;
    }
    snprintf(p->source_hash, sizeof p->source_hash, "%016llx",
             (unsigned long long)cutune__fnv1a64(p->source, p->source_len));
    return CUTUNE_OK;
}

static cutune_status parse_problem_size(cutune_problem *p, json_t *root,
                                        const cutune_problem_options *opt)
{
    json_t *ks = json_object_get(root, "KernelSpecification");
    json_t *ps = json_object_get(ks, "ProblemSize");
    size_t n = json_is_array(ps) ? json_array_size(ps) : 0;
    if (opt && opt->n_problem_size > 0)
        n = opt->n_problem_size;
    p->problem_size = calloc(n ? n : 1, sizeof(long long));
    p->problem_size_value.type = CUTUNE__V_LIST;
    p->problem_size_value.u.list.items =
        calloc(n ? n : 1, sizeof(cutune__value));
    if (!p->problem_size || !p->problem_size_value.u.list.items)
        return fail(p, CUTUNE_ERR_NO_MEMORY, "out of memory");
    for (size_t i = 0; i < n; i++) {
        long long v;
        if (opt && opt->n_problem_size > 0) {
            v = opt->problem_size[i];
        } else {
            json_t *e = json_array_get(ps, i);
            if (!json_is_integer(e))
                return fail(p, CUTUNE_ERR_PARSE,
                            "KernelSpecification.ProblemSize[%zu]: expected "
                            "an integer", i);
            v = json_integer_value(e);
        }
        if (v <= 0)
            return fail(p, CUTUNE_ERR_INVALID_ARGUMENT,
                        "problem size %lld in dimension %zu: must be "
                        "positive", v, i);
        p->problem_size[i] = v;
        p->problem_size_value.u.list.items[i].type = CUTUNE__V_INT;
        p->problem_size_value.u.list.items[i].u.i = v;
    }
    p->n_problem_size = n;
    p->problem_size_value.u.list.n = n;
    return CUTUNE_OK;
}

static cutune_status parse_extensions(cutune_problem *p, json_t *root)
{
    json_t *ext = json_object_get(root, "CutuneExtensions");
    if (!ext)
        return CUTUNE_OK;
    static const char *const known[] = {"BytesPerLaunch", "FlopsPerLaunch",
                                        "CompilerOptionParameters", NULL};
    cutune_status st = check_known(p, ext, "CutuneExtensions", known);
    if (st)
        return st;
    json_t *b = json_object_get(ext, "BytesPerLaunch");
    if (b) {
        p->bytes_per_launch =
            parse_field(p, b, "CutuneExtensions.BytesPerLaunch", &st);
        if (!p->bytes_per_launch)
            return st;
    }
    json_t *f = json_object_get(ext, "FlopsPerLaunch");
    if (f) {
        p->flops_per_launch =
            parse_field(p, f, "CutuneExtensions.FlopsPerLaunch", &st);
        if (!p->flops_per_launch)
            return st;
    }
    /* Parameters whose values are NVRTC options ("-Xptxas=-dlcm=cg",
     * "--maxrregcount=64"; "" for none) rather than macro values. */
    json_t *cop = json_object_get(ext, "CompilerOptionParameters");
    if (cop) {
        if (!json_is_array(cop))
            return fail(p, CUTUNE_ERR_PARSE, "CutuneExtensions."
                        "CompilerOptionParameters: expected a list of "
                        "parameter names");
        p->param_is_option = calloc(p->n_params ? p->n_params : 1, 1);
        if (!p->param_is_option)
            return fail(p, CUTUNE_ERR_NO_MEMORY, "out of memory");
        for (size_t i = 0; i < json_array_size(cop); i++) {
            const char *name = json_string_value(json_array_get(cop, i));
            size_t k = name ? cutune__problem_find_param(p, name) : SIZE_MAX;
            if (k == SIZE_MAX)
                return fail(p, CUTUNE_ERR_PARSE, "CutuneExtensions."
                            "CompilerOptionParameters[%zu]: '%s' is not a "
                            "tuning parameter", i, name ? name : "(not a "
                            "string)");
            for (size_t v = 0; v < p->param_value_counts[k]; v++)
                if (p->param_values[k][v].type != CUTUNE__V_STR)
                    return fail(p, CUTUNE_ERR_PARSE, "CutuneExtensions."
                                "CompilerOptionParameters[%zu]: the values "
                                "of '%s' must be strings (compiler options)",
                                i, name);
            p->param_is_option[k] = 1;
        }
    }
    return CUTUNE_OK;
}

/* T1 ReferenceArguments: expected contents of output arguments, each
 * naming its output (TargetName, else Name), with how to compare. When a
 * problem gives any, outputs are validated against them instead of
 * against the default configuration's output, and outputs without one are
 * not validated. */
static cutune_status parse_references(cutune_problem *p, json_t *refs,
                                      const char *dir)
{
    if (!refs || json_is_null(refs))
        return CUTUNE_OK;
    if (!json_is_array(refs))
        return fail(p, CUTUNE_ERR_PARSE, "KernelSpecification."
                    "ReferenceArguments: expected a list");
    size_t n = json_array_size(refs);
    p->refs = calloc(n ? n : 1, sizeof *p->refs);
    if (!p->refs)
        return fail(p, CUTUNE_ERR_NO_MEMORY, "out of memory");
    static const char *const known[] = {
        "Name", "TargetName", "Type", "MemoryType", "AccessType", "FillType",
        "FillValue", "DataSource", "Size", "RandomSeed", "ValidationMethod",
        "ValidationThreshold", NULL};
    for (size_t i = 0; i < n; i++) {
        char field[80];
        snprintf(field, sizeof field,
                 "KernelSpecification.ReferenceArguments[%zu]", i);
        json_t *jr = json_array_get(refs, i);
        if (!json_is_object(jr))
            return fail(p, CUTUNE_ERR_PARSE, "%s: expected an object", field);
        cutune_status st = check_known(p, jr, field, known);
        if (st)
            return st;
        cutune__reference *r = &p->refs[i];
        p->n_refs = i + 1;
        const char *target = get_string(jr, "TargetName");
        if (!target)
            target = get_string(jr, "Name");
        size_t t = SIZE_MAX;
        for (size_t k = 0; target && k < p->n_args; k++)
            if (strcmp(p->args[k].name, target) == 0)
                t = k;
        if (t == SIZE_MAX || !p->args[t].is_vector || p->args[t].is_symbol)
            return fail(p, CUTUNE_ERR_PARSE, "%s: '%s' names no vector "
                        "argument", field, target ? target : "(no name)");
        const cutune__arg *a = &p->args[t];
        r->arg = t;
        const char *type = get_string(jr, "Type");
        if (type) {
            size_t k;
            for (k = 0; k < sizeof dtype_names / sizeof *dtype_names; k++)
                if (strcmp(type, dtype_names[k].name) == 0)
                    break;
            if (k == sizeof dtype_names / sizeof *dtype_names ||
                dtype_names[k].type != a->dtype)
                return fail(p, CUTUNE_ERR_PARSE, "%s.Type: '%s' is not the "
                            "type of '%s'", field, type, a->name);
        }
        json_t *size = json_object_get(jr, "Size");
        if (size && (!json_is_integer(size) ||
                     (uint64_t)json_integer_value(size) != a->count))
            return fail(p, CUTUNE_ERR_PARSE, "%s.Size: '%s' has %llu "
                        "elements", field, a->name,
                        (unsigned long long)a->count);
        const char *fill = get_string(jr, "FillType");
        json_t *fv = json_object_get(jr, "FillValue");
        json_t *seed = json_object_get(jr, "RandomSeed");
        r->seed = json_is_integer(seed) ? (uint64_t)json_integer_value(seed)
                                        : a->seed;
        if (!fill || strcmp(fill, "Constant") == 0 ||
            strcmp(fill, "Random") == 0) {
            r->fill = fill && strcmp(fill, "Random") == 0
                          ? CUTUNE__FILL_RANDOM
                          : CUTUNE__FILL_CONSTANT;
            if (!json_is_number(fv))
                return fail(p, CUTUNE_ERR_PARSE, "%s.FillValue: a number is "
                            "needed", field);
            r->fill_value = json_number_value(fv);
        } else if (strcmp(fill, "BinaryRaw") == 0) {
            const char *src = get_string(jr, "DataSource");
            if (!src)
                return fail(p, CUTUNE_ERR_PARSE, "%s.DataSource: missing",
                            field);
            char *path = src[0] == '/' ? strdup(src)
                                       : cutune__strdup_printf("%s/%s", dir,
                                                               src);
            if (!path)
                return fail(p, CUTUNE_ERR_NO_MEMORY, "out of memory");
            char dfield[112];
            snprintf(dfield, sizeof dfield, "%s.DataSource", field);
            st = read_file(p, path, &r->data, &r->data_size, dfield);
            free(path);
            if (st)
                return st;
            size_t want = (size_t)a->count * cutune__dtype_size(a->dtype);
            if (r->data_size != want)
                return fail(p, CUTUNE_ERR_PARSE, "%s: %s holds %zu bytes; "
                            "'%s' has %zu", dfield, src, r->data_size,
                            a->name, want);
            r->fill = CUTUNE__FILL_BINARY;
        } else {
            return fail(p, CUTUNE_ERR_UNSUPPORTED, "%s.FillType: '%s' "
                        "(Constant, Random, BinaryRaw)", field, fill);
        }
        const char *method = get_string(jr, "ValidationMethod");
        json_t *th = json_object_get(jr, "ValidationThreshold");
        double threshold = json_is_number(th) ? json_number_value(th) : 0.0;
        if (th && (!json_is_number(th) || threshold < 0))
            return fail(p, CUTUNE_ERR_PARSE, "%s.ValidationThreshold: a "
                        "non-negative number is needed", field);
        if (!method || strcmp(method, "AbsoluteDifference") == 0) {
            r->atol = json_is_number(th) ? threshold : 1e-6;
            r->rtol = 0.0;
        } else if (strcmp(method, "RelativeDifference") == 0) {
            r->atol = 0.0;
            r->rtol = json_is_number(th) ? threshold : 1e-5;
        } else if (strcmp(method, "Exact") == 0) {
            r->atol = r->rtol = 0.0;
        } else {
            return fail(p, CUTUNE_ERR_UNSUPPORTED, "%s.ValidationMethod: '%s' "
                        "(AbsoluteDifference, RelativeDifference, Exact)",
                        field, method);
        }
    }
    return CUTUNE_OK;
}

/* T1 Budget: a list of limits, each {Type, BudgetValue}; all apply. */
static cutune_status parse_budget(cutune_problem *p, json_t *root)
{
    json_t *b = json_object_get(root, "Budget");
    if (!b || json_is_null(b))
        return CUTUNE_OK;
    if (!json_is_array(b))
        return fail(p, CUTUNE_ERR_PARSE, "Budget: expected a list");
    for (size_t i = 0; i < json_array_size(b); i++) {
        json_t *item = json_array_get(b, i);
        const char *type = get_string(item, "Type");
        json_t *jv = json_object_get(item, "BudgetValue");
        if (!type || !json_is_number(jv) || json_number_value(jv) <= 0)
            return fail(p, CUTUNE_ERR_PARSE, "Budget[%zu]: needs a Type and "
                        "a positive BudgetValue", i);
        double v = json_number_value(jv);
        if (strcmp(type, "ConfigurationCount") == 0)
            p->budget_evals = (size_t)v;
        else if (strcmp(type, "TuningDuration") == 0)
            p->budget_seconds = v;
        else if (strcmp(type, "ConfigurationFraction") == 0 && v <= 1)
            p->budget_fraction = v;
        else
            return fail(p, CUTUNE_ERR_UNSUPPORTED, "Budget[%zu].Type: '%s' "
                        "(ConfigurationCount, TuningDuration, "
                        "ConfigurationFraction of at most 1)", i, type);
    }
    return CUTUNE_OK;
}

/* T1 Search: the strategy by name. The names of other tuners map to
 * cutune's strategies; attributes (strategy settings) are not taken. */
static cutune_status parse_search(cutune_problem *p, json_t *root)
{
    static const struct {
        const char *t1;
        const char *ours;
    } names[] = {
        {"Random", "random"},           {"random_sample", "random"},
        {"Deterministic", "brute_force"}, {"BruteForce", "brute_force"},
        {"FullSearch", "brute_force"},  {"SimulatedAnnealing", "annealing"},
        {"simulated_annealing", "annealing"},
        {"GeneticAlgorithm", "genetic"}, {"genetic_algorithm", "genetic"},
        {"DifferentialEvolution", "diff_evo"},
        {"BayesianOptimization", "bayes"}, {"bayes_opt", "bayes"},
        {"LocalSearch", "local"},       {"greedy_ils", "local"},
        {"Default", "default"},
    };
    json_t *s = json_object_get(root, "Search");
    if (!s || json_is_null(s))
        return CUTUNE_OK;
    const char *name = get_string(s, "Name");
    if (!name)
        return fail(p, CUTUNE_ERR_PARSE, "Search.Name: missing");
    json_t *attrs = json_object_get(s, "Attributes");
    if (json_is_array(attrs) && json_array_size(attrs) > 0)
        return fail(p, CUTUNE_ERR_UNSUPPORTED, "Search.Attributes: strategy "
                    "settings are not supported; remove them to use '%s' "
                    "with cutune's settings", name);
    const char *ours = NULL;
    for (size_t i = 0; i < sizeof names / sizeof *names && !ours; i++)
        if (strcasecmp(names[i].t1, name) == 0)
            ours = names[i].ours;
    if (!ours) {
        static const char *const own[] = {"default", "local", "brute_force",
                                          "random", "sobol", "annealing",
                                          "genetic", "diff_evo", "bayes"};
        for (size_t i = 0; i < sizeof own / sizeof *own && !ours; i++)
            if (strcmp(own[i], name) == 0)
                ours = own[i];
    }
    if (!ours)
        return fail(p, CUTUNE_ERR_UNSUPPORTED, "Search.Name: '%s' is not a "
                    "strategy cutune knows", name);
    p->search_strategy = strdup(ours);
    return p->search_strategy ? CUTUNE_OK
                              : fail(p, CUTUNE_ERR_NO_MEMORY, "out of memory");
}

static cutune_status parse_root(cutune_problem *p, const char *text,
                                size_t len, const char *dir,
                                const cutune__template *builtin,
                                const cutune_problem_options *opt)
{
    json_error_t jerr;
    json_t *root = json_loadb(text, len, 0, &jerr);
    if (!root)
        return fail(p, CUTUNE_ERR_PARSE, "line %d, column %d: %s", jerr.line,
                    jerr.column, jerr.text);
    cutune_status st = CUTUNE_OK;
    static const char *const known[] = {"General", "ConfigurationSpace",
                                        "KernelSpecification", "Budget",
                                        "Search", "CutuneExtensions", NULL};
    if (!json_is_object(root)) {
        st = fail(p, CUTUNE_ERR_PARSE, "expected a JSON object");
        goto done;
    }
    if (opt && opt->space_only) {
        p->space_only = 1;
    } else if ((st = check_known(p, root, "(top level)", known))) {
        goto done;
    }
    json_t *general = json_object_get(root, "General");
    const char *bname = get_string(general, "BenchmarkName");
    if (bname && !(p->name = strdup(bname))) {
        st = fail(p, CUTUNE_ERR_NO_MEMORY, "out of memory");
        goto done;
    }
    if ((st = parse_problem_size(p, root, opt)) ||
        (st = parse_space(p, root)))
        goto done;
    if (p->space_only) {
        const char *kname = get_string(
            json_object_get(root, "KernelSpecification"), "KernelName");
        if ((!p->name && !(p->name = strdup(kname ? kname : "unnamed"))) ||
            !(p->kernel_name = strdup(kname ? kname : ""))) {
            st = fail(p, CUTUNE_ERR_NO_MEMORY, "out of memory");
            goto done;
        }
        st = build_space(p);
        cutune__problem_hash_kernel(
            p, get_string(json_object_get(root, "KernelSpecification"),
                          "KernelFile"),
            dir, builtin ? builtin->source : NULL,
            builtin ? builtin->source_len : 0);
        goto done;
    }
    if ((st = parse_kernel(p, root, dir, builtin)) ||
        (st = parse_extensions(p, root)) || (st = parse_budget(p, root)) ||
        (st = parse_search(p, root)))
        goto done;

    json_t *args = json_object_get(json_object_get(root,
                                                   "KernelSpecification"),
                                   "Arguments");
    if (!json_is_array(args)) {
        st = fail(p, CUTUNE_ERR_PARSE,
                  "KernelSpecification.Arguments: missing");
        goto done;
    }
    p->args = calloc(json_array_size(args) + 1, sizeof *p->args);
    if (!p->args) {
        st = fail(p, CUTUNE_ERR_NO_MEMORY, "out of memory");
        goto done;
    }
    for (size_t i = 0; i < json_array_size(args); i++) {
        p->n_args = i + 1;
        if ((st = parse_arg(p, json_array_get(args, i), i)))
            goto done;
    }
    if ((st = parse_references(p, json_object_get(
                                      json_object_get(root,
                                                      "KernelSpecification"),
                                      "ReferenceArguments"),
                                  dir)))
        goto done;
    st = build_space(p);
done:
    json_decref(root);
    return st;
}

/* ------------------------------------------------------------------ */
/* Public API                                                          */

size_t cutune_template_count(void) { return cutune__template_count; }

const char *cutune_template_name(size_t index)
{
    return index < cutune__template_count ? cutune__templates[index].name
                                           : NULL;
}

static const cutune__template *find_template(const char *name)
{
    for (size_t i = 0; i < cutune__template_count; i++)
        if (strcmp(cutune__templates[i].name, name) == 0)
            return &cutune__templates[i];
    return NULL;
}

cutune_status cutune_problem_load(const char *name_or_path,
                                  const cutune_problem_options *options,
                                  cutune_problem **out)
{
    if (!out)
        return CUTUNE_ERR_INVALID_ARGUMENT;
    cutune_problem *p = calloc(1, sizeof *p);
    *out = p;
    if (!p)
        return CUTUNE_ERR_NO_MEMORY;
    if (!name_or_path) {
        p->origin = strdup("(problem)");
        return fail(p, CUTUNE_ERR_INVALID_ARGUMENT, "no problem given");
    }
    const cutune__template *builtin = find_template(name_or_path);
    if (builtin) {
        p->origin = cutune__strdup_printf("built-in template %s",
                                          builtin->name);
        if (!p->origin)
            return CUTUNE_ERR_NO_MEMORY;
        return parse_root(p, builtin->json, builtin->json_len, ".", builtin,
                          options);
    }
    p->origin = strdup(name_or_path);
    if (!p->origin)
        return CUTUNE_ERR_NO_MEMORY;
    char *text;
    size_t len;
    FILE *probe = fopen(name_or_path, "rb");
    if (!probe && errno == ENOENT && !strchr(name_or_path, '/') &&
        !strstr(name_or_path, ".json")) {
        char names[256] = "";
        for (size_t i = 0; i < cutune__template_count; i++) {
            if (i)
                strncat(names, ", ", sizeof names - strlen(names) - 1);
            strncat(names, cutune__templates[i].name,
                    sizeof names - strlen(names) - 1);
        }
        return fail(p, CUTUNE_ERR_NOT_FOUND,
                    "no built-in template and no file of that name "
                    "(built-in templates: %s)", names);
    }
    if (probe)
        fclose(probe);
    cutune_status st = read_file(p, name_or_path, &text, &len, "file");
    if (st)
        return st;
    char *dir = strdup(name_or_path);
    if (!dir) {
        free(text);
        return fail(p, CUTUNE_ERR_NO_MEMORY, "out of memory");
    }
    char *slash = strrchr(dir, '/');
    if (slash)
        *slash = '\0';
    else
        strcpy(dir, ".");
    st = parse_root(p, text, len, dir, NULL, options);
    free(dir);
    free(text);
    return st;
}

void cutune__free_strings(char **strings, size_t n)
{
    if (!strings)
        return;
    for (size_t i = 0; i < n; i++)
        free(strings[i]);
    free(strings);
}

void cutune_problem_destroy(cutune_problem *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->n_params; i++) {
        free(p->param_names[i]);
        if (p->param_values && p->param_values[i]) {
            cutune__value list = {CUTUNE__V_LIST, {0}};
            list.u.list.items = p->param_values[i];
            list.u.list.n = p->param_value_counts[i];
            cutune__value_clear(&list);
        }
        if (p->value_texts && p->value_texts[i])
            cutune__free_strings(p->value_texts[i], p->param_value_counts[i]);
    }
    free(p->param_names);
    free(p->param_values);
    free(p->param_value_counts);
    free(p->value_texts);
    free(p->default_values);
    for (size_t i = 0; i < p->n_conditions; i++)
        cutune__expr_free(p->conditions[i]);
    free(p->conditions);
    cutune__space_free(p->space);
    for (int d = 0; d < 3; d++) {
        cutune__expr_free(p->local_size[d]);
        cutune__expr_free(p->global_size[d]);
    }
    for (int d = 0; d < 3; d++)
        free(p->grid_div[d]);
    for (size_t i = 0; i < p->n_args; i++)
        free(p->args[i].name);
    free(p->args);
    cutune__expr_free(p->bytes_per_launch);
    cutune__expr_free(p->flops_per_launch);
    free(p->search_strategy);
    for (size_t i = 0; i < p->n_refs; i++)
        free(p->refs[i].data);
    free(p->refs);
    free(p->param_is_option);
    cutune__free_strings(p->options, p->n_options);
    cutune__value_clear(&p->problem_size_value);
    free(p->problem_size);
    free(p->source);
    free(p->kernel_name);
    free(p->name);
    free(p->origin);
    free(p->errmsg);
    free(p);
}

const char *cutune_problem_errmsg(const cutune_problem *p)
{
    if (!p)
        return "out of memory";
    return p->errmsg ? p->errmsg : "no error";
}

const char *cutune_problem_name(const cutune_problem *p) { return p->name; }
const char *cutune_problem_kernel_name(const cutune_problem *p)
{
    return p->kernel_name;
}
const char *cutune_problem_source_hash(const cutune_problem *p)
{
    return p->source_hash;
}
size_t cutune_problem_size_dims(const cutune_problem *p)
{
    return p->n_problem_size;
}
long long cutune_problem_size(const cutune_problem *p, size_t dim)
{
    return dim < p->n_problem_size ? p->problem_size[dim] : 0;
}
size_t cutune_problem_param_count(const cutune_problem *p)
{
    return p->n_params;
}
const char *cutune_problem_param_name(const cutune_problem *p, size_t i)
{
    return i < p->n_params ? p->param_names[i] : NULL;
}
size_t cutune_problem_value_count(const cutune_problem *p, size_t i)
{
    return i < p->n_params ? p->param_value_counts[i] : 0;
}
const char *cutune_problem_value(const cutune_problem *p, size_t i, size_t v)
{
    if (i >= p->n_params || v >= p->param_value_counts[i])
        return NULL;
    return p->value_texts[i][v];
}
double cutune_problem_cartesian_size(const cutune_problem *p)
{
    return p->space ? cutune__space_cartesian_size(p->space) : 0.0;
}
size_t cutune_problem_space_size(const cutune_problem *p)
{
    return p->space ? cutune__space_size(p->space) : 0;
}
double cutune_problem_space_seconds(const cutune_problem *p)
{
    return p->space_seconds;
}

/* ------------------------------------------------------------------ */
/* Internal API                                                        */

size_t cutune__problem_find_param(const cutune_problem *p, const char *name)
{
    for (size_t i = 0; i < p->n_params; i++)
        if (strcmp(p->param_names[i], name) == 0)
            return i;
    return SIZE_MAX;
}

int cutune__problem_geometry(const cutune_problem *p, size_t config,
                             unsigned grid[3], unsigned block[3], char *err,
                             size_t errlen)
{
    static const long long grid_max[3] = {2147483647LL, 65535, 65535};
    const uint32_t *cfg = cutune__space_config(p->space, config);
    for (int d = 0; d < 3; d++) {
        long long b, g;
        if (eval_int(p, p->local_size[d], cfg, &b, err, errlen) != 0 ||
            eval_int(p, p->global_size[d], cfg, &g, err, errlen) != 0)
            return -1;
        if (p->has_grid_div) {
            /* Kernel Tuner's rule, which BAT applies to T1 files with a
             * ProblemSize: the grid covers the problem size divided by the
             * GridDiv parameters; GlobalSize does not enter. */
            g = d < (int)p->n_problem_size ? p->problem_size[d] : 1;
            long long div = 1;
            if (!p->grid_div_given[d]) {
                div = b;
            } else {
                for (size_t k = 0; k < p->n_grid_div[d]; k++) {
                    const cutune__value *v =
                        &p->param_values[p->grid_div[d][k]]
                                        [cfg[p->grid_div[d][k]]];
                    long long f;
                    if (value_as_i64(v, &f) != 0 || f <= 0 ||
                        div > (1LL << 40) / f) {
                        snprintf(err, errlen, "GridDiv parameter %s is not "
                                 "a positive integer",
                                 p->param_names[p->grid_div[d][k]]);
                        return -1;
                    }
                    div *= f;
                }
            }
            if (b <= 0 || b > 1024 || div <= 0) {
                snprintf(err, errlen, "block %lld in dimension %d is out "
                         "of range", b, d);
                return -1;
            }
            g = (g + div - 1) / div;
        } else if (b <= 0 || b > 1024 || g <= 0) {
            snprintf(err, errlen, "block %lld or global size %lld in "
                     "dimension %d is out of range", b, g, d);
            return -1;
        } else if (!p->global_in_blocks) {
            g = (g + b - 1) / b;
        }
        if (g > grid_max[d]) {
            snprintf(err, errlen, "grid of %lld blocks in dimension %d "
                     "exceeds the CUDA limit", g, d);
            return -1;
        }
        block[d] = (unsigned)b;
        grid[d] = (unsigned)g;
    }
    return 0;
}

/* Evaluates a per-launch extension expression for a configuration; 0 when
 * absent or not a number. */
static double per_launch(const cutune_problem *p, const cutune__expr *e,
                         size_t config)
{
    if (!e)
        return 0.0;
    char err[128];
    cutune__value v;
    double amount = 0.0;
    if (eval_in(p, e, cutune__space_config(p->space, config), &v, err,
                sizeof err) == 0) {
        if (value_as_double(&v, &amount) != 0)
            amount = 0.0;
        cutune__value_clear(&v);
    }
    return amount;
}

double cutune__problem_bytes(const cutune_problem *p, size_t config)
{
    return per_launch(p, p->bytes_per_launch, config);
}

double cutune__problem_flops(const cutune_problem *p, size_t config)
{
    return per_launch(p, p->flops_per_launch, config);
}

size_t cutune__problem_default_config(const cutune_problem *p)
{
    if (!p->space || cutune__space_size(p->space) == 0)
        return SIZE_MAX;
    uint32_t *cfg = malloc(p->n_params * sizeof *cfg);
    if (!cfg)
        return 0;
    for (size_t i = 0; i < p->n_params; i++)
        cfg[i] = (uint32_t)p->default_values[i];
    size_t idx = cutune__space_nearest(p->space, cfg);
    free(cfg);
    return idx;
}

char **cutune__problem_options(const cutune_problem *p, size_t config,
                               const char *arch, size_t *n)
{
    const uint32_t *cfg = cutune__space_config(p->space, config);
    size_t total = p->n_params + p->n_options + 1;
    char **opts = calloc(total, sizeof(char *));
    if (!opts)
        return NULL;
    size_t k = 0;
    for (size_t i = 0; i < p->n_params; i++) {
        const char *value = p->value_texts[i][cfg[i]];
        if (p->param_is_option && p->param_is_option[i]) {
            /* The value is the option itself; "" adds none. */
            if (!*value)
                continue;
            opts[k] = strdup(value);
        } else {
            opts[k] = cutune__strdup_printf("-D%s=%s", p->param_names[i],
                                            value);
        }
        if (!opts[k++])
            goto oom;
    }
    for (size_t i = 0; i < p->n_options; i++)
        if (!(opts[k++] = strdup(p->options[i])))
            goto oom;
    if (!(opts[k++] = cutune__strdup_printf("--gpu-architecture=%s", arch)))
        goto oom;
    *n = k;
    return opts;
oom:
    cutune__free_strings(opts, total);
    return NULL;
}

void cutune__problem_config_values(const cutune_problem *p, size_t config,
                                   cutune_param_value *out)
{
    const uint32_t *cfg = cutune__space_config(p->space, config);
    for (size_t i = 0; i < p->n_params; i++) {
        out[i].name = p->param_names[i];
        out[i].value = p->value_texts[i][cfg[i]];
    }
}
