"""A twelfth held-out set, written in session 23 before any GPU run of it and before the rule was
refitted on the corpus re-run with the bitmap segmented kernel, so that the refitted rule is
reported on matrices nobody has timed. Shapes none of sets 1-11 or the corpus's families has:
a relabelled 27-point stencil, block-tridiagonal rows, a diagonal plus scattered entries, rows of
none to two entries over a very wide x, long local rows, triangular bands, a Barabasi-Albert-like
graph, a tall matrix of 64 columns, a 2,000-row short-wide rectangle, and three under 2M nnz.

    python3 make_held_out_12.py DIR [NAME ...]

Without names it writes the whole set in TWELFTH's order (one random stream). The helpers are
session 19's (``../h200-2026-12-04-session19/make_held_out_large.py``) with a seed of their own.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "h200-2026-12-04-session19"))
import make_held_out_large as gen  # noqa: E402

gen.RNG = np.random.default_rng(2312)


def _coo(rows: np.ndarray, cols: np.ndarray, shape: tuple) -> sp.csr_matrix:
    A = sp.csr_matrix((np.ones(rows.size), (rows, cols)), shape=shape)
    A.sum_duplicates()
    A.data = gen._values(A.nnz)
    return A


def stencil27_relabelled(n: int = 110) -> sp.csr_matrix:
    """The 3-D 27-point stencil on an n^3 grid with its vertices randomly relabelled (rows of 27
    whose x reads no longer share lines)."""
    offsets = [(a, b, c) for a in (-1, 0, 1) for b in (-1, 0, 1) for c in (-1, 0, 1)]
    A = gen._stencil((n, n, n), offsets)
    p = gen.RNG.permutation(A.shape[0])
    return A[p][:, p].tocsr()


def block_tridiagonal(blocks: int = 2_000_000, b: int = 5) -> sp.csr_matrix:
    """Dense b x b blocks on the diagonal and both off-diagonals: rows of 3b aligned entries."""
    n = blocks * b
    row = np.arange(n, dtype=np.int64)
    first = np.maximum(row // b - 1, 0) * b
    last = np.minimum(row // b + 2, blocks) * b
    lengths = last - first
    rows = np.repeat(row, lengths)
    cols = np.repeat(first, lengths) + (np.arange(rows.size) - np.repeat(np.cumsum(lengths) - lengths, lengths))
    return _coo(rows, cols, (n, n))


def diagonal_plus(n: int = 8_000_000, k: int = 3) -> sp.csr_matrix:
    """The diagonal and k scattered columns a row (a local read and k random ones)."""
    row = np.arange(n, dtype=np.int64)
    rows = np.concatenate([row, np.repeat(row, k)])
    cols = np.concatenate([row, gen.RNG.integers(0, n, n * k)])
    return _coo(rows, cols, (n, n))


def none_to_two_wide(rows: int = 24_000_000, cols: int = 50_000_000) -> sp.csr_matrix:
    """Rows of none, one or two scattered entries over 50M columns (x of 200-400 MB; a third of
    the rows empty)."""
    return gen._scattered_rows(gen.RNG.integers(0, 3, rows), cols)


def long_local(n: int = 1_000_000, lo: int = 40, hi: int = 60, reach: int = 500) -> sp.csr_matrix:
    """Rows of lo..hi entries within +-reach of the diagonal (long rows, x in L2)."""
    lengths = gen.RNG.integers(lo, hi + 1, n)
    rows = np.repeat(np.arange(n, dtype=np.int64), lengths)
    cols = np.clip(rows + gen.RNG.integers(-reach, reach + 1, rows.size), 0, n - 1)
    return _coo(rows, cols, (n, n))


def triangular_band(n: int = 2_500_000, hi: int = 32) -> sp.csr_matrix:
    """Row i: the w_i columns up to and including i, w_i uniform in 1..hi (a lower band of random
    width, as a factor's rows)."""
    width = np.minimum(gen.RNG.integers(1, hi + 1, n), np.arange(1, n + 1))
    rows = np.repeat(np.arange(n, dtype=np.int64), width)
    offset = np.arange(rows.size) - np.repeat(np.cumsum(width) - width, width)
    return _coo(rows, rows - offset, (n, n))


def preferential(n: int = 3_000_000, m: int = 8) -> sp.csr_matrix:
    """A Barabasi-Albert-like graph, both directions stored: vertex i links to m earlier vertices
    floor(i * u^2), u uniform, so an old vertex j draws links in proportion to j^(-1/2), as a
    preferential-attachment graph's degrees fall (hub rows of thousands, most rows near 2m)."""
    src = np.repeat(np.arange(1, n, dtype=np.int64), m)
    dst = (src * gen.RNG.random(src.size) ** 2).astype(np.int64)
    return _coo(np.concatenate([src, dst]), np.concatenate([dst, src]), (n, n))


def tall_64(rows: int = 20_000_000) -> sp.csr_matrix:
    """20M rows of two entries over 64 columns (x of 256-512 bytes)."""
    return gen._scattered_rows(np.full(rows, 2), 64)


def short_wide_2k(rows: int = 2000, cols: int = 4_000_000, per_row: int = 6000) -> sp.csr_matrix:
    """2,000 rows of about 6,000 scattered entries over 4M columns."""
    return gen._scattered_rows(gen.RNG.integers(per_row // 2, 3 * per_row // 2, rows), cols)


def mesh_small(n: int = 420) -> sp.csr_matrix:
    """A 2-D 9-point stencil on 420^2 with 15% of its off-diagonal entries dropped (1.4M nnz)."""
    A = gen._stencil((n, n), [(a, b) for a in (-1, 0, 1) for b in (-1, 0, 1)]).tocoo()
    keep = (A.row == A.col) | (gen.RNG.random(A.nnz) < 0.85)
    return _coo(A.row[keep].astype(np.int64), A.col[keep].astype(np.int64), A.shape)


TWELFTH = {
    "stencil27-relabelled": stencil27_relabelled,
    "block-tridiagonal-5": block_tridiagonal,
    "diagonal-plus-3": diagonal_plus,
    "rows-0-2-over-50M": none_to_two_wide,
    "rows-40-60-local": long_local,
    "triangular-band-32": triangular_band,
    "preferential-8": preferential,
    "tall-64-cols": tall_64,
    "short-wide-2k": short_wide_2k,
    "mesh-9-small": mesh_small,
    "preferential-small": lambda: preferential(120_000, 6),
    "rows-3-12-mid": lambda: gen._scattered_rows(gen.RNG.integers(3, 13, 180_000), 250_000),
}


def main(argv) -> int:
    gen.write(Path(argv[0]), argv[1:] or TWELFTH, TWELFTH)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
