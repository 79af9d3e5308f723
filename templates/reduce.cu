/* reduce: sum[0] += the sum of n floats.
 *
 * Each thread adds its share into a private accumulator, the block combines
 * its threads' sums, and one thread per block adds the block's sum to the
 * result with an atomic. The accumulators are doubles: the order in which
 * the grid adds (which depends on the block size, the grid policy and the
 * atomics' arrival) changes a float sum of 2^26 values by far more than
 * cutune's validation tolerance (1e-5 relative) allows, while double sums
 * of the same floats in any order agree to about 1e-12. The adds are not
 * what limits this kernel: an H100 streams about 3 floats per SM per clock
 * and adds 64 doubles.
 *
 * Tunables (set with -D by cutune):
 *   block_size_x  threads per block (a power of two)
 *   ITEMS         vector loads per thread per step, block_size_x apart, all
 *                 issued before the first add so that many are in flight
 *   VEC           floats per load: 1 (float), 2 (float2), 4 (float4)
 *   WARP_SHUFFLE  1: the block's sum is combined with warp shuffles (a warp
 *                 sums in registers, one shared slot per warp); 0: a
 *                 shared-memory tree all the way down
 *   GRID_BLOCKS   0: one block per tile of block_size_x * ITEMS * VEC
 *                 floats; otherwise that many blocks stride over the input
 *                 (the values are multiples of the 132 SMs of an H100 SXM
 *                 or H200, since a T1 expression cannot read the device)
 *   USE_LDG       load through the read-only data cache (__ldg)
 *
 * The last n % VEC floats are added by the first threads of block 0.
 */
#ifndef block_size_x
#define block_size_x 256
#endif
#ifndef ITEMS
#define ITEMS 1
#endif
#ifndef VEC
#define VEC 1
#endif
#ifndef WARP_SHUFFLE
#define WARP_SHUFFLE 0
#endif
#ifndef GRID_BLOCKS
#define GRID_BLOCKS 0
#endif

#include "cutune_prelude.cuh"

#if (block_size_x & (block_size_x - 1)) != 0 || block_size_x < 32
#error block_size_x must be a power of two of at least 32
#endif

#if VEC == 4
typedef float4 reduce_vec;
#elif VEC == 2
typedef float2 reduce_vec;
#elif VEC == 1
typedef float reduce_vec;
#else
#error VEC must be 1, 2 or 4
#endif

__device__ __forceinline__ double total(float v) { return v; }
__device__ __forceinline__ double total(float2 v)
{
    return (double)v.x + (double)v.y;
}
__device__ __forceinline__ double total(float4 v)
{
    return ((double)v.x + (double)v.y) + ((double)v.z + (double)v.w);
}

extern "C" __global__ void __launch_bounds__(block_size_x)
reduce(double *sum, const float *__restrict__ in, int n)
{
    const long long nvec = n / VEC;
    const reduce_vec *v = (const reduce_vec *)in;
    const long long step = (long long)block_size_x * ITEMS;
    double acc = 0.0;
#if GRID_BLOCKS == 0
    const long long start = blockIdx.x * step + threadIdx.x;
    const long long stride = nvec; /* ends the loop after one pass */
#else
    const long long start = blockIdx.x * step + threadIdx.x;
    const long long stride = (long long)gridDim.x * step;
#endif
    for (long long base = start; base < nvec; base += stride) {
        reduce_vec x[ITEMS];
#pragma unroll
        for (int j = 0; j < ITEMS; j++) {
            const long long i = base + (long long)j * block_size_x;
            if (i < nvec)
                x[j] = CUTUNE_LOAD(&v[i]);
        }
#pragma unroll
        for (int j = 0; j < ITEMS; j++)
            if (base + (long long)j * block_size_x < nvec)
                acc += total(x[j]);
    }
    const long long tail = nvec * VEC + threadIdx.x;
    if (VEC > 1 && blockIdx.x == 0 && tail < n)
        acc += CUTUNE_LOAD(&in[tail]);

#if WARP_SHUFFLE
    __shared__ double warp_sums[block_size_x / 32];
#pragma unroll
    for (int d = 16; d > 0; d >>= 1)
        acc += __shfl_down_sync(0xffffffffu, acc, d);
    if (threadIdx.x % 32 == 0)
        warp_sums[threadIdx.x / 32] = acc;
    __syncthreads();
    if (threadIdx.x < 32) {
        acc = threadIdx.x < block_size_x / 32 ? warp_sums[threadIdx.x] : 0.0;
#pragma unroll
        for (int d = 16; d > 0; d >>= 1)
            acc += __shfl_down_sync(0xffffffffu, acc, d);
    }
#else
    __shared__ double sums[block_size_x];
    sums[threadIdx.x] = acc;
    __syncthreads();
#pragma unroll
    for (int d = block_size_x / 2; d > 0; d >>= 1) {
        if (threadIdx.x < d)
            sums[threadIdx.x] += sums[threadIdx.x + d];
        __syncthreads();
    }
    acc = sums[0];
#endif
    if (threadIdx.x == 0)
        atomicAdd(sum, acc);
}
