/* The kernel takes `int n`; the T1 declares n a "double" Scalar. The
 * check of the T1 arguments against the loaded kernel's parameters must
 * stop before the first launch, naming KernelSpecification.Arguments[2]. */
extern "C" __global__ void scale(float *out, const float *in, int n)
{
    const int i = blockIdx.x * block_size_x + threadIdx.x;
    if (i < n)
        out[i] = 2.0f * in[i];
}
