/* NVRTC's rejections of a compiled space, grouped so that a kernel
 * developer reads each reason once (cutune compile --verbose). */
#ifndef CUTUNE_TUNER_SESSION_COMPILE_REJECTS_H
#define CUTUNE_TUNER_SESSION_COMPILE_REJECTS_H

#include <stddef.h>

#include "cutune/cutune.h"

typedef struct cutune__rejects cutune__rejects;

/* Groups configurations configs[0..n) of `p` (space indices), whose NVRTC
 * logs are logs[0..n) (borrowed for the call; NULL reads as ""): two
 * share a group when their logs are the same once each one's own values
 * are masked out of it; largest group first, then by the space index of
 * its first member.
 * Returns NULL when memory ran out; the result owns copies of what it
 * shows and outlives `p`. */
cutune__rejects *cutune__rejects_group(const cutune_problem *p,
                                       const size_t *configs,
                                       const char *const *logs, size_t n);
void cutune__rejects_free(cutune__rejects *r);
size_t cutune__rejects_count(const cutune__rejects *r);
/* Group i (< count), borrowed from `r`; NULL past the end. */
const cutune_rejected_group *cutune__rejects_get(const cutune__rejects *r,
                                                 size_t i);

#endif
