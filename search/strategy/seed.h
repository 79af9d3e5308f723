/* Where a search starts: the one rule `cutune tune` and `cutune simulate`
 * (and the strategy benchmark) share, so that a replay runs exactly the
 * search a tune runs.
 *
 * With the occupancy API's suggestion (threads per block) the start is
 * the problem's default configuration with the block size nearest to the
 * suggestion: block_size_x set so that its threads times those of
 * block_size_y and block_size_z (as the default has them) come nearest,
 * in ratio, to the suggestion; or, where no parameter is named
 * block_size_x and the threads follow from other parameters, the
 * configuration whose threads per block (from `threads`) come nearest,
 * and among those the one that differs from the default in the fewest
 * parameters (then the lowest index), on spaces of at most
 * CUTUNE__SEED_SCAN_LIMIT configurations. Without a suggestion (a
 * recorded file carries none; the API could not answer) the start is the
 * default configuration itself. Always a valid configuration of the space
 * (the nearest valid one), or CUTUNE__NONE when the space has none or no
 * default is known.
 */
#ifndef CUTUNE_SEARCH_SEED_H
#define CUTUNE_SEARCH_SEED_H

#include <stddef.h>

#include "space/space.h"

#define CUTUNE__SEED_SCAN_LIMIT ((size_t)1 << 20)

typedef enum cutune__seed_source {
    CUTUNE__SEED_NONE = 0,     /* no start */
    CUTUNE__SEED_DEFAULT = 1,  /* the default configuration */
    CUTUNE__SEED_OCCUPANCY = 2 /* the default at the suggested block */
} cutune__seed_source;

/* Threads per block of configuration `index`, or 0 when unknown. */
typedef double (*cutune__threads_fn)(void *ctx, size_t index);

/* The start for space `s` with default configuration `def` (CUTUNE__NONE:
 * none) and the occupancy API's suggestion `block_size` (<= 0: none).
 * `threads` (may be NULL) serves spaces without block_size_x. Writes
 * where the start came from to *source when not NULL. Thread-safe. */
size_t cutune__seed_start(const cutune__space *s, size_t def, int block_size,
                          cutune__threads_fn threads, void *ctx,
                          cutune__seed_source *source);

/* "occupancy", "default" or "none". */
const char *cutune__seed_source_name(cutune__seed_source source);

#endif
