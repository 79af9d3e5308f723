/* Explaining a tuned configuration with hardware counters (`cutune
 * explain`): the winner (or a given configuration), the occupancy API's
 * suggestion and the default configuration, each timed and then profiled
 * in a separate pass through CUPTI, side by side with the bottleneck
 * their figures point to. See docs/explain.md.
 *
 * Not thread-safe for one session (like every session call).
 */
#ifndef CUTUNE_EXPLAIN_H
#define CUTUNE_EXPLAIN_H

#include <stddef.h>

#include "cutune/cutune.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#pragma GCC visibility push(default)
#endif

typedef struct cutune_explain cutune_explain;

/* Whether hardware counters were read; stable values, new ones last. */
typedef enum cutune_counters {
    CUTUNE_COUNTERS_READ = 0,
    CUTUNE_COUNTERS_NO_CUPTI = 1,    /* libcupti could not be loaded */
    CUTUNE_COUNTERS_REFUSED = 2,     /* no permission to read counters */
    CUTUNE_COUNTERS_UNSUPPORTED = 3, /* this GPU or setup (a virtual GPU,
                                        confidential computing, ...) */
    CUTUNE_COUNTERS_FAILED = 4,      /* another CUPTI error */
    CUTUNE_COUNTERS_NOT_RUN = 5      /* the configuration did not run */
} cutune_counters;

/* "read", "no-cupti", "refused", "unsupported", "failed", "not-run". */
const char *cutune_counters_str(cutune_counters c);

/* Times and profiles, on the session's device, `config` (n_config
 * name/value pairs; parameters not named keep their default; NULL for
 * none), the occupancy suggestion and the default configuration of
 * `problem`. `role` names the first column ("winner" for a cached
 * winner, "given" for one from the command line); `note` (may be NULL) is
 * kept as a line of the report, e.g. why no winner is shown. Counters
 * that cannot be read are not an error: *out says why
 * (cutune_explain_counters) and still holds times and static figures.
 * On success the caller owns *out (cutune_explain_destroy). Errors:
 * CUTUNE_ERR_NO_DEVICE, CUTUNE_ERR_PARSE for a configuration not in the
 * space (the session's errmsg names the parameter or value), and those
 * of a tune's start. */
cutune_status cutune_session_explain(cutune_session *session,
                                     const cutune_problem *problem,
                                     const cutune_param_value *config,
                                     size_t n_config, const char *role,
                                     const char *note, cutune_explain **out);

/* Whether every configuration's counters were read, and if not the one
 * sentence saying why (borrowed from `x`). */
cutune_counters cutune_explain_counters(const cutune_explain *x,
                                        const char **why);

/* The report as text (the side-by-side table, a bottleneck line per
 * configuration, the headroom) or as JSON; malloc'ed, the caller frees.
 * NULL when memory runs out. */
char *cutune_explain_text(const cutune_explain *x);
char *cutune_explain_json(const cutune_explain *x);

void cutune_explain_destroy(cutune_explain *x);

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif

#ifdef __cplusplus
}
#endif

#endif
