/* cutune compile: NVRTC compilation without a GPU. */
#include <stdio.h>
#include <string.h>

#include "cli.h"

static const char usage[] =
    "usage: cutune compile PROBLEM --arch sm_XY [options]\n"
    "\n"
    "Compiles configurations of PROBLEM with NVRTC for an architecture; no\n"
    "GPU is needed. Exits 6 when NVRTC rejects every configuration.\n"
    "\n"
    "options:\n"
    "  --arch sm_XY        target architecture (required)\n"
    "  --limit N           only the first N configurations\n"
    "  --threads N         compile threads (default: one per core)\n"
    "  --no-binary-cache   compile everything; skip the on-disk binaries\n"
    "  --size N[,N...]     problem size\n"
    "  --json              print the counts as JSON\n"
    "  --verbose           show NVRTC's log of the rejected configurations,\n"
    "                      once per group of alike logs, with the values\n"
    "                      the group's configurations share\n";

/* "2 rejected: all with TILE=8 and SHMEM=1:" and the log, indented. */
static void print_rejected(const cutune_session *s)
{
    for (size_t i = 0; i < cutune_session_rejected_group_count(s); i++) {
        const cutune_rejected_group *g = cutune_session_rejected_group(s, i);
        printf("\n%zu rejected", g->count);
        if (g->n_shared == 0)
            printf(", with no value in common");
        else
            printf(": %s", g->count > 1 ? "all with " : "");
        for (size_t k = 0; k < g->n_shared; k++)
            printf("%s%s=%s",
                   k == 0                ? ""
                   : k + 1 < g->n_shared ? ", "
                                         : " and ",
                   g->shared[k].name, g->shared[k].value);
        printf(":\n");
        for (const char *l = g->log; *l;) {
            size_t n = strcspn(l, "\n");
            printf("%s%.*s\n", n ? "    " : "", (int)n, l);
            l += n + (l[n] == '\n');
        }
    }
}

static json_t *rejected_json(const cutune_session *s)
{
    json_t *a = json_array();
    for (size_t i = 0; i < cutune_session_rejected_group_count(s); i++) {
        const cutune_rejected_group *g = cutune_session_rejected_group(s, i);
        json_array_append_new(
            a, json_pack("{s:I, s:o, s:s}", "count", (json_int_t)g->count,
                         "shared", cli_config_json(g->shared, g->n_shared),
                         "log", g->log));
    }
    return a;
}

int cli_cmd_compile(int argc, char **argv)
{
    const char *problem = NULL, *arch = NULL;
    long long limit = 0, threads = 0;
    cli_sizes size = {{0}, 0};
    int json = 0, no_binaries = 0, verbose = 0;
    const cli_opt opts[] = {{"--arch", CLI_STRING, &arch},
                            {"--limit", CLI_COUNT, &limit},
                            {"--threads", CLI_COUNT, &threads},
                            {"--no-binary-cache", CLI_FLAG, &no_binaries},
                            {"--size", CLI_SIZES, &size},
                            {"--json", CLI_FLAG, &json},
                            {"--verbose", CLI_FLAG, &verbose},
                            {NULL, 0, NULL}};
    int rc;
    if (!cli_parse_problem(argc, argv, opts, usage, &problem, &rc))
        return rc;
    if (!arch)
        return cli_usage_error("compile: --arch is required (e.g. --arch "
                               "sm_90)");
    if (strncmp(arch, "sm_", 3) != 0 && strncmp(arch, "compute_", 8) != 0)
        return cli_usage_error("--arch: '%s' is not an architecture such as "
                               "sm_90",
                               arch);
    if (threads > 4096)
        return cli_usage_error("--threads: at most 4096");
    cutune_problem *p;
    if ((rc = cli_load_problem(problem, &size, &p)))
        return rc;
    cutune_session_options o;
    cutune_session_options_init(&o);
    o.compile_threads = (int)threads;
    o.no_binary_cache = no_binaries;
    cutune_session *s;
    size_t ok = 0, bad = 0;
    double secs = 0;
    cutune_status st = cutune_session_create(&o, &s);
    if (st == CUTUNE_OK)
        st = cutune_session_compile(s, p, arch, (size_t)limit, &ok, &bad,
                                    &secs);
    if (st) {
        cli_print_error(cutune_session_errmsg(s), st);
        rc = cli_exit_code(st);
    } else if (json) {
        json_t *j =
            json_pack("{s:s, s:s, s:I, s:I, s:f, s:f}", "problem",
                      cutune_problem_name(p), "arch", arch, "compiled",
                      (json_int_t)ok, "rejected", (json_int_t)bad, "seconds",
                      secs, "per_second", (ok + bad) / secs);
        if (verbose)
            json_object_set_new(j, "rejected_groups", rejected_json(s));
        cli_print_json(j);
    } else {
        printf("%s: compiled %zu configurations for %s in %.2f s "
               "(%.1f per second); %zu rejected by NVRTC%s\n",
               cutune_problem_name(p), ok, arch, secs, (ok + bad) / secs, bad,
               bad && !verbose ? " (--verbose shows why)" : "");
        if (verbose)
            print_rejected(s);
    }
    if (rc == 0 && ok == 0 && bad > 0) {
        fprintf(stderr,
                "cutune: nothing compiled: NVRTC rejected all %zu "
                "configurations of %s for %s (is --arch right?)\n",
                bad, cutune_problem_name(p), arch);
        rc = CLI_EXIT_NO_RESULT;
    }
    cutune_session_destroy(s);
    cutune_problem_destroy(p);
    return rc;
}
