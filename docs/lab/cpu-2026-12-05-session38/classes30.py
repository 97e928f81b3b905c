"""Auto's class and pick for each matrix of a set, on the CPU (no GPU): the code's rule and
session 38's M3 (rule_trial.py's m3), in both dtypes, with the row statistics the rule reads.

    PYTHONPATH=. python3 classes30.py /tmp/h30/*.npz
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cpu-2026-12-04-session27"))
import rule_trial  # noqa: E402

import spla  # noqa: E402
from spla.planning import spmv  # noqa: E402


def main(paths) -> int:
    for path in paths:
        M = sp.load_npz(path).tocsr()
        for dtype in (np.float32, np.float64):
            A = spla.CSRMatrix.from_scipy(M.astype(dtype))
            info = spmv.describe_choice(A)
            with rule_trial.patched({"matrix_class": rule_trial._m3}):
                m3 = spmv.rule_kernel(spla.CSRMatrix.from_scipy(M.astype(dtype)))
            aligned = np.mean(M.indptr[:-1] % (16 // np.dtype(dtype).itemsize) == 0)
            print(f"{Path(path).stem:30s} {np.dtype(dtype).name} nnz={M.nnz / 1e6:5.1f}M mean={info['mean_row']:5.1f} "
                  f"cv={info['cv']:.2f} near={info.get('near_share', float('nan')):.2f} aligned={aligned:.2f} "
                  f"class={info['class']:14s} code={info['kernel']:10s} m3={m3}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
