/* cutune export: cached winners as a C/C++ header or JSON. */
#include <stdio.h>
#include <string.h>

#include "cli.h"

#define MAX_PROBLEMS 64

static const char usage[] =
    "usage: cutune export [PROBLEM...] --format header|json -o FILE "
    "[options]\n"
    "\n"
    "Writes the cached winners of each PROBLEM (default: every problem of\n"
    "the cache) to FILE.\n"
    "\n"
    "With --device or --device-name: that device's answers through the\n"
    "fallback chain (exact, nearest-size, architecture, default); a header\n"
    "then has one #define per parameter per kernel:\n"
    "  #define CUTUNE_TUNED_VECTOR_ADD 1   (0: use the occupancy suggestion)\n"
    "  #define CUTUNE_LEVEL_VECTOR_ADD \"exact\"\n"
    "  #define CUTUNE_VECTOR_ADD_BLOCK_SIZE_X 128\n"
    "Without: every cached device's record; a header then has, per kernel,\n"
    "a table inside cutune_<problem>_lookup(name, cc_major, cc_minor,\n"
    "sm_count, &level), which selects by device name, then compute\n"
    "capability and nearest SM count, then the cross-device default.\n"
    "\n"
    "options:\n"
    "  --format header|json\n"
    "  -o, --output FILE   the header or JSON file (- for standard output)\n"
    "  --device N          one device: the CUDA device with this ordinal\n"
    "  --device-name NAME  one device, by name; needs no GPU\n"
    "  --cc X.Y            its compute capability (with --device-name)\n"
    "  --sm-count N        its SM count (with --device-name)\n"
    "  --no-fallback       the device's own records only\n"
    "  --size N[,N...]     problem size (default: each problem's own)\n"
    "  --objective NAME    the records tuned for time (default), energy or\n"
    "                      edp; other than time, name the PROBLEMs\n"
    "  --cache-dir DIR     tuning cache\n";

int cli_cmd_export(int argc, char **argv)
{
    const char *problems[MAX_PROBLEMS], *format = NULL, *output = NULL,
                                        *out_short = NULL, *cache_dir = NULL,
                                        *objective = NULL;
    cli_device_opts dopt = {-1, NULL, NULL, -1, 0, 0};
    cli_sizes size = {{0}, 0};
    int help;
    size_t n = 0;
    const cli_opt opts[] = {{"--format", CLI_STRING, &format},
                            {"--output", CLI_STRING, &output},
                            {"-o", CLI_STRING, &out_short},
                            {"--device", CLI_COUNT, &dopt.device},
                            {"--device-name", CLI_STRING, &dopt.name},
                            {"--cc", CLI_STRING, &dopt.cc},
                            {"--sm-count", CLI_COUNT, &dopt.sm_count},
                            {"--no-fallback", CLI_FLAG, &dopt.no_fallback},
                            {"--size", CLI_SIZES, &size},
                            {"--cache-dir", CLI_STRING, &cache_dir},
                            {"--objective", CLI_STRING, &objective},
                            {NULL, 0, NULL}};
    int rc = cli_parse(argc, argv, opts, problems, MAX_PROBLEMS, &n, &help);
    if (rc || help) {
        if (help)
            fputs(usage, stdout);
        return rc;
    }
    if (!output)
        output = out_short;
    cutune_export_format fmt;
    if (format && strcmp(format, "header") == 0)
        fmt = CUTUNE_EXPORT_HEADER;
    else if (format && strcmp(format, "json") == 0)
        fmt = CUTUNE_EXPORT_JSON;
    else
        return cli_usage_error("--format: give header or json");
    if (!output)
        return cli_usage_error("missing -o FILE");
    cutune_objective wanted;
    if ((rc = cli_parse_objective(objective, &wanted)))
        return rc;
    if (wanted != CUTUNE_OBJECTIVE_TIME && n == 0)
        return cli_usage_error("--objective %s: name the PROBLEMs to export",
                               objective);
    if ((rc = cli_check_output("-o", output)))
        return rc;

    cutune_problem *loaded[MAX_PROBLEMS];
    cutune_cache_query q[MAX_PROBLEMS];
    long long dims[MAX_PROBLEMS][8];
    size_t n_loaded = 0;
    cutune_device fp;
    cutune_cache_query dev;
    memset(&dev, 0, sizeof dev);
    dev.objective = wanted;
    int one = dopt.device >= 0 || dopt.name;
    if (one && (rc = cli_device_query(&dopt, &fp, &dev)))
        return rc;
    if (one && n == 0)
        return cli_usage_error("name the PROBLEMs to export for one device");
    for (size_t i = 0; i < n; i++) {
        if ((rc = cli_load_problem(problems[i], &size, &loaded[i])))
            goto out;
        n_loaded++;
        q[i] = dev;
        q[i].problem_name = cutune_problem_name(loaded[i]);
        q[i].n_problem_size = cutune_problem_size_dims(loaded[i]);
        for (size_t d = 0; d < q[i].n_problem_size && d < 8; d++)
            dims[i][d] = cutune_problem_size(loaded[i], d);
        q[i].problem_size = dims[i];
    }
    cutune_cache *c = NULL;
    cutune_status st = cutune_cache_open(cache_dir, &c);
    if (st == CUTUNE_OK)
        st = cutune_cache_export(c, q, n, fmt, output);
    cli_cache_warning(c);
    if (st) {
        cli_print_error(cutune_cache_errmsg(c), st);
        rc = cli_exit_code(st);
    }
    cutune_cache_close(c);
out:
    for (size_t i = 0; i < n_loaded; i++)
        cutune_problem_destroy(loaded[i]);
    return rc;
}
