#!/bin/sh
# Benchmark of the template library: tunes every built-in template on one
# GPU (the default strategy; budgets below) at sizes large enough to
# measure bandwidth, and prints per template the occupancy suggestion's
# time, the tuned time, the speedup, the throughput and its fraction of the
# limit measured in the same run: device-to-device cudaMemcpy (as each tune
# measures it) for the memory-bound templates, cublasSgemm (default math
# mode, FP32, bench/sgemm_cublas) for matmul. aos_soa is also tuned with
# each layout fixed, to show what the layout costs. It prints figures; it
# does not pass or fail on them.
#
# Usage: bench/templates.sh BUILD_DIR [OUT_DIR]
# Environment: BUDGET (evaluations per memory-bound template, default 100),
# MATMUL_BUDGET (default 300), DEVICE (default 0).
set -eu
build=$(cd "${1:?usage: bench/templates.sh BUILD_DIR [OUT_DIR]}" && pwd)
out=${2:-$(mktemp -d)}
mkdir -p "$out"
src=$(cd "$(dirname "$0")/.." && pwd)
budget=${BUDGET:-100}
matmul_budget=${MATMUL_BUDGET:-300}
device=${DEVICE:-0}
export CUTUNE_WORKER="$build/cutune-worker"
export CUTUNE_CACHE_DIR="$out/cache"
# sgemm_cublas links cuBLAS dynamically.
export LD_LIBRARY_PATH="/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

echo "# $(date -u +%Y-%m-%dT%H:%MZ), results in $out"
"$build/cutune" devices

sgemm=$build/sgemm_cublas
[ -x "$sgemm" ] || sgemm=$build/bench/sgemm_cublas
echo
if "$sgemm" 4096 4096 4096 "$device" > "$out/cublas.txt"; then
    cat "$out/cublas.txt"
else
    echo "sgemm_cublas failed; matmul is reported without its limit"
    : > "$out/cublas.txt"
fi

# tune NAME PROBLEM SIZE BUDGET: one tune, its JSON report in OUT/NAME.json.
tune() {
    echo "== $1 ($3), $4 evaluations" >&2
    rc=0
    "$build/cutune" tune "$2" --size "$3" --budget-evals "$4" \
        --device "$device" --quiet --json > "$out/$1.json" || rc=$?
    if [ "$rc" -ne 0 ]; then
        echo "   tune of $1 failed (exit code $rc)" >&2
        rm -f "$out/$1.json"
    fi
}

# aos_soa with one layout: a copy of the T1 file whose LAYOUT has one value.
for layout in 0 1; do
    mkdir -p "$out/layout$layout"
    cp "$src/templates/aos_soa.cu" "$src/templates/cutune_prelude.cuh" \
        "$out/layout$layout/"
    python3 - "$src/templates/aos_soa.json" "$out/layout$layout/aos_soa.json" \
        "$layout" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for p in d["ConfigurationSpace"]["TuningParameters"]:
    if p["Name"] == "LAYOUT":
        p["Values"] = "[%s]" % sys.argv[3]
        p["Default"] = int(sys.argv[3])
json.dump(d, open(sys.argv[2], "w"), indent=4)
PY
done

tune vector_add vector_add 67108864 "$budget"
tune write_offset write_offset 67108864 "$budget"
tune copy copy 134217728 "$budget"
tune aos_soa aos_soa 67108864 "$budget"
tune aos_soa_aos "$out/layout0/aos_soa.json" 67108864 "$budget"
tune aos_soa_soa "$out/layout1/aos_soa.json" 67108864 "$budget"
tune transpose transpose 16384,16384 "$budget"
tune reduce reduce 268435456 "$budget"
tune conv2d conv2d 8192,8192 "$budget"
tune matmul matmul 4096,4096,4096 "$matmul_budget"

echo
python3 - "$out" <<'PY'
import json, os, sys
out = sys.argv[1]
cublas = None
for line in open(os.path.join(out, "cublas.txt")):
    if line.startswith("gflops="):
        cublas = float(line.split("=")[1])
# name, label, FLOPs per launch (None: memory-bound, limit = memcpy)
rows = [
    ("vector_add", "2^26", None), ("write_offset", "2^26", None),
    ("copy", "2^27", None), ("aos_soa", "2^26", None),
    ("aos_soa_aos", "2^26, LAYOUT=0 (AoS)", None),
    ("aos_soa_soa", "2^26, LAYOUT=1 (SoA)", None),
    ("transpose", "16384^2", None), ("reduce", "2^28", None),
    ("conv2d", "8192^2, 7x7", 2.0 * 49 * 8192 * 8192),
    ("matmul", "4096^3", 2.0 * 4096 ** 3),
]
def cfg(c):
    return " ".join("%s=%s" % (k, v) for k, v in c.items())
print("| template | size | occupancy suggestion | its time | tuned | tuned time "
      "| speedup | throughput | limit | fraction |")
print("|---|---|---|---|---|---|---|---|---|---|")
for name, label, flops in rows:
    path = os.path.join(out, name + ".json")
    if not os.path.exists(path):
        print("| %s | %s | (tune failed) | | | | | | | |" % (name, label))
        continue
    r = json.load(open(path))
    best, base = r["best_ms"], r["baseline_ms"]
    speed = "%.2fx" % r["speedup"] if r.get("speedup") else "-"
    if name == "matmul":
        g = flops / (best * 1e-3) / 1e9
        thr = "%.0f GFLOP/s" % g
        lim = "cuBLAS %.0f GFLOP/s" % cublas if cublas else "-"
        frac = "%.1f%%" % (100 * g / cublas) if cublas else "-"
    else:
        thr = "%.1f GB/s" % r["best_gbs"]
        if flops:
            thr += ", %.0f GFLOP/s" % (flops / (best * 1e-3) / 1e9)
        lim = "memcpy %.1f GB/s" % r["memcpy_gbs"]
        frac = "%.1f%%" % (100 * r["best_gbs"] / r["memcpy_gbs"])
    base_ms = "%.4f ms" % base if base is not None else "-"
    print("| %s | %s | %s | %s | %s | %.4f ms | %s | %s | %s | %s |" % (
        name, label, cfg(r["baseline"]), base_ms, cfg(r["best"]), best,
        speed, thr, lim, frac))
PY
