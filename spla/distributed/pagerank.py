"""PageRank on a :class:`DistCSRMatrix`, with networkx's conventions (see :func:`spla.pagerank`).

Edge i -> j is entry (i, j); each row is divided by its weighted out-degree
and the iteration is ``x <- alpha (A^T (D^-1 x) + (dangling mass) d) +
(1 - alpha) p``. A row-distributed A gives ``A^T z`` without building the
transpose: each rank multiplies its blocks' transposes and sends the sums
for its ghost columns back to their owners (the exchange plan run
backwards, :meth:`DistCSRMatrix.rmatvec_local`). One iteration costs that
product plus one Allreduce of two numbers (the L1 change and the next
dangling mass).
"""

from __future__ import annotations

import time

import numpy as np

from ..errors import InputError
from ..graph import PowerIterationFailedConvergence
from .vector import DistVector


def _normalized(A, v, name):
    if v is None:
        return None
    if not isinstance(v, DistVector) or v.shape != (A.shape[0],) or not np.array_equal(v.offsets, A.row_offsets):
        raise InputError(f"{name} must be a DistVector with one entry per node, split like A's rows")
    local = v.local.astype(np.float64)
    xp = A.xp
    total, negatives = A.comm.allreduce_sum(xp.stack([local.sum(), (local < 0).sum().astype(xp.float64)]))
    if total == 0 or not np.isfinite(total) or negatives:
        raise InputError(f"{name} must be non-negative with a positive sum")
    return local / total


def pagerank(A, alpha=0.85, personalization=None, tol=1e-6, max_iter=100, nstart=None, dangling=None, *,
             full_output=False):
    """PageRank of the graph whose (weighted) adjacency is A, by power iteration.

    Parameters
    ----------
    A : DistCSRMatrix, square; entry (i, j) is an edge i -> j
    alpha : float
        Damping factor.
    personalization, nstart, dangling : DistVector split like A's rows, optional
        Teleport distribution (default uniform), starting vector (default
        uniform) and where dangling nodes' rank goes (default the
        personalization); each is normalised to sum 1.
    tol : float
        Stop at the first iterate whose L1 change is below ``N * tol``.
    max_iter : int
        :class:`spla.graph.PowerIterationFailedConvergence` past this (on every rank).
    full_output : bool
        Also return ``{"iterations", "error", "seconds", "seconds_per_iteration"}``.

    Returns
    -------
    ranks : DistVector of float64 (``A.gather(ranks)`` collects them on rank 0)
    info : dict, only with ``full_output=True``

    See Also
    --------
    spla.pagerank, networkx.pagerank
    """
    if not hasattr(A, "rmatvec_local"):
        raise InputError(f"A must be a DistCSRMatrix, got {type(A).__name__}")
    if A.shape[0] != A.shape[1]:
        raise InputError(f"an adjacency matrix must be square, got {A.shape[0]}x{A.shape[1]}")
    if not 0 <= alpha <= 1:
        raise InputError(f"alpha must be in [0, 1], got {alpha}")
    n = A.shape[0]
    if n == 0:
        raise InputError("the graph has no nodes")
    xp, comm = A.xp, A.comm
    p = _normalized(A, personalization, "personalization")
    d = p if dangling is None else _normalized(A, dangling, "dangling")
    x0 = _normalized(A, nstart, "nstart")
    n_local = A.n_local_rows
    # weighted out-degrees are local row sums: a rank holds its rows whole
    out_weight = (A._multiply(A.diag, xp.ones(A.n_local_cols, dtype=A.dtype)).astype(np.float64)
                  + A._multiply(A.offdiag, xp.ones(A.offdiag.n_cols, dtype=A.dtype)))
    is_dangling = out_weight == 0
    scale = xp.where(is_dangling, 0.0, 1.0 / xp.where(is_dangling, 1.0, out_weight))
    uniform = 1.0 / n
    x = xp.full(n_local, uniform) if x0 is None else x0.copy()
    teleport = (1 - alpha) * (uniform if p is None else p)
    dangling_to = uniform if d is None else d
    dangling_mass = float(comm.allreduce_sum(x[is_dangling].sum().reshape(1))[0])
    start = time.perf_counter()
    for iteration in range(1, max_iter + 1):
        x_last = x
        y = A.rmatvec_local((scale * x_last).astype(A.dtype)).astype(np.float64)
        x = alpha * (y + dangling_mass * dangling_to) + teleport
        err, dangling_mass = (float(v) for v in comm.allreduce_sum(
            xp.stack([xp.abs(x - x_last).sum(), x[is_dangling].sum()])))
        if err < n * tol:
            seconds = time.perf_counter() - start
            ranks = DistVector(x, A.row_offsets, comm)
            if full_output:
                return ranks, {"iterations": iteration, "error": err, "seconds": seconds,
                               "seconds_per_iteration": seconds / iteration}
            return ranks
    raise PowerIterationFailedConvergence(max_iter)
