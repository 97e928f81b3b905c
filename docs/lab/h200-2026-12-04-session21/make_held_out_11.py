"""An eleventh held-out set, written in session 21 before any GPU run of it, for the two leads that
session left (BENCHMARKS.md, session 21), so that the next session tests them on matrices nobody
has timed:

  * H1: in the rule's regular-large class (x over 1 MB, regular rows, columns scattered within a
    row), float32 matrices whose rows hold 7 or more entries on average run faster with
    segmented than with staged (the cut was read off earlier held-out runs, so it is a hypothesis,
    not a fit). The first seven matrices are such rows, with and without cross-row locality, and
    rows-2-4-local and rows-3-5-over-4M are the controls below the cut.
  * H2: short rows over an x that stays in L1 (rows-4-8-over-24k, rows-10-over-40k) run at
    well under the product floor plus the rows' bytes with every spla kernel.

    python3 make_held_out_11.py DIR [NAME ...]

Without names it writes the whole set in ELEVENTH's order (one random stream: a subset draws
other matrices of the same shapes). The generators are session 19's
(``../h200-2026-12-04-session19/make_held_out_large.py``) with a seed of their own.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "h200-2026-12-04-session19"))
import make_held_out_large as gen  # noqa: E402

gen.RNG = np.random.default_rng(2121)


def _from_columns(cols: np.ndarray, n_rows: int, k: int, n_cols: int) -> sp.csr_matrix:
    """Rows of k entries (row i holds cols[i * k:(i + 1) * k]); repeats folded, values random."""
    rows = np.repeat(np.arange(n_rows, dtype=np.int64), k)
    A = sp.csr_matrix((np.ones(cols.size), (rows, cols)), shape=(n_rows, n_cols))
    A.sum_duplicates()
    A.data = gen._values(A.nnz)
    return A


def zipf_rows(n_rows: int = 3_000_000, k: int = 10, n_cols: int = 2_000_000, exponent: float = 1.3):
    """Rows of k columns drawn from a Zipf popularity over randomly placed columns (hub columns)."""
    rank = np.minimum(gen.RNG.zipf(exponent, n_rows * k), n_cols) - 1
    return _from_columns(gen.RNG.permutation(n_cols)[rank], n_rows, k, n_cols)


def banded_blocks(n_rows: int = 3_000_000, k: int = 12, n_cols: int = 4_000_000, band: int = 1000,
                  window: int = 20_000):
    """Bands of ``band`` consecutive rows sharing one random window of ``window`` columns (a
    tensor-like locality across rows, none within a row)."""
    starts = gen.RNG.integers(0, n_cols - window, n_rows // band + 1)
    base = np.repeat(starts[np.arange(n_rows) // band], k)
    return _from_columns(base + gen.RNG.integers(0, window, n_rows * k), n_rows, k, n_cols)


def local_rows(n_rows: int = 12_000_000, lo: int = 2, hi: int = 4, reach: int = 100):
    """Rows of lo..hi entries within +-reach columns of the diagonal (tiny local rows)."""
    lengths = gen.RNG.integers(lo, hi + 1, n_rows)
    rows = np.repeat(np.arange(n_rows, dtype=np.int64), lengths)
    cols = np.clip(rows + gen.RNG.integers(-reach, reach + 1, rows.size), 0, n_rows - 1)
    A = sp.csr_matrix((np.ones(cols.size), (rows, cols)), shape=(n_rows, n_rows))
    A.sum_duplicates()
    A.data = gen._values(A.nnz)
    return A


def rows(lo: int, hi: int, n_rows: int, n_cols: int):
    """Rows of lo..hi scattered entries (uniform lengths) over n_cols columns."""
    return lambda: gen._scattered_rows(gen.RNG.integers(lo, hi + 1, n_rows), n_cols)


ELEVENTH = {
    "kron-200x20000": lambda: gen.kron_random(200, 3, 20_000, 4),
    "knn-9-window-30k": lambda: gen.knn_window(3_000_000, 9, 30_000),
    "zipf-rows-10": zipf_rows,
    "banded-blocks-12": banded_blocks,
    "rows-8-16-over-5M": rows(8, 16, 2_500_000, 5_000_000),
    "rows-7-over-8M": rows(7, 7, 4_000_000, 8_000_000),
    "rows-20-over-2M": rows(20, 20, 1_500_000, 2_000_000),
    "rows-2-4-local": local_rows,
    "rows-3-5-over-4M": rows(3, 5, 8_000_000, 4_000_000),
    "rows-4-8-over-24k": rows(4, 8, 6_000_000, 24_000),
    "rows-10-over-40k": rows(10, 10, 3_000_000, 40_000),
}


def main(argv) -> int:
    gen.write(Path(argv[0]), argv[1:] or ELEVENTH, ELEVENTH)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
