"""CUDA SpMM: bind a :class:`~spla.planning.spmm.SpmmPlan` to a device matrix and launch it.

``bind(A, plan)`` uploads what the plan needs (row lists, segments, dense
panels: cached on A) and returns a :class:`SpmmLauncher`; calling it only
launches. The kernels are declared in :mod:`.spmm_launch` (regk, warp,
subwarp, dia) and :mod:`.spmm_fused`; the hybrid schedule runs in
:mod:`.spmm_hybrid`; the cuSPARSE anchors live in :mod:`.cusparse`.

Layouts: X may be C-ordered, F-ordered, or a strided view. ``regk`` and
``fused`` read row-major X (unit column stride, any row stride) and
column-major X (unit row stride) directly; every other kernel needs row-major
X and gets a C-contiguous copy when X is not (one extra pass over X). The
output is C-contiguous; Y is read only when given (the front door drops it
when ``beta == 0``), in any layout.
"""

from __future__ import annotations

from typing import Any

from ...device import require_cupy
from ...errors import KernelError
from ...planning import spmm as planning
from . import spmm_fused, spmm_hybrid, spmm_launch  # noqa: F401  (declares every SpMM kernel)
from .cusparse import CusparseSpmm, cupyx_matrix
from .gemm import multiprocessor_count
from .spmm_launch import Operand, as_operand, launch_dia, launch_regk, launch_subwarp, launch_warp, scalar


def plan(A, k: int, kernel: str = "auto", **options) -> planning.SpmmPlan:
    """``planning.spmm.plan_spmm`` with this device's SM count (for the dense panels' GEMM rule)."""
    return planning.plan_spmm(A, k, kernel, multiprocessors=multiprocessor_count(), **options)


class _Run:
    """What each launcher kind provides: whether it reads column-major X, and one run."""

    allow_colmajor: bool = False

    def __init__(self, A, plan: planning.SpmmPlan):
        self.A, self.plan = A, plan

    def __call__(self, x: Operand, k: int, out, y_in: Operand | None, alpha, beta) -> None:
        raise NotImplementedError


class _Single(_Run):
    """regk, warp, subwarp or dia over all rows: one launch."""

    def __init__(self, A, plan: planning.SpmmPlan):
        self.A, self.plan = A, plan
        self.allow_colmajor = plan.kernel == "regk"

    def __call__(self, x: Operand, k, out, y_in, alpha, beta):
        if self.plan.kernel == "regk":
            launch_regk(self.A, x, k, out, y_in, alpha, beta, sub=self.plan.regk_sub)
        elif self.plan.kernel == "warp":
            launch_warp(self.A, x, k, out, y_in, alpha, beta)
        elif self.plan.kernel == "dia":
            launch_dia(self.A, x, k, out, y_in, alpha, beta)
        else:
            launch_subwarp(self.A, x, k, out, y_in, alpha, beta)


class _SpmvLoop(_Run):
    """k separate ``auto`` SpMVs: what a user without SpMM pays."""

    allow_colmajor = True

    def __call__(self, x: Operand, k, out, y_in, alpha, beta):
        from ...planning.spmv import plan_spmv
        from . import spmv as cuda_spmv

        cupy = require_cupy()
        launcher = cuda_spmv.bind(cupy, self.A, plan_spmv(self.A, "auto"))
        X = x.array  # the caller's (n_cols, k) block, whatever its layout
        scalar = self.A.dtype.type
        for c in range(k):
            column = cupy.empty(self.A.n_rows, dtype=self.A.dtype)
            if y_in is not None:
                column[...] = y_in.array[:, c]
            launcher.launch(cupy.ascontiguousarray(X[:, c], dtype=self.A.dtype), column, scalar(alpha),
                            scalar(beta if y_in is not None else 0.0))
            out[:, c] = column


class _Cusparse(_Run):
    """cuSPARSE SpMM with descriptors and buffer built once per (matrix, k)."""

    allow_colmajor = False

    def __call__(self, x: Operand, k, out, y_in, alpha, beta):
        cupy = require_cupy()
        A = self.A
        if y_in is not None:
            out[...] = y_in.array
        if A.nnz == 0:  # cuSPARSE refuses empty matrices on some versions; the answer is beta * Y
            if y_in is None:
                out.fill(0)
            else:
                out *= scalar(A, beta)
            return
        X = cupy.ascontiguousarray(x.array)
        key = ("cusparse-spmm", k)
        state = A._cache.get(key)
        if state is None:
            state = A._cache[key] = CusparseSpmm(A, X, out)
        state(X, out, alpha, beta if y_in is not None else 0.0)


class _CusparseCupy(_Run):
    """``cupyx csr_matrix @ X``: cuSPARSE as a CuPy user calls it."""

    allow_colmajor = True

    def __call__(self, x: Operand, k, out, y_in, alpha, beta):
        A = self.A
        X = x.array  # the caller's (n_cols, k) block, whatever its layout
        out[...] = cupyx_matrix(A) @ X
        if alpha != 1:
            out *= scalar(A, alpha)
        if y_in is not None:
            out += y_in.array * scalar(A, beta)


_LAUNCHERS: dict[str, Any] = {
    "regk": _Single, "warp": _Single, "subwarp": _Single, "dia": _Single,
    "adaptive": spmm_hybrid.HybridLauncher, "fused": spmm_fused.FusedLauncher,
    "spmv-loop": _SpmvLoop, "cusparse": _Cusparse, "cusparse-cupy": _CusparseCupy,
}


class SpmmLauncher:
    """A plan bound to a device matrix: ``launcher(X, out, Y=None, alpha=1.0, beta=0.0)`` writes and returns out.

    ``out`` is a C-contiguous (n_rows, k) cupy array of A's dtype; X (n_cols,
    k) of A's dtype in any layout; Y (n_rows, k) or None (not read).
    """

    def __init__(self, A, plan: planning.SpmmPlan):
        if plan.kernel not in _LAUNCHERS:
            raise KernelError(f"no CUDA launcher for SpMM kernel {plan.kernel!r}")
        spmm_launch.types(A)
        self.A = A
        self.plan = plan
        self.run = _LAUNCHERS[plan.kernel](A, plan)

    def __call__(self, X, out, Y=None, alpha=1.0, beta=0.0):
        k = int(X.shape[1])
        if k != self.plan.k:
            raise KernelError(f"this launcher was bound for k={self.plan.k}, not {k}")
        if self.A.n_rows == 0 or k == 0:
            return out
        x = as_operand(X, allow_colmajor=self.run.allow_colmajor)
        y_in = None if Y is None else as_operand(Y, allow_colmajor=False)
        self.run(x, k, out, y_in, alpha, beta)
        return out


def bind(A, plan: planning.SpmmPlan) -> SpmmLauncher:
    """The launcher of ``plan`` on device matrix A, cached on A per plan."""
    key = ("spmm-launcher", plan.key)
    launcher = A._cache.get(key)
    if launcher is None:
        launcher = A._cache[key] = SpmmLauncher(A, plan)
    return launcher


def spmm(A, X, Y=None, *, alpha=1.0, beta=0.0, kernel: str = "auto", out=None, **options):
    """``alpha * A @ X + beta * Y`` for device matrix A and cupy X of A's dtype (plan, bind, launch).

    ``options`` are :func:`spla.planning.spmm.plan_spmm`'s schedule options
    (benchmark variants). Shapes are checked by :func:`spla.ops.spmm.spmm`.
    """
    cupy = require_cupy()
    k = int(X.shape[1])
    if out is None:
        out = cupy.empty((A.n_rows, k), dtype=A.dtype)
    if A.n_rows == 0 or k == 0:
        if kernel not in planning.KERNELS:
            raise KernelError(f"unknown SpMM kernel {kernel!r}; expected one of {', '.join(planning.KERNELS)}")
        return out
    launcher = bind(A, plan(A, k, kernel, **options))
    return launcher(X, out, None if (Y is None or beta == 0) else Y, alpha, beta)

