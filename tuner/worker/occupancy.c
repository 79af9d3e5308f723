/* The occupancy API's block-size suggestion, in C.
 *
 * cudaOccupancyMaxPotentialBlockSize is a C++ template in
 * cuda_runtime.h; cutune is C, so it computes the same answer here from
 * cudaOccupancyMaxActiveBlocksPerMultiprocessor: try every block size from
 * the largest allowed down to one warp, in steps of a warp, and keep the one
 * with the most resident threads per SM (the first found on ties, i.e. the
 * largest), stopping early once an SM is full. A GPU test checks the result
 * equals the template's for the same kernels.
 */
#include "occupancy.h"

cudaError_t cutune__occupancy_max_potential_block_size(int *min_grid_size,
                                                       int *block_size,
                                                       const void *func,
                                                       size_t dynamic_smem,
                                                       int block_size_limit)
{
    int device, max_threads_sm, max_threads_block, warp, sm_count;
    cudaError_t e;
    if ((e = cudaGetDevice(&device)) != cudaSuccess ||
        (e = cudaDeviceGetAttribute(&max_threads_sm,
                                    cudaDevAttrMaxThreadsPerMultiProcessor,
                                    device)) != cudaSuccess ||
        (e = cudaDeviceGetAttribute(&max_threads_block,
                                    cudaDevAttrMaxThreadsPerBlock, device)) !=
            cudaSuccess ||
        (e = cudaDeviceGetAttribute(&warp, cudaDevAttrWarpSize, device)) !=
            cudaSuccess ||
        (e = cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount,
                                    device)) != cudaSuccess)
        return e;
    struct cudaFuncAttributes attr;
    if ((e = cudaFuncGetAttributes(&attr, func)) != cudaSuccess)
        return e;

    int limit = block_size_limit > 0 ? block_size_limit : max_threads_block;
    if (limit > max_threads_block)
        limit = max_threads_block;
    if (limit > attr.maxThreadsPerBlock)
        limit = attr.maxThreadsPerBlock;
    const int limit_aligned = (limit + warp - 1) / warp * warp;

    int best_threads = 0, best_block = 0, best_blocks_per_sm = 0;
    for (int aligned = limit_aligned; aligned > 0; aligned -= warp) {
        /* The top candidate may be a partial warp when the limit is. */
        const int candidate = aligned > limit ? limit : aligned;
        int blocks_per_sm = 0;
        e = cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(
            &blocks_per_sm, func, candidate, dynamic_smem,
            cudaOccupancyDefault);
        if (e != cudaSuccess)
            return e;
        const int threads = candidate * blocks_per_sm;
        if (threads > best_threads) {
            best_threads = threads;
            best_block = candidate;
            best_blocks_per_sm = blocks_per_sm;
        }
        if (best_threads == max_threads_sm)
            break;
    }
    *min_grid_size = best_blocks_per_sm * sm_count;
    *block_size = best_block;
    return cudaSuccess;
}
