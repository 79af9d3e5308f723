/* Element types and fills of kernel arguments: the vocabulary the problem
 * loader and the GPU worker share. */
#ifndef CUTUNE_TUNER_DTYPE_H
#define CUTUNE_TUNER_DTYPE_H

#include <stddef.h>

typedef enum cutune__dtype {
    CUTUNE__DT_FLOAT = 0,
    CUTUNE__DT_DOUBLE,
    CUTUNE__DT_INT8,
    CUTUNE__DT_UINT8,
    CUTUNE__DT_INT16,
    CUTUNE__DT_UINT16,
    CUTUNE__DT_INT32,
    CUTUNE__DT_UINT32,
    CUTUNE__DT_INT64,
    CUTUNE__DT_UINT64
} cutune__dtype;

#define CUTUNE__DT_COUNT 10

typedef enum cutune__fill {
    CUTUNE__FILL_CONSTANT = 0,
    CUTUNE__FILL_RANDOM = 1,
    CUTUNE__FILL_BINARY = 2     /* bytes given whole (references only) */
} cutune__fill;

static inline size_t cutune__dtype_size(cutune__dtype t)
{
    static const size_t sizes[CUTUNE__DT_COUNT] = {4, 8, 1, 1, 2,
                                                   2, 4, 4, 8, 8};
    return (unsigned)t < CUTUNE__DT_COUNT ? sizes[t] : 0;
}

#endif
