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
 *
 * Layout. This file holds the handle, its errors and appending. The
 * record's fields are checked and converted in store_fields.c, encoded in
 * store_encode.c and decoded in store_decode.c; file names, directories
 * and atomic writes are in store_io.c; walking a cache directory is
 * store_scan.c and choosing a record for a query store_lookup.c.
 */
#include "store_internal.h"

/* ------------------------------------------------------------------ */
/* Errors                                                               */

/* strerror() is not thread-safe, and which strerror_r() we get depends on
 * the feature macros of the build. */
const char *cutune__store_errno_text(int err, char *buf, size_t size)
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
cutune_status cutune__cache_fail_sys(cutune_cache *cache, int err,
                                     const char *what, const char *path)
{
    char buf[256];
    return cutune__cache_fail(cache, CUTUNE_ERR_IO, "cannot %s %s: %s", what,
                              path,
                              cutune__store_errno_text(err, buf, sizeof buf));
}

cutune_status cutune__store_fail_memory(cutune_cache *cache)
{
    return cutune__cache_fail(cache, CUTUNE_ERR_NO_MEMORY, "out of memory");
}

/* ------------------------------------------------------------------ */
/* Public API                                                           */

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
        return cutune__cache_fail(
            cache, CUTUNE_ERR_INVALID_ARGUMENT,
            "no cache directory: none was given and neither "
            "CUTUNE_CACHE_DIR nor HOME is set");

    /* Trailing slashes would only double up in the paths of messages. */
    size_t blen = strlen(base), slen = strlen(suffix);
    while (blen > 0 && base[blen - 1] == '/' && (blen > 1 || slen > 0))
        blen--;
    cache->dir = malloc(blen + slen + 1);
    if (!cache->dir)
        return cutune__store_fail_memory(cache);
    memcpy(cache->dir, base, blen);
    memcpy(cache->dir + blen, suffix, slen + 1);
    return CUTUNE_OK;
}

void cutune_cache_close(cutune_cache *cache)
{
    if (!cache)
        return;
    cutune__store_entry_free(&cache->found);
    cutune__store_memo_free(cache->memo);
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

cutune_status cutune__cache_start(cutune_cache *cache)
{
    if (!cache)
        return CUTUNE_ERR_INVALID_ARGUMENT;
    cache->errmsg[0] = '\0';
    if (!cache->dir)
        return cutune__cache_fail(cache, CUTUNE_ERR_INVALID_ARGUMENT,
                                  "the cache has no directory (open failed)");
    return CUTUNE_OK;
}

cutune_status cutune_cache_append(cutune_cache *cache,
                                  const cutune_cache_record *record)
{
    cutune_status status = cutune__cache_start(cache);
    if (status != CUTUNE_OK)
        return status;
    if (!record)
        return cutune__cache_fail(cache, CUTUNE_ERR_INVALID_ARGUMENT,
                                  "no record given");

    status = cutune__store_check_record(cache, record);
    if (status != CUTUNE_OK)
        return status;
    char *line = NULL;
    size_t len = 0;
    status = cutune__store_encode_record(cache, record, &line, &len);
    if (status != CUTUNE_OK)
        return status;

    char name[CUTUNE__CACHE_FILE_NAME_MAX];
    char *path = NULL;
    status = cutune__store_make_dir(cache, cache->dir);
    if (status == CUTUNE_OK &&
        cutune__cache_file_name(&record->device, name, sizeof name) != 0)
        status = cutune__cache_fail(cache, CUTUNE_ERR_INVALID_ARGUMENT,
                                    "cannot name the cache file of device %s",
                                    record->device.name);
    if (status == CUTUNE_OK &&
        !(path = cutune__store_path_join(cache->dir, name)))
        status = cutune__store_fail_memory(cache);
    if (status == CUTUNE_OK)
        status = cutune__store_write_line(cache, path, line, len);
    free(path);
    free(line);
    return status;
}

cutune_status cutune_cache_check_writable(cutune_cache *cache)
{
    cutune_status status = cutune__cache_start(cache);
    if (status == CUTUNE_OK)
        status = cutune__store_make_dir(cache, cache->dir);
    if (status != CUTUNE_OK)
        return status;
    /* Only creating a file tells: a directory's mode says nothing of a
     * read-only mount, and root writes through mode 0555. A dot file,
     * which readers never scan. */
    char *probe = cutune__store_path_join(cache->dir, ".writable-XXXXXX");
    if (!probe)
        return cutune__store_fail_memory(cache);
    int fd = mkstemp(probe);
    if (fd < 0) {
        status = cutune__cache_fail_sys(cache, errno, "write to", cache->dir);
    } else {
        close(fd);
        unlink(probe);
    }
    free(probe);
    return status;
}
