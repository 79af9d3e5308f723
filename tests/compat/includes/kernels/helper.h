/* Found beside the kernel file (kernels/), not beside the T1 file. */
#ifndef COMPAT_HELPER_H
#define COMPAT_HELPER_H

#define HELPER_FACTOR 3.0f

__device__ inline float helper_scale(float x)
{
    return HELPER_FACTOR * x + 1.0f;
}

#endif
