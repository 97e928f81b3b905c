"""``spla.spmm`` (module spla.matmat): Y = alpha * A @ X + beta * Y for a dense block X.

NumPy X runs on the CPU backend (SciPy); CuPy X runs the CUDA SpMM kernels in
``spla.backend.spmm_cuda`` (``kernel`` picks one, ``"auto"`` lets its policy
choose). ``A @ X`` on a :class:`~spla.CSRMatrix` with a 2-D X lands here.
"""

from __future__ import annotations

import numbers

from . import cuda
from .backends import cpu
from .csr import as_csr
from .errors import InputError, KernelError

CPU_KERNELS = ("auto", "scipy")


def _check_block(A, X, Y):
    if not hasattr(X, "ndim") or not hasattr(X, "shape") or hasattr(X, "tocsr"):
        raise InputError(f"X must be a dense 2-D NumPy or CuPy array, got {type(X).__name__}")
    if X.ndim != 2 or X.shape[0] != A.n_cols:
        raise InputError(f"X must be a 2-D array with {A.n_cols} rows (A is {A.n_rows}x{A.n_cols}), "
                         f"got shape {X.shape}")
    if X.dtype.kind not in "biuf":
        raise InputError(f"X must hold real numbers, got dtype {X.dtype}")
    if Y is not None:
        if getattr(Y, "ndim", None) != 2 or tuple(Y.shape) != (A.n_rows, X.shape[1]):
            raise InputError(f"Y must have shape ({A.n_rows}, {X.shape[1]}), got {getattr(Y, 'shape', None)}")
        if Y.dtype.kind not in "biuf":
            raise InputError(f"Y must hold real numbers, got dtype {Y.dtype}")


def _check_scalar(name, value):
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise InputError(f"{name} must be a real number, got {value!r}")
    return float(value)


def spmm(A, X, Y=None, *, alpha=1.0, beta=0.0, kernel: str = "auto"):
    """Sparse matrix times dense block: ``alpha * A @ X + beta * Y``.

    Parameters
    ----------
    A : CSRMatrix, scipy.sparse or cupyx.scipy.sparse matrix
    X : 2-D numpy.ndarray or cupy.ndarray, shape (n_cols, k)
        Its module decides where the product runs; A is moved there (the copy
        is cached on A). C order, F order and strided views are all accepted:
        on the GPU, ``regk`` and ``fused`` read either order directly and the other kernels
        take a C-contiguous copy of an X that is not row-major.
    Y : 2-D array of shape (n_rows, k), optional
        Read only when ``beta != 0`` (so a NaN-filled Y with ``beta=0`` is
        fine); a new array is returned either way.
    alpha, beta : float
    kernel : str
        GPU kernel from ``spla.backend.spmm_cuda.KERNELS`` (``auto``, ``regk``,
        ``warp``, ``subwarp``, ``adaptive``, ``adaptive-sparse``, ``fused``,
        ``fused16``, ``fused-sparse``, ``spmv-loop``, ``cusparse``,
        ``cusparse-cupy``); on the CPU only ``auto``/``scipy``.

    Returns
    -------
    Y : C-contiguous (n_rows, k) array of A's value dtype on X's side.

    Raises
    ------
    InputError
        Shape, dtype or scalar mismatches; X and Y on different sides.
    KernelError
        Unknown kernel, or one that cannot run this shape (``regk`` past k=16).

    See Also
    --------
    scipy.sparse.csr_matrix.dot, cupyx.scipy.sparse.csr_matrix.dot, cupyx.cusparse.spmm
    """
    A = as_csr(A)
    _check_block(A, X, Y)
    alpha = _check_scalar("alpha", alpha)
    beta = _check_scalar("beta", beta)
    try:
        xp = cuda.array_module(X, Y)
    except ValueError as exc:
        raise InputError(str(exc)) from None
    if beta == 0:
        Y = None  # never read: BLAS semantics
    if xp.__name__ == "numpy":
        if kernel not in CPU_KERNELS:
            raise KernelError(f"kernel {kernel!r} runs on the GPU; on the CPU use one of {CPU_KERNELS}")
        A = A.to_host()
        Y = None if Y is None else Y.astype(A.dtype, copy=False)
        return xp.ascontiguousarray(cpu.spmm(A, X.astype(A.dtype, copy=False), Y, alpha, beta))
    from .backend import spmm_cuda

    A = A.to_device()
    Y = None if Y is None else Y.astype(A.dtype, copy=False)
    return spmm_cuda.spmm(A, X.astype(A.dtype, copy=False), Y, alpha=alpha, beta=beta, kernel=kernel)
