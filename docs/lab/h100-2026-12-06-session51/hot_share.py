"""A candidate statistic for blocked's gate (session 51, after call 10): the share of sampled gathers that land on
lines of x read by many of the sampled staged tiles (hot columns, which L2 serves in any order), beside
stats.tile_lines (distinct lines a tile), which also counts local reuse (rows near one another sharing lines) that
blocked does not lose on. For each .npz given (or gen: spec), both dtypes.

    python3 hot_share.py A.npz ... [--spec gen:...]

It ran on the library as of bb0c005: stats.wave_span, which it prints, went with session 52's traffic model
(`git worktree add /tmp/s51 bb0c005` to run it again).
"""

from __future__ import annotations

import sys

import numpy as np
import scipy.sparse as sp

from spla.csr import CSRMatrix
from spla.planning import blocked
from spla.planning.stats import LINE_BYTES, TILE_SPAN_ENTRIES, TILE_SPAN_SAMPLES, evenly_spaced, tile_lines, wave_span

HOT_TILES = 8  # a line read by at least this many of the 256 sampled tiles is hot


def hot_share(A) -> float:
    n_tiles = A.nnz // TILE_SPAN_ENTRIES
    tiles = evenly_spaced(n_tiles, TILE_SPAN_SAMPLES)
    cols = A.indices[:n_tiles * TILE_SPAN_ENTRIES].reshape(n_tiles, TILE_SPAN_ENTRIES)[tiles]
    lines = cols // (LINE_BYTES // A.dtype.itemsize)
    tile_of = np.repeat(np.arange(len(tiles)), TILE_SPAN_ENTRIES)
    pairs = np.unique(np.stack([lines.ravel(), tile_of]), axis=1)  # (line, tile) once each
    line_ids, tiles_a_line = np.unique(pairs[0], return_counts=True)
    hot = line_ids[tiles_a_line >= HOT_TILES]
    return float(np.isin(lines.ravel(), hot).mean())


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
            print(f"{source.split('/')[-1]:<40} {np.dtype(dtype).name:<8} lines {tile_lines(A):6.0f} "
                  f"hot {hot_share(A):5.3f} wave {wave_span(A) / blocked.block_width(A.n_cols):5.2f}", flush=True)
