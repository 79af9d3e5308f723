/* Named values for "none" in search/: both are SIZE_MAX, so that a sentinel
 * compares above every real index or count, and say which of the two
 * meanings a site has. Arithmetic on SIZE_MAX (overflow checks, saturation)
 * keeps the bare name.
 */
#ifndef CUTUNE_SEARCH_NONE_H
#define CUTUNE_SEARCH_NONE_H

#include <stdint.h>

/* No index, no configuration, not found. */
#define CUTUNE__NONE SIZE_MAX

/* No limit on a count (an evaluation budget, a cap). */
#define CUTUNE__UNLIMITED SIZE_MAX

#endif
