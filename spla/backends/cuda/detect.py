"""The GPU side of :mod:`spla.csr_passes` (kernels/detect_structure.cu): the diagonals of sampled
entries and the check of every entry against candidate diagonals (dia), each row's first column
and whether the row is one run of columns (band), and the codes of values on a palette (dia's
slots, staged's values). One launch each and one host read of its counts, where CuPy's array
operations took a dozen launches and three reads.
"""

from __future__ import annotations

import numpy as np

from ... import device as _device
from ...planning import dia, palette
from .runtime import INDEX_TYPES, VALUE_TYPES, KernelSource, grid_1d, template

THREADS = 256
#: Blocks of the grid-stride passes over rows: 8 a streaming multiprocessor of an H200 fill it,
#: and keep the atomics that add the counts few.
MAX_BLOCKS = 132 * 8
SOURCE = KernelSource(
    "detect_structure.cu",
    [template("spla_dia_sample", i) for i in INDEX_TYPES]
    + [template("spla_dia_check", v, i) for v in VALUE_TYPES for i in INDEX_TYPES]
    + [template("spla_band_first", i) for i in INDEX_TYPES]
    + [template("spla_palette_codes", v) for v in VALUE_TYPES],
    (f"-DSPLA_MAX_DIAGONALS={dia.MAX_DIAGONALS}", f"-DSPLA_PALETTE_VALUES={palette.VALUES}"))


def _row_blocks(n_rows: int) -> int:
    return min(grid_1d(n_rows, THREADS), MAX_BLOCKS)


def sampled_diagonals(A, positions: np.ndarray) -> np.ndarray:
    """column - row of A's entries at ``positions`` (host int64, each < nnz), on the host."""
    cupy = _device.require_cupy()
    kernel = SOURCE.function(template("spla_dia_sample", A.index_dtype))
    positions = cupy.asarray(positions, dtype=np.int64)
    diagonals = cupy.empty(positions.size, dtype=np.int64)
    kernel((grid_1d(positions.size, THREADS),), (THREADS,),
           (A.indptr, A.indices, np.int64(A.n_rows), positions, np.int64(positions.size), diagonals))
    return diagonals.get()


def check_diagonals(A, candidates: np.ndarray, values, capacity: int) -> tuple[int, int, int, np.ndarray]:
    """Store the value of every entry of A that lies on one of ``candidates`` (sorted host int64,
    at most dia.MAX_DIAGONALS) in ``values`` (zeroed, candidates x stride, flat); returns the
    entries on none, the stored zeros, the rows whose columns do not strictly increase, and the
    diagonals of the first ``capacity`` entries on none."""
    if candidates.size > dia.MAX_DIAGONALS:
        raise ValueError(f"{candidates.size} candidate diagonals, at most {dia.MAX_DIAGONALS}")
    cupy = _device.require_cupy()
    kernel = SOURCE.function(template("spla_dia_check", A.dtype, A.index_dtype))
    counts = cupy.zeros(3, dtype=np.uint64)
    missed = cupy.empty(max(capacity, 1), dtype=np.int64)
    stride = values.size // max(candidates.size, 1)
    kernel((_row_blocks(A.n_rows),), (THREADS,),
           (A.indptr, A.indices, A.data, np.int64(A.n_rows), cupy.asarray(candidates, dtype=np.int64),
            np.int32(candidates.size), values, np.int64(stride), missed, np.int64(capacity), counts))
    n_missed, zeros, unordered = (int(c) for c in counts.get())
    kept = missed[:min(n_missed, capacity)].get() if n_missed else np.zeros(0, dtype=np.int64)
    return n_missed, zeros, unordered, kept


def band_first(A):
    """Each row's first column (A's index dtype, 0 for an empty row) and how many rows with
    entries do not end at first + length - 1."""
    cupy = _device.require_cupy()
    kernel = SOURCE.function(template("spla_band_first", A.index_dtype))
    first = cupy.empty(A.n_rows, dtype=A.index_dtype)
    counts = cupy.zeros(1, dtype=np.uint64)
    kernel((_row_blocks(A.n_rows),), (THREADS,), (A.indptr, A.indices, np.int64(A.n_rows), first, counts))
    return first, int(counts.get()[0])


def palette_codes(values, table, capacity: int):
    """``values``' codes on ``table`` (device, values' dtype: sorted bit patterns, 0 first, at most
    palette.VALUES + 1): uint8 of values' shape, the place of each value's bits in table, 0 off
    it; and how many values are off it, with the bits of the first ``capacity`` of those (host)."""
    if table.size > palette.VALUES + 1:
        raise ValueError(f"a palette of {table.size - 1} values, at most {palette.VALUES}")
    cupy = _device.require_cupy()
    kernel = SOURCE.function(template("spla_palette_codes", values.dtype))
    codes = cupy.empty(values.shape, dtype=np.uint8)
    missed = cupy.empty(max(capacity, 1), dtype=values.dtype)
    counts = cupy.zeros(1, dtype=np.uint64)
    kernel((_row_blocks(values.size),), (THREADS,),
           (values, np.int64(values.size), table, np.int32(table.size), codes, missed, np.int64(capacity), counts))
    n_missed = int(counts.get()[0])
    kept = missed[:min(n_missed, capacity)].get() if n_missed else np.zeros(0, dtype=values.dtype)
    return codes, n_missed, kept.view(f"u{values.dtype.itemsize}")
