"""``spla.gemm`` and ``spla.gemv``: dense products on the side where the data lives.

The front door validates once, picks the side from the operands
(:func:`spla.device.array_module`: NumPy runs :mod:`spla.backends.cpu`, CuPy
the CUDA kernels), asks :mod:`spla.planning.gemm` for a plan on the GPU and
hands it to :mod:`spla.backends.cuda.gemm`. BLAS semantics: C (or y) is read
only when ``beta != 0``; the result goes to ``out`` (default: C or y, else a
new array), written in place and returned.
"""

from __future__ import annotations

import numbers

import numpy as np

from ..backends import cpu
from ..device import array_module, device_memory_errors
from ..errors import InputError, KernelError
from ..planning import gemm as planning


def check_operands(A, B, C):
    """Shapes, dtypes and the result dtype of C = A @ B (+ C); raises InputError."""
    for name, arr in (("A", A), ("B", B)):
        if getattr(arr, "ndim", None) != 2:
            raise InputError(f"{name} must be a 2-D array, got shape {getattr(arr, 'shape', None)}")
    if A.shape[1] != B.shape[0]:
        raise InputError(f"inner dimensions differ: A is {A.shape[0]}x{A.shape[1]}, B is {B.shape[0]}x{B.shape[1]}")
    dtype = np.result_type(A.dtype, B.dtype)
    if dtype not in (np.float32, np.float64):
        raise InputError(f"GEMM takes float32 or float64 operands, got {A.dtype} and {B.dtype}")
    shape = (A.shape[0], B.shape[1])
    if C is not None:
        _check_output("C", C, shape, dtype)
    return shape, np.dtype(dtype)


def check_gemv_operands(M, x, y, beta):
    """Shapes and dtypes of y = alpha * M @ x + beta * y; returns M's shape, raises InputError."""
    if getattr(M, "ndim", None) != 2:
        raise InputError(f"M must be a 2-D array, got shape {getattr(M, 'shape', None)}")
    if M.dtype not in (np.float32, np.float64):
        raise InputError(f"GEMV takes float32 or float64 matrices, got {M.dtype}")
    n_rows, n_cols = M.shape
    if getattr(x, "ndim", None) != 1 or x.shape[0] != n_cols:
        raise InputError(f"x must be a vector of length {n_cols}, got shape {getattr(x, 'shape', None)}")
    if y is not None and (getattr(y, "ndim", None) != 1 or y.shape[0] != n_rows or y.dtype != M.dtype):
        raise InputError(f"y must be a {M.dtype} vector of length {n_rows}, got "
                         f"{getattr(y, 'dtype', None)} shape {getattr(y, 'shape', None)}")
    if y is None and beta != 0:
        raise InputError("beta != 0 needs an input y")
    return M.shape


def _check_output(name, arr, shape, dtype):
    if getattr(arr, "ndim", None) != len(shape) or tuple(arr.shape) != tuple(shape):
        raise InputError(f"{name} must have shape {tuple(shape)}, got {getattr(arr, 'shape', None)}")
    if arr.dtype != dtype:
        raise InputError(f"{name} must be {np.dtype(dtype)} (the result type), got {arr.dtype}")


def _scalar(name, value) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise InputError(f"{name} must be a real number, got {value!r}")
    return float(value)


def gemm(A, B, C=None, *, alpha=1.0, beta=0.0, kernel: str = "auto", out=None):
    """General matrix product ``alpha * A @ B + beta * C``.

    Parameters
    ----------
    A : (M, K) numpy.ndarray or cupy.ndarray, float32 or float64
    B : (K, N) array on the same side as A
    C : (M, N) array of the result dtype, optional
        Read only when ``beta != 0`` (it may hold NaN with ``beta == 0``);
        ``beta != 0`` needs it.
    alpha, beta : float
    kernel : str
        On the GPU a name of ``spla.planning.gemm.ALL_KERNELS``: the path
        naive, tiled16, tiled32, padded, vec4, regblock, dbuf, tf32, cublas
        and dbuf64, splitk, splitk_n8, tf32_wgmma; or ``"auto"`` (spla's
        fastest fp32 kernel for the shape, split-K for few output tiles and a
        long K; cuBLAS for float64; never the lower-precision tf32 kernels).
        ``"tf32_wgmma"`` is the fast tensor-core path, TF32 precision (sm_90a
        only; KernelError elsewhere). Split-K kernels add their K slices into
        C with atomics: the last bits can differ between runs. On the CPU
        ``"auto"`` or ``"numpy"``.
    out : (M, N) array of the result dtype on the operands' side, optional
        Where the result goes (default: C, else a new array); written in
        place and returned.

    Returns
    -------
    out : array on the operands' side, dtype ``result_type(A, B)``

    Raises
    ------
    InputError
        Non-2-D operands, mismatched inner dimensions, non-float dtypes, a C
        or out of the wrong shape or dtype, operands split between host and GPU.
    KernelError
        An unknown kernel name, a GPU kernel asked for on NumPy arrays, or
        ``"tf32_wgmma"`` on a GPU other than Hopper (sm_90a).

    See Also
    --------
    numpy.matmul, cupy.matmul, scipy.linalg.blas.sgemm
    """
    xp = array_module(A, B, C, out)
    (M, N), dtype = check_operands(A, B, C)
    alpha, beta = _scalar("alpha", alpha), _scalar("beta", beta)
    if C is None and beta != 0:
        raise InputError("beta != 0 needs an input C")
    if out is not None:
        _check_output("out", out, (M, N), dtype)
    if xp is np:
        if kernel not in planning.CPU_KERNELS:
            raise KernelError(f"kernel {kernel!r} runs on the GPU (CuPy arrays); on the CPU use one of "
                              f"{planning.CPU_KERNELS}")
        return cpu.gemm(A, B, C, alpha, beta, out=out)
    from ..backends.cuda import gemm as cuda_gemm

    plan = cuda_gemm.plan(kernel, dtype, (M, N, A.shape[1]))
    with device_memory_errors("GEMM"):
        if out is None:
            out = C if C is not None else xp.empty((M, N), dtype=dtype)
        elif beta != 0 and out is not C:
            out[...] = C
        return cuda_gemm.gemm(A, B, out, plan, alpha=alpha, beta=beta)


def gemv(M, x, y=None, *, alpha=1.0, beta=0.0, out=None):
    """Dense matrix-vector product ``alpha * M @ x + beta * y``.

    Parameters
    ----------
    M : (m, n) numpy.ndarray or cupy.ndarray, float32 or float64
    x : (n,) array on the same side; cast to M's dtype
    y : (m,) array of M's dtype, optional
        Read only when ``beta != 0``.
    alpha, beta : float
    out : (m,) array of M's dtype on the same side, optional
        Where the result goes (default: y, else a new array); written in
        place and returned.

    Returns
    -------
    out : array on M's side

    See Also
    --------
    numpy.dot, cupy.matmul, scipy.linalg.blas.sgemv
    """
    xp = array_module(M, x, y, out)
    n_rows, _ = check_gemv_operands(M, x, y, beta)
    alpha, beta = _scalar("alpha", alpha), _scalar("beta", beta)
    if out is not None:
        _check_output("out", out, (n_rows,), M.dtype)
    if xp is np:
        return cpu.gemv(M, x, y, alpha, beta, out=out)
    from ..backends.cuda import gemm as cuda_gemm

    with device_memory_errors("GEMV"):
        if out is None:
            out = y if y is not None else xp.empty(n_rows, dtype=M.dtype)
        elif beta != 0 and out is not y:
            out[...] = y
        return cuda_gemm.gemv(M, x, out, alpha=alpha, beta=beta)
