/* T4, the autotuning community's results format: reading recorded results
 * (plain or gzip-compressed JSON) onto a problem's search space, and
 * writing the results of a tune.
 *
 * A T4 file holds `results[]`, each with `configuration` (parameter name ->
 * value), `times` (`runtimes` in ms, `compilation`, `framework`,
 * `search_algorithm`, `validation`), `invalidity` ("correct", "compile",
 * "runtime", "correctness", "constraints", "timeout", ...) and
 * `objectives`.
 */
#ifndef CUTUNE_TUNER_T4_H
#define CUTUNE_TUNER_T4_H

#include <stddef.h>

#include "cutune/cutune.h"

/* One recorded configuration, placed on the problem's space. */
typedef struct cutune__t4_entry {
    size_t config_index;   /* index in the problem's space; SIZE_MAX when the
                              configuration is not a valid point of it */
    cutune_outcome outcome;
    double time_ms;        /* mean of the runtimes when CORRECT, else
                              INFINITY */
    double compile_ms;     /* as recorded; 0 when absent */
    double *runtimes;      /* all recorded runtimes, ms (owned) */
    size_t n_runtimes;
} cutune__t4_entry;

typedef struct cutune__t4 {
    cutune__t4_entry *entries;
    size_t n_entries;
    size_t n_outside;      /* entries whose configuration is not in the
                              space (reported, not fatal) */
} cutune__t4;

/* Reads `path` (gzip when it starts with the gzip magic, else plain JSON)
 * and places each result on `problem`'s space by matching parameter names
 * and value texts. On failure returns a status with a message naming the
 * file and field in `err`. The caller frees *out with cutune__t4_free. */
cutune_status cutune__t4_load(const char *path, const cutune_problem *problem,
                              cutune__t4 **out, char *err, size_t errlen);
void cutune__t4_free(cutune__t4 *t4);

#endif
