/* T4, the autotuning community's results format: reading recorded results
 * (plain or gzip-compressed JSON) onto a problem's search space, and
 * writing the results of a tune.
 *
 * A T4 file holds `results[]`, each with `configuration` (parameter name ->
 * value), `times` (`runtimes` in ms, `compilation`, `framework`,
 * `search_algorithm`, `validation`), `invalidity` ("correct", "compile",
 * "runtime", "correctness", "constraints", "timeout", ...) and
 * `objectives`. Measurements cutune reads besides `time`: `energy` (J per
 * launch) and `power` (W), also under Kernel Tuner's names `nvml_energy`
 * and `nvml_power` (docs/t1-t4.md).
 *
 * The T4 1.0.0 schema's `invalidity` is an enum that lacks cutune's
 * RESOURCES: such a result is written `"invalidity": "constraints"` with
 * the finer reason in cutune's own `"cutune_invalidity": "resources"`,
 * and read back as RESOURCES, as is the `"invalidity": "resources"` that
 * earlier versions wrote. `metadata` names the device, the problem, the
 * search and the cutune that wrote the file (cutune__t4_meta).
 */
#ifndef CUTUNE_TUNER_T4_H
#define CUTUNE_TUNER_T4_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "cutune/cutune.h"

/* One recorded configuration, placed on the problem's space. */
typedef struct cutune__t4_entry {
    size_t config_index; /* index in the problem's space; CUTUNE__NONE when the
                            configuration is not a valid point of it */
    cutune_outcome outcome;
    double time_ms;    /* median of the runtimes (a tune's rank)
                          when CORRECT, else INFINITY */
    double compile_ms; /* as recorded; 0 when absent */
    double *runtimes;  /* all recorded runtimes, ms (owned) */
    size_t n_runtimes;
    double other_ms;      /* framework, search_algorithm and validation
                             times, ms; 0 when absent */
    double timestamp;     /* seconds since the Unix epoch; NAN when
                             absent or unreadable */
    char **extra_names;   /* measurements besides "time", energy and
                             power with a number (`cutune explain
                             --output`: counters), */
    double *extra_values; /* owned; n_extra of each */
    size_t n_extra;
    /* J per launch and mean W while it ran, from the measurements
     * `energy` and `power` (cutune's) or `nvml_energy` and `nvml_power`
     * (Kernel Tuner's NVMLObserver); one of the two with the time gives
     * the other (energy = power x time, as Kernel Tuner computes it).
     * NaN when the result has neither. */
    double energy_j;
    double power_w;
} cutune__t4_entry;

/* Where results come from, as `metadata` names it. Writing, every field
 * is optional (NULL, 0 or NAN: not written) and its pointers borrowed;
 * reading (cutune__t4.meta), the strings and the size are the
 * cutune__t4's, NULL when the file does not say. */
typedef struct cutune__t4_meta {
    const char *device_name;
    int cc_major, cc_minor; /* compute capability; 0.0: unknown */
    const char *device_uuid;
    const char *problem_name;
    const long long *problem_size;
    size_t n_problem_size;
    const char *source_hash; /* cutune_problem_source_hash() */
    const char *strategy;    /* NULL: no search (explain) */
    uint64_t seed;           /* written with the strategy */
    size_t max_evals;        /* the resolved budget, with the */
    double max_seconds;      /* strategy: 0 where unlimited */
    double fraction;
    const char *cutune_version;
    const char *objective; /* each result's `objectives`; NULL: "time" */
} cutune__t4_meta;

typedef struct cutune__t4 {
    cutune__t4_entry *entries;
    size_t n_entries;
    size_t n_outside;          /* entries whose configuration is not in the
                                  space (reported, not fatal) */
    size_t n_other_invalidity; /* entries whose invalidity is none of
                              correct/compile/runtime/correctness/timeout/
                              resources ("constraints", or newer names):
                              read as RUNTIME */
    cutune__t4_meta meta;      /* what the file's metadata names (a Kernel
                                  Tuner cache: its device_name and
                                  problem_size); the seed, budget and compute
                                  capability are not read back */
    int from_kernel_tuner;     /* a Kernel Tuner cache: correct results are
                                  ranked by its `time`, Kernel Tuner's
                                  objective, not the median of the runs */
} cutune__t4;

/* Kernel Tuner cache files (kt_cache.c). Whether a parsed document is
 * one; the document of a cache an interrupted run left open (NULL when
 * the text is not one); and the T4 document it stands for, its
 * parameters checked against `problem` (*out owned by the caller). */
int cutune__kt_cache_is(json_t *root);
json_t *cutune__kt_cache_reopen(const char *text, size_t len);
cutune_status cutune__kt_cache_to_t4(const char *path, json_t *kt,
                                     const cutune_problem *problem,
                                     json_t **out, char *err, size_t errlen);

/* Reads `path` (gzip when it starts with the gzip magic, else plain JSON;
 * a T4 file or a Kernel Tuner cache file) and places each result on
 * `problem`'s space by matching parameter names and value texts. On failure
 * returns a status with a message naming the file and field in `err`. The
 * caller frees *out with cutune__t4_free. */
cutune_status cutune__t4_load(const char *path, const cutune_problem *problem,
                              cutune__t4 **out, char *err, size_t errlen);
void cutune__t4_free(cutune__t4 *t4);

/* One line (no newline) into msg naming what the file's metadata says
 * that differs from `problem`: its name, its size, its kernel source
 * hash, each where both sides know it. Returns 1 when something differs,
 * else 0 (msg then ""). Readers log it once, as a warning. */
int cutune__t4_mismatch(const cutune__t4 *t4, const char *path,
                        const cutune_problem *problem, char *msg, size_t len);

/* 1 with one line (no newline) in msg naming `path` when `objective`
 * needs energy (energy, edp) and no correct result of the file has an
 * energy measurement, so that a replay of it is refused before it runs;
 * else 0 (msg then ""). In t4_energy.c. */
int cutune__t4_lacks_energy(const cutune__t4 *t4, const char *path,
                            cutune_objective objective, char *msg, size_t len);

/* What evaluating the entry cost, in seconds, as recorded: its
 * compilation plus every recorded run (the time a replay's time budget
 * spends on it). */
double cutune__t4_entry_seconds(const cutune__t4_entry *e);

/* What measuring the entry took, in seconds, as recorded: every launch
 * and the framework's time around them (the clock of a replay). */
double cutune__t4_entry_measure_seconds(const cutune__t4_entry *e);

/* What trying the entry costs a search, in seconds
 * (cutune__search_try_seconds), whatever more it was measured. */
double cutune__t4_entry_try_seconds(const cutune__t4_entry *e);

/* The outcome a T4 `invalidity` string stands for. Returns 1 for the
 * names cutune writes itself; 0 for any other (such as "constraints"),
 * with *out set to RUNTIME: the configuration gave no usable time. */
int cutune__t4_outcome_from_str(const char *invalidity, cutune_outcome *out);

/* One evaluated configuration, as the writer takes it. Pointers are
 * borrowed for the duration of the call. */
typedef struct cutune__t4_record {
    size_t config_index; /* index in the problem's space */
    cutune_outcome outcome;
    const double *runtimes; /* every timed launch, ms; may be NULL */
    size_t n_runtimes;
    double time_ms; /* the objective (median); NAN when none */
    double compile_ms;
    double framework_ms; /* everything else the evaluation cost */
    double search_ms;    /* the strategy's share of choosing it */
    double validation_ms;
    double timestamp;               /* seconds since the Unix epoch; 0: none */
    const char *const *extra_names; /* more measurements (hardware */
    const double *extra_values;     /* counters), written after "time" */
    const char *const *extra_units;
    size_t n_extra;
    double energy_j; /* measurements `energy` (J per launch) and */
    double power_w;  /* `power` (W); NaN (or 0 for a zeroed record):
                        not written */
} cutune__t4_record;

/* Writes `records` as a T4 file at `path`, gzip-compressed when the path
 * ends in ".gz", every result valid against the T4 1.0.0 schema.
 * Configuration values are written with their JSON types (numbers stay
 * numbers), so the file reads back onto the same space with
 * cutune__t4_load. `meta` (NULL: none) adds to `metadata`. */
cutune_status cutune__t4_write(const char *path, const cutune_problem *problem,
                               const cutune__t4_meta *meta,
                               const cutune__t4_record *records, size_t n,
                               char *err, size_t errlen);

#endif
