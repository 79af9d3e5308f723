/* Element types and fills of kernel arguments: the vocabulary the problem
 * loader and the GPU worker share. */
#ifndef CUTUNE_TUNER_DTYPE_H
#define CUTUNE_TUNER_DTYPE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

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
    CUTUNE__DT_UINT64,
    CUTUNE__DT_HALF /* IEEE binary16, as CUDA's __half */
} cutune__dtype;

#define CUTUNE__DT_COUNT 11

typedef enum cutune__fill {
    CUTUNE__FILL_CONSTANT = 0,
    CUTUNE__FILL_RANDOM = 1,
    CUTUNE__FILL_BINARY = 2 /* bytes given whole (T1 BinaryRaw) */
} cutune__fill;

static inline size_t cutune__dtype_size(cutune__dtype t)
{
    static const size_t sizes[CUTUNE__DT_COUNT] = {4, 8, 1, 1, 2, 2,
                                                   4, 4, 8, 8, 2};
    return (unsigned)t < CUTUNE__DT_COUNT ? sizes[t] : 0;
}

/* The binary16 nearest to v (ties to even), for half scalars set on the
 * host; the GPU converts vectors itself. */
static inline uint16_t cutune__half_from_double(double v)
{
    float f = (float)v;
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    uint32_t sign = (x >> 16) & 0x8000u, man = x & 0x7fffffu;
    int e = (int)((x >> 23) & 0xffu) - 127 + 15;
    if (((x >> 23) & 0xffu) == 0xffu)
        return (uint16_t)(sign | 0x7c00u | (man ? 0x200u : 0));
    if (e >= 31)
        return (uint16_t)(sign | 0x7c00u);
    int shift = 13;
    uint32_t h;
    if (e <= 0) {
        if (e < -10)
            return (uint16_t)sign;
        man |= 0x800000u;
        shift = 14 - e;
        h = 0;
    } else {
        h = (uint32_t)e << 10;
    }
    uint32_t rem = man & ((1u << shift) - 1), halfway = 1u << (shift - 1);
    h |= man >> shift;
    if (rem > halfway || (rem == halfway && (h & 1u)))
        h++;
    return (uint16_t)(sign | h);
}

#endif
