"""Session 20's held-out set (issue 17's "large" target), written as SciPy .npz files into a
folder, for ``bench_corpus.py --scale none --sources``.

Written before the four unaligned corpus families (knn-window, tiny-narrow, random-width,
random-width-60k) were measured, run in the same call, and not read until the refit on those
families had been weighed (and kept out of the rule): it reports the rule as it stands on shapes
neither the corpus nor session 19's nine sets have (other row lengths, x sizes, graph
probabilities, a 3-D stencil with holes). The generators are session 19's
(``../h200-2026-12-04-session19/make_held_out_large.py``) with a seed of their own.

    python3 make_held_out_10.py DIR [NAME ...]

Without names it writes the whole set in TENTH's order, as call 1 did (one random stream: a
subset draws other matrices).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "h200-2026-12-04-session19"))
import make_held_out_large as gen  # noqa: E402

gen.RNG = np.random.default_rng(2020)


def stencil7_3d_holes(n: int = 220, keep: float = 0.85):
    """A 3-D 7-point stencil with 15% of its off-diagonal entries dropped."""
    offs = [(0, 0, 0), (-1, 0, 0), (1, 0, 0), (0, -1, 0), (0, 1, 0), (0, 0, -1), (0, 0, 1)]
    A = gen._stencil((n, n, n), offs).tocoo()
    kept = (gen.RNG.random(A.nnz) < keep) | (A.row == A.col)
    return sp.csr_matrix((A.data[kept], (A.row[kept], A.col[kept])), shape=A.shape)


def rows(lo: int, hi: int, n_rows: int, n_cols: int):
    """Rows of lo..hi scattered entries (uniform lengths) over n_cols columns."""
    return lambda: gen._scattered_rows(gen.RNG.integers(lo, hi + 1, n_rows), n_cols)


def powerlaw(n: int, avg: int, max_len: int, seed: int):
    def make():
        from spla.io import generators

        return generators.from_spec(f"gen:powerlaw:{n}:{avg}:{max_len}:seed={seed}").to_scipy().tocsr()
    return make


TENTH = {
    "rows-7-9-over-3M": rows(7, 9, 2_500_000, 3_000_000),
    "knn-20-wide": lambda: gen.knn_window(1_500_000, 20, 200_000),
    "rows-1-6-over-500k": rows(1, 6, 8_000_000, 500_000),
    "kron-300x10000": lambda: gen.kron_random(300, 4, 10_000, 3),
    "banded-random-10-90": lambda: gen.banded_random(600_000, 10, 90),
    "stencil7-3d-holes": stencil7_3d_holes,
    "rows-12-over-30k": rows(12, 12, 1_500_000, 30_000),
    "powerlaw-3M-avg20": powerlaw(3_000_000, 20, 200_000, 2020),
    "rmat-60-15-15-10": lambda: gen.rmat(21, 14, (0.60, 0.15, 0.15, 0.10)),
    "rows-2-9-mid": rows(2, 9, 400_000, 400_000),
}


def main(argv) -> int:
    gen.write(Path(argv[0]), argv[1:] or TENTH, TENTH)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
