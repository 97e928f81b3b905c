"""Session 65: row statistics of every matrix session 64's SpMM tuner timed (calls 2-6), host only.

Rebuilds each matrix (the corpus families at the run's size and seed, the real ones from ../shared/matrices)
and writes features.json: {"<set>/<matrix>": {n_rows, n_cols, nnz, mean, longest, cv, over256, dia_k,
dia_applies}},
dia_k True where auto's SpMV runs dia (so the SpMM rule runs dia for 2 <= k <= DIA_MAX_K), dia_applies where
A's rows lie on a few diagonals (spla.planning.dia.applies).

    PYTHONPATH=. python3 docs/lab/gpu-2026-12-07-session65/features.py
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

import spla
from spla.bench import corpus
from spla.planning import dia
from spla.planning.spmv import choose_kernel as spmv_choice
from spla.planning.spmv import parse_kernel

HERE = Path(__file__).resolve().parent
RUNS = HERE.parent / "gpu-2026-12-07-session64" / "results"
REAL = HERE.parents[3] / "shared" / "matrices"
# set name -> (folder of tuned_spmm.json, size, seed); None size: the real matrices
SETS = {"real": ("call4/c4", None, 0), "1e5": ("call5/c5/1e5", 100_000, 0), "3e5": ("call5/c5/3e5", 300_000, 0),
        "2e5": ("call6/c6/2e5", 200_000, 7), "6e5": ("call6/c6/6e5", 600_000, 7),
        "4M": ("call2/c2", 4_000_000, 0), "4M-k32": ("call3/c3", 4_000_000, 0)}


def stats(A) -> dict:
    lengths = np.diff(A.indptr)
    mean = float(lengths.mean()) if lengths.size else 0.0
    return {"n_rows": int(A.n_rows), "n_cols": int(A.n_cols), "nnz": int(A.nnz), "mean": mean,
            "longest": int(lengths.max(initial=0)), "cv": float(lengths.std() / mean) if mean else 0.0,
            "over256": int((lengths > 256).sum()),
            "dia_k": parse_kernel(spmv_choice(A))[0] == "dia", "dia_applies": bool(dia.applies(A))}


def main() -> None:
    out = {}
    for name, (folder, size, seed) in SETS.items():
        records = json.loads((RUNS / folder / "tuned_spmm.json").read_text())["records"]
        for matrix in sorted({r["matrix"] for r in records}):
            if size is None:
                A = spla.load(str(next(REAL.glob(matrix + ".mtx*")))).astype("float64")
            else:
                A = corpus.build(matrix, size, seed=seed)
            out[f"{name}/{matrix}"] = stats(A)
            print(name, matrix, out[f"{name}/{matrix}"], flush=True)
    (HERE / "features.json").write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
