#!/usr/bin/env python3
"""Writes the BinaryRaw inputs of the binary_fill case (committed; run again
only to change them): input.bin holds 256 float32 values, little-endian,
value i = i * 0.25 - 8 (exact in float32), which binary_fill.cu checks;
wrong_size/input.bin holds one value fewer, which cutune must refuse."""
import os
import struct

here = os.path.dirname(os.path.abspath(__file__))
values = [i * 0.25 - 8.0 for i in range(256)]
with open(os.path.join(here, "input.bin"), "wb") as f:
    f.write(struct.pack("<256f", *values))
with open(os.path.join(here, "wrong_size", "input.bin"), "wb") as f:
    f.write(struct.pack("<255f", *values[:255]))
