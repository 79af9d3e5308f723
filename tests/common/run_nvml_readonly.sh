#!/bin/sh
# cutune only reads a GPU's state (docs/measuring.md#energy-and-power): no
# source of the tree may resolve or call an NVML function that changes
# it (nvmlDeviceSet*, nvmlDeviceReset*, nvmlDeviceClear*, ...), nor run
# nvidia-smi with an option that sets clocks, limits or modes. Fails
# naming each file and line that does.
#
# usage: run_nvml_readonly.sh SOURCE_DIR
set -eu
root=$1
cd "$root"
dirs=""
for d in tuner search cache templates include bench tests examples; do
    [ -d "$d" ] && dirs="$dirs $d"
done
found=$(mktemp)
trap 'rm -f "$found"' EXIT
# A symbol name in a string (dlsym) or a call: nvml...Set/Reset/Clear...
# followed by a quote or a parenthesis. Comments that name the family
# without either ("nvmlDeviceSet*") do not count.
# shellcheck disable=SC2086
find $dirs -type f \( -name '*.c' -o -name '*.h' -o -name '*.cpp' \
    -o -name '*.cu' -o -name '*.py' \) -print |
    xargs grep -nHE \
        'nvml[A-Za-z0-9_]*(Set|Reset|Clear)[A-Za-z0-9_]*[[:space:]]*[("]' \
        >>"$found" || true
# nvidia-smi's setting options, in scripts.
# shellcheck disable=SC2086
find $dirs -type f -name '*.sh' ! -name run_nvml_readonly.sh -print |
    xargs grep -nHE \
        'nvidia-smi.*[[:space:]](-pl|-lgc|-rgc|-lmc|-rmc|-ac|-rac|-pm|-c|-r|--power-limit|--lock-gpu-clocks|--reset-gpu-clocks|--applications-clocks|--persistence-mode|--compute-mode|--gpu-reset)([[:space:]=]|$)' \
        >>"$found" || true
if [ -s "$found" ]; then
    echo "cutune must not change a GPU's settings; found:" >&2
    cat "$found" >&2
    exit 1
fi
# The check must see the tree: the NVML loader is where reads are
# resolved, and it names at least the energy counter.
if ! grep -q '"nvmlDeviceGetTotalEnergyConsumption"' tuner/common/nvml_lib.c
then
    echo "run_nvml_readonly.sh: tuner/common/nvml_lib.c not found or" \
        "changed; the check looks at the wrong tree" >&2
    exit 2
fi
echo "no NVML or nvidia-smi call that changes the GPU"
