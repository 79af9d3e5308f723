/* cutune check: a CI step that fails on stale or missing tunings. */
#include <stdio.h>
#include <string.h>

#include "cli.h"

#define MAX_PROBLEMS 64

static const char usage[] =
    "usage: cutune check PROBLEM... [options]\n"
    "\n"
    "Checks that each PROBLEM has a cached winner on the device (its own\n"
    "records: exact or nearest size; no fallback to other devices) and\n"
    "that the kernel source hash recorded with it is that of the source on\n"
    "disk. Prints one line per problem; exits 5, naming the kernels, when\n"
    "any is stale, has no record, or has only a record simulated without\n"
    "the kernel source (not comparable).\n"
    "\n"
    "options:\n"
    "  --device N          the CUDA device with this ordinal (default 0)\n"
    "  --device-name NAME  a device by name; needs no GPU\n"
    "  --size N[,N...]     problem size (default: each problem's own)\n"
    "  --cache-dir DIR     tuning cache\n";

int cli_cmd_check(int argc, char **argv)
{
    const char *problems[MAX_PROBLEMS], *cache_dir = NULL;
    cli_device_opts dopt = {-1, NULL, NULL, -1, 1, 0};
    cli_sizes size = {{0}, 0};
    int help;
    size_t n = 0;
    const cli_opt opts[] = {{"--device", CLI_COUNT, &dopt.device},
                            {"--device-name", CLI_STRING, &dopt.name},
                            {"--size", CLI_SIZES, &size},
                            {"--cache-dir", CLI_STRING, &cache_dir},
                            {NULL, 0, NULL}};
    int rc = cli_parse(argc, argv, opts, problems, MAX_PROBLEMS, &n, &help);
    if (rc || help) {
        if (help)
            fputs(usage, stdout);
        return rc;
    }
    if (n == 0)
        return cli_usage_error("missing PROBLEM");
    cutune_device fp;
    cutune_cache_query dev;
    memset(&dev, 0, sizeof dev);
    if ((rc = cli_device_query(&dopt, &fp, &dev)))
        return rc;
    cutune_cache *c = NULL;
    cutune_status st = cutune_cache_open(cache_dir, &c);
    if (st) {
        cli_print_error(cutune_cache_errmsg(c), st);
        cutune_cache_close(c);
        return cli_exit_code(st);
    }
    size_t bad = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        cutune_problem *p;
        if ((rc = cli_load_problem(problems[i], &size, &p)))
            break;
        long long dims[8];
        cutune_cache_query q = dev;
        cli_problem_query(p, dims, &q);
        const cutune_cache_record *rec = NULL;
        cutune_match match;
        st = cutune_cache_lookup(c, &q, &rec, &match);
        cli_cache_warning(c);
        const char *hash = cutune_problem_source_hash(p);
        if (st == CUTUNE_ERR_NOT_FOUND) {
            fprintf(stderr, "cutune: %s (kernel %s): no cached record on %s\n",
                    q.problem_name, cutune_problem_kernel_name(p),
                    q.device_name);
            bad++;
        } else if (st) {
            cli_print_error(cutune_cache_errmsg(c), st);
            rc = cli_exit_code(st);
        } else if (!rec->source_hash[0]) {
            fprintf(stderr,
                    "cutune: %s (kernel %s): not comparable on %s: "
                    "the cached record was simulated from recorded "
                    "times without the kernel source, so whether it "
                    "is fresh cannot be told; tune it on the device\n",
                    q.problem_name, cutune_problem_kernel_name(p),
                    rec->device.name);
            bad++;
        } else if (strcmp(rec->source_hash, hash) != 0) {
            fprintf(stderr,
                    "cutune: %s (kernel %s): stale on %s: the "
                    "source hash on disk is %s, the cached record's "
                    "%s; tune it again\n",
                    q.problem_name, cutune_problem_kernel_name(p),
                    rec->device.name, hash, rec->source_hash);
            bad++;
        } else {
            printf("%s (kernel %s): fresh on %s%s (%s match)\n",
                   q.problem_name, cutune_problem_kernel_name(p),
                   rec->device.name,
                   rec->device.simulated ? " [simulated]" : "",
                   cutune_match_str(match));
        }
        cutune_problem_destroy(p);
    }
    cutune_cache_close(c);
    if (rc == 0 && bad > 0)
        rc = CLI_EXIT_NOT_CACHED;
    return rc;
}
