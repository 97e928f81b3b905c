"""Deprecated module path: ``spla.spmm`` lives in :mod:`spla.ops.spmm`."""

import warnings as _warnings

from .ops.spmm import spmm  # noqa: F401

__all__ = ["spmm"]

_warnings.warn("spla.matmat is deprecated (removed in 0.3); use spla.ops.spmm (or spla.spmm)",
               DeprecationWarning, stacklevel=2)
