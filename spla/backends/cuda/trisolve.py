"""Sparse triangular solves on the GPU from a level-set analysis built once.

:class:`LevelSetSolve` uploads the analysis of :class:`spla.linalg.TriangularSolver`
(the row each slot solves, the strict triangle by slot, the inverse diagonal by slot)
once per device and dtype, and plans the launches: one launch per wide level,
and one single-block launch (a barrier between levels) for each run of narrow
levels. A solve is that fixed list of launches on the current stream.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...device import require_cupy
from .runtime import INDEX_TYPES, VALUE_TYPES, KernelSource, ceil_div, template

TRISOLVE_BLOCK = 256  # threads per block of the one-level kernel
GROUP_BLOCK = 1024  # threads of the single block that sweeps a run of small levels
GROUP_MAX_ROWS = 2 * GROUP_BLOCK  # levels up to this many rows join a single-block run
TRISOLVE_SOURCE = KernelSource("solver_trisolve.cu", [
    template(f"spla_trisolve_{kind}", value, index, unit) for kind in ("level", "levels_block")
    for value in VALUE_TYPES for index in INDEX_TYPES for unit in (False, True)])


class LevelSetSolve:
    """``solve(b, out=None)``: the sweep for a 1-D CuPy b of ``dtype``; slot s writes ``x[rows[s]]``.

    ``rows`` is the level order, composed with the factor's permutation when
    it has one, and ``reordered``'s columns are named in the same numbering,
    so a permuted factor costs no gather or scatter pass.
    """

    def __init__(self, rows, reordered, inverse_diagonal, level_ptr, unit_diagonal: bool, dtype):
        cupy = require_cupy()
        self.cupy = cupy
        n = rows.size
        index_dtype = np.dtype(np.int32) if max(n, reordered.nnz) < 2**31 - 1 else np.dtype(np.int64)
        level_kernel = TRISOLVE_SOURCE.function(template("spla_trisolve_level", dtype, index_dtype, unit_diagonal))
        block_kernel = TRISOLVE_SOURCE.function(template("spla_trisolve_levels_block", dtype, index_dtype,
                                                         unit_diagonal))
        self.arrays = (cupy.asarray(rows.astype(index_dtype)),
                       cupy.asarray(reordered.indptr.astype(np.int64)),
                       cupy.asarray(reordered.indices.astype(index_dtype)),
                       cupy.asarray(reordered.data.astype(dtype)),
                       cupy.asarray(inverse_diagonal.astype(dtype)))
        device_level_ptr = cupy.asarray(level_ptr)
        self.launches: list[tuple[Any, tuple, tuple, tuple]] = []
        sizes = np.diff(level_ptr)
        levels = sizes.size
        k = 0
        while k < levels:
            if sizes[k] <= GROUP_MAX_ROWS:
                first = k
                while k < levels and sizes[k] <= GROUP_MAX_ROWS:
                    k += 1
                self.launches.append((block_kernel, (1,), (GROUP_BLOCK,),
                                      (device_level_ptr, np.int64(first), np.int64(k))))
            else:
                begin, end = int(level_ptr[k]), int(level_ptr[k + 1])
                grid = min(ceil_div(end - begin, TRISOLVE_BLOCK), 65535)
                self.launches.append((level_kernel, (grid,), (TRISOLVE_BLOCK,), (np.int64(begin), np.int64(end))))
                k += 1

    def __call__(self, b, out=None):
        x = self.cupy.empty_like(b) if out is None else out
        for kernel, grid, block, tail in self.launches:
            kernel(grid, block, (*self.arrays, b, x, *tail))
        return x
