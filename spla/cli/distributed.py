"""``--distributed`` for ``spla spmv``, ``spla solve`` and ``spla pagerank``, run under ``mpiexec``.

``mpiexec -n 4 spla spmv SOURCE --distributed`` loads SOURCE once (a plain
.mtx file is read in parallel by byte ranges; anything else on rank 0,
then scattered), runs the operation on every rank and prints one report
from rank 0: per-rank rows, nnz, ghosts and neighbours; load imbalance;
communication volume per SpMV; and the SpMV time split into the local
products and the ghost exchange.

Errors: a SplaError (on any rank, agreed at set-up points) is printed once,
by rank 0 through the usual one-line CLI path; the other ranks exit with the
same code silently. Anything else aborts the whole job (``MPI.Abort``) after
its traceback, so no rank is left waiting in a collective.
"""

from __future__ import annotations

import json
import sys
import time
import traceback
from pathlib import Path

import click
import numpy as np

from ..errors import InputError, SplaError

DEVICES = ("cpu", "gpu")


def distributed_option():
    return click.option("--distributed", is_flag=True,
                        help="Run on every rank of an MPI job (mpiexec -n P spla ... --distributed); rank 0 "
                             "prints one report: per-rank rows/nnz/ghosts, imbalance, communication, timings.")


def run(command: str, source: str, **options) -> None:
    """Run ``command`` ("spmv", "solve" or "pagerank") distributed; every rank calls this."""
    from ..distributed.comm import import_mpi

    MPI = import_mpi()
    mpi = MPI.COMM_WORLD
    commands: dict = {"spmv": _spmv, "solve": _solve, "pagerank": _pagerank}
    try:
        commands[command](source, **options)
    except SplaError as exc:
        if mpi.Get_rank() == 0:
            raise
        sys.exit(exc.exit_code)
    except (click.exceptions.Exit, SystemExit, KeyboardInterrupt):
        raise
    except Exception:  # noqa: BLE001 -- last resort: a rank that cannot go on must not leave the others waiting
        traceback.print_exc()
        sys.stderr.flush()
        mpi.Abort(1)


def _device(device: str) -> str:
    from .. import device as _device

    if device == "auto":
        return "gpu" if _device.gpu_available() else "cpu"
    if device not in DEVICES:
        raise InputError(f"--device must be auto, cpu or gpu, got {device!r}")
    return device


def _load(source: str, device: str, dtype, comm):
    """The distributed matrix: a plain .mtx in parallel, anything else loaded on rank 0 and scattered."""
    from .. import io
    from ..distributed import DistCSRMatrix
    from ..distributed.matrix import _make_comm

    comm = _make_comm(comm, "auto", device)
    path = Path(source)
    start = time.perf_counter()
    if path.suffix == ".mtx" and path.is_file():
        A = DistCSRMatrix.from_mtx(path, comm, dtype=dtype)
        how = "read in parallel"
    else:
        A_global, error = None, None
        if comm.rank == 0:
            try:
                A_global = io.load(source, dtype=dtype)
            except Exception as exc:  # noqa: BLE001 -- agreed below, so no rank waits for a matrix that never comes
                error = exc
        comm.agree(error, f"loading {source}")
        A = DistCSRMatrix.from_global(A_global, comm)
        how = "loaded on rank 0 and scattered"
    seconds = time.perf_counter() - start
    return A, f"{how} in {seconds:.2f} s"


def _layout(A) -> dict:
    """Per-rank figures (gathered on every rank), imbalance and exchange volume per SpMV."""
    stats = A.comm.allgather(A.stats())
    nnz = np.array([s["nnz"] for s in stats], dtype=np.float64)
    rows = np.array([s["rows"] for s in stats], dtype=np.float64)
    sent = sum(s["sent"] for s in stats)
    messages = A.comm.allgather(len(A.plan.send_ranks))
    itemsize = np.dtype(A.dtype).itemsize
    return {"ranks": stats, "imbalance_nnz": float(nnz.max() / nnz.mean()) if nnz.mean() else 1.0,
            "imbalance_rows": float(rows.max() / rows.mean()) if rows.mean() else 1.0,
            "exchange_entries": int(sent), "exchange_bytes": int(sent * itemsize), "messages": int(sum(messages)),
            "backend": A.comm.backend, "shape": list(A.shape), "nnz": int(nnz.sum()), "dtype": str(A.dtype)}


def _timings(A, x, repeat: int) -> dict:
    every = A.comm.allgather(A.timed_matvec(x, repeat))
    return {"per_rank": every, "spmv_seconds": max(t["total"] for t in every),
            "compute_seconds": max(t["diag"] + t["offdiag"] for t in every),
            "exchange_seconds": max(t["exchange"] for t in every)}


def _echo_layout(title: str, load_note: str, layout: dict, timings: dict | None) -> None:
    m, n = layout["shape"]
    click.echo(f"{title}: {m:,} x {n:,}, {layout['nnz']:,} nnz, {layout['dtype']}, {len(layout['ranks'])} ranks, "
               f"backend {layout['backend']} ({load_note})")
    head = f"{'rank':>4} {'rows':>10} {'nnz':>12} {'ghosts':>9} {'sent':>9} {'nbrs':>4}"
    if timings:
        head += f" {'diag ms':>9} {'offd ms':>9} {'xchg ms':>9} {'spmv ms':>9}"
    click.echo(head)
    for i, s in enumerate(layout["ranks"]):
        line = f"{s['rank']:>4} {s['rows']:>10,} {s['nnz']:>12,} {s['ghosts']:>9,} {s['sent']:>9,} {s['neighbours']:>4}"
        if timings:
            t = timings["per_rank"][i]
            line += f" {t['diag'] * 1e3:>9.3f} {t['offdiag'] * 1e3:>9.3f} {t['exchange'] * 1e3:>9.3f} " \
                    f"{t['total'] * 1e3:>9.3f}"
        click.echo(line)
    click.echo(f"imbalance    nnz max/mean {layout['imbalance_nnz']:.3f}, rows max/mean {layout['imbalance_rows']:.3f}")
    click.echo(f"exchange     {layout['exchange_entries']:,} entries ({layout['exchange_bytes'] / 1e6:.3f} MB) in "
               f"{layout['messages']} messages per SpMV")
    if timings:
        click.echo(f"spmv         {timings['spmv_seconds'] * 1e3:.3f} ms (slowest rank, overlapped); local compute "
                   f"{timings['compute_seconds'] * 1e3:.3f} ms, exchange alone {timings['exchange_seconds'] * 1e3:.3f}"
                   f" ms")


def _spmv(source, *, device="auto", dtype="float64", repeat=None, as_json=False):
    from ..distributed.comm import world

    device = _device(device)
    A, load_note = _load(source, device, dtype, world())
    comm = A.comm
    rng = np.random.default_rng(0)
    x_global = rng.standard_normal(A.shape[1]) if comm.rank == 0 else None
    x = A.distribute_vector(x_global)
    y = A.gather(A @ x)
    layout = _layout(A)
    timings = _timings(A, x, repeat or (20 if device == "cpu" else 100))
    check = _reference_product(A, x)
    if comm.rank != 0:
        return
    scale = max(float(np.abs(check).max(initial=0.0)), 1e-300)
    error = float(np.abs(y - check).max(initial=0.0) / scale)
    result = {"source": source, "device": device, **layout, **timings, "relative_error": error}
    if as_json:
        click.echo(json.dumps(result, indent=2))
        return
    _echo_layout(f"distributed spmv on {source}", load_note, layout, timings)
    click.echo(f"check        max relative error vs SciPy (float64, each rank's rows) {error:.2e}")
    tolerance = 1e-4 if dtype == "float32" else 1e-10
    if not error <= tolerance:
        raise SplaError(f"distributed SpMV differs from SciPy by {error:.2e} (tolerance {tolerance:g})")


def _reference_product(A, x):
    """y from SciPy in float64 on each rank's own rows, gathered on rank 0: x is collected with a
    plain allgather rather than the ghost plan under test (fine for a check; it holds all of x per rank)."""
    x_host = x.local.get() if hasattr(x.local, "get") else x.local
    full = A.comm.mpi.allgather(x_host)
    x_all = np.concatenate(full).astype(np.float64)
    diag = A.diag.to_host().to_scipy().astype(np.float64)
    off = A.offdiag.to_host().to_scipy().astype(np.float64)
    c0 = int(A.col_offsets[A.comm.rank])
    y_local = diag @ x_all[c0:c0 + diag.shape[1]] + off @ x_all[A.ghost_cols]
    pieces = A.comm.mpi.gather(y_local, root=0)
    return np.concatenate(pieces) if pieces is not None else None


def _solve(source, *, method="cg", rhs="ones", rtol=1e-8, atol=0.0, maxiter=None, restart=20, precond="none",
           device="auto", as_json=False, plot_path=None):
    from .. import distributed
    from ..distributed.comm import world
    from ..linalg import IterationCounter

    if plot_path:
        raise InputError("--plot is not available with --distributed")
    device = _device(device)
    A, load_note = _load(source, device, "float64", world())
    comm = A.comm
    b_global, error = None, None
    if comm.rank == 0:
        try:
            if A.shape[0] != A.shape[1]:
                raise InputError(f"{source} is {A.shape[0]}x{A.shape[1]}; iterative solvers need a square matrix")
            b_global = _right_hand_side(rhs, A.shape[0])
        except Exception as exc:  # noqa: BLE001 -- agreed below
            error = exc
    comm.agree(error, "the right-hand side")
    b = A.distribute_vector(b_global, space="range")
    counter = IterationCounter()  # keeps cg's captured iterations on one GPU rank
    solver = getattr(distributed, method)
    kwargs = {"restart": restart, "callback_type": "x"} if method == "gmres" else {}
    comm.barrier()
    start = time.perf_counter()
    x, info = solver(A, b, rtol=rtol, atol=atol, maxiter=maxiter, M=None if precond == "none" else precond,
                     callback=counter, **kwargs)
    seconds = time.perf_counter() - start
    residual = (b - A @ x).norm() / b.norm()
    layout = _layout(A)
    timings = _timings(A, x, 10)
    if comm.rank != 0:
        return
    per_iteration = seconds / max(counter.iterations, 1)
    result = {"source": source, "method": method, "info": info, "iterations": counter.iterations,
              "relative_residual": residual, "seconds": seconds, "seconds_per_iteration": per_iteration,
              **layout, **timings}
    if as_json:
        click.echo(json.dumps(result, indent=2, default=float))
        return
    _echo_layout(f"distributed {method} on {source}", load_note, layout, timings)
    unit = "restart cycles" if method == "gmres" else "iterations"
    click.echo(f"solve        info {info}, {counter.iterations} {unit}, relative residual {residual:.3e}, "
               f"{seconds * 1e3:.2f} ms ({per_iteration * 1e3:.3f} ms per {unit[:-1]})")


def _right_hand_side(rhs: str, n: int):
    if rhs == "ones":
        return np.ones(n)
    if rhs == "random":
        return np.random.default_rng(0).standard_normal(n)
    b = np.load(rhs)
    if b.shape != (n,):
        raise InputError(f"{rhs}: the right-hand side must have shape ({n},), got {b.shape}")
    return b


def _pagerank(source, *, alpha=0.85, tol=1e-6, max_iter=100, top=10, device="auto", as_json=False):
    from ..distributed import pagerank
    from ..distributed.comm import world

    device = _device(device)
    if top < 0:
        raise InputError(f"--top must be >= 0, got {top}")
    A, load_note = _load(source, device, "float64", world())
    comm = A.comm
    ranks_dist, info = pagerank(A, alpha=alpha, tol=tol, max_iter=max_iter, full_output=True)
    layout = _layout(A)
    ranks = A.gather(ranks_dist)
    if comm.rank != 0:
        return
    order = np.argsort(-ranks, kind="stable")[:top]
    result = {"source": source, "alpha": alpha, "tol": tol, **info, **layout,
              "top": [{"node": int(i), "rank": float(ranks[i])} for i in order]}
    if as_json:
        click.echo(json.dumps(result, indent=2))
        return
    _echo_layout(f"distributed pagerank on {source}", load_note, layout, None)
    click.echo(f"iterations   {info['iterations']} (L1 change {info['error']:.3e}), "
               f"{info['seconds_per_iteration'] * 1e3:.3f} ms per iteration")
    click.echo(f"{'rank':>4}  {'node':>10}  score")
    for position, node in enumerate(order, 1):
        click.echo(f"{position:>4}  {int(node):>10}  {ranks[node]:.6e}")
