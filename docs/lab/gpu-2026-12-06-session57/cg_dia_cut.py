"""Session 57: CG's one-launch loop against its captured graph where auto's SpMV runs dia.

``CG_LOOP_MAX_ROWS`` (2^22) was measured in session 10 over CSR row kernels; since session 56 both
paths read Poisson's matrix through dia's palette. Per side of a 2-D Poisson matrix (float64), CG
runs a fixed number of iterations (rtol 1e-30 never stops it) through the loop (the cut raised past
n) and through the graph (the cut at 0), in turns, 3 rounds; the two answers are compared first
(the graph replays the same kernels' arithmetic in another order of launches: same bits expected
where both fuse the same product). Prints a line per side and writes cg_dia_cut.json.

    PYTHONPATH=. python3 docs/lab/gpu-2026-12-06-session57/cg_dia_cut.py OUT_FOLDER
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import cupy
import numpy as np

from spla import bench, linalg
from spla.backends.cuda import solvers
from spla.io import generators
from spla.planning.spmv import describe_choice

SIDES = (1024, 1448, 2048, 2896, 4096)
ITERATIONS = 400
ROUNDS = 3
CUT = {"loop": 2**26, "graph": 0}


def solve(A, b, mode):
    solvers.CG_LOOP_MAX_ROWS = CUT[mode]
    counter = linalg.IterationCounter()
    cupy.cuda.get_current_stream().synchronize()
    start = time.perf_counter()
    x, _ = linalg.cg(A, b, rtol=1e-30, maxiter=ITERATIONS, callback=counter)
    cupy.cuda.get_current_stream().synchronize()
    return x, counter.iterations, time.perf_counter() - start


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    for side in SIDES:
        A = generators.from_spec(f"gen:poisson2d:{side}").to_device()
        b = cupy.asarray(np.random.default_rng(0).standard_normal(A.n_rows))
        answers = {mode: solve(A, b, mode) for mode in CUT}  # compiles, plans, and checks
        (x_loop, it_loop, _), (x_graph, it_graph, _) = answers["loop"], answers["graph"]
        difference = float(cupy.linalg.norm(x_loop - x_graph) / cupy.linalg.norm(x_loop))
        times: dict[str, list[float]] = {mode: [] for mode in CUT}
        for _ in range(ROUNDS):
            for mode in CUT:
                times[mode].append(solve(A, b, mode)[2] / ITERATIONS)
        us = {mode: float(np.median(t)) * 1e6 for mode, t in times.items()}
        row = {"side": side, "n": A.n_rows, "spmv": describe_choice(A)["kernel"], "iterations": [it_loop, it_graph],
               "relative_difference": difference, "us_per_iteration": us, "rounds": times,
               "loop_over_graph": us["loop"] / us["graph"]}
        rows.append(row)
        print(f"{side}^2 (n {A.n_rows}, {row['spmv']}): loop {us['loop']:.1f} us, graph {us['graph']:.1f} us, "
              f"loop/graph {row['loop_over_graph']:.3f}; iterations {it_loop}/{it_graph}, x differs {difference:.1e}",
              flush=True)
        (out / "cg_dia_cut.json").write_text(json.dumps({"environment": bench.environment(), "rows": rows}, indent=1))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
