/* write_offset: C[i + offset] = A[i] + B[i].
 *
 * The mirror of vector_add: the reads are aligned and `offset` shifts the
 * writes off the 128-byte segment boundaries, so the cost of misaligned
 * stores can be compared with that of misaligned loads by changing one
 * argument. C holds n + 32 floats so any offset up to 32 stays in bounds.
 *
 * Tunables (set with -D by cutune):
 *   block_size_x  threads per block
 *   UNROLL        elements per thread; a thread's elements are block_size_x
 *                 apart, so every access of one unrolled step stays
 *                 coalesced and UNROLL independent loads are in flight
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
write_offset(float *CUTUNE_RESTRICT c, const float *CUTUNE_RESTRICT a,
             const float *CUTUNE_RESTRICT b, int n, int offset)
{
    const long long first =
        (long long)blockIdx.x * (block_size_x * UNROLL) + threadIdx.x;
    /* Loads first, stores after: without __restrict__ the compiler may not
     * move a load across a store to c, so this order is what keeps UNROLL
     * loads in flight in every variant. */
    float sum[UNROLL];
#pragma unroll
    for (int j = 0; j < UNROLL; j++) {
        const long long i = first + (long long)j * block_size_x;
        sum[j] = i < n ? CUTUNE_LOAD(&a[i]) + CUTUNE_LOAD(&b[i]) : 0.0f;
    }
#pragma unroll
    for (int j = 0; j < UNROLL; j++) {
        const long long i = first + (long long)j * block_size_x;
        if (i < n)
            c[i + offset] = sum[j];
    }
}
