"""Auto's class and pick for each matrix of a set in float32, on the CPU (no GPU), with what P5
reads: the median over 512 evenly spaced tiles of 4,096 nonzeros of the distinct 128-byte lines of
x a tile gathers from (row_spans.py's tile_lines_median) and spla's tile span.

    PYTHONPATH=. python3 classes31.py /tmp/h31/*.npz
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import scipy.sparse as sp

import spla
from spla.planning import spmv, stats

TILE, LINE_COLUMNS, SAMPLES = 4096, 32, 512


def tile_lines(M) -> float:
    lines = M.indices.astype(np.int64) // LINE_COLUMNS
    n_tiles = max(1, M.nnz // TILE)
    counts = [np.unique(lines[t * TILE:(t + 1) * TILE]).size
              for t in np.linspace(0, n_tiles - 1, min(n_tiles, SAMPLES)).astype(np.int64)]
    return float(np.median(counts))


def main(paths) -> int:
    for path in paths:
        M = sp.load_npz(path).tocsr()
        A = spla.CSRMatrix.from_scipy(M.astype(np.float32))
        info = spmv.describe_choice(A)
        print(f"{Path(path).stem:28s} nnz={M.nnz / 1e6:5.1f}M mean={info['mean_row']:6.1f} cv={info['cv']:.2f} "
              f"near={info.get('near_share', float('nan')):.3f} span={stats.tile_span(A):9.0f} "
              f"lines={tile_lines(M):6.0f} class={info['class']:21s} code={info['kernel']}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
