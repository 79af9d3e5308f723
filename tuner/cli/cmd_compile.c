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
    "  --json              print the counts as JSON\n";

int cli_cmd_compile(int argc, char **argv)
{
    const char *problem = NULL, *arch = NULL;
    long long limit = 0, threads = 0;
    cli_sizes size = {{0}, 0};
    int json = 0, no_binaries = 0;
    const cli_opt opts[] = {{"--arch", CLI_STRING, &arch},
                            {"--limit", CLI_COUNT, &limit},
                            {"--threads", CLI_COUNT, &threads},
                            {"--no-binary-cache", CLI_FLAG, &no_binaries},
                            {"--size", CLI_SIZES, &size},
                            {"--json", CLI_FLAG, &json},
                            {NULL, 0, NULL}};
    int rc;
    if (!cli_parse_problem(argc, argv, opts, usage, &problem, &rc))
        return rc;
    if (!arch)
        return cli_usage_error("compile: --arch is required (e.g. --arch "
                               "sm_90)");
    if (strncmp(arch, "sm_", 3) != 0 && strncmp(arch, "compute_", 8) != 0)
        return cli_usage_error("--arch: '%s' is not an architecture such as "
                               "sm_90", arch);
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
        fprintf(stderr, "cutune: %s\n", cutune_session_errmsg(s));
        rc = cli_exit_code(st);
    } else if (json) {
        cli_print_json(json_pack("{s:s, s:s, s:I, s:I, s:f, s:f}", "problem",
                                 cutune_problem_name(p), "arch", arch,
                                 "compiled", (json_int_t)ok, "rejected",
                                 (json_int_t)bad, "seconds", secs,
                                 "per_second", (ok + bad) / secs));
    } else {
        printf("%s: compiled %zu configurations for %s in %.2f s "
               "(%.1f per second); %zu rejected by NVRTC\n",
               cutune_problem_name(p), ok, arch, secs, (ok + bad) / secs,
               bad);
    }
    if (rc == 0 && ok == 0 && bad > 0) {
        fprintf(stderr, "cutune: nothing compiled: NVRTC rejected all %zu "
                        "configurations of %s for %s (is --arch right?)\n",
                bad, cutune_problem_name(p), arch);
        rc = CLI_EXIT_NO_RESULT;
    }
    cutune_session_destroy(s);
    cutune_problem_destroy(p);
    return rc;
}
