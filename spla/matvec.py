"""Deprecated alias: ``spla.spmv`` lives in :mod:`spla.ops.spmv` (removed in 0.3)."""

from .ops.spmv import spmv

__all__ = ["spmv"]
