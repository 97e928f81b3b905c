"""Sets 49 (fit) and 50 (test), written in session 49 before any run of either: matrices of the medium class's zone
where M1 found auto's vector at 0.74-0.87 of staged (float32 rows of 31-33 over about 1 MB of x, near share about
0.5). Rows of k distinct columns in a window of w around the diagonal (k-nearest-neighbour graphs of points on a
line), 5-10M nonzeros, so x runs from 0.4 to 2 MB in float32 (twice that in float64) and the near share from about
0.3 to 0.8. Set 49's figures place a rule (this folder's README, M2); set 50's test it, read only after the rule is
written down.

    python3 make_zone_49.py DIR fit|test|test2|test3 [NAME ...]
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "h200-2026-12-04-session19"))
import make_held_out_large as gen  # noqa: E402


def knn(k: int, window: int, nnz: float):
    """Rows of k distinct columns within +-window/2 of the diagonal, nnz / k rows."""
    def build():
        n = int(nnz) // k
        offsets = np.argpartition(gen.RNG.random((n, window)), k, axis=1)[:, :k] - window // 2
        cols = np.sort(np.clip(np.arange(n)[:, None] + offsets, 0, n - 1), axis=1)
        keep = np.ones(cols.shape, dtype=bool)
        keep[:, 1:] = cols[:, 1:] != cols[:, :-1]  # columns clipped at the edges merge
        indptr = np.concatenate(([0], np.cumsum(keep.sum(axis=1))))
        return sp.csr_matrix((gen._values(int(indptr[-1])), cols[keep], indptr), shape=(n, n))
    return build


FIT = {
    "knn-16-w200-8M": knn(16, 200, 8e6),
    "knn-24-w400-8M": knn(24, 400, 8e6),
    "knn-32-w200-8M": knn(32, 200, 8e6),
    "knn-32-w1000-8M": knn(32, 1000, 8e6),
    "knn-32-w400-5M": knn(32, 400, 5e6),
    "knn-48-w400-8M": knn(48, 400, 8e6),
    "knn-64-w1000-8M": knn(64, 1000, 8e6),
    "knn-24-w100-6M": knn(24, 100, 6e6),
    "knn-40-w2000-9M": knn(40, 2000, 9e6),
    "knn-20-w60-7M": knn(20, 60, 7e6),
}

TEST = {
    "knn-20-w300-7M": knn(20, 300, 7e6),
    "knn-28-w600-8M": knn(28, 600, 8e6),
    "knn-36-w250-9M": knn(36, 250, 9e6),
    "knn-56-w800-8M": knn(56, 800, 8e6),
    "knn-30-w150-6M": knn(30, 150, 6e6),
    "knn-44-w1500-7M": knn(44, 1500, 7e6),
    "knn-30-w500-5M": knn(30, 500, 5e6),
    "knn-64-w300-10M": knn(64, 300, 10e6),
    "knn-18-w120-6M": knn(18, 120, 6e6),
    "knn-26-w52-6M": knn(26, 52, 6e6),
}


def short_runs(runs: int, width: int, window: int, nnz: float):
    """Rows of ``runs`` runs of ``width`` consecutive columns at random places within +-window/2 of the diagonal
    (runs that meet merge), nnz / (runs * width) rows: a near share between the knn rows' and the blocks'."""
    def build():
        n = int(nnz) // (runs * width)
        starts = np.clip(np.arange(n)[:, None] + gen.RNG.integers(-window // 2, window // 2, (n, runs)), 0, n - width)
        cols = np.sort((starts[:, :, None] + np.arange(width)).reshape(n, runs * width), axis=1)
        keep = np.ones(cols.shape, dtype=bool)
        keep[:, 1:] = cols[:, 1:] != cols[:, :-1]
        indptr = np.concatenate(([0], np.cumsum(keep.sum(axis=1))))
        return sp.csr_matrix((gen._values(int(indptr[-1])), cols[keep], indptr), shape=(n, n))
    return build


# Set 51, written after set 49's fit and before any run of it: more matrices that M2's rule moves (float32,
# near share 0.45-0.8, x 0.2-1 MiB), two families, and some it leaves to vector.
SECOND_TEST = {
    "knn-28-w250-6M": knn(28, 250, 6e6),
    "knn-40-w300-8M": knn(40, 300, 8e6),
    "knn-60-w500-9M": knn(60, 500, 9e6),
    "knn-96-w600-10M": knn(96, 600, 10e6),
    "knn-32-w300-5M": knn(32, 300, 5e6),
    "runs-8x3-w600-8M": short_runs(8, 3, 600, 8e6),
    "runs-6x4-w1000-7M": short_runs(6, 4, 1000, 7e6),
    "runs-12x2-w300-6M": short_runs(12, 2, 300, 6e6),
    "runs-10x4-w2000-9M": short_runs(10, 4, 2000, 9e6),
    "knn-24-w80-7M": knn(24, 80, 7e6),
    "runs-4x8-w400-8M": short_runs(4, 8, 400, 8e6),
}


def stencil25(n: int):
    """The 2-D 25-point stencil (5 x 5 neighbours) on an n x n grid: rows of 25 in five runs of 5."""
    def build():
        line = sp.diags([np.ones(n - abs(d)) for d in range(-2, 3)], list(range(-2, 3)), format="csr")
        A = sp.kron(line, line, format="csr")
        A.data = gen._values(A.nnz)
        return A
    return build


# Set 52, written in session 49 after M2's outcome and before any run of it: the test of V1, vector's width on
# float32 rows that lanes_for gives 2 lanes (rows of 8-32 that are not scattered).
THIRD_TEST = {
    "knn-22-w180-6M": knn(22, 180, 6e6),
    "knn-26-w400-7M": knn(26, 400, 7e6),
    "knn-30-w250-8M": knn(30, 250, 8e6),
    "knn-32-w120-6M": knn(32, 120, 6e6),
    "knn-29-w700-7M": knn(29, 700, 7e6),
    "knn-32-w600-6M": knn(32, 600, 6e6),
    "knn-18-w300-6M": knn(18, 300, 6e6),
    "runs-8x4-w800-7M": short_runs(8, 4, 800, 7e6),
    "runs-10x3-w500-7M": short_runs(10, 3, 500, 7e6),
    "runs-6x5-w300-6M": short_runs(6, 5, 300, 6e6),
    "stencil25-600": stencil25(600),
}


def main(argv) -> int:
    table = {"fit": FIT, "test": TEST, "test2": SECOND_TEST, "test3": THIRD_TEST}[argv[1]]
    gen.RNG = np.random.default_rng({"fit": 4949, "test": 4950, "test2": 4951, "test3": 4952}[argv[1]])
    gen.write(Path(argv[0]), argv[2:] or table, table)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
