/* An input read from a raw binary file (FillType BinaryRaw, DataSource
 * input.bin: 256 float32 values, value i = i * 0.25 - 8). Any other input
 * makes the output NaN, which never validates. */
extern "C" __global__ void binary_fill(float *out, const float *in, int n)
{
    const int i = blockIdx.x * block_size_x + threadIdx.x;
    if (i < n) {
        const float want = (float)i * 0.25f - 8.0f;
        out[i] = in[i] == want ? 2.0f * in[i] : __int_as_float(0x7fc00000);
    }
}
