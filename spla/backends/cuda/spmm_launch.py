"""SpMM kernel declarations and single launches: regk, warp, subwarp, dia (kernels/spmm_*.cu).

Every function here launches exactly what it is told; the shapes (lanes per
row, column tiles, vector widths) come from :mod:`spla.planning.spmm`. Each
returns the :class:`Launch` it made (None where there was nothing to do), which
``spla.spmm``'s hot path packs once and re-launches with new X and output pointers
(the runs of fused's and adaptive's launches too: :mod:`.spmm_fused`, :mod:`.spmm_hybrid`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ...device import require_cupy
from ...errors import KernelError
from ...planning import dia
from ...planning import palette as palettes
from ...planning import spmm as planning
from ...planning.spmm import BLOCK, REGK_K, REGK_MAX_K, REGK_SUB, WARP_VECTOR
from .runtime import INDEX_TYPES, VALUE_TYPES, KernelSource, grid_1d, template


def warp_name(value, index, vec, cl, j, segmented) -> str:
    return template("spla_spmm_warp", value, index, vec, cl, j, bool(segmented))


def subwarp_name(value, index, vec, cl, j) -> str:
    return template("spla_spmm_subwarp", value, index, vec, cl, j)


def regk_name(value, index, k_reg, sub, colmajor) -> str:
    return template("spla_spmm_regk", value, index, k_reg, sub, bool(colmajor))


def init_rows_name(value, index) -> str:
    return template("spla_spmm_init_rows", value, index)


# One KernelSource per (value, index[, layout]) dtype pair so that a
# float32/int32 run compiles only its own instantiations.
_PAIRS = [(value, index) for value in VALUE_TYPES for index in INDEX_TYPES]
WARP_SOURCES = {
    (value, index): KernelSource("spmm_warp.cu", [
        warp_name(value, index, vec, cl, j, segmented)
        for vec in (1, WARP_VECTOR[value]) for cl, j in planning.warp_configs() for segmented in (False, True)])
    for value, index in _PAIRS
}
SUBWARP_SOURCES = {
    (value, index): KernelSource("spmm_subwarp.cu", [
        subwarp_name(value, index, vec, cl, j) for vec in (1, WARP_VECTOR[value]) for cl, j in planning.warp_configs()])
    for value, index in _PAIRS
}
REGK_SOURCES = {
    (value, index, colmajor): KernelSource("spmm_regk.cu", [
        regk_name(value, index, k_reg, sub, colmajor) for k_reg in REGK_K for sub in REGK_SUB])
    for value, index in _PAIRS for colmajor in (False, True)
}
INIT_ROWS_SOURCES = {(value, index): KernelSource("spmm_init_rows.cu", [init_rows_name(value, index)])
                     for value, index in _PAIRS}


def dia_widths(value) -> tuple[int, ...]:
    """The vector widths dia's SpMM loads X in, widest first: 16 bytes down to one value (float32
    k = 2 runs float2s: a thread a value left it 0.87-0.90x regk, session 56)."""
    widths, width = [], WARP_VECTOR[np.dtype(value)]
    while width >= 1:
        widths.append(width)
        width //= 2
    return tuple(widths)


# Diagonals dia's SpMM has in flight at once (kernels/spmm_dia.cu); where at least two remain past the last
# full batch, they run as one batch of their own (its TAIL instances)
DIA_BATCH = 5


def dia_tail(n_diagonals: int) -> bool:
    return n_diagonals % DIA_BATCH >= 2


# dia stores no indices: one instance per value type, vector width, entry (values, or a palette's codes) and
# remainder (one at a time, or a batch)
DIA_SOURCE = KernelSource("spmm_dia.cu", [template("spla_spmm_dia", value, vec, coded, tail) for value in VALUE_TYPES
                                          for vec in dia_widths(value) for coded in (False, True)
                                          for tail in (False, True)],
                          (f"-DSPLA_PALETTE_VALUES={palettes.VALUES}", f"-DSPLA_MAX_DIAGONALS={dia.MAX_DIAGONALS}",
                           f"-DSPLA_SPMM_DIA_BATCH={DIA_BATCH}"))


@dataclass(frozen=True)
class Launch:
    """One launch as it was made: the kernel, its grid and arguments, and where X sits among them.

    Every SpMM kernel's arguments end ``(alpha, beta, y_in, ldy, use_y_in, out, ldo)``; the slots
    below, those a packed re-launch rewrites, count from that end (beta stays as it was made).
    ``x_slot`` None: a launch that reads no X and takes no alpha (the init of segmented rows,
    whose arguments end ``(beta, y_in, ldy, use_y_in, out, ldo)``)."""

    kernel: Any
    grid: tuple
    args: tuple
    x_slot: int | None

    ALPHA_SLOT = -7
    Y_IN_SLOT = -5
    OUT_SLOT = -2


def output_args(out, y_in: Operand | None) -> tuple:
    """The last five arguments of every SpMM kernel: ``(y_in, ldy, use_y_in, out, ldo)``; without Y,
    out's pointer stands in for y_in's (the kernel reads it only where use_y_in)."""
    return (out if y_in is None else y_in.array, np.int64(0 if y_in is None else y_in.ld), np.int32(y_in is not None),
            out, np.int64(out.shape[1]))


def launch(kernel, grid: tuple, args: tuple, x_slot: int | None) -> Launch:
    kernel(grid, (BLOCK,), args)
    return Launch(kernel, grid, args, x_slot)


@dataclass(frozen=True)
class Operand:
    """A dense block as the kernels see it: base array, leading dimension, layout."""

    array: Any      # cupy.ndarray (may be a strided view)
    ld: int            # elements between consecutive rows (row-major) or columns (column-major)
    colmajor: bool


def as_operand(M, *, allow_colmajor: bool) -> Operand:
    """Describe M for a kernel without copying when its strides allow it.

    Row-major needs a unit column stride and a row stride >= k; column-major
    (only where the kernel supports it) a unit row stride and a column stride
    >= n. Anything else (negative, zero or odd strides) becomes a
    C-contiguous copy.
    """
    cupy = require_cupy()
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


def aligned(array, nbytes: int) -> bool:
    return array.data.ptr % nbytes == 0


def types(A) -> tuple:
    """(value dtype, index dtype) of A, refusing pairs no kernel is instantiated for."""
    if A.dtype not in VALUE_TYPES or A.index_dtype not in INDEX_TYPES:
        raise KernelError(f"no SpMM kernel for {A.dtype}/{A.index_dtype}")
    return np.dtype(A.dtype), np.dtype(A.index_dtype)


def scalar(A, value):
    return A.dtype.type(value)


def vector_fits(A, vec: int, x: Operand, k: int, out, y_in: Operand | None) -> bool:
    """Whether k, the leading dimensions and the pointers allow loads and stores of ``vec`` values."""
    vbytes = vec * A.dtype.itemsize
    return (k % vec == 0 and x.ld % vec == 0 and aligned(x.array, vbytes) and aligned(out, vbytes)
            and (y_in is None or (y_in.ld % vec == 0 and aligned(y_in.array, vbytes))))


def regk_vec_ok(A, x: Operand, k: int, out, y_in: Operand | None) -> bool:
    """Whether regk/fused may use vector loads for this k and these arrays (see spmm_common.cuh):
    row-major X, k a power of two, and the width regk holds (which divides k) fitting the arrays."""
    k_reg = planning.next_pow2(k)
    width = planning.regk_vector_width(A.dtype.itemsize, k_reg)
    return not x.colmajor and k == k_reg and vector_fits(A, width, x, k, out, y_in)


def launch_regk(A, x: Operand, k: int, out, y_in: Operand | None, alpha, beta, *, rows=None,
                sub: int = 1) -> Launch | None:
    """One spla_spmm_regk launch over all rows or the device row ids ``rows``."""
    if k > REGK_MAX_K:
        raise KernelError(f"regk keeps k columns in registers, at most {REGK_MAX_K}; k={k} (use warp)")
    if sub not in REGK_SUB:
        raise KernelError(f"regk runs {REGK_SUB} lanes per row, not {sub}")
    value, index = types(A)
    n_work = A.n_rows if rows is None else int(rows.size)
    if n_work == 0:
        return None
    k_reg = planning.next_pow2(k)
    vec_ok = regk_vec_ok(A, x, k, out, y_in)
    kernel = REGK_SOURCES[(value, index, x.colmajor)].function(regk_name(value, index, k_reg, sub, x.colmajor))
    return launch(kernel, (grid_1d(n_work * sub, BLOCK),), (
        A.indptr, A.indices, A.data, x.array, np.int64(x.ld), np.int64(k),
        A.indptr if rows is None else rows, np.int32(rows is not None), np.int64(n_work), np.int32(vec_ok),
        scalar(A, alpha), scalar(A, beta),
        *output_args(out, y_in)), x_slot=3)


def launch_init_rows(A, rows, k: int, out, y_in: Operand | None, beta) -> Launch | None:
    """out[rows] = beta * Y[rows], or 0 without Y: the start of the device ``rows`` whose segments
    then add into them (fused's segment class, the warp kernel's ``segments``)."""
    value, index = types(A)
    n_rows = int(rows.size)
    if n_rows == 0:
        return None
    kernel = INIT_ROWS_SOURCES[(value, index)].function(init_rows_name(value, index))
    return launch(kernel, (grid_1d(n_rows * k, BLOCK),), (
        rows, np.int64(n_rows), np.int64(k), scalar(A, beta),
        *output_args(out, y_in)), x_slot=None)


def warp_vector(A, x: Operand, k: int, out, y_in: Operand | None) -> int:
    """16-byte vectors for the warp/subwarp kernels when k, the leading dimensions and pointers allow, else 1."""
    vec = WARP_VECTOR[A.dtype]
    return vec if vector_fits(A, vec, x, k, out, y_in) else 1


def launch_warp(A, x: Operand, k: int, out, y_in: Operand | None, alpha, beta, *, rows=None,
                segments=None) -> Launch | None:
    """One spla_spmm_warp launch: whole rows (all, or device ``rows``) or ``segments``.

    ``segments`` = (row ids, begin, end) device arrays; the caller must have
    written ``beta * y_in`` (or zeros) into those rows of ``out`` (:func:`launch_init_rows`).
    """
    if x.colmajor:
        raise KernelError("the warp kernel reads row-major X; pass a C-ordered X (spmm does this for you)")
    value, index = types(A)
    if segments is not None:
        row_ids, seg_begin, seg_end = segments
        n_work = int(row_ids.size)
    else:
        row_ids, seg_begin, seg_end = rows, None, None
        n_work = A.n_rows if rows is None else int(rows.size)
    if n_work == 0:
        return None
    y_use = y_in if segments is None else None  # segments add into out, which their init has set
    vec = warp_vector(A, x, k, out, y_use)
    cl, j, tiles = planning.warp_shape(k, vec)
    kernel = WARP_SOURCES[(value, index)].function(warp_name(value, index, vec, cl, j, segments is not None))
    return launch(kernel, (grid_1d(n_work * 32, BLOCK), tiles), (
        A.indptr, A.indices, A.data, x.array, np.int64(x.ld), np.int64(k),
        A.indptr if row_ids is None else row_ids, np.int32(row_ids is not None),
        A.indptr if seg_begin is None else seg_begin, A.indptr if seg_end is None else seg_end,
        np.int64(n_work), scalar(A, alpha), scalar(A, beta),
        *output_args(out, y_use)), x_slot=3)


def launch_subwarp(A, x: Operand, k: int, out, y_in: Operand | None, alpha, beta, *, rows=None) -> Launch | None:
    """One spla_spmm_subwarp launch: a group of CL lanes per row (all rows, or device ``rows``)."""
    if x.colmajor:
        raise KernelError("the subwarp kernel reads row-major X; pass a C-ordered X (spmm does this for you)")
    value, index = types(A)
    n_work = A.n_rows if rows is None else int(rows.size)
    if n_work == 0:
        return None
    vec = warp_vector(A, x, k, out, y_in)
    cl, j, tiles = planning.warp_shape(k, vec)
    kernel = SUBWARP_SOURCES[(value, index)].function(subwarp_name(value, index, vec, cl, j))
    return launch(kernel, (grid_1d(n_work * cl, BLOCK), tiles), (
        A.indptr, A.indices, A.data, x.array, np.int64(x.ld), np.int64(k),
        A.indptr if rows is None else rows, np.int32(rows is not None), np.int64(n_work),
        scalar(A, alpha), scalar(A, beta),
        *output_args(out, y_in)), x_slot=3)


def launch_dia(A, x: Operand, k: int, out, y_in: Operand | None, alpha, beta) -> Launch:
    """One spla_spmm_dia launch over A's diagonals (found once and cached on A, as for dia's SpMV),
    through their palette where dia's SpMV reads one; a thread a row and vector of X's columns."""
    if x.colmajor:
        raise KernelError("the dia kernel reads row-major X; pass a C-ordered X (spmm does this for you)")
    value, _ = types(A)
    found = dia.structure(A)
    if not isinstance(found, dia.Structure):
        raise KernelError(f"kernel='dia' needs {dia.NEEDS}; this one: {found.reason}")
    coded = dia.palette(A, found)
    vec = next(w for w in dia_widths(value) if vector_fits(A, w, x, k, out, y_in))  # 1 always fits
    kernel = DIA_SOURCE.function(template("spla_spmm_dia", value, vec, coded is not None,
                                          dia_tail(found.n_diagonals)))
    head = (np.int64(A.n_rows), np.int64(A.n_cols), np.int64(found.stride), np.int32(found.n_diagonals), found.offsets,
            *dia.kernel_slots(found, coded))
    return launch(kernel, (grid_1d(A.n_rows * (k // vec), BLOCK),), (
        *head, x.array, np.int64(x.ld), np.int64(k), scalar(A, alpha), scalar(A, beta),
        *output_args(out, y_in)), x_slot=len(head))
