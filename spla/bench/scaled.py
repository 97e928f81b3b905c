"""Stand-in for ``spla.bench.check.scaled_error`` (same name and signature) until the merge.

The error of a product is judged against the scale of the sum it forms:
``||Y - Y_ref|| / || |A| |X| ||``. Cancellation in a long row or a long dot
product makes plain relative error blow up for any summation order, while an
indexing bug still gives O(1e-2..1).
"""

from __future__ import annotations

import math

import numpy as np

# Per precision: float32 / float64 arithmetic, and TF32 tensor-core inputs (10-bit mantissas).
SCALED_TOLERANCE = {"float32": 1e-5, "float64": 1e-13, "tf32": 1e-3}


def scaled_error(A, X, Y_ref, Y) -> float:
    """``||Y - Y_ref||_F / || |A| |X| ||_F`` in float64 on the side where Y_ref lives.

    A is a dense array, a :class:`~spla.CSRMatrix` or a SciPy/cupyx sparse
    matrix; X, Y_ref and Y are dense (Y may live on the other side: it is
    moved to Y_ref's). Infinite when Y has non-finite entries Y_ref has not.
    """
    xp = _module(Y_ref)
    Y = _to(xp, Y).astype(np.float64)
    Y_ref = Y_ref.astype(np.float64, copy=False)
    if not bool(xp.array_equal(xp.isfinite(Y), xp.isfinite(Y_ref))):
        return math.inf
    if hasattr(A, "to_scipy"):  # a CSRMatrix
        A = A.to_scipy() if xp is np else A.to_device().to_cupyx()
    absX = abs(_to(xp, X).astype(np.float64))
    magnitude = abs(A.astype(np.float64)) @ absX
    scale = float(xp.linalg.norm(xp.asarray(magnitude).ravel()))
    diff = float(xp.linalg.norm(xp.nan_to_num(Y - Y_ref).ravel()))
    return diff / scale if scale else diff


def _module(a):
    return np if isinstance(a, np.ndarray) else __import__("cupy")


def _to(xp, a):
    if xp is np:
        return np.asarray(a.get() if hasattr(a, "get") and not isinstance(a, np.ndarray) else a)
    return xp.asarray(a)
