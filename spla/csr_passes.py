"""Passes over a CSR matrix's arrays, where they live, for the structure detection of
:mod:`spla.planning.dia` and :mod:`spla.planning.band`: NumPy on the host, one kernel each on the
GPU (:mod:`spla.backends.cuda.detect`, kernels/detect_structure.cu) giving the same answers
(tests/ops/test_detect_gpu.py); the runs of consecutive columns of :mod:`spla.planning.rle`
(:func:`column_runs`: array operations, NumPy's or CuPy's); whether a matrix stores one value
(:func:`uniform_values`); the codes of values on a palette (:func:`palette_codes`: dia's slots,
staged's values); a matrix regrouped by blocks of its columns (:func:`column_blocks`, the blocked
kernel's copy); and the row of each stored entry (:func:`entry_rows`). Planning and the backends ask these, and
planning never asks a backend.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .device import array_module

__all__ = ["DiagonalCheck", "PaletteCodes", "check_diagonals", "column_blocks", "column_runs", "entry_rows",
           "palette_codes", "row_runs", "sampled_diagonals", "uniform_values"]

#: uniform_values reads host values in pieces that start at FIRST_PIECE and double up to
#: UNIFORM_PIECE, so a matrix of many values is told apart at its first few (a pattern matrix is
#: read whole, once). A GPU matrix is read in one pass: a piece would cost a launch and a sync.
FIRST_PIECE = 256
UNIFORM_PIECE = 1 << 16


def entry_rows(indptr, positions):
    """The row of each stored entry at ``positions`` (each below ``indptr[-1]``) of a CSR structure, on
    the arrays' side: a binary search per entry among the rows' ends, so empty rows are skipped (NumPy's
    repeat would do it by counts, but CuPy's takes no array of counts). Positions in indptr's dtype are
    searched as they are; others are copied to it (callers over every entry build them in it)."""
    xp = array_module(indptr, positions)
    return xp.searchsorted(indptr[1:], positions.astype(indptr.dtype, copy=False), side="right")


def uniform_values(A, dtypes=("float32", "float64")) -> bool:
    """Whether A's dtype is in ``dtypes`` and every stored value has one bit pattern (a pattern
    matrix's ones, say): a kernel may then read that value once instead of once a nonzero, with
    the same products. Checked once on A's side and cached on A."""
    if np.dtype(A.dtype).name not in dtypes:
        return False
    key = "uniform-values"
    if key not in A._cache:
        bits = A.data.view(f"u{A.data.dtype.itemsize}")  # bits, not values: -0.0 is not 0.0, a NaN is itself
        if bits.size == 0:
            same = False
        elif A.on_gpu:
            same = bool((bits == bits[0]).all())
        else:
            start, piece, same = 0, FIRST_PIECE, True
            while same and start < bits.size:
                same = bool((bits[start:start + piece] == bits[0]).all())
                start, piece = start + piece, min(2 * piece, UNIFORM_PIECE)
        A._cache[key] = same
    return A._cache[key]


@dataclass(frozen=True)
class DiagonalCheck:
    """What :func:`check_diagonals` found."""

    missed: int  #: entries on none of the candidate diagonals
    zeros: int  #: stored zeros
    canonical: bool  #: every row's columns strictly increase
    missed_diagonals: np.ndarray  #: missed entries' diagonals, repeats kept (all while missed <= capacity)


def sampled_diagonals(A, positions: np.ndarray) -> np.ndarray:
    """column - row of A's entries at ``positions`` (int64, each below nnz), on the host."""
    if A.on_gpu:
        from .backends.cuda import detect

        return detect.sampled_diagonals(A, positions)
    return A.indices[positions].astype(np.int64) - entry_rows(A.indptr, positions)


def check_diagonals(A, candidates: np.ndarray, values, capacity: int) -> DiagonalCheck:
    """Store the value of each entry of A (nnz > 0) on one of ``candidates`` (sorted int64, at
    least one) in ``values`` (zeroed, on A's side, candidates x stride flat: entry (r, r + d) goes
    to ``values[i * stride + r]`` for ``candidates[i] == d``), and count what lies elsewhere.
    ``capacity``: how many missed entries' diagonals the GPU keeps (the caller refuses more)."""
    if A.on_gpu:
        from .backends.cuda import detect

        missed, zeros, unordered, kept = detect.check_diagonals(A, candidates, values, capacity)
        if not unordered:  # strictly increasing rows: what has_canonical_format would find
            A._remember_structure(sorted_rows=True, canonical=True)
        return DiagonalCheck(missed, zeros, not unordered, kept)
    stride = values.size // candidates.size
    rows = np.repeat(np.arange(A.n_rows, dtype=np.int64), np.diff(A.indptr))
    diagonals = A.indices.astype(np.int64) - rows
    slot = np.minimum(np.searchsorted(candidates, diagonals), candidates.size - 1)
    on = candidates[slot] == diagonals
    values[slot[on] * stride + rows[on]] = A.data[on]
    return DiagonalCheck(int(A.nnz - np.count_nonzero(on)), int(np.count_nonzero(A.data == 0)),
                         A.has_canonical_format, diagonals[~on])


def row_runs(A):
    """Each row's first column (A's index dtype, on A's side; 0 for an empty row) and how many
    rows with entries do not end at first + length - 1 (in canonical rows: are not one run)."""
    if A.on_gpu:
        from .backends.cuda import detect

        return detect.band_first(A)
    starts, ends = A.indptr[:-1], A.indptr[1:]
    filled = ends > starts
    # empty rows read entry 0 (any valid one) and are masked; a matrix with no entries has none to read
    last_entry = max(A.nnz - 1, 0)
    indices = A.indices if A.nnz else np.zeros(1, dtype=A.indices.dtype)
    first = np.where(filled, indices[np.minimum(starts, last_entry)], 0).astype(A.indices.dtype)
    last = indices[np.clip(ends - 1, 0, last_entry)]
    return first, int((filled & (last - first != ends - starts - 1)).sum())


def column_runs(A):
    """A's runs of consecutive columns, in A's index dtype on A's side: the first run of each row
    (rows + 1), the entry where each run starts, then nnz (runs + 1), and each run's first column
    (runs). A run is a stretch of a row whose columns step by exactly one; a row's first entry
    starts one, so no run crosses a row's end. A few array passes where A lives (NumPy or CuPy's,
    each a launch), with a flag and a position a nonzero while they count."""
    xp, index, nnz = array_module(A.indices), A.indices.dtype, A.nnz
    indices = A.indices
    starts = xp.ones(nnz, dtype=bool)  # entry k starts a run: its row's first, or not one column past k - 1
    if nnz > 1:
        starts[1:] = indices[1:] != indices[:-1] + 1
    row_first = A.indptr[:-1]
    starts[row_first[row_first < A.indptr[1:]]] = True
    run_start = xp.flatnonzero(starts)
    del starts
    run_col = indices[run_start]
    run_ptr = xp.searchsorted(run_start, A.indptr).astype(index)  # row r's first run: those that start before it
    run_start = xp.concatenate((run_start, xp.asarray([nnz]))).astype(index)
    return run_ptr, run_start, run_col


@dataclass(frozen=True)
class PaletteCodes:
    """What :func:`palette_codes` found."""

    codes: object  #: uint8 on the values' side, their shape: 0 for a zero or a value off the table
    missed: int  #: values off the table
    missed_bits: np.ndarray  #: bits of the first ``capacity`` of those, repeats kept (host, unsigned)


def palette_codes(values, table, capacity: int) -> PaletteCodes:
    """The code of each of ``values`` on ``table`` (values' dtype, on their side: sorted as unsigned
    bit patterns, the first 0): the place of its bits in table, so 0 for a zero. Values off the
    table get 0 too and are counted, with the bits of the first ``capacity`` kept."""
    if not isinstance(values, np.ndarray):
        from .backends.cuda import detect

        return PaletteCodes(*detect.palette_codes(values, table, capacity))
    unsigned = f"u{values.dtype.itemsize}"
    bits, patterns = values.view(unsigned), table.view(unsigned)
    at = np.minimum(np.searchsorted(patterns, bits), patterns.size - 1)
    on = patterns[at] == bits
    return PaletteCodes(np.where(on, at, 0).astype(np.uint8), int((~on).sum()), bits[~on][:capacity])


def column_blocks(indptr, indices, data, n_blocks: int, width: int):
    """A CSR matrix's entries regrouped by blocks of ``width`` columns (``n_blocks`` of them), as a
    matrix B of one row for each (block, row) pair that holds entries, in block order and then row
    order: B's row i holds row r's entries in columns ``[p * width, (p + 1) * width)``, in their order.
    Pairs without entries get no row, so a matrix whose rows miss most blocks costs no walk over them.

    Returns ``(indptr, indices, data, pair_ptr, pairs)``: B's CSR arrays, and for each row r of the
    matrix the positions of its pairs among B's rows, block by block, ``pairs[pair_ptr[r]:pair_ptr[r +
    1]]`` (so the sum of those rows of B x, in that order, is row r's product). On the arrays' side, in
    the indices' type. A stable sort of the entries by (block, row), then of the pairs by row: NumPy's,
    or CuPy's (stable too, and the only kind it has)."""
    xp = array_module(indptr, indices, data)
    n_rows, nnz = int(indptr.shape[0]) - 1, int(indices.shape[0])
    stable_sort = (lambda keys: np.argsort(keys, kind="stable")) if xp is np else xp.argsort
    row = entry_rows(indptr, xp.arange(nnz, dtype=indptr.dtype))
    slot = (indices // width).astype(np.int64) * n_rows + row  # (block, row) as one key
    order = stable_sort(slot)
    slot = slot[order]
    first = xp.ones(nnz, dtype=bool)  # where each pair's entries begin in the sorted order
    first[1:] = slot[1:] != slot[:-1]
    starts = xp.flatnonzero(first)
    out_ptr = xp.concatenate([starts, xp.full(1, nnz, dtype=starts.dtype)]).astype(indptr.dtype)
    pair_row = slot[starts] % n_rows
    pair_ptr = xp.zeros(n_rows + 1, dtype=indptr.dtype)
    pair_ptr[1:] = xp.cumsum(xp.bincount(pair_row, minlength=n_rows))
    pairs = stable_sort(pair_row).astype(indptr.dtype)  # by row, each row's pairs in block order
    return out_ptr, indices[order], data[order], pair_ptr, pairs
