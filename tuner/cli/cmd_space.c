/* cutune space: the search space of a problem, without compiling or
 * running anything. */
#include <stdio.h>

#include "cli.h"

static const char usage[] =
    "usage: cutune space PROBLEM [options]\n"
    "\n"
    "Builds the search space of PROBLEM and prints its parameters with their\n"
    "values, the size of the cartesian product, the number of valid\n"
    "configurations and the time the construction took. Only the space is\n"
    "read (General, ConfigurationSpace, ProblemSize), so this works for any\n"
    "T1 file, including ones whose kernel cannot be compiled here.\n"
    "\n"
    "options:\n"
    "  --size N[,N...]     problem size (replaces the T1 ProblemSize)\n"
    "  --json              print the space as JSON\n";

/* 4440000 -> "4,440,000": cartesian sizes are easier to read grouped. */
static void print_grouped(double v)
{
    char digits[64];
    int n = snprintf(digits, sizeof digits, "%.0f", v);
    if (n <= 0 || n >= (int)sizeof digits || v >= 1e21) {
        printf("%g", v);
        return;
    }
    for (int i = 0; i < n; i++) {
        if (i > 0 && (n - i) % 3 == 0)
            putchar(',');
        putchar(digits[i]);
    }
}

static void print_text(const cutune_problem *p)
{
    size_t np = cutune_problem_param_count(p);
    printf("%s: %zu parameter%s", cutune_problem_name(p), np,
           np == 1 ? "" : "s");
    for (size_t d = 0; d < cutune_problem_size_dims(p); d++) {
        const char *varies = cutune_problem_size_expr(p, d);
        printf("%s", d ? "x" : ", problem size ");
        if (varies)
            printf("(%s)", varies);
        else
            printf("%lld", cutune_problem_size(p, d));
    }
    printf("\n");
    size_t width = 0;
    for (size_t i = 0; i < np; i++) {
        size_t len = 0;
        for (const char *c = cutune_problem_param_name(p, i); *c; c++)
            len++;
        if (len > width)
            width = len;
    }
    for (size_t i = 0; i < np; i++) {
        size_t nv = cutune_problem_value_count(p, i);
        printf("  %-*s %4zu value%s: ", (int)width,
               cutune_problem_param_name(p, i), nv, nv == 1 ? " " : "s");
        for (size_t v = 0; v < nv; v++)
            printf("%s%s", v ? ", " : "", cutune_problem_value(p, i, v));
        printf("\n");
    }
    double cart = cutune_problem_cartesian_size(p);
    size_t valid = cutune_problem_space_size(p);
    printf("cartesian size: ");
    print_grouped(cart);
    printf("\nvalid:          ");
    print_grouped((double)valid);
    printf(" (%.2f%%)\n", cart > 0 ? 100.0 * (double)valid / cart : 0.0);
    printf("constructed in: %.1f ms\n", 1e3 * cutune_problem_space_seconds(p));
}

static void print_json(const cutune_problem *p)
{
    json_t *params = json_array();
    for (size_t i = 0; i < cutune_problem_param_count(p); i++) {
        json_t *values = json_array();
        for (size_t v = 0; v < cutune_problem_value_count(p, i); v++)
            json_array_append_new(values,
                                  json_string(cutune_problem_value(p, i, v)));
        json_array_append_new(
            params, json_pack("{s:s, s:I, s:o}", "name",
                              cutune_problem_param_name(p, i), "count",
                              (json_int_t)cutune_problem_value_count(p, i),
                              "values", values));
    }
    json_t *size = json_array();
    for (size_t d = 0; d < cutune_problem_size_dims(p); d++)
        json_array_append_new(size,
                              cutune_problem_size_expr(p, d)
                                  ? json_string(cutune_problem_size_expr(p, d))
                                  : json_integer(cutune_problem_size(p, d)));
    /* Exact as an integer up to 2^53; beyond, a double is all there is. */
    double cart = cutune_problem_cartesian_size(p);
    json_t *cart_json = cart < 9007199254740992.0
                            ? json_integer((json_int_t)cart)
                            : json_real(cart);
    cli_print_json(json_pack(
        "{s:s, s:o, s:o, s:o, s:I, s:f}", "problem", cutune_problem_name(p),
        "problem_size", size, "parameters", params, "cartesian_size",
        cart_json, "valid", (json_int_t)cutune_problem_space_size(p),
        "construction_ms", 1e3 * cutune_problem_space_seconds(p)));
}

int cli_cmd_space(int argc, char **argv)
{
    const char *problem = NULL;
    cli_sizes size = {{0}, 0};
    int json = 0;
    const cli_opt opts[] = {{"--size", CLI_SIZES, &size},
                            {"--json", CLI_FLAG, &json},
                            {NULL, 0, NULL}};
    int rc;
    if (!cli_parse_problem(argc, argv, opts, usage, &problem, &rc))
        return rc;
    cutune_problem_options po;
    cutune_problem_options_init(&po);
    po.problem_size = size.n ? size.v : NULL;
    po.n_problem_size = size.n;
    po.space_only = 1;
    if ((rc = cli_space_limit(&po.max_space_visits)))
        return rc;
    cutune_problem *p;
    cutune_status st = cutune_problem_load(problem, &po, &p);
    if (st) {
        cli_print_error(cutune_problem_errmsg(p), st);
        cutune_problem_destroy(p);
        return cli_exit_code(st) == CLI_EXIT_USAGE ? CLI_EXIT_USAGE
                                                   : CLI_EXIT_INPUT;
    }
    cli_print_warnings(problem, p);
    if (json)
        print_json(p);
    else
        print_text(p);
    cutune_problem_destroy(p);
    return CLI_EXIT_OK;
}
