"""The CPU backend: NumPy/SciPy implementations of every operation, and C kernels where they pay.

It is the embedded default (no GPU needed) and the reference every GPU kernel
is checked against. It imports nothing from :mod:`spla.backends.cuda`.

SpMV and SpMM with enough work run ``csr_product.c`` (compiled on first use,
:mod:`spla.io.native`) over nnz-balanced row ranges on several threads, with
SciPy's bits (each row summed in order in the value type, as SciPy's
``csr_matvec`` and ``csr_matvecs`` do); small products, machines without a C
compiler, and ``kernel="scipy"`` run SciPy's kernel itself.
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from .. import csr_passes

#: Nonzeros (times the columns of X for SpMM) a thread takes at least: a product with less than
#: twice this runs SciPy's kernel (the same bits), since handing rows to a pooled thread costs
#: ~0.1 ms on a 2-core machine.
THREAD_MIN_NNZ = 500_000
THREADS_ENV = "SPLA_NUM_THREADS"

_pool: tuple[int, ThreadPoolExecutor] | None = None  # (workers, pool)
_pool_lock = threading.Lock()


def _forget_pool_in_child() -> None:
    """A forked child has none of the parent's threads, and the lock may have been held."""
    global _pool, _pool_lock
    _pool, _pool_lock = None, threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pool_in_child)


def threads() -> int:
    """Threads the CPU SpMV may use: ``$SPLA_NUM_THREADS``, else the CPUs this process may run on."""
    value = os.environ.get(THREADS_ENV, "").strip()
    if value:
        try:
            return max(1, int(value))
        except ValueError:
            from ..errors import InputError

            raise InputError(f"${THREADS_ENV} must be a whole number, got {value!r}") from None
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def _workers(count: int) -> ThreadPoolExecutor:
    """The pool of ``count`` threads, made once per process and thread count (a forked child makes
    its own; a changed ``$SPLA_NUM_THREADS`` replaces it)."""
    global _pool
    with _pool_lock:
        if _pool is None or _pool[0] != count:
            if _pool is not None:
                _pool[1].shutdown(wait=False)
            _pool = (count, ThreadPoolExecutor(count, thread_name_prefix="spla-spmv"))
        return _pool[1]


#: The value types whose SpMV of a matrix of one value reads the indices alone (csr_product.c's
#: spmv_uniform). On a 2-core VM at 16M nonzeros, 2 threads: float32 1.12-1.13x the kernel that
#: reads the values on 23 corpus families it was not tried on (geomean, the lowest 0.995x), in
#: each of three runs; float64 0.93-1.07x. A float64 product there waits on its chain of adds as
#: much as on memory (on one thread the two kernels ran alike), so the VM's stretches of one vCPU
#: at half speed hit the kernel without values in full; float64 stays off until a steadier
#: machine measures it (docs/lab/cpu-2026-12-05-session34).
UNIFORM_DTYPES = ("float32",)


def uniform_values(A) -> bool:
    """Whether A's SpMV reads one value (:func:`spla.csr_passes.uniform_values` for UNIFORM_DTYPES)."""
    return csr_passes.uniform_values(A, UNIFORM_DTYPES)


def _row_ranges(A, parts: int, operation: str):
    """(the C kernel of ``operation``, A's arrays as it reads them, row cuts of about nnz / parts
    each) for A, or None without a C compiler; cached on A. ``spmv_uniform`` reads one value."""
    from ..io import native

    key = ("cpu-product-ranges", operation, parts)
    if key not in A._cache:
        function = native.csr_product_kernel(A.dtype, A.index_dtype, operation)
        data = A.data[:1] if operation == "spmv_uniform" else A.data
        arrays = [np.ascontiguousarray(a) for a in (A.indptr, A.indices, data)]
        cuts = _nnz_cuts(arrays[0], A.nnz, A.n_rows, parts)
        A._cache[key] = None if function is None else (function, arrays, [int(c) for c in cuts])
    return A._cache[key]


def _parts(A, ndim: int, columns: int, count: int) -> int:
    """Row ranges (threads) csr_product's C kernel takes for A @ x, or 0 where SciPy's kernel runs:
    a thread per THREAD_MIN_NNZ nonzeros times x's columns, at most ``count``. An SpMV pays on two
    threads or more; SpMM's kernel beats SciPy's on one thread too (16 or 8 columns in registers)."""
    parts = min(count, A.nnz * columns // THREAD_MIN_NNZ)
    if ndim == 2 and columns > 1:
        return max(parts, 1)
    return parts if parts >= 2 else 0


def spmv_runs(A) -> str:
    """What an SpMV of host CSRMatrix A runs on the CPU (``kernel="auto"``), in words."""
    from ..io import native

    parts = _parts(A, 1, 1, threads())
    if parts == 0 or native.csr_product_kernel(A.dtype, A.index_dtype) is None:
        why = ("no C compiler, or $SPLA_NATIVE is off" if parts else
               f"spla's C kernel runs from {2 * THREAD_MIN_NNZ:,} nonzeros, on two threads or more")
        return f"SciPy's kernel ({why})"
    reads = f"indices only: every value is {float(A.data[0]):g}" if uniform_values(A) else "values and indices"
    return f"spla/backends/csr_product.c on {parts} threads, {reads}"


def csr_product(A, x, out=None):
    """``A @ x`` for a host CSRMatrix and a NumPy vector or 2-D block x of A's dtype: ``csr_product.c``
    over nnz-balanced row ranges on the threads :func:`_parts` gives, into ``out`` when it is a
    contiguous array of A's dtype and the result's shape that does not overlap x; SciPy's kernel
    where that does not pay or does not apply. An SpMV of a matrix whose values are all the same
    (:func:`uniform_values`) reads its indices alone. The same bits either way."""
    if x.dtype != A.dtype or x.ndim not in (1, 2):
        return A.to_scipy() @ x
    columns = 1 if x.ndim == 1 else x.shape[1]
    count = threads()
    parts = _parts(A, x.ndim, columns, count)
    if parts == 0:
        return A.to_scipy() @ x
    operation = "spmm" if x.ndim == 2 else "spmv_uniform" if uniform_values(A) else "spmv"
    ranges = _row_ranges(A, parts, operation)
    if ranges is None:
        return A.to_scipy() @ x
    function, arrays, cuts = ranges
    x = np.ascontiguousarray(x)
    shape = (A.n_rows,) if x.ndim == 1 else (A.n_rows, columns)
    if (out is None or out.dtype != A.dtype or out.shape != shape or not out.flags.c_contiguous
            or np.shares_memory(out, x)):
        out = np.empty(shape, dtype=A.dtype)
    head = () if x.ndim == 1 else (columns,)
    pointers = [a.ctypes.data for a in (*arrays, x, out)]
    # one pool for every matrix, whatever its share of the threads
    pending = [_workers(count - 1).submit(function, cuts[k], cuts[k + 1], *head, *pointers)
               for k in range(1, parts)]
    function(cuts[0], cuts[1], *head, *pointers)  # the calling thread takes the first range
    for future in pending:
        future.result()
    return out


#: Nonzeros a thread of the CG loop takes at least (two threads from 15k). Fitted on half of 44
#: SPD systems on 2 cores, 1.014 of the faster thread count on the other half (worst 1.34;
#: docs/lab/cpu-2026-12-05-session30). Barriers of more threads cost more, untested here.
CG_THREAD_MIN_NNZ = 7_500
#: Nonzeros a CG loop call works through (its iterations times A's nnz, at least one iteration):
#: the host sees the state (and Ctrl-C) between calls, about 0.1 s apart, and each call makes its
#: threads anew (tens of microseconds).
CG_LOOP_CALL_NNZ = 200_000_000


class CgLoop:
    """CG's iterations in C on one or several threads (``cg_loop.c``): the CPU twin of the CUDA
    backend's one-launch loop, with its interface (:func:`spla.linalg._krylov.loop_iterations`
    drives both) and its state layout.

    The rows are cut by nonzeros into a range a thread (:func:`threads`, one per
    CG_THREAD_MIN_NNZ nonzeros); each thread does the direction, the product, the update and its share of
    the dot products for its rows. The sums are added in thread order, so the iterates depend on
    the thread count, and equal NumPy's steps to rounding.
    """

    batches_uncaptured = True  # nothing to capture: a batch is one call

    def __init__(self, function, A, parts: int):
        self._function = function
        self._arrays = [np.ascontiguousarray(a) for a in (A.indptr, A.indices, A.data)]
        self.dtype = A.dtype
        self.n = A.n_rows
        self._cuts = _nnz_cuts(self._arrays[0], A.nnz, A.n_rows, parts)
        self.batch = max(1, CG_LOOP_CALL_NNZ // max(A.nnz, 1))  # iterations a call

    @classmethod
    def for_matrix(cls, A) -> CgLoop | None:
        """The loop over a square host CSRMatrix of float32 or float64 values, or None (no C compiler,
        ``SPLA_NATIVE=off``, another dtype)."""
        from ..io import native

        function = native.cg_loop_kernel(A.dtype, A.index_dtype)
        if function is None or A.n_rows != A.n_cols:
            return None
        return cls(function, A, max(1, min(threads(), A.nnz // CG_THREAD_MIN_NNZ)))

    @property
    def threads(self) -> int:
        return len(self._cuts) - 1

    def run(self, first: int, count: int, x, r, z, dinv, directions, q, state, atol: float):
        """Iterations first .. first + count - 1 (first >= 1), or fewer: see the CUDA backend's
        ``CgLoop.run``. ``state`` holds 8 float64 values; the vectors are contiguous arrays of A's
        dtype, z and dinv r where there is no Jacobi preconditioner."""
        vectors = (x, r, z, *directions, q) + (() if dinv is r else (dinv,))
        if state.dtype != np.float64 or any(v.dtype != self.dtype or not v.flags.c_contiguous
                                            or v.shape != (self.n,) for v in vectors):
            raise ValueError("CgLoop.run: vectors must be contiguous arrays of A's dtype and length, state float64")
        dinv_pointer = None if dinv is r else dinv.ctypes.data
        cuts = self._cuts
        while self._function(self.n, *(a.ctypes.data for a in self._arrays), x.ctypes.data, r.ctypes.data,
                             z.ctypes.data, dinv_pointer, directions[0].ctypes.data, directions[1].ctypes.data,
                             q.ctypes.data, state.ctypes.data, first, count, atol, len(cuts) - 1,
                             cuts.ctypes.data) != 0:
            if len(cuts) == 2:
                raise MemoryError("CgLoop.run: no memory for the loop's partial sums")
            cuts = self._cuts = np.array([0, self.n], dtype=np.int64)  # no thread could be made: run on one


def dot(a, b) -> float:
    """a.b for 1-D NumPy vectors of one dtype, summed in float64 on the calling thread by C
    (``cg_loop.c``): NumPy's dot calls BLAS, whose idle threads then spin for ~0.1 s on the cores
    spla's own threads need (measured: CG's loop on two threads ran 1.6x slower at 256^2 after it).
    NumPy's dot where there is no C compiler or for other dtypes."""
    from ..io import native

    function = native.dot_kernel(a.dtype) if a.dtype == b.dtype and a.ndim == b.ndim == 1 else None
    if function is None or a.shape != b.shape:
        return float(np.dot(a, b))
    a, b = np.ascontiguousarray(a), np.ascontiguousarray(b)
    return float(function(a.size, a.ctypes.data, b.ctypes.data))


def _nnz_cuts(indptr, nnz: int, n_rows: int, parts: int):
    """Row cuts of about nnz / parts nonzeros each: parts + 1 int64 values from 0 to n_rows."""
    cuts = np.searchsorted(indptr, np.linspace(0, nnz, parts + 1)).clip(0, n_rows).astype(np.int64)
    cuts[0], cuts[-1] = 0, n_rows
    return cuts


def spmv(A, x, y=None, alpha=1.0, beta=0.0, out=None, kernel: str = "auto"):
    """``alpha * A @ x + beta * y``, written to ``out`` when given: :func:`csr_product`, or SciPy's
    CSR kernel for ``kernel="scipy"``."""
    if kernel == "scipy":
        return _axpby(A.to_scipy() @ x, y, alpha, beta, A.dtype, out)
    direct = alpha == 1 and (y is None or beta == 0) and out is not None
    product = csr_product(A, x, out if direct else None)
    if direct and product is out:
        return out
    return _axpby(product, y, alpha, beta, A.dtype, out)


def spmm(A, X, Y=None, alpha=1.0, beta=0.0, out=None, kernel: str = "auto"):
    """``alpha * A @ X + beta * Y`` for a dense 2-D X: :func:`csr_product`, or SciPy's CSR kernel
    for ``kernel="scipy"``."""
    product = A.to_scipy() @ X if kernel == "scipy" else csr_product(A, X)
    return _axpby(product, Y, alpha, beta, A.dtype, out)


def _axpby(result, y, alpha, beta, dtype, out=None):
    result = np.asarray(result, dtype=dtype)
    if alpha != 1:
        result *= dtype.type(alpha)
    if y is not None and beta != 0:
        result += dtype.type(beta) * y
    if out is None:
        return result
    out[...] = result
    return out


def gemm(A, B, C=None, alpha=1.0, beta=0.0, out=None):
    """``alpha * A @ B + beta * C`` with NumPy's matmul in the result dtype of A and B.

    ``out`` (default: C, else a new array) is written in place and returned;
    C is read only when ``beta != 0``.
    """
    dtype = np.result_type(A.dtype, B.dtype)
    product = np.asarray(np.matmul(A.astype(dtype, copy=False), B.astype(dtype, copy=False)), dtype=dtype)
    if out is None:
        out = C if C is not None else np.empty(product.shape, dtype=dtype)
    return _write_scaled(product, out, C, alpha, beta)


def gemv(M, x, y=None, alpha=1.0, beta=0.0, out=None):
    """``alpha * M @ x + beta * y`` in M's dtype; ``out`` (default: y) is written and returned."""
    product = np.asarray(M @ x.astype(M.dtype, copy=False), dtype=M.dtype)
    if out is None:
        out = y if y is not None else np.empty(product.shape, dtype=M.dtype)
    return _write_scaled(product, out, y, alpha, beta)


def _write_scaled(product, out, c, alpha, beta):
    """out = alpha * product + beta * c, never reading c when beta == 0."""
    product *= product.dtype.type(alpha)
    if beta != 0:
        product += product.dtype.type(beta) * c
    out[...] = product
    return out
