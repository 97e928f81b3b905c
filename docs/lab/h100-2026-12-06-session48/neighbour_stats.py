"""W2's candidate statistics of whether neighbouring rows share columns, on the CPU, for the matrices that
sets 30, 36, 38, 39 and 40 timed at every rle width (session 47, H100), rebuilt in memory from their makers
(same classes and sizes; the draws may differ from the timed ones, the statistics are the class's):

  repeat   over sampled rows r, the share of row r's first 64 columns that row r - 1 also has
  sectors  32-byte sectors of a float32 x that each group of 16 consecutive rows gathers, over its entries
           (W0's mechanism: at 2 lanes a warp's 16 rows; 1/8 where rows read whole sectors, more where
           each row reads its own)
  lines    spla.planning.stats.tile_lines of the float32 matrix over 4,096 (the library's sampled tile statistic:
           distinct 128-byte lines of x a tile of 4,096 nonzeros gathers, over its entries)

    PYTHONPATH=. python3 docs/lab/h100-2026-12-06-session48/neighbour_stats.py OUT.json
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

LAB = Path(__file__).resolve().parent.parent
for folder in ("cpu-2026-12-05-session38", "cpu-2026-12-05-session44", "h200-2026-12-06-session45",
               "h200-2026-12-06-session46", "h100-2026-12-06-session47"):
    sys.path.insert(0, str(LAB / folder))

import spla  # noqa: E402
from spla.planning import stats  # noqa: E402

SAMPLE = 4096


def makers() -> dict:
    import make_held_out_30
    import make_held_out_36
    import make_held_out_38
    import make_held_out_39
    import make_held_out_40
    tables = {"h30": make_held_out_30.THIRTIETH, "h36": make_held_out_36.THIRTY_SIXTH,
              "h38": make_held_out_38.THIRTY_EIGHTH, "h39": make_held_out_39.THIRTY_NINTH,
              "h40": make_held_out_40.FORTIETH}
    return tables


def repeat_share(A) -> float:
    rows = np.unique(np.linspace(1, A.shape[0] - 1, SAMPLE).astype(np.int64))
    shared = total = 0
    for r in rows:
        now = A.indices[A.indptr[r]:A.indptr[r + 1]][:64]
        before = A.indices[A.indptr[r - 1]:A.indptr[r]]
        shared += np.isin(now, before).sum()
        total += now.size
    return shared / max(total, 1)


def sector_share(A, group: int = 16) -> float:
    starts = np.unique(np.linspace(0, A.shape[0] - group, SAMPLE // 4).astype(np.int64))
    sectors = entries = 0
    for s in starts:
        cols = A.indices[A.indptr[s]:A.indptr[s + group]]
        sectors += np.unique(cols // 8).size
        entries += cols.size
    return sectors / max(entries, 1)


def main(argv) -> int:
    out = {}
    for folder, table in makers().items():
        for name, build in table.items():
            A = build().tocsr()
            M = spla.CSRMatrix.from_scipy(A, dtype=np.float32)
            out[name] = {"set": folder, "repeat": round(float(repeat_share(A)), 4),
                         "sectors": round(float(sector_share(A)), 4),
                         "lines": round(stats.tile_lines(M) / stats.TILE_SPAN_ENTRIES, 4),
                         "mean_row": round(A.nnz / A.shape[0], 2)}
            print(name, out[name], flush=True)
    Path(argv[0]).write_text(json.dumps(out, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
