"""The SpMV policy: kernel names, the lanes rule, the ``auto`` rule, and plans.

:func:`plan_spmv` turns a kernel name (``"auto"``, ``"warp:8"``, ...) into one
immutable :class:`SpmvPlan` that says everything the CUDA backend needs to
launch: the kernel family, its template parameter, and the adaptive plan or
segmented tile ownership. The backend decides nothing.

Kernel names may carry a parameter: a lane width, ``"warp:8"`` or
``"vector:16"`` (without one the width follows the mean row length,
:func:`lanes_for`), or the entries per lane of ``"segmented:K"`` (default
:func:`~spla.planning.segmented.segmented_default`: 16 for float32, 8 for float64).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np

from ..errors import KernelError
from . import adaptive, band, banks, blocked, dia, rle, segmented
from .stats import (
    NEAR_SHARE_KEY,
    TILE_LINES_KEY,
    TILE_SPAN_KEY,
    RowStats,
    near_share,
    row_stats,
    tile_lines,
    tile_span,
)
from .structured import Refusal

# What `spla.spmv(kernel=...)` accepts on the GPU: spla's kernels in the order of
# the optimisation path (one idea a file), auto, and the cuSPARSE anchors.
KERNELS = {
    "scalar": "one thread per row (kernels/spmv_scalar.cu)",
    "warp": "2-32 lanes per row, lane-strided loads, shuffle reduction (kernels/spmv_warp.cu)",
    "vector": "2-32 lanes per row, 16-byte loads of values and indices (kernels/spmv_vector.cu)",
    "adaptive": "nnz-balanced blocks: packed short rows, block per row, split long rows, "
                "dense panel via GEMV (kernels/spmv_adaptive.cu)",
    "adaptive2": "adaptive with length-sorted sub-warp rows for medium rows, staged row offsets, "
                 "4-deep load pipelining, no dense path (kernels/spmv_adaptive2.cu)",
    "segmented": "fixed tiles of 32*K nonzeros, one warp each, loads striped across the warp, "
                 "segmented warp scan, rows cut by tiles summed in order (kernels/spmv_segmented.cu)",
    "staged": "fixed tiles of 256*T nonzeros, one block each, products staged in shared memory, a thread "
              "a row summing them (a warp for rows of over 128 in the tile), rows cut by tiles summed in order "
              "(kernels/spmv_staged.cu)",
    "blocked": "staged over a copy of A regrouped by blocks of up to 2M columns, so the tiles in flight gather "
               "from one block of x that L2 holds; a second launch sums each row's blocks "
               "(spla.planning.blocked, kernels/spmv_blocked.cu)",
    "dia": "stencils and bands: the matrix stored by its diagonals (at most 64), no column indices, "
           "1, 2 or 4 rows a thread by the diagonals' count and the rows (kernels/spmv_dia.cu); refused for other "
           "matrices (spla.planning.dia)",
    "band": "rows that are each one contiguous run of columns (bands of any width): warp's mapping, the "
            "row's first column in place of its indices (kernels/spmv_band.cu); refused for other "
            "matrices (spla.planning.band)",
    "rle": "rows made of runs of consecutive columns (blocks, several bands): warp's mapping, each run's first "
           "column and first entry in place of its entries' indices (kernels/spmv_rle.cu); runs on any matrix, "
           f"auto runs it from runs of {rle.AUTO_MIN_RUN:g} on average (spla.planning.rle)",
    "auto": "picks one of the above from the row statistics "
            "(see choose_kernel), or the winner of an earlier tuning of this matrix on this GPU (the "
            "tuning cache); never measures",
    "tune": "times the plausible kernels on this matrix on its first call (at most ~50 SpMVs or 30 ms), "
            "checks each against the rule's choice, runs the fastest and remembers it (spla.planning.tune)",
    "cusparse": "the lean cuSPARSE call: descriptors and buffer built once, output preallocated (the anchor)",
    "cusparse-cupy": "cupyx.scipy.sparse csr_matrix @ x: cuSPARSE as a CuPy user calls it",
}
SPLA_KERNELS = ("scalar", "warp", "vector", "adaptive", "adaptive2", "segmented", "staged", "blocked")
# Kernels that read a structure in place of CSR's indices, and the module that finds it
# (spla.planning.structured); dia and band run only on matrices of theirs (KernelError, saying why,
# on others), rle on any matrix. auto tries them in this order.
STRUCTURES = {"dia": dia, "band": band, "rle": rle}
STRUCTURED_KERNELS = tuple(STRUCTURES)
CPU_KERNELS = ("auto", "scipy")
LANE_WIDTHS = (2, 4, 8, 16, 32)
# The kernel parameter each family takes after a colon, and its allowed values.
# cusparse:1 and cusparse:2 are CUSPARSE_SPMV_CSR_ALG1 and the deterministic ALG2.
KERNEL_PARAMETERS = {"warp": LANE_WIDTHS, "vector": LANE_WIDTHS, "band": LANE_WIDTHS, "rle": LANE_WIDTHS,
                     "segmented": segmented.SEGMENTED_ENTRIES, "staged": segmented.STAGED_ENTRIES,
                     "blocked": segmented.STAGED_ENTRIES, "dia": dia.ROWS,
                     "cusparse": (1, 2)}
# The families whose parameter is a lane width (without one it follows the mean row length) ...
LANE_FAMILIES = ("warp", "vector", "band", "rle")
# ... of which these read a row's values with no column indices (their lanes: band_lanes, rle_lanes)
VALUE_LANE_FAMILIES = ("band", "rle")
# The structured kernels that refuse a matrix without their structure (rle runs on any).
OWN_MATRICES_ONLY = ("dia", "band")
PARAMETER_HELP = (f"warp, vector, band and rle take an optional :LANES, one of {LANE_WIDTHS}; segmented an optional "
                  f":K entries per lane, one of {segmented.SEGMENTED_ENTRIES} (16: float32 only); staged an "
                  f"optional :T nonzeros a thread, one of {segmented.STAGED_ENTRIES}, and so does blocked (its "
                  f"staged launch); dia an optional :ROWS a thread, one of {dia.ROWS} (4: float32 only); cusparse "
                  f"an optional :1 or :2 (CSR_ALG1, the default, or the deterministic CSR_ALG2)")


def parse_kernel(kernel: str) -> tuple[str, int | None]:
    """``"warp:8"`` -> ("warp", 8); ``"scalar"`` -> ("scalar", None). Unknown names raise."""
    family, _, param = str(kernel).partition(":")
    if family not in KERNELS:
        raise KernelError(f"unknown SpMV kernel {kernel!r}; expected one of {', '.join(KERNELS)} "
                          f"({PARAMETER_HELP})")
    if not param:
        return family, None
    if not param.isdigit() or int(param) not in KERNEL_PARAMETERS.get(family, ()):
        raise KernelError(f"{kernel!r}: {PARAMETER_HELP}")
    return family, int(param)


# ------------------------------------------------------------- lanes rule
def pack_entries(dtype, index_dtype) -> int:
    """Entries per 16-byte pack in spmv_vector.cu (both packs stay <= 16 bytes)."""
    return min(16 // np.dtype(dtype).itemsize, 16 // np.dtype(index_dtype).itemsize)


# Rows of at least ROW_GROUP_ENTRIES: a row group does best reading at least
# ROW_GROUP_ENTRIES entries a step, with no lane walking more than about
# LANE_ENTRIES entries of its row. Shorter rows get about two loads a lane: a
# group wider than the row idles. 8 (was 16): on the corpus (session 8) the
# tuner's winners on stencils and bands of 25-40 entries a row were half the
# lanes 16 gave (vector:2 in float32, vector:4 / warp:8 in float64, up to 28%
# faster); see BENCHMARKS.md.
ROW_GROUP_ENTRIES = 8
LANE_ENTRIES = 16


# Where a matrix's rows times the width above give fewer threads than
# FILL_THREADS, the width doubles (at most LANE_DOUBLINGS times) until they do:
# the GPU is short of threads (an H200 holds 132 x 2,048 = 270k), not of bytes
# a lane. Fitted by scripts/fit_lanes.py on the tuner's timings of each width
# and its neighbours (fit halves; 98,304 in session 13, 393,216 with
# SCATTERED_NEAR in session 15, 196,608 in session 16 once the 300k corpus and
# the real matrices were re-run at 393,216: there warp:8 on small stencils and
# road graphs was 20-60% slower than warp:4): on small matrices the best width
# was often two or four times the rule's. No more than four times: no record
# times a wider width.
FILL_THREADS = 196608
LANE_DOUBLINGS = 2

# Rows whose neighbouring entries' columns are rarely close (stats.near_share below this: each
# gather of x a sector of its own) read a whole row in one step, a lane a pack, so all of a row's
# gathers are in flight at once. The rule above (two loads a lane) was set on stencils and bands,
# whose packs of x share lines; on random-uniform it left the tuner's width 4-11% faster. Fitted
# with FILL_THREADS by scripts/fit_lanes.py on the fit halves (session 15, BENCHMARKS.md).
SCATTERED_NEAR = 0.27
# ... where x is larger than this: a smaller x stays in every SM's L1 (up to ~200 KiB on an H200),
# so its gathers are L1 hits, scattered or not (tall-skinny's 512 columns: its best width there was
# the rule's or half of it). Set from the cache size, not fitted: no fit record tells them apart.
SCATTERED_MIN_X_BYTES = 1 << 17


def lanes_for(mean_row: float, entries_per_lane_step: int = 1, n_rows: int | None = None,
              scattered: bool = False) -> int:
    """Lanes per row for the warp/vector kernels, from the mean row length and
    the entries a lane reads a step (1 for warp, pack_entries for vector);
    doubled while ``n_rows`` rows of it would be fewer than FILL_THREADS threads
    (at most LANE_DOUBLINGS times). Rows of ``scattered`` columns (see
    SCATTERED_NEAR) take one step a row."""
    if scattered:
        want = mean_row / entries_per_lane_step
    elif mean_row < ROW_GROUP_ENTRIES:
        want = mean_row / (2 * entries_per_lane_step)
    else:
        want = max(ROW_GROUP_ENTRIES / entries_per_lane_step, mean_row / LANE_ENTRIES)
    width = next((w for w in LANE_WIDTHS if w >= want), LANE_WIDTHS[-1])
    return widen(width, n_rows) if n_rows is not None else width


def widen(width: int, n_rows: int, fill: int = FILL_THREADS) -> int:
    """``width`` doubled while n_rows x width < fill, at most LANE_DOUBLINGS times and to 32."""
    for _ in range(LANE_DOUBLINGS):
        if n_rows * width >= fill or width >= LANE_WIDTHS[-1]:
            break
        width *= 2
    return width


#: vector on float32 rows (4-entry packs) that lanes_for gives 2 lanes takes 4 where rows average
#: VECTOR_WIDE_ROW entries or more, unless nearly every neighbouring pair of columns is close (near
#: share VECTOR_WIDE_NEAR and up: stencils and bands, where session 8 found 2 lanes best). At 2 lanes
#: a lane of a row of 32 walks four packs one after the other. V1, session 49 (H100): read off sets 49
#: and 51, where rows of 28-32 ran 1.13-1.34x at 4 lanes (k-nearest-neighbour rows and short runs at
#: near shares 0.49-0.91) and rows of 16-24 0.92-1.04x; then fresh set 52: 1.123x where it acts (7
#: matrices), worst 1.033.
VECTOR_WIDE_ROW = 28.0
VECTOR_WIDE_NEAR = 0.95


def vector_widens(lanes: int, mean_row: float, pack: int, near: Lazy) -> bool:
    """Whether vector takes 4 lanes where :func:`lanes_for` gave ``lanes`` (see
    :data:`VECTOR_WIDE_ROW`); ``near()`` is asked last, only of the rows it may concern."""
    return lanes == 2 and pack >= 4 and mean_row >= VECTOR_WIDE_ROW and near() < VECTOR_WIDE_NEAR


#: Bytes of values a lane of the band kernel reads a row: band:2 in float32 and band:4 in float64
#: on rows of 33 (banded-fixed@40M, the corpus's fit half; session 12, call 2). The lanes of warp's
#: rule (about 8 a row there) were 1.2-1.4x slower: a lane's loads of one row are consecutive
#: entries, and fewer lanes a row leave more rows, and more loads, in flight a warp.
BAND_LANE_BYTES = 64


def nearest_width(want: float) -> int:
    """The lane width nearest to ``want`` in log2 (at least 1 is wanted)."""
    want = max(want, 1.0)
    return min(LANE_WIDTHS, key=lambda width: abs(np.log2(width) - np.log2(want)))


def band_lanes(mean_row: float, itemsize: int) -> int:
    """Lanes per row for the band kernel: the width nearest (in log2) to the row's bytes of
    values over :data:`BAND_LANE_BYTES`."""
    return nearest_width(mean_row * itemsize / BAND_LANE_BYTES)


#: Entries of a float64 row a lane of the rle kernel takes. rle's lanes walk every run of their
#: row and gather x an entry at a time, so its work a lane follows the row's entries, not its
#: bytes: band_lanes's 64 bytes (8 entries) were a step too wide in float64 on rows of about
#: 23-28, 45-57, 91-113, ... (W1, read off sets 30, 36, 38 and 39 on an H100: 1.08x band_lanes
#: where the two differ; then on fresh set 40, session 47: 1.10x, worst 0.977). float32 keeps
#: band_lanes: there blocks of rows that share their columns want fewer lanes and rows that do
#: not want more (L1 saturates at 2 lanes when each of a warp's 16 rows gathers its own x), and
#: the row's length alone does not sort them.
RLE_LANE_ENTRIES = 10


def rle_lanes(mean_row: float, itemsize: int) -> int:
    """Lanes per row for the rle kernel: band_lanes in float32; in float64 the width nearest (in
    log2) to the mean row over :data:`RLE_LANE_ENTRIES`."""
    if itemsize < 8:
        return band_lanes(mean_row, itemsize)
    return nearest_width(mean_row / RLE_LANE_ENTRIES)


# -------------------------------------------------------------- auto rule
@dataclass(frozen=True)
class AutoThresholds:
    """The numbers of the auto rule (:func:`matrix_class`); ``scripts/fit_auto.py`` fits
    ``segmented_mean``, ``short_rows``, ``large_nnz``, ``narrow_steps``, ``huge_share``,
    ``mid_nnz`` and ``mid_near`` on the corpus's fit half and reports the rule on every half
    (BENCHMARKS.md); the others are set from the kernels' design, ``tiny_*`` and ``*_x_bytes``
    between held-out runs, and each whose comment names a test set (``packed_mean``,
    ``regular_near``, ``packed_near``, ...) read off held-out sets and then tested on a fresh one
    written with the prediction before its run; ``bitmap_rows`` (a switch, not a number) read off
    the corpus re-run's fit half and tested the same way.
    ``fit_auto.py`` fits ``tiny_mean`` and the x sizes too, but the fit half's large rows of
    unaligned lengths lie only over x of 4 MB and more, and its values read fewer held-out runs
    within 15% than these (see "regular-large" below)."""

    huge_row: int = 65536      # a row of 128 segmented tiles and more
    long_row: int = 1024       # a row one warp takes 32 steps over
    long_mean: float = 1024.0  # rows this long on average: a warp each ...
    long_rows: int = 1024      # ... when there are enough to fill the GPU (132 SMs x 8 warps): not fitted
    blocked_x_bytes: int = 36_000_000  # over an x this large (sets 58-61; kept by set 66), blocked runs where ...
    blocked_gain: float = 1.05         # ... its predicted speed over staged's is at least this (session 54)
    irregular_cv: float = 1.0
    short_max: int = 64
    short_mean: float = 12.0
    segmented_mean: float = 5.369  # fitted (scripts/fit_auto.py): irregular rows this short on average
    short_rows: int = 129978     # fitted: short rows take vector from this many rows, warp below
    large_nnz: int = 4464630     # fitted: irregular matrices this large run staged (vendor_nnz until session 17)
    narrow_steps: float = 16.66  # fitted: smaller irregular matrices whose longest row vector reads in this many steps
    huge_share: float = math.inf  # fitted: a huge row this share of the nonzeros keeps adaptive2 at any size
                                  # (0.00654 until session 23; none since: see "huge" below)
    mid_nnz: int = 296491        # fitted (per call and device): smaller irregular matrices from this size ...
    mid_near: float = 0.457      # fitted: ... whose columns are rarely close (near_share below this) ...
    mid_mean: float = 32.0       # ... and rows no longer on average than a staged thread sums (not fitted) run staged
    tiny_mean: float = 7.0       # short rows this short on average ...
    tiny_max: int = 16           # ... and none longer than this take a thread each (set on held-out runs, not fitted)
    cached_x_bytes: int = 98304    # large regular rows of scattered columns over an x larger than this run segmented
    staged_x_bytes: int = 1048576  # ... and staged over an x larger than this (both set on held-out runs, not fitted)
    packed_mean: float = 7.0       # ... but segmented again where 4 entries fill a 16-byte pack and rows are this
                                   # long on average (read off held-out runs, then tested on a fresh set: session 22)
    regular_near: float = 0.25     # large regular rows take those kernels only where neighbouring columns are
                                   # closer than this share (read off set 12, tested on set 13: session 23) ...
    local_near: float = 0.45       # ... or this one where rows average at most STAGED_THREAD_ROW (a staged
                                   # thread sums them; read off sets 20-22, tested on sets 23 and 28: session 36)
    packed_near: float = 0.05      # ... and packed rows go back to staged where neighbouring columns are at least
                                   # this often close (read off sets 18-20, tested on set 21: session 26) ...
    packed_span: float = 12288.0   # ... or where a staged tile's columns span at most this (stats.tile_span; read
                                   # off the records, session 36; tested on set 29, session 37) ...
    packed_lines: float = 3400.0   # ... or where a tile gathers from at least this many distinct lines of x
                                   # (stats.tile_lines: hardly a line read twice; read off the records,
                                   # session 38; tested on set 31)
    bitmap_rows: bool = True       # irregular rows of at most segmented_mean on average and no empty row run
                                   # segmented (its bitmap entry): at any size where a 16-byte pack holds 4
                                   # entries, below large_nnz where it holds 2 (read off the corpus re-run,
                                   # tested on sets 14-16: session 24)


AUTO = AutoThresholds()

# A Ginkgo-style rule on row statistics: a matrix falls in one class, in this
# order, and AUTO_RULE names the kernel of each class (thresholds: AUTO):
#   "wide": an x of at least blocked_x_bytes, cut into more than one column block
#       (spla.planning.blocked), where blocked.predicted_gain is at least blocked_gain:
#       blocked, staged over A regrouped block by block, so the tiles in flight gather from one
#       block of x that L2 holds. The gain is a traffic model: lines of x a nonzero misses in
#       CSR order (the slope of x's footprint where it fills L2, footprint theory) against the
#       sectors A reads in block order (each once), with the cost of the (row, block) pairs and of
#       the sum's launch. Session 51 gated on three proxies instead (entries a row a block, a wave's
#       span of x, lines a staged tile reads), fitted on sets 58-62 and tested on fresh set 63,
#       but bench_spmv's powerlaw-16M (web-like locality: few lines a tile, yet a quarter of its
#       gathers far away) ran blocked 1.30-1.33x staged where those gates kept it off. Session 52's
#       model counted CSR order's sectors over windows of 1M nonzeros and overpredicted community
#       graphs, whose rows come back to a slice of x for longer (fresh set 64). The footprint
#       model's L2 size is set by Nsight Compute's DRAM bytes on two matrices and its costs fitted
#       on sets 59-63 and powerlaw-16M over x of at least 36 MB (67 runs, H100; rms error 11%
#       there, 9% on set 64); blocked_gain is 1.05, not 1.0, so that a gain within the model's
#       error does not pay for the copy (docs/lab/cpu-2026-12-06-session54). On fresh set 65
#       (16 runs, H100) its rms error was 10% and it picked the faster of blocked and staged on
#       every run, where the window model blocked three runs at 0.81-0.88x. Against vector
#       blocked ran 0.90-1.10x on rows of one length (vector's warps sweep x in step there) and
#       1.04-3.9x on ragged rows (session 51)
#   "long": every row long (mean >= long_mean, cv <= irregular_cv, no huge
#       row) and at least long_rows of them: a warp per row streams each one
#       in 16-byte packs (vector, 32 lanes), where adaptive2 would split them
#       into chunks summed by atomics (with fewer rows a warp each leaves the
#       GPU idle, and adaptive2's splits win). vector, not warp: with 1,220
#       rows of 8,192 (short-wide@10M) warp's 4-byte loads kept too few bytes
#       in flight (0.76x the best kernel, vector 0.98x), and with 4,882 rows
#       vector was 5-6% behind warp (session 12; the corpus's only long rows,
#       in its report half: a choice of the smaller worst case, not a fit).
#   "irregular-large": a huge or irregular matrix (the next two classes) of at
#       least large_nnz nonzeros, its longest row under huge_share of them,
#       runs staged: a block per tile of nonzeros, products in shared memory,
#       75% of the warp slots filled. It beat cuSPARSE's CSR ALG1 (which this
#       class ran until session 17: every other spla kernel lost to it there)
#       on all 20 of the corpus's large power-law, R-MAT, bimodal, multimodal,
#       empty-row and block-dense matrices in float64 (1.06-1.32x) and 19 of
#       20 in float32 (the 20th 0.999x), fit and report halves alike
#       (BENCHMARKS.md, session 17). large_nnz keeps the size fitted when
#       the class ran cuSPARSE (as vendor_nnz): below it irregular-mid runs
#       staged on most of these shapes, and no record between 3M and 10M
#       nonzeros moves it. At this size rows of irregular length (cv >
#       irregular_cv) are irregular whatever their longest row: vector's
#       lanes, set by the mean, fit neither the short rows nor the long ones
#       of a bimodal matrix, where staged's tiles of nonzeros do not care
#       (a held-out 52M matrix of rows of 2 and 40: vector 0.68x cuSPARSE in
#       float64, staged 0.98x; session 19)
#   "huge": a row longer than huge_row (segmented would send each such row's
#       hundreds of tiles through one completion counter; adaptive2 splits it
#       into 4096-nnz chunks) in a matrix under large_nnz, or at any size when
#       the longest row holds at least huge_share of the nonzeros. That share
#       was 0.00654 (hub-rows, fit half, before staged was timed on it); the
#       corpus re-run of session 23 timed staged on every huge-row matrix of
#       10M-40M nonzeros (hub-rows, fit; mixed-lengths, report), where it beat
#       adaptive2 on 6 of 8 and was within 7% on the other two (adaptive2
#       0.77-0.80 of staged on both at 40M in float64), so the fit sets it to
#       infinity: from large_nnz on, a huge row runs staged too
#   "irregular-narrow", "irregular-mid", "irregular-short" and "irregular": a
#       row longer than long_row, or rows irregular (cv > irregular_cv) with a
#       longest row past short_max (one long row would stall a warp or a
#       thread). Where vector's lanes (lanes_for) read the longest row in at
#       most narrow_steps 16-byte steps, they still take it with none of the
#       splitting kernels' overhead: p2p, collaboration and political-blog
#       graphs, bimodal rows of at most 128 (vector up to 1.8x segmented,
#       session 13; the steps, not the longest row as until session 18, so
#       float32's 4-entry packs and a matrix's lanes count). From mid_nnz
#       nonzeros, rows whose neighbouring entries' columns are rarely close
#       (near_share below mid_near) and no longer than mid_mean on average (a
#       thread of staged sums a short row; a warp each longer one) run
#       staged: power laws, R-MAT graphs and empty rows, whose scattered
#       gathers its full warp slots keep in flight (it beat adaptive2 by up to
#       1.5x by device time, session 18). Where columns are close (block-
#       dense, hub-rows, mixed-lengths: near_share 0.79, against at most
#       0.45 on the others) the loads stream, and adaptive2 was up to 1.6x
#       faster below 4.5M nonzeros. The rows alone do not tell them apart:
#       their cv spans 3.5-55 (with gen:blockdense and gen:hugerows), the
#       power laws' 2.9-9.9.
#       mid_nnz was 1M while staged took two launches (the second cost 6-7
#       us of host time: at 300k nonzeros it won by device time and lost 1.6x
#       a call); with staged in one launch under 1,024 cut rows (session 25)
#       the fit lands at 296k by device time and per call alike, and on
#       held-out set 19 (eight scattered power laws and R-MAT graphs of
#       358k-880k nonzeros, written with the prediction before its run)
#       staged beat adaptive2 1.23x / 1.20x a call (geomean, float32 /
#       float64), on 15 of 16 runs. Segmented's equal tiles win where the
#       typical row is a few entries (mean <= segmented_mean: adaptive's row
#       bins are mostly one-row work); adaptive2 on the rest
#   "irregular-short" also takes irregular rows of at most segmented_mean
#       on average with no empty row (bitmap_rows), which the two staged
#       classes above would take: segmented's tiles then find their rows'
#       ends in a bitmap, with no walk over the row pointer (session 23).
#       In float32 (4 entries a 16-byte pack) at any size: on the corpus
#       re-run's fit half (powerlaw-steep, 2M-40M) it beat staged 1.08-1.33x;
#       on set 14, written with the prediction before its run (session 24),
#       1.24-1.32x on 3 of 4 such matrices (scattered columns: staged 5%
#       ahead); on set 16 1.09x over 8, worst 0.92 (staged's leads, up to
#       9%, mostly on scattered columns). In float64 only below large_nnz:
#       from it staged led on 6 of the 7 such runs recorded by then
#       (powerlaw-steep at 10M and 40M, sets 4, 7 and 14: segmented
#       0.87-0.98 of staged), and on 3 of 4 of set 15, written with that
#       prediction before its run; below it segmented led on 4 of 4, then 1
#       of 2 (set 15). With empty rows (segmented walks them) or rows of 8
#       on average staged stayed 14-31% ahead
#   "short": mean <= short_mean and longest <= short_max, with at least
#       short_rows rows: vector (a few lanes a row, 16-byte packs);
#       "short-few-rows" below that: warp. A thread per row (scalar) was the
#       short class's kernel until session 13, but it wins only on stencils,
#       which dia takes at these sizes; on short rows of scattered columns
#       (zipf-columns and tall-skinny, fit half) vector was faster in 7 of 8
#       runs at 10M and 40M nonzeros, by up to 32% (BENCHMARKS.md)
#   "short-tiny": a short matrix whose rows average at most tiny_mean
#       entries, none over tiny_max: scalar. Vector's narrowest group is 2
#       lanes, so a warp covers 16 short rows where scalar's covers 32, and
#       its lanes read the unaligned heads and tails of rows one entry at a
#       time. Where x stays in cache and the loads stream, that decides it
#       (session 19's held-out runs, scalar over vector, float32 / float64):
#       rows of 2-3 over 2,000 columns 2.2x / 2.0x, of 5 over 500 1.9x /
#       1.4x, of 4-8 over 3,000 1.17x / 0.93x; rows of exactly 8 over 512
#       (tall-skinny, fit half: every row's packs aligned) 0.86-0.93x /
#       0.89-1.00x. So tiny_mean sits between 6 and 8 entries; tiny_max (a
#       thread's loop at most about twice the mean's) is a guard, not a fit.
#       Where the gathers are scattered over a large x, all kernels were
#       within 12% of each other on such rows (scalar 0.88-1.00 of the best)
#   "regular-large" and "regular-large-l2": regular rows (none of the
#       classes above) from large_nnz nonzeros whose neighbouring columns
#       are rarely close (near_share below regular_near), over an x larger than
#       cached_x_bytes: staged where x is larger than staged_x_bytes,
#       segmented below, unless dia or band finds its structure. Gathers that miss L1 decide these, and the
#       tile kernels keep more of them in flight whatever the rows' lengths;
#       the row kernels led only where every row is a multiple of a 16-byte
#       pack (the corpus's rows of exactly 8 and 16: vector up to 1.16x
#       staged, fit half) or x is small. Session 19's held-out runs (13M-
#       60M nonzeros, rows of 1-40 entries, both dtypes): over x of 1.5-156
#       MB the row kernels ran at 0.56-0.96 of staged on rows of unaligned
#       lengths (a k-nearest-neighbour graph: vector 0.56); over 117 KB-1.5
#       MB segmented was within 6% of the best on all 14 runs and staged fell
#       to 0.49 at 195 KB (its 100 KB of shared memory an SM leave x less
#       L1); over 2-62 KB the row kernels or staged led and segmented fell
#       to 0.63-0.92. The two sizes sit between those runs, not fitted:
#       refitted on the fit half with its unaligned families (session 20),
#       whose only large unaligned rows lie over 4 MB and more of x, they
#       moved to 3.5 MB / 5.4 MB and read 91-93 of 98 held-out runs within
#       15% against these values' 94-95 (that refit also put tiny_mean at
#       5.0; the held-out runs keep 7). The gate on the near share was
#       mid_near (0.457) until session 23: rows of 40-60 within 500 columns of
#       the diagonal (near share 0.33, set 12) ran staged at 0.77 of vector in
#       float64. Rows of 16-24 and 30-50 within 150-300 columns (near 0.42,
#       set 13, written with the prediction before its run) then ran vector
#       at 1.01-1.37x the tile kernels in both dtypes; rows as long within
#       1,000-2,000 columns (near 0.12-0.15) ran the tile kernels 1.25-1.6x
#       faster than vector, so the near share, not the rows' shared window,
#       is the gate. No corpus run lies between the two cuts. Since staged's
#       threads sum rows of up to 128 (session 24), rows of at most that on
#       average take it up to a near share of local_near: on sets 20-22 such
#       local rows (near 0.25-0.45) ran staged 1.07-1.21x vector on 10 of
#       12, while rows of 120-180 ran it at 0.74-0.94 (set 22). Tested on
#       fresh sets: 23 (H200) staged at least as fast on 7 of 8 runs, geomean
#       1.05, lowest 0.93; 28 (H100) 14 of 16, geomean 1.18, lowest 0.95
#       (docs/lab/h100-2026-12-05-session36). Set 28's rows of 160-256 ran
#       staged 1.01-1.05x vector: the cut at 128 is cautious, not measured
#   "regular-large-packed": the regular-large class where a 16-byte pack
#       holds 4 entries (float32 values, int32 indices) and rows average at
#       least packed_mean: segmented. Its lanes load 4 consecutive entries of
#       a row in one instruction and gather neighbouring columns together:
#       where rows share x's lines with their neighbours (Kronecker products,
#       banded blocks, zipf columns, some kNN windows) it beat staged by
#       6-27% (10 of 31 runs), elsewhere it ran at 0.92-1.02 of staged bar
#       two (a transposed power law 0.88, a narrow kNN 0.91): 1.02x staged
#       over the 31, and fewer runs behind the best by 15% (3 -> 1). In
#       float64 (2 entries a pack) staged led on all nine runs of set 11. The
#       cut at 7 was read off the held-out runs of sessions 18-20 (30 float32
#       runs of the class: 0.960 -> 0.961 of the best, misses 2 -> 1) and then
#       tested on a fresh set written for it (session 22's set 11: 0.937 ->
#       0.971, misses 1 -> 0); the corpus's runs of the class read fit 0.927
#       -> 0.975 (6) and report 0.976 -> 0.964 (4: two random-width runs at
#       0.97-0.98). BENCHMARKS.md, session 22. Not where neighbouring columns
#       are close in packed_near of pairs or more (rows within a few thousand
#       columns of the diagonal): those are regular-large, staged. Since
#       staged sums rows of up to 128 by thread (session 24) and reads 2-byte
#       column offsets in float32 (session 26), it beat segmented 1.12-1.22x
#       on every such held-out record and set 20's; segmented stayed ahead at
#       near shares of 0.001-0.02 (kNN windows of rows of one length,
#       Kronecker products, shuffled stencils: 1.3-1.5x). The cut, read off
#       those, was tested on set 21 (written with the prediction before its
#       run): staged 1.06-1.27x segmented on all 7 at or above it (geomean
#       1.19); below it staged still led on 2 of 3 (1.10, 1.20), so the cut is
#       safe rather than tight. Nor where a staged tile's columns span at
#       most packed_span (stats.tile_span: the window of x a block reads). On
#       the 65 records of the class, tiles within 1k-10k columns ran staged
#       1.05-1.30x segmented on 11 of 13 (set 27's rows of one length within
#       1-5k columns among them), 16k-100k columns segmented ahead on 15 of
#       19 (kNN windows of 12k-30k, Kronecker products: 1.03-1.6x), and tiles
#       that read a line of x a nonzero tied (geomean 1.02). A guess at why:
#       staged's 16 KiB of products a block (6-8 blocks an SM) take 96-128 KB
#       of the 256 KB of L1 and shared memory, so only a narrow window of x
#       stays in L1. Read off those records (session 36), then tested on
#       set 29 (session 37, H200): staged 1.08-1.29x segmented on all 5
#       small windows at 40M (geomean 1.17), segmented 1.14-1.27x ahead on
#       all 4 wide ones; at 10M staged was within 0.97 (no size floor).
#       Nor where a tile gathers from at least packed_lines distinct lines
#       of x (stats.tile_lines): columns scattered so widely that hardly a
#       line is read twice, so segmented's packs gather nothing together. On
#       the records, tiles of at least 3,400 lines ran staged 0.98-1.11x
#       segmented (29 of 31 at 0.99 and up; 1.09-1.11 on rows of 96-104),
#       while hot columns, Kronecker products and wide windows (750-3,300
#       lines) kept segmented ahead. Read off the records (session 38),
#       then tested on set 31 (H100, written with the prediction before its
#       run): staged 1.01-1.12x segmented on all 7 scattered matrices
#       (geomean 1.07), segmented ahead on all 3 controls (staged 0.72-0.98);
#       on an H200 (session 39) 7/7 again, geomean 1.07, controls 2 of 3
#   "runs": large regular rows, not short ones, of at most
#       STAGED_THREAD_ROW on average over an x larger than staged_x_bytes
#       whose neighbouring columns are close too often for the gates above
#       (near share from local_near): rows made of runs of consecutive
#       columns, dense blocks. Staged, unless dia or band finds its
#       structure. They were "medium" (vector) until session 38: staged's
#       old records there (0.51-0.83 of the best) predate its bank offsets
#       (session 33), and rows of 32 had put every thread of a warp in one
#       bank. Tested on set 30 (H100, written with the prediction before
#       its run; docs/lab/cpu-2026-12-05-session38): on 16 runs of rows of
#       runs at unaligned starts, staged at least as fast as vector on 15,
#       geomean 1.26x, lowest 0.975; on rows that are whole aligned 16-byte
#       packs (vector's best case) at least 0.95x vector on 5 of 6 (dense
#       4x4 blocks in float64: 0.91). Re-run stale records agree (sets 22-23:
#       1.07-1.91x; block-sparse at 40M 1.01-1.07x). Over an x of at most
#       staged_x_bytes the class stays medium: block-sparse@10M in float32
#       (1 MB of x) ran vector 1.18x staged in the same run. On an H200
#       (session 39) set 30 gave 16 of 16, geomean 1.27x, and 6 of 6
#   "medium": the rest, regular rows of medium length
# An empty matrix takes "scalar" (it only writes y). The kernel of each class
# is the fastest measured on it (BENCHMARKS.md); change AUTO_RULE, one place.
AUTO_RULE = {"wide": "blocked", "long": "vector", "irregular-large": "staged", "huge": "adaptive2",
             "irregular-narrow": "vector",
             "irregular-mid": "staged",
             "irregular-short": "segmented", "irregular": "adaptive2", "short": "vector", "short-few-rows": "warp",
             "short-tiny": "scalar", "regular-large": "staged", "regular-large-packed": "segmented",
             "regular-large-l2": "segmented", "runs": "staged",
             "medium": "vector"}


def longest_row_steps(s: RowStats, pack: int) -> float:
    """The 16-byte steps in which vector's lanes (:func:`lanes_for`, columns not scattered) read
    the longest row: a warp of short rows waits for its longest."""
    return s.max / (lanes_for(s.mean, pack, s.n_rows) * pack)


Lazy = Callable[[], float]  # a statistic of A, computed when the rule first asks for it


def matrix_class(s: RowStats, pack: int, near: Lazy, t: AutoThresholds = AUTO, x_bytes: float = math.inf, *,
                 span: Lazy | None = None, lines: Lazy | None = None, blocks: int = 1,
                 gain: Lazy | None = None) -> str:
    """The auto rule's class of a matrix: "empty" or a key of :data:`AUTO_RULE`. ``pack``: the
    entries of a 16-byte pack of its values and indices (:func:`pack_entries`); ``near()``: its
    :func:`~spla.planning.stats.near_share`, asked only of an irregular matrix of mid size or a
    large regular one over a large x (the sample costs a few small copies from the GPU);
    ``x_bytes``: the size of x (columns times the value size); ``span()``: its
    :func:`~spla.planning.stats.tile_span`, asked only of a large regular matrix of packed rows
    (None: not known, as in a benchmark record without it; the packed rows then stay packed);
    ``lines()``: its :func:`~spla.planning.stats.tile_lines`, asked as ``span()`` is (None: the
    same); ``blocks``: its column blocks (:func:`spla.planning.blocked.n_blocks`; 1, the default,
    never blocks, as for a benchmark record that predates them) and ``gain()`` blocked's predicted
    speed over staged's (:func:`spla.planning.blocked.predicted_gain`; asked only of a matrix of
    several blocks over a large x; None: never blocks)."""
    if s.nnz == 0 or s.n_rows == 0:
        return "empty"
    if blocks > 1 and x_bytes >= t.blocked_x_bytes and gain is not None and gain() >= t.blocked_gain:
        return "wide"
    if s.mean >= t.long_mean and s.cv <= t.irregular_cv and s.max <= t.huge_row and s.n_rows >= t.long_rows:
        return "long"
    if s.max > t.huge_row:
        return "irregular-large" if s.nnz >= t.large_nnz and s.max < t.huge_share * s.nnz else "huge"
    if s.max > t.long_row or (s.cv > t.irregular_cv and (s.max > t.short_max or s.nnz >= t.large_nnz)):
        bitmap = (t.bitmap_rows and s.empty == 0 and s.mean <= t.segmented_mean
                  and (pack >= 4 or s.nnz < t.large_nnz))
        if s.nnz >= t.large_nnz:
            return "irregular-short" if bitmap else "irregular-large"
        if longest_row_steps(s, pack) <= t.narrow_steps:
            return "irregular-narrow"
        if not bitmap and s.nnz >= t.mid_nnz and s.mean <= t.mid_mean and near() < t.mid_near:
            return "irregular-mid"
        if s.mean <= t.segmented_mean:
            return "irregular-short"
        return "irregular"
    gate = t.local_near if s.mean <= segmented.STAGED_THREAD_ROW else t.regular_near
    if s.nnz >= t.large_nnz and x_bytes > t.cached_x_bytes and near() < gate:
        if x_bytes <= t.staged_x_bytes:
            return "regular-large-l2"
        packed = (pack >= 4 and s.mean >= t.packed_mean and near() < t.packed_near
                  and (span is None or span() > t.packed_span)
                  and (lines is None or lines() < t.packed_lines))
        return "regular-large-packed" if packed else "regular-large"
    short = s.mean <= t.short_mean and s.max <= t.short_max
    if (not short and s.nnz >= t.large_nnz and x_bytes > t.staged_x_bytes
            and s.mean <= segmented.STAGED_THREAD_ROW):
        return "runs"
    if short:
        if s.n_rows < t.short_rows:
            return "short-few-rows"
        return "short-tiny" if s.mean <= t.tiny_mean and s.max <= t.tiny_max else "short"
    return "medium"


#: Classes of regular rows in which auto looks for the structures of :data:`STRUCTURES`.
STRUCTURED_CLASSES = ("regular-large", "regular-large-packed", "regular-large-l2", "runs", "short", "short-tiny",
                      "short-few-rows", "medium")


def rule_choice(stats: RowStats, pack: int, near: Lazy, has_structure: Callable[[str], bool],
                t: AutoThresholds = AUTO, x_bytes: float = math.inf, *, span: Lazy | None = None,
                lines: Lazy | None = None, blocks: int = 1, gain: Lazy | None = None) -> str:
    """The rule's kernel for a matrix of these row statistics: the class's kernel, or the first
    structured one (:data:`STRUCTURES`: ``dia``, ``band``, ``rle``) that auto considers for a regular
    matrix of them and that ``has_structure(name)`` confirms (asked only then: detection may
    cost a pass over the matrix). :func:`rule_kernel` answers it by detection on A,
    ``scripts/fit_auto.py`` from what a benchmark record timed."""
    klass = matrix_class(stats, pack, near, t, x_bytes, span=span, lines=lines, blocks=blocks, gain=gain)
    if klass == "empty":
        return "scalar"
    if klass in STRUCTURED_CLASSES:
        for name, module in STRUCTURES.items():
            if module.auto_considers(stats) and has_structure(name):
                return name
    return AUTO_RULE[klass]


def x_bytes_of(A) -> int:
    """The bytes of the x that A multiplies (the rule's ``x_bytes``)."""
    return A.n_cols * A.dtype.itemsize


def _rule_inputs(A) -> tuple[int, Lazy, dict]:
    """What the rule reads of A besides its row statistics: the entries of a 16-byte pack, the
    near share, and :func:`matrix_class`'s keywords (the bytes of x, the sampled tiles' span and
    lines, the column blocks and blocked's predicted gain). The near share, the tiles and the gain
    are asked lazily: each reads a sample of A (the gain also one pass over its indices), and only
    counts leave the GPU."""
    return (pack_entries(A.dtype, A.index_dtype), lambda: near_share(A),
            {"x_bytes": x_bytes_of(A), "span": lambda: tile_span(A), "lines": lambda: tile_lines(A),
             "blocks": blocked.n_blocks(A.n_cols), "gain": lambda: blocked.predicted_gain(A)})


def rule_kernel(A) -> str:
    """The kernel the rule picks for A from its row statistics (ignores tuning): the class's kernel,
    or a structured one (``dia``, ``band``, ``rle``) for a large regular matrix that has its structure."""
    stats = row_stats(A)
    pack, near, inputs = _rule_inputs(A)
    return rule_choice(stats, pack, near, lambda name: STRUCTURES[name].applies(A, stats), **inputs)


# Where a matrix keeps what auto runs on it (choose_kernel reads it; spla.planning.tune sets it
# from a measurement), why (AUTO_SOURCE_KEY: "measured" or "cached"; absent: the rule's), the
# launchers spla.spmv bound for it (BOUND_KEY: {kernel: launcher}, spla.ops.spmv) and those
# spla.spmm bound (SPMM_BOUND_KEY: {(kernel, X's shape): launcher}, spla.ops.spmm; auto's SpMM
# at k = 1 runs auto's SpMV choice, so a new choice drops them).
AUTO_CHOICE_KEY = "spmv-auto"
AUTO_SOURCE_KEY = "spmv-auto-source"
BOUND_KEY = "spmv-bound"
SPMM_BOUND_KEY = "spmm-bound"


def choose_kernel(A) -> str:
    """The kernel ``auto`` runs for A (a name from :data:`KERNELS`): the tuned
    choice when A has been tuned (``spla.tune``, or a hit in the tuning cache),
    else the rule's; cached on A."""
    choice = A._cache.get(AUTO_CHOICE_KEY)
    if choice is None:
        choice = A._cache[AUTO_CHOICE_KEY] = rule_kernel(A)
    return choice


def describe_choice(A) -> dict:
    """What auto picks for A and why: for ``spla info`` and benchmark reports.

    ``source`` says why: ``"rule"`` (the row statistics), ``"measured"``
    (``spla.tune`` timed it in this process) or ``"cached"`` (an earlier
    tuning of this matrix on this GPU, from the tuning cache); ``rule`` is
    what the rule alone would pick.
    """
    s = row_stats(A)
    name = choose_kernel(A)
    family, param = parse_kernel(name)
    pack, near, inputs = _rule_inputs(A)
    info = {"kernel": name, "class": matrix_class(s, pack, near, **inputs),
            "mean_row": s.mean, "max_row": s.max, "cv": s.cv, "source": A._cache.get(AUTO_SOURCE_KEY, "rule"),
            "rule": rule_kernel(A)}
    if NEAR_SHARE_KEY in A._cache:  # the rule read it (mid-size irregular, large regular rows), or a launcher did
        info["near_share"] = A._cache[NEAR_SHARE_KEY]
    if TILE_SPAN_KEY in A._cache:  # the rule read them (large packed rows)
        info["tile_span"], info["tile_lines"] = A._cache[TILE_SPAN_KEY], A._cache[TILE_LINES_KEY]
    if family in ("segmented", "staged", "blocked"):
        info["entries"] = bound_param(A, family, param)  # K a lane, T a thread
    if family == "blocked":
        info["blocks"] = blocked.n_blocks(A.n_cols)
        info["block_columns"] = blocked.block_width(A.n_cols)
        info["predicted_gain"] = blocked.predicted_gain(A)
    if family in LANE_FAMILIES:
        info["lanes"] = bound_param(A, family, param)
        if family not in VALUE_LANE_FAMILIES:
            info["near_share"] = near_share(A)
            info["scattered"] = scattered_columns(A)  # one step a row
    found = STRUCTURES[family].structure(A) if family in STRUCTURES else None
    if found is not None and not isinstance(found, Refusal):
        info["structure"] = STRUCTURES[family].describe(found)
        if isinstance(found, dia.Structure):
            info["diagonals"] = found.n_diagonals
            info["rows_a_thread"] = bound_param(A, family, param)
            coded = dia.palette(A, found) if A.on_gpu else None  # (the launcher's choice: a GPU matrix's)
            if coded is not None:
                info["structure"] += f", a byte a slot for its {coded.n_values} distinct values"
        if family in VALUE_LANE_FAMILIES and banks.rotates(A, family, info["lanes"]):
            info["structure"] += ", value loads rotated (its rows start on one L1 bank)"
    return info


def scattered_columns(A) -> bool:
    """Whether warp and vector read A's rows in one step: neighbouring columns rarely close, over
    an x too large for L1 (SCATTERED_NEAR, SCATTERED_MIN_X_BYTES)."""
    return A.n_cols * np.dtype(A.dtype).itemsize > SCATTERED_MIN_X_BYTES and near_share(A) < SCATTERED_NEAR


def bound_param(A, family: str, param: int | None) -> int | None:
    """The template parameter ``family`` runs with on A: the lanes of warp/vector,
    the entries per lane of segmented, dia's rows a thread (defaults filled in), else ``param``."""
    if family == "segmented":
        return param or segmented.segmented_default(A.dtype)
    if family in ("staged", "blocked"):
        return param or segmented.staged_default(A.dtype, A.nnz)
    if family == "dia" and param is None:
        found = dia.structure(A)  # cached; a refusal is raised by plan_spmv
        return dia.rows_for(found.n_diagonals, A.dtype, A.n_rows) if isinstance(found, dia.Structure) else None
    if family == "cusparse":
        return param or 1
    if family in LANE_FAMILIES:
        if param is not None:
            return param
        stats = row_stats(A)
        if family in VALUE_LANE_FAMILIES:
            value_lanes = rle_lanes if family == "rle" else band_lanes
            return value_lanes(stats.mean, np.dtype(A.dtype).itemsize)
        step = pack_entries(A.dtype, A.index_dtype) if family == "vector" else 1
        lanes = lanes_for(stats.mean, step, stats.n_rows, scattered=scattered_columns(A))
        if family == "vector" and vector_widens(lanes, stats.mean, step, lambda: near_share(A)):
            return 4
        return lanes
    return param


# ------------------------------------------------------------------- plans
@dataclass(frozen=True, eq=False)
class SpmvPlan:
    """Everything the CUDA backend needs to launch one SpMV kernel on one matrix.

    ``family`` is a name from :data:`KERNELS` other than ``auto``; ``param`` the
    template parameter (lanes or K) or None; ``adaptive`` the row plan of the
    adaptive families; ``tile_rows`` segmented's tile ownership and, for a matrix
    without empty rows, ``end_bits`` its row ends (:func:`~.segmented.segmented_end_bits`),
    with ``rows_within_tile`` where no row is longer than a tile (none touches three tiles);
    ``structure`` the arrays of a structured kernel (:data:`STRUCTURES`); blocked's ``regrouped``
    (A regrouped by column blocks, :func:`spla.planning.blocked.regrouped`) and ``inner`` (the
    staged plan on its matrix).
    """

    kernel: str  # the name the caller asked for ("auto", "warp", ...)
    family: str
    param: int | None = None
    adaptive: adaptive.Plan | None = None
    tile_rows: np.ndarray | None = None
    empty_rows: bool = False
    end_bits: np.ndarray | None = None
    rows_within_tile: bool = False
    structure: dia.Structure | band.Structure | rle.Structure | None = None
    regrouped: blocked.Regrouped | None = None
    inner: SpmvPlan | None = None


def plan_spmv(A, kernel: str = "auto", row_plan: adaptive.Plan | None = None) -> SpmvPlan:
    """The plan of ``kernel`` on A (``row_plan`` overrides the adaptive default).

    Raises :class:`KernelError` for unknown names and for configurations that
    cannot run (segmented:16 on float64, a row plan built for another matrix).
    """
    family, param = parse_kernel(kernel)
    if family in ("auto", "tune"):  # "tune" measures first (spla.ops.spmv.bind), then runs the choice
        family, param = parse_kernel(choose_kernel(A))
    if row_plan is not None and family not in ("adaptive", "adaptive2"):
        raise KernelError(f"a row plan only applies to adaptive and adaptive2, not {family}")
    param = bound_param(A, family, param)
    if family in ("adaptive", "adaptive2"):
        if row_plan is None:
            row_plan = adaptive.plan_for(A) if family == "adaptive" else adaptive.plan2_for(A)
        if row_plan.shape != tuple(A.shape) or row_plan.nnz != A.nnz:
            raise KernelError(f"the plan was built for a {row_plan.shape} matrix with {row_plan.nnz} nonzeros, "
                              f"not this {tuple(A.shape)} one with {A.nnz}")
        if family == "adaptive" and row_plan.thresholds.warp_max:
            raise KernelError("this plan has a rows path (warp_max > 0): run it with kernel='adaptive2'")
        return SpmvPlan(kernel, family, None, adaptive=row_plan)
    if family == "segmented" and param not in segmented.segmented_entries(A.dtype):
        raise KernelError(f"segmented:{param} runs on float32 only: {param} {A.dtype} values a lane take more "
                          f"registers than a thread gets; use segmented:{segmented.segmented_default(A.dtype)}")
    if family in ("segmented", "staged"):
        assert param is not None
        tile = 32 * param if family == "segmented" else segmented.STAGED_THREADS * param
        tile_rows = segmented.segmented_tile_rows(A, tile)
        if A.n_rows and int(np.diff(tile_rows).max()) >= 2**31 - 1:  # the kernels list rows by int offsets
            raise KernelError(f"a {family} tile owns 2^31 or more (empty) rows; use kernel='adaptive2'")
        stats = row_stats(A)
        end_bits = segmented.segmented_end_bits(A, tile) if family == "segmented" and not stats.empty else None
        return SpmvPlan(kernel, family, param, tile_rows=tile_rows, empty_rows=stats.empty > 0, end_bits=end_bits,
                        rows_within_tile=end_bits is not None and stats.max <= tile)
    if family == "blocked":
        try:
            found = blocked.regrouped(A)
            return SpmvPlan(kernel, family, param, regrouped=found, inner=plan_spmv(found.matrix, f"staged:{param}"))
        except MemoryError as error:  # CuPy's OutOfMemoryError is one: the copy of A or its plan did not fit
            return staged_instead(A, kernel, param, error)
    if family in STRUCTURES:
        found = STRUCTURES[family].structure(A)
        if isinstance(found, Refusal):
            raise KernelError(f"kernel={family!r} needs {STRUCTURES[family].NEEDS}; this one: {found.reason}")
        if family == "dia" and param not in dia.rows_choices(A.dtype):
            raise KernelError(f"dia:{param} runs on float32 only: {param} {A.dtype} values are more than one "
                              f"16-byte load; use one of {', '.join(f'dia:{r}' for r in dia.rows_choices(A.dtype))}")
        return SpmvPlan(kernel, family, param, structure=found)
    return SpmvPlan(kernel, family, param)


def staged_instead(A, kernel: str, param: int | None, error: MemoryError) -> SpmvPlan:
    """Where blocked's copy of A, its plan or (binding) its partials did not fit beside A: the copy
    dropped from A's cache, then staged with the same entries a thread where auto or tune chose
    blocked (its choice without the copy), or ``error`` raised for a kernel asked for by name."""
    A._cache.pop(blocked.REGROUPED_KEY, None)
    if kernel not in ("auto", "tune"):
        raise error
    return replace(plan_spmv(A, f"staged:{param}"), kernel=kernel)
