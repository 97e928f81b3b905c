"""``spla.spmv``: ``y = alpha * A @ x + beta * y`` on the side where x lives.

NumPy x runs on the CPU backend (SciPy's kernel, or on threads from 1M nnz); CuPy x runs spla's CUDA kernels with
the plan :mod:`spla.planning.spmv` makes for ``kernel``. The first GPU call for
a (matrix, kernel) binds a launcher and caches it on the matrix; later calls
with a contiguous x of A's dtype and ``beta == 0`` go straight to it.
"""

from __future__ import annotations

import numpy as np

from .. import device
from ..backends import cpu
from ..csr import CSRMatrix, as_csr
from ..errors import InputError, KernelError
from ..planning import tune as plan_tune
from ..planning.spmv import BOUND_KEY, CPU_KERNELS, plan_spmv, staged_instead

_NOTHING_BOUND: dict = {}  # read-only stand-in, so the hot path allocates no dict


def spmv(A, x, y=None, *, alpha=1.0, beta=0.0, kernel: str = "auto", out=None):
    """Sparse matrix-vector product ``alpha * A @ x + beta * y``.

    Parameters
    ----------
    A : CSRMatrix, scipy.sparse or cupyx.scipy.sparse matrix
    x : 1-D numpy.ndarray or cupy.ndarray
        Its module decides where the product runs; A is moved there (and the
        copy cached on A). The result dtype is SciPy's: NumPy's promotion of
        A's, x's (and y's, when read) dtypes; float32 A with float64 x runs in
        float64, and a complex x goes through SciPy/cupyx (spla's kernels are real).
    y : 1-D array, optional
        Read only when ``beta != 0`` (required then); never written unless it
        is also ``out``.
    alpha, beta : float
    kernel : str
        On the GPU a name from ``spla.planning.spmv.KERNELS`` (``"auto"``,
        ``"tune"``, ``"scalar"``, ``"warp:8"``, ``"segmented"``,
        ``"cusparse"``, ...); on the CPU ``"auto"`` or ``"scipy"``. ``"auto"``
        never measures: it runs the rule's choice, or a winner the tuning
        cache holds for A on this GPU. ``"tune"`` measures on the first call
        for A (``spla.tune``), then runs the winner, as ``"auto"`` does from
        then on.
    out : array, optional
        Where the result is written (contiguous, the result dtype, x's side);
        may be ``y`` itself for an in-place update. Default: a new array.

    Returns
    -------
    array
        ``out`` when given, else a new vector of the result dtype on x's side.

    Notes
    -----
    After the first GPU call for (A, kernel), a call with a contiguous CuPy x
    of A's dtype and ``beta == 0`` costs about one kernel launch of host time.
    The cached launcher holds A's arrays; ``dia`` (which ``auto`` runs on
    large stencils and bands) and ``adaptive``'s dense panels hold copies of
    its values, ``band`` each row's first column and ``rle`` its runs of
    columns: after replacing A's arrays or writing into them, call
    ``A.refresh()``.

    See Also
    --------
    scipy.sparse.csr_array.dot, cupyx.scipy.sparse.csr_matrix.dot
    """
    if type(A) is CSRMatrix:  # the hot path: a bound launcher takes the common call
        launcher = A._cache.get(BOUND_KEY, _NOTHING_BOUND).get(kernel)
        if launcher is not None:
            result = launcher.fast(x, alpha, beta, out)
            if result is not None:
                return result
    return _spmv_checked(A, x, y, alpha, beta, kernel, out)


def _check_vectors(A, x, y, out):
    if getattr(x, "ndim", None) != 1 or x.shape[0] != A.n_cols:
        raise InputError(f"x must be a vector of length {A.n_cols} (A is {A.n_rows}x{A.n_cols}), "
                         f"got shape {getattr(x, 'shape', None)}")
    for name, v in (("y", y), ("out", out)):
        if v is not None and (getattr(v, "ndim", None) != 1 or v.shape[0] != A.n_rows):
            raise InputError(f"{name} must be a vector of length {A.n_rows}, got shape {getattr(v, 'shape', None)}")


def _spmv_checked(A, x, y, alpha, beta, kernel, out):
    """Every check and conversion; on the GPU, binds and caches a launcher."""
    A = as_csr(A)
    xp = device.array_module(x, y, out)
    _check_vectors(A, x, y, out)
    if beta != 0 and y is None:
        raise InputError("beta != 0 needs y")
    # SciPy's result dtype: float32 A times float64 x is float64, a complex x gives complex
    dtype = np.result_type(A.dtype, x.dtype, *(() if y is None or beta == 0 else (y.dtype,)))
    if dtype.kind not in "fc":
        dtype = np.dtype(np.float64)
    if out is not None and (out.dtype != dtype or not out.flags.c_contiguous):
        raise InputError(f"out must be a contiguous {dtype} vector of length {A.n_rows}, "
                         f"got {out.dtype}{'' if out.flags.c_contiguous else ' (not contiguous)'}")
    if dtype.kind == "c":  # spla's kernels are real: SciPy or cupyx, never a dropped imaginary part
        with device.device_memory_errors("SpMV"):
            return _spmv_complex(A, x, y, alpha, beta, out, dtype, xp)
    if dtype != A.dtype:
        A = A.astype(dtype)  # cached on A, so the next call binds once
    if xp.__name__ == "numpy":
        if kernel not in CPU_KERNELS:
            raise KernelError(f"kernel {kernel!r} runs on the GPU; on the CPU use one of {', '.join(CPU_KERNELS)}")
        A = A.to_host()
        return cpu.spmv(A, x.astype(A.dtype, copy=False), y, alpha, beta, out, kernel=kernel)
    with device.device_memory_errors("SpMV"):
        return _spmv_gpu(A, x, y, alpha, beta, kernel, out)


def _spmv_complex(A, x, y, alpha, beta, out, dtype, xp):
    if xp.__name__ == "numpy":
        product = A.to_host().to_scipy().astype(dtype) @ x.astype(dtype, copy=False)
    else:
        product = A.to_device().to_cupyx().astype(dtype) @ x.astype(dtype, copy=False)
    result = product * dtype.type(alpha)
    if beta != 0:
        result += dtype.type(beta) * y
    if out is None:
        return result
    out[...] = result
    return out


def _spmv_gpu(A, x, y, alpha, beta, kernel, out):
    cupy = device.require_cupy()
    caller = A
    A = A.to_device()
    dtype = A.dtype
    if x.dtype != dtype or not x.flags.c_contiguous:
        x = cupy.ascontiguousarray(x, dtype=dtype)
    if out is None:
        out = cupy.empty(A.n_rows, dtype=dtype)
    if beta != 0 and y is not out:
        out[...] = y
    # cached on the matrix the caller holds too, and on the host matrix of the device copy
    # (spla.spmv and A @ x on a host matrix pass through its device copy)
    bound = launcher(A, kernel, holders=(caller, A._cache.get("host")))
    return bound.launch(x, out, dtype.type(alpha), dtype.type(beta))


def bind(A, kernel: str = "auto", row_plan=None):
    """Plan ``kernel`` on the device matrix A and bind it: the launcher ``spla.spmv``
    caches (``launcher.launch(x, out, alpha, beta)``). ``row_plan`` overrides the
    adaptive kernels' default row plan (``spla.planning.adaptive.plan_for``)."""
    from ..backends.cuda import spmv as cuda_spmv

    cupy = device.require_cupy()
    A = A.to_device()
    if kernel in ("auto", "tune"):
        resolve_tuned(A, measure=kernel == "tune")
    plan = plan_spmv(A, kernel, row_plan)
    try:
        return cuda_spmv.bind(cupy, A, plan)
    except MemoryError as error:  # (CuPy's OutOfMemoryError is one)
        if plan.family != "blocked":
            raise
        return cuda_spmv.bind(cupy, A, staged_instead(A, kernel, plan.param, error))  # blocked's partials


def resolve_tuned(A, measure: bool) -> None:
    """Before planning ``auto`` or ``tune`` on the device matrix A: take a winner
    from the tuning cache when it holds one for A on this GPU, else (``measure``,
    i.e. ``kernel="tune"``) tune now. ``auto`` alone never measures."""
    if plan_tune.is_tuned(A):
        return
    plan_tune.apply_cached(A, device.device_name())
    if measure and not plan_tune.is_tuned(A):
        from ..bench.tune import tune

        tune(A)


def bound_launcher(A, kernel: str = "auto"):
    """The launcher ``spla.spmv`` cached on A for ``kernel``, or None before the first GPU call."""
    return A._cache.get(BOUND_KEY, {}).get(kernel)


def launcher(A, kernel: str = "auto", *, holders=()):
    """The launcher ``spla.spmv`` runs for the device matrix A and ``kernel``: the one cached on
    A, else bound now; cached on A and on each of ``holders`` (other copies of A, or None)."""
    found = bound_launcher(A, kernel)
    if found is None:
        with device.device_memory_errors("SpMV"):
            found = bind(A, kernel)
    for holder in {id(m): m for m in (A, *holders) if m is not None}.values():
        holder._cache.setdefault(BOUND_KEY, {})[kernel] = found
    return found


def spmv_with_plan(A, x, y=None, *, alpha=1.0, beta=0.0, kernel: str = "adaptive", row_plan=None, out=None):
    """``spla.spmv`` with a row plan built with other thresholds (``adaptive``/``adaptive2``
    on the GPU); the launcher is not cached, since the plan is the caller's."""
    cupy = device.require_cupy()
    A = as_csr(A).to_device()
    _check_vectors(A, x, y, out)
    if beta != 0 and y is None:
        raise InputError("beta != 0 needs y")
    x = cupy.ascontiguousarray(x, dtype=A.dtype)
    if out is None:
        out = cupy.empty(A.n_rows, dtype=A.dtype)
    if beta != 0 and y is not out:
        out[...] = y
    return bind(A, kernel, row_plan).launch(x, out, A.dtype.type(alpha), A.dtype.type(beta))
