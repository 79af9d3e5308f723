"""Writes the synthetic energy recordings of this folder from
tests/cli/fixtures/sim_T4.json (a made-up space of 19 configurations).

Nothing here was measured. Each correct result gets a power that grows
with the block size (a wider kernel keeps more of the GPU busy) and
shrinks a little with the unroll factor (fewer loop instructions issued):

    power_W  = 10 + 2 * block_size_x - 5 * UNROLL
    energy_J = power_W * median(runtimes_ms) / 1000     (J per launch)

so that the three objectives disagree: time is least at block_size_x=128
UNROLL=2, energy at 32/4 and energy x time (edp) at 32/2, none of them
the default configuration (32/1) where a search starts.

sim_energy_T4.json carries them as cutune writes them (measurements
"energy", unit "J", and "power", unit "W"); sim_nvml_T4.json as Kernel
Tuner's T4 writer does with an NVMLObserver ("nvml_energy" and
"nvml_power", unit "", besides "time" in ms). Run from this folder.
"""
import json
import statistics

SOURCE = "../../cli/fixtures/sim_T4.json"


def power(conf):
    return 10 + 2 * conf["block_size_x"] - 5 * conf["UNROLL"]


def write(path, names, units, with_time):
    with open(SOURCE) as f:
        doc = json.load(f)
    for res in doc["results"]:
        if res["invalidity"] != "correct":
            continue
        ms = statistics.median(res["times"]["runtimes"])
        watts = power(res["configuration"])
        joules = round(watts * ms / 1000.0, 9)
        meas = []
        if with_time:
            meas.append({"name": "time", "value": ms, "unit": "ms"})
        meas.append({"name": names[0], "value": joules, "unit": units[0]})
        meas.append({"name": names[1], "value": float(watts),
                     "unit": units[1]})
        res["measurements"] = meas
    doc["metadata"]["note"] = ("synthetic energy and power: see "
                               "tests/data/energy/make_energy.py")
    with open(path, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")


write("sim_energy_T4.json", ("energy", "power"), ("J", "W"), False)
write("sim_nvml_T4.json", ("nvml_energy", "nvml_power"), ("", ""), True)
