#!/usr/bin/env python3
"""The winners under each objective among the configurations that two T4
files (a time tune that measured energy, an energy tune) evaluated, and
the run-to-run variation of energy per launch between the two files
(bench/energy.sh). Prints figures; decides nothing."""

import gzip
import json
import statistics
import sys


def load(path):
    with (gzip.open if path.endswith(".gz") else open)(path, "rt") as f:
        t4 = json.load(f)
    out = {}
    for r in t4["results"]:
        if r.get("invalidity", "correct") != "correct":
            continue
        m = {x["name"]: x["value"] for x in r.get("measurements", [])}
        if "energy" not in m or not r["times"].get("runtimes"):
            continue
        key = json.dumps(r["configuration"], sort_keys=True)
        out[key] = (statistics.median(r["times"]["runtimes"]), m["energy"], m.get("power"))
    return out


def main():
    name, paths = sys.argv[1], sys.argv[2:]
    runs = [load(p) for p in paths]
    merged = {}
    for run in runs:
        for k, v in run.items():
            merged.setdefault(k, v)
    if not merged:
        print("%s: no configuration with energy" % name)
        return
    score = {
        "time": lambda v: v[0],
        "energy": lambda v: v[1],
        "edp": lambda v: v[0] * 1e-3 * v[1],
    }
    for objective, f in score.items():
        k = min(merged, key=lambda k: f(merged[k]))
        ms, j, w = merged[k]
        print("%s %-6s winner: %s  %.4f ms, %.5f J per launch, %.0f W"
              % (name, objective, k, ms, j, w or float("nan")))
    both = [k for k in runs[0] if len(runs) > 1 and k in runs[1]]
    if both:
        moved = [abs(runs[0][k][1] - runs[1][k][1]) / (0.5 * (runs[0][k][1] + runs[1][k][1]))
                 for k in both]
        print("%s energy run to run: %d configurations in both tunes, |difference| / mean "
              "median %.2f%%, 90th percentile %.2f%%, max %.2f%%"
              % (name, len(both), 100 * statistics.median(moved),
                 100 * sorted(moved)[int(0.9 * (len(moved) - 1))], 100 * max(moved)))
    print("%s evaluated with energy: %s" % (name, ", ".join(str(len(r)) for r in runs)))


if __name__ == "__main__":
    main()
