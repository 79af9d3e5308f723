/* The synthetic space the strategy tests share: bx 16..1024 (powers of
 * two) x by 1..16 x unroll 1..8 x flag 0/1, with bx * by <= 1024 — shaped
 * like a launch configuration, and constrained. */
#ifndef CUTUNE_TESTS_LAUNCH_SPACE_H
#define CUTUNE_TESTS_LAUNCH_SPACE_H

#include "space/space.h"

static cutune__value launch_bx[7], launch_by[5], launch_unroll[8],
    launch_flag[2];

static cutune__space *make_space(void)
{
    for (int i = 0; i < 7; i++) {
        launch_bx[i].type = CUTUNE__V_INT;
        launch_bx[i].u.i = 16LL << i;
    }
    for (int i = 0; i < 5; i++) {
        launch_by[i].type = CUTUNE__V_INT;
        launch_by[i].u.i = 1LL << i;
    }
    for (int i = 0; i < 8; i++) {
        launch_unroll[i].type = CUTUNE__V_INT;
        launch_unroll[i].u.i = i + 1;
    }
    for (int i = 0; i < 2; i++) {
        launch_flag[i].type = CUTUNE__V_INT;
        launch_flag[i].u.i = i;
    }
    cutune__param params[] = {{"bx", launch_bx, 7},
                              {"by", launch_by, 5},
                              {"unroll", launch_unroll, 8},
                              {"flag", launch_flag, 2}};
    cutune__expr *cond = cutune__expr_parse("bx * by <= 1024", 0, NULL);
    if (!cond)
        return NULL;
    const cutune__expr *conds[] = {cond};
    cutune__space *s =
        cutune__space_create(params, 4, conds, 1, NULL, 0, NULL);
    cutune__expr_free(cond);
    return s;
}

#endif
