"""Deprecated module path: ``spla.spmm`` lives in :mod:`spla.ops.spmm`."""

from .ops.spmm import spmm  # noqa: F401

__all__ = ["spmm"]
