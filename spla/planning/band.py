"""Rows of contiguous columns: SpMV without column indices on bands of any width or profile.

In a banded matrix whose rows are each one unbroken run of columns (a band of
fixed or random width, a skyline profile, dense row blocks) a row's column
indices are ``first, first + 1, ...``: CSR stores, beside every value, an
index that its row's first column already gives. The ``band`` kernel
(kernels/spmv_band.cu) reads the values, the row pointers and one first column
per row (:class:`Structure`), about 0.54x CSR's bytes in float32 and 0.69x in
float64 on rows of 32 entries. Where ``dia`` would pad such rows to a band's
full width (twice the values for rows of random width 1..64), ``band`` pads
nothing, and it keeps explicit zeros, as CSR does.

Its products are the ``warp`` kernel's at the same lanes, bit for bit (one
mapping, one order of the sums), and it takes the same ``:LANES`` parameter.

Detection (:func:`structure`) needs rows in canonical form (sorted, no
duplicates: A's cached flag, one pass the first time) and one pass over the
rows: a canonical row is contiguous exactly when its last column minus its
first is its length minus one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .. import csr_passes
from . import structured
from .structured import Refusal

__all__ = ["AUTO_MIN_ROWS", "NEEDS", "Refusal", "Structure", "applies", "auto_considers", "describe", "structure"]

#: What ``kernel="band"`` asks of a matrix (its error's text).
NEEDS = "a matrix whose rows are each one contiguous run of columns"


@dataclass(frozen=True, eq=False)
class Structure:
    """The first column of every row (A's index dtype, on A's side; 0 for empty rows)."""

    first: Any


def structure(A) -> Structure | Refusal:
    """A's first columns, or why its rows are not contiguous (cached on A)."""
    return structured.cached(A, "band", _detect)  # type: ignore[return-value]


def describe(found: Structure) -> str:
    """What ``spla info`` says of A's structure."""
    return "rows of contiguous columns"


def _detect(xp, A) -> Structure | Refusal:
    if A.nnz and not A.has_canonical_format:
        return structured.NOT_CANONICAL
    first, broken = csr_passes.row_runs(A)
    if broken:
        return Refusal(f"{broken:,} of its rows are not one contiguous run of columns")
    return Structure(first=first)


#: ``auto`` looks for rows of contiguous columns from this many rows, at any size (until session 28:
#: from 2^20 nonzeros, set from the design). On the corpus's bands at 300k-1M nonzeros band ran
#: 0.84-1.04 of the best CSR kernel at 9,231 rows and 1.14-1.18x from 30,303 (this is the geometric
#: midpoint); held on held-out set 24 with dia's (session 31) and taken with it (session 32).
AUTO_MIN_ROWS = 16_700


def auto_considers(stats) -> bool:
    """Whether ``auto`` looks for contiguous rows in a matrix of these row statistics: rows
    enough (:data:`AUTO_MIN_ROWS`; the rule asks only of regular rows)."""
    return stats.n_rows >= AUTO_MIN_ROWS


def applies(A, stats=None) -> bool:
    """Whether every row of A with entries is one contiguous run of columns (``stats`` is
    unused: the test is one pass over the rows, after the canonical-form flag)."""
    return A.nnz > 0 and isinstance(structure(A), Structure)
