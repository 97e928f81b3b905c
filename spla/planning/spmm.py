"""SpMM planning: ``Y = alpha * A @ X + beta * Y`` for a dense block X of k columns.

Host-only NumPy: the ``auto`` rule, the launch shapes of each kernel, the
hybrid (multi-launch) and fused (one-launch) schedules, and the engine of each
dense panel. :func:`plan_spmm` returns an immutable :class:`SpmmPlan`;
:func:`spla.backends.cuda.spmm.bind` uploads it and returns a launcher.

Kernels (``KERNELS``; each also works through ``spla.spmm(..., kernel=)``):

``regk``
    kernels/spmm_regk.cu. k <= 16: a group of SUB lanes (1, 2, 4, 8, from the
    mean row length) per row keeps all k output columns in registers. Reads A
    once; takes row-major and column-major X as they are. By name only:
    ``auto`` runs ``subwarp`` on short rows (:data:`SHORT_ROWS`).
``warp``
    kernels/spmm_warp.cu. One warp per row: (col, val) loaded once per chunk
    of 32 and broadcast by shuffles while the lanes stream X's rows with
    vector loads. Any k (wider k is split into column tiles over gridDim.y).
``subwarp``
    kernels/spmm_subwarp.cu. Short rows: a group of lanes spanning k takes
    one row, 32/group rows per warp, no shuffles. Any k.
``adaptive``
    The SpMV row plan's bins, each cut into length classes run by the kernel
    shape that suits them at this k (rows up to 64 nonzeros: ``regk`` for
    k <= 16, else ``subwarp``; longer rows: ``warp``); rows longer than
    ``SEGMENT_NNZ`` are cut into segments of that many nonzeros, one warp
    each (atomicAdd into Y); the plan's dense panels are gathered once into
    dense blocks and multiplied through the GEMM core (:func:`dense_gemm_kernel`).
``fused``
    kernels/spmm_fused.cu: the whole adaptive schedule as ONE launch: each
    length class (lanes per row 1..32, about 8 nonzeros per lane) and the
    segments of long rows (:func:`fused_segment_nnz`: 256 nonzeros under
    2^22 nonzeros, else 1,024) are block ranges of one grid, longest work first,
    so their tails overlap instead of adding up (plus a tiny init of the
    segmented rows, and the dense panels). For k <= 16 each lane holds all k
    columns (the 32-lane classes spread them, :data:`FUSED_SLICED`); past 16
    every class spreads k over its lanes, a 16-byte vector a lane
    (:func:`fused_wide_lanes`: k a multiple of the vector, up to 128 columns
    in float32 and 64 in float64; else ``adaptive`` runs).
``dia``
    kernels/spmm_dia.cu. A's diagonals (:mod:`spla.planning.dia`, found once
    and cached on A, as for the SpMV): no indices, a byte a slot through a
    palette where dia's SpMV reads one; a thread a row and 16 bytes of X's
    columns. Refused (KernelError) where A's entries are not on a few diagonals.
``spmv-loop``
    k separate ``auto`` SpMVs, one per column: what a user without SpMM pays.
``cusparse``
    cuSPARSE SpMM (row-major X and Y) with descriptors and buffer built once
    per matrix and k: the kernel-level anchor.
``cusparse-cupy``
    ``cupyx.scipy.sparse.csr_matrix @ X``: cuSPARSE as a CuPy user calls it.
``auto``
    :func:`choose_kernel`: the kernel ``spla.tune(A, k=k)`` measured fastest
    on A at this k where A has been tuned (or the tuning cache holds it),
    else the rule (:func:`rule_kernel`): k == 1 -> ``spmv-loop``; where A's
    entries lie on a few diagonals, A has at least :data:`DIA_ROWS_PER_MEAN` (250) rows for each
    nonzero of its mean row and k <= ``DIA_MAX_K`` (16) -> ``dia`` (``regk`` there at k <= 4 on
    rows of a mean of 20 or more, up to 20,000 rows); a longest row over
    ``SEGMENT_NNZ`` nonzeros or over ``8 * mean + 64`` (skewed rows) ->
    ``fused`` (past k = 16 where its wide kernel takes k, else ``adaptive``);
    else a mean row length <= 64 and at least :data:`SUBWARP_MIN_THREADS`
    threads of subwarp -> ``subwarp`` (:data:`SHORT_ROWS`); fewer threads, k <=
    :data:`REGK_SMALL_K` (4), at least :data:`REGK_MIN_ROWS` rows and no row over 64 ->
    ``regk``; else ``warp``. See BENCHMARKS.md for the measurements behind each threshold.

``fused:N`` is fused with segments of N nonzeros (:data:`SEGMENT_CHOICES`),
a tuning candidate. Baseline variants (the hybrid schedules without their dense panels, fused
with 16 nonzeros per lane) are options of :func:`plan_spmm`, named in
:mod:`spla.bench.variants`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..errors import KernelError
from . import ceil_div, dia
from . import gemm as gemm_planning
from .adaptive import DensePanel, plan_for
from .stats import host_indptr, row_stats

BLOCK = 256  # threads per block for every SpMM launch: 8 warps
assert BLOCK % 32 == 0, "sub-warp groups and warps must not straddle blocks"

REGK_K = (1, 2, 4, 8, 16)      # columns held in registers by spla_spmm_regk
REGK_MAX_K = REGK_K[-1]
REGK_SUB = (1, 2, 4, 8)        # lanes per row in spla_spmm_regk
WARP_CL = (1, 2, 4, 8, 16, 32)  # lanes along k in spla_spmm_warp
WARP_J_WIDE = (2, 4)            # vectors per lane once CL == 32
MAX_GRID_Y = 65535
MAX_GRID_X = 2**31 - 1

# Rows longer than this are cut into segments of this many nonzeros, one warp
# each: a warp walks a row chunk by chunk (32 entries, one dependent load each),
# so one very long row on one warp would finish long after the rest of the matrix.
SEGMENT_NNZ = 1024
# On matrices of fewer than SHORT_SEGMENTS_MAX_NNZ nonzeros fused's default segments are
# SHORT_SEGMENT_NNZ long (fused_segment_nnz): there a long row cut in 1,024s gives too few warps to fill
# the GPU. Measured (session 64, H100: the SpMM tuner's timings of fused and fused:256 wherever auto ran
# fused, docs/lab/gpu-2026-12-07-session64/segments.py): fitted on the real matrices' fit half, the corpus
# at 100K and the corpus's fit half at 4M (the cut of 2^19-2^22 with most runs within 5% of the faster
# length: 2^22, 78 of 90 against 1,024's 20), reported on the real report half (16 of 24 against 10), the
# corpus at 300K (42 of 44 against 2), set 68 at 200K and 600K (84 of 88 against 7) and the corpus's
# report half at 4M (30 of 36 against 20); at 8M (session 63's runs) 1,024 stays, where 256 loses on
# short-wide rows (to 0.61x).
SHORT_SEGMENT_NNZ = 256
SHORT_SEGMENTS_MAX_NNZ = 2**22
# ``fused:N`` pins fused's segments at N nonzeros (rows longer than N cut into them): the length that
# wins is per matrix past the size rule above (session 63: at 8M nonzeros 256 gains up to 1.69x on
# float64 k = 64 power laws and loses 0.51x on short-wide rows), which spla.tune(A, k=...) measures.
SEGMENT_CHOICES = (128, 256, 512, 1024, 2048)

WARP_VECTOR = {np.dtype(np.float32): 4, np.dtype(np.float64): 2}  # 16-byte loads

# Length classes that refine each row-plan bin for SpMM: the "stream" bin spans
# rows of 0..256 nonzeros, and a thread per row is right for the short end but
# leaves a warp waiting on its longest row at the long end. A class of rows up
# to L nonzeros runs regk with L / 8 lanes per row (k <= 16) or subwarp
# (k > 16); longer rows run the warp kernel.
LENGTH_CLASSES = tuple(8 * sub for sub in REGK_SUB)  # 8, 16, 32, 64

# The fused kernel (kernels/spmm_fused.cu): a row of L nonzeros gets the fewest
# lanes SUB (1..32) with L <= nnz_per_lane * SUB; rows over SEGMENT_NNZ are cut
# into segments of 32 lanes each (atomicAdd into rows spla_spmm_init_rows has
# set to beta * Y or 0 just before).
FUSED_SUBS = (1, 2, 4, 8, 16, 32)
FUSED_KIND_SEGMENT = -32   # kernels/spmm_fused.cu: SPLA_FUSED_KIND_SEGMENT
FUSED_NNZ_PER_LANE = 8
FUSED_LAUNCH_ORDER = (FUSED_KIND_SEGMENT, 32, 16, 8, 4, 2, 1)  # longest work is dispatched first
# The fused classes of 32 lanes a row (rows over 128 nonzeros, and segments) spread k over their
# lanes (a vector of X's row each, several rows of X a load) rather than holding all k columns in
# every lane (kernels/spmm_common.cuh, slice_sums). Vector loads only.
FUSED_SLICED = True
# Past k = 16 fused runs spla_spmm_fused_wide: every class spreads k over its lanes, one 16-byte vector
# a lane, so a warp holds K = 32 vectors' worth of columns at most (128 in float32, 64 in float64); k
# must be a multiple of the vector (else, or wider, fused runs adaptive).
FUSED_WIDE_LANES = 32

# The dense panels' GEMM: spla's GEMM core gives each 128 x 128 tile of the
# product to one block and walks all of K in it, so a panel of R rows times
# X (k columns) has only ceil(R/128) * ceil(k/128) tiles over a long K. When
# the GEMM ``auto`` rule picks a split-K kernel for the panel's shape the
# panel takes it; else ``dbuf`` when its tiles cover every SM, else cuBLAS.
GEMM_CORE_TILE = 128
PANEL_ALIGN = 4  # panel column spans are widened to this many columns (float4 loads, no per-call pad)

KERNELS = ("regk", "warp", "subwarp", "adaptive", "fused", "dia", "spmv-loop", "cusparse", "cusparse-cupy", "auto")
# What a measurement chose for auto on a matrix, per k: {k: (kernel, source)}, source "measured"
# (spla.tune(A, k=...) in this process) or "cached" (the tuning cache). choose_kernel reads it.
TUNED_KEY = "spmm-tuned"
CPU_KERNELS = ("auto", "scipy")
SMALL_K_ONLY = ("regk",)  # refuse k > REGK_MAX_K
OWN_MATRICES_ONLY = ("dia",)  # refuse matrices without their structure
# auto runs dia up to this k where A's entries lie on a few diagonals (spla.planning.dia.applies) and A has
# at least DIA_ROWS_PER_MEAN rows a nonzero of its mean row. Measured (session 56, H100,
# docs/lab/gpu-2026-12-06-session56: spmm_k.py at k = 2..32, both dtypes): over regk, auto's pick there
# then, dia ran 1.13-2.62x at k = 4..16 on all 36 runs of six stencils and bands (three of them fitted,
# three reported). With its loads batched (session 57, call 3): over subwarp 1.13-7.5x at k = 2..8,
# 0.91-1.24x at k = 16 (ahead on 7 of 12 runs), 0.77-1.12x at k = 32 (ahead on the 2-D Poisson pair only).
DIA_MAX_K = 16
# Until session 65 auto ran dia where auto's SpMV did, which it does not on small stencils and bands: the SpMV's
# rule looks for diagonals from dia.AUTO_MIN_ROWS (41,000) rows, its own floor for the same reason (a thread a
# row), lower here since an SpMM row carries k columns of work. A thread a row walks every diagonal, so the rows
# dia needs to fill the GPU grow with the row length: the fixed floors before (4,500 rows in session 65, 6,000 in
# session 66; BENCHMARKS.md) kept short-row stencils off dia under them (dia ahead from 2,809 rows at 5-9 a row)
# and put wide bands on it above them (warp ahead at 21-33 a row). Fitted (session 66, H100,
# docs/lab/gpu-2026-12-07-session66/dia_floor.py over all 462 dia runs of sets 64-72, k = 2-16): from 250 rows a
# nonzero of the mean row, 458 runs within 15% of the best (6,000 rows 443, 4,500 rows 433). Checked (session 67)
# on fresh set 73, the six diagonal families at 6K-400K nonzeros and bands of 3-25 a row at 1,500-12,000 rows:
# 454 of 461 (6,000 rows 431). Where the two floors differ, dia was within 15% on all 72 runs of the short-row
# stencils and bands under 6,000 rows, warp or regk on 15 of the 16 wide-band runs kept off dia. The seven misses
# are banded-fixed (33 a row) at k = 2-8 from 6,970 rows, where regk ran 1.20-1.27x faster than the pick.
DIA_ROWS_PER_MEAN = 250
# ... except where dia's thread a row walks long rows at few columns: at k <= REGK_SMALL_K, on rows of a mean of at
# least DIA_REGK_MIN_MEAN nonzeros and at most DIA_REGK_MAX_ROWS rows, regk's 4-8 lanes a row split each row's walk
# where dia's rows are too few to hide it (dia's matrices have at most dia.MAX_DIAGONALS = 64 nonzeros a row, within
# regk's longest class). Fitted (session 67, docs/lab/gpu-2026-12-07-session67/long_bands.py over all 1,315 dia runs
# of sets 64-74): 1,298 -> 1,311 within 15% of the best. Checked (session 68, H100,
# docs/lab/gpu-2026-12-07-session68/fresh_bands.py) on fresh sets 75 and 76, bands of 21-49 a row at 6,000-30,000
# rows, k = 2-16: on the 60 runs it moves regk was within 15% on all 60, dia on 38; over the sets' 256 runs 243
# (without it 221). Past DIA_REGK_MAX_ROWS dia was within 15% on 39 of 44 runs at k <= 4.
DIA_REGK_MIN_MEAN = 20
DIA_REGK_MAX_ROWS = 20000
# auto's kernel for rows of mean length up to LENGTH_CLASSES[-1] and no long ones, at every k. It was
# regk up to k = 16; measured (session 57, H100, docs/lab/gpu-2026-12-06-session57: regk_cut.py at
# k = 8, 12, 16, both dtypes, on six matrices of 3-40 nonzeros a row, three fitted and three reported)
# subwarp ran within 15% of the best kernel on 16 of 18 fitted runs and 17 of 18 reported (geomean
# 1.030x / 1.014x the best's time), regk on 2 and 4 (1.511x / 1.376x): regk at k = 12 pays for 16
# registers' columns, and at k = 16 in float64 holds 16 doubles a thread. auto re-timed with the rule
# (call 3): 16 and 17 of 18. A column-major X is copied to row-major for subwarp; that took 0.09-1.05x
# the time of regk reading it as it is (f_order.py, call 3).
SHORT_ROWS = "subwarp"
# ... where it runs at least this many threads (n_rows x its lanes a row, subwarp_threads); on fewer
# rows warp, whose 32 lanes a row shorten the walk along each row that subwarp's few groups make alone.
# Measured (session 64, H100, docs/lab/gpu-2026-12-07-session64: the SpMM tuner's timings of every
# candidate at k = 8 and 32, both dtypes): on the 53 real matrices of ../shared/matrices (up to 0.4M
# nonzeros) subwarp was within 15% of the best candidate on 77 of the 168 runs it got; a cut of 2^17
# threads, fitted on half of them (81 of 88), failed on the corpus at 300K nonzeros (42 of 64 against
# the old rule's 50), so the cut was refitted on the real fit half and the corpus at 100K and 300K
# together: 2^16 (181 of 220 runs within 15%, the old rule 119; the real report half 71 of 80, was 48)
# and checked on fresh set 68 (call 6). Matrices of 4M nonzeros and up lie above it.
SUBWARP_MIN_THREADS = 2**16
# ... and on fewer, regk up to this k where A has at least REGK_MIN_ROWS rows and no row is longer than
# LENGTH_CLASSES[-1] (regk's lanes a row follow the mean, so one long row holds up its warp). At k <= 4 a row of X
# is one or two 16-byte vectors: subwarp's group is one or two lanes a row, too few threads here, and warp's 32
# lanes walk each row with most of them idle on rows this short, where regk's 1-8 lanes a row hold X's columns
# in registers. Measured (session 66, H100, docs/lab/gpu-2026-12-07-session66/fit_short.py over the tuner's
# timings of every candidate): fitted on set 69 at k = 4 (35 runs under the thread cut with no row over 64: warp
# within 15% of the best on 14, regk on 33; regk to k = 8 lost 40 of session 64's runs at k = 8 on balance, 42
# of its misses under 6,000 rows) and checked on call 1's grids and fresh sets 70-71 at k = 2-4, none of them
# fitted: on the 243 runs it moved, regk was within 15% of the best on 192, warp on 149.
REGK_SMALL_K = 4
# Call 1 also showed where regk loses: from 6,000 rows it was within 15% on 150 of those runs' 155 (warp 67), under
# them on 42 of 88 (warp 82; stencils and bands of 1,000-5,832 rows lost most). The crossing is where dia's floor
# was then (6,000 rows), measured apart: kernels of a few lanes a row need rows to fill the GPU. Checked on fresh set 72
# (call 3, k = 2 and 4): warp within 15% of the best on all 36 runs it keeps under the floor (regk 18), regk on 32
# of 37 from it; over the set's 210 runs the rule 186, without the floor 168, session 65's rule 162.
REGK_MIN_ROWS = 6000


# ---------------------------------------------------------------- row statistics
def _row_stats(A) -> tuple:
    """(mean, max) row length of A (from the one cached :func:`~spla.planning.stats.row_stats`)."""
    stats = row_stats(A)
    return stats.mean, stats.max


# ---------------------------------------------------------------- kernel shapes
def next_pow2(n: int) -> int:
    return 1 << max(0, int(n) - 1).bit_length()


def regk_sub(mean_row_length: float) -> int:
    """Lanes per row for spla_spmm_regk: about one nonzero per lane per 8 entries."""
    for sub in REGK_SUB:
        if mean_row_length <= 8 * sub:
            return sub
    return REGK_SUB[-1]


def regk_vector_width(itemsize: int, k_reg: int) -> int:
    """Mirror of RowVector<T, K>::width in kernels/spmm_common.cuh (elements)."""
    row_bytes = k_reg * itemsize
    if row_bytes % 16 == 0:
        return 16 // itemsize
    if row_bytes % 8 == 0:
        return 8 // itemsize
    return 1


def warp_configs() -> list:
    """Every (CL, J) spla_spmm_warp and spla_spmm_subwarp are instantiated for."""
    return [(cl, 1) for cl in WARP_CL] + [(32, j) for j in WARP_J_WIDE]


def warp_shape(k: int, vec: int):
    """(CL, J, column tiles) for spla_spmm_warp: fewest lanes along k that cover it."""
    per_lane_vectors = ceil_div(k, vec)
    if per_lane_vectors <= 32:
        cl, j = next_pow2(per_lane_vectors), 1
    else:
        cl = 32
        j = WARP_J_WIDE[0] if per_lane_vectors <= 32 * WARP_J_WIDE[0] else WARP_J_WIDE[-1]
    tiles = ceil_div(k, cl * vec * j)
    if tiles > MAX_GRID_Y:
        raise KernelError(f"k={k} needs {tiles} column tiles, over CUDA's grid.y limit {MAX_GRID_Y}")
    return cl, j, tiles


def fused_wide_lanes(k: int, dtype) -> int | None:
    """Lanes a row of X takes in spla_spmm_fused_wide at this k (``K / W``, the smallest class), or None
    where fused runs adaptive (k <= 16 runs spla_spmm_fused; k not a multiple of a 16-byte vector; wider
    than a warp of vectors)."""
    vec = WARP_VECTOR[np.dtype(dtype)]
    if k <= REGK_MAX_K or k % vec or next_pow2(k) > FUSED_WIDE_LANES * vec:
        return None
    return next_pow2(k) // vec


def fused_segment_nnz(nnz: int) -> int:
    """Nonzeros of fused's long-row segments by default on a matrix of nnz nonzeros (``fused:N`` pins N)."""
    return SHORT_SEGMENT_NNZ if nnz < SHORT_SEGMENTS_MAX_NNZ else SEGMENT_NNZ


def fused_sub(length: int, nnz_per_lane: int = FUSED_NNZ_PER_LANE) -> int:
    """Lanes per row of this many nonzeros in the fused kernel (rows <= SEGMENT_NNZ)."""
    for sub in FUSED_SUBS:
        if length <= nnz_per_lane * sub:
            return sub
    return FUSED_SUBS[-1]


# ---------------------------------------------------------------- auto rule
def subwarp_threads(n_rows: int, k: int, dtype) -> int:
    """Threads spla_spmm_subwarp runs for n_rows rows at k columns: a group of CL lanes a row, CL the
    lanes that span k in 16-byte vectors (:func:`warp_shape`)."""
    return int(n_rows) * warp_shape(k, WARP_VECTOR[np.dtype(dtype)])[0]


def choose_from_stats(mean: float, longest: int, k: int, dtype=np.float32, n_rows: int | None = None) -> str:
    """The ``auto`` rule on row statistics (documented in the module docstring); ``n_rows`` None
    reads as a matrix large enough for subwarp."""
    if k == 1:
        return "spmv-loop"
    if longest > SEGMENT_NNZ or longest > 8 * mean + 64:
        return "fused" if k <= REGK_MAX_K or fused_wide_lanes(k, dtype) else "adaptive"
    if mean > LENGTH_CLASSES[-1]:
        return "warp"
    if n_rows is None or subwarp_threads(n_rows, k, dtype) >= SUBWARP_MIN_THREADS:
        return SHORT_ROWS
    if k <= REGK_SMALL_K and n_rows >= REGK_MIN_ROWS and longest <= LENGTH_CLASSES[-1]:
        return "regk"
    return "warp"


def parse_spmm_kernel(kernel: str) -> tuple[str, int | None]:
    """``"fused:256"`` -> ("fused", 256) (segments of 256 nonzeros); ``"warp"`` -> ("warp", None).
    Unknown names raise KernelError."""
    family, colon, param = str(kernel).partition(":")
    if family not in KERNELS or (colon and family != "fused"):
        raise KernelError(f"unknown SpMM kernel {kernel!r}; expected one of {', '.join(KERNELS)}, "
                          f"or fused:N (segments of N nonzeros, N one of {', '.join(map(str, SEGMENT_CHOICES))})")
    if not colon:
        return family, None
    if not param.isdigit() or int(param) not in SEGMENT_CHOICES:
        raise KernelError(f"{kernel!r}: fused:N takes N, the nonzeros of a long row's segments, one of "
                          f"{', '.join(map(str, SEGMENT_CHOICES))}")
    return family, int(param)


def rule_kernel(A, k: int) -> str:
    """The kernel ``auto``'s rule picks for A at k columns: ``dia`` for 2 <= k <= :data:`DIA_MAX_K`
    where A's entries lie on a few diagonals and A has at least :data:`DIA_ROWS_PER_MEAN` rows a nonzero
    of its mean row (whatever the SpMV runs), save ``regk`` there on long rows at few columns and rows
    (:data:`DIA_REGK_MIN_MEAN`, :data:`DIA_REGK_MAX_ROWS`); else :func:`choose_from_stats`."""
    mean, longest = _row_stats(A)
    if 1 < k <= DIA_MAX_K and A.n_rows >= DIA_ROWS_PER_MEAN * mean and dia.applies(A):
        few_long_rows = mean >= DIA_REGK_MIN_MEAN and A.n_rows <= DIA_REGK_MAX_ROWS
        return "regk" if k <= REGK_SMALL_K and few_long_rows else "dia"
    return choose_from_stats(mean, longest, k, A.dtype, A.n_rows)


def tuned_choice(A, k: int) -> tuple[str, str] | None:
    """(kernel, source) a measurement chose for ``auto`` on A at k columns, or None."""
    return A._cache.get(TUNED_KEY, {}).get(int(k))


def choose_kernel(A, k: int) -> str:
    """The kernel ``auto`` runs for A at k columns: the tuned choice at this k where A has one
    (``spla.tune(A, k=k)``, or a hit in the tuning cache), else :func:`rule_kernel`."""
    tuned = tuned_choice(A, k)
    return tuned[0] if tuned else rule_kernel(A, k)


def describe_choice(A, k: int) -> dict:
    """What ``auto`` runs for A at k columns (``kernel``), why (``source``: "rule", "measured" by
    ``spla.tune`` in this process, or "cached" from an earlier tuning) and the rule's own pick."""
    rule = rule_kernel(A, k)
    kernel, source = tuned_choice(A, k) or (rule, "rule")
    return {"kernel": kernel, "source": source, "rule": rule}


# ---------------------------------------------------------------- hybrid schedule
@dataclass(frozen=True)
class RowGroup:
    """Rows of one plan bin and length class that one launch handles."""

    name: str
    rows: np.ndarray   # host row ids, ascending
    nnz: int
    mean_length: float
    max_length: int

    def shape(self, k: int) -> str:
        """'regk', 'subwarp' or 'warp': the kernel shape for these rows at this k."""
        if self.max_length > LENGTH_CLASSES[-1]:
            return "warp"
        return "regk" if k <= REGK_MAX_K else "subwarp"

    def describe(self, k: int) -> str:
        shape = self.shape(k)
        if shape == "regk":
            return f"regk (K={next_pow2(k)}, {regk_sub(self.max_length)} lanes/row)"
        if shape == "subwarp":
            return "subwarp (lanes along k, several rows per warp)"
        return "warp (a warp per row)"


def widened_panel(panel, n_cols: int, align: int = PANEL_ALIGN) -> DensePanel:
    """A row-plan panel with its column span widened to a multiple of ``align`` (zeros, within the matrix),
    so that the GEMM core's float4 loads need no per-call padded copy."""
    width = ceil_div(panel.col_end - panel.col_begin, align) * align
    col_begin = panel.col_begin
    if width <= n_cols:
        col_begin = min(col_begin, n_cols - width)
    else:
        width = panel.col_end - panel.col_begin
    return DensePanel(np.asarray(panel.rows, dtype=np.int64), int(col_begin), int(col_begin + width), int(panel.nnz))


def panels_for(A) -> tuple:
    """The row plan's dense panels of A as :class:`DensePanel` (cached; shared by hybrid and fused)."""
    if "spmm-panel-specs" not in A._cache:
        A._cache["spmm-panel-specs"] = tuple(widened_panel(p, A.n_cols) for p in plan_for(A).dense_panels)
    return A._cache["spmm-panel-specs"]


def split_rows(lengths: np.ndarray, bins, dense_rows, *, long_row: int = SEGMENT_NNZ):
    """Partition every row exactly once into launch groups and long rows.

    ``bins`` are (name, host row ids) from the row plan; each is refined into
    the ``LENGTH_CLASSES`` (``"stream<=8"``, ...; ``"block>64"`` for longer).
    Rows longer than ``long_row`` go to the segmented path. ``dense_rows``
    (handled by the dense panels) are left out. A row the plan lists twice goes
    to the first place that claims it, and rows no bin names form the group
    "rest", so every output row is written exactly once.
    """
    assert long_row > LENGTH_CLASSES[-1], "length classes must lie below the segmented rows"
    n_rows = lengths.shape[0]
    claimed = np.zeros(n_rows, dtype=bool)
    claimed[np.asarray(dense_rows, dtype=np.int64)] = True
    groups, long_rows = [], []
    bounds = (-1,) + LENGTH_CLASSES + (long_row,)

    def take(name, rows):
        # sorted, unique and unclaimed through a mask: O(n rows), where np.unique sorts
        mask = np.zeros(n_rows, dtype=bool)
        mask[np.asarray(rows, dtype=np.int64)] = True
        rows = np.flatnonzero(mask & ~claimed)
        claimed[rows] = True
        lens = lengths[rows]
        long_rows.append(rows[lens > long_row])
        for lo, hi in zip(bounds[:-1], bounds[1:]):
            chosen = rows[(lens > lo) & (lens <= hi)]
            if chosen.size:
                label = f"{name}<={hi}" if hi in LENGTH_CLASSES else f"{name}>{lo}"
                cl = lengths[chosen]
                groups.append(RowGroup(label, chosen, int(cl.sum()), float(cl.mean()), int(cl.max())))

    for name, rows in bins:
        take(name, rows)
    take("rest", np.flatnonzero(~claimed))
    return groups, np.concatenate(long_rows)


def segment_ranges(indptr: np.ndarray, long_rows: np.ndarray, seg_nnz: int = SEGMENT_NNZ):
    """(row of each segment, begin, end): the long rows' nonzeros in seg_nnz pieces."""
    begins = indptr[long_rows].astype(np.int64)
    ends = indptr[long_rows + 1].astype(np.int64)
    counts = ceil_div(ends - begins, seg_nnz)
    seg_row = np.repeat(long_rows, counts)
    first = np.repeat(np.cumsum(counts) - counts, counts)
    within = np.arange(seg_row.size, dtype=np.int64) - first
    seg_begin = np.repeat(begins, counts) + within * seg_nnz
    seg_end = np.minimum(seg_begin + seg_nnz, np.repeat(ends, counts))
    return seg_row, seg_begin, seg_end


def _panel_lines(panels, engines) -> list:
    return [f"dense panel: {p.rows.size:,} rows x {p.width:,} columns [{p.col_begin}, {p.col_end}), "
            f"{p.nnz:,} nnz, density {p.density:.2f} -> GEMM {engine}" for p, engine in zip(panels, engines)]


@dataclass(frozen=True)
class HybridSchedule:
    """How ``adaptive`` runs one matrix at any k: launch groups, long-row segments, dense panels."""

    key: tuple
    groups: tuple                  # RowGroup
    long_rows: np.ndarray          # host ids of the rows cut into segments
    segments: tuple | None         # host (row ids, begin, end)
    panels: tuple                  # DensePanel, empty without a dense path

    @property
    def n_segments(self) -> int:
        return 0 if self.segments is None else int(self.segments[0].size)

    @property
    def dense_rows(self) -> int:
        return int(sum(p.rows.size for p in self.panels))

    def summary(self, k: int, engines=()) -> list:
        """One line per launch group, for ``spla spmm`` and the benchmark."""
        lines = [f"{g.name}: {g.rows.size:,} rows, {g.nnz:,} nnz (mean {g.mean_length:.1f}, "
                 f"max {g.max_length}) -> {g.describe(k)}" for g in self.groups]
        if self.long_rows.size:
            lines.append(f"long rows: {self.long_rows.size:,} rows over {SEGMENT_NNZ} nnz -> "
                         f"{self.n_segments:,} warp segments of {SEGMENT_NNZ} nnz (atomicAdd)")
        return lines + _panel_lines(self.panels, engines)


def hybrid_schedule(A, *, dense: bool = True) -> HybridSchedule:
    """The ``adaptive`` schedule of A (cached on A); ``dense=False`` keeps the dense rows on the sparse path."""
    key = ("spmm-hybrid", dense)
    if key in A._cache:
        return A._cache[key]
    row_plan = plan_for(A)
    indptr = host_indptr(A)
    lengths = np.diff(indptr)
    dense_bin = [b for b in row_plan.bins if b.name == "dense"]
    bins = [(b.name, b.rows) for b in row_plan.bins if b.name != "dense" or not dense]
    panels = panels_for(A) if dense else ()
    dense_rows = np.concatenate([p.rows for p in panels]) if panels else np.zeros(0, np.int64)
    if dense and dense_bin and dense_bin[0].rows.size != dense_rows.size:
        raise KernelError(f"plan bug: the dense bin has {dense_bin[0].rows.size} rows but its panels "
                          f"{dense_rows.size}")
    groups, long_rows = split_rows(lengths, bins, dense_rows)
    segments = segment_ranges(indptr, long_rows) if long_rows.size else None
    schedule = HybridSchedule(key, tuple(groups), long_rows, segments, panels)
    A._cache[key] = schedule
    return schedule


# ---------------------------------------------------------------- fused schedule
def fused_partition(lengths: np.ndarray, excluded_rows=(), *, nnz_per_lane: int = FUSED_NNZ_PER_LANE,
                    long_row: int = SEGMENT_NNZ, min_lanes: int = 1):
    """Split every row not in ``excluded_rows`` into fused work classes.

    Returns ([(kind, host row ids ascending)], long rows): kind is the lanes
    per row (``FUSED_SUBS``, at least ``min_lanes``), in ``FUSED_LAUNCH_ORDER``;
    rows longer than ``long_row`` are returned separately for ``segment_ranges``. Every row
    (empty ones included: they still write beta * Y or 0) lands in exactly
    one place.
    """
    lengths = np.asarray(lengths, dtype=np.int64)
    keep = np.ones(lengths.size, dtype=bool)
    keep[np.asarray(excluded_rows, dtype=np.int64)] = False
    long_mask = keep & (lengths > long_row)
    sub_of_row = np.full(lengths.size, FUSED_SUBS[-1], dtype=np.int64)
    for sub in reversed(FUSED_SUBS):  # smallest sub that fits wins: assign from the widest down
        sub_of_row[lengths <= nnz_per_lane * sub] = sub
    sub_of_row = np.maximum(sub_of_row, min_lanes)
    short = keep & ~long_mask
    classes = []
    for kind in FUSED_LAUNCH_ORDER:
        if kind == FUSED_KIND_SEGMENT:
            continue
        rows = np.flatnonzero(short & (sub_of_row == kind))
        if rows.size:
            classes.append((kind, rows))
    return classes, np.flatnonzero(long_mask)


def fused_table(classes, n_segments: int):
    """(int64 table, row list, blocks) for ``fused_partition``'s classes plus n_segments segments.

    Table rows are [first block, kind, item offset, items]."""
    entries, row_chunks = [], []
    first_block, offset = 0, 0
    if n_segments:
        entries.append((first_block, FUSED_KIND_SEGMENT, 0, n_segments))
        first_block += ceil_div(n_segments, BLOCK // 32)
    for kind, rows in classes:
        entries.append((first_block, kind, offset, rows.size))
        first_block += ceil_div(rows.size, BLOCK // kind)
        offset += rows.size
        row_chunks.append(rows)
    table = np.asarray(entries, dtype=np.int64).reshape(-1, 4)
    row_list = np.concatenate(row_chunks) if row_chunks else np.zeros(0, dtype=np.int64)
    return table, row_list, first_block


@dataclass(frozen=True)
class FusedSchedule:
    """Everything one fused launch needs (host arrays), built once per (matrix, dense, nnz_per_lane,
    min_lanes, segment_nnz)."""

    key: tuple
    table: np.ndarray          # int64 (n_classes, 4): first block, kind, item offset, items
    row_list: np.ndarray       # the rows of every row class, in launch order
    segments: tuple | None     # host (row ids, begin, end) of the long rows' segments
    long_rows: np.ndarray      # the segmented rows (for spla_spmm_init_rows)
    n_blocks: int
    panels: tuple              # DensePanel
    segment_nnz: int = SEGMENT_NNZ  # rows longer than this run as segments of this many nonzeros

    @property
    def n_long_rows(self) -> int:
        return int(self.long_rows.size)

    def summary(self, k: int, engines=()) -> list:
        lines = []
        for first, kind, _offset, items in self.table.tolist():
            what = (f"{items:,} segments of <= {self.segment_nnz} nnz, 32 lanes each (atomicAdd)"
                    if kind == FUSED_KIND_SEGMENT else f"{items:,} rows, {kind} lanes/row")
            lines.append(f"fused class from block {first:,}: {what}")
        layout = ", k spread over each row's lanes" if k > REGK_MAX_K else ""
        lines.append(f"one launch of {self.n_blocks:,} blocks (K={next_pow2(k)}{layout})"
                     + (f" after init of {self.n_long_rows:,} long rows" if self.n_long_rows else ""))
        return lines + _panel_lines(self.panels, engines)


def fused_schedule(A, *, dense: bool = True, nnz_per_lane: int = FUSED_NNZ_PER_LANE,
                   min_lanes: int = 1, segment_nnz: int | None = None) -> FusedSchedule:
    """The fused schedule of A (cached on A); ``min_lanes``: the fewest lanes a row (the wide kernel's K / W);
    rows over ``segment_nnz`` nonzeros (None: :func:`fused_segment_nnz`) run as segments of that many."""
    segment_nnz = segment_nnz or fused_segment_nnz(A.nnz)
    key = ("spmm-fused", dense, nnz_per_lane, min_lanes, segment_nnz)
    if key in A._cache:
        return A._cache[key]
    indptr = host_indptr(A)
    lengths = np.diff(indptr)
    panels = panels_for(A) if dense else ()
    excluded = np.concatenate([p.rows for p in panels]) if panels else np.zeros(0, np.int64)
    classes, long_rows = fused_partition(lengths, excluded, nnz_per_lane=nnz_per_lane, long_row=segment_nnz,
                                         min_lanes=min_lanes)
    segments = segment_ranges(indptr, long_rows, segment_nnz) if long_rows.size else None
    table, row_list, n_blocks = fused_table(classes, 0 if segments is None else int(segments[0].size))
    if n_blocks > MAX_GRID_X:
        raise KernelError(f"the fused schedule needs {n_blocks} blocks, over CUDA's grid limit")
    schedule = FusedSchedule(key, table, row_list, segments, long_rows, n_blocks, panels, segment_nnz)
    A._cache[key] = schedule
    return schedule


# ---------------------------------------------------------------- dense panels
def dense_gemm_kernel(n_rows: int, k: int, dtype, n_cols: int | None = None, multiprocessors=None) -> str:
    """The GEMM engine for a dense panel of n_rows x n_cols at this k (see ``GEMM_CORE_TILE``).

    ``auto`` (the GEMM rule itself) when that rule picks a split-K kernel for
    (n_rows, k, n_cols); else ``dbuf`` for float32 when its 128 x 128 tile grid
    covers every SM; otherwise ``cublas``. The GEMM core is float32-only.
    """
    if np.dtype(dtype) != np.float32:
        return "cublas"
    sms = multiprocessors or gemm_planning.DEFAULT_MULTIPROCESSORS
    if n_cols is not None and "split" in gemm_planning.auto_kernel(np.float32, (n_rows, k, n_cols), sms):
        return "auto"
    tiles = ceil_div(n_rows, GEMM_CORE_TILE) * ceil_div(k, GEMM_CORE_TILE)
    return "dbuf" if tiles >= sms else "cublas"


def panel_plans(panels, k: int, dtype, *, dense_gemm: str | None = None, multiprocessors=None) -> tuple:
    """One :class:`~spla.planning.gemm.GemmPlan` per panel: panel (rows x width) @ X[span] (width x k)."""
    plans = []
    for p in panels:
        engine = dense_gemm or dense_gemm_kernel(p.rows.size, k, dtype, p.width, multiprocessors)
        plans.append(gemm_planning.plan_gemm(engine, dtype, (p.rows.size, k, p.width), multiprocessors))
    return tuple(plans)


# ---------------------------------------------------------------- the plan
@dataclass(frozen=True)
class SpmmPlan:
    """How one SpMM runs: the kernel family, its parameters and schedule.

    ``kernel`` is what runs (``auto`` resolved; ``fused`` becomes ``adaptive``
    past k = 16 where :func:`fused_wide_lanes` says no); ``requested`` what
    was asked for. ``schedule`` is a :class:`HybridSchedule` (``adaptive``) or
    :class:`FusedSchedule` (``fused``); ``panels`` the GEMM plan of each of
    its dense panels.
    """

    kernel: str
    requested: str
    k: int
    dtype: np.dtype
    regk_sub: int = 1
    schedule: HybridSchedule | FusedSchedule | None = None
    panels: tuple = field(default=())
    sliced: bool = FUSED_SLICED  # fused: its 32-lane classes spread k over their lanes

    @property
    def key(self) -> tuple:
        """What a bound launcher depends on (for caching it on the matrix)."""
        return (self.kernel, self.k, self.dtype.str, self.regk_sub, self.sliced,
                None if self.schedule is None else self.schedule.key, tuple(p.name for p in self.panels))

    def summary(self) -> list:
        """What the schedule does at this k (empty for single-launch kernels)."""
        if self.schedule is None:
            return []
        return self.schedule.summary(self.k, [p.name for p in self.panels])


def plan_spmm(A, k: int, kernel: str = "auto", *, dense: bool = True, nnz_per_lane: int = FUSED_NNZ_PER_LANE,
              sliced: bool = FUSED_SLICED, segment_nnz: int | None = None, dense_gemm: str | None = None,
              multiprocessors=None) -> SpmmPlan:
    """The plan of ``A @ X`` for X of k columns with ``kernel`` (a name of :data:`KERNELS`).

    Parameters
    ----------
    A : CSRMatrix (host or device; only indptr and the row plan are read)
    k : int
    kernel : str
        A name of :data:`KERNELS`, or ``fused:N`` (:func:`parse_spmm_kernel`).
    dense, nnz_per_lane, sliced, segment_nnz, dense_gemm
        Schedule options (benchmark variants): keep the dense rows on the
        sparse path, lanes per nonzero of the fused classes, whether fused's
        32-lane classes spread k over their lanes (:data:`FUSED_SLICED`), the
        nonzeros of fused's segments (and the length past which a row is cut
        into them; None: :func:`fused_segment_nnz`), and a forced GEMM engine for the dense panels (a GEMM
        kernel name or ``"auto"``).
    multiprocessors : int, optional
        SMs of the device (the GEMM rules); None assumes the default device.
    """
    k = int(k)
    name, segments = parse_spmm_kernel(choose_kernel(A, k) if kernel == "auto" else kernel)
    segment_nnz = segments or segment_nnz
    if name == "regk" and k > REGK_MAX_K:
        raise KernelError(f"regk keeps k columns in registers, at most {REGK_MAX_K}; k={k} (use warp)")
    wide_lanes = fused_wide_lanes(k, A.dtype)
    if name == "fused" and k > REGK_MAX_K and wide_lanes is None:
        name = "adaptive"
    dtype = np.dtype(A.dtype)
    if name == "regk":
        return SpmmPlan(name, kernel, k, dtype, regk_sub=regk_sub(_row_stats(A)[0]))
    if name in ("adaptive", "fused"):
        schedule = (hybrid_schedule(A, dense=dense) if name == "adaptive"
                    else fused_schedule(A, dense=dense, nnz_per_lane=nnz_per_lane, min_lanes=wide_lanes or 1,
                                        segment_nnz=segment_nnz))
        return SpmmPlan(name, kernel, k, dtype, schedule=schedule,
                        panels=panel_plans(schedule.panels, k, dtype, dense_gemm=dense_gemm,
                                           multiprocessors=multiprocessors), sliced=bool(sliced))
    return SpmmPlan(name, kernel, k, dtype)
