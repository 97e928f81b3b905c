"""Session 54: the footprint model's traffic and predicted gain read from the GPU's arrays (CuPy) for each .npz,
both dtypes, beside the same read from the host copy (NumPy): the two sides count the same.

    python3 gpu_gains.py A.npz ...
"""

from __future__ import annotations

import sys
import time

import cupy
import numpy as np
import scipy.sparse as sp

from spla.csr import CSRMatrix
from spla.planning import blocked

for path in sys.argv[1:]:
    H = sp.load_npz(path).tocsr()
    for dtype in (np.float32, np.float64):
        host = CSRMatrix(H.data.astype(dtype), H.indices, H.indptr, H.shape)
        device = CSRMatrix(cupy.asarray(host.data), cupy.asarray(host.indices), cupy.asarray(host.indptr), H.shape)
        start = time.perf_counter()
        t = blocked.traffic(device)
        gain = blocked.predicted_gain(device)
        cupy.cuda.Device().synchronize()
        took = time.perf_counter() - start
        same = t == blocked.traffic(host)
        print(f"{path.rsplit('/', 1)[-1].removesuffix('.npz'):<36} {np.dtype(dtype).name}  csr {t.csr:.4f} lines "
              f"{t.lines:.4f} b {t.blocked:.4f} p {t.pairs:.4f}  gain {gain:.3f}  ({took * 1e3:.0f} ms on the GPU; "
              f"host side {'the same' if same else 'DIFFERS'})", flush=True)
