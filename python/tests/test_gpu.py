"""tune_kernel on a real GPU: docs/python.md's vector_add, checked
against its answer. Skipped, saying why, where cutune sees no GPU."""

import json

import numpy as np
import pytest

import cutune

KERNEL = """
__global__ void vector_add(float *c, float *a, float *b, int n) {
    int i = blockIdx.x * block_size_x + threadIdx.x;
    if (i < n) {
        c[i] = a[i] + b[i];
    }
}
"""


def _gpu():
    try:
        return cutune.devices()
    except cutune.CutuneError as e:
        return str(e)


DEVICES = _gpu()
pytestmark = pytest.mark.skipif(
    isinstance(DEVICES, str), reason="no CUDA GPU: %s" % DEVICES if isinstance(DEVICES, str) else ""
)


def problem(size=10_000_000):
    rng = np.random.default_rng(1)
    a = rng.standard_normal(size).astype(np.float32)
    b = rng.standard_normal(size).astype(np.float32)
    c = np.zeros_like(b)
    return [c, a, b, np.int32(size)], a + b


def test_vector_add_tunes_and_validates(tmp_path):
    args, expected = problem()
    tune_params = {"block_size_x": [32, 64, 128, 256, 512, 1024]}
    results, env = cutune.tune_kernel(
        "vector_add", KERNEL, 10_000_000, args, tune_params,
        answer=[expected, None, None, None], strategy="brute_force", cache=str(tmp_path),
    )
    assert env["device_name"] == DEVICES[0]["device_name"]
    assert not env["simulated"]
    assert len(results) == 6
    assert all(r["outcome"] == "correct" and r["time"] > 0 for r in results)
    assert env["best_config"]["block_size_x"] in tune_params["block_size_x"]
    found = cutune.lookup("vector_add", KERNEL, 10_000_000, tune_params, cache=str(tmp_path))
    assert found["block_size_x"] == env["best_config"]["block_size_x"]


def test_a_wrong_answer_fails_every_configuration(tmp_path):
    args, expected = problem(1 << 20)
    t4 = tmp_path / "wrong.json"
    with pytest.raises(cutune.CutuneError, match="none of the 2 configurations") as e:
        cutune.tune_kernel(
            "vector_add", KERNEL, 1 << 20, args, {"block_size_x": [128, 256]},
            answer=[expected + 1, None, None, None], strategy="brute_force", cache=False, write_t4=t4,
        )
    assert e.value.status == 12  # CUTUNE_ERR_NO_VALID_RESULT
    recorded = json.loads(t4.read_text())["results"]
    assert [r["invalidity"] for r in recorded] == ["correctness", "correctness"]
