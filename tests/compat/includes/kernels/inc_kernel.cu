/* A kernel in a subfolder of the T1 file's folder that includes a header
 * beside itself: the include must be resolved relative to the kernel's
 * folder. */
#include "helper.h"

extern "C" __global__ void inc_kernel(float *out, const float *in, int n)
{
    const int i = blockIdx.x * block_size_x + threadIdx.x;
    if (i < n)
        out[i] = helper_scale(in[i]);
}
