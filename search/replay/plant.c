/* Planted optima for robustness benchmarks and tests (plant.h). */
#include "plant.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "replay.h"

/* The copy of the record and its optimum; CUTUNE__NONE when none. */
static size_t copy_record(const cutune__space *s, const double *objective,
                          double *out, double *optimum)
{
    size_t n = cutune__space_size(s), best;
    memcpy(out, objective, n * sizeof *out);
    *optimum = cutune__replay_optimum(objective, n, &best);
    return best;
}

size_t cutune__plant_edge(const cutune__space *s, const double *objective,
                          double *out)
{
    double opt;
    size_t best = copy_record(s, objective, out, &opt);
    size_t np = cutune__space_param_count(s);
    if (best == CUTUNE__NONE || np == 0)
        return CUTUNE__NONE;
    uint32_t *c = malloc(np * sizeof *c);
    if (!c)
        return CUTUNE__NONE;
    size_t at = CUTUNE__NONE;
    /* Largest block first; the smallest where the largest is the
     * optimum already. */
    for (int largest = 1; largest >= 0 && at == CUTUNE__NONE; largest--) {
        int any = 0;
        memcpy(c, cutune__space_config(s, best), np * sizeof *c);
        for (size_t p = 0; p < np; p++)
            if (cutune__space_is_block_param(s, p) &&
                cutune__space_value_count(s, p) > 1) {
                c[p] = largest ? (uint32_t)cutune__space_value_count(s, p) - 1
                               : 0;
                any = 1;
            }
        size_t idx = any ? cutune__space_nearest(s, c) : CUTUNE__NONE;
        if (idx != CUTUNE__NONE && idx != best)
            at = idx;
    }
    free(c);
    if (at != CUTUNE__NONE)
        out[at] = opt / PLANT_EDGE_GAIN;
    return at;
}

/* How far configuration i is from `from`: the parameters that differ
 * (times `weight`), plus value steps scaled to [0, 1] per parameter. */
static double distance(const cutune__space *s, size_t i, size_t from,
                       double weight)
{
    const uint32_t *a = cutune__space_config(s, i);
    const uint32_t *b = cutune__space_config(s, from);
    double d = 0;
    for (size_t p = 0; p < cutune__space_param_count(s); p++) {
        size_t nv = cutune__space_value_count(s, p);
        if (nv < 2 || a[p] == b[p])
            continue;
        d += weight + fabs((double)a[p] - (double)b[p]) / (double)(nv - 1);
    }
    return d;
}

size_t cutune__plant_basin(const cutune__space *s, const double *objective,
                           double *out)
{
    double opt;
    size_t n = cutune__space_size(s);
    size_t best = copy_record(s, objective, out, &opt);
    if (best == CUTUNE__NONE)
        return CUTUNE__NONE;
    size_t centre = CUTUNE__NONE;
    double far = -1;
    for (size_t i = 0; i < n; i++) {
        double d = distance(s, i, best, 1000.0);
        if (isfinite(objective[i]) && d > far) {
            far = d;
            centre = i;
        }
    }
    size_t max_nbr = 0;
    for (size_t p = 0; p < cutune__space_param_count(s); p++)
        max_nbr += cutune__space_value_count(s, p);
    size_t *nbr = malloc((max_nbr ? max_nbr : 1) * sizeof *nbr);
    size_t basin[4] = {centre, CUTUNE__NONE, CUTUNE__NONE, CUTUNE__NONE},
           n_basin = 1;
    if (!nbr || centre == best)
        goto out;
    size_t m = cutune__space_neighbours(s, centre, CUTUNE__NEIGHBOUR_ADJACENT,
                                        nbr, max_nbr);
    for (size_t k = 0; k < m && k < max_nbr && n_basin < 4; k++)
        if (isfinite(objective[nbr[k]]) && nbr[k] != best)
            basin[n_basin++] = nbr[k];
    /* The valley around it: as fast as the recorded optimum (within
     * PLANT_VALLEY_FLOOR) next to the basin, PLANT_RIM times it at
     * PLANT_VALLEY_RADIUS parameter ranges away, linear in between. */
    for (size_t i = 0; i < n; i++) {
        double d = distance(s, i, centre, 0.0);
        double cap =
            opt * (PLANT_VALLEY_FLOOR +
                   (PLANT_RIM - PLANT_VALLEY_FLOOR) * d / PLANT_VALLEY_RADIUS);
        if (d <= PLANT_VALLEY_RADIUS && isfinite(out[i]) && out[i] > cap)
            out[i] = cap;
    }
    /* The centre fastest, the others a step behind, as in a real basin. */
    for (size_t k = 0; k < n_basin; k++)
        out[basin[k]] = opt / PLANT_BASIN_GAIN * (1.0 + 0.01 * (double)k);
    free(nbr);
    return centre;
out:
    free(nbr);
    return CUTUNE__NONE;
}
