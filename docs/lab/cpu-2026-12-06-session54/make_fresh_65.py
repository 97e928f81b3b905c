"""Fresh set 65 (session 54), written before any run of it: matrices whose x is past auto's 36 MB cut, chosen to
tell the footprint form of the traffic model (footprint.py: the slope of x's footprint where L2 fills) from the
library's (distinct sectors over windows of 1M nonzeros): community graphs of other sizes and shares, communities
scattered over x, uniform and mildly skewed graphs, local rows with far reads, a hot set. 20-50M nonzeros.

    python3 make_fresh_65.py DIR [NAME...]
"""

from __future__ import annotations

import sys
import zlib
from multiprocessing import Pool
from pathlib import Path

import numpy as np
import scipy.sparse as sp


def poisson_rows(rng, n, mean):
    lengths = np.maximum(1, rng.poisson(mean, n))
    return lengths, np.repeat(np.arange(n), lengths)


def communities(rng, n, mean, size, inside, scattered=False):
    """A share `inside` of each row's columns in its community (`size` ids: consecutive, or scattered over all
    of x by a fixed permutation), the rest anywhere."""
    _, row_of = poisson_rows(rng, n, mean)
    own = np.minimum((row_of // size) * size + rng.integers(0, size, row_of.size), n - 1)
    if scattered:
        own = rng.permutation(n)[own]
    return (n, n), row_of, np.where(rng.random(row_of.size) < inside, own, rng.integers(0, n, row_of.size))


def skewed_graph(rng, n, mean, a):
    """Pareto row lengths; columns from a power law over a random order of the ids (density ~ rank^-a)."""
    lengths = np.maximum(1, (rng.pareto(2.2, n) * mean * 1.2).astype(np.int64))
    m = int(lengths.sum())
    rank = np.minimum((n * rng.random(m) ** (1 / (1 - a))).astype(np.int64), n - 1) if a > 0 else rng.integers(0, n, m)
    return (n, n), np.repeat(np.arange(n), lengths), rng.permutation(n)[rank]


def local_far(rng, rows, cols, mean, far, near):
    lengths, row_of = poisson_rows(rng, rows, mean)
    local = np.clip(row_of * (cols // rows) + rng.integers(-near, near + 1, row_of.size), 0, cols - 1)
    return (rows, cols), row_of, np.where(rng.random(row_of.size) < far, rng.integers(0, cols, row_of.size), local)


def hot_set(rng, users, items, mean, share, n_hot):
    lengths, row_of = poisson_rows(rng, users, mean)
    hot = rng.choice(items, n_hot, replace=False)
    m = row_of.size
    return (users, items), row_of, np.where(rng.random(m) < share, hot[rng.integers(0, n_hot, m)],
                                            rng.integers(0, items, m))


SET_65 = {
    "communities-16M-2M-60": (communities, 16_000_000, 3, 2_000_000, 0.6),
    "communities-10M-250k-85": (communities, 10_000_000, 4, 250_000, 0.85),
    "scattered-communities-12M-500k-70": (communities, 12_000_000, 3, 500_000, 0.7, True),
    "uniform-graph-16M-deg3": (skewed_graph, 16_000_000, 3, 0.0),
    "skewed-graph-12M-a0.6": (skewed_graph, 12_000_000, 3, 0.6),
    "local-far15-8M-over-16M": (local_far, 8_000_000, 16_000_000, 5, 0.15, 20_000),
    "local-far60-6M-over-12M": (local_far, 6_000_000, 12_000_000, 6, 0.6, 1_000),
    "hot-set-2M-of-30M": (hot_set, 3_000_000, 30_000_000, 10, 0.6, 2_000_000),
}


def make(item):
    name, (family, *args), out = item
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    shape, rows, columns = family(rng, *args)
    A = sp.csr_matrix((np.ones(rows.size), (rows, columns)), shape=shape)
    A.sum_duplicates()
    A.data = rng.uniform(-1, 1, A.nnz)
    sp.save_npz(out / f"{name}.npz", A, compressed=False)
    return f"{name}: {shape[0]:,} x {shape[1]:,}, {A.nnz:,} nnz"


if __name__ == "__main__":
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    names = sys.argv[2:] or list(SET_65)
    with Pool(min(8, len(names))) as pool:
        for line in pool.imap_unordered(make, [(n, SET_65[n], out) for n in names]):
            print(line, flush=True)
