"""The CUDA SpMV backend: kernel registry, launch configuration, the auto policy.

``spmv(A, x, y, alpha=, beta=, kernel=)`` computes ``alpha * A @ x + beta * y``
on the GPU with one of :data:`KERNELS`. Kernels live in ``kernels/spmv_*.cu``,
one idea per file, in the order of the optimisation path (scalar -> warp ->
vector -> adaptive -> adaptive2 -> segmented); ``cusparse`` and
``cusparse-cupy`` are the anchors every benchmark measures beside them.

Kernel names may carry a parameter: a lane width, ``"warp:8"`` or
``"vector:16"`` (without one the width follows the mean row length,
:func:`lanes_for`), or the entries per lane of ``"segmented:K"`` (default
:func:`segmented_default`: 16 for float32, 8 for float64).
"""

from __future__ import annotations

from collections import OrderedDict

import numpy as np

from .. import cuda, plan as planning
from ..errors import InputError, KernelError

KERNELS = OrderedDict([
    ("scalar", "one thread per row (kernels/spmv_scalar.cu)"),
    ("warp", "2-32 lanes per row, lane-strided loads, shuffle reduction (kernels/spmv_warp.cu)"),
    ("vector", "2-32 lanes per row, 16-byte loads of values and indices (kernels/spmv_vector.cu)"),
    ("adaptive", "nnz-balanced blocks from spla.plan: packed short rows, block per row, "
                 "split long rows, dense panel via GEMV (kernels/spmv_adaptive.cu)"),
    ("adaptive2", "adaptive with length-sorted sub-warp rows for medium rows, staged row offsets, "
                  "4-deep load pipelining, no dense path (kernels/spmv_adaptive2.cu)"),
    ("segmented", "fixed tiles of 32*K nonzeros, one warp each, loads striped across the warp, "
                  "segmented warp scan, rows cut by tiles summed in order (kernels/spmv_segmented.cu)"),
    ("auto", "picks one of the above from the row statistics (see choose_kernel)"),
    ("cusparse", "cuSPARSE SpMV, descriptors and buffer built once per matrix (kernel-level anchor)"),
    ("cusparse-cupy", "cupyx.scipy.sparse csr_matrix @ x: cuSPARSE as a CuPy user calls it"),
])
SPLA_KERNELS = ("scalar", "warp", "vector", "adaptive", "adaptive2", "segmented")
LANE_WIDTHS = (2, 4, 8, 16, 32)
# Entries per lane of spmv_segmented.cu (a tile is 32 * K nonzeros, K a multiple
# of 4). A lane holds its K values, indices and products in registers: past 64
# bytes of values (float64 at K = 16) they spill. The default fills those 64
# bytes: K = 16 was 7% faster than K = 8 on powerlaw-16M (BENCHMARKS.md round 16).
SEGMENTED_ENTRIES = (4, 8, 16)
SEGMENTED_LANE_BYTES = 64
# The kernel parameter each family takes after a colon, and its allowed values.
KERNEL_PARAMETERS = {"warp": LANE_WIDTHS, "vector": LANE_WIDTHS, "segmented": SEGMENTED_ENTRIES}

VALUE_TYPES = OrderedDict([(np.dtype(np.float32), "float"), (np.dtype(np.float64), "double")])
INDEX_TYPES = OrderedDict([(np.dtype(np.int32), "int"), (np.dtype(np.int64), "long long")])

# ----------------------------------------------------------- launch config
# Threads per block of the row kernels: whole warps (the warp/vector kernels
# shuffle with a full mask) and 8 blocks of 256 fill an SM's 2048 threads.
ROW_BLOCK = 256
assert ROW_BLOCK % 32 == 0 and ROW_BLOCK <= 1024, "row kernels need whole warps, at most 1024 threads"
# Every kernel loops grid-stride (over rows or descriptors), so the grid is
# only capped, never required to cover the work: rows beyond
# 65,535 x 1,024 or 2^31 x 256 are still reached.
MAX_BLOCKS = cuda.MAX_GRID_X
# spmv_adaptive.cu's constants, mirrored by spla.plan (the compile test checks them).
ADAPTIVE_THREADS = planning.ADAPTIVE_THREADS
ADAPTIVE_STAGE = planning.ADAPTIVE_STAGE
# The vector kernel reads 16-byte packs at pack-aligned offsets of data and indices.
VECTOR_ALIGNMENT = 16
# spmv_segmented.cu's block: 8 warps, one tile each (its SEGMENTED_THREADS).
SEGMENTED_THREADS = 256
SEGMENTED_WARPS = SEGMENTED_THREADS // 32


def segmented_entries(dtype) -> tuple:
    """The K values ``segmented:K`` takes for one value dtype."""
    return tuple(k for k in SEGMENTED_ENTRIES if k * np.dtype(dtype).itemsize <= SEGMENTED_LANE_BYTES)


def segmented_default(dtype) -> int:
    """K of plain ``"segmented"``: the largest that dtype takes (16 float32, 8 float64)."""
    return max(segmented_entries(dtype))


def _declare(filename, template, widths=lambda dtype: (None,)):
    """Every (value, index, width) instantiation; ``widths`` maps a value dtype to its widths."""
    names = []
    for dtype, v in VALUE_TYPES.items():
        for i in INDEX_TYPES.values():
            for w in widths(dtype):
                names.append(template.format(v=v, i=i, w=w))
    return cuda.KernelSource(filename, names)


SOURCES = {
    "scalar": _declare("spmv_scalar.cu", "spla_spmv_scalar<{v}, {i}>"),
    "warp": _declare("spmv_warp.cu", "spla_spmv_warp<{v}, {i}, {w}>", lambda dtype: LANE_WIDTHS),
    "vector": _declare("spmv_vector.cu", "spla_spmv_vector<{v}, {i}, {w}>", lambda dtype: LANE_WIDTHS),
    "adaptive": _declare("spmv_adaptive.cu", "spla_spmv_adaptive<{v}, {i}>"),
    "adaptive2": _declare("spmv_adaptive2.cu", "spla_spmv_adaptive2<{v}, {i}>"),
    "segmented": _declare("spmv_segmented.cu", "spla_spmv_segmented<{v}, {i}, {w}>", segmented_entries),
}


def kernel_name(family: str, dtype, index_dtype, param: int | None = None) -> str:
    """The NVRTC name expression of one instantiation (``param``: see :data:`KERNEL_PARAMETERS`)."""
    v, i = VALUE_TYPES[np.dtype(dtype)], INDEX_TYPES[np.dtype(index_dtype)]
    if family in KERNEL_PARAMETERS:
        return f"spla_spmv_{family}<{v}, {i}, {param}>"
    return f"spla_spmv_{family}<{v}, {i}>"


_FUNCTIONS: dict = {}  # (family, dtype, index dtype, param, device) -> RawKernel: no lookups per call


def _function(family, dtype, index_dtype, param=None):
    cupy = cuda.require_cupy()
    key = (family, dtype, index_dtype, param, cupy.cuda.runtime.getDevice())
    function = _FUNCTIONS.get(key)
    if function is None:
        function = _FUNCTIONS[key] = SOURCES[family].function(kernel_name(family, dtype, index_dtype, param))
    return function


def pack_entries(dtype, index_dtype) -> int:
    """Entries per 16-byte pack in spmv_vector.cu (both packs stay <= 16 bytes)."""
    return min(16 // np.dtype(dtype).itemsize, 16 // np.dtype(index_dtype).itemsize)


# Lanes per row of warp/vector, measured with scripts/time_turns.py on the H200
# (2026-12-03, BENCHMARKS.md). Rows of at least ROW_GROUP_ENTRIES: a row
# group does best reading at least ROW_GROUP_ENTRIES entries a step (4 lanes
# of float32 packs, 8 of float64 packs, 16 of single entries), with no lane
# walking more than about LANE_ENTRIES entries of its row; the two-loads-a-lane
# rule gave them 2-4x too many lanes (banded rows of 41: 17% slower in float32,
# 44% in float64). Shorter rows keep that rule: a group wider than the row
# idles (2D Poisson, rows of 5: vector 0.41 ms at 2 lanes, 0.75 at 4).
ROW_GROUP_ENTRIES = 16
LANE_ENTRIES = 16


def lanes_for(mean_row: float, entries_per_lane_step: int = 1) -> int:
    """Lanes per row for the warp/vector kernels, from the mean row length and
    the entries a lane reads a step (1 for warp, pack_entries for vector)."""
    if mean_row < ROW_GROUP_ENTRIES:
        want = mean_row / (2 * entries_per_lane_step)
    else:
        want = max(ROW_GROUP_ENTRIES / entries_per_lane_step, mean_row / LANE_ENTRIES)
    for width in LANE_WIDTHS:
        if width >= want:
            return width
    return LANE_WIDTHS[-1]


_PARAMETER_HELP = (f"warp and vector take an optional :LANES, one of {LANE_WIDTHS}; "
                   f"segmented an optional :K entries per lane, one of {SEGMENTED_ENTRIES} (16: float32 only)")


def parse_kernel(kernel: str):
    """``"warp:8"`` -> ("warp", 8); ``"scalar"`` -> ("scalar", None). Unknown names raise."""
    family, _, param = str(kernel).partition(":")
    if family not in KERNELS:
        raise KernelError(f"unknown SpMV kernel {kernel!r}; expected one of {', '.join(KERNELS)} "
                          f"({_PARAMETER_HELP})")
    if not param:
        return family, None
    if not param.isdigit() or int(param) not in KERNEL_PARAMETERS.get(family, ()):
        raise KernelError(f"{kernel!r}: {_PARAMETER_HELP}")
    return family, int(param)


# ------------------------------------------------------------- auto policy
# Ginkgo-style rule on row statistics (spla.plan.row_stats): a matrix falls in
# one class, in this order, and AUTO_RULE names the kernel of each class:
#   "huge": a row longer than AUTO_HUGE_ROW (segmented would send each such
#       row's hundreds of tiles through one completion counter; adaptive2
#       splits it into 4096-nnz chunks)
#   "irregular-large" and "irregular": a row longer than AUTO_LONG_ROW, or rows
#       irregular (cv > AUTO_IRREGULAR_CV) with a longest row past
#       AUTO_SHORT_MAX (one long row would stall a warp or a thread); "large"
#       from AUTO_LARGE_NNZ nonzeros, where segmented's equal tiles keep the
#       x gathers flowing, below it adaptive2 is ahead
#   "short":  mean <= AUTO_SCALAR_MEAN and longest <= AUTO_SHORT_MAX
#       (no reduction at all; 3.5 TB/s on the 2D Poisson matrix)
#   "medium": the rest, regular rows of medium length
# An empty matrix takes "scalar" (it only writes y).
# Measured on the H200 (2026-12-02, BENCHMARKS.md), float32, scripts/bench_spmv.py:
# irregular matrices under AUTO_LARGE_NNZ run adaptive2 faster than segmented
# (weblike 0.050 vs 0.054 ms, blockdense-1M 0.056 vs 0.058, rmat-21-16 in the
# suite report 0.91x vs 0.82x cuSPARSE, and the small real graphs); powerlaw-16M
# (128M nnz) runs segmented at 0.868 ms against adaptive2's 1.078. huge
# (hugerows-2M, rows of ~1M nnz): adaptive2 1.12x vs segmented 0.93x; short
# scalar 1.74x (segmented 1.53x), medium vector 1.40-1.64x over four runs
# (adaptive2 1.38-1.47x). After a benchmark run, change AUTO_RULE (one place) to
# the fastest measured kernel per class.
AUTO_RULE = {"huge": "adaptive2", "irregular-large": "segmented", "irregular": "adaptive2", "short": "scalar",
             "medium": "vector"}
AUTO_HUGE_ROW = 65536  # a row of 128 segmented tiles and more
AUTO_LARGE_NNZ = 2**26  # 67M: between rmat-21-16 (32M, adaptive2 ahead) and powerlaw-16M (128M)
AUTO_LONG_ROW = 1024
AUTO_IRREGULAR_CV = 1.0
AUTO_SHORT_MAX = 64
AUTO_SCALAR_MEAN = 12.0


def choose_kernel(A) -> str:
    """The kernel ``auto`` runs for A (a name from :data:`KERNELS`); cached on A."""
    choice = A._cache.get("spmv-auto")
    if choice is None:
        choice = A._cache["spmv-auto"] = _choose(planning.row_stats(A))
    return choice


def matrix_class(s) -> str:
    """The auto policy's class of a matrix ("empty", "huge", "irregular-large", "irregular", "short", "medium")."""
    if s.nnz == 0 or s.n_rows == 0:
        return "empty"
    if s.max > AUTO_HUGE_ROW:
        return "huge"
    if s.max > AUTO_LONG_ROW or (s.cv > AUTO_IRREGULAR_CV and s.max > AUTO_SHORT_MAX):
        return "irregular-large" if s.nnz >= AUTO_LARGE_NNZ else "irregular"
    if s.mean <= AUTO_SCALAR_MEAN and s.max <= AUTO_SHORT_MAX:
        return "short"
    return "medium"


def _choose(s) -> str:
    klass = matrix_class(s)
    return "scalar" if klass == "empty" else AUTO_RULE[klass]


def describe_choice(A) -> dict:
    """What auto picks for A and why: for ``spla info`` and benchmark reports."""
    s = planning.row_stats(A)
    name = choose_kernel(A)
    info = {"kernel": name, "class": matrix_class(s), "mean_row": s.mean, "max_row": s.max, "cv": s.cv}
    if name in ("warp", "vector"):
        info["lanes"] = _lanes(A, name, None)
    return info


# ------------------------------------------------------------------ driver
def _lanes(A, family, lanes):
    if lanes is not None:
        return lanes
    step = pack_entries(A.dtype, A.index_dtype) if family == "vector" else 1
    return lanes_for(planning.row_stats(A).mean, step)


def bound_param(A, family: str, param):
    """The template parameter A's launcher compiles ``family`` with: the lanes of
    warp/vector, the entries per lane of segmented (defaults filled in), else ``param``."""
    if family == "segmented":
        return param or segmented_default(A.dtype)
    if family in ("warp", "vector"):
        return _lanes(A, family, param)
    return param


def _grid(n_items: int, per_block: int) -> int:
    return max(1, min(cuda.ceil_div(n_items, per_block), MAX_BLOCKS))


BOUND_KEY = "spmv-bound"  # A._cache[BOUND_KEY][kernel name] -> _Bound launcher


def spmv(A, x, y=None, *, alpha=1.0, beta=0.0, kernel: str = "auto", plan=None, out=None):
    """``alpha * A @ x + beta * y`` on the GPU with one of :data:`KERNELS`.

    Parameters
    ----------
    A : CSRMatrix
        Moved to the GPU if needed (the copy is cached on A).
    x : cupy.ndarray
        1-D, length ``A.n_cols``; cast to A's value dtype.
    y : cupy.ndarray, optional
        Read only when ``beta != 0`` (required then).
    alpha, beta : float
    kernel : str
        A name from :data:`KERNELS`, optionally ``warp:LANES``/``vector:LANES``.
    plan : spla.plan.Plan, optional
        For ``adaptive``/``adaptive2``: a plan built with other thresholds
        (default ``spla.plan.plan_for(A)`` / ``spla.plan.plan2_for(A)``).
    out : cupy.ndarray, optional
        Where to write the result (may be ``y`` itself for an in-place update);
        default a new array. With ``beta == 0`` its old contents are never read.

    Returns
    -------
    cupy.ndarray
        ``out``, of A's value dtype.

    Notes
    -----
    The first call per (matrix, kernel) resolves the kernel, plan and launch
    configuration and caches a bound launcher in ``A._cache``; later calls with
    a contiguous x of A's dtype and ``beta == 0`` only check x's and out's shape
    and launch (a few microseconds of host time). The launcher holds A's
    arrays: replacing ``A.data`` (rather than writing into it) needs
    ``A._cache.clear()``.

    See Also
    --------
    cupyx.scipy.sparse.csr_matrix.dot, cupyx.cusparse.spmv
    """
    if plan is None:
        bound = bound_launcher(A, kernel)
        if bound is not None:
            result = bound.fast(x, y, alpha, beta, out)
            if result is not None:
                return result
    return _spmv_checked(A, x, y, alpha, beta, kernel, plan, out)


def bound_launcher(A, kernel: str = "auto"):
    """The cached launcher ``spmv`` uses for (A, kernel), or None before the first call."""
    return A._cache.get(BOUND_KEY, {}).get(kernel)


def _spmv_checked(A, x, y, alpha, beta, kernel, plan, out):
    """Every check, every conversion; binds a launcher for the fast path."""
    cupy = cuda.require_cupy()
    family, param = parse_kernel(kernel)
    caller = A
    A = A.to_device()
    dtype = A.dtype
    n_rows, n_cols = A.shape
    if getattr(x, "ndim", None) != 1 or x.shape[0] != n_cols:
        raise InputError(f"x must be a vector of length {n_cols}, got shape {getattr(x, 'shape', None)}")
    if x.dtype != dtype or not x.flags.c_contiguous:
        x = cupy.ascontiguousarray(x, dtype=dtype)
    beta = dtype.type(beta)
    alpha = dtype.type(alpha)
    if family == "cusparse-cupy" and out is None and beta == 0 and A.nnz:
        # exactly what a CuPy user runs: one product, no copy into a buffer
        product = _cupyx_matrix(A) @ x
        return product if alpha == 1 else product * alpha
    if out is None:
        out = cupy.empty(n_rows, dtype=dtype)
    elif out.shape != (n_rows,) or out.dtype != dtype or not out.flags.c_contiguous:
        raise InputError(f"out must be a contiguous {dtype} vector of length {n_rows}")
    if beta != 0:
        if y is None:
            raise InputError("beta != 0 needs y")
        if y.shape != (n_rows,):
            raise InputError(f"y must be a vector of length {n_rows}, got shape {y.shape}")
        if y is not out:
            out[...] = y
    if n_rows == 0:
        return out
    if family == "auto":
        family = choose_kernel(A)
    if family == "cusparse-cupy":
        return _cusparse_cupy(A, x, out, alpha, beta)
    if family == "cusparse" and A.nnz == 0:  # cuSPARSE refuses empty matrices on some versions
        return _scale(out, beta)
    launcher = _bind(cupy, A, family, param, plan, x, out)
    if plan is None:  # launchers for explicit plans are not cached: the plan is the caller's
        # on the matrix the caller holds, its device copy, and the host matrix of that
        # copy (spla.spmv and A @ x pass the device copy of a host matrix)
        holders = {id(m): m for m in (caller, A, A._cache.get("host")) if m is not None}
        for holder in holders.values():
            holder._cache.setdefault(BOUND_KEY, {})[kernel] = launcher
    return launcher.launch(x, out, alpha, beta)


class _Bound:
    """One (matrix, kernel) resolved: ``launch(x, out, alpha, beta)`` runs it.

    ``fast`` is the hot path of :func:`spmv`: it takes the common call (x
    contiguous of A's dtype, beta == 0, out absent or a matching vector) and
    returns None for anything else, which then goes through every check.
    """

    def __init__(self, cupy, A):
        self.ndarray = cupy.ndarray
        self.empty = cupy.empty
        self.get_device = cupy.cuda.runtime.getDevice
        self.device = self.get_device()
        self.dtype = A.dtype
        self.scalar = A.dtype.type
        self.one, self.zero = self.scalar(1), self.scalar(0)
        self.n_rows, self.n_cols = A.shape
        self.x_shape, self.y_shape = (A.shape[1],), (A.shape[0],)

    def fast(self, x, y, alpha, beta, out):
        if (beta != 0 or type(x) is not self.ndarray or x.shape != self.x_shape or x.dtype != self.dtype
                or not x.flags.c_contiguous or self.get_device() != self.device):
            return None
        if out is None:
            out = self.empty(self.n_rows, self.dtype)
        elif (type(out) is not self.ndarray or out.shape != self.y_shape or out.dtype != self.dtype
              or not out.flags.c_contiguous):
            return None
        return self.launch(x, out, self.one if alpha == 1 else self.scalar(alpha), self.zero)

    def launch(self, x, out, alpha, beta):
        raise NotImplementedError


class _RowLauncher(_Bound):
    """scalar / warp / vector: one launch, arguments prebuilt except x, y, alpha, beta."""

    def __init__(self, cupy, A, function, grid, block):
        super().__init__(cupy, A)
        self.function, self.grid, self.block = function, (grid,), (block,)
        self.head = (np.int64(A.n_rows), A.indptr, A.indices, A.data)

    def launch(self, x, out, alpha, beta):
        self.function(self.grid, self.block, self.head + (x, out, alpha, beta))
        return out


class _AdaptiveLauncher(_Bound):
    """adaptive / adaptive2: the plan's arrays on the GPU, one launch (+ dense panels for adaptive)."""

    def __init__(self, cupy, A, family, plan):
        super().__init__(cupy, A)
        if plan.shape != tuple(A.shape) or plan.nnz != A.nnz:
            raise KernelError(f"the plan was built for a {plan.shape} matrix with {plan.nnz} nonzeros, "
                              f"not this {A.shape} one with {A.nnz}")
        if family == "adaptive" and plan.thresholds.warp_max:
            raise KernelError("this plan has a rows path (warp_max > 0): run it with kernel='adaptive2'")
        key = (cupy.cuda.Device().id, A.dtype.str)
        state = plan._device.get(key)
        if state is None:
            state = plan._device[key] = _AdaptiveState(cupy, plan, A, A.dtype)
        self.state = state
        self.gemv = dense_gemv() if (family == "adaptive" and state.panels) else None
        n_blocks = plan.n_main_blocks if self.gemv is not None else plan.blocks.shape[0]
        self.function = _function(family, A.dtype, A.index_dtype) if n_blocks else None
        self.grid, self.block = (min(n_blocks, MAX_BLOCKS),), (ADAPTIVE_THREADS,)
        matrix = (A.indptr, A.indices, A.data)
        if family == "adaptive2":
            self.head = (state.blocks, np.int64(n_blocks), state.row_list) + matrix
        else:
            self.head = (state.blocks, np.int64(n_blocks)) + matrix
        self.tail = (state.chunk, state.split_offsets, state.split_partials, state.split_counters)

    def launch(self, x, out, alpha, beta):
        if self.function is not None:
            self.function(self.grid, self.block, self.head + (x, out, alpha, beta) + self.tail)
        if self.gemv is not None:
            for panel in self.state.panels:
                product = self.gemv(panel.matrix, x[panel.col_begin:panel.col_end], alpha=alpha)
                if beta == 0:
                    out[panel.rows] = product
                else:
                    out[panel.rows] = product + beta * out[panel.rows]
        return out


class _SegmentedLauncher(_Bound):
    """segmented: one warp per tile of 32 * K nonzeros; tile ownership and the
    cut rows' partial sums and counters are built once per (matrix, K, dtype)."""

    def __init__(self, cupy, A, entries):
        super().__init__(cupy, A)
        if entries not in segmented_entries(A.dtype):
            raise KernelError(f"segmented:{entries} runs on float32 only: {entries} {A.dtype} values a lane take more "
                              f"registers than a thread gets; use segmented:{segmented_default(A.dtype)}")
        tile_rows = planning.segmented_tile_rows(A, 32 * entries)
        n_tiles = tile_rows.size - 1
        if int(np.diff(tile_rows).max()) >= 2**31 - 1:  # the kernel lists rows by int offsets in a tile
            raise KernelError("a segmented tile owns 2^31 or more (empty) rows; use kernel='adaptive2'")
        # the kernel's list of a tile's ending rows, wanted only where a row is empty
        self.shared_mem = SEGMENTED_WARPS * 32 * entries * 4 if planning.row_stats(A).empty else 0
        key = ("segmented-state", entries, cupy.cuda.Device().id, A.dtype.str)
        state = A._cache.get(key)
        if state is None:
            # counters zeroed once; the tile that finishes a cut row resets its counter
            state = A._cache[key] = (cupy.asarray(tile_rows), cupy.empty(n_tiles, dtype=A.dtype),
                                     cupy.empty(n_tiles, dtype=A.dtype), cupy.zeros(n_tiles, dtype=np.uint32))
        device_rows, head_partials, tail_partials, counters = state
        self.function = _function("segmented", A.dtype, A.index_dtype, entries)
        self.grid, self.block = (_grid(n_tiles, SEGMENTED_WARPS),), (SEGMENTED_THREADS,)
        self.head = (np.int64(n_tiles), np.int64(A.nnz), device_rows, A.indptr, A.indices, A.data)
        self.tail = (head_partials, tail_partials, counters)

    def launch(self, x, out, alpha, beta):
        self.function(self.grid, self.block, self.head + (x, out, alpha, beta) + self.tail,
                      shared_mem=self.shared_mem)
        return out


class _CusparseLauncher(_Bound):
    """cuSPARSE with its descriptors built once (the anchor gets the same fast path as spla's kernels)."""

    def __init__(self, cupy, A, x, out):
        super().__init__(cupy, A)
        state = A._cache.get("cusparse-spmv")
        if state is None:
            state = A._cache["cusparse-spmv"] = _CusparseState(A, x, out)
        self.launch = state


def _require_aligned(A, family, instead):
    """The 16-byte packs of the vector kernel need aligned data and indices."""
    for what, array in (("data", A.data), ("indices", A.indices)):
        if array.data.ptr % VECTOR_ALIGNMENT:
            raise KernelError(f"the {family} kernel needs A.{what} on a {VECTOR_ALIGNMENT}-byte boundary "
                              f"(it is at {array.data.ptr:#x}); copy the matrix or use kernel={instead!r}")


def _bind(cupy, A, family, param, plan, x, out):
    """Resolve kernel, plan and launch configuration once."""
    n_rows = A.n_rows
    if family == "cusparse":
        return _CusparseLauncher(cupy, A, x, out)
    if family == "segmented":
        return _SegmentedLauncher(cupy, A, bound_param(A, family, param))
    if family in ("adaptive", "adaptive2"):
        if plan is None:
            plan = planning.plan_for(A) if family == "adaptive" else planning.plan2_for(A)
        return _AdaptiveLauncher(cupy, A, family, plan)
    if family == "scalar":
        return _RowLauncher(cupy, A, _function("scalar", A.dtype, A.index_dtype), _grid(n_rows, ROW_BLOCK),
                            ROW_BLOCK)
    lanes = bound_param(A, family, param)
    if family == "vector":
        _require_aligned(A, "vector", "warp")
    return _RowLauncher(cupy, A, _function(family, A.dtype, A.index_dtype, lanes),
                        _grid(n_rows, ROW_BLOCK // lanes), ROW_BLOCK)


# ----------------------------------------------------------------- adaptive
class _AdaptiveState:
    """A plan's arrays on the GPU for one value dtype (uploaded once)."""

    def __init__(self, cupy, plan, A, dtype):
        self.blocks = cupy.asarray(plan.blocks)
        self.row_list = cupy.asarray(plan.row_list)
        self.split_offsets = cupy.asarray(plan.split_offsets)
        n_split = plan.split_offsets.size - 1
        self.split_partials = cupy.empty(max(1, int(plan.split_offsets[-1])), dtype=dtype)
        # Zeroed once; the last chunk of each split row resets its counter.
        self.split_counters = cupy.zeros(max(1, n_split), dtype=np.uint32)
        self.chunk = np.int64(plan.thresholds.chunk)
        self.panels = [_DevicePanel(cupy, A, panel, dtype) for panel in plan.dense_panels]


class _DevicePanel:
    """One dense panel: its rows gathered once into a row-major array."""

    def __init__(self, cupy, A, panel, dtype):
        import cupyx

        indptr = A.indptr
        rows = cupy.asarray(panel.rows)
        starts = indptr[rows].astype(np.int64)
        lengths = (indptr[rows + 1] - indptr[rows]).astype(np.int64)
        ends = cupy.cumsum(lengths)
        total = panel.nnz
        entry = cupy.arange(total, dtype=np.int64)
        local_row = cupy.searchsorted(ends, entry, side="right")
        source = starts[local_row] + entry - (ends - lengths)[local_row]
        width = panel.col_end - panel.col_begin
        flat = cupy.zeros(len(panel.rows) * width, dtype=dtype)
        target = local_row * width + (A.indices[source].astype(np.int64) - panel.col_begin)
        cupyx.scatter_add(flat, target, A.data[source].astype(dtype))  # duplicates add, as in CSR
        self.matrix = flat.reshape(len(panel.rows), width)
        self.rows = rows
        self.col_begin, self.col_end = panel.col_begin, panel.col_end


def dense_gemv():
    """The GEMM backend's ``gemv(M, x) -> M @ x``; None if it cannot be imported (dense rows then run as blocks)."""
    try:
        from . import gemm_cuda
    except ImportError:
        return None
    return getattr(gemm_cuda, "gemv", None)


# ------------------------------------------------------------------ anchors
class _CusparseState:
    """cuSPARSE's SpMV set-up for one matrix: built once, re-pointed per call."""

    def __init__(self, A, x, out):
        from cupy._core import _dtype
        from cupy.cuda import device
        from cupy_backends.cuda.libs import cusparse
        from cupyx import cusparse as cxs

        self.lib = cusparse
        self.matrix = A.to_cupyx()  # keeps the arrays the descriptor points to alive
        self.handle = device.get_cusparse_handle()
        self.mat = cxs.SpMatDescriptor.create(self.matrix)
        self.vec_x = cxs.DnVecDescriptor.create(x)
        self.vec_y = cxs.DnVecDescriptor.create(out)
        self.alpha = np.ones(1, dtype=A.dtype)
        self.beta = np.zeros(1, dtype=A.dtype)
        self.compute_type = _dtype.to_cuda_dtype(A.dtype)
        self.op = cusparse.CUSPARSE_OPERATION_NON_TRANSPOSE
        self.alg = getattr(cusparse, "CUSPARSE_SPMV_ALG_DEFAULT", None)
        if self.alg is None:
            self.alg = cusparse.CUSPARSE_MV_ALG_DEFAULT
        size = cusparse.spMV_bufferSize(self.handle, self.op, self.alpha.ctypes.data, self.mat.desc,
                                        self.vec_x.desc, self.beta.ctypes.data, self.vec_y.desc,
                                        self.compute_type, self.alg)
        self.buffer = cuda.require_cupy().empty(max(1, size), dtype=np.int8)

    def __call__(self, x, out, alpha, beta):
        lib = self.lib
        lib.dnVecSetValues(self.vec_x.desc, x.data.ptr)
        lib.dnVecSetValues(self.vec_y.desc, out.data.ptr)
        self.alpha[0], self.beta[0] = alpha, beta
        lib.spMV(self.handle, self.op, self.alpha.ctypes.data, self.mat.desc, self.vec_x.desc,
                 self.beta.ctypes.data, self.vec_y.desc, self.compute_type, self.alg, self.buffer.data.ptr)
        return out


def _cupyx_matrix(A):
    matrix = A._cache.get("cupyx")
    if matrix is None:  # a CuPy user holds one csr_matrix; only the product is timed
        matrix = A._cache["cupyx"] = A.to_cupyx()
    return matrix


def _cusparse_cupy(A, x, out, alpha, beta):
    if A.nnz == 0:
        return _scale(out, beta)
    product = _cupyx_matrix(A) @ x
    if beta == 0:
        out[...] = alpha * product
    else:
        out[...] = alpha * product + beta * out
    return out


def _scale(out, beta):
    if beta == 0:
        out.fill(0)
    else:
        out *= beta
    return out
