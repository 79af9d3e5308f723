/* T1 KernelSpecification.Arguments and ReferenceArguments: the kernel's
 * arguments, how they are filled, and the expected outputs. */
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

#include "kernel_source.h"
#include "util.h"

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

cutune_status cutune__t1_parse_arg(cutune_problem *p, json_t *ja, size_t i)
{
    char field[64];
    static const char *const known[] = {
        "Name", "Type", "MemoryType", "MemType", "AccessType", "FillType",
        "Size", "FillValue", "Output", "RandomSeed", NULL};
    snprintf(field, sizeof field, "KernelSpecification.Arguments[%zu]", i);
    if (!json_is_object(ja))
        return cutune__t1_fail(p, CUTUNE_ERR_PARSE, "%s: expected an object", field);
    cutune_status st = cutune__t1_check_known(p, ja, field, known);
    if (st)
        return st;
    cutune__arg *a = &p->args[i];
    const char *name = cutune__t1_string(ja, "Name");
    a->name = strdup(name ? name : "");
    if (!a->name)
        return cutune__t1_fail(p, CUTUNE_ERR_NO_MEMORY, "out of memory");

    const char *type = cutune__t1_string(ja, "Type");
    size_t k;
    for (k = 0; type && k < sizeof dtype_names / sizeof *dtype_names; k++)
        if (strcmp(type, dtype_names[k].name) == 0)
            break;
    if (!type || k == sizeof dtype_names / sizeof *dtype_names)
        return cutune__t1_fail(p, CUTUNE_ERR_UNSUPPORTED, "%s.Type: '%s' is not a known "
                    "type (float, double, int8..int64, uint8..uint64)",
                    field, type ? type : "(missing)");
    a->dtype = dtype_names[k].type;

    const char *mem = cutune__t1_string(ja, "MemoryType");
    if (!mem)
        return cutune__t1_fail(p, CUTUNE_ERR_PARSE, "%s.MemoryType: missing", field);
    /* Constant memory: `MemoryType: Symbol`, or a vector with `MemType:
     * Constant` as published files spell it. Its data goes to the
     * module's __constant__ variable of the argument's name, not to a
     * kernel parameter. */
    const char *memtype = cutune__t1_string(ja, "MemType");
    if (memtype && strcmp(memtype, "Constant") != 0)
        return cutune__t1_fail(p, CUTUNE_ERR_UNSUPPORTED, "%s.MemType: '%s' is not "
                    "supported (Constant)", field, memtype);
    if (strcmp(mem, "Symbol") == 0 ||
        (strcmp(mem, "Vector") == 0 && memtype)) {
        a->is_vector = 1;
        a->is_symbol = 1;
        if (!name || !*name || strlen(name) >= 64)
            return cutune__t1_fail(p, CUTUNE_ERR_PARSE, "%s.Name: a constant-memory "
                        "argument needs the name of its __constant__ "
                        "variable (under 64 characters)", field);
    } else if (strcmp(mem, "Vector") == 0)
        a->is_vector = 1;
    else if (strcmp(mem, "Scalar") == 0)
        a->is_vector = 0;
    else
        return cutune__t1_fail(p, CUTUNE_ERR_UNSUPPORTED,
                    "%s.MemoryType: '%s' is not supported (Vector, Scalar)",
                    field, mem);

    char err[256];
    if (a->is_vector) {
        const char *fill = cutune__t1_string(ja, "FillType");
        if (!fill || strcmp(fill, "Constant") == 0)
            a->fill = CUTUNE__FILL_CONSTANT;
        else if (strcmp(fill, "Random") == 0)
            a->fill = CUTUNE__FILL_RANDOM;
        else
            return cutune__t1_fail(p, CUTUNE_ERR_UNSUPPORTED,
                        "%s.FillType: '%s' is not supported (Constant, "
                        "Random)", field, fill);
        char sfield[96];
        snprintf(sfield, sizeof sfield, "%s.Size", field);
        cutune__expr *size = cutune__t1_parse_field(p, json_object_get(ja, "Size"),
                                         sfield, &st);
        if (!size)
            return st;
        long long count;
        int rc = cutune__t1_eval_int(p, size, NULL, &count, err, sizeof err);
        cutune__expr_free(size);
        if (rc != 0)
            return cutune__t1_fail(p, CUTUNE_ERR_PARSE, "%s: %s", sfield, err);
        if (count <= 0)
            return cutune__t1_fail(p, CUTUNE_ERR_PARSE, "%s: %lld elements", sfield,
                        count);
        a->count = (uint64_t)count;
    }

    json_t *fv = json_object_get(ja, "FillValue");
    if (fv && !json_is_null(fv)) {
        char ffield[96];
        snprintf(ffield, sizeof ffield, "%s.FillValue", field);
        cutune__expr *e = cutune__t1_parse_field(p, fv, ffield, &st);
        if (!e)
            return st;
        cutune__value v;
        int rc = cutune__t1_eval_in(p, e, NULL, &v, err, sizeof err);
        cutune__expr_free(e);
        if (rc != 0)
            return cutune__t1_fail(p, CUTUNE_ERR_PARSE, "%s: %s", ffield, err);
        rc = cutune__t1_as_double(&v, &a->fill_value);
        cutune__value_clear(&v);
        if (rc != 0)
            return cutune__t1_fail(p, CUTUNE_ERR_PARSE, "%s: not a number", ffield);
    } else if (!a->is_vector) {
        return cutune__t1_fail(p, CUTUNE_ERR_PARSE, "%s.FillValue: a scalar needs one",
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

/* T1 ReferenceArguments: expected contents of output arguments, each
 * naming its output (TargetName, else Name), with how to compare. When a
 * problem gives any, outputs are validated against them instead of
 * against the default configuration's output, and outputs without one are
 * not validated. */
cutune_status cutune__t1_parse_references(cutune_problem *p, json_t *refs,
                                      const char *dir)
{
    if (!refs || json_is_null(refs))
        return CUTUNE_OK;
    if (!json_is_array(refs))
        return cutune__t1_fail(p, CUTUNE_ERR_PARSE, "KernelSpecification."
                    "ReferenceArguments: expected a list");
    size_t n = json_array_size(refs);
    p->refs = calloc(n ? n : 1, sizeof *p->refs);
    if (!p->refs)
        return cutune__t1_fail(p, CUTUNE_ERR_NO_MEMORY, "out of memory");
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
            return cutune__t1_fail(p, CUTUNE_ERR_PARSE, "%s: expected an object", field);
        cutune_status st = cutune__t1_check_known(p, jr, field, known);
        if (st)
            return st;
        cutune__reference *r = &p->refs[i];
        p->n_refs = i + 1;
        const char *target = cutune__t1_string(jr, "TargetName");
        if (!target)
            target = cutune__t1_string(jr, "Name");
        size_t t = SIZE_MAX;
        for (size_t k = 0; target && k < p->n_args; k++)
            if (strcmp(p->args[k].name, target) == 0)
                t = k;
        if (t == SIZE_MAX || !p->args[t].is_vector || p->args[t].is_symbol)
            return cutune__t1_fail(p, CUTUNE_ERR_PARSE, "%s: '%s' names no vector "
                        "argument", field, target ? target : "(no name)");
        const cutune__arg *a = &p->args[t];
        r->arg = t;
        const char *type = cutune__t1_string(jr, "Type");
        if (type) {
            size_t k;
            for (k = 0; k < sizeof dtype_names / sizeof *dtype_names; k++)
                if (strcmp(type, dtype_names[k].name) == 0)
                    break;
            if (k == sizeof dtype_names / sizeof *dtype_names ||
                dtype_names[k].type != a->dtype)
                return cutune__t1_fail(p, CUTUNE_ERR_PARSE, "%s.Type: '%s' is not the "
                            "type of '%s'", field, type, a->name);
        }
        json_t *size = json_object_get(jr, "Size");
        if (size && (!json_is_integer(size) ||
                     (uint64_t)json_integer_value(size) != a->count))
            return cutune__t1_fail(p, CUTUNE_ERR_PARSE, "%s.Size: '%s' has %llu "
                        "elements", field, a->name,
                        (unsigned long long)a->count);
        const char *fill = cutune__t1_string(jr, "FillType");
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
                return cutune__t1_fail(p, CUTUNE_ERR_PARSE, "%s.FillValue: a number is "
                            "needed", field);
            r->fill_value = json_number_value(fv);
        } else if (strcmp(fill, "BinaryRaw") == 0) {
            const char *src = cutune__t1_string(jr, "DataSource");
            if (!src)
                return cutune__t1_fail(p, CUTUNE_ERR_PARSE, "%s.DataSource: missing",
                            field);
            char *path = src[0] == '/' ? strdup(src)
                                       : cutune__strdup_printf("%s/%s", dir,
                                                               src);
            if (!path)
                return cutune__t1_fail(p, CUTUNE_ERR_NO_MEMORY, "out of memory");
            char dfield[112];
            snprintf(dfield, sizeof dfield, "%s.DataSource", field);
            st = cutune__t1_read_file(p, path, &r->data, &r->data_size, dfield);
            free(path);
            if (st)
                return st;
            size_t want = (size_t)a->count * cutune__dtype_size(a->dtype);
            if (r->data_size != want)
                return cutune__t1_fail(p, CUTUNE_ERR_PARSE, "%s: %s holds %zu bytes; "
                            "'%s' has %zu", dfield, src, r->data_size,
                            a->name, want);
            r->fill = CUTUNE__FILL_BINARY;
        } else {
            return cutune__t1_fail(p, CUTUNE_ERR_UNSUPPORTED, "%s.FillType: '%s' "
                        "(Constant, Random, BinaryRaw)", field, fill);
        }
        const char *method = cutune__t1_string(jr, "ValidationMethod");
        json_t *th = json_object_get(jr, "ValidationThreshold");
        double threshold = json_is_number(th) ? json_number_value(th) : 0.0;
        if (th && (!json_is_number(th) || threshold < 0))
            return cutune__t1_fail(p, CUTUNE_ERR_PARSE, "%s.ValidationThreshold: a "
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
            return cutune__t1_fail(p, CUTUNE_ERR_UNSUPPORTED, "%s.ValidationMethod: '%s' "
                        "(AbsoluteDifference, RelativeDifference, Exact)",
                        field, method);
        }
    }
    return CUTUNE_OK;
}

