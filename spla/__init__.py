"""spla: sparse-first linear algebra with hand-written CUDA kernels.

Public API (imported lazily, so ``import spla`` stays cheap and works without CuPy):

- :class:`CSRMatrix`, :func:`load`, :func:`analyze`
- :func:`spmv`, :func:`tune`, :func:`spmm`, :func:`gemm`, :func:`gemv`, :func:`pagerank`
- :mod:`spla.linalg` (cg, bicgstab, gmres, minres, block_cg, jacobi)
- exceptions in :mod:`spla.errors`
"""

from __future__ import annotations

import importlib

from .csr import CSRMatrix, as_csr
from .errors import DeviceMemoryError, InputError, KernelError, MatrixFormatError, NoGPUError, SplaError

__version__ = "0.1.0"

_LAZY = {
    "load": ("spla.io", "load"),
    "analyze": ("spla.analysis", "analyze"),
    "spmv": ("spla.ops.spmv", "spmv"),
    "tune": ("spla.bench.tune", "tune"),
    "spmm": ("spla.ops.spmm", "spmm"),
    "gemm": ("spla.ops.gemm", "gemm"),
    "gemv": ("spla.ops.gemm", "gemv"),
    "pagerank": ("spla.graph", "pagerank"),
    "linalg": ("spla.linalg", None),
}

__all__ = ["CSRMatrix", "as_csr", "SplaError", "InputError", "KernelError", "MatrixFormatError",
           "NoGPUError", "DeviceMemoryError", *_LAZY]


def __dir__():
    """The public API (lazy attributes included, so tab completion finds them) and loaded globals."""
    return sorted(set(__all__) | set(globals()))


def __getattr__(name):
    if name not in _LAZY:
        raise AttributeError(f"module 'spla' has no attribute {name!r}")
    module_name, attr = _LAZY[name]
    module = importlib.import_module(module_name)
    value = module if attr is None else getattr(module, attr)
    globals()[name] = value
    return value
