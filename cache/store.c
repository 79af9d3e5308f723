/* The per-device tuning cache: one append-only JSON-lines file per device.
 *
 * Directory. The one given to cutune_cache_open(), else $CUTUNE_CACHE_DIR,
 * else $HOME/.cache/cutune. The first append creates it (mode 0755, parents
 * included).
 *
 * Files. A device's records go to
 *
 *     [sim-]<name>-<id>.jsonl      e.g. nvidia-h100-80gb-hbm3-1a2b3c4d.jsonl
 *
 * <name> is the device name in lowercase with every run of characters other
 * than ASCII letters and digits turned into one '-' (none at either end), at
 * most 64 characters, "unknown" when empty. <id> is the first 8 hex digits
 * of the UUID after its "GPU-" prefix; when the UUID is empty (or has fewer
 * than 8 hex digits) it is the FNV-1a 32-bit hash of the name (or of the
 * UUID) as 8 hex digits. "sim-" marks records made by `cutune simulate`.
 * Readers take the device from each record, never from the file name, and
 * read every *.jsonl file of the directory (except dot files), so files may
 * be renamed or merged freely.
 *
 * Lines. Each line is one self-contained record: a JSON object on a single
 * line ending in '\n', keys in this order (wrapped here):
 *
 *   {"cutune_cache":1,
 *    "device":{"name":"NVIDIA H100 80GB HBM3","uuid":"GPU-1a2b3c4d-...",
 *              "cc":"9.0","sm_count":132,"l2_bytes":52428800,
 *              "memory_bytes":85021163520,"driver":13000,"nvrtc":"13.0",
 *              "cutune":"0.1.0","simulated":false},
 *    "problem":{"name":"vector_add","source_hash":"9f86d081884c7d65",
 *               "problem_size":[1048576],"compiler_options":"-O3"},
 *    "config":{"block_size_x":"256","tile":"4"},
 *    "stats":{"time_ms":0.0123,"time_min_ms":0.0119,
 *             "time_stddev_ms":0.0002,"runs":50,"gbs":1021.5},
 *    "baseline":{"config":{"block_size_x":"1024","tile":"1"},
 *                "time_ms":0.0151},
 *    "strategy":"random","evaluations":120,"tune_seconds":42.5,
 *    "timestamp":"2026-11-22T10:00:00Z"}
 *
 * - "cutune_cache" is the format version. Readers take only versions they
 *   know (1) and refuse the others: such lines are skipped, counted apart
 *   (cutune_cache_version_skipped()) and named in cutune_cache_warning(),
 *   so a newer (or an unknown older) format is never misread and never
 *   silently ignored. A change that older readers would misread takes a
 *   new version number; adding fields does not.
 * - "device" is the fingerprint: what a result is valid for. "cutune" is
 *   the version of the cutune that tuned, "simulated" marks records of
 *   `cutune simulate` (their files start with "sim-").
 * - "config" (and "baseline"."config") maps parameter names to values as
 *   text in the problem's parameter order. JSON objects are unordered in
 *   principle, but the readers that matter keep file order (jansson >= 2.8,
 *   Python dicts) and an object reads better than a list of pairs. Names are
 *   non-empty and unique.
 * - Units: milliseconds, bytes, GB/s, seconds. Reals are written with 17
 *   significant digits, so they read back bit for bit. gbs is 0 when
 *   unknown. driver is cudaDriverGetVersion()'s number.
 * - "timestamp" is UTC, exactly "YYYY-MM-DDTHH:MM:SSZ".
 * - Every field shown is required. Unknown fields are ignored, so a writer
 *   of version 1 may add fields without breaking older readers.
 *
 * Because every line stands alone, caches from several machines merge by
 * concatenating files.
 *
 * Concurrency. An append writes its whole line through one O_APPEND file
 * descriptor under flock(LOCK_EX), then fsyncs, so writers in any number of
 * processes neither interleave nor lose lines. A writer killed mid-line
 * leaves a torn last line: the next append starts on a fresh line so that
 * only the torn one is lost, and readers skip and count any line that is not
 * a valid record of a known version. Blank lines are ignored, not counted.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#ifndef _DEFAULT_SOURCE
#define _DEFAULT_SOURCE /* flock() is BSD, not POSIX */
#endif

#include "store.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include <jansson.h>

#if defined(__GNUC__)
#define CACHE_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define CACHE_PRINTF(f, a)
#endif

/* The file-name part taken from the device name; keeps names well under
 * NAME_MAX whatever the driver reports. */
#define NAME_PART_MAX 64

/* 0000-01-01T00:00:00Z and 9999-12-31T23:59:59Z: the timestamps that fit
 * the four-digit year of the format. */
#define TIMESTAMP_MIN (-62167219200LL)
#define TIMESTAMP_MAX 253402300799LL

/* A decoded line. The record's strings point into `root`, its arrays into
 * the three allocations, so moving the struct moves the whole record. */
typedef struct cache_entry {
    json_t *root;
    cutune_cache_record record;
    long long *problem_size;
    cutune_param_value *config;
    cutune_param_value *baseline;
} cache_entry;

struct cutune_cache {
    char *dir;              /* NULL only when open failed */
    size_t skipped_lines;   /* by the most recent scan */
    size_t version_skipped; /* of those, records of another format version */
    long long other_version; /* the highest such version */
    cache_entry found;      /* what the last lookup returned */
    char errmsg[4352];      /* room for a PATH_MAX path and a reason */
    char warning[1024];
    char first_skip[512];   /* "PATH:LINE: why" of the first line skipped
                               for a reason other than its version */
    size_t refused;         /* of the skipped lines, records the query's
                               accept() refused */
    size_t unreadable;      /* files of a scanned directory not read */
    char first_unreadable[512]; /* "PATH: why" of the first */
};

/* Outcome of decoding one line. */
enum { DECODE_OK, DECODE_INVALID, DECODE_NO_MEMORY };

/* Called for each valid record during a scan; it may take the entry by
 * copying it and zeroing *entry. Nonzero stops the scan. */
typedef int (*entry_visit_fn)(void *user, cache_entry *entry,
                              const char *path, size_t line);

/* ------------------------------------------------------------------ */
/* Errors                                                               */

static cutune_status fail(cutune_cache *cache, cutune_status status,
                          const char *fmt, ...) CACHE_PRINTF(3, 4);

static cutune_status fail(cutune_cache *cache, cutune_status status,
                          const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cache->errmsg, sizeof cache->errmsg, fmt, ap);
    va_end(ap);
    return status;
}

/* strerror() is not thread-safe, and which strerror_r() we get depends on
 * the feature macros of the build. */
static const char *errno_text(int err, char *buf, size_t size)
{
#if defined(__GLIBC__) && defined(_GNU_SOURCE)
    return strerror_r(err, buf, size);
#else
    if (strerror_r(err, buf, size) != 0)
        snprintf(buf, size, "error %d", err);
    return buf;
#endif
}

/* "cannot <what> <path>: <reason>", an I/O error. */
static cutune_status fail_sys(cutune_cache *cache, int err, const char *what,
                              const char *path)
{
    char buf[256];
    return fail(cache, CUTUNE_ERR_IO, "cannot %s %s: %s", what, path,
                errno_text(err, buf, sizeof buf));
}

static cutune_status fail_memory(cutune_cache *cache)
{
    return fail(cache, CUTUNE_ERR_NO_MEMORY, "out of memory");
}

/* ------------------------------------------------------------------ */
/* Small helpers                                                        */

static int is_ascii_alnum(unsigned char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
           (c >= 'A' && c <= 'Z');
}

static int is_hex(unsigned char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') ||
           (c >= 'A' && c <= 'F');
}

static unsigned char ascii_lower(unsigned char c)
{
    return c >= 'A' && c <= 'Z' ? (unsigned char)(c - 'A' + 'a') : c;
}

static uint32_t fnv1a(const char *s)
{
    uint32_t h = 2166136261u;
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 16777619u;
    }
    return h;
}

/* jansson refuses strings that are not UTF-8; checking first lets the error
 * name the field instead of looking like an allocation failure. */
static int utf8_valid(const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        unsigned c = *p, cp;
        size_t more;
        if (c < 0x80) {
            p++;
            continue;
        }
        if ((c & 0xE0) == 0xC0) {
            more = 1;
            cp = c & 0x1F;
        } else if ((c & 0xF0) == 0xE0) {
            more = 2;
            cp = c & 0x0F;
        } else if ((c & 0xF8) == 0xF0) {
            more = 3;
            cp = c & 0x07;
        } else {
            return 0;
        }
        for (size_t i = 1; i <= more; i++) {
            if ((p[i] & 0xC0) != 0x80)
                return 0;
            cp = (cp << 6) | (p[i] & 0x3F);
        }
        if ((more == 1 && cp < 0x80) || (more == 2 && cp < 0x800) ||
            (more == 3 && cp < 0x10000) || cp > 0x10FFFF ||
            (cp >= 0xD800 && cp <= 0xDFFF))
            return 0;
        p += more + 1;
    }
    return 1;
}

/* A fixed-size char array of cutune_device holds a C string. */
static int fits(const char *field, size_t size)
{
    return memchr(field, '\0', size) != NULL;
}

static char *path_join(const char *dir, const char *name)
{
    size_t dlen = strlen(dir), nlen = strlen(name);
    int slash = dlen > 0 && dir[dlen - 1] != '/';
    char *path = malloc(dlen + (size_t)slash + nlen + 1);
    if (!path)
        return NULL;
    memcpy(path, dir, dlen);
    if (slash)
        path[dlen] = '/';
    memcpy(path + dlen + (size_t)slash, name, nlen + 1);
    return path;
}

/* ------------------------------------------------------------------ */
/* Timestamps: civil-date arithmetic on the proleptic Gregorian calendar,
 * done here rather than with gmtime()/timegm() because time_t may be 32
 * bits and timegm() is not standard. */

static long long days_from_civil(long long y, unsigned m, unsigned d)
{
    y -= m <= 2;
    long long era = (y >= 0 ? y : y - 399) / 400;
    unsigned yoe = (unsigned)(y - era * 400);
    unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
    unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + (long long)doe - 719468;
}

static void civil_from_days(long long z, long long *y, unsigned *m,
                            unsigned *d)
{
    z += 719468;
    long long era = (z >= 0 ? z : z - 146096) / 146097;
    unsigned doe = (unsigned)(z - era * 146097);
    unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    unsigned mp = (5 * doy + 2) / 153;
    *d = doy - (153 * mp + 2) / 5 + 1;
    *m = mp < 10 ? mp + 3 : mp - 9;
    *y = (long long)yoe + era * 400 + (*m <= 2);
}

static int is_leap(long long y)
{
    return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

/* `ts` must lie in [TIMESTAMP_MIN, TIMESTAMP_MAX]. */
static void format_timestamp(long long ts, char *buf, size_t size)
{
    long long days = ts / 86400, secs = ts % 86400;
    if (secs < 0) {
        secs += 86400;
        days--;
    }
    long long y;
    unsigned m, d;
    civil_from_days(days, &y, &m, &d);
    snprintf(buf, size, "%04lld-%02u-%02uT%02lld:%02lld:%02lldZ", y, m, d,
             secs / 3600, secs / 60 % 60, secs % 60);
}

static int parse_digits(const char *s, size_t n, unsigned *out)
{
    unsigned v = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return 0;
        v = v * 10 + (unsigned)(s[i] - '0');
    }
    *out = v;
    return 1;
}

/* Only the exact form we write, so that nothing is read approximately. */
static int parse_timestamp(const char *s, long long *out)
{
    static const unsigned month_days[12] = {31, 28, 31, 30, 31, 30,
                                            31, 31, 30, 31, 30, 31};
    unsigned y, mo, d, h, mi, se;
    if (strlen(s) != 20 || s[4] != '-' || s[7] != '-' || s[10] != 'T' ||
        s[13] != ':' || s[16] != ':' || s[19] != 'Z')
        return 0;
    if (!parse_digits(s, 4, &y) || !parse_digits(s + 5, 2, &mo) ||
        !parse_digits(s + 8, 2, &d) || !parse_digits(s + 11, 2, &h) ||
        !parse_digits(s + 14, 2, &mi) || !parse_digits(s + 17, 2, &se))
        return 0;
    if (mo < 1 || mo > 12 || d < 1 || h > 23 || mi > 59 || se > 59)
        return 0;
    if (d > month_days[mo - 1] + (mo == 2 && is_leap(y)))
        return 0;
    *out = days_from_civil(y, mo, d) * 86400 + h * 3600LL + mi * 60LL + se;
    return 1;
}

/* "<major>.<minor>", digits only. */
static int parse_cc(const char *s, int *major, int *minor)
{
    long long v[2];
    for (int part = 0; part < 2; part++) {
        size_t n = 0;
        v[part] = 0;
        while (s[n] >= '0' && s[n] <= '9') {
            if (n == 9)
                return 0;
            v[part] = v[part] * 10 + (s[n] - '0');
            n++;
        }
        if (n == 0)
            return 0;
        s += n;
        if (part == 0 && *s++ != '.')
            return 0;
    }
    if (*s != '\0')
        return 0;
    *major = (int)v[0];
    *minor = (int)v[1];
    return 1;
}

/* ------------------------------------------------------------------ */
/* File names                                                           */

int cutune__cache_file_name(const cutune_device *device, char *buf,
                            size_t size)
{
    char name[NAME_PART_MAX + 1];
    size_t n = 0, name_len = strnlen(device->name, sizeof device->name);
    int dash = 0;
    for (size_t i = 0; i < name_len; i++) {
        unsigned char c = (unsigned char)device->name[i];
        if (!is_ascii_alnum(c)) {
            dash = 1;
            continue;
        }
        if (dash && n > 0) {
            if (n + 2 > NAME_PART_MAX)
                break;
            name[n++] = '-';
        }
        dash = 0;
        if (n + 1 > NAME_PART_MAX)
            break;
        name[n++] = (char)ascii_lower(c);
    }
    name[n] = '\0';
    if (n == 0)
        strcpy(name, "unknown");

    char uuid[sizeof device->uuid];
    memcpy(uuid, device->uuid, sizeof uuid);
    uuid[sizeof uuid - 1] = '\0';
    char id[9];
    size_t idn = 0;
    const char *u = uuid;
    if (strncasecmp(u, "GPU-", 4) == 0)
        u += 4;
    for (; *u && idn < 8; u++)
        if (is_hex((unsigned char)*u))
            id[idn++] = (char)ascii_lower((unsigned char)*u);
    id[idn] = '\0';
    if (idn < 8) {
        char whole[sizeof device->name];
        memcpy(whole, device->name, sizeof whole);
        whole[sizeof whole - 1] = '\0';
        snprintf(id, sizeof id, "%08lx",
                 (unsigned long)fnv1a(uuid[0] ? uuid : whole));
    }

    int len = snprintf(buf, size, "%s%s-%s.jsonl",
                       device->simulated ? "sim-" : "", name, id);
    if (len < 0 || (size_t)len >= size) {
        if (size > 0)
            buf[0] = '\0';
        return -1;
    }
    return 0;
}

/* ------------------------------------------------------------------ */
/* Writing a record                                                     */

static cutune_status check_params(cutune_cache *cache,
                                  const cutune_param_value *params, size_t n,
                                  const char *field)
{
    if (n > 0 && !params)
        return fail(cache, CUTUNE_ERR_INVALID_ARGUMENT,
                    "record field %s is NULL with %zu entries", field, n);
    for (size_t i = 0; i < n; i++) {
        const char *name = params[i].name, *value = params[i].value;
        if (!name || !name[0])
            return fail(cache, CUTUNE_ERR_INVALID_ARGUMENT,
                        "record field %s: parameter %zu has no name", field,
                        i);
        if (!value)
            return fail(cache, CUTUNE_ERR_INVALID_ARGUMENT,
                        "record field %s: parameter %s has no value", field,
                        name);
        if (!utf8_valid(name) || !utf8_valid(value))
            return fail(cache, CUTUNE_ERR_INVALID_ARGUMENT,
                        "record field %s: parameter %zu is not valid UTF-8",
                        field, i);
        for (size_t j = 0; j < i; j++)
            if (strcmp(params[j].name, name) == 0)
                return fail(cache, CUTUNE_ERR_INVALID_ARGUMENT,
                            "record field %s names parameter %s twice",
                            field, name);
    }
    return CUTUNE_OK;
}

/* Everything the encoder could trip on, so that it can only run out of
 * memory, and everything a reader would reject, so that what is written
 * reads back. */
static cutune_status check_record(cutune_cache *cache,
                                  const cutune_cache_record *r)
{
    const cutune_device *d = &r->device;
    if (!r->problem_name || !r->problem_name[0])
        return fail(cache, CUTUNE_ERR_INVALID_ARGUMENT,
                    "record has no problem name");
    if (!fits(d->name, sizeof d->name) || !fits(d->uuid, sizeof d->uuid) ||
        !fits(d->nvrtc_version, sizeof d->nvrtc_version) ||
        !fits(d->cutune_version, sizeof d->cutune_version))
        return fail(cache, CUTUNE_ERR_INVALID_ARGUMENT,
                    "record's device has a string without its NUL");
    if (d->cc_major < 0 || d->cc_minor < 0)
        return fail(cache, CUTUNE_ERR_INVALID_ARGUMENT,
                    "record's device has a negative compute capability");

    const char *texts[][2] = {
        {"device.name", d->name},
        {"device.uuid", d->uuid},
        {"device.nvrtc", d->nvrtc_version},
        {"device.cutune", d->cutune_version},
        {"problem.name", r->problem_name},
        {"problem.source_hash", r->source_hash},
        {"problem.compiler_options", r->compiler_options},
        {"strategy", r->strategy},
    };
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++)
        if (texts[i][1] && !utf8_valid(texts[i][1]))
            return fail(cache, CUTUNE_ERR_INVALID_ARGUMENT,
                        "record field %s is not valid UTF-8", texts[i][0]);

    if (r->n_problem_size > 0 && !r->problem_size)
        return fail(cache, CUTUNE_ERR_INVALID_ARGUMENT,
                    "record field problem.problem_size is NULL with %zu "
                    "dimensions",
                    r->n_problem_size);
    cutune_status status =
        check_params(cache, r->config, r->n_config, "config");
    if (status == CUTUNE_OK)
        status = check_params(cache, r->baseline, r->n_baseline,
                              "baseline.config");
    if (status != CUTUNE_OK)
        return status;

    const struct {
        const char *field;
        double value;
    } reals[] = {
        {"stats.time_ms", r->time_ms},
        {"stats.time_min_ms", r->time_min_ms},
        {"stats.time_stddev_ms", r->time_stddev_ms},
        {"stats.gbs", r->gbs},
        {"baseline.time_ms", r->baseline_ms},
        {"tune_seconds", r->tune_seconds},
    };
    for (size_t i = 0; i < sizeof reals / sizeof reals[0]; i++)
        if (!isfinite(reals[i].value))
            return fail(cache, CUTUNE_ERR_INVALID_ARGUMENT,
                        "record field %s is not a finite number (JSON has "
                        "no NaN or infinity)",
                        reals[i].field);
    if ((unsigned long long)r->runs > (unsigned long long)LLONG_MAX ||
        (unsigned long long)r->evaluations > (unsigned long long)LLONG_MAX)
        return fail(cache, CUTUNE_ERR_INVALID_ARGUMENT,
                    "record's run or evaluation count is too large");
    if (r->timestamp < TIMESTAMP_MIN || r->timestamp > TIMESTAMP_MAX)
        return fail(cache, CUTUNE_ERR_INVALID_ARGUMENT,
                    "record timestamp %lld is outside years 0000-9999",
                    r->timestamp);
    return CUTUNE_OK;
}

/* Builds the JSON tree; after a failed put the tree under construction is
 * never touched again, so the half-built objects need no bookkeeping. */
typedef struct encoder {
    int failed;
} encoder;

/* Steals `value` (like json_object_set_new), whatever happens. */
static void put(encoder *e, json_t *object, const char *key, json_t *value)
{
    if (e->failed || !value) {
        json_decref(value);
        e->failed = 1;
        return;
    }
    if (json_object_set_new(object, key, value) != 0)
        e->failed = 1;
}

static json_t *text(const char *s)
{
    return json_string(s ? s : "");
}

static json_t *params_object(const cutune_param_value *params, size_t n)
{
    json_t *obj = json_object();
    for (size_t i = 0; obj && i < n; i++) {
        if (json_object_set_new(obj, params[i].name,
                                json_string(params[i].value)) != 0) {
            json_decref(obj);
            obj = NULL;
        }
    }
    return obj;
}

static json_t *size_array(const long long *size, size_t n)
{
    json_t *arr = json_array();
    for (size_t i = 0; arr && i < n; i++) {
        if (json_array_append_new(arr, json_integer(size[i])) != 0) {
            json_decref(arr);
            arr = NULL;
        }
    }
    return arr;
}

/* On success *line holds "\n<json>\n" (malloc'd, *len bytes): the leading
 * newline is written only after a torn line. */
static cutune_status encode_record(cutune_cache *cache,
                                   const cutune_cache_record *r, char **line,
                                   size_t *len)
{
    const cutune_device *d = &r->device;
    encoder e = {0};
    char cc[32], when[48];
    snprintf(cc, sizeof cc, "%d.%d", d->cc_major, d->cc_minor);
    format_timestamp(r->timestamp, when, sizeof when);

    json_t *root = json_object();
    json_t *dev = json_object();
    json_t *problem = json_object();
    json_t *stats = json_object();
    json_t *baseline = json_object();
    /* Children are filled before being attached, so a failure frees each
     * exactly once through put(). */
    put(&e, dev, "name", text(d->name));
    put(&e, dev, "uuid", text(d->uuid));
    put(&e, dev, "cc", text(cc));
    put(&e, dev, "sm_count", json_integer(d->sm_count));
    put(&e, dev, "l2_bytes", json_integer(d->l2_bytes));
    put(&e, dev, "memory_bytes", json_integer(d->memory_bytes));
    put(&e, dev, "driver", json_integer(d->driver_version));
    put(&e, dev, "nvrtc", text(d->nvrtc_version));
    put(&e, dev, "cutune", text(d->cutune_version));
    put(&e, dev, "simulated", json_boolean(d->simulated != 0));

    put(&e, problem, "name", text(r->problem_name));
    put(&e, problem, "source_hash", text(r->source_hash));
    put(&e, problem, "problem_size",
        size_array(r->problem_size, r->n_problem_size));
    put(&e, problem, "compiler_options", text(r->compiler_options));

    put(&e, stats, "time_ms", json_real(r->time_ms));
    put(&e, stats, "time_min_ms", json_real(r->time_min_ms));
    put(&e, stats, "time_stddev_ms", json_real(r->time_stddev_ms));
    put(&e, stats, "runs", json_integer((json_int_t)r->runs));
    put(&e, stats, "gbs", json_real(r->gbs));

    put(&e, baseline, "config", params_object(r->baseline, r->n_baseline));
    put(&e, baseline, "time_ms", json_real(r->baseline_ms));

    put(&e, root, "cutune_cache", json_integer(CUTUNE__CACHE_FORMAT));
    put(&e, root, "device", dev);
    put(&e, root, "problem", problem);
    put(&e, root, "config", params_object(r->config, r->n_config));
    put(&e, root, "stats", stats);
    put(&e, root, "baseline", baseline);
    put(&e, root, "strategy", text(r->strategy));
    put(&e, root, "evaluations", json_integer((json_int_t)r->evaluations));
    put(&e, root, "tune_seconds", json_real(r->tune_seconds));
    put(&e, root, "timestamp", text(when));

    char *json = NULL;
    if (!e.failed)
        json = json_dumps(root, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(root);
    if (!json)
        return fail_memory(cache);

    size_t n = strlen(json);
    char *buf = malloc(n + 2);
    if (!buf) {
        free(json);
        return fail_memory(cache);
    }
    buf[0] = '\n';
    memcpy(buf + 1, json, n);
    buf[n + 1] = '\n';
    free(json);
    *line = buf;
    *len = n + 2;
    return CUTUNE_OK;
}

/* mkdir -p with mode 0755 (less the umask). */
static cutune_status make_dir(cutune_cache *cache, const char *dir)
{
    struct stat st;
    if (stat(dir, &st) == 0 && S_ISDIR(st.st_mode))
        return CUTUNE_OK;

    size_t len = strlen(dir);
    char *p = malloc(len + 1);
    if (!p)
        return fail_memory(cache);
    memcpy(p, dir, len + 1);
    for (size_t i = 1; i <= len; i++) {
        if ((p[i] != '/' && p[i] != '\0') || p[i - 1] == '/')
            continue;
        char saved = p[i];
        p[i] = '\0';
        if (mkdir(p, 0755) != 0 && errno != EEXIST) {
            int err = errno;
            /* EACCES and the like for a directory that is already there
             * (a parent we may not write to) are no obstacle. */
            if (stat(p, &st) != 0 || !S_ISDIR(st.st_mode)) {
                cutune_status status =
                    fail_sys(cache, err, "create directory", p);
                free(p);
                return status;
            }
        }
        p[i] = saved;
    }
    free(p);
    if (stat(dir, &st) != 0)
        return fail_sys(cache, errno, "create directory", dir);
    if (!S_ISDIR(st.st_mode))
        return fail_sys(cache, ENOTDIR, "create directory", dir);
    return CUTUNE_OK;
}

/* A new file's directory entry is only durable once the directory itself
 * is synced. Best effort: the record is already on disk, and some file
 * systems refuse fsync on directories. */
static void sync_dir(const char *dir)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        if (fsync(fd) != 0) {
            /* see above */
        }
        close(fd);
    }
}

/* `line` is "\n<json>\n". */
static cutune_status write_line(cutune_cache *cache, const char *path,
                                const char *line, size_t len)
{
    cutune_status status = CUTUNE_OK;
    int fd;
    /* O_RDWR rather than O_WRONLY: the last byte is read back to detect a
     * torn line. O_APPEND makes every write land at the end even if a
     * writer that ignores the lock gets in. */
    do
        fd = open(path, O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    while (fd < 0 && errno == EINTR);
    if (fd < 0)
        return fail_sys(cache, errno, "open", path);

    while (flock(fd, LOCK_EX) != 0) {
        if (errno != EINTR) {
            status = fail_sys(cache, errno, "lock", path);
            close(fd);
            return status;
        }
    }

    struct stat st;
    off_t before = 0;
    if (fstat(fd, &st) != 0) {
        status = fail_sys(cache, errno, "stat", path);
        goto unlock;
    }
    before = st.st_size;

    const char *p = line + 1;
    size_t n = len - 1;
    if (before > 0) {
        char last;
        ssize_t got;
        do
            got = pread(fd, &last, 1, before - 1);
        while (got < 0 && errno == EINTR);
        if (got != 1) {
            status = fail_sys(cache, got < 0 ? errno : EIO, "read", path);
            goto unlock;
        }
        /* A writer died mid-line: end its fragment so ours stays whole. */
        if (last != '\n') {
            p = line;
            n = len;
        }
    }

    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            status = fail_sys(cache, w < 0 ? errno : EIO, "write", path);
            /* Take back a partial line (we still hold the lock, so the
             * tail is ours); if that fails readers skip it anyway. */
            if (ftruncate(fd, before) != 0) {
                /* see above */
            }
            goto unlock;
        }
        p += w;
        n -= (size_t)w;
    }

    while (fsync(fd) != 0) {
        if (errno != EINTR) {
            status = fail_sys(cache, errno, "sync", path);
            goto unlock;
        }
    }
    if (before == 0)
        sync_dir(cache->dir);

unlock:
    flock(fd, LOCK_UN);
    if (close(fd) != 0 && status == CUTUNE_OK)
        status = fail_sys(cache, errno, "close", path);
    return status;
}

/* ------------------------------------------------------------------ */
/* Reading records                                                      */

static void entry_free(cache_entry *e)
{
    json_decref(e->root);
    free(e->problem_size);
    free(e->config);
    free(e->baseline);
    memset(e, 0, sizeof *e);
}

static int get_string(json_t *obj, const char *key, const char **out)
{
    json_t *v = json_object_get(obj, key);
    if (!json_is_string(v))
        return 0;
    *out = json_string_value(v);
    return 1;
}

/* Too long for the device's array is invalid rather than truncated. */
static int get_string_into(json_t *obj, const char *key, char *buf,
                           size_t size)
{
    const char *s;
    if (!get_string(obj, key, &s))
        return 0;
    size_t n = strlen(s);
    if (n >= size)
        return 0;
    memcpy(buf, s, n + 1);
    return 1;
}

static int get_int(json_t *obj, const char *key, long long min,
                   long long max, long long *out)
{
    json_t *v = json_object_get(obj, key);
    if (!json_is_integer(v))
        return 0;
    long long x = (long long)json_integer_value(v);
    if (x < min || x > max)
        return 0;
    *out = x;
    return 1;
}

static int get_real(json_t *obj, const char *key, double *out)
{
    json_t *v = json_object_get(obj, key);
    if (!json_is_number(v))
        return 0;
    *out = json_number_value(v);
    return isfinite(*out);
}

static int get_params(json_t *obj, cutune_param_value **out, size_t *count)
{
    if (!json_is_object(obj))
        return DECODE_INVALID;
    size_t n = json_object_size(obj);
    *count = n;
    if (n == 0)
        return DECODE_OK;
    cutune_param_value *params = malloc(n * sizeof *params);
    if (!params)
        return DECODE_NO_MEMORY;
    *out = params;
    size_t i = 0;
    const char *key;
    json_t *value;
    json_object_foreach(obj, key, value)
    {
        if (!key[0] || !json_is_string(value))
            return DECODE_INVALID;
        params[i].name = key;
        params[i].value = json_string_value(value);
        i++;
    }
    return DECODE_OK;
}

static int decode_device(json_t *dev, cutune_device *d)
{
    const char *cc;
    long long sm, l2, mem, driver;
    if (!json_is_object(dev) ||
        !get_string_into(dev, "name", d->name, sizeof d->name) ||
        !get_string_into(dev, "uuid", d->uuid, sizeof d->uuid) ||
        !get_string(dev, "cc", &cc) ||
        !parse_cc(cc, &d->cc_major, &d->cc_minor) ||
        !get_int(dev, "sm_count", INT_MIN, INT_MAX, &sm) ||
        !get_int(dev, "l2_bytes", LLONG_MIN, LLONG_MAX, &l2) ||
        !get_int(dev, "memory_bytes", LLONG_MIN, LLONG_MAX, &mem) ||
        !get_int(dev, "driver", INT_MIN, INT_MAX, &driver) ||
        !get_string_into(dev, "nvrtc", d->nvrtc_version,
                         sizeof d->nvrtc_version) ||
        !get_string_into(dev, "cutune", d->cutune_version,
                         sizeof d->cutune_version))
        return 0;
    json_t *sim = json_object_get(dev, "simulated");
    if (!json_is_boolean(sim))
        return 0;
    d->sm_count = (int)sm;
    d->l2_bytes = l2;
    d->memory_bytes = mem;
    d->driver_version = (int)driver;
    d->simulated = json_is_true(sim);
    return 1;
}

/* Takes `root` in every case. Anything short of a complete record of a
 * known version is DECODE_INVALID: a line is read whole or not at all. */
static int decode_entry(json_t *root, cache_entry *e)
{
    memset(e, 0, sizeof *e);
    e->root = root;
    cutune_cache_record *r = &e->record;
    long long version, runs, evals;
    const char *when;
    int rc = DECODE_INVALID;

    if (!json_is_object(root) ||
        !get_int(root, "cutune_cache", CUTUNE__CACHE_FORMAT,
                 CUTUNE__CACHE_FORMAT, &version))
        goto out;
    if (!decode_device(json_object_get(root, "device"), &r->device))
        goto out;

    json_t *problem = json_object_get(root, "problem");
    json_t *sizes = json_object_get(problem, "problem_size");
    if (!get_string(problem, "name", &r->problem_name) ||
        !r->problem_name[0] ||
        !get_string(problem, "source_hash", &r->source_hash) ||
        !get_string(problem, "compiler_options", &r->compiler_options) ||
        !json_is_array(sizes))
        goto out;
    r->n_problem_size = json_array_size(sizes);
    if (r->n_problem_size > 0) {
        e->problem_size = malloc(r->n_problem_size * sizeof *e->problem_size);
        if (!e->problem_size) {
            rc = DECODE_NO_MEMORY;
            goto out;
        }
        for (size_t i = 0; i < r->n_problem_size; i++) {
            json_t *v = json_array_get(sizes, i);
            if (!json_is_integer(v))
                goto out;
            e->problem_size[i] = (long long)json_integer_value(v);
        }
        r->problem_size = e->problem_size;
    }

    rc = get_params(json_object_get(root, "config"), &e->config,
                    &r->n_config);
    if (rc != DECODE_OK)
        goto out;
    r->config = e->config;

    json_t *baseline = json_object_get(root, "baseline");
    rc = get_params(json_object_get(baseline, "config"), &e->baseline,
                    &r->n_baseline);
    if (rc != DECODE_OK)
        goto out;
    r->baseline = e->baseline;
    rc = DECODE_INVALID;

    json_t *stats = json_object_get(root, "stats");
    if (!get_real(stats, "time_ms", &r->time_ms) || !(r->time_ms > 0) ||
        !get_real(stats, "time_min_ms", &r->time_min_ms) ||
        !get_real(stats, "time_stddev_ms", &r->time_stddev_ms) ||
        !get_int(stats, "runs", 0,
                 SIZE_MAX < LLONG_MAX ? (long long)SIZE_MAX : LLONG_MAX,
                 &runs) ||
        !get_real(stats, "gbs", &r->gbs) ||
        !get_real(baseline, "time_ms", &r->baseline_ms) ||
        !get_string(root, "strategy", &r->strategy) ||
        !get_int(root, "evaluations", 0,
                 SIZE_MAX < LLONG_MAX ? (long long)SIZE_MAX : LLONG_MAX,
                 &evals) ||
        !get_real(root, "tune_seconds", &r->tune_seconds) ||
        !get_string(root, "timestamp", &when) ||
        !parse_timestamp(when, &r->timestamp))
        goto out;
    r->runs = (size_t)runs;
    r->evaluations = (size_t)evals;
    return DECODE_OK;

out:
    entry_free(e);
    return rc;
}

static int is_blank(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r' && s[i] != '\n')
            return 0;
    return 1;
}

/* The first line skipped for a reason other than its version, for the
 * warning: "PATH:LINE: why". */
static void note_line(cutune_cache *cache, const char *path, size_t line,
                      const char *why)
{
    if (!cache->first_skip[0])
        snprintf(cache->first_skip, sizeof cache->first_skip, "%s:%zu: %s",
                 path, line, why);
}

/* A file of a cache directory that cannot be read (a symlink loop, a link
 * to nothing, no permission, not a regular file) is counted and named in
 * the warning, and the walk goes on: one bad entry does not hide the
 * rest of the cache. Returns 1 when `path` can be read. */
static int file_readable(cutune_cache *cache, const char *path)
{
    int fd;
    do
        fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    while (fd < 0 && errno == EINTR);
    int err = fd < 0 ? errno : 0;
    struct stat st;
    if (fd >= 0) {
        int regular = fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
        close(fd);
        if (regular)
            return 1;
    } else if (err == ENOENT && lstat(path, &st) != 0) {
        return 0; /* removed since the directory was listed */
    }
    char buf[128];
    cache->unreadable++;
    if (!cache->first_unreadable[0])
        snprintf(cache->first_unreadable, sizeof cache->first_unreadable,
                 "%s: %s", path,
                 fd >= 0 ? "not a regular file"
                 : err == ENOENT ? "a symbolic link to nothing"
                 : err == ELOOP ? "a loop of symbolic links"
                                : errno_text(err, buf, sizeof buf));
    return 0;
}

static cutune_status scan_file(cutune_cache *cache, const char *path,
                               entry_visit_fn visit, void *user, int *stop)
{
    int fd;
    do
        fd = open(path, O_RDONLY | O_CLOEXEC);
    while (fd < 0 && errno == EINTR);
    if (fd < 0) {
        if (errno == ENOENT) /* removed since the directory was listed */
            return CUTUNE_OK;
        return fail_sys(cache, errno, "open", path);
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        cutune_status status = fail_sys(cache, errno, "stat", path);
        close(fd);
        return status;
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        return CUTUNE_OK;
    }
    /* A shared lock keeps a line that is being appended out of view, so it
     * is not taken for a torn one. Where locks are unsupported, reading
     * without one is still correct. */
    while (flock(fd, LOCK_SH) != 0 && errno == EINTR)
        ;
    FILE *f = fdopen(fd, "r");
    if (!f) {
        cutune_status status = fail_sys(cache, errno, "read", path);
        close(fd);
        return status;
    }

    cutune_status status = CUTUNE_OK;
    char *line = NULL;
    size_t cap = 0, lineno = 0;
    ssize_t got;
    while ((got = getline(&line, &cap, f)) >= 0) {
        lineno++;
        if (is_blank(line, (size_t)got))
            continue;
        json_error_t jerr;
        json_t *root = json_loadb(line, (size_t)got, JSON_REJECT_DUPLICATES,
                                  &jerr);
        if (!root) {
            if (json_error_code(&jerr) == json_error_out_of_memory) {
                status = fail_memory(cache);
                break;
            }
            cache->skipped_lines++;
            note_line(cache, path, lineno, "not JSON");
            continue;
        }
        json_t *version = json_object_get(root, "cutune_cache");
        if (json_is_integer(version) &&
            json_integer_value(version) != CUTUNE__CACHE_FORMAT) {
            long long v = (long long)json_integer_value(version);
            if (cache->version_skipped == 0 || v > cache->other_version)
                cache->other_version = v;
            cache->version_skipped++;
            cache->skipped_lines++;
            json_decref(root);
            continue;
        }
        cache_entry e;
        int rc = decode_entry(root, &e);
        if (rc == DECODE_NO_MEMORY) {
            status = fail_memory(cache);
            break;
        }
        if (rc == DECODE_INVALID) {
            cache->skipped_lines++;
            note_line(cache, path, lineno,
                      "not a valid record (a field missing, of the wrong "
                      "type or out of range)");
            continue;
        }
        int halt = visit(user, &e, path, lineno);
        entry_free(&e);
        if (halt) {
            *stop = 1;
            break;
        }
    }
    if (status == CUTUNE_OK && !*stop && ferror(f))
        status = fail_sys(cache, errno, "read", path);
    free(line);
    fclose(f); /* also drops the lock */
    return status;
}

static int compare_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Visits every valid record of every *.jsonl file, in name order so that
 * "later" means the same thing on every machine. */
static cutune_status scan_dir_at(cutune_cache *cache, const char *dirpath,
                                 entry_visit_fn visit, void *user,
                                 int *missing, int *stop)
{
    *missing = 0;
    DIR *dir = opendir(dirpath);
    if (!dir) {
        if (errno == ENOENT) {
            *missing = 1;
            return CUTUNE_OK;
        }
        return fail_sys(cache, errno, "read directory", dirpath);
    }

    cutune_status status = CUTUNE_OK;
    char **names = NULL;
    size_t count = 0, cap = 0;
    for (;;) {
        errno = 0;
        struct dirent *de = readdir(dir);
        if (!de) {
            if (errno != 0)
                status = fail_sys(cache, errno, "read directory", dirpath);
            break;
        }
        const char *name = de->d_name;
        size_t len = strlen(name);
        /* Dot files are left for tools that write a file aside and rename
         * it into place. */
        if (name[0] == '.' || len <= 6 || strcmp(name + len - 6, ".jsonl"))
            continue;
        if (count == cap) {
            size_t ncap = cap ? cap * 2 : 16;
            char **grown = realloc(names, ncap * sizeof *names);
            if (!grown) {
                status = fail_memory(cache);
                break;
            }
            names = grown;
            cap = ncap;
        }
        if (!(names[count] = strdup(name))) {
            status = fail_memory(cache);
            break;
        }
        count++;
    }
    closedir(dir);

    if (status == CUTUNE_OK && count > 1)
        qsort(names, count, sizeof *names, compare_names);
    for (size_t i = 0; status == CUTUNE_OK && !*stop && i < count; i++) {
        char *path = path_join(dirpath, names[i]);
        if (!path) {
            status = fail_memory(cache);
            break;
        }
        if (file_readable(cache, path))
            status = scan_file(cache, path, visit, user, stop);
        free(path);
    }
    for (size_t i = 0; i < count; i++)
        free(names[i]);
    free(names);
    return status;
}

static void reset_counts(cutune_cache *cache)
{
    cache->skipped_lines = 0;
    cache->version_skipped = 0;
    cache->other_version = 0;
    cache->warning[0] = '\0';
    cache->first_skip[0] = '\0';
    cache->refused = 0;
    cache->unreadable = 0;
    cache->first_unreadable[0] = '\0';
}

/* The warning about what the last scan passed over. */
static void note_skipped(cutune_cache *cache, const char *where)
{
    size_t other = cache->skipped_lines - cache->version_skipped;
    int n = 0;
    if (cache->version_skipped > 0)
        n = snprintf(cache->warning, sizeof cache->warning,
                     "%zu record%s of cache format version %lld%s in %s "
                     "refused: this cutune reads format version %d only%s",
                     cache->version_skipped,
                     cache->version_skipped == 1 ? "" : "s",
                     cache->other_version,
                     cache->version_skipped > 1 ? " (or other versions)" : "",
                     where, CUTUNE__CACHE_FORMAT,
                     cache->other_version > CUTUNE__CACHE_FORMAT
                         ? "; upgrade cutune to read them"
                         : "");
    if (other > 0 && n >= 0 && (size_t)n < sizeof cache->warning)
        n += snprintf(cache->warning + n, sizeof cache->warning - (size_t)n,
                      "%s%zu line%s in %s skipped: torn (a writer was "
                      "killed) or not a valid record%s%s%s%s",
                      n > 0 ? "; " : "", other, other == 1 ? "" : "s", where,
                      cache->refused ? " for the problem" : "",
                      cache->first_skip[0] ? " (first: " : "",
                      cache->first_skip, cache->first_skip[0] ? ")" : "");
    if (cache->unreadable > 0 && n >= 0 && (size_t)n < sizeof cache->warning)
        snprintf(cache->warning + n, sizeof cache->warning - (size_t)n,
                 "%s%zu file%s in %s not read (first: %s); the rest was read",
                 n > 0 ? "; " : "", cache->unreadable,
                 cache->unreadable == 1 ? "" : "s", where,
                 cache->first_unreadable);
}

static cutune_status scan_dir(cutune_cache *cache, entry_visit_fn visit,
                              void *user, int *missing)
{
    int stop = 0;
    reset_counts(cache);
    cutune_status status =
        scan_dir_at(cache, cache->dir, visit, user, missing, &stop);
    note_skipped(cache, cache->dir);
    return status;
}

/* Files are read as they are, directories as caches. */
static cutune_status scan_paths(cutune_cache *cache, const char *const *paths,
                                size_t n, entry_visit_fn visit, void *user)
{
    int stop = 0, missing = 0;
    cutune_status status = CUTUNE_OK;
    reset_counts(cache);
    for (size_t i = 0; status == CUTUNE_OK && !stop && i < n; i++) {
        struct stat st;
        if (!paths[i] || stat(paths[i], &st) != 0) {
            status = fail_sys(cache, paths[i] ? errno : EINVAL, "read",
                              paths[i] ? paths[i] : "(null)");
            break;
        }
        if (S_ISDIR(st.st_mode))
            status = scan_dir_at(cache, paths[i], visit, user, &missing,
                                 &stop);
        else
            status = scan_file(cache, paths[i], visit, user, &stop);
    }
    note_skipped(cache, n == 1 && paths[0] ? paths[0] : "the inputs");
    return status;
}

/* ------------------------------------------------------------------ */
/* Lookup                                                               */

typedef struct lookup_state {
    const cutune_cache_query *query;
    int default_only;  /* every device's records, for the DEFAULT level */
    cache_entry best;  /* the device's own; best.root NULL until one is */
    cutune_match level;
    double distance;
    /* Other devices' records of the problem, for the levels after the
     * device's own. */
    cache_entry *others;
    size_t n_others, cap_others;
    size_t arch;       /* index in others of the best same-architecture
                          record; n_others when there is none */
    long long arch_sm;
    double arch_distance;
    int no_memory;
} lookup_state;

static int same_size(const long long *a, size_t na, const long long *b,
                     size_t nb)
{
    if (na != nb)
        return 0;
    for (size_t i = 0; i < na; i++)
        if (a[i] != b[i])
            return 0;
    return 1;
}

/* Sum over dimensions of |log(a/b)|: doubling one dimension is as far as
 * halving it. Sizes that cannot be compared that way (another dimension
 * count, a zero or negative extent) are "far": chosen only when nothing
 * nearer exists, and then the newest of them. */
static double size_distance(const long long *a, size_t na, const long long *b,
                            size_t nb)
{
    if (na != nb)
        return HUGE_VAL;
    double sum = 0;
    for (size_t i = 0; i < na; i++) {
        if (a[i] == b[i])
            continue;
        if (a[i] <= 0 || b[i] <= 0)
            return HUGE_VAL;
        /* larger over smaller, so that a doubling and a halving come out
         * bit-identical and their tie goes to the newer record */
        double hi = (double)(a[i] > b[i] ? a[i] : b[i]);
        double lo = (double)(a[i] > b[i] ? b[i] : a[i]);
        sum += log(hi / lo);
    }
    return sum;
}

static double query_distance(const cutune_cache_query *q,
                             const cutune_cache_record *r)
{
    if (!q->problem_size)
        return 0;
    return size_distance(r->problem_size, r->n_problem_size, q->problem_size,
                         q->n_problem_size);
}

static int is_query_device(const cutune_cache_query *q,
                           const cutune_cache_record *r)
{
    int by_uuid = q->device_uuid && q->device_uuid[0];
    int by_name = q->device_name && q->device_name[0];
    if (!by_uuid && !by_name)
        return 1;
    return (by_uuid && strcasecmp(r->device.uuid, q->device_uuid) == 0) ||
           (by_name && strcasecmp(r->device.name, q->device_name) == 0);
}

/* Nearer first; among equals the newer, and among equal times the later
 * line (the one seen last). */
static int nearer_or_newer(double distance, long long timestamp,
                           double best_distance, long long best_timestamp)
{
    if (distance != best_distance)
        return distance < best_distance;
    return timestamp >= best_timestamp;
}

static int same_config(const cutune_param_value *a, size_t na,
                       const cutune_param_value *b, size_t nb)
{
    if (na != nb)
        return 0;
    for (size_t i = 0; i < na; i++) {
        size_t j = 0;
        while (j < nb && strcmp(a[i].name, b[j].name) != 0)
            j++;
        if (j == nb || strcmp(a[i].value, b[j].value) != 0)
            return 0;
    }
    return 1;
}

static int keep_other(lookup_state *st, cache_entry *e)
{
    if (st->n_others == st->cap_others) {
        size_t ncap = st->cap_others ? st->cap_others * 2 : 16;
        cache_entry *grown = realloc(st->others, ncap * sizeof *grown);
        if (!grown) {
            st->no_memory = 1;
            return 1;
        }
        st->others = grown;
        st->cap_others = ncap;
    }
    st->others[st->n_others++] = *e;
    memset(e, 0, sizeof *e);
    return 0;
}

static int lookup_visit(void *user, cache_entry *e, const char *path,
                        size_t line)
{
    (void)path;
    (void)line;
    lookup_state *st = user;
    const cutune_cache_query *q = st->query;
    const cutune_cache_record *r = &e->record;

    if (strcmp(r->problem_name, q->problem_name) != 0)
        return 0;
    if (!st->default_only && is_query_device(q, r)) {
        cutune_match level = CUTUNE_MATCH_EXACT;
        double distance = 0;
        if (q->problem_size &&
            !same_size(r->problem_size, r->n_problem_size, q->problem_size,
                       q->n_problem_size)) {
            level = CUTUNE_MATCH_NEAREST_SIZE;
            distance = query_distance(q, r);
        }
        if (st->best.root) {
            if (level != st->level) {
                if (level == CUTUNE_MATCH_NEAREST_SIZE)
                    return 0;
            } else if (!nearer_or_newer(distance, r->timestamp,
                                        st->distance,
                                        st->best.record.timestamp)) {
                return 0;
            }
        }
        entry_free(&st->best);
        st->best = *e;
        memset(e, 0, sizeof *e);
        st->level = level;
        st->distance = distance;
        return 0;
    }
    if (!q->fallback && !st->default_only)
        return 0;
    /* Once the device has a record of its own, the other levels cannot
     * answer: stop keeping their records. */
    if (st->best.root)
        return 0;

    double distance = query_distance(q, r);
    int arch = !st->default_only && q->cc_major > 0 &&
               r->device.cc_major == q->cc_major &&
               r->device.cc_minor == q->cc_minor;
    long long sm = 0;
    if (arch && q->sm_count > 0) {
        sm = (long long)r->device.sm_count - q->sm_count;
        sm = sm < 0 ? -sm : sm;
    }
    long long timestamp = r->timestamp;
    int simulated = r->device.simulated != 0;
    if (keep_other(st, e))
        return 1;
    if (arch) {
        int best_simulated =
            st->arch != SIZE_MAX &&
            st->others[st->arch].record.device.simulated != 0;
        /* A real device's record beats any simulated one. */
        if (st->arch == SIZE_MAX || simulated < best_simulated ||
            (simulated == best_simulated && sm < st->arch_sm) ||
            (simulated == best_simulated && sm == st->arch_sm &&
             nearer_or_newer(distance, timestamp, st->arch_distance,
                             st->others[st->arch].record.timestamp))) {
            st->arch = st->n_others - 1;
            st->arch_sm = sm;
            st->arch_distance = distance;
        }
    }
    return 0;
}

/* The query's accept() in front of lookup_visit: a record of the problem
 * that it refuses is skipped like an invalid line, never returned. */
typedef struct accept_visit {
    cutune_cache *cache;
    lookup_state *st;
} accept_visit;

static int accept_then_visit(void *user, cache_entry *e, const char *path,
                             size_t line)
{
    accept_visit *av = user;
    const cutune_cache_query *q = av->st->query;
    char why[256] = "";
    if (strcmp(e->record.problem_name, q->problem_name) == 0 &&
        !q->accept(q->accept_user, &e->record, why, sizeof why)) {
        av->cache->skipped_lines++;
        av->cache->refused++;
        note_line(av->cache, path, line,
                  why[0] ? why : "refused by the lookup");
        return 0;
    }
    return lookup_visit(av->st, e, path, line);
}

static cutune_status scan_lookup(cutune_cache *cache, lookup_state *st,
                                 int *missing)
{
    if (!st->query->accept)
        return scan_dir(cache, lookup_visit, st, missing);
    accept_visit av = {cache, st};
    return scan_dir(cache, accept_then_visit, &av, missing);
}

/* The DEFAULT level. Each device (by name) is represented by its record
 * nearest to the query's size (the newest among equals). A candidate is a
 * configuration that won on some device; its relative time on a device is
 * 1 where it won and baseline time / best time where it was that device's
 * baseline, and the devices that measured it neither way do not count.
 * The candidate with the lowest average relative time wins; ties go to
 * the one more devices measured, then to the newer record. Simulated
 * devices take part only when no real device has a record. Returns the
 * index in `others` of the record that carries it. */
static size_t pick_default(const lookup_state *st, double *avg_out,
                           size_t *devices_out)
{
    const cutune_cache_query *q = st->query;
    size_t n = st->n_others, best = SIZE_MAX, best_count = 0;
    double best_avg = HUGE_VAL;
    size_t *reps = malloc((n ? n : 1) * sizeof *reps);
    if (!reps)
        return SIZE_MAX;
    size_t n_reps = 0;
    int any_real = 0;
    for (size_t i = 0; i < n; i++)
        any_real |= !st->others[i].record.device.simulated;
    for (size_t i = 0; i < n; i++) {
        const cutune_cache_record *r = &st->others[i].record;
        if (any_real && r->device.simulated)
            continue;
        size_t k = 0;
        while (k < n_reps &&
               strcasecmp(st->others[reps[k]].record.device.name,
                          r->device.name) != 0)
            k++;
        if (k == n_reps) {
            reps[n_reps++] = i;
            continue;
        }
        const cutune_cache_record *old = &st->others[reps[k]].record;
        if (nearer_or_newer(query_distance(q, r), r->timestamp,
                            query_distance(q, old), old->timestamp))
            reps[k] = i;
    }
    for (size_t c = 0; c < n_reps; c++) {
        const cutune_cache_record *cand = &st->others[reps[c]].record;
        double sum = 0;
        size_t count = 0;
        for (size_t d = 0; d < n_reps; d++) {
            const cutune_cache_record *r = &st->others[reps[d]].record;
            if (same_config(cand->config, cand->n_config, r->config,
                            r->n_config)) {
                sum += 1;
                count++;
            } else if (r->time_ms > 0 &&
                       same_config(cand->config, cand->n_config, r->baseline,
                                   r->n_baseline)) {
                sum += r->baseline_ms / r->time_ms;
                count++;
            }
        }
        double avg = sum / (double)count;
        int better;
        if (best == SIZE_MAX || avg != best_avg)
            better = best == SIZE_MAX || avg < best_avg;
        else if (count != best_count)
            better = count > best_count;
        else
            better = cand->timestamp >= st->others[best].record.timestamp;
        if (better) {
            best = reps[c];
            best_avg = avg;
            best_count = count;
        }
    }
    free(reps);
    if (avg_out)
        *avg_out = best_avg;
    if (devices_out)
        *devices_out = best_count;
    return best;
}

static void lookup_state_free(lookup_state *st)
{
    entry_free(&st->best);
    for (size_t i = 0; i < st->n_others; i++)
        entry_free(&st->others[i]);
    free(st->others);
}

/* ------------------------------------------------------------------ */
/* Public API                                                           */

const char *cutune_match_str(cutune_match match)
{
    switch (match) {
    case CUTUNE_MATCH_NONE:
        return "none";
    case CUTUNE_MATCH_EXACT:
        return "exact";
    case CUTUNE_MATCH_NEAREST_SIZE:
        return "nearest-size";
    case CUTUNE_MATCH_ARCHITECTURE:
        return "architecture";
    case CUTUNE_MATCH_DEFAULT:
        return "default";
    case CUTUNE_MATCH_OCCUPANCY:
        return "occupancy";
    }
    return "unknown";
}

cutune_status cutune_cache_open(const char *dir, cutune_cache **out)
{
    if (!out)
        return CUTUNE_ERR_INVALID_ARGUMENT;
    cutune_cache *cache = calloc(1, sizeof *cache);
    *out = cache;
    if (!cache)
        return CUTUNE_ERR_NO_MEMORY;

    const char *base = dir && dir[0] ? dir : NULL;
    const char *suffix = "";
    if (!base) {
        const char *env = getenv("CUTUNE_CACHE_DIR");
        if (env && env[0])
            base = env;
    }
    if (!base) {
        const char *home = getenv("HOME");
        if (home && home[0]) {
            base = home;
            suffix = "/.cache/cutune";
        }
    }
    if (!base)
        return fail(cache, CUTUNE_ERR_INVALID_ARGUMENT,
                    "no cache directory: none was given and neither "
                    "CUTUNE_CACHE_DIR nor HOME is set");

    /* Trailing slashes would only double up in the paths of messages. */
    size_t blen = strlen(base), slen = strlen(suffix);
    while (blen > 0 && base[blen - 1] == '/' && (blen > 1 || slen > 0))
        blen--;
    cache->dir = malloc(blen + slen + 1);
    if (!cache->dir)
        return fail_memory(cache);
    memcpy(cache->dir, base, blen);
    memcpy(cache->dir + blen, suffix, slen + 1);
    return CUTUNE_OK;
}

void cutune_cache_close(cutune_cache *cache)
{
    if (!cache)
        return;
    entry_free(&cache->found);
    free(cache->dir);
    free(cache);
}

const char *cutune_cache_errmsg(const cutune_cache *cache)
{
    /* open leaves no handle only when memory ran out */
    return cache ? cache->errmsg : "out of memory";
}

const char *cutune_cache_dir(const cutune_cache *cache)
{
    return cache && cache->dir ? cache->dir : "";
}

size_t cutune_cache_skipped_lines(const cutune_cache *cache)
{
    return cache ? cache->skipped_lines : 0;
}

size_t cutune_cache_version_skipped(const cutune_cache *cache)
{
    return cache ? cache->version_skipped : 0;
}

const char *cutune_cache_warning(const cutune_cache *cache)
{
    return cache ? cache->warning : "";
}

void cutune__cache_set_warning(cutune_cache *cache, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cache->warning, sizeof cache->warning, fmt, ap);
    va_end(ap);
}

cutune_status cutune__cache_fail(cutune_cache *cache, cutune_status status,
                                 const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cache->errmsg, sizeof cache->errmsg, fmt, ap);
    va_end(ap);
    return status;
}

cutune_status cutune__cache_fail_sys(cutune_cache *cache, int err,
                                     const char *what, const char *path)
{
    return fail_sys(cache, err, what, path);
}

cutune_status cutune_cache_append(cutune_cache *cache,
                                  const cutune_cache_record *record)
{
    if (!cache)
        return CUTUNE_ERR_INVALID_ARGUMENT;
    cache->errmsg[0] = '\0';
    if (!cache->dir)
        return fail(cache, CUTUNE_ERR_INVALID_ARGUMENT,
                    "the cache has no directory (open failed)");
    if (!record)
        return fail(cache, CUTUNE_ERR_INVALID_ARGUMENT, "no record given");

    cutune_status status = check_record(cache, record);
    if (status != CUTUNE_OK)
        return status;
    char *line = NULL;
    size_t len = 0;
    status = encode_record(cache, record, &line, &len);
    if (status != CUTUNE_OK)
        return status;

    char name[CUTUNE__CACHE_FILE_NAME_MAX];
    char *path = NULL;
    status = make_dir(cache, cache->dir);
    if (status == CUTUNE_OK &&
        cutune__cache_file_name(&record->device, name, sizeof name) != 0)
        status = fail(cache, CUTUNE_ERR_INVALID_ARGUMENT,
                      "cannot name the cache file of device %s",
                      record->device.name);
    if (status == CUTUNE_OK && !(path = path_join(cache->dir, name)))
        status = fail_memory(cache);
    if (status == CUTUNE_OK)
        status = write_line(cache, path, line, len);
    free(path);
    free(line);
    return status;
}

cutune_status cutune_cache_lookup(cutune_cache *cache,
                                  const cutune_cache_query *query,
                                  const cutune_cache_record **record,
                                  cutune_match *match)
{
    if (record)
        *record = NULL;
    if (match)
        *match = CUTUNE_MATCH_NONE;
    if (!cache)
        return CUTUNE_ERR_INVALID_ARGUMENT;
    cache->errmsg[0] = '\0';
    cache->warning[0] = '\0';
    entry_free(&cache->found);
    if (!query || !query->problem_name || !record || !match)
        return fail(cache, CUTUNE_ERR_INVALID_ARGUMENT,
                    "lookup needs a query with a problem name, and places "
                    "for the record and the match level");
    if (!cache->dir)
        return fail(cache, CUTUNE_ERR_INVALID_ARGUMENT,
                    "the cache has no directory (open failed)");

    lookup_state st;
    memset(&st, 0, sizeof st);
    st.query = query;
    st.arch = SIZE_MAX;
    int missing = 0;
    cutune_status status = scan_lookup(cache, &st, &missing);
    if (status == CUTUNE_OK && st.no_memory)
        status = fail_memory(cache);
    if (status != CUTUNE_OK) {
        lookup_state_free(&st);
        return status;
    }
    if (!st.best.root && st.n_others > 0) {
        size_t pick = st.arch;
        st.level = CUTUNE_MATCH_ARCHITECTURE;
        if (pick == SIZE_MAX) {
            st.level = CUTUNE_MATCH_DEFAULT;
            pick = pick_default(&st, NULL, NULL);
            if (pick == SIZE_MAX) {
                lookup_state_free(&st);
                return fail_memory(cache);
            }
        }
        st.best = st.others[pick];
        memset(&st.others[pick], 0, sizeof st.others[pick]);
    }
    if (!st.best.root) {
        lookup_state_free(&st);
        if (query->fallback)
            *match = CUTUNE_MATCH_OCCUPANCY;
        char device[320];
        if (query->device_uuid && query->device_uuid[0])
            snprintf(device, sizeof device, "device %s", query->device_uuid);
        else if (query->device_name && query->device_name[0])
            snprintf(device, sizeof device, "device \"%s\"",
                     query->device_name);
        else
            snprintf(device, sizeof device, "any device");
        return fail(cache, CUTUNE_ERR_NOT_FOUND,
                    "no cache record for problem \"%s\" on %s%s in %s%s",
                    query->problem_name, device,
                    query->fallback ? " or any other device" : "",
                    cache->dir,
                    missing ? " (the directory does not exist)" : "");
    }
    cache->found = st.best;
    memset(&st.best, 0, sizeof st.best);
    lookup_state_free(&st);
    *record = &cache->found.record;
    *match = st.level;
    return CUTUNE_OK;
}

typedef struct record_visit {
    cutune__cache_visit_fn visit;
    void *user;
} record_visit;

static int record_visit_entry(void *user, cache_entry *e, const char *path,
                              size_t line)
{
    record_visit *rv = user;
    return rv->visit(rv->user, &e->record, e->root, path, line);
}

cutune_status cutune__cache_scan(cutune_cache *cache,
                                 const char *const *paths, size_t n_paths,
                                 cutune__cache_visit_fn visit, void *user)
{
    if (!cache)
        return CUTUNE_ERR_INVALID_ARGUMENT;
    cache->errmsg[0] = '\0';
    cache->warning[0] = '\0';
    if (!visit)
        return fail(cache, CUTUNE_ERR_INVALID_ARGUMENT, "no visitor given");
    record_visit rv = {visit, user};
    if (paths)
        return scan_paths(cache, paths, n_paths, record_visit_entry, &rv);
    if (!cache->dir)
        return fail(cache, CUTUNE_ERR_INVALID_ARGUMENT,
                    "the cache has no directory (open failed)");
    int missing;
    return scan_dir(cache, record_visit_entry, &rv, &missing);
}

cutune_status cutune__cache_lookup_default(cutune_cache *cache,
                                           const cutune_cache_query *query,
                                           const cutune_cache_record **record,
                                           double *avg_relative,
                                           size_t *devices)
{
    *record = NULL;
    cache->errmsg[0] = '\0';
    entry_free(&cache->found);
    if (!cache->dir)
        return fail(cache, CUTUNE_ERR_INVALID_ARGUMENT,
                    "the cache has no directory (open failed)");
    lookup_state st;
    memset(&st, 0, sizeof st);
    st.query = query;
    st.default_only = 1;
    st.arch = SIZE_MAX;
    int missing = 0;
    cutune_status status = scan_lookup(cache, &st, &missing);
    if (status == CUTUNE_OK && st.no_memory)
        status = fail_memory(cache);
    size_t pick = SIZE_MAX;
    if (status == CUTUNE_OK && st.n_others > 0 &&
        (pick = pick_default(&st, avg_relative, devices)) == SIZE_MAX)
        status = fail_memory(cache);
    if (status == CUTUNE_OK && pick == SIZE_MAX)
        status = fail(cache, CUTUNE_ERR_NOT_FOUND,
                      "no cache record for problem \"%s\" in %s",
                      query->problem_name, cache->dir);
    if (status == CUTUNE_OK) {
        cache->found = st.others[pick];
        memset(&st.others[pick], 0, sizeof st.others[pick]);
        *record = &cache->found.record;
    }
    lookup_state_free(&st);
    return status;
}

cutune_status cutune__cache_write_file(cutune_cache *cache, const char *path,
                                       const char *data, size_t len)
{
    size_t plen = strlen(path);
    const char *slash = strrchr(path, '/');
    size_t dlen = slash ? (size_t)(slash - path) : 0;
    char *tmp = malloc(plen + 64);
    char *dir = malloc(dlen + 2);
    if (!tmp || !dir) {
        free(tmp);
        free(dir);
        return fail_memory(cache);
    }
    if (slash) {
        memcpy(dir, path, dlen);
        dir[dlen] = '\0';
        if (dlen == 0)
            memcpy(dir, "/", 2);
    } else {
        memcpy(dir, ".", 2);
    }
    /* A dot file beside the target: readers of cache directories skip it,
     * and rename() within one directory is atomic. */
    snprintf(tmp, plen + 64, "%.*s.%s.tmp-%ld", (int)(slash ? dlen + 1 : 0),
             path, slash ? slash + 1 : path, (long)getpid());
    cutune_status status = make_dir(cache, dir);
    if (status != CUTUNE_OK)
        goto out;
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        status = fail_sys(cache, errno, "create", tmp);
        goto out;
    }
    for (size_t off = 0; off < len;) {
        ssize_t w = write(fd, data + off, len - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            status = fail_sys(cache, w < 0 ? errno : EIO, "write", tmp);
            break;
        }
        off += (size_t)w;
    }
    if (status == CUTUNE_OK && fsync(fd) != 0)
        status = fail_sys(cache, errno, "sync", tmp);
    if (close(fd) != 0 && status == CUTUNE_OK)
        status = fail_sys(cache, errno, "close", tmp);
    if (status == CUTUNE_OK && rename(tmp, path) != 0)
        status = fail_sys(cache, errno, "rename into", path);
    if (status != CUTUNE_OK)
        unlink(tmp);
    else
        sync_dir(dir);
out:
    free(tmp);
    free(dir);
    return status;
}
