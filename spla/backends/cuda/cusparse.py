"""cuSPARSE as the anchor every spla kernel is measured beside, and the cupyx cache.

:func:`spmv_anchor` is the *lean* call: the matrix descriptor, both vector
descriptors and the work buffer are built once per matrix; a call re-points a
vector descriptor only when its pointer changed, and writes into the caller's
preallocated output. ``CUSPARSE_SPMV_CSR_ALG1`` (CuPy's enum value 2) and the
deterministic ``CSR_ALG2`` (value 3, which CuPy does not name) are both
available; benchmarks take the faster per matrix.
"""

from __future__ import annotations

import numpy as np

from ...device import require_cupy

# cusparseSpMVAlg_t values (cusparse.h): CuPy names ALG1 but not ALG2.
CSR_ALG1 = 2
CSR_ALG2 = 3
SPMV_ALGORITHMS = {1: CSR_ALG1, 2: CSR_ALG2}


def cupyx_matrix(A):
    """A's ``cupyx.scipy.sparse.csr_matrix`` sharing its arrays, built once per matrix."""
    matrix = A._cache.get("cupyx")
    if matrix is None:
        matrix = A._cache["cupyx"] = A.to_cupyx()
    return matrix


class SpmvAnchor:
    """``cusparseSpMV`` on one matrix: ``anchor(x, out, alpha, beta)`` writes ``out``."""

    def __init__(self, A, alg: int = 1):
        from cupy._core import _dtype
        from cupy.cuda import device
        from cupy_backends.cuda.libs import cusparse
        from cupyx import cusparse as cxs

        cupy = require_cupy()
        self.lib = cusparse
        self.cupy = cupy
        self.matrix = cupyx_matrix(A)  # keeps the arrays the descriptor points to alive
        self.handle = device.get_cusparse_handle()
        self.mat = cxs.SpMatDescriptor.create(self.matrix)
        # placeholder vectors: the descriptors are re-pointed to the caller's arrays
        self.x_ptr = self.out_ptr = self.stream_ptr = -1
        self.vec_x = cxs.DnVecDescriptor.create(cupy.empty(A.n_cols, A.dtype))
        self.vec_y = cxs.DnVecDescriptor.create(cupy.empty(A.n_rows, A.dtype))
        self.alpha = np.ones(1, dtype=A.dtype)
        self.beta = np.zeros(1, dtype=A.dtype)
        self.compute_type = _dtype.to_cuda_dtype(A.dtype)
        self.op = cusparse.CUSPARSE_OPERATION_NON_TRANSPOSE
        self.alg = SPMV_ALGORITHMS[alg]
        size = cusparse.spMV_bufferSize(self.handle, self.op, self.alpha.ctypes.data, self.mat.desc,
                                        self.vec_x.desc, self.beta.ctypes.data, self.vec_y.desc,
                                        self.compute_type, self.alg)
        self.buffer = cupy.empty(max(1, size), dtype=np.int8)
        self.alpha_ptr, self.beta_ptr = self.alpha.ctypes.data, self.beta.ctypes.data

    def __call__(self, x, out, alpha, beta):
        lib = self.lib
        if x.data.ptr != self.x_ptr:
            self.x_ptr = x.data.ptr
            lib.dnVecSetValues(self.vec_x.desc, self.x_ptr)
        if out.data.ptr != self.out_ptr:
            self.out_ptr = out.data.ptr
            lib.dnVecSetValues(self.vec_y.desc, self.out_ptr)
        stream = self.cupy.cuda.get_current_stream().ptr
        if stream != self.stream_ptr:  # follow CuPy's current stream (graph capture)
            self.stream_ptr = stream
            lib.setStream(self.handle, stream)
        self.alpha[0], self.beta[0] = alpha, beta
        lib.spMV(self.handle, self.op, self.alpha_ptr, self.mat.desc, self.vec_x.desc, self.beta_ptr,
                 self.vec_y.desc, self.compute_type, self.alg, self.buffer.data.ptr)
        return out


def spmv_anchor(A, alg: int | None = None) -> SpmvAnchor:
    """The lean cuSPARSE SpMV of A with algorithm ``alg`` (1 or 2; default 1), cached on A."""
    alg = alg or 1
    key = ("cusparse-spmv", alg)
    anchor = A._cache.get(key)
    if anchor is None:
        anchor = A._cache[key] = SpmvAnchor(A, alg)
    return anchor
