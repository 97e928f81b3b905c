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


def gemm(A, B, C=None, alpha=1.0, beta=0.0, out=None):
    """``alpha * A @ B + beta * C`` with NumPy's matmul in the result dtype of A and B.

    ``out`` (default: C, else a new array) is written in place and returned;
    C is read only when ``beta != 0``.
    """
    dtype = np.result_type(A.dtype, B.dtype)
    product = np.asarray(np.matmul(A.astype(dtype, copy=False), B.astype(dtype, copy=False)), dtype=dtype)
    if out is None:
        out = C if C is not None else np.empty(product.shape, dtype=dtype)
    return _write_scaled(product, out, C, alpha, beta)


def gemv(M, x, y=None, alpha=1.0, beta=0.0, out=None):
    """``alpha * M @ x + beta * y`` in M's dtype; ``out`` (default: y) is written and returned."""
    product = np.asarray(M @ x.astype(M.dtype, copy=False), dtype=M.dtype)
    if out is None:
        out = y if y is not None else np.empty(product.shape, dtype=M.dtype)
    return _write_scaled(product, out, y, alpha, beta)


def _write_scaled(product, out, c, alpha, beta):
    """out = alpha * product + beta * c, never reading c when beta == 0."""
    product *= product.dtype.type(alpha)
    if beta != 0:
        product += product.dtype.type(beta) * c
    out[...] = product
    return out
