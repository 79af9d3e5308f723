# shellcheck shell=sh disable=SC2034
# Shared by run_compat_cpu.sh and run_compat_gpu.sh (sourced; POSIX sh).
# Each case runs one cutune command on a T1 file of this folder and checks
# its exit code and the strings its output must contain; a case prints one
# PASS or FAIL line, and a failing one its whole output beneath it.

# compat_setup CUTUNE_BINARY SOURCE_DIR: a temporary folder for everything
# cutune writes (tuning cache, binary cache, HOME), removed on exit, with
# a copy of tests/compat in it that the cases run from, so that nothing is
# written beside the sources.
compat_setup() {
    case $1 in
    /*) cutune=$1 ;;
    *) cutune=$(pwd)/$1 ;;
    esac
    compat_src=$2/tests/compat
    if [ ! -x "$cutune" ] || [ ! -d "$compat_src" ]; then
        echo "usage: $0 CUTUNE_BINARY SOURCE_DIR (got '$1', '$2')" >&2
        exit 1
    fi
    if [ -z "${CUTUNE_WORKER:-}" ] &&
        [ -x "$(dirname "$cutune")/cutune-worker" ]; then
        CUTUNE_WORKER=$(dirname "$cutune")/cutune-worker
        export CUTUNE_WORKER
    fi
    tmp=$(mktemp -d "${TMPDIR:-/tmp}/cutune-compat.XXXXXX") || exit 1
    trap 'rm -rf "$tmp"' EXIT
    trap 'exit 130' INT TERM
    CUTUNE_CACHE_DIR=$tmp/cache
    HOME=$tmp/home
    export CUTUNE_CACHE_DIR HOME
    mkdir -p "$HOME" "$tmp/compat" || exit 1
    cp -R "$compat_src/." "$tmp/compat/" || exit 1
    cd "$tmp/compat" || exit 1
    passed=0
    failed=0
    case_timeout=${CUTUNE_COMPAT_TIMEOUT:-300}
}

# run NAME EXPECTED_EXIT COMMAND...: runs one case's command.
run() {
    name=$1
    want=$2
    shift 2
    why=""
    if command -v timeout >/dev/null 2>&1; then
        timeout "$case_timeout" "$@" >"$tmp/out" 2>"$tmp/err"
    else
        "$@" >"$tmp/out" 2>"$tmp/err"
    fi
    rc=$?
    [ "$rc" = "$want" ] || why="${why}exit $rc, expected $want; "
}

stdout_has() {
    grep -qF -- "$1" "$tmp/out" || why="${why}stdout lacks '$1'; "
}

# stderr_line_has STRING...: one line of stderr holds every STRING.
stderr_line_has() {
    lines=$(cat "$tmp/err")
    for s in "$@"; do
        lines=$(printf '%s\n' "$lines" | grep -F -- "$s")
    done
    if [ -z "$lines" ]; then
        why="${why}no line of stderr holds all of:"
        for s in "$@"; do
            why="$why '$s'"
        done
        why="$why; "
    fi
}

# one_message: stderr holds exactly one line besides warnings.
one_message() {
    n=$(grep -cvF ': warning: ' "$tmp/err")
    [ "$n" = 1 ] || why="${why}$n lines on stderr besides warnings, expected one message; "
}

verdict() {
    if [ -z "$why" ]; then
        echo "PASS  $name"
        passed=$((passed + 1))
    else
        echo "FAIL  $name: $why"
        sed 's/^/    stdout| /' "$tmp/out"
        sed 's/^/    stderr| /' "$tmp/err"
        failed=$((failed + 1))
    fi
}

summary() {
    echo "compat ($1): $passed passed, $failed failed"
    [ "$failed" = 0 ]
}
