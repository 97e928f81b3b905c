"""Deprecated module path: ``spla.gemm``/``spla.gemv`` live in :mod:`spla.ops.gemm`."""

import warnings as _warnings

from .ops.gemm import check_gemv_operands, check_operands, gemm, gemv  # noqa: F401

__all__ = ["gemm", "gemv"]

_warnings.warn("spla.dense is deprecated (removed in 0.3); use spla.ops.gemm (or spla.gemm)",
               DeprecationWarning, stacklevel=2)
