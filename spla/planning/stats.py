"""Row-length statistics every planning rule reads, computed once per matrix."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..device import array_module, to_host


@dataclass(frozen=True)
class RowStats:
    """Row-length statistics of one matrix."""

    n_rows: int
    nnz: int
    mean: float
    std: float
    cv: float      # std / mean (0 for an empty matrix)
    max: int
    empty: int


def cheapest_side(A):
    """A's cached host copy when it has one (reading it spares the device gathers), else A, and
    the array module of that side (NumPy: no CuPy import)."""
    host = A._cache.get("host")
    side = host if host is not None else A
    return side, np if isinstance(side.indptr, np.ndarray) else array_module(side.indptr)


def row_pointer(A):
    """A's row pointer on its cheapest side (:func:`cheapest_side`): NumPy or CuPy."""
    return cheapest_side(A)[0].indptr


def gather(array, positions: np.ndarray) -> np.ndarray:
    """``array[positions]`` (NumPy or CuPy) as a host int64 array of the shape of ``positions``:
    only the picked entries leave the GPU."""
    xp = np if isinstance(array, np.ndarray) else array_module(array)
    return np.asarray(to_host(array[xp.asarray(positions)]), dtype=np.int64)


def evenly_spaced(n: int, k: int) -> np.ndarray:
    """At most ``k`` distinct indices of 0..n-1, evenly spaced and sorted (int64): every index when
    n <= k."""
    return np.unique(np.linspace(0, n - 1, min(n, k)).astype(np.int64))


def host_indptr(A) -> np.ndarray:
    """A's row pointer as an int64 NumPy array (the cached host copy's when A has one, else
    copied from the GPU if needed)."""
    return np.asarray(to_host(cheapest_side(A)[0].indptr), dtype=np.int64)


def host_row_lengths(A) -> np.ndarray:
    """A's row lengths as an int64 NumPy array (only indptr crosses from the GPU)."""
    return np.diff(host_indptr(A))


def row_stats(A) -> RowStats:
    """Row-length statistics of A (cached on A)."""
    stats = A._cache.get("row_stats")
    if stats is None:
        stats = A._cache["row_stats"] = stats_from_lengths(host_row_lengths(A), A.nnz)
    return stats


def remember_row_stats(A, stats: RowStats) -> None:
    """Give A row statistics computed where its arrays live (a GPU reduction), so that planning
    does not copy indptr to the host: the SpMV bind of a matrix built on the device (an AMG
    level's operators) then costs no host pass over its rows."""
    if (stats.n_rows, stats.nnz) != (A.n_rows, A.nnz):
        raise ValueError(f"statistics of a {stats.n_rows}-row, {stats.nnz}-entry matrix given to a "
                         f"{A.n_rows}-row, {A.nnz}-entry one")
    A._cache["row_stats"] = stats


def cached_row_stats(A) -> RowStats | None:
    """A's row statistics if they are already known (never computes them)."""
    return A._cache.get("row_stats")


def stats_from_lengths(lengths: np.ndarray, nnz: int) -> RowStats:
    n = int(lengths.size)
    if n == 0:
        return RowStats(0, int(nnz), 0.0, 0.0, 0.0, 0, 0)
    return stats_from_summary(n, nnz, float(lengths.std()), int(lengths.max()), int(np.count_nonzero(lengths == 0)))


def stats_from_summary(n_rows: int, nnz: int, std: float, longest: int, empty: int) -> RowStats:
    """RowStats from the reductions of the row lengths (taken on whichever side holds them)."""
    if n_rows == 0:
        return RowStats(0, int(nnz), 0.0, 0.0, 0.0, 0, 0)
    mean = float(nnz) / n_rows
    return RowStats(int(n_rows), int(nnz), mean, float(std), float(std) / mean if mean > 0 else 0.0, int(longest),
                    int(empty))


# Two columns this close share a 32-byte sector of a float32 x (or neighbouring ones of float64).
NEAR_COLUMNS = 8
NEAR_SAMPLE_ROWS = 4096  # rows sampled, evenly spaced
NEAR_ROW_ENTRIES = 64    # entries read from the start of each sampled row


NEAR_SHARE_KEY = "near-share"  # A._cache[NEAR_SHARE_KEY]: near_share(A), once computed
RUN_SHARE_KEY = "run-share"    # A._cache[RUN_SHARE_KEY]: run_share(A), from the same sample


def near_share(A) -> float:
    """The share of neighbouring entries of a row whose columns are at most NEAR_COLUMNS apart,
    over NEAR_SAMPLE_ROWS evenly spaced rows (their first NEAR_ROW_ENTRIES entries); 1.0 where
    no sampled row has two entries. Low on rows of scattered columns (0.00 on uniformly random
    columns, 0.01-0.04 on Zipf-skewed ones), high on stencils, bands and blocks (0.3-1.0). Cached
    on A; only the sampled entries leave the GPU."""
    if NEAR_SHARE_KEY not in A._cache:
        _sample_neighbours(A)
    return A._cache[NEAR_SHARE_KEY]


def run_share(A) -> float:
    """The share of the same sampled neighbours whose columns are consecutive (the second one
    column past the first): about 1 - 1 / L on rows made of runs of L consecutive columns (dense
    blocks, several bands), 1.0 where no sampled row has two entries. Cached with near_share."""
    if RUN_SHARE_KEY not in A._cache:
        _sample_neighbours(A)
    return A._cache[RUN_SHARE_KEY]


def _sample_neighbours(A) -> None:
    """near_share and run_share of A, from one sample, into A's cache."""
    steps = _sampled_steps(A)
    near = run = 1.0
    if steps.size:
        near = float(np.count_nonzero(np.abs(steps) <= NEAR_COLUMNS)) / steps.size
        run = float(np.count_nonzero(steps == 1)) / steps.size
    A._cache[NEAR_SHARE_KEY], A._cache[RUN_SHARE_KEY] = near, run


def _sampled_steps(A) -> np.ndarray:
    """Column of each sampled entry less its neighbour's before it in the row (host int64)."""
    if A.n_rows == 0 or A.nnz == 0:
        return np.zeros(0, dtype=np.int64)
    rows = evenly_spaced(A.n_rows, NEAR_SAMPLE_ROWS)
    side = cheapest_side(A)[0]
    indptr, indices = side.indptr, side.indices
    starts = gather(indptr, rows)
    lengths = np.minimum(gather(indptr, rows + 1) - starts, NEAR_ROW_ENTRIES)
    total = int(lengths.sum())
    if total < 2:
        return np.zeros(0, dtype=np.int64)
    first = np.cumsum(lengths) - lengths
    positions = np.repeat(starts - first, lengths) + np.arange(total, dtype=np.int64)
    columns = gather(indices, positions)
    row_of = np.repeat(np.arange(rows.size), lengths)
    return np.diff(columns)[row_of[1:] == row_of[:-1]]


# The window of x a tile of staged's reads, and the lines of x it gathers from (auto's packed rows:
# staged where the window is narrow, or where hardly a line is read twice).
TILE_SPAN_ENTRIES = 4096   # nonzeros a tile: float32 staged's tile (256 threads x 16)
TILE_SPAN_SAMPLES = 256    # tiles sampled, evenly spaced
TILE_SPAN_KEY = "tile-span"    # A._cache[TILE_SPAN_KEY]: tile_span(A), once computed
TILE_LINES_KEY = "tile-lines"  # A._cache[TILE_LINES_KEY]: tile_lines(A), from the same sample
LINE_BYTES = 128           # a line of x: what one L1 miss brings in


def tile_span(A) -> float:
    """The median, over TILE_SPAN_SAMPLES evenly spaced tiles of TILE_SPAN_ENTRIES consecutive
    nonzeros, of the tile's largest column less its smallest: how wide a window of x a block of
    the tile kernels reads. About the window on rows near the diagonal (4,064 on rows drawn from
    diagonal blocks of 4,096 columns), about n_cols on scattered ones. 0.0 for a matrix under
    one tile. Cached on A with :func:`tile_lines` (one sample); only a number a tile leaves the GPU."""
    if TILE_SPAN_KEY not in A._cache:
        _sample_tiles(A)
    return A._cache[TILE_SPAN_KEY]


def tile_lines(A) -> float:
    """The median, over the tiles :func:`tile_span` samples, of the distinct LINE_BYTES lines of x
    (in A's value type) that a tile's nonzeros gather from: about TILE_SPAN_ENTRIES where columns are
    scattered so widely that no line is read twice, a few hundred on rows near the diagonal, in
    between where some columns are read by many rows (hubs) or rows repeat a pattern (Kronecker
    products). 0.0 for a matrix under one tile. Cached on A."""
    if TILE_LINES_KEY not in A._cache:
        _sample_tiles(A)
    return A._cache[TILE_LINES_KEY]


def _sample_tiles(A) -> None:
    n_tiles = A.nnz // TILE_SPAN_ENTRIES
    if n_tiles == 0:
        A._cache[TILE_SPAN_KEY] = A._cache[TILE_LINES_KEY] = 0.0
        return
    side, xp = cheapest_side(A)
    indices = side.indices
    tiles = evenly_spaced(n_tiles, TILE_SPAN_SAMPLES)
    sampled = indices[:n_tiles * TILE_SPAN_ENTRIES].reshape(n_tiles, TILE_SPAN_ENTRIES)[xp.asarray(tiles)]
    spans = to_host(sampled.max(axis=1)).astype(np.int64) - to_host(sampled.min(axis=1)).astype(np.int64)
    lines = xp.sort(sampled // (LINE_BYTES // np.dtype(A.dtype).itemsize), axis=1)
    distinct = 1 + to_host(xp.count_nonzero(lines[:, 1:] != lines[:, :-1], axis=1)).astype(np.int64)
    A._cache[TILE_SPAN_KEY] = float(np.median(spans))
    A._cache[TILE_LINES_KEY] = float(np.median(distinct))
