"""Deprecated alias: ``spla.spmv`` lives in :mod:`spla.ops.spmv` (removed in 0.3)."""

import warnings as _warnings

from .ops.spmv import spmv

__all__ = ["spmv"]

_warnings.warn("spla.matvec is deprecated (removed in 0.3); use spla.ops.spmv (or spla.spmv)",
               DeprecationWarning, stacklevel=2)
