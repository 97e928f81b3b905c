"""The CUDA SpMV backend: binds an :class:`~spla.planning.spmv.SpmvPlan` to a
device matrix and launches it.

Kernels live in ``kernels/spmv_*.cu``, one idea per file, in the order of the
optimisation path (scalar -> warp -> vector -> adaptive -> adaptive2 ->
segmented -> staged -> blocked), then the kernels of one structure: dia (entries on a few
diagonals), band (rows of contiguous columns) and rle (rows of runs of them).
:func:`bind` turns a plan into a launcher whose arguments are prebuilt; the
front door caches it on the matrix, so a later call only checks x and out and
launches. Which kernel runs is decided in :mod:`spla.planning`. Every launch
goes on CuPy's current stream and nothing here synchronises, so launches can be
captured in a CUDA graph.
"""

from __future__ import annotations

import weakref

import numpy as np

from ...errors import KernelError
from ...planning import adaptive, band, banks, dia, palette, rle, segmented
from ...planning.spmv import LANE_WIDTHS, SpmvPlan
from . import cusparse, dense_panels
from .gemm import gemv
from .runtime import INDEX_TYPES, MAX_GRID_X, VALUE_TYPES, KernelSource, PackedLaunch, c_contiguity, ceil_div, template

# Threads per block of the row kernels: whole warps (the warp/vector kernels
# shuffle with a full mask) and 8 blocks of 256 fill an SM's 2048 threads.
ROW_BLOCK = 256
assert ROW_BLOCK % 32 == 0 and ROW_BLOCK <= 1024, "row kernels need whole warps, at most 1024 threads"
# Every kernel loops grid-stride (over rows, descriptors or tiles), so the grid
# is only capped, never required to cover the work.
MAX_BLOCKS = MAX_GRID_X
# The vector kernel reads 16-byte packs at pack-aligned offsets of data and indices.
VECTOR_ALIGNMENT = 16

# Host constants the kernels are compiled with (no mirrored literals in the .cu files).
ADAPTIVE_DEFINES = (f"-DSPLA_ADAPTIVE_THREADS={adaptive.ADAPTIVE_THREADS}",
                    f"-DSPLA_ADAPTIVE_STAGE={adaptive.ADAPTIVE_STAGE}",
                    f"-DSPLA_KIND_ROWS={adaptive.KIND_ROWS}")
SEGMENTED_DEFINES = (f"-DSPLA_SEGMENTED_THREADS={segmented.SEGMENTED_THREADS}",)
STAGED_DEFINES = (f"-DSPLA_STAGED_THREADS={segmented.STAGED_THREADS}",
                  f"-DSPLA_STAGED_THREAD_ROW={segmented.STAGED_THREAD_ROW}", f"-DSPLA_PALETTE_VALUES={palette.VALUES}")


def kernel_name(family: str, dtype, index_dtype, param=None) -> str:
    """The name expression of one instantiation (dia's has no index type: it stores no indices)."""
    types = (dtype,) if family.startswith("dia") else (dtype, index_dtype)
    return template(f"spla_spmv_{family}", *types, *(() if param is None else (param,)))


def _declare(filename, name, params=lambda dtype: (None,), options=(), extra=()):
    """Every (value, index[, param]) instantiation of one kernel file, and ``extra`` names."""
    names = [template(name, dtype, index, *(() if p is None else (p,)))
             for dtype in VALUE_TYPES for index in INDEX_TYPES for p in params(dtype)]
    return KernelSource(filename, names + list(extra), options)


SOURCES = {
    "scalar": _declare("spmv_scalar.cu", "spla_spmv_scalar"),
    "warp": _declare("spmv_warp.cu", "spla_spmv_warp", lambda dtype: LANE_WIDTHS),
    "vector": _declare("spmv_vector.cu", "spla_spmv_vector", lambda dtype: LANE_WIDTHS),
    "adaptive": _declare("spmv_adaptive.cu", "spla_spmv_adaptive", options=ADAPTIVE_DEFINES),
    "adaptive2": _declare("spmv_adaptive2.cu", "spla_spmv_adaptive2", options=ADAPTIVE_DEFINES),
    "segmented": _declare("spmv_segmented.cu", "spla_spmv_segmented", segmented.segmented_entries,
                          SEGMENTED_DEFINES,
                          extra=[kernel_name(f"segmented{entry}", dtype, index, k) for entry in ("_bits", "_bits_short")
                                 for dtype in VALUE_TYPES for index in INDEX_TYPES
                                 for k in segmented.segmented_entries(dtype)]),
    "staged": _declare("spmv_staged.cu", "spla_spmv_staged", lambda dtype: segmented.STAGED_ENTRIES, STAGED_DEFINES,
                       extra=[template("spla_spmv_staged_finish", dtype) for dtype in VALUE_TYPES]
                       + [kernel_name("staged_narrow", dtype, index, t) for dtype in VALUE_TYPES
                          for index in INDEX_TYPES for t in segmented.STAGED_ENTRIES]),
    # staged over a matrix of one value (segmented.staged_uniform): a module of its own, so that
    # staged's first call on other matrices does not compile it
    "staged_uniform": KernelSource("spmv_staged.cu", [kernel_name(f"staged{entry}_uniform", dtype, index, t)
                                                      for entry in ("", "_narrow") for dtype in VALUE_TYPES
                                                      for index in INDEX_TYPES for t in segmented.STAGED_ENTRIES],
                                   STAGED_DEFINES),
    # ... and over a palette of its values (segmented.staged_palette): a byte a nonzero, a module of its own too
    "staged_palette": KernelSource("spmv_staged.cu", [kernel_name(f"staged{entry}_palette", dtype, index, t)
                                                      for entry in ("", "_narrow") for dtype in VALUE_TYPES
                                                      for index in INDEX_TYPES for t in segmented.STAGED_ENTRIES],
                                   STAGED_DEFINES),
    # blocked's second launch, the sum of each row's column blocks (its first is staged's)
    "blocked": _declare("spmv_blocked.cu", "spla_spmv_blocked"),
    # diagonals carry no column indices: one instance per value type and rows a thread, of the values'
    # entry and of the palette's (one-byte codes into a table of A's values: dia.palette)
    "dia": KernelSource("spmv_dia.cu", [kernel_name(f"dia{entry}", dtype, None, rows) for entry in ("", "_palette")
                                        for dtype in VALUE_TYPES for rows in dia.rows_choices(dtype)],
                        (f"-DSPLA_ROW_BLOCK={ROW_BLOCK}", f"-DSPLA_PALETTE_VALUES={palette.VALUES}")),
    # band and rle: a second entry that rotates value loads (spla.planning.banks)
    **{family: _declare(f"spmv_{family}.cu", f"spla_spmv_{family}", lambda dtype: LANE_WIDTHS,
                        (f"-DSPLA_VALUE_UNROLL={banks.UNROLL}",),
                        extra=[kernel_name(f"{family}_rotated", np.dtype(f"f{size}"), index, lanes)
                               for size in banks.ROTATE_ITEMSIZES[family] for index in INDEX_TYPES
                               for lanes in banks.ROTATE_LANES])
       for family in ("band", "rle")},
}

_FUNCTIONS: dict = {}  # (family, dtype, index dtype, param, device) -> RawKernel: no lookups per call


def function(cupy, family: str, dtype, index_dtype, param=None, entry: str = ""):
    """The compiled kernel of one instantiation on the current device (``entry``: a second entry
    point of the family's file, ``spla_spmv_{family}{entry}``)."""
    key = (family + entry, dtype, index_dtype, param, cupy.cuda.runtime.getDevice())
    kernel = _FUNCTIONS.get(key)
    if kernel is None:
        kernel = _FUNCTIONS[key] = SOURCES[family].function(kernel_name(family + entry, dtype, index_dtype, param))
    return kernel


def _grid(n_items: int, per_block: int) -> int:
    return max(1, min(ceil_div(n_items, per_block), MAX_BLOCKS))


# |A| |x| in float64, a warp a row (kernels/abs_product.cu): the scale spla.tune judges products by
ABS_PRODUCT_SOURCE = _declare("abs_product.cu", "spla_abs_product")


def abs_product(cupy, A, x):
    """``|A| |x|`` in float64 for the device matrix A (x in A's value dtype), read from A's CSR
    arrays: no copy of A's values and no plan (a structured plan's values may be a palette)."""
    out = cupy.empty(A.n_rows, dtype=np.float64)
    if A.n_rows:
        kernel = ABS_PRODUCT_SOURCE.function(template("spla_abs_product", A.dtype, A.index_dtype))
        kernel((_grid(A.n_rows, ROW_BLOCK // 32),), (ROW_BLOCK,),
               (np.int64(A.n_rows), A.indptr, A.indices, A.data, x, out))
    return out


class Launcher:
    """One (matrix, plan) bound: ``launch(x, out, alpha, beta)`` runs it.

    ``fast`` is the hot path of ``spla.spmv``: it takes the common call (x a
    contiguous CuPy vector of A's dtype, beta == 0, out absent or a matching
    vector, same device) and returns None for anything else, which then goes
    through every check. Dtypes are compared by identity (NumPy's native dtypes are
    singletons; an equal one that is not goes the checked way): ``==`` cost 0.1 us.

    ``row_lanes`` is set where the launch is one plain row kernel, a thread
    per row (scalar: 1) or a group of lanes per row (warp: its LANES), whose
    mapping a fused kernel can repeat (CG's product, kernels/solver_cg_product.cu);
    None for every other kernel. ``entry``: which of the family's entry points the launch
    runs (``spla_spmv_{family}{entry}``; segmented's ``_bits`` or ``_bits_short`` where no row
    is empty), so a benchmark's variant of the file compiles the same one.
    """

    row_lanes: int | None = None
    entry: str = ""

    def __init__(self, cupy, A):
        self.cupy = cupy
        self.ndarray = cupy.ndarray
        self.empty = cupy.empty
        self.get_device = cupy.cuda.runtime.getDevice
        self.device = self.get_device()
        self.dtype = A.dtype
        self.scalar = A.dtype.type
        self.one, self.zero = self.scalar(1), self.scalar(0)
        self.n_rows, self.n_cols = A.shape
        self.x_shape, self.y_shape = (A.shape[1],), (A.shape[0],)
        self.contiguous = c_contiguity(cupy)

    def fast(self, x, alpha, beta, out):
        if (beta != 0 or type(x) is not self.ndarray or x.shape != self.x_shape or x.dtype is not self.dtype
                or not self.contiguous(x) or self.get_device() != self.device):
            return None
        if out is None:
            out = self.empty(self.n_rows, self.dtype)
        elif (type(out) is not self.ndarray or out.shape != self.y_shape or out.dtype is not self.dtype
              or not self.contiguous(out)):
            return None
        return self.launch(x, out, self.one if alpha == 1 else self.scalar(alpha), self.zero)

    def launch(self, x, out, alpha, beta):
        raise NotImplementedError

    def _pack(self, kernel, grid: int, block: int, head: tuple, tail: tuple = (), shared_mem: int = 0):
        """Bind one raw kernel whose arguments are ``(*head, x, y, alpha, beta, *tail)``:
        packed once (:class:`~.runtime.PackedLaunch`), so :meth:`_launch_packed` rewrites
        four slots and makes one driver call."""
        self.kernel, self.grid, self.block = kernel, (grid,), (block,)
        self.head, self.tail, self.shared_mem = head, tail, shared_mem
        self.packed = PackedLaunch(self.cupy, kernel, grid, block, (*head, None, None, None, None, *tail), shared_mem)
        at = len(head)
        self._x_slot, self._y_slot = at, at + 1
        self._values = self.packed.values(self.dtype)
        self._alpha_item = self.packed.value_index(at + 2, self.dtype)
        self._beta_item = self.packed.value_index(at + 3, self.dtype)
        self._alpha = self._beta = None  # the scalars in the slots (the hot path passes the same objects)

    def _launch_packed(self, x, out, alpha, beta):
        packed = self.packed
        with packed.lock:
            slots = packed.slots
            slots[self._x_slot] = x.data.ptr
            slots[self._y_slot] = out.data.ptr
            if alpha is not self._alpha:
                self._values[self._alpha_item] = self._alpha = alpha
            if beta is not self._beta:
                self._values[self._beta_item] = self._beta = beta
            packed.launch()
        return out

    def variant(self, kernel, *, threads_per_tile: int | None = None, grid: int | None = None):
        """A copy of this launcher that runs another compiled ``kernel`` with the same arguments:
        the benchmark hook for A/B-ing a kernel file's variants (``scripts/ab_kernel.py``).

        ``threads_per_tile``: a block size set in the variant (``-D``), the grid re-derived
        for one tile per warp (not staged: its tiles are planned for its block); ``grid``: an
        explicit grid. Launchers of one raw kernel take it (adaptive's and adaptive2's where no
        rows go to dense panels), and staged, whose finish launch still follows the swapped kernel.
        """
        one_kernel = (isinstance(self, (_RowLauncher, _SegmentedLauncher, _StagedLauncher))
                      or (isinstance(self, _AdaptiveLauncher) and self.has_rows and not self.panels))
        if not one_kernel:
            raise KernelError(f"{type(self).__name__} does not launch one raw kernel here; it has no variants")
        if threads_per_tile is not None and isinstance(self, (_StagedLauncher, _AdaptiveLauncher)):
            raise KernelError("staged's tiles and adaptive's plans are made for the compiled block: no block variants")
        copy = object.__new__(type(self))
        copy.__dict__.update(self.__dict__)
        copy.row_lanes = None  # another kernel: no fused kernel knows its mapping
        block = self.block[0] if threads_per_tile is None else threads_per_tile
        if grid is None:
            grid = self.grid[0] if threads_per_tile is None else _grid(int(self.head[0]), threads_per_tile // 32)
        copy._pack(kernel, grid, block, self.head, self.tail, self.shared_mem)
        return copy


class _RowLauncher(Launcher):
    """One raw kernel, one launch, arguments packed once except x, y, alpha, beta: scalar / warp /
    vector over A's CSR arrays (``head``: n_rows, indptr, indices, data), and the structured
    kernels over their own ``head``."""

    def __init__(self, cupy, A, kernel, grid, block, row_lanes=None, head=None):
        super().__init__(cupy, A)
        self._pack(kernel, grid, block, (np.int64(A.n_rows), A.indptr, A.indices, A.data) if head is None else head)
        self.row_lanes = row_lanes

    launch = Launcher._launch_packed


# A row plan's arrays on one device and dtype, uploaded once per plan.
_ADAPTIVE_STATES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


class _AdaptiveState:
    """A row plan's arrays on the GPU for one value dtype."""

    def __init__(self, cupy, plan: adaptive.Plan, A):
        dtype = A.dtype
        self.blocks = cupy.asarray(plan.blocks)
        self.row_list = cupy.asarray(plan.row_list)
        self.split_offsets = cupy.asarray(plan.split_offsets)
        n_split = plan.split_offsets.size - 1
        self.split_partials = cupy.empty(max(1, int(plan.split_offsets[-1])), dtype=dtype)
        # Zeroed once; the last chunk of each split row resets its counter.
        self.split_counters = cupy.zeros(max(1, n_split), dtype=np.uint32)
        self.chunk = np.int64(plan.thresholds.chunk)
        self.panels = dense_panels.gather_panels(A, plan.dense_panels, dtype)


class _AdaptiveLauncher(Launcher):
    """adaptive / adaptive2: the plan's arrays on the GPU, one launch (+ dense panels for adaptive)."""

    def __init__(self, cupy, A, family: str, plan: adaptive.Plan):
        super().__init__(cupy, A)
        states = _ADAPTIVE_STATES.setdefault(plan, {})
        key = (cupy.cuda.Device().id, A.dtype.str)
        state = states.get(key)
        if state is None:
            state = states[key] = _AdaptiveState(cupy, plan, A)
        self.state = state
        self.panels = state.panels if family == "adaptive" else []
        n_blocks = plan.n_main_blocks if self.panels else plan.blocks.shape[0]
        self.has_rows = n_blocks > 0  # False when the dense panels hold every row
        if self.has_rows:
            matrix = (A.indptr, A.indices, A.data)
            row_list = (state.row_list,) if family == "adaptive2" else ()
            self._pack(function(cupy, family, A.dtype, A.index_dtype), min(n_blocks, MAX_BLOCKS),
                       adaptive.ADAPTIVE_THREADS, (state.blocks, np.int64(n_blocks), *row_list, *matrix),
                       (state.chunk, state.split_offsets, state.split_partials, state.split_counters))

    def launch(self, x, out, alpha, beta):
        if self.has_rows:
            self._launch_packed(x, out, alpha, beta)
        for panel in self.panels:  # rows dense enough for the GEMV core
            rows = out[panel.rows] if beta != 0 else self.empty(panel.rows.size, self.dtype)
            out[panel.rows] = gemv(panel.matrix, x[panel.col_begin:panel.col_end], rows, alpha=alpha, beta=beta)
        return out


class _OutputLaunch:
    """A second launch that writes y from what the first left (staged's finish over its cut rows,
    blocked's sum of each row's pairs): its arguments ``(*head, y, alpha, beta)`` packed once, the
    last three set per call. A caller holds :attr:`lock` around both launches: another thread's
    first launch would overwrite the partial sums between them."""

    def __init__(self, cupy, kernel, grid: int, block: int, head: tuple, dtype):
        self.packed = PackedLaunch(cupy, kernel, grid, block, (*head, None, None, None))
        self.lock = self.packed.lock
        self._y = len(head)
        self._values = self.packed.values(dtype)
        self._alpha = self.packed.value_index(self._y + 1, dtype)
        self._beta = self.packed.value_index(self._y + 2, dtype)

    def launch(self, out, alpha, beta) -> None:
        self.packed.slots[self._y] = out.data.ptr
        self._values[self._alpha] = alpha
        self._values[self._beta] = beta
        self.packed.launch()


def _tile_state(cupy, A, plan: SpmvPlan, last):
    """A tile kernel's arrays on A's device, allocated once per (matrix, family, parameter, dtype):
    the tile ownership, the cut rows' head and tail partial sums, and ``last()`` (segmented's
    counters, staged's cut rows)."""
    assert plan.tile_rows is not None
    key = (f"{plan.family}-state", plan.param, cupy.cuda.Device().id, A.dtype.str)
    state = A._cache.get(key)
    if state is None:
        n_tiles = plan.tile_rows.size - 1
        state = A._cache[key] = (cupy.asarray(plan.tile_rows), cupy.empty(n_tiles, dtype=A.dtype),
                                 cupy.empty(n_tiles, dtype=A.dtype), last())
    return state


class _SegmentedLauncher(Launcher):
    """segmented: one warp per tile of 32 * K nonzeros; counters zeroed once (the tile that
    finishes a cut row resets its counter). Where the plan has the row ends' bits (no empty
    row), the entry point that reads them instead of walking the rows, and where no row is
    longer than a tile, the one that leaves out the rows over three tiles."""

    def __init__(self, cupy, A, plan: SpmvPlan):
        super().__init__(cupy, A)
        assert plan.param is not None and plan.tile_rows is not None
        entries, n_tiles = plan.param, plan.tile_rows.size - 1
        tile_rows, head_partials, tail_partials, counters = _tile_state(
            cupy, A, plan, lambda: cupy.zeros(n_tiles, dtype=np.uint32))
        # the kernel's list of a tile's ending rows, wanted only where a row is empty
        shared_mem = segmented.SEGMENTED_WARPS * 32 * entries * 4 if plan.empty_rows else 0
        bits: tuple = ()
        if plan.end_bits is not None:
            key = ("segmented-end-bits-device", entries, cupy.cuda.Device().id)
            if key not in A._cache:
                A._cache[key] = cupy.asarray(plan.end_bits)
            bits = (A._cache[key],)
        self.entry = ("_bits_short" if plan.rows_within_tile else "_bits") if bits else ""
        self._pack(function(cupy, "segmented", A.dtype, A.index_dtype, entries, self.entry),
                   _grid(n_tiles, segmented.SEGMENTED_WARPS), segmented.SEGMENTED_THREADS,
                   (np.int64(n_tiles), np.int64(A.nnz), tile_rows, A.indptr, A.indices, A.data),
                   (head_partials, tail_partials, counters, *bits), shared_mem)

    launch = Launcher._launch_packed


class _StagedLauncher(Launcher):
    """staged: one block per tile of STAGED_THREADS * T nonzeros. Where tile edges cut rows
    (spla.planning.segmented.staged_cut_rows), the kernel finishes them itself when they are few
    (STAGED_ONE_LAUNCH_CUT: one launch, a counter a cut row), else the finish kernel does, over
    the cut rows, in a second packed launch."""

    finish: _OutputLaunch | None = None

    def __init__(self, cupy, A, plan: SpmvPlan):
        super().__init__(cupy, A)
        assert plan.param is not None and plan.tile_rows is not None
        T, n_tiles = plan.param, plan.tile_rows.size - 1
        # the cut rows, and a counter for each tile's cut row (zeroed once; the finishing warp resets it)
        tile_rows, head_partials, tail_partials, (cut, counters) = _tile_state(
            cupy, A, plan, lambda: (cupy.asarray(segmented.staged_cut_rows(A, segmented.STAGED_THREADS * T)),
                                    cupy.zeros(n_tiles, dtype=np.uint32)))
        n_cut = cut.shape[0]
        self.one_launch = segmented.staged_in_one_launch(n_cut)
        # 2-byte column offsets (and the tiles' first columns) in place of the indices where they fit
        narrow = segmented.staged_narrow_columns(A, T)
        columns = (A.indices,) if narrow is None else narrow
        self.entry = "" if narrow is None else "_narrow"
        # how the values are read: a byte a nonzero into a palette's table, one value at data[0], or each
        coded = segmented.staged_palette(A)
        suffix = "_palette" if coded is not None else "_uniform" if segmented.staged_uniform(A) else ""
        values = (A.data,) if coded is None else (coded.table, np.int32(coded.table.size), coded.codes)
        self.entry += suffix
        if suffix:  # a module of its own, compiled on first use
            kernel = SOURCES[f"staged{suffix}"].function(kernel_name(f"staged{self.entry}", A.dtype, A.index_dtype, T))
        else:
            kernel = function(cupy, "staged", A.dtype, A.index_dtype, T, self.entry)
        self._pack(kernel, _grid(n_tiles, 1), segmented.STAGED_THREADS,
                   (np.int64(n_tiles), np.int64(A.nnz), tile_rows, A.indptr, *columns, *values),
                   (head_partials, tail_partials, counters if self.one_launch else np.uint64(0)))  # 0: nullptr
        if not self.one_launch:
            kernel = SOURCES["staged"].function(template("spla_spmv_staged_finish", A.dtype))
            self.finish = _OutputLaunch(cupy, kernel, _grid(n_cut, segmented.STAGED_THREADS // 32),
                                        segmented.STAGED_THREADS,
                                        (np.int64(n_cut), cut, head_partials, tail_partials), A.dtype)

    def launch(self, x, out, alpha, beta):
        finish = self.finish
        if finish is None:
            return self._launch_packed(x, out, alpha, beta)
        with finish.lock:  # both launches as one (_OutputLaunch)
            self._launch_packed(x, out, alpha, beta)
            finish.launch(out, alpha, beta)
        return out


class _BlockedLauncher(Launcher):
    """blocked: the plan's staged launch over A regrouped by column blocks (spla.planning.blocked, a
    copy cached on A) into a partial sum a (block, row) pair, then the sum of each row's partials
    into y (one more launch, packed once; y, alpha and beta set per call)."""

    def __init__(self, cupy, A, plan: SpmvPlan):
        super().__init__(cupy, A)
        found = plan.regrouped
        assert found is not None and plan.inner is not None
        self.staged = _StagedLauncher(cupy, found.matrix, plan.inner)
        self.partials = cupy.empty(found.matrix.n_rows, dtype=A.dtype)
        self.sum = _OutputLaunch(cupy, function(cupy, "blocked", A.dtype, A.index_dtype), _grid(A.n_rows, ROW_BLOCK),
                                 ROW_BLOCK, (np.int64(A.n_rows), found.pair_ptr, found.pairs, self.partials), A.dtype)

    def launch(self, x, out, alpha, beta):
        with self.sum.lock:  # both launches as one (_OutputLaunch)
            self.staged.launch(x, self.partials, self.one, self.zero)
            self.sum.launch(out, alpha, beta)
        return out


class _DiaLauncher(_RowLauncher):
    """dia: A's diagonals (spla.planning.dia: offsets and a value per row each), ``rows`` rows a
    thread (``dia.rows_for``).

    ``diagonals`` (the structure, and its palette or None) is what the fused CG kernels read, a
    thread a row (spla.backends.cuda.solvers); ``row_kernel``, the scalar launcher over A's CSR
    arrays, gives them that mapping's grid."""

    def __init__(self, cupy, A, structure: dia.Structure, rows: int):
        coded = dia.palette(A, structure)  # a byte a slot, where A's values fit a table
        self.diagonals = (structure, coded)
        self.entry = "" if coded is None else "_palette"
        slots = (structure.values,) if coded is None else (coded.table, np.int32(coded.table.size), coded.codes)
        super().__init__(cupy, A, function(cupy, "dia", A.dtype, A.index_dtype, rows, self.entry),
                         _grid(ceil_div(A.n_rows, rows), ROW_BLOCK), ROW_BLOCK,
                         head=(np.int64(A.n_rows), np.int64(A.n_cols), np.int64(structure.stride),
                               np.int32(structure.n_diagonals), structure.offsets, *slots))
        self.row_kernel = _row_launcher(cupy, A, "scalar", None)


class _WarpMappedLauncher(_RowLauncher):
    """band and rle: warp's launch with a structure's arrays in place of A's column indices (band:
    each row's first column, spla.planning.band; rle: A's runs, spla.planning.rle), through the entry
    "_rotated" where their value loads rotate (spla.planning.banks.rotates).
    ``row_kernel`` is the warp launcher of the same lanes over A's CSR arrays, whose mapping the
    fused CG kernels repeat."""

    def __init__(self, cupy, A, family: str, columns: tuple, lanes: int):
        entry = "_rotated" if banks.rotates(A, family, lanes) else ""
        super().__init__(cupy, A, function(cupy, family, A.dtype, A.index_dtype, lanes, entry),
                         _grid(A.n_rows, ROW_BLOCK // lanes), ROW_BLOCK,
                         head=(np.int64(A.n_rows), A.indptr, *columns, A.data))
        self.entry = entry
        self.row_kernel = _row_launcher(cupy, A, "warp", lanes)


class _CusparseLauncher(Launcher):
    """The lean cuSPARSE call, with the same hot path as spla's kernels."""

    def __init__(self, cupy, A, alg=None):
        super().__init__(cupy, A)
        self.launch = cusparse.spmv_anchor(A, alg)  # type: ignore[method-assign]


class _EmptyLauncher(Launcher):
    """A matrix with no nonzeros (cuSPARSE refuses some) or no rows: y = beta * y."""

    def launch(self, x, out, alpha, beta):
        if beta == 0:
            out.fill(0)
        else:
            out *= beta
        return out


class _CupyxLauncher(Launcher):
    """``cupyx`` ``csr_matrix @ x``: cuSPARSE as a CuPy user calls it (a second anchor)."""

    def __init__(self, cupy, A):
        super().__init__(cupy, A)
        self.matrix = cusparse.cupyx_matrix(A)

    def launch(self, x, out, alpha, beta):
        product = self.matrix @ x
        if beta == 0:
            out[...] = product if alpha == 1 else alpha * product
        else:
            out[...] = alpha * product + beta * out
        return out


def _misaligned(A) -> str | None:
    """The first of A.data and A.indices not on a 16-byte boundary (the vector kernel's packs need
    both aligned), or None."""
    return next((what for what, array in (("data", A.data), ("indices", A.indices))
                 if array.data.ptr % VECTOR_ALIGNMENT), None)


def bind(cupy, A, plan: SpmvPlan) -> Launcher:
    """A launcher for ``plan`` on the device matrix A (arguments prebuilt)."""
    family = plan.family
    if A.n_rows == 0 or (A.nnz == 0 and family in ("cusparse", "cusparse-cupy")):
        return _EmptyLauncher(cupy, A)
    if family == "cusparse":
        return _CusparseLauncher(cupy, A, plan.param)
    if family == "cusparse-cupy":
        return _CupyxLauncher(cupy, A)
    if family == "segmented":
        return _SegmentedLauncher(cupy, A, plan)
    if family == "staged":
        return _StagedLauncher(cupy, A, plan)
    if family == "blocked":
        return _BlockedLauncher(cupy, A, plan)
    if family == "dia":
        assert isinstance(plan.structure, dia.Structure) and plan.param is not None
        return _DiaLauncher(cupy, A, plan.structure, plan.param)
    if family == "band":
        assert isinstance(plan.structure, band.Structure) and plan.param is not None
        return _WarpMappedLauncher(cupy, A, family, (plan.structure.first,), plan.param)
    if family == "rle":
        found = plan.structure
        assert isinstance(found, rle.Structure) and plan.param is not None
        return _WarpMappedLauncher(cupy, A, family, (found.run_ptr, found.run_start, found.run_col), plan.param)
    if family in ("adaptive", "adaptive2"):
        assert plan.adaptive is not None
        return _AdaptiveLauncher(cupy, A, family, plan.adaptive)
    misaligned = _misaligned(A) if family == "vector" else None
    if misaligned is not None:
        if plan.kernel not in ("auto", "tune"):
            raise KernelError(f"the vector kernel needs A.{misaligned} on a {VECTOR_ALIGNMENT}-byte boundary (it is "
                              f"at {getattr(A, misaligned).data.ptr:#x}); copy the matrix or use kernel='warp'")
        family = "warp"  # auto's vector on views at odd offsets: the same lanes, single loads
    return _row_launcher(cupy, A, family, plan.param)


def _row_launcher(cupy, A, family: str, lanes: int | None) -> _RowLauncher:
    """scalar (a thread per row), warp or vector (``lanes`` a row) over A's CSR arrays; the
    fused CG kernels know the mapping of scalar and warp (``row_lanes``)."""
    if family == "scalar":
        return _RowLauncher(cupy, A, function(cupy, "scalar", A.dtype, A.index_dtype), _grid(A.n_rows, ROW_BLOCK),
                            ROW_BLOCK, row_lanes=1)
    assert lanes is not None
    return _RowLauncher(cupy, A, function(cupy, family, A.dtype, A.index_dtype, lanes),
                        _grid(A.n_rows, ROW_BLOCK // lanes), ROW_BLOCK, row_lanes=lanes if family == "warp" else None)
