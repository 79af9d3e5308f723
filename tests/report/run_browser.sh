#!/bin/sh
# Renders a report in headless Chromium and checks what a reader gets: the
# DOM holds the plots and tables in the right numbers, the browser logged
# no console message (script errors and blocked fetches both log one; the
# page's Content-Security-Policy blocks every fetch), the page refers to
# nothing outside itself, and a screenshot is saved in the build folder.
# Without Chromium the test fails: it is never skipped.
#
# usage: run_browser.sh PAGE CUTUNE SOURCE_DIR OUT_DIR
#   PAGE: results (the recorded A100 convolution), own (a T4 of cutune's
#   own writer, from test_report), big (102,400 configurations), cache
#   (`report --cache`), energy (the synthetic energy recording: the time
#   against energy plot, its Pareto front and the objectives' winners,
#   checked by check_energy.py against the file), noenergy (the same space
#   without energy: no such plot), probe (the console check catches what
#   it must)
set -u
page=$1 cutune=$2 src=$3 out=$4

fail() {
    echo "FAIL: $*" >&2
    exit 1
}

browser=""
for b in chromium chromium-browser; do
    command -v "$b" >/dev/null 2>&1 && browser=$b && break
done
[ -n "$browser" ] ||
    fail "chromium is not installed (Debian: apt-get install chromium; .ci/install-deps installs it)"

work=$(mktemp -d "${TMPDIR:-/tmp}/cutune-browser.XXXXXX") || fail "mktemp"
trap 'rm -rf "$work"' EXIT
mkdir -p "$out"

# Chromium's sandbox cannot start as root.
sandbox=""
[ "$(id -u)" -eq 0 ] && sandbox="--no-sandbox"

# run_browser HTML STDOUT [ARGS...]: Chromium on the page with a fresh
# profile; what it prints (the DOM with --dump-dom) goes to STDOUT, its
# log to $work/log.
run_browser() {
    html=$1 stdout=$2
    shift 2
    # shellcheck disable=SC2086
    timeout 120 "$browser" --headless $sandbox --disable-gpu \
        --no-first-run --user-data-dir="$work/profile" \
        --enable-logging=stderr --v=0 "$@" "file://$html" \
        >"$stdout" 2>"$work/log"
    rc=$?
    # A container without user namespaces has no usable sandbox either.
    if [ $rc -ne 0 ] && [ -z "$sandbox" ] &&
        grep -q 'No usable sandbox' "$work/log"; then
        echo "note: no usable sandbox here; running with --no-sandbox"
        sandbox="--no-sandbox"
        run_browser "$html" "$stdout" "$@"
        return
    fi
    if [ $rc -ne 0 ]; then
        cat "$work/log" >&2
        fail "$browser exited with status $rc on $html"
    fi
}

# console_lines: what the page said on the console (nothing, for ours).
console_lines() {
    grep -E ':CONSOLE|Uncaught' "$work/log"
}

# render HTML NAME: DOM and console check, then a screenshot NAME.png.
render() {
    run_browser "$1" "$work/dom" --dump-dom
    if console_lines >/dev/null; then
        console_lines >&2
        fail "$2: the browser logged console messages"
    fi
    grep -q '</html>' "$work/dom" || fail "$2: no DOM came back"
    cp "$work/dom" "$out/$2.dom.html"
    run_browser "$1" "$work/shot" --hide-scrollbars --window-size=1200,2000 \
        --screenshot="$out/$2.png"
    [ -s "$out/$2.png" ] || fail "$2: no screenshot"
    echo "$2: screenshot $out/$2.png"
}

count() { # PATTERN: occurrences in the DOM
    grep -o "$1" "$work/dom" | wc -l | tr -d ' '
}

# tbody_rows ID: rows in the body of the table with that id.
tbody_rows() {
    tr '\n' ' ' <"$work/dom" |
        sed -e "s/.*<table id=\"$1\"//" -e 's#</table>.*##' \
            -e 's/.*<tbody>//' -e 's#</tbody>.*##' |
        grep -o '<tr' | wc -l | tr -d ' '
}

# section_svgs ID: plots inside the section with that id.
section_svgs() {
    tr '\n' ' ' <"$work/dom" |
        sed -e "s/.*<section id=\"$1\"//" -e 's#</section>.*##' |
        grep -o '<svg' | wc -l | tr -d ' '
}

expect() { # WHAT GOT WANTED
    [ "$2" = "$3" ] || fail "$1: $2, expected $3"
    echo "$1: $2"
}

# The page itself: at most 5 MB, a policy that forbids fetching, and no
# reference to anything outside it (only #fragments and data: URLs).
check_file() {
    size=$(wc -c <"$1" | tr -d ' ')
    [ "$size" -le 5000000 ] || fail "$1: $size bytes, over 5 MB"
    echo "$(basename "$1"): $size bytes"
    grep -q "Content-Security-Policy\" content=\"default-src 'none'" "$1" ||
        fail "$1: no Content-Security-Policy forbidding fetches"
    if grep -oE '(src|href|xlink:href)="[^"#][^"]*"|url\([^#)][^)]*\)|@import|<script|<iframe|<object|<embed' "$1" |
        grep -v '^href="data:' >"$work/refs"; then
        cat "$work/refs" >&2
        fail "$1: refers to something outside the page"
    fi
}

case $page in
results)
    html="$out/convolution_A100.html"
    "$cutune" report "$src/tests/data/t1/convolution_milo.json" \
        --results "$src/tests/data/t4/convolution_milo_A100_T4.json.gz" \
        --output "$html" || fail "cutune report failed"
    check_file "$html"
    render "$html" convolution_A100
    # 2 convergence + 1 threads + 7 tunables with more than one value
    expect "plots" "$(count '<svg')" 10
    expect "convergence plots" "$(section_svgs convergence)" 2
    expect "threads plots" "$(section_svgs threads)" 1
    expect "parameter plots" "$(section_svgs params)" 7
    expect "top configurations" "$(tbody_rows top-table)" 20
    expect "failure kinds" "$(tbody_rows failure-table)" 5
    expect "random-search curves" "$(count 'random search, expected best')" 2
    ;;
own)
    html="$out/own.html"
    [ -s "$html" ] || fail "$html missing: test_report writes it"
    check_file "$html"
    want=$(grep -o '<svg' "$html" | wc -l | tr -d ' ')
    [ "$want" -ge 3 ] || fail "own.html: $want plots"
    render "$html" own
    expect "plots" "$(count '<svg')" "$want"
    expect "top configurations" "$(tbody_rows top-table)" 20
    expect "occupancy API block size lines" \
        "$(count "the occupancy API's block size: 256")" 1
    ;;
big)
    html="$out/big.html"
    [ -s "$html" ] || fail "$html missing: test_report writes it"
    check_file "$html"
    render "$html" big
    expect "plots" "$(count '<svg')" 5
    expect "top configurations" "$(tbody_rows top-table)" 20
    ;;
cache)
    html="$out/cache-fleet.html"
    "$cutune" report --cache "$src/tests/cli/fixtures/fleet" \
        --output "$html" || fail "cutune report --cache failed"
    check_file "$html"
    render "$html" cache-fleet
    expect "grids" "$(count '<table class="grid"')" 1
    expect "device rows" "$(count '<tr><th scope="row">')" 4
    expect "plots" "$(count '<svg')" 1
    ;;
energy)
    html="$out/sim_energy.html"
    "$cutune" report "$src/tests/cli/fixtures/sim.json" \
        --results "$src/tests/data/energy/sim_energy_T4.json" \
        --output "$html" || fail "cutune report failed"
    check_file "$html"
    render "$html" sim_energy
    expect "energy sections" "$(count '<section id="energy"')" 1
    expect "energy plots" "$(section_svgs energy)" 1
    expect "objective winners" "$(tbody_rows objective-winners)" 3
    python3 "$src/tests/report/check_energy.py" "$work/dom" \
        "$src/tests/data/energy/sim_energy_T4.json" ||
        fail "the energy section disagrees with the file"
    ;;
noenergy)
    html="$out/sim_noenergy.html"
    "$cutune" report "$src/tests/cli/fixtures/sim.json" \
        --results "$src/tests/cli/fixtures/sim_T4.json" \
        --output "$html" || fail "cutune report failed"
    check_file "$html"
    render "$html" sim_noenergy
    expect "energy sections" "$(count '<section id="energy"')" 0
    expect "energy plots" "$(count 'id="energy-time"')" 0
    expect "Pareto tables" "$(count 'pareto-table')" 0
    expect "convergence plots" "$(section_svgs convergence)" 2
    ;;
probe)
    # A script error and a blocked fetch must each be caught, or the
    # console check above would prove nothing.
    printf '<!DOCTYPE html><html><head><title>p</title></head><body><p>x</p><script>throw new Error("cutune-probe")</script></body></html>\n' >"$work/error.html"
    run_browser "$work/error.html" "$work/dom" --dump-dom
    console_lines | grep -q 'cutune-probe' ||
        fail "a script error did not show in the console log"
    echo "probe: a script error is caught"
    printf '<!DOCTYPE html><html><head><meta http-equiv="Content-Security-Policy" content="default-src '"'none'"'"><title>p</title></head><body><img src="http://example.invalid/x.png"></body></html>\n' >"$work/fetch.html"
    run_browser "$work/fetch.html" "$work/dom" --dump-dom
    console_lines | grep -q 'example.invalid' ||
        fail "a blocked fetch did not show in the console log"
    echo "probe: a blocked fetch is caught"
    ;;
*)
    fail "unknown page $page"
    ;;
esac
echo "PASS: $page"
