"""Session 57: the SpMM launches Nsight Compute profiles (dia's, and subwarp's beside it).

Builds a 2-D Poisson matrix, checks the kernel's product against a float64 one, then runs it a few
times so ``ncu -k regex:... -s N -c M`` can pick launches past the first (the compile and plan).

    ncu ... python3 docs/lab/gpu-2026-12-06-session57/profile_spmm.py SIDE K DTYPE KERNEL
"""

from __future__ import annotations

import sys

import cupy
import numpy as np

import spla
from spla.io import generators


def main(side: int, k: int, dtype: str, kernel: str) -> None:
    A = generators.from_spec(f"gen:poisson2d:{side}").astype(dtype).to_device()
    X = cupy.asarray(np.random.default_rng(0).standard_normal((A.n_cols, k)).astype(dtype))
    Y = spla.spmm(A, X, kernel=kernel)
    exact = A.astype(np.float64).to_cupyx() @ X.astype(np.float64)
    error = float(cupy.linalg.norm(Y - exact) / cupy.linalg.norm(exact))
    print(f"{kernel} {dtype} k={k}: relative error {error:.1e}", flush=True)
    assert error < (1e-4 if dtype == "float32" else 1e-12)
    for _ in range(3):
        spla.spmm(A, X, kernel=kernel)
    cupy.cuda.get_current_stream().synchronize()


if __name__ == "__main__":
    main(int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4])
