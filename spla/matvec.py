"""``spla.spmv`` (module spla.matvec): y = alpha * A @ x + beta * y, on the side where x lives.

NumPy x runs on the CPU backend (SciPy); CuPy x runs the CUDA kernel family
in ``spla.backend.spmv_cuda`` (``kernel`` picks one, ``"auto"`` lets the
planner choose).
"""

from __future__ import annotations

from . import cuda
from .backends import cpu
from .csr import CSRMatrix, as_csr
from .errors import InputError, KernelError

CPU_KERNELS = ("auto", "scipy")


def _check_vector(A, x, y, what="x"):
    if getattr(x, "ndim", None) != 1 or x.shape[0] != A.n_cols:
        raise InputError(f"{what} must be a vector of length {A.n_cols} (A is {A.n_rows}x{A.n_cols}), "
                         f"got shape {getattr(x, 'shape', None)}")
    if y is not None and (getattr(y, "ndim", None) != 1 or y.shape[0] != A.n_rows):
        raise InputError(f"y must be a vector of length {A.n_rows}, got shape {getattr(y, 'shape', None)}")


def spmv(A, x, y=None, *, alpha=1.0, beta=0.0, kernel: str = "auto"):
    """Sparse matrix-vector product ``alpha * A @ x + beta * y``.

    Parameters
    ----------
    A : CSRMatrix, scipy.sparse or cupyx.scipy.sparse matrix
    x : 1-D numpy.ndarray or cupy.ndarray
        Its module decides where the product runs; A is moved there (and the
        copy cached on A).
    y : 1-D array, optional
        Read only when ``beta != 0``; a new array is returned either way.
    kernel : str
        GPU kernel name from ``spla.backend.spmv_cuda.KERNELS`` or ``"auto"``;
        on the CPU only ``"auto"``/``"scipy"``.

    Returns
    -------
    y : array of A's value dtype on x's side.

    See Also
    --------
    scipy.sparse.csr_matrix.dot, cupyx.scipy.sparse.csr_matrix.dot
    """
    if type(A) is CSRMatrix and beta == 0 and cuda.is_cupy_array(x):
        # Hot path: after the first GPU call for (A, kernel) the backend caches a
        # bound launcher on A; it takes a contiguous CuPy x of A's dtype and returns
        # None for anything else, which takes the checked path below.
        from .backend import spmv_cuda

        bound = spmv_cuda.bound_launcher(A, kernel)
        if bound is not None:
            result = bound.fast(x, None, alpha, beta, None)
            if result is not None:
                return result
    A = as_csr(A)
    xp = cuda.array_module(x, y)
    _check_vector(A, x, y)
    if xp.__name__ == "numpy":
        if kernel not in CPU_KERNELS:
            raise KernelError(f"kernel {kernel!r} runs on the GPU; on the CPU use one of {CPU_KERNELS}")
        A = A.to_host()
        return cpu.spmv(A, x.astype(A.dtype, copy=False), y, alpha, beta)
    from .backend import spmv_cuda

    A = A.to_device()
    return spmv_cuda.spmv(A, x.astype(A.dtype, copy=False), y, alpha=alpha, beta=beta, kernel=kernel)
