"""Set 63 (session 51), fresh for blocked's lines gate (2,500 distinct lines a staged tile; written after it, before
any run of these): user-item matrices whose items are drawn with several skews (Zipf 1.3; 30% and 60% of picks
from 20k hot items, the rest uniform; 90% from 1k hubs) and a square graph of Pareto out-degrees; 15-48M nonzeros.

    python3 make_fresh_63.py DIR
"""

from __future__ import annotations

import sys
import zlib
from multiprocessing import Pool
from pathlib import Path

import numpy as np
import scipy.sparse as sp


def user_rows(rng, users, mean):
    return np.maximum(1, (rng.pareto(2.0, users) * mean).astype(np.int64))


def zipf_items(rng, users, items, mean, a):
    lengths = user_rows(rng, users, mean)
    popular = np.minimum(rng.zipf(a, int(lengths.sum())) - 1, items - 1)
    return (users, items), np.repeat(np.arange(users), lengths), rng.permutation(items)[popular]


def hot_items(rng, users, items, mean, share, n_hot):  # share of the picks from n_hot items, the rest uniform
    lengths = user_rows(rng, users, mean)
    m = int(lengths.sum())
    hot = rng.integers(0, items, n_hot)
    picks = np.where(rng.random(m) < share, hot[rng.integers(0, n_hot, m)], rng.integers(0, items, m))
    return (users, items), np.repeat(np.arange(users), lengths), picks


def pareto_graph(rng, n, mean):
    degrees = np.maximum(1, (rng.pareto(2.2, n) * mean * 1.2).astype(np.int64))
    return (n, n), np.repeat(np.arange(n), degrees), rng.integers(0, n, int(degrees.sum()))


SET_63 = {
    "items-zipf1.3-1.5M-over-20M": (zipf_items, 1_500_000, 20_000_000, 12, 1.3),
    "items-hot30-1.5M-over-20M": (hot_items, 1_500_000, 20_000_000, 12, 0.3, 20_000),
    "items-hot60-1.5M-over-20M": (hot_items, 1_500_000, 20_000_000, 12, 0.6, 20_000),
    "items-hubs90-1.5M-over-20M": (hot_items, 1_500_000, 20_000_000, 12, 0.9, 1_000),
    "pareto-graph-12M-deg4": (pareto_graph, 12_000_000, 4),
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
        for line in pool.imap_unordered(make, [(n, s, out) for n, s in SET_63.items()]):
            print(line, flush=True)
