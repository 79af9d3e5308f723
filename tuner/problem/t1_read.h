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

/* "a=1, b=2" for value indices v[] (one per parameter), cut to outlen. */
void cutune__t1_config_text(const cutune_problem *p, const uint32_t *v,
                            char *out, size_t outlen);

/* A T1 file read into a cutune_problem_spec, which
 * cutune__problem_build makes into the problem (problem_spec.c): the
 * spec's strings point into the JSON document or into memory the draft
 * owns until the build is over. */
typedef struct cutune__t1_draft {
    cutune_problem_spec spec;
    const cutune_problem_options *opt;
    cutune_tunable *tunables; /* spec.tune_params, writable */
    char *source_hash;        /* a KernelFile's (headers included) */
    void **owned;             /* freed by cutune__t1_draft_free */
    size_t n_owned;
    cutune__value *lists; /* evaluated Values lists, cleared by it */
    size_t n_lists;
} cutune__t1_draft;

/* Zeroed memory the draft frees; NULL after a message. */
void *cutune__t1_alloc(cutune_problem *p, cutune__t1_draft *d, size_t n,
                       size_t size);
/* Hands a malloc'ed block to the draft (NULL: out of memory, said). */
void *cutune__t1_keep(cutune_problem *p, cutune__t1_draft *d, void *ptr);
void cutune__t1_draft_free(cutune__t1_draft *d);
/* A JSON number or string as expression text (numbers written as their
 * literal, kept by the draft); NULL after a message naming `field`. */
const char *cutune__t1_field_text(cutune_problem *p, cutune__t1_draft *d,
                                  json_t *j, const char *field,
                                  cutune_status *st);
/* Evaluates a T1 expression field (Size, FillValue) as
 * cutune__spec_eval does; non-zero after a message naming `field`. */
cutune_status cutune__t1_eval_field(cutune_problem *p, cutune__t1_draft *d,
                                    json_t *j, const char *field,
                                    cutune__value *out);

/* The sections, each into the draft. */
cutune_status cutune__t1_parse_space(cutune_problem *p, cutune__t1_draft *d,
                                     json_t *root);
cutune_status cutune__t1_parse_problem_size(cutune_problem *p,
                                            cutune__t1_draft *d, json_t *root);
/* KernelSpecification's launch geometry (GlobalSizeType, LocalSize,
 * GlobalSize, GridDiv*): part of parse_kernel, and read alone for a
 * problem loaded for its space, whose seed start needs threads per block. */
cutune_status cutune__t1_parse_launch(cutune_problem *p, cutune__t1_draft *d,
                                      json_t *ks);
cutune_status cutune__t1_parse_kernel(cutune_problem *p, cutune__t1_draft *d,
                                      json_t *root, const char *dir,
                                      const cutune__template *builtin);
/* A built-in template's source as NVRTC gets it: the embedded prelude in
 * place of its `#include "cutune_prelude.cuh"` line. Malloc'ed (the
 * caller frees), `*len` bytes; NULL when memory ran out. */
char *cutune__t1_template_source(const cutune__template *t, size_t *len);
cutune_status cutune__t1_parse_args(cutune_problem *p, cutune__t1_draft *d,
                                    json_t *ks, const char *dir);
cutune_status cutune__t1_parse_references(cutune_problem *p,
                                          cutune__t1_draft *d, json_t *refs,
                                          const char *dir);
cutune_status cutune__t1_parse_extensions(cutune_problem *p,
                                          cutune__t1_draft *d, json_t *root);
cutune_status cutune__t1_parse_budget(cutune_problem *p, cutune__t1_draft *d,
                                      json_t *root);
cutune_status cutune__t1_parse_search(cutune_problem *p, cutune__t1_draft *d,
                                      json_t *root);

#endif
