/* transpose: out = in^T for a row-major matrix of `rows` x `cols` floats
 * (ProblemSize = [cols, rows]); out is cols x rows.
 *
 * Each block moves one square tile through shared memory, so that both the
 * loads (along a row of `in`) and the stores (along a row of `out`) are
 * coalesced; the transposition itself happens in shared memory, read down
 * a column. Without padding that column read hits one bank per row of the
 * tile (a 32-way conflict for 32 or 64 wide tiles); one float of padding
 * per row spreads it over all banks.
 *
 * Tunables (set with -D by cutune):
 *   block_size_x  threads per block in x, and the tile's width and height
 *   block_size_y  threads per block in y; each thread moves
 *                 block_size_x / block_size_y rows of the tile, so that many
 *                 loads are in flight per thread
 *   PAD           floats of padding per row of the shared tile (0 or 1)
 *   USE_LDG       load through the read-only data cache (__ldg)
 *   USE_RESTRICT  declare the pointers __restrict__
 *
 * Sizes that are not multiples of the tile are handled by guards on every
 * access; the tile must divide into rows per thread (block_size_x %
 * block_size_y == 0) and fit in 1024 threads, which the T1 conditions
 * require.
 */
#ifndef block_size_x
#define block_size_x 32
#endif
#ifndef block_size_y
#define block_size_y 8
#endif
#ifndef PAD
#define PAD 1
#endif

#include "cutune_prelude.cuh"

#define TILE block_size_x

#if TILE % block_size_y != 0
#error block_size_y must divide block_size_x
#endif

extern "C" __global__ void __launch_bounds__(block_size_x * block_size_y)
transpose(float *CUTUNE_RESTRICT out, const float *CUTUNE_RESTRICT in,
          int cols, int rows)
{
    __shared__ float tile[TILE][TILE + PAD];
    const int col0 = blockIdx.x * TILE;
    const int row0 = blockIdx.y * TILE;

    const int col = col0 + threadIdx.x;
#pragma unroll
    for (int k = 0; k < TILE / block_size_y; k++) {
        const int r = threadIdx.y + k * block_size_y;
        const int row = row0 + r;
        if (row < rows && col < cols)
            tile[r][threadIdx.x] =
                CUTUNE_LOAD(&in[(long long)row * cols + col]);
    }
    __syncthreads();
    /* Row r of this output tile is column col0 + r of the input. */
    const int ocol = row0 + threadIdx.x;
#pragma unroll
    for (int k = 0; k < TILE / block_size_y; k++) {
        const int r = threadIdx.y + k * block_size_y;
        const int orow = col0 + r;
        if (orow < cols && ocol < rows)
            out[(long long)orow * rows + ocol] = tile[threadIdx.x][r];
    }
}
