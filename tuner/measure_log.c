#define _POSIX_C_SOURCE 200809L

#include "measure_log.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util.h"

#define LOG_VERSION 1

struct cutune__measure_log {
    int fd;
    cutune__measured *records;
    size_t n, cap;
    size_t skipped;
    /* Open addressing over `records`, by config text; SIZE_MAX empty. */
    size_t *slots;
    size_t n_slots;
};

static void measured_clear(cutune__measured *m)
{
    free(m->config);
    free(m->message);
    free(m->runtimes);
    memset(m, 0, sizeof *m);
}

static uint64_t text_hash(const char *s)
{
    return cutune__fnv1a64(s, strlen(s));
}

/* Index of the slot holding `config`, or of the empty slot where it goes. */
static size_t slot_of(const cutune__measure_log *log, const char *config)
{
    size_t mask = log->n_slots - 1;
    size_t i = (size_t)text_hash(config) & mask;
    while (log->slots[i] != SIZE_MAX &&
           strcmp(log->records[log->slots[i]].config, config) != 0)
        i = (i + 1) & mask;
    return i;
}

static int build_index(cutune__measure_log *log)
{
    size_t n_slots = 16;
    while (n_slots < 2 * log->n)
        n_slots *= 2;
    log->slots = malloc(n_slots * sizeof *log->slots);
    if (!log->slots)
        return -1;
    log->n_slots = n_slots;
    for (size_t i = 0; i < n_slots; i++)
        log->slots[i] = SIZE_MAX;
    /* Later lines replace earlier ones of the same configuration. */
    for (size_t r = 0; r < log->n; r++)
        log->slots[slot_of(log, log->records[r].config)] = r;
    return 0;
}

static double get_number(const json_t *o, const char *key, double dflt)
{
    const json_t *v = json_object_get(o, key);
    return json_is_number(v) ? json_number_value(v) : dflt;
}

static int get_dims(const json_t *o, const char *key, unsigned out[3])
{
    const json_t *a = json_object_get(o, key);
    if (!json_is_array(a) || json_array_size(a) != 3)
        return -1;
    for (size_t i = 0; i < 3; i++) {
        const json_t *v = json_array_get(a, i);
        if (!json_is_integer(v) || json_integer_value(v) < 0 ||
            json_integer_value(v) > UINT32_MAX)
            return -1;
        out[i] = (unsigned)json_integer_value(v);
    }
    return 0;
}

static int parse_outcome(const char *s, cutune_outcome *out)
{
    for (int o = CUTUNE_OUTCOME_CORRECT; o <= CUTUNE_OUTCOME_RESOURCES; o++)
        if (strcmp(cutune_outcome_str((cutune_outcome)o), s) == 0) {
            *out = (cutune_outcome)o;
            return 0;
        }
    return -1;
}

/* One line into *m. Returns 0, or -1 when the line is not a whole record
 * of this version. */
static int parse_line(const char *line, size_t len, cutune__measured *m)
{
    memset(m, 0, sizeof *m);
    json_t *o = json_loadb(line, len, 0, NULL);
    if (!json_is_object(o)) {
        json_decref(o);
        return -1;
    }
    const char *config = json_string_value(json_object_get(o, "config"));
    const char *outcome = json_string_value(json_object_get(o, "outcome"));
    const json_t *rt = json_object_get(o, "runtimes");
    if (get_number(o, "v", 0) != LOG_VERSION || !config || !outcome ||
        parse_outcome(outcome, &m->outcome) != 0 ||
        get_dims(o, "grid", m->grid) != 0 ||
        get_dims(o, "block", m->block) != 0 || !json_is_array(rt))
        goto bad;
    m->config = strdup(config);
    const char *msg = json_string_value(json_object_get(o, "message"));
    m->message = strdup(msg ? msg : "");
    m->runs = json_array_size(rt);
    m->runtimes = malloc((m->runs ? m->runs : 1) * sizeof *m->runtimes);
    if (!m->config || !m->message || !m->runtimes)
        goto bad;
    for (size_t i = 0; i < m->runs; i++) {
        const json_t *v = json_array_get(rt, i);
        if (!json_is_number(v))
            goto bad;
        m->runtimes[i] = json_number_value(v);
    }
    m->time_ms = get_number(o, "time_ms", NAN);
    if (m->outcome == CUTUNE_OUTCOME_CORRECT &&
        (!isfinite(m->time_ms) || m->runs == 0))
        goto bad;
    m->min_ms = get_number(o, "min_ms", NAN);
    m->stddev_ms = get_number(o, "stddev_ms", 0.0);
    m->ci_lo_ms = get_number(o, "ci_lo_ms", NAN);
    m->ci_hi_ms = get_number(o, "ci_hi_ms", NAN);
    m->gpu_ms = get_number(o, "gpu_ms", 0.0);
    m->compile_ms = get_number(o, "compile_ms", 0.0);
    m->framework_ms = get_number(o, "framework_ms", 0.0);
    m->stopped_early = json_is_true(json_object_get(o, "stopped_early"));
    m->sm_clock_mhz = (int)get_number(o, "sm_clock_mhz", -1);
    m->temperature_c = (int)get_number(o, "temperature_c", -1);
    m->timestamp = get_number(o, "timestamp", 0.0);
    double final_runs = get_number(o, "final_runs", 0.0);
    if (!(final_runs >= 0 && final_runs <= (double)m->runs))
        goto bad;
    m->final_runs = (size_t)final_runs;
    json_decref(o);
    return 0;
bad:
    json_decref(o);
    measured_clear(m);
    return -1;
}

static int load(cutune__measure_log *log, FILE *f)
{
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    while ((len = getline(&line, &cap, f)) > 0) {
        /* A line without its newline was cut off by a writer. */
        if (line[len - 1] != '\n') {
            log->skipped++;
            break;
        }
        cutune__measured m;
        if (parse_line(line, (size_t)len - 1, &m) != 0) {
            log->skipped++;
            continue;
        }
        if (log->n == log->cap) {
            size_t cap2 = log->cap ? 2 * log->cap : 64;
            cutune__measured *r = realloc(log->records, cap2 * sizeof *r);
            if (!r) {
                measured_clear(&m);
                free(line);
                return -1;
            }
            log->records = r;
            log->cap = cap2;
        }
        log->records[log->n++] = m;
    }
    free(line);
    return 0;
}

cutune__measure_log *cutune__measure_log_open(const char *path, int load_it,
                                              char *err, size_t errlen)
{
    cutune__measure_log *log = calloc(1, sizeof *log);
    char *dir = strdup(path);
    if (!log || !dir) {
        free(log);
        free(dir);
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    log->fd = -1;
    char *slash = strrchr(dir, '/');
    if (slash && slash != dir) {
        *slash = '\0';
        if (cutune__make_dirs(dir) != 0) {
            snprintf(err, errlen, "cannot create %s: %s", dir,
                     strerror(errno));
            free(dir);
            free(log);
            return NULL;
        }
    }
    free(dir);
    log->fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (log->fd < 0) {
        snprintf(err, errlen, "cannot open %s: %s", path, strerror(errno));
        free(log);
        return NULL;
    }
    if (load_it) {
        FILE *f = fopen(path, "r");
        if (!f || load(log, f) != 0) {
            snprintf(err, errlen, "cannot read %s: %s", path,
                     f ? "out of memory" : strerror(errno));
            if (f)
                fclose(f);
            cutune__measure_log_close(log);
            return NULL;
        }
        fclose(f);
    }
    if (build_index(log) != 0) {
        snprintf(err, errlen, "out of memory");
        cutune__measure_log_close(log);
        return NULL;
    }
    return log;
}

void cutune__measure_log_close(cutune__measure_log *log)
{
    if (!log)
        return;
    if (log->fd >= 0)
        close(log->fd);
    for (size_t i = 0; i < log->n; i++)
        measured_clear(&log->records[i]);
    free(log->records);
    free(log->slots);
    free(log);
}

const cutune__measured *cutune__measure_log_find(
    const cutune__measure_log *log, const char *config)
{
    if (!log || !log->n)
        return NULL;
    size_t r = log->slots[slot_of(log, config)];
    return r == SIZE_MAX ? NULL : &log->records[r];
}

size_t cutune__measure_log_count(const cutune__measure_log *log)
{
    return log ? log->n : 0;
}

size_t cutune__measure_log_skipped(const cutune__measure_log *log)
{
    return log ? log->skipped : 0;
}

/* A number, or null where JSON has none (NaN, infinities). */
static json_t *number(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

static json_t *dims(const unsigned d[3])
{
    return json_pack("[I,I,I]", (json_int_t)d[0], (json_int_t)d[1],
                     (json_int_t)d[2]);
}

int cutune__measure_log_append(cutune__measure_log *log,
                               const cutune__measured *m)
{
    if (!log || log->fd < 0 || !m->config)
        return -1;
    json_t *rt = json_array();
    for (size_t i = 0; rt && i < m->runs; i++)
        if (json_array_append_new(rt, json_real(m->runtimes[i])) != 0) {
            json_decref(rt);
            rt = NULL;
        }
    json_t *o = rt ? json_pack(
        "{s:i, s:s, s:o, s:o, s:s, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o,"
        " s:b, s:i, s:i, s:o, s:s, s:o, s:I}",
        "v", LOG_VERSION, "config", m->config, "grid", dims(m->grid),
        "block", dims(m->block), "outcome", cutune_outcome_str(m->outcome),
        "time_ms", number(m->time_ms), "min_ms", number(m->min_ms),
        "stddev_ms", number(m->stddev_ms), "ci_lo_ms", number(m->ci_lo_ms),
        "ci_hi_ms", number(m->ci_hi_ms), "gpu_ms", number(m->gpu_ms),
        "compile_ms", number(m->compile_ms), "framework_ms",
        number(m->framework_ms), "stopped_early", m->stopped_early,
        "sm_clock_mhz", m->sm_clock_mhz, "temperature_c", m->temperature_c,
        "timestamp", number(m->timestamp), "message",
        m->message ? m->message : "", "runtimes", rt, "final_runs",
        (json_int_t)m->final_runs) : NULL;
    if (!o)
        return -1;
    char *text = json_dumps(o, JSON_COMPACT);
    json_decref(o);
    if (!text)
        return -1;
    size_t len = strlen(text);
    char *line = realloc(text, len + 2);
    if (!line) {
        free(text);
        return -1;
    }
    line[len] = '\n';
    line[len + 1] = '\0';
    /* One write of the whole line: O_APPEND places it after every line
     * already there, whoever wrote them. */
    ssize_t w = write(log->fd, line, len + 1);
    free(line);
    return w == (ssize_t)(len + 1) ? 0 : -1;
}
