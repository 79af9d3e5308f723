/* The CUDA side of the C function make_kt_cache.py tunes on the CPU: one
 * thread block sums the input, `vector` elements at a time. */
extern "C" __global__ void sum_floats(float *out, const float *in, int n)
{
    __shared__ float acc[block_size_x];
    float sum = 0.0f;
    for (int i = threadIdx.x * vector; i + vector <= n;
         i += block_size_x * vector)
        for (int v = 0; v < vector; v++)
            sum += in[i + v];
    acc[threadIdx.x] = sum;
    __syncthreads();
    for (int s = block_size_x / 2; s > 0; s /= 2) {
        if (threadIdx.x < s)
            acc[threadIdx.x] += acc[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        out[0] = acc[0];
}
