"""Honest comparisons when a matrix or vector holds NaN or Inf.

``||y - reference||`` is NaN as soon as one entry is, and NumPy warns on the
way (``RuntimeWarning: invalid value``); printed as an error it reads as
``nan`` or, worse, rounds to a pass. :func:`compare_nonfinite` splits the
entries: where result and reference are both finite it measures the error;
where either is not, it counts whether they agree (NaN where SciPy has NaN,
the same infinity where SciPy has it), and it says which case it is in
``status``. No warning escapes.
"""

from __future__ import annotations

import numpy as np

from ..device import to_host


def nonfinite_counts(values) -> dict:
    """``{"nan": k, "inf": k}`` of an array (NumPy or CuPy)."""
    values = to_host(values)
    if values.dtype.kind not in "fc":
        return {"nan": 0, "inf": 0}
    return {"nan": int(np.count_nonzero(np.isnan(values))), "inf": int(np.count_nonzero(np.isinf(values)))}


def compare_nonfinite(y, reference, magnitude: float | None = None) -> dict:
    """Compare ``y`` with ``reference`` entry by entry, NaN and Inf included.

    Parameters
    ----------
    y, reference : array_like (NumPy or CuPy)
    magnitude : float, optional
        Scale of the error (e.g. ``|| |A| |x| ||`` over the finite rows);
        default ``||reference||`` over the entries finite in both.

    Returns
    -------
    dict
        ``error``: ``||y - reference|| / magnitude`` over entries finite in
        both (0.0 when there are none); ``finite``: how many entries that is;
        ``nonfinite``: entries non-finite in the reference; ``mismatched``:
        entries where exactly one side is finite, or both are but differ in
        kind (NaN vs Inf, or the sign of Inf); ``status``: ``"finite"`` (no
        NaN/Inf anywhere), ``"propagated"`` (NaN/Inf exactly where the
        reference has them) or ``"mismatch"``; ``note``: one line saying so.
    """
    y = to_host(y)
    y = y.astype(np.complex128 if np.iscomplexobj(y) else np.float64, copy=False)
    ref = to_host(reference).astype(y.dtype, copy=False)
    with np.errstate(all="ignore"):
        finite_y, finite_ref = np.isfinite(y), np.isfinite(ref)
        both = finite_y & finite_ref
        nonfinite = int(np.count_nonzero(~finite_ref))
        neither = ~finite_y & ~finite_ref
        same_kind = (np.isnan(y) == np.isnan(ref)) & ((y == ref) | np.isnan(ref))
        mismatched = int(np.count_nonzero(finite_y != finite_ref)) + int(np.count_nonzero(neither & ~same_kind))
        difference = float(np.linalg.norm(y[both] - ref[both]))
        scale = float(np.linalg.norm(ref[both])) if magnitude is None else float(magnitude)
    error = difference / scale if scale else (0.0 if difference == 0 else float("inf"))
    finite = int(np.count_nonzero(both))
    if mismatched:
        status = "mismatch"
        note = f"{mismatched:,} entries NaN/Inf on one side only (or of a different kind)"
    elif nonfinite:
        status = "propagated"
        note = (f"{nonfinite:,} entries NaN/Inf in both, as in the reference; error over the other "
                f"{finite:,}")
    else:
        status, note = "finite", "no NaN or Inf"
    return {"error": error, "finite": finite, "nonfinite": nonfinite, "mismatched": mismatched,
            "status": status, "note": note}
