"""The CG loop's thread rule (fitted on 2D Poisson, time_cg_loop.py) on matrices it was not fitted on.

SPD systems from the shared matrices (the SPD ones as they are; every symmetric graph's Laplacian
plus 1% of its mean degree on the diagonal), 3D Poisson and random SPD matrices. Jacobi-CG to
rtol 1e-8 from a random b, whole solves, ~3e8 nonzeros of products a round, three rounds
interleaved, medians: NumPy's steps, the C loop on 1 and on 2 threads, and the code's default
(`auto`: the rule's thread count). Run from the repository root with the shared matrices in DIR:
python docs/lab/cpu-2026-12-05-session30/time_cg_heldout.py DIR
"""
import os
import sys
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp

ROOT = Path(__file__).resolve().parents[3]
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "linalg")]
import spla  # noqa: E402
from spla.backends import cpu  # noqa: E402
from spla.linalg import IterationCounter, cg, jacobi  # noqa: E402
from spla.linalg._kernels import HostKernels  # noqa: E402

C_LOOP = HostKernels.cg_loop
RULE = cpu.CG_THREAD_MIN_NNZ
SPD = ("1138_bus", "bcsstk13", "bcsstk21")


def systems(folder: Path):
    for path in sorted(folder.glob("*.mtx.gz")):
        name = path.name.removesuffix(".mtx.gz")
        S = spla.load(str(path)).to_scipy().astype(np.float64)
        if S.shape[0] != S.shape[1] or (abs(S - S.T) > 1e-12 * abs(S).max()).nnz:
            continue
        if name not in SPD:
            pattern = (S != 0).astype(np.float64)
            pattern.setdiag(0)
            pattern.eliminate_zeros()
            degree = np.asarray(pattern.sum(axis=1)).ravel()
            S = (sp.diags(degree + 0.01 * max(degree.mean(), 1.0)) - pattern).tocsr()
            name += " (laplacian)"
        yield name, S
    for n in (16, 32, 64):
        one = sp.diags([-1, 2, -1], [-1, 0, 1], shape=(n, n))
        eye = sp.identity(n)
        yield f"poisson3d {n}^3", (sp.kron(sp.kron(one, eye), eye) + sp.kron(sp.kron(eye, one), eye)
                                   + sp.kron(sp.kron(eye, eye), one)).tocsr()
    rng = np.random.default_rng(5)
    for n in (2_000, 20_000, 200_000):
        B = sp.random(n, n, density=3 / n, random_state=rng, format="csr")
        yield f"random spd {n:,}", (B @ B.T + sp.identity(n)).tocsr()


def per_iteration(A, M, rhs, mode):
    HostKernels.cg_loop = (lambda self, matrix, jacobi: None) if mode == "numpy" else C_LOOP
    cpu.CG_THREAD_MIN_NNZ = RULE if mode == "auto" else 1
    os.environ[cpu.THREADS_ENV] = {"numpy": "1", "1": "1", "2": "2", "auto": "2"}[mode]
    counter = IterationCounter()
    start = time.perf_counter()
    for b in rhs:
        cg(A, b, rtol=1e-8, maxiter=20_000, M=M, callback=counter)
    return (time.perf_counter() - start) / counter.iterations * 1e6, counter.iterations / len(rhs)


def main():
    rng = np.random.default_rng(0)
    print(f"{'matrix':<28} {'nnz':>9} {'its':>6} {'thr':>3}  {'numpy us':>9} {'C 1':>8} {'C 2':>8} {'auto':>8}  "
          f"{'auto/best':>9} {'auto/numpy':>10}")
    ratios, gains = [], []
    for name, S in systems(Path(sys.argv[1])):
        A = spla.CSRMatrix.from_scipy(S)
        M = jacobi(A)
        _, its = per_iteration(A, M, [rng.standard_normal(A.n_rows)], "auto")
        solves = max(1, min(200, round(3e8 / (A.nnz * max(its, 1)))))
        rhs = [rng.standard_normal(A.n_rows) for _ in range(solves)]
        times = {m: [] for m in ("numpy", "1", "2", "auto")}
        for _ in range(3):
            for mode in times:
                times[mode].append(per_iteration(A, M, rhs, mode)[0])
        med = {m: float(np.median(v)) for m, v in times.items()}
        threads = max(1, min(2, A.nnz // RULE))
        ratio = med["auto"] / min(med["1"], med["2"])
        ratios.append(ratio)
        gains.append(med["numpy"] / med["auto"])
        print(f"{name:<28} {A.nnz:>9,} {its:>6.0f} {threads:>3}  "
              f"{med['numpy']:>9.1f} {med['1']:>8.1f} {med['2']:>8.1f} {med['auto']:>8.1f}  "
              f"{ratio:>8.2f}x {gains[-1]:>9.2f}x", flush=True)
    print(f"auto against the faster thread count: geomean {np.exp(np.mean(np.log(ratios))):.3f}, "
          f"worst {max(ratios):.2f}; "
          f"against NumPy's steps: geomean {np.exp(np.mean(np.log(gains))):.2f}x, least {min(gains):.2f}x")
    HostKernels.cg_loop = C_LOOP


if __name__ == "__main__":
    main()
