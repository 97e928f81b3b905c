"""Overhead of spla.distributed on one rank: SpMV against spla.spmv, CG per iteration against spla.linalg.cg.

Run: ``mpiexec -n 1 python scripts/bench_distributed.py [SOURCE ...] [--device cpu|gpu] [--rounds R]``
(default sources gen:poisson2d:1024 and gen:poisson3d:96). Both sides run on
the same matrix, dtype float64, in alternating rounds; medians are printed.
Both CGs run the same iterations (``maxiter``, a tolerance never met) with the
same ``check_every`` (default: the library's, 8 on the GPU and 1 on the CPU),
so they do the same work and the same host reads; the one-rank results are
checked equal before anything is timed. With more ranks it reports the
distributed figures only (rank 0 prints).
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
    parser.add_argument("--check-every", type=int, default=None,
                        help="CG iterations between convergence checks, on both sides (default: the library's)")
    args = parser.parse_args(argv)
    check_every = args.check_every
    if check_every is None:
        check_every = spla.linalg.DEFAULT_GPU_CHECK_EVERY if args.device == "gpu" else 1
    from mpi4py import MPI

    comm = MPI.COMM_WORLD
    single = comm.size == 1
    if comm.rank == 0:
        print(f"{comm.size} rank(s), {args.device}, float64, CG check_every={check_every} on both sides")
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
        iterations = args.cg_iterations
        solve = {"rtol": 1e-30, "maxiter": iterations, "check_every": check_every}
        if single:  # results first: the same answers (so the same work) before any timing
            np.testing.assert_allclose(D.gather(D @ x), spla.spmv(A, x_global), rtol=1e-12, atol=1e-12)
            x_dist, info_dist = cg(D, b, **solve)
            x_one, info_one = spla.linalg.cg(local, x_single, **solve)
            assert info_dist == info_one, (info_dist, info_one)
            x_one = xp.asnumpy(x_one) if xp is not np else x_one
            np.testing.assert_allclose(D.gather(x_dist), x_one, rtol=1e-10, atol=1e-10 * np.abs(x_one).max())
        spmv_single, spmv_dist, cg_single, cg_dist = [], [], [], []
        for _ in range(args.rounds):
            comm.Barrier()
            spmv_dist.append(_timed(lambda D=D, x=x: D @ x, xp, args.repeat))
            comm.Barrier()
            start = time.perf_counter()
            cg(D, b, **solve)
            _sync(xp)
            cg_dist.append((time.perf_counter() - start) / iterations)
            if single:
                spmv_single.append(_timed(lambda A=local, v=x_single: spla.spmv(A, v), xp, args.repeat))
                start = time.perf_counter()
                spla.linalg.cg(local, x_single, **solve)
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
