"""Reads one tune of bench/cold_clock.sh: its stamped progress lines and
its printed result. Prints the wall time, the best and when the best first
came within 0.95 / 0.98 / 0.99 of the reference time, and the tune's own
breakdown (setup, search, final round) from its --verbose line."""
import re
import sys

name, strategy, seed, ref, t0, t1, log, out = sys.argv[1:9]
ref = float(ref)
wall = float(t1) - float(t0)
best = float("inf")
reached = {0.95: None, 0.98: None, 0.99: None}
breakdown = ""
result = re.compile(r"^(\d+\.\d+) \[\d+\] .*: (\d+\.\d+) ms")
for line in open(log, errors="replace"):
    m = result.match(line)
    if m:
        t, ms = float(m.group(1)), float(m.group(2))
        best = min(best, ms)
        for r in reached:
            if reached[r] is None and ref / best >= r:
                reached[r] = t
    if "wall time:" in line:
        breakdown = line.split("wall time:", 1)[1].strip()
text = open(out, errors="replace").read()
m = re.search(r"(\d+\.\d+) ms \(median", text)
final = float(m.group(1)) if m else float("nan")
m = re.search(r"evaluated: (\d+) configurations", text)
evals = m.group(1) if m else "?"
to = " ".join("%.2f:%s" % (r, "-" if t is None else "%.1f" % t)
              for r, t in reached.items())
print("%s %s seed %s: wall %.1f s, %s evaluations, best %.4f ms "
      "(searched %.4f, ref %.4f: %.3f), to %s" %
      (name, strategy, seed, wall, evals, final, best, ref,
       ref / best if best > 0 else 0, to))
if breakdown:
    print("  " + breakdown)
