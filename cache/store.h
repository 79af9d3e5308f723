/* Internals of the per-device cache that the rest of cache/ (merge, export,
 * list) builds on: where a device's records go, and a walk over every valid
 * record of a cache directory. The file format is described at the top of
 * store.c. */
#ifndef CUTUNE_CACHE_STORE_H
#define CUTUNE_CACHE_STORE_H

#include <stddef.h>

#include <jansson.h>

#include "cutune/cutune.h"

/* The "cutune_cache" value written in every line: 1 for a record tuned for
 * time, 2 for one of another objective (its "objective" field says
 * which), so that a cutune that knows only time refuses it instead of
 * taking it for a time record. Readers take versions 1 to
 * CUTUNE__CACHE_FORMAT and skip lines with any other value, so a newer
 * format is never misread by an older cutune. */
#define CUTUNE__CACHE_FORMAT      2
#define CUTUNE__CACHE_FORMAT_TIME 1

/* Room for any name cutune__cache_file_name() makes, NUL included. */
#define CUTUNE__CACHE_FILE_NAME_MAX 96

/* Writes the name (no directory) of the file that holds `device`'s records
 * into `buf`, e.g. "nvidia-h100-80gb-hbm3-1a2b3c4d.jsonl". Returns 0 on
 * success, -1 when `size` is too small (buf then holds ""). */
int cutune__cache_file_name(const cutune_device *device, char *buf,
                            size_t size);

/* Called once per valid record, files in name order and lines in file
 * order. `record`, `root` (the line's JSON object) and `path` are borrowed
 * for the duration of the call; json_incref(root) keeps the line. A
 * nonzero return stops the walk (cutune__cache_scan still returns
 * CUTUNE_OK). */
typedef int (*cutune__cache_visit_fn)(void *user,
                                      const cutune_cache_record *record,
                                      json_t *root, const char *path,
                                      size_t line);

/* Visits every record of `paths` (files read as they are, directories as
 * caches: their *.jsonl files), or of the cache's directory when `paths`
 * is NULL. A missing cache directory has no records; a missing path is an
 * error. Skipped lines are counted as for a lookup and the warning is
 * set. */
cutune_status cutune__cache_scan(cutune_cache *cache, const char *const *paths,
                                 size_t n_paths, cutune__cache_visit_fn visit,
                                 void *user);

/* The DEFAULT level alone, over every device's records of
 * query->problem_name (the query's device is ignored). The average
 * relative time and the number of devices that measured the winner go to
 * the last two arguments. *record is borrowed like a lookup's. */
cutune_status cutune__cache_lookup_default(cutune_cache *cache,
                                           const cutune_cache_query *query,
                                           const cutune_cache_record **record,
                                           double *avg_relative,
                                           size_t *devices);

/* Writes `data` to `path` as every output is written (fsio.h,
 * cutune__output_write: "-", links, FIFOs and devices, a dot file beside
 * a regular target renamed over it); the failure, naming the path, goes
 * to the handle. */
cutune_status cutune__cache_write_file(cutune_cache *cache, const char *path,
                                       const char *data, size_t len);

/* Error and warning text of the handle, for the rest of cache/; the
 * warning is replaced. */
cutune_status cutune__cache_fail(cutune_cache *cache, cutune_status status,
                                 const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
cutune_status cutune__cache_fail_sys(cutune_cache *cache, int err,
                                     const char *what, const char *path);
void cutune__cache_set_warning(cutune_cache *cache, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif
