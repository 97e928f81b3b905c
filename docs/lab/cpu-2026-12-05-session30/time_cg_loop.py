"""CPU CG an iteration on 2D Poisson: NumPy's steps, the C loop on one thread, on two.

Each solve runs to rtol 1e-8 from a random b (whole solves, set-up included, as a user pays);
enough solves a round for ~1e9 nonzeros of products; five rounds, the three ways interleaved,
medians. Run from the repository root: python docs/lab/cpu-2026-12-05-session30/time_cg_loop.py
"""
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[3]
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "linalg")]
from precond_systems import poisson2d  # noqa: E402

import spla  # noqa: E402
from spla.backends import cpu  # noqa: E402
from spla.linalg import IterationCounter, cg  # noqa: E402
from spla.linalg._kernels import HostKernels  # noqa: E402

C_LOOP = HostKernels.cg_loop
cpu.CG_THREAD_MIN_NNZ = 1  # the thread count is the one asked for, whatever the size
SIZES = [int(s) for s in sys.argv[1:]] or [32, 48, 64, 96, 128, 256, 512, 1024]


def per_iteration(A, rhs, mode):
    HostKernels.cg_loop = (lambda self, matrix, jacobi: None) if mode == "numpy" else C_LOOP
    os.environ[cpu.THREADS_ENV] = "1" if mode == "numpy" else mode
    counter = IterationCounter()
    start = time.perf_counter()
    for b in rhs:
        _, info = cg(A, b, rtol=1e-8, maxiter=100_000, callback=counter)
        assert info == 0
    return (time.perf_counter() - start) / counter.iterations * 1e3, counter.iterations / len(rhs)


rng = np.random.default_rng(0)
print(f"{'grid':>6} {'nnz':>11} {'its':>6} {'solves':>6}  {'numpy ms':>9} {'C 1 thr':>9} {'C 2 thr':>9}  "
      f"{'1thr/numpy':>10} {'2thr/1thr':>9} {'2thr/numpy':>10}")
for n in SIZES:
    A = spla.CSRMatrix.from_scipy(poisson2d(n))
    its = 3.2 * n  # CG's iterations to 1e-8 on this grid, about
    solves = max(1, round(1e9 / (A.nnz * its)))
    rhs = [rng.standard_normal(A.n_rows) for _ in range(solves)]
    times = {m: [] for m in ("numpy", "1", "2")}
    for _ in range(5):
        for mode in times:
            t, iterations = per_iteration(A, rhs, mode)
            times[mode].append(t)
    med = {m: float(np.median(v)) for m, v in times.items()}
    print(f"{n:>4}^2 {A.nnz:>11,} {iterations:>6.0f} {solves:>6}  "
          f"{med['numpy']:>9.4f} {med['1']:>9.4f} {med['2']:>9.4f}  "
          f"{med['numpy'] / med['1']:>9.2f}x {med['1'] / med['2']:>8.2f}x {med['numpy'] / med['2']:>9.2f}x", flush=True)
HostKernels.cg_loop = C_LOOP
