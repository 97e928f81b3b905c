"""Overhead of spla.distributed on one rank: SpMV against spla.spmv, CG per iteration against spla.linalg.cg.

Run: ``mpiexec -n 1 python scripts/bench_distributed.py [SOURCE ...] [--device cpu|gpu] [--rounds R]``
(default sources gen:poisson2d:1024 and gen:poisson3d:96). Both sides run on
the same matrix, dtype float64, in alternating rounds; medians are printed.
With more ranks it reports the distributed figures only (rank 0 prints).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import spla  # noqa: E402
from spla.distributed import DistCSRMatrix, cg  # noqa: E402


def _sync(xp):
    if xp is not np:
        xp.cuda.get_current_stream().synchronize()


def _timed(fn, xp, repeat):
    _sync(xp)
    start = time.perf_counter()
    for _ in range(repeat):
        fn()
    _sync(xp)
    return (time.perf_counter() - start) / repeat


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("sources", nargs="*", default=["gen:poisson2d:1024", "gen:poisson3d:96"])
    parser.add_argument("--device", choices=["cpu", "gpu"], default="cpu")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--repeat", type=int, default=20, help="SpMVs per round")
    parser.add_argument("--cg-iterations", type=int, default=50)
    args = parser.parse_args(argv)
    from mpi4py import MPI

    comm = MPI.COMM_WORLD
    single = comm.size == 1
    if comm.rank == 0:
        print(f"{'matrix':<22} {'rows':>10} {'nnz':>11} {'spmv ms':>9} {'dist ms':>9} {'ratio':>6} "
              f"{'cg ms/it':>9} {'dist ms/it':>10} {'ratio':>6}")
    for source in args.sources:
        A = spla.load(source, dtype=np.float64) if comm.rank == 0 else None
        D = DistCSRMatrix.from_global(A, device=args.device)
        xp = D.xp
        rng = np.random.default_rng(0)
        n = D.shape[0]
        x_global = rng.standard_normal(n) if comm.rank == 0 else None
        x = D.distribute_vector(x_global)
        b = D.distribute_vector(x_global, space="range")
        local = A.to_device() if (single and args.device == "gpu") else A
        x_single = xp.asarray(x_global) if single else None
        if single:  # results first: same answer before any timing
            np.testing.assert_allclose(D.gather(D @ x), spla.spmv(A, x_global), rtol=1e-12, atol=1e-12)
        spmv_single, spmv_dist, cg_single, cg_dist = [], [], [], []
        iterations = args.cg_iterations
        for _ in range(args.rounds):
            comm.Barrier()
            spmv_dist.append(_timed(lambda D=D, x=x: D @ x, xp, args.repeat))
            comm.Barrier()
            start = time.perf_counter()
            cg(D, b, rtol=1e-30, maxiter=iterations)
            _sync(xp)
            cg_dist.append((time.perf_counter() - start) / iterations)
            if single:
                spmv_single.append(_timed(lambda A=local, v=x_single: spla.spmv(A, v), xp, args.repeat))
                start = time.perf_counter()
                spla.linalg.cg(local, x_single, rtol=1e-30, maxiter=iterations, check_every=1)
                _sync(xp)
                cg_single.append((time.perf_counter() - start) / iterations)
        if comm.rank != 0:
            continue
        med = {k: float(np.median(v)) * 1e3 if v else float("nan") for k, v in
               {"s": spmv_single, "d": spmv_dist, "cs": cg_single, "cd": cg_dist}.items()}
        print(f"{source:<22} {n:>10,} {A.nnz:>11,} {med['s']:>9.3f} {med['d']:>9.3f} {med['d'] / med['s']:>6.3f} "
              f"{med['cs']:>9.3f} {med['cd']:>10.3f} {med['cd'] / med['cs']:>6.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
