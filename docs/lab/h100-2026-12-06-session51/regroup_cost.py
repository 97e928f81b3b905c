"""The blocked kernel's one-time cost on the GPU: blocked.regrouped(A) (CuPy's sort of A's entries by column block
and row) and the first call's binding, in ms, beside one staged SpMV, for the given .npz matrices.

    python3 regroup_cost.py A.npz ...
"""

from __future__ import annotations

import sys
import time

import cupy
import numpy as np
import scipy.sparse as sp

from spla.csr import CSRMatrix
from spla.ops.spmv import spmv
from spla.planning import blocked


def main(paths) -> None:
    for path in paths:
        A = CSRMatrix.from_scipy(sp.load_npz(path).tocsr(), dtype=np.float32).to_device()
        x = cupy.ones(A.n_cols, dtype=np.float32)
        spmv(A, x, kernel="staged")
        cupy.cuda.Device().synchronize()
        began = time.perf_counter()
        for _ in range(10):
            spmv(A, x, kernel="staged")
        cupy.cuda.Device().synchronize()
        staged_ms = (time.perf_counter() - began) * 100
        began = time.perf_counter()
        blocked.regrouped(A)
        cupy.cuda.Device().synchronize()
        regroup_ms = (time.perf_counter() - began) * 1e3
        began = time.perf_counter()
        spmv(A, x, kernel="blocked")
        cupy.cuda.Device().synchronize()
        bind_ms = (time.perf_counter() - began) * 1e3
        print(f"{path}: {A.nnz:,} nnz, regroup {regroup_ms:.1f} ms, first blocked call (plan, bind, run) "
              f"{bind_ms:.1f} ms, staged {staged_ms:.3f} ms a call", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
