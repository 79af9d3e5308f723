/* A T1 problem's kernel source on disk: read only what can be a CUDA
 * source file, tell CUDA from HIP and OpenCL, and follow the quoted
 * #includes it makes, so that a header's change is a source change.
 * Internal to the tuner. */
#ifndef CUTUNE_TUNER_KERNEL_SOURCE_H
#define CUTUNE_TUNER_KERNEL_SOURCE_H

#include <stddef.h>
#include <stdint.h>

/* Largest kernel source (or header, or DataSource) read: a T1 file that
 * names /dev/zero or a multi-gigabyte file must fail at once, not when
 * memory runs out. Sources are kilobytes; binary data can be large. */
#define CUTUNE__MAX_SOURCE_BYTES (16u << 20)
#define CUTUNE__MAX_DATA_BYTES   (4ull << 30)

/* Reads the regular file `path` whole (NUL-terminated) when it holds at
 * most `max_bytes`. Returns 0, or -1 with a message (no path in it: the
 * caller names the field) in err. The caller frees *data. */
int cutune__read_regular_file(const char *path, uint64_t max_bytes,
                              char **data, size_t *len, char *err,
                              size_t errlen);

typedef enum cutune__source_language {
    CUTUNE__SRC_CUDA = 0,
    CUTUNE__SRC_HIP,
    CUTUNE__SRC_OPENCL
} cutune__source_language;

/* What language a kernel source is in, by its file name's extension and
 * then by what it includes or declares; *why says what gave it away (a
 * static string). CUDA when nothing says otherwise. */
cutune__source_language cutune__source_language_of(const char *path,
                                                   const char *text,
                                                   const char **why);

/* Hash of `text` and, recursively, of every file its `#include "..."`
 * lines name that exists in the including file's folder or one of
 * `dirs`. Includes that are not found are NVRTC's to report. */
uint64_t cutune__source_hash(const char *text, size_t len,
                             const char *const *dirs, size_t n_dirs);

#endif
