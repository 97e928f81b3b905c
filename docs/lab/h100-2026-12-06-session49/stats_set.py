"""Each matrix of set 47 (make_held_out_47.py, built in the device's order, so the same matrices) in float32 with
its mean row, mean run, repeat share, band_lanes and W3's rle width: computed on the CPU before any timing of the
set. W3 was reverted after set 47 (this folder's README); its library form (stats.repeat_share, rle_lanes's
repeat_share argument) is in commit 5ea8fdf, and this script keeps a copy of both, so it still runs.

    PYTHONPATH=. python3 docs/lab/h100-2026-12-06-session49/stats_set.py OUT.json
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import make_held_out_47 as forty_seventh  # noqa: E402

from spla import CSRMatrix  # noqa: E402
from spla.planning import rle  # noqa: E402
from spla.planning.spmv import band_lanes  # noqa: E402

SAMPLE_ROWS, ROW_ENTRIES = 4096, 64  # 5ea8fdf's stats.repeat_share: NEAR_SAMPLE_ROWS, NEAR_ROW_ENTRIES


def repeat_share(S) -> float:
    """The share of evenly spaced rows whose length and first ROW_ENTRIES columns equal the row before's."""
    rows = np.unique(np.linspace(1, S.shape[0] - 1, min(S.shape[0] - 1, SAMPLE_ROWS)).astype(np.int64))
    same = 0
    for r in rows:
        before, this = S.indices[S.indptr[r - 1]:S.indptr[r]], S.indices[S.indptr[r]:S.indptr[r + 1]]
        same += this.size > 0 and this.size == before.size and np.array_equal(this[:ROW_ENTRIES], before[:ROW_ENTRIES])
    return same / rows.size


def w3_lanes(mean: float, repeats: float) -> int:
    """5ea8fdf's float32 rle_lanes: 4 where band_lanes gives 2 to rows of 29+ that repeat under half the time."""
    lanes = band_lanes(mean, 4)
    return 4 if lanes == 2 and mean >= 29.0 and repeats < 0.5 else lanes


def main(argv) -> int:
    stats = {}
    for name, build in forty_seventh.FORTY_SEVENTH.items():
        S = build().tocsr()
        S.sort_indices()
        A = CSRMatrix.from_scipy(S, dtype=np.float32)
        mean = A.nnz / A.n_rows
        repeats = repeat_share(S)
        stats[name] = {"nnz": A.nnz, "mean_row": mean, "mean_run": rle.mean_run(A), "repeat": repeats,
                       "band_lanes": band_lanes(mean, 4), "w3_lanes": w3_lanes(mean, repeats)}
        print(name, stats[name], flush=True)
    Path(argv[0]).write_text(json.dumps(stats, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
