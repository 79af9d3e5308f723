/* cutune explain: why the winner is fast, in hardware counters. */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cutune/explain.h"

static const char usage[] =
    "usage: cutune explain PROBLEM [options]\n"
    "\n"
    "Times and then profiles, with the GPU's hardware counters (CUPTI), the\n"
    "cached winner of PROBLEM for this device (or the --config given), the\n"
    "occupancy API's suggestion and the default configuration, and prints\n"
    "them side by side with the bottleneck each one's figures point to and\n"
    "the winner's headroom to the memory or compute roof (docs/explain.md).\n"
    "\n"
    "options:\n"
    "  --config K=V[,K=V]  explain this configuration instead of the cached\n"
    "                      winner (parameters not named keep their default)\n"
    "  --device N          the CUDA device with this ordinal (default 0)\n"
    "  --size N[,N...]     problem size (default: the problem's own)\n"
    "  --cache-dir DIR     tuning cache to take the winner from\n"
    "  --output FILE       also write the configurations as T4 results, the\n"
    "                      counters as extra measurements (for `cutune\n"
    "                      report --results FILE`)\n"
    "  --json              print the explanation as JSON\n"
    "  --measure-energy    also measure each configuration's power (W) and\n"
    "                      energy per launch (J) through NVML, as a tune "
    "does\n"
    "\n"
    "exit codes: 0 counters read; 7 counters refused (no permission, a\n"
    "virtual GPU or other setup that does not allow profiling); 8 CUPTI not\n"
    "found; 9 another CUPTI error. With 7-9 the times and static figures\n"
    "are still printed. 3 no CUDA device.\n";

/* "K=V,K=V" into pairs pointing into `text`, which is modified. */
static int parse_config(char *text, cutune_param_value *out, size_t cap,
                        size_t *n)
{
    *n = 0;
    for (char *tok = strtok(text, ","); tok; tok = strtok(NULL, ",")) {
        char *eq = strchr(tok, '=');
        if (!eq || eq == tok || !eq[1])
            return cli_usage_error("--config: '%s' is not NAME=VALUE", tok);
        if (*n == cap)
            return cli_usage_error("--config: more than %zu parameters", cap);
        *eq = '\0';
        out[*n].name = tok;
        out[*n].value = eq + 1;
        (*n)++;
    }
    if (*n == 0)
        return cli_usage_error("--config: no NAME=VALUE given");
    return 0;
}

static int exit_for(cutune_counters c)
{
    switch (c) {
    case CUTUNE_COUNTERS_READ:
    case CUTUNE_COUNTERS_NOT_RUN: return CLI_EXIT_OK;
    case CUTUNE_COUNTERS_REFUSED:
    case CUTUNE_COUNTERS_UNSUPPORTED: return CLI_EXIT_COUNTERS_REFUSED;
    case CUTUNE_COUNTERS_NO_CUPTI: return CLI_EXIT_NO_CUPTI;
    case CUTUNE_COUNTERS_FAILED: return CLI_EXIT_COUNTERS_FAILED;
    }
    return CLI_EXIT_COUNTERS_FAILED;
}

/* The cached winner for the device, or NULL with `note` saying why not.
 * The record stays owned by `*cache`. */
static const cutune_cache_record *
find_winner(const cutune_problem *p, long long device, const char *cache_dir,
            cutune_cache **cache, char *note, size_t len, int *rc)
{
    cli_device_opts dopt = {device, NULL, NULL, -1, 0, 1};
    long long dims[8];
    cutune_cache_query q;
    memset(&q, 0, sizeof q);
    cli_problem_query(p, dims, &q);
    cutune_device fp;
    if ((*rc = cli_device_query(&dopt, &fp, &q)))
        return NULL;
    const cutune_cache_record *rec = NULL;
    cutune_match match = CUTUNE_MATCH_NONE;
    if (cutune_cache_open(cache_dir, cache) != CUTUNE_OK ||
        cutune_cache_lookup(*cache, &q, &rec, &match) != CUTUNE_OK || !rec) {
        snprintf(note, len,
                 "no cached winner of %s for %s (run `cutune "
                 "tune` first, or give --config); the occupancy suggestion "
                 "and the default are explained",
                 q.problem_name, fp.name);
        return NULL;
    }
    if (match != CUTUNE_MATCH_EXACT)
        snprintf(note, len,
                 "the winner is the cache's %s match, not a "
                 "tune of this device at this size",
                 cutune_match_str(match));
    return rec;
}

int cli_cmd_explain(int argc, char **argv)
{
    const char *problem = NULL, *cache_dir = NULL, *config = NULL;
    const char *output = NULL;
    long long device = 0;
    cli_sizes size = {{0}, 0};
    int json = 0, measure_energy = 0;
    const cli_opt opts[] = {{"--config", CLI_STRING, &config},
                            {"--device", CLI_COUNT, &device},
                            {"--size", CLI_SIZES, &size},
                            {"--cache-dir", CLI_STRING, &cache_dir},
                            {"--output", CLI_STRING, &output},
                            {"--json", CLI_FLAG, &json},
                            {"--measure-energy", CLI_FLAG, &measure_energy},
                            {NULL, 0, NULL}};
    int rc;
    if (!cli_parse_problem(argc, argv, opts, usage, &problem, &rc))
        return rc;
    if (device > 1024)
        return cli_usage_error("--device: out of range");
    if ((rc = cli_check_output("--output", output)))
        return rc;
    cutune_param_value given[64];
    size_t n_given = 0;
    char *config_text = config ? strdup(config) : NULL;
    if (config && (!config_text ||
                   (rc = parse_config(config_text, given, 64, &n_given)))) {
        free(config_text);
        return config_text ? rc : CLI_EXIT_GPU;
    }
    cutune_problem *p;
    if ((rc = cli_load_problem(problem, &size, &p))) {
        free(config_text);
        return rc;
    }
    cutune_cache *cache = NULL;
    char note[512] = "";
    const cutune_param_value *pick = config ? given : NULL;
    size_t n_pick = n_given;
    if (!config) {
        const cutune_cache_record *rec =
            find_winner(p, device, cache_dir, &cache, note, sizeof note, &rc);
        if (rec) {
            pick = rec->config;
            n_pick = rec->n_config;
        }
    }
    cutune_session *s = NULL;
    cutune_explain *x = NULL;
    cutune_session_options o;
    cutune_session_options_init(&o);
    o.device = (int)device;
    o.cache_dir = cache_dir;
    o.write_cache = 0;
    o.measure_energy = measure_energy;
    cutune_status st = CUTUNE_OK;
    if (rc == 0 && (st = cutune_session_create(&o, &s)) == CUTUNE_OK)
        st = cutune_session_explain(s, p, pick, n_pick,
                                    config ? "given" : "winner", note, &x);
    if (rc == 0 && st) {
        cli_print_error(cutune_session_errmsg(s), st);
        rc = cli_exit_code(st);
    } else if (rc == 0) {
        const char *why = NULL;
        cutune_counters c = cutune_explain_counters(x, &why);
        char *out = json ? cutune_explain_json(x) : cutune_explain_text(x);
        if (out)
            fputs(out, stdout);
        if (json && out)
            fputc('\n', stdout);
        free(out);
        /* The text says why in its own line; JSON in its "why". */
        if (json && c != CUTUNE_COUNTERS_READ && c != CUTUNE_COUNTERS_NOT_RUN)
            fprintf(stderr, "cutune: counters not read: %s\n", why);
        rc = out ? exit_for(c) : CLI_EXIT_GPU;
        if (output && (st = cutune_session_write_t4(s, output))) {
            cli_print_error(cutune_session_errmsg(s), st);
            rc = cli_exit_code(st);
        }
    }
    cutune_explain_destroy(x);
    cutune_session_destroy(s);
    cutune_cache_close(cache);
    cutune_problem_destroy(p);
    free(config_text);
    return rc;
}
