/* The kernel source's hash for a problem loaded for its space only. */
#ifndef CUTUNE_TUNER_SOURCE_HASH_H
#define CUTUNE_TUNER_SOURCE_HASH_H

#include <stddef.h>

#include "problem.h"

/* Sets p->source_hash to what a full load would give: the hash of
 * `builtin` (a built-in template's source, `builtin_len` bytes) when not
 * NULL, else of the file `kernel_file` (relative to `dir` unless
 * absolute) when it can be read. Leaves it "" otherwise: a record made
 * from such a problem (by `cutune simulate`) then says it cannot be
 * compared with a source, rather than that the source changed. Never
 * fails the load: the kernel is not needed for the space. */
void cutune__problem_hash_kernel(cutune_problem *p, const char *kernel_file,
                                 const char *dir, const char *builtin,
                                 size_t builtin_len);

#endif
