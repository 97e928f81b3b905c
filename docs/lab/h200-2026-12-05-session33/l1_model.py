"""A model of staged's x gathers in one SM's L1 (no GPU): the share of gathered sectors found in L1,
for a matrix as it is and with its columns relabelled by descending count (the most-read columns of
x side by side at its start; y = A x is unchanged if x is permuted the same way).

One SM's share of the tiles (every 132nd tile: blocks loop grid-stride over tiles), gathered in
staged's order (a warp's 32 consecutive nonzeros a request), through an LRU cache of 128-byte lines
of 32-byte sectors; a sector read is a hit where its line is held and the sector was read since the
line came in. Values and indices are streamed past L1 (__ldcs), so x owns the cache. Calibrated
against Nsight Compute's l1tex hit rate for staged at 40M float32 (session 33, call 3: random-width
2.3%, powerlaw-mid 26.0%, knn-window 49.9%: those count the streamed loads too, so the model's x
share is compared to the measured rate over x's part of the requests).

    PYTHONPATH=. python3 docs/lab/h200-2026-12-05-session33/l1_model.py corpus:powerlaw-mid:4e7 ... \\
        [--lines 1000] [--sms 132]
"""

from __future__ import annotations

import argparse
import sys
from collections import OrderedDict

import numpy as np

TILE = 256 * 16  # staged's float32 tile at T = 16
WARP = 32


def requests(indices: np.ndarray, sms: int, resident: int, itemsize: int):
    """SM 0's warp requests (sectors of x) in the order they reach L1: its tiles taken ``resident``
    at a time (the blocks an SM holds at once), their requests interleaved."""
    n_tiles = indices.size // TILE
    mine = np.arange(0, n_tiles, sms)  # SM 0's tiles
    for first in range(0, mine.size, resident):
        group = [indices[t * TILE:(t + 1) * TILE].astype(np.int64) * itemsize // 32
                 for t in mine[first:first + resident]]
        stacked = np.stack([g.reshape(-1, WARP) for g in group], axis=1)  # request, tile, lane
        yield from stacked.reshape(-1, WARP)


def hit_share(indices: np.ndarray, lines: int, sms: int, resident: int = 1, itemsize: int = 4) -> float:
    """Share of one SM's gathered sectors (distinct within a warp's request) found in L1."""
    cache: OrderedDict[int, int] = OrderedDict()  # line -> bitmask of valid sectors
    hits = total = 0
    for request in requests(indices, sms, resident, itemsize):
        for sector in np.unique(request).tolist():
            line, bit = sector >> 2, 1 << (sector & 3)
            total += 1
            mask = cache.get(line)
            if mask is None:
                cache[line] = bit
                if len(cache) > lines:
                    cache.popitem(last=False)
                continue
            cache.move_to_end(line)
            if mask & bit:
                hits += 1
            else:
                cache[line] = mask | bit
    return hits / max(total, 1)


def by_count(indices: np.ndarray, n_cols: int) -> np.ndarray:
    """The column indices relabelled so that the most-read column is 0, the next 1, ..."""
    counts = np.bincount(indices, minlength=n_cols)
    order = np.argsort(-counts, kind="stable")
    label = np.empty(n_cols, dtype=np.int64)
    label[order] = np.arange(n_cols)
    return label[indices]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("sources", nargs="+")
    parser.add_argument("--lines", type=int, default=1000, help="L1 lines x may hold (default 1000: 125 KB)")
    parser.add_argument("--sms", type=int, default=132)
    parser.add_argument("--resident", type=int, default=1,
                        help="tiles an SM runs at once, their requests interleaved (staged float32: 6)")
    args = parser.parse_args(argv)

    from spla.bench import corpus

    print(f"L1 of {args.lines} lines of 128 bytes, every {args.sms}th tile of {TILE}: share of x's sectors hit")
    for source in args.sources:
        A = corpus.load(source)
        indices = np.asarray(A.indices)
        as_is = hit_share(indices, args.lines, args.sms, args.resident)
        relabelled = hit_share(by_count(indices, A.n_cols), args.lines, args.sms, args.resident)
        print(f"  {source} ({A.nnz:,} nnz): as it is {as_is:.3f}, columns by count {relabelled:.3f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
