"""A candidate single gate for blocked (session 52, host only): the DRAM traffic of x a nonzero in CSR order
against in column-block order, from the sectors of x that sampled waves of 4M nonzeros read.

CSR order: a wave (WAVE_ENTRIES consecutive nonzeros, what the resident tiles gather from at once) reads each
distinct 32-byte sector of x once; a sector read again in a later wave is read again (L2 holds about one wave's
x). Block order: each sector of x once over the whole product (a block's slice of x, at most 16 MB, stays in L2
while its rows run), plus each (row, block) pair's partial written and read back.

For each .npz given (or gen:powerlaw:N:AVG:MAX), both dtypes: sectors a nonzero in CSR order (c), in block order
(b, exact: the distinct sectors A reads over nnz), pairs a nonzero (p).
"""

from __future__ import annotations

import sys

import numpy as np
import scipy.sparse as sp

from spla.csr import CSRMatrix
from spla.planning import blocked
from spla.planning.stats import evenly_spaced

SECTOR = 32
WAVE_ENTRIES = 1 << 22  # (session 51's stats.WAVE_ENTRIES and WAVE_SAMPLES)
WAVE_SAMPLES = 8
SUBWINDOWS = (1 << 16, 1 << 18, 1 << 20, 1 << 22)


def model(A) -> dict:
    item = A.dtype.itemsize
    per_sector = SECTOR // item
    width = blocked.block_width(A.n_cols)
    window = min(WAVE_ENTRIES, A.nnz)
    starts = evenly_spaced(A.nnz - window + 1, WAVE_SAMPLES)
    cs, ps = {w: [] for w in SUBWINDOWS}, []
    for s in starts:
        cols = A.indices[s:s + window].astype(np.int64)
        rows = np.searchsorted(A.indptr, np.arange(s, s + window), side="right") - 1
        for w in SUBWINDOWS:  # sectors a nonzero over windows of w nonzeros (w of at most the wave)
            w = min(w, window)
            parts = range(0, window - w + 1, w)
            cs[w].append(np.mean([np.unique(cols[i:i + w] // per_sector).size / w for i in parts]))
        ps.append(np.unique(rows * (A.n_cols // width + 2) + cols // width).size / window)
    used = np.zeros(-(-A.n_cols // per_sector), dtype=bool)
    used[A.indices // per_sector] = True
    return {**{f"c{w >> 10}k": float(np.mean(cs[w])) for w in cs}, "p": float(np.mean(ps)),
            "b": float(np.count_nonzero(used) / A.nnz),
            "b_bound": min(-(-A.n_cols // per_sector), A.nnz) / A.nnz, "blocks": blocked.n_blocks(A.n_cols)}


def load(source: str):
    if source.startswith("gen:"):
        from spla.io.generators import powerlaw
        _, _, n, avg, longest = source.split(":")
        return powerlaw(int(n), float(avg), int(longest), dtype=np.float64)
    return CSRMatrix.from_scipy(sp.load_npz(source).tocsr())


if __name__ == "__main__":
    for source in sys.argv[1:]:
        A64 = load(source)
        for dtype in (np.float32, np.float64):
            A = A64.astype(dtype)
            m = model(A)
            print(f"{source.split('/')[-1].removesuffix('.npz'):<34} {np.dtype(dtype).name:<8} "
                  + " ".join(f"{k} {v:.4f}" if isinstance(v, float) else f"{k} {v}" for k, v in m.items()), flush=True)
