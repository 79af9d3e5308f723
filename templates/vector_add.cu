/* vector_add: C[i] = A[i + offset] + B[i + offset].
 *
 * `offset` shifts the reads off the 128-byte segment boundaries, so the cost
 * of misaligned loads can be studied by changing one argument.
 *
 * Tunables (set with -D by cutune):
 *   block_size_x  threads per block
 *   UNROLL        elements per thread; a thread's elements are block_size_x
 *                 apart, so every load of one unrolled step stays coalesced
 *                 and UNROLL independent loads are in flight per thread
 *   USE_LDG       load through the read-only data cache (__ldg)
 *   USE_RESTRICT  declare the pointers __restrict__, which lets the compiler
 *                 hoist all loads above the stores
 */
#ifndef block_size_x
#define block_size_x 256
#endif
#ifndef UNROLL
#define UNROLL 1
#endif

#include "cutune_prelude.cuh"

extern "C" __global__ void __launch_bounds__(block_size_x)
vector_add(float *CUTUNE_RESTRICT c, const float *CUTUNE_RESTRICT a,
           const float *CUTUNE_RESTRICT b, int n, int offset)
{
    const long long first =
        (long long)blockIdx.x * (block_size_x * UNROLL) + threadIdx.x;
#pragma unroll
    for (int j = 0; j < UNROLL; j++) {
        const long long i = first + (long long)j * block_size_x;
        if (i < n) {
            const long long k = i + offset;
            c[i] = CUTUNE_LOAD(&a[k]) + CUTUNE_LOAD(&b[k]);
        }
    }
}
