"""A fourteenth held-out set, written at the end of session 23 for the next session (no device
time was left to run it), with its predictions in this folder's README: hypothesis H5, read off
the corpus re-run's fit half only. Irregular rows of about 4 on average (the rule's irregular-mid
and irregular-large classes, which run staged) with no empty row run faster with segmented, whose
bitmap entry needs no empty row: powerlaw-steep at 2M-40M nnz ran segmented 1.08-1.33x staged in
float32. powerlaw-steep's columns are local (web-crawl windows); the set varies that, the mean and
the size, and keeps two controls: the same rows with empty rows (segmented walks them) and rows
of 8 on average (past segmented_mean, where staged led on the corpus).

    python3 make_held_out_14.py DIR [NAME ...]
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "h200-2026-12-04-session19"))
import make_held_out_large as gen  # noqa: E402

from spla.io import generators  # noqa: E402

gen.RNG = np.random.default_rng(2314)


def _lengths(n: int, avg: float, max_row: int, empty: int = 0) -> np.ndarray:
    return generators._powerlaw_lengths(n, avg, max_row, gen.RNG, empty_rows=empty)


def local(n: int, avg: float, max_row: int, empty: int = 0):
    """Power-law rows with web-crawl column locality (the corpus's powerlaw-steep columns)."""
    def build() -> sp.csr_matrix:
        seed = int(gen.RNG.integers(1 << 31))
        return generators._local_graph(_lengths(n, avg, max_row, empty), n, seed, np.float64).to_scipy()
    return build


def scattered(n: int, avg: float, max_row: int):
    """Power-law rows of uniformly random columns."""
    return lambda: gen._scattered_rows(_lengths(n, avg, max_row), n)


def hub_columns(n: int, avg: float, max_row: int, exponent: float = 1.4):
    """Power-law rows whose columns follow a Zipf popularity over randomly placed columns (repeats
    fold: drawn at 5 a row on average, pl-hubcols keeps about 3)."""
    def build() -> sp.csr_matrix:
        lengths = _lengths(n, avg, max_row)
        rank = np.minimum(gen.RNG.zipf(exponent, int(lengths.sum())), n) - 1
        cols = gen.RNG.permutation(n)[rank]
        rows = np.repeat(np.arange(n, dtype=np.int64), lengths)
        A = sp.csr_matrix((np.ones(cols.size), (rows, cols)), shape=(n, n))
        A.sum_duplicates()
        A.data = gen._values(A.nnz)
        return A
    return build


FOURTEENTH = {
    "pl-3-local-10M": local(3_300_000, 3.0, 300),
    "pl-4-local-3M": local(750_000, 4.0, 200),
    "pl-4-scattered-20M": scattered(5_000_000, 4.0, 500),
    "pl-hubcols": hub_columns(6_000_000, 5.0, 1000),
    "pl-4-local-empty-10M": local(2_500_000, 4.0, 300, empty=500_000),
    "pl-8-scattered-20M": scattered(2_500_000, 8.0, 800),
}


def main(argv) -> int:
    gen.write(Path(argv[0]), argv[1:] or FOURTEENTH, FOURTEENTH)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
