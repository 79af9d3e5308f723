/* Shared pieces of the `cutune` command: exit codes, option parsing and
 * output helpers. Each command lives in its own cmd_*.c file and is listed
 * in main.c's table. */
#ifndef CUTUNE_CLI_H
#define CUTUNE_CLI_H

#include <stddef.h>

#include <jansson.h>

#include "cutune/cutune.h"

/* Exit codes, documented in the README and in `cutune --help`. */
enum {
    CLI_EXIT_OK = 0,
    CLI_EXIT_USAGE = 1,
    CLI_EXIT_INPUT = 2,
    CLI_EXIT_NO_DEVICE = 3,
    CLI_EXIT_GPU = 4,
    CLI_EXIT_NOT_CACHED = 5,
    CLI_EXIT_NO_RESULT = 6,
    /* `explain`: the report printed, but without counters because... */
    CLI_EXIT_COUNTERS_REFUSED = 7, /* the GPU or its setup refused them */
    CLI_EXIT_NO_CUPTI = 8,         /* CUPTI was not found */
    CLI_EXIT_COUNTERS_FAILED = 9,  /* another CUPTI error */
    /* `tune`: the result printed (and --output written), but the cache
     * did not take it; `tune --plan`: the cache cannot be written. */
    CLI_EXIT_CACHE = 10
};

int cli_exit_code(cutune_status st);

typedef enum cli_opt_kind {
    CLI_FLAG,   /* int: set to 1 */
    CLI_STRING, /* const char *: borrowed from argv */
    CLI_COUNT,  /* long long: a non-negative integer */
    CLI_NUMBER, /* double: a positive number */
    CLI_SIZES   /* cli_sizes: N[,N...] of positive integers */
} cli_opt_kind;

typedef struct cli_sizes {
    long long v[8];
    size_t n;
} cli_sizes;

typedef struct cli_opt {
    const char *name; /* "--device" */
    cli_opt_kind kind;
    void *dest;
} cli_opt;

/* Parses argv against `opts` (terminated by a NULL name). Arguments that
 * are not options fill `positional` (up to max_positional). Sets *help
 * on --help/-h and stops. Returns 0 or CLI_EXIT_USAGE after printing why. */
int cli_parse(int argc, char **argv, const cli_opt *opts,
              const char **positional, size_t max_positional,
              size_t *n_positional, int *help);

/* cli_parse for a command that takes one PROBLEM: prints `usage` on
 * --help and refuses a missing PROBLEM. Returns 1 when the command goes
 * on; 0 when it ends now with exit code *rc. */
int cli_parse_problem(int argc, char **argv, const cli_opt *opts,
                      const char *usage, const char **problem, int *rc);

/* "cutune: MSG" on stderr: the library's message of a failure `st`, or
 * the status's text where the message is empty. */
void cli_print_error(const char *msg, cutune_status st);

/* Prints "cutune: MESSAGE (see --help)" and returns CLI_EXIT_USAGE. */
int cli_usage_error(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));

/* --objective NAME into *out (NULL: time). 0, or CLI_EXIT_USAGE after
 * printing the value and the objectives there are. */
int cli_parse_objective(const char *text, cutune_objective *out);

/* Checks an output path given to `option` (cutune_output_path_check)
 * before the command does work that a bad path would waste. 0 when `path` is
 * NULL or can be written; else CLI_EXIT_INPUT after printing
 * "cutune: OPTION: cannot write PATH: REASON". */
int cli_check_output(const char *option, const char *path);

/* Loads PROBLEM with an optional --size; prints the reason and returns an
 * exit code on failure. */
/* CUTUNE_SPACE_LIMIT from the environment into *limit: the partial
 * configurations building a space may check; 0 (the default) when unset.
 * Else 0, or CLI_EXIT_USAGE after printing why the value is refused. */
int cli_space_limit(unsigned long long *limit);
/* Prints the problem's load warnings, one line each, to stderr. */
void cli_print_warnings(const char *name, const cutune_problem *p);
int cli_load_problem(const char *name, const cli_sizes *size,
                     cutune_problem **p);

/* Loads PROBLEM as cli_load_problem, for its space only when `space_only`
 * (replayed devices need no kernel). */
int cli_load_problem_as(const char *name, const cli_sizes *size,
                        int space_only, cutune_problem **p);

/* --devices all|N[,N...] (devices_opt.c). */
#define CLI_MAX_DEVICES 64
#define CLI_MAX_ORDINAL 1024
typedef struct cli_devices {
    int all;
    int v[CLI_MAX_DEVICES];
    size_t n;
} cli_devices;
/* 0, or CLI_EXIT_USAGE after printing which entry is not an ordinal. */
int cli_parse_devices(const char *text, cli_devices *out);
/* Replayed devices from CUTUNE_DEVICE_BACKEND=replay:FILE[,FILE...],
 * CUTUNE_REPLAY_TIME_SCALE and CUTUNE_REPLAY_FAIL into `o` (the strings
 * borrowed from the environment). 0, or an exit code after printing. */
int cli_replay_env(cutune_session_options *o);
/* The devices of `d` (all: every device listed) and the model of each. */
typedef struct cli_device_groups_t {
    int ordinal[CLI_MAX_DEVICES];
    size_t group[CLI_MAX_DEVICES];
    size_t n, n_groups;
} cli_device_groups_t;
/* 0, or an exit code after printing the session's message (a device that
 * does not exist, no device at all). */
int cli_device_groups(const cutune_session_options *o, const cli_devices *d,
                      cli_device_groups_t *g);
/* The ordinals of model `group` into out; returns how many. */
size_t cli_group_members(const cli_device_groups_t *g, size_t group, int *out);

/* Prints `j` indented and releases it. */
void cli_print_json(json_t *j);
json_t *cli_config_json(const cutune_param_value *v, size_t n);
json_t *cli_device_json(const cutune_device *d);
void cli_print_config(const cutune_param_value *v, size_t n);

/* Progress (progress.c): on a terminal one line, fitted to its width and
 * rewritten in place, from the library's progress callback (count, best,
 * speedup, last, ETA, then the configuration without the parameters that
 * have one value); plain lines otherwise, and with --verbose; warnings and
 * errors always. For cutune_session_options.log and .progress. */
typedef struct cli_progress {
    int tty;
    int quiet;
    int verbose; /* show debug lines too, one per line */
    int dirty;   /* a line is drawn that the next one replaces */
    const cutune_problem *problem; /* whose single-valued parameters the
                                      configuration text leaves out */
} cli_progress;

void cli_progress_init(cli_progress *pr, int quiet);
void cli_on_log(void *user, cutune_log_level level, const char *msg);
/* Sets o's log and, on a terminal without --verbose, its progress
 * callback, both to `pr` (which must outlive the session). */
void cli_progress_attach(cli_progress *pr, const cutune_problem *p,
                         cutune_session_options *o);
/* The progress text of `g` into buf (len bytes), at most `columns`
 * columns wide; `dot` separates its parts. */
void cli_progress_format(const cli_progress *pr, const cutune_progress *g,
                         const char *dot, size_t columns, char *buf,
                         size_t len);
void cli_progress_end(cli_progress *pr);

/* The device options of the cache commands (cache_opts.c). */
typedef struct cli_device_opts {
    long long device;   /* --device N; -1 when not given */
    const char *name;   /* --device-name NAME */
    const char *cc;     /* --cc X.Y, with --device-name */
    long long sm_count; /* --sm-count N, with --device-name; -1 */
    int no_fallback;    /* --no-fallback */
    int one_line;       /* no GPU: the reason alone, without the hint
                           about --device-name (explain has none) */
} cli_device_opts;

/* Fills the problem part of `q`: its name, its size (held in `dims`) and
 * the check that a record still fits the problem's space. */
void cli_problem_query(const cutune_problem *p, long long dims[8],
                       cutune_cache_query *q);

/* Fills the device part of `q` (and *fp for --device, from a worker; with
 * neither option, device 0). Strings in `q` point into `o` or `fp`.
 * Returns 0 or an exit code after printing why. */
int cli_device_query(const cli_device_opts *o, cutune_device *fp,
                     cutune_cache_query *q);
/* Prints cutune_cache_warning() as a warning when there is one. */
void cli_cache_warning(const cutune_cache *cache);

/* The commands. */
int cli_cmd_tune(int argc, char **argv);
/* `tune --plan`, called by cli_cmd_tune (cmd_plan.c). */
int cli_cmd_plan(int argc, char **argv);
int cli_cmd_lookup(int argc, char **argv);
int cli_cmd_merge(int argc, char **argv);
int cli_cmd_export(int argc, char **argv);
int cli_cmd_check(int argc, char **argv);
int cli_cmd_compile(int argc, char **argv);
int cli_cmd_list(int argc, char **argv);
int cli_cmd_devices(int argc, char **argv);
int cli_cmd_space(int argc, char **argv);
int cli_cmd_simulate(int argc, char **argv);
int cli_cmd_report(int argc, char **argv);
int cli_cmd_explain(int argc, char **argv);
int cli_cmd_import(int argc, char **argv);

/* The report of `tune --report` (cmd_report.c): from `t4_path`, or from a
 * temporary T4 file the session writes when it is NULL; `r` may be NULL
 * (a tune with no valid result). Returns an exit code. */
int cli_tune_report(cutune_session *s, const cutune_problem *p,
                    const cutune_tune_result *r, const char *t4_path,
                    const char *output);

#endif
