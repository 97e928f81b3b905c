"""SpMM ``adaptive``: the multi-launch hybrid schedule and the dense panels' GEMM.

Runs a :class:`~spla.planning.spmm.HybridSchedule`: the long rows' segments
(after a launch writes ``beta * Y`` or 0 into those rows), one launch per row
group in the shape planning chose, then each dense panel through the GEMM plan
planning made for it. Device copies of the schedule are uploaded once and
cached on the matrix. Without panels a run is only launches, which
``spla.spmm``'s hot path packs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...device import require_cupy
from ...planning import spmm as planning
from . import gemm as cuda_gemm
from .dense_panels import gather_panels
from .spmm_launch import Launch, Operand, launch_init_rows, launch_regk, launch_subwarp, launch_warp, scalar


def device_panels(A, panels) -> list:
    """The planned panels gathered on device matrix A (cached; shared by hybrid and fused)."""
    if not panels:
        return []
    key = ("spmm-panels", tuple((p.col_begin, p.col_end, p.nnz, p.rows.size) for p in panels))
    if key not in A._cache:
        A._cache[key] = gather_panels(A, panels)
    return A._cache[key]


def run_panels(A, panels, plans, x: Operand, k: int, out, y_in: Operand | None, alpha, beta):
    """out[panel rows] = alpha * panel @ X[panel columns] + beta * Y[panel rows], for every panel."""
    cupy = require_cupy()
    for p, plan in zip(panels, plans):
        xs = x.array[p.col_begin:p.col_end]
        if x.colmajor or not xs.flags.c_contiguous:
            xs = cupy.ascontiguousarray(xs)
        product = cupy.empty((p.host_rows.size, k), dtype=A.dtype)
        cuda_gemm.gemm(p.matrix, xs, product, plan, alpha=1.0, beta=0.0)
        if alpha != 1:
            product *= scalar(A, alpha)
        if y_in is not None:
            product += y_in.array[p.rows] * scalar(A, beta)
        out[p.rows] = product


@dataclass(frozen=True)
class _DeviceHybrid:
    groups: tuple            # (RowGroup, device row ids)
    long_rows: Any        # device ids of the segmented rows, or None
    segments: tuple | None   # device (row ids, begin, end)
    panels: list


def _upload(A, schedule: planning.HybridSchedule) -> _DeviceHybrid:
    key = ("device", schedule.key)
    if key not in A._cache:
        cupy = require_cupy()
        groups = tuple((g, cupy.asarray(g.rows.astype(A.index_dtype))) for g in schedule.groups)
        segments = None
        long_rows = None
        if schedule.segments is not None:
            seg_row, seg_begin, seg_end = schedule.segments
            segments = (cupy.asarray(seg_row.astype(A.index_dtype)), cupy.asarray(seg_begin), cupy.asarray(seg_end))
            long_rows = cupy.asarray(schedule.long_rows.astype(A.index_dtype))
        A._cache[key] = _DeviceHybrid(groups, long_rows, segments, device_panels(A, schedule.panels))
    return A._cache[key]


class HybridLauncher:
    """A bound ``adaptive`` plan: ``launcher(x, k, out, y_in, alpha, beta)`` with row-major operands."""

    allow_colmajor = False

    def __init__(self, A, plan: planning.SpmmPlan):
        self.A = A
        self.plan = plan
        assert isinstance(plan.schedule, planning.HybridSchedule)
        self.state = _upload(A, plan.schedule)

    def __call__(self, x: Operand, k: int, out, y_in: Operand | None, alpha, beta) -> tuple[Launch, ...] | None:
        """Run; the launches made where there are no dense panels (else None: the run is more)."""
        A, state = self.A, self.state
        launches = []
        if state.segments is not None:
            launches.append(launch_init_rows(A, state.long_rows, k, out, y_in, beta))
            launches.append(launch_warp(A, x, k, out, y_in, alpha, beta, segments=state.segments))
        for g, rows in state.groups:
            shape = g.shape(k)
            if shape == "regk":
                made = launch_regk(A, x, k, out, y_in, alpha, beta, rows=rows, sub=planning.regk_sub(g.max_length))
            elif shape == "subwarp":
                made = launch_subwarp(A, x, k, out, y_in, alpha, beta, rows=rows)
            else:
                made = launch_warp(A, x, k, out, y_in, alpha, beta, rows=rows)
            launches.append(made)
        if state.panels:
            run_panels(A, state.panels, self.plan.panels, x, k, out, y_in, alpha, beta)
            return None
        return tuple(made for made in launches if made is not None)
