"""Session 57: SpMM on a column-major (F-ordered) X where auto's rule now runs subwarp.

regk reads a column-major X as it is; subwarp (auto's kernel for short rows since session 57) copies
it to row-major first. Per matrix (the regk class of regk_cut.py), dtype and k: regk and auto on the
F-ordered X, and auto on the same X in C order, each checked against a float64 product, then timed in
turns. Writes f_order.json.

    PYTHONPATH=. python3 docs/lab/gpu-2026-12-06-session57/f_order.py OUT_FOLDER
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
from spla.io import generators
from spla.planning import spmm as spmm_planning

NNZ = 8_000_000
MATRICES = [
    ("random-4M-16", lambda: generators.from_spec("gen:random:4000000:16")),
    ("random-uniform", lambda: corpus.build("random-uniform", NNZ)),
    ("knn-window", lambda: corpus.build("knn-window", NNZ)),
    ("short-random", lambda: corpus.build("short-random", NNZ)),
    ("zipf-columns", lambda: corpus.build("zipf-columns", NNZ)),
    ("block-sparse", lambda: corpus.build("block-sparse", NNZ)),
]
TOLERANCE = {"float32": 1e-4, "float64": 1e-12}


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    records = []
    for name, make in MATRICES:
        host = make()
        A64 = host.astype(np.float64).to_device().to_cupyx()
        for dtype in ("float32", "float64"):
            A = host.astype(dtype).to_device()
            for k in (8, 16):
                C = cupy.random.default_rng(k).uniform(-1, 1, (host.shape[1], k)).astype(dtype)
                F = cupy.asfortranarray(C)
                want = A64 @ C.astype(np.float64)
                cases = {"regk F": (F, "regk"), "auto F": (F, "auto"), "auto C": (C, "auto")}
                runs = {}
                for label, (X, kernel) in cases.items():
                    error = float(cupy.linalg.norm(spla.spmm(A, X, kernel=kernel) - want) / cupy.linalg.norm(want))
                    assert error <= TOLERANCE[dtype], (name, dtype, k, label, error)
                    runs[label] = lambda A=A, X=X, kernel=kernel: spla.spmm(A, X, kernel=kernel)
                del want
                samples = bench.time_in_turns(runs, rounds=3, budget_s=0.03, max_repeat=200, warmup=2)
                ms = {label: float(np.median(t)) for label, t in samples.items()}
                record = {"matrix": name, "dtype": dtype, "k": k, "ms": ms, "auto": spmm_planning.choose_kernel(A, k),
                          "auto_F_over_regk_F": ms["auto F"] / ms["regk F"]}
                records.append(record)
                print(f"{name} {dtype} k={k}: " + " ".join(f"{lb} {t:.4f}" for lb, t in ms.items())
                      + f" | auto ({record['auto']}) on F X at {record['auto_F_over_regk_F']:.2f}x regk's time",
                      flush=True)
                (out / "f_order.json").write_text(json.dumps({"environment": bench.environment(),
                                                              "records": records}, indent=1))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
