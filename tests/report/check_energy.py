"""Checks a rendered report's energy section against the results file it
was written from: the Pareto front's configurations (pareto-table) and
the winner under each objective (objective-winners) are computed here from
the file, by their definitions, and must be the ones the page names; the
plot marks every front point and the three winners.

usage: check_energy.py DOM_HTML T4_JSON
"""
import json
import re
import statistics
import sys


def configs_in(html, table_id):
    """The <code>k=v, ...</code> of each body row of a table, as dicts."""
    m = re.search(r'<table id="%s".*?<tbody>(.*?)</tbody>' % table_id, html,
                  re.S)
    if not m:
        sys.exit("FAIL: no table %s" % table_id)
    rows = re.findall(r'<tr([^>]*)>(.*?)</tr>', m.group(1), re.S)
    out = []
    for attrs, row in rows:
        code = re.search(r'<code>(.*?)</code>', row).group(1)
        conf = dict(kv.split("=", 1) for kv in code.split(", "))
        out.append((attrs, conf))
    return out


def main():
    html = open(sys.argv[1]).read()
    doc = json.load(open(sys.argv[2]))
    points = []
    seen = set()
    for res in doc["results"]:
        if res["invalidity"] != "correct":
            continue
        meas = {m["name"]: m["value"] for m in res.get("measurements", [])}
        energy = meas.get("energy", meas.get("nvml_energy"))
        key = tuple(sorted(res["configuration"].items()))
        if energy is None or key in seen:
            continue
        seen.add(key)
        ms = statistics.median(res["times"]["runtimes"])
        conf = {k: str(v) for k, v in res["configuration"].items()}
        points.append((ms, energy, conf))
    if len(points) < 3:
        sys.exit("FAIL: %s has %d results with energy" % (sys.argv[2],
                                                          len(points)))

    def beaten(p):
        return any(q[0] <= p[0] and q[1] <= p[1] and
                   (q[0] < p[0] or q[1] < p[1]) for q in points)

    front = sorted((p for p in points if not beaten(p)), key=lambda p: p[0])
    want = [p[2] for p in front]
    got = [c for _, c in configs_in(html, "pareto-table")]
    if got != want:
        sys.exit("FAIL: Pareto front %s, expected %s" % (got, want))
    print("Pareto front: %d configurations, as computed from the file"
          % len(got))
    if len(got) < 2 or len(got) == len(points):
        sys.exit("FAIL: a front of %d of %d points proves little"
                 % (len(got), len(points)))

    best = {
        "time": min(points, key=lambda p: (p[0], p[1]))[2],
        "energy": min(points, key=lambda p: (p[1], p[0]))[2],
        "edp": min(points, key=lambda p: p[0] * p[1])[2],
    }
    rows = configs_in(html, "objective-winners")
    named = {re.search(r'data-objective="(\w+)"', a).group(1): c
             for a, c in rows}
    if named != best:
        sys.exit("FAIL: winners %s, expected %s" % (named, best))
    if len({tuple(sorted(c.items())) for c in best.values()}) != 3:
        sys.exit("FAIL: the file's three winners are not distinct")
    print("winners: time %s, energy %s, edp %s" % (
        best["time"], best["energy"], best["edp"]))

    svg = re.search(r'<svg[^>]*id="energy-time".*?</svg>', html, re.S)
    if not svg:
        sys.exit("FAIL: no energy plot")
    marks = len(re.findall(r'<title>Pareto front: ', svg.group(0)))
    if marks != len(want):
        sys.exit("FAIL: %d front markers on the plot, expected %d"
                 % (marks, len(want)))
    for name in ("time winner", "energy winner", "edp winner"):
        if len(re.findall(r'<title>%s: ' % name, svg.group(0))) != 1:
            sys.exit("FAIL: the plot does not mark the %s once" % name)
    print("plot: %d front markers and the three winners" % marks)


main()
