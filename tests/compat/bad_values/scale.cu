/* The kernel the bad_values T1 files name (where they get that far). */
extern "C" __global__ void scale(float *out, const float *in, int n)
{
    const int i = blockIdx.x * block_size_x + threadIdx.x;
    if (i < n)
        out[i] = 2.0f * in[i];
}
