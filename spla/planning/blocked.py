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
from ..device import to_host
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
# block order.
# CSR order: L2 holds the footprint of the nonzeros just read (their values and indices, and the distinct lines of x
# they gather from). By footprint theory (Xiang, Ding et al., "HOTL", ASPLOS 2013) an LRU cache of L2_BYTES
# misses, a nonzero, at the slope of the average footprint where the footprint fills L2_BYTES: a community graph,
# whose rows return to the same slice of x for millions of nonzeros, misses far less than a count over any fixed
# window says. Each miss costs MISS_BYTES: a random miss reads a 64-byte line from DRAM on an H100, not a 32-byte
# sector (Nsight Compute, session 54: 43 bytes a nonzero on a uniform graph over 48 MB of x, where the nonzero's
# own stream is 10).
# Block order: each 32-byte sector of x once (a block's slice of x, at most 16 MB, stays in L2 while its rows run),
# each (row, block) pair a row of the copy and a partial written and summed (PAIR_BYTES: the copy's launch is
# bound by its short rows, not by DRAM), the sum's launch about SUM_BYTES.
# Blocking saves only the lines CSR order reads again: where it misses hardly more lines than block order reads
# anyway (a stripe along the diagonal, a grid in natural order) REREAD_SHARE keeps it off.
# docs/lab/cpu-2026-12-06-session54: L2_BYTES puts the model's misses on the two matrices Nsight Compute measured
# (0.17 and 0.54 lines a nonzero, measured 0.18 and 0.53); the three costs were fitted on the blocked / staged
# ratios of sets 59-63 and powerlaw-16M over x of at least 36 MB (67 runs, H100), and tested on sets 64 and 65.
# On broad fresh set 66 (session 55, H100) it overpredicted blocked by a median 8% over the 36 MB cut, yet the rule
# picked the faster of blocked and staged on all 11 runs there; under the cut it favoured blocked on three runs
# that ran it at 0.93-1.06x staged, which is why the cut stays.
LINE_BYTES = 64            # what a random miss reads from DRAM
SECTOR_BYTES = 32          # what a sector read once in block order costs
L2_BYTES = 28_000_000      # measured: the footprint CSR order's gathers keep in L2 (of an H100's 50 MB)
MISS_BYTES = 48            # fitted: a line of x missed in CSR order
PAIR_BYTES = 16            # fitted: a (row, block) pair
SUM_BYTES = 10_000_000     # fitted: the partials' sum, a second launch
REREAD_SHARE = 0.1         # CSR order must miss at least this share more lines than block order reads
FOOTPRINT_SAMPLES = 6      # windows sampled, evenly spaced
MARK_CHUNK = 1 << 24       # indices marked at a time (bounds the temporaries of the block-order count)
TRAFFIC_KEY = "blocked-traffic"


@dataclass(frozen=True)
class Traffic:
    """What a nonzero of A reads of x: in CSR order, ``csr`` lines (LINE_BYTES each) missed in L2 (the
    slope of the footprint of sampled windows where it fills L2_BYTES); in block order, ``blocked``
    sectors (SECTOR_BYTES each: the distinct sectors A reads) that make ``lines`` distinct lines; and
    the (row, block) pairs a nonzero (``pairs``, from the same windows; rows of unsorted columns count a
    pair each time their block changes, so the estimate errs towards fewer blocked runs)."""

    csr: float
    blocked: float
    lines: float
    pairs: float


def footprint_lengths(longest: int) -> list[int]:
    """The window lengths whose footprint the model reads: 2^k and 3 * 2^(k-1) from 16 up to the
    first that reaches ``longest``, which ends the list in its place."""
    lengths = sorted({1 << k for k in range(4, 63)} | {3 << k for k in range(3, 61)})
    return [w for w in lengths if w < longest] + [longest]


def first_reads(keys, lengths: list[int], xp) -> np.ndarray:
    """For each w of ``lengths``, how many distinct values the first w of ``keys`` (a non-negative
    int64 array, NumPy or CuPy, at least ``lengths[-1]`` long) hold: one sort of (value, position),
    packed as value * n + position (n, the longest length, is a few million: any x line fits int64)."""
    n = lengths[-1]
    order = xp.sort(keys[:n] * n + xp.arange(n, dtype=np.int64))
    value = order // n
    first = order[xp.concatenate((xp.ones(1, dtype=bool), value[1:] != value[:-1]))] % n
    found = xp.searchsorted(xp.sort(first), xp.asarray(lengths, dtype=np.int64), side="left")
    return np.asarray(to_host(found), dtype=np.float64)


def csr_misses(footprint: np.ndarray, lengths: list[int], entry: int, nnz: int) -> float:
    """Lines missed a nonzero in CSR order: the footprint's slope where the window's own bytes
    (``entry`` each) and its lines reach L2_BYTES; every line once where all of A fits."""
    filled = entry * np.asarray(lengths, dtype=np.float64) + LINE_BYTES * footprint
    at = int(np.searchsorted(filled, L2_BYTES))
    if at == len(lengths):  # (the window is all of A)
        return float(footprint[-1]) / nnz
    if at == 0:
        return float(footprint[0]) / lengths[0]
    return float(footprint[at] - footprint[at - 1]) / (lengths[at] - lengths[at - 1])


def traffic(A) -> Traffic:
    """A's :class:`Traffic` (cached on A). Reads sampled windows and one pass over A's indices on A's
    cheapest side; only counts leave the GPU."""
    found = A._cache.get(TRAFFIC_KEY)
    if found is not None:
        return found
    side, xp = cheapest_side(A)
    item = np.dtype(A.dtype).itemsize
    per_line, per_sector = max(1, LINE_BYTES // item), max(1, SECTOR_BYTES // item)
    entry = item + np.dtype(A.index_dtype).itemsize
    width = block_width(A.n_cols)
    csr = pairs = blocked = lines = 0.0
    if A.nnz:
        # a window's own values and indices reach L2_BYTES by its end, so its footprint does too
        lengths = footprint_lengths(min(A.nnz, ceil_div(L2_BYTES, entry)))
        window = lengths[-1]
        starts = evenly_spaced(A.nnz - window + 1, FOOTPRINT_SAMPLES)
        footprint = np.zeros(len(lengths))
        for start in starts.tolist():
            columns = side.indices[start:start + window].astype(np.int64)
            footprint += first_reads(columns // per_line, lengths, xp)
            rows = csr_passes.entry_rows(side.indptr, xp.arange(start, start + window, dtype=side.indptr.dtype))
            blocks = columns // width
            pairs += 1 + int(xp.count_nonzero((rows[1:] != rows[:-1]) | (blocks[1:] != blocks[:-1])))
        csr = csr_misses(footprint / starts.size, lengths, entry, A.nnz)
        pairs /= window * starts.size
        sectors_a_line = per_line // per_sector
        used = xp.zeros(ceil_div(A.n_cols, per_line) * sectors_a_line, dtype=bool)
        for start in range(0, A.nnz, MARK_CHUNK):
            used[side.indices[start:start + MARK_CHUNK] // per_sector] = True
        blocked = int(xp.count_nonzero(used)) / A.nnz
        lines = int(xp.count_nonzero(used.reshape(-1, sectors_a_line).any(axis=1))) / A.nnz
    A._cache[TRAFFIC_KEY] = found = Traffic(csr, blocked, lines, pairs)
    return found


def predicted_gain(A) -> float:
    """blocked's predicted speed over staged's on A, from :func:`traffic`: the bytes a nonzero moves
    (its value and index, and the x it reads from DRAM) in CSR order over those in block order with
    the pairs' and the sum's costs. 0.0 where CSR order misses hardly a line more than block order
    reads (fewer than REREAD_SHARE more: rows along a stripe of x, a grid in natural order), which
    blocking cannot improve on; 1.0 for a matrix without entries."""
    if not A.nnz:
        return 1.0
    t = traffic(A)
    if t.csr - t.lines < REREAD_SHARE * t.csr:
        return 0.0
    entry = np.dtype(A.dtype).itemsize + np.dtype(A.index_dtype).itemsize
    return ((entry + MISS_BYTES * t.csr)
            / (entry + SECTOR_BYTES * t.blocked + PAIR_BYTES * t.pairs + SUM_BYTES / A.nnz))
