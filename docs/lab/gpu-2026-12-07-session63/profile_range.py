"""Session 63: one SpMM kernel's launches inside a profiler range, after its set-up (cusparse's choice of
algorithm included), so ``ncu --profile-from-start off`` sees only the kept runs; prints the error and, for
cusparse, the CSR algorithm kept.

    ncu --profile-from-start off ... python3 PATH/profile_range.py FAMILY NNZ K DTYPE KERNEL
"""

from __future__ import annotations

import sys

import cupy
import numpy as np

import spla
from spla.backends.cuda.cusparse import spmm_anchor
from spla.bench import corpus


def main(family: str, nnz: int, k: int, dtype: str, kernel: str) -> None:
    host = corpus.build(family, nnz)
    A = host.astype(dtype).to_device()
    X = cupy.asarray(np.random.default_rng(0).standard_normal((A.n_cols, k)).astype(dtype))
    Y = cupy.empty((A.n_rows, k), dtype)
    for _ in range(3):
        spla.spmm(A, X, out=Y, kernel=kernel)
    cupy.cuda.get_current_stream().synchronize()
    cupy.cuda.runtime.profilerStart()
    for _ in range(2):
        spla.spmm(A, X, out=Y, kernel=kernel)
    cupy.cuda.get_current_stream().synchronize()
    cupy.cuda.runtime.profilerStop()
    exact = host.to_device().to_cupyx() @ X.astype(np.float64)
    error = float(cupy.linalg.norm(Y - exact) / cupy.linalg.norm(exact))
    kept = f", cuSPARSE {spmm_anchor(A, X, Y).name}" if kernel == "cusparse" else ""
    print(f"{family} {kernel} {dtype} k={k}: relative error {error:.1e}{kept}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1], int(float(sys.argv[2])), int(sys.argv[3]), sys.argv[4], sys.argv[5])
