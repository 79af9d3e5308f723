/* The T1 reader's shared pieces: error and warning reporting, typed
 * access to JSON fields, and evaluating T1 expressions against a problem.
 * Each T1 section is read by its own file (t1_space.c, t1_args.c,
 * t1_kernel.c); problem.c puts them together. Internal to the tuner. */
#ifndef CUTUNE_TUNER_T1_READ_H
#define CUTUNE_TUNER_T1_READ_H

#include <jansson.h>

#include "embedded.h"
#include "problem.h"

#if defined(__GNUC__)
#define CUTUNE__PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define CUTUNE__PRINTF(a, b)
#endif

/* Sets the problem's message ("ORIGIN: ...") and returns st. */
cutune_status cutune__t1_fail(cutune_problem *p, cutune_status st,
                              const char *fmt, ...) CUTUNE__PRINTF(3, 4);
/* Adds a warning, once per distinct text. */
void cutune__t1_warn(cutune_problem *p, const char *fmt, ...)
    CUTUNE__PRINTF(2, 3);

/* Honoured keys pass; ignored ones and keys outside the schema become
 * warnings. Never refuses. */
cutune_status cutune__t1_check_known(cutune_problem *p, json_t *obj,
                                     const char *section,
                                     const char *const *known);
const char *cutune__t1_string(json_t *obj, const char *key);
/* "a string", "a number", ... for messages about a wrong type. */
const char *cutune__t1_json_kind(const json_t *j);
/* KernelSpecification.SimulationInput into p->simulation_input. */
cutune_status cutune__t1_parse_simulation_input(cutune_problem *p, json_t *ks,
                                                const char *dir);
/* A required string: NULL after a message saying missing or wrong type. */
const char *cutune__t1_need_string(cutune_problem *p, json_t *obj,
                                   const char *field, const char *key,
                                   cutune_status *st);

/* A JSON number or an expression string, parsed. */
cutune__expr *cutune__t1_parse_field(cutune_problem *p, json_t *j,
                                     const char *field, cutune_status *st);
/* Evaluates with parameters bound to their values in `config`, or to
 * their whole value lists when config is NULL; ProblemSize bound. */
int cutune__t1_eval_in(const cutune_problem *p, const cutune__expr *e,
                       const uint32_t *config, cutune__value *out, char *err,
                       size_t errlen);
int cutune__t1_eval_int(const cutune_problem *p, const cutune__expr *e,
                        const uint32_t *config, long long *out, char *err,
                        size_t errlen);
int cutune__t1_as_i64(const cutune__value *v, long long *out);
int cutune__t1_as_double(const cutune__value *v, double *out);

/* A data file named by the problem (DataSource), whole. */
cutune_status cutune__t1_read_file(cutune_problem *p, const char *path,
                                   char **data, size_t *len,
                                   const char *field);
/* Appends an NVRTC option; takes ownership of opt (NULL: out of memory). */
cutune_status cutune__t1_add_option(cutune_problem *p, char *opt);

/* "a=1, b=2" for value indices v[] (one per parameter), cut to outlen. */
void cutune__t1_config_text(const cutune_problem *p, const uint32_t *v,
                            char *out, size_t outlen);

/* The sections. */
cutune_status cutune__t1_parse_space(cutune_problem *p, json_t *root);
cutune_status cutune__t1_build_space(cutune_problem *p);
cutune_status cutune__t1_parse_problem_size(cutune_problem *p, json_t *root,
                                            const cutune_problem_options *o);
/* After the space is parsed: the names in a varying ProblemSize are
 * tunables, and no condition reads a ProblemSize that varies. */
cutune_status cutune__t1_check_problem_size(cutune_problem *p);
cutune_status cutune__t1_parse_kernel(cutune_problem *p, json_t *root,
                                      const char *dir,
                                      const cutune__template *builtin);
/* A built-in template's source as NVRTC gets it: the embedded prelude in
 * place of its `#include "cutune_prelude.cuh"` line. Malloc'ed (the
 * caller frees), `*len` bytes; NULL when memory ran out. */
char *cutune__t1_template_source(const cutune__template *t, size_t *len);
cutune_status cutune__t1_parse_arg(cutune_problem *p, json_t *ja, size_t i,
                                   const char *dir);
cutune_status cutune__t1_parse_references(cutune_problem *p, json_t *refs,
                                          const char *dir);
cutune_status cutune__t1_parse_extensions(cutune_problem *p, json_t *root);
cutune_status cutune__t1_parse_budget(cutune_problem *p, json_t *root);
cutune_status cutune__t1_parse_search(cutune_problem *p, json_t *root);

#endif
