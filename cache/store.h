/* Internals of the per-device cache that the rest of cache/ (merge, export,
 * list) builds on: where a device's records go, and a walk over every valid
 * record of a cache directory. The file format is described at the top of
 * store.c. */
#ifndef CUTUNE_CACHE_STORE_H
#define CUTUNE_CACHE_STORE_H

#include <stddef.h>

#include "cutune/cutune.h"

/* The "cutune_cache" value written in every line. Readers skip lines with
 * any other value, so a newer format is never misread by an older cutune. */
#define CUTUNE__CACHE_FORMAT 1

/* Room for any name cutune__cache_file_name() makes, NUL included. */
#define CUTUNE__CACHE_FILE_NAME_MAX 96

/* Writes the name (no directory) of the file that holds `device`'s records
 * into `buf`, e.g. "nvidia-h100-80gb-hbm3-1a2b3c4d.jsonl". Returns 0 on
 * success, -1 when `size` is too small (buf then holds ""). */
int cutune__cache_file_name(const cutune_device *device, char *buf,
                            size_t size);

/* Called once per valid record, files in name order and lines in file
 * order. `record` and `path` are borrowed for the duration of the call.
 * A nonzero return stops the walk (cutune__cache_scan still returns
 * CUTUNE_OK). */
typedef int (*cutune__cache_visit_fn)(void *user,
                                      const cutune_cache_record *record,
                                      const char *path, size_t line);

/* Visits every record of every *.jsonl file of the cache's directory. A
 * missing directory has no records (CUTUNE_OK, nothing visited). Lines that
 * are skipped are counted in cutune_cache_skipped_lines(). */
cutune_status cutune__cache_scan(cutune_cache *cache,
                                 cutune__cache_visit_fn visit, void *user);

#endif
