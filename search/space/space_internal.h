/* What the files of the search space share and nothing else sees: the
 * space itself and the builder that constructs it (space.h has the
 * interface). One file per step: space_build.c (cutune__space_create),
 * space_conditions.c (conditions prepared), space_order.c (the order
 * parameters are bound in), space_enum.c (enumeration, conditions checked,
 * the lexicographic numbering) and space_query.c (lookups on a built space).
 */
#ifndef CUTUNE_SEARCH_SPACE_INTERNAL_H
#define CUTUNE_SEARCH_SPACE_INTERNAL_H

#include "space.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__GNUC__)
#define CUTUNE__SPACE_PRINTF_LIKE(f, a) __attribute__((format(printf, f, a)))
#else
#define CUTUNE__SPACE_PRINTF_LIKE(f, a)
#endif

struct cutune__space {
    size_t n_params;
    char **names;           /* n_params, owned */
    cutune__value **values; /* n_params arrays, owned */
    size_t *n_values;
    double cartesian;
    uint32_t *configs; /* n_valid * n_params, lexicographic */
    size_t n_valid;
};

/* One condition prepared for the enumeration. Where every name it reads is
 * a numeric parameter or a constant, `prog` is its compiled program, run
 * on `slots` with the parameters' values written in; otherwise, and
 * wherever the program is undecided, the tree evaluator runs on `vars`,
 * bound once for constants and rebound (shallow copies, nothing owned)
 * from the current configuration for parameters. */
typedef struct prepared_condition {
    const cutune__expr *expr;
    size_t index; /* position in the caller's array */
    size_t n_names;
    cutune__value *vars;     /* n_names */
    size_t *param_of;        /* n_names; CUTUNE__NONE for a constant */
    cutune__expr_prog *prog; /* NULL: the tree evaluator only */
    cutune__slot *slots;
    uint32_t *bound; /* n_bound pairs: slot, parameter */
    size_t n_bound;
    /* The truth of the condition per combination of its parameters' value
     * indices, filled the first time enumeration meets the combination
     * (0 not yet, 1 false, 2 true): a condition of a few parameters is met
     * again under every combination of the others. NULL where the
     * combinations exceed MEMO_MAX. */
    unsigned char *memo;
    uint32_t *memo_index; /* n_memo pairs: parameter, multiplier */
    size_t n_memo;
    /* Steps the tree evaluator may still take for this condition over the
     * whole enumeration (CUTUNE__EXPR_SPACE_STEPS at the start). */
    size_t steps_left;
} prepared_condition;

#define MEMO_MAX ((size_t)1 << 16)

typedef struct builder {
    cutune__space *s;
    prepared_condition *conds; /* in the caller's order */
    size_t n_conds;
    prepared_condition **by_level; /* by the depth they are checked at */
    size_t *level_start;           /* n_params + 2 offsets into by_level */
    size_t capacity;               /* configs allocated, in configurations */
    size_t *order;                 /* the parameter bound at each depth */
    size_t *depth_of;              /* the depth each parameter is bound at */
    cutune__vtype *ptype; /* per parameter: the type of all its values,
                             or NONE when they are not numbers of one
                             type */
    cutune__slot **pslot; /* per parameter and value, where typed */
    /* Where the cartesian size fits in 64 bits, enumeration records each
     * valid configuration as its rank in the cartesian product (8 bytes,
     * whatever the parameter count); sorting and decoding the ranks gives
     * the configurations in lexicographic order. */
    uint64_t *stride; /* per parameter; NULL: record rows */
    uint64_t *keys;
    uint64_t visits;     /* partial configurations checked */
    uint64_t max_visits; /* 0: no limit */
    int stopped;         /* the enumeration hit max_visits */
} builder;

/* Functions one file lends the others, by the file that defines them;
 * each is described at its definition. */

/* space_build.c */
void cutune__space_set_error(cutune__space_error *err, size_t condition,
                             const cutune__expr_error *expr, const char *fmt,
                             ...) CUTUNE__SPACE_PRINTF_LIKE(4, 5);

/* space_conditions.c */
void cutune__space_free_conditions(prepared_condition *conds, size_t n);
int cutune__space_prepare_params(builder *b);
void cutune__space_free_params(builder *b);
int cutune__space_prepare_conditions(builder *b,
                                     const cutune__expr *const *conditions,
                                     size_t n_conditions,
                                     const cutune__constant *constants,
                                     size_t n_constants,
                                     cutune__space_error *err);
int cutune__space_assign_levels(builder *b);

/* space_enum.c */
int cutune__space_check_condition(const builder *b, prepared_condition *pc,
                                  const uint32_t *cfg,
                                  cutune__space_error *err);
int cutune__space_record(builder *b, const uint32_t *cfg,
                         cutune__space_error *err);
int cutune__space_prepare_keys(builder *b);
int cutune__space_enumerate(builder *b, cutune__space_error *err);
int cutune__space_decode_keys(builder *b, int sorted);
int cutune__space_sort_configs(cutune__space *s);

/* space_order.c */
void cutune__space_choose_order(builder *b);

#endif
