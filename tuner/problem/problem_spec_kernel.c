/* The kernel's part of a problem spec (see problem_spec.c): the source
 * and its NVRTC options, the launch geometry, the per-launch figures, the
 * arguments and the answers. */
#define _XOPEN_SOURCE 700

#include "problem_spec.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expr/none.h"
#include "kernel_source.h"
#include "t1_read.h"
#include "util.h"

/* Most configurations a load checks the launch geometry of; a larger
 * space is checked at evenly spread configurations. */
#define GEOMETRY_CHECKS 200000

/* Largest argument a GPU could hold, in elements (a guard against a count
 * that is a mistake, not a limit of any GPU in particular). */
#define MAX_ELEMENTS (1ull << 40)

static cutune_status fail_oom(cutune_problem *p)
{
    return cutune__t1_fail(p, CUTUNE_ERR_NO_MEMORY, "out of memory");
}

static cutune_status copy_source(cutune_problem *p,
                                 const cutune_problem_spec *spec,
                                 const char *source_hash)
{
    if (!spec->source)
        return cutune__t1_fail(p, CUTUNE_ERR_INVALID_ARGUMENT,
                               "source: missing");
    size_t len = spec->source_len ? spec->source_len : strlen(spec->source);
    if (len > CUTUNE__MAX_SOURCE_BYTES)
        return cutune__t1_fail(p, CUTUNE_ERR_LIMIT,
                               "source: %zu bytes, more than the %u a "
                               "kernel source may have",
                               len, (unsigned)CUTUNE__MAX_SOURCE_BYTES);
    if (!(p->source = malloc(len + 1)))
        return fail_oom(p);
    memcpy(p->source, spec->source, len);
    p->source[len] = '\0';
    p->source_len = len;
    const char *why;
    cutune__source_language lang =
        cutune__source_language_of(NULL, p->source, &why);
    if (lang != CUTUNE__SRC_CUDA)
        return cutune__t1_fail(p, CUTUNE_ERR_UNSUPPORTED,
                               "source: %s source (%s); cutune compiles "
                               "CUDA with NVRTC",
                               lang == CUTUNE__SRC_HIP ? "HIP" : "OpenCL",
                               why);
    if (source_hash)
        snprintf(p->source_hash, sizeof p->source_hash, "%s", source_hash);
    else
        snprintf(p->source_hash, sizeof p->source_hash, "%016llx",
                 (unsigned long long)cutune__fnv1a64(p->source, len));
    size_t n = spec->n_compiler_options;
    p->options = calloc(n ? n : 1, sizeof(char *));
    if (!p->options)
        return fail_oom(p);
    for (size_t i = 0; i < n; i++) {
        if (!spec->compiler_options || !spec->compiler_options[i])
            return cutune__t1_fail(p, CUTUNE_ERR_INVALID_ARGUMENT,
                                   "compiler_options[%zu]: NULL", i);
        if (!(p->options[i] = strdup(spec->compiler_options[i])))
            return fail_oom(p);
        p->n_options = i + 1;
    }
    return CUTUNE_OK;
}

/* One dimension's grid division: the entries of `list`, parsed, each
 * naming tunables only. */
static cutune_status grid_div(cutune_problem *p, int d,
                              const char *const *list, size_t n)
{
    p->grid_div[d] = calloc(n ? n : 1, sizeof *p->grid_div[d]);
    if (!p->grid_div[d])
        return fail_oom(p);
    for (size_t k = 0; k < n; k++) {
        char field[64];
        cutune__problem_field(p, CUTUNE__F_GRID_DIV, (size_t)d, k, field,
                              sizeof field);
        cutune_status st = CUTUNE_OK;
        p->grid_div[d][k] = cutune__problem_parse(p, list[k], field, &st);
        if (!p->grid_div[d][k])
            return st;
        p->n_grid_div[d] = k + 1;
        if ((st = cutune__problem_check_names(p, p->grid_div[d][k], field)))
            return st;
    }
    p->grid_div_given[d] = 1;
    return CUTUNE_OK;
}

/* Kernel Tuner's launch rule unless the spec gives a T1 GlobalSize: the
 * block from block_size (by default the tunables block_size_x/y/z, else
 * 256 by 1 by 1), the grid dividing the problem size. */
cutune_status cutune__problem_build_geometry(cutune_problem *p,
                                             const cutune_problem_spec *spec)
{
    static const char *const names[3] = {"block_size_x", "block_size_y",
                                         "block_size_z"};
    static const char *const sizes[3] = {"256", "1", "1"};
    char field[64];
    cutune_status st = CUTUNE_OK;
    for (int d = 0; d < 3; d++) {
        const char *text = spec->block_size[d];
        if (!text)
            text = cutune__problem_find_param(p, names[d]) != CUTUNE__NONE
                       ? names[d]
                       : sizes[d];
        cutune__problem_field(p, CUTUNE__F_LOCAL, (size_t)d, 0, field,
                              sizeof field);
        if (!(p->local_size[d] = cutune__problem_parse(p, text, field, &st)))
            return st;
    }
    int global =
        spec->global_size[0] || spec->global_size[1] || spec->global_size[2];
    for (int d = 0; global && d < 3; d++) {
        cutune__problem_field(p, CUTUNE__F_GLOBAL, (size_t)d, 0, field,
                              sizeof field);
        if (!(p->global_size[d] =
                  cutune__problem_parse(p, spec->global_size[d], field, &st)))
            return st;
    }
    p->global_in_blocks = spec->global_size_in_blocks != 0;
    const char *const *lists[3] = {spec->grid_div_x, spec->grid_div_y,
                                   spec->grid_div_z};
    size_t counts[3] = {spec->n_grid_div_x, spec->n_grid_div_y,
                        spec->n_grid_div_z};
    p->has_grid_div = !global || lists[0] || lists[1] || lists[2];
    for (int d = 0; d < 3; d++)
        if (lists[d] && (st = grid_div(p, d, lists[d], counts[d])))
            return st;
    if (p->has_grid_div && p->spec_names && p->n_problem_size == 0)
        return cutune__t1_fail(p, CUTUNE_ERR_INVALID_ARGUMENT,
                               "problem_size: missing (the grid covers it, "
                               "divided by grid_div_x/y/z; or give "
                               "global_size)");
    return CUTUNE_OK;
}

cutune_status cutune__problem_build_kernel(cutune_problem *p,
                                           const cutune_problem_spec *spec,
                                           const char *source_hash)
{
    cutune_status st;
    if ((st = copy_source(p, spec, source_hash)) ||
        (st = cutune__problem_build_geometry(p, spec)))
        return st;
    p->shared_memory = spec->shared_memory;
    char field[64];
    if (spec->bytes_per_launch &&
        !(p->bytes_per_launch = cutune__problem_parse(
              p, spec->bytes_per_launch,
              cutune__problem_field(p, CUTUNE__F_BYTES, 0, 0, field,
                                    sizeof field),
              &st)))
        return st;
    if (spec->flops_per_launch &&
        !(p->flops_per_launch = cutune__problem_parse(
              p, spec->flops_per_launch,
              cutune__problem_field(p, CUTUNE__F_FLOPS, 0, 0, field,
                                    sizeof field),
              &st)))
        return st;
    return CUTUNE_OK;
}

/* ------------------------------------------------------------------ */
/* Arguments                                                           */

static double half_to_double(uint16_t h)
{
    int e = (h >> 10) & 0x1f;
    double m = h & 0x3ff;
    double v = e == 0    ? ldexp(m, -24)
               : e == 31 ? (m ? NAN : INFINITY)
                         : ldexp(m + 1024, e - 25);
    return h & 0x8000u ? -v : v;
}

/* One element of `t` at `data` as the double a scalar travels as; -1
 * when the double would not be the same number (integers beyond 2^53). */
static int scalar_value(cutune__dtype t, const void *data, double *out)
{
    const int64_t exact = 1LL << 53;
    union {
        int8_t i8;
        uint8_t u8;
        int16_t i16;
        uint16_t u16;
        int32_t i32;
        uint32_t u32;
        int64_t i64;
        uint64_t u64;
        float f;
        double d;
    } v;
    memcpy(&v, data, cutune__dtype_size(t));
    switch (t) {
    case CUTUNE__DT_FLOAT: *out = v.f; return 0;
    case CUTUNE__DT_DOUBLE: *out = v.d; return 0;
    case CUTUNE__DT_INT8: *out = v.i8; return 0;
    case CUTUNE__DT_UINT8: *out = v.u8; return 0;
    case CUTUNE__DT_INT16: *out = v.i16; return 0;
    case CUTUNE__DT_UINT16: *out = v.u16; return 0;
    case CUTUNE__DT_INT32: *out = v.i32; return 0;
    case CUTUNE__DT_UINT32: *out = v.u32; return 0;
    case CUTUNE__DT_INT64:
        *out = (double)v.i64;
        return v.i64 >= -exact && v.i64 <= exact ? 0 : -1;
    case CUTUNE__DT_UINT64:
        *out = (double)v.u64;
        return v.u64 <= (uint64_t)exact ? 0 : -1;
    case CUTUNE__DT_HALF: *out = half_to_double(v.u16); return 0;
    }
    return -1;
}

/* A vector's or a scalar's contents. */
static cutune_status arg_fill(cutune_problem *p, const cutune_arg_spec *s,
                              const char *field, cutune__arg *a)
{
    const char *value = cutune__problem_member(p, "FillValue", "fill_value");
    switch (s->fill) {
    case CUTUNE_FILL_DATA:
        if (!s->data)
            return cutune__t1_fail(p, CUTUNE_ERR_INVALID_ARGUMENT,
                                   "%s.data: NULL with fill "
                                   "CUTUNE_FILL_DATA",
                                   field);
        if (!a->is_vector) {
            a->fill = CUTUNE__FILL_CONSTANT;
            if (scalar_value(a->dtype, s->data, &a->fill_value) != 0)
                return cutune__t1_fail(p, CUTUNE_ERR_UNSUPPORTED,
                                       "%s.data: a 64-bit integer beyond "
                                       "2^53 (scalars travel as doubles)",
                                       field);
            return CUTUNE_OK;
        }
        a->fill = CUTUNE__FILL_BINARY;
        a->data_size = (size_t)a->count * cutune__dtype_size(a->dtype);
        if (!(a->data = malloc(a->data_size ? a->data_size : 1)))
            return fail_oom(p);
        memcpy(a->data, s->data, a->data_size);
        return CUTUNE_OK;
    case CUTUNE_FILL_CONSTANT:
    case CUTUNE_FILL_RANDOM:
        if (!a->is_vector && s->fill == CUTUNE_FILL_RANDOM)
            return cutune__t1_fail(p, CUTUNE_ERR_INVALID_ARGUMENT,
                                   "%s.fill: a scalar is given as data or "
                                   "as a constant, not random",
                                   field);
        a->fill = s->fill == CUTUNE_FILL_RANDOM ? CUTUNE__FILL_RANDOM
                                                : CUTUNE__FILL_CONSTANT;
        a->fill_value = s->fill_value;
        if (!isfinite(a->fill_value))
            return cutune__t1_fail(p, CUTUNE_ERR_PARSE,
                                   "%s.%s: not a finite number", field, value);
        return CUTUNE_OK;
    }
    return cutune__t1_fail(p, CUTUNE_ERR_INVALID_ARGUMENT,
                           "%s.fill: %d is not a cutune_fill", field,
                           (int)s->fill);
}

static cutune_status build_arg(cutune_problem *p, const cutune_arg_spec *s,
                               size_t i)
{
    char field[64];
    cutune__problem_field(p, CUTUNE__F_ARG, i, 0, field, sizeof field);
    cutune__arg *a = &p->args[i];
    if (!(a->name = strdup(s->name ? s->name : "")))
        return fail_oom(p);
    if ((unsigned)s->dtype >= CUTUNE__DT_COUNT)
        return cutune__t1_fail(p, CUTUNE_ERR_INVALID_ARGUMENT,
                               "%s.dtype: %d is not a cutune_dtype", field,
                               (int)s->dtype);
    a->dtype = (cutune__dtype)s->dtype;
    if (s->memory == CUTUNE_ARG_CONSTANT)
        a->is_vector = a->is_symbol = 1;
    else if (s->memory == CUTUNE_ARG_VECTOR)
        a->is_vector = 1;
    else if (s->memory != CUTUNE_ARG_SCALAR)
        return cutune__t1_fail(p, CUTUNE_ERR_INVALID_ARGUMENT,
                               "%s.memory: %d is not a cutune_arg_memory",
                               field, (int)s->memory);
    if (a->is_symbol && (!*a->name || strlen(a->name) >= 64))
        return cutune__t1_fail(p, CUTUNE_ERR_PARSE,
                               "%s.%s: a constant-"
                               "memory argument needs the name of its "
                               "__constant__ variable (under 64 characters)",
                               field,
                               cutune__problem_member(p, "Name", "name"));
    const char *count = cutune__problem_member(p, "Size", "count");
    if (a->is_vector && (s->count == 0 || s->count > MAX_ELEMENTS))
        return cutune__t1_fail(p, CUTUNE_ERR_PARSE, "%s.%s: %llu elements%s",
                               field, count, (unsigned long long)s->count,
                               s->count ? " is more than a GPU holds" : "");
    a->count = a->is_vector ? s->count : 0;
    cutune_status st = arg_fill(p, s, field, a);
    if (st)
        return st;
    a->seed = s->seed;
    a->is_output = a->is_vector && s->output;
    return CUTUNE_OK;
}

cutune_status cutune__problem_build_args(cutune_problem *p,
                                         const cutune_problem_spec *spec)
{
    size_t n = spec->n_arguments;
    if (n && !spec->arguments)
        return cutune__t1_fail(p, CUTUNE_ERR_INVALID_ARGUMENT,
                               "arguments: NULL with n_arguments %zu", n);
    p->args = calloc(n + 1, sizeof *p->args);
    if (!p->args)
        return fail_oom(p);
    for (size_t i = 0; i < n; i++) {
        p->n_args = i + 1;
        cutune_status st = build_arg(p, &spec->arguments[i], i);
        if (st)
            return st;
    }
    return CUTUNE_OK;
}

/* ------------------------------------------------------------------ */
/* Answers                                                             */

static cutune_status answer_fill(cutune_problem *p,
                                 const cutune_answer_spec *s,
                                 const char *field, cutune__reference *r)
{
    const cutune__arg *a = &p->args[r->arg];
    if (s->fill == CUTUNE_FILL_DATA) {
        if (!s->data)
            return cutune__t1_fail(p, CUTUNE_ERR_INVALID_ARGUMENT,
                                   "%s.data: NULL with fill "
                                   "CUTUNE_FILL_DATA",
                                   field);
        r->fill = CUTUNE__FILL_BINARY;
        r->data_size = (size_t)a->count * cutune__dtype_size(a->dtype);
        if (!(r->data = malloc(r->data_size ? r->data_size : 1)))
            return fail_oom(p);
        memcpy(r->data, s->data, r->data_size);
        return CUTUNE_OK;
    }
    if (s->fill != CUTUNE_FILL_CONSTANT && s->fill != CUTUNE_FILL_RANDOM)
        return cutune__t1_fail(p, CUTUNE_ERR_INVALID_ARGUMENT,
                               "%s.fill: %d is not a cutune_fill", field,
                               (int)s->fill);
    r->fill = s->fill == CUTUNE_FILL_RANDOM ? CUTUNE__FILL_RANDOM
                                            : CUTUNE__FILL_CONSTANT;
    r->fill_value = s->fill_value;
    if (!isfinite(r->fill_value))
        return cutune__t1_fail(
            p, CUTUNE_ERR_PARSE, "%s.%s: not a finite number", field,
            cutune__problem_member(p, "FillValue", "fill_value"));
    return CUTUNE_OK;
}

cutune_status cutune__problem_build_answers(cutune_problem *p,
                                            const cutune_problem_spec *spec)
{
    size_t n = spec->n_answers;
    if (n == 0)
        return CUTUNE_OK;
    if (!spec->answers)
        return cutune__t1_fail(p, CUTUNE_ERR_INVALID_ARGUMENT,
                               "answers: NULL with n_answers %zu", n);
    if (!(p->refs = calloc(n, sizeof *p->refs)))
        return fail_oom(p);
    for (size_t i = 0; i < n; i++) {
        const cutune_answer_spec *s = &spec->answers[i];
        cutune__reference *r = &p->refs[i];
        char field[80];
        cutune__problem_field(p, CUTUNE__F_ANSWER, i, 0, field, sizeof field);
        p->n_refs = i + 1;
        if (s->arg >= p->n_args || !p->args[s->arg].is_vector ||
            p->args[s->arg].is_symbol)
            return cutune__t1_fail(p, CUTUNE_ERR_INVALID_ARGUMENT,
                                   "%s.arg: %zu is not a vector argument "
                                   "(arguments[%zu] is %s)",
                                   field, s->arg, s->arg,
                                   s->arg >= p->n_args ? "past the end"
                                   : p->args[s->arg].is_symbol
                                       ? "constant memory"
                                       : "a scalar");
        r->arg = s->arg;
        r->seed = s->seed;
        cutune_status st = answer_fill(p, s, field, r);
        if (st)
            return st;
        if (!(s->atol >= 0 && isfinite(s->atol)) ||
            !(s->rtol >= 0 && isfinite(s->rtol)))
            return cutune__t1_fail(p, CUTUNE_ERR_INVALID_ARGUMENT,
                                   "%s: atol %g and rtol %g must be finite "
                                   "and at least 0",
                                   field, s->atol, s->rtol);
        r->atol = s->atol;
        r->rtol = s->rtol;
    }
    return CUTUNE_OK;
}

/* A block or grid expression that cannot be evaluated (a division by
 * zero, an overflow, a non-integer) is the problem's mistake, not a
 * configuration's: refused at load, naming the field and a configuration.
 * A block out of range stays the configuration's result. */
cutune_status cutune__problem_check_geometry(cutune_problem *p)
{
    size_t n = cutune__space_size(p->space);
    size_t step = n > GEOMETRY_CHECKS ? n / GEOMETRY_CHECKS : 1;
    for (size_t c = 0; c < n; c += step) {
        unsigned grid[3], block[3];
        char err[512];
        if (cutune__problem_geometry(p, c, grid, block, err, sizeof err) !=
            CUTUNE__GEOMETRY_BAD_FIELD)
            continue;
        char cfg[512];
        cutune__t1_config_text(p, cutune__space_config(p->space, c), cfg,
                               sizeof cfg);
        return cutune__t1_fail(p, CUTUNE_ERR_PARSE, "%s (at %s)", err, cfg);
    }
    return CUTUNE_OK;
}
