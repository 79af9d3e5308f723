/* cutune report: one self-contained HTML page about a tune's results or a
 * tuning cache; and the end of `tune --report`, which writes the same page
 * from the tune's own T4 file. */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "cutune/report.h"

static const char usage[] =
    "usage: cutune report PROBLEM --results T4.json[.gz] --output FILE.html\n"
    "       cutune report --cache DIR --output FILE.html\n"
    "\n"
    "Writes one self-contained HTML page (inline SVG and CSS, no scripts,\n"
    "nothing fetched): for recorded results, convergence against\n"
    "evaluations and seconds with random search's expected curve, time\n"
    "against threads per block, the effect of each tunable, the top\n"
    "configurations and the failures by kind; for a tuning cache, per\n"
    "problem a grid of devices by problem sizes with each winner and its\n"
    "speed-up over the occupancy suggestion. Needs no GPU. When PROBLEM's\n"
    "kernel is not at hand, only its space is read.\n"
    "\n"
    "options:\n"
    "  --results FILE      T4 results, plain or gzip JSON (from tune "
    "--output\n"
    "                      or another tuner)\n"
    "  --cache DIR         report a tuning cache instead of results\n"
    "  -o, --output FILE   the page to write (required)\n"
    "  --size N[,N...]     problem size (replaces the T1 ProblemSize)\n"
    "  --title TEXT        the page's title\n"
    "  --max-points N      points per plot (default 5000)\n"
    "  --top N             rows of the top-configurations table (default "
    "20)\n";

/* The whole problem when it loads, else its space alone (a recorded T1
 * file whose kernel file is elsewhere), saying so. */
static int load_problem(const char *name, const cli_sizes *size,
                        cutune_problem **p)
{
    cutune_problem_options po;
    cutune_problem_options_init(&po);
    po.problem_size = size->n ? size->v : NULL;
    po.n_problem_size = size->n;
    *p = NULL;
    int rc = cli_space_limit(&po.max_space_visits);
    if (rc)
        return rc;
    if (cutune_problem_load(name, &po, p) == CUTUNE_OK) {
        cli_print_warnings(name, *p);
        return 0;
    }
    fprintf(stderr,
            "cutune: note: %s; reading only its space (no LocalSize, "
            "bytes or FLOPs)\n",
            cutune_problem_errmsg(*p));
    cutune_problem_destroy(*p);
    po.space_only = 1;
    cutune_status st = cutune_problem_load(name, &po, p);
    if (st) {
        cli_print_error(cutune_problem_errmsg(*p), st);
        cutune_problem_destroy(*p);
        *p = NULL;
        return cli_exit_code(st) == CLI_EXIT_USAGE ? CLI_EXIT_USAGE
                                                   : CLI_EXIT_INPUT;
    }
    return 0;
}

/* Writes the page; `announce` prints where (not after a tune, whose
 * standard output may be JSON). */
static int finish(cutune_report *rep, cutune_status st, const char *output,
                  int announce)
{
    if (st == CUTUNE_OK)
        st = cutune_report_write(rep, output);
    if (st) {
        cli_print_error(cutune_report_errmsg(rep), st);
        cutune_report_destroy(rep);
        return cli_exit_code(st);
    }
    if (announce && strcmp(output, "-") != 0)
        printf("wrote %s\n", output);
    cutune_report_destroy(rep);
    return CLI_EXIT_OK;
}

static int write_report(const cutune_problem *p,
                        const cutune_report_options *o, const char *output,
                        int announce)
{
    cutune_report *rep = NULL;
    cutune_status st = cutune_report_create(p, o, &rep);
    return finish(rep, st, output, announce);
}

int cli_tune_report(cutune_session *s, const cutune_problem *p,
                    const cutune_tune_result *r, const char *t4_path,
                    const char *output)
{
    char tmp[4096] = "";
    if (!t4_path) {
        const char *dir = getenv("TMPDIR");
        snprintf(tmp, sizeof tmp, "%s/cutune-report-XXXXXX",
                 dir && *dir ? dir : "/tmp");
        int fd = mkstemp(tmp);
        if (fd < 0) {
            perror("cutune: report: temporary file");
            return CLI_EXIT_INPUT;
        }
        close(fd);
        cutune_status st = cutune_session_write_t4(s, tmp);
        if (st) {
            cli_print_error(cutune_session_errmsg(s), st);
            unlink(tmp);
            return cli_exit_code(st);
        }
        t4_path = tmp;
    }
    cutune_report_options o;
    cutune_report_options_init(&o);
    o.results_path = t4_path;
    if (r) {
        o.device_name = r->device.name;
        o.strategy = r->strategy;
        o.occupancy_block_size = r->occupancy_block_size;
        o.baseline = r->baseline;
        o.n_baseline = r->n_params;
        o.winner = r->best;
        o.n_winner = r->n_params;
        o.winner_ms = r->best_ms;
    }
    int rc = write_report(p, &o, output, 0);
    if (*tmp)
        unlink(tmp);
    return rc;
}

static int report_cache(const char *dir, const cutune_report_options *o,
                        const char *output)
{
    cutune_cache *c = NULL;
    cutune_status st = cutune_cache_open(dir, &c);
    if (st) {
        cli_print_error(cutune_cache_errmsg(c), st);
        cutune_cache_close(c);
        return cli_exit_code(st);
    }
    cutune_report *rep = NULL;
    st = cutune_report_create_cache(c, o, &rep);
    cli_cache_warning(c);
    int rc = finish(rep, st, output, 1);
    cutune_cache_close(c);
    return rc;
}

int cli_cmd_report(int argc, char **argv)
{
    const char *results = NULL, *cache = NULL, *output = NULL, *title = NULL;
    const char *out_short = NULL;
    long long max_points = 0, top = 0;
    cli_sizes size = {{0}, 0};
    const cli_opt opts[] = {{"--results", CLI_STRING, &results},
                            {"--cache", CLI_STRING, &cache},
                            {"--output", CLI_STRING, &output},
                            {"-o", CLI_STRING, &out_short},
                            {"--size", CLI_SIZES, &size},
                            {"--title", CLI_STRING, &title},
                            {"--max-points", CLI_COUNT, &max_points},
                            {"--top", CLI_COUNT, &top},
                            {NULL, 0, NULL}};
    const char *problem = NULL;
    size_t n_pos = 0;
    int help = 0;
    if (cli_parse(argc, argv, opts, &problem, 1, &n_pos, &help))
        return CLI_EXIT_USAGE;
    if (help) {
        fputs(usage, stdout);
        return CLI_EXIT_OK;
    }
    if (!output)
        output = out_short;
    if (!output)
        return cli_usage_error("missing --output");
    if (!cache == !results)
        return cli_usage_error("give either PROBLEM --results FILE or "
                               "--cache DIR");
    if (results && !n_pos)
        return cli_usage_error("missing PROBLEM");
    if (cache && n_pos)
        return cli_usage_error("--cache takes no PROBLEM");
    int rc = cli_check_output("--output", output);
    if (rc)
        return rc;
    cutune_report_options o;
    cutune_report_options_init(&o);
    o.title = title;
    o.max_points = (size_t)max_points;
    o.top = (size_t)top;
    if (cache)
        return report_cache(cache, &o, output);
    cutune_problem *p = NULL;
    rc = load_problem(problem, &size, &p);
    if (rc)
        return rc;
    o.results_path = results;
    cli_progress warnings = {0};
    o.log = cli_on_log;
    o.log_user = &warnings;
    rc = write_report(p, &o, output, 1);
    cutune_problem_destroy(p);
    return rc;
}
