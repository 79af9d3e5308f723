"""Shared pieces of the Python tests: the replayed H100 recording of
vector_add at 4M elements (tests/data/t4, cutune tune vector_add --size
4194304 --strategy brute_force) and the same problem as a Kernel Tuner
user writes it."""

import gzip
import json
import os
import statistics

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RECORDING = os.path.join(ROOT, "tests", "data", "t4", "vector_add_4M_T4.json.gz")
N = 4194304

# A replayed device runs no kernel: the source need only name the kernel.
SOURCE = """
extern "C" __global__ void vector_add(float *c, const float *a, const float *b,
                                      int n, int offset)
{
    long long i = (long long)blockIdx.x * block_size_x * UNROLL + threadIdx.x;
    for (int j = 0; j < UNROLL; j++, i += block_size_x)
        if (i < n)
            c[i] = a[i + offset] + b[i + offset];
}
"""


def tune_params():
    return {
        "block_size_x": list(range(32, 1025, 32)),
        "UNROLL": [1, 2, 4, 8],
        "USE_LDG": [0, 1],
        "USE_RESTRICT": [0, 1],
    }


def arguments():
    a = np.zeros(N + 32, dtype=np.float32)
    return [np.zeros(N, dtype=np.float32), a, a.copy(), np.int32(N), np.int32(0)]


@pytest.fixture(scope="session")
def recorded():
    """Per configuration (a tuple of the tunables' values), the median of
    its recorded runtimes, for the correct ones."""
    with gzip.open(RECORDING, "rt") as f:
        t4 = json.load(f)
    names = list(tune_params())
    out = {}
    for r in t4["results"]:
        if r.get("invalidity", "correct") != "correct":
            continue
        key = tuple(r["configuration"][k] for k in names)
        out[key] = statistics.median(r["times"]["runtimes"])
    return out


@pytest.fixture
def replay():
    return {"replay_devices": RECORDING, "cache": False}
