"""Session 54 (host only): the average footprint of x in CSR order, as a curve over window lengths, for the
footprint theory of caches (Xiang, Ding et al.: a fully associative LRU cache of C bytes misses, a access, the
slope of the average footprint where the footprint reaches C).

For each .npz (or gen:powerlaw:N:AVG:MAX) and dtype: from SAMPLES starts evenly spaced, the distinct 32-byte
sectors (or LINE-byte lines) of x that the first w nonzeros read, for w in LENGTHS (one pass a start: a sector
counts from its first read), averaged; plus b (distinct sectors of all of A a nonzero) and blocks (pairs: the
traffic files).

    [LINE=64] python3 footprint.py OUT.txt A.npz ...
"""

from __future__ import annotations

import os
import sys

import numpy as np
import scipy.sparse as sp

from spla.planning import blocked
from spla.planning.stats import evenly_spaced

SECTOR = int(os.environ.get("LINE", 32))  # bytes a line of x: 32 (a sector), or 64 (LINE=64: what H100 reads a miss)
LONGEST = 1 << 24
LENGTHS = [1 << k for k in range(14, 25)] + [3 << k for k in range(13, 23)]
SAMPLES = 6


def curve(indices, per_sector, n_sectors, nnz):
    window = min(LONGEST, nnz)
    lengths = sorted(w for w in LENGTHS if w <= window)
    starts = evenly_spaced(nnz - window + 1, SAMPLES)
    totals = np.zeros(len(lengths))
    positions = np.arange(window)
    for s in starts:
        sectors = indices[s:s + window] // per_sector
        first = np.full(n_sectors, window)
        first[sectors[::-1]] = positions[::-1]  # (the last write of a repeated index wins: the first read)
        is_first = np.zeros(window, bool)
        is_first[first[first < window]] = True
        totals += np.cumsum(is_first)[np.array(lengths) - 1]
    return lengths, totals / len(starts)


def load(path):
    if path.startswith("gen:"):
        from spla.io.generators import powerlaw
        _, _, n, avg, longest = path.split(":")
        return powerlaw(int(n), float(avg), int(longest)).to_scipy()
    return sp.load_npz(path).tocsr()


def main():
    out = open(sys.argv[1], "a")
    for path in sys.argv[2:]:
        H = load(path)
        name = path.rsplit("/", 1)[-1].removesuffix(".npz")
        indices = H.indices.astype(np.int64)
        blocks = blocked.n_blocks(H.shape[1])
        for dtype, item in (("float32", 4), ("float64", 8)):
            per = SECTOR // item
            lengths, fp = curve(indices, per, -(-H.shape[1] // per), H.nnz)
            b = np.unique(indices // per).size / H.nnz
            fields = " ".join(f"f{w} {v:.0f}" for w, v in zip(lengths, fp))
            print(f"{name} {dtype} nnz {H.nnz} b {b:.4f} blocks {blocks} xMB {H.shape[1] * item / 1e6:.1f} "
                  f"{fields}", file=out, flush=True)
            print(name, dtype, f"b {b:.3f}", f"fp(1M)/1M {np.interp(1 << 20, lengths, fp) / (1 << 20):.3f}", flush=True)


if __name__ == "__main__":
    main()
