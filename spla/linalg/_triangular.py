"""Sparse triangular solves with a level-set analysis built once, and ILU(0)/IC(0).

A triangular system's rows form a dependency graph (row i needs x_k for
every off-diagonal entry (i, k)). The *levels* of that graph (level 0: rows
with no dependency; level l: rows whose dependencies all sit in levels < l)
can each be solved in parallel. :class:`TriangularSolver` computes them once
(:func:`level_sets`) and keeps the strict triangle reordered level by level,
so one application is a sweep over the levels:

- GPU: ``kernels/solver_trisolve.cu``. A level with many rows is one launch
  (a thread per row); a run of consecutive small levels is one launch of a
  single block that steps through them with a barrier between levels, which
  is what keeps a 2D grid's ~2 sqrt(n) thin diagonal levels from costing one
  launch each.
- CPU: the same sweep with a SciPy product per level, or, when the levels
  are too small for the sweep to pay, the triangle factored once by SuperLU
  (SciPy's ``splu`` in T's own order: its factors are T and the identity),
  whose solve is one sequential pass in C.

:func:`ilu0` and :func:`ic0` factor on the host (vectorised over the rows of
a level, the same schedule) and apply through two such solvers. By default
(``ordering="color"``) they first renumber A colour by colour
(``_ordering.greedy_coloring``) and factor ``P A P^T``: its factors have one
level per colour (2 on a 5-point grid instead of ~2 sqrt(n)), and the
solvers take P as their ``permutation``, so applying ``P^T (L U)^{-1} P``
costs no pass beyond the per-colour sweeps.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .. import device as _device
from ..csr import CSRMatrix, as_csr
from ..errors import InputError
from ._ordering import color_permutation, greedy_coloring, level_sets

# levels up to this many rows join one single-block launch on the GPU (see backends/cuda/trisolve.py)
GROUP_MAX_ROWS = 2048

#: On the CPU the level sweep is used when levels hold this many rows on average; below, the SuperLU
#: pass. Fitted on half of 72 triangles (IC(0)/ILU(0) of shared matrices and grids, both orderings),
#: where any cut in (256, 333] picks alike, and within 1.4% of the faster plan (geomean) on the other
#: half (``scripts/bench_precond.py --parts trisolve``, BENCHMARKS.md).
CPU_SWEEP_MIN_ROWS_PER_LEVEL = 300


class SingularTriangularError(InputError, np.linalg.LinAlgError):
    """A zero on the diagonal of a triangular factor (SciPy raises LinAlgError for it)."""


def _strict_and_diagonal(T: sp.csr_matrix, lower: bool):
    """(strict triangle as sorted CSR, diagonal) of a host CSR matrix; the other triangle is ignored."""
    T = sp.csr_matrix(T)
    strict = sp.tril(T, k=-1, format="csr") if lower else sp.triu(T, k=1, format="csr")
    strict.sum_duplicates()
    strict.sort_indices()
    return strict, T.diagonal()


class TriangularSolver:
    """Solves ``T x = b`` for one sparse triangular T; the analysis is done once.

    Parameters
    ----------
    T : CSRMatrix or scipy/cupyx sparse matrix, n x n
        Only its ``lower`` (or upper) triangle and diagonal are read.
    lower : bool
    unit_diagonal : bool
        Take the diagonal as ones (T's diagonal is not read).
    permutation : int array of shape (n,), optional
        T is given in a permuted numbering: its row and column s are the
        system's row and column ``permutation[s]``. The solve is then
        ``x[permutation] = T^{-1} b[permutation]``, i.e. it solves
        ``(P^T T P) x = b`` with ``(P v)[s] = v[permutation[s]]``, with the
        permutation folded into the row indices of the sweep (no separate
        gather or scatter pass). This is how :func:`ilu0` and :func:`ic0`
        apply the factors of a reordered matrix.

    ``solve(b)`` takes NumPy or CuPy b of shape (n,) or (n, k); the GPU copy
    of the analysis is made on the first GPU call and kept.
    """

    def __init__(self, T, *, lower: bool = True, unit_diagonal: bool = False, permutation=None):
        csr = as_csr(T).to_host()
        if csr.n_rows != csr.n_cols:
            raise InputError(f"a triangular solve needs a square matrix, got {csr.n_rows}x{csr.n_cols}")
        if csr.dtype.kind == "c":
            raise InputError("complex systems are not supported by spla")
        self.shape = (csr.n_rows, csr.n_cols)
        self.dtype = np.dtype(csr.dtype) if csr.dtype.kind == "f" else np.dtype(np.float64)
        self.lower = bool(lower)
        self.unit_diagonal = bool(unit_diagonal)
        self.permutation = None if permutation is None else _checked_permutation(permutation, self.shape[0])
        strict, diagonal = _strict_and_diagonal(csr.to_scipy(), self.lower)
        if not self.unit_diagonal:
            zero = np.flatnonzero(diagonal == 0)
            if zero.size:
                row = int(zero[0] if self.permutation is None else self.permutation[zero[0]])
                raise SingularTriangularError(f"A is singular: zero entry on diagonal (row {row})")
        self.order, self.level_ptr = level_sets(strict)
        self.levels = int(self.level_ptr.size - 1)
        self._strict = strict
        # the sweep in the system's numbering: slot s solves row rows[s], its strict row reordered by level
        # and its columns renamed the same way, so the GPU kernel and the host sweep never permute a vector
        reordered = strict[self.order]
        if self.permutation is None:
            self._rows = self.order
        else:
            self._rows = self.permutation[self.order]
            reordered = sp.csr_matrix((reordered.data, self.permutation[reordered.indices], reordered.indptr),
                                      shape=reordered.shape)
        reordered.sort_indices()
        self._reordered = reordered
        self._inverse_diagonal = (np.ones(self.shape[0]) if self.unit_diagonal
                                  else 1.0 / diagonal.astype(np.float64))
        self._host: dict = {}
        self._device: dict = {}

    # ------------------------------------------------------------------ CPU
    def _host_plan(self, dtype):
        """("sweep", a SciPy product per level) where levels are wide, else ("superlu", T factored
        once by SuperLU in its own order: a sequential solve in C, no fill, no pivoting)."""
        plan = self._host.get(dtype.str)
        if plan is None:
            reordered = self._reordered.astype(dtype)
            inverse = self._inverse_diagonal[self.order].astype(dtype)
            n = self.shape[0]
            if n >= CPU_SWEEP_MIN_ROWS_PER_LEVEL * max(self.levels, 1):
                steps = []
                for level in range(self.levels):
                    begin, end = int(self.level_ptr[level]), int(self.level_ptr[level + 1])
                    rows = self._rows[begin:end]
                    block = reordered[begin:end]
                    steps.append((rows, block if block.nnz else None, inverse[begin:end]))
                plan = ("sweep", steps)
            else:
                from scipy.sparse.linalg import splu

                diagonal = sp.diags(1.0 / self._inverse_diagonal)
                T = sp.csc_matrix(self._strict + diagonal, dtype=dtype)
                # a triangle in its own order with its diagonal as pivots: SuperLU's factors are T
                # and the identity, so a solve is one pass over T
                plan = ("superlu", splu(T, permc_spec="NATURAL", diag_pivot_thresh=0.0,
                                        options={"SymmetricMode": True}))
            self._host[dtype.str] = plan
        return plan

    def _solve_host(self, b, dtype):
        kind, plan = self._host_plan(dtype)
        if kind == "superlu":
            if self.permutation is None:
                return plan.solve(b)
            x = np.empty_like(b)
            x[self.permutation] = plan.solve(b[self.permutation])
            return x
        x = np.empty_like(b)
        for rows, block, inverse in plan:
            rhs = b[rows]
            if block is not None:
                rhs = rhs - (block @ x if b.ndim == 1 else block @ x)
            x[rows] = rhs * (inverse if b.ndim == 1 else inverse[:, None])
        return x

    # ------------------------------------------------------------------ GPU
    def _solve_device(self, b, dtype, out=None):
        from ..backends.cuda.trisolve import LevelSetSolve

        cupy = _device.require_cupy()
        key = (cupy.cuda.Device().id, dtype.str)
        solve = self._device.get(key)
        if solve is None:  # the analysis's arrays uploaded once per device and dtype
            solve = self._device[key] = LevelSetSolve(self._rows, self._reordered,
                                                      self._inverse_diagonal[self.order], self.level_ptr,
                                                      self.unit_diagonal, dtype)
        if b.ndim == 2:
            return cupy.stack([solve(cupy.ascontiguousarray(b[:, j])) for j in range(b.shape[1])], axis=1)
        return solve(b, out)

    def launch_count(self) -> int:
        """Kernel launches of one GPU solve (after grouping small levels)."""
        small = np.diff(self.level_ptr) <= GROUP_MAX_ROWS
        # a large level is one launch, and so is each run of consecutive small ones
        return int((~small).sum() + (small & ~np.r_[False, small[:-1]]).sum())

    # --------------------------------------------------------------- public
    def solve(self, b, out=None):
        """x with ``T x = b`` for b of shape (n,) or (n, k), on b's side (b is not modified)."""
        if b.shape[0] != self.shape[0] or b.ndim not in (1, 2):
            raise InputError(f"b must have shape (n,) or (n, k) with n = {self.shape[0]}, got {b.shape}")
        dtype = _solve_dtype(self.dtype, b.dtype)
        if _device.is_cupy_array(b):
            cupy = _device.require_cupy()
            return self._solve_device(cupy.ascontiguousarray(b, dtype=dtype), dtype, out)
        return self._solve_host(np.ascontiguousarray(b, dtype=dtype), dtype)

    def __repr__(self) -> str:
        side = "lower" if self.lower else "upper"
        return (f"<spla.linalg.TriangularSolver {side} {self.shape[0]}x{self.shape[1]}, nnz {self._strict.nnz} "
                f"off the diagonal, {self.levels} levels>")


def _checked_permutation(permutation, n: int) -> np.ndarray:
    permutation = np.asarray(permutation)
    if permutation.shape != (n,) or permutation.dtype.kind not in "iu":
        raise InputError(f"permutation must be an integer array of shape ({n},), got {permutation.dtype} "
                         f"{permutation.shape}")
    permutation = permutation.astype(np.int64)
    seen = np.zeros(n, dtype=bool)
    inside = (permutation >= 0) & (permutation < n)
    seen[permutation[inside]] = True
    if not inside.all() or not seen.all():
        raise InputError("permutation must hold each of 0 .. n-1 exactly once")
    return permutation


def _solve_dtype(matrix_dtype, vector_dtype) -> np.dtype:
    vector_dtype = np.dtype(vector_dtype)
    if vector_dtype.kind == "c":
        raise InputError("complex systems are not supported by spla")
    if np.dtype(matrix_dtype) == np.float32 and vector_dtype == np.float32:
        return np.dtype(np.float32)
    return np.dtype(np.float64)


def spsolve_triangular(A, b, lower=True, overwrite_A=False, overwrite_b=False, unit_diagonal=False):
    """Solve ``A x = b`` for a sparse triangular A (SciPy's signature).

    Parameters
    ----------
    A : CSRMatrix, scipy/cupyx sparse matrix, shape (n, n)
        Only the lower (``lower=True``) or upper triangle and the diagonal are
        read; entries of the other triangle are ignored.
    b : numpy.ndarray or cupy.ndarray, shape (n,) or (n, k)
        Decides the side the solve runs on.
    lower : bool
    overwrite_A, overwrite_b : bool
        Accepted for SciPy compatibility; spla never writes A or b.
    unit_diagonal : bool
        Take A's diagonal as ones.

    Returns
    -------
    x : array on b's side, float32 when A and b are float32, else float64.

    Raises
    ------
    SingularTriangularError
        (a ``numpy.linalg.LinAlgError``) a zero on the diagonal.
    InputError
        Shapes that do not fit, complex values.

    Notes
    -----
    Each call analyses A (its level sets) anew; to solve with one matrix many
    times build a :class:`TriangularSolver` once and call its ``solve``.

    See Also
    --------
    scipy.sparse.linalg.spsolve_triangular, cupyx.scipy.sparse.linalg.spsolve_triangular
    """
    del overwrite_A, overwrite_b
    return TriangularSolver(A, lower=lower, unit_diagonal=unit_diagonal).solve(b)


# ---------------------------------------------------------------- factorise
class _Elimination:
    """ILU(0) of a host CSR matrix on its own pattern, run for any values on it.

    ``row_names[i]`` is what an error calls row i (the user's numbering when
    A is a reordered copy).

    IKJ elimination restricted to the pattern: for each row i and each of
    its lower entries (i, k) in column order, ``a_ik /= u_kk`` then
    ``a_im -= a_ik u_km`` for every stored (i, m) with m > k. Where a C
    compiler is at hand this is ``ilu0.c``, one pass in C
    (:func:`spla.io.native.ilu0_eliminator`); else a NumPy schedule: rows
    of one level of L's dependency graph are independent, so each step runs
    for all rows of a level at once. Both make the same updates in the same
    order, so they give the same bits. The schedule depends on the pattern
    alone and is built once, so :func:`ic0`'s diagonal shifts rerun only
    the numeric pass.
    """

    def __init__(self, A: sp.csr_matrix, row_names=None):
        from ..io import native

        A = sp.csr_matrix(A, dtype=np.float64, copy=True)
        A.sum_duplicates()
        A.sort_indices()
        self.matrix, self.row_names = A, row_names
        n = A.shape[0]
        self.indptr, self.indices = A.indptr.astype(np.int64), A.indices.astype(np.int64)
        self.rows = np.repeat(np.arange(n, dtype=np.int64), np.diff(self.indptr))
        diagonal_positions = np.full(n, -1, dtype=np.int64)
        on_diagonal = np.flatnonzero(self.indices == self.rows)
        diagonal_positions[self.rows[on_diagonal]] = on_diagonal
        missing = np.flatnonzero(diagonal_positions < 0)
        if missing.size:
            raise InputError(f"ILU(0) needs every diagonal entry in A's pattern; row {self.row_name(missing[0])} "
                             "has none")
        self.diagonal_positions = diagonal_positions
        self.compiled = native.ilu0_eliminator()
        self._batches: list | None = None

    def row_name(self, row) -> int:
        """What an error calls row ``row`` (the user's numbering of a reordered copy)."""
        return int(row if self.row_names is None else self.row_names[row])

    def eliminate(self, shift: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
        """(the eliminated values on A's pattern, U's diagonal) for ``A + shift * diag(A)``."""
        data = self.matrix.data.copy()
        data[self.diagonal_positions] *= 1.0 + shift
        if self.compiled is not None:
            where = np.full(self.matrix.shape[0], -1, dtype=np.int64)
            self.compiled(self.matrix.shape[0], self.indptr.ctypes.data, self.indices.ctypes.data,
                          self.diagonal_positions.ctypes.data, data.ctypes.data, where.ctypes.data)
            return data, data[self.diagonal_positions]
        # a zero pivot spreads inf / nan to the pivots after it, which the callers refuse by name
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            for positions, pivot_positions, targets, multipliers, sources in self.schedule():
                data[positions] /= data[pivot_positions]
                if targets.size:
                    data[targets] -= data[multipliers] * data[sources]
        return data, data[self.diagonal_positions]

    def schedule(self) -> list:
        """The NumPy path's batches, built once: (the lower entries a batch divides, their pivots'
        positions, its updates' target, multiplier and source positions). A batch is a (level,
        rank in the row) pair; within one no two updates share a target."""
        if self._batches is not None:
            return self._batches
        n, indptr, indices, rows = self.matrix.shape[0], self.indptr, self.indices, self.rows
        diagonal_positions = self.diagonal_positions
        lower = np.flatnonzero(indices < rows)  # positions of (i, k), k < i
        lower_row, lower_col = rows[lower], indices[lower]
        # every update (i, k) -> (i, m): the row k's upper entries (k, m), m > k
        upper_start = diagonal_positions[lower_col] + 1
        counts = indptr[lower_col + 1] - upper_start
        total = int(counts.sum())
        parent = np.repeat(np.arange(lower.size, dtype=np.int64), counts)
        source = np.repeat(upper_start - np.cumsum(counts) + counts, counts) + np.arange(total, dtype=np.int64)
        keys = rows * n + indices  # ascending: CSR with sorted indices
        wanted = lower_row[parent] * n + indices[source]
        target = np.searchsorted(keys, wanted)
        found = target < keys.size
        found[found] &= keys[target[found]] == wanted[found]
        parent, source, target = parent[found], source[found], target[found]

        strict_lower = sp.csr_matrix((np.ones(lower.size), (lower_row, lower_col)), shape=(n, n))
        order, level_ptr = level_sets(strict_lower)
        level_of_row = np.empty(n, dtype=np.int64)
        level_of_row[order] = np.repeat(np.arange(level_ptr.size - 1), np.diff(level_ptr))
        rank = lower - indptr[lower_row]  # lower entries come first in a sorted row
        batch_key = level_of_row[lower_row] * (int(rank.max(initial=0)) + 1) + rank
        entry_order = np.argsort(batch_key, kind="stable")
        sorted_keys = batch_key[entry_order]
        new_batch = np.r_[True, sorted_keys[1:] != sorted_keys[:-1]] if lower.size else np.zeros(0, dtype=bool)
        batch_starts = np.flatnonzero(new_batch)
        batch_of_entry = np.empty(lower.size, dtype=np.int64)
        batch_of_entry[entry_order] = np.cumsum(new_batch) - 1
        update_order = np.argsort(batch_of_entry[parent], kind="stable")
        parent, source, target = parent[update_order], source[update_order], target[update_order]
        update_bounds = np.searchsorted(batch_of_entry[parent], np.arange(batch_starts.size + 1))
        entry_bounds = np.r_[batch_starts, lower.size]
        self._batches = []
        for batch in range(batch_starts.size):
            entries = entry_order[entry_bounds[batch]:entry_bounds[batch + 1]]
            u0, u1 = update_bounds[batch], update_bounds[batch + 1]
            self._batches.append((lower[entries], diagonal_positions[lower_col[entries]],
                                  target[u0:u1], lower[parent[u0:u1]], source[u0:u1]))
        return self._batches

    def strict_lower(self, data) -> sp.csr_matrix:
        """L, strictly lower, from :meth:`eliminate`'s values (IC(0) needs no more)."""
        return sp.tril(self._on_pattern(data), k=-1, format="csr")

    def factors(self, data) -> tuple[sp.csr_matrix, sp.csr_matrix]:
        """(L strictly lower, U upper with the diagonal) from :meth:`eliminate`'s values."""
        A = self._on_pattern(data)
        return sp.tril(A, k=-1, format="csr"), sp.triu(A, k=0, format="csr")

    def _on_pattern(self, data) -> sp.csr_matrix:
        return sp.csr_matrix((data, self.matrix.indices, self.matrix.indptr), shape=self.matrix.shape)


def _ilu0_factor(A: sp.csr_matrix, row_names=None):
    """ILU(0) of a host CSR matrix: (L strictly lower, U upper with diagonal), on A's pattern."""
    elimination = _Elimination(A, row_names)
    data, pivots = elimination.eliminate()
    bad = np.flatnonzero((pivots == 0) | ~np.isfinite(pivots))
    if bad.size:
        raise InputError(f"ILU(0) broke down: pivot {pivots[bad[0]]} in row {elimination.row_name(bad[0])}")
    return elimination.factors(data)


#: The orderings :func:`ilu0` and :func:`ic0` accept, and their default (see their Notes).
ORDERINGS = ("color", "natural")
DEFAULT_ORDERING = "color"


class _FactorPreconditioner:
    """Shared operator face of ILU0/IC0: ``matvec(v) = U^{-1} L^{-1} v`` on v's side.

    With a permutation the factors are those of ``P A P^T`` and both solves
    carry it (``TriangularSolver(permutation=)``): the operator is
    ``P^T (L U)^{-1} P`` in A's numbering, with no pass of its own for P.
    """

    shape: tuple
    dtype: np.dtype
    ordering: str
    permutation: np.ndarray | None
    colors: int | None
    _first: TriangularSolver
    _second: TriangularSolver

    def matvec(self, v):
        return self._second.solve(self._first.solve(v.ravel()))

    def matmat(self, V):
        return self._second.solve(self._first.solve(V))

    def __matmul__(self, v):
        return self.matvec(v) if v.ndim == 1 else self.matmat(v)

    def solve(self, v):
        """The preconditioner applied to v (both triangular solves)."""
        return self.matvec(v)

    @property
    def levels(self) -> tuple[int, int]:
        """Sequential steps of the two triangular solves (each step is row-parallel)."""
        return self._first.levels, self._second.levels

    def _describe(self) -> str:
        colors = f" ({self.colors} colours)" if self.colors is not None else ""
        return (f"{self.shape[0]}x{self.shape[1]}, {self.ordering} ordering{colors}, levels "
                f"{self._first.levels} + {self._second.levels}")


class ILU0Preconditioner(_FactorPreconditioner):
    """ILU(0): ``P A P^T ~ L U``, L unit lower and U upper on the pattern; see :func:`ilu0`.

    Attributes
    ----------
    L : scipy.sparse.csr_matrix
        Strictly lower part (the unit diagonal is implied), in the permuted numbering.
    U : scipy.sparse.csr_matrix
        Upper triangle with the diagonal, in the permuted numbering.
    ordering : str
        ``"natural"`` or ``"color"``.
    permutation : int64 array or None
        Row s of the factors is row ``permutation[s]`` of A (None: natural, P = I).
    colors : int or None
        Colours of the multicolour ordering (None for natural).
    """

    def __init__(self, L, U, dtype, *, ordering: str = "natural", permutation=None, colors=None):
        self.L, self.U = L, U
        self.shape = L.shape
        self.dtype = np.dtype(dtype)
        self.ordering, self.permutation, self.colors = ordering, permutation, colors
        self._first = TriangularSolver(L.astype(self.dtype), lower=True, unit_diagonal=True,
                                       permutation=permutation)
        self._second = TriangularSolver(U.astype(self.dtype), lower=False, permutation=permutation)

    def __repr__(self) -> str:
        return f"<spla.linalg.ILU0Preconditioner {self._describe()}>"


class IC0Preconditioner(_FactorPreconditioner):
    """IC(0): ``P A P^T ~ L L^T``, L lower on the lower pattern; see :func:`ic0`.

    Attributes
    ----------
    L : scipy.sparse.csr_matrix
        The lower-triangular factor with its diagonal, in the permuted numbering.
    ordering, permutation, colors
        As for :class:`ILU0Preconditioner`.
    shift : float
        The factor is that of ``A + shift * diag(A)`` (0.0: of A itself).
    """

    def __init__(self, L, dtype, *, ordering: str = "natural", permutation=None, colors=None, shift: float = 0.0):
        self.L = L
        self.shift = float(shift)
        self.shape = L.shape
        self.dtype = np.dtype(dtype)
        self.ordering, self.permutation, self.colors = ordering, permutation, colors
        self._first = TriangularSolver(L.astype(self.dtype), lower=True, permutation=permutation)
        self._second = TriangularSolver(L.T.tocsr().astype(self.dtype), lower=False, permutation=permutation)

    def __repr__(self) -> str:
        shifted = f", diagonal shifted by {self.shift:g} diag(A)" if self.shift else ""
        return f"<spla.linalg.IC0Preconditioner {self._describe()}{shifted}>"


def _host_scipy(A, what: str) -> tuple[sp.csr_matrix, np.dtype]:
    csr = A if isinstance(A, CSRMatrix) else as_csr(A)
    csr = csr.to_host()
    if csr.n_rows != csr.n_cols:
        raise InputError(f"{what} needs a square matrix, got {csr.n_rows}x{csr.n_cols}")
    if csr.dtype.kind == "c":
        raise InputError("complex systems are not supported by spla")
    dtype = np.dtype(np.float32) if csr.dtype == np.float32 else np.dtype(np.float64)
    return sp.csr_matrix(csr.to_scipy()), dtype


def _reorder(host: sp.csr_matrix, ordering: str):
    """(matrix to factor, permutation or None, colours or None) for an ordering name."""
    if ordering not in ORDERINGS:
        raise InputError(f"ordering must be one of {', '.join(map(repr, ORDERINGS))}, got {ordering!r}")
    if ordering == "natural":
        return host, None, None
    permutation, color_ptr = color_permutation(greedy_coloring(host))
    permuted = host[permutation][:, permutation].tocsr()
    return permuted, permutation, int(color_ptr.size - 1)


def ilu0(A, *, ordering: str = DEFAULT_ORDERING) -> ILU0Preconditioner:
    """Incomplete LU factorisation with no fill-in, ILU(0), as a preconditioner.

    Parameters
    ----------
    A : CSRMatrix, scipy/cupyx sparse matrix or dense array, n x n
        Every diagonal entry must be in A's pattern. Factored on the host in
        float64; the factors are kept in A's dtype (float32 stays float32).
    ordering : {"color", "natural"}, default "color"
        ``"color"``: colour the rows greedily (no two coupled rows of
        ``A + A^T`` share a colour), number them colour by colour (P) and
        factor ``P A P^T``; each triangular solve is then one row-parallel
        step per colour (2 on a 5- or 7-point grid). ``"natural"``: factor A
        as given; each solve has as many sequential steps as the factor's
        longest dependency chain (about ``2 sqrt(n)`` on a 2D grid).
        The two are different preconditioners: see the Notes.

    Returns
    -------
    ILU0Preconditioner
        ``M=`` for any solver; applying it is two triangular solves (level
        sets analysed once, GPU kernels for CuPy vectors). ``.L``, ``.U``
        hold the factors of ``P A P^T`` (``.permutation`` is P).

    Raises
    ------
    InputError
        Not square, a diagonal entry missing from the pattern, a zero pivot,
        an unknown ordering.

    Notes
    -----
    The default is ``"color"`` on both sides. An application costs a few
    SpMV-like passes instead of one step per level of a deep dependency
    chain (on the GPU one launch per colour; on the CPU one SciPy product
    per colour instead of SciPy's sequential solve), which repays the extra
    iterations the reordered factor usually needs: about 1.4x natural's on
    2D Poisson, and several times more on strongly anisotropic problems,
    where ``ordering="natural"`` may win on the CPU (BENCHMARKS.md has the
    measured iterations and times).

    See Also
    --------
    scipy.sparse.linalg.spilu, ic0
    """
    host, dtype = _host_scipy(A, "ILU(0)")
    factored, permutation, colors = _reorder(host, ordering)
    L, U = _ilu0_factor(factored, permutation)
    return ILU0Preconditioner(L, U, dtype, ordering=ordering, permutation=permutation, colors=colors)


#: ``ic0(shift="auto")``'s shifts after a breakdown: FIRST_SHIFT, doubling, up to MAX_AUTO_SHIFT
#: (the diagonal doubled). On the shared matrices the SPD ones that break down factor by 0.128
#: (bcsstk13); the indefinite ones (pattern matrices read with values 1) need 1.024-4.096, where
#: the factor is a worse preconditioner than Jacobi, so a larger need is refused, not met.
FIRST_SHIFT = 1e-3
MAX_AUTO_SHIFT = 1.0


def _auto_shifts():
    """Manteuffel's shifts for ``A + shift * diag(A)``: 0, then FIRST_SHIFT doubling."""
    yield 0.0
    shift = FIRST_SHIFT
    while shift <= MAX_AUTO_SHIFT:
        yield shift
        shift *= 2.0


def ic0(A, *, ordering: str = DEFAULT_ORDERING, shift: float | str = "auto") -> IC0Preconditioner:
    """Incomplete Cholesky factorisation with no fill-in, IC(0), as a preconditioner.

    Parameters
    ----------
    A : CSRMatrix, scipy/cupyx sparse matrix or dense array, n x n
        Symmetric with a positive diagonal (the lower pattern of ``P A P^T``
        is L's).
    ordering : {"color", "natural"}, default "color"
        ``"color"``: colour the rows greedily (no two coupled rows of
        ``A + A^T`` share a colour), number them colour by colour (P) and
        factor ``P A P^T``; each triangular solve is then one row-parallel
        step per colour (2 on a 5- or 7-point grid). ``"natural"``: factor A
        as given; each solve has as many sequential steps as the factor's
        longest dependency chain (about ``2 sqrt(n)`` on a 2D grid).
        The two are different preconditioners: see the Notes.
    shift : "auto" or float >= 0, default "auto"
        Factor ``A + shift * diag(A)``. ``"auto"`` factors A itself and, only
        where a pivot comes out <= 0, retries with shifts from
        ``FIRST_SHIFT`` = 1e-3, doubling up to ``MAX_AUTO_SHIFT`` = 1
        (Manteuffel's shifted IC); a matrix that needs more is most likely
        not positive definite and is refused. The shift taken is
        ``M.shift``. A number factors with that shift or raises.

    Returns
    -------
    IC0Preconditioner
        ``M = P^T (L L^T)^{-1} P`` for :func:`cg` and the other solvers;
        ``.L`` is the factor of ``P (A + shift diag(A)) P^T``
        (``.permutation`` is P, ``.shift`` the shift).

    Raises
    ------
    InputError
        Not square or not symmetric, a diagonal entry missing or <= 0, a
        pivot <= 0 under the given shift (``"auto"``: under every shift up
        to ``MAX_AUTO_SHIFT``), an unknown ordering or shift.

    Notes
    -----
    For symmetric A, ILU(0)'s U equals ``D L^T`` on the same pattern, so
    IC(0) is ``L D^{1/2}`` from the ILU(0) elimination. IC(0) does not exist
    for every SPD matrix (stiffness matrices such as bcsstk13 break down);
    ILU(0) of such a matrix has the same negative pivots, so it is an
    indefinite preconditioner that CG may not converge with. A shifted
    factor is positive definite; a small shift keeps it far better than
    Jacobi (bcsstk13: 523 CG iterations at 0.128, Jacobi 1,514).

    The default is ``"color"`` on both sides. An application costs a few
    SpMV-like passes instead of one step per level of a deep dependency
    chain (on the GPU one launch per colour; on the CPU one SciPy product
    per colour instead of SciPy's sequential solve), which repays the extra
    iterations the reordered factor usually needs: about 1.4x natural's on
    2D Poisson, and several times more on strongly anisotropic problems,
    where ``ordering="natural"`` may win on the CPU (BENCHMARKS.md has the
    measured iterations and times).
    """
    host, dtype = _host_scipy(A, "IC(0)")
    asymmetry = abs(host - host.T)
    scale = abs(host).max() if host.nnz else 0.0
    if asymmetry.nnz and asymmetry.max() > 1e-10 * scale:
        raise InputError("IC(0) needs a symmetric matrix (use ilu0 for a nonsymmetric one)")
    if isinstance(shift, str):
        if shift != "auto":
            raise InputError(f"shift must be 'auto' or a number >= 0, got {shift!r}")
        shifts = _auto_shifts()
    else:
        if not np.isfinite(shift) or shift < 0:
            raise InputError(f"shift must be 'auto' or a number >= 0, got {shift!r}")
        shifts = iter((float(shift),))
    factored, permutation, colors = _reorder(host, ordering)
    elimination = _Elimination(factored, permutation)
    diagonal = factored.diagonal()
    if diagonal.size and diagonal.min() <= 0:
        row = int(np.argmin(diagonal))
        raise InputError(f"IC(0) needs a positive diagonal; row {elimination.row_name(row)} has "
                         f"{diagonal[row]:.3g} (A is not positive definite)")
    for tried in shifts:
        data, pivots = elimination.eliminate(tried)
        bad = np.flatnonzero(~(pivots > 0))
        if not bad.size:
            break
    else:
        where = f"pivot {pivots[bad[0]]:.3g} <= 0 in row {elimination.row_name(bad[0])}"
        if shift == "auto":
            raise InputError(f"IC(0) broke down under every diagonal shift up to {tried:g} diag(A) ({where}): A "
                             "is most likely not positive definite (cg needs it); ic0(A, shift=S) forces a larger "
                             "shift")
        shifted = f" with the diagonal shifted by {tried:g} diag(A)" if tried else ""
        raise InputError(f"IC(0) broke down: {where}{shifted} (A not positive definite, or IC(0) unstable for it; "
                         "shift='auto' tries shifts from 1e-3, doubling)")
    L = elimination.strict_lower(data)
    root = np.sqrt(pivots)
    factor = (L @ sp.diags(root) + sp.diags(root)).tocsr()
    factor.sort_indices()
    return IC0Preconditioner(factor, dtype, ordering=ordering, permutation=permutation, colors=colors, shift=tried)
