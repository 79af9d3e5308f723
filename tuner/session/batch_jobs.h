/* Which configurations a batch compiles, and in what order. Works without
 * a GPU. */
#ifndef CUTUNE_TUNER_BATCH_JOBS_H
#define CUTUNE_TUNER_BATCH_JOBS_H

#include <stddef.h>

/* What a strategy would propose next should configuration `index` turn
 * out the fastest (cutune__search_ahead); up to `cap` into `out`. */
typedef size_t (*cutune__ahead_fn)(void *ctx, size_t index, size_t *out,
                                   size_t cap);

/* The compile jobs of a batch of n proposals, in the order the pool
 * starts them: the proposals in order, those with skip[i] set (answered
 * without compiling) left out, each of the first n_ahead compiled ones
 * followed by up to `each` configurations `ahead` names for it (none that
 * the batch proposes or the list already holds: a compile for a later
 * batch, which the binary cache keeps). `jobs` holds n + n_ahead * each;
 * job_of[i] is proposal i's place in it (unset where skipped). Returns
 * how many jobs there are; *named counts those `ahead` added. `skip` and
 * `ahead` may be NULL; `each` is at most 16. */
size_t cutune__batch_jobs(const size_t *proposals, size_t n,
                          const unsigned char *skip, size_t n_ahead,
                          size_t each, cutune__ahead_fn ahead, void *ctx,
                          size_t *jobs, size_t *job_of, size_t *named);

#endif
