"""Deprecated module path: ``spla.gemm``/``spla.gemv`` live in :mod:`spla.ops.gemm`."""

from .ops.gemm import check_gemv_operands, check_operands, gemm, gemv  # noqa: F401

__all__ = ["gemm", "gemv"]
