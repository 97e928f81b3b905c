"""Smoothed-aggregation algebraic multigrid: set-up with pyamg, cycle on b's side.

The hierarchy (``A_l``, ``P_l``, ``R_l``) comes from
``pyamg.smoothed_aggregation_solver`` on the host; it is then copied once per
(side, dtype) to NumPy/SciPy or to the GPU, where every operator application
is a :func:`spla.spmv` and the vector work is CuPy element-wise arithmetic.
The smoothers are the two that need nothing but products with ``A`` and its
diagonal, so they run unchanged on the GPU:

- ``"jacobi"``: ``x += omega / rho(D^-1 A) * D^-1 (b - A x)``, pyamg's
  ``('jacobi', {'omega': omega, 'withrho': True})``;
- ``"chebyshev"``: pyamg's ``('chebyshev', {...})``, the Chebyshev polynomial
  of ``degree`` on ``[lower_bound, upper_bound] * rho(A)`` applied to the
  residual by Horner's rule (``degree`` products with A per sweep).

The spectral radii are estimated once at set-up, with pyamg's own functions
on pyamg's level matrices (which cache them), so passing the smoother that
:meth:`AMGPreconditioner.pyamg_smoother` names to pyamg gives pyamg's solver
the very same cycle: the tests compare the two.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .. import device as _device
from ..csr import as_csr
from ..errors import InputError

#: Options of :func:`amg` beside their pyamg counterparts, for the README table.
SMOOTHER_DEFAULTS = {
    "jacobi": {"omega": 4.0 / 3.0, "iterations": 1},
    "chebyshev": {"degree": 3, "lower_bound": 1.0 / 30.0, "upper_bound": 1.1, "iterations": 1},
}
CYCLES = ("V", "W")


def _require_pyamg():
    try:
        import pyamg
    except ImportError:
        raise InputError("spla.linalg.amg needs pyamg for its set-up: pip install 'spla[amg]'") from None
    return pyamg


@dataclass
class _Level:
    A: Any
    P: Any = None
    R: Any = None
    dinv: Any = None  # D^-1 (Jacobi smoother)
    omega: float = 0.0  # omega / rho(D^-1 A)
    coefficients: tuple = ()  # Chebyshev coefficients, highest power first


@dataclass
class _Hierarchy:
    xp: Any
    dtype: np.dtype
    levels: list
    coarse_inverse: Any
    mv: Callable  # mv(operator, vector) on this side
    extra: dict = field(default_factory=dict)


class AMGPreconditioner:
    """A smoothed-aggregation AMG hierarchy; one cycle is one application.

    Built by :func:`amg`. Use it as ``M=`` in :func:`spla.linalg.cg` (and
    every other spla, SciPy or CuPy solver: it has ``shape``, ``dtype``,
    ``matvec`` and ``matmat``), or as a solver of its own with
    :meth:`solve`. NumPy vectors run the cycle on the CPU, CuPy vectors on
    the GPU; the hierarchy is copied to each side (and dtype) once.

    Attributes
    ----------
    ml : pyamg.MultilevelSolver
        pyamg's hierarchy this was built from.
    cycle : {"V", "W"}
    smoother : {"jacobi", "chebyshev"}
    smoother_options : dict
    """

    def __init__(self, ml, *, cycle: str, smoother: str, smoother_options: dict):
        self.ml = ml
        self.cycle = cycle
        self.smoother = smoother
        self.smoother_options = dict(smoother_options)
        n = ml.levels[0].A.shape[0]
        self.shape = (n, n)
        self.dtype = np.dtype(ml.levels[0].A.dtype)
        self._host_levels = self._build_host_levels()
        self._by_side: dict = {}

    # ----------------------------------------------------------------- set-up
    def _build_host_levels(self):
        from pyamg.relaxation.chebyshev import chebyshev_polynomial_coefficients
        from pyamg.relaxation.smoothing import rho_D_inv_A
        from pyamg.util.linalg import approximate_spectral_radius

        levels = []
        ml_levels = self.ml.levels
        for index, level in enumerate(ml_levels):
            A = level.A.tocsr()
            entry = _Level(A=A)
            if index < len(ml_levels) - 1:
                entry.P, entry.R = level.P.tocsr(), level.R.tocsr()
                if self.smoother == "jacobi":
                    diag = A.diagonal()
                    if np.any(diag == 0):
                        raise InputError(f"the Jacobi smoother needs a nonzero diagonal on AMG level {index}")
                    entry.dinv = 1.0 / diag
                    # pyamg's level.A caches rho, so pyamg's own smoother set-up sees the same value
                    entry.omega = float(self.smoother_options["omega"]) / float(rho_D_inv_A(level.A))
                else:
                    rho = float(approximate_spectral_radius(level.A))
                    lower = rho * float(self.smoother_options["lower_bound"])
                    upper = rho * float(self.smoother_options["upper_bound"])
                    degree = int(self.smoother_options["degree"])
                    entry.coefficients = tuple(float(c) for c in
                                               -chebyshev_polynomial_coefficients(lower, upper, degree)[:-1])
            levels.append(entry)
        import scipy.linalg

        # pyamg's 'pinv' coarse solver: the pseudo-inverse, applied as a dense product
        self._coarse_inverse = scipy.linalg.pinv(levels[-1].A.toarray())
        return levels

    def _hierarchy(self, xp, dtype) -> _Hierarchy:
        key = (xp.__name__, np.dtype(dtype).str)
        hierarchy = self._by_side.get(key)
        if hierarchy is not None:
            return hierarchy
        dtype = np.dtype(dtype)
        if dtype.kind != "f":
            raise InputError(f"AMG cycles run in float32 or float64, got {dtype}")
        on_gpu = xp is not np
        if on_gpu:
            from .. import spmv

            def move(M):
                return as_csr(M.astype(dtype)).to_device()

            def mv(M, v):
                return spmv(M, v)
        else:
            def move(M):
                return M.astype(dtype)

            def mv(M, v):
                return M @ v
        levels = []
        for entry in self._host_levels:
            moved = _Level(A=move(entry.A), omega=entry.omega, coefficients=entry.coefficients)
            if entry.P is not None:
                moved.P, moved.R = move(entry.P), move(entry.R)
            if entry.dinv is not None:
                moved.dinv = xp.asarray(entry.dinv.astype(dtype))
            levels.append(moved)
        coarse = xp.asarray(self._coarse_inverse.astype(dtype))
        hierarchy = _Hierarchy(xp=xp, dtype=dtype, levels=levels, coarse_inverse=coarse, mv=mv)
        self._by_side[key] = hierarchy
        return hierarchy

    # ------------------------------------------------------------------ cycle
    def _smooth(self, h: _Hierarchy, level: _Level, x, b, x_is_zero: bool):
        """One smoothing step (``iterations`` sweeps); returns x (a new array when x_is_zero)."""
        sweeps = int(self.smoother_options["iterations"])
        scalar = h.dtype.type
        for _ in range(sweeps):
            residual = b if x_is_zero else b - h.mv(level.A, x)
            if self.smoother == "jacobi":
                update = scalar(level.omega) * (level.dinv * residual)
            else:
                coefficients = level.coefficients
                update = scalar(coefficients[0]) * residual
                for c in coefficients[1:]:
                    update = h.mv(level.A, update)
                    update += scalar(c) * residual
            if x_is_zero:
                x = update
                x_is_zero = False
            else:
                x += update
        return x

    def _cycle(self, h: _Hierarchy, index: int, x, b, x_is_zero: bool):
        levels = h.levels
        if len(levels) == 1:
            return h.coarse_inverse @ b
        level = levels[index]
        x = self._smooth(h, level, x, b, x_is_zero)
        residual = b - h.mv(level.A, x)
        coarse_b = h.mv(level.R, residual)
        if index == len(levels) - 2:
            coarse_x = h.coarse_inverse @ coarse_b
        elif self.cycle == "V":
            coarse_x = self._cycle(h, index + 1, None, coarse_b, True)
        else:  # W: two coarse cycles, the second from the first's result
            coarse_x = self._cycle(h, index + 1, None, coarse_b, True)
            coarse_x = self._cycle(h, index + 1, coarse_x, coarse_b, False)
        x += h.mv(level.P, coarse_x)
        return self._smooth(h, level, x, b, False)

    # -------------------------------------------------------- operator face
    def matvec(self, v):
        """One cycle from a zero guess: ``M v`` with M approximating A^{-1}."""
        xp = _device.array_module(v)
        v = v.ravel()
        dtype = v.dtype if v.dtype.kind == "f" else np.dtype(np.float64)
        h = self._hierarchy(xp, dtype)
        return self._cycle(h, 0, None, xp.ascontiguousarray(v, dtype=dtype), True)

    def matmat(self, V):
        xp = _device.array_module(V)
        return xp.stack([self.matvec(V[:, j]) for j in range(V.shape[1])], axis=1)

    def __matmul__(self, v):
        return self.matvec(v) if v.ndim == 1 else self.matmat(v)

    # ---------------------------------------------------------- description
    @property
    def levels(self) -> int:
        return len(self._host_levels)

    def level_sizes(self) -> list:
        """Rows of A on each level, finest first."""
        return [int(level.A.shape[0]) for level in self._host_levels]

    def operator_complexity(self) -> float:
        """sum(nnz(A_l)) / nnz(A_0), pyamg's definition."""
        nnz = [level.A.nnz for level in self._host_levels]
        return float(sum(nnz)) / float(nnz[0])

    def pyamg_smoother(self):
        """The pyamg ``presmoother``/``postsmoother`` argument equal to this cycle's smoother."""
        options = dict(self.smoother_options)
        if self.smoother == "jacobi":
            options["withrho"] = True
        return (self.smoother, options)

    def __repr__(self) -> str:
        sizes = " > ".join(f"{s:,}" for s in self.level_sizes())
        return (f"<spla.linalg.AMGPreconditioner {self.cycle}-cycle, {self.smoother}, levels {sizes}, "
                f"operator complexity {self.operator_complexity():.2f}>")

    # -------------------------------------------------------- solver face
    def solve(self, b, x0=None, *, rtol=1e-5, atol=0.0, maxiter=100, accel=None, callback=None):
        """Solve ``A x = b`` with AMG cycles (stationary) or AMG-preconditioned ``accel``.

        Parameters
        ----------
        b : 1-D numpy.ndarray or cupy.ndarray
        x0 : array like b, optional
            Starting guess (default zeros); never modified.
        rtol, atol : float
            Converged when ``||b - A x|| <= max(rtol ||b||, atol)``.
        maxiter : int
            Cycles (or Krylov iterations with ``accel``).
        accel : {None, "cg", "bicgstab", "gmres", "minres"}
            None: repeat ``x += cycle(b - A x)`` (pyamg's ``solve`` without
            ``accel``); a name: that spla.linalg solver with ``M=self``.
        callback : callable, optional
            ``callback(xk)`` after every cycle / iteration.

        Returns
        -------
        x : array on b's side
        info : int
            0 converged, > 0 the cycles run without converging, < 0 breakdown
            (non-finite residual, or the Krylov solver's code).
        """
        if accel is not None:
            solver = _krylov_solver(accel)
            A = self._host_levels[0].A if not _device.is_cupy_array(b) else self._hierarchy(
                _device.array_module(b), _float(b.dtype)).levels[0].A
            return solver(A, b, x0, rtol=rtol, atol=atol, maxiter=maxiter, M=self, callback=callback)
        xp = _device.array_module(b)
        if b.ndim != 1 and not (b.ndim == 2 and b.shape[1] == 1):
            raise InputError(f"b must be a vector of length {self.shape[0]}, got shape {b.shape}")
        b = b.ravel()
        if b.shape[0] != self.shape[0]:
            raise InputError(f"b has length {b.shape[0]} but A is {self.shape[0]}x{self.shape[1]}")
        if rtol < 0 or atol < 0:
            raise InputError(f"rtol and atol must be non-negative, got {rtol}, {atol}")
        maxiter = int(maxiter)
        if maxiter < 0:
            raise InputError(f"maxiter must be >= 0, got {maxiter}")
        h = self._hierarchy(xp, _float(b.dtype))
        b = xp.ascontiguousarray(b, dtype=h.dtype)
        A = h.levels[0].A
        b_norm = float(xp.linalg.norm(b))
        tolerance = max(float(atol), float(rtol) * b_norm)
        if x0 is None:
            x = xp.zeros_like(b)
        else:
            x = xp.array(x0, dtype=h.dtype, copy=True).ravel()
        residual = b - h.mv(A, x)
        for cycle in range(maxiter + 1):
            r_norm = float(xp.linalg.norm(residual))
            if not math.isfinite(r_norm):
                return x, -1
            if r_norm <= tolerance:
                return x, 0
            if cycle == maxiter:
                break
            x += self._cycle(h, 0, None, residual, True)
            residual = b - h.mv(A, x)
            if callback is not None:
                callback(x)
        return x, maxiter


def _krylov_solver(accel: str) -> Callable[..., Any]:
    from . import _krylov

    solvers: dict[str, Callable[..., Any]] = {"cg": _krylov.cg, "bicgstab": _krylov.bicgstab,
                                              "gmres": _krylov.gmres, "minres": _krylov.minres}
    if accel not in solvers:
        raise InputError(f"accel must be None or one of {sorted(solvers)}, got {accel!r}")
    return solvers[accel]


def _float(dtype) -> np.dtype:
    dtype = np.dtype(dtype)
    return dtype if dtype.kind == "f" else np.dtype(np.float64)


def amg(A, *, cycle: str = "V", smoother: str = "jacobi", smoother_options: dict | None = None,
        strength="symmetric", aggregate="standard", smooth=("jacobi", {"omega": 4.0 / 3.0}),
        max_levels: int = 10, max_coarse: int = 10, B=None, **pyamg_options) -> AMGPreconditioner:
    """Smoothed-aggregation algebraic multigrid preconditioner.

    Parameters
    ----------
    A : CSRMatrix, scipy/cupyx sparse matrix or dense array, n x n
        Symmetric (positive definite for CG); a GPU matrix is copied to the
        host for the set-up.
    cycle : {"V", "W"}
        Cycle type (pyamg's ``cycle``).
    smoother : {"jacobi", "chebyshev"}
        Pre- and post-smoother (the same one, so the cycle stays symmetric).
    smoother_options : dict, optional
        ``jacobi``: ``omega`` (4/3, scaled by 1/rho(D^-1 A)), ``iterations``
        (1). ``chebyshev``: ``degree`` (3), ``lower_bound`` (1/30),
        ``upper_bound`` (1.1), ``iterations`` (1).
    strength, aggregate, smooth, max_levels, max_coarse, B
        Passed to ``pyamg.smoothed_aggregation_solver`` with pyamg's defaults.
    **pyamg_options
        Any other ``smoothed_aggregation_solver`` keyword (``symmetry``,
        ``improve_candidates``, ``diagonal_dominance``, ...).

    Returns
    -------
    AMGPreconditioner
        ``M=`` for any solver, or ``.solve(b, rtol=..., maxiter=...)``.

    Raises
    ------
    InputError
        pyamg missing (install ``spla[amg]``), A not square, complex, an
        unknown cycle or smoother, a zero diagonal with the Jacobi smoother.

    See Also
    --------
    pyamg.smoothed_aggregation_solver, amg_solve
    """
    pyamg = _require_pyamg()
    if cycle not in CYCLES:
        raise InputError(f"cycle must be one of {CYCLES}, got {cycle!r}")
    if smoother not in SMOOTHER_DEFAULTS:
        raise InputError(f"smoother must be one of {tuple(SMOOTHER_DEFAULTS)}, got {smoother!r}")
    options = dict(SMOOTHER_DEFAULTS[smoother])
    unknown = set(smoother_options or {}) - set(options)
    if unknown:
        raise InputError(f"unknown {smoother} smoother options {sorted(unknown)}; known: {sorted(options)}")
    options.update(smoother_options or {})
    for name in ("presmoother", "postsmoother", "coarse_solver"):
        if name in pyamg_options:
            raise InputError(f"{name} is set by spla (smoother=, and a dense coarsest solve), not passed to pyamg")
    csr = as_csr(A).to_host()
    if csr.n_rows != csr.n_cols:
        raise InputError(f"AMG needs a square matrix, got {csr.n_rows}x{csr.n_cols}")
    if csr.dtype.kind == "c":
        raise InputError("complex systems are not supported by spla")
    host = csr.to_scipy().astype(np.float64)
    import scipy.sparse as sp

    host = sp.csr_matrix(host)  # pyamg 5 accepts both; its level matrices are csr_matrix
    host.sort_indices()
    smoother_spec = (smoother, {**options, **({"withrho": True} if smoother == "jacobi" else {})})
    ml = pyamg.smoothed_aggregation_solver(
        host, B=B, strength=strength, aggregate=aggregate, smooth=smooth, max_levels=max_levels,
        max_coarse=max_coarse, presmoother=smoother_spec, postsmoother=smoother_spec, coarse_solver="pinv",
        **pyamg_options)
    return AMGPreconditioner(ml, cycle=cycle, smoother=smoother, smoother_options=options)


def amg_solve(A, b, x0=None, *, rtol=1e-5, atol=0.0, maxiter=None, accel="cg", callback=None, **amg_options):
    """Solve ``A x = b`` with an AMG preconditioner built for A (set-up and solve in one call).

    Parameters
    ----------
    A, b, x0, rtol, atol, callback
        As in :func:`spla.linalg.cg`; b decides the side (NumPy: CPU, CuPy: GPU).
    maxiter : int, optional
        Krylov iterations (default 10 n) or, with ``accel=None``, cycles (default 100).
    accel : {"cg", None, "bicgstab", "gmres", "minres"}
        The Krylov method preconditioned by one cycle, or None for plain cycling.
    **amg_options
        Passed to :func:`amg`.

    Returns
    -------
    x, info : as the spla.linalg solvers.
    """
    M = amg(A, **amg_options)
    if maxiter is None:
        maxiter = 100 if accel is None else 10 * M.shape[0]
    if accel is None:
        return M.solve(b, x0, rtol=rtol, atol=atol, maxiter=maxiter, callback=callback)
    return _krylov_solver(accel)(A, b, x0, rtol=rtol, atol=atol, maxiter=maxiter, M=M, callback=callback)
