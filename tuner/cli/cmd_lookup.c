/* cutune lookup: the cached winner of a problem for a device. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

static const char usage[] =
    "usage: cutune lookup PROBLEM [options]\n"
    "\n"
    "Prints the cached winner of PROBLEM for a device and the level that\n"
    "answered: exact (the device, the size), nearest-size (the device,\n"
    "the nearest tuned size), architecture (another device of the same\n"
    "compute capability, nearest SM count), default (the configuration\n"
    "with the best average relative time over the cached devices). When\n"
    "nothing answers it says to use the occupancy suggestion (exit 5).\n"
    "\n"
    "options:\n"
    "  --device N          the CUDA device with this ordinal (default 0)\n"
    "  --device-name NAME  a device by name; needs no GPU\n"
    "  --cc X.Y            its compute capability (with --device-name; for\n"
    "                      the architecture level)\n"
    "  --sm-count N        its SM count (with --device-name)\n"
    "  --no-fallback       the device's own records only\n"
    "  --size N[,N...]     problem size (default: the problem's own)\n"
    "  --cache-dir DIR     tuning cache\n"
    "  --objective NAME    the record tuned for time (default), energy or\n"
    "                      edp (tune --objective)\n"
    "  --json              print the record as JSON\n";

static void print_record(const cutune_cache_record *rec, cutune_match match,
                         int json)
{
    if (json) {
        json_t *ps = json_array();
        for (size_t d = 0; d < rec->n_problem_size; d++)
            json_array_append_new(ps, json_integer(rec->problem_size[d]));
        json_t *j = json_pack(
            "{s:s, s:s, s:b, s:o, s:o, s:s, s:o, s:f, s:f, s:I, s:s, s:I}",
            "problem", rec->problem_name, "match", cutune_match_str(match),
            "simulated", rec->device.simulated != 0, "device",
            cli_device_json(&rec->device), "problem_size", ps, "source_hash",
            rec->source_hash, "config",
            cli_config_json(rec->config, rec->n_config), "time_ms",
            rec->time_ms, "gbs", rec->gbs, "evaluations",
            (json_int_t)rec->evaluations, "strategy",
            rec->strategy ? rec->strategy : "", "timestamp",
            (json_int_t)rec->timestamp);
        /* Named where the record is not a time record without energy. */
        if (j && (rec->objective != CUTUNE_OBJECTIVE_TIME ||
                  isfinite(rec->energy_j))) {
            json_object_set_new(
                j, "objective",
                json_string(cutune_objective_str(rec->objective)));
            json_object_set_new(j, "energy_j",
                                isfinite(rec->energy_j)
                                    ? json_real(rec->energy_j)
                                    : json_null());
        }
        cli_print_json(j);
        return;
    }
    printf("%s on %s%s (%s match", rec->problem_name, rec->device.name,
           rec->device.simulated ? " [simulated]" : "",
           cutune_match_str(match));
    for (size_t d = 0; d < rec->n_problem_size; d++)
        printf("%s%lld", d ? "x" : ", tuned at size ", rec->problem_size[d]);
    printf(")\n  ");
    cli_print_config(rec->config, rec->n_config);
    printf("\n  %.4f ms", rec->time_ms);
    if (rec->gbs > 0)
        printf(", %.1f GB/s", rec->gbs);
    if (isfinite(rec->energy_j))
        printf(", %.6g J per launch", rec->energy_j);
    if (rec->objective != CUTUNE_OBJECTIVE_TIME)
        printf(" (tuned for %s)", cutune_objective_str(rec->objective));
    printf("\n");
}

int cli_cmd_lookup(int argc, char **argv)
{
    const char *problem = NULL, *cache_dir = NULL, *objective = NULL;
    cli_device_opts dopt = {-1, NULL, NULL, -1, 0, 0};
    cli_sizes size = {{0}, 0};
    int json = 0;
    const cli_opt opts[] = {{"--device", CLI_COUNT, &dopt.device},
                            {"--device-name", CLI_STRING, &dopt.name},
                            {"--cc", CLI_STRING, &dopt.cc},
                            {"--sm-count", CLI_COUNT, &dopt.sm_count},
                            {"--no-fallback", CLI_FLAG, &dopt.no_fallback},
                            {"--size", CLI_SIZES, &size},
                            {"--cache-dir", CLI_STRING, &cache_dir},
                            {"--json", CLI_FLAG, &json},
                            {"--objective", CLI_STRING, &objective},
                            {NULL, 0, NULL}};
    int rc;
    if (!cli_parse_problem(argc, argv, opts, usage, &problem, &rc))
        return rc;
    cutune_objective wanted;
    if ((rc = cli_parse_objective(objective, &wanted)))
        return rc;
    cutune_problem *p;
    if ((rc = cli_load_problem(problem, &size, &p)))
        return rc;
    long long dims[8];
    cutune_cache_query q;
    memset(&q, 0, sizeof q);
    cli_problem_query(p, dims, &q);
    q.objective = wanted;
    cutune_device fp;
    cutune_cache *c = NULL;
    if ((rc = cli_device_query(&dopt, &fp, &q)))
        goto out;
    const cutune_cache_record *rec = NULL;
    cutune_match match = CUTUNE_MATCH_NONE;
    cutune_status st = cutune_cache_open(cache_dir, &c);
    if (st == CUTUNE_OK)
        st = cutune_cache_lookup(c, &q, &rec, &match);
    cli_cache_warning(c);
    if (st == CUTUNE_ERR_NOT_FOUND && match == CUTUNE_MATCH_OCCUPANCY) {
        cli_print_error(cutune_cache_errmsg(c), st);
        if (json)
            cli_print_json(json_pack("{s:s, s:s, s:n}", "problem",
                                     q.problem_name, "match",
                                     cutune_match_str(match), "config"));
        else
            printf("%s: no record; use the occupancy suggestion\n",
                   q.problem_name);
        rc = CLI_EXIT_NOT_CACHED;
        goto out;
    }
    if (st) {
        cli_print_error(cutune_cache_errmsg(c), st);
        rc = st == CUTUNE_ERR_NOT_FOUND ? CLI_EXIT_NOT_CACHED
                                        : cli_exit_code(st);
        goto out;
    }
    print_record(rec, match, json);
    if (!rec->source_hash[0])
        fprintf(stderr, "cutune: note: this result was simulated from "
                        "recorded times without the kernel source, so it "
                        "cannot tell whether the source changed since\n");
    else if (strcmp(rec->source_hash, cutune_problem_source_hash(p)) != 0)
        fprintf(stderr, "cutune: warning: the kernel source changed since "
                        "this result was tuned\n");
out:
    cutune_cache_close(c);
    cutune_problem_destroy(p);
    return rc;
}
