/* Constant memory, as the hub's convolution does it: the module declares
 * `__constant__ float filter_c[16]` AND the kernel takes a pointer for the
 * same T1 argument (three T1 arguments, three kernel parameters). The T1
 * argument `filter_c` ("MemType": "Constant") must be copied into the
 * __constant__ variable and also passed as the third parameter. If either
 * binding is missing the output is NaN, which never validates. */
#define N 4096
#define FILTER 16

__constant__ float filter_c[FILTER];

extern "C" __global__ void filter_both(float *out, const float *in,
                                       const float *filter)
{
    const int base = blockIdx.x * block_size_x * tile_size_x + threadIdx.x;
    for (int t = 0; t < tile_size_x; t++) {
        const int i = base + t * block_size_x;
        if (i < N) {
            const float c = filter_c[i % FILTER];
            const float p = filter[i % FILTER];
            /* Random fill lies in [0, 1); an unfilled __constant__ is 0. */
            const int ok = c == p && c > 0.0f && c < 1.0f;
            out[i] = ok ? in[i] * c + p : __int_as_float(0x7fc00000);
        }
    }
}
