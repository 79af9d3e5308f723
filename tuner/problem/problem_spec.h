/* The constructor's pieces (problem_spec.c, problem_spec_kernel.c).
 * Internal to tuner/problem/. */
#ifndef CUTUNE_TUNER_PROBLEM_SPEC_H
#define CUTUNE_TUNER_PROBLEM_SPEC_H

#include "problem.h"

/* Parses `text` (NULL: "missing") as an expression; NULL after a message
 * naming `field`. */
cutune__expr *cutune__problem_parse(cutune_problem *p, const char *text,
                                    const char *field, cutune_status *st);
/* Every free name of `e` is a tunable; else a message naming `field`. */
cutune_status cutune__problem_check_names(cutune_problem *p,
                                          const cutune__expr *e,
                                          const char *field);

/* The options' problem size against the spec's: as many dimensions at
 * most, each positive. */
cutune_status
cutune__problem_check_size_option(cutune_problem *p,
                                  const cutune_problem_spec *spec,
                                  const cutune_problem_options *opt);

/* The kernel's part of a spec: source, options, launch geometry, the
 * per-launch figures (problem_spec_kernel.c). */
cutune_status cutune__problem_build_kernel(cutune_problem *p,
                                           const cutune_problem_spec *spec,
                                           const char *source_hash);
/* The launch geometry alone (part of build_kernel): a problem loaded for
 * its space only needs it too, for the threads per block that place an
 * occupancy suggestion in a space whose LocalSize is an expression. */
cutune_status cutune__problem_build_geometry(cutune_problem *p,
                                             const cutune_problem_spec *spec);
cutune_status cutune__problem_build_args(cutune_problem *p,
                                         const cutune_problem_spec *spec);
cutune_status cutune__problem_build_answers(cutune_problem *p,
                                            const cutune_problem_spec *spec);
/* With the space built: every expression of the geometry evaluates. */
cutune_status cutune__problem_check_geometry(cutune_problem *p);

#endif
