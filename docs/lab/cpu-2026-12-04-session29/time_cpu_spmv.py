"""The CPU backend's threaded SpMV against SciPy's kernel, and the nnz cut between them.

Each matrix in float32 and float64: SciPy's ``S @ x`` and ``spla.backends.cpu.csr_product`` forced
onto every thread (THREAD_MIN_NNZ = 1), interleaved in 7 rounds, each result checked equal to
SciPy's bit for bit. The cut ``threads from 2 * THREAD_MIN_NNZ nonzeros`` is fitted on the 2D
Poisson grids and reported on the other matrices (random rows, power laws, a 3D grid, gen:weblike).

    PYTHONPATH=. python3 docs/lab/cpu-2026-12-04-session29/time_cpu_spmv.py --out DIR
"""

import argparse
import json
from pathlib import Path

import numpy as np

import spla
from spla.backends import cpu
from spla.bench.timing import host_turns

FIT = [f"gen:poisson2d:{n}" for n in (200, 300, 400, 500, 700, 1024, 1500)]
HELD_OUT = [f"gen:random:{n}:8" for n in (40_000, 80_000, 125_000, 200_000, 400_000)] + [
    "gen:poisson3d:64", "gen:poisson3d:100", "gen:powerlaw:300000:6", "gen:powerlaw:1000000:10", "gen:weblike"]


def quality(rows, cut):
    ratios = np.array([(r["threads"] if r["nnz"] >= cut else r["scipy"]) / min(r["threads"], r["scipy"])
                       for r in rows])
    return {"cut_nnz": cut, "runs": len(rows), "geomean_over_best": float(np.exp(np.log(ratios).mean())),
            "worst_over_best": float(ratios.max()), "within_10pct": int((ratios <= 1.1).sum())}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    code_cut = 2 * cpu.THREAD_MIN_NNZ
    cpu.THREAD_MIN_NNZ = 1
    rows = []
    for group, sources in (("fit", FIT), ("held-out", HELD_OUT)):
        for source in sources:
            for dtype in (np.float32, np.float64):
                A = spla.load(source).astype(dtype).to_host()
                S = A.to_scipy()
                x = np.random.default_rng(0).standard_normal(A.n_cols).astype(dtype)
                assert np.array_equal(cpu.csr_product(A, x), S @ x), source
                t = host_turns({"scipy": lambda: S @ x, "threads": lambda: cpu.csr_product(A, x)}, rounds=7,
                               budget_s=0.02)
                rows.append({"group": group, "source": source, "dtype": np.dtype(dtype).name, "nnz": A.nnz, **t})
                print(f"{group:<8} {source:<26} {np.dtype(dtype).name:<7} nnz {A.nnz:>10,} scipy "
                      f"{t['scipy'] * 1e3:8.3f} ms threads {t['threads'] * 1e3:8.3f} ms "
                      f"({t['scipy'] / t['threads']:.2f}x)", flush=True)
    fit = [r for r in rows if r["group"] == "fit"]
    held = [r for r in rows if r["group"] == "held-out"]
    sizes = sorted({r["nnz"] for r in fit})
    candidates = [sizes[0]] + [(a + b) // 2 for a, b in zip(sizes, sizes[1:])] + [sizes[-1] + 1]
    best = min(candidates, key=lambda cut: quality(fit, cut)["geomean_over_best"])
    summary = {"threads": cpu.threads(), "fitted": quality(fit, best), "held_out": quality(held, best),
               "code_cut": {"fit": quality(fit, code_cut), "held_out": quality(held, code_cut),
                            "all": quality(rows, code_cut)}}
    for label, q in (("fitted on the grids", summary["fitted"]), ("held out", summary["held_out"]),
                     ("code's cut, all", summary["code_cut"]["all"])):
        print(f"{label}: cut {q['cut_nnz']:,} nnz; {q['runs']} runs; rule / faster path geomean "
              f"{q['geomean_over_best']:.3f}, worst {q['worst_over_best']:.2f}, within 10% {q['within_10pct']}")
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "time_cpu_spmv.json").write_text(json.dumps({"rows": rows, **summary}, indent=2))


if __name__ == "__main__":
    main()
