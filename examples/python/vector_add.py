#!/usr/bin/env python3
"""Kernel Tuner's vector_add example, runnable on either tuner:

    python3 vector_add.py cutune          # import cutune
    python3 vector_add.py kernel_tuner    # import kernel_tuner

The problem, the arguments and the call are the same; only the import
differs, and the backend name Kernel Tuner is given (its CuPy backend
here; cutune compiles with NVRTC whatever it is told). Prints the best
configuration and every configuration's time as one JSON line, so that
the two runs can be compared (docs/python.md)."""

import json
import sys

import numpy as np

which = sys.argv[1] if len(sys.argv) > 1 else "cutune"
if which == "kernel_tuner":
    from kernel_tuner import tune_kernel

    lang = "CUPY"
else:
    from cutune import tune_kernel

    lang = "CUDA"

kernel_string = """
__global__ void vector_add(float *c, float *a, float *b, int n) {
    int i = blockIdx.x * block_size_x + threadIdx.x;
    if (i < n) {
        c[i] = a[i] + b[i];
    }
}
"""

size = 10_000_000
rng = np.random.default_rng(7)
a = rng.standard_normal(size).astype(np.float32)
b = rng.standard_normal(size).astype(np.float32)
c = np.zeros_like(b)
n = np.int32(size)
args = [c, a, b, n]

tune_params = {"block_size_x": [128 + 64 * i for i in range(15)]}

results, env = tune_kernel(
    "vector_add", kernel_string, size, args, tune_params,
    answer=[a + b, None, None, None], lang=lang, quiet=True,
)

ok = [r for r in results if isinstance(r["time"], float)]
best = min(ok, key=lambda r: r["time"])
print(json.dumps({
    "tuner": which,
    "device": env.get("device_name"),
    "best": {"block_size_x": best["block_size_x"], "time_ms": best["time"]},
    "evaluated": len(results),
    "times_ms": {str(r["block_size_x"]): r["time"] for r in ok},
}))
