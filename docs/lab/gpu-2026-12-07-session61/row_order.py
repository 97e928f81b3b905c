"""Session 61 (for the next call): does the order rows are visited in decide SpMM's L2 reuse past k = 16?

powerlaw-heavy's columns are local to its rows, cuSPARSE walks rows in order and gathers X at up to 5.2 TB/s
(over DRAM), adaptive visits them by length class. Here each kernel runs on A and on A with its rows in a random
order (the same rows, so the same gathers, in another order), each checked against a float64 product, then timed
by device time in turns (3 rounds). If row order is what cuSPARSE's lead rests on, the random order slows
cuSPARSE far more than adaptive. Writes row_order.json to the folder given.

    PYTHONPATH=. python3 docs/lab/gpu-2026-12-07-session61/row_order.py OUT_FOLDER [FAMILY] [NNZ]
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import cupy
import numpy as np

import spla
from spla import bench
from spla.bench import corpus
from spla.bench.spmv import time_rounds

KS = (16, 64)
KERNELS = ("adaptive", "fused", "subwarp", "cusparse")
TOLERANCE = {"float32": 1e-4, "float64": 1e-12}


def main(out: Path, family: str, nnz: int) -> None:
    out.mkdir(parents=True, exist_ok=True)
    host = corpus.build(family, nnz).to_scipy().tocsr()
    order = np.random.default_rng(0).permutation(host.shape[0])
    matrices = {"rows in order": host, "rows shuffled": host[order].tocsr()}
    exact = {label: spla.CSRMatrix.from_scipy(S).to_device().to_cupyx() for label, S in matrices.items()}  # float64
    records = []
    for dtype in ("float32", "float64"):
        on_device = {label: spla.CSRMatrix.from_scipy(S.astype(dtype)).to_device() for label, S in matrices.items()}
        for k in KS:
            X = cupy.random.default_rng(k).uniform(-1, 1, (host.shape[1], k)).astype(dtype)
            runs = {}
            for label, A in on_device.items():
                want = exact[label] @ X.astype(np.float64)
                Y = cupy.empty((A.n_rows, k), dtype)
                for kernel in KERNELS:
                    if kernel == "fused" and k > 16:
                        continue  # fused past 16 runs adaptive
                    spla.spmm(A, X, out=Y, kernel=kernel)
                    error = float(cupy.linalg.norm(Y - want) / cupy.linalg.norm(want))
                    if error <= TOLERANCE[dtype]:
                        runs[f"{kernel}, {label}"] = lambda A=A, X=X, Y=Y, kernel=kernel: spla.spmm(A, X, out=Y,
                                                                                                   kernel=kernel)
                    else:
                        print(f"{kernel}, {label}: FAILED CHECK, error {error:.1e}", flush=True)
                del want
            _, device = time_rounds(cupy, runs, rounds=3, budget_s=0.02)
            us = {name: float(np.median(v)) for name, v in device.items()}
            records.append({"family": family, "dtype": dtype, "k": k, "device_us": us})
            for kernel in KERNELS:
                ordered, shuffled = us.get(f"{kernel}, rows in order"), us.get(f"{kernel}, rows shuffled")
                if ordered and shuffled:
                    print(f"{family} {dtype} k={k} {kernel}: in order {ordered:.1f} us, shuffled {shuffled:.1f} us "
                          f"({shuffled / ordered:.2f}x)", flush=True)
            (out / "row_order.json").write_text(json.dumps({"environment": bench.environment(),
                                                            "records": records}, indent=1))


if __name__ == "__main__":
    main(Path(sys.argv[1]), sys.argv[2] if len(sys.argv) > 2 else "powerlaw-heavy",
         int(float(sys.argv[3])) if len(sys.argv) > 3 else 8_000_000)
