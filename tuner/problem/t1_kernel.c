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
#include "problem_spec.h"
#include "util.h"

/* LocalSize or GlobalSize: X, Y and Z as expression text. */
static cutune_status parse_geometry(cutune_problem *p, cutune__t1_draft *d,
                                    json_t *ks, const char *key,
                                    const char *out[3])
{
    static const char *const dims[3] = {"X", "Y", "Z"};
    json_t *g = json_object_get(ks, key);
    if (!json_is_object(g))
        return cutune__t1_fail(p, CUTUNE_ERR_PARSE,
                               "KernelSpecification.%s: missing", key);
    for (int k = 0; k < 3; k++) {
        char field[64];
        snprintf(field, sizeof field, "KernelSpecification.%s.%s", key,
                 dims[k]);
        json_t *v = json_object_get(g, dims[k]);
        cutune_status st = CUTUNE_OK;
        /* An absent dimension is 1, as in CUDA's dim3. */
        out[k] = v ? cutune__t1_field_text(p, d, v, field, &st) : "1";
        if (!out[k])
            return st;
    }
    return CUTUNE_OK;
}

/* GridDivX/Y/Z: lists whose entries are parameter names, numbers or
 * expressions over the tunables, multiplied, as Kernel Tuner's grid_div_*
 * and BAT's runner take them. */
static cutune_status parse_grid_div(cutune_problem *p, cutune__t1_draft *d,
                                    json_t *ks)
{
    static const char *const keys[3] = {"GridDivX", "GridDivY", "GridDivZ"};
    const char *const **lists[3] = {&d->spec.grid_div_x, &d->spec.grid_div_y,
                                    &d->spec.grid_div_z};
    size_t *counts[3] = {&d->spec.n_grid_div_x, &d->spec.n_grid_div_y,
                         &d->spec.n_grid_div_z};
    for (int k = 0; k < 3; k++) {
        json_t *g = json_object_get(ks, keys[k]);
        if (!g || json_is_null(g))
            continue;
        if (!json_is_array(g))
            return cutune__t1_fail(p, CUTUNE_ERR_PARSE,
                                   "KernelSpecification.%s: "
                                   "expected a list of parameter names or "
                                   "expressions",
                                   keys[k]);
        size_t n = json_array_size(g);
        const char **list = cutune__t1_alloc(p, d, n, sizeof *list);
        if (!list)
            return CUTUNE_ERR_NO_MEMORY;
        for (size_t e = 0; e < n; e++) {
            char field[64];
            snprintf(field, sizeof field, "KernelSpecification.%s[%zu]",
                     keys[k], e);
            json_t *entry = json_array_get(g, e);
            cutune_status st = CUTUNE_OK;
            if (!json_is_string(entry) && !json_is_integer(entry))
                return cutune__t1_fail(p, CUTUNE_ERR_PARSE,
                                       "%s: expected a "
                                       "parameter name, an expression or "
                                       "a whole number, found %s",
                                       field, cutune__t1_json_kind(entry));
            if (!(list[e] = cutune__t1_field_text(p, d, entry, field, &st)))
                return st;
        }
        *lists[k] = list;
        *counts[k] = n;
    }
    return CUTUNE_OK;
}

static cutune_status read_kernel_file(cutune_problem *p, cutune__t1_draft *d,
                                      json_t *ks, const char *dir);

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

cutune_status cutune__t1_parse_launch(cutune_problem *p, cutune__t1_draft *d,
                                      json_t *ks)
{
    cutune_status st;
    const char *gst = cutune__t1_string(ks, "GlobalSizeType");
    if (!gst || strcmp(gst, "OpenCL") == 0)
        d->spec.global_size_in_blocks = 0;
    else if (strcmp(gst, "CUDA") == 0)
        d->spec.global_size_in_blocks = 1;
    else
        return cutune__t1_fail(
            p, CUTUNE_ERR_UNSUPPORTED,
            "KernelSpecification.GlobalSizeType: '%s' (CUDA, OpenCL)", gst);
    if ((st = parse_geometry(p, d, ks, "LocalSize", d->spec.block_size)) ||
        (st = parse_geometry(p, d, ks, "GlobalSize", d->spec.global_size)) ||
        (st = parse_grid_div(p, d, ks)))
        return st;
    return CUTUNE_OK;
}

cutune_status cutune__t1_parse_kernel(cutune_problem *p, cutune__t1_draft *d,
                                      json_t *root, const char *dir,
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
    d->spec.kernel_name = kname;

    json_t *opts = json_object_get(ks, "CompilerOptions");
    size_t no = json_is_array(opts) ? json_array_size(opts) : 0;
    /* Two more for the include folders of a KernelFile. */
    const char **options = cutune__t1_alloc(p, d, no + 2, sizeof *options);
    if (!options)
        return CUTUNE_ERR_NO_MEMORY;
    d->spec.compiler_options = options;
    for (size_t i = 0; i < no; i++) {
        json_t *o = json_array_get(opts, i);
        if (!json_is_string(o))
            return cutune__t1_fail(
                p, CUTUNE_ERR_PARSE,
                "KernelSpecification.CompilerOptions[%zu]: expected "
                "a string",
                i);
        options[i] = json_string_value(o);
        d->spec.n_compiler_options = i + 1;
    }

    if ((st = cutune__t1_parse_launch(p, d, ks)) ||
        (st = cutune__t1_parse_simulation_input(p, ks, dir)))
        return st;

    json_t *sm = json_object_get(ks, "SharedMemory");
    if (sm && !json_is_null(sm)) {
        if (!json_is_integer(sm) || json_integer_value(sm) < 0)
            return cutune__t1_fail(p, CUTUNE_ERR_PARSE,
                                   "KernelSpecification."
                                   "SharedMemory: expected a byte count");
        d->spec.shared_memory = (unsigned)json_integer_value(sm);
    }

    /* The kernel source: embedded for a built-in, else beside the file. */
    if (builtin) {
        size_t len = 0;
        char *source = cutune__t1_template_source(builtin, &len);
        if (!cutune__t1_keep(p, d, source))
            return CUTUNE_ERR_NO_MEMORY;
        d->spec.source = source;
        d->spec.source_len = len;
        return CUTUNE_OK;
    }
    return read_kernel_file(p, d, ks, dir);
}

/* KernelFile, relative to the T1 file's folder: a regular CUDA file of
 * sane size. Its quoted #includes are looked up beside it and beside the
 * T1 file (NVRTC gets both folders), and hashed with it. */
static cutune_status read_kernel_file(cutune_problem *p, cutune__t1_draft *d,
                                      json_t *ks, const char *dir)
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
    char err[512], *source = NULL;
    size_t len = 0;
    if (lang == CUTUNE__SRC_CUDA) {
        if (cutune__read_regular_file(path, CUTUNE__MAX_SOURCE_BYTES, &source,
                                      &len, err, sizeof err) != 0) {
            free(path);
            return cutune__t1_fail(p, CUTUNE_ERR_IO, "%s '%s': %s", field, kf,
                                   err);
        }
        if (!cutune__t1_keep(p, d, source)) {
            free(path);
            return CUTUNE_ERR_NO_MEMORY;
        }
        d->spec.source = source;
        d->spec.source_len = len;
        lang = cutune__source_language_of(NULL, source, &why);
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
    d->source_hash = cutune__strdup_printf(
        "%016llx",
        (unsigned long long)cutune__source_hash(source, len, dirs, n_dirs));
    const char **options = (const char **)d->spec.compiler_options;
    cutune_status st =
        d->source_hash
            ? CUTUNE_OK
            : cutune__t1_fail(p, CUTUNE_ERR_NO_MEMORY, "out of memory");
    for (size_t i = 0; i < n_dirs && !st; i++) {
        char *opt = cutune__strdup_printf("-I%s", dirs[i]);
        if (!cutune__t1_keep(p, d, opt))
            st = CUTUNE_ERR_NO_MEMORY;
        else
            options[d->spec.n_compiler_options++] = opt;
    }
    free(kreal);
    free(treal);
    return st;
}

/* One entry of ProblemSize: a positive integer, or (Kernel Tuner's
 * problem_size="num_blocks") a string naming tunables or an expression
 * of them, which makes the dimension vary with the configuration. */
static cutune_status problem_size_entry(cutune_problem *p, json_t *e, size_t i,
                                        long long *size, const char **expr)
{
    char field[64];
    snprintf(field, sizeof field, "KernelSpecification.ProblemSize[%zu]", i);
    if (json_is_integer(e)) {
        size[i] = json_integer_value(e);
        return CUTUNE_OK;
    }
    if (!json_is_string(e))
        return cutune__t1_fail(p, CUTUNE_ERR_PARSE,
                               "%s: expected a positive "
                               "integer, or a string naming tunable "
                               "parameters, found %s",
                               field, cutune__t1_json_kind(e));
    expr[i] = json_string_value(e);
    return CUTUNE_OK;
}

cutune_status cutune__t1_parse_problem_size(cutune_problem *p,
                                            cutune__t1_draft *d, json_t *root)
{
    json_t *ks = json_object_get(root, "KernelSpecification");
    json_t *ps = json_object_get(ks, "ProblemSize");
    int given = d->opt && d->opt->n_problem_size > 0;
    /* Kernel Tuner takes one number or one string as a one-dimensional
     * size. */
    json_t *one = json_is_integer(ps) || json_is_string(ps)
                      ? json_pack("[O]", ps)
                      : NULL;
    /* The list holds `ps` itself (its string stays the document's). */
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
    long long *size = cutune__t1_alloc(p, d, n, sizeof *size);
    const char **expr = size ? cutune__t1_alloc(p, d, n, sizeof *expr) : NULL;
    cutune_status st = expr ? CUTUNE_OK : CUTUNE_ERR_NO_MEMORY;
    /* A size the options give replaces the file's, entries and all. */
    for (size_t i = 0; i < n && !st && !given; i++)
        st = problem_size_entry(p, json_array_get(ps, i), i, size, expr);
    json_decref(one);
    d->spec.problem_size = size;
    d->spec.problem_size_expr = expr;
    d->spec.n_problem_size = n;
    /* Before the arguments' sizes are evaluated at it. */
    return st ? st : cutune__problem_check_size_option(p, &d->spec, d->opt);
}

/* CompilerOptionParameters: tunables whose values are NVRTC options
 * ("-Xptxas=-dlcm=cg", "--maxrregcount=64"; "" for none) rather than
 * macro values. */
static cutune_status parse_option_params(cutune_problem *p,
                                         cutune__t1_draft *d, json_t *cop)
{
    if (!json_is_array(cop))
        return cutune__t1_fail(p, CUTUNE_ERR_PARSE,
                               "CutuneExtensions."
                               "CompilerOptionParameters: expected a list of "
                               "parameter names");
    for (size_t i = 0; i < json_array_size(cop); i++) {
        const char *name = json_string_value(json_array_get(cop, i));
        cutune_tunable *t = NULL;
        for (size_t k = 0; name && k < d->spec.n_tune_params && !t; k++)
            if (strcmp(d->tunables[k].name, name) == 0)
                t = &d->tunables[k];
        if (!t)
            return cutune__t1_fail(p, CUTUNE_ERR_PARSE,
                                   "CutuneExtensions."
                                   "CompilerOptionParameters[%zu]: '%s' is "
                                   "not a tuning parameter",
                                   i, name ? name : "(not a string)");
        for (size_t v = 0; v < t->n_values; v++)
            if (t->values[v].type != CUTUNE_VALUE_STRING)
                return cutune__t1_fail(
                    p, CUTUNE_ERR_PARSE,
                    "CutuneExtensions."
                    "CompilerOptionParameters[%zu]: the values "
                    "of '%s' must be strings (compiler options)",
                    i, name);
        t->compiler_option = 1;
    }
    return CUTUNE_OK;
}

cutune_status cutune__t1_parse_extensions(cutune_problem *p,
                                          cutune__t1_draft *d, json_t *root)
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
    if (b && !(d->spec.bytes_per_launch = cutune__t1_field_text(
                   p, d, b, "CutuneExtensions.BytesPerLaunch", &st)))
        return st;
    json_t *f = json_object_get(ext, "FlopsPerLaunch");
    if (f && !(d->spec.flops_per_launch = cutune__t1_field_text(
                   p, d, f, "CutuneExtensions.FlopsPerLaunch", &st)))
        return st;
    json_t *cop = json_object_get(ext, "CompilerOptionParameters");
    return cop ? parse_option_params(p, d, cop) : CUTUNE_OK;
}

/* T1 Budget: a list of limits, each {Type, BudgetValue}; all apply. */
cutune_status cutune__t1_parse_budget(cutune_problem *p, cutune__t1_draft *d,
                                      json_t *root)
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
            d->spec.budget_evals = (size_t)v;
        else if (strcmp(type, "TuningDuration") == 0)
            d->spec.budget_seconds = v;
        else if (strcmp(type, "ConfigurationFraction") == 0 && v <= 1)
            d->spec.budget_fraction = v;
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
cutune_status cutune__t1_parse_search(cutune_problem *p, cutune__t1_draft *d,
                                      json_t *root)
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
    d->spec.strategy = ours;
    return CUTUNE_OK;
}
