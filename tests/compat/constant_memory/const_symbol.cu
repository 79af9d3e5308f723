/* Constant memory without the pointer: the module declares
 * `__constant__ float filter_c[16]` and the kernel takes one parameter
 * fewer than the T1 lists (two parameters, three T1 arguments). The T1
 * argument `filter_c` ("MemType": "Constant") is only copied into the
 * __constant__ variable and left out of the launch. An unfilled variable
 * makes the output NaN, which never validates. */
#define N 4096
#define FILTER 16

__constant__ float filter_c[FILTER];

extern "C" __global__ void filter_symbol(float *out, const float *in)
{
    const int base = blockIdx.x * block_size_x * tile_size_x + threadIdx.x;
    for (int t = 0; t < tile_size_x; t++) {
        const int i = base + t * block_size_x;
        if (i < N) {
            const float c = filter_c[i % FILTER];
            const int ok = c > 0.0f && c < 1.0f;
            out[i] = ok ? in[i] * c : __int_as_float(0x7fc00000);
        }
    }
}
