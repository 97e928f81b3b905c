"""Column blocks: a wide matrix regrouped so that the tiles in flight gather from one block of x.

staged's blocks take tiles of nonzeros in CSR order, so over a short-wide matrix (a few hundred
rows, each spread over all of x) the tiles running at once gather from all of x, and where x is
larger than L2 nearly every gather is a sector read from DRAM. Regrouped by blocks of at most
:data:`BLOCK_COLUMNS` columns (a row for each (block, row) pair: row r's entries in block p, the
pairs in block order), CSR order walks x one block at a time, and the block L2 holds serves the
gathers. Measured before this
module (session 51, H100, docs/lab/h100-2026-12-06-session51): staged on seven short-wide
matrices regrouped by blocks of 2M columns ran 1.9-2.7x staged on the originals over 60-200 MB of
x, and ahead of a warp a row (vector, whose warps sweep x in step only where rows have one
length) on six of seven; Nsight Compute put staged's L2 hit rate at 17% and vector's at 62%
there, staged reading 4.2x vector's DRAM bytes.

The blocked kernel runs staged over the regrouped copy (:func:`regrouped`, cached on A: a second
copy of A's values and indices on the device) into a partial sum for each (block, row) pair that
holds entries, and a second launch adds each row's partials (kernels/spmv_blocked.cu). Pairs without
entries get no row of the copy: with them, a matrix whose rows miss most blocks (hot columns, a
power-law graph's many short rows) left staged's tiles long runs of empty rows to walk (50x slower
on rows of Zipf-skewed columns, session 51, call 5). The sums are in block order, so every call
gives the same bits; they differ from staged's on A by rounding only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .. import csr_passes
from . import ceil_div

__all__ = ["BLOCK_COLUMNS", "Regrouped", "block_width", "n_blocks", "regrouped"]

#: The widest block of columns: 8 MiB of float32 x (16 MiB of float64), a part of the 50 MB L2 of
#: an H100 or H200 that leaves room for the streams of values and indices. The matrices measured
#: before this module were regrouped by 2M columns in both dtypes.
BLOCK_COLUMNS = 1 << 21
REGROUPED_KEY = "blocked-regrouped"


def n_blocks(n_cols: int, width: int | None = None) -> int:
    """The column blocks of a matrix of ``n_cols`` columns: blocks of at most ``width`` (default
    :data:`BLOCK_COLUMNS`), at least one."""
    return max(1, ceil_div(n_cols, width or BLOCK_COLUMNS))


def block_width(n_cols: int, width: int | None = None) -> int:
    """The columns of each block: ``n_cols`` cut into :func:`n_blocks` blocks of equal width (the
    last may be narrower), so no block is a sliver."""
    return max(1, ceil_div(n_cols, n_blocks(n_cols, width)))


@dataclass(frozen=True, eq=False)
class Regrouped:
    """A regrouped by column blocks of ``width`` columns: ``matrix`` (a CSRMatrix on A's side, a row
    for each (block, row) pair of A that holds entries, in block order) and, for each row r of A,
    the rows of ``matrix`` that hold its entries, block by block: ``pairs[pair_ptr[r]:pair_ptr[r + 1]]``
    (:func:`spla.csr_passes.column_blocks`)."""

    width: int
    matrix: Any
    pair_ptr: Any
    pairs: Any


def regrouped(A) -> Regrouped:
    """A regrouped by column blocks (see the module), on A's side and in its dtypes; built once (a
    sort of A's entries) and cached on A, with the block width it was built for."""
    width = block_width(A.n_cols)
    cached = A._cache.get(REGROUPED_KEY)
    if cached is not None and cached.width == width:
        return cached
    from ..csr import CSRMatrix  # (spla.csr imports planning's users; import here, once a matrix)

    indptr, indices, data, pair_ptr, pairs = csr_passes.column_blocks(A.indptr, A.indices, A.data,
                                                                      n_blocks(A.n_cols, width), width)
    B = CSRMatrix(data, indices, indptr, (int(indptr.shape[0]) - 1, A.n_cols), index_dtype=A.index_dtype,
                  validate=False)
    A._cache[REGROUPED_KEY] = found = Regrouped(width, B, pair_ptr, pairs)
    return found
