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

On the GPU the iteration matrix is built on the device from A's device copy:
P x = A^T (D^-1 x), so it needs only A's transpose (cuSPARSE csr2csc) and a
vector of out-degree scales, and the scaling rides along in the update
kernel. An iteration is one SpMV into a preallocated vector plus one fused
launch (teleport, dangling term, L1 change, next dangling sum, next scaled
input); the host reads the L1 changes every ``check_every`` iterations. The
build is cached on the matrix, so repeated calls on one CSRMatrix pay only
the iterations.
"""

from __future__ import annotations

import time
from typing import NamedTuple

import numpy as np

from . import device as _device
from .csr import CSRMatrix, as_csr
from .errors import InputError, SplaError

try:
    from networkx import PowerIterationFailedConvergence as _NxConvergenceError
except ImportError:  # networkx is a dependency, but keep the module importable without it
    _NxConvergenceError = RuntimeError

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
        vec = np.asarray(values.get() if _device.is_cupy_array(values) else values, dtype=np.float64).ravel()
        if vec.shape != (n,):
            raise InputError(f"{name} must have one entry per node ({n}), got shape {vec.shape}")
    total = vec.sum()
    if total == 0 or not np.isfinite(total) or (vec < 0).any():
        raise InputError(f"{name} must be non-negative with a positive sum")
    return (vec / total).astype(dtype)


def google_matrix_parts(A: CSRMatrix, dtype):
    """(P, dangling mask) on the host: P = (D^-1 A)^T column-stochastic, mask of rows with zero out-weight.

    Cached on A's host copy per dtype (``A._cache``), so PageRank runs after
    the first on one matrix skip the build; like every CSRMatrix cache it
    assumes A is not modified in place afterwards.
    """
    host = A.to_host()
    key = ("pagerank-host-parts", np.dtype(dtype).str)
    if key not in host._cache:
        S = host.to_scipy().astype(np.float64)  # a copy: scaled in place below
        out_weight = np.asarray(S.sum(axis=1)).ravel()
        dangling = out_weight == 0
        scale = np.divide(1.0, out_weight, out=np.zeros_like(out_weight), where=~dangling)
        # D^-1 S row by row, as SciPy's diags(scale) @ S gives it (each value times its row's scale,
        # zeros dropped) without its general sparse product, which took 1.6 of 3.7 s of a PageRank of
        # a 32M-edge graph on a 2-core VM (session 33)
        S.data *= np.repeat(scale, np.diff(S.indptr))
        S.eliminate_zeros()
        P = S.T.tocsr()
        host._cache[key] = (CSRMatrix.from_scipy(P, dtype=dtype), dangling)
    return host._cache[key]


class DeviceGoogleParts(NamedTuple):
    """What the GPU iteration needs, built on the GPU: ``P x = matrix @ (scale * x)``."""

    matrix: CSRMatrix  # A^T on the GPU, A's weights in the iteration dtype (not rescaled)
    scale: object  # cupy float64 vector: 1 / weighted out-degree, 0 on dangling rows
    is_dangling: object  # cupy uint8 vector: 1 where the out-degree is 0


def device_google_parts(A: CSRMatrix, dtype) -> DeviceGoogleParts:
    """A^T, the out-degree scales and the dangling mask, built on the GPU from A's device copy.

    Instead of the column-stochastic P = (D^-1 A)^T, which needs every value
    rewritten, the iteration multiplies by the plain transpose of A and folds
    D^-1 into the vector it feeds the SpMV (written by the update kernel in
    the same pass). A^T comes from cuSPARSE's csr2csc
    (:meth:`CSRMatrix.transpose`), the scales from one row-sum kernel that
    adds in SciPy's order. Cached on A's device copy per dtype.
    """
    from .backends.cuda import pagerank as cuda_pagerank

    cupy = _device.require_cupy()
    dtype = np.dtype(dtype)
    A_dev = A.to_device()
    key = ("pagerank-device-parts", dtype.str)
    parts = A_dev._cache.get(key)
    if parts is None:
        n = A_dev.n_rows
        scale = cupy.empty(n, dtype=cupy.float64)
        is_dangling = cupy.empty(n, dtype=cupy.uint8)
        cuda_pagerank.out_weight(A_dev, scale, is_dangling)
        if A_dev.nnz == 0:  # nothing to transpose (and cuSPARSE may refuse an empty matrix)
            AT = CSRMatrix(cupy.empty(0, dtype=dtype), cupy.empty(0, dtype=A_dev.index_dtype),
                           cupy.zeros(n + 1, dtype=A_dev.index_dtype), A_dev.shape, validate=False)
        else:
            AT = A_dev.astype(dtype).transpose()
        parts = A_dev._cache[key] = DeviceGoogleParts(AT, scale, is_dangling)
    return parts


def _warm_spmv(M: CSRMatrix) -> None:
    """Run M's SpMV once so its auto choice and plan are built during setup, not in the timed loop."""
    if not M._cache.get("pagerank-warm"):
        from .ops.spmv import spmv

        cupy = _device.require_cupy()
        spmv(M, cupy.zeros(M.n_cols, dtype=M.dtype))
        M._cache["pagerank-warm"] = True


def pagerank(G, alpha=0.85, personalization=None, tol=1e-6, max_iter=100, nstart=None, weight="weight",
             dangling=None, *, device="auto", dtype=np.float64, check_every=None,
             full_output=False):
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
        Also return a dict with ``iterations``, ``error`` (the last L1
        change), ``device``, ``gpu_build`` (where the GPU iteration matrix was
        built: "device", A^T and out-degree scales from A's device copy, or
        "host" for int64 indices, which cuSPARSE's transpose does not take;
        None on the CPU; either is cached on the matrix),
        and times in seconds: ``seconds`` and
        ``seconds_per_iteration`` (the iteration loop only), ``convert_seconds``
        (networkx graph to matrix), ``upload_seconds``, ``build_seconds``
        (P or A^T and the scales, the SpMV's set-up), ``download_seconds``
        and ``total_seconds`` (the whole call).

    Returns
    -------
    ranks : dict node -> float for a networkx graph; else a 1-D array (CuPy
        if G was on the GPU, NumPy otherwise).
    info : dict, only with ``full_output=True``.

    See Also
    --------
    networkx.pagerank, networkx.algorithms.link_analysis.pagerank_alg.pagerank_scipy
    """
    import scipy.sparse  # noqa: F401 -- its first import (~0.15 s) is the process's, not this call's build

    call_start = time.perf_counter()
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
        device = "gpu" if input_on_gpu or (_device.gpu_available() and A.nnz >= 100_000) else "cpu"
    if n == 0:
        raise InputError("the graph has no nodes")
    times = {"convert_seconds": time.perf_counter() - call_start}

    p = None if personalization is None else _vector_from(personalization, nodelist, n, "personalization", dtype)
    d = p if dangling is None else _vector_from(dangling, nodelist, n, "dangling", dtype)
    x0 = None if nstart is None else _vector_from(nstart, nodelist, n, "nstart", dtype)

    if device == "gpu":
        M, scale, is_dangling, setup = _gpu_setup(A, dtype)
        x, info = _power_iteration_gpu(M, scale, is_dangling, p, d, x0, alpha, tol, max_iter, dtype, check_every)
        download_start = time.perf_counter()
        if not input_on_gpu:
            x = x.get()
        times["download_seconds"] = time.perf_counter() - download_start
        times.update(setup)
    else:
        build_start = time.perf_counter()
        P, is_dangling = google_matrix_parts(A, dtype)
        times.update(upload_seconds=0.0, build_seconds=time.perf_counter() - build_start, download_seconds=0.0)
        x, info = _power_iteration_cpu(P, is_dangling, p, d, x0, alpha, tol, max_iter, dtype)
    info["device"] = device
    info.setdefault("gpu_build", None)
    if nodelist is not None:
        host = x.get() if _device.is_cupy_array(x) else x
        x = dict(zip(nodelist, map(float, host)))
    info.update(times, total_seconds=time.perf_counter() - call_start)
    return (x, info) if full_output else x


def _gpu_setup(A: CSRMatrix, dtype):
    """(M, scale or None, dangling mask on the GPU, {gpu_build, upload_seconds, build_seconds}) for the GPU.

    M is A^T with scales (device build) or the prescaled P (host build, and
    always for int64 indices, which cuSPARSE's transpose does not take).
    """
    cupy = _device.require_cupy()
    stream = cupy.cuda.get_current_stream()
    start = time.perf_counter()
    if A.index_dtype == np.dtype(np.int32):
        A_dev = A.to_device()
        stream.synchronize()
        uploaded = time.perf_counter()
        M, scale, is_dangling = device_google_parts(A_dev, dtype)
        _warm_spmv(M)
        stream.synchronize()
        built = time.perf_counter()
        return M, scale, is_dangling, {"gpu_build": "device", "upload_seconds": uploaded - start,
                                       "build_seconds": built - uploaded}
    P, dangling_host = google_matrix_parts(A, dtype)
    built = time.perf_counter()
    M = P.to_device()
    key = "pagerank-dangling-mask"
    if key not in M._cache:
        M._cache[key] = cupy.asarray(dangling_host.astype(np.uint8))
    is_dangling = M._cache[key]
    stream.synchronize()
    uploaded = time.perf_counter()
    _warm_spmv(M)
    stream.synchronize()
    return M, None, is_dangling, {"gpu_build": "host", "upload_seconds": uploaded - built,
                                  "build_seconds": built - start + time.perf_counter() - uploaded}


def _power_iteration_cpu(P, is_dangling, p, d, x0, alpha, tol, max_iter, dtype):
    from .backends.cpu import csr_product

    n = P.n_rows
    uniform = dtype.type(1.0 / n)
    x = np.full(n, uniform, dtype=dtype) if x0 is None else x0.copy()
    teleport = (1 - alpha) * (uniform if p is None else p)
    dangling_to = np.full(n, uniform, dtype=dtype) if d is None else d
    dangling_rows = np.flatnonzero(is_dangling)
    start = time.perf_counter()
    for iteration in range(1, max_iter + 1):
        x_last = x
        x = alpha * (csr_product(P, x_last) + x_last[dangling_rows].sum() * dangling_to) + teleport
        err = float(np.abs(x - x_last).sum())
        if err < n * tol:
            seconds = time.perf_counter() - start
            return x.astype(dtype, copy=False), {"iterations": iteration, "error": err, "seconds": seconds,
                                                 "seconds_per_iteration": seconds / iteration}
    raise PowerIterationFailedConvergence(max_iter)


def _power_iteration_gpu(M, scale, is_dangling, p, d, x0, alpha, tol, max_iter, dtype, check_every):
    """One SpMV and one fused update launch per iteration; the host looks every check_every iterations.

    With ``scale`` (device build) M is A^T and the SpMV reads z = scale * x,
    which the update kernel writes for the next iteration; without it M is
    the prescaled P and the SpMV reads x. The SpMV writes into one
    preallocated y, so an iteration allocates nothing.

    The iterates go round a ring of check_every + 1 buffers (x0 in the last
    one) and every iteration's (L1 change, dangling sum of its iterate) pair
    goes into the same slot of a small device table, so a check finds the
    first converged iterate of its window and returns exactly that one. An
    iteration never writes the slot it reads (with check_every = 1 too), so
    the update kernel's x_old and x_new never alias.
    """
    from .backends.cuda import pagerank as cuda_pagerank
    from .ops.spmv import spmv

    cupy = _device.require_cupy()
    n = M.n_rows
    check_every = DEFAULT_GPU_CHECK_EVERY if check_every is None else int(check_every)
    if check_every < 1:
        raise InputError(f"check_every must be >= 1, got {check_every}")
    check_every = max(1, min(check_every, max_iter))
    scaled = scale is not None
    kernel = cuda_pagerank.step_kernel(dtype, uniform_teleport=p is None, uniform_dangling=d is None, scaled=scaled)
    p_dev = cupy.asarray(p) if p is not None else is_dangling  # any valid pointer when uniform
    d_dev = cupy.asarray(d) if d is not None else is_dangling
    slots = check_every + 1
    ring = cupy.empty((slots, n), dtype=dtype)
    ring[slots - 1] = 1.0 / n if x0 is None else cupy.asarray(x0)
    start_vector = ring[slots - 1]
    y = cupy.empty(n, dtype=dtype)  # the SpMV's output, reused every iteration
    grid, block = (cuda_pagerank.grid(n),), (cuda_pagerank.SOLVER_BLOCK,)
    partials = cupy.empty(2 * grid[0], dtype=cupy.float64)
    counter = cupy.zeros(1, dtype=cupy.uint32)
    if scaled:
        z = (start_vector.astype(cupy.float64) * scale).astype(dtype)  # as the kernel computes it
        z_arg, scale_arg = z, scale
    else:
        z_arg, scale_arg = y, partials  # never touched without SCALED; any valid pointers
    # table[slot] = (L1 change of the iteration that wrote ring[slot], dangling sum of ring[slot])
    table = cupy.zeros((slots, 2), dtype=cupy.float64)
    table[slots - 1, 1] = cupy.where(is_dangling != 0, start_vector.astype(cupy.float64), 0.0).sum()
    n64, uniform, alpha64 = np.int64(n), np.float64(1.0 / n), np.float64(alpha)
    # views made once: slicing inside the loop would cost host time every iteration
    iterates = [ring[i] for i in range(slots)]
    dangling_sums = [table[i, 1:] for i in range(slots)]
    outputs = [table[i] for i in range(slots)]
    cupy.cuda.get_current_stream().synchronize()
    start = time.perf_counter()
    previous = slots - 1  # the slot holding x0
    for iteration in range(1, max_iter + 1):
        slot = (iteration - 1) % slots
        spmv(M, z if scaled else iterates[previous], out=y)
        kernel(grid, block, (y, iterates[previous], iterates[slot], z_arg, scale_arg, is_dangling, p_dev, d_dev,
                             n64, uniform, alpha64, dangling_sums[previous], partials, counter, outputs[slot]))
        previous = slot
        if iteration % check_every == 0 or iteration == max_iter:
            errors = table[:, 0].get()  # the one host sync of this window
            first = (iteration - 1) // check_every * check_every + 1
            for done in range(first, iteration + 1):
                err = errors[(done - 1) % slots]
                if err < n * tol:
                    seconds = time.perf_counter() - start
                    x = ring[(done - 1) % slots].copy()
                    return x, {"iterations": done, "error": float(err), "seconds": seconds,
                               "seconds_per_iteration": seconds / iteration}
    raise PowerIterationFailedConvergence(max_iter)
