"""Session 56, call 4: SpMM over dia against the row kernels at k = 2, 4, 8, 16, 32.

Per matrix and dtype, every kernel is checked against a float64 product first (relative Frobenius
error), then timed in turns (3 rounds, the median of each). Fit half: bench_spmm.py's stencils and
band (call 2 timed them at k = 8 and 32); report half: corpus stencils and a band no SpMM rule saw.
Prints one line per (matrix, dtype, k) and writes spmm_k.json to the folder given.

    PYTHONPATH=. python3 docs/lab/gpu-2026-12-06-session56/spmm_k.py OUT_FOLDER
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import cupy
import cupyx.scipy.sparse as cusp
import numpy as np

import spla
from spla import bench
from spla.bench import corpus
from spla.io import generators
from spla.planning import dia
from spla.planning import spmm as spmm_planning

KS = (2, 4, 8, 16, 32)
MATRICES = [  # (half, name, maker)
    ("fit", "poisson2d-4096", lambda: generators.from_spec("gen:poisson2d:4096")),
    ("fit", "poisson3d-160", lambda: generators.from_spec("gen:poisson3d:160")),
    ("fit", "banded-1M-20", lambda: generators.from_spec("gen:banded:1000000:20")),
    ("report", "stencil27-30M", lambda: corpus.build("stencil27", 30_000_000)),
    ("report", "stencil9-20M", lambda: corpus.build("stencil9", 20_000_000)),
    ("report", "banded-fixed-20M", lambda: corpus.build("banded-fixed", 20_000_000)),
]
TOLERANCE = {"float32": 1e-4, "float64": 1e-12}


def kernels(k: int) -> list[str]:
    small = ["regk", "fused"] if k <= 16 else []
    return ["dia", *small, "subwarp", "warp", "auto"]


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    records = []
    for half, name, make in MATRICES:
        host = make()
        for dtype in ("float32", "float64"):
            A = host.astype(dtype).to_device()
            if not dia.applies(A):
                print(f"{name} {dtype}: no diagonals ({dia.structure(A)}); skipped", flush=True)
                continue
            A64 = cusp.csr_matrix((cupy.asarray(host.data, dtype=np.float64), cupy.asarray(host.indices),
                                   cupy.asarray(host.indptr)), shape=host.shape)
            for k in KS:
                X = cupy.random.default_rng(k).uniform(-1, 1, (host.shape[1], k)).astype(dtype)
                want = A64 @ X.astype(np.float64)
                runs, status = {}, {}
                for kernel in kernels(k):
                    got = spla.spmm(A, X, kernel=kernel)
                    error = float(cupy.linalg.norm(got - want) / cupy.linalg.norm(want))
                    status[kernel] = error
                    if error <= TOLERANCE[dtype]:
                        runs[kernel] = lambda A=A, X=X, kernel=kernel: spla.spmm(A, X, kernel=kernel)
                del want
                samples = bench.time_in_turns(runs, rounds=3, budget_s=0.03, max_repeat=200, warmup=2)
                ms = {kn: float(np.median(v)) for kn, v in samples.items()}
                rows = {kn: t for kn, t in ms.items() if kn not in ("dia", "auto")}
                best = min(rows, key=rows.get)
                record = {"half": half, "matrix": name, "dtype": dtype, "k": k, "ms": ms, "errors": status,
                          "auto": spmm_planning.choose_kernel(A, k), "best_row_kernel": best,
                          "dia_over_best_row": rows[best] / ms["dia"] if "dia" in ms else None}
                records.append(record)
                print(f"{name} {dtype} k={k}: " + " ".join(f"{kn} {t:.4f}" for kn, t in ms.items())
                      + f" | dia {record['dia_over_best_row']:.2f}x {best} | auto={record['auto']}", flush=True)
                (out / "spmm_k.json").write_text(json.dumps({"environment": bench.environment(),
                                                             "records": records}, indent=1))
            A = A64 = None
            cupy.get_default_memory_pool().free_all_blocks()


if __name__ == "__main__":
    main(Path(sys.argv[1]))
