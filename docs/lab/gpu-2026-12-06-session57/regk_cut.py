"""Session 57: SpMM's regk cut (k <= 16) on irregular matrices, the lead from session 56's call 4.

Session 56 found subwarp 1.7-2.9x regk at k = 16 on stencils and bands (float64), where auto now runs
dia instead. Here: rows that auto's SpMM gives regk (mean <= 64, no long rows) or fused (skewed
rows), at k = 8, 12, 16, both dtypes; every kernel is checked against a float64 product first, then
timed in turns (3 rounds, the median of each). Fit half: bench_spmm.py's uniform rows and corpus
fit families; report half: corpus report families no SpMM rule saw. Prints one line per
(matrix, dtype, k) and writes regk_cut.json to the folder given.

    PYTHONPATH=. python3 docs/lab/gpu-2026-12-06-session57/regk_cut.py OUT_FOLDER
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
from spla.planning import spmm as spmm_planning

KS = (8, 12, 16)
NNZ = 8_000_000
MATRICES = [  # (half, name, maker)
    ("fit", "random-4M-16", lambda: generators.from_spec("gen:random:4000000:16")),
    ("fit", "weblike", lambda: generators.from_spec("gen:weblike")),
    ("fit", "random-uniform", lambda: corpus.build("random-uniform", NNZ)),
    ("fit", "knn-window", lambda: corpus.build("knn-window", NNZ)),
    ("report", "short-random", lambda: corpus.build("short-random", NNZ)),
    ("report", "zipf-columns", lambda: corpus.build("zipf-columns", NNZ)),
    ("report", "block-sparse", lambda: corpus.build("block-sparse", NNZ)),
    ("report", "multimodal", lambda: corpus.build("multimodal", NNZ)),
    ("report", "powerlaw-mid", lambda: corpus.build("powerlaw-mid", NNZ)),
]
KERNELS = ("regk", "fused", "subwarp", "warp", "adaptive", "auto")
TOLERANCE = {"float32": 1e-4, "float64": 1e-12}


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    records = []
    for half, name, make in MATRICES:
        host = make()
        A64 = cusp.csr_matrix((cupy.asarray(host.data, dtype=np.float64), cupy.asarray(host.indices),
                               cupy.asarray(host.indptr)), shape=host.shape)
        stats = spmm_planning._row_stats(host)
        for dtype in ("float32", "float64"):
            A = host.astype(dtype).to_device()
            for k in KS:
                X = cupy.random.default_rng(k).uniform(-1, 1, (host.shape[1], k)).astype(dtype)
                want = A64 @ X.astype(np.float64)
                runs, errors = {}, {}
                for kernel in KERNELS:
                    got = spla.spmm(A, X, kernel=kernel)
                    errors[kernel] = float(cupy.linalg.norm(got - want) / cupy.linalg.norm(want))
                    if errors[kernel] <= TOLERANCE[dtype]:
                        runs[kernel] = lambda A=A, X=X, kernel=kernel: spla.spmm(A, X, kernel=kernel)
                del want, got
                samples = bench.time_in_turns(runs, rounds=3, budget_s=0.03, max_repeat=200, warmup=2)
                ms = {kn: float(np.median(v)) for kn, v in samples.items()}
                named = {kn: t for kn, t in ms.items() if kn != "auto"}
                best = min(named, key=named.get)
                record = {"half": half, "matrix": name, "dtype": dtype, "k": k, "mean_row": stats[0],
                          "max_row": int(stats[1]), "ms": ms, "errors": errors,
                          "auto": spmm_planning.choose_kernel(A, k), "best": best,
                          "auto_over_best": ms["auto"] / named[best]}
                records.append(record)
                print(f"{name} {dtype} k={k} (mean {stats[0]:.1f}, max {int(stats[1])}): "
                      + " ".join(f"{kn} {t:.4f}" for kn, t in ms.items())
                      + f" | best {best}, auto={record['auto']} at {record['auto_over_best']:.2f}x best", flush=True)
                (out / "regk_cut.json").write_text(json.dumps({"environment": bench.environment(),
                                                               "records": records}, indent=1))
            A = None
        A64 = None


if __name__ == "__main__":
    main(Path(sys.argv[1]))
