"""Set 61 (session 51), fresh for blocked's entries cut of 0.75 (written after set 60's fit, before any run of these):
R-MAT graphs (square, skewed), rows of Pareto lengths, rows each in a 4M-column window of their own, bimodal rows
of 4 and 100, and rows of Zipf-skewed columns (hot columns: the wave gate's test); 8-17M nonzeros.

    python3 make_fresh_61.py DIR
"""

from __future__ import annotations

import sys
import zlib
from multiprocessing import Pool
from pathlib import Path

import numpy as np
import scipy.sparse as sp


def rmat(rng, scale, edge_factor, probs=(0.57, 0.19, 0.19, 0.05)):
    n, m = 1 << scale, edge_factor << scale
    src, dst = np.zeros(m, dtype=np.int64), np.zeros(m, dtype=np.int64)
    cumulative = np.cumsum(probs)
    for bit in range(scale):
        quadrant = np.searchsorted(cumulative, rng.random(m), side="right")
        src |= (quadrant >> 1).astype(np.int64) << bit
        dst |= (quadrant & 1).astype(np.int64) << bit
    relabel = rng.permutation(n)
    return (n, n), relabel[src], relabel[dst]


def rows_of(lengths, columns, n_cols):
    return (lengths.size, n_cols), np.repeat(np.arange(lengths.size), lengths), columns


def pareto(rng, rows, n_cols, mean):
    lengths = np.maximum(1, (rng.pareto(2.0, rows) * mean).astype(np.int64))
    return rows_of(lengths, rng.integers(0, n_cols, int(lengths.sum())), n_cols)


def windows(rng, rows, n_cols, length, window):
    lengths = np.full(rows, length)
    starts = np.repeat(rng.integers(0, n_cols - window, rows), length)
    return rows_of(lengths, starts + rng.integers(0, window, rows * length), n_cols)


def bimodal(rng, rows, n_cols):
    lengths = np.where(rng.random(rows) < 0.1, 100, 4)
    return rows_of(lengths, rng.integers(0, n_cols, int(lengths.sum())), n_cols)


def zipf_columns(rng, rows, n_cols, length):
    columns = np.minimum(rng.zipf(1.3, rows * length) - 1, n_cols - 1)
    return rows_of(np.full(rows, length), columns, n_cols)  # hot columns first: 0, 1, 2, ...


SET_61 = {
    "rmat-22-ef4": (rmat, 22, 4),
    "rmat-23-ef2": (rmat, 23, 2),
    "tall-pareto-8-over-20M": (pareto, 1_000_000, 20_000_000, 8),
    "windows-4M-300kx30-over-30M": (windows, 300_000, 30_000_000, 30, 4_000_000),
    "bimodal-4-100-600k-over-24M": (bimodal, 600_000, 24_000_000),
    "zipf-columns-300kx30-over-40M": (zipf_columns, 300_000, 40_000_000, 30),
}


def make(item):
    name, (family, *args), out = item
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    shape, rows, columns = family(rng, *args)
    A = sp.csr_matrix((np.ones(rows.size), (rows, columns)), shape=shape)
    A.sum_duplicates()
    A.data = rng.uniform(-1, 1, A.nnz)
    sp.save_npz(out / f"{name}.npz", A, compressed=False)
    blocks = -(-shape[1] // (1 << 21))
    return f"{name}: {shape[0]:,} x {shape[1]:,}, {A.nnz:,} nnz, {A.nnz / (shape[0] * blocks):.2f} a row a block"


if __name__ == "__main__":
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    with Pool(6) as pool:
        for line in pool.imap_unordered(make, [(n, s, out) for n, s in SET_61.items()]):
            print(line, flush=True)
