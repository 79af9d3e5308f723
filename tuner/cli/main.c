/* cutune: the command line. It parses arguments, calls the public API and
 * prints what comes back; all logic lives in the library. One file per
 * command (cmd_*.c); this table lists them. */
#include <stdio.h>
#include <string.h>

#include "cli.h"

static const struct {
    const char *name;
    const char *summary;
    int (*run)(int, char **);
} commands[] = {
    {"tune", "tune on a GPU and cache the winner", cli_cmd_tune},
    {"lookup", "print the cached winner for a device", cli_cmd_lookup},
    {"explain", "why the winner is fast: hardware counters side by side",
     cli_cmd_explain},
    {"merge", "join cache files from several machines", cli_cmd_merge},
    {"export", "write cached winners as a C header or JSON", cli_cmd_export},
    {"check", "fail when a cached winner is stale or missing", cli_cmd_check},
    {"space", "print a problem's search space (no GPU needed)", cli_cmd_space},
    {"simulate", "replay recorded results to judge a strategy (no GPU)",
     cli_cmd_simulate},
    {"report", "write an HTML report of results or a cache (no GPU)",
     cli_cmd_report},
    {"import", "put the best of T4 or Kernel Tuner results into the cache",
     cli_cmd_import},
    {"compile", "compile configurations with NVRTC (no GPU needed)",
     cli_cmd_compile},
    {"list", "list the built-in kernel templates", cli_cmd_list},
    {"devices", "list the CUDA devices and their fingerprints",
     cli_cmd_devices},
};

static void usage(FILE *f)
{
    fputs("usage: cutune COMMAND [ARGS]\n"
          "\n"
          "Finds the fastest launch configuration of a CUDA kernel template "
          "on\nthis machine's GPU and remembers it per device.\n"
          "\n"
          "commands:\n",
          f);
    for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
        fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
    fputs("\n"
          "PROBLEM is a built-in template name (see `cutune list`) or a T1 "
          "JSON\nfile. `cutune COMMAND --help` describes each command.\n"
          "\n"
          "exit codes: 0 success, 1 usage error, 2 bad input, 3 no CUDA "
          "device,\n4 CUDA/NVRTC/worker failure, 5 nothing cached, 6 no "
          "configuration ran\ncorrectly, 7-9 `explain` without counters "
          "(7 refused, 8 no CUPTI, 9 a CUPTI\nerror), 10 the tuning cache "
          "could not be written (the result was\nprinted)\n",
          f);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return CLI_EXIT_USAGE;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
        strcmp(argv[1], "help") == 0) {
        usage(stdout);
        return CLI_EXIT_OK;
    }
    if (strcmp(argv[1], "--version") == 0) {
        printf("cutune %s\n", CUTUNE_VERSION_STRING);
        return CLI_EXIT_OK;
    }
    for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
        if (strcmp(argv[1], commands[i].name) == 0)
            return commands[i].run(argc - 2, argv + 2);
    fprintf(stderr, "cutune: unknown command '%s' (see cutune --help)\n",
            argv[1]);
    return CLI_EXIT_USAGE;
}
