"""A twentieth held-out set, written in session 26 after call 1 and before any run of it, to test
what call 1 suggested (predictions in this folder's README): staged's 2-byte column offsets pay in
float32 only, and on large regular matrices of local columns staged (narrow) beats auto's present
float32 picks (segmented, vector). Ten matrices of 26M-42M nonzeros whose every tile of 4,096
nonzeros spans fewer than 65,536 columns: local rows of several lengths and reaches, a kNN-like
window, a 27-point stencil relabelled within windows (no diagonals left for dia), dense blocks on
three diagonals, and a 9-point mesh with entries dropped.

    python3 make_held_out_20.py DIR [NAME ...]
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "h200-2026-12-04-session19"))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "h200-2026-12-04-session23"))
import make_held_out_12 as twelve  # noqa: E402
import make_held_out_large as gen  # noqa: E402

gen.RNG = np.random.default_rng(2620)
twelve.gen.RNG = gen.RNG


def stencil27_window_shuffled(n: int = 115, window: int = 8192):
    """The 27-point stencil on an n^3 grid, its labels shuffled within runs of ``window``: columns
    stay local (a tile spans about two planes plus the window), the diagonals are gone."""
    offsets = [(a, b, c) for a in (-1, 0, 1) for b in (-1, 0, 1) for c in (-1, 0, 1)]
    A = gen._stencil((n, n, n), offsets)
    labels = np.arange(A.shape[0])
    for start in range(0, labels.size, window):
        gen.RNG.shuffle(labels[start:start + window])
    return A[labels][:, labels].tocsr()


def mesh9_dropped(n: int = 2000, keep: float = 0.7):
    """A 2-D 9-point stencil on n^2 with 30% of its off-diagonal entries dropped."""
    A = gen._stencil((n, n), [(a, b) for a in (-1, 0, 1) for b in (-1, 0, 1)]).tocoo()
    kept = (A.row == A.col) | (gen.RNG.random(A.nnz) < keep)
    return twelve._coo(A.row[kept].astype(np.int64), A.col[kept].astype(np.int64), A.shape)


TWENTIETH = {
    "rows-20-36-local-800": lambda: twelve.long_local(1_400_000, 20, 36, 800),
    "rows-50-70-local-3000": lambda: twelve.long_local(650_000, 50, 70, 3000),
    "rows-90-130-local-1500": lambda: twelve.long_local(350_000, 90, 130, 1500),
    "knn-32-window-8k": lambda: twelve.long_local(1_200_000, 32, 32, 8000),
    "rows-12-20-local-400": lambda: twelve.long_local(2_500_000, 12, 20, 400),
    "rows-6-10-local-2000": lambda: twelve.long_local(5_000_000, 6, 10, 2000),
    "rows-30-60-local-20000": lambda: twelve.long_local(900_000, 30, 60, 20000),
    "stencil27-window-shuffled": stencil27_window_shuffled,
    "block-tridiagonal-8": lambda: twelve.block_tridiagonal(220_000, 8),
    "mesh9-dropped-2000": mesh9_dropped,
}


def main(argv) -> int:
    gen.write(Path(argv[0]), argv[1:] or TWENTIETH, TWENTIETH)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
