"""Set 56, written in session 50 after sets 54 and 55 were read and before any run of it: the test of L2, the row
cut of L1 moved from 400 to 300 (halfway between set 55's 250 rows, where staged led, and 350, where vector led).
Ten short-wide matrices: rows of 240-390 over 48-240 MB of x (float32), three near the x cut of 40 MB, a row length
that varies (cv about 0.35), and rows whose columns cluster in a window of 2M columns.

    python3 make_short_wide_56.py DIR
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import scipy.sparse as sp

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "h200-2026-12-04-session19"))
import make_held_out_large as gen  # noqa: E402


def wide(n_rows: int, length: int, n_cols: int):
    return lambda: gen._scattered_rows(np.full(n_rows, length), n_cols)


def ragged(n_rows: int, low: int, high: int, n_cols: int):
    return lambda: gen._scattered_rows(gen.RNG.integers(low, high + 1, n_rows), n_cols)


def clustered(n_rows: int, length: int, n_cols: int, window: int):
    """Each row's columns drawn from a window of ``window`` columns at a random place."""
    def build():
        starts = gen.RNG.integers(0, n_cols - window, n_rows)
        cols = np.sort(starts[:, None] + gen.RNG.integers(0, window, (n_rows, length)), axis=1)
        keep = np.ones(cols.shape, dtype=bool)
        keep[:, 1:] = cols[:, 1:] != cols[:, :-1]
        indptr = np.concatenate(([0], np.cumsum(keep.sum(axis=1))))
        return sp.csr_matrix((gen._values(int(indptr[-1])), cols[keep], indptr), shape=(n_rows, n_cols))
    return build


SET_56 = {
    "wide-240x30k-over-30M": wide(240, 30_000, 30_000_000),
    "wide-270x50k-over-40M": wide(270, 50_000, 40_000_000),
    "wide-280x40k-over-30M": wide(280, 40_000, 30_000_000),
    "wide-320x30k-over-20M": wide(320, 30_000, 20_000_000),
    "wide-360x25k-over-60M": wide(360, 25_000, 60_000_000),
    "wide-390x20k-over-12M": wide(390, 20_000, 12_000_000),
    "wide-450x20k-over-11M": wide(450, 20_000, 11_000_000),
    "wide-900x9k-over-10M": wide(900, 9_000, 10_000_000),
    "wide-ragged-500x5-35k-over-25M": ragged(500, 5_000, 35_000, 25_000_000),
    "wide-clustered-600x15k-over-30M": clustered(600, 15_000, 30_000_000, 2_000_000),
}


if __name__ == "__main__":
    gen.RNG = np.random.default_rng(5656)
    gen.write(Path(sys.argv[1]), SET_56, SET_56)
