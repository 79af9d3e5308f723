/* Occupancy-based block-size suggestion for the worker (CUDA runtime). */
#ifndef CUTUNE_TUNER_OCCUPANCY_H
#define CUTUNE_TUNER_OCCUPANCY_H

#include <stddef.h>

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Same contract as cudaOccupancyMaxPotentialBlockSize(min_grid_size,
 * block_size, func, dynamic_smem, block_size_limit) for a fixed dynamic
 * shared-memory size, on the current device. `func` is a kernel handle
 * (cudaKernel_t) or a __global__ function's address. */
cudaError_t cutune__occupancy_max_potential_block_size(int *min_grid_size,
                                                       int *block_size,
                                                       const void *func,
                                                       size_t dynamic_smem,
                                                       int block_size_limit);

#ifdef __cplusplus
}
#endif

#endif
