"""Where work runs: CuPy discovery, the side of an array, device memory checks.

CuPy is optional. Everything here imports it lazily so that the CPU backend
works on machines without it, and ``gpu_available()`` answers without raising.
Kernel declaration, compilation and launch live in :mod:`spla.backends.cuda`.
"""

from __future__ import annotations

import contextlib
import functools
import os

import numpy as np

from .errors import DeviceMemoryError, InputError, NoGPUError


@functools.cache
def _import_cupy():
    try:
        import cupy
    except Exception:  # noqa: BLE001  (ImportError, or a CuPy that cannot find its CUDA libs)
        return None
    return cupy


@functools.cache
def gpu_available() -> bool:
    """True when CuPy imports and sees at least one CUDA device."""
    if os.environ.get("SPLA_DISABLE_GPU"):
        return False
    cupy = _import_cupy()
    if cupy is None:
        return False
    try:
        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:  # noqa: BLE001  (a driver error means no usable device)
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


def to_host(a) -> np.ndarray:
    """A NumPy array of ``a``'s values, copied from the GPU where ``a`` is a CuPy array (anything
    with CuPy's ``get()``), else ``np.asarray(a)``."""
    return np.asarray(a.get() if hasattr(a, "get") and not isinstance(a, np.ndarray) else a)


def array_module(*arrays):
    """numpy or cupy, whichever the arrays live in; mixing them is an error."""
    on_gpu = [is_cupy_array(a) for a in arrays if a is not None]
    if any(on_gpu):
        if not all(on_gpu):
            raise InputError("arrays are split between host (NumPy) and GPU (CuPy); move them to one side")
        return _import_cupy()
    return np


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
    except Exception:  # noqa: BLE001  (the device may be in no state to answer)
        free = 0
    return DeviceMemoryError(needed, free, what)


@contextlib.contextmanager
def device_memory_errors(what: str = "data"):
    """Turn CuPy's out-of-memory error inside the block into :class:`DeviceMemoryError`
    (one line with the sizes), so API callers catch one spla error, as the CLI prints."""
    try:
        yield
    except MemoryError as exc:
        if is_out_of_memory(exc):
            raise device_memory_error(exc, what) from None
        raise


def check_fits(nbytes: int, what: str = "matrix") -> None:
    """Raise :class:`DeviceMemoryError` before copying if nbytes will not fit."""
    free = free_device_memory()
    if nbytes > free:
        raise DeviceMemoryError(nbytes, free, what)




DEVICES = ("auto", "cpu", "gpu")


def resolve_device(device: str = "auto") -> str:
    """``"cpu"`` or ``"gpu"`` for a user's ``--device``/``device=`` choice.

    ``"auto"`` takes the GPU when CuPy sees one; ``"gpu"`` raises
    :class:`NoGPUError` saying why when it cannot run.
    """
    if device not in DEVICES:
        raise InputError(f"unknown device {device!r}; expected one of {', '.join(DEVICES)}")
    if device == "auto":
        return "gpu" if gpu_available() else "cpu"
    if device == "gpu":
        require_cupy()
    return device
