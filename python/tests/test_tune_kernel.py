"""tune_kernel and lookup without a GPU: Kernel Tuner-shaped calls tuned
on a replayed recording of vector_add (conftest.py)."""

import itertools

import numpy as np
import pytest

import cutune
from conftest import N, RECORDING, SOURCE, arguments, tune_params


def tune(replay, **kw):
    kw.setdefault("grid_div_x", ["block_size_x", "UNROLL"])
    return cutune.tune_kernel("vector_add", SOURCE, N, arguments(), tune_params(), **kw, **replay)


def key(row):
    return tuple(row[k] for k in tune_params())


def test_brute_force_finds_the_recorded_best(replay, recorded):
    results, env = tune(replay, strategy="brute_force")
    best = min(recorded.values())
    winner = key(env["best_config"])
    # The final round ties configurations whose intervals overlap the
    # fastest's (within its 3% margin) and picks the lowest index.
    assert recorded[winner] <= best * 1.03
    assert env["best_config"]["time"] == pytest.approx(recorded[winner], rel=0.03)
    assert len(results) == 512 == env["space_size"]
    assert {key(r) for r in results} == set(recorded)


def test_results_and_env_as_kernel_tuner_gives_them(replay):
    results, env = tune(replay, strategy="random_sample", strategy_options={"max_fevals": 20}, seed=3)
    assert env["strategy"] == "random"
    assert env["evaluations"] == 20 == len(results)
    for r in results:
        assert set(tune_params()) <= set(r)
        assert isinstance(r["block_size_x"], int)
        assert r["time"] > 0 and r["outcome"] == "correct"
    assert env["device_name"] == "replay vector_add_4M"
    assert env["simulated"] is True
    assert env["cutune_version"] == cutune.__version__
    assert env["problem_size"] == N
    assert env["objective"] == "time"
    assert env["kernel_name"] == "vector_add"


def test_string_restrictions_shape_the_space(replay):
    restriction = "block_size_x * UNROLL <= 512 and USE_LDG == 0"
    results, env = tune(replay, strategy="brute_force", restrictions=[restriction])
    want = [
        c
        for c in itertools.product(*tune_params().values())
        if c[0] * c[1] <= 512 and c[2] == 0
    ]
    assert env["space_size"] == len(want) == len(results)
    assert sorted(key(r) for r in results) == sorted(want)


def test_metrics_are_computed_per_result(replay):
    metrics = {"GB/s": lambda p: 12 * N / (p["time"] * 1e-3) / 1e9}
    results, _ = tune(replay, strategy="random_sample", strategy_options={"max_fevals": 5}, metrics=metrics)
    for r in results:
        assert r["GB/s"] == pytest.approx(12 * N / (r["time"] * 1e-3) / 1e9)


def test_lookup_finds_the_tuned_winner(tmp_path):
    replay = {"replay_devices": RECORDING}
    _, env = cutune.tune_kernel(
        "vector_add", SOURCE, N, arguments(), tune_params(), grid_div_x=["block_size_x", "UNROLL"],
        strategy="brute_force", cache=str(tmp_path), **replay
    )
    by_device = cutune.lookup("vector_add", SOURCE, N, tune_params(), cache=str(tmp_path), **replay)
    by_name = cutune.lookup(
        "vector_add", SOURCE, N, tune_params(), cache=str(tmp_path), device_name="replay vector_add_4M"
    )
    for found in (by_device, by_name):
        assert found["match"] == "exact"
        assert {k: found[k] for k in tune_params()} == {k: env["best_config"][k] for k in tune_params()}
    assert cutune.lookup("vector_add", SOURCE, N, tune_params(), cache=str(tmp_path / "empty"),
                         device_name="replay vector_add_4M", fallback=False) is None


def test_python_function_restriction_is_refused(replay):
    with pytest.raises(TypeError, match=r"restrictions\[0\]: a Python function"):
        tune(replay, restrictions=[lambda p: p["block_size_x"] <= 512])


def test_bad_spec_names_the_field(replay):
    params = tune_params()
    params["UNROLL"] = []
    with pytest.raises(cutune.CutuneError, match=r"tune_params\[1\]\.values \(UNROLL\): empty"):
        cutune.tune_kernel("vector_add", SOURCE, N, arguments(), params, **replay)
    with pytest.raises(cutune.CutuneError, match=r"grid_div_x\[1\]: 'UNROL' is not a tuning parameter"):
        tune(replay, grid_div_x=["block_size_x", "UNROL"])
    with pytest.raises(cutune.CutuneError, match=r"restrictions\[0\]: "):
        tune(replay, restrictions=["block_size_x >"])


def test_kernel_tuner_inputs_cutune_cannot_take(replay, tmp_path):
    args = arguments()
    args[3] = N
    with pytest.raises(TypeError, match=r"arguments\[3\]: a int; give numpy"):
        cutune.tune_kernel("vector_add", SOURCE, N, args, tune_params(), **replay)
    kt_cache = tmp_path / "vector_add.json"
    kt_cache.write_text("{}")
    with pytest.raises(ValueError, match="Kernel Tuner's cache files are not cutune's cache"):
        tune({"replay_devices": replay["replay_devices"]}, cache=str(kt_cache))
    # This recording has no energy: an energy tune has nothing to rank.
    with pytest.raises(cutune.CutuneError, match="energy measurement"):
        tune(replay, objective="energy", strategy_options={"max_fevals": 5})
    with pytest.raises(ValueError, match="'joules' is not an objective"):
        tune(replay, objective="joules")
    with pytest.raises(ValueError, match="lang: 'OpenCL'"):
        tune(replay, lang="OpenCL")
    with pytest.raises(ValueError, match=r"answer: 1 entries where arguments has 5"):
        tune(replay, answer=[np.zeros(N, np.float32)])
    with pytest.raises(ValueError, match="strategy: 'pso' is not one cutune has"):
        tune(replay, strategy="pso")
