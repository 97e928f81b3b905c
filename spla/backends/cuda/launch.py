"""A kernel launch with its arguments packed once: the SpMV hot path's launch.

Calling a ``cupy.RawKernel`` builds a C argument object for every argument on
every call; from Python that costs about 5 us a launch, most of what a small
SpMV costs. A bound launcher's arguments are fixed except for a few slots (x,
y, alpha, beta), so :class:`PackedLaunch` writes every argument's bytes once
into a ctypes parameter block and calls the driver's ``cuLaunchKernel``
through ctypes; a call rewrites only the slots that change. It launches on
CuPy's current stream, as CuPy does, so it is captured in CUDA graphs.

Where the driver library cannot be loaded, or a launch is refused (a thread
without the context current, say), the launch goes through CuPy's call
instead, which sets the context up or raises CuPy's own error: the packed path
only ever changes how long a launch takes.
"""

from __future__ import annotations

import ctypes
import functools
from typing import Any

import numpy as np

#: False: every launch goes through CuPy's call (the A/B switch of scripts/hot_path.py).
PACKED = True
_DRIVER: list = []  # [cuLaunchKernel or None], loaded on first use

# numpy scalar type -> ctypes type holding the same bytes
_SCALARS = {np.dtype(np.int32): ctypes.c_int32, np.dtype(np.int64): ctypes.c_int64,
            np.dtype(np.uint32): ctypes.c_uint32, np.dtype(np.uint64): ctypes.c_uint64,
            np.dtype(np.float32): ctypes.c_float, np.dtype(np.float64): ctypes.c_double}


def _driver_launch():
    """libcuda's ``cuLaunchKernel``, or None where the library does not load."""
    if not _DRIVER:
        launch: Any = None
        try:
            launch = ctypes.CDLL("libcuda.so.1").cuLaunchKernel
            launch.restype = ctypes.c_int
            launch.argtypes = [ctypes.c_void_p] + [ctypes.c_uint] * 7 + [ctypes.c_void_p] * 3
        except (OSError, AttributeError):
            launch = None
        _DRIVER.append(launch)
    return _DRIVER[0]


def pack(value):
    """A ctypes object holding one kernel argument as the kernel reads it: a device array's
    pointer (None: a pointer slot filled per call), or a NumPy scalar's bytes (the kernels'
    parameter types are exact)."""
    if value is None:
        return ctypes.c_uint64(0)
    data: Any = getattr(value, "data", None)
    if hasattr(data, "ptr"):  # a CuPy array
        return ctypes.c_uint64(data.ptr)
    dtype = getattr(value, "dtype", None)
    if dtype is None or dtype not in _SCALARS:
        raise TypeError(f"a packed launch takes device arrays and NumPy int/float scalars, got {type(value).__name__}")
    return _SCALARS[dtype](value.item())


class PackedLaunch:
    """``kernel(grid, block, args, shared_mem=...)`` with the arguments packed once, where
    ``args[at:at + 4]`` are an SpMV's (x, y, alpha, beta), x and y given as None and alpha and
    beta as scalars of their type: ``launch(x, y, alpha, beta)`` rewrites those four and launches."""

    def __init__(self, kernel, grid: tuple, block: tuple, args: tuple, at: int, shared_mem: int = 0):
        self.kernel, self.grid, self.block, self.args, self.shared_mem = kernel, grid, block, args, shared_mem
        self.at = at
        self.values = [pack(a) for a in args]
        self.x, self.y, self.alpha, self.beta = self.values[at:at + 4]
        self.params = (ctypes.c_void_p * len(args))(*(ctypes.addressof(v) for v in self.values))
        self.driver = None
        launch = _driver_launch() if PACKED else None
        function = getattr(getattr(kernel, "kernel", None), "ptr", None)
        if launch is not None and function:
            grid3 = tuple(grid) + (1,) * (3 - len(grid))
            block3 = tuple(block) + (1,) * (3 - len(block))
            self.driver = functools.partial(launch, function, *grid3, *block3, shared_mem)
            import cupy

            self.stream = cupy.cuda.get_current_stream

    def __call__(self, x, y, alpha, beta):
        self.x.value = x.data.ptr
        self.y.value = y.data.ptr
        self.alpha.value = alpha
        self.beta.value = beta
        if self.driver is None or self.driver(self.stream().ptr, self.params, None):
            args = self.args[:self.at] + (x, y, alpha, beta) + self.args[self.at + 4:]
            self.kernel(self.grid, self.block, args, shared_mem=self.shared_mem)
