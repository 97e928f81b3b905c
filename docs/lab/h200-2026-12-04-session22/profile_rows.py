"""Session 22, call 2: launch floor-product (per tile), segmented, vector and auto once each on
short rows over an L1-resident x, for ncu to read (matrices drawn like session 19's shapes):

    ncu --clock-control none --profile-from-start off -k "regex:spla_(floor|spmv)" --section SpeedOfLight ... \
        python3 profile_rows.py float64 rows-16-over-20k rows-2-5-over-20k
"""
import sys

import cupy
import numpy as np
import scipy.sparse as sp

from spla import CSRMatrix
from spla.backends.cuda import floor
from spla.ops import spmv as ops_spmv

rng = np.random.default_rng(22)

def scattered(lengths, n_cols):
    indptr = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    cols = rng.integers(0, n_cols, int(indptr[-1]))
    A = sp.csr_matrix((np.ones(cols.size), cols, indptr), shape=(lengths.size, n_cols))
    A.sum_duplicates()
    A.data = rng.uniform(-1, 1, A.nnz)
    return A

shapes = {"rows-16-over-20k": lambda: scattered(np.full(2_500_000, 16), 20_000),
          "rows-2-5-over-20k": lambda: scattered(rng.integers(2, 6, 12_000_000), 20_000)}
dtype = sys.argv[1]
for name in sys.argv[2:]:
    S = shapes[name]()
    A = CSRMatrix.from_scipy(S).astype(dtype).to_device()
    x = cupy.asarray(rng.uniform(-1, 1, S.shape[1]).astype(dtype))
    f = floor.Floor("product", A.indices, A.data, x, per_tile=True)
    y = cupy.zeros(S.shape[0], dtype=dtype)
    for k in ["segmented", "vector", "auto"]:
        ops_spmv.spmv(A, x, kernel=k, out=y)  # compile and bind
    cupy.cuda.Device().synchronize()
    cupy.cuda.profiler.start()
    f.run()
    for k in ["segmented", "vector", "auto"]:
        ops_spmv.spmv(A, x, kernel=k, out=y)
    cupy.cuda.Device().synchronize()
    cupy.cuda.profiler.stop()
    err = np.abs(cupy.asnumpy(y) - S @ cupy.asnumpy(x).astype(np.float64)).max()
    print(name, dtype, S.nnz, "auto err", err, flush=True)
