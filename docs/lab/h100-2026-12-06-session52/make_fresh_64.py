"""Set 64 (session 52), fresh for blocked's gate (written before any run of these; not like sets 58-63): a diagonal
stripe over a short-wide x (streaming, nothing to reuse), web-like graphs whose far share and size differ from
bench_spmv's powerlaw-16M, community graphs, hot items at a 75% share, and a hot set near L2's size (fits in
float32, not in float64); 20-60M nonzeros, x of 40-160 MB.

    python3 make_fresh_64.py DIR
"""

from __future__ import annotations

import sys
import zlib
from multiprocessing import Pool
from pathlib import Path

import numpy as np
import scipy.sparse as sp


def lengths_around(rng, rows, mean):
    return np.maximum(1, rng.poisson(mean, rows))


def stripe(rng, rows, cols, mean, half):  # row i: columns within +-half of i * cols / rows
    lengths = lengths_around(rng, rows, mean)
    row_of = np.repeat(np.arange(rows), lengths)
    centre = row_of * (cols // rows)
    return (rows, cols), row_of, np.clip(centre + rng.integers(-half, half + 1, row_of.size), 0, cols - 1)


def local_far(rng, rows, cols, mean, far, near):  # a share `far` of each row anywhere, the rest within +-near
    lengths = np.maximum(1, (rng.pareto(2.1, rows) * mean * 1.1).astype(np.int64))
    row_of = np.repeat(np.arange(rows), lengths)
    centre = row_of * (cols // rows)
    local = np.clip(centre + rng.integers(-near, near + 1, row_of.size), 0, cols - 1)
    return (rows, cols), row_of, np.where(rng.random(row_of.size) < far, rng.integers(0, cols, row_of.size), local)


def communities(rng, n, mean, size, inside):  # a share `inside` in the row's community of `size` ids, the rest anywhere
    lengths = lengths_around(rng, n, mean)
    row_of = np.repeat(np.arange(n), lengths)
    own = (row_of // size) * size + rng.integers(0, size, row_of.size)
    cols = np.where(rng.random(row_of.size) < inside, np.minimum(own, n - 1), rng.integers(0, n, row_of.size))
    return (n, n), row_of, cols


def hot_items(rng, users, items, mean, share, n_hot):  # a share of the picks from n_hot items, the rest uniform
    lengths = np.maximum(1, (rng.pareto(2.0, users) * mean).astype(np.int64))
    m = int(lengths.sum())
    hot = rng.choice(items, n_hot, replace=False)
    picks = np.where(rng.random(m) < share, hot[rng.integers(0, n_hot, m)], rng.integers(0, items, m))
    return (users, items), np.repeat(np.arange(users), lengths), picks


SET_64 = {
    "stripe-2M-over-20M": (stripe, 2_000_000, 20_000_000, 12, 400),
    "stripe-1M-over-40M": (stripe, 1_000_000, 40_000_000, 24, 3000),
    "local-far25-10M-over-10M": (local_far, 10_000_000, 10_000_000, 5, 0.25, 4096),
    "local-far10-6M-over-24M": (local_far, 6_000_000, 24_000_000, 8, 0.10, 2048),
    "local-far40-4M-over-12M": (local_far, 4_000_000, 12_000_000, 8, 0.40, 512),
    "communities-12M-1M-70": (communities, 12_000_000, 4, 1_000_000, 0.7),
    "items-hot75-2M-over-16M": (hot_items, 2_000_000, 16_000_000, 10, 0.75, 30_000),
    "items-hotset-4M-of-40M": (hot_items, 1_500_000, 40_000_000, 16, 0.8, 4_000_000),
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
    names = sys.argv[2:] or list(SET_64)
    with Pool(min(8, len(names))) as pool:
        for line in pool.imap_unordered(make, [(n, SET_64[n], out) for n in names]):
            print(line, flush=True)
