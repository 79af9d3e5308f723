/* What a strategy remembers of the configurations it has proposed: which
 * are taken (proposed or evaluated), their objectives once reported, the
 * best so far, and a uniformly random untaken configuration in O(log n).
 * Shared by the strategies so that none of them proposes a configuration
 * twice. Not thread-safe; one per strategy state.
 */
#ifndef CUTUNE_SEARCH_HISTORY_H
#define CUTUNE_SEARCH_HISTORY_H

#include <stddef.h>
#include <stdint.h>

#include <gsl/gsl_rng.h>

#include "space/space.h"

typedef struct cutune__history {
    size_t n;
    unsigned char *taken; /* n: proposed or reported */
    unsigned char *done;  /* n: reported */
    double *objective;    /* n: valid where done; INFINITY for failures */
    size_t *tree;         /* Fenwick tree over untaken, n + 1 entries */
    size_t n_taken;
    size_t n_done;
    size_t best; /* CUTUNE__NONE until a finite objective arrives */
    double best_objective;
} cutune__history;

/* Returns 0, or -1 when memory ran out (nothing to free then). */
int cutune__history_init(cutune__history *h, size_t n);
void cutune__history_free(cutune__history *h);

/* Marks `index` taken; a no-op when it already is. */
void cutune__history_take(cutune__history *h, size_t index);
/* Makes a taken configuration that has no result untaken again (a
 * proposal that was not evaluated); a no-op otherwise. */
void cutune__history_release(cutune__history *h, size_t index);
/* Records a result (NaN is read as a failure). Takes the index too. */
void cutune__history_report(cutune__history *h, size_t index,
                            double objective);

static inline int cutune__history_is_taken(const cutune__history *h,
                                           size_t index)
{
    return index < h->n && h->taken[index];
}

/* A uniformly random untaken configuration, or CUTUNE__NONE when none is left.
 * It is not marked taken. */
size_t cutune__history_random_untaken(const cutune__history *h, gsl_rng *rng);
/* The k-th untaken configuration in index order (k < n - n_taken), or
 * CUTUNE__NONE. Not marked taken. */
size_t cutune__history_untaken_at(const cutune__history *h, size_t k);

/* The valid configuration nearest to `config` when it is untaken; else
 * one random parameter of `config` at a time is moved to a random value
 * (config is changed) and the nearest valid configuration tried again, up
 * to `tries` times. CUTUNE__NONE when every try landed on a taken one. */
size_t cutune__history_untaken_near(const cutune__history *h,
                                    const cutune__space *space,
                                    uint32_t *config, gsl_rng *rng, int tries);

/* Uniform in [0, n) for any n >= 1, also beyond the generator's range. */
size_t cutune__random_below(gsl_rng *rng, size_t n);

#endif
