"""The GPU side of spla: CuPy discovery, device memory checks, kernel loading.

CuPy is optional. Everything here imports it lazily so that the CPU backend
works on machines without it, and ``gpu_available()`` answers without raising.

Kernels live in ``kernels/`` (a source checkout) or ``spla/kernels/`` (an
installed wheel) and are compiled at run time with NVRTC through
``cupy.RawModule``. Each kernel-using module declares its sources once, at
import time, with :class:`KernelSource`; the declarations double as the list
the CI compile test instantiates with ``nvcc -arch=sm_90``.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path
from typing import Sequence

from .errors import DeviceMemoryError, KernelError, NoGPUError

NVRTC_OPTIONS = ("-std=c++17",)


@functools.lru_cache(maxsize=None)
def _import_cupy():
    try:
        import cupy
    except Exception:  # ImportError, or a CuPy that cannot find its CUDA libs
        return None
    return cupy


@functools.lru_cache(maxsize=None)
def gpu_available() -> bool:
    """True when CuPy imports and sees at least one CUDA device."""
    if os.environ.get("SPLA_DISABLE_GPU"):
        return False
    cupy = _import_cupy()
    if cupy is None:
        return False
    try:
        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:
        return False


def require_cupy():
    """Return the cupy module or raise :class:`NoGPUError` saying why not."""
    if not gpu_available():
        if _import_cupy() is None:
            raise NoGPUError("CuPy is not installed (pip install 'spla[cuda13]'); use --device cpu")
        raise NoGPUError("no CUDA device is visible; use --device cpu")
    return _import_cupy()


def is_cupy_array(x) -> bool:
    cupy = _import_cupy()
    return cupy is not None and isinstance(x, cupy.ndarray)


def array_module(*arrays):
    """numpy or cupy, whichever the arrays live in; mixing them is an error."""
    import numpy

    on_gpu = [is_cupy_array(a) for a in arrays if a is not None]
    if any(on_gpu):
        if not all(on_gpu):
            raise ValueError("arrays are split between host (NumPy) and GPU (CuPy); move them to one side")
        return _import_cupy()
    return numpy


def device_name() -> str:
    cupy = require_cupy()
    props = cupy.cuda.runtime.getDeviceProperties(cupy.cuda.Device().id)
    name = props["name"]
    return name.decode() if isinstance(name, bytes) else str(name)


def free_device_memory() -> int:
    """Bytes a new allocation can get: free on the device plus CuPy's pool slack."""
    cupy = require_cupy()
    free, _total = cupy.cuda.runtime.memGetInfo()
    pool = cupy.get_default_memory_pool()
    return int(free + pool.free_bytes())


def is_out_of_memory(exc: BaseException) -> bool:
    """Whether ``exc`` is CuPy's out-of-memory error (False without CuPy)."""
    cupy = _import_cupy()
    error = getattr(getattr(getattr(cupy, "cuda", None), "memory", None), "OutOfMemoryError", None)
    return error is not None and isinstance(exc, error)


def device_memory_error(exc: BaseException, what: str = "data") -> DeviceMemoryError:
    """CuPy's out-of-memory error as a one-line :class:`DeviceMemoryError` with the sizes."""
    needed = exc.args[0] if exc.args and isinstance(exc.args[0], int) else 0
    try:
        free = free_device_memory()
    except Exception:  # the device may be in no state to answer
        free = 0
    return DeviceMemoryError(needed, free, what)


def check_fits(nbytes: int, what: str = "matrix") -> None:
    """Raise :class:`DeviceMemoryError` before copying if nbytes will not fit."""
    free = free_device_memory()
    if nbytes > free:
        raise DeviceMemoryError(nbytes, free, what)


def kernel_dir() -> Path:
    """Where the .cu/.cuh sources are: inside the installed package, else the checkout."""
    here = Path(__file__).resolve().parent
    for candidate in (here / "kernels", here.parent / "kernels"):
        if (candidate / "common.cuh").is_file():
            return candidate
    raise FileNotFoundError(f"spla's CUDA kernels were not found beside {here}")


class KernelSource:
    """One .cu file and the (template) kernels spla instantiates from it.

    ``names`` are NVRTC name expressions such as ``"spla_spmv_scalar<float, int>"``.
    Compilation happens on first use and is cached per (file, options, device).
    """

    declared: list["KernelSource"] = []

    def __init__(self, filename: str, names: Sequence[str], options: Sequence[str] = ()):
        for name in names:
            if not name.startswith("spla_"):
                raise KernelError(f"exported kernel {name!r} must carry the spla_ prefix")
        self.filename = filename
        self.names = tuple(names)
        self.options = tuple(NVRTC_OPTIONS) + tuple(options)
        KernelSource.declared.append(self)

    @property
    def path(self) -> Path:
        return kernel_dir() / self.filename

    def function(self, name: str):
        """The compiled ``cupy.RawKernel`` for one declared name expression."""
        if name not in self.names:
            raise KernelError(f"{name} is not declared in {self.filename}")
        cupy = require_cupy()
        return _compiled_module(self, cupy.cuda.Device().id).get_function(name)


@functools.lru_cache(maxsize=None)
def _compiled_module(source: KernelSource, device_id: int):
    cupy = require_cupy()
    code = source.path.read_text()
    options = source.options + (f"-I{kernel_dir()}",)
    module = cupy.RawModule(code=code, options=options, name_expressions=source.names)
    module.compile()
    return module


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)


MAX_GRID_X = 2**31 - 1
MAX_BLOCK_THREADS = 1024


def grid_1d(n_threads: int, block: int) -> int:
    """Blocks for a 1-D launch, refusing grids CUDA cannot launch."""
    if not 1 <= block <= MAX_BLOCK_THREADS:
        raise KernelError(f"a block of {block} threads cannot launch (1..{MAX_BLOCK_THREADS})")
    if n_threads < 0:
        raise KernelError(f"cannot launch a negative number of threads ({n_threads})")
    blocks = max(1, ceil_div(n_threads, block))
    if blocks > MAX_GRID_X:
        raise KernelError(f"{n_threads} threads need {blocks} blocks, over CUDA's grid limit {MAX_GRID_X}")
    return blocks
