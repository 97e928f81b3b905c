"""Deprecated: the GEMM registry and rules moved to :mod:`spla.planning.gemm`, the kernels to
:mod:`spla.backends.cuda.gemm`, the front door to :mod:`spla.ops.gemm`. Only ``gemv`` stays
here, for the SpMV backend's dense panels until it calls :mod:`spla.backends.cuda.gemm` itself."""

from __future__ import annotations


def gemv(M, x, y=None, *, alpha=1.0, beta=0.0):
    """``alpha * M @ x + beta * y`` through :func:`spla.ops.gemm.gemv`."""
    from ..ops.gemm import gemv as _gemv

    return _gemv(M, x, y, alpha=alpha, beta=beta)
