/* cutune import: the best of recorded results (a T4 file or a Kernel
 * Tuner cache file) into the tuning cache. */
#include <stdio.h>
#include <string.h>

#include "cli.h"

static const char usage[] =
    "usage: cutune import FILE --problem PROBLEM [options]\n"
    "\n"
    "Puts the best correct configuration of FILE, a T4 results file\n"
    "(plain or gzip) or a Kernel Tuner cache file, into the tuning cache\n"
    "as a record of PROBLEM, so that `cutune lookup` returns it. The\n"
    "device is the one the file names; a file that names none needs\n"
    "--device-name. Needs no GPU.\n"
    "\n"
    "options:\n"
    "  --problem PROBLEM   the T1 file (or template) the results are of\n"
    "                      (required)\n"
    "  --device-name NAME  the device that measured FILE, where FILE\n"
    "                      names none\n"
    "  --size N[,N...]     problem size the file was measured at (default:\n"
    "                      the problem's own)\n"
    "  --objective NAME    the best by time (default), energy or edp (the\n"
    "                      file's energy measurements), filed as tuned for\n"
    "                      it\n"
    "  --cache-dir DIR     tuning cache\n";

int cli_cmd_import(int argc, char **argv)
{
    const char *file = NULL, *problem = NULL, *cache_dir = NULL;
    const char *objective = NULL;
    cutune_import_options io;
    cutune_import_options_init(&io);
    cli_sizes size = {{0}, 0};
    const cli_opt opts[] = {{"--problem", CLI_STRING, &problem},
                            {"--device-name", CLI_STRING, &io.device_name},
                            {"--size", CLI_SIZES, &size},
                            {"--cache-dir", CLI_STRING, &cache_dir},
                            {"--objective", CLI_STRING, &objective},
                            {NULL, 0, NULL}};
    int rc;
    if (!cli_parse_problem(argc, argv, opts, usage, &file, &rc))
        return rc;
    if ((rc = cli_parse_objective(objective, &io.objective)))
        return rc;
    if (!problem)
        return cli_usage_error("import: --problem is required (the T1 file "
                               "the results are of)");
    cutune_problem *p;
    if ((rc = cli_load_problem(problem, &size, &p)))
        return rc;
    cutune_cache *c = NULL;
    cutune_import_result r;
    cutune_status st = cutune_cache_open(cache_dir, &c);
    if (st == CUTUNE_OK)
        st = cutune_cache_import(c, p, file, &io, &r);
    if (st) {
        fprintf(stderr, "cutune: %s\n",
                c ? cutune_cache_errmsg(c) : cutune_status_str(st));
        rc = st == CUTUNE_ERR_NO_VALID_RESULT ? CLI_EXIT_NO_RESULT
                                              : cli_exit_code(st);
    } else {
        printf("%s: imported the best of %zu correct results (%zu in the "
               "%s) for %s\n  %s\n  %.4f ms\n",
               cutune_problem_name(p), r.correct, r.results,
               r.kernel_tuner ? "Kernel Tuner cache" : "T4 file",
               r.device_name, r.config, r.time_ms);
        if (r.outside)
            fprintf(stderr,
                    "cutune: %s: %zu results are not in the "
                    "problem's space; left out\n",
                    file, r.outside);
    }
    cutune_cache_close(c);
    cutune_problem_destroy(p);
    return rc;
}
