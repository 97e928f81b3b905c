"""``block_cg``: conjugate gradients for k right-hand sides at once.

The k CG recurrences run in lock-step (a multiple-right-hand-side CG, not
O'Leary's shared-Krylov block CG, so no column's iterates depend on another's
and no rank-deficiency handling is needed): each iteration is one sparse
matrix times an n x k block (SpMM), which reads the matrix once for all k
columns, plus column-wise vector work. Each column stops on its own test;
a converged column is frozen (its step is zero) while the rest go on.
"""

from __future__ import annotations

import numpy as np

from .. import device as _device
from ._system import _is_linear_operator, absolute_tolerance, default_maxiter, make_system, or_identity


def _spmm_for(system, A):
    """Y = A @ X for a 2-D X on the system's side, built once."""
    csr = system.matrix
    if csr is not None:
        if system.xp is np:
            from ..backends.cpu import csr_product

            host = csr.to_host()  # the CPU backend's SpMM, as spla.spmm runs it (SciPy's bits)
            return lambda X: csr_product(host, X)
        try:
            from ..ops.spmm import spmm
        except ImportError:  # spla.matmat not there yet: cuSPARSE through cupyx
            device = csr.to_device().to_cupyx()
            return device.dot
        device = csr.to_device()
        return lambda X: spmm(device, X)
    if _is_linear_operator(A):
        if hasattr(A, "matmat"):
            return A.matmat
        return lambda X: system.xp.stack([A.matvec(c) for c in X.T], axis=1)
    return system.matvec  # a dense matrix: its dot handles blocks


def block_cg(A, B, X0=None, *, rtol=1e-5, atol=0.0, maxiter=None, M=None, callback=None, check_every=None):
    """Solve ``A X = B`` for an n x k block B by conjugate gradients (A SPD).

    Parameters
    ----------
    A : CSRMatrix, scipy/cupyx sparse matrix, dense array or LinearOperator
        Symmetric positive definite, n x n. Sparse A multiplies the whole
        block at once through :func:`spla.spmm` on the GPU (cuSPARSE via
        cupyx while spla.matmat is absent) and SciPy on the CPU.
    B : 2-D numpy.ndarray or cupy.ndarray, shape (n, k)
    X0 : array like B, optional
        Starting guess; copied, never modified.
    rtol, atol : float
        Column j has converged when ``||B_j - A X_j|| <= max(rtol ||B_j||, atol)``.
    maxiter : int, optional
        Iteration limit for every column (default 10 n).
    M : preconditioner (matrix, LinearOperator or :func:`jacobi`), optional
    callback : callable, optional
        ``callback(Xk)`` after every iteration with the current n x k block.
    check_every : int, optional
        Iterations between convergence checks (default 1 on the CPU, 8 on
        the GPU: a converged column may take up to that many extra steps).

    Returns
    -------
    X : array on B's side, shape (n, k)
    info : numpy.ndarray of int, shape (k,)
        Per column: 0 converged, > 0 iterations run without converging
        (``maxiter``), -1 breakdown (``p.Ap`` zero: A not positive definite; or NaN/Inf
        in B_j or met on the way).

    See Also
    --------
    cg : one right-hand side; scipy.sparse.linalg.cg for the SciPy equivalent.
    """
    system = make_system(A, B, X0, M, check_every=check_every, block=True)
    xp, X, n = system.xp, system.x, system.n
    k = system.b.shape[1]
    maxiter = default_maxiter(maxiter, n)
    b_norms = _device.to_host(xp.linalg.norm(system.b, axis=0))
    tolerances = np.array([absolute_tolerance("block_cg", bn, rtol, atol) for bn in b_norms])
    info = np.full(k, maxiter, dtype=np.int64)
    if k == 0:
        return X, info
    spmm = _spmm_for(system, A)
    zero_rhs = b_norms == 0
    X[:, xp.asarray(zero_rhs)] = 0
    R = system.b - spmm(X) if system.x0_given else system.b.copy()
    start_residuals = _device.to_host(xp.linalg.norm(R, axis=0))
    nonfinite = ~np.isfinite(start_residuals)  # NaN/Inf in B (or in A X0): never "converged"
    active = (start_residuals >= tolerances) & ~zero_rhs & ~nonfinite
    info[~active] = 0
    info[nonfinite] = -1
    psolve = or_identity(system.psolve)
    Z = psolve(R)
    rho = (R * Z).sum(axis=0)
    P = Z.copy()
    active_mask = xp.asarray(active)
    for iteration in range(1, maxiter + 1):
        if not active.any():
            break
        Q = spmm(P)
        pq = (P * Q).sum(axis=0)
        usable = active_mask & (pq != 0)
        alpha = xp.where(usable, rho / xp.where(usable, pq, 1), 0).astype(system.dtype)
        X += alpha * P
        R -= alpha * Q
        Z = psolve(R)
        rho_new = (R * Z).sum(axis=0)
        beta = xp.where(active_mask & (rho != 0), rho_new / xp.where(rho != 0, rho, 1), 0).astype(system.dtype)
        P *= beta
        P += Z
        rho = rho_new
        if callback is not None:
            callback(X)
        if iteration % system.check_every == 0 or iteration == maxiter:
            residuals = _device.to_host(xp.linalg.norm(R, axis=0))
            broken = active & ((_device.to_host(pq) == 0) | ~np.isfinite(residuals))
            converged = active & ~broken & (residuals < tolerances)
            info[converged] = 0
            info[broken] = -1
            active &= ~(converged | broken)
            active_mask = xp.asarray(active)
    return X, info
