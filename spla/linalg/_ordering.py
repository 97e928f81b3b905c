"""Schedules for triangular solves (host, NumPy): level sets and multicolour orderings.

:func:`level_sets` splits a triangular factor's rows into levels that can each
be solved in parallel. In natural ordering a solve is as deep as the longest
dependency chain of the factor (about 2 sqrt(n) levels on a 2D grid). If the rows are
coloured so that no two rows of one colour are coupled (a colouring of the
symmetrised pattern of A) and numbered colour by colour, the factors of
``P A P^T`` couple a row only to rows of other colours: each triangular
solve is then one row-parallel step per colour, whatever the size of the grid.

:func:`greedy_coloring` is the sequential greedy colouring (each vertex takes
the smallest colour none of its already-coloured neighbours has): one vertex at
a time in C where a compiler is at hand (``ordering.c``), else without a loop
over vertices: the vertices are processed level by level of the dependency
graph "i after its neighbours that come first", and the vertices of one level
have no edge between them, so a level is coloured at once. Both give the same
colours. In natural order a 5-point or 7-point grid gets the two red-black
colours.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..errors import InputError

#: Greedy in natural order costs the NumPy path one vectorised step per level of
#: its dependency graph; beyond this many levels (chain-like matrices, with up to
#: n levels) the vertices are visited in a fixed random order instead, whose
#: graph is only about log n levels deep (Jones-Plassmann's colouring). The C path
#: keeps the same rule, so a matrix gets the same colours either way.
MIN_NATURAL_LEVEL_CAP = 1024
NATURAL_ROWS_PER_LEVEL = 256

#: The seed of that random order: the colouring of a matrix never changes between runs.
RANDOM_ORDER_SEED = 0


def level_sets(strict: sp.csr_matrix, *, max_levels: int | None = None):
    """Level sets of a strict triangle's dependency graph.

    Parameters
    ----------
    strict : scipy.sparse CSR, n x n
        Row i depends on row k for every stored (i, k); the graph must be
        acyclic (a strict triangle is).
    max_levels : int, optional
        Stop and return None once the graph proves deeper than this (each
        level costs a few NumPy calls: a chain of n rows has n levels).

    Returns
    -------
    order : int64 array, shape (n,)
        The rows, level by level (ascending row order within a level).
    level_ptr : int64 array, shape (levels + 1,)
        Level l is ``order[level_ptr[l]:level_ptr[l + 1]]``.
    """
    n = strict.shape[0]
    levels = _triangle_levels_in_c(strict)
    if levels is not None:
        level, count = levels
        if max_levels is not None and count > max_levels:
            return None
        order = np.argsort(level, kind="stable")  # ascending row order within a level
        return order.astype(np.int64), np.r_[0, np.cumsum(np.bincount(level, minlength=count))].astype(np.int64)
    pending = np.diff(strict.indptr).astype(np.int64)  # dependencies not yet solved, per row
    dependents = strict.T.tocsr()  # row k of the transpose: the rows that need x_k
    frontier = np.flatnonzero(pending == 0)
    pieces: list[np.ndarray] = []
    sizes = [0]
    while frontier.size:
        if max_levels is not None and len(pieces) == max_levels:
            return None
        pieces.append(frontier)
        sizes.append(frontier.size)
        starts, stops = dependents.indptr[frontier], dependents.indptr[frontier + 1]
        counts = stops - starts
        if not counts.sum():
            break
        # the dependents of every frontier row, gathered without a Python loop
        offsets = np.repeat(starts - np.cumsum(counts) + counts, counts) + np.arange(counts.sum())
        rows, hits = np.unique(dependents.indices[offsets], return_counts=True)
        pending[rows] -= hits
        frontier = rows[pending[rows] == 0]
    order = np.concatenate(pieces) if pieces else np.zeros(0, dtype=np.int64)
    if order.size != n:
        raise InputError("the dependency graph has a cycle: not a triangular matrix")
    return order.astype(np.int64), np.cumsum(sizes).astype(np.int64)


def symmetric_pattern(A) -> sp.csr_matrix:
    """The pattern of ``A + A^T`` without the diagonal, as a sorted boolean CSR matrix."""
    A = sp.csr_matrix(A)
    if A.shape[0] != A.shape[1]:
        raise InputError(f"a colouring needs a square matrix, got {A.shape[0]}x{A.shape[1]}")
    pattern = sp.csr_matrix((np.ones(A.nnz, dtype=bool), A.indices, A.indptr), shape=A.shape)
    pattern = (pattern + pattern.T).tocsr()
    pattern.setdiag(False)
    pattern.eliminate_zeros()
    pattern.sort_indices()
    return pattern


def _gather_rows(indptr, indices, rows):
    """(segment of each entry, entries) of the given CSR rows, without a Python loop."""
    starts, stops = indptr[rows], indptr[rows + 1]
    counts = stops - starts
    total = int(counts.sum())
    offsets = np.repeat(starts - np.cumsum(counts) + counts, counts) + np.arange(total, dtype=np.int64)
    return np.repeat(np.arange(rows.size, dtype=np.int64), counts), indices[offsets]


def smallest_missing(segment, values, segments: int):
    """Per segment, the smallest non-negative integer not among its values (``mex``).

    ``segment`` is sorted (entries of one segment are contiguous), as
    :func:`_gather_rows` makes it.
    """
    mex = np.zeros(segments, dtype=np.int64)
    if not values.size:
        return mex
    if values.max() < 62:  # one int64 bit mask per segment
        starts = np.flatnonzero(np.r_[True, segment[1:] != segment[:-1]])
        masks = np.bitwise_or.reduceat(np.left_shift(np.int64(1), values), starts)
        lowest_free = ~masks & (masks + 1)  # a power of two <= 2^62: its float log2 is exact
        mex[segment[starts]] = np.log2(lowest_free.astype(np.float64)).astype(np.int64)
        return mex
    width = int(values.max()) + 2
    keys = np.unique(segment * width + values)  # sorted, distinct per segment
    seg, value = keys // width, keys % width
    first = np.searchsorted(seg, np.arange(segments))
    position = np.arange(keys.size) - first[seg]
    mex[:] = np.diff(np.r_[first, keys.size])  # no gap: the values are 0..len-1
    gaps = np.flatnonzero(value != position)  # sorted, so the first gap of a segment comes first
    gap_seg, first_gap = np.unique(seg[gaps], return_index=True)
    mex[gap_seg] = position[gaps[first_gap]]
    return mex


def greedy_coloring(A, *, order: str = "auto") -> np.ndarray:
    """A colouring of the symmetrised pattern of A: no two coupled rows share a colour.

    Parameters
    ----------
    A : scipy.sparse matrix (or anything ``scipy.sparse.csr_matrix`` takes), n x n
        Only the pattern is read; ``A[i, j]`` or ``A[j, i]`` stored couples i and j.
    order : {"auto", "natural", "random"}
        The order the greedy visits the rows in. ``"natural"``: by row index
        (sequential greedy; red-black on a grid). ``"random"``: a fixed
        pseudo-random permutation (Jones-Plassmann; usually more colours).
        ``"auto"``: natural unless its dependency graph is deeper than
        ``max(MIN_NATURAL_LEVEL_CAP, n / NATURAL_ROWS_PER_LEVEL)`` levels.

    Returns
    -------
    colors : int64 array, shape (n,)
        Colours 0, 1, ..., k - 1; every colour is used.
    """
    from ..io import native

    if order not in ("auto", "natural", "random"):
        raise InputError(f"order must be 'auto', 'natural' or 'random', got {order!r}")
    pattern = symmetric_pattern(A)
    compiled = native.greedy_colorer()
    if compiled is not None:
        return _greedy_in_c(pattern, order, *compiled)
    n = pattern.shape[0]
    schedule = None
    if order != "random":
        cap = None if order == "natural" else max(MIN_NATURAL_LEVEL_CAP, n // NATURAL_ROWS_PER_LEVEL)
        earlier = sp.tril(pattern, k=-1, format="csr")
        schedule = level_sets(earlier, max_levels=cap)
    if schedule is None:
        _, earlier = _earlier_by_rank(pattern)
        schedule = level_sets(earlier)
    rows_by_level, level_ptr = schedule
    earlier.sort_indices()
    indptr, indices = earlier.indptr.astype(np.int64), earlier.indices.astype(np.int64)
    colors = np.full(n, -1, dtype=np.int64)
    for level in range(level_ptr.size - 1):
        rows = rows_by_level[level_ptr[level]:level_ptr[level + 1]]
        segment, neighbours = _gather_rows(indptr, indices, rows)
        colors[rows] = smallest_missing(segment, colors[neighbours], rows.size)
    return colors


def color_permutation(colors) -> tuple[np.ndarray, np.ndarray]:
    """(permutation, color_ptr): the rows colour by colour, ascending within a colour.

    ``permutation[color_ptr[c]:color_ptr[c + 1]]`` are the rows of colour c;
    ``A[permutation][:, permutation]`` is A in that numbering.
    """
    colors = np.asarray(colors, dtype=np.int64)
    permutation = np.argsort(colors, kind="stable").astype(np.int64)
    counts = np.bincount(colors, minlength=int(colors.max(initial=-1)) + 1)
    return permutation, np.r_[0, np.cumsum(counts)].astype(np.int64)


def _earlier_by_rank(pattern: sp.csr_matrix):
    """(the random visiting order, each vertex's neighbours that come before it in that order)."""
    n = pattern.shape[0]
    rank = np.random.default_rng(RANDOM_ORDER_SEED).permutation(n)
    rows = np.repeat(np.arange(n), np.diff(pattern.indptr))
    keep = rank[pattern.indices] < rank[rows]
    earlier = sp.csr_matrix((np.ones(int(keep.sum()), dtype=bool), (rows[keep], pattern.indices[keep])),
                            shape=(n, n))
    return np.argsort(rank), earlier


def _greedy_in_c(pattern: sp.csr_matrix, order: str, color, depth) -> np.ndarray:
    """:func:`greedy_coloring` one vertex at a time in C (spla/linalg/ordering.c): the same
    colours, the "auto" order decided by the natural graph's depth as the NumPy path decides it."""
    n = pattern.shape[0]
    visit, earlier = np.arange(n, dtype=np.int64), sp.tril(pattern, k=-1, format="csr")
    indptr, indices = earlier.indptr.astype(np.int64), earlier.indices.astype(np.int64)
    if order == "auto":
        levels_of = np.zeros(n, dtype=np.int64)  # kept alive through the call
        levels = depth(n, indptr.ctypes.data, indices.ctypes.data, levels_of.ctypes.data)
        if levels > max(MIN_NATURAL_LEVEL_CAP, n // NATURAL_ROWS_PER_LEVEL):
            order = "random"
    if order == "random":
        visit, earlier = _earlier_by_rank(pattern)
        visit = visit.astype(np.int64)
        indptr, indices = earlier.indptr.astype(np.int64), earlier.indices.astype(np.int64)
    colors = np.full(n, -1, dtype=np.int64)
    stamp = np.full(n + 1, -1, dtype=np.int64)
    color(n, visit.ctypes.data, indptr.ctypes.data, indices.ctypes.data, colors.ctypes.data, stamp.ctypes.data)
    return colors


def _triangle_levels_in_c(strict: sp.csr_matrix):
    """(each row's level, the number of levels) of a strict lower or upper triangle, in one pass of
    C (spla/linalg/ordering.c); None without a compiler or for another graph (the frontier sweep
    then takes it)."""
    from ..io import native

    levels_of = native.triangle_leveler()
    n = strict.shape[0]
    if levels_of is None or n == 0:
        return None
    indptr, indices = strict.indptr.astype(np.int64), strict.indices.astype(np.int64)
    rows = np.repeat(np.arange(n, dtype=np.int64), np.diff(indptr))
    if (indices < rows).all():
        lower = True
    elif (indices > rows).all():
        lower = False
    else:
        return None
    level = np.empty(n, dtype=np.int64)
    count = levels_of(n, indptr.ctypes.data, indices.ctypes.data, int(lower), level.ctypes.data)
    return level, int(count)
