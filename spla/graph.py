"""PageRank by power iteration, on the CPU (SciPy) or the GPU (CuPy).

Conventions are networkx's (``networkx.pagerank``, whose SciPy version this
matches step for step): edge i -> j is adjacency entry (i, j) with its
weight; each row is divided by its weighted out-degree; the iteration is

    x <- alpha * (P x + (sum of x over dangling nodes) * d) + (1 - alpha) * p

with P the column-stochastic transpose of the row-normalised adjacency, p the
personalization (uniform 1/N by default), d the dangling distribution (p by
default), x0 uniform, and it stops at the first iterate whose L1 change is
below ``N * tol``. N counts every node present: for a matrix, every row, also
empty ones. (SuiteSparse's SNAP/web-Google has 916,428 rows while SNAP's edge
list names 875,713 nodes; the 40,715 empty rows are dangling nodes that take
part in the teleport term, so ranks differ from a run on the edge list alone.
spla, like networkx, ranks the nodes present in what it is given.)
"""

from __future__ import annotations

import time

import numpy as np

from . import cuda
from .csr import CSRMatrix, as_csr
from .errors import InputError, SplaError

try:
    from networkx import PowerIterationFailedConvergence as _NxConvergenceError
except ImportError:  # networkx is a dependency, but keep the module importable without it
    _NxConvergenceError = RuntimeError

PAGERANK_SOURCE = cuda.KernelSource("solver_pagerank.cu", [
    f"spla_pagerank_step<{t}, {up}, {ud}>" for t in ("float", "double")
    for up in ("false", "true") for ud in ("false", "true")])

#: On the GPU the L1 change is read back every this many iterations (one host
#: sync each); the iterates in between are kept, so the answer is the same
#: iterate networkx returns.
DEFAULT_GPU_CHECK_EVERY = 8


class PowerIterationFailedConvergence(SplaError, _NxConvergenceError):
    """PageRank did not reach ``tol`` within ``max_iter`` iterations (as networkx raises)."""

    def __init__(self, num_iterations: int):
        self.num_iterations = num_iterations
        message = f"power iteration failed to converge within {num_iterations} iterations"
        Exception.__init__(self, message)


def _is_networkx_graph(G) -> bool:
    return type(G).__module__.startswith("networkx") and hasattr(G, "adj")


def _vector_from(values, nodelist, n, name, dtype):
    """A normalised 1-D array from a dict keyed by node (networkx) or an array (matrices)."""
    if isinstance(values, dict):
        if nodelist is None:
            nodelist = range(n)
        vec = np.array([values.get(node, 0) for node in nodelist], dtype=np.float64)
    else:
        vec = np.asarray(values.get() if cuda.is_cupy_array(values) else values, dtype=np.float64).ravel()
        if vec.shape != (n,):
            raise InputError(f"{name} must have one entry per node ({n}), got shape {vec.shape}")
    total = vec.sum()
    if total == 0 or not np.isfinite(total) or (vec < 0).any():
        raise InputError(f"{name} must be non-negative with a positive sum")
    return (vec / total).astype(dtype)


def google_matrix_parts(A: CSRMatrix, dtype):
    """(P, dangling mask) on the host: P = (D^-1 A)^T column-stochastic, mask of rows with zero out-weight."""
    import scipy.sparse as sp

    S = A.to_host().to_scipy().astype(np.float64)
    out_weight = np.asarray(S.sum(axis=1)).ravel()
    dangling = out_weight == 0
    scale = np.divide(1.0, out_weight, out=np.zeros_like(out_weight), where=~dangling)
    P = (sp.diags(scale) @ S).T.tocsr()
    return CSRMatrix.from_scipy(P, dtype=dtype), dangling


def pagerank(G, alpha=0.85, personalization=None, tol=1e-6, max_iter=100, nstart=None, weight="weight",
             dangling=None, *, device="auto", dtype=np.float64, check_every=None, full_output=False):
    """PageRank of a graph by power iteration, with networkx's conventions.

    Parameters
    ----------
    G : networkx graph, CSRMatrix, scipy/cupyx sparse matrix or dense array
        A matrix is the (weighted) adjacency: entry (i, j) is an edge i -> j.
        A networkx graph is read as networkx does (``to_scipy_sparse_array``
        with ``weight``; undirected edges count both ways).
    alpha : float
        Damping factor.
    personalization, nstart, dangling : dict keyed by node, or array, optional
        Teleport distribution (default uniform), starting vector (default
        uniform) and where dangling nodes' rank goes (default the
        personalization). Normalised to sum 1. Dicts are keyed by node for a
        graph and by row index for a matrix; missing keys count 0.
    tol : float
        Stop at the first iterate whose L1 change is below ``N * tol``.
    max_iter : int
        Raises :class:`PowerIterationFailedConvergence` past this.
    weight : str or None
        Edge attribute of a networkx graph (None: every edge weighs 1).
    device : {"auto", "cpu", "gpu"}
        "auto" runs where a matrix already lives, else on the GPU when one is
        available and the graph has at least 100,000 edges.
    dtype : float64 or float32
    check_every : int, optional
        GPU only: iterations between reads of the convergence error
        (default ``DEFAULT_GPU_CHECK_EVERY``). The result does not depend on it.
    full_output : bool
        Also return a dict with ``iterations``, ``error`` (the last L1 change),
        ``seconds`` and ``seconds_per_iteration`` (setup excluded) and ``device``.

    Returns
    -------
    ranks : dict node -> float for a networkx graph; else a 1-D array (CuPy
        if G was on the GPU, NumPy otherwise).
    info : dict, only with ``full_output=True``.

    See Also
    --------
    networkx.pagerank, networkx.algorithms.link_analysis.pagerank_alg.pagerank_scipy
    """
    dtype = np.dtype(dtype)
    if dtype not in (np.dtype(np.float32), np.dtype(np.float64)):
        raise InputError(f"dtype must be float32 or float64, got {dtype}")
    if not 0 <= alpha <= 1:
        raise InputError(f"alpha must be in [0, 1], got {alpha}")
    if device not in ("auto", "cpu", "gpu"):
        raise InputError(f"device must be auto, cpu or gpu, got {device!r}")
    nodelist = None
    input_on_gpu = False
    if _is_networkx_graph(G):
        import networkx as nx

        nodelist = list(G)
        if not nodelist:
            return ({}, {"iterations": 0, "error": 0.0, "seconds": 0.0, "seconds_per_iteration": 0.0,
                         "device": "cpu"}) if full_output else {}
        A = CSRMatrix.from_scipy(nx.to_scipy_sparse_array(G, nodelist=nodelist, weight=weight, dtype=float))
    else:
        A = as_csr(G)
        input_on_gpu = A.on_gpu
        if A.n_rows != A.n_cols:
            raise InputError(f"an adjacency matrix must be square, got {A.n_rows}x{A.n_cols}")
    n = A.n_rows
    if device == "auto":
        device = "gpu" if input_on_gpu or (cuda.gpu_available() and A.nnz >= 100_000) else "cpu"
    if n == 0:
        raise InputError("the graph has no nodes")

    P, is_dangling = google_matrix_parts(A, dtype)
    p = None if personalization is None else _vector_from(personalization, nodelist, n, "personalization", dtype)
    d = p if dangling is None else _vector_from(dangling, nodelist, n, "dangling", dtype)
    x0 = None if nstart is None else _vector_from(nstart, nodelist, n, "nstart", dtype)

    if device == "gpu":
        x, info = _power_iteration_gpu(P, is_dangling, p, d, x0, alpha, tol, max_iter, dtype, check_every)
        if not input_on_gpu:
            x = x.get()
    else:
        x, info = _power_iteration_cpu(P, is_dangling, p, d, x0, alpha, tol, max_iter, dtype)
    info["device"] = device
    if nodelist is not None:
        host = x.get() if cuda.is_cupy_array(x) else x
        x = dict(zip(nodelist, map(float, host)))
    return (x, info) if full_output else x


def _power_iteration_cpu(P, is_dangling, p, d, x0, alpha, tol, max_iter, dtype):
    n = P.n_rows
    S = P.to_scipy()
    uniform = dtype.type(1.0 / n)
    x = np.full(n, uniform, dtype=dtype) if x0 is None else x0.copy()
    teleport = (1 - alpha) * (uniform if p is None else p)
    dangling_to = np.full(n, uniform, dtype=dtype) if d is None else d
    dangling_rows = np.flatnonzero(is_dangling)
    start = time.perf_counter()
    for iteration in range(1, max_iter + 1):
        x_last = x
        x = alpha * (S @ x_last + x_last[dangling_rows].sum() * dangling_to) + teleport
        err = float(np.abs(x - x_last).sum())
        if err < n * tol:
            seconds = time.perf_counter() - start
            return x.astype(dtype, copy=False), {"iterations": iteration, "error": err, "seconds": seconds,
                                                 "seconds_per_iteration": seconds / iteration}
    raise PowerIterationFailedConvergence(max_iter)


def _power_iteration_gpu(P, is_dangling, p, d, x0, alpha, tol, max_iter, dtype, check_every):
    """One SpMV and one fused update launch per iteration; the host looks every check_every iterations.

    The iterates go round a ring of check_every + 1 buffers and every
    iteration's (L1 change, next dangling sum) pair is kept in a small device
    table, so a check finds the first converged iterate of its window and
    returns exactly that one.
    """
    cupy = cuda.require_cupy()
    from .matvec import spmv

    n = P.n_rows
    check_every = DEFAULT_GPU_CHECK_EVERY if check_every is None else int(check_every)
    if check_every < 1:
        raise InputError(f"check_every must be >= 1, got {check_every}")
    check_every = max(1, min(check_every, max_iter))
    P_dev = P.to_device()
    ctype = "float" if dtype == np.float32 else "double"
    kernel = PAGERANK_SOURCE.function(
        f"spla_pagerank_step<{ctype}, {'true' if p is None else 'false'}, {'true' if d is None else 'false'}>")
    mask = cupy.asarray(is_dangling.astype(np.uint8))
    p_dev = cupy.asarray(p) if p is not None else mask  # any valid pointer when uniform
    d_dev = cupy.asarray(d) if d is not None else mask
    ring = cupy.empty((check_every + 1, n), dtype=dtype)
    ring[check_every] = 1.0 / n if x0 is None else cupy.asarray(x0)
    # table[k % check_every] = (L1 change of iteration k, dangling sum of its iterate)
    table = cupy.zeros((check_every + 1, 2), dtype=cupy.float64)
    table[check_every, 1] = float(cupy.sum(ring[check_every][mask.astype(bool)]))
    sm_count = cupy.cuda.Device().attributes["MultiProcessorCount"]
    grid = (max(1, min(cuda.ceil_div(n, 256), 8 * sm_count)),)
    partials = cupy.empty(2 * grid[0], dtype=cupy.float64)
    counter = cupy.zeros(1, dtype=cupy.uint32)
    n64, uniform, alpha64 = np.int64(n), np.float64(1.0 / n), np.float64(alpha)
    # views made once: slicing inside the loop would cost host time every iteration
    iterates = [ring[i] for i in range(check_every + 1)]
    dangling_sums = [table[i, 1:] for i in range(check_every + 1)]
    outputs = [table[i] for i in range(check_every + 1)]
    cupy.cuda.get_current_stream().synchronize()
    start = time.perf_counter()
    previous = check_every  # the slot holding x0
    for iteration in range(1, max_iter + 1):
        slot = (iteration - 1) % check_every
        y = spmv(P_dev, iterates[previous])
        kernel(grid, (256,), (y, iterates[previous], iterates[slot], mask, p_dev, d_dev, n64, uniform, alpha64,
                              dangling_sums[previous], partials, counter, outputs[slot]))
        previous = slot
        if iteration % check_every == 0 or iteration == max_iter:
            errors = table[:check_every, 0].get()  # the one host sync of this window
            first = (iteration - 1) // check_every * check_every + 1
            for done in range(first, iteration + 1):
                err = errors[(done - 1) % check_every]
                if err < n * tol:
                    seconds = time.perf_counter() - start
                    x = ring[(done - 1) % check_every].copy()
                    return x, {"iterations": done, "error": float(err), "seconds": seconds,
                               "seconds_per_iteration": seconds / iteration}
    raise PowerIterationFailedConvergence(max_iter)
