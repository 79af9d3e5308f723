#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

int cli_exit_code(cutune_status st)
{
    switch (st) {
    case CUTUNE_OK: return CLI_EXIT_OK;
    case CUTUNE_ERR_INVALID_ARGUMENT: return CLI_EXIT_USAGE;
    case CUTUNE_ERR_NO_DEVICE: return CLI_EXIT_NO_DEVICE;
    case CUTUNE_ERR_CUDA:
    case CUTUNE_ERR_NVRTC:
    case CUTUNE_ERR_WORKER:
    case CUTUNE_ERR_NO_MEMORY: return CLI_EXIT_GPU;
    case CUTUNE_ERR_NO_VALID_RESULT: return CLI_EXIT_NO_RESULT;
    default: return CLI_EXIT_INPUT;
    }
}

void cli_print_error(const char *msg, cutune_status st)
{
    if (msg && *msg)
        fprintf(stderr, "cutune: %s\n", msg);
    else
        fprintf(stderr, "cutune: %s (no further detail)\n",
                cutune_status_str(st));
}

int cli_check_output(const char *option, const char *path)
{
    char why[1024];
    if (!path || cutune_output_path_check(path, why, sizeof why) == CUTUNE_OK)
        return 0;
    fprintf(stderr, "cutune: %s: %s\n", option, why);
    return CLI_EXIT_INPUT;
}

int cli_usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("cutune: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputs(" (see --help)\n", stderr);
    va_end(ap);
    return CLI_EXIT_USAGE;
}

int cli_parse_objective(const char *text, cutune_objective *out)
{
    *out = CUTUNE_OBJECTIVE_TIME;
    if (text && cutune_objective_parse(text, out) != 0)
        return cli_usage_error("--objective: '%s' is not an objective (%s)",
                               text, CUTUNE_OBJECTIVE_NAMES);
    return 0;
}

static int parse_value(const cli_opt *o, const char *value)
{
    char *end;
    errno = 0;
    switch (o->kind) {
    case CLI_FLAG: *(int *)o->dest = 1; return 0;
    case CLI_STRING: *(const char **)o->dest = value; return 0;
    case CLI_COUNT: {
        long long v = strtoll(value, &end, 10);
        if (errno || end == value || *end || v < 0)
            return cli_usage_error("%s: '%s' is not a non-negative integer",
                                   o->name, value);
        *(long long *)o->dest = v;
        return 0;
    }
    case CLI_NUMBER: {
        double v = strtod(value, &end);
        if (errno || end == value || *end || !(v > 0))
            return cli_usage_error("%s: '%s' is not a positive number",
                                   o->name, value);
        *(double *)o->dest = v;
        return 0;
    }
    case CLI_SIZES: {
        cli_sizes *s = o->dest;
        s->n = 0;
        const char *p = value;
        while (*p) {
            long long v = strtoll(p, &end, 10);
            if (errno || end == p || v <= 0 || (*end && *end != ','))
                return cli_usage_error("%s: '%s' is not a list of positive "
                                       "integers",
                                       o->name, value);
            if (s->n == sizeof s->v / sizeof *s->v)
                return cli_usage_error("%s: too many dimensions", o->name);
            s->v[s->n++] = v;
            p = *end ? end + 1 : end;
        }
        if (s->n == 0)
            return cli_usage_error("%s: empty", o->name);
        return 0;
    }
    }
    return CLI_EXIT_USAGE;
}

int cli_parse(int argc, char **argv, const cli_opt *opts,
              const char **positional, size_t max_positional,
              size_t *n_positional, int *help)
{
    size_t np = 0;
    *help = 0;
    for (int i = 0; i < argc; i++) {
        const char *arg = argv[i];
        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            *help = 1;
            return 0;
        }
        if (arg[0] != '-' || arg[1] == '\0') {
            if (np == max_positional)
                return cli_usage_error("unexpected argument '%s'", arg);
            positional[np++] = arg;
            continue;
        }
        const char *eq = strchr(arg, '=');
        size_t len = eq ? (size_t)(eq - arg) : strlen(arg);
        const cli_opt *o = opts;
        while (o->name &&
               (strlen(o->name) != len || strncmp(o->name, arg, len) != 0))
            o++;
        if (!o->name)
            return cli_usage_error("unknown option '%.*s'", (int)len, arg);
        const char *value = NULL;
        if (o->kind == CLI_FLAG) {
            if (eq)
                return cli_usage_error("%s takes no value", o->name);
        } else if (eq) {
            value = eq + 1;
        } else if (i + 1 < argc) {
            value = argv[++i];
        } else {
            return cli_usage_error("%s needs a value", o->name);
        }
        int rc = parse_value(o, value);
        if (rc)
            return rc;
    }
    if (n_positional)
        *n_positional = np;
    return 0;
}

int cli_parse_problem(int argc, char **argv, const cli_opt *opts,
                      const char *usage, const char **problem, int *rc)
{
    size_t n;
    int help;
    *problem = NULL;
    *rc = cli_parse(argc, argv, opts, problem, 1, &n, &help);
    if (*rc || help) {
        if (help)
            fputs(usage, stdout);
        return 0;
    }
    if (!*problem) {
        *rc = cli_usage_error("missing PROBLEM");
        return 0;
    }
    return 1;
}

void cli_print_warnings(const char *name, const cutune_problem *p)
{
    for (size_t i = 0; i < cutune_problem_warning_count(p); i++)
        fprintf(stderr, "cutune: %s: warning: %s\n", name,
                cutune_problem_warning(p, i));
}

int cli_space_limit(unsigned long long *limit)
{
    /* 2^53: every whole number up to it is exact as a double. */
    double v = 0;
    char why[256];
    if (cutune_env_number("CUTUNE_SPACE_LIMIT", 1, 9007199254740992.0, 1, &v,
                          why, sizeof why)) {
        fprintf(stderr, "cutune: %s\n", why);
        return CLI_EXIT_USAGE;
    }
    *limit = (unsigned long long)v;
    return 0;
}

int cli_load_problem(const char *name, const cli_sizes *size,
                     cutune_problem **p)
{
    return cli_load_problem_as(name, size, 0, p);
}

int cli_load_problem_as(const char *name, const cli_sizes *size,
                        int space_only, cutune_problem **p)
{
    cutune_problem_options po;
    cutune_problem_options_init(&po);
    po.space_only = space_only;
    po.problem_size = size ? size->v : NULL;
    po.n_problem_size = size ? size->n : 0;
    *p = NULL;
    int rc = cli_space_limit(&po.max_space_visits);
    if (rc)
        return rc;
    cutune_status st = cutune_problem_load(name, &po, p);
    if (st) {
        cli_print_error(cutune_problem_errmsg(*p), st);
        cutune_problem_destroy(*p);
        *p = NULL;
        return cli_exit_code(st) == CLI_EXIT_USAGE ? CLI_EXIT_USAGE
                                                   : CLI_EXIT_INPUT;
    }
    cli_print_warnings(name, *p);
    return 0;
}

void cli_print_json(json_t *j)
{
    char *text = json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    if (text) {
        puts(text);
        free(text);
    }
    json_decref(j);
}

json_t *cli_config_json(const cutune_param_value *v, size_t n)
{
    json_t *o = json_object();
    for (size_t i = 0; v && i < n; i++)
        json_object_set_new(o, v[i].name, json_string(v[i].value));
    return o;
}

void cli_print_config(const cutune_param_value *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        printf("%s%s=%s", i ? " " : "", v[i].name, v[i].value);
}

json_t *cli_device_json(const cutune_device *d)
{
    char cc[16];
    snprintf(cc, sizeof cc, "%d.%d", d->cc_major, d->cc_minor);
    return json_pack("{s:s, s:s, s:s, s:i, s:I, s:I, s:i, s:s, s:s, s:b}",
                     "name", d->name, "uuid", d->uuid, "cc", cc, "sm_count",
                     d->sm_count, "l2_bytes", (json_int_t)d->l2_bytes,
                     "memory_bytes", (json_int_t)d->memory_bytes, "driver",
                     d->driver_version, "nvrtc", d->nvrtc_version, "cutune",
                     d->cutune_version, "simulated", d->simulated);
}
