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

import threading
from typing import Any

import numpy as np

from ...device import require_cupy
from ...errors import KernelError
from ...planning import spmm as planning
from . import spmm_fused, spmm_hybrid, spmm_launch  # noqa: F401  (declares every SpMM kernel)
from .cusparse import cupyx_matrix, spmm_anchor
from .gemm import multiprocessor_count
from .runtime import PackedLaunch, c_contiguity
from .spmm_launch import Launch, Operand, as_operand, launch_dia, launch_regk, launch_subwarp, launch_warp, scalar


def plan(A, k: int, kernel: str = "auto", **options) -> planning.SpmmPlan:
    """``planning.spmm.plan_spmm`` with this device's SM count (for the dense panels' GEMM rule)."""
    return planning.plan_spmm(A, k, kernel, multiprocessors=multiprocessor_count(), **options)


class _Run:
    """What each launcher kind provides: whether it reads column-major X, and one run."""

    allow_colmajor: bool = False

    def __init__(self, A, plan: planning.SpmmPlan):
        self.A, self.plan = A, plan

    def __call__(self, x: Operand, k: int, out, y_in: Operand | None, alpha, beta) -> tuple[Launch, ...] | None:
        """Run; the launches made (:class:`~.spmm_launch.Launch`), in order, where the run is just those
        launches (the hot path packs them), else None."""
        raise NotImplementedError


class _Single(_Run):
    """regk, warp, subwarp or dia over all rows: one launch."""

    def __init__(self, A, plan: planning.SpmmPlan):
        self.A, self.plan = A, plan
        self.allow_colmajor = plan.kernel == "regk"

    def __call__(self, x: Operand, k, out, y_in, alpha, beta):
        if self.plan.kernel == "regk":
            made = launch_regk(self.A, x, k, out, y_in, alpha, beta, sub=self.plan.regk_sub)
        elif self.plan.kernel == "warp":
            made = launch_warp(self.A, x, k, out, y_in, alpha, beta)
        elif self.plan.kernel == "dia":
            made = launch_dia(self.A, x, k, out, y_in, alpha, beta)
        else:
            made = launch_subwarp(self.A, x, k, out, y_in, alpha, beta)
        return None if made is None else (made,)


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
    """cuSPARSE SpMM with descriptors and buffer built once per (matrix, k): the fastest CSR algorithm there."""

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
        spmm_anchor(A, X, out)(X, out, alpha, beta if y_in is not None else 0.0)


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


# scalars the hot path takes as they are; any other type goes through spla.spmm's checks
_PLAIN_SCALARS = frozenset((int, float, np.float32, np.float64))


class _Packed:
    """One launch of a run, packed (:class:`~.runtime.PackedLaunch`), and the slots a call rewrites:
    X's (None where it reads no X), Y's and out's (both get out's pointer: the hot path has no Y), and
    alpha's value item (None where it takes no alpha). The caller's arrays are not kept."""

    def __init__(self, cupy, made: Launch, dtype):
        n_args = len(made.args)
        self.x_slot = made.x_slot
        self.y_in_slot, self.out_slot = n_args + Launch.Y_IN_SLOT, n_args + Launch.OUT_SLOT
        # A's arrays are kept, so their pointers stay valid; the caller's slots are left empty
        self.args = tuple(None if i in (self.x_slot, self.y_in_slot, self.out_slot) else a
                          for i, a in enumerate(made.args))
        self.launch = PackedLaunch(cupy, made.kernel, made.grid, planning.BLOCK, self.args)
        self.slots = self.launch.slots
        self.values = self.launch.values(dtype)
        self.alpha_item = None if made.x_slot is None else self.launch.value_index(n_args + Launch.ALPHA_SLOT, dtype)


class SpmmLauncher:
    """A plan bound to a device matrix: ``launcher(X, out, Y=None, alpha=1.0, beta=0.0)`` writes and returns out.

    ``out`` is a C-contiguous (n_rows, k) cupy array of A's dtype; X (n_cols,
    k) of A's dtype in any layout; Y (n_rows, k) or None (not read).

    :meth:`fast` is ``spla.spmm``'s hot path, as ``spla.spmv``'s launchers have one.
    """

    def __init__(self, A, plan: planning.SpmmPlan):
        if plan.kernel not in _LAUNCHERS:
            raise KernelError(f"no CUDA launcher for SpMM kernel {plan.kernel!r}")
        spmm_launch.types(A)
        self.A = A
        self.plan = plan
        self.run = _LAUNCHERS[plan.kernel](A, plan)
        cupy = require_cupy()
        self.ndarray, self.empty = cupy.ndarray, cupy.empty
        self.get_device = cupy.cuda.runtime.getDevice
        self.device = self.get_device()
        self.dtype, self.scalar = A.dtype, A.dtype.type
        self.one, self.zero = self.scalar(1), self.scalar(0)
        self.x_shape, self.out_shape = (A.n_cols, plan.k), (A.n_rows, plan.k)
        self.contiguous = c_contiguity(cupy)
        self.packed: tuple[_Packed, ...] | None = None  # the run's launches, packed by the first fast call
        self.alignment = 0  # bytes the pointers of X and out were aligned to when they were packed
        self.alpha_in_slot: Any = None  # the scalar object whose value the packed alpha slots hold
        self.lock = threading.Lock()  # around the slots' writes and the launches (see PackedLaunch)

    def fast(self, X, alpha, beta, out):
        """``alpha * A @ X`` into out (or a new array) for the common call, else None (the caller then takes
        the checked path): X a C-contiguous cupy array of the bound shape and A's dtype, out absent or the
        same of the output's shape, apart from X, beta zero, plain scalars, the bound device.

        Dtypes are compared by identity, as ``spla.spmv``'s hot path does (an equal dtype that is not
        NumPy's singleton goes the checked way). A run that is only launches (a single kernel's one;
        fused's and adaptive's where they have no dense panels: the long rows' init, their segments or
        fused's grid, adaptive's row groups) is packed once (:class:`~.runtime.PackedLaunch`) and
        re-launched with X's and out's pointers where they are aligned as those it was packed with (the
        vector widths follow the alignment); other runs go through their launcher without planning or
        checks again."""
        if (type(alpha) not in _PLAIN_SCALARS or type(beta) not in _PLAIN_SCALARS or beta != 0
                or type(X) is not self.ndarray or X.shape != self.x_shape or X.dtype is not self.dtype
                or not self.contiguous(X) or self.get_device() != self.device):
            return None
        if out is None:
            out = self.empty(self.out_shape, self.dtype)
        elif (type(out) is not self.ndarray or out.shape != self.out_shape or out.dtype is not self.dtype
              or not self.contiguous(out)):
            return None
        x_ptr, out_ptr = X.data.ptr, out.data.ptr
        if x_ptr < out_ptr + out.nbytes and out_ptr < x_ptr + X.nbytes:
            return None  # out overlaps X: the checked path writes through a fresh buffer
        alpha = self.one if alpha == 1 else self.scalar(alpha)
        packed = self.packed
        if packed is None or (x_ptr | out_ptr) % self.alignment:
            k = self.plan.k
            launches = self.run(Operand(X, k, False), k, out, None, alpha, self.zero)
            if packed is None and launches:
                self._pack(launches, x_ptr | out_ptr, alpha)
            return out
        with self.lock:
            if alpha is not self.alpha_in_slot:  # (alpha 1 is always the same object)
                for p in packed:
                    if p.alpha_item is not None:
                        p.values[p.alpha_item] = alpha
                self.alpha_in_slot = alpha
            for p in packed:
                slots = p.slots
                if p.x_slot is not None:
                    slots[p.x_slot] = x_ptr
                slots[p.y_in_slot] = slots[p.out_slot] = out_ptr
                p.launch.launch()
        return out

    def _pack(self, launches: tuple[Launch, ...], pointers: int, alpha) -> None:
        """Pack ``launches`` (a run's, just made with ``alpha``) for pointers aligned as ``pointers`` are."""
        cupy = require_cupy()
        # the largest power of two, up to 16 bytes (the widest vector), that divides both pointers
        self.alignment = min(16, (pointers & -pointers) or 16)
        self.alpha_in_slot = alpha
        self.packed = tuple(_Packed(cupy, made, self.dtype) for made in launches)

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
        planning.parse_spmm_kernel(kernel)  # KernelError on an unknown name
        return out
    launcher = bind(A, plan(A, k, kernel, **options))
    return launcher(X, out, None if (Y is None or beta == 0) else Y, alpha, beta)

