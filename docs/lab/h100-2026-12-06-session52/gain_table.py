"""Session 52: spla.planning.blocked's traffic estimate and predicted gain for each .npz (or gen:powerlaw:N:AVG:MAX)
given, both dtypes, in traffic_model.py's format (c1024k: CSR order at REUSE_ENTRIES; b; p), plus x's MB.

    python3 gain_table.py A.npz ...
"""

from __future__ import annotations

import sys

import numpy as np

from spla.planning import blocked

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from traffic_model import load  # noqa: E402

if __name__ == "__main__":
    for source in sys.argv[1:]:
        A64 = load(source)
        for dtype in (np.float32, np.float64):
            A = A64.astype(dtype)
            t = blocked.traffic(A)
            print(f"{source.split('/')[-1].removesuffix('.npz'):<34} {np.dtype(dtype).name:<8} c1024k {t.csr:.4f} "
                  f"p {t.pairs:.4f} b {t.blocked:.4f} blocks {blocked.n_blocks(A.n_cols)} "
                  f"xMB {A.n_cols * A.dtype.itemsize / 1e6:.1f} gain {blocked.predicted_gain(A):.3f}", flush=True)
