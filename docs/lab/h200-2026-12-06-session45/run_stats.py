"""Each matrix's runs, measured on the CPU: the mean run (rle.mean_run), the runs a row (mean) and
the mean row, the share of rows with at most 4 and at most 8 runs (rle's register preload covers those), as JSON.

    PYTHONPATH=. python3 docs/lab/h200-2026-12-06-session45/run_stats.py OUT.json MATRIX.npz ...
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

from spla.io.load import load
from spla.planning import rle


def stats(A) -> dict:
    found = rle.structure(A)
    per_row = np.diff(found.run_ptr)
    rows = per_row[np.diff(A.indptr) > 0]
    return {"mean_run": round(A.nnz / found.n_runs, 3), "mean_row": round(A.nnz / A.n_rows, 3),
            "runs_a_row": round(float(rows.mean()), 3),
            "rows_upto_4_runs": round(float((rows <= 4).mean()), 3),
            "rows_upto_8_runs": round(float((rows <= 8).mean()), 3)}


def main(argv) -> int:
    out = {Path(p).stem: stats(load(p)) for p in argv[1:]}
    Path(argv[0]).write_text(json.dumps(out, indent=1) + "\n")
    for name, s in out.items():
        print(name, s)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
