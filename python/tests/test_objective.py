"""tune_kernel and lookup by energy and edp on a replayed recording that
carries energy: tests/data/energy/sim_energy_T4.json, the made-up space of
tests/cli/fixtures/sim_T4.json with synthetic energy and power (see
tests/data/energy/make_energy.py). The optimum of each objective is
computed here from the file, not written down."""

import json
import os
import statistics

import numpy as np
import pytest

import cutune
from conftest import ROOT

RECORDING = os.path.join(ROOT, "tests", "data", "energy", "sim_energy_T4.json")
SOURCE = 'extern "C" __global__ void k(float *x, int n) {}'
PARAMS = {"block_size_x": [32, 64, 96, 128, 256], "UNROLL": [1, 2, 4, 8]}
RESTRICTIONS = ["block_size_x * UNROLL <= 1024"]


def recorded_optima():
    with open(RECORDING) as f:
        t4 = json.load(f)
    value = {"time": {}, "energy": {}, "edp": {}}
    for r in t4["results"]:
        if r.get("invalidity", "correct") != "correct":
            continue
        key = (r["configuration"]["block_size_x"], r["configuration"]["UNROLL"])
        t = statistics.median(r["times"]["runtimes"])
        e = next(m["value"] for m in r["measurements"] if m["name"] == "energy")
        value["time"][key], value["energy"][key] = t, e
        value["edp"][key] = e * t * 1e-3
    return {o: min(v, key=v.get) for o, v in value.items()}


def tune(tmp_path, objective):
    return cutune.tune_kernel(
        "k", SOURCE, 4096, [np.zeros(4096, dtype=np.float32), np.int32(4096)], PARAMS,
        grid_div_x=["block_size_x", "UNROLL"], restrictions=RESTRICTIONS,
        strategy="brute_force", objective=objective, cache=str(tmp_path),
        replay_devices=RECORDING,
    )


@pytest.mark.parametrize("objective", ["time", "energy", "edp"])
def test_each_objective_finds_its_recorded_optimum(tmp_path, objective):
    optima = recorded_optima()
    assert len(set(optima.values())) == 3  # the three differ: the test can fail
    results, env = tune(tmp_path, objective)
    best = env["best_config"]
    assert (best["block_size_x"], best["UNROLL"]) == optima[objective]
    assert env["objective"] == objective
    if objective == "time":
        assert all("energy" not in r for r in results)
    else:
        assert env["best_energy"] > 0 and env["best_power"] > 0
        assert all(r["energy"] > 0 for r in results if r["outcome"] == "correct")


def test_lookup_finds_the_record_of_its_objective(tmp_path):
    optima = recorded_optima()
    tune(tmp_path, "energy")
    kw = dict(restrictions=RESTRICTIONS, cache=str(tmp_path), replay_devices=RECORDING)
    got = cutune.lookup("k", SOURCE, 4096, PARAMS, objective="energy", **kw)
    assert got is not None and (got["block_size_x"], got["UNROLL"]) == optima["energy"]
    assert got["energy"] > 0
    # Only an energy tune ran: nothing was tuned for time.
    assert cutune.lookup("k", SOURCE, 4096, PARAMS, fallback=False, **kw) is None


def test_an_unknown_objective_is_refused_by_name(tmp_path):
    with pytest.raises(ValueError, match="'joules' is not an objective"):
        tune(tmp_path, "joules")
