"""Deprecated alias of :mod:`spla.device` and :mod:`spla.backends.cuda.runtime`.

CuPy discovery and memory checks moved to ``spla.device``; kernel declaration
and compilation to ``spla.backends.cuda.runtime``. This module re-exports both
for code written against spla 0.1 and will be removed in 0.3.
"""

import warnings as _warnings

from .backends.cuda.runtime import (
                                    MAX_BLOCK_THREADS,
                                    MAX_GRID_X,
                                    NVRTC_OPTIONS,
                                    KernelSource,
                                    ceil_div,
                                    grid_1d,
                                    kernel_dir,
)
from .device import (
                                    _import_cupy,
                                    array_module,
                                    check_fits,
                                    device_memory_error,
                                    device_name,
                                    free_device_memory,
                                    gpu_available,
                                    is_cupy_array,
                                    is_out_of_memory,
                                    require_cupy,
)

__all__ = ["MAX_BLOCK_THREADS", "MAX_GRID_X", "NVRTC_OPTIONS", "KernelSource", "_import_cupy", "array_module",
           "ceil_div", "check_fits", "device_memory_error", "device_name", "free_device_memory", "gpu_available",
           "grid_1d", "is_cupy_array", "is_out_of_memory", "kernel_dir", "require_cupy"]

_warnings.warn("spla.cuda is deprecated (removed in 0.3); use spla.device and spla.backends.cuda.runtime",
               DeprecationWarning, stacklevel=2)
