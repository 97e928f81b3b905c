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


def stats_from_lengths(lengths: np.ndarray, nnz: int) -> RowStats:
    n = int(lengths.size)
    if n == 0:
        return RowStats(0, int(nnz), 0.0, 0.0, 0.0, 0, 0)
    mean = float(nnz) / n
    std = float(lengths.std())
    return RowStats(n, int(nnz), mean, std, std / mean if mean > 0 else 0.0, int(lengths.max()),
                    int(np.count_nonzero(lengths == 0)))
