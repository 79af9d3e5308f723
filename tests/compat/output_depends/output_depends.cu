/* An output that depends on a tunable by design, like hotspot's
 * temporal_tiling_factor: `steps` time steps each add 1, so
 * out[i] = in[i] + steps, and every configuration whose steps is not the
 * default's gives another output. */
extern "C" __global__ void advance(float *out, const float *in, int n)
{
    const int i = blockIdx.x * block_size_x + threadIdx.x;
    if (i < n) {
        float v = in[i];
        for (int s = 0; s < steps; s++)
            v += 1.0f;
        out[i] = v;
    }
}
