"""A CPU model of the lockstep-sweep hypothesis (README, "Next"): the bytes of x a short-wide SpMV reads from DRAM
under vector's schedule (a warp a row, every warp 128 entries a step) and staged's (tiles of 4,096 nonzeros, the
resident blocks' tiles read round-robin), with x's 32-byte sectors in an L2 of CAPACITY bytes.

A gather misses when its sector's previous gather lies more than CAPACITY / 32 gathers back in the interleaved order
(a reuse distance counted in gathers, not distinct sectors: it over-counts misses where gathers repeat, alike for
both schedules). Streams are left out (staged reads them evict-first). Not a simulator of the GPU: it says whether
the orders alone can explain vector's 1.5-2.4x over staged on sets 54-56.

    python3 sweep_model.py FILE.npz... [--itemsize 4] [--capacity 40e6] [--blocks 792]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import scipy.sparse as sp

STEP = 128  # entries a warp of vector reads a step (32 lanes x 4 float32 entries)
TILE = 4096  # staged's float32 tile


def x_misses(order: np.ndarray, sectors: np.ndarray, capacity_sectors: int) -> int:
    """Gathers, taken in ``order``, whose sector was last gathered more than capacity_sectors gathers before."""
    seq = sectors[order]
    time = np.arange(seq.size, dtype=np.int64)
    by = np.lexsort((time, seq))
    s, t = seq[by], time[by]
    first = np.ones(s.size, dtype=bool)
    first[1:] = s[1:] != s[:-1]
    gap = np.empty(s.size, dtype=np.int64)
    gap[0] = 0
    gap[1:] = t[1:] - t[:-1]
    return int(first.sum() + ((~first) & (gap > capacity_sectors)).sum())


def vector_order(A: sp.csr_matrix) -> np.ndarray:
    """Every warp (row) in step: step s of every row before step s + 1 of any."""
    lengths = np.diff(A.indptr)
    k = np.arange(A.nnz) - np.repeat(A.indptr[:-1], lengths)
    row = np.repeat(np.arange(A.shape[0]), lengths)
    return np.lexsort((k % STEP, row, k // STEP))


def staged_order(A: sp.csr_matrix, blocks: int) -> np.ndarray:
    """Tiles in batches of ``blocks`` resident at once, each batch's tiles read round-robin."""
    k = np.arange(A.nnz)
    tile = k // TILE
    return np.lexsort((tile % blocks, k % TILE, tile // blocks))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="+", type=Path)
    parser.add_argument("--itemsize", type=int, default=4)
    parser.add_argument("--capacity", type=float, default=40e6, help="bytes of L2 left to x")
    parser.add_argument("--blocks", type=int, default=792, help="staged's resident blocks (132 SMs x 6)")
    args = parser.parse_args(argv)
    per_sector = 32 // args.itemsize
    cap = int(args.capacity) // 32
    print(f"x bytes from DRAM a nonzero (itemsize {args.itemsize}, L2 for x {args.capacity / 1e6:.0f} MB)")
    print(f"{'matrix':<44} {'x MB':>6} {'vector':>7} {'staged':>7}")
    for path in args.files:
        A = sp.load_npz(path).tocsr()
        sectors = (A.indices // per_sector).astype(np.int64)
        v = x_misses(vector_order(A), sectors, cap) * 32 / A.nnz
        s = x_misses(staged_order(A, args.blocks), sectors, cap) * 32 / A.nnz
        print(f"{path.stem:<44} {A.shape[1] * args.itemsize / 1e6:6.0f} {v:7.2f} {s:7.2f}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
