/* copy: dst[i] = src[i], the streaming copy every memory-bound kernel is
 * measured against.
 *
 * Tunables (set with -D by cutune):
 *   block_size_x  threads per block
 *   VEC           floats per access: 1 (float), 2 (float2), 4 (float4);
 *                 wider accesses need fewer instructions per byte
 *   UNROLL        vectors per thread, block_size_x apart, all loaded before
 *                 the first store, so UNROLL * VEC * 4 bytes per thread are
 *                 in flight
 *   USE_LDG       load through the read-only data cache (__ldg)
 *   USE_RESTRICT  declare the pointers __restrict__
 *
 * cudaMalloc returns 256-byte aligned memory, so float4 accesses of the
 * vector part are aligned; the last n % VEC floats are copied one by one by
 * the first threads of block 0.
  * L1_POLICY is not a macro: its values are NVRTC options
 * (-Xptxas=-dlcm=ca caches global loads in L1, -dlcm=cg only in L2), named
 * in CutuneExtensions.CompilerOptionParameters of copy.json.
 */
#ifndef block_size_x
#define block_size_x 256
#endif
#ifndef VEC
#define VEC 1
#endif
#ifndef UNROLL
#define UNROLL 1
#endif

#include "cutune_prelude.cuh"

#if VEC == 4
typedef float4 copy_vec;
#elif VEC == 2
typedef float2 copy_vec;
#elif VEC == 1
typedef float copy_vec;
#else
#error VEC must be 1, 2 or 4
#endif

extern "C" __global__ void __launch_bounds__(block_size_x)
copy(float *CUTUNE_RESTRICT dst, const float *CUTUNE_RESTRICT src, int n)
{
    const long long nvec = n / VEC;
    const copy_vec *CUTUNE_RESTRICT s = (const copy_vec *)src;
    copy_vec *CUTUNE_RESTRICT d = (copy_vec *)dst;
    const long long first =
        (long long)blockIdx.x * (block_size_x * UNROLL) + threadIdx.x;
    copy_vec v[UNROLL];
#pragma unroll
    for (int j = 0; j < UNROLL; j++) {
        const long long i = first + (long long)j * block_size_x;
        if (i < nvec)
            v[j] = CUTUNE_LOAD(&s[i]);
    }
#pragma unroll
    for (int j = 0; j < UNROLL; j++) {
        const long long i = first + (long long)j * block_size_x;
        if (i < nvec)
            d[i] = v[j];
    }
    const long long tail = nvec * VEC + threadIdx.x;
    if (VEC > 1 && blockIdx.x == 0 && tail < n)
        dst[tail] = CUTUNE_LOAD(&src[tail]);
}
