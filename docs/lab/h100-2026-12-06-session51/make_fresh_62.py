"""Set 62 (session 51), fresh for blocked's cuts of call 6 (36 MB of x, 0.5 entries a row a block; written after
them, before any run of these): a larger R-MAT graph, a square graph of Pareto degrees, a 2D grid graph in its
natural order (rows near the diagonal: the wave gate's test on a mesh) and with its vertices shuffled, and a
bipartite user-item matrix (Pareto rows over Zipf-popular items); 17-45M nonzeros.

    python3 make_fresh_62.py DIR
"""

from __future__ import annotations

import sys
import zlib
from multiprocessing import Pool
from pathlib import Path

import numpy as np
import scipy.sparse as sp


def rmat(rng, scale, edge_factor, probs=(0.55, 0.2, 0.2, 0.05)):
    n, m = 1 << scale, edge_factor << scale
    src, dst = np.zeros(m, dtype=np.int64), np.zeros(m, dtype=np.int64)
    cumulative = np.cumsum(probs)
    for bit in range(scale):
        quadrant = np.searchsorted(cumulative, rng.random(m), side="right")
        src |= (quadrant >> 1).astype(np.int64) << bit
        dst |= (quadrant & 1).astype(np.int64) << bit
    relabel = rng.permutation(n)
    return (n, n), relabel[src], relabel[dst]


def pareto_graph(rng, n, mean):  # out-degrees Pareto (alpha 2.2), neighbours uniform
    degrees = np.maximum(1, (rng.pareto(2.2, n) * mean * 1.2).astype(np.int64))
    return (n, n), np.repeat(np.arange(n), degrees), rng.integers(0, n, int(degrees.sum()))


def grid(rng, side, shuffled):  # the 5-point graph of a side x side grid (self loops included)
    n = side * side
    v = np.arange(n)
    i, j = v // side, v % side
    rows, cols = [v], [v]
    for di, dj in ((-1, 0), (1, 0), (0, -1), (0, 1)):
        ok = (i + di >= 0) & (i + di < side) & (j + dj >= 0) & (j + dj < side)
        rows.append(v[ok])
        cols.append(((i + di) * side + j + dj)[ok])
    rows, cols = np.concatenate(rows), np.concatenate(cols)
    if shuffled:
        relabel = rng.permutation(n)
        rows, cols = relabel[rows], relabel[cols]
    return (n, n), rows, cols


def user_item(rng, users, items, mean):  # Pareto rows over items of Zipf (1.1) popularity, items shuffled
    lengths = np.maximum(1, (rng.pareto(2.0, users) * mean).astype(np.int64))
    popular = np.minimum(rng.zipf(1.1, int(lengths.sum())) - 1, items - 1)
    return (users, items), np.repeat(np.arange(users), lengths), rng.permutation(items)[popular]


SET_62 = {
    "rmat-23-ef4": (rmat, 23, 4),
    "pareto-graph-12M-deg3": (pareto_graph, 12_000_000, 3),
    "grid-3000-natural": (grid, 3000, False),
    "grid-3000-shuffled": (grid, 3000, True),
    "user-item-2M-over-15M": (user_item, 2_000_000, 15_000_000, 10),
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
    with Pool(5) as pool:
        for line in pool.imap_unordered(make, [(n, s, out) for n, s in SET_62.items()]):
            print(line, flush=True)
