"""SpMM ``fused``: a :class:`~spla.planning.spmm.FusedSchedule` as one launch (kernels/spmm_fused.cu).

The schedule's class table, row list and segments are uploaded once and
cached on the matrix; a call inits the segmented rows (``beta * Y`` or 0,
kernels/spmm_init_rows.cu), launches the fused grid (spla_spmm_fused for
k <= 16, spla_spmm_fused_wide past it), then runs the dense panels. The wide
kernel reads row-major X with vector loads only; a call whose arrays do not
allow them runs ``adaptive`` instead.
Without panels a call is those two launches, which ``spla.spmm``'s hot path
packs (:class:`~.spmm.SpmmLauncher`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ...device import require_cupy
from ...planning import spmm as planning
from ...planning.spmm import REGK_K
from .runtime import INDEX_TYPES, VALUE_TYPES, KernelSource, template
from .spmm_hybrid import HybridLauncher, device_panels, run_panels
from .spmm_launch import Launch, Operand, launch, launch_init_rows, output_args, regk_vec_ok, scalar, types, vector_fits


def fused_name(value, index, k_reg, colmajor) -> str:
    return template("spla_spmm_fused", value, index, k_reg, bool(colmajor))


FUSED_SOURCES = {
    (value, index, colmajor): KernelSource("spmm_fused.cu", [
        fused_name(value, index, k_reg, colmajor) for k_reg in REGK_K])
    for value in VALUE_TYPES for index in INDEX_TYPES for colmajor in (False, True)
}


def wide_name(value, index, k_reg) -> str:
    return template("spla_spmm_fused_wide", value, index, k_reg)


def wide_k(value) -> list:
    """The K (powers of two past 16) spla_spmm_fused_wide is instantiated for at this value type."""
    vec = planning.WARP_VECTOR[np.dtype(value)]
    return [2 ** e for e in range(5, 8) if 2 ** e <= planning.FUSED_WIDE_LANES * vec]


WIDE_SOURCES = {
    (value, index): KernelSource("spmm_fused.cu", [wide_name(value, index, k_reg) for k_reg in wide_k(value)])
    for value in VALUE_TYPES for index in INDEX_TYPES
}


@dataclass(frozen=True)
class _DeviceFused:
    table: Any
    row_list: Any
    seg_row: Any          # device segment arrays (placeholders when there are none)
    seg_begin: Any
    seg_end: Any
    long_rows: Any        # device ids of the segmented rows, or None
    panels: list


def _upload(A, schedule: planning.FusedSchedule) -> _DeviceFused:
    key = ("device", schedule.key)
    if key not in A._cache:
        cupy = require_cupy()
        placeholder = A.indptr[:1]
        seg_row = seg_begin = seg_end = placeholder
        if schedule.segments is not None:
            rows_of_seg, begins, ends = schedule.segments
            seg_row = cupy.asarray(rows_of_seg.astype(A.index_dtype))
            seg_begin, seg_end = cupy.asarray(begins), cupy.asarray(ends)
        row_list = (cupy.asarray(schedule.row_list.astype(A.index_dtype)) if schedule.row_list.size
                    else placeholder)
        long_rows = cupy.asarray(schedule.long_rows.astype(A.index_dtype)) if schedule.long_rows.size else None
        A._cache[key] = _DeviceFused(cupy.asarray(schedule.table), row_list, seg_row, seg_begin, seg_end,
                                     long_rows, device_panels(A, schedule.panels))
    return A._cache[key]


class FusedLauncher:
    """A bound ``fused`` plan: ``launcher(x, k, out, y_in, alpha, beta)``; reads row- or column-major X at
    k <= 16, row-major past it."""

    def __init__(self, A, plan: planning.SpmmPlan):
        self.A = A
        self.plan = plan
        assert isinstance(plan.schedule, planning.FusedSchedule)
        self.schedule = plan.schedule
        self.state = _upload(A, plan.schedule)
        self.wide = plan.k > planning.REGK_MAX_K
        self.allow_colmajor = not self.wide
        self.functions: dict = {}  # colmajor -> the fused kernel, compiled on first use of that layout
        self.unaligned: HybridLauncher | None = None  # the wide kernel's stand-in for arrays it cannot read

    def _function(self, colmajor: bool):
        if colmajor not in self.functions:
            value, index = types(self.A)
            k_reg = planning.next_pow2(self.plan.k)
            self.functions[colmajor] = (
                WIDE_SOURCES[(value, index)].function(wide_name(value, index, k_reg)) if self.wide
                else FUSED_SOURCES[(value, index, colmajor)].function(fused_name(value, index, k_reg, colmajor)))
        return self.functions[colmajor]

    def _adaptive(self) -> HybridLauncher:
        if self.unaligned is None:  # the same dense panels, through the same GEMM plans
            plan = planning.plan_spmm(self.A, self.plan.k, "adaptive", dense=bool(self.schedule.panels))
            self.unaligned = HybridLauncher(self.A, replace(plan, panels=self.plan.panels))
        return self.unaligned

    def __call__(self, x: Operand, k: int, out, y_in: Operand | None, alpha, beta) -> tuple[Launch, ...] | None:
        """Run; the launches made where there are no dense panels (else None: the run is more)."""
        A, fs, state = self.A, self.schedule, self.state
        if self.wide:
            if not vector_fits(A, planning.WARP_VECTOR[A.dtype], x, k, out, y_in):
                return self._adaptive()(x, k, out, y_in, alpha, beta)
            switches: tuple = ()
        else:
            switches = (np.int32(regk_vec_ok(A, x, k, out, y_in)), np.int32(self.plan.sliced))
        fused = self._function(x.colmajor)
        launches = []
        if state.long_rows is not None:
            launches.append(launch_init_rows(A, state.long_rows, k, out, y_in, beta))
        if fs.n_blocks:
            launches.append(launch(fused, (fs.n_blocks,), (
                A.indptr, A.indices, A.data, x.array, np.int64(x.ld), np.int64(k),
                state.table, np.int32(fs.table.shape[0]), state.row_list, state.seg_row, state.seg_begin,
                state.seg_end, *switches, scalar(A, alpha), scalar(A, beta),
                *output_args(out, y_in)), x_slot=3))
        if state.panels:
            run_panels(A, state.panels, self.plan.panels, x, k, out, y_in, alpha, beta)
            return None
        return tuple(made for made in launches if made is not None)
