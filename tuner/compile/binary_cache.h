/* On-disk cache of NVRTC results, so a repeated tune skips compilation.
 *
 * An entry is keyed by everything that decides the binary: the kernel
 * source, the NVRTC options (the -D values and the architecture among
 * them) and the NVRTC version. The file name is a 64-bit hash of the key;
 * the whole key is stored in the file and compared on read, so a hash
 * collision is a miss, never a wrong binary. Failed compilations are kept
 * too (with NVRTC's log), since they fail again the same way.
 *
 * Safe for concurrent users, in threads and processes: an entry is written
 * to a temporary file and renamed into place, so readers see a whole entry
 * or none. The total size is bounded: when it grows past the bound, the
 * least recently used entries (by modification time, refreshed on every
 * hit) are removed. Any failure of the cache is a miss; it never fails a
 * compilation.
 */
#ifndef CUTUNE_TUNER_BINARY_CACHE_H
#define CUTUNE_TUNER_BINARY_CACHE_H

#include <stddef.h>
#include <stdint.h>

typedef struct cutune__binary_cache cutune__binary_cache;

/* `dir` is created when missing. `max_bytes` 0 means the default
 * (CUTUNE__BINARY_CACHE_DEFAULT_MAX). NULL when memory ran out. */
#define CUTUNE__BINARY_CACHE_DEFAULT_MAX ((uint64_t)1 << 30)
cutune__binary_cache *cutune__binary_cache_open(const char *dir,
                                                uint64_t max_bytes);
void cutune__binary_cache_close(cutune__binary_cache *c);

/* The key of one compilation: source, options in order, NVRTC version.
 * Returns a malloc'ed key text; NULL when memory ran out. */
char *cutune__binary_cache_key(const char *source, char *const *options,
                               size_t n_options, const char *nvrtc_version);

/* Looks `key` up. On a hit returns 1 with *ok (1: a cubin, 0: a failed
 * compilation) and *data / *size (the cubin, or NVRTC's log with its
 * NUL) in a malloc'ed buffer the caller frees. 0 on a miss. */
int cutune__binary_cache_get(cutune__binary_cache *c, const char *key, int *ok,
                             char **data, size_t *size);

/* Stores a result; failures are silent (the next run compiles again). */
void cutune__binary_cache_put(cutune__binary_cache *c, const char *key, int ok,
                              const void *data, size_t size);

/* Removes least recently used entries until the total is within the
 * bound. Called by put now and then; exposed for tests. */
void cutune__binary_cache_evict(cutune__binary_cache *c);

#endif
