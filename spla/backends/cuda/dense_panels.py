"""Dense panels on the device: rows of a CSR matrix gathered once into a dense row-major block.

Shared by SpMV (the adaptive plan's dense rows, multiplied by GEMV) and SpMM
(the same rows, multiplied by the GEMM core). The column span is taken as
given: SpMM's planning widens it to a multiple of 4 columns beforehand, SpMV
uses the row plan's exact span.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ...device import check_fits, require_cupy


@dataclass(frozen=True)
class DevicePanel:
    """A gathered panel: ``matrix[i, j] = A[rows[i], col_begin + j]``."""

    host_rows: np.ndarray
    rows: Any            # device int64 row ids, in panel order
    col_begin: int
    col_end: int            # exclusive
    matrix: Any          # cupy (len(rows), col_end - col_begin)
    nnz: int

    @property
    def density(self) -> float:
        return self.nnz / max(1, self.matrix.size)


def gather_panel(A, rows, col_begin: int, col_end: int, nnz: int, dtype=None) -> DevicePanel:
    """Scatter the nonzeros of device matrix A's ``rows`` into a dense block over [col_begin, col_end).

    ``nnz`` is the number of nonzeros in those rows; ``dtype`` the block's
    value dtype (A's by default). Duplicate entries add up, as in CSR. Raises
    :class:`~spla.errors.DeviceMemoryError` before allocating a block that
    cannot fit.
    """
    cupy = require_cupy()
    import cupyx

    dtype = np.dtype(A.dtype if dtype is None else dtype)
    host_rows = np.asarray(rows, dtype=np.int64)
    width = int(col_end) - int(col_begin)
    check_fits(host_rows.size * width * dtype.itemsize, "dense-row panel")
    rows_dev = cupy.asarray(host_rows)
    starts = A.indptr[rows_dev].astype(np.int64)
    lengths = A.indptr[rows_dev + 1].astype(np.int64) - starts
    ends = cupy.cumsum(lengths)
    entry = cupy.arange(int(nnz), dtype=np.int64)
    local_row = cupy.searchsorted(ends, entry, side="right")
    source = starts[local_row] + entry - (ends - lengths)[local_row]
    matrix = cupy.zeros((host_rows.size, width), dtype=dtype)
    target = (local_row, A.indices[source].astype(np.int64) - int(col_begin))
    cupyx.scatter_add(matrix, target, A.data[source].astype(dtype, copy=False))
    return DevicePanel(host_rows, rows_dev, int(col_begin), int(col_end), matrix, int(nnz))


def gather_panels(A, panels, dtype=None) -> list:
    """:func:`gather_panel` for each planned panel (anything with rows, col_begin, col_end, nnz)."""
    return [gather_panel(A, p.rows, p.col_begin, p.col_end, p.nnz, dtype) for p in panels]
