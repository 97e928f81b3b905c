"""Smoothed-aggregation AMG set-up where the matrix lives: NumPy/SciPy on the host, CuPy/cupyx on the GPU.

One implementation, written against the array module ``xp`` of the matrix's
side and a small side object (:class:`HostSetupOps` here,
:class:`spla.backends.cuda.amg.DeviceSetupOps` on the GPU) that holds what
differs: the two graph steps of the aggregation, sparse products and
transposes (SciPy, or cuSPARSE through cupyx with the memory checked first),
and the step clocks. Every loop runs over levels, MIS rounds or Lanczos steps,
never over rows; inside a level the host reads a handful of scalars (the
aggregate count, a convergence flag every two MIS rounds, product sizes).

Each level, in the steps :attr:`SetupResult.times` reports:

``strength``
    Symmetric strength of connection (pyamg's ``"symmetric"``): j is a strong
    neighbour of i when ``|a_ij| >= theta sqrt(|a_ii a_jj|)``; the diagonal
    and numerically zero couplings (below :data:`NEGLIGIBLE` of that scale)
    never are.
``aggregation``
    Parallel MIS(2) aggregation (Bell, Dalton and Olson, "Exposing
    fine-grained parallelism in algebraic multigrid methods", 2012): nodes
    carry hashed random priorities (a fixed seed, so the aggregates are the
    same on every run and on both sides); each round takes the maximum of
    (state, priority, node) over the distance-2 neighbourhood, and an
    undecided node that is its own maximum becomes a root while one that sees
    a root goes out. The roots of the maximal distance-2 independent set seed
    the aggregates; their neighbours join them, then the neighbours' own
    neighbours join the neighbour of highest priority. Nodes without a strong
    neighbour stay out of every aggregate (pyamg's standard aggregation does
    the same); the smoother alone treats them.
``spectral_radius``
    rho(D^-1 A) (and rho(A) for the Chebyshev smoother) from
    :data:`LANCZOS_STEPS` Lanczos steps on ``D^-1/2 A D^-1/2``: the scalars
    stay on the matrix's side until the tridiagonal matrix is read once.
``tentative``
    P0 from the near-null space B (constant on the finest level, pyamg's
    coarse B below): ``P0[i, J] = B[i] / ||B on aggregate J||``; the coarse B
    is those norms.
``smoothing``
    ``P = (I - omega / rho D^-1 A) P0``, one sparse product (omega = 4/3).
``galerkin``
    ``A_c = P^T (A P)``: two sparse products and a transpose (R = P^T).
``coarse_solve``
    Coarsening stops at ``max_coarse`` rows (or ``max_levels``, or a level
    that does not coarsen); the coarsest operator is inverted densely (LU, or
    the pseudo-inverse when it is singular).
"""

from __future__ import annotations

import math
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .. import device as _device
from ..csr import CSRMatrix
from ..errors import InputError
from ..planning.stats import cached_row_stats, remember_row_stats, stats_from_summary

#: Rows of the coarsest level below which coarsening stops by default, per side. On the GPU a
#: dense inverse of 2000 rows builds in milliseconds and one product with it costs less than the
#: launches of one more level; on the host a smaller one pays, sparse levels being cheap there.
DEFAULT_MAX_COARSE = {"gpu": 2000, "cpu": 500}
#: A coarsest level above this many rows is refused (its dense inverse would not pay).
DENSE_LIMIT = 8192
#: Lanczos steps per spectral-radius estimate (the extreme Ritz value settles within a few percent).
LANCZOS_STEPS = 10
#: Couplings weaker than this fraction of sqrt(|a_ii a_jj|) are rounding, never strong.
NEGLIGIBLE = 1e-12
#: Largest |A X - I| entry for which the LU inverse X of the coarsest operator is kept.
INVERSE_TOLERANCE = 1e-8
#: The priorities' seed: the same aggregates on every run and on both sides.
SEED = 0x5EED

# An aggregation key: (state << STATE_SHIFT) | (28-bit hashed priority << 32) | node.
STATE_SHIFT = 60
OUT, UNDECIDED, ROOT = 0, 1, 2
NODE_MASK = (1 << 32) - 1
ASSIGNED = 1 << 62  # join passes: an assigned node's key sits above every unassigned one
MIS_CHECK_EVERY = 2  # rounds between reads of the "still undecided" flag
FLAG_SLOTS = 64  # one flag per round, allocated in blocks
JOIN_PASSES = 2  # neighbours of roots, then their neighbours: covers every node of a symmetric graph
MAX_EXTRA_PASSES = 8  # more join passes, only for a structurally nonsymmetric graph
_GOLDEN = 0x9E3779B97F4A7C15
_UINT64 = (1 << 64) - 1


# ------------------------------------------------------------------ results
@dataclass
class SetupLevel:
    """One level of the hierarchy, as the set-up left it (float64, on the matrix's side)."""

    A: CSRMatrix
    diagonal: Any
    P: CSRMatrix | None = None
    R: CSRMatrix | None = None
    aggregates: Any = None  # aggregate of each row, -1 for rows without a strong neighbour
    rho_dinv_a: float | None = None
    rho_a: float | None = None
    mis_rounds: int = 0


@dataclass
class SetupResult:
    levels: list
    coarse_inverse: Any
    times: dict = field(default_factory=dict)
    on_gpu: bool = False


@dataclass(frozen=True)
class SetupOptions:
    theta: float = 0.0
    prolongation_omega: float | None = 4.0 / 3.0  # None: unsmoothed aggregation (P = P0)
    max_levels: int = 10
    max_coarse: int | None = None  # None: DEFAULT_MAX_COARSE of the matrix's side
    B: Any = None
    rho_dinv_a: bool = True  # the Jacobi smoother's rho(D^-1 A)
    rho_a: bool = False  # the Chebyshev smoother's rho(A)
    lanczos_steps: int = LANCZOS_STEPS


# ------------------------------------------------------------------ the host side
@dataclass
class StrengthGraph:
    """The strength graph as CSR structure (no values), and its rows without neighbours."""

    indptr: Any
    indices: Any
    n: int
    isolated: Any
    _segments: Any = None


class HostSetupOps:
    """NumPy/SciPy versions of the set-up's side operations (the CPU path and the reference)."""

    xp = np
    on_gpu = False

    def row_ids(self, indptr, nnz: int):
        """The row of each stored entry."""
        return np.repeat(np.arange(indptr.shape[0] - 1, dtype=np.int64), np.diff(indptr))

    def row_max(self, graph: StrengthGraph, keys):
        """keys[i] maxed with keys[j] over the row's columns j."""
        if graph._segments is None:
            lengths = np.diff(graph.indptr)
            rows = np.flatnonzero(lengths)
            graph._segments = (rows, graph.indptr[:-1][rows])
        rows, starts = graph._segments
        out = keys.copy()
        if rows.size:
            out[rows] = np.maximum(out[rows], np.maximum.reduceat(keys[graph.indices], starts))
        return out

    def mis2_update(self, keys, top, flags, round_index: int, state_shift: int):
        state = keys >> state_shift
        undecided = state == UNDECIDED
        root = undecided & (top == keys)
        out = undecided & ~root & ((top >> state_shift) == ROOT)
        state = np.where(root, ROOT, np.where(out, OUT, state))
        flags[round_index] = int(bool((state == UNDECIDED).any()))
        return (state << state_shift) | (keys & ((1 << state_shift) - 1))

    def library(self, data, indices, indptr, shape, canonical: bool):
        import scipy.sparse as sp

        M = sp.csr_matrix((data, indices, indptr), shape=shape)
        if canonical:
            M.has_canonical_format = True
        return M

    def product(self, A, B, what: str):
        C = (A @ B).tocsr()
        C.sort_indices()  # SciPy leaves each row's columns unsorted; the next level wants canonical rows
        return C

    def transpose(self, A):
        return A.T.tocsr()

    def row_length_summary(self, indptr):
        return None  # host planning reads the host arrays directly

    def mark(self):
        return time.perf_counter()

    def elapsed(self, start, end) -> float:
        return end - start

    def synchronize(self):
        return None


def _ops_for(A: CSRMatrix):
    if A.on_gpu:
        from ..backends.cuda.amg import DeviceSetupOps

        return DeviceSetupOps()
    return HostSetupOps()


class _Timer:
    """Seconds per step name, summed over levels (device events on the GPU: no sync between steps)."""

    def __init__(self, ops):
        self.ops = ops
        self.spans: list = []

    @contextmanager
    def __call__(self, name: str):
        start = self.ops.mark()
        yield
        self.spans.append((name, start, self.ops.mark()))

    def totals(self) -> dict:
        totals: dict = {}
        for name, start, end in self.spans:
            totals[name] = totals.get(name, 0.0) + self.ops.elapsed(start, end)
        return totals


# ------------------------------------------------------------------ small helpers
def _host(a) -> np.ndarray:
    return a.get() if _device.is_cupy_array(a) else np.asarray(a)


def _wrap(M) -> CSRMatrix:
    """A CSRMatrix sharing a SciPy/cupyx matrix's arrays."""
    return CSRMatrix(M.data, M.indices, M.indptr, M.shape, index_dtype=M.indices.dtype, validate=False)


def _library(ops, A: CSRMatrix):
    return ops.library(A.data, A.indices, A.indptr, A.shape, canonical=True)




def _mix(x):
    """SplitMix64's finaliser on a uint64 array (wraps around the same way in NumPy and CuPy)."""
    x = x ^ (x >> np.uint64(30))
    x = x * np.uint64(0xBF58476D1CE4E5B9)
    x = x ^ (x >> np.uint64(27))
    x = x * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


def _hashed(xp, n: int, seed: int):
    return _mix(xp.arange(n, dtype=xp.uint64) + np.uint64((seed * _GOLDEN) & _UINT64))


def _priorities(xp, n: int, seed: int):
    """(28-bit hashed priority << 32) | node: distinct, pseudo-random in order, reproducible."""
    priority = (_hashed(xp, n, seed) >> np.uint64(36)).astype(xp.int64)
    return (priority << 32) | xp.arange(n, dtype=xp.int64)


def _remember_stats(ops, M: CSRMatrix) -> None:
    """Seed the SpMV planner with row statistics reduced on the device (no indptr copy to the host)."""
    if cached_row_stats(M) is not None:
        return
    summary = ops.row_length_summary(M.indptr)
    if summary is not None:
        remember_row_stats(M, stats_from_summary(M.n_rows, M.nnz, *summary))


def _prefix_count(xp, mask):
    """[0, cumsum(mask)]: where each True lands when the mask compacts an array."""
    out = xp.zeros(mask.shape[0] + 1, dtype=xp.int64)
    xp.cumsum(mask, dtype=xp.int64, out=out[1:])
    return out


# ------------------------------------------------------------------ the steps
def diagonal_of(xp, A: CSRMatrix, rows):
    on_diagonal = A.indices == rows
    diagonal = xp.zeros(A.n_rows, dtype=xp.float64)
    diagonal[rows[on_diagonal]] = A.data[on_diagonal]
    return diagonal


def strength_graph(ops, A: CSRMatrix, rows, diagonal, theta: float) -> StrengthGraph:
    """The symmetric strength graph of A (structure only)."""
    xp = ops.xp
    cols = A.indices
    magnitude = xp.abs(A.data)
    scale = xp.sqrt(xp.abs(diagonal[rows] * diagonal[cols]))
    strong = (cols != rows) & (magnitude >= theta * scale) & (magnitude > NEGLIGIBLE * scale)
    indptr = _prefix_count(xp, strong)[A.indptr].astype(A.index_dtype)
    return StrengthGraph(indptr=indptr, indices=cols[strong], n=A.n_rows, isolated=indptr[1:] == indptr[:-1])


def mis2_roots(ops, graph: StrengthGraph, priorities):
    """Roots of a maximal distance-2 independent set of the graph's non-isolated nodes, and the rounds it took."""
    xp = ops.xp
    keys = (xp.where(graph.isolated, OUT, UNDECIDED).astype(xp.int64) << STATE_SHIFT) | priorities
    rounds = 0
    flags = xp.zeros(FLAG_SLOTS, dtype=xp.int32)
    while True:
        slot = rounds % FLAG_SLOTS
        if slot == 0 and rounds:
            flags = xp.zeros(FLAG_SLOTS, dtype=xp.int32)
        top = ops.row_max(graph, ops.row_max(graph, keys))
        keys = ops.mis2_update(keys, top, flags, slot, STATE_SHIFT)
        rounds += 1
        # every round decides at least the undecided node of highest key, so this ends
        if rounds % MIS_CHECK_EVERY == 0 and not bool(flags[slot]):
            return (keys >> STATE_SHIFT) == ROOT, rounds


def _join_neighbours(ops, graph: StrengthGraph, aggregates, priorities):
    """Each unassigned node with an assigned neighbour joins the aggregate of the one of highest priority."""
    xp = ops.xp
    assigned = aggregates >= 0
    top = ops.row_max(graph, xp.where(assigned, priorities | ASSIGNED, 0))
    join = ~assigned & (top >= ASSIGNED)
    return xp.where(join, aggregates[top & NODE_MASK], aggregates)


def aggregate(ops, graph: StrengthGraph, seed: int):
    """(aggregate of each node, -1 for isolated ones; aggregate count; MIS rounds)."""
    xp = ops.xp
    priorities = _priorities(xp, graph.n, seed)
    roots, rounds = mis2_roots(ops, graph, priorities)
    aggregates = xp.where(roots, xp.cumsum(roots, dtype=xp.int64) - 1, -1)
    count = int(roots.sum())
    for _ in range(JOIN_PASSES):
        aggregates = _join_neighbours(ops, graph, aggregates, priorities)
    left = (aggregates < 0) & ~graph.isolated
    remaining = int(left.sum())
    # a structurally nonsymmetric graph can leave nodes past distance 2 of every root
    for _ in range(MAX_EXTRA_PASSES):
        if not remaining:
            break
        aggregates = _join_neighbours(ops, graph, aggregates, priorities)
        left = (aggregates < 0) & ~graph.isolated
        now = int(left.sum())
        if now == remaining:
            break
        remaining = now
    if remaining:  # what no pass reached becomes aggregates of one
        aggregates = xp.where(left, count + xp.cumsum(left, dtype=xp.int64) - 1, aggregates)
        count += remaining
    return aggregates, count, rounds


def tentative(ops, aggregates, count: int, B, index_dtype):
    """(P0 with one entry per aggregated row, the coarse near-null space)."""
    xp = ops.xp
    n = aggregates.shape[0]
    member = aggregates >= 0
    owner = xp.where(member, aggregates, 0)
    squares = xp.bincount(owner, weights=xp.where(member, B * B, 0.0), minlength=count)
    norms = xp.sqrt(squares)
    values = B / xp.where(norms > 0, norms, 1.0)[owner]
    indptr = _prefix_count(xp, member).astype(index_dtype)
    P0 = ops.library(values[member], aggregates[member].astype(index_dtype), indptr, (n, count), canonical=True)
    return P0, norms


def spectral_radius(xp, matvec, n: int, steps: int, seed: int) -> float:
    """Largest |eigenvalue| of a symmetric operator from ``steps`` Lanczos steps.

    alpha and beta stay on the vectors' side (no host sync in the loop); the
    tridiagonal matrix is read once. A vanishing beta means the Krylov space
    is exhausted: the Ritz values before it are exact.
    """
    steps = max(1, min(steps, n))
    v = (_hashed(xp, n, seed) >> np.uint64(11)).astype(xp.float64) * 2.0**-52 - 1.0
    v /= xp.linalg.norm(v)
    alphas, betas = [], []
    previous = None
    with np.errstate(divide="ignore", invalid="ignore"):
        for _ in range(steps):
            w = matvec(v)
            alpha = xp.dot(w, v)
            w -= alpha * v
            if previous is not None:
                w -= betas[-1] * previous
            beta = xp.linalg.norm(w)
            alphas.append(alpha)
            betas.append(beta)
            previous, v = v, w / beta
    a = _host(xp.stack(alphas)).astype(np.float64)
    b = _host(xp.stack(betas)).astype(np.float64)
    m = a.size
    exhausted = np.flatnonzero(~(b > NEGLIGIBLE * max(float(np.abs(a[0])), 1e-300)))
    if exhausted.size:
        m = int(exhausted[0]) + 1
    T = np.diag(a[:m]) + np.diag(b[:m - 1], 1) + np.diag(b[:m - 1], -1)
    return float(np.abs(np.linalg.eigvalsh(T)).max())


def _matvec(ops, A: CSRMatrix):
    if ops.on_gpu:
        from ..ops.spmv import spmv

        return lambda v: spmv(A, v)
    S = A.to_scipy()
    return lambda v: S @ v


def _radii(ops, A: CSRMatrix, diagonal, options: SetupOptions, seed: int):
    """(rho(D^-1 A), rho(A)), each only when a smoother or the prolongation needs it.

    rho(D^-1 A) is taken on the similar symmetric matrix D^-1/2 A D^-1/2.
    """
    xp = ops.xp
    matvec = _matvec(ops, A)
    rho_dinv_a = rho_a = None
    if options.rho_dinv_a or options.prolongation_omega is not None:
        scale = 1.0 / xp.sqrt(diagonal)
        rho_dinv_a = spectral_radius(xp, lambda v: scale * matvec(scale * v), A.n_rows, options.lanczos_steps, seed)
    if options.rho_a:
        rho_a = spectral_radius(xp, matvec, A.n_rows, options.lanczos_steps, seed)
    return rho_dinv_a, rho_a


def smoothed_prolongation(ops, A: CSRMatrix, rows, diagonal, weight: float, P0):
    """``(I - weight D^-1 A) P0``: the Jacobi step built on A's structure, then one product."""
    data = (-weight) * (A.data / diagonal[rows]) + (A.indices == rows)
    S = ops.library(data, A.indices, A.indptr, A.shape, canonical=True)
    return ops.product(S, P0, "prolongation smoothing (I - omega D^-1 A) P0")


def dense_of(xp, A: CSRMatrix, rows):
    dense = xp.zeros(A.shape, dtype=xp.float64)
    dense[rows, A.indices] = A.data
    return dense


def dense_inverse(xp, dense):
    """LU inverse, or the pseudo-inverse (pyamg's ``"pinv"``) when the operator is singular."""
    n = dense.shape[0]
    with _device.device_memory_errors("AMG coarsest solve"):
        try:
            inverse = xp.linalg.inv(dense)
        except np.linalg.LinAlgError:  # NumPy's exactly singular; CuPy returns non-finite values instead
            inverse = None
        if inverse is not None:
            residual = float(xp.abs(dense @ inverse - xp.eye(n, dtype=dense.dtype)).max()) if n else 0.0
            if math.isfinite(residual) and residual <= INVERSE_TOLERANCE:
                return inverse
        return xp.linalg.pinv(dense)


def _near_null_space(xp, B, n: int):
    if B is None:
        return xp.ones(n, dtype=xp.float64)
    array = xp.asarray(B if _device.is_cupy_array(B) and xp is not np else _host(B), dtype=xp.float64)
    if array.ndim == 2 and array.shape[1] == 1:
        array = array.ravel()
    if array.shape != (n,):
        raise InputError(f"setup='spla' takes one near-null-space vector B of length {n} (or shape ({n}, 1)), "
                         f"got shape {tuple(array.shape)}; several vectors need setup='pyamg'")
    return array


def _canonical(A: CSRMatrix) -> CSRMatrix:
    A = A.astype(np.float64)
    if not A.has_canonical_format:
        A = A.copy()
        A.sum_duplicates()
    return A


# ------------------------------------------------------------------ the driver
def smoothed_aggregation(A: CSRMatrix, options: SetupOptions) -> SetupResult:
    """The smoothed-aggregation hierarchy of a square CSRMatrix, built on A's side."""
    ops = _ops_for(A)
    xp = ops.xp
    started = time.perf_counter()
    timer = _Timer(ops)
    A = _canonical(A)
    if A.n_rows >= NODE_MASK:
        raise InputError(f"setup='spla' aggregates up to {NODE_MASK - 1:,} rows, got {A.n_rows:,}")
    if A.nnz and not bool(xp.isfinite(A.data).all()):
        raise InputError("A has NaN or Inf values")
    B = _near_null_space(xp, options.B, A.n_rows)
    max_coarse = options.max_coarse
    if max_coarse is None:
        max_coarse = DEFAULT_MAX_COARSE["gpu" if ops.on_gpu else "cpu"]
    levels: list[SetupLevel] = []
    while True:
        index = len(levels)
        with timer("strength"):
            rows = ops.row_ids(A.indptr, A.nnz)
            diagonal = diagonal_of(xp, A, rows)
        level = SetupLevel(A=A, diagonal=diagonal)
        levels.append(level)
        _remember_stats(ops, A)
        coarsen = A.n_rows > max_coarse and index + 1 < options.max_levels
        if coarsen:
            if not bool((diagonal > 0).all()):
                row = int(xp.argmax(~(diagonal > 0)))
                raise InputError(f"setup='spla' needs a positive diagonal (a symmetric positive definite A); "
                                 f"row {row} of level {index} has {float(diagonal[row])}; setup='pyamg' takes "
                                 f"other matrices")
            with timer("strength"):
                graph = strength_graph(ops, A, rows, diagonal, options.theta)
            with timer("aggregation"):
                aggregates, count, level.mis_rounds = aggregate(ops, graph, SEED + index)
            coarsen = 0 < count < A.n_rows
        if not coarsen:
            if A.n_rows > DENSE_LIMIT:
                raise InputError(f"AMG level {index} has {A.n_rows:,} rows and does not coarsen further (max_levels "
                                 f"= {options.max_levels}, or no strong connections); its dense solve would need "
                                 f"{A.n_rows:,}^2 values: raise max_levels or lower theta")
            with timer("coarse_solve"):
                coarse_inverse = dense_inverse(xp, dense_of(xp, A, rows))
            break
        with timer("spectral_radius"):
            level.rho_dinv_a, level.rho_a = _radii(ops, A, diagonal, options, SEED + index)
        with timer("tentative"):
            P0, B = tentative(ops, aggregates, count, B, A.index_dtype)
        with timer("smoothing"):
            if options.prolongation_omega is None:
                P = P0
            else:
                assert level.rho_dinv_a is not None
                P = smoothed_prolongation(ops, A, rows, diagonal, options.prolongation_omega / level.rho_dinv_a, P0)
        with timer("galerkin"):
            AP = ops.product(_library(ops, A), P, "product A P")
            R = ops.transpose(P)
            coarse = ops.product(R, AP, "Galerkin product P^T (A P)")
        level.P, level.R, level.aggregates = _wrap(P), _wrap(R), aggregates
        _remember_stats(ops, level.P)
        _remember_stats(ops, level.R)
        A = _wrap(coarse)
    ops.synchronize()
    times = timer.totals()
    times["total"] = time.perf_counter() - started
    return SetupResult(levels=levels, coarse_inverse=coarse_inverse, times=times, on_gpu=ops.on_gpu)
