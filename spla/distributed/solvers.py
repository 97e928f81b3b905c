"""Krylov solvers on a :class:`DistCSRMatrix`, with :mod:`spla.linalg`'s signatures and ``info`` codes.

``x, info = cg(A, b, x0=None, *, rtol=1e-5, atol=0.0, maxiter=None, M=None,
callback=None, check_every=None, capture=None)``, likewise :func:`bicgstab`
(``check_every``), :func:`gmres` (``restart``, ``callback_type``),
:func:`minres` (``shift``) and :func:`block_cg` (an n x k block, per-column
``info``, ``check_every``). b, x0 and x are :class:`DistVector` in A's
layout; every rank calls the solver and gets the same ``info``.

The recurrences are spla.linalg's (themselves SciPy's), and so is the way
an iteration avoids waiting for the host: cg and bicgstab run spla.linalg's
vector steps (:func:`spla.linalg._kernels.kernels_for`: fused launches on
the GPU, NumPy on the CPU) with every scalar in a small ``state`` array on
the vectors' side. Each local partial sum is summed over ranks where it
lies (:meth:`Communicator.allreduce_sum_inplace`: NCCL on the GPU's
stream, MPI for host data, nothing at all on one rank; cg fuses ``r.z``
and ``r.r`` into one sum), and the host reads ``state`` only every
``check_every`` iterations (default 1 on the CPU and
:data:`spla.linalg.DEFAULT_GPU_CHECK_EVERY` on the GPU, so up to
``check_every - 1`` more iterations than SciPy may run). With GPU data and
one rank an iteration has no communication, and cg runs without Python as
:func:`spla.linalg.cg` does (``capture=``): small systems in its one-launch
loop, larger ones replaying a CUDA graph of two iterations. block_cg
keeps its per-column scalars on the device the same way. gmres and minres
keep their small recurrences on the host, as spla.linalg's do: one host
read per (inner) iteration, the sums before it reduced on the device.

``M`` is None, ``"jacobi"`` (the inverse of A's diagonal), a DistVector
(multiplied entry-wise, e.g. an inverse diagonal; fused into cg's update on
the GPU like "jacobi") or a callable taking and returning a DistVector.
"""

from __future__ import annotations

import math
from functools import cached_property

import numpy as np

from ..errors import InputError
from ..linalg._kernels import kernels_for
from ..linalg._krylov import (
    NONFINITE,
    IterationCounter,
    bicgstab_iterations,
    cg_iterations,
    givens_step,
    gmres_options,
    inner_tolerance,
    loop_iterations,
    minres_iterations,
    upper_triangular_solve,
    wants_capture,
)
from ..linalg._system import DEFAULT_GPU_CHECK_EVERY, absolute_tolerance, default_maxiter, or_identity
from .vector import DistVector


class _System:
    """What every solver needs, on local slices: A's local product, the preconditioner, global sums."""

    def __init__(self, name, A, b, x0, M, block=False, check_every=None):
        if not hasattr(A, "matvec_local") or not hasattr(A, "row_offsets"):
            raise InputError(f"spla.distributed.{name}: A must be a DistCSRMatrix, got {type(A).__name__}")
        if A.shape[0] != A.shape[1]:
            raise InputError(f"spla.distributed.{name}: A must be square, got {A.shape[0]}x{A.shape[1]}")
        if not isinstance(b, DistVector):
            raise InputError(f"spla.distributed.{name}: b must be a DistVector (A.distribute_vector(b)), "
                             f"got {type(b).__name__}")
        if b.shape[0] != A.shape[0] or not np.array_equal(b.offsets, A.row_offsets):
            raise InputError(f"spla.distributed.{name}: b has shape {b.shape} split at {b.offsets.tolist()}, "
                             f"A needs {A.shape[0]} rows split at {A.row_offsets.tolist()}")
        if block and b.local.ndim != 2:
            raise InputError(f"spla.distributed.{name}: B must be an n x k block, got shape {b.shape}")
        if not block and b.local.ndim != 1:
            raise InputError(f"spla.distributed.{name}: b must be a vector, got shape {b.shape}")
        self.comm, self.xp = A.comm, A.xp
        self.offsets = A.row_offsets
        self.n = A.shape[0]
        self.dtype = np.dtype(np.float32) if A.dtype == np.float32 and b.dtype == np.float32 \
            else np.dtype(np.float64)
        self.A = A.astype(self.dtype)  # products in the solver's dtype, as spla.linalg's
        self.product = self.A.local_product()
        self.reduce = self.comm.allreduce_sum_inplace
        self.b = b.local.astype(self.dtype, copy=False)
        if x0 is None:
            self.x = self.xp.zeros_like(self.b)
        else:
            if not isinstance(x0, DistVector) or x0.shape != b.shape or not np.array_equal(x0.offsets, b.offsets):
                raise InputError(f"spla.distributed.{name}: x0 must be a DistVector shaped and split like b")
            self.x = x0.local.astype(self.dtype, copy=True)
        self.x0_given = x0 is not None
        self.psolve, self.inverse_diagonal = self._preconditioner(name, A, M)
        if check_every is None:
            check_every = DEFAULT_GPU_CHECK_EVERY if self.on_gpu else 1
        self.check_every = int(check_every)
        if self.check_every < 1:
            raise InputError(f"spla.distributed.{name}: check_every must be >= 1, got {check_every}")

    @property
    def on_gpu(self) -> bool:
        return self.xp is not np

    @cached_property
    def kernels(self):
        """spla.linalg's vector steps for this rank's slice length."""
        return kernels_for(self.xp, self.b.shape[0], self.dtype)

    def matvec(self, v):
        """This rank's slice of A v, checked (any slice: a user preconditioner's output, a view)."""
        return self.A.matvec_local(v)

    def reduced(self, local):
        """A float64 copy of a small local array, summed over ranks where it lies (no host read)."""
        total = local.astype(np.float64).reshape(-1)
        self.reduce(total)
        return total

    def fetch(self, values) -> np.ndarray:
        """Device values on the host: the one synchronisation a check costs."""
        return values.get() if hasattr(values, "get") else np.asarray(values)

    def norm(self, v) -> float:
        """The global 2-norm of distributed local slices, in one Allreduce (summed on the device
        until the reduction)."""
        local = self.xp.asarray(self.xp.vdot(v, v).real, dtype=self.xp.float64).reshape(1)
        return math.sqrt(max(float(self.comm.allreduce_sum(local)[0]), 0.0))

    def column_dots(self, a, b):
        return self.comm.allreduce_sum((a * b).sum(axis=0).astype(self.xp.float64))

    def wrap(self, local) -> DistVector:
        return DistVector.wrap(local, self.offsets, self.comm)

    def _preconditioner(self, name, A, M):
        """(psolve, the inverse diagonal when M is one, else None)."""
        if M is None:
            return None, None
        if isinstance(M, str):
            if M != "jacobi":
                raise InputError(f"spla.distributed.{name}: M must be None, 'jacobi', a DistVector or a callable, "
                                 f"got {M!r}")
            M = jacobi(A)
        if isinstance(M, DistVector):
            if M.shape[0] != self.n or not np.array_equal(M.offsets, self.offsets):
                raise InputError(f"spla.distributed.{name}: M as a DistVector must be split like b")
            scale = M.local.astype(self.dtype)
            if self.b.ndim == 2:
                column = scale[:, None]
                return (lambda r: column * r), None
            return (lambda r: scale * r), scale
        if callable(M):
            return (lambda r: M(self.wrap(r)).local.astype(self.dtype, copy=False)), None
        raise InputError(f"spla.distributed.{name}: M must be None, 'jacobi', a DistVector or a callable, "
                         f"got {type(M).__name__}")


def jacobi(A) -> DistVector:
    """The inverse of A's diagonal as a DistVector (1 where the diagonal is 0), for ``M=``."""
    if A.shape[0] != A.shape[1] or not np.array_equal(A.row_offsets, A.col_offsets):
        raise InputError("jacobi needs a square matrix whose x and y are split alike")
    d = A.diag.diagonal()
    xp = A.xp
    inverse = xp.where(d != 0, 1.0 / xp.where(d != 0, d, 1), 1).astype(A.dtype)
    return DistVector(inverse, A.row_offsets, A.comm)


def _start(name, system, rtol, atol, maxiter, factor=10):
    b_norm = system.norm(system.b)
    atol = absolute_tolerance(name, b_norm, rtol, atol)
    if not math.isfinite(b_norm):
        return b_norm, atol, maxiter, (system.x, NONFINITE)
    maxiter = default_maxiter(maxiter, system.n, factor=factor)
    if b_norm == 0:
        return b_norm, atol, maxiter, (system.xp.zeros_like(system.b), 0)
    return b_norm, atol, maxiter, None


def _residual(system):
    return system.b - system.matvec(system.x) if system.x0_given else system.b.copy()


def _done(system, result):
    x, info = result
    return system.wrap(x), info


def cg(A, b, x0=None, *, rtol=1e-5, atol=0.0, maxiter=None, M=None, callback=None, check_every=None,
       capture=None):
    system = _System("cg", A, b, x0, M, check_every=check_every)
    return _done(system, _cg(system, rtol, atol, maxiter, callback, capture))


def _cg(system, rtol, atol, maxiter, callback, capture):
    """spla.linalg.cg's loop (same state layout, graph replay between checks, or on one rank its
    one-launch loop) with a sum over ranks after each local reduction."""
    xp, x = system.xp, system.x
    _, atol, maxiter, done = _start("cg", system, rtol, atol, maxiter)
    if done is not None:
        return done
    counter = callback if isinstance(callback, IterationCounter) else None
    if counter is not None:
        callback = None  # counted from the iterations run, as spla.linalg.cg does
    K, reduce = system.kernels, system.reduce
    dinv = system.inverse_diagonal
    general_m = system.psolve is not None and dinv is None
    r = _residual(system)
    # state: flag, p.Ap, then (rho, r.r) for the even and the odd iteration; the one-launch
    # loop's converged flag and last iteration
    state = K.state(8)
    z = system.psolve(r) if system.psolve is not None else r
    if system.psolve is None:  # rho is r.r: one dot serves both
        K.dot(r, r, state[2:3])
        reduce(state[2:3])
        rr = float(system.fetch(state)[2])
    else:
        K.dot(r, z, state[2:3])
        K.dot(r, r, state[3:4])
        reduce(state[2:4])
        rr = float(system.fetch(state)[3])
    if math.sqrt(max(rr, 0.0)) < atol:
        return x, 0
    capture = wants_capture(capture, system, callback, general_m, system.comm.size == 1)
    # a product that is one launch (no ghost traffic) fuses with p.q and the direction update;
    # captured, it runs spla.linalg.cg's one-launch loop where the system is small enough
    launcher = system.product.launcher
    loop = K.cg_loop(launcher, dinv is not None) if capture and launcher is not None else None
    if loop is not None:
        return loop_iterations(xp, loop, x, r, z, state, dinv=dinv, maxiter=maxiter, atol=atol, callback=None,
                               fetch=system.fetch, batch=True, counter=counter)
    product = K.cg_product(launcher) if launcher is not None else None
    matvec_into = system.product.into if capture and product is None else None
    wrapped = None if callback is None else (lambda xk: callback(system.wrap(xk)))
    return cg_iterations(xp, K, x, r, z, state, matvec=system.product, matvec_into=matvec_into, product=product,
                         capture=capture, psolve=system.psolve, dinv=dinv, check_every=system.check_every,
                         maxiter=maxiter, atol=atol, callback=wrapped, fetch=system.fetch, reduce=reduce,
                         stop_on_nonfinite=True, counter=counter)


def bicgstab(A, b, x0=None, *, rtol=1e-5, atol=0.0, maxiter=None, M=None, callback=None, check_every=None):
    system = _System("bicgstab", A, b, x0, M, check_every=check_every)
    return _done(system, _bicgstab(system, rtol, atol, maxiter, callback))


def _bicgstab(system, rtol, atol, maxiter, callback):
    """spla.linalg.bicgstab's loop (breakdown flagged in ``state``, read at the checks) with a sum
    over ranks after each local reduction."""
    x, xp = system.x, system.xp
    _, atol, maxiter, done = _start("bicgstab", system, rtol, atol, maxiter)
    if done is not None:
        return done
    K, reduce = system.kernels, system.reduce
    psolve = or_identity(system.psolve)
    # the solver's own vectors go straight to the product; a user preconditioner's output is checked
    matvec = system.product if system.psolve is None or system.inverse_diagonal is not None else system.matvec
    r = _residual(system)
    if system.norm(r) < atol:
        return x, 0
    wrapped = None if callback is None else (lambda xk: callback(system.wrap(xk)))
    return bicgstab_iterations(xp, K, x, r, matvec=matvec, psolve=psolve, check_every=system.check_every,
                               maxiter=maxiter, atol=atol, callback=wrapped, fetch=system.fetch, reduce=reduce)


def gmres(A, b, x0=None, *, rtol=1e-5, atol=0.0, restart=None, maxiter=None, M=None, callback=None,
          callback_type=None):
    system = _System("gmres", A, b, x0, M)
    return _done(system, _gmres(system, rtol, atol, restart, maxiter, callback, callback_type))


def _gmres(system, rtol, atol, restart, maxiter, callback, callback_type):
    x, xp, n = system.x, system.xp, system.n
    b_norm, atol, maxiter, done = _start("gmres", system, rtol, atol, maxiter)
    if done is not None:
        return done
    callback_type, restart = gmres_options(callback_type, restart, n)
    psolve = or_identity(system.psolve)
    eps = float(np.finfo(system.dtype).eps)
    ptol_max_factor = 1.0
    ptol = system.norm(psolve(system.b)) * min(ptol_max_factor, atol / b_norm)
    V = xp.empty((restart + 1, system.b.shape[0]), dtype=system.dtype)
    r = _residual(system)
    r_norm = system.norm(r)
    if r_norm < atol:
        return x, 0
    residual_estimate = r_norm
    for _cycle in range(maxiter):
        V[0] = psolve(r)
        beta = system.norm(V[0])
        V[0] /= system.dtype.type(beta)
        H = np.zeros((restart + 1, restart))
        givens = np.zeros((restart, 2))
        g = np.zeros(restart + 1)
        g[0] = beta
        breakdown = False
        for col in range(restart):
            w = psolve(system.matvec(V[col]))
            basis = V[:col + 1]
            # classical Gram-Schmidt twice, each pass one sum over ranks of col + 1 numbers (the first
            # also carries w.w); the sums stay where the vectors are until the one host read below
            first = system.reduced(xp.concatenate(((basis @ w).astype(xp.float64),
                                                   xp.vdot(w, w).reshape(1).astype(xp.float64))))
            h = first[:-1]
            w -= h.astype(system.dtype) @ basis
            h2 = system.reduced(basis @ w)
            w -= h2.astype(system.dtype) @ basis
            w_squared = system.reduced(xp.vdot(w, w).reshape(1))
            column = system.fetch(xp.concatenate((h + h2, w_squared, first[-1:])))
            h0 = math.sqrt(max(float(column[-1]), 0.0))
            column = column[:-1].copy()
            h1 = column[-1] = math.sqrt(max(float(column[-1]), 0.0))
            if h1 <= eps * h0:
                column[-1] = 0.0
                breakdown = True
            else:
                V[col + 1] = w / system.dtype.type(h1)
            residual_estimate = givens_step(H, givens, g, column, col)
            if callback is not None and callback_type == "pr_norm":
                callback(residual_estimate / b_norm)
            if residual_estimate <= ptol or breakdown:
                break
        y = upper_triangular_solve(H[:col + 1, :col + 1], g[:col + 1])
        x += xp.asarray(y.astype(system.dtype)) @ V[:col + 1]
        r = system.b - system.matvec(x)
        r_norm = system.norm(r)
        if not math.isfinite(r_norm):
            return x, NONFINITE
        if callback is not None and callback_type == "x":
            callback(system.wrap(x))
        if r_norm <= atol or breakdown:
            break
        ptol, ptol_max_factor = inner_tolerance(residual_estimate, ptol, ptol_max_factor, eps, atol, r_norm)
    return x, (0 if r_norm <= atol else maxiter)


def minres(A, b, x0=None, *, rtol=1e-5, atol=0.0, shift=0.0, maxiter=None, M=None, callback=None):
    system = _System("minres", A, b, x0, M)
    return _done(system, _minres(system, rtol, atol, shift, maxiter, callback))


def _minres(system, rtol, atol, shift, maxiter, callback):
    _, atol, maxiter, done = _start("minres", system, rtol, atol, maxiter, factor=5)
    if done is not None:
        return done
    xp = system.xp
    return minres_iterations(system.x, _residual(system), system.b, matvec=system.matvec, psolve=system.psolve,
                             dot=lambda u, v: system.reduced(xp.vdot(u, v).reshape(1)), fetch=system.fetch,
                             norm=system.norm, shift=shift, maxiter=maxiter, atol=atol,
                             callback=None if callback is None else (lambda x: callback(system.wrap(x))))


def block_cg(A, B, X0=None, *, rtol=1e-5, atol=0.0, maxiter=None, M=None, callback=None, check_every=None):
    """Solve ``A X = B`` for an n x k block by k lock-step CG recurrences (as :func:`spla.linalg.block_cg`).

    Each iteration is one distributed SpMM (one ghost exchange for all k
    columns) and two sums over ranks of column dot products, kept on the
    device; the host reads the residuals every ``check_every`` iterations
    (default 1 on the CPU, :data:`spla.linalg.DEFAULT_GPU_CHECK_EVERY` on the
    GPU). ``info`` is a NumPy array of k codes, the same on every rank.
    """
    system = _System("block_cg", A, B, X0, M, block=True, check_every=check_every)
    xp, X = system.xp, system.x
    k = system.b.shape[1]
    maxiter = default_maxiter(maxiter, system.n)
    b_norms = np.sqrt(np.maximum(system.column_dots(system.b, system.b), 0.0))
    tolerances = np.array([absolute_tolerance("block_cg", bn, rtol, atol) for bn in b_norms])
    info = np.full(k, maxiter, dtype=np.int64)
    if k == 0:
        return system.wrap(X), info
    zero_rhs = b_norms == 0
    X[:, xp.asarray(zero_rhs)] = 0
    R = system.b - system.matvec(X) if system.x0_given else system.b.copy()
    start_residuals = np.sqrt(np.maximum(system.column_dots(R, R), 0.0))
    nonfinite = ~np.isfinite(start_residuals)
    active = (start_residuals >= tolerances) & ~zero_rhs & ~nonfinite
    info[~active] = 0
    info[nonfinite] = -1
    Z = or_identity(system.psolve)(R)
    rho = system.reduced((R * Z).sum(axis=0))
    P = Z.copy()
    active_mask = xp.asarray(active)
    for iteration in range(1, maxiter + 1):
        if not active.any():
            break
        Q = system.matvec(P)
        pq = system.reduced((P * Q).sum(axis=0))
        usable = active_mask & (pq != 0)
        alpha = xp.where(usable, rho / xp.where(usable, pq, 1), 0).astype(system.dtype)
        X += alpha * P
        R -= alpha * Q
        Z = or_identity(system.psolve)(R)
        sums = system.reduced(xp.concatenate(((R * Z).sum(axis=0), (R * R).sum(axis=0))))
        rho_new, rr = sums[:k], sums[k:]
        beta = xp.where(active_mask & (rho != 0), rho_new / xp.where(rho != 0, rho, 1), 0)
        P *= beta.astype(system.dtype)
        P += Z
        rho = rho_new
        if callback is not None:
            callback(system.wrap(X))
        if iteration % system.check_every == 0 or iteration == maxiter:
            host = system.fetch(xp.concatenate((rr, pq)))
            residuals = np.sqrt(np.maximum(host[:k], 0.0))
            broken = active & ((host[k:] == 0) | ~np.isfinite(residuals))
            converged = active & ~broken & (residuals < tolerances)
            info[converged] = 0
            info[broken] = -1
            active &= ~(converged | broken)
            active_mask = xp.asarray(active)
    return system.wrap(X), info


_CHECK_EVERY_DOC = """
    check_every : int, optional
        Iterations between convergence checks, the only host reads of the
        iteration (default 1 on the CPU, ``spla.linalg.DEFAULT_GPU_CHECK_EVERY``
        on the GPU)."""
_EXTRA_PARAMETERS = {"bicgstab": _CHECK_EVERY_DOC, "cg": _CHECK_EVERY_DOC + """
    capture : bool, optional
        GPU and one rank only: replay two iterations from a CUDA graph between
        checks, as :func:`spla.linalg.cg` (default on where it applies)."""}

for _solver, _local in ((cg, "cg"), (bicgstab, "bicgstab"), (gmres, "gmres"), (minres, "minres")):
    _solver.__doc__ = f"""Distributed :func:`spla.linalg.{_local}`: the same recurrences, arguments and ``info`` codes.

    Parameters
    ----------
    A : DistCSRMatrix, square
    b : DistVector in A's layout (``A.distribute_vector(b)``)
    x0 : DistVector like b, optional
    rtol, atol, maxiter, callback
        As in :func:`spla.linalg.{_local}` (callback receives a DistVector
        where it receives x).
    M : None, "jacobi", DistVector or callable, optional
        Preconditioner (see :mod:`spla.distributed.solvers`).{_EXTRA_PARAMETERS.get(_local, "")}

    Returns
    -------
    x : DistVector
    info : int, the same on every rank

    See Also
    --------
    spla.linalg.{_local}, scipy.sparse.linalg.{_local}
    """
