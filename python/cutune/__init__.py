"""cutune from Python: Kernel Tuner's tune_kernel on cutune's tuner.

    results, env = cutune.tune_kernel("vector_add", source, n, [c, a, b, n32],
                                      {"block_size_x": [64, 128, 256]})

See docs/python.md ("From Kernel Tuner").
"""

from ._lib import CutuneError
from ._lib import text as _text
from ._lib import version as _version
from .tune import (
    CompilationFailedConfig,
    ErrorConfig,
    InvalidConfig,
    RuntimeFailedConfig,
    devices,
    lookup,
    tune_kernel,
)

__version__ = _text(_version())

__all__ = [
    "tune_kernel",
    "lookup",
    "devices",
    "CutuneError",
    "ErrorConfig",
    "InvalidConfig",
    "CompilationFailedConfig",
    "RuntimeFailedConfig",
]
