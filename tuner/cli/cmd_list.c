/* cutune list: the built-in kernel templates. */
#include <stdio.h>

#include "cli.h"

static const char usage[] =
    "usage: cutune list [--json]\n"
    "\n"
    "Lists the built-in kernel templates and the size of their spaces.\n";

int cli_cmd_list(int argc, char **argv)
{
    int json = 0, help;
    const cli_opt opts[] = {{"--json", CLI_FLAG, &json}, {NULL, 0, NULL}};
    int rc = cli_parse(argc, argv, opts, NULL, 0, NULL, &help);
    if (rc || help) {
        if (help)
            fputs(usage, stdout);
        return rc;
    }
    json_t *arr = json_array();
    for (size_t i = 0; i < cutune_template_count(); i++) {
        const char *name = cutune_template_name(i);
        cutune_problem *p;
        if ((rc = cli_load_problem(name, NULL, &p))) {
            json_decref(arr);
            return rc;
        }
        if (json) {
            json_array_append_new(
                arr, json_pack("{s:s, s:s, s:I, s:I}", "name", name, "kernel",
                               cutune_problem_kernel_name(p), "parameters",
                               (json_int_t)cutune_problem_param_count(p),
                               "configurations",
                               (json_int_t)cutune_problem_space_size(p)));
        } else {
            printf("%-12s %6zu configurations over", name,
                   cutune_problem_space_size(p));
            for (size_t k = 0; k < cutune_problem_param_count(p); k++)
                printf(" %s", cutune_problem_param_name(p, k));
            printf("\n");
        }
        cutune_problem_destroy(p);
    }
    if (json)
        cli_print_json(arr);
    else
        json_decref(arr);
    return CLI_EXIT_OK;
}
