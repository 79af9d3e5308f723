/* Loading a T1 tuning problem (a file or a built-in template) into a
 * cutune_problem and its search space, and what the rest of the tuner
 * asks of a loaded problem (launch geometry, NVRTC options, defaults).
 *
 * The sections of T1 are read by t1_*.c. A field cutune does not act on
 * is reported as a warning naming it, never dropped silently, because a
 * silently ignored field would tune a different problem than the file
 * describes; a value cutune cannot honour is refused with one message
 * naming the field.
 */
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

#include "embedded.h"
#include "expr/none.h"
#include "kernel_source.h"
#include "source_hash.h"
#include "util.h"

/* A problem read for its space only: the kernel part is not looked at,
 * but a replay runs the strategy and budget a tune would, starts where a
 * tune would (the launch geometry places an occupancy suggestion), and
 * its records carry the source hash a tune's would. */
static cutune_status space_only(cutune_problem *p, cutune__t1_draft *d,
                                json_t *root, const char *dir,
                                const cutune__template *builtin)
{
    json_t *ks = json_object_get(root, "KernelSpecification");
    d->spec.kernel_name = cutune__t1_string(ks, "KernelName");
    cutune_status st;
    /* The geometry where the file gives one (LocalSize and GlobalSize):
     * a file read for its space alone need not describe a launch. */
    int launch = json_object_get(ks, "LocalSize") != NULL &&
                 json_object_get(ks, "GlobalSize") != NULL;
    if ((st = cutune__t1_parse_budget(p, d, root)) ||
        (st = cutune__t1_parse_search(p, d, root)) ||
        (launch && (st = cutune__t1_parse_launch(p, d, ks))) ||
        (st = cutune__t1_parse_simulation_input(p, ks, dir)))
        return st;
    size_t len = 0;
    char *source = builtin ? cutune__t1_template_source(builtin, &len) : NULL;
    if (builtin && !cutune__t1_keep(p, d, source))
        return CUTUNE_ERR_NO_MEMORY;
    d->spec.source = source;
    d->spec.source_len = len;
    if ((st = cutune__problem_build(p, &d->spec, d->opt, NULL)))
        return st;
    if (!builtin)
        cutune__problem_hash_kernel(p, cutune__t1_string(ks, "KernelFile"),
                                    dir, NULL, 0);
    return CUTUNE_OK;
}

/* The sections of a T1 document into the draft, then the problem built
 * from it as from any spec. */
static cutune_status parse_sections(cutune_problem *p, cutune__t1_draft *d,
                                    json_t *root, const char *dir,
                                    const cutune__template *builtin)
{
    static const char *const known[] = {"General",
                                        "ConfigurationSpace",
                                        "KernelSpecification",
                                        "Budget",
                                        "Search",
                                        "CutuneExtensions",
                                        NULL};
    static const char *const general_known[] = {"BenchmarkName", NULL};
    cutune_status st;
    int only_space = d->opt && d->opt->space_only;
    if (!only_space)
        cutune__t1_check_known(p, root, "(top level)", known);
    json_t *general = json_object_get(root, "General");
    if (general && !json_is_null(general) && !json_is_object(general))
        return cutune__t1_fail(p, CUTUNE_ERR_PARSE,
                               "General: expected an "
                               "object, found %s",
                               cutune__t1_json_kind(general));
    if (!only_space && general)
        cutune__t1_check_known(p, general, "General", general_known);
    d->spec.name = cutune__t1_string(general, "BenchmarkName");
    d->spec.kernel_tuner_defines = !builtin;
    if ((st = cutune__t1_parse_problem_size(p, d, root)) ||
        (st = cutune__t1_parse_space(p, d, root)))
        return st;
    if (only_space)
        return space_only(p, d, root, dir, builtin);
    json_t *ks = json_object_get(root, "KernelSpecification");
    if ((st = cutune__t1_parse_kernel(p, d, root, dir, builtin)) ||
        (st = cutune__t1_parse_extensions(p, d, root)) ||
        (st = cutune__t1_parse_budget(p, d, root)) ||
        (st = cutune__t1_parse_search(p, d, root)) ||
        (st = cutune__t1_parse_args(p, d, ks, dir)) ||
        (st = cutune__t1_parse_references(
             p, d, json_object_get(ks, "ReferenceArguments"), dir)))
        return st;
    return cutune__problem_build(p, &d->spec, d->opt, d->source_hash);
}

static cutune_status parse_root(cutune_problem *p, const char *text,
                                size_t len, const char *dir,
                                const cutune__template *builtin,
                                const cutune_problem_options *opt)
{
    json_error_t jerr;
    /* A key given twice is a mistake in the file: with most readers the
     * last one silently wins, and which one the author meant is unknown. */
    json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
    if (!root)
        return cutune__t1_fail(p, CUTUNE_ERR_PARSE, "line %d, column %d: %s",
                               jerr.line, jerr.column, jerr.text);
    cutune_status st;
    cutune__t1_draft d;
    memset(&d, 0, sizeof d);
    cutune_problem_spec_init(&d.spec);
    d.opt = opt;
    if (!json_is_object(root))
        st = cutune__t1_fail(p, CUTUNE_ERR_PARSE, "expected a JSON object");
    else
        st = parse_sections(p, &d, root, dir, builtin);
    cutune__t1_draft_free(&d);
    json_decref(root);
    return st;
}

/* ------------------------------------------------------------------ */
/* Public API                                                          */

size_t cutune_template_count(void)
{
    return cutune__template_count;
}

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

void cutune_problem_options_init(cutune_problem_options *o)
{
    if (o)
        memset(o, 0, sizeof *o);
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
        return cutune__t1_fail(p, CUTUNE_ERR_INVALID_ARGUMENT,
                               "no problem given");
    }
    const cutune__template *builtin = find_template(name_or_path);
    if (builtin) {
        p->origin =
            cutune__strdup_printf("built-in template %s", builtin->name);
        if (!p->origin)
            return CUTUNE_ERR_NO_MEMORY;
        p->builtin = 1;
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
        return cutune__t1_fail(p, CUTUNE_ERR_NOT_FOUND,
                               "no built-in template and no file of that name "
                               "(built-in templates: %s)",
                               names);
    }
    if (probe)
        fclose(probe);
    char err[512];
    /* T1 files are kilobytes; the bound only stops a wrong path early. */
    if (cutune__read_regular_file(name_or_path, 4 * CUTUNE__MAX_SOURCE_BYTES,
                                  &text, &len, err, sizeof err) != 0)
        return cutune__t1_fail(p, CUTUNE_ERR_IO, "%s", err);
    cutune_status st;
    char *dir = strdup(name_or_path);
    if (!dir) {
        free(text);
        return cutune__t1_fail(p, CUTUNE_ERR_NO_MEMORY, "out of memory");
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
    for (int d = 0; d < 3; d++) {
        for (size_t k = 0; p->grid_div[d] && k < p->n_grid_div[d]; k++)
            cutune__expr_free(p->grid_div[d][k]);
        free(p->grid_div[d]);
    }
    for (size_t d = 0; p->problem_size_exprs && d < p->n_problem_size; d++)
        cutune__expr_free(p->problem_size_exprs[d]);
    free(p->problem_size_exprs);
    for (size_t i = 0; i < p->n_args; i++)
        free(p->args[i].name);
    for (size_t i = 0; p->args && i < p->n_args; i++)
        free(p->args[i].data);
    free(p->args);
    cutune__expr_free(p->bytes_per_launch);
    cutune__expr_free(p->flops_per_launch);
    free(p->search_strategy);
    for (size_t i = 0; i < p->n_refs; i++)
        free(p->refs[i].data);
    free(p->refs);
    free(p->param_is_option);
    cutune__free_strings(p->options, p->n_options);
    cutune__free_strings(p->warnings, p->n_warnings);
    cutune__value_clear(&p->problem_size_value);
    free(p->problem_size);
    free(p->source);
    free(p->kernel_name);
    free(p->name);
    free(p->origin);
    free(p->simulation_input);
    free(p->errmsg);
    free(p);
}

const char *cutune_problem_errmsg(const cutune_problem *p)
{
    if (!p)
        return "out of memory";
    return p->errmsg ? p->errmsg : "no error";
}

size_t cutune_problem_warning_count(const cutune_problem *p)
{
    return p ? p->n_warnings : 0;
}

const char *cutune_problem_warning(const cutune_problem *p, size_t index)
{
    return p && index < p->n_warnings ? p->warnings[index] : NULL;
}

const char *cutune_problem_name(const cutune_problem *p)
{
    return p->name;
}
const char *cutune_problem_kernel_name(const cutune_problem *p)
{
    return p->kernel_name;
}
const char *cutune_problem_source_hash(const cutune_problem *p)
{
    return p->source_hash;
}
const char *cutune_problem_simulation_input(const cutune_problem *p)
{
    return p ? p->simulation_input : NULL;
}
size_t cutune_problem_size_dims(const cutune_problem *p)
{
    return p->n_problem_size;
}
long long cutune_problem_size(const cutune_problem *p, size_t dim)
{
    return dim < p->n_problem_size ? p->problem_size[dim] : 0;
}
const char *cutune_problem_size_expr(const cutune_problem *p, size_t dim)
{
    return dim < p->n_problem_size && p->problem_size_exprs &&
                   p->problem_size_exprs[dim]
               ? cutune__expr_text(p->problem_size_exprs[dim])
               : NULL;
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
    return CUTUNE__NONE;
}

/* Threads per block of configuration `config` of the problem `ctx` (0
 * when its geometry does not evaluate): the seed rule's scan of spaces
 * whose threads follow from a LocalSize expression. */
static double problem_threads(void *ctx, size_t config)
{
    unsigned grid[3], block[3];
    char err[16];
    if (cutune__problem_geometry(ctx, config, grid, block, err, sizeof err))
        return 0;
    return (double)block[0] * block[1] * block[2];
}

size_t cutune__problem_seed_start(const cutune_problem *p, int block_size,
                                  cutune__seed_source *source)
{
    return cutune__seed_start(p->space, cutune__problem_default_config(p),
                              block_size, problem_threads, (void *)p, source);
}

int cutune__problem_geometry(const cutune_problem *p, size_t config,
                             unsigned grid[3], unsigned block[3], char *err,
                             size_t errlen)
{
    static const long long grid_max[3] = {2147483647LL, 65535, 65535};
    if (!p->local_size[0]) {
        snprintf(err, errlen, "no launch geometry");
        return CUTUNE__GEOMETRY_BAD_FIELD;
    }
    const uint32_t *cfg = cutune__space_config(p->space, config);
    long long size[8];
    if (p->has_grid_div && p->n_problem_size > 0) {
        long long *at = p->n_problem_size > 8
                            ? malloc(p->n_problem_size * sizeof *at)
                            : size;
        int rc = at ? cutune__problem_size_at(p, cfg, at, err, errlen) : -1;
        if (!at)
            snprintf(err, errlen, "out of memory");
        for (size_t d = 0; at && d < 3 && d < p->n_problem_size; d++)
            size[d] = at[d];
        if (at != size)
            free(at);
        if (rc)
            return at ? CUTUNE__GEOMETRY_BAD_FIELD
                      : CUTUNE__GEOMETRY_OUT_OF_RANGE;
    }
    for (int d = 0; d < 3; d++) {
        long long b, g = 1;
        char why[256];
        /* With GridDiv, GlobalSize does not enter (Kernel Tuner's rule). */
        char field[64];
        if (cutune__t1_eval_int(p, p->local_size[d], cfg, &b, why,
                                sizeof why) != 0) {
            snprintf(err, errlen, "%s: %s",
                     cutune__problem_field(p, CUTUNE__F_LOCAL, (size_t)d, 0,
                                           field, sizeof field),
                     why);
            return CUTUNE__GEOMETRY_BAD_FIELD;
        }
        if (!p->has_grid_div &&
            cutune__t1_eval_int(p, p->global_size[d], cfg, &g, why,
                                sizeof why) != 0) {
            snprintf(err, errlen, "%s: %s",
                     cutune__problem_field(p, CUTUNE__F_GLOBAL, (size_t)d, 0,
                                           field, sizeof field),
                     why);
            return CUTUNE__GEOMETRY_BAD_FIELD;
        }
        if (p->has_grid_div) {
            /* Kernel Tuner's rule, which BAT applies to T1 files with a
             * ProblemSize: the grid covers the problem size divided by the
             * GridDiv entries; GlobalSize does not enter. */
            g = d < (int)p->n_problem_size ? size[d] : 1;
            long long div = 1;
            if (!p->grid_div_given[d]) {
                div = b;
            } else {
                for (size_t k = 0; k < p->n_grid_div[d]; k++) {
                    long long f;
                    if (cutune__t1_eval_int(p, p->grid_div[d][k], cfg, &f, why,
                                            sizeof why) != 0 ||
                        f <= 0 || div > (1LL << 40) / f) {
                        snprintf(err, errlen,
                                 "%s: '%s' is not a positive integer here",
                                 cutune__problem_field(p, CUTUNE__F_GRID_DIV,
                                                       (size_t)d, k, field,
                                                       sizeof field),
                                 cutune__expr_text(p->grid_div[d][k]));
                        return CUTUNE__GEOMETRY_BAD_FIELD;
                    }
                    div *= f;
                }
            }
            if (b <= 0 || b > 1024 || div <= 0) {
                snprintf(err, errlen,
                         "block %lld in dimension %d is out "
                         "of range",
                         b, d);
                return CUTUNE__GEOMETRY_OUT_OF_RANGE;
            }
            g = (g + div - 1) / div;
        } else if (b <= 0 || b > 1024 || g <= 0) {
            snprintf(err, errlen,
                     "block %lld or global size %lld in "
                     "dimension %d is out of range",
                     b, g, d);
            return CUTUNE__GEOMETRY_OUT_OF_RANGE;
        } else if (!p->global_in_blocks) {
            g = (g + b - 1) / b;
        }
        if (g > grid_max[d]) {
            snprintf(err, errlen,
                     "grid of %lld blocks in dimension %d "
                     "exceeds the CUDA limit",
                     g, d);
            return CUTUNE__GEOMETRY_OUT_OF_RANGE;
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
    if (cutune__t1_eval_in(p, e, cutune__space_config(p->space, config), &v,
                           err, sizeof err) == 0) {
        if (cutune__t1_as_double(&v, &amount) != 0)
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
        return CUTUNE__NONE;
    return p->default_config;
}

/* Kernel Tuner's convention, which published kernels rely on: a
 * parameter named loop_unroll_factor* is a C++ constant, because
 * `#pragma unroll` takes a constant expression and does not expand
 * macros. */
static int is_unroll_param(const cutune_problem *p, size_t i)
{
    return p->kernel_tuner_defines &&
           strncmp(p->param_names[i], "loop_unroll_factor", 18) == 0;
}

char *cutune__problem_source(const cutune_problem *p, size_t config)
{
    const uint32_t *cfg = cutune__space_config(p->space, config);
    size_t extra = 0;
    for (size_t i = 0; i < p->n_params; i++)
        if (is_unroll_param(p, i))
            extra += strlen(p->param_names[i]) +
                     strlen(p->value_texts[i][cfg[i]]) + 32;
    if (extra == 0)
        return NULL;
    char *src = malloc(extra + p->source_len + 16);
    if (!src)
        return NULL;
    size_t k = 0;
    for (size_t i = 0; i < p->n_params; i++)
        if (is_unroll_param(p, i))
            k += (size_t)sprintf(src + k, "constexpr int %s = %s;\n",
                                 p->param_names[i], p->value_texts[i][cfg[i]]);
    /* Compiler messages keep the file's own line numbers. */
    k += (size_t)sprintf(src + k, "#line 1\n");
    memcpy(src + k, p->source, p->source_len + 1);
    return src;
}

/* What Kernel Tuner defines for every kernel it compiles, which published
 * kernels test (`#ifndef kernel_tuner` guards their stand-alone values):
 * kernel_tuner, and the block and grid sizes the tunables do not name. */
static int t1_defines(const cutune_problem *p, size_t config, char **opts,
                      size_t *k)
{
    static const char *const names[2][3] = {
        {"block_size_x", "block_size_y", "block_size_z"},
        {"grid_size_x", "grid_size_y", "grid_size_z"}};
    unsigned dims[2][3];
    char err[256];
    if (cutune__problem_geometry(p, config, dims[1], dims[0], err,
                                 sizeof err) != 0)
        dims[0][0] = dims[0][1] = dims[0][2] = dims[1][0] = dims[1][1] =
            dims[1][2] = 1;
    if (!(opts[(*k)++] = strdup("-Dkernel_tuner=1")))
        return -1;
    for (int g = 0; g < 2; g++)
        for (int d = 0; d < 3; d++) {
            if (cutune__problem_find_param(p, names[g][d]) != CUTUNE__NONE)
                continue;
            if (!(opts[(*k)++] = cutune__strdup_printf("-D%s=%u", names[g][d],
                                                       dims[g][d])))
                return -1;
        }
    return 0;
}

char **cutune__problem_options(const cutune_problem *p, size_t config,
                               const char *arch, size_t *n)
{
    const uint32_t *cfg = cutune__space_config(p->space, config);
    size_t total = p->n_params + p->n_options + 8;
    char **opts = calloc(total, sizeof(char *));
    if (!opts)
        return NULL;
    size_t k = 0;
    for (size_t i = 0; i < p->n_params; i++) {
        const char *value = p->value_texts[i][cfg[i]];
        if (is_unroll_param(p, i))
            continue;
        if (p->param_is_option && p->param_is_option[i]) {
            /* The value is the option itself; "" adds none. */
            if (!*value)
                continue;
            opts[k] = strdup(value);
        } else {
            opts[k] =
                cutune__strdup_printf("-D%s=%s", p->param_names[i], value);
        }
        if (!opts[k++])
            goto oom;
    }
    if (p->kernel_tuner_defines && t1_defines(p, config, opts, &k) != 0)
        goto oom;
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
