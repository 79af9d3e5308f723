/* Derived spaces for robustness: a recorded record of objectives (as
 * replay.h takes them) with the two kinds of optimum that issue 18 found on
 * GPUs the default strategy had never seen, planted where the recording
 * has none.
 *
 *  - Edge: a single configuration at the edge of the space becomes the
 *    optimum, PLANT_EDGE_GAIN faster than the recorded one: the recorded
 *    optimum's configuration with every block dimension at its largest
 *    value (the dedispersion optimum at block 32x32 on an unseen GPU,
 *    found there by brute force only), or, where that is the optimum
 *    itself, at its smallest. Its neighbours keep their times.
 *
 *  - Basin: a small basin far from the recorded optimum: the correct
 *    configuration that differs from the optimum in the most parameters
 *    (then the farthest in value steps; the lowest index among equals) and
 *    up to three of its one-step neighbours become PLANT_BASIN_GAIN
 *    faster than the recorded optimum (the four-configuration basin of
 *    convolution on an unseen GPU, about 17% faster than the rest). Around
 *    it lies a valley: a configuration d parameter ranges away (value
 *    steps scaled to [0, 1] per parameter, summed) gets at most
 *    PLANT_VALLEY_FLOOR + (PLANT_RIM - PLANT_VALLEY_FLOOR) d /
 *    PLANT_VALLEY_RADIUS times the recorded optimum, out to
 *    PLANT_VALLEY_RADIUS: next to the basin about as fast as the recorded
 *    optimum, at its rim as fast as the recorded optimum's slower
 *    neighbours. Climbs from random starts reached the real one, so it
 *    had such a valley; a basin without one is found by luck only.
 *
 * Both write the derived record to `out` (n entries, may not alias) and
 * return the planted optimum's index, or CUTUNE__NONE when the record has no
 * correct configuration or the space no such place (no block dimension
 * for an edge). Thread-safe; `objective` is only read.
 */
#ifndef CUTUNE_SEARCH_PLANT_H
#define CUTUNE_SEARCH_PLANT_H

#include <stddef.h>

#include "space/space.h"

#define PLANT_EDGE_GAIN     1.05
#define PLANT_BASIN_GAIN    1.17
#define PLANT_RIM           1.15
#define PLANT_VALLEY_FLOOR  0.98
#define PLANT_VALLEY_RADIUS 2.0

size_t cutune__plant_edge(const cutune__space *s, const double *objective,
                          double *out);
size_t cutune__plant_basin(const cutune__space *s, const double *objective,
                           double *out);

#endif
