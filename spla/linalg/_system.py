"""``make_system``: the one normaliser every solver calls first.

It turns whatever the user passed (CSRMatrix, scipy/cupyx sparse, dense
NumPy/CuPy, SciPy/CuPy LinearOperator, anything with ``shape`` and
``matvec``) into a :class:`System`: a matvec and a preconditioner built once,
outside the iteration, on the side where ``b`` lives, plus a fresh copy of
x0 (the caller's array is never written), the working dtype and the array
module. Tolerances follow SciPy: converged when
``||b - A x|| <= max(rtol * ||b||, atol)``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import device as _device
from ..csr import CSRMatrix, as_csr, value_dtype
from ..errors import InputError

#: Convergence is checked every this many iterations on the GPU by default
#: (one host sync of ~10-20 us each); on the CPU every iteration.
DEFAULT_GPU_CHECK_EVERY = 8


def or_identity(psolve: Callable | None) -> Callable:
    """A preconditioner to call unconditionally: ``psolve``, or the identity where there is none."""
    return psolve if psolve is not None else _identity


def _identity(v):
    return v


@dataclass
class System:
    """A normalised linear system; see :func:`make_system`."""

    n: int
    dtype: np.dtype
    xp: Any
    matvec: Callable
    psolve: Callable | None  # None: no preconditioner
    inverse_diagonal: Any  # the Jacobi diagonal on b's side (fused on the GPU), else None
    b: Any
    x: Any  # a private copy of x0 (or zeros); solvers update it in place
    x0_given: bool
    check_every: int
    matrix: CSRMatrix | None = None  # the CSR matrix behind matvec, when there is one

    def matvec_into(self):
        """``f(v, out)`` writing A v into a preallocated ``out`` with no allocation, or None.

        Only a CSR matrix on the GPU has one (what a captured CUDA graph needs).
        """
        if self.xp is np or self.matrix is None:
            return None
        return device_spmv_into(self.matrix.astype(self.dtype).to_device())

    def spmv_launcher(self):
        """The launcher ``spla.spmv`` runs for the CSR matrix on the GPU (bound once, cached on
        the matrix), or None off the GPU or without a CSR matrix."""
        if self.xp is np or self.matrix is None:
            return None
        from ..ops.spmv import launcher

        return launcher(self.matrix.astype(self.dtype).to_device())

    @property
    def on_gpu(self) -> bool:
        return self.xp is not np


class JacobiPreconditioner:
    """M = D^{-1}, the inverse of A's diagonal, usable as a LinearOperator.

    Works on NumPy and CuPy vectors (the diagonal is copied to the vector's
    side once and kept). Any SciPy or CuPy solver accepts it too: it has
    ``shape``, ``dtype``, ``matvec`` and ``matmat``.
    """

    def __init__(self, inverse_diagonal):
        self._by_side = {_device.array_module(inverse_diagonal).__name__: inverse_diagonal}
        self.shape = (inverse_diagonal.shape[0],) * 2
        self.dtype = np.dtype(inverse_diagonal.dtype)

    def inverse_diagonal(self, xp=np, dtype=None):
        """The inverse diagonal as an array of ``xp`` (cached per side and dtype)."""
        dtype = self.dtype if dtype is None else np.dtype(dtype)
        key = (xp.__name__, dtype.str)
        if key not in self._by_side:
            base = next(iter(self._by_side.values()))
            host = base.get() if _device.is_cupy_array(base) else base
            self._by_side[key] = xp.asarray(host).astype(dtype)
        return self._by_side[key]

    def matvec(self, v):
        return self.inverse_diagonal(_device.array_module(v), v.dtype) * v.ravel()

    def matmat(self, V):
        return self.inverse_diagonal(_device.array_module(V), V.dtype)[:, None] * V

    def __matmul__(self, v):
        return self.matvec(v) if v.ndim == 1 else self.matmat(v)

    def __repr__(self) -> str:
        return f"<spla.linalg.JacobiPreconditioner {self.shape[0]}x{self.shape[1]}, {self.dtype.name}>"


def jacobi(A) -> JacobiPreconditioner:
    """Jacobi (diagonal) preconditioner ``M = diag(A)^{-1}``.

    Parameters
    ----------
    A : CSRMatrix, scipy/cupyx sparse matrix or dense array
        Square, with no zero on the diagonal.

    Returns
    -------
    JacobiPreconditioner
        Pass it as ``M=`` to any spla (or SciPy/CuPy) solver. On the GPU,
        :func:`cg` fuses it into its update kernel (``z = D^{-1} r`` in the
        same pass as the residual update).

    Raises
    ------
    InputError
        A is not square, or its diagonal has a zero (names the first such row).

    See Also
    --------
    scipy.sparse.linalg.LinearOperator, cupyx.scipy.sparse.linalg.LinearOperator
    """
    A = as_csr(A)
    if A.n_rows != A.n_cols:
        raise InputError(f"the Jacobi preconditioner needs a square matrix, got {A.n_rows}x{A.n_cols}")
    diag = A.diagonal()
    xp = _device.array_module(diag)
    zero = diag == 0
    if bool(zero.any()):
        raise InputError(f"the Jacobi preconditioner needs a nonzero diagonal; row {int(xp.argmax(zero))} has 0")
    return JacobiPreconditioner((1.0 / diag).astype(A.dtype))


def _is_linear_operator(A) -> bool:
    return hasattr(A, "matvec") and hasattr(A, "shape") and not hasattr(A, "tocsr")


def _operator_side(A) -> str | None:
    """'numpy'/'cupy' for arrays and matrices bound to a side, None when unknown."""
    if isinstance(A, CSRMatrix):
        return None  # moved to either side on demand (cached)
    if hasattr(A, "tocsr"):
        return "cupy" if type(A).__module__.startswith("cupyx") else "numpy"
    if _is_linear_operator(A):
        module = type(A).__module__
        if module.startswith("cupyx"):
            return "cupy"
        if module.startswith("scipy"):
            return "numpy"
        return None
    if getattr(A, "ndim", None) == 2:
        return _device.array_module(A).__name__
    raise InputError(f"cannot use a {type(A).__name__} as a linear operator "
                     "(give a CSRMatrix, a sparse matrix, a dense 2-D array or a LinearOperator)")


def _operator_dtype(A):
    dtype = getattr(A, "dtype", None)
    return None if dtype is None else np.dtype(dtype)


def _build_matvec(A, xp, dtype, what: str):
    """(matvec, CSRMatrix or None) for A on xp's side; built once per solve."""
    side = _operator_side(A)
    if side is not None and side != xp.__name__:
        where = "GPU (CuPy)" if side == "cupy" else "host (NumPy)"
        raise InputError(f"{what} lives on the {where} but b does not; move one of them")
    if isinstance(A, CSRMatrix) or hasattr(A, "tocsr"):
        csr = as_csr(A).astype(dtype)
        if xp is np:
            from ..backends.cpu import csr_product

            host = csr.to_host()  # the CPU backend's SpMV, as spla.spmv runs it (SciPy's bits)
            return (lambda v: csr_product(host, v)), csr
        from ..ops.spmv import spmv

        device = csr.to_device()
        return (lambda v: spmv(device, v)), csr
    if _is_linear_operator(A):
        return A.matvec, None
    dense = A.astype(dtype, copy=False)
    return dense.dot, None


def device_spmv_into(device_matrix):
    """``f(v, out)``: spla's GPU SpMV of a device CSRMatrix written into ``out``."""
    from ..ops.spmv import spmv

    return lambda v, out: spmv(device_matrix, v, out=out)


def check_square(A, what: str = "A") -> int:
    shape = getattr(A, "shape", None)
    if shape is None or len(shape) != 2:
        raise InputError(f"{what} must be a 2-D matrix or operator, got {type(A).__name__}")
    if shape[0] != shape[1]:
        raise InputError(f"{what} must be square, got shape {tuple(shape)}")
    return int(shape[0])


def solve_dtype(A, b) -> np.dtype:
    """float32 only when both A and b are float32 (SciPy's coercion); complex refused."""
    b_dtype = np.dtype(b.dtype)
    if b_dtype.kind == "c" or (_operator_dtype(A) is not None and _operator_dtype(A).kind == "c"):
        raise InputError("complex systems are not supported by spla")
    dtypes = [value_dtype(b_dtype)]
    if _operator_dtype(A) is not None:
        dtypes.append(value_dtype(_operator_dtype(A)))
    return np.dtype(np.result_type(*dtypes))


def make_system(A, b, x0=None, M=None, *, check_every=None, block=False) -> System:
    """Normalise ``A x = b`` for the solvers (see the module docstring).

    Parameters
    ----------
    A : CSRMatrix, sparse matrix, dense array or LinearOperator, shape (n, n)
    b : 1-D array of length n (or (n, 1)); with ``block=True`` a 2-D (n, k) array
    x0 : array like b, optional
        Initial guess; copied, never written. Default zeros.
    M : preconditioner like A, or a :class:`JacobiPreconditioner`, optional
    check_every : int, optional
        Iterations between convergence checks (default 1 on the CPU,
        ``DEFAULT_GPU_CHECK_EVERY`` on the GPU, or the preconditioner's
        ``M.solver_check_every`` when it has one).

    Raises
    ------
    InputError
        Shapes that do not fit, non-square A, arrays split between host and
        GPU, complex values, check_every < 1.
    """
    n = check_square(A)
    xp = _device.array_module(b) if _device.is_cupy_array(b) else np
    b = xp.asarray(b)
    expected = "(n, k)" if block else "(n,)"
    if block:
        if b.ndim != 2 or b.shape[0] != n:
            raise InputError(f"B must have shape {expected} with n = {n}, got {b.shape}")
    elif not (b.shape == (n,) or b.shape == (n, 1)):
        raise InputError(f"b must have shape (n,) with n = {n} (A is {n}x{n}), got {b.shape}")
    dtype = solve_dtype(A, b)
    b = b.astype(dtype, copy=False)
    if not block:
        b = b.ravel()
    if x0 is None:
        x = xp.zeros(b.shape, dtype=dtype)
    else:
        if _device.is_cupy_array(x0) != (xp is not np):
            raise InputError("x0 and b must both be NumPy or both be CuPy arrays")
        x = xp.array(x0, dtype=dtype, copy=True)
        if x.size != b.size:
            raise InputError(f"x0 must have the shape of b {b.shape}, got {x.shape}")
        x = x.reshape(b.shape)
    matvec, csr = _build_matvec(A, xp, dtype, "A")

    psolve, inverse_diagonal = None, None
    if isinstance(M, JacobiPreconditioner):
        if M.shape != (n, n):
            raise InputError(f"M has shape {M.shape} but A is {n}x{n}")
        inverse_diagonal = M.inverse_diagonal(xp, dtype)
        psolve = (lambda v: inverse_diagonal * v) if not block else (lambda V: inverse_diagonal[:, None] * V)
    elif M is not None:
        if check_square(M, "M") != n:
            raise InputError(f"M has shape {tuple(M.shape)} but A is {n}x{n}")
        psolve, _ = _build_matvec(M, xp, dtype, "M")

    if check_every is None:
        check_every = getattr(M, "solver_check_every", None) or (DEFAULT_GPU_CHECK_EVERY if xp is not np else 1)
    check_every = int(check_every)
    if check_every < 1:
        raise InputError(f"check_every must be >= 1, got {check_every}")
    return System(n=n, dtype=dtype, xp=xp, matvec=matvec, psolve=psolve, inverse_diagonal=inverse_diagonal,
                  b=b, x=x, x0_given=x0 is not None, check_every=check_every, matrix=csr)


def absolute_tolerance(name: str, b_norm: float, rtol: float, atol: float) -> float:
    """SciPy's rule: max(atol, rtol * ||b||); negative tolerances are refused."""
    if atol is None or atol < 0 or rtol is None or rtol < 0:
        raise InputError(f"spla.linalg.{name}: rtol and atol must be non-negative numbers, got {rtol}, {atol}")
    return max(float(atol), float(rtol) * float(b_norm))


def default_maxiter(maxiter, n: int, factor: int = 10) -> int:
    if maxiter is None:
        return factor * n
    maxiter = int(maxiter)
    if maxiter < 0:
        raise InputError(f"maxiter must be >= 0, got {maxiter}")
    return maxiter


def aslinearoperator(A, *, device: str = "cpu"):
    """A SciPy (``device="cpu"``) or CuPy (``"gpu"``) LinearOperator over any spla operand.

    CSRMatrix and sparse matrices multiply through :func:`spla.spmv` on the
    GPU and SciPy on the CPU; dense arrays and LinearOperators pass through.

    See Also
    --------
    scipy.sparse.linalg.aslinearoperator, cupyx.scipy.sparse.linalg.aslinearoperator
    """
    if device not in ("cpu", "gpu"):
        raise InputError(f"device must be 'cpu' or 'gpu', got {device!r}")
    n = check_square(A)
    xp = np if device == "cpu" else _device.require_cupy()
    dtype = value_dtype(_operator_dtype(A) or np.float64)
    matvec, _ = _build_matvec(A, xp, dtype, "A")
    if device == "cpu":
        from scipy.sparse.linalg import LinearOperator
    else:
        from cupyx.scipy.sparse.linalg import LinearOperator
    return LinearOperator((n, n), matvec=matvec, matmat=lambda V: xp.stack([matvec(c) for c in V.T], axis=1),
                          dtype=dtype)
