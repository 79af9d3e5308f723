/* A sum in Kernel Tuner's reduction style: the grid is the tunable
 * num_blocks (ProblemSize names it), each block grid-strides over the
 * input and writes one partial sum. */
extern "C" __global__ void sum_floats(float *partial, const float *in, int n)
{
    __shared__ float acc[block_size_x];
    int stride = block_size_x * num_blocks * vector;
    float sum = 0.0f;
    for (int i = (blockIdx.x * block_size_x + threadIdx.x) * vector; i < n;
         i += stride)
        for (int v = 0; v < vector && i + v < n; v++)
            sum += in[i + v];
    acc[threadIdx.x] = sum;
    __syncthreads();
    for (int s = block_size_x / 2; s > 0; s /= 2) {
        if (threadIdx.x < s)
            acc[threadIdx.x] += acc[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        partial[blockIdx.x] = acc[0];
}
