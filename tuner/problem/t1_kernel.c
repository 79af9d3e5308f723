/* T1 KernelSpecification (but its arguments), ProblemSize, Budget,
 * Search and cutune's own extensions. */
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
#include <unistd.h>

#include "expr/none.h"
#include "kernel_source.h"
#include "util.h"

static cutune_status parse_geometry(cutune_problem *p, json_t *ks,
                                    const char *key, cutune__expr *out[3])
{
    static const char *const dims[3] = {"X", "Y", "Z"};
    json_t *g = json_object_get(ks, key);
    if (!json_is_object(g))
        return cutune__t1_fail(p, CUTUNE_ERR_PARSE,
                               "KernelSpecification.%s: missing", key);
    for (int d = 0; d < 3; d++) {
        char field[64];
        snprintf(field, sizeof field, "KernelSpecification.%s.%s", key,
                 dims[d]);
        json_t *v = json_object_get(g, dims[d]);
        cutune_status st = CUTUNE_OK;
        if (v) {
            out[d] = cutune__t1_parse_field(p, v, field, &st);
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

/* Every free name of `e` is a tuning parameter; else a message naming
 * `field` and the name. */
static cutune_status check_names(cutune_problem *p, const cutune__expr *e,
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

/* GridDivX/Y/Z: lists whose entries are parameter names, numbers or
 * expressions over the tunables, multiplied, as Kernel Tuner's grid_div_*
 * and BAT's runner take them. */
static cutune_status parse_grid_div(cutune_problem *p, json_t *ks)
{
    static const char *const keys[3] = {"GridDivX", "GridDivY", "GridDivZ"};
    for (int d = 0; d < 3; d++) {
        json_t *g = json_object_get(ks, keys[d]);
        if (!g || json_is_null(g))
            continue;
        if (!json_is_array(g))
            return cutune__t1_fail(p, CUTUNE_ERR_PARSE,
                                   "KernelSpecification.%s: "
                                   "expected a list of parameter names or "
                                   "expressions",
                                   keys[d]);
        size_t n = json_array_size(g);
        p->grid_div[d] = calloc(n ? n : 1, sizeof *p->grid_div[d]);
        if (!p->grid_div[d])
            return cutune__t1_fail(p, CUTUNE_ERR_NO_MEMORY, "out of memory");
        for (size_t k = 0; k < n; k++) {
            char field[64];
            snprintf(field, sizeof field, "KernelSpecification.%s[%zu]",
                     keys[d], k);
            json_t *entry = json_array_get(g, k);
            cutune_status st = CUTUNE_OK;
            if (!json_is_string(entry) && !json_is_integer(entry))
                return cutune__t1_fail(p, CUTUNE_ERR_PARSE,
                                       "%s: expected a "
                                       "parameter name, an expression or "
                                       "a whole number, found %s",
                                       field, cutune__t1_json_kind(entry));
            p->grid_div[d][k] = cutune__t1_parse_field(p, entry, field, &st);
            if (!p->grid_div[d][k])
                return st;
            p->n_grid_div[d] = k + 1;
            if ((st = check_names(p, p->grid_div[d][k], field)))
                return st;
        }
        p->grid_div_given[d] = 1;
        p->has_grid_div = 1;
    }
    return CUTUNE_OK;
}

static cutune_status read_kernel_file(cutune_problem *p, json_t *ks,
                                      const char *dir);

/* The prelude goes in as text rather than as an NVRTC header (the
 * headers/includeNames of nvrtcCreateProgram): the source is then the one
 * thing that is compiled, hashed (source_hash) and keyed in the binary
 * cache, so the compile jobs, the compile processes' COMPILE message and
 * the cache key need nothing new, and the jobs the session builds from
 * p->source compile unchanged. The #line directives keep NVRTC's messages
 * on the lines of the prelude and of the template. */
char *cutune__t1_template_source(const cutune__template *t, size_t *len)
{
    static const char directive[] =
        "#include \"" CUTUNE__TEMPLATE_PRELUDE_NAME "\"";
    const char *at = t->source;
    size_t line = 1;
    /* The directive on a line of its own. */
    for (;;) {
        if (strncmp(at, directive, sizeof directive - 1) == 0 &&
            (at[sizeof directive - 1] == '\n' ||
             at[sizeof directive - 1] == '\0'))
            break;
        at = strchr(at, '\n');
        if (!at)
            break;
        at++;
        line++;
    }
    if (!at) {
        char *copy = malloc(t->source_len + 1);
        if (copy)
            memcpy(copy, t->source, t->source_len + 1);
        *len = t->source_len;
        return copy;
    }
    const char *rest = at + sizeof directive - 1;
    if (*rest == '\n')
        rest++;
    char *out = cutune__strdup_printf(
        "%.*s#line 1 \"" CUTUNE__TEMPLATE_PRELUDE_NAME "\"\n%s%s"
        "#line %zu \"%s\"\n%s",
        (int)(at - t->source), t->source, cutune__template_prelude,
        cutune__template_prelude_len > 0 &&
                cutune__template_prelude[cutune__template_prelude_len - 1] !=
                    '\n'
            ? "\n"
            : "",
        line + 1, t->source_name, rest);
    if (out)
        *len = strlen(out);
    return out;
}

/* SimulationInput (Kernel Tuner's simulation mode): the recorded results,
 * relative to the T1 file's folder; `cutune simulate` replays them when no
 * --results is given. Only the name is kept: the file is read by whoever
 * replays it, so a problem loads where the recording is absent. */
cutune_status cutune__t1_parse_simulation_input(cutune_problem *p, json_t *ks,
                                                const char *dir)
{
    json_t *j = json_object_get(ks, "SimulationInput");
    if (!j || json_is_null(j))
        return CUTUNE_OK;
    if (!json_is_string(j) || !*json_string_value(j))
        return cutune__t1_fail(p, CUTUNE_ERR_PARSE,
                               "KernelSpecification."
                               "SimulationInput: expected a file name, got "
                               "%s",
                               cutune__t1_json_kind(j));
    const char *f = json_string_value(j);
    p->simulation_input =
        f[0] == '/' ? strdup(f) : cutune__strdup_printf("%s/%s", dir, f);
    return p->simulation_input
               ? CUTUNE_OK
               : cutune__t1_fail(p, CUTUNE_ERR_NO_MEMORY, "out of memory");
}

cutune_status cutune__t1_parse_kernel(cutune_problem *p, json_t *root,
                                      const char *dir,
                                      const cutune__template *builtin)
{
    json_t *ks = json_object_get(root, "KernelSpecification");
    if (!json_is_object(ks))
        return cutune__t1_fail(p, CUTUNE_ERR_PARSE,
                               "KernelSpecification: missing");
    static const char *const known[] = {"Language",
                                        "CompilerOptions",
                                        "BenchmarkName",
                                        "KernelName",
                                        "KernelFile",
                                        "GlobalSizeType",
                                        "LocalSize",
                                        "GlobalSize",
                                        "GridDivX",
                                        "GridDivY",
                                        "GridDivZ",
                                        "ProblemSize",
                                        "SharedMemory",
                                        "Arguments",
                                        "ReferenceArguments",
                                        "SimulationInput",
                                        NULL};
    cutune_status st =
        cutune__t1_check_known(p, ks, "KernelSpecification", known);
    if (st)
        return st;
    const char *lang = cutune__t1_string(ks, "Language");
    if (lang && strcmp(lang, "CUDA") != 0)
        return cutune__t1_fail(
            p, CUTUNE_ERR_UNSUPPORTED,
            "KernelSpecification.Language: '%s' (cutune tunes CUDA)", lang);
    const char *kname = cutune__t1_string(ks, "KernelName");
    if (!kname || !*kname)
        return cutune__t1_fail(p, CUTUNE_ERR_PARSE,
                               "KernelSpecification.KernelName: "
                               "missing");
    p->kernel_name = strdup(kname);
    if (!p->name)
        p->name = strdup(kname);
    if (!p->kernel_name || !p->name)
        return cutune__t1_fail(p, CUTUNE_ERR_NO_MEMORY, "out of memory");

    json_t *opts = json_object_get(ks, "CompilerOptions");
    size_t no = json_is_array(opts) ? json_array_size(opts) : 0;
    p->options = calloc(no ? no : 1, sizeof(char *));
    if (!p->options)
        return cutune__t1_fail(p, CUTUNE_ERR_NO_MEMORY, "out of memory");
    for (size_t i = 0; i < no; i++) {
        json_t *o = json_array_get(opts, i);
        if (!json_is_string(o))
            return cutune__t1_fail(
                p, CUTUNE_ERR_PARSE,
                "KernelSpecification.CompilerOptions[%zu]: expected "
                "a string",
                i);
        p->options[i] = strdup(json_string_value(o));
        if (!p->options[i])
            return cutune__t1_fail(p, CUTUNE_ERR_NO_MEMORY, "out of memory");
        p->n_options = i + 1;
    }

    const char *gst = cutune__t1_string(ks, "GlobalSizeType");
    if (!gst || strcmp(gst, "OpenCL") == 0)
        p->global_in_blocks = 0;
    else if (strcmp(gst, "CUDA") == 0)
        p->global_in_blocks = 1;
    else
        return cutune__t1_fail(
            p, CUTUNE_ERR_UNSUPPORTED,
            "KernelSpecification.GlobalSizeType: '%s' (CUDA, OpenCL)", gst);
    if ((st = parse_geometry(p, ks, "LocalSize", p->local_size)) ||
        (st = parse_geometry(p, ks, "GlobalSize", p->global_size)) ||
        (st = parse_grid_div(p, ks)))
        return st;

    if ((st = cutune__t1_parse_simulation_input(p, ks, dir)))
        return st;

    json_t *sm = json_object_get(ks, "SharedMemory");
    if (sm && !json_is_null(sm)) {
        if (!json_is_integer(sm) || json_integer_value(sm) < 0)
            return cutune__t1_fail(p, CUTUNE_ERR_PARSE,
                                   "KernelSpecification."
                                   "SharedMemory: expected a byte count");
        p->shared_memory = (unsigned)json_integer_value(sm);
    }

    /* The kernel source: embedded for a built-in, else beside the file. */
    if (builtin) {
        p->source = cutune__t1_template_source(builtin, &p->source_len);
        if (!p->source)
            return cutune__t1_fail(p, CUTUNE_ERR_NO_MEMORY, "out of memory");
        snprintf(
            p->source_hash, sizeof p->source_hash, "%016llx",
            (unsigned long long)cutune__fnv1a64(p->source, p->source_len));
        return CUTUNE_OK;
    }
    return read_kernel_file(p, ks, dir);
}

/* KernelFile, relative to the T1 file's folder: a regular CUDA file of
 * sane size. Its quoted #includes are looked up beside it and beside the
 * T1 file (NVRTC gets both folders), and hashed with it. */
static cutune_status read_kernel_file(cutune_problem *p, json_t *ks,
                                      const char *dir)
{
    static const char field[] = "KernelSpecification.KernelFile";
    json_t *jkf = json_object_get(ks, "KernelFile");
    if (!jkf || json_is_null(jkf))
        return cutune__t1_fail(p, CUTUNE_ERR_PARSE, "%s: missing", field);
    if (!json_is_string(jkf) || !*json_string_value(jkf))
        return cutune__t1_fail(p, CUTUNE_ERR_PARSE, "%s: expected a file name",
                               field);
    const char *kf = json_string_value(jkf);
    char *path =
        kf[0] == '/' ? strdup(kf) : cutune__strdup_printf("%s/%s", dir, kf);
    if (!path)
        return cutune__t1_fail(p, CUTUNE_ERR_NO_MEMORY, "out of memory");
    /* Kernel Tuner's T1 reader also looks in the folder above the T1
     * file's (problems kept in a folder beside their kernels). */
    if (kf[0] != '/' && access(path, F_OK) != 0) {
        char *above = cutune__strdup_printf("%s/../%s", dir, kf);
        if (above && access(above, F_OK) == 0) {
            free(path);
            path = above;
        } else {
            free(above);
        }
    }
    /* The name first: a HIP or OpenCL file is refused as such even where
     * it is not beside the T1 file. */
    const char *why;
    cutune__source_language lang =
        cutune__source_language_of(path, NULL, &why);
    char err[512];
    if (lang == CUTUNE__SRC_CUDA) {
        if (cutune__read_regular_file(path, CUTUNE__MAX_SOURCE_BYTES,
                                      &p->source, &p->source_len, err,
                                      sizeof err) != 0) {
            free(path);
            return cutune__t1_fail(p, CUTUNE_ERR_IO, "%s '%s': %s", field, kf,
                                   err);
        }
        lang = cutune__source_language_of(NULL, p->source, &why);
    }
    if (lang != CUTUNE__SRC_CUDA) {
        free(path);
        return cutune__t1_fail(
            p, CUTUNE_ERR_UNSUPPORTED,
            "%s '%s' is %s "
            "source (%s); cutune compiles CUDA with "
            "NVRTC: point KernelFile at the kernel's "
            "CUDA version",
            field, kf, lang == CUTUNE__SRC_HIP ? "a HIP" : "an OpenCL", why);
    }
    char *slash = strrchr(path, '/');
    char *kdir = slash ? strndup(path, (size_t)(slash - path)) : strdup(".");
    free(path);
    char *kreal = kdir ? realpath(kdir, NULL) : NULL;
    char *treal = realpath(dir, NULL);
    free(kdir);
    if (!kreal || !treal) {
        free(kreal);
        free(treal);
        return cutune__t1_fail(
            p, CUTUNE_ERR_IO, "%s '%s': cannot resolve its folder", field, kf);
    }
    const char *dirs[2] = {kreal, treal};
    size_t n_dirs = strcmp(kreal, treal) == 0 ? 1 : 2;
    snprintf(p->source_hash, sizeof p->source_hash, "%016llx",
             (unsigned long long)cutune__source_hash(p->source, p->source_len,
                                                     dirs, n_dirs));
    cutune_status st = CUTUNE_OK;
    for (size_t i = 0; i < n_dirs && !st; i++)
        st = cutune__t1_add_option(p, cutune__strdup_printf("-I%s", dirs[i]));
    free(kreal);
    free(treal);
    return st;
}

/* One entry of ProblemSize: a positive integer, or (Kernel Tuner's
 * problem_size="num_blocks") a string naming tunables or an expression
 * of them, which makes the dimension vary with the configuration. */
static cutune_status problem_size_entry(cutune_problem *p, json_t *e, size_t i,
                                        size_t n)
{
    char field[64];
    snprintf(field, sizeof field, "KernelSpecification.ProblemSize[%zu]", i);
    if (json_is_integer(e)) {
        long long v = json_integer_value(e);
        if (v <= 0)
            return cutune__t1_fail(p, CUTUNE_ERR_PARSE,
                                   "%s: %lld is not a "
                                   "positive size",
                                   field, v);
        p->problem_size[i] = v;
        return CUTUNE_OK;
    }
    if (!json_is_string(e))
        return cutune__t1_fail(p, CUTUNE_ERR_PARSE,
                               "%s: expected a positive "
                               "integer, or a string naming tunable "
                               "parameters, found %s",
                               field, cutune__t1_json_kind(e));
    if (!p->problem_size_exprs &&
        !(p->problem_size_exprs = calloc(n, sizeof *p->problem_size_exprs)))
        return cutune__t1_fail(p, CUTUNE_ERR_NO_MEMORY, "out of memory");
    cutune_status st = CUTUNE_OK;
    p->problem_size_exprs[i] = cutune__t1_parse_field(p, e, field, &st);
    p->problem_size[i] = 0;
    return p->problem_size_exprs[i] ? CUTUNE_OK : st;
}

cutune_status cutune__t1_parse_problem_size(cutune_problem *p, json_t *root,
                                            const cutune_problem_options *opt)
{
    json_t *ks = json_object_get(root, "KernelSpecification");
    json_t *ps = json_object_get(ks, "ProblemSize");
    int given = opt && opt->n_problem_size > 0;
    /* Kernel Tuner takes one number or one string as a one-dimensional
     * size. */
    json_t *one = json_is_integer(ps) || json_is_string(ps)
                      ? json_pack("[O]", ps)
                      : NULL;
    if (one)
        ps = one;
    if (!given && ps && !json_is_null(ps) && !json_is_array(ps))
        return cutune__t1_fail(p, CUTUNE_ERR_PARSE,
                               "KernelSpecification."
                               "ProblemSize: expected a list of positive "
                               "integers or tunable parameter names, found "
                               "%s",
                               cutune__t1_json_kind(ps));
    size_t n = json_is_array(ps) ? json_array_size(ps) : 0;
    /* A dimension the kernel has no use for would be cached as a size of
     * its own; fewer are the T1 file's own business (1 where missing). */
    if (given && n > 0 && opt->n_problem_size > n) {
        json_decref(one);
        return cutune__t1_fail(p, CUTUNE_ERR_INVALID_ARGUMENT,
                               "a problem size of %zu dimensions where "
                               "KernelSpecification.ProblemSize has %zu",
                               opt->n_problem_size, n);
    }
    if (given)
        n = opt->n_problem_size;
    p->n_problem_size = n;
    p->problem_size = calloc(n ? n : 1, sizeof(long long));
    p->problem_size_value.type = CUTUNE__V_LIST;
    p->problem_size_value.u.list.items =
        calloc(n ? n : 1, sizeof(cutune__value));
    cutune_status st = CUTUNE_OK;
    if (!p->problem_size || !p->problem_size_value.u.list.items)
        st = cutune__t1_fail(p, CUTUNE_ERR_NO_MEMORY, "out of memory");
    for (size_t i = 0; i < n && !st; i++) {
        if (!given) {
            st = problem_size_entry(p, json_array_get(ps, i), i, n);
        } else if (opt->problem_size[i] <= 0) {
            st = cutune__t1_fail(p, CUTUNE_ERR_INVALID_ARGUMENT,
                                 "problem size %lld in dimension %zu: "
                                 "must be positive",
                                 opt->problem_size[i], i);
        } else {
            p->problem_size[i] = opt->problem_size[i];
        }
        p->problem_size_value.u.list.items[i].type = CUTUNE__V_INT;
        p->problem_size_value.u.list.items[i].u.i = p->problem_size[i];
    }
    json_decref(one);
    p->problem_size_value.u.list.n = n;
    return st;
}

cutune_status cutune__t1_check_problem_size(cutune_problem *p)
{
    for (size_t d = 0; p->problem_size_exprs && d < p->n_problem_size; d++) {
        char field[64];
        snprintf(field, sizeof field, "KernelSpecification.ProblemSize[%zu]",
                 d);
        cutune_status st;
        if (p->problem_size_exprs[d] &&
            (st = check_names(p, p->problem_size_exprs[d], field)))
            return st;
    }
    for (size_t c = 0; p->problem_size_exprs && c < p->n_conditions; c++)
        for (size_t i = 0; i < cutune__expr_name_count(p->conditions[c]); i++)
            if (strcmp(cutune__expr_name(p->conditions[c], i),
                       "ProblemSize") == 0)
                return cutune__t1_fail(
                    p, CUTUNE_ERR_UNSUPPORTED,
                    "ConfigurationSpace.Conditions[%zu].Expression: reads "
                    "ProblemSize, which varies with the configuration here "
                    "(KernelSpecification.ProblemSize names tunable "
                    "parameters)",
                    c);
    return CUTUNE_OK;
}

cutune_status cutune__t1_parse_extensions(cutune_problem *p, json_t *root)
{
    json_t *ext = json_object_get(root, "CutuneExtensions");
    if (!ext)
        return CUTUNE_OK;
    static const char *const known[] = {"BytesPerLaunch", "FlopsPerLaunch",
                                        "CompilerOptionParameters", NULL};
    cutune_status st =
        cutune__t1_check_known(p, ext, "CutuneExtensions", known);
    if (st)
        return st;
    json_t *b = json_object_get(ext, "BytesPerLaunch");
    if (b) {
        p->bytes_per_launch = cutune__t1_parse_field(
            p, b, "CutuneExtensions.BytesPerLaunch", &st);
        if (!p->bytes_per_launch)
            return st;
    }
    json_t *f = json_object_get(ext, "FlopsPerLaunch");
    if (f) {
        p->flops_per_launch = cutune__t1_parse_field(
            p, f, "CutuneExtensions.FlopsPerLaunch", &st);
        if (!p->flops_per_launch)
            return st;
    }
    /* Parameters whose values are NVRTC options ("-Xptxas=-dlcm=cg",
     * "--maxrregcount=64"; "" for none) rather than macro values. */
    json_t *cop = json_object_get(ext, "CompilerOptionParameters");
    if (cop) {
        if (!json_is_array(cop))
            return cutune__t1_fail(
                p, CUTUNE_ERR_PARSE,
                "CutuneExtensions."
                "CompilerOptionParameters: expected a list of "
                "parameter names");
        p->param_is_option = calloc(p->n_params ? p->n_params : 1, 1);
        if (!p->param_is_option)
            return cutune__t1_fail(p, CUTUNE_ERR_NO_MEMORY, "out of memory");
        for (size_t i = 0; i < json_array_size(cop); i++) {
            const char *name = json_string_value(json_array_get(cop, i));
            size_t k =
                name ? cutune__problem_find_param(p, name) : CUTUNE__NONE;
            if (k == CUTUNE__NONE)
                return cutune__t1_fail(
                    p, CUTUNE_ERR_PARSE,
                    "CutuneExtensions."
                    "CompilerOptionParameters[%zu]: '%s' is not a "
                    "tuning parameter",
                    i,
                    name ? name
                         : "(not a "
                           "string)");
            for (size_t v = 0; v < p->param_value_counts[k]; v++)
                if (p->param_values[k][v].type != CUTUNE__V_STR)
                    return cutune__t1_fail(
                        p, CUTUNE_ERR_PARSE,
                        "CutuneExtensions."
                        "CompilerOptionParameters[%zu]: the values "
                        "of '%s' must be strings (compiler options)",
                        i, name);
            p->param_is_option[k] = 1;
        }
    }
    return CUTUNE_OK;
}

/* T1 Budget: a list of limits, each {Type, BudgetValue}; all apply. */
cutune_status cutune__t1_parse_budget(cutune_problem *p, json_t *root)
{
    json_t *b = json_object_get(root, "Budget");
    if (!b || json_is_null(b))
        return CUTUNE_OK;
    if (!json_is_array(b))
        return cutune__t1_fail(p, CUTUNE_ERR_PARSE, "Budget: expected a list");
    for (size_t i = 0; i < json_array_size(b); i++) {
        json_t *item = json_array_get(b, i);
        const char *type = cutune__t1_string(item, "Type");
        json_t *jv = json_object_get(item, "BudgetValue");
        if (!type || !json_is_number(jv) || json_number_value(jv) <= 0)
            return cutune__t1_fail(p, CUTUNE_ERR_PARSE,
                                   "Budget[%zu]: needs a Type and "
                                   "a positive BudgetValue",
                                   i);
        double v = json_number_value(jv);
        if (strcmp(type, "ConfigurationCount") == 0)
            p->budget_evals = (size_t)v;
        else if (strcmp(type, "TuningDuration") == 0)
            p->budget_seconds = v;
        else if (strcmp(type, "ConfigurationFraction") == 0 && v <= 1)
            p->budget_fraction = v;
        else
            return cutune__t1_fail(p, CUTUNE_ERR_UNSUPPORTED,
                                   "Budget[%zu].Type: '%s' "
                                   "(ConfigurationCount, TuningDuration, "
                                   "ConfigurationFraction of at most 1)",
                                   i, type);
    }
    return CUTUNE_OK;
}

/* T1 Search: the strategy by name. The names of other tuners map to
 * cutune's strategies; attributes (strategy settings) are not taken. */
cutune_status cutune__t1_parse_search(cutune_problem *p, json_t *root)
{
    static const struct {
        const char *t1;
        const char *ours;
    } names[] = {
        {"Random", "random"},
        {"random_sample", "random"},
        {"Deterministic", "brute_force"},
        {"BruteForce", "brute_force"},
        {"FullSearch", "brute_force"},
        {"SimulatedAnnealing", "annealing"},
        {"simulated_annealing", "annealing"},
        {"GeneticAlgorithm", "genetic"},
        {"genetic_algorithm", "genetic"},
        {"DifferentialEvolution", "diff_evo"},
        {"BayesianOptimization", "bayes"},
        {"bayes_opt", "bayes"},
        {"LocalSearch", "local"},
        {"greedy_ils", "local"},
        {"Default", "default"},
    };
    json_t *s = json_object_get(root, "Search");
    if (!s || json_is_null(s))
        return CUTUNE_OK;
    const char *name = cutune__t1_string(s, "Name");
    if (!name)
        return cutune__t1_fail(p, CUTUNE_ERR_PARSE, "Search.Name: missing");
    json_t *attrs = json_object_get(s, "Attributes");
    if (json_is_array(attrs) && json_array_size(attrs) > 0)
        cutune__t1_warn(p,
                        "Search.Attributes: accepted and ignored ('%s' "
                        "runs with cutune's own settings)",
                        name);
    const char *ours = NULL;
    for (size_t i = 0; i < sizeof names / sizeof *names && !ours; i++)
        if (strcasecmp(names[i].t1, name) == 0)
            ours = names[i].ours;
    if (!ours) {
        static const char *const own[] = {"default", "local",    "brute_force",
                                          "random",  "sobol",    "annealing",
                                          "genetic", "diff_evo", "bayes"};
        for (size_t i = 0; i < sizeof own / sizeof *own && !ours; i++)
            if (strcmp(own[i], name) == 0)
                ours = own[i];
    }
    if (!ours)
        return cutune__t1_fail(p, CUTUNE_ERR_UNSUPPORTED,
                               "Search.Name: '%s' is not a "
                               "strategy cutune knows",
                               name);
    p->search_strategy = strdup(ours);
    return p->search_strategy
               ? CUTUNE_OK
               : cutune__t1_fail(p, CUTUNE_ERR_NO_MEMORY, "out of memory");
}
