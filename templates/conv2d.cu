/* conv2d: a 2D convolution (cross-correlation, as in deep learning) of a
 * W x H image with a FILTER_W x FILTER_H filter, without padding logic in
 * the kernel: `in` holds the image with its border, (W + FILTER_W - 1) x
 * (H + FILTER_H - 1) floats, and
 *
 *   out[y][x] = sum over fy, fx of in[y + fy][x + fx] * filter[fy][fx]
 *
 * for the W x H outputs (ProblemSize = [W, H]). The filter is 7 x 7 unless
 * FILTER_W / FILTER_H say otherwise (they are not tuned: the T1 sizes
 * assume 7).
 *
 * The filter lives in constant memory (the T1 argument `filter` is a
 * Symbol): every thread of a warp reads the same tap at the same time,
 * which the constant cache serves as a broadcast.
 *
 * Every output is accumulated by one thread with one fmaf per filter tap,
 * row by row, in every configuration, so all configurations agree to the
 * bit and validation against the default configuration is exact.
 *
 * Tunables (set with -D by cutune):
 *   block_size_x, block_size_y  threads per block
 *   TILE_X, TILE_Y  outputs per thread: TILE_X columns block_size_x apart
 *                 (so the loads of a warp stay coalesced) and TILE_Y
 *                 consecutive rows (which share input rows)
 *   USE_SHARED    1: the block first copies the input it needs (its output
 *                 tile plus the border) to shared memory and reads the taps
 *                 there; 0: the taps are read from global memory through
 *                 the caches
 *   USE_LDG       0/1: read the input of the global-memory variant with
 *                 __ldg
 *
 * Sizes that are not multiples of the block's tile are handled by guards.
 * The T1 conditions exclude more than 1024 threads and a shared tile over
 * 48 KiB.
 */
#ifndef block_size_x
#define block_size_x 32
#endif
#ifndef block_size_y
#define block_size_y 8
#endif
#ifndef TILE_X
#define TILE_X 1
#endif
#ifndef TILE_Y
#define TILE_Y 1
#endif
#ifndef USE_SHARED
#define USE_SHARED 0
#endif
#ifndef FILTER_W
#define FILTER_W 7
#endif
#ifndef FILTER_H
#define FILTER_H 7
#endif

#include "cutune_prelude.cuh"

/* The block's output tile, and the input it reads. */
#define OUT_W (block_size_x * TILE_X)
#define OUT_H (block_size_y * TILE_Y)
#define IN_W (OUT_W + FILTER_W - 1)
#define IN_H (OUT_H + FILTER_H - 1)

/* Filled by the tuner from the T1 argument `filter` after each load. */
__constant__ float filter[FILTER_H * FILTER_W];

extern "C" __global__ void __launch_bounds__(block_size_x * block_size_y)
conv2d(float *__restrict__ out, const float *__restrict__ in, int W, int H)
{
    const int in_w = W + FILTER_W - 1;
    const int in_h = H + FILTER_H - 1;
    const int x0 = blockIdx.x * OUT_W;
    const int y0 = blockIdx.y * OUT_H;
    const int tx = threadIdx.x, ty = threadIdx.y;

    float acc[TILE_Y][TILE_X];
#pragma unroll
    for (int j = 0; j < TILE_Y; j++)
#pragma unroll
        for (int i = 0; i < TILE_X; i++)
            acc[j][i] = 0.0f;

#if USE_SHARED
    __shared__ float tile[IN_H][IN_W];
    for (int k = ty * block_size_x + tx; k < IN_H * IN_W;
         k += block_size_x * block_size_y) {
        const int r = k / IN_W, c = k % IN_W;
        const int gy = y0 + r, gx = x0 + c;
        tile[r][c] = gy < in_h && gx < in_w
                         ? in[(long long)gy * in_w + gx]
                         : 0.0f;
    }
    __syncthreads();
#endif

    for (int fy = 0; fy < FILTER_H; fy++) {
#pragma unroll
        for (int fx = 0; fx < FILTER_W; fx++) {
            const float f = filter[fy * FILTER_W + fx];
#pragma unroll
            for (int j = 0; j < TILE_Y; j++) {
#pragma unroll
                for (int i = 0; i < TILE_X; i++) {
#if USE_SHARED
                    const float v =
                        tile[ty * TILE_Y + j + fy][tx + i * block_size_x + fx];
#else
                    const int gy = y0 + ty * TILE_Y + j + fy;
                    const int gx = x0 + tx + i * block_size_x + fx;
                    const float v =
                        gy < in_h && gx < in_w
                            ? CUTUNE_LOAD(&in[(long long)gy * in_w + gx])
                            : 0.0f;
#endif
                    acc[j][i] = fmaf(v, f, acc[j][i]);
                }
            }
        }
    }

#pragma unroll
    for (int j = 0; j < TILE_Y; j++) {
        const int y = y0 + ty * TILE_Y + j;
#pragma unroll
        for (int i = 0; i < TILE_X; i++) {
            const int x = x0 + tx + i * block_size_x;
            if (y < H && x < W)
                out[(long long)y * W + x] = acc[j][i];
        }
    }
}
