/* A kernel with an ordinary tunable; the T1 gives `unroll_depth` a Default
 * (3) that is not among its Values ([1, 2, 4]), as hotspot's max_tfactor
 * does. */
extern "C" __global__ void scale(float *out, const float *in, int n)
{
    const int base = (blockIdx.x * block_size_x + threadIdx.x) * unroll_depth;
#pragma unroll
    for (int k = 0; k < unroll_depth; k++) {
        const int i = base + k;
        if (i < n)
            out[i] = 2.0f * in[i];
    }
}
