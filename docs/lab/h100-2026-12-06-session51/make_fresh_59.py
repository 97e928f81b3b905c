"""Set 59 (session 51), fresh for the blocked kernel's rule (written after set 58's fit, before any run of these):
families set 58 does not have (Pareto row lengths, rows each in a window of its own, hub columns, columns drawn
around a hot middle, bimodal rows, rows of one length), about 8-12M nonzeros each; two probes below the entries cut
(4 and 2 entries a row a block: not taken by the rule, timed to place the next cut); one matrix whose float32 x
(24 MB) is under the x cut and float64 x (48 MB) over it.

    python3 make_fresh_59.py DIR
"""

from __future__ import annotations

import sys
import zlib
from functools import partial
from multiprocessing import Pool
from pathlib import Path

import numpy as np
import scipy.sparse as sp


def pareto(rng, rows, cols):  # Pareto row lengths (alpha 1.5, at least 40, at most 50k), columns uniform
    lengths = np.minimum((40 * (1 + rng.pareto(1.5, rows))).astype(np.int64), 50_000)
    return lengths, rng.integers(0, cols, int(lengths.sum()))


def windows(rng, rows, cols, length=3000, window=1_000_000):  # each row in a random window of its own
    lengths = np.full(rows, length)
    starts = np.repeat(rng.integers(0, cols - window, rows), length)
    return lengths, starts + rng.integers(0, window, rows * length)


def hubs(rng, rows, cols, length=200, n_hubs=1000):  # half of each row from 1,000 hot columns
    lengths = np.full(rows, length)
    hot = rng.integers(0, cols, n_hubs)
    picks = np.where(rng.random(rows * length) < 0.5, hot[rng.integers(0, n_hubs, rows * length)],
                     rng.integers(0, cols, rows * length))
    return lengths, picks


def middle(rng, rows, cols, length=400):  # columns normal around the middle (sd a sixth of the columns)
    lengths = np.full(rows, length)
    return lengths, np.clip(rng.normal(cols / 2, cols / 6, rows * length).astype(np.int64), 0, cols - 1)


def bimodal(rng, rows, cols):  # rows of 16 or 2,000 entries (one in ten long)
    lengths = np.where(rng.random(rows) < 0.1, 2000, 16)
    return lengths, rng.integers(0, cols, int(lengths.sum()))


def equal(rng, rows, cols, length=15_000):  # rows of one length (vector's lockstep case)
    return np.full(rows, length), rng.integers(0, cols, rows * length)


def uniform(length, rng, rows, cols):  # rows of one length, columns uniform
    return np.full(rows, length), rng.integers(0, cols, rows * length)


SET_59 = {
    "pareto-rows-over-12M": (pareto, 60_000, 12_000_000),
    "windows-1M-3000x3k-over-30M": (windows, 3000, 30_000_000),
    "hub-columns-50k-over-16M": (hubs, 50_000, 16_000_000),
    "hot-middle-25k-over-40M": (middle, 25_000, 40_000_000),
    "bimodal-16-2000-over-20M": (bimodal, 40_000, 20_000_000),
    "equal-600x15k-over-24M": (equal, 600, 24_000_000),
    "pareto-rows-over-6M": (pareto, 60_000, 6_000_000),
    "probe-e4-over-16M": (partial(uniform, 32), 250_000, 16_000_000),
    "probe-e2-over-40M": (partial(uniform, 40), 200_000, 40_000_000),
}


def make(item):
    name, (family, rows, cols), out = item
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    lengths, columns = family(rng, rows, cols)
    indptr = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    A = sp.csr_matrix((np.ones(columns.size), columns.astype(np.int64), indptr), shape=(rows, cols))
    A.sum_duplicates()  # sorts and folds repeated columns
    A.data = rng.uniform(-1, 1, A.nnz)
    sp.save_npz(out / f"{name}.npz", A, compressed=False)
    return f"{name}: {rows:,} x {cols:,}, {A.nnz:,} nnz, longest row {np.diff(A.indptr).max():,}"


if __name__ == "__main__":
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    with Pool(9) as pool:
        for line in pool.imap_unordered(make, [(n, s, out) for n, s in SET_59.items()]):
            print(line, flush=True)
