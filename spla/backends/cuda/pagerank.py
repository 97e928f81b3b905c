"""PageRank's GPU kernels: the weighted out-degree scales and the fused iteration update.

One update launch per iteration (kernels/solver_pagerank.cu) adds the teleport
and dangling terms, writes the new iterate and, for the next SpMV, the iterate
scaled by the inverse out-degree, and reduces the L1 change and the next
dangling sum in float64, so the host reads nothing inside an iteration.
"""

from __future__ import annotations

import numpy as np

from ...device import require_cupy
from .runtime import INDEX_TYPES, VALUE_TYPES, KernelSource, ceil_div, template
from .solvers import SOLVER_BLOCK, SOLVER_DEFINES

PAGERANK_SOURCE = KernelSource(
    "solver_pagerank.cu",
    [template("spla_pagerank_step", t, up, ud, scaled) for t in VALUE_TYPES
     for up in (False, True) for ud in (False, True) for scaled in (False, True)]
    + [template("spla_pagerank_out_weight", t, i) for t in VALUE_TYPES for i in INDEX_TYPES],
    SOLVER_DEFINES)


def grid(n: int) -> int:
    """Blocks for the grid-stride solver kernels: up to 8 of SOLVER_BLOCK threads per SM (a full SM)."""
    cupy = require_cupy()
    sm_count = cupy.cuda.Device().attributes["MultiProcessorCount"]
    return max(1, min(ceil_div(max(n, 1), SOLVER_BLOCK), 8 * sm_count))


def out_weight(A_dev, scale, is_dangling) -> None:
    """``scale = 1 / row sum`` (0 on empty rows) and ``is_dangling = row sum == 0`` for device matrix A,
    adding in SciPy's order."""
    n = A_dev.n_rows
    kernel = PAGERANK_SOURCE.function(template("spla_pagerank_out_weight", A_dev.dtype, A_dev.index_dtype))
    kernel((grid(n),), (SOLVER_BLOCK,), (A_dev.indptr, A_dev.data, np.int64(n), scale, is_dangling))


def step_kernel(dtype, *, uniform_teleport: bool, uniform_dangling: bool, scaled: bool):
    """The fused update for one configuration (uniform teleport / dangling vectors, scaled SpMV input)."""
    return PAGERANK_SOURCE.function(template("spla_pagerank_step", np.dtype(dtype), uniform_teleport,
                                             uniform_dangling, scaled))
