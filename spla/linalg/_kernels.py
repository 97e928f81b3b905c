"""The vector work of the Krylov solvers, once for NumPy and once for CuPy.

Every solver in :mod:`spla.linalg` is written once against this small
interface. Scalars (rho, p.Ap, step lengths, the breakdown flag) live in a
float64 ``state`` array on the vectors' side and are passed around as
one-element views, so on the GPU an iteration queues its kernels without ever
waiting for the host; the host reads ``state`` only at a convergence check.

- :class:`HostKernels` does each step with NumPy in place, as SciPy's
  ``_isolve`` does (same operation order, so iteration counts match).
- :class:`spla.backends.cuda.solvers.DeviceKernels` fuses each step into one launch: ``x += a p; r -= a q``
  together with the new ``r.r`` (kernels/solver_blas1.cu), and the BiCGSTAB
  and direction updates as ``cupy.ElementwiseKernel``. Reductions accumulate
  in float64, also for float32 vectors.

Breakdown (a zero or non-finite step denominator) sets ``state[FLAG]`` to the
positive value of the info code's magnitude; every later step sees the flag
and leaves x and r alone, so the solver can return the last good x at its
next check.
"""

from __future__ import annotations

import numpy as np

FLAG = 0  # index of the breakdown flag in every solver's state array


class HostKernels:
    """NumPy versions of the solver steps (the CPU path and the reference)."""

    xp = np

    def __init__(self, n: int, dtype):
        self.n = n
        self.dtype = np.dtype(dtype)

    def state(self, size: int):
        # Scalars (rho, alpha, omega, ...) in the solver's dtype, as SciPy keeps them: in
        # float32 the two rounding choices drift apart, and on an indefinite system BiCGSTAB
        # with float64 scalars broke down (rho == 0) where SciPy's float32 scalars converge.
        return np.zeros(size, dtype=self.dtype)

    def fetch(self, state):
        return state

    def dot(self, a, b, out):
        out[0] = np.dot(a, b)

    def cg_step(self, x, r, z, p, q, dinv, rho, pq, state, out):
        alpha = _guarded(rho[0], pq[0])
        if alpha is None or state[FLAG]:
            state[FLAG] = 1.0
            alpha = 0.0
        x += self.dtype.type(alpha) * p
        r -= self.dtype.type(alpha) * q
        if dinv is not None:
            np.multiply(dinv, r, out=z)
            out[0] = np.dot(r, z)
            out[1] = np.dot(r, r)
        else:
            out[0] = np.dot(r, r)

    def cg_loop(self, matrix, jacobi: bool):
        """The CPU backend's CG loop in C over a host CSR matrix of this solve's dtype (whole
        iterations on one or several threads; not SciPy's operation order, its iterates to
        rounding), or None where it does not run (no C compiler, ``SPLA_NATIVE=off``)."""
        from ..backends.cpu import CgLoop

        return CgLoop.for_matrix(matrix.astype(self.dtype)) if matrix.shape == (self.n, self.n) else None

    def cg_direction(self, p, z, rho_new, rho_old):
        beta = rho_new[0] / rho_old[0] if rho_old[0] != 0 else 0.0
        p *= self.dtype.type(beta)
        p += z

    def bicgstab_direction(self, p, r, v, rho, rho_prev, alpha, omega, first, rhotol, state):
        if state[FLAG]:
            return
        if abs(rho[0]) < rhotol:
            state[FLAG] = 10.0
            return
        if first:
            p[:] = r
            return
        if abs(omega[0]) < rhotol:
            state[FLAG] = 11.0
            return
        beta = (rho[0] / rho_prev[0]) * (alpha[0] / omega[0])
        p -= self.dtype.type(omega[0]) * v
        p *= self.dtype.type(beta)
        p += r

    def bicgstab_half(self, r, v, rho, rv, alpha, state):
        if state[FLAG] or rv[0] == 0:
            if not state[FLAG]:
                state[FLAG] = 11.0
            alpha[0] = 0.0
            return
        alpha[0] = rho[0] / rv[0]
        r -= self.dtype.type(alpha[0]) * v

    def bicgstab_finish(self, x, r, phat, shat, t, alpha, omega, ts, tt, state):
        if state[FLAG]:
            omega[0] = 0.0
            return
        omega[0] = ts[0] / tt[0] if tt[0] != 0 else 0.0
        x += self.dtype.type(alpha[0]) * phat
        x += self.dtype.type(omega[0]) * shat
        r -= self.dtype.type(omega[0]) * t


def _guarded(rho, pq):
    """rho / pq, or None where CG cannot take the step (pq zero or non-finite)."""
    if pq == 0 or not np.isfinite(pq):
        return None
    alpha = rho / pq
    return alpha if np.isfinite(alpha) else None


def kernels_for(xp, n: int, dtype):
    """HostKernels for NumPy, the CUDA backend's DeviceKernels for CuPy."""
    if xp is np:
        return HostKernels(n, dtype)
    from ..backends.cuda.solvers import DeviceKernels

    return DeviceKernels(n, dtype)
