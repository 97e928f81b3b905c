"""Set 58 (session 51), the fit set of the blocked kernel's two cuts (x bytes, entries a row a column block):
rows of uniformly random sorted columns over 6M-40M columns (24-160 MB of float32 x, 48-320 MB of float64), with
8-2,048 entries a row in each block of 2M columns, about 8M nonzeros each; four of them with ragged rows (lengths
uniform in 0.2-1.8x the mean). Written in parallel, a process a matrix.

    python3 make_wide_58.py DIR
"""

from __future__ import annotations

import sys
import zlib
from multiprocessing import Pool
from pathlib import Path

import numpy as np
import scipy.sparse as sp

BLOCK = 1 << 21  # spla.planning.blocked.BLOCK_COLUMNS
NNZ = 8_000_000


def spec():
    out = {}
    for cols in (6_000_000, 10_000_000, 16_000_000, 40_000_000):
        blocks = -(-cols // BLOCK)
        for entries in (8, 32, 128, 512, 2048):
            length = entries * blocks
            out[f"uniform-e{entries}-over-{cols // 1_000_000}M"] = (cols, length, NNZ // length, 0.0)
    for cols, entries in ((10_000_000, 32), (10_000_000, 512), (40_000_000, 128), (40_000_000, 2048)):
        length = entries * -(-cols // BLOCK)
        out[f"ragged-e{entries}-over-{cols // 1_000_000}M"] = (cols, length, NNZ // length, 0.8)
    return out


def make(item):
    name, (cols, length, rows, spread), out = item
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    lengths = (np.full(rows, length) if spread == 0 else
               rng.integers(int(length * (1 - spread)), int(length * (1 + spread)) + 1, rows))
    indptr = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    columns = rng.integers(0, cols, int(indptr[-1]), dtype=np.int64)
    A = sp.csr_matrix((np.ones(columns.size), columns, indptr), shape=(rows, cols))
    A.sum_duplicates()  # sorts and folds the rare repeated column
    A.data = rng.uniform(-1, 1, A.nnz)
    sp.save_npz(out / f"{name}.npz", A, compressed=False)
    return f"{name}: {rows:,} x {cols:,}, {A.nnz:,} nnz"


if __name__ == "__main__":
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    with Pool(8) as pool:
        for line in pool.imap_unordered(make, [(n, s, out) for n, s in spec().items()]):
            print(line, flush=True)
