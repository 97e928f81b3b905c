"""Auto's class and pick for each matrix of a set, on the CPU (no GPU), with what the rule reads:
the row statistics, the near share, spla's tile span and the median over 512 evenly spaced tiles
of 4,096 nonzeros of the distinct 128-byte lines of x a tile gathers from (row_spans.py's
tile_lines_median), and the share of row starts on a 16-byte boundary.

    PYTHONPATH=. python3 classes.py [--dtypes float32,float64] /tmp/h31/*.npz

classes31.txt is its output on set 31 (float32). classes30.txt came from its first version
(1afec9a), which printed both dtypes and M3's pick beside the code's before M3 was taken.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import scipy.sparse as sp

import spla
from spla.planning import spmv, stats

TILE, SAMPLES = 4096, 512


def tile_lines(M, dtype) -> float:
    lines = M.indices.astype(np.int64) // (128 // np.dtype(dtype).itemsize)
    n_tiles = max(1, M.nnz // TILE)
    counts = [np.unique(lines[t * TILE:(t + 1) * TILE]).size
              for t in np.linspace(0, n_tiles - 1, min(n_tiles, SAMPLES)).astype(np.int64)]
    return float(np.median(counts))


def main(argv) -> int:
    dtypes = ["float32"]
    if argv and argv[0] == "--dtypes":
        dtypes, argv = argv[1].split(","), argv[2:]
    for path in argv:
        M = sp.load_npz(path).tocsr()
        for dtype in dtypes:
            A = spla.CSRMatrix.from_scipy(M.astype(dtype))
            info = spmv.describe_choice(A)
            aligned = np.mean(M.indptr[:-1] % (16 // np.dtype(dtype).itemsize) == 0)
            print(f"{Path(path).stem:28s} {dtype} nnz={M.nnz / 1e6:5.1f}M mean={info['mean_row']:6.1f} "
                  f"cv={info['cv']:.2f} near={info.get('near_share', float('nan')):.3f} aligned={aligned:.2f} "
                  f"span={stats.tile_span(A):9.0f} lines={tile_lines(M, dtype):6.0f} class={info['class']:21s} "
                  f"code={info['kernel']}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
