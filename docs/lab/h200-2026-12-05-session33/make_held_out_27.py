"""A twenty-seventh held-out set, written in session 33 before any run of it, for the bank offsets
of staged's row-a-thread sums (kernels/spmv_staged.cu, staged_bank_offset; predictions E1-E4 in
this folder's README): rows of exactly one length, local or spread, of even lengths (the ones whose
sums hit one shared-memory bank) and two controls (an odd length, mixed lengths).

Every row of an "exact" matrix has exactly L distinct columns: column j of a row lies in its own
slot of `gap` columns (j * gap + a random place in the slot), the slots running from the row's
window start, so no column repeats and no row is shortened by folding duplicates.

    python3 make_held_out_27.py DIR [NAME ...]
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "h200-2026-12-04-session19"))
import make_held_out_large as gen  # noqa: E402

gen.RNG = np.random.default_rng(2733)


def exact(n: int, length: int, gap: int, n_cols: int | None = None) -> sp.csr_matrix:
    """n rows of exactly ``length`` columns, one in each of ``length`` slots of ``gap`` columns;
    the slots start near the diagonal (n_cols None: a local window of length * gap columns) or
    anywhere in n_cols columns (spread)."""
    span = length * gap
    cols_total = n if n_cols is None else n_cols
    rows = np.arange(n, dtype=np.int64)
    if n_cols is None:
        start = np.clip(rows - span // 2, 0, cols_total - span)
    else:
        start = gen.RNG.integers(0, cols_total - span + 1, n)
    cols = (start[:, None] + np.arange(length) * gap + gen.RNG.integers(0, gap, (n, length))).ravel()
    indptr = np.arange(0, n * length + 1, length, dtype=np.int64)
    return sp.csr_matrix((gen._values(cols.size), cols, indptr), shape=(n, cols_total))


def mixed(n: int, lo: int, hi: int, reach: int) -> sp.csr_matrix:
    """Rows of lo..hi distinct columns (mixed lengths) within +-reach of the diagonal."""
    lengths = gen.RNG.integers(lo, hi + 1, n)
    rows = np.repeat(np.arange(n, dtype=np.int64), lengths)
    cols = np.clip(rows + gen.RNG.integers(-reach, reach + 1, rows.size), 0, n - 1)
    A = sp.csr_matrix((np.ones(rows.size), (rows, cols)), shape=(n, n))
    A.sum_duplicates()
    A.data = gen._values(A.nnz)
    return A


def elasticity_2d(n: int = 1000) -> sp.csr_matrix:
    """A 9-point stencil on n^2 nodes with two unknowns a node (2-D elasticity's pattern): interior
    rows of 18, in 2 x 2 blocks."""
    mesh = gen._stencil((n, n), [(a, b) for a in (-1, 0, 1) for b in (-1, 0, 1)])
    A = sp.kron(mesh, np.ones((2, 2)), format="csr")
    A.data = gen._values(A.nnz)
    return A


TWENTY_SEVENTH = {
    "knn-16-exact-window": lambda: exact(2_500_000, 16, 160),
    "rows-8-exact-local": lambda: exact(5_000_000, 8, 20),
    "rows-24-exact-local": lambda: exact(1_600_000, 24, 40),
    "rows-32-exact-local": lambda: exact(1_200_000, 32, 60),
    "rows-64-exact-local": lambda: exact(600_000, 64, 70),
    "rows-32-exact-spread": lambda: exact(1_200_000, 32, 20_000, n_cols=3_000_000),
    "elasticity-2d-1000": elasticity_2d,
    "rows-27-exact-local": lambda: exact(1_400_000, 27, 50),  # control: an odd length
    "rows-20-44-mixed-1000": lambda: mixed(1_200_000, 20, 44, 1000),  # control: mixed lengths
}


def main(argv) -> int:
    gen.write(Path(argv[0]), argv[1:] or TWENTY_SEVENTH, TWENTY_SEVENTH)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
