#!/bin/sh
# Every output of the command line is written one way (fsio.h): a bad
# --output/--report/-o path is one line naming it and exit 2 before any
# work (a tune on a replayed device caches nothing), "-" is standard
# output, /dev/null is written into and stays a device, a directory is
# refused. No GPU: tune runs on a replayed device.
# Usage: run_outputs_cli.sh CUTUNE_BINARY SOURCE_DIR
set -u
cutune=$1
data=$2/tests/data
fleet=$2/tests/cli/fixtures/fleet
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0
failed=0
ok() { passed=$((passed + 1)); }
bad() { failed=$((failed + 1)); echo "FAILED: $*"; }

# refused NAME PATTERN CMD...: exit 2, one line on stderr matching
# PATTERN, nothing on stdout
refused() {
    name=$1 pattern=$2
    shift 2
    "$@" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    if [ "$rc" -eq 2 ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] &&
       grep -Eq -- "$pattern" "$tmp/err" && [ ! -s "$tmp/out" ]; then
        ok
    else
        bad "$name (exit $rc)"
        cat "$tmp/out" "$tmp/err"
    fi
}

export CUTUNE_DEVICE_BACKEND="replay:$data/t4/convolution_milo_A100_T4.json.gz"
T="$cutune tune $data/t1/convolution_milo.json --budget-evals 5 --cache-dir $tmp/cache"
refused tune-output-missing-dir \
    "^cutune: --output: cannot write $tmp/none/t4.json: no such directory $tmp/none$" \
    $T --output "$tmp/none/t4.json"
refused tune-output-directory "cannot write $tmp: is a directory" \
    $T --output "$tmp"
refused tune-report-missing-dir "^cutune: --report: cannot write $tmp/none/r.html" \
    $T --report "$tmp/none/r.html"
if [ -e "$tmp/cache" ]; then bad "a refused tune wrote the cache"; else ok; fi
# A tune whose T4 goes to standard output: no file named "-".
(cd "$tmp" && $T --quiet --output - >"$tmp/t4.out" 2>"$tmp/err")
if [ $? -eq 0 ] && grep -q '"schema_version"' "$tmp/t4.out" && [ ! -e "$tmp/-" ]; then
    ok
else
    bad "tune --output -"
    cat "$tmp/err"
fi
unset CUTUNE_DEVICE_BACKEND

refused export-missing-dir "^cutune: -o: cannot write $tmp/none/x.h: no such directory" \
    "$cutune" export --format header -o "$tmp/none/x.h" --cache-dir "$fleet"
refused merge-directory "^cutune: -o: cannot write $tmp: is a directory$" \
    "$cutune" merge "$fleet" -o "$tmp"
refused report-missing-dir "^cutune: --output: cannot write $tmp/none/r.html" \
    "$cutune" report --cache "$fleet" -o "$tmp/none/r.html"

# "-" is standard output.
(cd "$tmp" && "$cutune" export --format header -o - --cache-dir "$fleet") \
    >"$tmp/h.out" 2>/dev/null
if grep -q '^#define CUTUNE_EXPORT__$' "$tmp/h.out" && [ ! -e "$tmp/-" ]; then
    ok
else
    bad "export -o -"
fi
(cd "$tmp" && "$cutune" merge "$fleet" -o -) >"$tmp/m.out" 2>/dev/null
if [ "$(grep -c '"cutune_cache":1' "$tmp/m.out")" -eq 5 ] && [ ! -e "$tmp/-" ]; then
    ok
else
    bad "merge -o -"
    cat "$tmp/m.out"
fi

# /dev/null is written into, never replaced.
if "$cutune" export --format json -o /dev/null --cache-dir "$fleet" \
       >/dev/null 2>&1 && [ -c /dev/null ]; then
    ok
else
    bad "export -o /dev/null"
fi

# A symbolic link is written through and stays a link.
echo old >"$tmp/target.jsonl"
ln -s target.jsonl "$tmp/link.jsonl"
"$cutune" merge "$fleet" -o "$tmp/link.jsonl" >/dev/null 2>&1
if [ -L "$tmp/link.jsonl" ] && grep -q '"cutune_cache":1' "$tmp/target.jsonl"; then
    ok
else
    bad "merge -o LINK"
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
