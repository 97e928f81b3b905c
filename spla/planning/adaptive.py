"""Adaptive SpMV plans: which rows go to which path of the adaptive kernels, computed once.

A plan is host-side NumPy work on the row lengths (plus, for the few rows long
enough to be dense, their column spans), so ``spla info`` can show it on a
machine without a GPU. ``plan_for(A)`` caches it on A keyed by its
thresholds; the CUDA backend uploads its arrays once per value dtype.

The paths (``Plan.bins``, in this order), for ``kernels/spmv_adaptive.cu``:

``stream``
    rows with at most ``stream_max`` nonzeros. Consecutive such rows are packed
    into thread blocks whose cost (nnz plus ``row_cost`` per row) stays under
    ``ADAPTIVE_STAGE - stream_max``, so each block's nnz fits the kernel's
    shared-memory stage. Each block gets the lanes-per-row width (1..32) that
    minimises its estimated time, from its row count and longest row.
``rows`` (only when ``warp_max > 0``: the layout of ``kernels/spmv_adaptive2.cu``)
    rows with ``stream_max < nnz <= warp_max``, listed in ``Plan.row_list``
    sorted by length (longest first); a block takes ``256 / width`` of them,
    ``width`` lanes per row, so the rows of one block are about equally long.
``block``
    rows with ``max(stream_max, warp_max) < nnz <= chunk``: one thread block per row.
``split``
    rows longer than ``chunk``: cut into ``chunk``-sized slices, one block
    each, whose partial sums the last block to finish adds up.
``dense``
    rows with at least ``dense_min_nnz`` nonzeros that fill at least
    ``dense_threshold`` of their column span ``[first column, last column]``.
    They are gathered into dense row-major panels (grouped so that each panel
    stays ``dense_threshold``-dense) and multiplied by the dense GEMV. The plan
    also carries block descriptors for them (``fallback`` blocks), used when
    no dense GEMV is available.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field

import numpy as np

from ..device import to_host
from ..errors import InputError, KernelError
from . import ceil_div
from .stats import RowStats, host_indptr, stats_from_lengths

# Passed to kernels/spmv_adaptive*.cu as -D defines (spla.backends.cuda.spmv).
ADAPTIVE_THREADS = 256
ADAPTIVE_STAGE = 2048
LANE_WIDTHS = (1, 2, 4, 8, 16, 32)
# kernels/spmv_adaptive2.cu's "rows" descriptor kind (stream kinds are 1..32).
KIND_ROWS = 64

# Descriptor layout, one int64 row per thread block: see spmv_adaptive.cu.
ROW_BEGIN, ROW_END, KIND, SPLIT_ID = range(4)
KIND_BLOCK = 0  # > 0: stream block with that many lanes per row; < 0: -(chunk index + 1)

PATHS = ("stream", "rows", "block", "split", "dense")


@dataclass(frozen=True)
class Thresholds:
    """The tunable numbers behind a plan (all in nonzeros unless named otherwise).

    stream_max : rows up to this long are packed many to a block (<= ADAPTIVE_STAGE / 2).
    chunk : rows longer than this are split into slices of this length.
    row_cost : what one row counts as, in nonzeros, when packing stream blocks
        (reading indptr and writing y is work even for an empty row).
    dense_threshold : fraction of a row's column span that must be nonzero for the dense path
        (> 1 switches the dense path off).
    dense_min_nnz : rows shorter than this never take the dense path.
    warp_max : rows with ``stream_max < nnz <= warp_max`` take the ``rows`` path
        (sub-warps over length-sorted rows; only spmv_adaptive2 runs it); 0 = no rows path.
        With it, heavy descriptors (block, split, rows) that would run in the
        grid's last ``TAIL_BLOCKS`` slots are moved to the front.
    """

    stream_max: int = 256
    chunk: int = 4096
    row_cost: int = 1
    dense_threshold: float = 0.5
    dense_min_nnz: int = 4096
    warp_max: int = 0

    def check(self) -> None:
        if not 1 <= self.stream_max <= ADAPTIVE_STAGE // 2:
            raise InputError(f"stream_max must be in 1..{ADAPTIVE_STAGE // 2} (the kernel stages "
                             f"{ADAPTIVE_STAGE} products per block), got {self.stream_max}")
        if self.chunk < self.stream_max:
            raise InputError(f"chunk ({self.chunk}) must be >= stream_max ({self.stream_max})")
        if self.row_cost < 1:
            raise InputError(f"row_cost must be >= 1 so a stream block holds a bounded number of rows, "
                             f"got {self.row_cost}")
        if not self.dense_threshold > 0:
            raise InputError(f"dense_threshold must be > 0, got {self.dense_threshold}")
        if self.dense_min_nnz < 1:
            raise InputError(f"dense_min_nnz must be >= 1, got {self.dense_min_nnz}")
        if self.warp_max and not self.stream_max < self.warp_max <= self.chunk:
            raise InputError(f"warp_max must be 0 or in stream_max+1..chunk ({self.stream_max + 1}..{self.chunk}), "
                             f"got {self.warp_max}")

    @property
    def tile_cost(self) -> int:
        """Cost a stream block may start rows within; its nnz then stays < ADAPTIVE_STAGE."""
        return ADAPTIVE_STAGE - self.stream_max


@dataclass
class Bin:
    """Rows that take one path: ``rows`` are host row ids (int64, ascending)."""

    name: str
    rows: np.ndarray
    nnz: int


@dataclass(frozen=True)
class DensePanel:
    """Rows gathered as a dense ``len(rows) x (col_end - col_begin)`` panel (SpMV's plan and SpMM's)."""

    rows: np.ndarray  # host row ids in panel order
    col_begin: int
    col_end: int      # exclusive
    nnz: int

    @property
    def width(self) -> int:
        return self.col_end - self.col_begin

    @property
    def elements(self) -> int:
        return len(self.rows) * self.width

    @property
    def density(self) -> float:
        return self.nnz / max(1, self.elements)


@dataclass(frozen=True, eq=False)
class Plan:
    """Work assignment for ``spla_spmv_adaptive`` (see the module docstring).

    ``blocks`` has one int64 descriptor row per thread block: the first
    ``n_main_blocks`` cover every row not in the dense bin; the rest cover the
    dense rows (launched only when no dense GEMV exists).
    """

    shape: tuple
    nnz: int
    thresholds: Thresholds
    stats: RowStats
    bins: list
    dense_panels: list
    blocks: np.ndarray
    n_main_blocks: int
    split_offsets: np.ndarray  # chunk slots per split row (main then fallback), prefix sums
    descriptor_nnz: np.ndarray  # nonzeros each descriptor's block reads
    build_seconds: float
    row_list: np.ndarray = field(default_factory=lambda: np.zeros(1, dtype=np.int64))  # rows path, by length

    @property
    def dense_rows(self) -> np.ndarray:
        return self.bin("dense").rows

    def bin(self, name: str) -> Bin:
        for b in self.bins:
            if b.name == name:
                return b
        raise KeyError(name)

    def block_nnz(self) -> np.ndarray:
        """nnz each main block reads."""
        return self.descriptor_nnz[: self.n_main_blocks]

    def summary(self) -> dict:
        """Rows and nnz per path and the load balance of the main blocks.

        ``imbalance`` is the largest block's nnz over the mean block's: the
        blocks are scheduled dynamically, so it says how uneven the units of
        work are (thread-per-row on a power-law matrix would score max/mean
        row length, often > 1000).
        """
        work = self.block_nnz()
        mean = float(work.mean()) if work.size else 0.0
        paths = {}
        for b in self.bins:
            paths[b.name] = {"rows": int(b.rows.size), "nnz": int(b.nnz),
                             "nnz_share": (b.nnz / self.nnz) if self.nnz else 0.0}
        return {
            "kernel": "adaptive",
            "paths": paths,
            "blocks": int(self.n_main_blocks),
            "block_nnz_mean": mean,
            "block_nnz_max": int(work.max()) if work.size else 0,
            "imbalance": (float(work.max()) / mean) if mean > 0 else 1.0,
            "dense_panels": len(self.dense_panels),
            "dense_panel_elements": int(sum(p.elements for p in self.dense_panels)),
            "thresholds": asdict(self.thresholds),
            "build_seconds": self.build_seconds,
        }


def plan_for(A, *, stream_max: int = Thresholds.stream_max, chunk: int = Thresholds.chunk,
             row_cost: int = Thresholds.row_cost, dense_threshold: float = Thresholds.dense_threshold,
             dense_min_nnz: int = Thresholds.dense_min_nnz, warp_max: int = Thresholds.warp_max) -> Plan:
    """The adaptive SpMV plan of A, built once and cached on A per thresholds.

    Parameters
    ----------
    A : CSRMatrix
        On the host or the GPU (only ``indptr`` and, for dense candidates,
        ``indices`` are read; both are copied to the host for that).
    stream_max, chunk, row_cost, dense_threshold, dense_min_nnz, warp_max
        See :class:`Thresholds`.

    Returns
    -------
    Plan

    See Also
    --------
    spla.spmv : runs a plan (``kernel="adaptive"``).
    cupyx.scipy.sparse.csr_matrix.dot : cuSPARSE, which plans internally.
    """
    thresholds = Thresholds(stream_max, chunk, row_cost, float(dense_threshold), dense_min_nnz, warp_max)
    thresholds.check()
    key = ("spmv-plan", thresholds)
    if key not in A._cache:
        A._cache[key] = build_plan(A, thresholds)
    return A._cache[key]


# The plan spmv_adaptive2 runs by default: rows path on, dense path off (a dense
# panel through the GEMV lost to the split chunks, which run in parallel; see
# BENCHMARKS.md).
ADAPTIVE2_THRESHOLDS: dict = {"warp_max": 1024, "dense_threshold": 2.0}


# The rows path gives a row of up to warp_max entries a lane group (32 lanes from 129 entries:
# rows_width), so a row of 1,000 is 8 dependent rounds of four gathers a lane, where a block of 256
# threads takes it in one. In a plan of at most SMALL_PLAN_BLOCKS descriptors (about one wave of
# resident blocks: the kernel runs a few microseconds) that chain is the critical path, so rows over
# SMALL_PLAN_WARP_MAX take a block each there; larger plans keep the rows path, whose rows fill the
# GPU (A1, docs/lab/cpu-2026-12-04-session28: adaptive led adaptive2 1.1-1.6x by device time on
# small matrices with such rows). Set on the H200 in session 31 (ab_rows_path.py, 23 matrices with
# such rows in both dtypes): the geometric midpoint of the largest plan where a block a row won
# (1,223 descriptors, 1.03x) and the smallest larger one where it lost (2,274, 0.86x). Below the
# cut it ran 1.12x the rows path (geomean of 46 runs, 36 at least as fast; 1.30x on the matrices
# with two populations of rows).
SMALL_PLAN_BLOCKS = 1668
SMALL_PLAN_WARP_MAX = 512


def plan2_for(A) -> Plan:
    """The default plan of ``kernel="adaptive2"`` (:data:`ADAPTIVE2_THRESHOLDS`; warp_max
    :data:`SMALL_PLAN_WARP_MAX` in a small plan that has longer rows), cached on A."""
    plan = plan_for(A, **ADAPTIVE2_THRESHOLDS)
    if plan.n_main_blocks > SMALL_PLAN_BLOCKS:
        return plan
    rows = plan.bin("rows").rows
    if rows.size == 0 or int(np.diff(host_indptr(A))[rows].max()) <= SMALL_PLAN_WARP_MAX:
        return plan
    return plan_for(A, **{**ADAPTIVE2_THRESHOLDS, "warp_max": SMALL_PLAN_WARP_MAX})


def _column_spans(A, rows: np.ndarray, indptr: np.ndarray):
    """First and last column of each given (non-empty) row.

    Columns need not be sorted within a row, so this reduces each segment.
    A matrix on the GPU has its indices copied to the host once for this (only
    matrices with candidate rows of >= dense_min_nnz nonzeros get here).
    """
    indices = to_host(A.indices)
    padded = np.concatenate((indices, indices[:1]))  # reduceat may name index nnz as a bound
    bounds = np.empty(2 * rows.size, dtype=np.int64)
    bounds[0::2], bounds[1::2] = indptr[rows], indptr[rows + 1]
    lo = np.minimum.reduceat(padded, bounds)[0::2].astype(np.int64)
    hi = np.maximum.reduceat(padded, bounds)[0::2].astype(np.int64)
    return lo, hi


def _dense_rows(A, lengths, indptr, t: Thresholds):
    """Rows for the dense path and their column spans (``dense_threshold > 1`` disables it)."""
    candidates = np.flatnonzero(lengths >= t.dense_min_nnz)
    if t.dense_threshold > 1 or candidates.size == 0:
        empty = np.empty(0, dtype=np.int64)
        return empty, empty, empty
    lo, hi = _column_spans(A, candidates, indptr)
    density = lengths[candidates] / (hi - lo + 1)
    keep = density >= t.dense_threshold
    return candidates[keep], lo[keep], hi[keep]


def _group_panels(rows, lo, hi, lengths, threshold) -> list:
    """Greedy panels over rows sorted by first column; a row joins the current
    panel while the panel stays at least ``threshold`` dense."""
    panels = []
    order = np.argsort(lo, kind="stable")
    current: list[int] = []
    c0 = c1 = nnz = 0
    for r, a, b in zip(rows[order].tolist(), lo[order].tolist(), hi[order].tolist()):
        length = int(lengths[r])
        if current:
            n0, n1 = min(c0, a), max(c1, b + 1)
            if (nnz + length) >= threshold * (len(current) + 1) * (n1 - n0):
                current.append(r)
                c0, c1, nnz = n0, n1, nnz + length
                continue
            panels.append(DensePanel(np.asarray(current, dtype=np.int64), c0, c1, nnz))
        current, c0, c1, nnz = [r], a, b + 1, length
    if current:
        panels.append(DensePanel(np.asarray(current, dtype=np.int64), c0, c1, nnz))
    return panels


def _stream_blocks(lengths, is_stream, t: Thresholds):
    """Descriptors for the packed short rows: (starts, ends, lanes per row)."""
    n = lengths.size
    cost = np.where(is_stream, lengths + t.row_cost, 0)
    start_cost = np.cumsum(cost) - cost
    key = start_cost // t.tile_cost
    previous_stream = np.concatenate(([False], is_stream[:-1]))
    previous_key = np.concatenate(([-1], key[:-1]))
    is_start = is_stream & (~previous_stream | (key != previous_key))
    starts = np.flatnonzero(is_start)
    if starts.size == 0:
        empty = np.empty(0, dtype=np.int64)
        return empty, empty, empty
    boundaries = np.concatenate((np.flatnonzero(is_start | ~is_stream), [n]))
    ends = boundaries[np.searchsorted(boundaries, starts, side="right")]
    n_rows = ends - starts
    padded = np.concatenate((np.where(is_stream, lengths, 0), [0]))
    bounds = np.empty(2 * starts.size, dtype=np.int64)
    bounds[0::2], bounds[1::2] = starts, ends
    longest = np.maximum.reduceat(padded, bounds)[0::2]
    return starts, ends, _lanes_per_row(n_rows, longest)


def _lanes_per_row(n_rows, longest):
    """Lanes per row for each stream block, minimising the estimated steps:
    rounds of rows (groups available = THREADS / width) times the longest
    row's strided sum plus the shuffle tree."""
    best_cost = np.full(n_rows.shape, np.inf)
    best = np.ones(n_rows.shape, dtype=np.int64)
    for width in LANE_WIDTHS:
        rounds = ceil_div(n_rows * width, ADAPTIVE_THREADS)
        cost = rounds * (ceil_div(longest, width) + np.log2(width))
        better = cost < best_cost
        best[better], best_cost[better] = width, cost[better]
    return best


def _row_blocks(rows, lengths, t: Thresholds, first_split_id: int):
    """Descriptors for rows that get whole blocks: one block each, or chunks."""
    rows = np.asarray(rows, dtype=np.int64)
    whole = rows[lengths[rows] <= t.chunk]
    split = rows[lengths[rows] > t.chunk]
    whole_desc = np.stack([whole, whole + 1, np.full(whole.size, KIND_BLOCK), np.full(whole.size, -1)], axis=1)
    n_chunks = ceil_div(lengths[split], t.chunk)
    offsets = np.concatenate(([0], np.cumsum(n_chunks)))
    chunk_rows = np.repeat(split, n_chunks)
    chunk_index = np.arange(offsets[-1]) - np.repeat(offsets[:-1], n_chunks)
    split_ids = np.repeat(np.arange(split.size) + first_split_id, n_chunks)
    split_desc = np.stack([chunk_rows, chunk_rows + 1, -(chunk_index + 1), split_ids], axis=1)
    return whole_desc.reshape(-1, 4), split_desc.reshape(-1, 4), n_chunks


def rows_width(length: np.ndarray) -> np.ndarray:
    """Lanes per row on the rows path: about 8+ nonzeros per lane, at least 8 lanes."""
    return np.where(length > 128, 32, np.where(length > 64, 16, 8)).astype(np.int64)


def _rows_blocks(rows, lengths):
    """Descriptors for the rows path: rows sorted by length (longest first), cut
    into blocks of ADAPTIVE_THREADS / width rows where width follows the
    block's longest row. Returns (descriptors, row_list)."""
    rows = np.asarray(rows, dtype=np.int64)
    if rows.size == 0:
        return np.empty((0, 4), dtype=np.int64), np.zeros(0, dtype=np.int64)
    order = rows[np.argsort(-lengths[rows], kind="stable")]
    width = rows_width(lengths[order])
    desc = []
    for w in np.unique(width)[::-1].tolist():  # widths fall as lengths fall: one run per width
        where = np.flatnonzero(width == w)
        per_block = ADAPTIVE_THREADS // w
        begins = np.arange(where[0], where[-1] + 1, per_block)
        ends = np.minimum(begins + per_block, where[-1] + 1)
        desc.append(np.stack([begins, ends, np.full(begins.size, KIND_ROWS), np.full(begins.size, w)], axis=1))
    return np.concatenate(desc).astype(np.int64), order


# Descriptors in the last TAIL_BLOCKS slots of an adaptive2 launch: about two
# waves of resident blocks (132 SMs x 8 blocks of 256 threads on an H100/H200).
TAIL_BLOCKS = 2048


def _heavy_out_of_tail(main: np.ndarray) -> np.ndarray:
    """Move the heavy descriptors (block per row, chunks, rows path) that fall in
    the grid's last TAIL_BLOCKS slots to the front, so the launch does not end
    waiting on one 4096-nnz block; everything else keeps its row order."""
    kind = main[:, KIND]
    heavy = (kind <= KIND_BLOCK) | (kind == KIND_ROWS)
    late = heavy & (np.arange(kind.size) >= kind.size - TAIL_BLOCKS)
    return np.concatenate([main[late], main[~late]])


def build_plan(A, thresholds: Thresholds | None = None) -> Plan:
    """Build a plan without the cache (``plan_for`` is the cached entry point)."""
    t = thresholds or Thresholds()
    t.check()
    began = time.perf_counter()
    indptr = host_indptr(A)
    lengths = np.diff(indptr)
    stats = stats_from_lengths(lengths, A.nnz)

    dense, lo, hi = _dense_rows(A, lengths, indptr, t)
    panels = _group_panels(dense, lo, hi, lengths, t.dense_threshold)
    is_dense = np.zeros(lengths.size, dtype=bool)
    is_dense[dense] = True
    is_stream = (lengths <= t.stream_max) & ~is_dense
    is_rows = (lengths > t.stream_max) & (lengths <= t.warp_max) & ~is_dense
    big_rows = np.flatnonzero((lengths > max(t.stream_max, t.warp_max)) & ~is_dense)

    starts, ends, lanes = _stream_blocks(lengths, is_stream, t)
    stream_desc = np.stack([starts, ends, lanes, np.full(starts.size, -1)], axis=1).reshape(-1, 4)
    whole_desc, split_desc, main_chunks = _row_blocks(big_rows, lengths, t, 0)
    rows_desc, row_list = _rows_blocks(np.flatnonzero(is_rows), lengths)
    n_main_split = main_chunks.size
    main = np.concatenate([stream_desc, whole_desc, split_desc, rows_desc]).astype(np.int64)
    # Row order (a rows-path block at its first listed row), chunks of one row in
    # chunk order: blocks running side by side read neighbouring parts of the
    # matrix and of x.
    first_row = main[:, ROW_BEGIN].copy()
    is_rows_desc = main[:, KIND] == KIND_ROWS
    first_row[is_rows_desc] = row_list[main[is_rows_desc, ROW_BEGIN]]
    main = main[np.argsort(first_row, kind="stable")]
    if t.warp_max:
        main = _heavy_out_of_tail(main)
    fb_whole, fb_split, fallback_chunks = _row_blocks(np.sort(dense), lengths, t, n_main_split)
    fallback = np.concatenate([fb_whole, fb_split]).astype(np.int64)
    blocks = np.ascontiguousarray(np.concatenate([main, fallback]).astype(np.int64))
    all_chunks = np.concatenate([main_chunks, fallback_chunks])
    split_offsets = np.concatenate(([0], np.cumsum(all_chunks))).astype(np.int64)

    block_nnz = _descriptor_nnz(blocks, indptr, t.chunk, row_list, lengths)
    is_stream_desc = (main[:, KIND] > 0) & (main[:, KIND] != KIND_ROWS)
    stream_nnz = block_nnz[: main.shape[0]][is_stream_desc]
    if stream_nnz.size and int(stream_nnz.max()) > ADAPTIVE_STAGE:
        raise KernelError(f"plan bug: a stream block holds {int(stream_nnz.max())} nonzeros, "
                          f"more than the kernel's stage of {ADAPTIVE_STAGE}")
    stream_rows = (main[:, ROW_END] - main[:, ROW_BEGIN])[is_stream_desc]
    if stream_rows.size and int(stream_rows.max()) >= ADAPTIVE_STAGE:  # spmv_adaptive2 stages their offsets
        raise KernelError(f"plan bug: a stream block holds {int(stream_rows.max())} rows, "
                          f"the kernel stages at most {ADAPTIVE_STAGE - 1}")

    def make_bin(name, mask):
        rows = np.flatnonzero(mask)
        return Bin(name, rows, int(lengths[rows].sum()))

    bins = [make_bin("stream", is_stream),
            make_bin("rows", is_rows),
            make_bin("block", (lengths > t.stream_max) & (lengths <= t.chunk) & ~is_dense & ~is_rows),
            make_bin("split", (lengths > t.chunk) & ~is_dense),
            make_bin("dense", is_dense)]
    plan = Plan(shape=tuple(A.shape), nnz=int(A.nnz), thresholds=t, stats=stats, bins=bins,
                dense_panels=panels, blocks=blocks, n_main_blocks=int(main.shape[0]),
                split_offsets=split_offsets, descriptor_nnz=block_nnz, build_seconds=time.perf_counter() - began,
                row_list=row_list if row_list.size else np.zeros(1, dtype=np.int64))
    return plan


def _descriptor_nnz(blocks, indptr, chunk, row_list, lengths) -> np.ndarray:
    """Nonzeros each descriptor's block reads."""
    if blocks.shape[0] == 0:
        return np.empty(0, dtype=np.int64)
    kind = blocks[:, KIND]
    is_rows = kind == KIND_ROWS
    row_index = np.where(is_rows, 0, blocks[:, [ROW_BEGIN, ROW_END]].T)
    whole = indptr[row_index[1]] - indptr[row_index[0]]
    chunk_index = np.where(kind < 0, -kind - 1, 0)
    in_chunk = np.minimum(whole - chunk_index * chunk, chunk)
    listed = np.concatenate(([0], np.cumsum(lengths[row_list]))) if row_list.size else np.zeros(1, np.int64)
    in_rows = listed[np.where(is_rows, blocks[:, ROW_END], 0)] - listed[np.where(is_rows, blocks[:, ROW_BEGIN], 0)]
    return np.where(is_rows, in_rows, np.where(kind < 0, in_chunk, whole))
