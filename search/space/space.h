/* The search space: every configuration of the tunable parameters that
 * satisfies all conditions.
 *
 * A configuration is an array of value indices, one per parameter
 * (config[p] indexes the values of parameter p). Valid configurations are
 * numbered 0..size-1 in lexicographic order of their value indices, which
 * makes index <-> configuration both cheap.
 *
 * Construction binds parameters in order and checks each condition as soon
 * as every parameter it names is bound, so a branch that fails is cut at
 * once rather than enumerated.
 *
 * A built space is immutable: all const functions are thread-safe.
 */
#ifndef CUTUNE_SEARCH_SPACE_H
#define CUTUNE_SEARCH_SPACE_H

#include <stddef.h>
#include <stdint.h>

#include <gsl/gsl_rng.h>

#include "expr/expr.h"
#include "expr/none.h"

typedef struct cutune__param {
    const char *name;
    const cutune__value *values; /* borrowed during create; copied */
    size_t n_values;
} cutune__param;

/* A name conditions may read that is not a parameter (`ProblemSize`). */
typedef struct cutune__constant {
    const char *name;
    const cutune__value *value;
} cutune__constant;

typedef struct cutune__space cutune__space;

typedef struct cutune__space_error {
    size_t condition; /* index of the failing condition, or CUTUNE__NONE */
    cutune__expr_error expr;
    char message[320];
} cutune__space_error;

/* Builds the space. `conditions` are borrowed during the call. Fails (NULL,
 * *err filled) when a condition names something that is neither a
 * parameter nor a constant, or when evaluating one fails. An empty space is
 * not a failure: check cutune__space_size(). */
cutune__space *
cutune__space_create(const cutune__param *params, size_t n_params,
                     const cutune__expr *const *conditions,
                     size_t n_conditions, const cutune__constant *constants,
                     size_t n_constants, cutune__space_error *err);
/* The same with a bound on the partial configurations enumeration may
 * check (0: none); past it, creation fails with a message saying so.
 * cutune__space_create uses CUTUNE__SPACE_VISITS_DEFAULT, about 10 s of
 * enumeration. */
#define CUTUNE__SPACE_VISITS_DEFAULT 100000000ull
cutune__space *cutune__space_create_limited(
    const cutune__param *params, size_t n_params,
    const cutune__expr *const *conditions, size_t n_conditions,
    const cutune__constant *constants, size_t n_constants, uint64_t max_visits,
    cutune__space_error *err);
void cutune__space_free(cutune__space *s);

size_t cutune__space_param_count(const cutune__space *s);
const char *cutune__space_param_name(const cutune__space *s, size_t p);
size_t cutune__space_value_count(const cutune__space *s, size_t p);
const cutune__value *cutune__space_value(const cutune__space *s, size_t p,
                                         size_t v);
/* Whether parameter p is a thread block dimension (Kernel Tuner's and
 * cutune's naming: block_size_x/y/z): launch geometry, whose largest
 * value is an edge of the space where optima sit more often than a random
 * start would find. */
int cutune__space_is_block_param(const cutune__space *s, size_t p);
/* The block edge of configuration `from`: every block dimension at its
 * largest value (largest != 0) or its smallest, the rest as they are, or
 * the valid configuration nearest to that. CUTUNE__NONE when `from` is there
 * already or the space has no block dimension. `config` is scratch of
 * cutune__space_param_count() entries. */
size_t cutune__space_block_edge(const cutune__space *s, size_t from,
                                int largest, uint32_t *config);
/* Index of the parameter called `name`, or CUTUNE__NONE. */
size_t cutune__space_find_param(const cutune__space *s, const char *name);

double cutune__space_cartesian_size(const cutune__space *s);
size_t cutune__space_size(const cutune__space *s);

/* Borrowed array of cutune__space_param_count() value indices. */
const uint32_t *cutune__space_config(const cutune__space *s, size_t index);
/* Returns 1 and sets *index when `config` is valid, else 0. */
int cutune__space_index_of(const cutune__space *s, const uint32_t *config,
                           size_t *index);

/* Neighbours of configuration `index` that are valid, written to `out`
 * (up to `cap`); returns how many exist (may exceed cap).
 * ADJACENT: one parameter moved one step in its value list.
 * ANY: one parameter changed to any other of its values. */
typedef enum cutune__neighbour_kind {
    CUTUNE__NEIGHBOUR_ADJACENT = 0,
    CUTUNE__NEIGHBOUR_ANY = 1
} cutune__neighbour_kind;

size_t cutune__space_neighbours(const cutune__space *s, size_t index,
                                cutune__neighbour_kind kind, size_t *out,
                                size_t cap);

/* A uniformly random valid configuration. */
size_t cutune__space_random(const cutune__space *s, gsl_rng *rng);

/* The valid configuration nearest to `config` (which need not be valid):
 * fewest parameters differing, then smallest total index distance; ties go
 * to the lowest index. CUTUNE__NONE when the space is empty. */
size_t cutune__space_nearest(const cutune__space *s, const uint32_t *config);

#endif
