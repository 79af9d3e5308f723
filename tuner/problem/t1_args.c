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

#include "expr/none.h"
#include "kernel_source.h"
#include "util.h"

/* ------------------------------------------------------------------ */
/* KernelSpecification                                                 */

/* The T1 schema's Type names. Vector types (float4, ...) are buffers of
 * `lanes` elements of their base type per item; "custom" is raw bytes,
 * TypeSize of them per item. */
static const struct {
    const char *name;
    cutune__dtype type;
    unsigned lanes;
} dtype_names[] = {
    {"bool", CUTUNE__DT_UINT8, 1},     {"int8", CUTUNE__DT_INT8, 1},
    {"char", CUTUNE__DT_INT8, 1},      {"uint8", CUTUNE__DT_UINT8, 1},
    {"int16", CUTUNE__DT_INT16, 1},    {"uint16", CUTUNE__DT_UINT16, 1},
    {"int32", CUTUNE__DT_INT32, 1},    {"int", CUTUNE__DT_INT32, 1},
    {"uint32", CUTUNE__DT_UINT32, 1},  {"uint", CUTUNE__DT_UINT32, 1},
    {"int64", CUTUNE__DT_INT64, 1},    {"long", CUTUNE__DT_INT64, 1},
    {"uint64", CUTUNE__DT_UINT64, 1},  {"half", CUTUNE__DT_HALF, 1},
    {"half2", CUTUNE__DT_HALF, 2},     {"half4", CUTUNE__DT_HALF, 4},
    {"half8", CUTUNE__DT_HALF, 8},     {"half16", CUTUNE__DT_HALF, 16},
    {"float", CUTUNE__DT_FLOAT, 1},    {"float32", CUTUNE__DT_FLOAT, 1},
    {"float2", CUTUNE__DT_FLOAT, 2},   {"float4", CUTUNE__DT_FLOAT, 4},
    {"float8", CUTUNE__DT_FLOAT, 8},   {"float16", CUTUNE__DT_FLOAT, 16},
    {"double", CUTUNE__DT_DOUBLE, 1},  {"float64", CUTUNE__DT_DOUBLE, 1},
    {"double2", CUTUNE__DT_DOUBLE, 2}, {"double4", CUTUNE__DT_DOUBLE, 4},
    {"double8", CUTUNE__DT_DOUBLE, 8}, {"double16", CUTUNE__DT_DOUBLE, 16},
    {"custom", CUTUNE__DT_UINT8, 0},
};
#define N_DTYPES (sizeof dtype_names / sizeof *dtype_names)

static size_t find_dtype(const char *type)
{
    for (size_t k = 0; type && k < N_DTYPES; k++)
        if (strcmp(type, dtype_names[k].name) == 0)
            return k;
    return CUTUNE__NONE;
}

/* Type (and TypeSize for custom): the element type and lanes per item. */
static cutune_status arg_type(cutune_problem *p, json_t *ja, const char *field,
                              cutune_arg_spec *a, unsigned *lanes)
{
    cutune_status st = CUTUNE_OK;
    const char *type = cutune__t1_need_string(p, ja, field, "Type", &st);
    if (!type)
        return st;
    size_t k = find_dtype(type);
    if (k == CUTUNE__NONE)
        return cutune__t1_fail(p, CUTUNE_ERR_UNSUPPORTED,
                               "%s.Type: '%s' is "
                               "not a T1 type (bool, int8..int64, "
                               "uint8..uint64, half, float, double, their "
                               "2/4/8/16-lane forms, custom)",
                               field, type);
    a->dtype = (cutune_dtype)dtype_names[k].type;
    *lanes = dtype_names[k].lanes;
    if (*lanes == 0) {
        json_t *ts = json_object_get(ja, "TypeSize");
        if (!json_is_integer(ts) || json_integer_value(ts) <= 0 ||
            json_integer_value(ts) > 1 << 20)
            return cutune__t1_fail(p, CUTUNE_ERR_PARSE,
                                   "%s.TypeSize: a "
                                   "'custom' argument needs its size in "
                                   "bytes (a positive integer)",
                                   field);
        *lanes = (unsigned)json_integer_value(ts);
    }
    return CUTUNE_OK;
}

/* MemoryType, and MemType as published files spell constant memory. A
 * constant-memory argument is copied into the module's __constant__
 * variable of its name where the source declares one, and passed as a
 * parameter where the kernel takes one (the worker decides which, from
 * the loaded module). */
static cutune_status arg_memory(cutune_problem *p, json_t *ja,
                                const char *field, cutune_arg_spec *a)
{
    cutune_status st = CUTUNE_OK;
    const char *mem = cutune__t1_need_string(p, ja, field, "MemoryType", &st);
    if (!mem)
        return st;
    json_t *jmt = json_object_get(ja, "MemType");
    const char *memtype = NULL;
    if (jmt && !json_is_null(jmt)) {
        if (!(memtype = cutune__t1_need_string(p, ja, field, "MemType", &st)))
            return st;
        if (strcmp(memtype, "Global") == 0)
            memtype = NULL;
        else if (strcmp(memtype, "Constant") != 0)
            return cutune__t1_fail(p, CUTUNE_ERR_UNSUPPORTED,
                                   "%s.MemType: "
                                   "'%s' (Constant, Global)",
                                   field, memtype);
    }
    if (strcmp(mem, "Symbol") == 0 || (strcmp(mem, "Vector") == 0 && memtype))
        a->memory = CUTUNE_ARG_CONSTANT;
    else if (strcmp(mem, "Vector") == 0)
        a->memory = CUTUNE_ARG_VECTOR;
    else if (strcmp(mem, "Scalar") == 0)
        a->memory = CUTUNE_ARG_SCALAR;
    else if (strcmp(mem, "Local") == 0)
        return cutune__t1_fail(p, CUTUNE_ERR_UNSUPPORTED,
                               "%s.MemoryType: "
                               "'Local' is OpenCL local memory; for CUDA's "
                               "dynamic shared memory give "
                               "KernelSpecification.SharedMemory",
                               field);
    else
        return cutune__t1_fail(p, CUTUNE_ERR_UNSUPPORTED,
                               "%s.MemoryType: "
                               "'%s' (Vector, Scalar, Symbol)",
                               field, mem);
    return CUTUNE_OK;
}

/* An expression field that must evaluate to a number. */
static cutune_status eval_number(cutune_problem *p, cutune__t1_draft *d,
                                 json_t *j, const char *field, int integer,
                                 double *out)
{
    cutune__value v;
    cutune_status st = cutune__t1_eval_field(p, d, j, field, &v);
    if (st)
        return st;
    long long i = 0;
    int rc =
        integer ? cutune__t1_as_i64(&v, &i) : cutune__t1_as_double(&v, out);
    cutune__value_clear(&v);
    if (integer && rc == 0)
        *out = (double)i;
    if (rc == 0 && isfinite(*out))
        return CUTUNE_OK;
    if (integer)
        return cutune__t1_fail(p, CUTUNE_ERR_PARSE,
                               "%s: '%s' is not an integer", field,
                               json_is_string(j) ? json_string_value(j) : "?");
    return cutune__t1_fail(p, CUTUNE_ERR_PARSE, "%s: not a finite number",
                           field);
}

/* A vector's Size, in items. */
static cutune_status arg_size(cutune_problem *p, cutune__t1_draft *d,
                              json_t *ja, const char *field, long long *count)
{
    char sfield[96];
    snprintf(sfield, sizeof sfield, "%s.Size", field);
    json_t *js = json_object_get(ja, "Size");
    if (!js || json_is_null(js))
        return cutune__t1_fail(p, CUTUNE_ERR_PARSE, "%s: missing", sfield);
    double items = 0;
    cutune_status st = eval_number(p, d, js, sfield, 1, &items);
    if (st)
        return st;
    *count = (long long)items;
    if (*count <= 0)
        return cutune__t1_fail(p, CUTUNE_ERR_PARSE, "%s: %lld elements",
                               sfield, *count);
    return CUTUNE_OK;
}

/* A BinaryRaw DataSource (relative to the T1 file's folder) read whole;
 * it must hold exactly `count` elements of `dtype`. */
static cutune_status read_data_source(cutune_problem *p, cutune__t1_draft *d,
                                      const char *src, const char *dir,
                                      const char *field, uint64_t count,
                                      cutune__dtype dtype, const void **out)
{
    char *data = NULL;
    size_t size = 0;
    char *path =
        src[0] == '/' ? strdup(src) : cutune__strdup_printf("%s/%s", dir, src);
    if (!path)
        return cutune__t1_fail(p, CUTUNE_ERR_NO_MEMORY, "out of memory");
    char dfield[112];
    snprintf(dfield, sizeof dfield, "%s.DataSource", field);
    cutune_status st = cutune__t1_read_file(p, path, &data, &size, dfield);
    free(path);
    if (st)
        return st;
    if (!cutune__t1_keep(p, d, data))
        return CUTUNE_ERR_NO_MEMORY;
    size_t want = (size_t)count * cutune__dtype_size(dtype);
    if (size != want)
        return cutune__t1_fail(p, CUTUNE_ERR_PARSE,
                               "%s: '%s' holds %zu "
                               "bytes; Size and Type make %zu",
                               dfield, src, size, want);
    *out = data;
    return CUTUNE_OK;
}

/* FillType of a vector, with BinaryRaw's DataSource read here. */
static cutune_status arg_fill(cutune_problem *p, cutune__t1_draft *d,
                              json_t *ja, const char *field, const char *dir,
                              cutune_arg_spec *a)
{
    cutune_status st = CUTUNE_OK;
    json_t *jf = json_object_get(ja, "FillType");
    const char *fill = NULL;
    if (jf && !json_is_null(jf) &&
        !(fill = cutune__t1_need_string(p, ja, field, "FillType", &st)))
        return st;
    if (!fill || strcmp(fill, "Constant") == 0) {
        a->fill = CUTUNE_FILL_CONSTANT;
    } else if (strcmp(fill, "Random") == 0) {
        a->fill = CUTUNE_FILL_RANDOM;
    } else if (strcmp(fill, "BinaryRaw") == 0) {
        const char *src =
            cutune__t1_need_string(p, ja, field, "DataSource", &st);
        if (!src)
            return st;
        if ((st = read_data_source(p, d, src, dir, field, a->count,
                                   (cutune__dtype)a->dtype, &a->data)))
            return st;
        a->fill = CUTUNE_FILL_DATA;
    } else {
        return cutune__t1_fail(p, CUTUNE_ERR_UNSUPPORTED,
                               "%s.FillType: "
                               "'%s' (Constant, Random, BinaryRaw)",
                               field, fill);
    }
    return CUTUNE_OK;
}

/* FillValue: a scalar's value, a vector's constant or random bound. */
static cutune_status arg_fill_value(cutune_problem *p, cutune__t1_draft *d,
                                    json_t *ja, const char *field,
                                    cutune_arg_spec *a)
{
    char ffield[96];
    snprintf(ffield, sizeof ffield, "%s.FillValue", field);
    json_t *fv = json_object_get(ja, "FillValue");
    if (!fv || json_is_null(fv)) {
        if (a->memory == CUTUNE_ARG_SCALAR)
            return cutune__t1_fail(p, CUTUNE_ERR_PARSE,
                                   "%s: a scalar needs "
                                   "one",
                                   ffield);
        a->fill_value = a->fill == CUTUNE_FILL_RANDOM ? 1.0 : 0.0;
        return CUTUNE_OK;
    }
    if (json_is_boolean(fv)) {
        a->fill_value = json_is_true(fv);
        return CUTUNE_OK;
    }
    return eval_number(p, d, fv, ffield, 0, &a->fill_value);
}

static cutune_status parse_arg(cutune_problem *p, cutune__t1_draft *d,
                               json_t *ja, size_t i, const char *dir,
                               cutune_arg_spec *a)
{
    char field[64];
    static const char *const known[] = {
        "Name",      "Type",     "TypeSize",   "MemoryType",
        "MemType",   "FillType", "DataSource", "Size",
        "FillValue", "Output",   "RandomSeed", NULL};
    snprintf(field, sizeof field, "KernelSpecification.Arguments[%zu]", i);
    if (!json_is_object(ja))
        return cutune__t1_fail(p, CUTUNE_ERR_PARSE,
                               "%s: expected an object, "
                               "found %s",
                               field, cutune__t1_json_kind(ja));
    cutune__t1_check_known(p, ja, field, known);
    json_t *jn = json_object_get(ja, "Name");
    if (jn && !json_is_null(jn) && !json_is_string(jn))
        return cutune__t1_fail(p, CUTUNE_ERR_PARSE,
                               "%s.Name: expected a "
                               "string, found %s",
                               field, cutune__t1_json_kind(jn));
    a->name = json_is_string(jn) ? json_string_value(jn) : "";
    unsigned lanes = 1;
    cutune_status st;
    if ((st = arg_type(p, ja, field, a, &lanes)) ||
        (st = arg_memory(p, ja, field, a)))
        return st;
    if (a->memory == CUTUNE_ARG_SCALAR && lanes != 1)
        return cutune__t1_fail(p, CUTUNE_ERR_UNSUPPORTED,
                               "%s.Type: a scalar "
                               "of several elements ('%s') is not supported",
                               field, cutune__t1_string(ja, "Type"));
    if (a->memory != CUTUNE_ARG_SCALAR) {
        long long items = 0;
        if ((st = arg_size(p, d, ja, field, &items)))
            return st;
        if ((unsigned long long)items > (1ull << 40) / lanes)
            return cutune__t1_fail(p, CUTUNE_ERR_PARSE,
                                   "%s.Size: %lld items "
                                   "is more than a GPU holds",
                                   field, items);
        a->count = (uint64_t)items * lanes;
        if ((st = arg_fill(p, d, ja, field, dir, a)))
            return st;
    } else {
        a->fill = CUTUNE_FILL_CONSTANT;
    }
    if ((st = arg_fill_value(p, d, ja, field, a)))
        return st;
    json_t *seed = json_object_get(ja, "RandomSeed");
    if (seed && !json_is_null(seed) && !json_is_integer(seed))
        return cutune__t1_fail(p, CUTUNE_ERR_PARSE,
                               "%s.RandomSeed: expected "
                               "an integer, found %s",
                               field, cutune__t1_json_kind(seed));
    a->seed = json_is_integer(seed) ? (uint64_t)json_integer_value(seed)
                                    : (uint64_t)i + 1;
    json_t *out = json_object_get(ja, "Output");
    if (out && !json_is_null(out) && !json_is_boolean(out) &&
        !json_is_integer(out))
        return cutune__t1_fail(p, CUTUNE_ERR_PARSE,
                               "%s.Output: expected true, "
                               "false, 1 or 0, found %s",
                               field, cutune__t1_json_kind(out));
    a->output = json_is_true(out) ||
                (json_is_integer(out) && json_integer_value(out) != 0);
    return CUTUNE_OK;
}

/* The kernel's arguments, in the order the kernel takes them. */
cutune_status cutune__t1_parse_args(cutune_problem *p, cutune__t1_draft *d,
                                    json_t *ks, const char *dir)
{
    json_t *args = json_object_get(ks, "Arguments");
    if (!args)
        return cutune__t1_fail(p, CUTUNE_ERR_PARSE,
                               "KernelSpecification.Arguments: missing");
    if (!json_is_array(args))
        return cutune__t1_fail(p, CUTUNE_ERR_PARSE,
                               "KernelSpecification.Arguments: expected a "
                               "list, found %s",
                               cutune__t1_json_kind(args));
    size_t n = json_array_size(args);
    cutune_arg_spec *a = cutune__t1_alloc(p, d, n, sizeof *a);
    if (!a)
        return CUTUNE_ERR_NO_MEMORY;
    d->spec.arguments = a;
    for (size_t i = 0; i < n; i++) {
        d->spec.n_arguments = i + 1;
        cutune_status st =
            parse_arg(p, d, json_array_get(args, i), i, dir, &a[i]);
        if (st)
            return st;
    }
    return CUTUNE_OK;
}

/* ValidationMethod and ValidationThreshold: the tolerance of a
 * reference. */
static cutune_status ref_validation(cutune_problem *p, json_t *jr,
                                    const char *field, cutune_answer_spec *r)
{
    const char *method = cutune__t1_string(jr, "ValidationMethod");
    json_t *th = json_object_get(jr, "ValidationThreshold");
    double threshold = json_is_number(th) ? json_number_value(th) : 0.0;
    if (th && (!json_is_number(th) || threshold < 0))
        return cutune__t1_fail(p, CUTUNE_ERR_PARSE,
                               "%s.ValidationThreshold: a "
                               "non-negative number is needed",
                               field);
    /* The schema's SideBySide methods compare element by element,
     * as cutune compares every method. */
    if (!method || strcmp(method, "AbsoluteDifference") == 0 ||
        strcmp(method, "SideBySideComparison") == 0) {
        r->atol = json_is_number(th) ? threshold : 1e-6;
        r->rtol = 0.0;
    } else if (strcmp(method, "RelativeDifference") == 0 ||
               strcmp(method, "SideBySideRelativeComparison") == 0) {
        r->atol = 0.0;
        r->rtol = json_is_number(th) ? threshold : 1e-5;
    } else if (strcmp(method, "Exact") == 0) {
        r->atol = r->rtol = 0.0;
    } else {
        return cutune__t1_fail(
            p, CUTUNE_ERR_UNSUPPORTED,
            "%s.ValidationMethod: '%s' "
            "(AbsoluteDifference, RelativeDifference, Exact, "
            "SideBySideComparison, SideBySideRelativeComparison)",
            field, method);
    }
    return CUTUNE_OK;
}

/* T1 ReferenceArguments: expected contents of output arguments, each
 * naming its output (TargetName, else Name), with how to compare. When a
 * problem gives any, outputs are validated against them instead of
 * against the default configuration's output, and outputs without one are
 * not validated. */
/* A reference's expected contents: a constant, random values or a
 * BinaryRaw file. */
static cutune_status ref_fill(cutune_problem *p, cutune__t1_draft *d,
                              json_t *jr, const char *field, const char *dir,
                              const cutune_arg_spec *a, cutune_answer_spec *r)
{
    const char *fill = cutune__t1_string(jr, "FillType");
    json_t *fv = json_object_get(jr, "FillValue");
    json_t *seed = json_object_get(jr, "RandomSeed");
    r->seed =
        json_is_integer(seed) ? (uint64_t)json_integer_value(seed) : a->seed;
    if (!fill || strcmp(fill, "Constant") == 0 ||
        strcmp(fill, "Random") == 0) {
        r->fill = fill && strcmp(fill, "Random") == 0 ? CUTUNE_FILL_RANDOM
                                                      : CUTUNE_FILL_CONSTANT;
        if (!json_is_number(fv))
            return cutune__t1_fail(p, CUTUNE_ERR_PARSE,
                                   "%s.FillValue: a number is "
                                   "needed",
                                   field);
        r->fill_value = json_number_value(fv);
        return CUTUNE_OK;
    }
    if (strcmp(fill, "BinaryRaw") == 0) {
        const char *src = cutune__t1_string(jr, "DataSource");
        if (!src)
            return cutune__t1_fail(p, CUTUNE_ERR_PARSE,
                                   "%s.DataSource: missing", field);
        r->fill = CUTUNE_FILL_DATA;
        return read_data_source(p, d, src, dir, field, a->count,
                                (cutune__dtype)a->dtype, &r->data);
    }
    return cutune__t1_fail(p, CUTUNE_ERR_UNSUPPORTED,
                           "%s.FillType: '%s' "
                           "(Constant, Random, BinaryRaw)",
                           field, fill);
}

/* One reference, naming its output (TargetName, else Name). */
static cutune_status parse_reference(cutune_problem *p, cutune__t1_draft *d,
                                     json_t *jr, size_t i, const char *dir,
                                     cutune_answer_spec *r)
{
    static const char *const known[] = {
        "Name",       "TargetName",       "Type",
        "MemoryType", "AccessType",       "FillType",
        "FillValue",  "DataSource",       "Size",
        "RandomSeed", "ValidationMethod", "ValidationThreshold",
        NULL};
    char field[80];
    snprintf(field, sizeof field,
             "KernelSpecification.ReferenceArguments[%zu]", i);
    if (!json_is_object(jr))
        return cutune__t1_fail(p, CUTUNE_ERR_PARSE, "%s: expected an object",
                               field);
    cutune_status st = cutune__t1_check_known(p, jr, field, known);
    if (st)
        return st;
    const char *target = cutune__t1_string(jr, "TargetName");
    if (!target)
        target = cutune__t1_string(jr, "Name");
    size_t t = CUTUNE__NONE;
    const cutune_arg_spec *args = d->spec.arguments;
    for (size_t k = 0; target && k < d->spec.n_arguments; k++)
        if (strcmp(args[k].name, target) == 0)
            t = k;
    if (t == CUTUNE__NONE || args[t].memory != CUTUNE_ARG_VECTOR)
        return cutune__t1_fail(p, CUTUNE_ERR_PARSE,
                               "%s: '%s' names no vector "
                               "argument",
                               field, target ? target : "(no name)");
    const cutune_arg_spec *a = &args[t];
    r->arg = t;
    const char *type = cutune__t1_string(jr, "Type");
    if (type) {
        size_t k = find_dtype(type);
        if (k == CUTUNE__NONE || (cutune_dtype)dtype_names[k].type != a->dtype)
            return cutune__t1_fail(p, CUTUNE_ERR_PARSE,
                                   "%s.Type: '%s' is not the "
                                   "type of '%s'",
                                   field, type, a->name);
    }
    json_t *size = json_object_get(jr, "Size");
    if (size && (!json_is_integer(size) ||
                 (uint64_t)json_integer_value(size) != a->count))
        return cutune__t1_fail(p, CUTUNE_ERR_PARSE,
                               "%s.Size: '%s' has %llu "
                               "elements",
                               field, a->name, (unsigned long long)a->count);
    if ((st = ref_fill(p, d, jr, field, dir, a, r)))
        return st;
    return ref_validation(p, jr, field, r);
}

/* T1 ReferenceArguments: expected contents of output arguments, with how
 * to compare. When a problem gives any, outputs are validated against
 * them instead of against the default configuration's output, and
 * outputs without one are not validated. */
cutune_status cutune__t1_parse_references(cutune_problem *p,
                                          cutune__t1_draft *d, json_t *refs,
                                          const char *dir)
{
    if (!refs || json_is_null(refs))
        return CUTUNE_OK;
    if (!json_is_array(refs))
        return cutune__t1_fail(p, CUTUNE_ERR_PARSE,
                               "KernelSpecification."
                               "ReferenceArguments: expected a list");
    size_t n = json_array_size(refs);
    cutune_answer_spec *r = cutune__t1_alloc(p, d, n, sizeof *r);
    if (!r)
        return CUTUNE_ERR_NO_MEMORY;
    d->spec.answers = r;
    for (size_t i = 0; i < n; i++) {
        d->spec.n_answers = i + 1;
        cutune_status st =
            parse_reference(p, d, json_array_get(refs, i), i, dir, &r[i]);
        if (st)
            return st;
    }
    return CUTUNE_OK;
}
