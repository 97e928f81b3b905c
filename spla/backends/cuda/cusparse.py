"""The cuSPARSE anchors: SpMV and SpMM with descriptors and work buffer built once per matrix.

spla's kernels are measured against cuSPARSE called the lean way (a matrix
descriptor, dense descriptors re-pointed only when the caller's arrays move,
one work buffer), so the comparison is kernel against kernel; and against
``cupyx.scipy.sparse.csr_matrix @ x`` (:func:`cupyx_matrix`), cuSPARSE as a
CuPy user calls it. Both live here so SpMV and SpMM share one set-up.
"""

from __future__ import annotations

import numpy as np

from ...device import require_cupy
from ...errors import KernelError

# cusparseSpMVAlg_t values from cusparse.h (CuPy's bindings do not name all of them).
SPMV_ALGORITHMS = {"default": 0, "csr_alg1": 2, "csr_alg2": 3}
# cusparseSpMMAlg_t values from cusparse.h. The SpMM anchor is the fastest of the CSR ones on each
# (matrix, k) (spmm_anchor): the default picks one by a rule of its own, as spla's auto does.
SPMM_ALGORITHMS = {"default": 0, "csr_alg1": 4, "csr_alg2": 6, "csr_alg3": 12}
SPMM_ANCHOR_ALGORITHMS = ("csr_alg1", "csr_alg2", "csr_alg3")
SPMM_ANCHOR_CALLS = 5  # device-timed calls of each algorithm when the anchor picks one
SPMM_SYNC_PROBE_S = 0.5  # how long the held stream waits for an algorithm whose calls synchronise inside
# cusparseOrder_t: CUSPARSE_ORDER_ROW is 2 in cusparse.h, for bindings that do not export the name
ORDER_ROW = 2


def _libraries():
    from cupy._core import _dtype
    from cupy.cuda import device
    from cupy_backends.cuda.libs import cusparse
    from cupyx import cusparse as cxs

    return _dtype, device, cusparse, cxs


def _refusal():
    """The exception CuPy's cuSPARSE bindings raise for a status other than success."""
    from cupy_backends.cuda.libs import cusparse

    return getattr(cusparse, "CuSparseError", RuntimeError)


def cupyx_matrix(A):
    """The cupyx csr_matrix of device matrix A, built once (a CuPy user holds one)."""
    matrix = A._cache.get("cupyx")
    if matrix is None:
        matrix = A._cache["cupyx"] = A.to_cupyx()
    return matrix


def spmv_algorithm(alg) -> int:
    """The cusparseSpMVAlg_t value of ``alg``: a name of :data:`SPMV_ALGORITHMS` or the enum value."""
    if isinstance(alg, str):
        if alg not in SPMV_ALGORITHMS:
            raise KernelError(f"unknown cuSPARSE SpMV algorithm {alg!r}; expected one of {', '.join(SPMV_ALGORITHMS)}")
        return SPMV_ALGORITHMS[alg]
    if int(alg) not in SPMV_ALGORITHMS.values():
        raise KernelError(f"unknown cusparseSpMVAlg_t value {alg}; expected one of {sorted(SPMV_ALGORITHMS.values())}")
    return int(alg)


class CusparseSpmv:
    """``out = alpha * A @ x + beta * out`` through ``cusparseSpMV``, set up once for device matrix A.

    The matrix descriptor, both vector descriptors, the work buffer and a
    default output are built here; a call re-points a vector descriptor only
    when its array's pointer changed since the last call, so a timing loop
    over the same x and out is exactly one ``cusparseSpMV``. ``alg`` is
    ``"default"``, ``"csr_alg1"`` or ``"csr_alg2"`` (the deterministic one), or
    the cusparseSpMVAlg_t value. Launches go to CuPy's current stream: CuPy's
    binding points the shared handle at it on every call (measured in session 64).
    """

    def __init__(self, A, alg="default"):
        _dtype, device, cusparse, cxs = _libraries()
        cupy = require_cupy()
        self.lib, self.handle = cusparse, device.get_cusparse_handle()
        self.nnz = A.nnz
        self.matrix = A.to_cupyx()  # keeps the arrays the descriptor points to alive
        self.mat = cxs.SpMatDescriptor.create(self.matrix)
        self.out = cupy.zeros(A.n_rows, dtype=A.dtype)
        self._x = cupy.zeros(A.n_cols, dtype=A.dtype)
        self.vec_x = cxs.DnVecDescriptor.create(self._x)
        self.vec_y = cxs.DnVecDescriptor.create(self.out)
        self.x_ptr, self.y_ptr = self._x.data.ptr, self.out.data.ptr
        self.alpha = np.ones(1, dtype=A.dtype)
        self.beta = np.zeros(1, dtype=A.dtype)
        self.compute_type = _dtype.to_cuda_dtype(A.dtype)
        self.op = cusparse.CUSPARSE_OPERATION_NON_TRANSPOSE
        self.alg = spmv_algorithm(alg)
        size = cusparse.spMV_bufferSize(self.handle, self.op, self.alpha.ctypes.data, self.mat.desc,
                                        self.vec_x.desc, self.beta.ctypes.data, self.vec_y.desc,
                                        self.compute_type, self.alg)
        self.buffer = cupy.empty(max(1, size), dtype=np.int8)

    def __call__(self, x, out=None, alpha=1.0, beta=0.0):
        out = self.out if out is None else out
        if self.nnz == 0:  # cuSPARSE refuses empty matrices on some versions; the answer is beta * out
            if beta == 0:
                out.fill(0)
            else:
                out *= out.dtype.type(beta)
            return out
        lib = self.lib
        if x.data.ptr != self.x_ptr:
            lib.dnVecSetValues(self.vec_x.desc, x.data.ptr)
            self.x_ptr = x.data.ptr
        if out.data.ptr != self.y_ptr:
            lib.dnVecSetValues(self.vec_y.desc, out.data.ptr)
            self.y_ptr = out.data.ptr
        self.alpha[0], self.beta[0] = alpha, beta
        lib.spMV(self.handle, self.op, self.alpha.ctypes.data, self.mat.desc, self.vec_x.desc,
                 self.beta.ctypes.data, self.vec_y.desc, self.compute_type, self.alg, self.buffer.data.ptr)
        return out


def spmv_anchor(A, alg: int | None = None) -> CusparseSpmv:
    """The lean cuSPARSE SpMV of device matrix A, cached on A: ``alg`` 1 (CSR_ALG1, the
    default) or 2 (the deterministic CSR_ALG2), as ``kernel="cusparse:1"``/``"cusparse:2"``."""
    key = ("cusparse-spmv", alg or 1)
    anchor = A._cache.get(key)
    if anchor is None:
        anchor = A._cache[key] = CusparseSpmv(A, "csr_alg2" if alg == 2 else "csr_alg1")
    return anchor


class CusparseSpmm:
    """``out = alpha * A @ X + beta * out`` through ``cusparseSpMM`` with descriptors and buffer built once per (A, k).

    Row-major X and out (``CUSPARSE_ORDER_ROW``), the layout spla's kernels
    use; the dense descriptors are re-pointed at each call's arrays. ``alg``
    names one of :data:`SPMM_ALGORITHMS`; CSR_ALG1 and ALG3 are preprocessed
    once where the bindings offer ``spMM_preprocess``. KernelError where
    cuSPARSE refuses the algorithm for this matrix and layout. Launches go to
    CuPy's current stream, as :class:`CusparseSpmv`'s do.
    """

    def __init__(self, A, x, out, alg: str = "default"):
        _dtype, device, cusparse, cxs = _libraries()
        if alg not in SPMM_ALGORITHMS:
            raise KernelError(f"unknown cuSPARSE SpMM algorithm {alg!r}; expected one of {', '.join(SPMM_ALGORITHMS)}")
        self.lib, self.handle = cusparse, device.get_cusparse_handle()
        self.name = alg
        self.timings: dict = {}   # spmm_anchor: every candidate's device seconds a call
        self.left_out: dict = {}  # spmm_anchor: the algorithms it could not time, and why
        self.matrix = A.to_cupyx()  # keeps the arrays the descriptor points to alive
        self.mat = cxs.SpMatDescriptor.create(self.matrix)
        self.value_type = _dtype.to_cuda_dtype(A.dtype)
        self.dense_x = self._dense(x)
        self.dense_out = self._dense(out)
        self.alpha = np.ones(1, dtype=A.dtype)
        self.beta = np.zeros(1, dtype=A.dtype)
        self.op = cusparse.CUSPARSE_OPERATION_NON_TRANSPOSE
        self.alg = SPMM_ALGORITHMS[alg]
        try:
            size = cusparse.spMM_bufferSize(self.handle, self.op, self.op, self.alpha.ctypes.data, self.mat.desc,
                                            self.dense_x, self.beta.ctypes.data, self.dense_out,
                                            self.value_type, self.alg)
            self.buffer = require_cupy().empty(max(1, size), dtype=np.int8)
            preprocess = getattr(cusparse, "spMM_preprocess", None)
            if preprocess is not None and alg in ("csr_alg1", "csr_alg3"):
                preprocess(self.handle, self.op, self.op, self.alpha.ctypes.data, self.mat.desc, self.dense_x,
                           self.beta.ctypes.data, self.dense_out, self.value_type, self.alg, self.buffer.data.ptr)
        except _refusal() as error:
            raise KernelError(f"cuSPARSE SpMM {alg} refuses this matrix or layout: {error}") from error

    def _dense(self, M):
        rows, cols = M.shape
        order = getattr(self.lib, "CUSPARSE_ORDER_ROW", ORDER_ROW)
        return self.lib.createDnMat(rows, cols, cols, M.data.ptr, self.value_type, order)

    def _point(self, desc, M):
        set_values = getattr(self.lib, "dnMatSetValues", None)
        if set_values is None:  # older bindings: a fresh descriptor per call (host work only)
            self.lib.destroyDnMat(desc)
            return self._dense(M)
        set_values(desc, M.data.ptr)
        return desc

    def __call__(self, x, out, alpha, beta):
        lib = self.lib
        self.dense_x = self._point(self.dense_x, x)
        self.dense_out = self._point(self.dense_out, out)
        self.alpha[0], self.beta[0] = alpha, beta
        lib.spMM(self.handle, self.op, self.op, self.alpha.ctypes.data, self.mat.desc, self.dense_x,
                 self.beta.ctypes.data, self.dense_out, self.value_type, self.alg, self.buffer.data.ptr)
        return out

    def __del__(self):
        for desc in (getattr(self, "dense_x", None), getattr(self, "dense_out", None)):
            if desc:
                self.lib.destroyDnMat(desc)


def spmm_anchor(A, x, out) -> CusparseSpmm:
    """The lean cuSPARSE SpMM of device matrix A at x's k, cached on A: the fastest of
    :data:`SPMM_ANCHOR_ALGORITHMS` on this matrix by device time (:data:`SPMM_ANCHOR_CALLS` calls each
    queued behind a held stream, into a scratch output, once), its name in ``.name``, every
    candidate's seconds in ``.timings`` and why any was left out in ``.left_out``. Left out: those
    cuSPARSE refuses here, and those whose calls synchronise with the host inside (their device time
    cannot be told from the host's, which is how the benchmarks time every kernel)."""
    from ...errors import SplaError
    from .timing import queued_device_seconds

    anchor = kept_spmm_anchor(A, x.shape[1])
    if anchor is None:
        scratch = require_cupy().empty_like(out)
        one, zero = A.dtype.type(1), A.dtype.type(0)
        timed, left_out = {}, {}
        for alg in SPMM_ANCHOR_ALGORITHMS:
            try:
                candidate = CusparseSpmm(A, x, scratch, alg)
                candidate(x, scratch, one, zero)  # the first call pays for any lazy set-up
                seconds = queued_device_seconds(lambda c=candidate: c(x, scratch, one, zero), SPMM_ANCHOR_CALLS,
                                                timeout_s=SPMM_SYNC_PROBE_S)
            except (SplaError, _refusal()) as error:  # refused (KernelError), or synchronises (the hold ran out)
                left_out[alg] = str(error)
                continue
            timed[alg] = (seconds, candidate)
        if not timed:
            raise KernelError(f"no cuSPARSE SpMM CSR algorithm can be the anchor here: {left_out}")
        anchor = min(timed.values(), key=lambda pair: pair[0])[1]
        anchor.timings = {alg: seconds for alg, (seconds, _) in timed.items()}
        anchor.left_out = left_out
        A._cache[_spmm_anchor_key(x.shape[1])] = anchor
    return anchor


def _spmm_anchor_key(k) -> tuple:
    return ("cusparse-spmm", int(k))


def kept_spmm_anchor(A, k: int) -> CusparseSpmm | None:
    """The anchor :func:`spmm_anchor` kept for device matrix A at k, or None before its first call."""
    return A._cache.get(_spmm_anchor_key(k))
