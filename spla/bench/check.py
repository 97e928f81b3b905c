"""One correctness model for every SpMV/SpMM check: the error scaled by |A| |x|.

A result ``y`` of ``A @ x`` is judged by ``||y - ref|| / || |A| |x| ||`` against
a float64 SciPy reference, with a tolerance per value dtype. Plain relative
error ``||y - ref|| / ||ref||`` is wrong for this: cancellation in a long row
makes it blow up for any summation order (a 1M-term float32 row sum can be
3e-4 off in plain relative terms and still exact to 1e-9 of |A||x|), while
indexing bugs give O(1e-2..1) either way.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

# the largest scaled error a correct kernel shows (float32: ~sqrt(row length) * 6e-8);
# "tf32": tensor-core products with TF32 inputs (10-bit mantissas)
TOLERANCE = {"float32": 1e-5, "float64": 1e-13, "tf32": 1e-3}
SPMV_TOLERANCE = TOLERANCE


def scaled_error(A, X, Y_ref, Y) -> float:
    """``||Y - Y_ref||_F / || |A| |X| ||_F`` in float64 on the side where Y_ref lives.

    A is a dense array, a :class:`~spla.CSRMatrix` or a SciPy/cupyx sparse
    matrix; X, Y_ref and Y are dense (Y may live on the other side: it is
    moved to Y_ref's). Infinite when Y has non-finite entries Y_ref has not.
    """
    xp = _module(Y_ref)
    Y = _to(xp, Y).astype(np.float64)
    Y_ref = xp.asarray(Y_ref).astype(np.float64, copy=False)
    finite = xp.isfinite(Y_ref)
    if not bool(xp.array_equal(xp.isfinite(Y), finite)):
        return math.inf
    if hasattr(A, "to_scipy"):  # a CSRMatrix
        A = A.to_scipy() if xp is np else A.to_device().to_cupyx()
    absX = abs(_to(xp, X).astype(np.float64))
    magnitude = xp.asarray(abs(A.astype(np.float64)) @ absX)
    # entries that are NaN/Inf in the reference (a NaN in A) are judged by the check above
    scale = float(xp.linalg.norm(magnitude[finite]))
    diff = float(xp.linalg.norm((Y - Y_ref)[finite]))
    return diff / scale if scale else diff


def _module(a):
    return np if isinstance(a, np.ndarray) else __import__("cupy")


def _to(xp, a):
    if xp is np:
        return np.asarray(a.get() if hasattr(a, "get") and not isinstance(a, np.ndarray) else a)
    return xp.asarray(a)


def relative_error(y, reference) -> float:
    """||y - ref|| / ||ref|| in float64 on the host (0 when both are zero)."""
    y = np.asarray(y.get() if hasattr(y, "get") else y, dtype=np.float64)
    ref = np.asarray(reference.get() if hasattr(reference, "get") else reference, dtype=np.float64)
    if y.shape != ref.shape:
        raise ValueError(f"result shape {y.shape} differs from reference {ref.shape}")
    finite = np.isfinite(ref)
    if not np.array_equal(finite, np.isfinite(y)):
        return float("inf")
    diff = np.linalg.norm((y - ref)[finite])
    scale = np.linalg.norm(ref[finite])
    if scale == 0:
        return float(diff)
    return float(diff / scale)


def passes(error: float, dtype) -> bool:
    """Whether a scaled error is within the tolerance of ``dtype``."""
    return error <= TOLERANCE[np.dtype(dtype).name]


@dataclass
class SpmvCheck:
    """One matrix's input and float64 answer for checking SpMV kernels.

    ``x`` is float32-representable, so float32 and float64 runs share one exact
    input; ``reference`` is SciPy's ``A @ x`` in float64 and ``magnitude``
    ``|| |A| |x| ||``, the scale errors are measured against.
    """

    x: np.ndarray
    reference: np.ndarray
    magnitude: float

    @classmethod
    def for_matrix(cls, A64, seed: int = 12345) -> SpmvCheck:
        x = np.random.default_rng(seed).uniform(-1, 1, A64.n_cols).astype(np.float32).astype(np.float64)
        scipy_matrix = A64.to_scipy()
        magnitude = float(np.linalg.norm(abs(scipy_matrix) @ np.abs(x))) or 1.0
        return cls(x, scipy_matrix @ x, magnitude)

    def error(self, y) -> float:
        """||y - reference|| / || |A| |x| || (y on the host or the GPU)."""
        y = np.asarray(y.get() if hasattr(y, "get") else y, dtype=np.float64)
        return float(np.linalg.norm(y - self.reference)) / self.magnitude

    @staticmethod
    def passes(error: float, dtype) -> bool:
        return passes(error, dtype)

    def record(self, row: dict, first_run, dtype, label: str, error_of=None, tolerance: float | None = None) -> bool:
        """Call ``first_run()`` (it returns y) and put its error and status in
        ``row``: "ok", "wrong" (over the tolerance) or "failed" (it raised; one
        broken kernel must not sink a benchmark). Prints a line unless ok;
        True when ok, i.e. the kernel may be timed. A run whose result is not y
        (a benchmark's partial sums) passes its own ``error_of(result)`` and
        ``tolerance`` instead of :meth:`error` and the dtype's."""
        try:
            row["error_vs_abs"] = float((error_of or self.error)(first_run()))
        except Exception as exc:  # noqa: BLE001  (any kernel failure is recorded, not raised)
            row.update(status="failed", message=f"{type(exc).__name__}: {exc}")
            print(f"  {label}: FAILED {row['message']}", flush=True)
            return False
        ok = self.passes(row["error_vs_abs"], dtype) if tolerance is None else row["error_vs_abs"] <= tolerance
        row["status"] = "ok" if ok else "wrong"
        if row["status"] == "wrong":
            print(f"  {label}: WRONG ({row['error_vs_abs']:.3g})", flush=True)
        return row["status"] == "ok"


