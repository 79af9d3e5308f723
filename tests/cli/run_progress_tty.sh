#!/bin/sh
# The progress line of `cutune tune` on an 80-column terminal (tmux), on a
# replayed device (no GPU): while it runs the pane holds one progress line,
# "[N/40] best T ms (S.SSx) · last T ms · ETA ..." first, the
# configuration after without the single-valued filter_height and
# filter_width, never a wrapped or stale line; when it ends the line is
# cleared. Exits 77 (skipped) where tmux is not installed.
# usage: run_progress_tty.sh CUTUNE TEST_DATA
set -u
cutune=$1
data=$2
if ! command -v tmux >/dev/null 2>&1; then
    echo "SKIPPED: tmux is not installed (.ci/install-deps installs it)"
    exit 77
fi
tmp=$(mktemp -d)
sock=$tmp/tmux.sock
trap 'tmux -S "$sock" kill-server 2>/dev/null; rm -rf "$tmp"' EXIT
fail() { echo "FAILED: $*"; exit 1; }

cat >"$tmp/run.sh" <<RUN
export CUTUNE_DEVICE_BACKEND=replay:$data/t4/convolution_milo_A100_T4.json.gz
export CUTUNE_REPLAY_TIME_SCALE=0.05 LANG=C.UTF-8 LC_ALL=C.UTF-8
export CUTUNE_CACHE_DIR=$tmp/cache
"$cutune" tune "$data/t1/convolution_milo.json" --budget-evals 40 \
    --no-cache >"$tmp/out"
echo \$? >"$tmp/rc"
sleep 60
RUN
tmux -u -S "$sock" new-session -d -x 80 -y 24 "sh $tmp/run.sh"
i=0
while [ ! -e "$tmp/rc" ] && [ $i -lt 600 ]; do
    tmux -S "$sock" capture-pane -p >"$tmp/pane.$i" 2>/dev/null
    i=$((i + 1))
    sleep 0.05
done
[ -e "$tmp/rc" ] || fail "the tune did not end in 30 s"
tmux -S "$sock" capture-pane -p >"$tmp/pane.end"
[ "$(cat "$tmp/rc")" -eq 0 ] || fail "exit $(cat "$tmp/rc")"
grep -q "speedup:" "$tmp/out" || fail "no result on stdout"

line='^\[[0-9]+/40\] best [0-9.]+ ms \([0-9.]+x\) · last ([0-9.]+ ms|[a-z]+) · ETA [0-9]+ s · block_size_x='
seen=0
for f in "$tmp"/pane.[0-9]*; do
    if grep -qE "$line" "$f"; then
        seen=$((seen + 1))
        [ "$(grep -c '^\[' "$f")" -eq 1 ] ||
            { cat "$f"; fail "more than one progress line in the pane"; }
        grep -q 'filter_height\|filter_width' "$f" &&
            { cat "$f"; fail "single-valued parameters shown"; }
    fi
    # Only the progress line (or the first line of the tune) is drawn.
    [ "$(grep -c . "$f")" -le 1 ] || { cat "$f"; fail "stale lines"; }
    sed 's/·/./g' "$f" | awk 'length($0) > 79 { exit 1 }' ||
        { cat "$f"; fail "a line of 80 columns or more"; }
done
[ "$seen" -ge 3 ] || fail "the progress line was seen $seen times"
[ "$(grep -c . "$tmp/pane.end")" -eq 0 ] ||
    { cat "$tmp/pane.end"; fail "the progress line was not cleared"; }
echo "PASS: $seen captures of the progress line, e.g.:"
ls "$tmp" | grep "^pane\.[0-9]" | sort -t. -k2 -n | while read -r f; do grep -E "$line" "$tmp/$f"; done | tail -1
