#define _DEFAULT_SOURCE /* flock */

#include "measure_log.h"

#include <assert.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "expr/none.h"
#include "util.h"

#define LOG_VERSION 1

struct cutune__measure_log {
    char *path;
    int fd;
    cutune__measured *records;
    size_t n, cap;
    size_t skipped;
    /* Open addressing over `records`, by config text; CUTUNE__NONE: empty. */
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
    /* The mask needs a power of two, and the probe an empty slot: the
     * index is built once every record is in (build_index). */
    assert(log->n_slots >= 2 * log->n &&
           (log->n_slots & (log->n_slots - 1)) == 0);
    size_t mask = log->n_slots - 1;
    size_t i = (size_t)text_hash(config) & mask;
    while (log->slots[i] != CUTUNE__NONE &&
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
        log->slots[i] = CUTUNE__NONE;
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

/* One line into *m. Returns 0, -1 when the line is not a whole record of
 * this version, or -2 when memory ran out (so the line may be good). */
static int parse_line(const char *line, size_t len, cutune__measured *m)
{
    memset(m, 0, sizeof *m);
    json_error_t jerr;
    json_t *o = json_loadb(line, len, 0, &jerr);
    if (!json_is_object(o)) {
        json_decref(o);
        return !o && json_error_code(&jerr) == json_error_out_of_memory ? -2
                                                                        : -1;
    }
    int rc = -1;
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
    if (!m->config || !m->message || !m->runtimes) {
        rc = -2;
        goto bad;
    }
    for (size_t i = 0; i < m->runs; i++) {
        const json_t *v = json_array_get(rt, i);
        if (!json_is_number(v))
            goto bad;
        m->runtimes[i] = json_number_value(v);
    }
    m->time_ms = get_number(o, "time_ms", NAN);
    /* A correct result's time is a time: positive and finite. */
    if (m->outcome == CUTUNE_OUTCOME_CORRECT &&
        (!isfinite(m->time_ms) || !(m->time_ms > 0) || m->runs == 0))
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
    m->energy_j = get_number(o, "energy_j", NAN);
    m->power_w = get_number(o, "power_w", NAN);
    m->energy_rsd = get_number(o, "energy_rsd", NAN);
    json_decref(o);
    return 0;
bad:
    json_decref(o);
    measured_clear(m);
    return rc;
}

/* Appends *m to the log's records (which take its parts). Returns 0, or
 * -1 when memory ran out (m cleared). */
static int push_record(cutune__measure_log *log, cutune__measured *m)
{
    if (log->n == log->cap) {
        size_t cap2 = log->cap ? 2 * log->cap : 64;
        cutune__measured *r = realloc(log->records, cap2 * sizeof *r);
        if (!r) {
            measured_clear(m);
            return -1;
        }
        log->records = r;
        log->cap = cap2;
    }
    log->records[log->n++] = *m;
    return 0;
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
        int rc = parse_line(line, (size_t)len - 1, &m);
        if (rc == -2) {
            free(line);
            return -1;
        }
        if (rc != 0) {
            log->skipped++;
            continue;
        }
        if (push_record(log, &m) != 0) {
            free(line);
            return -1;
        }
    }
    free(line);
    return 0;
}

/* ------------------------------------------------------------------ */
/* Compaction                                                          */

/* PATH.size: the log's size after its last compaction. */
static char *size_path(const char *path)
{
    return cutune__strdup_printf("%s.size", path);
}

static long long recorded_size(const char *path)
{
    char *sp = size_path(path);
    FILE *f = sp ? fopen(sp, "r") : NULL;
    long long v = 0;
    if (f && fscanf(f, "%lld", &v) != 1)
        v = 0;
    if (f)
        fclose(f);
    free(sp);
    return v;
}

/* Written to a temporary file and renamed, like the log itself. */
static void record_size(const char *path, long long size)
{
    char *sp = size_path(path);
    char *tmp = sp ? cutune__strdup_printf("%s.XXXXXX", sp) : NULL;
    cutune__atomic_file f;
    if (tmp && cutune__atomic_file_open(&f, tmp, 0) == 0) {
        char text[32];
        int n = snprintf(text, sizeof text, "%lld\n", size);
        cutune__atomic_file_write(&f, text, (size_t)n);
        cutune__atomic_file_commit(&f, sp, 0);
    }
    free(tmp);
    free(sp);
}

typedef struct log_line {
    size_t at, len; /* in the file, the newline included */
    int keep;       /* the last record of its configuration */
} log_line;

/* Reads the lines of buf into `lines` and, for each that load() would
 * take, its configuration into idx's records; then marks the lines that
 * idx's index (the last record of each configuration, as for a lookup)
 * points at, and sets *kept_out to how many. Returns 0, or -1 when memory
 * ran out: then nothing may be dropped, since a line that could not be
 * read might have been a configuration's last record. */
static int mark_last(const char *buf, size_t size, log_line **lines_out,
                     size_t *n_out, cutune__measure_log *idx, size_t *kept_out)
{
    log_line *lines = NULL;
    size_t n = 0, cap = 0, *line_of = NULL, kept = 0;
    int oom = 0;
    for (size_t at = 0; !oom && at < size;) {
        const char *nl = memchr(buf + at, '\n', size - at);
        /* A last line without its newline is torn: dropped. */
        size_t len = nl ? (size_t)(nl - (buf + at)) + 1 : size - at;
        if (n == cap) {
            cap = cap ? 2 * cap : 256;
            log_line *l = realloc(lines, cap * sizeof *l);
            size_t *o = realloc(line_of, cap * sizeof *o);
            if (l)
                lines = l;
            if (o)
                line_of = o;
            if (!l || !o) {
                oom = 1;
                break;
            }
        }
        lines[n] = (log_line){at, len, 0};
        cutune__measured m;
        int rc = nl ? parse_line(buf + at, len - 1, &m) : -1;
        if (rc == 0) {
            /* Only the text is needed to find the last of each. */
            char *config = m.config;
            m.config = NULL;
            measured_clear(&m);
            m.config = config;
            line_of[idx->n] = n;
            oom = push_record(idx, &m) != 0;
        }
        oom |= rc == -2;
        n++;
        at += len;
    }
    if (!oom && build_index(idx) != 0)
        oom = 1;
    for (size_t j = 0; !oom && j < idx->n_slots; j++)
        if (idx->slots[j] != CUTUNE__NONE) {
            lines[line_of[idx->slots[j]]].keep = 1;
            kept++;
        }
    free(line_of);
    *lines_out = lines;
    *n_out = n;
    *kept_out = kept;
    return oom ? -1 : 0;
}

/* Reads the whole of fd; NULL when it could not. */
static char *read_all(int fd, size_t *size)
{
    struct stat st;
    if (fstat(fd, &st) != 0)
        return NULL;
    size_t cap = (size_t)st.st_size + 1, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        ssize_t r = pread(fd, buf + n, cap - n, (off_t)n);
        if (r < 0) {
            free(buf);
            return NULL;
        }
        if (r == 0)
            break;
        n += (size_t)r;
        if (n == cap) {
            char *b = realloc(buf, cap * 2);
            if (!b)
                free(buf);
            buf = b;
            cap *= 2;
        }
    }
    *size = n;
    return buf;
}

/* Removes what a compaction killed before its rename left beside `path`:
 * files named PATH.XXXXXX or PATH.size.XXXXXX (mkstemp's six characters)
 * untouched for an hour, so never one a compaction is writing now. */
static void remove_leftovers(const char *path)
{
    const char *slash = strrchr(path, '/');
    char *dir = slash ? strndup(path, (size_t)(slash - path)) : strdup(".");
    const char *base = slash ? slash + 1 : path;
    size_t blen = strlen(base);
    DIR *d = dir ? opendir(dir) : NULL;
    time_t now = time(NULL);
    for (struct dirent *de; d && (de = readdir(d));) {
        const char *n = de->d_name;
        if (strncmp(n, base, blen) != 0 || n[blen] != '.')
            continue;
        const char *rest = n + blen + 1;
        if (strncmp(rest, "size.", 5) == 0)
            rest += 5;
        if (strlen(rest) != 6 || strchr(rest, '.'))
            continue;
        char *full = cutune__strdup_printf("%s/%s", dir, n);
        struct stat st;
        if (full && stat(full, &st) == 0 && S_ISREG(st.st_mode) &&
            now - st.st_mtime > 3600)
            unlink(full);
        free(full);
    }
    if (d)
        closedir(d);
    free(dir);
}

/* Writes the kept lines to a new file beside `path` and renames it over
 * `path`. Returns its size, or -1. */
static long long rewrite(const char *path, const struct stat *was,
                         const char *buf, const log_line *lines, size_t n)
{
    char *tmp = cutune__strdup_printf("%s.XXXXXX", path);
    cutune__atomic_file f;
    if (!tmp || cutune__atomic_file_open(&f, tmp, 0) != 0) {
        free(tmp);
        return -1;
    }
    long long total = 0;
    /* The old file's mode and owner (a shared cache may be group
     * writable); the owner only where this user may give it. */
    int ok = fchmod(f.fd, was->st_mode & 07777) == 0;
    if (fchown(f.fd, was->st_uid, was->st_gid) != 0) {
        /* Not permitted for another user's file: this user owns it now. */
    }
    for (size_t i = 0; ok && i < n; i++) {
        if (!lines[i].keep)
            continue;
        ok = cutune__atomic_file_write(&f, buf + lines[i].at, lines[i].len) ==
             0;
        total += (long long)lines[i].len;
    }
    if (!ok)
        cutune__atomic_file_abort(&f);
    if (!ok || cutune__atomic_file_commit(&f, path, 1) != 0)
        total = -1;
    free(tmp);
    return total;
}

int cutune__measure_log_compact(const char *path, long long min_bytes,
                                size_t *dropped, char *err, size_t errlen)
{
    *dropped = 0;
    /* Writable: an exclusive lock on NFS (fcntl locks underneath) needs
     * it, and a log this user cannot write is not this user's to rewrite. */
    int fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT || errno == EACCES || errno == EROFS)
            return 0;
        snprintf(err, errlen, "cannot open %s: %s", path, strerror(errno));
        return -1;
    }
    struct stat st, now;
    long long last = recorded_size(path);
    if (last < 0 || last > LLONG_MAX / 2)
        last = 0;
    if (fstat(fd, &st) != 0 || st.st_size <= min_bytes ||
        st.st_size <= 2 * last) {
        close(fd);
        return 0;
    }
    /* Appends wait while this holds the lock; an append under way (or one
     * stopped mid-write) makes this compaction wait for the next tune
     * rather than hold up this one's start. Another compaction may have
     * replaced the file since it was opened: then nothing to do. */
    if (flock(fd, LOCK_EX | LOCK_NB) != 0 || stat(path, &now) != 0 ||
        now.st_ino != st.st_ino || now.st_dev != st.st_dev) {
        close(fd);
        return 0;
    }
    remove_leftovers(path);
    size_t size = 0, n = 0;
    char *buf = read_all(fd, &size);
    log_line *lines = NULL;
    cutune__measure_log idx;
    memset(&idx, 0, sizeof idx);
    size_t kept = 0;
    int rc = 0;
    if (!buf || mark_last(buf, size, &lines, &n, &idx, &kept) != 0) {
        rc = -1;
        snprintf(err, errlen, "compacting %s: out of memory", path);
    } else if (2 * kept > n) {
        /* Mostly distinct configurations: not worth a rewrite; looked at
         * again once the file has doubled. */
        record_size(path, (long long)size);
    } else {
        long long written = rewrite(path, &st, buf, lines, n);
        if (written < 0) {
            rc = -1;
            snprintf(err, errlen, "compacting %s: %s", path, strerror(errno));
        } else {
            record_size(path, written);
            *dropped = n - kept;
        }
    }
    for (size_t i = 0; i < idx.n; i++)
        measured_clear(&idx.records[i]);
    free(idx.records);
    free(idx.slots);
    free(lines);
    free(buf);
    close(fd);
    return rc;
}

cutune__measure_log *cutune__measure_log_open(const char *path, int load_it,
                                              char *err, size_t errlen)
{
    cutune__measure_log *log = calloc(1, sizeof *log);
    char *dir = strdup(path);
    if (!log || !dir || !(log->path = strdup(path))) {
        if (log)
            free(log->path);
        free(log);
        free(dir);
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    log->fd = -1;
    char *slash = strrchr(dir, '/');
    if (slash && slash != dir) {
        *slash = '\0';
        if (cutune__make_dirs(dir, NULL) != 0) {
            snprintf(err, errlen, "cannot create %s: %s", dir,
                     strerror(errno));
            free(dir);
            free(log->path);
            free(log);
            return NULL;
        }
    }
    free(dir);
    /* A failed compaction leaves the log as it was: still usable. */
    size_t dropped;
    char cerr[256];
    cutune__measure_log_compact(path, CUTUNE__MEASURE_LOG_COMPACT_BYTES,
                                &dropped, cerr, sizeof cerr);
    log->fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (log->fd < 0) {
        snprintf(err, errlen, "cannot open %s: %s", path, strerror(errno));
        free(log->path);
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
    free(log->path);
    for (size_t i = 0; i < log->n; i++)
        measured_clear(&log->records[i]);
    free(log->records);
    free(log->slots);
    free(log);
}

const cutune__measured *
cutune__measure_log_find(const cutune__measure_log *log, const char *config)
{
    if (!log || !log->n)
        return NULL;
    size_t r = log->slots[slot_of(log, config)];
    return r == CUTUNE__NONE ? NULL : &log->records[r];
}

size_t cutune__measure_log_position(const cutune__measure_log *log,
                                    const cutune__measured *m)
{
    return (size_t)(m - log->records);
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

/* Makes log->fd the file the path names now, holding the shared lock that
 * keeps a compaction out while a line is written: a file compacted while
 * this log was open was renamed away, so the path is opened again.
 * Returns 1 when locked, 0 when the file system gives no lock (the line
 * is written unlocked, as before there was compaction), or -1 when the
 * file the path names could not be opened (the line would be lost in the
 * old one). */
static int lock_current(cutune__measure_log *log)
{
    for (int tries = 0; tries < 16; tries++) {
        int locked = flock(log->fd, LOCK_SH) == 0;
        struct stat a, b;
        if (fstat(log->fd, &a) == 0 && stat(log->path, &b) == 0 &&
            a.st_ino == b.st_ino && a.st_dev == b.st_dev)
            return locked;
        int fd =
            open(log->path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
        if (locked)
            flock(log->fd, LOCK_UN);
        if (fd < 0)
            return -1;
        close(log->fd);
        log->fd = fd;
    }
    return -1;
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
    json_t *o =
        rt ? json_pack(
                 "{s:i, s:s, s:o, s:o, s:s, s:o, s:o, s:o, s:o, s:o, s:o, "
                 "s:o, s:o,"
                 " s:b, s:i, s:i, s:o, s:s, s:o, s:I}",
                 "v", LOG_VERSION, "config", m->config, "grid", dims(m->grid),
                 "block", dims(m->block), "outcome",
                 cutune_outcome_str(m->outcome), "time_ms", number(m->time_ms),
                 "min_ms", number(m->min_ms), "stddev_ms",
                 number(m->stddev_ms), "ci_lo_ms", number(m->ci_lo_ms),
                 "ci_hi_ms", number(m->ci_hi_ms), "gpu_ms", number(m->gpu_ms),
                 "compile_ms", number(m->compile_ms), "framework_ms",
                 number(m->framework_ms), "stopped_early", m->stopped_early,
                 "sm_clock_mhz", m->sm_clock_mhz, "temperature_c",
                 m->temperature_c, "timestamp", number(m->timestamp),
                 "message", m->message ? m->message : "", "runtimes", rt,
                 "final_runs", (json_int_t)m->final_runs)
           : NULL;
    /* Only where measured, so that a time tune's lines stay as they
     * were. */
    const struct {
        const char *key;
        double v;
    } energy[] = {{"energy_j", m->energy_j},
                  {"power_w", m->power_w},
                  {"energy_rsd", m->energy_rsd}};
    int measured = m->energy_j > 0 && isfinite(m->energy_j);
    for (size_t k = 0; o && measured && k < sizeof energy / sizeof *energy;
         k++)
        if (isfinite(energy[k].v) &&
            json_object_set_new(o, energy[k].key, json_real(energy[k].v))) {
            json_decref(o);
            o = NULL;
        }
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
    int locked = lock_current(log);
    ssize_t w = locked >= 0 ? write(log->fd, line, len + 1) : -1;
    if (locked > 0)
        flock(log->fd, LOCK_UN);
    free(line);
    return w == (ssize_t)(len + 1) ? 0 : -1;
}
