#!/bin/sh
# Runs .ci/check-includes on small trees made here: it must pass one that
# keeps to the arrows and fail (status 1, naming file:line) each kind of
# violation, so the check cannot quietly pass everything.
# usage: test_check_includes.sh CHECK_INCLUDES_SCRIPT
set -u
check=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0

# expect STATUS NAME [TEXT]: runs the check on the tree.
expect() {
    want=$1 name=$2 text=${3:-}
    out=$("$check" "$work" 2>&1)
    got=$?
    if [ "$got" -ne "$want" ]; then
        echo "FAIL $name: status $got, expected $want"
        echo "$out"
        failures=$((failures + 1))
    elif [ -n "$text" ] && ! printf '%s\n' "$out" | grep -qF "$text"; then
        echo "FAIL $name: output does not mention '$text'"
        echo "$out"
        failures=$((failures + 1))
    else
        echo "ok $name"
    fi
}

mkdir -p "$work/search/expr" "$work/search/space" "$work/search/strategy" \
    "$work/search/replay" "$work/tuner/common"
echo '#include <stddef.h>' >"$work/search/expr/expr.h"
echo '#include "expr.h"' >"$work/search/expr/expr_lex.c"
echo '#include "expr/expr.h"' >"$work/search/space/space.h"
printf '#include "space.h"\n#include "expr/expr.h"\n' \
    >"$work/search/space/space_build.c"
echo '#include "space/space.h"' >"$work/search/strategy/strategy.h"
echo '#include "strategy/strategy.h"' >"$work/search/replay/replay.h"
echo '' >"$work/tuner/common/util.h"
printf '#include "util.h"\n#include "replay/replay.h"\n' \
    >"$work/tuner/common/util.c"
expect 0 "tree along the arrows"

echo '#include "space/space.h"' >>"$work/search/expr/expr_lex.c"
expect 1 "expr/ including space/" "search/expr/expr_lex.c:2: expr/ may not include space/"
echo '#include "expr.h"' >"$work/search/expr/expr_lex.c"

echo '#include "expr.h"' >>"$work/search/space/space_build.c"
expect 1 "bare include across folders" "search/space/space_build.c:3: bare \"expr.h\""
printf '#include "space.h"\n#include "expr/expr.h"\n' \
    >"$work/search/space/space_build.c"

echo '#include "space.h"' >>"$work/tuner/common/util.c"
expect 1 "bare include from tuner/" "tuner/common/util.c:3: bare \"space.h\""
printf '#include "util.h"\n#include "replay/replay.h"\n' \
    >"$work/tuner/common/util.c"

echo '#include "../../tuner/common/util.h"' >>"$work/search/replay/replay.h"
expect 1 "search/ including tuner/" "search/replay/replay.h:2: search/ includes nothing from tuner/common/util.h"
echo '#include "strategy/strategy.h"' >"$work/search/replay/replay.h"

mkdir -p "$work/search/model"
echo '#include "expr/expr.h"' >"$work/search/model/model.c"
expect 1 "folder without a rule" "search/model/ has no rule"
rm -r "$work/search/model"
expect 0 "tree along the arrows, again"

[ "$failures" -eq 0 ]
