"""The GPU side of spla's smoothed-aggregation set-up (:mod:`spla.linalg._amg_setup`).

:class:`DeviceSetupOps` implements the interface of
:class:`spla.linalg._amg_setup.HostSetupOps` on CuPy arrays and
``cupyx.scipy.sparse`` matrices: the two graph steps of the MIS(2) aggregation
as raw kernels (kernels/amg_setup.cu), sparse products through cuSPARSE's
SpGEMM with the memory they need checked first, CUDA events for the step
timings (no host synchronisation between steps). :func:`jacobi_correct_kernel`
is the cycle's fused Jacobi sweep.
"""

from __future__ import annotations

import functools

import numpy as np

from ... import device as _device
from ...errors import InputError
from .runtime import INDEX_TYPES, KernelSource, grid_1d, template

AMG_BLOCK = 256
AMG_SETUP_SOURCE = KernelSource("amg_setup.cu", [template("spla_amg_row_max", i) for i in INDEX_TYPES]
                                + ["spla_amg_mis2_update"])
# cuSPARSE's SpGEMM counts intermediate products in 32-bit integers
SPGEMM_MAX_PRODUCTS = 2**31 - 1


class DeviceSetupOps:
    """CuPy/cupyx versions of the set-up's side operations."""

    on_gpu = True

    def __init__(self):
        self.xp = _device.require_cupy()
        import cupyx.scipy.sparse as csp

        self._csp = csp

    # ------------------------------------------------------------ graph steps
    def row_ids(self, indptr, nnz: int):
        """The row of each stored entry (a binary search per entry: CuPy's repeat takes no array of counts)."""
        cupy = self.xp
        return cupy.searchsorted(indptr[1:], cupy.arange(nnz, dtype=indptr.dtype), side="right")

    def row_max(self, graph, keys):
        out = self.xp.empty_like(keys)
        kernel = AMG_SETUP_SOURCE.function(template("spla_amg_row_max", graph.indices.dtype))
        n = graph.n
        kernel((grid_1d(n, AMG_BLOCK),), (AMG_BLOCK,), (graph.indptr, graph.indices, keys, out, np.int64(n)))
        return out

    def mis2_update(self, keys, top, flags, round_index: int, state_shift: int):
        out = self.xp.empty_like(keys)
        n = keys.shape[0]
        kernel = AMG_SETUP_SOURCE.function("spla_amg_mis2_update")
        kernel((grid_1d(n, AMG_BLOCK),), (AMG_BLOCK,),
               (keys, top, out, flags[round_index:round_index + 1], np.int64(n), np.int32(state_shift)))
        return out

    # ------------------------------------------------------------ sparse matrices
    def library(self, data, indices, indptr, shape, canonical: bool):
        """A cupyx csr_matrix over the arrays (shared, not copied)."""
        M = self._csp.csr_matrix((data, indices, indptr), shape=shape)
        if canonical:  # known sorted and duplicate-free: spares cupyx's check before each product
            M.has_canonical_format = True
        return M

    def product(self, A, B, what: str):
        """A @ B through cuSPARSE's SpGEMM, after checking that its work fits on the device.

        Raises :class:`spla.DeviceMemoryError` (sizes in the message) when it would not, and
        :class:`InputError` when the product count passes cuSPARSE's 32-bit counters; either
        way before anything is allocated, never a truncated product.
        """
        cupy = self.xp
        products = int(cupy.diff(B.indptr)[A.indices].sum(dtype=cupy.int64)) if A.nnz else 0
        if products > SPGEMM_MAX_PRODUCTS:
            raise InputError(f"the AMG {what} has {products:,} intermediate products, more than cuSPARSE's "
                             f"32-bit SpGEMM counts; set up on the host (spla.linalg.amg(A.to_host()))")
        # cuSPARSE holds the products, the result and its work buffers, each up to that size
        entry = np.dtype(A.dtype).itemsize + np.dtype(A.indices.dtype).itemsize
        needed = 3 * products * entry + 2 * (A.shape[0] + 1) * 8
        _device.check_fits(needed, f"AMG {what}")
        with _device.device_memory_errors(f"AMG {what}"):
            C = A @ B
        C.has_canonical_format = True  # cuSPARSE's SpGEMM writes sorted, duplicate-free rows
        return C

    def transpose(self, A):
        with _device.device_memory_errors("AMG restriction"):
            T = A.T.tocsr()
        T.has_canonical_format = True  # cuSPARSE's csr2csc sorts each row of the transpose
        return T

    # ------------------------------------------------------------ row statistics for the SpMV plans
    def row_length_summary(self, indptr):
        """(std, longest, empty rows) of the row lengths, reduced on the device (one transfer)."""
        cupy = self.xp
        lengths = cupy.diff(indptr)
        summary = cupy.stack([lengths.std(dtype=cupy.float64), lengths.max().astype(cupy.float64),
                              (lengths == 0).sum().astype(cupy.float64)]).get()
        return float(summary[0]), int(summary[1]), int(summary[2])

    # ------------------------------------------------------------ timing
    def mark(self):
        event = self.xp.cuda.Event()
        event.record()
        return event

    def elapsed(self, start, end) -> float:
        end.synchronize()
        return self.xp.cuda.get_elapsed_time(start, end) / 1e3

    def synchronize(self):
        self.xp.cuda.get_current_stream().synchronize()


@functools.cache
def jacobi_correct_kernel():
    """``kernel(b, Ax, scaled_dinv, x)``: the cycle's Jacobi sweep ``x += scaled_dinv * (b - A x)`` in one
    pass over the vectors, given ``A x`` (float32 or float64)."""
    cupy = _device.require_cupy()
    return cupy.ElementwiseKernel("T b, T ax, T scaled_dinv", "T x", "x += scaled_dinv * (b - ax)",
                                  "spla_amg_jacobi_correct")
