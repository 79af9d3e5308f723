/* aos_soa: the "add 10 to x, 20 to y" kernel over n elements {x, y}, stored
 * as an array of structures (LAYOUT 0: x0 y0 x1 y1 ...) or as a structure
 * of arrays (LAYOUT 1: x0 x1 ... and y0 y1 ...). Input and output use the
 * same layout, so the layout's whole cost shows in the time.
 *
 * Validation across layouts: cutune checks every configuration against the
 * default configuration's output, element by element, so the output buffer
 * must read the same in both layouts. The problem's inputs therefore hold
 * x = 11 and y = 1 in every element (the planes `xs` and `ys` as float
 * constants, the structures `aos` as a double constant whose bits are the
 * float pair {11, 1}); the result of every element is then {21, 21}, the
 * same bytes in either layout, and a kernel that mixes up the fields (11 +
 * 20 or 1 + 10), misses an element or writes the wrong place still fails.
 * The GPU test runs both layouts on random data against a CPU reference.
 *
 * Tunables (set with -D by cutune):
 *   block_size_x  threads per block
 *   LAYOUT        0: array of structures, 1: structure of arrays
 *   VEC           consecutive elements a thread handles per access: one
 *                 access of 8 * VEC bytes in the structures (float2,
 *                 float4, two float4) or 4 * VEC bytes per plane (float,
 *                 float2, float4)
 *   UNROLL        groups per thread, block_size_x apart, all loaded before
 *                 the first store
 *   USE_LDG       load through the read-only data cache (__ldg)
 *   USE_RESTRICT  declare the pointers __restrict__
 *
 * The structures' output is one buffer of 2n floats; the planes' output is
 * the same buffer with x in [0, n) and y in [n, 2n). When n is not a
 * multiple of VEC the y plane is not aligned for vector stores, so the
 * planes then store one float at a time.
 */
#ifndef block_size_x
#define block_size_x 256
#endif
#ifndef LAYOUT
#define LAYOUT 0
#endif
#ifndef VEC
#define VEC 1
#endif
#ifndef UNROLL
#define UNROLL 1
#endif

#include "cutune_prelude.cuh"

#if VEC != 1 && VEC != 2 && VEC != 4
#error VEC must be 1, 2 or 4
#endif

struct aos_soa_group {
    float x[VEC], y[VEC];
};

__device__ __forceinline__ void unpack(float *d, float v) { d[0] = v; }
__device__ __forceinline__ void unpack(float *d, float2 v)
{
    d[0] = v.x;
    d[1] = v.y;
}
__device__ __forceinline__ void unpack(float *d, float4 v)
{
    d[0] = v.x;
    d[1] = v.y;
    d[2] = v.z;
    d[3] = v.w;
}

#if VEC == 4
typedef float4 plane_vec;
#elif VEC == 2
typedef float2 plane_vec;
#else
typedef float plane_vec;
#endif

__device__ __forceinline__ plane_vec pack(const float *s)
{
#if VEC == 4
    return make_float4(s[0], s[1], s[2], s[3]);
#elif VEC == 2
    return make_float2(s[0], s[1]);
#else
    return s[0];
#endif
}

/* Group g holds elements [g * VEC, g * VEC + VEC). */
__device__ __forceinline__ aos_soa_group
load_group(const float *CUTUNE_RESTRICT aos, const float *CUTUNE_RESTRICT xs,
           const float *CUTUNE_RESTRICT ys, long long g)
{
    aos_soa_group v;
#if LAYOUT == 0
    const float *p = aos + 2 * g * VEC;
#if VEC == 1
    float2 a = CUTUNE_LOAD((const float2 *)p);
    v.x[0] = a.x;
    v.y[0] = a.y;
#else
#pragma unroll
    for (int h = 0; h < VEC / 2; h++) {
        float4 a = CUTUNE_LOAD((const float4 *)p + h);
        v.x[2 * h] = a.x;
        v.y[2 * h] = a.y;
        v.x[2 * h + 1] = a.z;
        v.y[2 * h + 1] = a.w;
    }
#endif
    (void)xs;
    (void)ys;
#else
    unpack(v.x, CUTUNE_LOAD((const plane_vec *)xs + g));
    unpack(v.y, CUTUNE_LOAD((const plane_vec *)ys + g));
    (void)aos;
#endif
    return v;
}

__device__ __forceinline__ void
store_group(float *CUTUNE_RESTRICT out, const aos_soa_group &v, long long g,
            int n)
{
#if LAYOUT == 0
    float *p = out + 2 * g * VEC;
#if VEC == 1
    *(float2 *)p = make_float2(v.x[0], v.y[0]);
#else
#pragma unroll
    for (int h = 0; h < VEC / 2; h++)
        ((float4 *)p)[h] = make_float4(v.x[2 * h], v.y[2 * h],
                                       v.x[2 * h + 1], v.y[2 * h + 1]);
#endif
    (void)n;
#else
    if (n % VEC == 0) {
        ((plane_vec *)out)[g] = pack(v.x);
        ((plane_vec *)(out + n))[g] = pack(v.y);
    } else {
#pragma unroll
        for (int e = 0; e < VEC; e++) {
            out[g * VEC + e] = v.x[e];
            out[n + g * VEC + e] = v.y[e];
        }
    }
#endif
}

extern "C" __global__ void __launch_bounds__(block_size_x)
aos_soa(float *CUTUNE_RESTRICT out, const float *CUTUNE_RESTRICT aos,
        const float *CUTUNE_RESTRICT xs, const float *CUTUNE_RESTRICT ys,
        int n)
{
    const long long groups = n / VEC;
    const long long first =
        (long long)blockIdx.x * (block_size_x * UNROLL) + threadIdx.x;
    aos_soa_group v[UNROLL];
#pragma unroll
    for (int j = 0; j < UNROLL; j++) {
        const long long g = first + (long long)j * block_size_x;
        if (g < groups)
            v[j] = load_group(aos, xs, ys, g);
    }
#pragma unroll
    for (int j = 0; j < UNROLL; j++) {
        const long long g = first + (long long)j * block_size_x;
        if (g < groups) {
#pragma unroll
            for (int e = 0; e < VEC; e++) {
                v[j].x[e] += 10.0f;
                v[j].y[e] += 20.0f;
            }
            store_group(out, v[j], g, n);
        }
    }
    /* The last n % VEC elements, one per thread of block 0. */
    const long long i = groups * VEC + threadIdx.x;
    if (VEC > 1 && blockIdx.x == 0 && i < n) {
#if LAYOUT == 0
        float2 a = CUTUNE_LOAD((const float2 *)aos + i);
        ((float2 *)out)[i] = make_float2(a.x + 10.0f, a.y + 20.0f);
#else
        out[i] = CUTUNE_LOAD(&xs[i]) + 10.0f;
        out[n + i] = CUTUNE_LOAD(&ys[i]) + 20.0f;
#endif
    }
}
