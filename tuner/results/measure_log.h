/* Log of measured configurations, so that a tune can take up what an
 * earlier one (finished or interrupted) measured instead of measuring it
 * again.
 *
 * One file per measuring context: `<cache dir>/measurements/NAME-KEY.jsonl`
 * where KEY is a 64-bit digest of everything a measurement depends on
 * beyond the configuration itself (the device fingerprint with its driver,
 * NVRTC and cutune versions; the kernel source and name; the T1 compiler
 * options and the architecture; the arguments as resolved for the problem
 * size; the reference data; the measuring options). The caller computes
 * the key; this module only stores and finds records.
 *
 * One JSON object per line, appended with a single write() on a file
 * opened O_APPEND, so concurrent tunes interleave whole lines; a line torn
 * by a killed writer is skipped on reading and counted. A configuration is
 * found by its text ("NAME=VALUE NAME=VALUE ..."); when it appears more
 * than once, the last line wins. Each record also keeps the launch
 * geometry it was measured with, so a record is used only while the
 * problem still launches that configuration the same way.
 *
 * The file would grow with every tune, so opening it compacts it once it
 * is past CUTUNE__MEASURE_LOG_COMPACT_BYTES and twice its size at the last
 * compaction (kept beside it in PATH.size): the last line of each
 * configuration is kept, in order, and the rest dropped, by writing a new
 * file and renaming it over the old one. A compaction holds an exclusive
 * flock on the file; an append holds a shared one and, when it finds the
 * path renamed under it, reopens the path, so no line is lost to a
 * compaction running beside it.
 */
#ifndef CUTUNE_TUNER_MEASURE_LOG_H
#define CUTUNE_TUNER_MEASURE_LOG_H

#include <stddef.h>

#include "cutune/cutune.h"

typedef struct cutune__measured {
    char *config; /* "NAME=VALUE ..." */
    unsigned grid[3];
    unsigned block[3];
    cutune_outcome outcome;
    double time_ms; /* median; NAN unless CORRECT */
    double min_ms;
    double stddev_ms;
    double ci_lo_ms;
    double ci_hi_ms;
    double gpu_ms;
    double compile_ms;
    double framework_ms;
    int stopped_early;
    int sm_clock_mhz;
    int temperature_c;
    double timestamp;
    char *message;
    double *runtimes; /* every timed launch, ms */
    size_t runs;
    size_t final_runs; /* how many of the last runtimes are the tune's
                          final round (0: not a finalist) */
    double energy_j;   /* J per launch, mean W, and the spread of */
    double power_w;    /* the energy readings; NaN: not measured */
    double energy_rsd; /* (not written; absent reads as NaN) */
} cutune__measured;

typedef struct cutune__measure_log cutune__measure_log;

/* Opens (creating the directories and the file when missing) the log at
 * `path`. With `load`, reads the records already there. NULL when the file
 * cannot be opened or memory ran out; `err` says why. */
cutune__measure_log *cutune__measure_log_open(const char *path, int load,
                                              char *err, size_t errlen);
void cutune__measure_log_close(cutune__measure_log *log);

/* The last record of `config`, or NULL. Borrowed from the log. */
const cutune__measured *
cutune__measure_log_find(const cutune__measure_log *log, const char *config);

/* Where record `m` (from cutune__measure_log_find) stands in the log: the
 * order the records were measured in, earliest first. */
size_t cutune__measure_log_position(const cutune__measure_log *log,
                                    const cutune__measured *m);

/* Records read, and lines skipped as torn or unreadable, when loading. */
size_t cutune__measure_log_count(const cutune__measure_log *log);
size_t cutune__measure_log_skipped(const cutune__measure_log *log);

/* Compacts the log at `path` when it is larger than `min_bytes` and than
 * twice the size recorded at its last compaction (as open does with
 * CUTUNE__MEASURE_LOG_COMPACT_BYTES). Sets *dropped to the lines dropped
 * (0 when it did not rewrite the file). Returns 0, or -1 with `err` set;
 * a failure leaves the log as it was. */
#define CUTUNE__MEASURE_LOG_COMPACT_BYTES ((long long)16 << 20)
int cutune__measure_log_compact(const char *path, long long min_bytes,
                                size_t *dropped, char *err, size_t errlen);

/* Appends a record (the log keeps no copy). Returns 0, or -1 when it could
 * not be written; a failure loses only this line. */
int cutune__measure_log_append(cutune__measure_log *log,
                               const cutune__measured *m);

#endif
