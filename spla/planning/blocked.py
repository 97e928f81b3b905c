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

import numpy as np

from .. import csr_passes
from . import ceil_div
from .stats import cheapest_side, evenly_spaced

__all__ = ["BLOCK_COLUMNS", "Regrouped", "Traffic", "block_width", "n_blocks", "predicted_gain", "regrouped", "traffic"]

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


# Where blocking pays (auto's wide class, spla.planning.spmv): the bytes a nonzero moves in CSR order against in
# block order. In CSR order L2 keeps about REUSE_ENTRIES nonzeros' worth of x, so a sector of x read again within
# that many nonzeros is not read again from DRAM, and one read again later is (CSR_SECTOR_BYTES: a scattered
# sector costs more than its 32 bytes). In block order each sector is read once (a block's slice of x, at most
# 16 MB, stays in L2 while its rows run), each (row, block) pair adds a row to the copy and a partial written and
# summed (PAIR_BYTES), and the sum's launch costs about SUM_BYTES of traffic. CSR_SECTOR_BYTES charges every
# sector read in CSR order as scattered, which is wrong where CSR order streams x (a stripe along the diagonal of
# a short-wide matrix): there it reads hardly a sector again, and REREAD_SHARE keeps those off. Fitted in session 52
# (docs/lab/h100-2026-12-06-session52, H100): a grid over the three costs against the measured blocked / staged
# ratios of sets 59-63 and bench_spmv's powerlaw-16M over x of at least 36 MB (67 runs, rms error 19%); tested
# on fresh set 64.
SECTOR_BYTES = 32          # what an L2 miss reads from DRAM
CSR_SECTOR_BYTES = 48      # fitted: a sector missed in CSR order (scattered over all of x)
PAIR_BYTES = 24            # fitted: a (row, block) pair
SUM_BYTES = 20_000_000     # fitted: the partials' sum, a second launch
REREAD_SHARE = 0.1         # CSR order must read at least this share of its sectors again (not fitted: every
                           # run of the fit sets that blocked won on read at least 27% again, the stripes of
                           # set 64 under 1%, 2D grids in natural order 3%)
REUSE_ENTRIES = 1 << 20    # consecutive nonzeros a window, whose repeated sectors L2 serves
REUSE_SAMPLES = 8          # windows sampled, evenly spaced
MARK_CHUNK = 1 << 24       # indices marked at a time (bounds the temporaries of the block-order count)
TRAFFIC_KEY = "blocked-traffic"


@dataclass(frozen=True)
class Traffic:
    """Sectors of x (SECTOR_BYTES each) a nonzero of A reads from DRAM in CSR order (``csr``: the
    distinct sectors of sampled windows of REUSE_ENTRIES nonzeros, per nonzero) and in block order
    (``blocked``: the distinct sectors A reads, per nonzero), and the (row, block) pairs a nonzero
    (``pairs``, from the same windows; rows of unsorted columns count a pair each time their block
    changes, so the estimate errs towards fewer blocked runs)."""

    csr: float
    blocked: float
    pairs: float


def traffic(A) -> Traffic:
    """A's :class:`Traffic` (cached on A). Reads sampled windows and one pass over A's indices on A's
    cheapest side; only counts leave the GPU."""
    found = A._cache.get(TRAFFIC_KEY)
    if found is not None:
        return found
    side, xp = cheapest_side(A)
    per_sector = max(1, SECTOR_BYTES // np.dtype(A.dtype).itemsize)
    width = block_width(A.n_cols)
    csr = pairs = blocked = 0.0
    if A.nnz:
        window = min(REUSE_ENTRIES, A.nnz)
        starts = evenly_spaced(A.nnz - window + 1, REUSE_SAMPLES)
        for start in starts.tolist():
            positions = xp.arange(start, start + window, dtype=side.indptr.dtype)
            columns = side.indices[start:start + window].astype(np.int64)
            sectors = xp.sort(columns // per_sector)
            csr += 1 + int(xp.count_nonzero(sectors[1:] != sectors[:-1]))
            rows = csr_passes.entry_rows(side.indptr, positions)
            blocks = columns // width
            pairs += 1 + int(xp.count_nonzero((rows[1:] != rows[:-1]) | (blocks[1:] != blocks[:-1])))
        sampled = window * starts.size
        csr, pairs = csr / sampled, pairs / sampled
        used = xp.zeros(ceil_div(A.n_cols, per_sector), dtype=bool)
        for start in range(0, A.nnz, MARK_CHUNK):
            used[side.indices[start:start + MARK_CHUNK] // per_sector] = True
        blocked = int(xp.count_nonzero(used)) / A.nnz
    A._cache[TRAFFIC_KEY] = found = Traffic(csr, blocked, pairs)
    return found


def predicted_gain(A) -> float:
    """blocked's predicted speed over staged's on A, from :func:`traffic`: the bytes a nonzero moves
    (its value and index, and the x sectors it reads from DRAM) in CSR order over those in block
    order with the pairs' and the sum's costs. 0.0 where CSR order reads hardly a sector again
    (fewer than REREAD_SHARE of its reads: rows along a stripe of x, a grid in natural order),
    which blocking cannot improve on; 1.0 for a matrix without entries."""
    if not A.nnz:
        return 1.0
    t = traffic(A)
    if t.csr - t.blocked < REREAD_SHARE * t.csr:
        return 0.0
    entry = np.dtype(A.dtype).itemsize + np.dtype(A.index_dtype).itemsize
    return ((entry + CSR_SECTOR_BYTES * t.csr)
            / (entry + SECTOR_BYTES * t.blocked + PAIR_BYTES * t.pairs + SUM_BYTES / A.nnz))
