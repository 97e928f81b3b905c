"""``spla.gemm`` and ``spla.gemv`` (module spla.dense): dense products on the side where the data lives.

NumPy operands run through NumPy on the CPU (``kernel`` must be ``"auto"``
or ``"numpy"``); CuPy operands run spla's CUDA kernels in
``spla.backend.gemm_cuda`` (``kernel`` names one of its registry, ``"auto"``
applies its documented policy). Both follow BLAS semantics: a given C (or y)
is written in place and read only when ``beta != 0``.
"""

from __future__ import annotations

import numpy as np

from . import cuda
from .errors import InputError, KernelError

CPU_KERNELS = ("auto", "numpy")


def _array_module(*arrays):
    try:
        return cuda.array_module(*arrays)
    except ValueError as exc:
        raise InputError(str(exc)) from None


def _check_cpu_kernel(kernel):
    if kernel not in CPU_KERNELS:
        raise KernelError(f"kernel {kernel!r} runs on the GPU (CuPy arrays); on the CPU use one of {CPU_KERNELS}")


def _write_scaled(product, out, alpha, beta):
    """out = alpha * product + beta * out, never reading out when beta == 0."""
    product *= product.dtype.type(alpha)
    if beta != 0:
        product += product.dtype.type(beta) * out
    out[...] = product
    return out


def gemm(A, B, C=None, *, alpha=1.0, beta=0.0, kernel: str = "auto"):
    """General matrix product ``alpha * A @ B + beta * C``.

    Parameters
    ----------
    A : (M, K) numpy.ndarray or cupy.ndarray, float32 or float64
    B : (K, N) array on the same side as A
    C : (M, N) array of the result dtype, optional
        Written in place and returned; read only when ``beta != 0`` (it may
        hold NaN with ``beta == 0``). Without C a new array is returned and
        ``beta`` must be 0.
    alpha, beta : float
    kernel : str
        On the GPU, a name from ``spla.backend.gemm_cuda.KERNELS`` (naive,
        tiled16, tiled32, padded, vec4, regblock, dbuf, tf32, cublas) or
        ``EXTRA_KERNELS`` (dbuf64, splitk, splitk_n8, tf32_trunc,
        tf32_wgmma, ...), or ``"auto"`` (spla's fastest fp32 kernel for the
        shape, split-K for few output tiles and a long K; cuBLAS for float64;
        never the lower-precision tf32 kernels). ``"tf32_wgmma"`` is the
        fast tensor-core path, TF32 precision (sm_90a only; KernelError
        elsewhere). On the CPU ``"auto"`` or ``"numpy"``.

    Returns
    -------
    C : array on the operands' side, dtype ``result_type(A, B)``

    Raises
    ------
    InputError
        Non-2-D operands, mismatched inner dimensions, non-float dtypes, a C
        of the wrong shape or dtype, operands split between host and GPU.
    KernelError
        An unknown kernel name, a GPU kernel asked for on NumPy arrays, or
        ``"tf32_wgmma"`` on a GPU other than Hopper (sm_90a).

    See Also
    --------
    numpy.matmul, cupy.matmul, scipy.linalg.blas.sgemm
    """
    from .backend import gemm_cuda

    xp = _array_module(A, B, C)
    (M, N), dtype = gemm_cuda.check_operands(A, B, C)
    if C is None and beta != 0:
        raise InputError("beta != 0 needs an input C")
    if xp is np:
        _check_cpu_kernel(kernel)
        product = np.matmul(A.astype(dtype, copy=False), B.astype(dtype, copy=False))
        out = np.empty((M, N), dtype=dtype) if C is None else C
        return _write_scaled(np.asarray(product, dtype=dtype), out, alpha, beta)
    return gemm_cuda.gemm(A, B, C, alpha=alpha, beta=beta, kernel=kernel)


def gemv(M, x, y=None, *, alpha=1.0, beta=0.0):
    """Dense matrix-vector product ``alpha * M @ x + beta * y``.

    Parameters
    ----------
    M : (m, n) numpy.ndarray or cupy.ndarray, float32 or float64
    x : (n,) array on the same side; cast to M's dtype
    y : (m,) array of M's dtype, optional
        Written in place and returned; read only when ``beta != 0``.
    alpha, beta : float

    Returns
    -------
    y : array on M's side

    See Also
    --------
    numpy.dot, cupy.matmul, scipy.linalg.blas.sgemv
    """
    from .backend import gemm_cuda

    if _array_module(M, x, y) is not np:
        return gemm_cuda.gemv(M, x, y, alpha=alpha, beta=beta)
    n_rows, _ = gemm_cuda.check_gemv_operands(M, x, y, beta)
    product = np.asarray(M @ x.astype(M.dtype, copy=False), dtype=M.dtype)
    out = np.empty(n_rows, dtype=M.dtype) if y is None else y
    return _write_scaled(product, out, alpha, beta)
