#!/bin/sh
# ad hoc device run (not committed)
set -u
B=build
export CUTUNE_WORKER=$B/cutune-worker
tests/gpu/run.sh $B > $OUT/gpu-tests.txt 2>&1; echo "gpu tests rc=$?" >> $OUT/gpu-tests.txt
D=$(mktemp -d); export CUTUNE_CACHE_DIR=$D
$B/cutune tune conv2d --size 1024,1024 --budget-evals 20 --strategy random --no-cache > $OUT/damaged-1.txt 2>&1
python3 - "$D/binaries" <<'PY' >> $OUT/damaged-1.txt
import os, sys
n = 0
for f in os.listdir(sys.argv[1]):
    p = os.path.join(sys.argv[1], f)
    b = bytearray(open(p, 'rb').read())
    i = b.find(b'\x7fELF')
    if i >= 0:
        b[i:i+4] = b'XXXX'; open(p, 'wb').write(b); n += 1
print("damaged", n, "cubins")
PY
$B/cutune tune conv2d --size 1024,1024 --budget-evals 20 --strategy random --no-cache > $OUT/damaged-2.txt 2>&1
$B/cutune tune conv2d --size 1024,1024 --budget-evals 20 --strategy random --no-cache > $OUT/damaged-3.txt 2>&1
