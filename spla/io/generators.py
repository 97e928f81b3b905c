"""Synthetic sparse matrices from ``gen:`` specs, seeded and reproducible.

A generator spec names a kind and its integer arguments, separated by colons,
optionally followed by ``key=value`` options::

    gen:KIND[:ARG...][:seed=S][:dtype=float32|float64]

for example ``gen:weblike``, ``gen:poisson2d:4096``,
``gen:random:100000:16:seed=7`` or ``gen:powerlaw:16000000:8:34000``.
Integer arguments accept ``1e6``-style literals and ``_`` separators
(``gen:powerlaw:16_000_000:8``). The default seed is 0, so a spec names one
matrix: the same spec gives bit-identical arrays on every machine (the random
streams are split into fixed row chunks, independent of the core count).
Values are float64 by default and drawn as float32 numbers in (0, 1] where
they are random, so converting to float32 is exact and products are never
trivially all-ones.

Kinds (see each function's docstring):

=============================================  ==============================================
``gen:weblike``                                web-Google-sized power-law graph with locality
``gen:powerlaw:N:AVG[:MAXROW]``                power-law row lengths, web-like locality
``gen:poisson2d:N``                            5-point Laplacian on an N x N grid
``gen:poisson3d:N``                            7-point Laplacian on an N x N x N grid
``gen:banded:N:BW``                            symmetric positive definite band, half-width BW
``gen:random:N:K``                             K uniformly random columns per row
``gen:hugerows:N:H:L``                         short rows plus H rows of 0.45*L..L nnz
``gen:blockdense:N:R:C:DENSITY``               short rows plus R rows DENSITY-dense over C columns
``gen:rmat:SCALE:EDGEFACTOR``                  RMAT/Kronecker graph (0.57, 0.19, 0.19, 0.05)
=============================================  ==============================================

Every generator builds CSR directly: row lengths first (``indptr`` is their
cumulative sum), then each row's sorted, distinct columns drawn in one
vectorised pass per chunk of rows, with no global COO sort (only RMAT, whose
edges are not born row by row, sorts). Sorted random columns come from sorted
uniforms (normalised cumulative sums of exponential gaps) pushed through the
row's inverse CDF, which is monotone, so order survives; adding each entry's
position in its row to a draw from ``[0, n_cols - k]`` makes the k columns
strictly increasing.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from ..csr import CSRMatrix, index_dtype_for, value_dtype
from ..errors import InputError
from .memory import check_host_memory

PREFIX = "gen:"

# Rows are filled in chunks of about this many entries: small enough that the
# temporaries (~10 float64 arrays of a chunk) stay in a few hundred MB, large
# enough that NumPy's per-call overhead vanishes. Fixed, so results do not
# depend on the machine's core count.
CHUNK_NNZ = 1 << 21

# web-Google (SNAP) as SuiteSparse stores it: 916,428 ids, 5,105,039 links,
# 875,713 ids that take part in a link, largest in-degree 6,326.
WEB_GOOGLE_ROWS = 916_428
WEB_GOOGLE_NNZ = 5_105_039
WEB_GOOGLE_EMPTY_ROWS = WEB_GOOGLE_ROWS - 875_713
WEB_GOOGLE_MAX_ROW = 6_326

# Column locality of a web crawl (pages link mostly within their site, which
# a crawl numbers contiguously): (share of links, half-width of the window
# around the row id); the remaining share goes anywhere.
WEB_LOCALITY = ((0.45, 64), (0.30, 4096))

RMAT_PROBABILITIES = (0.57, 0.19, 0.19, 0.05)  # Graph500's a, b, c, d


# ----------------------------------------------------------------- assembly
def _assemble(lengths, n_cols, fill_rows, seed, dtype, stream) -> CSRMatrix:
    """CSR from row lengths and a function filling a chunk of rows.

    ``fill_rows(r0, r1, rng)`` returns ``(columns, values)`` for rows r0..r1-1
    in row order. Chunks run on a thread pool (NumPy releases the GIL in the
    bulk work); each chunk has its own random stream spawned from
    ``(seed, stream)`` so the result does not depend on scheduling.
    """
    lengths = np.asarray(lengths, dtype=np.int64)
    n_rows = lengths.shape[0]
    nnz = int(lengths.sum())
    index_dtype = index_dtype_for(nnz, (n_rows, n_cols))
    indptr = np.empty(n_rows + 1, dtype=index_dtype)
    indptr[0] = 0
    np.cumsum(lengths, out=indptr[1:])
    indices = np.empty(nnz, dtype=index_dtype)
    data = np.empty(nnz, dtype=dtype)

    cuts = np.searchsorted(indptr, np.arange(CHUNK_NNZ, nnz, CHUNK_NNZ), side="right")
    bounds = np.unique(np.concatenate(([0], cuts, [n_rows])))
    seeds = np.random.SeedSequence([seed, stream]).spawn(len(bounds) - 1)

    def run(chunk):
        r0, r1 = int(bounds[chunk]), int(bounds[chunk + 1])
        lo, hi = int(indptr[r0]), int(indptr[r1])
        cols, vals = fill_rows(r0, r1, np.random.default_rng(seeds[chunk]))
        if cols.shape[0] != hi - lo:
            raise AssertionError(f"generator filled {cols.shape[0]} entries for {hi - lo}")
        indices[lo:hi] = cols
        data[lo:hi] = vals

    workers = min(os.cpu_count() or 1, 16, max(1, len(bounds) - 1))
    if workers == 1:
        for chunk in range(len(bounds) - 1):
            run(chunk)
    else:
        with ThreadPoolExecutor(workers) as pool:
            list(pool.map(run, range(len(bounds) - 1)))
    # Built to satisfy the invariants by construction; validate only the cheap ends.
    A = CSRMatrix(data, indices, indptr, (n_rows, n_cols), index_dtype=index_dtype, validate=False)
    if int(A.indptr[-1]) != A.nnz:
        raise AssertionError("generator produced an inconsistent indptr")
    return A


def _random_values(rng, count):
    """Values in (0, 1], exact in float32."""
    return 1.0 - rng.random(count, dtype=np.float32)


def _row_layout(lengths):
    """For a chunk of rows: each entry's chunk-local row and position within the row."""
    lengths = np.asarray(lengths, dtype=np.int64)
    total = int(lengths.sum())
    row_of = np.repeat(np.arange(lengths.shape[0], dtype=np.int64), lengths)
    starts = np.cumsum(lengths) - lengths
    within = np.arange(total, dtype=np.int64) - starts[row_of]
    return row_of, within


def _sorted_uniforms(lengths, row_of, within, rng):
    """k sorted uniforms in [0, 1) per row: normalised cumsums of k+1 exponential gaps."""
    lengths = np.asarray(lengths, dtype=np.int64)
    gaps = rng.standard_exponential(int(lengths.sum()) + lengths.shape[0])
    cum = np.cumsum(gaps, out=gaps)
    ends = np.cumsum(lengths + 1) - 1          # each row's final gap (past its last entry)
    first = ends - lengths                     # each row's first entry in the gap array
    base = np.where(first > 0, cum[np.maximum(first - 1, 0)], 0.0)
    span = cum[ends] - base
    u = (cum[first[row_of] + within] - base[row_of]) / span[row_of]
    return np.minimum(u, np.nextafter(1.0, 0.0), out=u)


def _sorted_columns(lengths, n_cols, rng, centers=None, windows=()):
    """Sorted distinct columns, ``lengths[i]`` of them for row i of a chunk.

    Column draws follow a mixture: for each ``(share, half_width)`` in
    ``windows`` a uniform window of that half-width around ``centers[i]``
    (nested windows, shifted to stay inside the matrix), the rest uniform
    over all columns.
    """
    lengths = np.asarray(lengths, dtype=np.int64)
    row_of, within = _row_layout(lengths)
    if row_of.shape[0] == 0:
        return np.empty(0, dtype=np.int64), row_of, within
    u = _sorted_uniforms(lengths, row_of, within, rng)
    span = (n_cols - lengths + 1).astype(np.float64)   # draws live in [0, n_cols - k]
    if not windows:
        draw = u * span[row_of]
    else:
        draw = _inverse_window_cdf(u, row_of, span, centers - lengths / 2.0, windows)
    draw = np.floor(draw, out=draw).astype(np.int64)
    np.clip(draw, 0, (span - 1).astype(np.int64)[row_of], out=draw)
    draw += within
    return draw, row_of, within


def _inverse_window_cdf(u, row_of, span, centers, windows):
    """Invert, per row, the CDF of "nested uniform windows plus a uniform rest" on [0, span)."""
    shares = np.array([w for w, _ in windows])
    rest = 1.0 - shares.sum()
    # Window j covers [lo_j, lo_j + width_j), shifted to fit inside [0, span).
    widths = [np.minimum(2.0 * hw, span) for _, hw in windows]
    los = [np.clip(centers - hw, 0.0, span - width) for (_, hw), width in zip(windows, widths)]
    # Nested windows keep their ends ordered: lo_K <= ... <= lo_1 <= hi_1 <= ... <= hi_K.
    points = ([np.zeros_like(span)] + los[::-1] + [lo + w for lo, w in zip(los, widths)] + [span])

    def cdf(x):
        value = rest * x / span
        for share, lo, width in zip(shares, los, widths):
            value = value + share * np.clip((x - lo) / width, 0.0, 1.0)
        return value

    # One (rows, pieces + 1) table each, so every entry needs one gather per quantity.
    point_table = np.stack(points, axis=1)
    cdf_table = np.stack([cdf(p) for p in points], axis=1)
    piece = np.zeros(u.shape[0], dtype=np.intp)
    for j in range(1, len(points) - 1):
        piece += u >= cdf_table[row_of, j]
    x0, x1 = point_table[row_of, piece], point_table[row_of, piece + 1]
    f0, f1 = cdf_table[row_of, piece], cdf_table[row_of, piece + 1]
    # u falls in a piece only where f1 > f0, so the slope is positive there.
    return x0 + (u - f0) * (x1 - x0) / np.maximum(f1 - f0, np.finfo(np.float64).tiny)


def _powerlaw_lengths(n_rows, avg, max_row, rng, *, empty_rows=0):
    """Row lengths with a truncated power-law tail, mean ``avg`` over all rows.

    Lengths are floor(x) for x from a power law on [1, max_row + 1) whose
    exponent is solved so the mean is right; the total is then corrected to
    exactly round(n_rows * avg) by +-1 on random rows, one row is set to
    ``max_row`` so the longest row is known, and ``empty_rows`` random rows
    are left empty.
    """
    target = int(round(n_rows * avg))
    busy = n_rows - empty_rows
    if busy <= 0 or target < busy:
        raise InputError(f"an average of {avg} nnz per row needs at least one nnz in each non-empty row")
    mean_busy = target / busy
    if max_row < mean_busy or max_row * busy < target:
        raise InputError(f"MAXROW={max_row} is below the average row length {mean_busy:.3g}")
    top = float(max_row) + 1.0
    grid = (np.arange(20_000) + 0.5) / 20_000

    def quantile(q, alpha):
        # inverse CDF of density ~ x^-alpha on [1, top)
        e = 1.0 - alpha
        return (1.0 - q * (1.0 - top ** e)) ** (1.0 / e)

    lo_alpha, hi_alpha = 1.0001, 8.0   # mean(floor(x)) falls as alpha grows
    if np.floor(quantile(grid, lo_alpha)).mean() < mean_busy:
        alpha = lo_alpha
    else:
        for _ in range(60):
            mid = 0.5 * (lo_alpha + hi_alpha)
            if np.floor(quantile(grid, mid)).mean() > mean_busy:
                lo_alpha = mid
            else:
                hi_alpha = mid
        alpha = 0.5 * (lo_alpha + hi_alpha)
    busy_lengths = np.floor(quantile(rng.random(busy), alpha)).astype(np.int64)
    np.clip(busy_lengths, 1, max_row, out=busy_lengths)
    longest = int(np.argmax(busy_lengths))
    busy_lengths[longest] = max_row
    diff = target - int(busy_lengths.sum())
    adjustable = np.flatnonzero(busy_lengths > 1 if diff < 0 else busy_lengths < max_row)
    adjustable = adjustable[adjustable != longest]
    while diff:
        step = min(abs(diff), adjustable.shape[0])
        if step == 0:
            raise InputError(f"cannot reach an average of {avg} with MAXROW={max_row}")
        chosen = rng.choice(adjustable, size=step, replace=False)
        busy_lengths[chosen] += 1 if diff > 0 else -1
        diff -= step if diff > 0 else -step
        adjustable = np.flatnonzero(busy_lengths > 1 if diff < 0 else busy_lengths < max_row)
        adjustable = adjustable[adjustable != longest]
    lengths = np.zeros(n_rows, dtype=np.int64)
    lengths[np.sort(rng.permutation(n_rows)[:busy])] = rng.permutation(busy_lengths)
    return lengths


def _local_graph(lengths, n_cols, seed, dtype, windows=WEB_LOCALITY) -> CSRMatrix:
    """Rows of the given lengths with web-crawl column locality around the diagonal."""
    n_rows = lengths.shape[0]

    def fill(r0, r1, rng):
        k = lengths[r0:r1]
        centers = np.arange(r0, r1, dtype=np.float64) * (n_cols / max(n_rows, 1))
        cols, _, _ = _sorted_columns(k, n_cols, rng, centers, windows)
        return cols, _random_values(rng, cols.shape[0])

    return _assemble(lengths, n_cols, fill, seed, dtype, stream=1)


# ------------------------------------------------------------------- kinds
def weblike(*, seed: int = 0, dtype=np.float64) -> CSRMatrix:
    """A synthetic graph with web-Google's size and row-length distribution.

    916,428 x 916,428 with exactly 5,105,039 nnz: 40,715 empty rows (the ids
    web-Google never uses), the rest power-law lengths (mean ~5.8, longest
    row 6,326 like web-Google's largest in-degree, i.e. the rows of A^T that
    PageRank multiplies by). Columns have a crawl's locality: 45% within
    +-64 of the row id, 30% within +-4096, 25% anywhere. Values are random in
    (0, 1].

    See Also
    --------
    powerlaw : the same construction at any size.
    networkx.scale_free_graph : a preferential-attachment model (slow at this size).
    """
    rng = np.random.default_rng(np.random.SeedSequence([seed, 0]))
    lengths = _powerlaw_lengths(WEB_GOOGLE_ROWS, WEB_GOOGLE_NNZ / WEB_GOOGLE_ROWS, WEB_GOOGLE_MAX_ROW, rng,
                                empty_rows=WEB_GOOGLE_EMPTY_ROWS)
    return _local_graph(lengths, WEB_GOOGLE_ROWS, seed, dtype)


def powerlaw(n: int, avg: float, max_row: int | None = None, *, seed: int = 0, dtype=np.float64) -> CSRMatrix:
    """N x N with power-law row lengths averaging AVG and web-like column locality.

    The longest row is exactly ``max_row`` (default ``round(avg * sqrt(n))``:
    about 34k for 16M rows averaging 8, about 5.6k at web-Google's size);
    nnz is exactly ``round(n * avg)``. No row is empty. Columns as in
    :func:`weblike`. A 16M-row, 128M-nnz instance takes a few GB and tens of
    seconds on one core, less on many (chunks run in threads).

    See Also
    --------
    weblike, rmat
    """
    if n < 1:
        raise InputError(f"gen:powerlaw needs N >= 1, got {n}")
    if avg < 1 or avg > n:
        raise InputError(f"gen:powerlaw needs 1 <= AVG <= N, got AVG={avg}")
    max_row = min(n, max(int(math.ceil(avg)), int(round(avg * math.sqrt(n))))) if max_row is None else max_row
    if not 1 <= max_row <= n:
        raise InputError(f"gen:powerlaw needs 1 <= MAXROW <= N, got MAXROW={max_row}")
    rng = np.random.default_rng(np.random.SeedSequence([seed, 0]))
    lengths = _powerlaw_lengths(n, avg, max_row, rng)
    return _local_graph(lengths, n, seed, dtype)


def _stencil(n_per_side: int, dims: int, seed: int, dtype) -> CSRMatrix:
    """Second-difference Laplacian (2*dims on the diagonal, -1 to each grid neighbour)."""
    n = n_per_side ** dims
    strides = [n_per_side ** d for d in range(dims)]       # x, y, z strides
    # Neighbours in increasing column order: -z, -y, -x, self, +x, +y, +z.
    offsets = [-s for s in reversed(strides)] + [0] + list(strides)
    axes = list(reversed(range(dims))) + [None] + list(range(dims))

    def valid_neighbours(rows):
        """(rows, 2*dims+1) mask: which stencil points fall inside the grid."""
        mask = np.ones((rows.shape[0], len(offsets)), dtype=bool)
        for j, (offset, axis) in enumerate(zip(offsets, axes)):
            if axis is None:
                continue
            coordinate = (rows // strides[axis]) % n_per_side
            mask[:, j] = coordinate > 0 if offset < 0 else coordinate < n_per_side - 1
        return mask

    lengths = np.empty(n, dtype=np.int8)
    step = 1 << 22
    for r0 in range(0, n, step):
        rows = np.arange(r0, min(n, r0 + step), dtype=np.int64)
        lengths[r0:r0 + rows.shape[0]] = valid_neighbours(rows).sum(axis=1)
    centre = offsets.index(0)

    def fill(r0, r1, rng):
        rows = np.arange(r0, r1, dtype=np.int64)
        mask = valid_neighbours(rows)
        cols = rows[:, None] + np.array(offsets, dtype=np.int64)[None, :]
        vals = np.full(mask.shape, -1.0)
        vals[:, centre] = 2.0 * dims
        return cols[mask], vals[mask]

    return _assemble(lengths, n, fill, seed, dtype, stream=2)


def poisson2d(n: int, *, seed: int = 0, dtype=np.float64) -> CSRMatrix:
    """The 5-point Laplacian on an N x N grid: N^2 rows, 4 on the diagonal, -1 off.

    Symmetric positive definite; rows in lexicographic (x fastest) order.
    ``seed`` is accepted for a uniform interface and changes nothing.

    See Also
    --------
    scipy.sparse.diags, scipy.sparse.kronsum : the same matrix built as kron(T, I) + kron(I, T).
    """
    if n < 1:
        raise InputError(f"gen:poisson2d needs N >= 1, got {n}")
    return _stencil(n, 2, seed, dtype)


def poisson3d(n: int, *, seed: int = 0, dtype=np.float64) -> CSRMatrix:
    """The 7-point Laplacian on an N x N x N grid: N^3 rows, 6 on the diagonal, -1 off.

    See Also
    --------
    poisson2d, scipy.sparse.kronsum
    """
    if n < 1:
        raise InputError(f"gen:poisson3d needs N >= 1, got {n}")
    return _stencil(n, 3, seed, dtype)


def banded(n: int, bandwidth: int, *, seed: int = 0, dtype=np.float64) -> CSRMatrix:
    """A full band of half-width BW (FEM-like), symmetric positive definite.

    Row i holds columns i-BW..i+BW (clipped at the edges).

    Off-diagonal a_ij = -r_min(i,j) / (1 + |i - j|) with r random in (0, 1],
    so the matrix is symmetric; the diagonal is 1 + the row's absolute sum,
    so it is strictly diagonally dominant and positive definite (CG works).

    See Also
    --------
    scipy.sparse.diags
    """
    if n < 1 or bandwidth < 0:
        raise InputError(f"gen:banded needs N >= 1 and BW >= 0, got N={n}, BW={bandwidth}")
    bandwidth = min(bandwidth, n - 1)
    rows = np.arange(n, dtype=np.int64)
    first = np.maximum(rows - bandwidth, 0)
    lengths = np.minimum(rows + bandwidth, n - 1) - first + 1
    weights = _random_values(np.random.default_rng(np.random.SeedSequence([seed, 0])), n).astype(np.float64)

    def fill(r0, r1, rng):
        row_of, within = _row_layout(lengths[r0:r1])
        row = row_of + r0
        cols = first[row] + within
        distance = np.abs(cols - row)
        vals = -weights[np.minimum(cols, row)] / (1.0 + distance)
        off = distance != 0
        row_abs_sum = np.bincount(row_of, weights=np.where(off, -vals, 0.0), minlength=r1 - r0)
        vals[~off] = 1.0 + row_abs_sum[row_of[~off]]
        return cols, vals

    return _assemble(lengths, n, fill, seed, dtype, stream=3)


def random(n: int, k: int, *, seed: int = 0, dtype=np.float64) -> CSRMatrix:
    """N x N with exactly K distinct, uniformly random columns in every row.

    No locality at all, so SpMV is bound by gathers from x. Values in (0, 1].

    See Also
    --------
    scipy.sparse.random : fixed density rather than fixed row length.
    """
    if n < 1 or not 0 <= k <= n:
        raise InputError(f"gen:random needs N >= 1 and 0 <= K <= N, got N={n}, K={k}")
    lengths = np.full(n, k, dtype=np.int64)

    def fill(r0, r1, rng):
        cols, _, _ = _sorted_columns(lengths[r0:r1], n, rng)
        return cols, _random_values(rng, cols.shape[0])

    return _assemble(lengths, n, fill, seed, dtype, stream=4)


def _short_rows_with(n, special_rows, special_lengths, seed, dtype, column_window=None):
    """n x n: short local rows (1..15 nnz, mean 8) plus ``special_rows`` of given lengths.

    Special rows draw uniformly random columns from ``column_window``
    (``(first, count)``) or from all columns.
    """
    rng = np.random.default_rng(np.random.SeedSequence([seed, 0]))
    lengths = rng.integers(1, 16, size=n).astype(np.int64)
    lengths[special_rows] = special_lengths
    is_special = np.zeros(n, dtype=bool)
    is_special[special_rows] = True
    first, count = column_window if column_window is not None else (0, n)

    def fill(r0, r1, rng):
        k = lengths[r0:r1]
        special = is_special[r0:r1]
        short_k = np.where(special, 0, k)
        centers = np.arange(r0, r1, dtype=np.float64)
        short_cols, short_row, short_within = _sorted_columns(short_k, n, rng, centers, ((0.9, 16),))
        long_k = np.where(special, k, 0)
        long_cols, long_row, long_within = _sorted_columns(long_k, count, rng)
        # A row is all short or all long, so each entry's place is its row start + position.
        row_starts = np.cumsum(k) - k
        cols = np.empty(int(k.sum()), dtype=np.int64)
        cols[row_starts[short_row] + short_within] = short_cols
        cols[row_starts[long_row] + long_within] = long_cols + first
        return cols, _random_values(rng, cols.shape[0])

    return _assemble(lengths, n, fill, seed, dtype, stream=5)


def hugerows(n: int, huge: int, length: int, *, seed: int = 0, dtype=np.float64) -> CSRMatrix:
    """N x N: short rows (1..15 nnz, local) plus H random rows of 0.45*L..L nnz.

    The huge rows' lengths are uniform in [0.45 L, L] and their columns
    uniform over the whole matrix; e.g. ``gen:hugerows:2000000:64:1000000``
    puts ~46M of its ~62M nnz in 64 rows, where thread-per-row kernels stall.

    See Also
    --------
    blockdense
    """
    if n < 1 or not 0 <= huge <= n or not 1 <= length <= n:
        raise InputError(f"gen:hugerows needs N >= 1, 0 <= H <= N and 1 <= L <= N, got N={n}, H={huge}, L={length}")
    rng = np.random.default_rng(np.random.SeedSequence([seed, 6]))
    rows = np.sort(rng.choice(n, size=huge, replace=False))
    lengths = rng.integers(max(1, int(0.45 * length)), length + 1, size=huge)
    return _short_rows_with(n, rows, lengths, seed, dtype)


def blockdense(n: int, dense_rows: int, dense_cols: int, density: float, *, seed: int = 0,
               dtype=np.float64) -> CSRMatrix:
    """N x N: short rows plus R rows that are DENSITY-dense over one block of C columns.

    The R rows are random; each holds round(DENSITY * C) random columns from
    the same window of C consecutive columns (placed at random), the shape the
    planner should hand to the dense GEMV/GEMM path. E.g.
    ``gen:blockdense:1000000:2000:100000:0.5`` has 100M nnz in 2000 rows.

    See Also
    --------
    hugerows
    """
    if n < 1 or not 0 <= dense_rows <= n or not 1 <= dense_cols <= n or not 0 < density <= 1:
        raise InputError("gen:blockdense needs N >= 1, 0 <= R <= N, 1 <= C <= N and 0 < DENSITY <= 1, "
                         f"got N={n}, R={dense_rows}, C={dense_cols}, DENSITY={density}")
    rng = np.random.default_rng(np.random.SeedSequence([seed, 7]))
    rows = np.sort(rng.choice(n, size=dense_rows, replace=False))
    first = int(rng.integers(0, n - dense_cols + 1))
    per_row = max(1, int(round(density * dense_cols)))
    return _short_rows_with(n, rows, per_row, seed, dtype, column_window=(first, dense_cols))


def rmat(scale: int, edge_factor: int, *, seed: int = 0, dtype=np.float64, permute: bool = True,
         probabilities=RMAT_PROBABILITIES) -> CSRMatrix:
    """An RMAT (Kronecker) graph: 2^SCALE vertices, EDGEFACTOR * 2^SCALE edges drawn.

    Each edge picks one of four quadrants at every one of SCALE levels with
    probabilities (a, b, c, d) = (0.57, 0.19, 0.19, 0.05), as Graph500 does;
    vertex ids are then randomly permuted (no artificial locality) and
    duplicate edges merged, so nnz is somewhat below the number drawn.
    Values are random in (0, 1]. Memory: ~24 bytes per drawn edge.
    ``permute=False`` (Python only) keeps the raw Kronecker ids, whose
    quadrant shares are the probabilities above. ``probabilities`` (Python
    only) replaces Graph500's (a, b, c, d); they must be positive and sum to 1.

    See Also
    --------
    networkx.generators.random_graphs : small-scale graph models.
    """
    if not 1 <= scale <= 31 or edge_factor < 1:
        raise InputError(f"gen:rmat needs 1 <= SCALE <= 31 and EDGEFACTOR >= 1, got {scale}, {edge_factor}")
    if len(probabilities) != 4 or min(probabilities) <= 0 or abs(sum(probabilities) - 1) > 1e-9:
        raise InputError(f"RMAT probabilities must be four positive numbers summing to 1, got {probabilities}")
    n = 1 << scale
    edges = edge_factor * n
    rng = np.random.default_rng(np.random.SeedSequence([seed, 8]))
    a, b, c, _ = probabilities
    keys = np.empty(edges, dtype=np.int64)  # row * n + col
    step = 1 << 21
    starts = list(range(0, edges, step))
    chunk_seeds = np.random.SeedSequence([seed, 9]).spawn(len(starts))
    bit_dtype = np.int32 if scale < 31 else np.int64

    def draw(chunk, keys=keys):  # the default binds the array the chunks fill
        chunk_rng = np.random.default_rng(chunk_seeds[chunk])
        e0 = starts[chunk]
        e1 = min(edges, e0 + step)
        rows = np.zeros(e1 - e0, dtype=bit_dtype)
        cols = np.zeros(e1 - e0, dtype=bit_dtype)
        for level in range(scale):
            r = chunk_rng.random(e1 - e0, dtype=np.float32)
            lower = r >= a + b                             # quadrant c or d: row bit set
            right = ((r >= a) & ~lower) | (r >= a + b + c)  # quadrant b or d: column bit set
            rows |= lower.astype(bit_dtype) << level
            cols |= right.astype(bit_dtype) << level
        keys[e0:e1] = rows.astype(np.int64) * n + cols

    with ThreadPoolExecutor(min(os.cpu_count() or 1, 16)) as pool:
        list(pool.map(draw, range(len(starts))))
    if permute:
        relabel = rng.permutation(n).astype(np.int64)
        keys = relabel[keys // n] * n + relabel[keys % n]
    keys.sort()  # (np.unique would hash first: several times slower at this size)
    keep = np.empty(keys.shape[0], dtype=bool)
    keep[:1] = True
    np.not_equal(keys[1:], keys[:-1], out=keep[1:])
    keys = keys[keep]
    rows, cols = np.divmod(keys, n)
    del keys
    lengths = np.bincount(rows, minlength=n)
    values = _random_values(rng, cols.shape[0])

    def fill(r0, r1, _rng):
        lo, hi = int(offsets[r0]), int(offsets[r1])
        return cols[lo:hi], values[lo:hi]

    offsets = np.concatenate(([0], np.cumsum(lengths)))
    return _assemble(lengths, n, fill, seed, dtype, stream=8)


# ------------------------------------------------------------------- specs
@dataclass(frozen=True)
class Kind:
    """One generator: its function, argument names/types and how many are optional."""

    function: Callable[..., CSRMatrix]
    args: tuple            # (name, type) pairs, in spec order
    optional: int = 0      # how many trailing args may be left out

    @property
    def usage(self) -> str:
        required = self.args[:len(self.args) - self.optional]
        text = ":".join(["gen:" + self.name] + [name for name, _ in required])
        for name, _ in self.args[len(required):]:
            text += f"[:{name}]"
        return text + "[:seed=S]"

    @property
    def name(self) -> str:
        return self.function.__name__

    @property
    def summary(self) -> str:
        return (self.function.__doc__ or "").strip().splitlines()[0]


KINDS = {kind.name: kind for kind in (
    Kind(weblike, ()),
    Kind(powerlaw, (("N", int), ("AVG", float), ("MAXROW", int)), optional=1),
    Kind(poisson2d, (("N", int),)),
    Kind(poisson3d, (("N", int),)),
    Kind(banded, (("N", int), ("BW", int))),
    Kind(random, (("N", int), ("K", int))),
    Kind(hugerows, (("N", int), ("H", int), ("L", int))),
    Kind(blockdense, (("N", int), ("R", int), ("C", int), ("DENSITY", float))),
    Kind(rmat, (("SCALE", int), ("EDGEFACTOR", int))),
)}

_NUMBER = re.compile(r"^[+-]?(\d[\d_]*)(\.\d*)?([eE][+-]?\d+)?$")


def is_spec(source) -> bool:
    """Whether ``source`` is a generator spec (starts with ``gen:``)."""
    return isinstance(source, str) and source.startswith(PREFIX)


def usage() -> str:
    """One line per kind: its spec form and what it makes (for ``--help`` texts)."""
    width = max(len(kind.usage) for kind in KINDS.values())
    return "\n".join(f"{kind.usage:<{width}}  {kind.summary}" for kind in KINDS.values())


def _parse_number(text, kind_type, spec, field):
    if not _NUMBER.match(text):
        raise InputError(f"{spec}: {field} must be a number, got {text!r}")
    value = float(text.replace("_", ""))
    if kind_type is int:
        if value != int(value):
            raise InputError(f"{spec}: {field} must be an integer, got {text!r}")
        return int(value)
    return value


def parse_spec(spec: str):
    """Split a spec into ``(Kind, positional args, seed, dtype)``; raise InputError if malformed."""
    if not is_spec(spec):
        raise InputError(f"{spec!r} is not a generator spec; expected gen:KIND[:ARG...][:seed=S]")
    fields = spec[len(PREFIX):].split(":")
    name, fields = fields[0], fields[1:]
    if name not in KINDS:
        raise InputError(f"{spec}: unknown generator kind {name!r}; expected one of {', '.join(KINDS)}")
    kind = KINDS[name]
    positional, options = [], {}
    for field in fields:
        if "=" in field:
            key, _, value = field.partition("=")
            if key not in ("seed", "dtype") or key in options:
                raise InputError(f"{spec}: unknown or repeated option {field!r}; expected {kind.usage}")
            options[key] = value
        elif options:
            raise InputError(f"{spec}: arguments must come before options; expected {kind.usage}")
        else:
            positional.append(field)
    n_required = len(kind.args) - kind.optional
    if not n_required <= len(positional) <= len(kind.args):
        raise InputError(f"{spec}: {name} takes {n_required}"
                         + (f"-{len(kind.args)}" if kind.optional else "")
                         + f" arguments, got {len(positional)}; expected {kind.usage}")
    args = [_parse_number(text, arg_type, spec, arg_name)
            for text, (arg_name, arg_type) in zip(positional, kind.args)]
    seed = None
    if "seed" in options:
        if not re.fullmatch(r"\d+", options["seed"]):
            raise InputError(f"{spec}: seed must be a non-negative integer, got {options['seed']!r}")
        seed = int(options["seed"])
    dtype = None
    if "dtype" in options:
        if options["dtype"] not in ("float32", "float64"):
            raise InputError(f"{spec}: dtype must be float32 or float64, got {options['dtype']!r}")
        dtype = np.dtype(options["dtype"])
    return kind, args, seed, dtype


def from_spec(spec: str, *, seed: int | None = None, dtype=None) -> CSRMatrix:
    """Build the matrix a ``gen:`` spec names.

    Parameters
    ----------
    spec : str
        ``gen:KIND[:ARG...][:seed=S][:dtype=D]``, see the module docstring.
    seed : int, optional
        Used when the spec names none (default 0).
    dtype : float32 or float64, optional
        Used when the spec names none (default float64).

    Returns
    -------
    CSRMatrix
        On the host, sorted distinct column indices in every row.

    Raises
    ------
    InputError
        Unknown kind, wrong argument count or values; one line naming the
        spec and its expected form.

    See Also
    --------
    scipy.sparse.random, networkx.generators
    """
    kind, args, spec_seed, spec_dtype = parse_spec(spec)
    if spec_seed is not None and seed is not None and spec_seed != seed:
        raise InputError(f"{spec}: seed given twice ({spec_seed} in the spec, {seed} as an option)")
    chosen_seed = spec_seed if spec_seed is not None else (0 if seed is None else int(seed))
    chosen_dtype = value_dtype(spec_dtype or dtype or np.float64)
    n_rows, nnz = declared_size(kind.name, args)
    check_host_memory(memory_needed(n_rows, nnz, chosen_dtype),
                      f"{spec} matrix ({n_rows:,} rows, about {nnz:,} nnz)")
    return kind.function(*args, seed=chosen_seed, dtype=chosen_dtype)


def declared_size(name: str, args) -> tuple[int, int]:
    """``(rows, nnz)`` a generator will make (nnz an upper estimate), from its arguments alone."""
    if name == "weblike":
        return WEB_GOOGLE_ROWS, WEB_GOOGLE_NNZ
    if name == "powerlaw":
        return int(args[0]), int(args[0] * args[1])
    if name == "poisson2d":
        return int(args[0]) ** 2, 5 * int(args[0]) ** 2
    if name == "poisson3d":
        return int(args[0]) ** 3, 7 * int(args[0]) ** 3
    if name == "banded":
        return int(args[0]), int(args[0]) * (2 * int(args[1]) + 1)
    if name == "random":
        return int(args[0]), int(args[0]) * int(args[1])
    if name == "hugerows":
        return int(args[0]), 15 * int(args[0]) + int(args[1]) * int(args[2])
    if name == "blockdense":
        return int(args[0]), 15 * int(args[0]) + int(args[1]) * max(1, round(args[3] * args[2]))
    if name == "rmat":
        return 2 ** int(args[0]), int(args[1]) * 2 ** int(args[0])
    raise InputError(f"no size rule for generator {name!r}")


def memory_needed(n_rows: int, nnz: int, dtype) -> int:
    """Peak bytes of a generator: the CSR arrays, int64 row lengths and per-row work arrays."""
    index = index_dtype_for(nnz, (n_rows, n_rows)).itemsize
    return (index + 24) * (n_rows + 1) + (index + np.dtype(dtype).itemsize) * nnz
