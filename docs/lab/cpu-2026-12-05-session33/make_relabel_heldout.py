"""Held-out matrices for the CPU column relabelling rule (README in this folder), written after the
rule was fitted on corpus R-MAT, power-law, bimodal, Zipf-column and random-width matrices and
before any of these was timed.

    python3 make_relabel_heldout.py DIR
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))
from spla.io import generators  # noqa: E402

RNG = np.random.default_rng(3305)


def _csr(rows, cols, shape):
    A = sp.csr_matrix((np.ones(rows.size), (rows, cols)), shape=shape)
    A.sum_duplicates()
    A.data = RNG.uniform(0.5, 1.5, A.nnz)
    return A


def chung_lu(n: int, edges: int, exponent: float) -> sp.csr_matrix:
    """Both ends of every edge drawn by power-law weights (degree exponent ``exponent``), vertex
    labels shuffled: a social or web graph without locality in its labels."""
    weights = np.arange(1, n + 1, dtype=np.float64) ** (-1.0 / (exponent - 1.0))
    cdf = np.cumsum(weights) / weights.sum()
    label = RNG.permutation(n)
    ends = label[np.searchsorted(cdf, RNG.random((2, edges)))]
    return _csr(np.concatenate(ends), np.concatenate(ends[::-1]), (n, n))


def preferential(n: int, m: int, shuffled: bool) -> sp.csr_matrix:
    """Vertex i links to m earlier ones, floor(i u^2): old vertices draw links (hubs at low labels);
    ``shuffled`` relabels the vertices at random."""
    src = np.repeat(np.arange(1, n, dtype=np.int64), m)
    dst = (src * RNG.random(src.size) ** 2).astype(np.int64)
    if shuffled:
        label = RNG.permutation(n)
        src, dst = label[src], label[dst]
    return _csr(np.concatenate([src, dst]), np.concatenate([dst, src]), (n, n))


def users_items(users: int, items: int, per_user: int) -> sp.csr_matrix:
    """A ratings-like rectangle: each user rates per_user items drawn by Zipf popularity (s = 1.1),
    item labels shuffled."""
    ranks = np.minimum(RNG.zipf(1.1, users * per_user), items) - 1
    cols = RNG.permutation(items)[ranks]
    return _csr(np.repeat(np.arange(users, dtype=np.int64), per_user), cols, (users, items))


def stencil27_shuffled(side: int) -> sp.csr_matrix:
    """The 27-point stencil on side^3 points with its labels shuffled (no hot columns)."""
    offsets = [(a, b, c) for a in (-1, 0, 1) for b in (-1, 0, 1) for c in (-1, 0, 1)]
    n = side ** 3
    idx = np.arange(n, dtype=np.int64)
    z, y, x = np.unravel_index(idx, (side, side, side))
    rows, cols = [], []
    for a, b, c in offsets:
        ok = (z + a >= 0) & (z + a < side) & (y + b >= 0) & (y + b < side) & (x + c >= 0) & (x + c < side)
        rows.append(idx[ok])
        cols.append(idx[ok] + (a * side + b) * side + c)
    label = RNG.permutation(n)
    return _csr(label[np.concatenate(rows)], label[np.concatenate(cols)], (n, n))


MATRICES = {
    "rmat-45-15-15-25-s21": lambda: generators.rmat(21, 8, seed=33, probabilities=(0.45, 0.15, 0.15, 0.25)).to_scipy(),
    "chung-lu-2.3-2M": lambda: chung_lu(2_000_000, 9_000_000, 2.3),
    "chung-lu-2.8-2M": lambda: chung_lu(2_000_000, 9_000_000, 2.8),
    "preferential-2M-8": lambda: preferential(2_000_000, 8, shuffled=False),
    "preferential-2M-8-shuffled": lambda: preferential(2_000_000, 8, shuffled=True),
    "users-items-1M-2M": lambda: users_items(1_000_000, 2_000_000, 16),
    "stencil27-shuffled-90": lambda: stencil27_shuffled(90),
}


def main(argv) -> int:
    out = Path(argv[0])
    out.mkdir(parents=True, exist_ok=True)
    for name in argv[1:] or MATRICES:
        A = MATRICES[name]().tocsr()
        A.sort_indices()
        sp.save_npz(out / f"{name}.npz", A, compressed=False)
        print(f"{name}: {A.shape[0]:,} x {A.shape[1]:,}, {A.nnz:,} nnz", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
