"""Smoothed-aggregation algebraic multigrid: set-up where the matrix lives, cycle on b's side.

Two set-ups build the hierarchy (``A_l``, ``P_l``, ``R_l = P_l^T``):

- ``setup="spla"`` (:mod:`spla.linalg._amg_setup`): one NumPy/CuPy
  implementation that runs on the matrix's side: symmetric strength, a
  parallel MIS(2) aggregation, tentative prolongation from the near-null
  space, Jacobi smoothing, Galerkin products through SpGEMM, a dense inverse
  of the coarsest level. A GPU matrix never leaves the device.
- ``setup="pyamg"``: ``pyamg.smoothed_aggregation_solver`` on the host (its
  sequential standard aggregation and its options), the reference the tests
  compare with.

``setup="auto"`` takes ``"spla"`` for a GPU matrix and ``"pyamg"`` for a host
one when pyamg is installed (its compiled sequential aggregation is the faster
host set-up), else ``"spla"``. The hierarchy is then copied once per (side,
dtype) to NumPy/SciPy or to the GPU, where every operator application is a
:func:`spla.spmv` and the vector work is CuPy element-wise arithmetic. The
smoothers are the two that need nothing but products with ``A`` and its
diagonal, so they run unchanged on the GPU:

- ``"jacobi"``: ``x += omega / rho(D^-1 A) * D^-1 (b - A x)``, pyamg's
  ``('jacobi', {'omega': omega, 'withrho': True})``;
- ``"chebyshev"``: pyamg's ``('chebyshev', {...})``, the Chebyshev polynomial
  of ``degree`` on ``[lower_bound, upper_bound] * rho(A)`` applied to the
  residual by Horner's rule (``degree`` products with A per sweep).

With ``setup="pyamg"`` the spectral radii come from pyamg's own functions on
pyamg's level matrices (which cache them), so passing the smoother that
:meth:`AMGPreconditioner.pyamg_smoother` names to pyamg gives pyamg's solver
the very same cycle: the tests compare the two. ``setup="spla"`` estimates
them with a few Lanczos steps on the matrix's side.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .. import device as _device
from ..csr import CSRMatrix, as_csr
from ..errors import InputError
from ..planning.stats import cached_row_stats, remember_row_stats
from . import _amg_setup

#: Options of :func:`amg` beside their pyamg counterparts, for the README table.
SMOOTHER_DEFAULTS = {
    "jacobi": {"omega": 4.0 / 3.0, "iterations": 1},
    "chebyshev": {"degree": 3, "lower_bound": 1.0 / 30.0, "upper_bound": 1.1, "iterations": 1},
}
CYCLES = ("V", "W")
SETUPS = ("auto", "spla", "pyamg")
#: pyamg's defaults for the options the two set-ups share (``None`` in :func:`amg`'s signature).
PYAMG_DEFAULTS = {"aggregate": "standard", "max_coarse": 10}
SPLA_DEFAULTS = {"aggregate": "mis2", "max_coarse": _amg_setup.DEFAULT_MAX_COARSE}  # max_coarse per side


def _have_pyamg() -> bool:
    try:
        import pyamg  # noqa: F401
    except ImportError:
        return False
    return True


def _require_pyamg():
    try:
        import pyamg
    except ImportError:
        raise InputError("setup='pyamg' needs pyamg: pip install 'spla[amg]' (or use setup='spla')") from None
    return pyamg


def chebyshev_coefficients(lower: float, upper: float, degree: int) -> tuple:
    """Coefficients (highest power first) of the polynomial p of degree ``degree - 1`` whose
    residual polynomial ``1 - x p(x)`` is the Chebyshev polynomial of ``degree`` on
    ``[lower, upper]`` scaled to 1 at 0: the Chebyshev smoother's update is ``p(A) r``."""
    if not 0 < lower < upper or degree < 1:
        raise InputError(f"the Chebyshev smoother needs 0 < lower < upper and degree >= 1, got "
                         f"[{lower}, {upper}], degree {degree}")
    k = np.arange(degree)
    roots = 0.5 * (upper + lower) - 0.5 * (upper - lower) * np.cos((2 * k + 1) * np.pi / (2 * degree))
    residual = np.poly(roots) / np.prod(-roots)  # prod(1 - x / root): 1 at x = 0
    return tuple(float(c) for c in -residual[:-1])


@dataclass
class _Level:
    A: Any
    P: Any = None
    R: Any = None
    dinv: Any = None  # D^-1 (Jacobi smoother)
    omega: float = 0.0  # omega / rho(D^-1 A)
    coefficients: tuple = ()  # Chebyshev coefficients, highest power first
    scaled_dinv: Any = None  # omega / rho(D^-1 A) * D^-1, on a cycle's side


class _HostSide:
    """The cycle's operator steps with SciPy matrices and NumPy vectors."""

    @staticmethod
    def mv(M, v):
        return M @ v

    @staticmethod
    def add_mv(M, v, out):
        """out += M v."""
        out += M @ v
        return out

    @staticmethod
    def jacobi_correct(x, b, Ax, scaled_dinv):
        """x += scaled_dinv (b - A x), given A x."""
        x += scaled_dinv * (b - Ax)
        return x


class _DeviceSide:
    """The same steps on the GPU: spla's SpMV launchers (bound once per operator in :meth:`bind`,
    then launched with no checks) and one fused kernel for the Jacobi correction."""

    def __init__(self, dtype):
        from ..backends.cuda.amg import jacobi_correct_kernel
        from ..ops.spmv import spmv

        self._spmv = spmv
        self._jacobi = jacobi_correct_kernel()
        self._one = np.dtype(dtype).type(1)
        self._launchers: dict = {}

    def bind(self, M, internal: bool) -> None:
        """Bind M's SpMV now. An operator the set-up built (``internal``) runs the auto rule's kernel
        for its row statistics: no tuning-cache look-up, whose fingerprint copies and hashes its row
        pointer (tens of milliseconds on a million-row prolongator) for a matrix no cache can hold."""
        from ..ops.spmv import bind
        from ..planning.spmv import choose_kernel

        self._launchers[id(M)] = bind(M, choose_kernel(M) if internal else "auto")

    def mv(self, M, v):
        launcher = self._launchers.get(id(M))
        result = None if launcher is None else launcher.fast(v, 1, 0, None)
        return self._spmv(M, v) if result is None else result

    def add_mv(self, M, v, out):
        launcher = self._launchers.get(id(M))
        if launcher is None:
            return self._spmv(M, v, out, beta=1.0, out=out)
        return launcher.launch(v, out, self._one, self._one)

    def jacobi_correct(self, x, b, Ax, scaled_dinv):
        self._jacobi(b, Ax, scaled_dinv, x)
        return x


@dataclass
class _Hierarchy:
    xp: Any
    dtype: np.dtype
    levels: list
    coarse_inverse: Any
    side: Any  # _HostSide or _DeviceSide
    extra: dict = field(default_factory=dict)

    def mv(self, M, v):
        return self.side.mv(M, v)


def _on_side(array, xp):
    """array (NumPy or CuPy) as an array of xp, copied across only when needed."""
    if xp is np:
        return array.get() if _device.is_cupy_array(array) else np.asarray(array)
    return xp.asarray(array)


class AMGPreconditioner:
    """A smoothed-aggregation AMG hierarchy; one cycle is one application.

    Built by :func:`amg`. Use it as ``M=`` in :func:`spla.linalg.cg` (and
    every other spla, SciPy or CuPy solver: it has ``shape``, ``dtype``,
    ``matvec`` and ``matmat``), or as a solver of its own with
    :meth:`solve`. NumPy vectors run the cycle on the CPU, CuPy vectors on
    the GPU; the hierarchy is copied to each side (and dtype) once.

    Attributes
    ----------
    setup : {"spla", "pyamg"}
        Which set-up built the hierarchy.
    setup_times : dict
        Seconds of each set-up step (``setup="spla"``: ``strength``,
        ``aggregation``, ``spectral_radius``, ``tentative``, ``smoothing``,
        ``galerkin``, ``coarse_solve``, summed over the levels; ``pyamg``:
        ``pyamg`` and ``smoother``), and ``total``.
    setup_reads : int or None
        ``setup="spla"``: the values the set-up copied from the matrix's side to
        the host (one synchronisation each on the GPU; cuSPARSE's sparse
        products read their result sizes besides).
    ml : pyamg.MultilevelSolver or None
        pyamg's hierarchy (``setup="pyamg"`` only).
    solver_check_every : int
        1: the spla solvers check convergence after every iteration under this
        preconditioner (their GPU default is every 8): one cycle costs tens of
        launches, far more than a check, and AMG-CG converges in tens of
        iterations, so up to 7 iterations past convergence would add a
        quarter to a solve.
    cycle : {"V", "W"}
    smoother : {"jacobi", "chebyshev"}
    smoother_options : dict
    """

    solver_check_every = 1

    def __init__(self, levels: list, coarse_inverse, *, cycle: str, smoother: str, smoother_options: dict,
                 setup: str, setup_times: dict | None = None, setup_reads: int | None = None,
                 aggregates: list | None = None, ml=None):
        self.ml = ml
        self.setup = setup
        self.setup_times = dict(setup_times or {})
        self.setup_reads = setup_reads
        self.cycle = cycle
        self.smoother = smoother
        self.smoother_options = dict(smoother_options)
        n = levels[0].A.shape[0]
        self.shape = (n, n)
        self.dtype = np.dtype(levels[0].A.dtype)
        self._levels = levels  # on the set-up's side, float64
        self._coarse_inverse = coarse_inverse
        self._aggregates = aggregates or []
        self._by_side: dict = {}

    def _hierarchy(self, xp, dtype) -> _Hierarchy:
        key = (xp.__name__, np.dtype(dtype).str)
        hierarchy = self._by_side.get(key)
        if hierarchy is not None:
            return hierarchy
        dtype = np.dtype(dtype)
        if dtype.kind != "f":
            raise InputError(f"AMG cycles run in float32 or float64, got {dtype}")
        if xp is not np:
            side: Any = _DeviceSide(dtype)

            def move(M):
                moved = as_csr(M.astype(dtype)).to_device()
                stats = cached_row_stats(M)
                if stats is not None and cached_row_stats(moved) is None:
                    remember_row_stats(moved, stats)  # the same structure: the SpMV bind skips its host pass
                return moved
        else:
            side = _HostSide()

            def move(M):
                return M.astype(dtype).to_host().to_scipy()
        levels = []
        for entry in self._levels:
            moved = _Level(A=move(entry.A), omega=entry.omega, coefficients=entry.coefficients)
            if entry.P is not None:
                moved.P, moved.R = move(entry.P), move(entry.R)
            if entry.dinv is not None:
                moved.dinv = _on_side(entry.dinv, xp).astype(dtype)
                moved.scaled_dinv = (entry.omega * _on_side(entry.dinv, xp)).astype(dtype)
            levels.append(moved)
        if xp is not np:
            for index, level in enumerate(levels[:-1]):  # the coarsest level is the dense solve
                side.bind(level.A, internal=index > 0)
                side.bind(level.P, internal=True)
                side.bind(level.R, internal=True)
        coarse = _on_side(self._coarse_inverse, xp).astype(dtype)
        hierarchy = _Hierarchy(xp=xp, dtype=dtype, levels=levels, coarse_inverse=coarse, side=side)
        self._by_side[key] = hierarchy
        return hierarchy

    # ------------------------------------------------------------------ cycle
    def _smooth(self, h: _Hierarchy, level: _Level, x, b, x_is_zero: bool):
        """One smoothing step (``iterations`` sweeps); returns x (a new array when x_is_zero)."""
        sweeps = int(self.smoother_options["iterations"])
        scalar = h.dtype.type
        for _ in range(sweeps):
            if self.smoother == "jacobi":
                if x_is_zero:
                    x = level.scaled_dinv * b
                else:
                    x = h.side.jacobi_correct(x, b, h.mv(level.A, x), level.scaled_dinv)
            else:
                residual = b if x_is_zero else b - h.mv(level.A, x)
                coefficients = level.coefficients
                update = scalar(coefficients[0]) * residual
                for c in coefficients[1:]:
                    update = h.mv(level.A, update)
                    update += scalar(c) * residual
                if x_is_zero:
                    x = update
                else:
                    x += update
            x_is_zero = False
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
        x = h.side.add_mv(level.P, coarse_x, x)
        return self._smooth(h, level, x, b, False)

    def prepare(self, like) -> AMGPreconditioner:
        """Copy the hierarchy to the side and float dtype of the array ``like`` and bind every level's
        products there, as the first application would; returns self. Lets a caller pay this once,
        outside the first solve (or time it apart)."""
        xp = _device.array_module(like)
        self._hierarchy(xp, _float(like.dtype))
        return self

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
        return len(self._levels)

    def level_sizes(self) -> list:
        """Rows of A on each level, finest first."""
        return [int(level.A.shape[0]) for level in self._levels]

    def operator_complexity(self) -> float:
        """sum(nnz(A_l)) / nnz(A_0), pyamg's definition."""
        nnz = [level.A.nnz for level in self._levels]
        return float(sum(nnz)) / float(nnz[0])

    def grid_complexity(self) -> float:
        """sum(rows(A_l)) / rows(A_0), pyamg's definition."""
        sizes = self.level_sizes()
        return float(sum(sizes)) / float(sizes[0])

    def aggregates(self) -> list:
        """The aggregate of every row on each level but the coarsest (NumPy int64; -1: a row
        with no strong connection, in no aggregate), as the tentative prolongator groups them."""
        return [_on_side(a, np).astype(np.int64) for a in self._aggregates]

    def operators(self, level: int) -> dict:
        """The level's operators as the set-up left them (CSRMatrix, float64, on its side):
        ``A``, and ``P`` and ``R`` on every level but the coarsest."""
        entry = self._levels[level]
        out = {"A": entry.A}
        if entry.P is not None:
            out.update(P=entry.P, R=entry.R)
        return out

    def pyamg_smoother(self):
        """The pyamg ``presmoother``/``postsmoother`` argument equal to this cycle's smoother."""
        options = dict(self.smoother_options)
        if self.smoother == "jacobi":
            options["withrho"] = True
        return (self.smoother, options)

    def __repr__(self) -> str:
        sizes = " > ".join(f"{s:,}" for s in self.level_sizes())
        return (f"<spla.linalg.AMGPreconditioner {self.setup} set-up, {self.cycle}-cycle, {self.smoother}, "
                f"levels {sizes}, operator complexity {self.operator_complexity():.2f}>")

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
            A = self._levels[0].A.astype(_float(b.dtype))  # the Krylov work in b's precision, as the cycle's
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


# ------------------------------------------------------------------ the two set-ups
def _smoother_entry(entry: _Level, diagonal, rho_dinv_a, rho_a, smoother: str, options: dict, index: int) -> None:
    """The smoother's data for one level: D^-1 and omega / rho(D^-1 A), or Chebyshev coefficients."""
    if smoother == "jacobi":
        if not bool((diagonal != 0).all()):
            raise InputError(f"the Jacobi smoother needs a nonzero diagonal on AMG level {index}")
        entry.dinv = 1.0 / diagonal
        entry.omega = float(options["omega"]) / float(rho_dinv_a)
    else:
        rho = float(rho_a)
        entry.coefficients = chebyshev_coefficients(rho * float(options["lower_bound"]),
                                                    rho * float(options["upper_bound"]), int(options["degree"]))


def _pyamg_setup(csr: CSRMatrix, *, cycle, smoother, options, strength, aggregate, smooth, max_levels, max_coarse,
                 B, pyamg_options) -> AMGPreconditioner:
    pyamg = _require_pyamg()
    from pyamg.relaxation.smoothing import rho_D_inv_A
    from pyamg.util.linalg import approximate_spectral_radius

    started = time.perf_counter()
    import scipy.sparse as sp

    host = sp.csr_matrix(csr.to_host().to_scipy().astype(np.float64))  # pyamg's level matrices are csr_matrix
    host.sort_indices()
    smoother_spec = (smoother, {**options, **({"withrho": True} if smoother == "jacobi" else {})})
    ml = pyamg.smoothed_aggregation_solver(
        host, B=B, strength=strength, aggregate=PYAMG_DEFAULTS["aggregate"] if aggregate is None else aggregate,
        smooth=smooth, max_levels=max_levels,
        max_coarse=PYAMG_DEFAULTS["max_coarse"] if max_coarse is None else max_coarse,
        presmoother=smoother_spec, postsmoother=smoother_spec, coarse_solver="pinv",
        **{"keep": True, **pyamg_options})  # keep: the aggregates stay on pyamg's levels for aggregates()
    pyamg_seconds = time.perf_counter() - started
    levels, aggregates = [], []
    for index, level in enumerate(ml.levels):
        A = level.A.tocsr()
        entry = _Level(A=CSRMatrix.from_scipy(A))
        if index < len(ml.levels) - 1:
            entry.P, entry.R = CSRMatrix.from_scipy(level.P.tocsr()), CSRMatrix.from_scipy(level.R.tocsr())
            # pyamg's level.A caches rho, so pyamg's own smoother set-up sees the same value
            rho_dinv_a = rho_D_inv_A(level.A) if smoother == "jacobi" else None
            rho_a = approximate_spectral_radius(level.A) if smoother == "chebyshev" else None
            _smoother_entry(entry, A.diagonal(), rho_dinv_a, rho_a, smoother, options, index)
            if hasattr(level, "AggOp"):  # absent when the caller passed keep=False
                membership = level.AggOp.tocsr()
                rows = np.diff(membership.indptr) > 0
                owner = np.full(A.shape[0], -1, dtype=np.int64)
                owner[rows] = membership.indices
                aggregates.append(owner)
        levels.append(entry)
    import scipy.linalg

    # pyamg's 'pinv' coarse solver: the pseudo-inverse, applied as a dense product
    coarse_inverse = scipy.linalg.pinv(ml.levels[-1].A.toarray())
    total = time.perf_counter() - started
    times = {"pyamg": pyamg_seconds, "smoother": total - pyamg_seconds, "total": total}
    return AMGPreconditioner(levels, coarse_inverse, cycle=cycle, smoother=smoother, smoother_options=options,
                             setup="pyamg", setup_times=times, aggregates=aggregates, ml=ml)


def _spla_theta(strength) -> float:
    if strength == "symmetric":
        return 0.0
    if isinstance(strength, tuple) and len(strength) == 2 and strength[0] == "symmetric" and isinstance(
            strength[1], dict) and set(strength[1]) <= {"theta"}:
        theta = float(strength[1].get("theta", 0.0))
        if not 0.0 <= theta <= 1.0:
            raise InputError(f"the strength threshold theta must lie in [0, 1], got {theta}")
        return theta
    raise InputError(f"setup='spla' takes strength='symmetric' or ('symmetric', {{'theta': t}}), got {strength!r}; "
                     "other measures need setup='pyamg'")


def _spla_prolongation_omega(smooth) -> float | None:
    if smooth is None:
        return None
    if smooth == "jacobi":
        return 4.0 / 3.0
    if isinstance(smooth, tuple) and len(smooth) == 2 and smooth[0] == "jacobi" and isinstance(
            smooth[1], dict) and set(smooth[1]) <= {"omega"}:
        return float(smooth[1].get("omega", 4.0 / 3.0))
    raise InputError(f"setup='spla' takes smooth=('jacobi', {{'omega': w}}) or None (unsmoothed), got {smooth!r}; "
                     "other prolongation smoothers need setup='pyamg'")


def _spla_setup(csr: CSRMatrix, *, cycle, smoother, options, strength, aggregate, smooth, max_levels, max_coarse,
                B, pyamg_options) -> AMGPreconditioner:
    if pyamg_options:
        raise InputError(f"setup='spla' does not take {sorted(pyamg_options)} (pyamg options: use setup='pyamg')")
    if aggregate not in (None, SPLA_DEFAULTS["aggregate"]):
        raise InputError(f"setup='spla' aggregates by parallel MIS(2) (aggregate='mis2'), got {aggregate!r}; "
                         "pyamg's methods need setup='pyamg'")
    if max_coarse is not None:
        max_coarse = int(max_coarse)
        if max_coarse < 1:
            raise InputError(f"max_coarse must be >= 1, got {max_coarse}")
    setup_options = _amg_setup.SetupOptions(
        theta=_spla_theta(strength), prolongation_omega=_spla_prolongation_omega(smooth), max_levels=max_levels,
        max_coarse=max_coarse, B=B, rho_dinv_a=smoother == "jacobi", rho_a=smoother == "chebyshev")
    result = _amg_setup.smoothed_aggregation(csr, setup_options)
    levels = []
    for index, level in enumerate(result.levels):
        entry = _Level(A=level.A)
        if level.P is not None:
            entry.P, entry.R = level.P, level.R
            _smoother_entry(entry, level.diagonal, level.rho_dinv_a, level.rho_a, smoother, options, index)
        levels.append(entry)
    return AMGPreconditioner(levels, result.coarse_inverse, cycle=cycle, smoother=smoother, smoother_options=options,
                             setup="spla", setup_times=result.times, setup_reads=result.reads,
                             aggregates=[level.aggregates for level in result.levels if level.aggregates is not None])


def amg(A, *, setup: str = "auto", cycle: str = "V", smoother: str = "jacobi", smoother_options: dict | None = None,
        strength="symmetric", aggregate=None, smooth=("jacobi", {"omega": 4.0 / 3.0}), max_levels: int = 10,
        max_coarse: int | None = None, B=None, **pyamg_options) -> AMGPreconditioner:
    """Smoothed-aggregation algebraic multigrid preconditioner.

    Parameters
    ----------
    A : CSRMatrix, scipy/cupyx sparse matrix or dense array, n x n
        Symmetric (positive definite for CG). Where it lives decides where
        ``setup="spla"`` runs.
    setup : {"auto", "spla", "pyamg"}
        ``"spla"``: spla's own set-up on A's side (NumPy/SciPy on the host,
        CuPy/cupyx on the GPU: a GPU matrix never leaves the device) with a
        parallel MIS(2) aggregation and a second pass, and rho(D^-1 A) from 6
        Lanczos steps (pyamg: up to 15, restarted to 1%). ``"pyamg"``: pyamg's
        ``smoothed_aggregation_solver`` on the host. ``"auto"``: ``"spla"``
        for a GPU matrix, ``"pyamg"`` for a host matrix when pyamg is
        installed (its compiled sequential aggregation is the faster host
        set-up), else ``"spla"``.
    cycle : {"V", "W"}
        Cycle type (pyamg's ``cycle``).
    smoother : {"jacobi", "chebyshev"}
        Pre- and post-smoother (the same one, so the cycle stays symmetric).
    smoother_options : dict, optional
        ``jacobi``: ``omega`` (4/3, scaled by 1/rho(D^-1 A)), ``iterations``
        (1). ``chebyshev``: ``degree`` (3), ``lower_bound`` (1/30),
        ``upper_bound`` (1.1), ``iterations`` (1).
    strength
        ``"symmetric"`` (theta 0) or ``("symmetric", {"theta": t})``: pyamg's
        symmetric strength, ``|a_ij| >= t sqrt(|a_ii a_jj|)``. pyamg's other
        measures with ``setup="pyamg"``.
    aggregate
        Default: ``"mis2"`` (``setup="spla"``, the only one it has: MIS(2)
        roots take their neighbours, then free nodes with at least 5 free
        strong neighbours seed more aggregates, then the rest join a
        neighbour's) or pyamg's ``"standard"`` (``setup="pyamg"``, which takes
        any of pyamg's).
    smooth
        Prolongation smoother: ``("jacobi", {"omega": 4/3})`` (pyamg's
        default), or None for unsmoothed aggregation; pyamg's others with
        ``setup="pyamg"``.
    max_levels : int
        Levels at most, the coarsest included (pyamg's, 10).
    max_coarse : int, optional
        Coarsening stops at this many rows. Default: ``"spla"`` 2000 on the
        GPU (a dense coarsest solve of that size costs less than more levels'
        launches) and 500 on the host; ``"pyamg"`` 10 (pyamg's).
    B : array, optional
        Near-null space (default: constant). ``"spla"`` takes one vector.
    **pyamg_options
        Any other ``smoothed_aggregation_solver`` keyword (``symmetry``,
        ``improve_candidates``, ``diagonal_dominance``, ...), with
        ``setup="pyamg"`` only.

    Returns
    -------
    AMGPreconditioner
        ``M=`` for any solver, or ``.solve(b, rtol=..., maxiter=...)``;
        ``M.setup_times`` holds the set-up's steps in seconds;
        ``M.prepare(b)`` copies the hierarchy to b's side and binds its
        products ahead of the first application.

    Raises
    ------
    InputError
        pyamg missing for ``setup="pyamg"`` (install ``spla[amg]``), A empty,
        not square or complex, an unknown cycle, smoother or option, a zero
        diagonal with the Jacobi smoother, a non-positive diagonal with
        ``setup="spla"``.
    DeviceMemoryError
        A sparse product of the GPU set-up would not fit in free device
        memory (checked before it runs).

    See Also
    --------
    pyamg.smoothed_aggregation_solver, amg_solve
    """
    if setup not in SETUPS:
        raise InputError(f"setup must be one of {SETUPS}, got {setup!r}")
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
    max_levels = int(max_levels)
    if max_levels < 1:
        raise InputError(f"max_levels must be >= 1, got {max_levels}")
    csr = as_csr(A)
    if csr.n_rows != csr.n_cols:
        raise InputError(f"AMG needs a square matrix, got {csr.n_rows}x{csr.n_cols}")
    if csr.dtype.kind == "c":
        raise InputError("complex systems are not supported by spla")
    if csr.n_rows == 0:
        raise InputError("AMG needs a non-empty matrix")
    if setup == "auto":
        setup = "spla" if csr.on_gpu or not _have_pyamg() else "pyamg"
    build = _pyamg_setup if setup == "pyamg" else _spla_setup
    return build(csr, cycle=cycle, smoother=smoother, options=options, strength=strength, aggregate=aggregate,
                 smooth=smooth, max_levels=max_levels, max_coarse=max_coarse, B=B, pyamg_options=pyamg_options)


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
