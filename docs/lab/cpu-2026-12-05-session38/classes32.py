"""Set 32's matrices on the CPU (no GPU): auto's class and pick today, and I2's pick
(rule_trial.py's i2=150000,10), in both dtypes.

    PYTHONPATH=. python3 classes32.py /tmp/h32/*.npz
"""

from __future__ import annotations

import sys
from pathlib import Path

import scipy.sparse as sp

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cpu-2026-12-04-session27"))
import rule_trial  # noqa: E402

import spla  # noqa: E402
from spla.planning import spmv, stats  # noqa: E402


def main(paths) -> int:
    for path in paths:
        M = sp.load_npz(path).tocsr()
        for dtype in ("float32", "float64"):
            A = spla.CSRMatrix.from_scipy(M.astype(dtype))
            info = spmv.describe_choice(A)
            with rule_trial.patched({"matrix_class": rule_trial._i2(150_000, 10)}):
                i2 = spmv.rule_kernel(spla.CSRMatrix.from_scipy(M.astype(dtype)))
            print(f"{Path(path).stem:24s} {dtype} nnz={M.nnz:7d} rows={M.shape[0]:6d} mean={info['mean_row']:5.1f} "
                  f"cv={info['cv']:.2f} max={info['max_row']:5d} near={stats.near_share(A):.3f} "
                  f"class={info['class']:16s} code={info['kernel']:10s} i2={i2}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
