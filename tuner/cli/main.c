/* cutune: the command line. It parses arguments, calls the public API and
 * prints what comes back; all logic lives in the library.
 *
 * Exit codes (documented in the README):
 *   0 success, 1 usage error, 2 bad input (problem file, template name,
 *   cache), 3 no CUDA device, 4 CUDA, NVRTC or worker failure,
 *   5 no cached result, 6 no configuration ran correctly. */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "cutune/cutune.h"

enum {
    EXIT_OK = 0,
    EXIT_USAGE = 1,
    EXIT_INPUT = 2,
    EXIT_NO_DEVICE = 3,
    EXIT_GPU = 4,
    EXIT_NOT_CACHED = 5,
    EXIT_NO_RESULT = 6
};

static int exit_code(cutune_status st)
{
    switch (st) {
    case CUTUNE_OK: return EXIT_OK;
    case CUTUNE_ERR_NO_DEVICE: return EXIT_NO_DEVICE;
    case CUTUNE_ERR_CUDA:
    case CUTUNE_ERR_NVRTC:
    case CUTUNE_ERR_WORKER:
    case CUTUNE_ERR_NO_MEMORY: return EXIT_GPU;
    case CUTUNE_ERR_INVALID_ARGUMENT: return EXIT_USAGE;
    case CUTUNE_ERR_NOT_FOUND: return EXIT_INPUT;
    case CUTUNE_ERR_NO_VALID_RESULT: return EXIT_NO_RESULT;
    default: return EXIT_INPUT;
    }
}

static const char usage_main[] =
    "usage: cutune COMMAND [ARGS]\n"
    "\n"
    "Finds the fastest launch configuration of a CUDA kernel template on\n"
    "this machine's GPU and remembers it per device.\n"
    "\n"
    "commands:\n"
    "  tune PROBLEM      tune on a GPU and cache the winner\n"
    "  lookup PROBLEM    print the cached winner for a device\n"
    "  compile PROBLEM   compile configurations with NVRTC (no GPU needed)\n"
    "  list              list the built-in kernel templates\n"
    "  devices           list the CUDA devices and their fingerprints\n"
    "\n"
    "PROBLEM is a built-in template name (see `cutune list`) or a T1 JSON\n"
    "file. `cutune COMMAND --help` describes each command.\n"
    "\n"
    "exit codes: 0 success, 1 usage error, 2 bad input, 3 no CUDA device,\n"
    "4 CUDA/NVRTC/worker failure, 5 nothing cached, 6 no configuration ran\n"
    "correctly\n";

static const char usage_tune[] =
    "usage: cutune tune PROBLEM [options]\n"
    "\n"
    "Tunes PROBLEM on a CUDA device, compares the winner with the occupancy\n"
    "API's suggestion and appends it to the device's tuning cache.\n"
    "\n"
    "options:\n"
    "  --device N          CUDA device ordinal (default 0)\n"
    "  --strategy NAME     local (default) or brute_force\n"
    "  --budget-evals N    evaluate at most N configurations (default 100;\n"
    "                      brute_force: all)\n"
    "  --budget-seconds S  stop starting new evaluations after S seconds\n"
    "  --seed N            seed of randomized strategies (default 1)\n"
    "  --size N[,N...]     problem size (replaces the T1 ProblemSize)\n"
    "  --cache-dir DIR     tuning cache (default $CUTUNE_CACHE_DIR or\n"
    "                      ~/.cache/cutune)\n"
    "  --no-cache          do not record the winner\n"
    "  --threads N         NVRTC compile threads (default: one per core)\n"
    "  --json              print the result as JSON\n"
    "  --quiet             no progress lines\n";

static const char usage_lookup[] =
    "usage: cutune lookup PROBLEM [options]\n"
    "\n"
    "Prints the cached winner of PROBLEM for a device: the exact problem\n"
    "size if it was tuned, else the nearest tuned size.\n"
    "\n"
    "options:\n"
    "  --device N          the CUDA device with this ordinal (default 0)\n"
    "  --device-name NAME  a device by name; needs no GPU\n"
    "  --size N[,N...]     problem size (default: the problem's own)\n"
    "  --cache-dir DIR     tuning cache\n"
    "  --json              print the record as JSON\n";

static const char usage_compile[] =
    "usage: cutune compile PROBLEM --arch sm_XY [options]\n"
    "\n"
    "Compiles configurations of PROBLEM with NVRTC for an architecture; no\n"
    "GPU is needed.\n"
    "\n"
    "options:\n"
    "  --arch sm_XY        target architecture (required)\n"
    "  --limit N           only the first N configurations\n"
    "  --threads N         compile threads (default: one per core)\n"
    "  --size N[,N...]     problem size\n"
    "  --json              print the counts as JSON\n";

static const char usage_list[] =
    "usage: cutune list [--json]\n"
    "\n"
    "Lists the built-in kernel templates and the size of their spaces.\n";

static const char usage_devices[] =
    "usage: cutune devices [--json]\n"
    "\n"
    "Lists the CUDA devices with the fingerprint their tuning results are\n"
    "cached under.\n";

/* ------------------------------------------------------------------ */
/* Argument parsing                                                    */

typedef struct args {
    const char *problem;
    int device;
    int device_given;
    const char *device_name;
    const char *strategy;
    const char *arch;
    const char *cache_dir;
    size_t budget_evals;
    double budget_seconds;
    unsigned long long seed;
    long long size[8];
    size_t n_size;
    size_t limit;
    int threads;
    int json;
    int quiet;
    int no_cache;
    int help;
} args;

static int usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("cutune: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputs(" (see --help)\n", stderr);
    va_end(ap);
    return EXIT_USAGE;
}

static int parse_count(const char *opt, const char *text,
                       unsigned long long *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(text, &end, 10);
    if (errno || end == text || *end || text[0] == '-')
        return usage_error("%s: '%s' is not a non-negative integer", opt,
                           text);
    *out = v;
    return 0;
}

static int parse_sizes(const char *text, args *a)
{
    a->n_size = 0;
    const char *p = text;
    while (*p) {
        char *end;
        errno = 0;
        long long v = strtoll(p, &end, 10);
        if (errno || end == p || v <= 0 || (*end && *end != ','))
            return usage_error("--size: '%s' is not a list of positive "
                               "integers", text);
        if (a->n_size == sizeof a->size / sizeof *a->size)
            return usage_error("--size: too many dimensions");
        a->size[a->n_size++] = v;
        p = *end ? end + 1 : end;
    }
    if (a->n_size == 0)
        return usage_error("--size: empty");
    return 0;
}

/* `allowed` lists the options this command takes, separated by spaces. */
static int parse_args(int argc, char **argv, const char *allowed,
                      int wants_problem, args *a)
{
    memset(a, 0, sizeof *a);
    a->seed = 1;
    for (int i = 0; i < argc; i++) {
        char *arg = argv[i];
        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            a->help = 1;
            return 0;
        }
        if (strncmp(arg, "--", 2) != 0) {
            if (!wants_problem || a->problem)
                return usage_error("unexpected argument '%s'", arg);
            a->problem = arg;
            continue;
        }
        char name[64];
        const char *value = NULL;
        const char *eq = strchr(arg, '=');
        size_t len = eq ? (size_t)(eq - arg) : strlen(arg);
        if (len >= sizeof name)
            return usage_error("unknown option '%s'", arg);
        memcpy(name, arg, len);
        name[len] = '\0';
        char needle[72];
        snprintf(needle, sizeof needle, " %s ", name);
        char hay[512];
        snprintf(hay, sizeof hay, " %s ", allowed);
        if (!strstr(hay, needle))
            return usage_error("unknown option '%s'", name);
        static const char *const flags[] = {"--json", "--quiet",
                                            "--no-cache", NULL};
        int is_flag = 0;
        for (int k = 0; flags[k]; k++)
            is_flag |= strcmp(name, flags[k]) == 0;
        if (!is_flag) {
            if (eq)
                value = eq + 1;
            else if (i + 1 < argc)
                value = argv[++i];
            else
                return usage_error("%s needs a value", name);
        } else if (eq) {
            return usage_error("%s takes no value", name);
        }
        unsigned long long n;
        if (strcmp(name, "--json") == 0) {
            a->json = 1;
        } else if (strcmp(name, "--quiet") == 0) {
            a->quiet = 1;
        } else if (strcmp(name, "--no-cache") == 0) {
            a->no_cache = 1;
        } else if (strcmp(name, "--device") == 0) {
            if (parse_count(name, value, &n) || n > 1024)
                return EXIT_USAGE;
            a->device = (int)n;
            a->device_given = 1;
        } else if (strcmp(name, "--device-name") == 0) {
            a->device_name = value;
        } else if (strcmp(name, "--strategy") == 0) {
            a->strategy = value;
        } else if (strcmp(name, "--arch") == 0) {
            a->arch = value;
        } else if (strcmp(name, "--cache-dir") == 0) {
            a->cache_dir = value;
        } else if (strcmp(name, "--budget-evals") == 0) {
            if (parse_count(name, value, &n))
                return EXIT_USAGE;
            if (n == 0)
                return usage_error("--budget-evals: must be at least 1");
            a->budget_evals = (size_t)n;
        } else if (strcmp(name, "--budget-seconds") == 0) {
            char *end;
            a->budget_seconds = strtod(value, &end);
            if (end == value || *end || !(a->budget_seconds > 0))
                return usage_error("--budget-seconds: '%s' is not a positive "
                                   "number", value);
        } else if (strcmp(name, "--seed") == 0) {
            if (parse_count(name, value, &a->seed))
                return EXIT_USAGE;
        } else if (strcmp(name, "--size") == 0) {
            if (parse_sizes(value, a))
                return EXIT_USAGE;
        } else if (strcmp(name, "--limit") == 0) {
            if (parse_count(name, value, &n))
                return EXIT_USAGE;
            a->limit = (size_t)n;
        } else if (strcmp(name, "--threads") == 0) {
            if (parse_count(name, value, &n) || n > 4096)
                return EXIT_USAGE;
            a->threads = (int)n;
        }
    }
    if (wants_problem && !a->problem)
        return usage_error("missing PROBLEM");
    return 0;
}

/* ------------------------------------------------------------------ */
/* Output helpers                                                      */

static void print_json(json_t *j)
{
    char *text = json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    if (text) {
        puts(text);
        free(text);
    }
    json_decref(j);
}

static json_t *config_json(const cutune_param_value *v, size_t n)
{
    json_t *o = json_object();
    for (size_t i = 0; v && i < n; i++)
        json_object_set_new(o, v[i].name, json_string(v[i].value));
    return o;
}

static void print_config(const cutune_param_value *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        printf("%s%s=%s", i ? " " : "", v[i].name, v[i].value);
}

static json_t *device_json(const cutune_device *d)
{
    char cc[16];
    snprintf(cc, sizeof cc, "%d.%d", d->cc_major, d->cc_minor);
    return json_pack("{s:s, s:s, s:s, s:i, s:I, s:I, s:i, s:s, s:s, s:b}",
                     "name", d->name, "uuid", d->uuid, "cc", cc, "sm_count",
                     d->sm_count, "l2_bytes", (json_int_t)d->l2_bytes,
                     "memory_bytes", (json_int_t)d->memory_bytes, "driver",
                     d->driver_version, "nvrtc", d->nvrtc_version, "cutune",
                     d->cutune_version, "simulated", d->simulated);
}

static int load_problem(const args *a, cutune_problem **p)
{
    cutune_problem_options po = {a->size, a->n_size};
    cutune_status st = cutune_problem_load(a->problem, &po, p);
    if (st) {
        fprintf(stderr, "cutune: %s\n", cutune_problem_errmsg(*p));
        cutune_problem_destroy(*p);
        *p = NULL;
        return exit_code(st);
    }
    return 0;
}

/* Progress: one line rewritten in place on a terminal, plain lines
 * otherwise. */
typedef struct progress {
    int tty;
    int quiet;
    int dirty;
} progress;

static void on_log(void *user, cutune_log_level level, const char *msg)
{
    progress *pr = user;
    if (level <= CUTUNE_LOG_WARN) {
        if (pr->dirty)
            fputs("\n", stderr);
        pr->dirty = 0;
        fprintf(stderr, "cutune: %s%s\n",
                level == CUTUNE_LOG_ERROR ? "error: " : "warning: ", msg);
        return;
    }
    if (pr->quiet || level > CUTUNE_LOG_INFO)
        return;
    if (pr->tty) {
        fprintf(stderr, "\r\033[K%.*s", 150, msg);
        pr->dirty = 1;
    } else {
        fprintf(stderr, "%s\n", msg);
    }
    fflush(stderr);
}

static void end_progress(progress *pr)
{
    if (pr->dirty)
        fputs("\r\033[K", stderr);
    pr->dirty = 0;
}

/* ------------------------------------------------------------------ */
/* Commands                                                            */

static int cmd_list(int argc, char **argv)
{
    args a;
    int rc = parse_args(argc, argv, "--json", 0, &a);
    if (rc || a.help) {
        if (a.help)
            fputs(usage_list, stdout);
        return rc;
    }
    json_t *arr = json_array();
    for (size_t i = 0; i < cutune_template_count(); i++) {
        const char *name = cutune_template_name(i);
        cutune_problem *p;
        cutune_status st = cutune_problem_load(name, NULL, &p);
        if (st) {
            fprintf(stderr, "cutune: %s\n", cutune_problem_errmsg(p));
            cutune_problem_destroy(p);
            json_decref(arr);
            return EXIT_INPUT;
        }
        if (a.json) {
            json_array_append_new(arr, json_pack(
                "{s:s, s:s, s:I, s:I}", "name", name, "kernel",
                cutune_problem_kernel_name(p), "parameters",
                (json_int_t)cutune_problem_param_count(p), "configurations",
                (json_int_t)cutune_problem_space_size(p)));
        } else {
            printf("%-12s %6zu configurations over", name,
                   cutune_problem_space_size(p));
            for (size_t k = 0; k < cutune_problem_param_count(p); k++)
                printf(" %s", cutune_problem_param_name(p, k));
            printf("\n");
        }
        cutune_problem_destroy(p);
    }
    if (a.json)
        print_json(arr);
    else
        json_decref(arr);
    return EXIT_OK;
}

static int cmd_devices(int argc, char **argv)
{
    args a;
    int rc = parse_args(argc, argv, "--json", 0, &a);
    if (rc || a.help) {
        if (a.help)
            fputs(usage_devices, stdout);
        return rc;
    }
    cutune_session *s;
    cutune_status st = cutune_session_create(NULL, &s);
    const cutune_device *devs = NULL;
    size_t n = 0;
    if (st == CUTUNE_OK)
        st = cutune_session_devices(s, &devs, &n);
    if (st) {
        fprintf(stderr, "cutune: %s\n", cutune_session_errmsg(s));
        cutune_session_destroy(s);
        return exit_code(st);
    }
    json_t *arr = json_array();
    for (size_t i = 0; i < n; i++) {
        const cutune_device *d = &devs[i];
        if (a.json) {
            json_array_append_new(arr, device_json(d));
            continue;
        }
        printf("%zu: %s\n   uuid %s, compute capability %d.%d, %d SMs, "
               "L2 %.1f MiB, memory %.1f GiB\n   driver %d, NVRTC %s, "
               "cutune %s\n",
               i, d->name, d->uuid, d->cc_major, d->cc_minor, d->sm_count,
               (double)d->l2_bytes / (1 << 20),
               (double)d->memory_bytes / (1 << 30), d->driver_version,
               d->nvrtc_version, d->cutune_version);
    }
    if (a.json)
        print_json(arr);
    else
        json_decref(arr);
    cutune_session_destroy(s);
    return EXIT_OK;
}

static int cmd_compile(int argc, char **argv)
{
    args a;
    int rc = parse_args(argc, argv, "--arch --limit --threads --size --json",
                        1, &a);
    if (rc || a.help) {
        if (a.help)
            fputs(usage_compile, stdout);
        return rc;
    }
    if (!a.arch)
        return usage_error("compile: --arch is required (e.g. --arch "
                           "sm_90)");
    if (strncmp(a.arch, "sm_", 3) != 0 && strncmp(a.arch, "compute_", 8) != 0)
        return usage_error("--arch: '%s' is not an architecture such as "
                           "sm_90", a.arch);
    cutune_problem *p;
    if ((rc = load_problem(&a, &p)))
        return rc;
    cutune_session_options o;
    cutune_session_options_init(&o);
    o.compile_threads = a.threads;
    cutune_session *s;
    size_t ok = 0, bad = 0;
    double secs = 0;
    cutune_status st = cutune_session_create(&o, &s);
    if (st == CUTUNE_OK)
        st = cutune_session_compile(s, p, a.arch, a.limit, &ok, &bad, &secs);
    if (st) {
        fprintf(stderr, "cutune: %s\n", cutune_session_errmsg(s));
        rc = exit_code(st);
    } else if (a.json) {
        print_json(json_pack("{s:s, s:s, s:I, s:I, s:f, s:f}", "problem",
                             cutune_problem_name(p), "arch", a.arch,
                             "compiled", (json_int_t)ok, "rejected",
                             (json_int_t)bad, "seconds", secs,
                             "per_second", (ok + bad) / secs));
    } else {
        printf("%s: compiled %zu configurations for %s in %.2f s "
               "(%.1f per second); %zu rejected by NVRTC\n",
               cutune_problem_name(p), ok, a.arch, secs, (ok + bad) / secs,
               bad);
    }
    cutune_session_destroy(s);
    cutune_problem_destroy(p);
    return rc;
}

static const char no_device_howto[] =
    "cutune: to tune, run on a machine with an NVIDIA GPU and driver (see "
    "\"Running on a GPU\" in the README)\n";

static int cmd_tune(int argc, char **argv)
{
    args a;
    int rc = parse_args(argc, argv,
                        "--device --strategy --budget-evals --budget-seconds "
                        "--seed --size --cache-dir --no-cache --threads "
                        "--json --quiet",
                        1, &a);
    if (rc || a.help) {
        if (a.help)
            fputs(usage_tune, stdout);
        return rc;
    }
    cutune_problem *p;
    if ((rc = load_problem(&a, &p)))
        return rc;
    progress pr = {isatty(STDERR_FILENO), a.quiet || a.json, 0};
    cutune_session_options o;
    cutune_session_options_init(&o);
    o.device = a.device;
    o.strategy = a.strategy;
    o.max_evals = a.budget_evals;
    o.max_seconds = a.budget_seconds;
    o.seed = a.seed;
    o.cache_dir = a.cache_dir;
    o.write_cache = !a.no_cache;
    o.compile_threads = a.threads;
    o.log = on_log;
    o.log_user = &pr;
    cutune_session *s;
    const cutune_tune_result *r = NULL;
    cutune_status st = cutune_session_create(&o, &s);
    if (st == CUTUNE_OK)
        st = cutune_session_tune(s, p, &r);
    end_progress(&pr);
    if (st) {
        fprintf(stderr, "cutune: %s\n", cutune_session_errmsg(s));
        if (st == CUTUNE_ERR_NO_DEVICE)
            fputs(no_device_howto, stderr);
        rc = exit_code(st);
        goto out;
    }
    if (a.json) {
        json_t *evals = json_array();
        for (size_t i = 0; i < r->n_evals; i++) {
            const cutune_eval *e = &r->evals[i];
            json_array_append_new(evals, json_pack(
                "{s:I, s:s, s:o, s:f}", "config_index",
                (json_int_t)e->config_index, "outcome",
                cutune_outcome_str(e->outcome), "time_ms",
                isnan(e->time_ms) ? json_null() : json_real(e->time_ms),
                "compile_ms", e->compile_ms));
        }
        print_json(json_pack(
            "{s:s, s:o, s:f, s:i, s:o, s:o, s:o, s:f, s:f, s:I, s:f, s:o, "
            "s:I, s:I, s:f, s:s, s:o}",
            "problem", cutune_problem_name(p), "device",
            device_json(&r->device), "memcpy_gbs", r->memcpy_gbs,
            "occupancy_block_size", r->occupancy_block_size, "baseline",
            config_json(r->baseline, r->n_params), "baseline_ms",
            isnan(r->baseline_ms) ? json_null() : json_real(r->baseline_ms),
            "best", config_json(r->best, r->n_params), "best_ms", r->best_ms,
            "best_min_ms", r->best_min_ms, "best_runs",
            (json_int_t)r->best_runs, "best_gbs", r->best_gbs, "speedup",
            isnan(r->speedup) ? json_null() : json_real(r->speedup),
            "evaluations", (json_int_t)r->evaluations, "failures",
            (json_int_t)r->failures, "wall_s", r->wall_s, "strategy",
            r->strategy, "evaluated", evals));
        goto out;
    }
    printf("%s", cutune_problem_name(p));
    for (size_t d = 0; d < cutune_problem_size_dims(p); d++)
        printf("%s%lld", d ? "x" : " (size ", cutune_problem_size(p, d));
    printf(") on %s (sm_%d%d)\n", r->device.name, r->device.cc_major,
           r->device.cc_minor);
    printf("  best:      ");
    print_config(r->best, r->n_params);
    printf("\n             %.4f ms (median of %zu runs, min %.4f ms)",
           r->best_ms, r->best_runs, r->best_min_ms);
    if (r->best_gbs > 0) {
        printf(", %.1f GB/s", r->best_gbs);
        if (r->memcpy_gbs > 0)
            printf(" (%.0f%% of device-to-device cudaMemcpy, %.1f GB/s)",
                   100.0 * r->best_gbs / r->memcpy_gbs, r->memcpy_gbs);
    }
    printf("\n  occupancy: ");
    print_config(r->baseline, r->n_params);
    printf("\n             (the occupancy API suggests %d threads per block)",
           r->occupancy_block_size);
    if (isnan(r->baseline_ms))
        printf(" failed\n");
    else
        printf(" %.4f ms\n", r->baseline_ms);
    if (!isnan(r->speedup))
        printf("  speedup:   %.2fx over the occupancy suggestion\n",
               r->speedup);
    printf("  evaluated: %zu configurations (%zu failed) with %s in %.1f s\n",
           r->evaluations, r->failures, r->strategy, r->wall_s);
out:
    cutune_session_destroy(s);
    cutune_problem_destroy(p);
    return rc;
}

static int cmd_lookup(int argc, char **argv)
{
    args a;
    int rc = parse_args(argc, argv,
                        "--device --device-name --size --cache-dir --json", 1,
                        &a);
    if (rc || a.help) {
        if (a.help)
            fputs(usage_lookup, stdout);
        return rc;
    }
    if (a.device_given && a.device_name)
        return usage_error("give --device or --device-name, not both");
    cutune_problem *p;
    if ((rc = load_problem(&a, &p)))
        return rc;
    cutune_session *s = NULL;
    cutune_cache *c = NULL;
    cutune_cache_query q;
    memset(&q, 0, sizeof q);
    q.problem_name = cutune_problem_name(p);
    long long size[8];
    q.n_problem_size = cutune_problem_size_dims(p);
    for (size_t d = 0; d < q.n_problem_size && d < 8; d++)
        size[d] = cutune_problem_size(p, d);
    q.problem_size = size;
    char uuid[64] = "";
    cutune_status st = CUTUNE_OK;
    if (a.device_name) {
        q.device_name = a.device_name;
    } else {
        /* The current device's fingerprint comes from a worker. */
        const cutune_device *devs = NULL;
        size_t n = 0;
        st = cutune_session_create(NULL, &s);
        if (st == CUTUNE_OK)
            st = cutune_session_devices(s, &devs, &n);
        if (st) {
            fprintf(stderr, "cutune: %s\n", cutune_session_errmsg(s));
            if (st == CUTUNE_ERR_NO_DEVICE)
                fputs("cutune: without a GPU, name the device with "
                      "--device-name\n", stderr);
            rc = exit_code(st);
            goto out;
        }
        if ((size_t)a.device >= n) {
            fprintf(stderr, "cutune: device %d does not exist (%zu found)\n",
                    a.device, n);
            rc = EXIT_USAGE;
            goto out;
        }
        snprintf(uuid, sizeof uuid, "%s", devs[a.device].uuid);
        q.device_uuid = uuid;
    }
    const cutune_cache_record *rec = NULL;
    cutune_match match = CUTUNE_MATCH_NONE;
    st = cutune_cache_open(a.cache_dir, &c);
    if (st == CUTUNE_OK)
        st = cutune_cache_lookup(c, &q, &rec, &match);
    if (st == CUTUNE_ERR_NOT_FOUND) {
        fprintf(stderr, "cutune: %s\n", cutune_cache_errmsg(c));
        rc = EXIT_NOT_CACHED;
        goto out;
    }
    if (st) {
        fprintf(stderr, "cutune: %s\n", cutune_cache_errmsg(c));
        rc = exit_code(st);
        goto out;
    }
    if (a.json) {
        json_t *ps = json_array();
        for (size_t d = 0; d < rec->n_problem_size; d++)
            json_array_append_new(ps, json_integer(rec->problem_size[d]));
        print_json(json_pack(
            "{s:s, s:s, s:o, s:o, s:s, s:o, s:f, s:f, s:I, s:s, s:I}",
            "problem", rec->problem_name, "match", cutune_match_str(match),
            "device", device_json(&rec->device), "problem_size", ps,
            "source_hash", rec->source_hash, "config",
            config_json(rec->config, rec->n_config), "time_ms", rec->time_ms,
            "gbs", rec->gbs, "evaluations", (json_int_t)rec->evaluations,
            "strategy", rec->strategy ? rec->strategy : "", "timestamp",
            (json_int_t)rec->timestamp));
        goto out;
    }
    printf("%s on %s (%s match", rec->problem_name, rec->device.name,
           cutune_match_str(match));
    for (size_t d = 0; d < rec->n_problem_size; d++)
        printf("%s%lld", d ? "x" : ", tuned at size ", rec->problem_size[d]);
    printf(")\n  ");
    print_config(rec->config, rec->n_config);
    printf("\n  %.4f ms", rec->time_ms);
    if (rec->gbs > 0)
        printf(", %.1f GB/s", rec->gbs);
    printf("\n");
    if (strcmp(rec->source_hash, cutune_problem_source_hash(p)) != 0)
        fprintf(stderr, "cutune: warning: the kernel source changed since "
                        "this result was tuned\n");
out:
    cutune_cache_close(c);
    cutune_session_destroy(s);
    cutune_problem_destroy(p);
    return rc;
}

int main(int argc, char **argv)
{
    static const struct {
        const char *name;
        int (*run)(int, char **);
    } commands[] = {{"tune", cmd_tune},       {"lookup", cmd_lookup},
                    {"compile", cmd_compile}, {"list", cmd_list},
                    {"devices", cmd_devices}};
    if (argc < 2) {
        fputs(usage_main, stderr);
        return EXIT_USAGE;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
        strcmp(argv[1], "help") == 0) {
        fputs(usage_main, stdout);
        return EXIT_OK;
    }
    if (strcmp(argv[1], "--version") == 0) {
        printf("cutune %s\n", CUTUNE_VERSION_STRING);
        return EXIT_OK;
    }
    for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
        if (strcmp(argv[1], commands[i].name) == 0)
            return commands[i].run(argc - 2, argv + 2);
    fprintf(stderr, "cutune: unknown command '%s' (see cutune --help)\n",
            argv[1]);
    return EXIT_USAGE;
}
