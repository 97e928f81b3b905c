"""Krylov solvers on a :class:`DistCSRMatrix`, with :mod:`spla.linalg`'s signatures and ``info`` codes.

``x, info = cg(A, b, x0=None, *, rtol=1e-5, atol=0.0, maxiter=None, M=None,
callback=None)``, likewise :func:`bicgstab`, :func:`gmres` (``restart``,
``callback_type``), :func:`minres` (``shift``) and :func:`block_cg` (an
n x k block, per-column ``info``). b, x0 and x are :class:`DistVector` in
A's layout; every rank calls the solver and gets the same ``info``.

The recurrences are spla.linalg's (themselves SciPy's), with every dot
product and norm summed over ranks through one ``Allreduce`` (cg fuses
``r.r`` and ``r.z`` into one); every other step is local. Convergence is
read every iteration: the reduction that yields the residual norm is
already a synchronisation, so there is nothing to save by reading it less
often.

``M`` is None, ``"jacobi"`` (the inverse of A's diagonal), a DistVector
(multiplied entry-wise, e.g. an inverse diagonal) or a callable taking and
returning a DistVector.
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import InputError
from ..linalg._system import absolute_tolerance, default_maxiter
from .vector import DistVector

NONFINITE = -1


class _System:
    """What every solver needs, on local slices: A's local product, the preconditioner and global dots."""

    def __init__(self, name, A, b, x0, M, block=False):
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
        self.A, self.comm, self.xp = A, A.comm, A.xp
        self.offsets = A.row_offsets
        self.n = A.shape[0]
        self.dtype = np.dtype(np.float32) if A.dtype == np.float32 and b.dtype == np.float32 \
            else np.dtype(np.float64)
        self.b = b.local.astype(self.dtype, copy=False)
        if x0 is None:
            self.x = self.xp.zeros_like(self.b)
        else:
            if not isinstance(x0, DistVector) or x0.shape != b.shape or not np.array_equal(x0.offsets, b.offsets):
                raise InputError(f"spla.distributed.{name}: x0 must be a DistVector shaped and split like b")
            self.x = x0.local.astype(self.dtype, copy=True)
        self.x0_given = x0 is not None
        self.psolve = self._preconditioner(name, M)

    def matvec(self, v):
        return self.A.matvec_local(v).astype(self.dtype, copy=False)

    def dots(self, *pairs):
        """Global dot products of local slices, in one Allreduce; a host float64 array."""
        xp = self.xp
        if xp is np:
            local = np.fromiter((np.vdot(a, b) for a, b in pairs), dtype=np.float64, count=len(pairs))
        else:  # stays on the device until the reduction
            local = xp.stack([xp.vdot(a, b) for a, b in pairs]).astype(xp.float64)
        return self.comm.allreduce_sum(local)

    def norm(self, v) -> float:
        return math.sqrt(max(float(self.dots((v, v))[0]), 0.0))

    def column_dots(self, a, b):
        return self.comm.allreduce_sum((a * b).sum(axis=0).astype(self.xp.float64))

    def wrap(self, local) -> DistVector:
        return DistVector(local, self.offsets, self.comm)

    def _preconditioner(self, name, M):
        if M is None:
            return None
        if isinstance(M, str):
            if M != "jacobi":
                raise InputError(f"spla.distributed.{name}: M must be None, 'jacobi', a DistVector or a callable, "
                                 f"got {M!r}")
            M = jacobi(self.A)
        if isinstance(M, DistVector):
            if M.shape[0] != self.n or not np.array_equal(M.offsets, self.offsets):
                raise InputError(f"spla.distributed.{name}: M as a DistVector must be split like b")
            scale = M.local.astype(self.dtype)
            if self.b.ndim == 2:
                scale = scale[:, None]
            return lambda r: scale * r
        if callable(M):
            return lambda r: M(self.wrap(r)).local.astype(self.dtype, copy=False)
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


def cg(A, b, x0=None, *, rtol=1e-5, atol=0.0, maxiter=None, M=None, callback=None):
    system = _System("cg", A, b, x0, M)
    return _done(system, _cg(system, rtol, atol, maxiter, callback))


def _cg(system, rtol, atol, maxiter, callback):
    x = system.x
    scalar = system.dtype.type
    _, atol, maxiter, done = _start("cg", system, rtol, atol, maxiter)
    if done is not None:
        return done
    r = _residual(system)
    z, rho, rr = _precondition(system, r)
    if math.sqrt(max(rr, 0.0)) < atol:
        return x, 0
    p = z.copy()
    for _iteration in range(maxiter):
        q = system.matvec(p)
        pq = float(system.dots((p, q))[0])
        if pq == 0 or not math.isfinite(pq) or not math.isfinite(rho / pq):
            return x, -1
        alpha = rho / pq
        x += scalar(alpha) * p
        r -= scalar(alpha) * q
        z, rho_new, rr = _precondition(system, r)
        if callback is not None:
            callback(system.wrap(x))
        if not math.isfinite(rr):
            return x, -1
        if math.sqrt(max(rr, 0.0)) < atol:
            return x, 0
        beta = rho_new / rho if rho != 0 else 0.0
        p *= scalar(beta)
        p += z
        rho = rho_new
    return x, maxiter


def _precondition(system, r):
    """(z = M r, r.z, r.r) with one Allreduce; without M, z is r and one dot serves both."""
    if system.psolve is None:
        rr = float(system.dots((r, r))[0])
        return r, rr, rr
    z = system.psolve(r)
    rz, rr = system.dots((r, z), (r, r))
    return z, rz, rr


def bicgstab(A, b, x0=None, *, rtol=1e-5, atol=0.0, maxiter=None, M=None, callback=None):
    system = _System("bicgstab", A, b, x0, M)
    return _done(system, _bicgstab(system, rtol, atol, maxiter, callback))


def _bicgstab(system, rtol, atol, maxiter, callback):
    x, xp = system.x, system.xp
    scalar = system.dtype.type
    _, atol, maxiter, done = _start("bicgstab", system, rtol, atol, maxiter)
    if done is not None:
        return done
    psolve = system.psolve if system.psolve is not None else (lambda v: v)
    rhotol = float(np.finfo(system.dtype).eps) ** 2  # SciPy's breakdown threshold
    r = _residual(system)
    if system.norm(r) < atol:
        return x, 0
    r_tilde = r.copy()
    p = xp.empty_like(r)
    v = xp.zeros_like(r)
    rho_prev = alpha = omega = 0.0
    for iteration in range(1, maxiter + 1):
        rho = float(system.dots((r_tilde, r))[0])
        if abs(rho) < rhotol:
            return x, -10
        if iteration == 1:
            p[:] = r
        else:
            if abs(omega) < rhotol:
                return x, -11
            beta = (rho / rho_prev) * (alpha / omega)
            p -= scalar(omega) * v
            p *= scalar(beta)
            p += r
        p_hat = psolve(p)
        v = system.matvec(p_hat)
        rv = float(system.dots((r_tilde, v))[0])
        if rv == 0:
            return x, -11
        alpha = rho / rv
        r -= scalar(alpha) * v  # r is now s
        s_hat = psolve(r)
        t = system.matvec(s_hat)
        ts, tt = system.dots((t, r), (t, t))
        omega = ts / tt if tt != 0 else 0.0
        x += scalar(alpha) * p_hat
        x += scalar(omega) * s_hat
        r -= scalar(omega) * t
        if callback is not None:
            callback(system.wrap(x))
        rr = float(system.dots((r, r))[0])
        if not math.isfinite(rr):
            return x, NONFINITE
        if math.sqrt(max(rr, 0.0)) < atol:
            return x, 0
        rho_prev = rho
    return x, maxiter


def _lartg(f: float, g: float):
    """A Givens rotation (c, s, r) with c f + s g = r, -s f + c g = 0."""
    if g == 0:
        return 1.0, 0.0, f
    if f == 0:
        return 0.0, math.copysign(1.0, g), abs(g)
    r = math.copysign(math.hypot(f, g), f)
    return f / r, g / r, r


def _upper_triangular_solve(R, g):
    m = R.shape[0]
    y = g.astype(np.float64).copy()
    for k in range(m - 1, -1, -1):
        y[k] = 0.0 if R[k, k] == 0 else y[k] / R[k, k]
        y[:k] -= y[k] * R[:k, k]
    return y


def gmres(A, b, x0=None, *, rtol=1e-5, atol=0.0, restart=None, maxiter=None, M=None, callback=None,
          callback_type=None):
    system = _System("gmres", A, b, x0, M)
    return _done(system, _gmres(system, rtol, atol, restart, maxiter, callback, callback_type))


def _gmres(system, rtol, atol, restart, maxiter, callback, callback_type):
    x, xp, n = system.x, system.xp, system.n
    b_norm, atol, maxiter, done = _start("gmres", system, rtol, atol, maxiter)
    if done is not None:
        return done
    if callback_type is None:
        callback_type = "pr_norm"
    if callback_type not in ("x", "pr_norm"):
        raise InputError(f"callback_type must be 'x' or 'pr_norm', got {callback_type!r}")
    restart = min(20 if restart is None else int(restart), n)
    if restart < 1:
        raise InputError(f"restart must be >= 1, got {restart}")
    psolve = system.psolve if system.psolve is not None else (lambda v: v)
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
            h0 = system.norm(w)
            # classical Gram-Schmidt twice, each pass one Allreduce of col + 1 numbers
            h = system.comm.allreduce_sum((basis @ w).astype(xp.float64))
            w -= xp.asarray(h.astype(system.dtype)) @ basis
            h2 = system.comm.allreduce_sum((basis @ w).astype(xp.float64))
            w -= xp.asarray(h2.astype(system.dtype)) @ basis
            h1 = system.norm(w)
            column = np.concatenate((h + h2, [h1]))
            if h1 <= eps * h0:
                column[-1] = 0.0
                breakdown = True
            else:
                V[col + 1] = w / system.dtype.type(h1)
            for k in range(col):
                c, s = givens[k]
                column[k], column[k + 1] = c * column[k] + s * column[k + 1], -s * column[k] + c * column[k + 1]
            c, s, mag = _lartg(column[col], column[col + 1])
            givens[col] = c, s
            column[col], column[col + 1] = mag, 0.0
            H[:col + 2, col] = column
            g[col], g[col + 1] = c * g[col], -s * g[col]
            residual_estimate = abs(g[col + 1])
            if callback is not None and callback_type == "pr_norm":
                callback(residual_estimate / b_norm)
            if residual_estimate <= ptol or breakdown:
                break
        y = _upper_triangular_solve(H[:col + 1, :col + 1], g[:col + 1])
        x += xp.asarray(y.astype(system.dtype)) @ V[:col + 1]
        r = system.b - system.matvec(x)
        r_norm = system.norm(r)
        if not math.isfinite(r_norm):
            return x, NONFINITE
        if callback is not None and callback_type == "x":
            callback(system.wrap(x))
        if r_norm <= atol or breakdown:
            break
        if residual_estimate <= ptol:
            ptol_max_factor = max(eps, 0.25 * ptol_max_factor)
        else:
            ptol_max_factor = min(1.0, 1.5 * ptol_max_factor)
        ptol = residual_estimate * min(ptol_max_factor, atol / r_norm)
    return x, (0 if r_norm <= atol else maxiter)


def minres(A, b, x0=None, *, rtol=1e-5, atol=0.0, shift=0.0, maxiter=None, M=None, callback=None):
    system = _System("minres", A, b, x0, M)
    return _done(system, _minres(system, rtol, atol, shift, maxiter, callback))


def _minres(system, rtol, atol, shift, maxiter, callback):
    x, xp = system.x, system.xp
    _, atol, maxiter, done = _start("minres", system, rtol, atol, maxiter, factor=5)
    if done is not None:
        return done
    psolve = system.psolve if system.psolve is not None else (lambda v: v)
    eps = float(np.finfo(system.dtype).eps)
    dtype = system.dtype.type
    r1 = _residual(system)
    if system.norm(r1) < atol:
        return x, 0
    y = psolve(r1)
    beta1 = float(system.dots((r1, y))[0])
    if not math.isfinite(beta1):
        return x, NONFINITE
    if beta1 < 0:
        return x, -1
    if beta1 == 0:
        return x, 0
    beta1 = math.sqrt(beta1)
    old_beta, beta = 0.0, beta1
    dbar = epsln = 0.0
    phibar = beta1
    cs, sn = -1.0, 0.0
    w = xp.zeros_like(system.b)
    w2 = xp.zeros_like(system.b)
    r2 = r1
    for iteration in range(1, maxiter + 1):
        v = y * dtype(1.0 / beta)
        y = system.matvec(v)
        if shift:
            y = y - dtype(shift) * v
        if iteration >= 2:
            y = y - dtype(beta / old_beta) * r1
        alfa = float(system.dots((v, y))[0])
        y = y - dtype(alfa / beta) * r2
        r1, r2 = r2, y
        y = psolve(r2)
        old_beta = beta
        beta = float(system.dots((r2, y))[0])
        if not (math.isfinite(alfa) and math.isfinite(beta)):
            return x, NONFINITE
        if beta < 0:
            return x, -1
        beta = math.sqrt(beta)
        old_eps = epsln
        delta = cs * dbar + sn * alfa
        gbar = sn * dbar - cs * alfa
        epsln = sn * beta
        dbar = -cs * beta
        gamma = max(math.hypot(gbar, beta), eps)
        cs, sn = gbar / gamma, beta / gamma
        phi = cs * phibar
        phibar = sn * phibar
        w1, w2 = w2, w
        w = (v - dtype(old_eps) * w1 - dtype(delta) * w2) * dtype(1.0 / gamma)
        x += dtype(phi) * w
        if callback is not None:
            callback(system.wrap(x))
        if phibar < atol or beta == 0.0:
            if system.norm(system.b - system.matvec(x)) < atol:
                return x, 0
            if beta == 0.0:
                return x, iteration
    return x, maxiter


def block_cg(A, B, X0=None, *, rtol=1e-5, atol=0.0, maxiter=None, M=None, callback=None):
    """Solve ``A X = B`` for an n x k block by k lock-step CG recurrences (as :func:`spla.linalg.block_cg`).

    Each iteration is one distributed SpMM (one ghost exchange for all k
    columns) and one Allreduce per group of column dot products. ``info``
    is a NumPy array of k codes, the same on every rank.
    """
    system = _System("block_cg", A, B, X0, M, block=True)
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
    Z = system.psolve(R) if system.psolve is not None else R
    rho = system.column_dots(R, Z)
    P = Z.copy()
    for _iteration in range(maxiter):
        if not active.any():
            break
        Q = system.matvec(P)
        pq = system.column_dots(P, Q)
        usable = active & (pq != 0)
        alpha = np.where(usable, rho / np.where(usable, pq, 1), 0)
        X += xp.asarray(alpha.astype(system.dtype)) * P
        R -= xp.asarray(alpha.astype(system.dtype)) * Q
        Z = system.psolve(R) if system.psolve is not None else R
        rho_new, rr = np.split(system.comm.allreduce_sum(
            xp.concatenate(((R * Z).sum(axis=0), (R * R).sum(axis=0))).astype(xp.float64)), 2)
        beta = np.where(active & (rho != 0), rho_new / np.where(rho != 0, rho, 1), 0)
        P *= xp.asarray(beta.astype(system.dtype))
        P += Z
        rho = rho_new
        if callback is not None:
            callback(system.wrap(X))
        residuals = np.sqrt(np.maximum(rr, 0.0))
        broken = active & ((pq == 0) | ~np.isfinite(residuals))
        converged = active & ~broken & (residuals < tolerances)
        info[converged] = 0
        info[broken] = -1
        active &= ~(converged | broken)
    return system.wrap(X), info


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
        Preconditioner (see :mod:`spla.distributed.solvers`).

    Returns
    -------
    x : DistVector
    info : int, the same on every rank

    See Also
    --------
    spla.linalg.{_local}, scipy.sparse.linalg.{_local}
    """
