"""CUDA SpMM: ``Y = alpha * A @ X + beta * Y`` for a dense block X of k columns.

Kernels (``KERNELS``; every name also works through ``spla.spmm(..., kernel=)``):

``regk``
    kernels/spmm_regk.cu. k <= 16: a group of SUB lanes (1, 2, 4, 8, from the
    mean row length) per row keeps all k output columns in registers. Reads A
    once; takes row-major and column-major (F-order) X as they are.
``warp``
    kernels/spmm_warp.cu. One warp per row: (col, val) loaded once per chunk
    of 32 and broadcast by shuffles while the lanes stream X's rows with
    vector loads. Any k (wider k is split into column tiles over gridDim.y).
``subwarp``
    kernels/spmm_subwarp.cu. Short rows at k > 16: a group of lanes spanning
    k takes one row, 32/group rows per warp, no shuffles. Any k.
``adaptive``
    The SpMV plan's row bins (``spla.plan.plan_for``), each cut into length
    classes run by the kernel shape that suits them at this k (rows up to 64
    nonzeros: ``regk`` for k <= 16, else ``subwarp``; longer rows: ``warp``);
    rows longer than ``SEGMENT_NNZ`` are cut into segments of that many
    nonzeros, one warp each (atomicAdd into Y); the plan's dense panels are
    gathered once into dense blocks over their column spans and multiplied
    against the matching rows of X through ``gemm_cuda.gemm``: the GEMM core
    (``dbuf``) when its 128x128 tiles fill the GPU, cuBLAS otherwise
    (:func:`dense_gemm_kernel`; ``dense_gemm=`` forces one).
``adaptive-sparse``
    The same schedule with the dense rows left on the sparse path (the
    baseline of the hybrid benchmark).
``fused``
    kernels/spmm_fused.cu, k <= 16 (wider k runs ``adaptive``): the whole
    adaptive schedule as ONE launch: each length class (lanes per row 1..32,
    about 8 nonzeros per lane) and the segments of rows over ``SEGMENT_NNZ``
    are block ranges of one grid, longest work first, so their tails overlap
    instead of adding up; row lists and the class table are built once
    (:func:`fused_for`, cached on the matrix) and a call only launches
    (plus a tiny init of the segmented rows, and the dense panels as in
    ``adaptive``). Reads row- and column-major X directly.
``fused16``
    ``fused`` with about 16 nonzeros per lane (fewer lanes and shuffles per row).
``fused-sparse``
    ``fused`` with the dense rows left on the sparse path.
``spmv-loop``
    k separate ``auto`` SpMVs (``spmv_cuda``), one per column: what a user
    without SpMM pays; the CLI and the benchmark report the speed-up over it.
``cusparse``
    cuSPARSE SpMM (``cusparseSpMM``, row-major X and Y) with descriptors and
    buffer built once per matrix and k: the kernel-level anchor.
``cusparse-cupy``
    ``cupyx.scipy.sparse.csr_matrix @ X``: cuSPARSE as a CuPy user calls it
    (descriptors, buffer and an F-order copy each call); the issue's
    "cuSPARSE SpMM" figure. Both anchors mirror ``spmv_cuda``'s names.
``auto``
    :func:`choose_kernel`: k == 1 -> ``spmv-loop`` (the SpMV planner);
    a longest row over ``SEGMENT_NNZ`` nonzeros or over ``8 * mean + 64``
    (skewed rows) -> ``fused`` for k <= 16 (``AUTO_SKEWED_SMALL_K``), else
    ``adaptive``; else a mean row length <= 64 -> ``regk``
    (k <= 16) or ``subwarp`` (k > 16); else ``warp``.

Layouts: X may be C-ordered, F-ordered, or a strided view. ``regk`` and ``fused`` read
row-major X (unit column stride, any row stride) and column-major X (unit row
stride) directly; every other kernel needs row-major X and gets a C-contiguous
copy when X is not (one extra pass over X: say so in benchmarks, or pass C
order). The result is always a new C-contiguous array; Y is read only when
``beta != 0`` (then any layout), so a NaN-filled Y with ``beta=0`` is harmless.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import cuda
from ..cuda import KernelSource, ceil_div, grid_1d
from ..errors import KernelError

BLOCK = 256  # threads per block for every SpMM launch: 8 warps
assert BLOCK % 32 == 0, "sub-warp groups and warps must not straddle blocks"

REGK_K = (1, 2, 4, 8, 16)      # columns held in registers by spla_spmm_regk
REGK_MAX_K = REGK_K[-1]
REGK_SUB = (1, 2, 4, 8)        # lanes per row in spla_spmm_regk
WARP_CL = (1, 2, 4, 8, 16, 32)  # lanes along k in spla_spmm_warp
WARP_J_WIDE = (2, 4)            # vectors per lane once CL == 32
MAX_GRID_Y = 65535

# Rows longer than this are cut into segments of this many nonzeros, one warp
# each: a warp walks a row chunk by chunk (32 entries, one dependent load each),
# so a 1M-nnz row on one warp would take ~30k chunk latencies (~ms) while the
# rest of the matrix finishes in well under a millisecond.
SEGMENT_NNZ = 1024

VALUE_TYPES = {np.dtype(np.float32): "float", np.dtype(np.float64): "double"}
INDEX_TYPES = {np.dtype(np.int32): "int", np.dtype(np.int64): "long long"}
WARP_VECTOR = {"float": 4, "double": 2}  # 16-byte loads


def _warp_configs():
    return [(cl, 1) for cl in WARP_CL] + [(32, j) for j in WARP_J_WIDE]


def _warp_name(value, index, vec, cl, j, segmented):
    return f"spla_spmm_warp<{value}, {index}, {vec}, {cl}, {j}, {'true' if segmented else 'false'}>"


def _subwarp_name(value, index, vec, cl, j):
    return f"spla_spmm_subwarp<{value}, {index}, {vec}, {cl}, {j}>"


def _regk_name(value, index, k_reg, sub, colmajor):
    return f"spla_spmm_regk<{value}, {index}, {k_reg}, {sub}, {'true' if colmajor else 'false'}>"


# One KernelSource per (value, index[, layout]) so that a float32/int32 run
# compiles only its own 32 (warp), 16 (subwarp) or 20 (regk) instantiations.
WARP_SOURCES = {
    (value, index): KernelSource("spmm_warp.cu", [
        _warp_name(value, index, vec, cl, j, segmented)
        for vec in (1, WARP_VECTOR[value]) for cl, j in _warp_configs() for segmented in (False, True)])
    for value in VALUE_TYPES.values() for index in INDEX_TYPES.values()
}
SUBWARP_SOURCES = {
    (value, index): KernelSource("spmm_subwarp.cu", [
        _subwarp_name(value, index, vec, cl, j) for vec in (1, WARP_VECTOR[value]) for cl, j in _warp_configs()])
    for value in VALUE_TYPES.values() for index in INDEX_TYPES.values()
}
REGK_SOURCES = {
    (value, index, colmajor): KernelSource("spmm_regk.cu", [
        _regk_name(value, index, k_reg, sub, colmajor) for k_reg in REGK_K for sub in REGK_SUB])
    for value in VALUE_TYPES.values() for index in INDEX_TYPES.values() for colmajor in (False, True)
}



def _fused_name(value, index, k_reg, colmajor):
    return f"spla_spmm_fused<{value}, {index}, {k_reg}, {'true' if colmajor else 'false'}>"


def _init_rows_name(value, index):
    return f"spla_spmm_init_rows<{value}, {index}>"


FUSED_SOURCES = {
    (value, index, colmajor): KernelSource("spmm_fused.cu", [
        _fused_name(value, index, k_reg, colmajor) for k_reg in REGK_K] + [_init_rows_name(value, index)])
    for value in VALUE_TYPES.values() for index in INDEX_TYPES.values() for colmajor in (False, True)
}


# ---------------------------------------------------------------- operands
@dataclass
class Operand:
    """A dense block as the kernels see it: base array, leading dimension, layout."""

    array: object      # cupy.ndarray (may be a strided view)
    ld: int            # elements between consecutive rows (row-major) or columns (column-major)
    colmajor: bool


def as_operand(M, *, allow_colmajor: bool) -> Operand:
    """Describe M for a kernel without copying when its strides allow it.

    Row-major needs a unit column stride and a row stride >= k; column-major
    (only where the kernel supports it) a unit row stride and a column stride
    >= n. Anything else (negative, zero or odd strides) becomes a
    C-contiguous copy.
    """
    cupy = cuda.require_cupy()
    n, k = M.shape
    item = M.itemsize
    s0, s1 = M.strides
    if M.size and s0 > 0 and s1 > 0 and s0 % item == 0 and s1 % item == 0:
        if (s1 == item or k == 1) and s0 >= k * item:
            return Operand(M, s0 // item, False)
        if allow_colmajor and (s0 == item or n == 1) and s1 >= n * item:
            return Operand(M, s1 // item, True)
    M = cupy.ascontiguousarray(M)
    return Operand(M, max(k, 1), False)


def _aligned(array, nbytes: int) -> bool:
    return array.data.ptr % nbytes == 0


def _regk_vector_width(itemsize: int, k_reg: int) -> int:
    """Mirror of RowVector<T, K>::width in kernels/spmm_common.cuh (elements)."""
    row_bytes = k_reg * itemsize
    if row_bytes % 16 == 0:
        return 16 // itemsize
    if row_bytes % 8 == 0:
        return 8 // itemsize
    return 1


def _next_pow2(n: int) -> int:
    return 1 << max(0, int(n) - 1).bit_length()


def _types(A):
    try:
        return VALUE_TYPES[A.dtype], INDEX_TYPES[A.index_dtype]
    except KeyError:
        raise KernelError(f"no SpMM kernel for {A.dtype}/{A.index_dtype}") from None


def _scalar(A, value):
    return A.dtype.type(value)


# ---------------------------------------------------------------- launches
def regk_sub(mean_row_length: float) -> int:
    """Lanes per row for spla_spmm_regk: about one nonzero per lane per 8 entries."""
    for sub in REGK_SUB:
        if mean_row_length <= 8 * sub:
            return sub
    return REGK_SUB[-1]


def launch_regk(A, x: Operand, k: int, out, y_in: Operand | None, alpha, beta, *, rows=None, sub: int = 1):
    """One spla_spmm_regk launch over all rows or the device row ids ``rows``."""
    if k > REGK_MAX_K:
        raise KernelError(f"regk keeps k columns in registers, at most {REGK_MAX_K}; k={k} (use warp)")
    if sub not in REGK_SUB:
        raise KernelError(f"regk runs {REGK_SUB} lanes per row, not {sub}")
    value, index = _types(A)
    n_work = A.n_rows if rows is None else int(rows.size)
    if n_work == 0:
        return
    k_reg = _next_pow2(k)
    width = _regk_vector_width(A.dtype.itemsize, k_reg)
    vbytes = width * A.dtype.itemsize
    vec_ok = (not x.colmajor and k == k_reg and x.ld % width == 0 and _aligned(x.array, vbytes)
              and _aligned(out, vbytes)
              and (y_in is None or (y_in.ld % width == 0 and _aligned(y_in.array, vbytes))))
    kernel = REGK_SOURCES[(value, index, x.colmajor)].function(_regk_name(value, index, k_reg, sub, x.colmajor))
    grid = grid_1d(n_work * sub, BLOCK)
    kernel((grid,), (BLOCK,), (
        A.indptr, A.indices, A.data, x.array, np.int64(x.ld), np.int64(k),
        A.indptr if rows is None else rows, np.int32(rows is not None), np.int64(n_work), np.int32(vec_ok),
        _scalar(A, alpha), _scalar(A, beta),
        out if y_in is None else y_in.array, np.int64(0 if y_in is None else y_in.ld), np.int32(y_in is not None),
        out, np.int64(out.shape[1])))


def warp_shape(k: int, vec: int):
    """(CL, J, column tiles) for spla_spmm_warp: fewest lanes along k that cover it."""
    per_lane_vectors = ceil_div(k, vec)
    if per_lane_vectors <= 32:
        cl, j = _next_pow2(per_lane_vectors), 1
    else:
        cl = 32
        j = WARP_J_WIDE[0] if per_lane_vectors <= 32 * WARP_J_WIDE[0] else WARP_J_WIDE[-1]
    tiles = ceil_div(k, cl * vec * j)
    if tiles > MAX_GRID_Y:
        raise KernelError(f"k={k} needs {tiles} column tiles, over CUDA's grid.y limit {MAX_GRID_Y}")
    return cl, j, tiles


def _warp_vector(A, x: Operand, k: int, out, y_in: Operand | None) -> int:
    value, _ = _types(A)
    vec = WARP_VECTOR[value]
    vbytes = vec * A.dtype.itemsize
    ok = (k % vec == 0 and x.ld % vec == 0 and _aligned(x.array, vbytes) and _aligned(out, vbytes)
          and (y_in is None or (y_in.ld % vec == 0 and _aligned(y_in.array, vbytes))))
    return vec if ok else 1


def launch_warp(A, x: Operand, k: int, out, y_in: Operand | None, alpha, beta, *, rows=None, segments=None):
    """One spla_spmm_warp launch: whole rows (all, or device ``rows``) or ``segments``.

    ``segments`` = (row ids, begin, end) device arrays; the caller must have
    written ``beta * y_in`` (or zeros) into those rows of ``out``.
    """
    if x.colmajor:
        raise KernelError("the warp kernel reads row-major X; pass a C-ordered X (spmm does this for you)")
    value, index = _types(A)
    if segments is not None:
        row_ids, seg_begin, seg_end = segments
        n_work = int(row_ids.size)
    else:
        row_ids, seg_begin, seg_end = rows, None, None
        n_work = A.n_rows if rows is None else int(rows.size)
    if n_work == 0:
        return
    vec = _warp_vector(A, x, k, out, None if segments is not None else y_in)
    cl, j, tiles = warp_shape(k, vec)
    kernel = WARP_SOURCES[(value, index)].function(_warp_name(value, index, vec, cl, j, segments is not None))
    grid = (grid_1d(n_work * 32, BLOCK), tiles)
    use_y = segments is None and y_in is not None
    kernel(grid, (BLOCK,), (
        A.indptr, A.indices, A.data, x.array, np.int64(x.ld), np.int64(k),
        A.indptr if row_ids is None else row_ids, np.int32(row_ids is not None),
        A.indptr if seg_begin is None else seg_begin, A.indptr if seg_end is None else seg_end,
        np.int64(n_work), _scalar(A, alpha), _scalar(A, beta),
        y_in.array if use_y else out, np.int64(y_in.ld if use_y else 0), np.int32(use_y),
        out, np.int64(out.shape[1])))


def launch_subwarp(A, x: Operand, k: int, out, y_in: Operand | None, alpha, beta, *, rows=None):
    """One spla_spmm_subwarp launch: a group of CL lanes per row (all rows, or device ``rows``)."""
    if x.colmajor:
        raise KernelError("the subwarp kernel reads row-major X; pass a C-ordered X (spmm does this for you)")
    value, index = _types(A)
    n_work = A.n_rows if rows is None else int(rows.size)
    if n_work == 0:
        return
    vec = _warp_vector(A, x, k, out, y_in)
    cl, j, tiles = warp_shape(k, vec)
    kernel = SUBWARP_SOURCES[(value, index)].function(_subwarp_name(value, index, vec, cl, j))
    grid = (grid_1d(n_work * cl, BLOCK), tiles)
    kernel(grid, (BLOCK,), (
        A.indptr, A.indices, A.data, x.array, np.int64(x.ld), np.int64(k),
        A.indptr if rows is None else rows, np.int32(rows is not None), np.int64(n_work),
        _scalar(A, alpha), _scalar(A, beta),
        out if y_in is None else y_in.array, np.int64(0 if y_in is None else y_in.ld), np.int32(y_in is not None),
        out, np.int64(out.shape[1])))


# ---------------------------------------------------------------- adaptive schedule
# Length classes that refine each plan bin for SpMM: the SpMV plan's "stream"
# bin spans rows of 0..256 nonzeros, and a thread per row is right for the
# short end but leaves a warp waiting on its longest row at the long end.
# A class of rows up to L nonzeros runs regk with L / 8 lanes per row (k <= 16)
# or subwarp (k > 16); longer rows run the warp kernel.
LENGTH_CLASSES = tuple(8 * sub for sub in REGK_SUB)  # 8, 16, 32, 64


@dataclass
class RowGroup:
    """Rows of one plan bin and length class that one launch handles."""

    name: str
    host_rows: np.ndarray
    nnz: int
    mean_length: float
    max_length: int
    rows: object = None  # device copy of host_rows in the matrix's index dtype

    def shape(self, k: int) -> str:
        """'regk', 'subwarp' or 'warp': the kernel shape for these rows at this k."""
        if self.max_length > LENGTH_CLASSES[-1]:
            return "warp"
        return "regk" if k <= REGK_MAX_K else "subwarp"

    def describe(self, k: int) -> str:
        shape = self.shape(k)
        if shape == "regk":
            return f"regk (K={_next_pow2(k)}, {regk_sub(self.max_length)} lanes/row)"
        if shape == "subwarp":
            return "subwarp (lanes along k, several rows per warp)"
        return "warp (a warp per row)"


@dataclass
class DevicePanel:
    """One of the plan's dense panels, gathered into a dense row-major block once."""

    host_rows: np.ndarray
    rows: object            # device int64 row ids, in panel order
    col_begin: int
    col_end: int            # exclusive
    matrix: object          # cupy (len(rows), col_end - col_begin), A's dtype
    nnz: int

    @property
    def density(self) -> float:
        return self.nnz / max(1, self.matrix.size)


@dataclass
class Schedule:
    """How ``adaptive`` runs one matrix at any k; built once and cached on the matrix."""

    groups: list
    long_rows: np.ndarray                  # host ids of the rows cut into segments
    long_rows_dev: object
    segments: tuple | None                 # device (row ids, begin, end)
    panels: list                           # DevicePanel, empty without a dense path

    @property
    def n_segments(self) -> int:
        return 0 if self.segments is None else int(self.segments[0].size)

    @property
    def dense_rows(self) -> int:
        return int(sum(p.host_rows.size for p in self.panels))

    def summary(self, k: int, dtype, dense_gemm: str | None = None) -> list:
        """One line per launch group, for ``spla spmm`` and the benchmark."""
        lines = []
        for g in self.groups:
            lines.append(f"{g.name}: {g.host_rows.size:,} rows, {g.nnz:,} nnz (mean {g.mean_length:.1f}, "
                         f"max {g.max_length}) -> {g.describe(k)}")
        if self.long_rows.size:
            lines.append(f"long rows: {self.long_rows.size:,} rows over {SEGMENT_NNZ} nnz -> "
                         f"{self.n_segments:,} warp segments of {SEGMENT_NNZ} nnz (atomicAdd)")
        for p in self.panels:
            lines.append(f"dense panel: {p.host_rows.size:,} rows x {p.col_end - p.col_begin:,} columns "
                         f"[{p.col_begin}, {p.col_end}), {p.nnz:,} nnz, density {p.density:.2f} -> GEMM "
                         f"{dense_gemm or dense_gemm_kernel(p.host_rows.size, k, dtype, p.col_end - p.col_begin)}")
        return lines


def split_rows(lengths: np.ndarray, bins, dense_rows, *, long_row: int = SEGMENT_NNZ):
    """Partition every row exactly once into launch groups and long rows.

    ``bins`` are (name, host row ids) from the SpMV plan; each is refined into
    the ``LENGTH_CLASSES`` (``"stream<=8"``, ...; ``"block>64"`` for longer).
    Rows longer than ``long_row`` go to the segmented path. ``dense_rows``
    (handled by the dense panels) are left out. A row the plan lists twice goes
    to the first place that claims it, and rows no bin names form the group
    "rest", so every output row is written exactly once. Host-side NumPy only,
    so it is tested without a GPU.
    """
    assert long_row > LENGTH_CLASSES[-1], "length classes must lie below the segmented rows"
    n_rows = lengths.shape[0]
    claimed = np.zeros(n_rows, dtype=bool)
    claimed[np.asarray(dense_rows, dtype=np.int64)] = True
    groups, long_rows = [], []
    bounds = (-1,) + LENGTH_CLASSES + (long_row,)

    def take(name, rows):
        # sorted, unique and unclaimed through a mask: O(n), where np.unique's hash path took
        # ~1 s per 4M rows (24 s of schedule building on the 16.7M-row Poisson matrix, round 1)
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
    counts = -(-(ends - begins) // seg_nnz)
    seg_row = np.repeat(long_rows, counts)
    first = np.repeat(np.cumsum(counts) - counts, counts)
    within = np.arange(seg_row.size, dtype=np.int64) - first
    seg_begin = np.repeat(begins, counts) + within * seg_nnz
    seg_end = np.minimum(seg_begin + seg_nnz, np.repeat(ends, counts))
    return seg_row, seg_begin, seg_end


def _gather_panel(A, panel) -> DevicePanel:
    """Scatter one plan panel's rows into a dense block on the device."""
    cupy = cuda.require_cupy()
    import cupyx

    # Widen the span to a multiple of 4 columns (zeros, within the matrix) so that
    # the GEMM core's float4 loads need no per-call padded copy of the panel.
    width = -(-(panel.col_end - panel.col_begin) // 4) * 4
    col_begin = panel.col_begin
    if width <= A.n_cols:
        col_begin = min(col_begin, A.n_cols - width)
    else:
        width = panel.col_end - panel.col_begin
    cuda.check_fits(len(panel.rows) * width * A.dtype.itemsize, "dense-row panel")
    rows = cupy.asarray(panel.rows, dtype=np.int64)
    starts = A.indptr[rows].astype(np.int64)
    lengths = A.indptr[rows + 1].astype(np.int64) - starts
    ends = cupy.cumsum(lengths)
    entry = cupy.arange(int(panel.nnz), dtype=np.int64)
    local_row = cupy.searchsorted(ends, entry, side="right")
    source = starts[local_row] + entry - (ends - lengths)[local_row]
    matrix = cupy.zeros((len(panel.rows), width), dtype=A.dtype)
    target = (local_row, A.indices[source].astype(np.int64) - col_begin)
    cupyx.scatter_add(matrix, target, A.data[source])  # duplicate entries add up, as in CSR
    return DevicePanel(np.asarray(panel.rows), rows, col_begin, col_begin + width, matrix, int(panel.nnz))


def panels_for(A) -> list:
    """The plan's dense panels gathered on the device (cached; shared by ``adaptive`` and ``fused``)."""
    if "spmm-panels" not in A._cache:
        from .. import plan as planner

        A._cache["spmm-panels"] = [_gather_panel(A, p) for p in planner.plan_for(A).dense_panels]
    return A._cache["spmm-panels"]


def _host_indptr(A) -> np.ndarray:
    host = A._cache.get("host")
    return np.asarray(host.indptr if host is not None else A.indptr.get())


def schedule_for(A, *, dense: bool = True) -> Schedule:
    """The adaptive schedule of device matrix A (cached in ``A._cache``).

    Bins and dense panels come from ``spla.plan.plan_for(A)`` (the SpMV plan,
    computed once per matrix and shared with SpMV); ``dense=False`` keeps the
    plan's dense rows on the sparse path.
    """
    key = ("spmm-schedule", dense)
    if key in A._cache:
        return A._cache[key]
    cupy = cuda.require_cupy()
    from .. import plan as planner

    plan = planner.plan_for(A)
    indptr = _host_indptr(A)
    lengths = np.diff(indptr).astype(np.int64)
    dense_bin = [b for b in plan.bins if b.name == "dense"]
    bins = [(b.name, b.rows) for b in plan.bins if b.name != "dense" or not dense]
    panels = panels_for(A) if dense else []
    dense_rows = np.concatenate([p.host_rows for p in panels]) if panels else np.zeros(0, np.int64)
    if dense and dense_bin and dense_bin[0].rows.size != dense_rows.size:
        raise KernelError(f"plan bug: the dense bin has {dense_bin[0].rows.size} rows but its panels "
                          f"{dense_rows.size}")
    groups, long_rows = split_rows(lengths, bins, dense_rows)
    for g in groups:
        g.rows = cupy.asarray(g.host_rows.astype(A.index_dtype))
    segments = None
    if long_rows.size:
        seg_row, seg_begin, seg_end = segment_ranges(indptr, long_rows)
        segments = (cupy.asarray(seg_row.astype(A.index_dtype)), cupy.asarray(seg_begin), cupy.asarray(seg_end))
    schedule = Schedule(groups, long_rows, cupy.asarray(long_rows), segments, panels)
    A._cache[key] = schedule
    return schedule


# ---------------------------------------------------------------- dense core
DENSE_GEMM = ("regblock", "dbuf", "cublas", "auto")  # "auto": gemm_cuda's own shape rule
# spla's GEMM core (kernels/gemm/05_regblock.cu, 06_dbuf.cu) gives each
# 128 x 128 tile of the product to one block and walks all of K in it. A
# panel of R dense rows times X (k columns) has only ceil(R/128) * ceil(k/128)
# tiles and a long K (the panel's column span): 2,000 rows at k = 8 are 16
# blocks on 132 SMs (round 1 on the H200: dbuf 10.6 ms against cuBLAS
# 0.55 ms for 2,000 x 100k @ 100k x 8). A split-K kernel spreads K over the
# blocks instead; when ``gemm_cuda.auto_kernel`` picks one (a name with
# "split" in it) for the panel's (M, N, K), the panel goes to the GEMM core
# through ``kernel="auto"``, if PANEL_USES_GEMM_CORE_SPLITK says so.
GEMM_CORE_TILE = 128
PANEL_USES_GEMM_CORE_SPLITK = True  # False: cuBLAS takes skinny panels (decide from bench_spmm's hybrid rows)


def _multiprocessors() -> int:
    core = _gemm_core()
    if core is not None and hasattr(core, "multiprocessor_count"):
        return int(core.multiprocessor_count())  # the device's, or the H200's 132 without one
    cupy = cuda.require_cupy()
    return int(cupy.cuda.Device().attributes["MultiProcessorCount"])


def _gemm_core():
    try:
        from . import gemm_cuda
    except ImportError:
        return None
    return gemm_cuda


def gemm_core_auto_choice(n_rows: int, k: int, n_cols: int, dtype) -> str | None:
    """What ``gemm_cuda.gemm(kernel="auto")`` runs for a panel (None without that module or rule)."""
    core = _gemm_core()
    if core is None or not hasattr(core, "auto_kernel"):
        return None
    return str(core.auto_kernel(np.dtype(dtype), (n_rows, k, n_cols)))


def dense_gemm_kernel(n_rows: int, k: int, dtype, n_cols: int | None = None) -> str:
    """The engine for a dense panel of n_rows x n_cols at this k (see ``GEMM_CORE_TILE``).

    ``auto`` (the GEMM core's own rule) when that rule picks a split-K
    kernel for (n_rows, k, n_cols) and PANEL_USES_GEMM_CORE_SPLITK is set;
    else ``dbuf`` for float32 when its 128 x 128 tile grid covers every SM;
    otherwise ``cublas``. The core is float32-only.
    """
    if np.dtype(dtype) != np.float32 or _gemm_core() is None:
        return "cublas"
    if PANEL_USES_GEMM_CORE_SPLITK and n_cols is not None:
        choice = gemm_core_auto_choice(n_rows, k, n_cols, dtype)
        if choice is not None and "split" in choice:
            return "auto"
    tiles = ceil_div(n_rows, GEMM_CORE_TILE) * ceil_div(k, GEMM_CORE_TILE)
    return "dbuf" if tiles >= _multiprocessors() else "cublas"


def _dense_product(matrix, xs, engine: str):
    """matrix @ xs through spla.backend.gemm_cuda (any engine), or cupy.matmul without it."""
    gemm_cuda = _gemm_core()
    known = set(DENSE_GEMM) | set(getattr(gemm_cuda, "ALL_KERNELS", ()))
    if engine not in known:
        raise KernelError(f"unknown dense GEMM engine {engine!r}; expected one of {', '.join(sorted(known))}")
    if gemm_cuda is None:
        if engine not in ("cublas", "auto"):
            raise KernelError(f"dense GEMM engine {engine!r} needs spla.backend.gemm_cuda")
        return matrix @ xs
    return gemm_cuda.gemm(matrix, xs, alpha=1.0, beta=0.0, kernel=engine)


def run_adaptive(A, x: Operand, k: int, out, y_in: Operand | None, alpha, beta, *, dense=True, dense_gemm=None):
    """Launch every group of the schedule, then the dense panels, on the current stream."""
    cupy = cuda.require_cupy()
    schedule = schedule_for(A, dense=dense)
    if schedule.segments is not None:
        rows = schedule.long_rows_dev
        if y_in is None:
            out[rows] = 0
        else:
            out[rows] = y_in.array[rows] * _scalar(A, beta)
        launch_warp(A, x, k, out, y_in, alpha, beta, segments=schedule.segments)
    for g in schedule.groups:
        shape = g.shape(k)
        if shape == "regk":
            launch_regk(A, x, k, out, y_in, alpha, beta, rows=g.rows, sub=regk_sub(g.max_length))
        elif shape == "subwarp":
            launch_subwarp(A, x, k, out, y_in, alpha, beta, rows=g.rows)
        else:
            launch_warp(A, x, k, out, y_in, alpha, beta, rows=g.rows)
    run_panels(A, schedule.panels, x, k, out, y_in, alpha, beta, dense_gemm=dense_gemm)


def run_panels(A, panels, x: Operand, k: int, out, y_in: Operand | None, alpha, beta, *, dense_gemm=None):
    """out[panel rows] = alpha * panel @ X[panel columns] + beta * Y[panel rows], for every panel."""
    cupy = cuda.require_cupy()
    for p in panels:
        xs = x.array[p.col_begin:p.col_end]
        if x.colmajor or not xs.flags.c_contiguous:
            xs = cupy.ascontiguousarray(xs)
        engine = dense_gemm or dense_gemm_kernel(p.host_rows.size, k, A.dtype, p.col_end - p.col_begin)
        product = _dense_product(p.matrix, xs, engine)
        if alpha != 1:
            product *= _scalar(A, alpha)
        if y_in is not None:
            product += y_in.array[p.rows] * _scalar(A, beta)
        out[p.rows] = product


# ---------------------------------------------------------------- fused schedule (k <= 16, one launch)
# kernels/spmm_fused.cu runs every length class of the adaptive schedule as a
# block range of ONE grid, so the classes' tails overlap instead of adding up
# (see the kernel's header). A row of L nonzeros gets the fewest lanes SUB
# (1..32) with L <= nnz_per_lane * SUB; rows over SEGMENT_NNZ are cut into
# SEGMENT_NNZ-nonzero segments of 32 lanes each (atomicAdd into rows that
# spla_spmm_init_rows has set to beta * Y or 0 just before).
FUSED_SUBS = (1, 2, 4, 8, 16, 32)
FUSED_KIND_SEGMENT = -32   # kernels/spmm_fused.cu: SPLA_FUSED_KIND_SEGMENT
FUSED_NNZ_PER_LANE = 8     # "fused"; "fused16" measures 16 (fewer lanes and shuffles per row)
FUSED_LAUNCH_ORDER = (FUSED_KIND_SEGMENT, 32, 16, 8, 4, 2, 1)  # longest work is dispatched first


def fused_sub(length: int, nnz_per_lane: int = FUSED_NNZ_PER_LANE) -> int:
    """Lanes per row of this many nonzeros in the fused kernel (rows <= SEGMENT_NNZ)."""
    for sub in FUSED_SUBS:
        if length <= nnz_per_lane * sub:
            return sub
    return FUSED_SUBS[-1]


def fused_partition(lengths: np.ndarray, excluded_rows=(), *, nnz_per_lane: int = FUSED_NNZ_PER_LANE,
                    long_row: int = SEGMENT_NNZ):
    """Split every row not in ``excluded_rows`` into fused work classes.

    Returns ([(kind, host row ids ascending)], long rows): kind is the lanes
    per row (``FUSED_SUBS``), in ``FUSED_LAUNCH_ORDER``; rows longer than
    ``long_row`` are returned separately for ``segment_ranges``. Every row
    (empty ones included: they still write beta * Y or 0) lands in exactly
    one place. Host-side NumPy only, so it is tested without a GPU.
    """
    lengths = np.asarray(lengths, dtype=np.int64)
    keep = np.ones(lengths.size, dtype=bool)
    keep[np.asarray(excluded_rows, dtype=np.int64)] = False
    long_mask = keep & (lengths > long_row)
    sub_of_row = np.full(lengths.size, FUSED_SUBS[-1], dtype=np.int64)
    for sub in reversed(FUSED_SUBS):  # smallest sub that fits wins: assign from the widest down
        sub_of_row[lengths <= nnz_per_lane * sub] = sub
    short = keep & ~long_mask
    classes = []
    for kind in FUSED_LAUNCH_ORDER:
        if kind == FUSED_KIND_SEGMENT:
            continue
        rows = np.flatnonzero(short & (sub_of_row == kind))
        if rows.size:
            classes.append((kind, rows))
    return classes, np.flatnonzero(long_mask)


@dataclass
class FusedSchedule:
    """Everything one fused launch needs, built once per (matrix, dense, nnz_per_lane) and cached."""

    table: np.ndarray          # int64 (n_classes, 4): first block, kind, item offset, items
    table_dev: object
    row_list: object           # device, A's index dtype: the rows of every row class, in launch order
    seg_row: object            # device segment arrays (placeholders when there are none)
    seg_begin: object
    seg_end: object
    long_rows: object          # device ids of the segmented rows (for spla_spmm_init_rows), or None
    n_long_rows: int
    n_blocks: int
    panels: list
    kernels: dict = None       # (k_reg, colmajor) -> compiled function, filled on first use

    def summary(self, k: int, dtype, dense_gemm: str | None = None) -> list:
        lines = []
        for first, kind, offset, items in self.table.tolist():
            what = (f"{items:,} segments of <= {SEGMENT_NNZ} nnz, 32 lanes each (atomicAdd)"
                    if kind == FUSED_KIND_SEGMENT else f"{items:,} rows, {kind} lanes/row")
            lines.append(f"fused class from block {first:,}: {what}")
        lines.append(f"one launch of {self.n_blocks:,} blocks (K={_next_pow2(k)})"
                     + (f" after init of {self.n_long_rows:,} long rows" if self.n_long_rows else ""))
        for p in self.panels:
            lines.append(f"dense panel: {p.host_rows.size:,} rows x {p.col_end - p.col_begin:,} columns, "
                         f"{p.nnz:,} nnz -> GEMM "
                         f"{dense_gemm or dense_gemm_kernel(p.host_rows.size, k, dtype, p.col_end - p.col_begin)}")
        return lines


def fused_table(classes, n_segments: int):
    """(int64 table, row list) for ``fused_partition``'s classes plus n_segments segments."""
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


def fused_for(A, *, dense: bool = True, nnz_per_lane: int = FUSED_NNZ_PER_LANE) -> FusedSchedule:
    """The fused schedule of device matrix A (cached in ``A._cache``)."""
    key = ("spmm-fused", dense, nnz_per_lane)
    if key in A._cache:
        return A._cache[key]
    cupy = cuda.require_cupy()
    indptr = _host_indptr(A)
    lengths = np.diff(indptr).astype(np.int64)
    panels = panels_for(A) if dense else []
    excluded = np.concatenate([p.host_rows for p in panels]) if panels else np.zeros(0, np.int64)
    classes, long_rows = fused_partition(lengths, excluded, nnz_per_lane=nnz_per_lane)
    n_segments = 0
    placeholder = A.indptr[:1]
    seg_row = seg_begin = seg_end = placeholder
    if long_rows.size:
        rows_of_seg, begins, ends = segment_ranges(indptr, long_rows)
        n_segments = int(rows_of_seg.size)
        seg_row = cupy.asarray(rows_of_seg.astype(A.index_dtype))
        seg_begin, seg_end = cupy.asarray(begins), cupy.asarray(ends)
    table, row_list, n_blocks = fused_table(classes, n_segments)
    if n_blocks > cuda.MAX_GRID_X:
        raise KernelError(f"the fused schedule needs {n_blocks} blocks, over CUDA's grid limit")
    schedule = FusedSchedule(
        table, cupy.asarray(table), cupy.asarray(row_list.astype(A.index_dtype)) if row_list.size else placeholder,
        seg_row, seg_begin, seg_end,
        cupy.asarray(long_rows.astype(A.index_dtype)) if long_rows.size else None, int(long_rows.size),
        n_blocks, panels, {})
    A._cache[key] = schedule
    return schedule


def run_fused(A, x: Operand, k: int, out, y_in: Operand | None, alpha, beta, *, dense=True, dense_gemm=None,
              nnz_per_lane: int = FUSED_NNZ_PER_LANE):
    """Init the segmented rows (if any), one fused launch, then the dense panels."""
    if k > REGK_MAX_K:
        raise KernelError(f"the fused kernel keeps k columns in registers, at most {REGK_MAX_K}; k={k}")
    fs = fused_for(A, dense=dense, nnz_per_lane=nnz_per_lane)
    value, index = _types(A)
    k_reg = _next_pow2(k)
    functions = fs.kernels.get((k_reg, x.colmajor))
    if functions is None:
        source = FUSED_SOURCES[(value, index, x.colmajor)]
        functions = fs.kernels[(k_reg, x.colmajor)] = (
            source.function(_fused_name(value, index, k_reg, x.colmajor)),
            source.function(_init_rows_name(value, index)))
    fused, init_rows = functions
    width = _regk_vector_width(A.dtype.itemsize, k_reg)
    vbytes = width * A.dtype.itemsize
    vec_ok = (not x.colmajor and k == k_reg and x.ld % width == 0 and _aligned(x.array, vbytes)
              and _aligned(out, vbytes)
              and (y_in is None or (y_in.ld % width == 0 and _aligned(y_in.array, vbytes))))
    alpha_t, beta_t = _scalar(A, alpha), _scalar(A, beta)
    ldo = np.int64(out.shape[1])
    y_array = out if y_in is None else y_in.array
    ldy = np.int64(0 if y_in is None else y_in.ld)
    use_y = np.int32(y_in is not None)
    if fs.n_long_rows:
        init_rows((grid_1d(fs.n_long_rows * k, BLOCK),), (BLOCK,), (
            fs.long_rows, np.int64(fs.n_long_rows), np.int64(k), beta_t, y_array, ldy, use_y, out, ldo))
    if fs.n_blocks:
        fused((fs.n_blocks,), (BLOCK,), (
            A.indptr, A.indices, A.data, x.array, np.int64(x.ld), np.int64(k),
            fs.table_dev, np.int32(fs.table.shape[0]), fs.row_list, fs.seg_row, fs.seg_begin, fs.seg_end,
            np.int32(vec_ok), alpha_t, beta_t, y_array, ldy, use_y, out, ldo))
    if fs.panels:
        run_panels(A, fs.panels, x, k, out, y_in, alpha, beta, dense_gemm=dense_gemm)


# ---------------------------------------------------------------- policy
def row_stats(A):
    """(mean, max) row length, cached on the matrix."""
    if "spmm_row_stats" not in A._cache:
        lengths = A.row_lengths()
        mean = float(A.nnz / A.n_rows) if A.n_rows else 0.0
        longest = int(lengths.max()) if A.n_rows else 0
        A._cache["spmm_row_stats"] = (mean, longest)
    return A._cache["spmm_row_stats"]


# Skewed rows at k <= 16: the one-launch fused schedule (round 2). Set to
# "adaptive" to go back to the multi-launch schedule of round 1.
AUTO_SKEWED_SMALL_K = "fused"


def choose_kernel(A, k: int) -> str:
    """The ``auto`` policy (documented in the module docstring); returns a kernel name."""
    if k == 1:
        return "spmv-loop"
    mean, longest = row_stats(A)
    if longest > SEGMENT_NNZ or longest > 8 * mean + 64:
        return AUTO_SKEWED_SMALL_K if k <= REGK_MAX_K else "adaptive"
    if mean <= LENGTH_CLASSES[-1]:
        return "regk" if k <= REGK_MAX_K else "subwarp"
    return "warp"


def _run_regk(A, X, k, out, y_in, alpha, beta):
    mean, _ = row_stats(A)
    launch_regk(A, as_operand(X, allow_colmajor=True), k, out, y_in, alpha, beta, sub=regk_sub(mean))


def _run_warp(A, X, k, out, y_in, alpha, beta):
    launch_warp(A, as_operand(X, allow_colmajor=False), k, out, y_in, alpha, beta)


def _run_subwarp(A, X, k, out, y_in, alpha, beta):
    launch_subwarp(A, as_operand(X, allow_colmajor=False), k, out, y_in, alpha, beta)


def _run_adaptive(A, X, k, out, y_in, alpha, beta, **options):
    run_adaptive(A, as_operand(X, allow_colmajor=False), k, out, y_in, alpha, beta, **options)


def _run_fused(A, X, k, out, y_in, alpha, beta, *, nnz_per_lane=FUSED_NNZ_PER_LANE, **options):
    if k > REGK_MAX_K:  # the fused kernel holds k columns in registers; wider k runs the multi-launch schedule
        _run_adaptive(A, X, k, out, y_in, alpha, beta, **options)
        return
    run_fused(A, as_operand(X, allow_colmajor=True), k, out, y_in, alpha, beta, nnz_per_lane=nnz_per_lane,
              **options)


def _run_fused_sparse(A, X, k, out, y_in, alpha, beta):
    _run_fused(A, X, k, out, y_in, alpha, beta, dense=False)


def _run_fused16(A, X, k, out, y_in, alpha, beta):
    _run_fused(A, X, k, out, y_in, alpha, beta, nnz_per_lane=16)


def _run_adaptive_sparse(A, X, k, out, y_in, alpha, beta):
    _run_adaptive(A, X, k, out, y_in, alpha, beta, dense=False)


def _run_spmv_loop(A, X, k, out, y_in, alpha, beta):
    cupy = cuda.require_cupy()
    from . import spmv_cuda

    for c in range(k):
        y_column = None if y_in is None else cupy.ascontiguousarray(y_in.array[:, c])
        out[:, c] = spmv_cuda.spmv(A, cupy.ascontiguousarray(X[:, c]), y_column, alpha=alpha,
                                   beta=beta if y_column is not None else 0.0, kernel="auto")


class CusparseSpMM:
    """cuSPARSE SpMM with its descriptors and buffer built once per (matrix, k).

    Row-major X and Y (``CUSPARSE_ORDER_ROW``), the layout spla's kernels use,
    so the comparison is kernel against kernel; the dense descriptors are
    re-pointed at each call's arrays.
    """

    def __init__(self, A, x, out):
        from cupy._core import _dtype
        from cupy.cuda import device
        from cupy_backends.cuda.libs import cusparse
        from cupyx import cusparse as cxs

        self.lib = cusparse
        self.matrix = A.to_cupyx()  # keeps the arrays the descriptor points to alive
        self.handle = device.get_cusparse_handle()
        self.mat = cxs.SpMatDescriptor.create(self.matrix)
        self.value_type = _dtype.to_cuda_dtype(A.dtype)
        self.dense_x = self._dense(x)
        self.dense_out = self._dense(out)
        self.alpha = np.ones(1, dtype=A.dtype)
        self.beta = np.zeros(1, dtype=A.dtype)
        self.op = cusparse.CUSPARSE_OPERATION_NON_TRANSPOSE
        self.alg = getattr(cusparse, "CUSPARSE_SPMM_ALG_DEFAULT", None)
        if self.alg is None:
            self.alg = cusparse.CUSPARSE_MM_ALG_DEFAULT
        size = cusparse.spMM_bufferSize(self.handle, self.op, self.op, self.alpha.ctypes.data, self.mat.desc,
                                        self.dense_x, self.beta.ctypes.data, self.dense_out,
                                        self.value_type, self.alg)
        self.buffer = cuda.require_cupy().empty(max(1, size), dtype=np.int8)

    # cusparseOrder_t: CUSPARSE_ORDER_ROW is 2 in cusparse.h, for bindings that do not export the name
    ORDER_ROW = 2

    def _dense(self, M):
        rows, cols = M.shape
        order = getattr(self.lib, "CUSPARSE_ORDER_ROW", self.ORDER_ROW)
        return self.lib.createDnMat(rows, cols, cols, M.data.ptr, self.value_type, order)

    def _point(self, desc, M):
        set_values = getattr(self.lib, "dnMatSetValues", None)
        if set_values is None:  # older bindings: a fresh descriptor per call (host work only)
            self.lib.destroyDnMat(desc)
            return self._dense(M)
        set_values(desc, M.data.ptr)
        return desc

    def __call__(self, x, out, alpha, beta):
        lib = self.lib
        self.dense_x = self._point(self.dense_x, x)
        self.dense_out = self._point(self.dense_out, out)
        self.alpha[0], self.beta[0] = alpha, beta
        lib.spMM(self.handle, self.op, self.op, self.alpha.ctypes.data, self.mat.desc, self.dense_x,
                 self.beta.ctypes.data, self.dense_out, self.value_type, self.alg, self.buffer.data.ptr)
        return out

    def __del__(self):
        for desc in (getattr(self, "dense_x", None), getattr(self, "dense_out", None)):
            if desc:
                self.lib.destroyDnMat(desc)


def _run_cusparse(A, X, k, out, y_in, alpha, beta):
    cupy = cuda.require_cupy()
    if y_in is not None:
        out[...] = y_in.array
    if A.nnz == 0:  # cuSPARSE refuses empty matrices on some versions; the answer is beta * Y
        if y_in is None:
            out.fill(0)
        else:
            out *= _scalar(A, beta)
        return
    X = cupy.ascontiguousarray(X)
    key = ("cusparse-spmm", k)
    state = A._cache.get(key)
    if state is None:
        state = A._cache[key] = CusparseSpMM(A, X, out)
    state(X, out, alpha, beta if y_in is not None else 0.0)


def cupyx_matrix(A):
    """The cupyx csr_matrix of A, built once (a CuPy user holds one; only the product is timed)."""
    matrix = A._cache.get("cupyx")
    if matrix is None:
        matrix = A._cache["cupyx"] = A.to_cupyx()
    return matrix


def _run_cusparse_cupy(A, X, k, out, y_in, alpha, beta):
    out[...] = cupyx_matrix(A) @ X
    if alpha != 1:
        out *= _scalar(A, alpha)
    if y_in is not None:
        out += y_in.array * _scalar(A, beta)


KERNELS = {
    "regk": _run_regk,
    "warp": _run_warp,
    "subwarp": _run_subwarp,
    "adaptive": _run_adaptive,
    "adaptive-sparse": _run_adaptive_sparse,
    "fused": _run_fused,
    "fused16": _run_fused16,
    "fused-sparse": _run_fused_sparse,
    "spmv-loop": _run_spmv_loop,
    "cusparse": _run_cusparse,
    "cusparse-cupy": _run_cusparse_cupy,
    "auto": None,  # resolved by choose_kernel
}


def spmm(A, X, Y=None, *, alpha=1.0, beta=0.0, kernel: str = "auto", dense_gemm: str | None = None):
    """``alpha * A @ X + beta * Y`` on the GPU; a new C-contiguous (n_rows, k) array.

    A is a device CSRMatrix, X a cupy (n_cols, k) array of A's dtype, Y
    (n_rows, k) or None; shapes are checked by ``spla.matmat.spmm``.
    ``dense_gemm`` forces the dense-panel engine of ``adaptive``
    ("regblock", "dbuf" or "cublas"); None picks with :func:`dense_gemm_kernel`.

    See Also
    --------
    cupyx.scipy.sparse.csr_matrix.dot, cupyx.cusparse.spmm
    """
    cupy = cuda.require_cupy()
    if kernel not in KERNELS:
        raise KernelError(f"unknown SpMM kernel {kernel!r}; expected one of {', '.join(KERNELS)}")
    k = int(X.shape[1])
    out = cupy.empty((A.n_rows, k), dtype=A.dtype)
    if A.n_rows == 0 or k == 0:
        return out
    y_in = None if (Y is None or beta == 0) else as_operand(Y, allow_colmajor=False)
    name = choose_kernel(A, k) if kernel == "auto" else kernel
    if name in ("adaptive", "adaptive-sparse") and dense_gemm is not None:
        _run_adaptive(A, X, k, out, y_in, alpha, beta, dense=name == "adaptive", dense_gemm=dense_gemm)
    elif name in ("fused", "fused16", "fused-sparse") and dense_gemm is not None:
        _run_fused(A, X, k, out, y_in, alpha, beta, dense=name != "fused-sparse", dense_gemm=dense_gemm,
                   nnz_per_lane=16 if name == "fused16" else FUSED_NNZ_PER_LANE)
    else:
        KERNELS[name](A, X, k, out, y_in, alpha, beta)
    return out
