"""Dense panels: sparse rows dense enough to be gathered once into a row-major
block and multiplied by the dense GEMV/GEMM core (SpMV's adaptive plan and
SpMM's hybrid path share this gather)."""

from __future__ import annotations

import numpy as np


def gather_rows(cupy, A, rows, col_begin: int, col_end: int, dtype):
    """Rows ``rows`` of the device CSR matrix A, columns ``[col_begin, col_end)``, as a
    dense ``len(rows) x (col_end - col_begin)`` CuPy array (duplicates add, as in CSR)."""
    import cupyx

    indptr = A.indptr
    rows = cupy.asarray(rows)
    starts = indptr[rows].astype(np.int64)
    lengths = (indptr[rows + 1] - indptr[rows]).astype(np.int64)
    ends = cupy.cumsum(lengths)
    total = int(ends[-1]) if rows.size else 0
    entry = cupy.arange(total, dtype=np.int64)
    local_row = cupy.searchsorted(ends, entry, side="right")
    source = starts[local_row] + entry - (ends - lengths)[local_row]
    width = col_end - col_begin
    flat = cupy.zeros(int(rows.size) * width, dtype=dtype)
    target = local_row * width + (A.indices[source].astype(np.int64) - col_begin)
    cupyx.scatter_add(flat, target, A.data[source].astype(dtype))
    return flat.reshape(int(rows.size), width)


class DevicePanel:
    """One dense panel on the GPU: its rows, column span and gathered values."""

    def __init__(self, cupy, A, rows, col_begin: int, col_end: int, dtype):
        self.rows = cupy.asarray(rows)
        self.col_begin, self.col_end = col_begin, col_end
        self.matrix = gather_rows(cupy, A, rows, col_begin, col_end, dtype)

    def gemv_into(self, x, out, alpha, beta):
        """``out[rows] = alpha * panel @ x[span] + beta * out[rows]`` through spla's GEMV."""
        from .gemm import gemv

        product = gemv(self.matrix, x[self.col_begin:self.col_end], alpha=alpha)
        if beta == 0:
            out[self.rows] = product
        else:
            out[self.rows] = product + beta * out[self.rows]
