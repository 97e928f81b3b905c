"""Smoothed-aggregation AMG set-up where the matrix lives: NumPy/SciPy on the host, CuPy/cupyx on the GPU.

One implementation, written against the array module ``xp`` of the matrix's
side and a small side object (:class:`HostSetupOps` here,
:class:`spla.backends.cuda.amg.DeviceSetupOps` on the GPU) that holds what
differs: the per-row passes over a level's matrix, the graph steps of the
aggregation and the Lanczos vector steps (raw kernels on the GPU), sparse
products and transposes (SciPy, or cuSPARSE through cupyx with the memory
checked first), and the step clocks. Every loop runs over levels, MIS rounds or
Lanczos steps, never over rows. Values reach the host only through
``ops.read`` (counted in :attr:`SetupResult.reads`): per level one read for the
strength graph's size and the diagonal check, one every two MIS rounds, one
for the aggregate counts, one for the Lanczos tridiagonal matrix, and one for
the new operators' row statistics; a Galerkin product's size only where its
bound from the longest row does not pass the product's checks (cuSPARSE's
SpGEMM reads its own result size besides).

Each level, in the steps :attr:`SetupResult.times` reports:

``strength``
    The diagonal, and the symmetric strength of connection (pyamg's
    ``"symmetric"``): j is a strong neighbour of i when ``|a_ij| >= theta
    sqrt(|a_ii a_jj|)``; the diagonal and numerically zero couplings (below
    :data:`NEGLIGIBLE` of that scale) never are.
``aggregation``
    Parallel MIS(2) aggregation (Bell, Dalton and Olson, "Exposing
    fine-grained parallelism in algebraic multigrid methods", 2012) with a
    second pass: nodes carry hashed random priorities (a fixed seed, so the
    aggregates are the same on every run and on both sides); each round takes
    the maximum of (state, priority, node) over the distance-2 neighbourhood,
    and an undecided node that is its own maximum becomes a root while one
    that sees a root goes out. The roots of the maximal distance-2 independent
    set take their neighbours; then free nodes with at least
    :data:`SECOND_PASS_NEIGHBOURS` free neighbours seed more aggregates (a few
    MIS(1) rounds among them) that take their free neighbours; what is left
    joins the neighbouring aggregate of highest priority. Nodes without a
    strong neighbour stay out of every aggregate (pyamg's standard aggregation
    does the same); the smoother alone treats them.
``spectral_radius``
    rho(D^-1 A) (and rho(A) for the Chebyshev smoother) from a few Lanczos
    steps in the D inner product (:data:`LANCZOS_STEPS`): the scalars stay on
    the matrix's side until the tridiagonal matrix is read once.
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
#: Lanczos steps per spectral-radius estimate. The extreme Ritz value is a lower bound that settles
#: within a few percent: 6 steps for rho(D^-1 A), where an estimate a few percent low only makes the
#: Jacobi weights omega / rho a little larger (AMG-CG iterations on 2D/3D Poisson did not change from
#: 5 to 40 steps), 10 for the Chebyshev smoother's rho(A), whose interval must cover the spectrum.
LANCZOS_STEPS = 6
LANCZOS_STEPS_CHEBYSHEV = 10
#: cuSPARSE's SpGEMM counts intermediate products in 32-bit integers.
SPGEMM_MAX_PRODUCTS = 2**31 - 1
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
JOIN_PASSES = 1  # after the roots' neighbours: reaches every node of a symmetric graph (all within distance 2)
#: The second pass of the aggregation seeds an aggregate at free nodes with this many free strong
#: neighbours, in this many MIS(1) rounds (roots are decided in the odd rounds; see :func:`aggregate`).
SECOND_PASS_NEIGHBOURS = 5
SECOND_PASS_ROUNDS = 3
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
    reads: int = 0  # device-to-host reads the set-up made (see HostSetupOps.read)


@dataclass(frozen=True)
class SetupOptions:
    theta: float = 0.0
    prolongation_omega: float | None = 4.0 / 3.0  # None: unsmoothed aggregation (P = P0)
    max_levels: int = 10
    max_coarse: int | None = None  # None: DEFAULT_MAX_COARSE of the matrix's side
    B: Any = None
    rho_dinv_a: bool = True  # the Jacobi smoother's rho(D^-1 A)
    rho_a: bool = False  # the Chebyshev smoother's rho(A)


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
    """NumPy/SciPy versions of the set-up's side operations (the CPU path and the reference).

    The driver calls the same methods in the same order on both sides, so :attr:`reads` counts
    here the host reads the GPU set-up makes.
    """

    xp = np
    on_gpu = False

    def __init__(self):
        self.reads = 0
        self._rows_of: tuple = (None, None)

    def read(self, value) -> np.ndarray:
        """value on the host (the device side's one door for copies to the host; counted)."""
        self.reads += 1
        return np.asarray(value)

    # ------------------------------------------------------------ row passes
    def row_ids(self, indptr, nnz: int):
        """The row of each stored entry (in indptr's dtype)."""
        if self._rows_of[0] is not indptr:  # asked for again by each row pass of a level
            rows = np.repeat(np.arange(indptr.shape[0] - 1, dtype=indptr.dtype), np.diff(indptr))
            self._rows_of = (indptr, rows)
        return self._rows_of[1]

    def diagonal(self, A):
        rows = self.row_ids(A.indptr, A.nnz)
        on_diagonal = A.indices == rows
        diagonal = np.zeros(A.shape[0], dtype=np.float64)
        diagonal[rows[on_diagonal]] = A.data[on_diagonal]
        return diagonal

    def _strong(self, A, diagonal, theta: float, negligible: float):
        rows = self.row_ids(A.indptr, A.nnz)
        cols = A.indices
        magnitude = np.abs(A.data)
        scale = np.sqrt(np.abs(diagonal[rows] * diagonal[cols]))
        return (cols != rows) & (magnitude >= theta * scale) & (magnitude > negligible * scale)

    def strong_counts(self, A, diagonal, theta: float, negligible: float):
        strong = self._strong(A, diagonal, theta, negligible)
        return np.diff(_prefix_count(np, strong)[A.indptr])

    def strong_columns(self, A, diagonal, theta: float, negligible: float, graph_indptr, nnz: int):
        return A.indices[self._strong(A, diagonal, theta, negligible)]

    def jacobi_operator_values(self, A, diagonal, weight: float):
        rows = self.row_ids(A.indptr, A.nnz)
        scaled = (-weight) * (A.data / diagonal[rows])
        return np.where(A.indices == rows, scaled + 1.0, scaled)

    def segment_sum(self, segments, values, count: int):
        """out[k] = sum of values[i] with segments[i] == k, for k < count."""
        return np.bincount(segments, weights=values, minlength=count)

    def row_count(self, graph: StrengthGraph, mask):
        counts = _prefix_count(np, mask[graph.indices])[graph.indptr]
        return counts[1:] - counts[:-1]

    # ------------------------------------------------------------ graph steps
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

    def mis_round(self, graph: StrengthGraph, near, keys, flags, round_index: int, state_shift: int):
        """One MIS round (see kernels/amg_setup.cu): decide the undecided nodes from the maximum of
        ``near`` over each node's neighbourhood; flags[round_index] = 1 while some stay undecided."""
        top = self.row_max(graph, near)
        state = keys >> state_shift
        undecided = state == UNDECIDED
        root = undecided & (top == keys)
        out = undecided & ~root & ((top >> state_shift) == ROOT)
        state = np.where(root, ROOT, np.where(out, OUT, state))
        flags[round_index] = int(bool((state == UNDECIDED).any()))
        return (state << state_shift) | (keys & ((1 << state_shift) - 1))

    def join(self, graph: StrengthGraph, owner, priorities, sources):
        """Each node without an aggregate that has a neighbour among ``sources`` joins the aggregate
        of the one of highest priority (``owner`` names each node's aggregate by its root node)."""
        top = self.row_max(graph, np.where(sources, priorities | ASSIGNED, 0))
        return np.where((owner < 0) & (top >= ASSIGNED), owner[top & NODE_MASK], owner)

    def priorities(self, n: int, offset: int):
        """(28-bit hashed priority << 32) | node: distinct, pseudo-random in order, reproducible."""
        return ((_hashed(n, offset) >> np.uint64(36)).astype(np.int64) << 32) | np.arange(n, dtype=np.int64)

    def start_vector(self, n: int, offset: int):
        """Pseudo-random values in [-1, 1) from the same hash."""
        return (_hashed(n, offset) >> np.uint64(11)).astype(np.float64) * 2.0**-52 - 1.0

    # ------------------------------------------------------------ Lanczos steps
    def dot(self, a, b, scalars, slot: int, weight=None):
        scalars[slot] = np.dot(a * weight, b) if weight is not None else np.dot(a, b)

    def lanczos_orthogonalize(self, u, dinv, d, v, p, scalars, alpha_slot: int, beta_slot: int, out_slot: int):
        beta = np.sqrt(scalars[beta_slot]) if beta_slot >= 0 else 0.0
        w = u * dinv - scalars[alpha_slot] * v - beta * p
        scalars[out_slot] = np.dot(d * w, w)
        return w

    def lanczos_normalize(self, w, scalars, slot: int):
        return w / np.sqrt(scalars[slot])

    # ------------------------------------------------------------ sparse matrices
    def library(self, data, indices, indptr, shape, canonical: bool):
        import scipy.sparse as sp

        M = sp.csr_matrix((data, indices, indptr), shape=shape)
        if canonical:
            M.has_canonical_format = True
        return M

    def bound_suffices(self, products: int, A) -> bool:
        """Whether an upper bound on a product's intermediate products passes its checks (on the
        host: the device's 32-bit limit alone, so both sides count the same reads)."""
        return products <= SPGEMM_MAX_PRODUCTS

    def product(self, A, B, what: str, products: int):
        C = (A @ B).tocsr()
        C.sort_indices()  # SciPy leaves each row's columns unsorted; the next level wants canonical rows
        return C

    def transpose(self, A):
        return A.T.tocsr()

    def row_length_summaries(self, indptrs) -> list:
        """(std, longest, empty rows) of each matrix's row lengths (one read, as on the device)."""
        values = []
        for indptr in indptrs:
            lengths = np.diff(indptr)
            values += [lengths.std(dtype=np.float64) if lengths.size else 0.0, lengths.max(initial=0),
                       np.count_nonzero(lengths == 0)]
        host = self.read(np.array(values, dtype=np.float64))
        return [(float(host[k]), int(host[k + 1]), int(host[k + 2])) for k in range(0, host.size, 3)]

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
def _wrap(M) -> CSRMatrix:
    """A CSRMatrix sharing a SciPy/cupyx matrix's arrays."""
    return CSRMatrix(M.data, M.indices, M.indptr, M.shape, index_dtype=M.indices.dtype, validate=False)


def _library(ops, A: CSRMatrix):
    return ops.library(A.data, A.indices, A.indptr, A.shape, canonical=True)


def _hashed(n: int, offset: int):
    """SplitMix64's finaliser of arange(n) + offset (uint64 arithmetic wraps as in the kernels)."""
    x = np.arange(n, dtype=np.uint64) + np.uint64(offset)
    x = x ^ (x >> np.uint64(30))
    x = x * np.uint64(0xBF58476D1CE4E5B9)
    x = x ^ (x >> np.uint64(27))
    x = x * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


def _hash_offset(seed: int) -> int:
    return (seed * _GOLDEN) & _UINT64


def _remember_stats(ops, matrices) -> None:
    """Seed the SpMV planner with row statistics reduced where the matrices live (on the device: one
    read for all of them, and no indptr copy to the host)."""
    wanted = [M for M in matrices if cached_row_stats(M) is None]
    if not wanted:
        return
    for M, summary in zip(wanted, ops.row_length_summaries([M.indptr for M in wanted]), strict=True):
        remember_row_stats(M, stats_from_summary(M.n_rows, M.nnz, *summary))


def _products(ops, A, B, longest_b: int | None) -> int:
    """The intermediate products of A @ B (what the GPU's SpGEMM needs room for): the bound
    nnz(A) * ``longest_b`` (B's longest row, or a bound on it) where that bound already passes the
    product's checks (``ops.bound_suffices``: no read), else the exact count (one read)."""
    xp = ops.xp
    if not A.nnz:
        return 0
    if longest_b is not None and ops.bound_suffices(A.nnz * longest_b, A):
        return A.nnz * longest_b
    return int(ops.read(xp.diff(B.indptr)[A.indices].sum(dtype=xp.int64)))


def _longest_row(A: CSRMatrix) -> int | None:
    """A's longest row where its row statistics are known (every level's operator: see _remember_stats)."""
    stats = cached_row_stats(A)
    return None if stats is None else stats.max


def _compact(xp, mask, prefix, size: int, *arrays):
    """Each array's entries where mask holds, given prefix = _prefix_count(mask) and its total size
    (already read): a scatter, with no boolean indexing (which reads the size back itself)."""
    destination = xp.where(mask, prefix[:-1], size)
    out = []
    for array in arrays:
        buffer = xp.empty(size + 1, dtype=array.dtype)
        buffer[destination] = array
        out.append(buffer[:size])
    return out


def _prefix_count(xp, mask):
    """[0, cumsum(mask)]: where each True lands when the mask compacts an array."""
    out = xp.zeros(mask.shape[0] + 1, dtype=xp.int64)
    xp.cumsum(mask, dtype=xp.int64, out=out[1:])
    return out


# ------------------------------------------------------------------ the steps
def strength_graph(ops, A: CSRMatrix, diagonal, theta: float, first_level: bool):
    """(the symmetric strength graph of A (structure only), rows whose diagonal is not positive, non-finite
    values (first level only: later levels are products of finite ones)), with one host read."""
    xp = ops.xp
    counts = ops.strong_counts(A, diagonal, theta, NEGLIGIBLE)
    indptr = _prefix_count(xp, counts)
    checks = [indptr[-1], (~(diagonal > 0)).sum()]
    if first_level:
        checks.append((~xp.isfinite(A.data)).sum())
    nnz, nonpositive, *nonfinite = (int(v) for v in ops.read(xp.stack(checks)))
    graph = StrengthGraph(indptr=indptr.astype(A.index_dtype), indices=None, n=A.n_rows, isolated=counts == 0)
    if not nonpositive and not sum(nonfinite):
        graph.indices = ops.strong_columns(A, diagonal, theta, NEGLIGIBLE, graph.indptr, nnz)
    return graph, nonpositive, sum(nonfinite)


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
        keys = ops.mis_round(graph, ops.row_max(graph, keys), keys, flags, slot, STATE_SHIFT)
        rounds += 1
        # every round decides at least the undecided node of highest key, so this ends
        if rounds % MIS_CHECK_EVERY == 0 and not ops.read(flags[slot]):
            return (keys >> STATE_SHIFT) == ROOT, rounds


def second_pass_candidates(ops, graph: StrengthGraph, free):
    """Free nodes with at least :data:`SECOND_PASS_NEIGHBOURS` free strong neighbours."""
    return free & (ops.row_count(graph, free) >= SECOND_PASS_NEIGHBOURS)


def second_pass_roots(ops, graph: StrengthGraph, candidates, priorities):
    """An independent set of the candidates (no two adjacent) after :data:`SECOND_PASS_ROUNDS` MIS(1)
    rounds: independent after any number of rounds; not maximal, and not read back (no host read)."""
    xp = ops.xp
    keys = (xp.where(candidates, UNDECIDED, OUT).astype(xp.int64) << STATE_SHIFT) | priorities
    scratch = xp.zeros(1, dtype=xp.int32)
    for _ in range(SECOND_PASS_ROUNDS):
        keys = ops.mis_round(graph, keys, keys, scratch, 0, STATE_SHIFT)
    return (keys >> STATE_SHIFT) == ROOT


def aggregate(ops, graph: StrengthGraph, seed: int):
    """(aggregate of each node, -1 for isolated ones; aggregate count; aggregated nodes; MIS rounds).

    MIS(2) roots take their neighbours; the nodes still free that have at least
    :data:`SECOND_PASS_NEIGHBOURS` free neighbours seed a second set of aggregates (a few MIS(1)
    rounds among them), which take their free neighbours; what is left joins a neighbouring
    aggregate. Random MIS(2) roots leave wide gaps between their aggregates; without the second
    pass the gaps swell the aggregates around them, most on the Galerkin levels, whose wider
    stencils give distance-2 neighbourhoods of 20 to 60 nodes (aggregates of 18 nodes on average
    on the third level of 2D Poisson, where pyamg's have 9), and AMG-CG needed 1.6-1.8x pyamg's
    iterations on 2D Poisson, more the deeper the hierarchy. On a 5-point grid no free node has 5
    free neighbours (one of its 4 is a root's neighbour), so the finest level keeps MIS(2)'s
    aggregates there; on 3D Poisson's finest level a threshold of 4 gave 1.2x pyamg's operator
    complexity for one iteration fewer. One host read when every node is reached, besides the MIS
    rounds' flags.
    """
    xp = ops.xp
    n = graph.n
    nodes = xp.arange(n, dtype=xp.int64)
    priorities = ops.priorities(n, _hash_offset(seed))
    roots, rounds = mis2_roots(ops, graph, priorities)
    owner = xp.where(roots, nodes, -1)
    owner = ops.join(graph, owner, priorities, roots)
    free = (owner < 0) & ~graph.isolated
    seeds = second_pass_roots(ops, graph, second_pass_candidates(ops, graph, free), priorities)
    owner = xp.where(seeds, nodes, owner)
    owner = ops.join(graph, owner, priorities, seeds)
    for _ in range(JOIN_PASSES):
        owner = ops.join(graph, owner, priorities, owner >= 0)
    left = (owner < 0) & ~graph.isolated
    remaining, roots_count, members = (int(v) for v in ops.read(
        xp.stack([left.sum(), (owner == nodes).sum(), (~graph.isolated).sum()])))
    # a structurally nonsymmetric graph can leave nodes past the passes' reach of every aggregate
    for _ in range(MAX_EXTRA_PASSES):
        if not remaining:
            break
        owner = ops.join(graph, owner, priorities, owner >= 0)
        left = (owner < 0) & ~graph.isolated
        now = int(ops.read(left.sum()))
        if now == remaining:
            break
        remaining = now
    if remaining:  # what no pass reached becomes aggregates of one
        owner = xp.where(left, nodes, owner)
    numbers = xp.cumsum(owner == nodes, dtype=xp.int64) - 1
    aggregates = xp.where(owner >= 0, numbers[xp.maximum(owner, 0)], -1)
    return aggregates, roots_count + remaining, members, rounds


def tentative(ops, aggregates, count: int, members: int, B, index_dtype):
    """(P0 with one entry per aggregated row, the coarse near-null space); ``members`` aggregated rows."""
    xp = ops.xp
    n = aggregates.shape[0]
    member = aggregates >= 0
    owner = xp.where(member, aggregates, 0)
    squares = ops.segment_sum(owner, xp.where(member, B * B, 0.0), count)
    norms = xp.sqrt(squares)
    values = B / xp.where(norms > 0, norms, 1.0)[owner]
    prefix = _prefix_count(xp, member)
    values, columns = _compact(xp, member, prefix, members, values, aggregates.astype(index_dtype))
    P0 = ops.library(values, columns, prefix.astype(index_dtype), (n, count), canonical=True)
    return P0, norms


def spectral_radius(ops, matvec, diagonal, n: int, steps: int, seed: int) -> float:
    """Largest |eigenvalue| of D^-1 M (M symmetric, D a positive diagonal; None: the identity) from
    ``steps`` Lanczos steps in the D inner product, in which D^-1 M is self-adjoint.

    Each step is the product and three vector passes (:meth:`HostSetupOps.dot`,
    ``lanczos_orthogonalize``, ``lanczos_normalize``: on the GPU one launch each); alpha and beta
    stay on the vectors' side and the tridiagonal matrix is read once. A vanishing beta means the
    Krylov space is exhausted: the Ritz values before it are exact.
    """
    xp = ops.xp
    steps = max(1, min(steps, n))
    d = xp.ones(n, dtype=xp.float64) if diagonal is None else diagonal
    dinv = d if diagonal is None else 1.0 / diagonal
    # slots: 0 the start vector's squared D-norm, then alpha_k at 1 + 2k and |w_k|_D^2 at 2 + 2k
    scalars = xp.zeros(1 + 2 * steps, dtype=xp.float64)
    v = ops.start_vector(n, _hash_offset(seed))
    ops.dot(v, v, scalars, 0, weight=d)
    v = ops.lanczos_normalize(v, scalars, 0)
    previous = v
    with np.errstate(divide="ignore", invalid="ignore"):
        for k in range(steps):
            u = matvec(v)
            ops.dot(u, v, scalars, 1 + 2 * k)
            w = ops.lanczos_orthogonalize(u, dinv, d, v, previous, scalars, 1 + 2 * k, 2 * k if k else -1, 2 + 2 * k)
            previous, v = v, ops.lanczos_normalize(w, scalars, 2 + 2 * k)
        values = ops.read(scalars).astype(np.float64)
        a, b = values[1::2], np.sqrt(values[2::2])
    m = a.size
    exhausted = np.flatnonzero(~(b > NEGLIGIBLE * max(float(np.abs(a[0])), 1e-300)))
    if exhausted.size:
        m = int(exhausted[0]) + 1
    T = np.diag(a[:m]) + np.diag(b[:m - 1], 1) + np.diag(b[:m - 1], -1)
    return float(np.abs(np.linalg.eigvalsh(T)).max())


def _matvec(ops, A: CSRMatrix, internal: bool):
    """v -> A v on the set-up's side. A coarse operator (``internal``) runs the auto rule's kernel
    without the tuning-cache look-up (see ``_DeviceSide.bind`` in spla.linalg._amg)."""
    if ops.on_gpu:
        from ..ops.spmv import spmv
        from ..planning.spmv import choose_kernel

        kernel = choose_kernel(A) if internal else "auto"
        return lambda v: spmv(A, v, kernel=kernel)
    S = A.to_scipy()
    return lambda v: S @ v


def _radii(ops, A: CSRMatrix, diagonal, options: SetupOptions, index: int):
    """(rho(D^-1 A), rho(A)), each only when a smoother or the prolongation needs it."""
    seed = SEED + index
    matvec = _matvec(ops, A, internal=index > 0)
    rho_dinv_a = rho_a = None
    if options.rho_dinv_a or options.prolongation_omega is not None:
        rho_dinv_a = spectral_radius(ops, matvec, diagonal, A.n_rows, LANCZOS_STEPS, seed)
    if options.rho_a:
        rho_a = spectral_radius(ops, matvec, None, A.n_rows, LANCZOS_STEPS_CHEBYSHEV, seed)
    return rho_dinv_a, rho_a


def smoothed_prolongation(ops, A: CSRMatrix, diagonal, weight: float, P0):
    """``(I - weight D^-1 A) P0``: the Jacobi step built on A's structure, then one product (as
    many intermediate products as A has entries in aggregated columns: at most nnz(A))."""
    S = ops.library(ops.jacobi_operator_values(A, diagonal, weight), A.indices, A.indptr, A.shape, canonical=True)
    return ops.product(S, P0, "prolongation smoothing (I - omega D^-1 A) P0", products=A.nnz)


def dense_of(xp, A: CSRMatrix, rows):
    dense = xp.zeros(A.shape, dtype=xp.float64)
    dense[rows, A.indices] = A.data
    return dense


def dense_inverse(ops, dense):
    """LU inverse, or the pseudo-inverse (pyamg's ``"pinv"``) when the operator is singular."""
    xp = ops.xp
    n = dense.shape[0]
    with _device.device_memory_errors("AMG coarsest solve"):
        try:
            inverse = xp.linalg.inv(dense)
        except np.linalg.LinAlgError:  # NumPy's exactly singular; CuPy returns non-finite values instead
            inverse = None
        if inverse is not None:
            residual = float(ops.read(xp.abs(dense @ inverse - xp.eye(n, dtype=dense.dtype)).max())) if n else 0.0
            if math.isfinite(residual) and residual <= INVERSE_TOLERANCE:
                return inverse
        return xp.linalg.pinv(dense)


def _near_null_space(xp, B, n: int):
    if B is None:
        return xp.ones(n, dtype=xp.float64)
    array = xp.asarray(B if _device.is_cupy_array(B) and xp is not np else _device.to_host(B), dtype=xp.float64)
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
    B = _near_null_space(xp, options.B, A.n_rows)
    max_coarse = options.max_coarse
    if max_coarse is None:
        max_coarse = DEFAULT_MAX_COARSE["gpu" if ops.on_gpu else "cpu"]
    _remember_stats(ops, [A])
    levels: list[SetupLevel] = []
    while True:
        index = len(levels)
        with timer("strength"):
            diagonal = ops.diagonal(A)
        level = SetupLevel(A=A, diagonal=diagonal)
        levels.append(level)
        coarsen = A.n_rows > max_coarse and index + 1 < options.max_levels
        if coarsen:
            with timer("strength"):
                graph, nonpositive, nonfinite = strength_graph(ops, A, diagonal, options.theta, first_level=index == 0)
            if nonfinite:
                raise InputError("A has NaN or Inf values")
            if nonpositive:
                row = int(xp.argmax(~(diagonal > 0)))
                raise InputError(f"setup='spla' needs a positive diagonal (a symmetric positive definite A); "
                                 f"row {row} of level {index} has {float(diagonal[row])}; setup='pyamg' takes "
                                 f"other matrices")
            with timer("aggregation"):
                aggregates, count, members, level.mis_rounds = aggregate(ops, graph, SEED + index)
            coarsen = 0 < count < A.n_rows
        elif index == 0 and A.nnz and not bool(ops.read((~xp.isfinite(A.data)).sum()) == 0):
            raise InputError("A has NaN or Inf values")
        if not coarsen:
            if A.n_rows > DENSE_LIMIT:
                raise InputError(f"AMG level {index} has {A.n_rows:,} rows and does not coarsen further (max_levels "
                                 f"= {options.max_levels}, or no strong connections); its dense solve would need "
                                 f"{A.n_rows:,}^2 values: raise max_levels or lower theta")
            with timer("coarse_solve"):
                coarse_inverse = dense_inverse(ops, dense_of(xp, A, ops.row_ids(A.indptr, A.nnz)))
            break
        with timer("spectral_radius"):
            level.rho_dinv_a, level.rho_a = _radii(ops, A, diagonal, options, index)
        with timer("tentative"):
            P0, B = tentative(ops, aggregates, count, members, B, A.index_dtype)
        with timer("smoothing"):
            if options.prolongation_omega is None:
                P = P0
            else:
                assert level.rho_dinv_a is not None
                P = smoothed_prolongation(ops, A, diagonal, options.prolongation_omega / level.rho_dinv_a, P0)
        with timer("galerkin"):
            # a row of P has at most as many entries as A's row (P = S P0 on A's structure), so a
            # row of A P at most longest(A)^2: bounds that spare the exact counts' reads
            longest = _longest_row(A)
            AP = ops.product(_library(ops, A), P, "product A P", _products(ops, A, P, longest))
            R = ops.transpose(P)
            coarse = ops.product(R, AP, "Galerkin product P^T (A P)",
                                 _products(ops, R, AP, None if longest is None else longest * longest))
        level.P, level.R, level.aggregates = _wrap(P), _wrap(R), aggregates
        A = _wrap(coarse)
        _remember_stats(ops, [level.P, level.R, A])
    ops.synchronize()
    times = timer.totals()
    times["total"] = time.perf_counter() - started
    return SetupResult(levels=levels, coarse_inverse=coarse_inverse, times=times, on_gpu=ops.on_gpu,
                       reads=ops.reads)
