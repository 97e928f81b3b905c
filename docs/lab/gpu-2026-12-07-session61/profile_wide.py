"""Session 61: the SpMM launches Nsight Compute profiles at k = 32 on a skewed corpus family.

Runs the kernel three times (the first compiles and plans), then checks its product against a float64
one, so ``ncu -k regex:... -c N`` picks launches of the runs; cuSPARSE's reference product comes last.

    ncu ... python3 docs/lab/gpu-2026-12-07-session61/profile_wide.py FAMILY NNZ K DTYPE KERNEL
"""

from __future__ import annotations

import sys

import cupy
import numpy as np

import spla
from spla.bench import corpus


def main(family: str, nnz: int, k: int, dtype: str, kernel: str) -> None:
    host = corpus.build(family, nnz)
    A = host.astype(dtype).to_device()
    X = cupy.asarray(np.random.default_rng(0).standard_normal((A.n_cols, k)).astype(dtype))
    Y = cupy.empty((A.n_rows, k), dtype)
    for _ in range(3):
        spla.spmm(A, X, out=Y, kernel=kernel)
    cupy.cuda.get_current_stream().synchronize()
    exact = host.to_device().to_cupyx() @ X.astype(np.float64)
    error = float(cupy.linalg.norm(Y - exact) / cupy.linalg.norm(exact))
    print(f"{family} {kernel} {dtype} k={k}: relative error {error:.1e}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1], int(float(sys.argv[2])), int(sys.argv[3]), sys.argv[4], sys.argv[5])
