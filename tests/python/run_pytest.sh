#!/bin/sh
# The Python package from a clean clone: a virtual environment in the build
# folder, `pip install` of the repository root, then pytest.
#   run_pytest.sh install BUILD SOURCE    make the venv and install
#   run_pytest.sh test BUILD SOURCE       the tests without a GPU (and the
#                                         GPU ones, which skip without one)
#   run_pytest.sh gpu BUILD SOURCE        the GPU tests; 77 when skipped
# The package's CMake build stays in BUILD/python-build, so a rerun
# rebuilds only what changed; pip's own cache keeps the downloads.
set -eu
# The tests leave nothing in the source tree.
export PYTHONDONTWRITEBYTECODE=1
mode=$1 build=$2 src=$3
venv="$build/python-venv"
py="$venv/bin/python"
case "$mode" in
install)
    if [ ! -x "$py" ]; then
        python3 -m venv "$venv" || {
            echo "python3 -m venv failed: install python3-venv (.ci/install-deps)" >&2
            exit 1
        }
    fi
    "$py" -m pip install -q --disable-pip-version-check \
        "scikit-build-core>=0.10" numpy pytest
    # No build isolation: the build uses the venv's scikit-build-core
    # instead of fetching it again for every install.
    CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-2} \
        "$py" -m pip install -q --disable-pip-version-check \
        --no-build-isolation "$src" \
        --config-settings=build-dir="$build/python-build"
    ;;
test)
    cd "$src/python/tests"
    exec "$py" -m pytest -q -rs -p no:cacheprovider .
    ;;
gpu)
    cd "$src/python/tests"
    out=$("$py" -m pytest -q -rs -p no:cacheprovider test_gpu.py 2>&1) || {
        echo "$out"
        exit 1
    }
    echo "$out"
    if echo "$out" | grep -q " passed"; then exit 0; fi
    exit 77
    ;;
*)
    echo "usage: run_pytest.sh install|test|gpu BUILD SOURCE" >&2
    exit 2
    ;;
esac
