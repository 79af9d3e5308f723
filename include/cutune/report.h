/* cutune reports: one self-contained HTML page (inline SVG and CSS, no
 * scripts, nothing fetched) about a tune's results or a tuning cache. The
 * conventions of cutune.h hold. */
#ifndef CUTUNE_REPORT_H
#define CUTUNE_REPORT_H

#include "cutune/cutune.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#pragma GCC visibility push(default)
#endif

typedef struct cutune_report cutune_report;

/* What a tune knows that a T4 file does not. Every field is optional:
 * what is not given is taken from the file's metadata where it names it
 * (the device, the strategy), else marked unknown in the page, never
 * guessed. */
typedef struct cutune_report_options {
    const char *results_path;           /* T4 results file, plain or gzip */
    const char *title;                  /* NULL: from the problem or cache */
    const char *device_name;            /* NULL: unknown */
    const char *strategy;               /* NULL: unknown */
    int occupancy_block_size;           /* 0: unknown */
    const cutune_param_value *baseline; /* the occupancy-seeded
                                      configuration; NULL: unknown */
    size_t n_baseline;
    const cutune_param_value *winner; /* the tune's winner after its final
                                      round; NULL: the fastest recorded */
    size_t n_winner;
    double winner_ms;  /* the winner's final time; 0: unknown */
    size_t max_points; /* points per plot; 0: 5000 */
    size_t top;        /* rows of the top table; 0: 20 */
    cutune_log_fn log; /* warnings (a results file recorded
                          for another problem); NULL: none */
    void *log_user;
} cutune_report_options;

void cutune_report_options_init(cutune_report_options *options);

/* Reads the results of `options->results_path` onto `problem`'s space
 * (load it with space_only when its kernel is not at hand) and summarizes
 * them; the evaluation order is the file's. `options` and what it points
 * to are read during the call only; the problem must outlive the report.
 * Sets *out (owned by the caller, freed with cutune_report_destroy) also
 * on failure, for cutune_report_errmsg. */
cutune_status cutune_report_create(const cutune_problem *problem,
                                   const cutune_report_options *options,
                                   cutune_report **out);

/* A report of every record of `cache`: per problem, a grid of devices by
 * problem sizes with each winner and its speed-up over the occupancy
 * suggestion. `options` may be NULL; only title is read. The records are
 * copied: the cache may be closed before the report is written. */
cutune_status cutune_report_create_cache(cutune_cache *cache,
                                         const cutune_report_options *options,
                                         cutune_report **out);

/* Writes the page to `path`, as every output is written
 * (cutune_output_path_check: "-" is standard output). */
cutune_status cutune_report_write(cutune_report *report, const char *path);

/* Notes about the page: what was unknown or left out ("no occupancy
 * suggestion in the file"), one line each, borrowed from the report. */
size_t cutune_report_note_count(const cutune_report *report);
const char *cutune_report_note(const cutune_report *report, size_t index);

const char *cutune_report_errmsg(const cutune_report *report);
void cutune_report_destroy(cutune_report *report);

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif

#ifdef __cplusplus
}
#endif

#endif
