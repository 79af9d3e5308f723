#!/bin/sh
# Records a T1 space exhaustively on a GPU in parts that each fit one
# device call, and merges the parts into one T4 file:
#   bench/record_hub_parts.sh split T1 PARAM DIR   (here: a T1 file per
#       value of PARAM in DIR, named after T1 with _PARAM<value>)
#   bench/record_hub_parts.sh tune CUTUNE DIR OUT SECONDS [TUNE ARGS...]
#       (on the GPU: brute force over each part, every .json file in DIR,
#       not yet in OUT, one after another, until SECONDS have passed)
#   bench/record_hub_parts.sh merge CUTUNE T1 OUT FILE.json.gz (here)
#   bench/record_hub_parts.sh merge-parts N OUT PREFIX FILE.json.gz
#       (merge without cutune: N configurations in OUT/PREFIX_*_T4.json.gz)
# DIR must also hold what the T1 file names beside it (the kernel, data
# files): the hub's kernels are others' code and not in this repository
# (bench/spaces/README.md says where they came from). A part that ran out
# of time is recorded again whole by the next `tune`; `merge` refuses
# anything but every configuration of T1's space exactly once. The device
# tool brings back only a few files: pack OUT into one tar there.
set -eu
# Compile times are recorded cold: no binary cache, and a fresh CUDA
# compute cache per tune (NVRTC 13 keeps its output there; a warm one made
# a recorded hotspot compile about 9x shorter than a cold one, docs/clock.md).
jit_root=$(mktemp -d)
trap 'rm -rf "$jit_root"' EXIT INT TERM
case ${1:-} in
split)
    python3 - "$2" "$3" "$4" <<'EOF'
import ast, copy, json, os, sys
src, name, out = sys.argv[1:]
t1 = json.load(open(src))
params = t1["ConfigurationSpace"]["TuningParameters"]
param = [p for p in params if p["Name"] == name]
if not param:
    sys.exit("%s: no tuning parameter %s" % (src, name))
base = os.path.splitext(os.path.basename(src))[0]
for v in ast.literal_eval(param[0]["Values"]):
    part = copy.deepcopy(t1)
    for p in part["ConfigurationSpace"]["TuningParameters"]:
        if p["Name"] == name:
            p["Values"], p["Default"] = "[%r]" % v, v
    with open("%s/%s_%s%s.json" % (out, base, name, v), "w") as f:
        json.dump(part, f, indent=1)
EOF
    ;;
tune)
    cutune=$2 dir=$3 out=$4 total=$5
    shift 5
    start=$(date +%s)
    for t1 in "$dir"/*.json; do
        p=$(basename "$t1" .json)
        [ -f "$out/${p}_T4.json.gz" ] && continue
        left=$((start + total - $(date +%s)))
        if [ "$left" -lt 30 ]; then
            echo "$p: not started (${left}s left)"
            continue
        fi
        t0=$(date +%s)
        (cd "$dir" && CUDA_CACHE_PATH=$(mktemp -d "$jit_root/XXXXXX") \
            "$cutune" tune "$p.json" --strategy brute_force \
            --no-cache --no-binary-cache --quiet --budget-seconds "$left" "$@" \
            --output "$out/${p}_part.json.gz") >"$out/$p.log" 2>&1 || true
        n=$("$cutune" space "$t1" 2>/dev/null | sed -n 's/^ *valid: *\([0-9,]*\).*/\1/p' | tr -d ,)
        got=$(python3 -c "import gzip,json,sys; print(len(json.load(gzip.open(sys.argv[1]))['results']))" \
            "$out/${p}_part.json.gz" 2>/dev/null || echo 0)
        echo "$p: $got of $n configurations in $(($(date +%s) - t0)) s"
        [ "$got" = "$n" ] && mv "$out/${p}_part.json.gz" "$out/${p}_T4.json.gz"
    done
    ;;
merge)
    cutune=$2 t1=$3 out=$4 dest=$5
    n=$("$cutune" space "$t1" 2>/dev/null | sed -n 's/^ *valid: *\([0-9,]*\).*/\1/p' | tr -d ,)
    exec sh "$0" merge-parts "$n" "$out" "$(basename "$t1" .json)" "$dest"
    ;;
merge-parts)
    # N OUT PREFIX FILE: OUT/PREFIX_*_T4.json.gz, which must hold N
    # configurations, each once (record_hub_conv.sh uses it too).
    python3 - "$2" "$3" "$4" "$5" <<'EOF'
import glob, gzip, json, sys
n, out, base, dest = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
merged, seen = None, set()
for part in sorted(glob.glob("%s/%s_*_T4.json.gz" % (out, base))):
    t4 = json.load(gzip.open(part))
    for r in t4["results"]:
        key = json.dumps(r["configuration"], sort_keys=True)
        if key in seen:
            sys.exit("%s: %s recorded twice" % (part, key))
        seen.add(key)
    if merged is None:
        merged = t4
    else:
        merged["results"] += t4["results"]
if len(seen) != n:
    sys.exit("merged %d configurations, the space has %d" % (len(seen), n))
with gzip.GzipFile(dest, "wb", compresslevel=9, mtime=0) as f:
    f.write(json.dumps(merged, separators=(",", ":")).encode())
print("%s: %d configurations" % (dest, len(seen)))
EOF
    ;;
*)
    echo "usage: $0 split T1 PARAM DIR | tune CUTUNE DIR OUT SECONDS [ARGS...] | merge CUTUNE T1 OUT FILE.json.gz | merge-parts N OUT PREFIX FILE.json.gz" >&2
    exit 2
    ;;
esac
