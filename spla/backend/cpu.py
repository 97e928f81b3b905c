"""The CPU backend: NumPy/SciPy implementations of every operation.

It is the embedded default (no GPU needed) and the reference the GPU kernels
are checked against.
"""

from __future__ import annotations

import numpy as np


def spmv(A, x, y=None, alpha=1.0, beta=0.0):
    """y = alpha * A @ x + beta * y with SciPy's CSR kernel."""
    result = A.to_scipy() @ x
    return _axpby(result, y, alpha, beta, A.dtype)


def spmm(A, X, Y=None, alpha=1.0, beta=0.0):
    """Y = alpha * A @ X + beta * Y for a dense 2-D X."""
    result = A.to_scipy() @ X
    return _axpby(result, Y, alpha, beta, A.dtype)


def _axpby(result, y, alpha, beta, dtype):
    result = np.asarray(result, dtype=dtype)
    if alpha != 1:
        result *= dtype.type(alpha)
    if y is not None and beta != 0:
        result += dtype.type(beta) * y
    return result
