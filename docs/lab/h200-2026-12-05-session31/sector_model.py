"""How many 32-byte sectors of x one warp's gather touches in staged, per nonzero, in the kernel's
order (a warp loads 32 consecutive nonzeros of its tile) and if each tile's nonzeros were ordered by
column: the L1 requests' sectors before any cache, on the CPU (no GPU needed).

    PYTHONPATH=. python3 docs/lab/h200-2026-12-05-session31/sector_model.py SOURCE... [--dtype float32]

SOURCE: a file, a gen: spec or corpus:FAMILY:NNZ. A gather at 1.0 sectors a nonzero brings 32 bytes
through L1 (and, on a miss, L2) for the 4 or 8 it uses; 8 bytes of value and index stream beside it
(0.25 sectors a float32 nonzero). "distinct in tile" counts each sector once a tile: the floor
if L1 kept everything one tile touches.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

SECTOR = 32
THREADS = 256
WARP = 32


def sectors(indices: np.ndarray, itemsize: int, tile: int) -> dict:
    """Mean sectors a nonzero: per warp request in tile order, per request with each tile sorted
    by column, and distinct sectors per tile (the best any order within a tile could do)."""
    nnz = indices.size - indices.size % tile  # whole tiles
    sector = (indices[:nnz].astype(np.int64) * itemsize // SECTOR).reshape(-1, tile)
    sorted_sector = np.sort(sector, axis=1)

    def per_request(s):
        requests = s.reshape(-1, WARP)
        ordered = np.sort(requests, axis=1)
        return float((1 + (np.diff(ordered, axis=1) != 0).sum(axis=1)).sum() / nnz)

    distinct = float((1 + (np.diff(sorted_sector, axis=1) != 0).sum(axis=1)).sum() / nnz)
    return {"tile order": per_request(sector), "sorted in tile": per_request(sorted_sector),
            "distinct in tile": distinct}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("sources", nargs="+")
    parser.add_argument("--dtype", choices=["float32", "float64"], default="float32")
    args = parser.parse_args(argv)

    from spla.bench import corpus

    itemsize = np.dtype(args.dtype).itemsize
    t = 16 if itemsize == 4 else 8  # staged's default T on large matrices
    print(f"{args.dtype}, tiles of {THREADS * t} nonzeros: sectors of x a nonzero")
    for source in args.sources:
        A = corpus.load(source)
        found = sectors(np.asarray(A.indices), itemsize, THREADS * t)
        print(f"  {source} ({A.nnz:,} nnz): " + ", ".join(f"{k} {v:.3f}" for k, v in found.items()), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
