/* Reading a whole input file that may be gzip-compressed, with a limit on
 * its decompressed size, and naming a cut-short gzip stream as such. */
#ifndef CUTUNE_TUNER_INFLATE_H
#define CUTUNE_TUNER_INFLATE_H

#include <stddef.h>

#include "cutune/cutune.h"

/* The environment variable that raises (or lowers) the limit, in MiB. */
#define CUTUNE__MAX_INPUT_ENV "CUTUNE_MAX_INPUT_MB"
/* The limit when the variable is unset: over ten times the largest
 * published T4 file as text (dedispersion_milo_A100, 19 MB). */
#define CUTUNE__MAX_INPUT_MB_DEFAULT 256

/* The most MiB the variable may name (1 TiB). */
#define CUTUNE__MAX_INPUT_MB_MAX 1048576

/* The limit in bytes into *bytes: $CUTUNE_MAX_INPUT_MB MiB, the default
 * when it is unset; CUTUNE_ERR_INVALID_ARGUMENT, naming the variable and
 * value in `err`, when it is not a whole number from 1 to
 * CUTUNE__MAX_INPUT_MB_MAX. */
cutune_status cutune__max_input_bytes(size_t *bytes, char *err, size_t errlen);

/* Reads `path` whole (through zlib when it starts with the gzip magic,
 * else as it is) into a NUL-terminated buffer the caller frees. Refuses,
 * with CUTUNE_ERR_LIMIT and a message naming the limit and the variable
 * that raises it, an input larger than `limit` bytes (0: the limit of
 * cutune__max_input_bytes()) decompressed, as soon as the limit is passed
 * rather than after inflating it whole. (The gzip trailer's size is not
 * trusted: in a cut-short file those bytes are arbitrary.) A gzip stream that
 * ends early is CUTUNE_ERR_PARSE "truncated". Messages name the file and go to
 * `err`. */
cutune_status cutune__read_input(const char *path, size_t limit, char **data,
                                 size_t *len, char *err, size_t errlen);

#endif
