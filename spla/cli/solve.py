"""``spla solve`` (iterative solvers) and ``spla pagerank``."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import click
import numpy as np

from .. import device as _device
from .. import io
from ..errors import InputError, SplaError
from . import distributed as distributed_cli
from . import main

SOURCE_HELP = """SOURCE is a Matrix Market file, a SNAP edge list, a catalogue name or a
generator spec such as gen:poisson2d:512 or gen:weblike (see `spla info --help`)."""

METHODS = ("cg", "bicgstab", "gmres", "minres")
PRECONDITIONERS = ("none", "jacobi", "amg", "ic0", "ilu0")


def _preconditioner(linalg, precond: str, A):
    """The preconditioner for A, built once (its set-up time is reported apart)."""
    if precond == "none":
        return None
    return {"jacobi": linalg.jacobi, "amg": linalg.amg, "ic0": linalg.ic0, "ilu0": linalg.ilu0}[precond](A)


class Progress:
    """A CPU solve's callback while stderr is a terminal: counts into ``counter`` and rewrites one
    line on stderr at most every ``every`` seconds (a long solve is not silent). Not on the GPU,
    where any callback but the counter itself turns cg's captured iterations off."""

    def __init__(self, counter, method: str, unit: str, *, every: float = 1.0, stream=None, clock=time.monotonic):
        self.counter, self.method, self.unit, self.every = counter, method, unit, every
        self.stream = stream if stream is not None else sys.stderr
        self.clock = clock
        self.start = self.shown = clock()
        self.written = False

    def __call__(self, xk) -> None:
        self.counter(xk)
        now = self.clock()
        if now - self.shown >= self.every:
            self.shown = now
            self.stream.write(f"\r{self.method}: {self.counter.iterations:,} {self.unit}, {now - self.start:.0f} s")
            self.stream.flush()
            self.written = True

    def clear(self) -> None:
        """Erase the line, so the report starts on a clean one."""
        if self.written:
            self.stream.write("\r\x1b[K")
            self.stream.flush()


def _pick_device(device: str) -> str:
    if device == "auto":
        return "gpu" if _device.gpu_available() else "cpu"
    if device == "gpu":
        _device.require_cupy()
    return device


def _right_hand_side(rhs: str, n: int, dtype):
    if rhs == "ones":
        return np.ones(n, dtype=dtype)
    if rhs == "random":
        return np.random.default_rng(0).standard_normal(n).astype(dtype)
    try:
        b = np.load(rhs)
    except (OSError, ValueError) as exc:
        raise InputError(f"--rhs {rhs}: not 'ones', 'random' or a readable .npy file ({exc})") from None
    if b.shape != (n,):
        raise InputError(f"--rhs {rhs}: expected a vector of length {n}, got shape {b.shape}")
    return b.astype(dtype)


def _sync(xp):
    if xp is not np:
        xp.cuda.get_current_stream().synchronize()


@main.command("solve", epilog=SOURCE_HELP)
@click.argument("source")
@click.option("--method", type=click.Choice(("auto", *METHODS)), default="auto", show_default=True,
              help="auto: cg for a symmetric matrix, gmres otherwise (cg and minres assume symmetry).")
@click.option("--rhs", default="ones", show_default=True, help="ones, random (seed 0) or FILE.npy.")
@click.option("--precond", type=click.Choice(PRECONDITIONERS), default="none", show_default=True,
              help="amg sets up on the matrix's side (pyamg for a host matrix where installed); ic0 needs a "
                   "symmetric matrix with a positive diagonal and shifts the diagonal where IC(0) breaks down "
                   "(the setup line says by how much); ilu0 is for nonsymmetric matrices (bicgstab, gmres).")
@click.option("--rtol", type=float, default=1e-8, show_default=True)
@click.option("--atol", type=float, default=0.0, show_default=True)
@click.option("--maxiter", type=int, default=None, help="Default: SciPy's (10 n; gmres: restart cycles).")
@click.option("--restart", type=int, default=20, show_default=True, help="GMRES restart length.")
@click.option("--device", type=click.Choice(["auto", "cpu", "gpu"]), default="auto", show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@click.option("--plot", "plot_path", type=click.Path(dir_okay=False), default=None,
              help="Write the residual history (one point per iteration) to this PNG (needs matplotlib).")
@click.option("--out", "out_path", type=click.Path(dir_okay=False), default=None,
              help="Write the solution x to this .npy file (also when the solve did not converge).")
@distributed_cli.distributed_option()
def solve_command(source, method, rhs, precond, rtol, atol, maxiter, restart, device, as_json, plot_path, out_path,
                  distributed):
    """Solve A x = b for the matrix SOURCE with an iterative method.

    Prints the iterations, the final relative residual ||b - A x|| / ||b||
    (recomputed from x, not the solver's estimate), the total time and the
    time per iteration (per restart cycle for GMRES). With --plot, the
    residual is also recorded every iteration (an extra SpMV and norm per
    iteration, so timings are then not representative). On the CPU, while
    stderr is a terminal, one line there counts the iterations each second.
    Exits 1 when the solve did not converge or broke down (after printing
    the result).
    """
    for option, path in (("--plot", plot_path), ("--out", out_path)):
        _check_writable(option, path)  # before the solve, not after it
    if plot_path is not None:
        _require_matplotlib()
    if distributed:
        method = "cg" if method == "auto" else method
        return distributed_cli.run("solve", source, method=method, rhs=rhs, precond=precond, rtol=rtol, atol=atol,
                                   maxiter=maxiter, restart=restart, device=device, as_json=as_json,
                                   plot_path=plot_path)
    from .. import linalg
    from ..linalg._krylov import _norm

    A = io.load(source)
    if A.n_rows != A.n_cols:
        raise InputError(f"{source} is {A.n_rows}x{A.n_cols}; iterative solvers need a square matrix")
    device = _pick_device(device)
    symmetric = _is_symmetric(A)
    if method == "auto":
        method = "cg" if symmetric else "gmres"
    elif method in ("cg", "minres") and not symmetric:
        click.echo(f"spla: warning: {source} is not symmetric; {method} assumes it is (try --method gmres or "
                   "bicgstab)", err=True)
    xp = np if device == "cpu" else _device.require_cupy()
    A = A.to_device() if device == "gpu" else A.to_host()
    b = xp.asarray(_right_hand_side(rhs, A.n_rows, A.dtype))
    _sync(xp)
    setup_start = time.perf_counter()
    M = _preconditioner(linalg, precond, A)
    if M is not None and precond != "jacobi":  # one application puts the factors / hierarchy on the device
        M.matvec(b)
    _sync(xp)
    setup_seconds = time.perf_counter() - setup_start
    if precond == "ilu0" and method in ("cg", "minres"):
        negative = int((M.U.diagonal() <= 0).sum())
        if negative:
            click.echo(f"spla: warning: ilu0 has {negative:,} pivots <= 0, so it is not positive definite and "
                       f"{method} may stall (try --precond ic0, which shifts the diagonal, or amg)", err=True)
    b_norm = _norm(xp, b)  # the solvers' norm: on the host not BLAS's, whose spinning thread would meet the solve
    history: list = []
    counter = linalg.IterationCounter()

    def record(xk):  # --plot: a residual an iteration (cg then launches its kernels from Python)
        counter(xk)
        history.append(float(xp.linalg.norm(b - A @ xk)) / (b_norm or 1.0))

    callback = record if plot_path is not None else counter
    if device == "cpu" and plot_path is None and sys.stderr.isatty():
        callback = Progress(counter, method, "restart cycles" if method == "gmres" else "iterations")
    kwargs = {"rtol": rtol, "atol": atol, "maxiter": maxiter, "M": M, "callback": callback}
    if method == "gmres":
        kwargs.update(restart=restart, callback_type="x")
    solver = getattr(linalg, method)
    # one untimed iteration first: builds SciPy's view of A, or compiles the GPU kernels and plans the SpMV
    solver(A, b, **{**kwargs, "maxiter": 1, "callback": None})
    _sync(xp)
    start = time.perf_counter()
    x, info = solver(A, b, **kwargs)
    _sync(xp)
    seconds = time.perf_counter() - start
    if isinstance(callback, Progress):
        callback.clear()
    relative_residual = float(xp.linalg.norm(b - A @ x)) / (b_norm or 1.0)
    result = {
        "source": source, "method": method, "precond": precond, "device": device,
        "n": A.n_rows, "nnz": A.nnz, "dtype": A.dtype.name, "rtol": rtol, "atol": atol,
        "info": int(info), "converged": int(info) == 0, "iterations": counter.iterations,
        "relative_residual": relative_residual, "setup_seconds": setup_seconds, "seconds": seconds,
        "seconds_per_iteration": seconds / max(counter.iterations, 1),
    }
    if precond == "ic0":
        result["ic0_shift"] = M.shift
    if device == "cpu" and method == "cg":
        result["runs"] = _cpu_cg_runs(A.astype(x.dtype), precond)
    if method == "gmres":
        result["iterations_are"] = "restart cycles"
    result["symmetric"] = symmetric
    if plot_path is not None:
        _plot(history, plot_path, f"{method} on {source}")
        result["plot"] = plot_path
    if out_path is not None:
        _save_vector(out_path, x.get() if xp is not np else x)
        result["out"] = out_path
    if as_json:
        click.echo(json.dumps(result, indent=2))
    else:
        _print_solve(result, A, source)
    if info != 0:
        raise SplaError(f"{method} did not converge (info {info}: "
                        f"{'breakdown' if info < 0 else 'iteration limit reached'}); "
                        f"relative residual {relative_residual:.3e}")


def _print_solve(result, A, source):
    method, info, device, precond = result["method"], result["info"], result["device"], result["precond"]
    iterations, rtol = result["iterations"], result["rtol"]
    relative_residual, setup_seconds, seconds = result["relative_residual"], result["setup_seconds"], result["seconds"]
    verdict = "converged" if info == 0 else ("breakdown" if info < 0 else "not converged")
    click.echo(f"{method} on {source}: {A.n_rows:,} x {A.n_cols:,}, nnz {A.nnz:,}, {A.dtype.name}, "
               f"{device}, precond {precond}")
    click.echo(f"result        {verdict} (info {info})")
    click.echo(f"iterations    {iterations:,}" + (" restart cycles" if method == "gmres" else ""))
    click.echo(f"residual      {relative_residual:.3e} (||b - A x|| / ||b||, rtol {rtol:g})")
    shifted = f", diagonal shifted by {result['ic0_shift']:g} diag(A)" if result.get("ic0_shift") else ""
    click.echo(f"setup         {setup_seconds * 1e3:.2f} ms (precond {precond}{shifted})")
    if "runs" in result:
        click.echo(f"runs          {result['runs']}")
    per = "restart cycle" if method == "gmres" else "iteration"
    click.echo(f"time          {seconds * 1e3:.2f} ms solve, {result['seconds_per_iteration'] * 1e6:.1f} us "
               f"per {per}")


def _cpu_cg_runs(A, precond: str) -> str:
    """How cg runs on the CPU for A and this preconditioner: the C loop and its threads (what
    spla.linalg.cg picks), or NumPy's steps."""
    from ..backends.cpu import CgLoop

    loop = CgLoop.for_matrix(A) if precond in ("none", "jacobi") else None
    if loop is None:
        return "NumPy's steps (SciPy's arithmetic)"
    return f"C loop on {loop.threads} thread{'s' if loop.threads > 1 else ''} (spla/backends/cg_loop.c)"


def _is_symmetric(A) -> bool:
    """Whether A equals its transpose to rounding (host SciPy, one pass over A)."""
    S = A.to_host().to_scipy()
    if S.shape[0] != S.shape[1]:
        return False
    difference = abs(S - S.T)
    return difference.nnz == 0 or float(difference.max()) <= 1e-12 * float(abs(S).max() or 1.0)


def _check_writable(option: str, path) -> None:
    if path is None:
        return
    folder = Path(path).resolve().parent
    if not folder.is_dir():
        raise InputError(f"{option} {path}: folder {folder} does not exist")
    if not os.access(folder, os.W_OK):
        raise InputError(f"{option} {path}: folder {folder} is not writable")


def _require_matplotlib():
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise InputError("--plot needs matplotlib (pip install 'spla[plot]')") from None


def _save_vector(path, x) -> None:
    """np.save through a temporary file in the same folder, renamed when complete."""
    from ..io.cache import atomic_file

    with atomic_file(path) as stream:
        np.save(stream, x)


def _plot(history, path, title):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.semilogy(range(1, len(history) + 1), history)
    ax.set_xlabel("iteration")
    ax.set_ylabel("||b - A x|| / ||b||")
    ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


@main.command("pagerank", epilog=SOURCE_HELP)
@click.argument("source")
@click.option("--alpha", type=float, default=0.85, show_default=True)
@click.option("--tol", type=click.FloatRange(min=0, min_open=True), default=1e-10, show_default=True,
              help="Stop when the L1 change of the rank vector is below N * tol (networkx's test). The API's "
                   "default, 1e-6, stops a web-sized graph after one iteration; the CLI's converges.")
@click.option("--max-iter", type=click.IntRange(min=1), default=1000, show_default=True)
@click.option("--top", type=int, default=10, show_default=True, help="How many top-ranked nodes to print.")
@click.option("--device", type=click.Choice(["auto", "cpu", "gpu"]), default="auto", show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@distributed_cli.distributed_option()
def pagerank_command(source, alpha, tol, max_iter, top, device, as_json, distributed):
    """PageRank of the graph SOURCE (entry (i, j) = edge i -> j), networkx's conventions.

    Node ids are row indices (0-based). Prints the top nodes, the iterations
    and the final L1 change against the threshold N * tol, the iteration time
    (per iteration, setup excluded) and the setup (upload and build of the
    iteration matrix) and total times. A run that stopped after one or two
    iterations is flagged on stderr: its ranking is close to the start vector.
    """
    if distributed:
        return distributed_cli.run("pagerank", source, alpha=alpha, tol=tol, max_iter=max_iter, top=top, device=device,
                                   as_json=as_json)
    from ..graph import pagerank

    if top < 0:
        raise InputError(f"--top must be >= 0, got {top}")
    A = io.load(source)
    device = _pick_device(device)
    ranks, info = pagerank(A, alpha=alpha, tol=tol, max_iter=max_iter, device=device, full_output=True)
    ranks = np.asarray(ranks)
    order = np.argsort(-ranks, kind="stable")[:top]
    threshold = A.n_rows * tol
    few = 0 < info["iterations"] <= 2
    result = {"source": source, "n": A.n_rows, "nnz": A.nnz, "alpha": alpha, "tol": tol,
              "l1_threshold": threshold, "few_iterations": few, **info,
              "top": [{"node": int(i), "rank": float(ranks[i])} for i in order]}
    if few:
        click.echo(f"spla: warning: PageRank stopped after {info['iterations']} iteration(s) (L1 change "
                   f"{info['error']:.2e} < N * tol = {threshold:.2e}); the ranking is barely past the start "
                   f"vector, lower --tol", err=True)
    if as_json:
        click.echo(json.dumps(result, indent=2))
        return
    click.echo(f"pagerank on {source}: {A.n_rows:,} nodes, {A.nnz:,} edges, alpha {alpha:g}, tol {tol:g}, "
               f"{info['device']}")
    click.echo(f"iterations    {info['iterations']} (final L1 change {info['error']:.3e}, stop below "
               f"N * tol = {threshold:.3e})")
    click.echo(f"time          {info['seconds'] * 1e3:.2f} ms, {info['seconds_per_iteration'] * 1e6:.1f} us "
               f"per iteration")
    click.echo(f"setup         upload {info['upload_seconds'] * 1e3:.2f} ms, build {info['build_seconds'] * 1e3:.2f} ms"
               f", total {info['total_seconds'] * 1e3:.2f} ms")
    click.echo(f"{'rank':>4}  {'node':>10}  score")
    for position, node in enumerate(order, 1):
        click.echo(f"{position:>4}  {int(node):>10}  {ranks[node]:.6e}")
