/* The worker's helper kernels (argument fills, output comparison), as CUDA
 * source for NVRTC. Kept
 * apart from the worker so a test can compile them on a machine without a
 * GPU. */
#ifndef CUTUNE_TUNER_COMPARE_KERNELS_H
#define CUTUNE_TUNER_COMPARE_KERNELS_H

#include "dtype.h"

extern const char cutune__compare_source[];
/* The kernel comparing elements of each cutune__dtype, by its value. */
extern const char *const cutune__compare_names[CUTUNE__DT_COUNT];
/* The kernel filling arguments of each cutune__dtype, by its value. */
extern const char *const cutune__fill_names[CUTUNE__DT_COUNT];

#endif
