"""Each matrix of set 47 (make_held_out_47.py, built in the device's order, so the same matrices) in float32 with
its mean row, mean run, repeat_share, band_lanes and the width spla.planning.spmv.bound_param gives rle (W3):
computed on the CPU before any timing of the set.

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
from spla.planning.spmv import band_lanes, bound_param  # noqa: E402
from spla.planning.stats import repeat_share  # noqa: E402


def main(argv) -> int:
    stats = {}
    for name, build in forty_seventh.FORTY_SEVENTH.items():
        S = build().tocsr()
        S.sort_indices()
        A = CSRMatrix.from_scipy(S, dtype=np.float32)
        mean = A.nnz / A.n_rows
        stats[name] = {"nnz": A.nnz, "mean_row": mean, "mean_run": rle.mean_run(A), "repeat": repeat_share(A),
                       "band_lanes": band_lanes(mean, 4), "w3_lanes": bound_param(A, "rle", None)}
        print(name, stats[name], flush=True)
    Path(argv[0]).write_text(json.dumps(stats, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
