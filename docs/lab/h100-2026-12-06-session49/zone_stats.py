"""Sets 49-52 (make_zone_49.py, built in the device's order) with what auto's rule reads, in both dtypes: rows,
mean row, x bytes, near share, the rule's class and kernel. CPU only, before any timing.

    PYTHONPATH=. python3 docs/lab/h100-2026-12-06-session49/zone_stats.py OUT.json
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import make_zone_49 as zone  # noqa: E402

from spla import CSRMatrix  # noqa: E402
from spla.planning.spmv import bound_param, describe_choice  # noqa: E402
from spla.planning.stats import near_share  # noqa: E402


def main(argv) -> int:
    out = {}
    for half, table, seed in (("fit", zone.FIT, 4949), ("test", zone.TEST, 4950), ("test2", zone.SECOND_TEST, 4951),
                              ("test3", zone.THIRD_TEST, 4952)):
        zone.gen.RNG = np.random.default_rng(seed)
        for name, build in table.items():
            S = build()
            for dtype in (np.float32, np.float64):
                A = CSRMatrix.from_scipy(S, dtype=dtype)
                choice = describe_choice(A)
                out[f"{name}/{np.dtype(dtype).name}"] = {
                    "half": half, "rows": A.n_rows, "nnz": A.nnz, "mean_row": A.nnz / A.n_rows,
                    "x_bytes": A.n_cols * A.dtype.itemsize, "near": near_share(A), "class": choice["class"],
                    "kernel": choice["kernel"], "vector_lanes": bound_param(A, "vector", None)}
                print(name, out[f"{name}/{np.dtype(dtype).name}"], flush=True)
    Path(argv[0]).write_text(json.dumps(out, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
