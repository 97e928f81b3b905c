"""Probe set 48, written in session 49 before any run of it (information, not a rule's test): rows of exactly k
scattered or local columns (k-nearest-neighbour graphs), 8M nonzeros: on local rows (a window of 400 columns)
auto's medium class runs the vector kernel at 2-4 lanes, on scattered ones segmented. Rows of 16, 32 and 64
entries start on one L1 bank in float32 (16 and 32 in float64), rows of 17, 31, 33 and 65 do not: do vector and
warp lose to those piles as band and rle did? (this folder's README, M1)

    python3 make_probe_48.py DIR [NAME ...]
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "h200-2026-12-04-session19"))
import make_held_out_large as gen  # noqa: E402

gen.RNG = np.random.default_rng(4948)
NNZ = 8_000_000


def knn(k: int, reach: int | None):
    """Rows of k distinct columns, drawn within +-reach of the diagonal (None: anywhere)."""
    def build():
        n = NNZ // k
        if reach is not None:  # k distinct offsets in the window: the k smallest of random keys
            offsets = np.argpartition(gen.RNG.random((n, 2 * reach)), k, axis=1)[:, :k] - reach
            cols = np.clip(np.arange(n)[:, None] + offsets, 0, n - 1)
        else:
            cols = gen.RNG.integers(0, n, (n, k))
        cols = np.sort(cols, axis=1)
        keep = np.ones(cols.shape, dtype=bool)
        keep[:, 1:] = cols[:, 1:] != cols[:, :-1]  # a clipped or repeated column is dropped: rarely, at the edges
        lengths = keep.sum(axis=1)
        indptr = np.concatenate(([0], np.cumsum(lengths)))
        return sp.csr_matrix((gen._values(int(indptr[-1])), cols[keep], indptr), shape=(n, n))
    return build


FORTY_EIGHTH = {f"knn-{k}-{where}": knn(k, reach) for k in (16, 17, 31, 32, 33, 64, 65)
                for where, reach in (("local", 200), ("scattered", None))}


def main(argv) -> int:
    gen.write(Path(argv[0]), argv[1:] or FORTY_EIGHTH, FORTY_EIGHTH)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
