#!/usr/bin/env python3
"""Makes kt_cache_cpu.json: Kernel Tuner tunes a small C function on the
CPU (lang="C", no GPU) and writes its own cache file. One configuration
(vector 8 with block_size_x 512) fails to compile on purpose, with the
message Kernel Tuner takes for a configuration that cannot compile (as
opposed to a broken kernel), so the file holds a CompilationFailedConfig.

    python3 -m venv /tmp/ktvenv && /tmp/ktvenv/bin/pip install kernel_tuner
    /tmp/ktvenv/bin/python make_kt_cache.py   # in a scratch folder
"""
import numpy
import kernel_tuner

source = r"""
#include <time.h>
#if vector == 8 && block_size_x == 512
#error "uses too much shared data (by design)"
#endif
float sum_floats(float *out, const float *in, int n)
{
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    float acc[vector] = {0};
    for (int rep = 0; rep < block_size_x / 32; rep++)
        for (int i = 0; i + vector <= n; i += vector)
            for (int v = 0; v < vector; v++)
                acc[v] += in[i + v];
    float s = 0;
    for (int v = 0; v < vector; v++)
        s += acc[v];
    out[0] = s;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    return (t1.tv_sec - t0.tv_sec) * 1e3f + (t1.tv_nsec - t0.tv_nsec) * 1e-6f;
}
"""

n = 1 << 16
args = [numpy.zeros(1, numpy.float32),
        numpy.random.default_rng(1).random(n, dtype=numpy.float32),
        numpy.int32(n)]
tune_params = {"block_size_x": [32, 64, 128, 256, 512],
               "vector": [1, 2, 4, 8]}
kernel_tuner.tune_kernel("sum_floats", source, n, args, tune_params,
                         lang="C", cache="kt_cache_cpu.json",
                         compiler_options=["-O2"], iterations=5)
