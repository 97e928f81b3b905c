"""The CPU backend: NumPy/SciPy implementations of every operation.

It is the embedded default (no GPU needed) and the reference every GPU kernel
is checked against. It imports nothing from :mod:`spla.backends.cuda`.
"""

from __future__ import annotations

import numpy as np


def spmv(A, x, y=None, alpha=1.0, beta=0.0, out=None):
    """``alpha * A @ x + beta * y`` with SciPy's CSR kernel, written to ``out`` when given."""
    return _axpby(A.to_scipy() @ x, y, alpha, beta, A.dtype, out)


def spmm(A, X, Y=None, alpha=1.0, beta=0.0, out=None):
    """``alpha * A @ X + beta * Y`` for a dense 2-D X."""
    return _axpby(A.to_scipy() @ X, Y, alpha, beta, A.dtype, out)


def _axpby(result, y, alpha, beta, dtype, out=None):
    result = np.asarray(result, dtype=dtype)
    if alpha != 1:
        result *= dtype.type(alpha)
    if y is not None and beta != 0:
        result += dtype.type(beta) * y
    if out is None:
        return result
    out[...] = result
    return out
