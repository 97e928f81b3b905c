"""A twenty-ninth held-out set, written in session 36 before any run of it, to test P4 (this
folder's README): float32's packed class (rows of at least 7 whose neighbouring columns are rarely
within 8: auto runs segmented) split by how wide a window of x a staged tile reads. Generators none
of the earlier sets used: columns drawn around the diagonal from a normal law of spread SIGMA, and
rows confined to diagonal blocks of B columns, at 40M nonzeros (and three at 10M, P4c), tile
spans from about 2k to 100k columns.

    python3 make_held_out_29.py DIR [NAME ...]
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "h200-2026-12-04-session19"))
import make_held_out_large as gen  # noqa: E402

RNG = np.random.default_rng(2936)


def _rows(n: int, lo: int, hi: int) -> np.ndarray:
    return RNG.integers(lo, hi + 1, n)


def normal_window(n: int, lo: int, hi: int, sigma: float) -> sp.csr_matrix:
    """Row i's columns: i plus normal draws of spread sigma, folded into [0, n), duplicates
    dropped (a row loses a few entries where draws meet)."""
    lengths = _rows(n, lo, hi)
    rows = np.repeat(np.arange(n, dtype=np.int64), lengths)
    cols = np.abs(rows + np.rint(RNG.normal(0.0, sigma, rows.size)).astype(np.int64))
    cols = np.where(cols >= n, 2 * (n - 1) - cols, cols)
    A = sp.csr_matrix((RNG.uniform(-1, 1, rows.size).astype(np.float32), (rows, cols)), shape=(n, n))
    A.sum_duplicates()
    return A


def diagonal_blocks(n: int, lo: int, hi: int, block: int) -> sp.csr_matrix:
    """Row i's columns drawn uniformly from its diagonal block of ``block`` columns."""
    lengths = _rows(n, lo, hi)
    rows = np.repeat(np.arange(n, dtype=np.int64), lengths)
    start = (rows // block) * block
    cols = np.minimum(start + RNG.integers(0, block, rows.size), n - 1)
    A = sp.csr_matrix((RNG.uniform(-1, 1, rows.size).astype(np.float32), (rows, cols)), shape=(n, n))
    A.sum_duplicates()
    return A


TWENTY_NINTH = {
    # small windows: P4 moves these to staged (P4a)
    "normal-14-18-sigma-900": lambda: normal_window(2_500_000, 14, 18, 900),
    "normal-24-28-sigma-1400": lambda: normal_window(1_540_000, 24, 28, 1400),
    "blocks-20-4096": lambda: diagonal_blocks(2_000_000, 18, 22, 4096),
    "blocks-40-8192": lambda: diagonal_blocks(1_000_000, 36, 44, 8192),
    "normal-9-11-sigma-1500": lambda: normal_window(4_000_000, 9, 11, 1500),
    # wide windows: P4 leaves these on segmented (P4b)
    "normal-20-28-sigma-6000": lambda: normal_window(1_650_000, 20, 28, 6000),
    "blocks-24-32768": lambda: diagonal_blocks(1_650_000, 20, 28, 32768),
    "normal-12-16-sigma-12000": lambda: normal_window(2_850_000, 12, 16, 12000),
    "blocks-48-65536": lambda: diagonal_blocks(830_000, 44, 52, 65536),
    # small windows at 10M nonzeros (P4c: knn-window@10M ran staged at 0.84x segmented)
    "normal-10M-14-18-sigma-900": lambda: normal_window(630_000, 14, 18, 900),
    "blocks-10M-20-4096": lambda: diagonal_blocks(500_000, 18, 22, 4096),
    "blocks-10M-24-6144": lambda: diagonal_blocks(420_000, 22, 26, 6144),
}


def main(argv) -> int:
    gen.write(Path(argv[0]), argv[1:] or TWENTY_NINTH, TWENTY_NINTH)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
