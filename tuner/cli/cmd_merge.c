/* cutune merge: join cache files from several machines into one. */
#include <stdio.h>
#include <string.h>

#include "cli.h"

#define MAX_INPUTS 256

static const char usage[] =
    "usage: cutune merge INPUT... -o OUT\n"
    "\n"
    "Joins cache files (or cache directories) into the one file OUT,\n"
    "written aside and renamed into place (OUT may be an input, also one a\n"
    "tune is appending to). Records with the same key (device UUID, or\n"
    "name without one; problem name, source hash, size and compiler\n"
    "options) are one: the newer stays, as in a lookup, so a --force\n"
    "re-tune survives. Lines that are not valid records of this format\n"
    "version are left out, with a warning.\n"
    "\n"
    "options:\n"
    "  -o, --output OUT    the merged file (e.g. DIR/merged.jsonl; - for\n"
    "                      standard output)\n";

int cli_cmd_merge(int argc, char **argv)
{
    const char *inputs[MAX_INPUTS], *output = NULL, *out_short = NULL;
    int help;
    size_t n = 0;
    const cli_opt opts[] = {{"--output", CLI_STRING, &output},
                            {"-o", CLI_STRING, &out_short},
                            {NULL, 0, NULL}};
    int rc = cli_parse(argc, argv, opts, inputs, MAX_INPUTS, &n, &help);
    if (rc || help) {
        if (help)
            fputs(usage, stdout);
        return rc;
    }
    if (!output)
        output = out_short;
    if (n == 0)
        return cli_usage_error("missing INPUT");
    if (!output)
        return cli_usage_error("missing -o OUT");
    if ((rc = cli_check_output("-o", output)))
        return rc;
    cutune_cache *c = NULL;
    cutune_cache_merge_stats stats;
    cutune_status st = cutune_cache_open("/", &c);
    if (st == CUTUNE_OK)
        st = cutune_cache_merge(c, inputs, n, output, &stats);
    cli_cache_warning(c);
    if (st) {
        cli_print_error(cutune_cache_errmsg(c), st);
        cutune_cache_close(c);
        return cli_exit_code(st);
    }
    /* After records written to standard output, the summary goes apart. */
    fprintf(strcmp(output, "-") == 0 ? stderr : stdout,
            "%s: %zu record%s written (%zu read from %zu input%s, %zu "
            "duplicate%s dropped)\n",
            output, stats.records_written,
            stats.records_written == 1 ? "" : "s", stats.records_read, n,
            n == 1 ? "" : "s", stats.duplicates,
            stats.duplicates == 1 ? "" : "s");
    cutune_cache_close(c);
    return CLI_EXIT_OK;
}
