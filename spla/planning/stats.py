"""Row-length statistics every planning rule reads, computed once per matrix."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


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


def host_indptr(A) -> np.ndarray:
    """A's row pointer as an int64 NumPy array (the cached host copy's when A has one, else
    copied from the GPU if needed)."""
    host = A._cache.get("host")
    indptr = host.indptr if host is not None else A.indptr
    return np.asarray(indptr.get() if hasattr(indptr, "get") else indptr, dtype=np.int64)


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
