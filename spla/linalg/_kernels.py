"""The vector work of the Krylov solvers, once for NumPy and once for CuPy.

Every solver in :mod:`spla.linalg` is written once against this small
interface. Scalars (rho, p.Ap, step lengths, the breakdown flag) live in a
float64 ``state`` array on the vectors' side and are passed around as
one-element views, so on the GPU an iteration queues its kernels without ever
waiting for the host; the host reads ``state`` only at a convergence check.

- :class:`HostKernels` does each step with NumPy in place, as SciPy's
  ``_isolve`` does (same operation order, so iteration counts match).
- :class:`DeviceKernels` fuses each step into one launch: ``x += a p; r -= a q``
  together with the new ``r.r`` (kernels/solver_blas1.cu), and the BiCGSTAB
  and direction updates as ``cupy.ElementwiseKernel``. Reductions accumulate
  in float64, also for float32 vectors.

Breakdown (a zero or non-finite step denominator) sets ``state[FLAG]`` to the
positive value of the info code's magnitude; every later step sees the flag
and leaves x and r alone, so the solver can return the last good x at its
next check.
"""

from __future__ import annotations

import functools

import numpy as np

from .. import device as _device
from ..backends.cuda import runtime

FLAG = 0  # index of the breakdown flag in every solver's state array

SOLVER_BLOCK = 256  # must equal SOLVER_BLOCK in kernels/solver_reduce.cuh
_BLAS1_NAMES = [f"spla_solver_dot<{t}>" for t in ("float", "double")] + [
    f"spla_cg_step<{t}, {j}>" for t in ("float", "double") for j in ("false", "true")]
BLAS1_SOURCE = runtime.KernelSource("solver_blas1.cu", _BLAS1_NAMES)

_CTYPE = {np.dtype(np.float32): "float", np.dtype(np.float64): "double"}


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


class DeviceKernels:
    """CuPy versions: the fused raw kernels plus ElementwiseKernels, no host sync."""

    def __init__(self, n: int, dtype):
        cupy = _device.require_cupy()
        self.xp = cupy
        self.n = n
        self.dtype = np.dtype(dtype)
        self.ctype = _CTYPE[self.dtype]
        sm_count = cupy.cuda.Device().attributes["MultiProcessorCount"]
        # 8 blocks of 256 fill an SM (2048 threads); a grid-stride loop covers the rest
        self.grid = (max(1, min(runtime.ceil_div(max(n, 1), SOLVER_BLOCK), 8 * sm_count)),)
        self.block = (SOLVER_BLOCK,)
        self.partials = cupy.empty(2 * self.grid[0], dtype=cupy.float64)
        self.counter = cupy.zeros(1, dtype=cupy.uint32)
        self._n = np.int64(n)
        self._dot = BLAS1_SOURCE.function(f"spla_solver_dot<{self.ctype}>")
        self._cg = {j: BLAS1_SOURCE.function(f"spla_cg_step<{self.ctype}, {'true' if j else 'false'}>")
                    for j in (False, True)}
        self._elementwise = _elementwise_kernels()

    def state(self, size: int):
        return self.xp.zeros(size, dtype=self.xp.float64)

    def fetch(self, state):
        return state.get()

    def dot(self, a, b, out):
        self._dot(self.grid, self.block, (a, b, self._n, self.partials, self.counter, out))

    def cg_step(self, x, r, z, p, q, dinv, rho, pq, state, out):
        jacobi = dinv is not None
        z_arg = z if jacobi else r  # not touched without JACOBI; any valid pointer
        d_arg = dinv if jacobi else r
        self._cg[jacobi](self.grid, self.block, (x, r, z_arg, p, q, d_arg, self._n, rho, pq, state,
                                                 self.partials, self.counter, out))

    def cg_direction(self, p, z, rho_new, rho_old):
        self._elementwise["cg_direction"](z, rho_new, rho_old, p)

    def bicgstab_direction(self, p, r, v, rho, rho_prev, alpha, omega, first, rhotol, state):
        self._elementwise["bicgstab_direction"](r, v, rho, rho_prev, alpha, omega, np.int32(first),
                                                 np.float64(rhotol), p, state)

    def bicgstab_half(self, r, v, rho, rv, alpha, state):
        self._elementwise["bicgstab_half"](v, rho, rv, r, alpha, state)

    def bicgstab_finish(self, x, r, phat, shat, t, alpha, omega, ts, tt, state):
        self._elementwise["bicgstab_finish"](phat, shat, t, alpha, ts, tt, x, r, omega, state)


@functools.cache
def _elementwise_kernels():
    """The ElementwiseKernels, built once per process (CuPy caches the binaries per device).

    Scalars arrive as one-element float64 arrays and broadcast. A kernel that
    detects breakdown writes the flag from element 0 only; every element takes
    the same decision from the same scalars, so no element races ahead.
    """
    import cupy

    kernels = {
        "cg_direction": cupy.ElementwiseKernel(
            "T z, float64 rho_new, float64 rho_old", "T p",
            "const double beta = rho_old != 0.0 ? rho_new / rho_old : 0.0;"
            "p = z + (T)beta * p;",
            "spla_cg_direction"),
        # SciPy's order: rho breakdown, then omega breakdown, then the update.
        # No early return: CuPy wraps the operation in a grid-stride loop.
        "bicgstab_direction": cupy.ElementwiseKernel(
            "T r, T v, float64 rho, float64 rho_prev, float64 alpha, float64 omega, int32 first, "
            "float64 rhotol", "T p, raw float64 state",
            "const bool was_broken = state[0] != 0.0;"
            "const bool rho_bad = !was_broken && fabs(rho) < rhotol;"
            "const bool omega_bad = !was_broken && !rho_bad && !first && fabs(omega) < rhotol;"
            "if (i == 0 && rho_bad) state[0] = 10.0;"
            "if (i == 0 && omega_bad) state[0] = 11.0;"
            "if (!(was_broken || rho_bad || omega_bad)) {"
            "  if (first) { p = r; }"
            "  else { const double beta = (rho / rho_prev) * (alpha / omega);"
            "         p = r + (T)beta * (p - (T)omega * v); }"
            "}",
            "spla_bicgstab_direction"),
        "bicgstab_half": cupy.ElementwiseKernel(
            "T v, float64 rho, float64 rv", "T r, raw float64 alpha, raw float64 state",
            "const bool broken = state[0] != 0.0 || rv == 0.0;"
            "const double a = broken ? 0.0 : rho / rv;"
            "if (i == 0) { alpha[0] = a; if (broken && state[0] == 0.0) state[0] = 11.0; }"
            "if (!broken) r = r - (T)a * v;",
            "spla_bicgstab_half"),
        "bicgstab_finish": cupy.ElementwiseKernel(
            "T phat, T shat, T t, float64 alpha, float64 ts, float64 tt",
            "T x, T r, raw float64 omega, raw float64 state",
            "const bool broken = state[0] != 0.0;"
            "const double w = (broken || tt == 0.0) ? 0.0 : ts / tt;"
            "if (i == 0) omega[0] = w;"
            "if (!broken) { x = x + (T)alpha * phat + (T)w * shat; r = r - (T)w * t; }",
            "spla_bicgstab_finish"),
    }
    return kernels


def kernels_for(xp, n: int, dtype):
    """HostKernels for NumPy, DeviceKernels for CuPy."""
    if xp is np:
        return HostKernels(n, dtype)
    return DeviceKernels(n, dtype)
