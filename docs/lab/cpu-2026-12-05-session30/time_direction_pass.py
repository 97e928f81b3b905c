"""The CG loop's direction formed in a pass of its own (one gather a nonzero, a barrier more) against
at each nonzero (two gathers), by nonzeros a row, on one thread and on two.

The systems of time_cg_heldout.py plus 2D Poisson and banded SPD matrices of 5-81 nonzeros a row.
Jacobi-CG to rtol 1e-8, whole solves, ~2e8 nonzeros of products a round, three rounds interleaved,
medians. The cut CG_DIRECTION_PASS_ROW is fitted on the systems at even positions (in the order
printed) and reported on the odd ones. Run from the repository root:
python docs/lab/cpu-2026-12-05-session30/time_direction_pass.py shared-matrices
"""
import importlib.util
import os
import sys
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp

HERE = Path(__file__).resolve().parent
spec = importlib.util.spec_from_file_location("time_cg_heldout", HERE / "time_cg_heldout.py")
heldout = importlib.util.module_from_spec(spec)
spec.loader.exec_module(heldout)  # its systems and imports; its run is under __main__
cpu, cg, jacobi, spla = heldout.cpu, heldout.cg, heldout.jacobi, heldout.spla
IterationCounter = heldout.IterationCounter
folder = sys.argv[1]


def banded(n, half):
    offsets = range(-half, half + 1)
    diagonals = [np.full(n - abs(k), -1.0 if k else 2.0 * half + 0.5) for k in offsets]
    return sp.diags(diagonals, list(offsets), format="csr")


def all_systems():
    yield from heldout.systems(Path(folder))
    for half in (2, 5, 10, 20, 40):
        yield f"band 100,000 half-width {half}", banded(100_000, half)


def per_iteration(A, M, rhs, direction_pass, threads):
    cpu.CG_DIRECTION_PASS_ROW = 0 if direction_pass else 10**9
    cpu.CG_THREAD_MIN_NNZ = 1
    os.environ[cpu.THREADS_ENV] = str(threads)
    counter = IterationCounter()
    start = time.perf_counter()
    for b in rhs:
        cg(A, b, rtol=1e-8, maxiter=20_000, M=M, callback=counter)
    return (time.perf_counter() - start) / counter.iterations * 1e6, counter.iterations / len(rhs)


rng = np.random.default_rng(0)
rows = []
print(f"{'matrix':<40} {'nnz/row':>7}  {'fused 1':>8} {'pass 1':>8} {'fused 2':>8} {'pass 2':>8}  "
      f"{'pass/fused 1':>12} {'pass/fused 2':>12}")
for name, S in all_systems():
    A = spla.CSRMatrix.from_scipy(S.astype(np.float64))
    M = jacobi(A)
    _, its = per_iteration(A, M, [rng.standard_normal(A.n_rows)], False, 1)
    solves = max(1, min(100, round(2e8 / (A.nnz * max(its, 1)))))
    rhs = [rng.standard_normal(A.n_rows) for _ in range(solves)]
    ways = [(False, 1), (True, 1), (False, 2), (True, 2)]
    times = {w: [] for w in ways}
    for _ in range(3):
        for w in ways:
            times[w].append(per_iteration(A, M, rhs, *w)[0])
    med = {w: float(np.median(v)) for w, v in times.items()}
    per_row = A.nnz / A.n_rows
    one, two = med[(True, 1)] / med[(False, 1)], med[(True, 2)] / med[(False, 2)]
    rows.append((name, per_row, one, two))
    print(f"{name:<40} {per_row:>7.1f}  {med[(False, 1)]:>8.1f} {med[(True, 1)]:>8.1f} {med[(False, 2)]:>8.1f} "
          f"{med[(True, 2)]:>8.1f}  {one:>11.2f}x {two:>11.2f}x", flush=True)


def cost(cut, subset):
    """Geomean over one- and two-thread runs of (the chosen way's time / the faster way's)."""
    ratios = []
    for _, per_row, one, two in subset:
        for r in (one, two):
            chosen = r if per_row >= cut else 1.0
            ratios.append(chosen / min(r, 1.0))
    return float(np.exp(np.mean(np.log(ratios)))), max(ratios)


fit, held = rows[0::2], rows[1::2]
cuts = [4, 6, 8, 10, 12, 16, 20, 24, 32, 48, 64, 1e9]
best = min(cuts, key=lambda c: cost(c, fit)[0])
for c in cuts:
    print(f"cut {c:>6}: fitted half {cost(c, fit)[0]:.3f} (worst {cost(c, fit)[1]:.2f}), "
          f"held-out half {cost(c, held)[0]:.3f} (worst {cost(c, held)[1]:.2f})")
print(f"fitted cut: {best} nonzeros a row; on the held-out half {cost(best, held)[0]:.3f}, "
      f"worst {cost(best, held)[1]:.2f}")
