/* A one-parameter space x = 0..n-1 for replay tests: configuration i is
 * x = i, so a record indexed by configuration reads as a line. */
#ifndef CUTUNE_TESTS_LINE_SPACE_H
#define CUTUNE_TESTS_LINE_SPACE_H

#include <stddef.h>
#include <stdint.h>

#include "space/space.h"

/* `v` holds n values and must outlive the space. */
static inline cutune__space *line_space(size_t n, cutune__value *v)
{
    for (size_t i = 0; i < n; i++) {
        v[i].type = CUTUNE__V_INT;
        v[i].u.i = (int64_t)i;
    }
    cutune__param p = {"x", v, n};
    return cutune__space_create(&p, 1, NULL, 0, NULL, 0, NULL);
}

#endif
