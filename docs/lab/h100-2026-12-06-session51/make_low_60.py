"""Set 60 (session 51), the fit set for blocked's entries cut below set 58's 8 a row a block (set 59's probes ran
blocked 1.46-1.89x staged at 2 and 4): rows of uniformly random columns over 10M and 40M columns (40 and 160 MB of
float32 x) at 0.5, 1, 1.5 and 3 entries a row a block of 2M columns (row lengths drawn around the mean where it
is not whole), and Pareto-length rows (a graph's degrees) at 1 and 3 entries a block over 16M columns; 8M nonzeros.

    python3 make_low_60.py DIR
"""

from __future__ import annotations

import sys
import zlib
from functools import partial
from multiprocessing import Pool
from pathlib import Path

import numpy as np
import scipy.sparse as sp

BLOCK = 1 << 21  # spla.planning.blocked.BLOCK_COLUMNS
NNZ = 8_000_000


def around(mean, rng, rows):  # lengths floor(mean) or ceil(mean), averaging mean
    low = int(mean)
    return low + (rng.random(rows) < mean - low)


def pareto(mean, rng, rows):  # Pareto lengths (alpha 2: a graph's degrees), scaled to the mean, at least 1
    return np.maximum(1, (rng.pareto(2.0, rows) * mean).astype(np.int64))


def spec():
    out = {}
    for cols in (10_000_000, 40_000_000):
        blocks = -(-cols // BLOCK)
        for e in (0.5, 1, 1.5, 3):
            out[f"uniform-e{e:g}-over-{cols // 1_000_000}M"] = (partial(around, e * blocks), cols, int(NNZ / (e * blocks)))
    blocks = -(-16_000_000 // BLOCK)
    for e in (1, 3):
        out[f"pareto-e{e}-over-16M"] = (partial(pareto, e * blocks), 16_000_000, int(NNZ / (e * blocks)))
    return out


def make(item):
    name, (lengths_of, cols, rows), out = item
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    lengths = lengths_of(rng, rows)
    indptr = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    A = sp.csr_matrix((np.ones(int(indptr[-1])), rng.integers(0, cols, int(indptr[-1])), indptr), shape=(rows, cols))
    A.sum_duplicates()
    A.data = rng.uniform(-1, 1, A.nnz)
    sp.save_npz(out / f"{name}.npz", A, compressed=False)
    blocks = -(-cols // BLOCK)
    return f"{name}: {rows:,} x {cols:,}, {A.nnz:,} nnz, {A.nnz / (rows * blocks):.2f} a row a block"


if __name__ == "__main__":
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    with Pool(10) as pool:
        for line in pool.imap_unordered(make, [(n, s, out) for n, s in spec().items()]):
            print(line, flush=True)
