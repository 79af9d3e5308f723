/* cutune — autotuner for CUDA kernel launch configurations.
 *
 * Conventions of this API:
 * - Opaque handles with create/destroy pairs; every _destroy/_close accepts
 *   NULL and does nothing.
 * - Functions return a cutune_status. A function that creates a handle sets
 *   *out even when it fails (NULL only when memory ran out), so the reason
 *   can be read with the handle's _errmsg() before destroying it.
 * - Returned `const char *` and `const` struct pointers are borrowed from the
 *   handle: valid until the next call on that handle or its destruction.
 * - The library never prints, exits or aborts; diagnostics go to the log
 *   callback given in the options.
 * - Handles are not thread-safe: use one handle per thread. Different
 *   handles may be used from different threads at once.
 */
#ifndef CUTUNE_CUTUNE_H
#define CUTUNE_CUTUNE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Everything these headers declare is exported from a shared libcutune;
 * the library's other symbols are hidden (docs/library-api.md#linking). */
#if defined(__GNUC__)
#pragma GCC visibility push(default)
#endif

#define CUTUNE_VERSION_MAJOR  0
#define CUTUNE_VERSION_MINOR  1
#define CUTUNE_VERSION_PATCH  0
#define CUTUNE_VERSION_STRING "0.1.0"

/* The version of the library linked, "MAJOR.MINOR.PATCH"; the macros above
 * are the version of the header compiled against.
 *
 * Stability: status codes, outcomes and enum values only grow (new values
 * last). Options structs only grow, at their end: always fill them with
 * their _init() function first, then set the fields you need, so that a
 * field added later takes its default. Within a MAJOR version, functions
 * are neither removed nor changed in meaning; libcutune is static, so a
 * program is rebuilt against the header of the library it links. The
 * replay (simulation) API is in its own header, cutune/simulate.h. */
const char *cutune_version(void);

/* Stable values: new codes go last, none is renumbered or removed. */
typedef enum cutune_status {
    CUTUNE_OK = 0,
    CUTUNE_ERR_INVALID_ARGUMENT = 1, /* a NULL or out-of-range argument */
    CUTUNE_ERR_NO_MEMORY = 2,
    CUTUNE_ERR_IO = 3,          /* a file could not be read or written */
    CUTUNE_ERR_PARSE = 4,       /* malformed JSON, T1 field or expression */
    CUTUNE_ERR_UNSUPPORTED = 5, /* valid input cutune does not handle */
    CUTUNE_ERR_NOT_FOUND = 6,   /* unknown template, no cache record */
    CUTUNE_ERR_NO_DEVICE = 7,   /* no CUDA device (or driver) present */
    CUTUNE_ERR_CUDA = 8,    /* the CUDA runtime failed outside a candidate */
    CUTUNE_ERR_NVRTC = 9,   /* NVRTC failed outside a candidate */
    CUTUNE_ERR_WORKER = 10, /* the GPU worker could not be started */
    CUTUNE_ERR_EMPTY_SPACE =
        11, /* no configuration satisfies the conditions */
    CUTUNE_ERR_NO_VALID_RESULT = 12, /* every evaluated configuration failed */
    CUTUNE_ERR_LIMIT = 13            /* a configured size limit was exceeded */
} cutune_status;

/* A fixed English string for a status; never NULL. */
const char *cutune_status_str(cutune_status status);

/* The one reader of cutune's numeric environment variables
 * (CUTUNE_MAX_INPUT_MB, CUTUNE_SPACE_LIMIT, CUTUNE_REPLAY_TIME_SCALE,
 * CUTUNE_ENERGY_WINDOW_MS, CUTUNE_ENERGY_WINDOWS):
 * `name` as a number from `min` to `max`, a whole number written in
 * digits only when `integer`, a finite one otherwise. Unset or empty:
 * CUTUNE_OK with *value untouched (the caller's default). Anything else
 * out of type or range: CUTUNE_ERR_INVALID_ARGUMENT and one line naming
 * the variable and its value in `message` (`size` bytes, may be NULL),
 * "CUTUNE_MAX_INPUT_MB: 'abc' is not a whole number from 1 to 1048576".
 * Thread-safe as getenv() is. */
cutune_status cutune_env_number(const char *name, double min, double max,
                                int integer, double *value, char *message,
                                size_t size);

/* What became of one evaluated configuration. The strings of
 * cutune_outcome_str() are the T4 `invalidity` values. Stable values. */
typedef enum cutune_outcome {
    CUTUNE_OUTCOME_CORRECT = 0,     /* ran and validated */
    CUTUNE_OUTCOME_COMPILE = 1,     /* NVRTC rejected it (log kept) */
    CUTUNE_OUTCOME_RUNTIME = 2,     /* launch failed or the worker died */
    CUTUNE_OUTCOME_CORRECTNESS = 3, /* output differs from the reference */
    CUTUNE_OUTCOME_TIMEOUT = 4,     /* exceeded the per-launch time limit */
    CUTUNE_OUTCOME_RESOURCES = 5    /* zero occupancy or too many threads:
                                       rejected without a launch */
} cutune_outcome;

const char *cutune_outcome_str(cutune_outcome outcome);

/* What a tune minimises. TIME: the median runtime of a launch (ms).
 * ENERGY: the energy of a launch (J), on a GPU from NVML's energy counter
 * (docs/measuring.md#energy-and-power).
 * EDP: the energy-delay product, J per launch times s per launch (J s),
 * which weighs speed more than ENERGY does. Stable values. */
typedef enum cutune_objective {
    CUTUNE_OBJECTIVE_TIME = 0,
    CUTUNE_OBJECTIVE_ENERGY,
    CUTUNE_OBJECTIVE_EDP
} cutune_objective;

/* "time", "energy", "edp": the names the command line, the cache and T4
 * `objectives` use; "unknown" for a value outside the enum. */
const char *cutune_objective_str(cutune_objective objective);
/* The objective named `name` (one of the names above, exactly) into
 * *out: 0, or -1 when `name` (NULL included) names none. */
int cutune_objective_parse(const char *name, cutune_objective *out);
/* Every objective's name, "time, energy, edp", for messages. */
#define CUTUNE_OBJECTIVE_NAMES "time, energy, edp"

typedef enum cutune_log_level {
    CUTUNE_LOG_ERROR = 0,
    CUTUNE_LOG_WARN = 1,
    CUTUNE_LOG_INFO = 2,
    CUTUNE_LOG_DEBUG = 3
} cutune_log_level;

/* `message` is borrowed for the duration of the call. */
typedef void (*cutune_log_fn)(void *user, cutune_log_level level,
                              const char *message);

/* One tunable parameter's value, as text ("128", "1", "-Xptxas=-dlcm=cg"). */
typedef struct cutune_param_value {
    const char *name;
    const char *value;
} cutune_param_value;

/* ------------------------------------------------------------------ */
/* Device fingerprint: what a tuning result is only valid for.          */

typedef struct cutune_device {
    char name[256];
    char uuid[48]; /* "GPU-xxxxxxxx-...", or "" when unknown */
    int cc_major;
    int cc_minor;
    int sm_count;
    long long l2_bytes;
    long long memory_bytes;
    int driver_version;     /* cudaDriverGetVersion, e.g. 13000 */
    char nvrtc_version[16]; /* "13.0" */
    char cutune_version[16];
    int simulated; /* nonzero for records made by `simulate` */
} cutune_device;

/* ------------------------------------------------------------------ */
/* Problems: a T1 file or a built-in template, with its search space.  */

typedef struct cutune_problem cutune_problem;

typedef struct cutune_problem_options {
    /* Replaces the T1 ProblemSize when n_problem_size > 0. */
    const long long *problem_size;
    size_t n_problem_size;
    /* Read only General, ConfigurationSpace and ProblemSize: for working
     * with the search space of a problem whose kernel part cannot be
     * compiled or run here (replay, space statistics). Such a problem
     * cannot be tuned or compiled. */
    int space_only;
    /* Partial configurations building the space may check before it gives
     * up with a message (conditions that reject nearly all of a huge
     * cartesian product); 0: the default, 1e8, about 10 s. */
    unsigned long long max_space_visits;
} cutune_problem_options;

/* Sets every field to its default (all zero today: the T1 ProblemSize, a
 * full load, the default space limit). */
void cutune_problem_options_init(cutune_problem_options *options);

/* `name_or_path` is a built-in template name (see cutune_template_*) or a
 * path to a T1 JSON file. `options` may be NULL. The caller owns *out and
 * frees it with cutune_problem_destroy(). */
cutune_status cutune_problem_load(const char *name_or_path,
                                  const cutune_problem_options *options,
                                  cutune_problem **out);
void cutune_problem_destroy(cutune_problem *problem);
const char *cutune_problem_errmsg(const cutune_problem *problem);

/* Warnings from loading: fields accepted but ignored, fields outside the
 * T1 schema, values the loader had to stand in for (a Default outside its
 * Values). Each is one line naming the field; the strings are borrowed. */
size_t cutune_problem_warning_count(const cutune_problem *problem);
const char *cutune_problem_warning(const cutune_problem *problem,
                                   size_t index);

const char *cutune_problem_name(const cutune_problem *problem);
const char *cutune_problem_kernel_name(const cutune_problem *problem);
/* A hex digest of the kernel source, for stale-cache checks. */
const char *cutune_problem_source_hash(const cutune_problem *problem);
/* T1's SimulationInput as a path (relative to the T1 file's folder made
 * whole), or NULL: the recorded results a replay of the problem reads when
 * it is given none. The file is not opened at load. */
const char *cutune_problem_simulation_input(const cutune_problem *problem);
/* The problem size per dimension; 0 in a dimension whose T1 ProblemSize
 * names tunable parameters (it varies with the configuration). */
size_t cutune_problem_size_dims(const cutune_problem *problem);
long long cutune_problem_size(const cutune_problem *problem, size_t dim);
/* The expression a varying dimension is (borrowed from the problem), or
 * NULL where the dimension is a fixed number. */
const char *cutune_problem_size_expr(const cutune_problem *problem,
                                     size_t dim);
size_t cutune_problem_param_count(const cutune_problem *problem);
const char *cutune_problem_param_name(const cutune_problem *problem,
                                      size_t param);
size_t cutune_problem_value_count(const cutune_problem *problem, size_t param);
const char *cutune_problem_value(const cutune_problem *problem, size_t param,
                                 size_t value);
/* Number of points of the cartesian product, and of valid configurations. */
double cutune_problem_cartesian_size(const cutune_problem *problem);
size_t cutune_problem_space_size(const cutune_problem *problem);
/* Wall-clock seconds the loader spent building the search space (checking
 * the conditions). */
double cutune_problem_space_seconds(const cutune_problem *problem);

/* The configuration at `index` of the space (0 to
 * cutune_problem_space_size() - 1, as in cutune_eval.config_index): the
 * text of parameter `param`'s value there, borrowed from the problem;
 * NULL when either is out of range. */
const char *cutune_problem_config_value(const cutune_problem *problem,
                                        size_t index, size_t param);

/* ------------------------------------------------------------------ */
/* Problems from memory: what a T1 file says, as structs.              */

/* A tunable parameter's value. A value's text (what -DNAME= gets, what
 * cutune_problem_value() returns) is the integer, the shortest decimal
 * that reads back as the double, 1/0 for a bool, the string itself. */
typedef enum cutune_value_type {
    CUTUNE_VALUE_INT = 0,
    CUTUNE_VALUE_FLOAT = 1,
    CUTUNE_VALUE_BOOL = 2,
    CUTUNE_VALUE_STRING = 3
} cutune_value_type;

typedef struct cutune_value {
    cutune_value_type type;
    long long i;   /* INT, BOOL (0 or 1) */
    double f;      /* FLOAT */
    const char *s; /* STRING */
} cutune_value;

typedef struct cutune_tunable {
    const char *name;
    const cutune_value *values;
    size_t n_values;
    /* The default configuration's value (the reference without answers,
     * where a tune without a block-size suggestion starts): one of
     * `values`; one that is not stands in its nearest and a warning says
     * so. NULL: values[0]. */
    const cutune_value *default_value;
    /* Nonzero: the values are NVRTC options ("-Xptxas=-dlcm=cg", "" for
     * none), passed as they are instead of as -DNAME=VALUE. */
    int compiler_option;
} cutune_tunable;

/* Element types of arguments. Stable values. */
typedef enum cutune_dtype {
    CUTUNE_DTYPE_FLOAT = 0,
    CUTUNE_DTYPE_DOUBLE = 1,
    CUTUNE_DTYPE_INT8 = 2,
    CUTUNE_DTYPE_UINT8 = 3,
    CUTUNE_DTYPE_INT16 = 4,
    CUTUNE_DTYPE_UINT16 = 5,
    CUTUNE_DTYPE_INT32 = 6,
    CUTUNE_DTYPE_UINT32 = 7,
    CUTUNE_DTYPE_INT64 = 8,
    CUTUNE_DTYPE_UINT64 = 9,
    CUTUNE_DTYPE_HALF = 10 /* IEEE binary16, CUDA's __half */
} cutune_dtype;

typedef enum cutune_arg_memory {
    CUTUNE_ARG_VECTOR = 0,  /* a device buffer; the kernel gets a pointer */
    CUTUNE_ARG_SCALAR = 1,  /* passed by value */
    CUTUNE_ARG_CONSTANT = 2 /* __constant__ memory: copied into the
                               module's variable of the argument's name
                               where the source declares one, else passed
                               as a pointer */
} cutune_arg_memory;

/* Where an argument's (or answer's) contents come from. Generated
 * contents are made on the GPU. */
typedef enum cutune_fill {
    CUTUNE_FILL_DATA = 0,     /* `data`: the host's bytes, copied */
    CUTUNE_FILL_CONSTANT = 1, /* every element fill_value */
    CUTUNE_FILL_RANDOM = 2    /* uniform in [0, fill_value), from `seed` */
} cutune_fill;

/* One kernel argument, in the order the kernel takes them. */
typedef struct cutune_arg_spec {
    const char *name; /* NULL or "": unnamed; a CONSTANT needs its
                         __constant__ variable's name */
    cutune_arg_memory memory;
    cutune_dtype dtype;
    uint64_t count; /* elements of a VECTOR or CONSTANT; a SCALAR is one */
    cutune_fill fill;
    /* FILL_DATA: `count` elements of `dtype` (a SCALAR: one), copied. A
     * scalar travels to the worker as a double: an integer it cannot
     * hold exactly (beyond 2^53) is refused. */
    const void *data;
    double fill_value; /* CONSTANT: the value; RANDOM: the bound; a
                          SCALAR not given as data: its value */
    uint64_t seed;     /* RANDOM */
    int output;        /* compared after each configuration: with its answer
                          where the spec gives any, else with the default
                          configuration's output */
} cutune_arg_spec;

/* The expected contents of an output argument (Kernel Tuner's `answer`,
 * T1's ReferenceArguments). With any answer given, only the arguments
 * that have one are checked. An element passes when
 * |out - expected| <= atol + rtol * |expected|. */
typedef struct cutune_answer_spec {
    size_t arg;       /* index of a VECTOR argument */
    cutune_fill fill; /* DATA: `data`, the argument's count of elements */
    const void *data;
    double fill_value;
    uint64_t seed;
    double atol;
    double rtol;
} cutune_answer_spec;

/* A tuning problem without a file. Fill it with cutune_problem_spec_init()
 * first, then set what the problem has; fields may be added at the end.
 * Every string is an expression of cutune's expression language (the one
 * of T1 Conditions, docs/t1-t4.md) where it says "expression"; the
 * expressions may read the tunables and ProblemSize (a list). The launch
 * geometry follows Kernel Tuner: the block is (block_size[0..2]), the grid
 * covers problem_size[d] divided by the product of grid_div_*[d] (by the
 * block's size in d where that list is NULL; an empty list divides by 1);
 * with global_size set instead (and no grid_div_* list), T1's
 * GlobalSize rule. Messages name the fields as written here
 * ("tune_params[1].values (UNROLL): empty"). */
typedef struct cutune_problem_spec {
    const char *name;        /* the problem's name in the cache; NULL:
                                kernel_name */
    const char *kernel_name; /* the __global__ function (a C++ one is
                                found by NVRTC's lowered name) */
    const char *source;      /* CUDA source; NVRTC compiles it whole */
    size_t source_len;       /* 0: strlen(source) */
    const char *const *compiler_options; /* NVRTC options */
    size_t n_compiler_options;

    const cutune_tunable *tune_params;
    size_t n_tune_params;
    const char *const *restrictions; /* boolean expressions; a
                                        configuration must meet all */
    size_t n_restrictions;

    /* The problem size per dimension, positive; or, where
     * problem_size_expr is non-NULL and its entry d is, an expression of
     * the tunables (Kernel Tuner's problem_size="num_blocks"): that
     * dimension varies with the configuration. */
    const long long *problem_size;
    const char *const *problem_size_expr;
    size_t n_problem_size;

    /* The block's size per dimension, an expression (a tunable's name is
     * one; Kernel Tuner's block_size_names are these); NULL: the tunable
     * block_size_x (y, z) where there is one, else 256 (1, 1), as Kernel
     * Tuner does. */
    const char *block_size[3];
    /* Kernel Tuner's grid_div_x (y, z): the entries (expressions) are
     * multiplied. NULL: divided by the block's size in that dimension. */
    const char *const *grid_div_x;
    size_t n_grid_div_x;
    const char *const *grid_div_y;
    size_t n_grid_div_y;
    const char *const *grid_div_z;
    size_t n_grid_div_z;
    /* T1's GlobalSize instead of a division of the problem size: threads
     * in each dimension (blocks when global_size_in_blocks), used when
     * all three are set and no grid_div_* list is. */
    const char *global_size[3];
    int global_size_in_blocks;
    unsigned shared_memory; /* dynamic shared memory per block, bytes */

    const cutune_arg_spec *arguments;
    size_t n_arguments;
    const cutune_answer_spec *answers;
    size_t n_answers;

    /* Compile as Kernel Tuner does (cutune_problem_spec_init sets it):
     * -Dkernel_tuner=1, block_size_x/y/z and grid_size_x/y/z defined
     * where no tunable has the name, and tunables named
     * loop_unroll_factor* as constexpr ints rather than macros. */
    int kernel_tuner_defines;
    /* Expressions of the bytes and floating-point operations one launch
     * moves and does, for GB/s and GFLOP/s; NULL: not reported. */
    const char *bytes_per_launch;
    const char *flops_per_launch;
    /* What a tune takes when the session sets none (T1 Budget, Search):
     * 0 / NULL: nothing. */
    size_t budget_evals;
    double budget_seconds;
    double budget_fraction;
    const char *strategy;
} cutune_problem_spec;

/* Zeroes the spec and sets kernel_tuner_defines. */
void cutune_problem_spec_init(cutune_problem_spec *spec);

/* Builds a problem from `spec` as cutune_problem_load() builds one from a
 * T1 file (the loader reads the file into a spec and calls this), without
 * touching the file system: no T1 file, no kernel file, no data file.
 * Everything is copied; the spec and what it points to may be freed once
 * this returns. `options` may be NULL; its problem_size replaces the
 * spec's (the arguments' counts are not rescaled). A bad spec fails with
 * the status the same mistake in a T1 file gets (CUTUNE_ERR_PARSE for an
 * expression or value that does not hold, CUTUNE_ERR_INVALID_ARGUMENT for
 * a field missing or out of its enum, CUTUNE_ERR_EMPTY_SPACE, ...) and one
 * message naming the field. The caller owns *out. */
cutune_status cutune_problem_from_spec(const cutune_problem_spec *spec,
                                       const cutune_problem_options *options,
                                       cutune_problem **out);

/* Built-in templates embedded in the library. */
size_t cutune_template_count(void);
const char *cutune_template_name(size_t index);

/* ------------------------------------------------------------------ */
/* Sessions: device discovery, compilation and tuning.                 */

typedef struct cutune_session cutune_session;

/* Evaluations a non-exhaustive strategy gets when no budget is given. */
#define CUTUNE_DEFAULT_BUDGET 100

/* Checking a configuration's outputs without T1 ReferenceArguments.
 * AUTO compares with the default configuration's output, unless most of
 * the first configurations differ from it while finite: then the output
 * depends on tunables by design (a kernel doing more time steps per
 * launch), and the rest of the tune checks for NaN and infinity only,
 * with a warning naming the tunables. */
typedef enum cutune_output_check {
    CUTUNE_CHECK_AUTO = 0,
    CUTUNE_CHECK_REFERENCE = 1, /* always equal to the default's output */
    CUTUNE_CHECK_FINITE = 2     /* no NaN or infinity; nothing compared */
} cutune_output_check;

/* Where a tune stands after an evaluation, for a caller that draws its
 * own progress display (cutune tune on a terminal). Everything is
 * borrowed for the duration of the call. */
typedef struct cutune_progress {
    size_t evaluations; /* evaluated so far, this one included */
    size_t budget;      /* evaluations the budget allows; 0: no
                           count (a time budget alone) */
    double elapsed_s;   /* since the search started */
    double eta_s;       /* estimated seconds of search left (the
                           final round not counted); NAN: unknown */
    double best_ms;     /* best median so far; NAN before any
                           configuration ran correctly */
    double baseline_ms; /* the occupancy suggestion's median (the
                           search's start); NAN until it ran
                           correctly */
    double last_ms;     /* this evaluation's median; NAN unless it
                           ran correctly */
    cutune_outcome last_outcome;
    int last_reused;                  /* taken from the measurement log */
    const cutune_param_value *config; /* this configuration: config[i] is
                                         parameter i's value */
    size_t n_params;
} cutune_progress;

typedef void (*cutune_progress_fn)(void *user,
                                   const cutune_progress *progress);

typedef struct cutune_session_options {
    int device;              /* CUDA device ordinal */
    const char *strategy;    /* strategy name; NULL for the default */
    size_t max_evals;        /* 0: CUTUNE_DEFAULT_BUDGET, or the whole space
                                for brute_force (unless max_seconds is set) */
    double max_seconds;      /* 0: no limit */
    uint64_t seed;           /* for randomized strategies */
    const char *cache_dir;   /* NULL: $CUTUNE_CACHE_DIR or ~/.cache/cutune */
    int write_cache;         /* append the winner to the cache */
    const char *worker_path; /* NULL: $CUTUNE_WORKER, then beside the
                                running executable, then the install dir */
    int compile_threads;     /* 0: one per online core */
    double launch_timeout_s; /* absolute cap on one launch; 0: default */
    cutune_log_fn log;
    void *log_user;
    int warm_cache;         /* keep the L2 warm between timed launches
                               (default: overwrite it before each) */
    int no_binary_cache;    /* compile everything, skip the on-disk
                               binary cache under the cache directory */
    double max_fraction;    /* budget as a share of the space, in (0, 1]:
                               ceil(fraction * size) evaluations; 0: none.
                               With max_evals too, the smaller wins */
    int reuse_measurements; /* take configurations measured before (same
                               device, kernel, arguments and options: the
                               measurement log in the cache directory)
                               from the log instead of measuring them;
                               every tune appends to the log either way */
    cutune_output_check output_check; /* how outputs are checked where the
                                problem gives no ReferenceArguments */
    /* Several devices of one model sharing one search (cutune tune
     * --devices): with n_devices > 0, one GPU worker per entry of
     * devices[0..n_devices) (borrowed until cutune_session_create returns;
     * an ordinal may repeat: two workers on one GPU) measures the
     * proposals of each batch side by side, and the final round and the
     * cache record are devices[0]'s. Devices of different models are
     * refused: split them with cutune_session_device_groups and tune each
     * group in a session of its own. 0: `device` alone. */
    const int *devices;
    size_t n_devices;
    /* Replayed devices instead of GPUs, for tests and benchmarks without
     * one: a comma-separated list of T4 files (docs/devices.md), device N
     * being the N-th file, named "replay " and the file's name without
     * "_T4.json.gz"; a configuration is answered with its recorded
     * outcome and runtimes (absent from the file: a failure), after
     * sleeping its recorded compile and run time times
     * replay_time_scale (0: no sleep). No NVRTC and no worker run, and
     * the problem may be loaded with space_only. NULL: GPUs. */
    const char *replay_devices;
    double replay_time_scale;
    /* Called after each evaluation of a tune, as the log callback is
     * (from the tuning threads, one call at a time); NULL: none. With it
     * set, the log's line per evaluation comes at CUTUNE_LOG_DEBUG
     * instead of CUTUNE_LOG_INFO: the progress says the same. */
    cutune_progress_fn progress;
    void *progress_user;
    /* What the search, the final round and the winner minimise (default
     * CUTUNE_OBJECTIVE_TIME). A configuration measured without an energy
     * reading has no value for ENERGY or EDP and cannot win; they also
     * turn off dropping candidates early on their time (a slower
     * configuration may take less energy). On GPUs,
     * they need NVML's energy counter on every device of the tune:
     * without it the tune fails before the search, naming the device. */
    cutune_objective objective;
    /* Measure energy and power (cutune_eval's energy_j, power_w,
     * energy_rsd) even when the objective is time; where NVML's energy
     * counter is absent the tune goes on without them, with a warning. */
    int measure_energy;
} cutune_session_options;

void cutune_session_options_init(cutune_session_options *options);

/* Copies `options` (strings included). The caller owns *out. */
cutune_status cutune_session_create(const cutune_session_options *options,
                                    cutune_session **out);
void cutune_session_destroy(cutune_session *session);
const char *cutune_session_errmsg(const cutune_session *session);

/* Lists the CUDA devices (through a worker process). The array is
 * borrowed from the session. */
cutune_status cutune_session_devices(cutune_session *session,
                                     const cutune_device **devices,
                                     size_t *count);

/* Splits the device ordinals ordinals[0..n) into models (same name and
 * compute capability), in order of first appearance: group[i] (n entries,
 * the caller's) is the model of ordinals[i], *n_groups their number.
 * Fails with CUTUNE_ERR_INVALID_ARGUMENT, naming the ordinal, when one
 * does not exist. Lists the devices as cutune_session_devices does. */
cutune_status cutune_session_device_groups(cutune_session *session,
                                           const int *ordinals, size_t n,
                                           size_t *group, size_t *n_groups);

/* One evaluated configuration, as the tune saw it. */
typedef struct cutune_eval {
    size_t config_index; /* index in the problem's space */
    cutune_outcome outcome;
    double time_ms; /* median runtime; valid when CORRECT */
    double compile_ms;
    const char *message; /* NVRTC log or CUDA error; may be "" */
    int stopped_early;   /* dropped after a few launches as
                            clearly slower than the best */
    int sm_clock_mhz;    /* when it was measured, from NVML; */
    int temperature_c;   /* -1 when unknown */
    size_t runs;         /* timed launches (all in the T4 output) */
    size_t final_runs;   /* the last of them that were the final
                            round's (0: not a finalist) */
    size_t worker;       /* which of the tune's devices measured
                            it: an index into the session's
                            devices (0 with one device) */
    /* Energy and power of back-to-back launches, from NVML, when the
     * objective is not time or measure_energy is set (docs/measuring.md).
     * NaN when not measured. */
    double energy_j;   /* J per launch, the median of the windows */
    double power_w;    /* mean W while it ran */
    double energy_rsd; /* relative standard deviation of the windows'
                          J per launch; NaN with fewer than two */
} cutune_eval;

typedef struct cutune_tune_result {
    cutune_device device;
    double memcpy_gbs;                  /* device-to-device cudaMemcpy, R+W */
    int occupancy_block_size;           /* what the occupancy API suggests */
    const cutune_param_value *baseline; /* occupancy-seeded configuration */
    size_t n_params;
    double baseline_ms; /* NaN: the baseline failed (no baseline) */
    const cutune_param_value *best;
    double best_ms;
    double best_min_ms;
    double best_stddev_ms;
    size_t best_runs;
    double best_gbs; /* 0 when the problem names no bytes */
    double speedup;  /* baseline_ms / best_ms; NaN with no
                        baseline */
    size_t evaluations;
    size_t failures;
    double wall_s;
    const char *strategy;
    const cutune_eval *evals; /* every evaluation, in order */
    size_t n_evals;
    size_t tied;                /* finalists whose confidence
                                   intervals overlap the winner's */
    double gpu_busy;            /* GPU time spent measuring (kernels,
                                   output resets, validation, L2
                                   flushes) / wall time of the tune */
    double kernel_share;        /* the candidates' kernel time alone /
                                   wall time */
    double best_gflops;         /* 0 when the problem names no FLOPs */
    size_t reused;              /* evaluations taken from earlier
                                   measurements (reuse_measurements) */
    size_t finalists;           /* the search's best few, measured again
                                   after it; the winner is one of them */
    size_t workers;             /* devices the search measured on */
    size_t restarts;            /* workers started again after a
                                   candidate killed or hung one */
    cutune_objective objective; /* what the winner was picked by */
    double best_energy_j;       /* the winner's J per launch and */
    double best_power_w;        /* mean W; NaN when not measured */
} cutune_tune_result;

/* Tunes `problem` on the session's device. *result is borrowed from the
 * session until the next tune or its destruction. It is set whenever the
 * tune itself finished, so that a failure to append the winner to the
 * cache (write_cache) loses nothing: that failure is the status returned
 * with *result set, and cutune_session_errmsg() names the cache's error.
 * A failed start configuration does not end the tune: baseline_ms and
 * speedup are then NaN. */
cutune_status cutune_session_tune(cutune_session *session,
                                  const cutune_problem *problem,
                                  const cutune_tune_result **result);

/* Writes every evaluation of the session's most recent tune (also one
 * that ended without a valid result) as a T4 results file at `path`,
 * gzip-compressed when it ends in ".gz", written as every output is
 * (cutune_output_path_check: "-" is standard output). The problem given
 * to that tune must still exist. Per configuration: `configuration`, `times`
 * (`runtimes`: every timed launch, `compilation`, `framework`,
 * `search_algorithm`, `validation`, all ms), `invalidity` (the strings of
 * cutune_outcome_str), `correctness` and `objectives`. */
cutune_status cutune_session_write_t4(cutune_session *session,
                                      const char *path);

/* Compiles up to `limit` configurations (0: all) for `arch` ("sm_90")
 * without a GPU. Counts what compiled and what NVRTC rejected. A virtual
 * architecture ("compute_90": PTX, no binary) is refused with
 * CUTUNE_ERR_INVALID_ARGUMENT. */
cutune_status cutune_session_compile(cutune_session *session,
                                     const cutune_problem *problem,
                                     const char *arch, size_t limit,
                                     size_t *compiled, size_t *failed,
                                     double *seconds);

/* The configurations NVRTC rejected in the session's last
 * cutune_session_compile, grouped so that each reason reads once: two
 * share a group when their logs are the same once each one's own
 * parameter values are masked out of it (the "Too_big<2>" and
 * "Too_big<4>" of UNROLL=2 and UNROLL=4 match). Largest group first. */
typedef struct cutune_rejected_group {
    size_t count;                     /* configurations in the group */
    size_t first;                     /* space index of its first member */
    const cutune_param_value *shared; /* the values every member has, of
                                         the parameters with more than
                                         one value */
    size_t n_shared;
    const char *log; /* NVRTC's log of the first member,
                        whole */
} cutune_rejected_group;

size_t cutune_session_rejected_group_count(const cutune_session *session);
/* Group `index`, or NULL past the end. Owned by the session, valid until
 * its next cutune_session_compile or cutune_session_destroy. */
const cutune_rejected_group *
cutune_session_rejected_group(const cutune_session *session, size_t index);

/* ------------------------------------------------------------------ */
/* The per-device tuning cache.                                        */

typedef struct cutune_cache cutune_cache;

/* One tuning result as stored. All pointers are borrowed (from the caller
 * on append, from the cache handle on lookup). */
typedef struct cutune_cache_record {
    cutune_device device;
    const char *problem_name;
    const char *source_hash;
    const long long *problem_size;
    size_t n_problem_size;
    const char *compiler_options; /* joined by spaces; may be "" */
    const cutune_param_value *config;
    size_t n_config;
    double time_ms; /* median of the best configuration;
                       above 0 */
    double time_min_ms;
    double time_stddev_ms;
    size_t runs;
    double gbs; /* 0 when unknown */
    const cutune_param_value *baseline;
    size_t n_baseline;
    double baseline_ms; /* 0 or above (0: unknown), or NaN:
                           no baseline (the start
                           configuration failed; null in the
                           file) */
    const char *strategy;
    size_t evaluations;
    double tune_seconds;
    long long timestamp; /* seconds since the Unix epoch */
    /* What the tune picked the configuration by. A record of an
     * objective other than TIME is written in format version 2, which
     * cutune before 0.1.0's energy objective refuses instead of taking
     * it for a time record (docs/cache-and-pipelines.md). */
    cutune_objective objective;
    double energy_j; /* the configuration's J per launch; 0 or
                        NaN: not measured (absent in the file,
                        read back as NaN) */
} cutune_cache_record;

typedef enum cutune_match {
    CUTUNE_MATCH_NONE = 0,
    CUTUNE_MATCH_EXACT = 1,        /* same device, same problem size */
    CUTUNE_MATCH_NEAREST_SIZE = 2, /* same device, nearest problem size */
    CUTUNE_MATCH_ARCHITECTURE = 3, /* another device of the same compute
                                      capability, nearest SM count */
    CUTUNE_MATCH_DEFAULT = 4,      /* the cross-device default: the
                                      configuration with the best average
                                      relative time over the devices */
    CUTUNE_MATCH_OCCUPANCY = 5     /* nothing cached: the caller should use
                                      the occupancy API's suggestion */
} cutune_match;

const char *cutune_match_str(cutune_match match);

/* A record is of the query's device when its UUID equals device_uuid or
 * its name equals device_name (either may be NULL or ""); with neither,
 * every device's records are. */
typedef struct cutune_cache_query {
    const char *problem_name;
    const char *device_name; /* compared case-insensitively */
    const char *device_uuid;
    const long long *problem_size; /* NULL: any size */
    size_t n_problem_size;
    /* Nonzero: when the device has no record of the problem, go on down the
     * chain: ARCHITECTURE (needs cc_major > 0), DEFAULT, then OCCUPANCY.
     * Zero: the device's own records only (EXACT, NEAREST_SIZE). */
    int fallback;
    int cc_major; /* the device's compute capability; */
    int cc_minor; /* 0.0: unknown, no ARCHITECTURE level */
    int sm_count; /* 0: unknown, any SM count is as near */
    /* Optional (NULL: every valid record counts). A record of the problem
     * for which accept() returns 0 is skipped like an invalid line:
     * counted in cutune_cache_skipped_lines(), its file, line and the
     * reason accept() wrote to `why` named in cutune_cache_warning(), and
     * never returned. cutune_problem_accepts_record() (with the problem as
     * accept_user) refuses what does not fit a problem. */
    int (*accept)(void *accept_user, const cutune_cache_record *record,
                  char *why, size_t why_size);
    void *accept_user;
    /* Only records tuned for this objective answer, on every level of the
     * chain (0, TIME, for a zeroed query: what every record before the
     * objective existed was tuned for). */
    cutune_objective objective;
} cutune_cache_query;

/* An accept function for cutune_cache_query: 1 when `record` fits the
 * problem (a cutune_problem *, passed as void * to fit the callback):
 * every parameter named once and no other name, each value one of the
 * parameter's values, the configuration inside the search space, and
 * time_ms positive and finite. Else 0, with the reason in `why`. */
int cutune_problem_accepts_record(void *problem,
                                  const cutune_cache_record *record, char *why,
                                  size_t why_size);

/* `dir` NULL: $CUTUNE_CACHE_DIR, else $HOME/.cache/cutune. The directory
 * is created on the first append. The caller owns *out. */
cutune_status cutune_cache_open(const char *dir, cutune_cache **out);
void cutune_cache_close(cutune_cache *cache);
/* Reads every record of the cache into memory and keeps them with the
 * handle, so that its later lookups and walks decode only what changed on
 * disk since (lines appended, a file replaced or gone), not every line
 * again. For a program that looks up many times, as a plan run does;
 * costs memory for every record (about 7 KB each, 350 MB for 50,000).
 * Errors as a lookup's.
 */
cutune_status cutune_cache_preload(cutune_cache *cache);
const char *cutune_cache_errmsg(const cutune_cache *cache);
const char *cutune_cache_dir(const cutune_cache *cache);

/* Appends one record to the device's file under an exclusive lock. Safe
 * across processes. A record its readers would skip is refused with
 * CUTUNE_ERR_INVALID_ARGUMENT and a message naming the field: a time_ms
 * not above 0, a real that is not finite, a negative baseline_ms (NaN,
 * "no baseline", is written as null). */
cutune_status cutune_cache_append(cutune_cache *cache,
                                  const cutune_cache_record *record);

/* Whether the cache directory can take records, before hours of tuning
 * are spent on them: creates it if need be, then creates and removes a
 * dot file in it. CUTUNE_ERR_IO (or the directory's error) when it
 * cannot, named in cutune_cache_errmsg(). */
cutune_status cutune_cache_check_writable(cutune_cache *cache);

/* Finds the record that best answers `query`, going down the levels of
 * cutune_match in order; the newest among equals. *record is borrowed from
 * the cache. Returns CUTUNE_ERR_NOT_FOUND with *record = NULL when no
 * record answers; *match is then OCCUPANCY when the query asked for the
 * fallback chain (use the occupancy API's suggestion), else NONE. Records
 * of a simulated device answer like any other: check record->device.
 * simulated. */
cutune_status cutune_cache_lookup(cutune_cache *cache,
                                  const cutune_cache_query *query,
                                  const cutune_cache_record **record,
                                  cutune_match *match);

/* How many lines the most recent lookup passed over: lines that are not
 * JSON (such as the torn last line of a killed writer), not a complete
 * record, or written in a newer format version. 0 before any lookup. */
size_t cutune_cache_skipped_lines(const cutune_cache *cache);

/* How many of those lines were records of a cache format version this
 * cutune does not read (they are refused, never misread). */
size_t cutune_cache_version_skipped(const cutune_cache *cache);

/* A sentence about what the most recent lookup, merge or export passed
 * over or could not answer (skipped lines, refused format versions,
 * problems with no record), for the caller to show as a warning; "" when
 * there is nothing to say. Borrowed from the cache. */
const char *cutune_cache_warning(const cutune_cache *cache);

/* Looks `problem` up for `device` (a fingerprint from
 * cutune_session_devices(), or one filled in by hand) through the whole
 * fallback chain, at the problem's own size. Same results as
 * cutune_cache_lookup(). */
cutune_status cutune_cache_lookup_device(cutune_cache *cache,
                                         const cutune_device *device,
                                         const cutune_problem *problem,
                                         const cutune_cache_record **record,
                                         cutune_match *match);

/* Importing recorded results into the cache. Zero the options with
 * cutune_import_options_init(); fields may be added at the end. */
typedef struct cutune_import_options {
    /* The device that measured the file, where the file names none
     * (borrowed for the call; NULL: none given). */
    const char *device_name;
    /* The best is the least of this objective's value (ENERGY and EDP:
     * among the results with a recorded energy, t4_energy.c), and the
     * record is filed as tuned for it. 0: TIME. */
    cutune_objective objective;
} cutune_import_options;

void cutune_import_options_init(cutune_import_options *options);

typedef struct cutune_import_result {
    size_t results;        /* results in the file */
    size_t correct;        /* correct results on the problem's space */
    size_t outside;        /* results whose configuration is not in it */
    double time_ms;        /* the best one's time; NaN when none */
    char config[1024];     /* the best one, "name=value, ..."; "" if none */
    char device_name[256]; /* the device the record was filed under */
    int kernel_tuner;      /* the file was a Kernel Tuner cache */
} cutune_import_result;

/* Reads `path`, a T4 file (plain or gzip) or a Kernel Tuner cache file
 * (`tune_params_keys`, `cache`; also one a cut-short run left open),
 * places its results on `problem`'s space as `simulate` does, and appends
 * the best correct configuration to `cache` as a record of `problem` (its
 * name, source hash and size: load it with the size the file was
 * measured at) on the device the file names (a Kernel Tuner cache's
 * `device_name`, a T4 file's `metadata.device_name` or
 * `metadata.device.name`), else on `options->device_name`. A Kernel Tuner
 * cache's best is by its `time`, Kernel Tuner's own objective.
 * Refused with CUTUNE_ERR_INVALID_ARGUMENT: no device named anywhere, a
 * device given that is not the file's, a file measured at another size
 * than the problem's. CUTUNE_ERR_NO_VALID_RESULT: no correct result on
 * the space. Messages in cutune_cache_errmsg(cache). All pointers are
 * borrowed for the call; `options` and `result` may be NULL, and
 * `result` is filled in as far as the file was read, also on failure. */
cutune_status cutune_cache_import(cutune_cache *cache,
                                  const cutune_problem *problem,
                                  const char *path,
                                  const cutune_import_options *options,
                                  cutune_import_result *result);

typedef struct cutune_cache_merge_stats {
    size_t records_read;
    size_t records_written;
    size_t duplicates; /* records dropped for a newer one */
} cutune_cache_merge_stats;

/* Joins the records of the cache files (or cache directories) `inputs`
 * into the one file `output`, written as every output is
 * (cutune_output_path_check), so it may be one of the inputs. While it
 * reads, appends to `output` wait (they take the lock cutune_cache_append
 * takes), so merging into a file a tune appends to loses no record.
 * Records with the same key (device UUID, or name when the UUID is empty;
 * problem name, source hash, size and compiler options) are one: the
 * newer stays (between equal timestamps, the one read later), as in a
 * lookup, so a `--force` re-tune survives a merge. `cache` only carries
 * the error message and the warning; its directory is not used. `stats`
 * may be NULL. */
cutune_status cutune_cache_merge(cutune_cache *cache,
                                 const char *const *inputs, size_t n_inputs,
                                 const char *output,
                                 cutune_cache_merge_stats *stats);

typedef enum cutune_export_format {
    CUTUNE_EXPORT_HEADER = 0, /* a C/C++ header */
    CUTUNE_EXPORT_JSON = 1
} cutune_export_format;

/* Writes the winners of the cache to `path` (as every output is,
 * cutune_output_path_check). When
 * the queries name a device (each one must), the export holds, per
 * problem, that device's answer through the chain (query.fallback) as one
 * #define per parameter. When none names a device, it holds every cached
 * device's record of each problem (nearest to the query's size), the
 * cross-device default, and, in a header, a lookup function by device name
 * and compute capability. n_queries 0: every problem of the cache, all
 * devices. */
cutune_status cutune_cache_export(cutune_cache *cache,
                                  const cutune_cache_query *queries,
                                  size_t n_queries,
                                  cutune_export_format format,
                                  const char *path);

/* Calls `visit` once per valid record of the cache's directory, files in
 * name order and lines in file order; `record` is borrowed for the
 * duration of the call. A nonzero return stops the walk (the function
 * still returns CUTUNE_OK). Skipped lines are counted and the warning set
 * as for a lookup. */
typedef int (*cutune_cache_visit_fn)(void *user,
                                     const cutune_cache_record *record);
/* Whether `path` can take an output of cutune: a T4 file
 * (cutune_session_write_t4), a report (cutune_report_write), an export, a
 * merged cache. Every output is written one way: "-" is standard output;
 * a symbolic link is written through to its target (the link stays); a
 * FIFO or character device (/dev/null) is opened and written into, never
 * replaced; a directory, socket or block device is refused; anything else
 * is written to a new file beside its target (created O_EXCL|O_NOFOLLOW),
 * fsynced and renamed over it, keeping a replaced file's permission bits
 * (a new file: 0644 less the umask). Nothing is created here: a missing
 * directory is an error. A command calls this before work that a bad
 * path would waste (a tune), when no handle exists yet to carry the
 * message; so the message, "cannot write PATH: REASON", goes to `message`
 * (`size` bytes; may be NULL). CUTUNE_OK, or CUTUNE_ERR_IO. Thread-safe. */
cutune_status cutune_output_path_check(const char *path, char *message,
                                       size_t size);

cutune_status cutune_cache_foreach(cutune_cache *cache,
                                   cutune_cache_visit_fn visit, void *user);

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif

#ifdef __cplusplus
}
#endif

#endif
