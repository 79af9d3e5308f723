/* A HIP source, as the hub's dedispersion names it (Language still says
 * CUDA). cutune compiles CUDA with NVRTC and must refuse it with one
 * message naming KernelSpecification.KernelFile. */
#include <hip/hip_runtime.h>

extern "C" __global__ void scale(float *out, const float *in, int n)
{
    const int i = blockIdx.x * block_size_x + threadIdx.x;
    if (i < n)
        out[i] = 2.0f * in[i];
}
