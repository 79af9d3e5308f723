/* A loaded tuning problem: what the T1 file says, resolved for one problem
 * size, with its search space. Internal to the tuner. */
#ifndef CUTUNE_TUNER_PROBLEM_H
#define CUTUNE_TUNER_PROBLEM_H

#include <stddef.h>
#include <stdint.h>

#include "cutune/cutune.h"
#include "dtype.h"
#include "expr/expr.h"
#include "space/space.h"
#include "strategy/seed.h"

/* One kernel argument, resolved for the problem size. */
typedef struct cutune__arg {
    char *name;
    int is_vector;
    cutune__dtype dtype;
    uint64_t count; /* elements (vectors) */
    cutune__fill fill;
    double fill_value; /* constant, or upper bound of random values;
                          for scalars, the value */
    uint64_t seed;
    int is_output; /* compared with the reference */
    int is_symbol; /* constant memory: copied into the __constant__
                      variable `name` where the module has one, and
                      passed as a parameter where the kernel takes
                      one */
    char *data;    /* FILL_BINARY: the DataSource's bytes */
    size_t data_size;
} cutune__arg;

/* Expected contents of an output argument (T1 ReferenceArguments). */
typedef struct cutune__reference {
    size_t arg;        /* the output argument it stands for */
    cutune__fill fill; /* CONSTANT, RANDOM or BINARY */
    double fill_value;
    uint64_t seed;
    char *data; /* BINARY: the file's bytes */
    size_t data_size;
    double atol; /* |out - ref| <= atol + rtol * |ref| */
    double rtol;
} cutune__reference;

struct cutune_problem {
    char *errmsg;
    char *origin;           /* the file path, or "built-in NAME" */
    char *simulation_input; /* T1 SimulationInput as a path, or NULL */
    char *name;
    char *kernel_name;
    char *source;
    size_t source_len;
    char source_hash[17];
    char **options; /* T1 CompilerOptions */
    size_t n_options;

    long long *problem_size; /* 0 in a dimension that varies */
    size_t n_problem_size;
    cutune__value problem_size_value; /* as a list, bound to ProblemSize */
    /* Per dimension: NULL where the size is fixed, else its expression
     * over the tunables, evaluated per configuration (Kernel Tuner's
     * problem_size="num_blocks"). NULL when no dimension varies. */
    cutune__expr **problem_size_exprs;

    size_t n_params;
    char **param_names;
    cutune__value **param_values;
    size_t *param_value_counts;
    char ***value_texts;    /* per parameter, per value */
    size_t *default_values; /* per parameter: index of its T1 Default */

    cutune__expr **conditions;
    size_t n_conditions;
    cutune__space *space;
    double space_seconds; /* wall time of building `space` */
    /* The default configuration's index (cutune__problem_default_config),
     * found once the space is built, so that asking never allocates. */
    size_t default_config;

    cutune__expr *local_size[3];
    cutune__expr *global_size[3];
    int global_in_blocks; /* GlobalSizeType CUDA: GlobalSize counts blocks */
    /* GridDivX/Y/Z (Kernel Tuner's grid_div_*): when any is given, the grid
     * is ceil(ProblemSize[d] / product of the entries' values), and a
     * dimension without one divides by its block size. An entry is a
     * parameter name, a number or an expression over the tunables. */
    int has_grid_div;
    cutune__expr **grid_div[3];
    size_t n_grid_div[3];
    int grid_div_given[3];
    unsigned shared_memory;

    cutune__arg *args;
    size_t n_args;

    cutune__expr *bytes_per_launch; /* extension; NULL when absent */
    cutune__expr *flops_per_launch; /* extension; NULL when absent */
    unsigned char *param_is_option; /* per parameter: its values are NVRTC
                                       options; NULL when none is */
    int space_only; /* loaded with cutune_problem_options.space_only */

    /* T1 Budget and Search; used when the caller sets none. 0/NULL: not
     * given. */
    size_t budget_evals;
    double budget_seconds;
    double budget_fraction;
    char *search_strategy;

    cutune__reference *refs; /* T1 ReferenceArguments; none: the default
                                configuration's output is the reference */
    size_t n_refs;

    /* What the loader accepted but does not act on, or had to stand in
     * for (ignored fields, a Default outside its Values): each said once,
     * for the caller to show. */
    char **warnings;
    size_t n_warnings;
    int builtin;              /* a built-in template: its warnings are cutune's
                                 own business, not shown */
    int kernel_tuner_defines; /* cutune_problem_spec.kernel_tuner_defines */
    int spec_names; /* made by cutune_problem_from_spec: messages name the
                       spec's fields, not T1's (cutune__problem_field) */
    unsigned long long max_space_visits; /* 0: the default */
};

/* The fields of a problem that messages name, as a T1 file calls them
 * or as cutune_problem_spec does (p->spec_names). */
typedef enum cutune__field {
    CUTUNE__F_PARAM,        /* tunable i */
    CUTUNE__F_PARAMS,       /* the tunables as a whole */
    CUTUNE__F_CONDITION,    /* condition i */
    CUTUNE__F_PROBLEM_SIZE, /* the list */
    CUTUNE__F_SIZE_AT,      /* dimension i */
    CUTUNE__F_LOCAL,        /* block size in dimension i */
    CUTUNE__F_GLOBAL,       /* global size in dimension i */
    CUTUNE__F_GRID_DIV,     /* dimension i, entry k */
    CUTUNE__F_BYTES,
    CUTUNE__F_FLOPS,
    CUTUNE__F_ARG,   /* argument i */
    CUTUNE__F_ANSWER /* answer (T1 reference) i */
} cutune__field;

/* The name of field `f` (indices i, k where it has them) into out. */
const char *cutune__problem_field(const cutune_problem *p, cutune__field f,
                                  size_t i, size_t k, char *out, size_t len);
/* A member of a field: `t1` in a T1 file, `spec` in a spec. */
const char *cutune__problem_member(const cutune_problem *p, const char *t1,
                                   const char *spec);

/* The one constructor: fills `p` (allocated, origin set, builtin set)
 * from `spec` as cutune_problem_from_spec documents. `source_hash`, when
 * not NULL, stands in for the hash of spec->source (a T1 KernelFile's
 * hash covers the headers it includes). */
cutune_status cutune__problem_build(cutune_problem *p,
                                    const cutune_problem_spec *spec,
                                    const cutune_problem_options *opt,
                                    const char *source_hash);

/* Evaluates `e` as a T1 Size or FillValue is, before a problem exists:
 * ProblemSize bound to the spec's (or the options') sizes, each tunable
 * to the list of its values. Returns 0, or -1 with a message. */
int cutune__spec_eval(const cutune_problem_spec *spec,
                      const cutune_problem_options *opt, const cutune__expr *e,
                      cutune__value *out, char *err, size_t errlen);

/* What cutune__problem_geometry returns besides 0: whose mistake it is,
 * so that no caller has to read it off the message. */
#define CUTUNE__GEOMETRY_OUT_OF_RANGE                                         \
    (-1) /* the configuration's: a block                                      \
            or grid CUDA cannot launch */
#define CUTUNE__GEOMETRY_BAD_FIELD                                            \
    (-2) /* the file's: a LocalSize,                                          \
            GlobalSize, GridDiv or                                            \
            ProblemSize expression that                                       \
            cannot be evaluated here */

/* Launch geometry of one configuration. Returns 0, or one of the above
 * with a message (out of memory: OUT_OF_RANGE). */
int cutune__problem_geometry(const cutune_problem *p, size_t config,
                             unsigned grid[3], unsigned block[3], char *err,
                             size_t errlen);

/* The problem size of one configuration (value indices `config`): the
 * fixed dimensions and the varying ones evaluated there, into
 * out[n_problem_size]. Returns 0, or -1 with a message. */
int cutune__problem_size_at(const cutune_problem *p, const uint32_t *config,
                            long long *out, char *err, size_t errlen);

/* Bytes one launch moves, floating-point operations it performs (0 when
 * the problem does not say). */
double cutune__problem_bytes(const cutune_problem *p, size_t config);
double cutune__problem_flops(const cutune_problem *p, size_t config);

/* The configuration made of every parameter's T1 Default, or the valid
 * configuration nearest to it. CUTUNE__NONE when the space is empty. */
size_t cutune__problem_default_config(const cutune_problem *p);

/* Where a tune or a replay of this problem starts (search/strategy/seed.h):
 * the default configuration at the occupancy API's block size `block_size`
 * (<= 0: none, then the default itself). Writes the source to *source
 * when not NULL; CUTUNE__NONE when the space is empty. */
size_t cutune__problem_seed_start(const cutune_problem *p, int block_size,
                                  cutune__seed_source *source);

/* Index of the parameter named `name`, or CUTUNE__NONE. */
size_t cutune__problem_find_param(const cutune_problem *p, const char *name);

/* NVRTC options for a configuration: "-DNAME=VALUE" per parameter, then
 * the T1 CompilerOptions, then `--gpu-architecture=ARCH`. The array and its
 * strings are malloc'ed; free with cutune__free_strings. NULL on OOM. */
char **cutune__problem_options(const cutune_problem *p, size_t config,
                               const char *arch, size_t *n);
void cutune__free_strings(char **strings, size_t n);

/* The source to compile for a configuration when it differs from the
 * problem's (constants prepended), malloc'ed; NULL when p->source serves
 * (or memory ran out: compiling p->source then fails visibly). */
char *cutune__problem_source(const cutune_problem *p, size_t config);

/* Name/value text pairs of a configuration, borrowed from the problem,
 * written into out[n_params]. */
void cutune__problem_config_values(const cutune_problem *p, size_t config,
                                   cutune_param_value *out);

/* The configuration whose parameters have `values[n]` (text, as in the
 * T1 Values) and their defaults otherwise, as an index of the space.
 * Returns 0, or -1 with `why` naming the parameter or value at fault. */
int cutune__problem_config_from_values(const cutune_problem *p,
                                       const cutune_param_value *values,
                                       size_t n, size_t *index, char *why,
                                       size_t why_size);

#endif
