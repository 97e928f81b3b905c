"""``spla.spmm``: ``Y = alpha * A @ X + beta * Y`` for a dense block X.

The front door validates once, picks the side from X (NumPy: the SciPy
reference in :mod:`spla.backends.cpu`; CuPy: the CUDA kernels), asks
:mod:`spla.planning.spmm` for a plan on the GPU and hands it to
:mod:`spla.backends.cuda.spmm`. ``A @ X`` on a :class:`~spla.CSRMatrix`
with a 2-D X lands here.
"""

from __future__ import annotations

import numbers

import numpy as np

from ..backends import cpu
from ..csr import CSRMatrix, as_csr
from ..device import array_module, device_memory_errors, require_cupy
from ..errors import InputError, KernelError
from ..planning import spmm as planning
from ..planning.spmv import SPMM_BOUND_KEY


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


def _check_out(A, X, out):
    shape = (A.n_rows, X.shape[1])
    if getattr(out, "ndim", None) != 2 or tuple(out.shape) != shape:
        raise InputError(f"out must have shape {shape}, got {getattr(out, 'shape', None)}")
    if out.dtype != A.dtype:
        raise InputError(f"out must be {A.dtype} (A's value dtype), got {out.dtype}")


def _check_scalar(name, value):
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise InputError(f"{name} must be a real number, got {value!r}")
    return float(value)


_NOTHING_BOUND: dict = {}  # read-only stand-in, so the hot path allocates no dict


def spmm(A, X, Y=None, *, alpha=1.0, beta=0.0, kernel: str = "auto", out=None):
    """Sparse matrix times dense block: ``alpha * A @ X + beta * Y``.

    Parameters
    ----------
    A : CSRMatrix, scipy.sparse or cupyx.scipy.sparse matrix
    X : 2-D numpy.ndarray or cupy.ndarray, shape (n_cols, k)
        Its module decides where the product runs; A is moved there (the copy
        is cached on A). C order, F order and strided views are all accepted:
        on the GPU, ``regk`` and ``fused`` read either order directly and the
        other kernels take a C-contiguous copy of an X that is not row-major.
    Y : 2-D array of shape (n_rows, k), optional
        Read only when ``beta != 0`` (so a NaN-filled Y with ``beta=0`` is fine).
    alpha, beta : float
    kernel : str
        GPU kernel from ``spla.planning.spmm.KERNELS`` (``auto``, ``regk``,
        ``warp``, ``subwarp``, ``adaptive``, ``fused``, ``dia``, ``spmv-loop``,
        ``cusparse``, ``cusparse-cupy``), ``fused:N`` (segments of N nonzeros),
        or ``tune``: on the first call for (A, k) time the candidates
        (``spla.tune(A, k=k)``), then run the winner, as ``auto`` does from
        then on. ``auto`` runs a winner the tuning cache holds for A at this k
        on this GPU, else its rule; it never measures. On the CPU only
        ``auto``/``scipy``.
    out : 2-D array of shape (n_rows, k) and A's value dtype, optional
        Written in place and returned (it may be Y itself). Without it a new
        C-contiguous array is returned.

    Returns
    -------
    out : (n_rows, k) array of A's value dtype on X's side.

    Raises
    ------
    InputError
        Shape, dtype or scalar mismatches; X, Y and out on different sides.
    KernelError
        Unknown kernel, or one that cannot run this shape (``regk`` past k=16,
        ``dia`` on a matrix whose entries are not on a few diagonals).

    Notes
    -----
    After the first GPU call for (A, kernel, X's shape), a call with a
    C-contiguous CuPy X of A's dtype, no Y and ``beta == 0`` takes the launcher
    cached on A: no planning and no checks again, and where the run is only
    kernel launches (``dia``, ``subwarp``, ``warp``, ``regk``; ``fused`` and
    ``adaptive`` without dense panels) their arguments are packed once. As for ``spla.spmv``, call ``A.refresh()`` after
    writing into A's arrays.

    See Also
    --------
    scipy.sparse.csr_matrix.dot, cupyx.scipy.sparse.csr_matrix.dot, cupyx.cusparse.spmm
    """
    if type(A) is CSRMatrix and Y is None:  # the hot path: a launcher bound by an earlier call
        launcher = A._cache.get(SPMM_BOUND_KEY, _NOTHING_BOUND).get((kernel, getattr(X, "shape", None)))
        if launcher is not None:
            result = launcher.fast(X, alpha, beta, out)
            if result is not None:
                return result
    return _spmm_checked(A, X, Y, alpha, beta, kernel, out)


def _spmm_checked(A, X, Y, alpha, beta, kernel, out):
    """Every check and conversion; on the GPU, binds a launcher and caches it for the hot path."""
    A = as_csr(A)
    _check_block(A, X, Y)
    alpha = _check_scalar("alpha", alpha)
    beta = _check_scalar("beta", beta)
    xp = array_module(X, Y, out)
    if out is not None:
        _check_out(A, X, out)
    if beta == 0:
        Y = None  # never read: BLAS semantics
    if xp is np:
        if kernel not in planning.CPU_KERNELS:
            raise KernelError(f"kernel {kernel!r} runs on the GPU; on the CPU use one of {planning.CPU_KERNELS}")
        A = A.to_host()
        Y = None if Y is None else Y.astype(A.dtype, copy=False)
        result = cpu.spmm(A, X.astype(A.dtype, copy=False), Y, alpha, beta, kernel=kernel)
        if out is None:
            return np.ascontiguousarray(result)
        out[...] = result
        return out
    if kernel != "tune":
        planning.parse_spmm_kernel(kernel)  # KernelError on an unknown name
    with device_memory_errors("SpMM"):
        return _spmm_gpu(A, X, Y, alpha, beta, kernel, out)


def _spmm_gpu(A, X, Y, alpha, beta, kernel, out):
    from ..backends.cuda import spmm as cuda_spmm

    caller, shape = A, X.shape
    A = A.to_device()
    X = X.astype(A.dtype, copy=False)
    Y = None if Y is None else Y.astype(A.dtype, copy=False)
    if A.n_rows == 0 or shape[1] == 0:
        return cuda_spmm.spmm(A, X, Y, alpha=alpha, beta=beta, kernel=kernel, out=out)
    if kernel in ("auto", "tune"):
        resolve_tuned(A, shape[1], measure=kernel == "tune")
    launcher = cuda_spmm.bind(A, cuda_spmm.plan(A, shape[1], "auto" if kernel == "tune" else kernel))
    # cached for the hot path on the matrix the caller holds and on the device copy
    for holder in {id(m): m for m in (caller, A)}.values():
        holder._cache.setdefault(SPMM_BOUND_KEY, {})[(kernel, shape)] = launcher
    if out is not None and out.flags.c_contiguous and not _overlaps(out, X, Y):
        return launcher(X, out, Y, alpha, beta)
    result = launcher(X, require_cupy().empty((A.n_rows, shape[1]), dtype=A.dtype), Y, alpha, beta)
    if out is None:
        return result
    out[...] = result
    return out


def resolve_tuned(A, k: int, measure: bool) -> None:
    """Before planning ``auto`` or ``tune`` at k columns on the device matrix A: take a winner from
    the tuning cache when it holds one for A at k on this GPU, else (``measure``) tune now. At
    k = 1 auto runs the SpMV, so the SpMV's tuning is what applies."""
    from ..planning import tune as plan_tune
    from .spmv import resolve_tuned as resolve_spmv

    if k == 1:
        resolve_spmv(A, measure)
        return
    plan_tune.apply_cached_spmm(A, k)  # once per (matrix, k); names the GPU only where the cache file exists
    if measure and not planning.tuned_choice(A, k):
        from ..bench.tune import tune

        tune(A, k=k)


def _overlaps(out, *inputs) -> bool:
    """Whether out may share memory with an input: then the result goes through a fresh buffer."""
    cupy = require_cupy()
    return any(a is not None and bool(cupy.may_share_memory(out, a)) for a in inputs)
